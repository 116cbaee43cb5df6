// SPDX-License-Identifier: GPL-2.0
/* Copyright (c) 2026 The tcptw authors. */
/*
 * tcptw_flood: a bounded flood of TCP SYNs from a raw socket, for the soak
 * and the benchmarks (a SYN flood at a listener, or SYNs at a closed port
 * for an RST storm).
 *
 *   tcptw_flood --src ADDR --dst ADDR:PORT [--seconds S] [--count N]
 *               [--sport P] [--netns PATH] [--mark]
 *
 * IPv4 only. Source ports cycle through P..65535 then 1024.. (P defaults to
 * 1024: senders run side by side take disjoint blocks), sequence numbers
 * are random, seeded from getrandom() (two senders seeded from pid and time
 * could draw the same sequence and send the same SYNs). Stops after S seconds (default 5) or N packets, whichever comes
 * first; both are bounded (S <= 3600). Prints one JSON object:
 * {"sent":N,"seconds":S,"pps":R}. --mark executes make bench's marker
 * instruction (scripts/insn-count.c) right before the first SYN and right
 * after the last one; outside that QEMU plugin it is a no-op.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct pkt {
	struct iphdr ip;
	struct tcphdr tcp;
} __attribute__((packed));

/* scripts/insn-count.c counts guest instructions between two of these */
static void insn_mark(void)
{
	asm volatile("xchg %%bx,%%bx" ::: "memory");
}

static void die(const char *what)
{
	fprintf(stderr, "tcptw_flood: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: tcptw_flood --src ADDR --dst ADDR:PORT [--seconds S] [--count N] [--sport P] [--netns PATH] [--mark]\n");
	exit(rc);
}

static unsigned long parse_ul(const char *s, const char *what,
			      unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max) {
		fprintf(stderr, "tcptw_flood: %s: invalid number '%s'\n",
			what, s);
		exit(2);
	}
	return v;
}

static uint16_t csum(const void *data, size_t len, uint32_t sum)
{
	const uint16_t *p = data;

	while (len > 1) {
		sum += *p++;
		len -= 2;
	}
	if (len)
		sum += *(const uint8_t *)p;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'n' },
		{ "sport", required_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'N' },
		{ "mark", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned long seconds = 5, count = 0, sent = 0, tries = 0;
	const char *src = NULL, *dst = NULL, *netns = NULL;
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct { uint32_t s, d; uint8_t z, p; uint16_t len; } ph;
	struct in_addr saddr;
	char host[64], *colon;
	double t0, t;
	struct pkt pk;
	int c, fd, one = 1, mark = 0;
	unsigned int seed;
	uint16_t sport = 1024;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'S': seconds = parse_ul(optarg, "--seconds", 3600); break;
		case 'n': count = parse_ul(optarg, "--count", 1UL << 40); break;
		case 'p':
			sport = parse_ul(optarg, "--sport", 65535);
			if (sport < 1024) {
				fprintf(stderr, "tcptw_flood: --sport: below 1024\n");
				exit(2);
			}
			break;
		case 'N': netns = optarg; break;
		case 'm': mark = 1; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind != argc || !src || !dst || !seconds)
		usage(2);
	snprintf(host, sizeof(host), "%s", dst);
	colon = strrchr(host, ':');
	if (!colon)
		usage(2);
	*colon = '\0';
	to.sin_port = htons(parse_ul(colon + 1, "port", 65535));
	if (inet_pton(AF_INET, host, &to.sin_addr) != 1 ||
	    inet_pton(AF_INET, src, &saddr) != 1)
		usage(2);
	if (netns) {
		int nfd = open(netns, O_RDONLY | O_CLOEXEC);

		if (nfd < 0 || setns(nfd, CLONE_NEWNET))
			die(netns);
		close(nfd);
	}
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0)
		die("socket(SOCK_RAW)");
	if (setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)))
		die("IP_HDRINCL");
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		die("getrandom");
	srandom(seed);

	if (mark)
		insn_mark();
	t0 = now_s();
	t = t0;
	while ((!count || sent < count) && t - t0 < seconds) {
		memset(&pk, 0, sizeof(pk));
		pk.ip.version = 4;
		pk.ip.ihl = 5;
		pk.ip.ttl = 64;
		pk.ip.protocol = IPPROTO_TCP;
		pk.ip.tot_len = htons(sizeof(pk));
		pk.ip.id = htons(random());
		pk.ip.saddr = saddr.s_addr;
		pk.ip.daddr = to.sin_addr.s_addr;
		pk.tcp.source = htons(sport);
		pk.tcp.dest = to.sin_port;
		pk.tcp.seq = htonl(random());
		pk.tcp.doff = 5;
		pk.tcp.syn = 1;
		pk.tcp.window = htons(64240);
		ph.s = pk.ip.saddr;
		ph.d = pk.ip.daddr;
		ph.z = 0;
		ph.p = IPPROTO_TCP;
		ph.len = htons(sizeof(pk.tcp));
		pk.tcp.check = csum(&pk.tcp, sizeof(pk.tcp),
				    (uint32_t)(uint16_t)~csum(&ph, sizeof(ph), 0));
		/* the kernel fills in the IP checksum */
		if (sendto(fd, &pk, sizeof(pk), 0, (struct sockaddr *)&to,
			   sizeof(to)) < 0) {
			if (errno != ENOBUFS && errno != EAGAIN)
				die("sendto");
		} else {
			sent++;
		}
		sport = sport == 65535 ? 1024 : sport + 1;
		if (!(++tries & 255))
			t = now_s();
	}
	if (mark)
		insn_mark();
	t = now_s() - t0;
	printf("{\"sent\":%lu,\"seconds\":%.3f,\"pps\":%.0f}\n", sent, t,
	       t > 0 ? sent / t : 0.0);
	return 0;
}

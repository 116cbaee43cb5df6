// SPDX-License-Identifier: GPL-2.0
/* Copyright (c) 2025 The tcptw authors. */
/*
 * tcptw_traffic: bounded TCP traffic for the tcptw selftests.
 *
 *   tcptw_traffic server --listen ADDR:PORT [--close-first server|client]
 *                        [--req-bytes N] [--resp-bytes N] [--linger0]
 *                        [--no-accept] [--backlog N] [--count N]
 *                        [--reuseport N] [--timeout SEC] [--netns PATH]
 *                        [--ready-file PATH]
 *   tcptw_traffic client --connect ADDR:PORT [--count N]
 *                        [--netns PATH[,PATH...]] [--bind ADDR:PORT]
 *                        [--reuseaddr] [--close-first client|server]
 *                        [--barrier] [--linger0] [--connect-timeout MS]
 *                        [--rate N] [--gap-ms N] [--align-seconds]
 *                        [--align-every SEC]
 *                        [--burst N] [--timeout SEC] [--req-bytes N]
 *                        [--resp-bytes N] [--verbose] [--mark]
 *
 * Both modes are single-threaded, every blocking step is a poll() bounded
 * by the --timeout deadline, and both print one JSON object on stdout.
 *
 * The client's --barrier is the close barrier of the NAT/PAWS recipe: when
 * the server closes first, the client reads to EOF, shuts down its write
 * side and waits (TCP_INFO) until its socket reached TCP_CLOSE, i.e. the
 * server's last ACK went through the NAT, before the next connection may
 * reuse the NAT's single port. When the client closes first, it shuts
 * down its write side and reads until the server's FIN.
 *
 * The server's --reuseport N listens on N sockets of one SO_REUSEPORT
 * group (same address and port), accepts from whichever is ready and
 * reports how many connections each took ("per_listener", in the order
 * of their listen()) and how many took any ("listeners_used").
 *
 * The client's --mark executes the marker instruction of make bench's
 * instruction counter (scripts/insn-count.c) right before its first
 * connection and right after its last, so that set-up and exit stay out
 * of the count. Outside that QEMU plugin the marker is a no-op.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_NETNS	8
#define SLOW_CONNECT_MS	500.0
#define BARRIER_MS	10000
#define MAX_LISTENERS	64

enum close_first { CLOSE_SERVER, CLOSE_CLIENT };

struct opts {
	bool server;
	const char *addr;		/* --listen / --connect */
	const char *bind;
	const char *ready_file;
	char *netns[MAX_NETNS];
	int nr_netns;
	enum close_first close_first;
	unsigned long count;		/* 0: unbounded (server) */
	unsigned long req_bytes;
	unsigned long resp_bytes;
	unsigned long backlog;
	unsigned long reuseport;	/* server: listeners in the group */
	unsigned long connect_timeout_ms;
	unsigned long rate;		/* connects per second, 0: max */
	unsigned long gap_ms;
	unsigned long burst;		/* with --align-seconds */
	unsigned long align_every;	/* seconds between bursts */
	double timeout;			/* seconds */
	bool linger0;
	bool no_accept;
	bool reuseaddr;
	bool barrier;
	bool align;
	bool verbose;
	bool mark;
};

/* errno name -> count, for the JSON summary */
struct errtab {
	int err[64];
	unsigned long n[64];
	int used;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1e3);
	ts.tv_nsec = (long)((ms - ts.tv_sec * 1e3) * 1e6);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int remaining_ms(double deadline)
{
	double left = deadline - now_ms();

	if (left <= 0)
		return 0;
	if (left > INT_MAX)
		return INT_MAX;
	return (int)left + 1;
}

static const char *errname(int err)
{
	switch (err) {
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EADDRINUSE: return "EADDRINUSE";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENETUNREACH: return "ENETUNREACH";
	case EPIPE: return "EPIPE";
	case EAGAIN: return "EAGAIN";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EMFILE: return "EMFILE";
	case ENOBUFS: return "ENOBUFS";
	case EPROTO: return "EPROTO";
	case 0: return "SHORT";		/* peer closed before all bytes */
	default: return "EOTHER";
	}
}

static void err_count(struct errtab *t, int err)
{
	int i;

	for (i = 0; i < t->used; i++) {
		if (!strcmp(errname(t->err[i]), errname(err))) {
			t->n[i]++;
			return;
		}
	}
	if (t->used < 64) {
		t->err[t->used] = err;
		t->n[t->used++] = 1;
	}
}

static unsigned long err_total(const struct errtab *t)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < t->used; i++)
		sum += t->n[i];
	return sum;
}

static void err_print(const struct errtab *t)
{
	int i;

	printf("\"errors\":{");
	for (i = 0; i < t->used; i++)
		printf("%s\"%s\":%lu", i ? "," : "", errname(t->err[i]),
		       t->n[i]);
	printf("}");
}

/* scripts/insn-count.c counts guest instructions between two of these */
static void insn_mark(void)
{
	asm volatile("xchg %%bx,%%bx" ::: "memory");
}

static void die(const char *what, int err)
{
	fprintf(stderr, "tcptw_traffic: %s: %s\n", what, strerror(err));
	exit(1);
}

static void usage(FILE *f, int code)
{
	fprintf(f,
"Usage: tcptw_traffic server --listen ADDR:PORT [options]\n"
"       tcptw_traffic client --connect ADDR:PORT [options]\n"
"  ADDR:PORT is 198.18.0.2:8080 or [fd00::2]:8080\n"
"  -l, --listen ADDR:PORT      server address\n"
"  -c, --connect ADDR:PORT     client destination\n"
"  -n, --count N               connections (server: 0 = until timeout)\n"
"  -t, --timeout SEC           hard bound on the whole run (default 30)\n"
"  -N, --netns PATH[,PATH...]  setns() before each socket (client alternates)\n"
"      --close-first WHO       server (default) or client\n"
"      --req-bytes N           request size (default 64)\n"
"      --resp-bytes N          response size (default 32)\n"
"      --linger0               SO_LINGER 0 before close (RST)\n"
"      --no-accept             server: listen, never accept\n"
"      --backlog N             server: listen backlog (default 128)\n"
"      --reuseport N           server: N listeners, one SO_REUSEPORT group\n"
"                              (1-64)\n"
"      --ready-file PATH       server: create PATH once listening\n"
"  -b, --bind ADDR:PORT        client: local address\n"
"      --reuseaddr             client: SO_REUSEADDR before bind\n"
"      --barrier               client: close barrier (see source)\n"
"      --connect-timeout MS    client: per connect (default 5000)\n"
"      --rate N                client: connects per second\n"
"      --gap-ms N              client: pause between connections\n"
"      --align-seconds         client: bursts start at a CLOCK_MONOTONIC\n"
"                              second boundary (+50 ms)\n"
"      --burst N               client: connects per aligned burst\n"
"      --align-every SEC       client: bursts SEC seconds apart (default 1)\n"
"  -v, --verbose               client: per-connect details in the JSON\n"
"      --mark                  client: bench marker before and after the\n"
"                              connections (scripts/insn-count.c)\n"
"  -h, --help                  this text\n");
	exit(code);
}

static unsigned long parse_ul(const char *s, const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > ULONG_MAX) {
		fprintf(stderr, "tcptw_traffic: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

static int parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	char host[INET6_ADDRSTRLEN + 2];
	struct addrinfo *res;
	const char *port;
	size_t hl;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || e[1] != ':')
			return -1;
		hl = e - s - 1;
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s + 1, hl);
		port = e + 2;
	} else {
		const char *c = strrchr(s, ':');

		if (!c)
			return -1;
		hl = c - s;
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s, hl);
		port = c + 1;
	}
	host[hl] = '\0';
	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void set_linger0(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Wait for @events on @fd until @deadline. 0: ready, -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ms, r;

	for (;;) {
		ms = remaining_ms(deadline);
		if (!ms)
			return -ETIMEDOUT;
		r = poll(&p, 1, ms);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* Read exactly @n bytes (or to EOF if @to_eof). Returns bytes or -errno. */
static long read_bytes(int fd, unsigned long n, bool to_eof, double deadline)
{
	char buf[4096];
	unsigned long got = 0;
	ssize_t r;
	int err;

	while (to_eof || got < n) {
		size_t want = sizeof(buf);

		if (!to_eof && n - got < want)
			want = n - got;
		r = read(fd, buf, want);
		if (r > 0) {
			got += r;
			continue;
		}
		if (r == 0)
			return to_eof ? (long)got : -EPROTO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			return err;
	}
	return got;
}

static int write_bytes(int fd, unsigned long n, double deadline)
{
	char buf[4096];
	unsigned long done = 0;
	ssize_t r;
	int err;

	memset(buf, 'x', sizeof(buf));
	while (done < n) {
		size_t want = n - done < sizeof(buf) ? n - done : sizeof(buf);

		r = send(fd, buf, want, MSG_NOSIGNAL);
		if (r > 0) {
			done += r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN)
			return -errno;
		err = wait_fd(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

static int tcp_state(int fd, struct tcp_info *ti)
{
	socklen_t len = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len))
		return -errno;
	return ti->tcpi_state;
}

/* ------------------------------------------------------------------ */

static int open_netns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path, errno);
	return fd;
}

static void enter_netns(int fd, const char *path)
{
	if (setns(fd, CLONE_NEWNET))
		die(path, errno);
}

/* Serve one accepted connection; returns 0 or -errno. */
static int serve_one(const struct opts *o, int fd, double deadline)
{
	long r;
	int err;

	set_nonblock(fd);
	/*
	 * Read the whole request first: closing with unread data would send
	 * a RST and leave no TIME_WAIT socket (nat-paws pitfall 4).
	 */
	r = read_bytes(fd, o->req_bytes, false, deadline);
	if (r < 0)
		return (int)r;
	err = write_bytes(fd, o->resp_bytes, deadline);
	if (err)
		return err;
	if (o->close_first == CLOSE_CLIENT) {
		r = read_bytes(fd, 0, true, deadline);
		if (r < 0)
			return (int)r;
	}
	if (o->linger0)
		set_linger0(fd);
	return 0;
}

/* A listening socket on @ss, in the SO_REUSEPORT group if @reuseport */
static int listen_on(const struct opts *o, const struct sockaddr_storage *ss,
		     socklen_t sl, bool reuseport)
{
	int one = 1, lfd;

	lfd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket", errno);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport &&
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)))
		die("SO_REUSEPORT", errno);
	if (bind(lfd, (const struct sockaddr *)ss, sl))
		die("bind", errno);
	if (listen(lfd, (int)o->backlog))
		die("listen", errno);
	set_nonblock(lfd);
	return lfd;
}

/*
 * Wait until one of the @n listeners is readable or @deadline: its
 * index, -ETIMEDOUT or -errno. The search starts after @last, so that
 * no listener with a connection waiting is passed over for long.
 */
static int wait_listeners(const int *lfd, unsigned int n, unsigned int last,
			  double deadline)
{
	struct pollfd p[MAX_LISTENERS];
	unsigned int i, k;
	int ms, r;

	for (i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = lfd[i], .events = POLLIN };
	for (;;) {
		ms = remaining_ms(deadline);
		if (!ms)
			return -ETIMEDOUT;
		r = poll(p, n, ms);
		if (r < 0 && errno != EINTR)
			return -errno;
		for (i = 1; r > 0 && i <= n; i++) {
			k = (last + i) % n;
			if (p[k].revents)
				return k;
		}
	}
}

static int run_server(const struct opts *o)
{
	double deadline = now_ms() + o->timeout * 1e3;
	unsigned long accepted = 0, served = 0, per[MAX_LISTENERS] = { 0 };
	unsigned int nl = o->reuseport ? o->reuseport : 1, i, used = 0;
	int lfd[MAX_LISTENERS], fd, err, k = 0;
	struct sockaddr_storage ss;
	struct errtab errs = { 0 };
	socklen_t sl;

	if (o->nr_netns)
		enter_netns(open_netns(o->netns[0]), o->netns[0]);
	if (parse_addr(o->addr, &ss, &sl)) {
		fprintf(stderr, "tcptw_traffic: bad address %s\n", o->addr);
		return 2;
	}
	for (i = 0; i < nl; i++)
		lfd[i] = listen_on(o, &ss, sl, o->reuseport);
	if (o->ready_file) {
		int rf = open(o->ready_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (rf < 0)
			die(o->ready_file, errno);
		close(rf);
	}

	while (!o->count || accepted < o->count) {
		if (o->no_accept) {
			sleep_ms(remaining_ms(deadline) < 100 ?
				 remaining_ms(deadline) : 100);
			if (!remaining_ms(deadline))
				break;
			continue;
		}
		k = wait_listeners(lfd, nl, k, deadline);
		if (k == -ETIMEDOUT)
			break;
		if (k < 0) {
			err_count(&errs, -k);
			break;
		}
		fd = accept4(lfd[k], NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ECONNABORTED)
				continue;
			err_count(&errs, errno);
			break;
		}
		accepted++;
		per[k]++;
		err = serve_one(o, fd, deadline);
		if (err)
			err_count(&errs, -err);
		else
			served++;
		close(fd);
	}
	for (i = 0; i < nl; i++) {
		close(lfd[i]);
		used += per[i] > 0;
	}
	printf("{\"accepted\":%lu,\"served\":%lu,", accepted, served);
	if (o->reuseport) {
		printf("\"listeners_used\":%u,\"per_listener\":[", used);
		for (i = 0; i < nl; i++)
			printf("%s%lu", i ? "," : "", per[i]);
		printf("],");
	}
	err_print(&errs);
	printf("}\n");
	return 0;
}

/* ------------------------------------------------------------------ */

struct conn_result {
	double t_ms;		/* CLOCK_MONOTONIC at connect() */
	double connect_ms;
	int err;		/* 0: ok, else errno (0 for short reads is EPROTO) */
	const char *step;
	int ns;
	unsigned int lport;
	unsigned int retrans;
	unsigned int tsval;	/* TCP_TIMESTAMP: clock + this socket's offset */
};

/* Non-blocking connect bounded by @ms; returns 0 or -errno. */
static int do_connect(int fd, const struct sockaddr_storage *ss, socklen_t sl,
		      double deadline)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (!connect(fd, (const struct sockaddr *)ss, sl))
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	err = wait_fd(fd, POLLOUT, deadline);
	if (err)
		return err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}

static int client_one(const struct opts *o, const struct sockaddr_storage *dst,
		      socklen_t dl, const struct sockaddr_storage *src,
		      socklen_t srcl, double deadline, struct conn_result *res)
{
	struct sockaddr_storage local;
	double t0, cdeadline;
	socklen_t ll = sizeof(local);
	struct tcp_info ti;
	int fd, err, one = 1;
	long r;

	fd = socket(dst->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	res->step = "socket";
	if (fd < 0)
		return -errno;
	set_nonblock(fd);
	if (o->reuseaddr)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (src) {
		res->step = "bind";
		if (bind(fd, (const struct sockaddr *)src, srcl)) {
			err = -errno;
			goto out;
		}
	}
	res->step = "connect";
	t0 = now_ms();
	res->t_ms = t0;
	cdeadline = t0 + o->connect_timeout_ms;
	if (cdeadline > deadline)
		cdeadline = deadline;
	err = do_connect(fd, dst, dl, cdeadline);
	res->connect_ms = now_ms() - t0;
	if (!getsockname(fd, (struct sockaddr *)&local, &ll))
		res->lport = ntohs(local.ss_family == AF_INET6 ?
				   ((struct sockaddr_in6 *)&local)->sin6_port :
				   ((struct sockaddr_in *)&local)->sin_port);
	if (err)
		goto out;
	if (tcp_state(fd, &ti) >= 0)
		res->retrans = ti.tcpi_total_retrans;
	/*
	 * TCP_TIMESTAMP reads the socket's TS clock including its random
	 * offset: comparing two connections of one client tells whether the
	 * kernel hashes the ports into the offset (then every connection
	 * has its own offset) or only the addresses.
	 */
	ll = sizeof(res->tsval);
	getsockopt(fd, IPPROTO_TCP, TCP_TIMESTAMP, &res->tsval, &ll);

	res->step = "request";
	err = write_bytes(fd, o->req_bytes, deadline);
	if (err)
		goto out;
	res->step = "response";
	if (o->close_first == CLOSE_SERVER) {
		r = read_bytes(fd, 0, true, deadline);
		if (r >= 0 && (unsigned long)r != o->resp_bytes)
			r = -EPROTO;
		if (r < 0) {
			err = (int)r;
			goto out;
		}
		if (o->barrier) {
			double bd = now_ms() + BARRIER_MS;

			res->step = "barrier";
			if (bd > deadline)
				bd = deadline;
			shutdown(fd, SHUT_WR);
			while (tcp_state(fd, &ti) != TCP_CLOSE) {
				if (now_ms() >= bd) {
					err = -ETIMEDOUT;
					goto out;
				}
				sleep_ms(1);
			}
		}
	} else {
		r = read_bytes(fd, o->resp_bytes, false, deadline);
		if (r < 0) {
			err = (int)r;
			goto out;
		}
		if (o->barrier && !o->linger0) {
			res->step = "barrier";
			shutdown(fd, SHUT_WR);
			r = read_bytes(fd, 0, true, deadline);
			if (r < 0) {
				err = (int)r;
				goto out;
			}
		}
	}
	res->step = "close";
	if (o->linger0)
		set_linger0(fd);
out:
	close(fd);
	return err;
}

static void wait_second_boundary(double deadline, unsigned long every)
{
	struct timespec ts;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/*
	 * the next second that is a multiple of @every, + 50 ms, so a burst
	 * never straddles a kernel second
	 */
	ms = (1e3 - ts.tv_nsec / 1e6) + 50.0 +
		1e3 * ((every - 1) - (unsigned long)ts.tv_sec % every);
	if (ms >= 1e3 * every + 50.0)
		ms -= 1e3 * every;
	if (now_ms() + ms > deadline)
		ms = deadline - now_ms();
	sleep_ms(ms);
}

static int run_client(const struct opts *o)
{
	double start, deadline, max_ms = 0, next;
	unsigned long i, attempts = 0, ok = 0, slow = 0, retrans = 0;
	struct sockaddr_storage dst, src;
	struct conn_result *res;
	struct errtab errs = { 0 };
	int nsfd[MAX_NETNS], k, err;
	socklen_t dl, srcl = 0;

	if (parse_addr(o->addr, &dst, &dl)) {
		fprintf(stderr, "tcptw_traffic: bad address %s\n", o->addr);
		return 2;
	}
	if (o->bind && parse_addr(o->bind, &src, &srcl)) {
		fprintf(stderr, "tcptw_traffic: bad address %s\n", o->bind);
		return 2;
	}
	for (k = 0; k < o->nr_netns; k++)
		nsfd[k] = open_netns(o->netns[k]);
	res = calloc(o->count ? o->count : 1, sizeof(*res));
	if (!res)
		die("calloc", ENOMEM);

	start = now_ms();
	deadline = start + o->timeout * 1e3;
	next = start;
	if (o->mark)
		insn_mark();
	for (i = 0; i < o->count; i++) {
		if (o->align && (i % o->burst) == 0) {
			wait_second_boundary(deadline, o->align_every);
			next = now_ms();
		} else if (o->rate) {
			sleep_ms(next - now_ms());
		}
		if (now_ms() >= deadline)
			break;
		if (o->rate)
			next += 1e3 / o->rate;
		if (o->nr_netns) {
			k = i % o->nr_netns;
			res[i].ns = k;
			enter_netns(nsfd[k], o->netns[k]);
		}
		attempts++;
		err = client_one(o, &dst, dl, o->bind ? &src : NULL, srcl,
				 deadline, &res[i]);
		res[i].err = -err;
		if (err)
			err_count(&errs, -err);
		else
			ok++;
		if (res[i].connect_ms > max_ms)
			max_ms = res[i].connect_ms;
		if (res[i].connect_ms >= SLOW_CONNECT_MS)
			slow++;
		if (res[i].retrans)
			retrans++;
		if (o->gap_ms && i + 1 < o->count)
			sleep_ms(o->gap_ms);
	}
	if (o->mark)
		insn_mark();

	printf("{\"attempts\":%lu,\"ok\":%lu,", attempts, ok);
	err_print(&errs);
	printf(",\"failed\":%lu,\"max_connect_ms\":%.3f,\"slow_connects\":%lu,"
	       "\"retrans_connects\":%lu,\"elapsed_ms\":%.3f",
	       err_total(&errs), max_ms, slow, retrans, now_ms() - start);
	if (o->verbose) {
		printf(",\"per_connect\":[");
		for (i = 0; i < attempts; i++)
			printf("%s{\"i\":%lu,\"ns\":%d,\"lport\":%u,"
			       "\"connect_ms\":%.3f,\"retrans\":%u,"
			       "\"tsval\":%u,"
			       "\"err\":\"%s\",\"step\":\"%s\","
			       "\"t_ms\":%.3f}",
			       i ? "," : "", i, res[i].ns, res[i].lport,
			       res[i].connect_ms, res[i].retrans, res[i].tsval,
			       res[i].err ? errname(res[i].err) : "",
			       res[i].err ? res[i].step : "", res[i].t_ms);
		printf("]");
	}
	printf("}\n");
	free(res);
	return 0;
}

/* ------------------------------------------------------------------ */

enum {
	OPT_CLOSE_FIRST = 256, OPT_REQ, OPT_RESP, OPT_LINGER0, OPT_NO_ACCEPT,
	OPT_BACKLOG, OPT_READY, OPT_REUSEADDR, OPT_BARRIER, OPT_CTIMEOUT,
	OPT_RATE, OPT_GAP, OPT_ALIGN, OPT_BURST, OPT_ALIGN_EVERY, OPT_MARK,
	OPT_REUSEPORT,
};

static const struct option longopts[] = {
	{ "listen",		required_argument, NULL, 'l' },
	{ "connect",		required_argument, NULL, 'c' },
	{ "count",		required_argument, NULL, 'n' },
	{ "timeout",		required_argument, NULL, 't' },
	{ "netns",		required_argument, NULL, 'N' },
	{ "bind",		required_argument, NULL, 'b' },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "close-first",	required_argument, NULL, OPT_CLOSE_FIRST },
	{ "req-bytes",		required_argument, NULL, OPT_REQ },
	{ "resp-bytes",		required_argument, NULL, OPT_RESP },
	{ "linger0",		no_argument,	   NULL, OPT_LINGER0 },
	{ "no-accept",		no_argument,	   NULL, OPT_NO_ACCEPT },
	{ "backlog",		required_argument, NULL, OPT_BACKLOG },
	{ "ready-file",		required_argument, NULL, OPT_READY },
	{ "reuseaddr",		no_argument,	   NULL, OPT_REUSEADDR },
	{ "barrier",		no_argument,	   NULL, OPT_BARRIER },
	{ "connect-timeout",	required_argument, NULL, OPT_CTIMEOUT },
	{ "rate",		required_argument, NULL, OPT_RATE },
	{ "gap-ms",		required_argument, NULL, OPT_GAP },
	{ "align-seconds",	no_argument,	   NULL, OPT_ALIGN },
	{ "burst",		required_argument, NULL, OPT_BURST },
	{ "align-every",	required_argument, NULL, OPT_ALIGN_EVERY },
	{ "mark",		no_argument,	   NULL, OPT_MARK },
	{ "reuseport",		required_argument, NULL, OPT_REUSEPORT },
	{ NULL, 0, NULL, 0 },
};

static void parse_netns(struct opts *o, char *arg)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_netns == MAX_NETNS) {
			fprintf(stderr, "tcptw_traffic: too many --netns\n");
			exit(2);
		}
		o->netns[o->nr_netns++] = tok;
	}
}

int main(int argc, char **argv)
{
	struct opts o = {
		.close_first = CLOSE_SERVER,
		.req_bytes = 64,
		.resp_bytes = 32,
		.backlog = 128,
		.connect_timeout_ms = 5000,
		.timeout = 30,
	};
	char *rate;
	int c;

	if (argc < 2)
		usage(stderr, 2);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		usage(stdout, 0);
	if (!strcmp(argv[1], "server"))
		o.server = true;
	else if (strcmp(argv[1], "client"))
		usage(stderr, 2);
	argv++;
	argc--;

	while ((c = getopt_long(argc, argv, "l:c:n:t:N:b:vh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'c':
			o.addr = optarg;
			break;
		case 'n':
			o.count = parse_ul(optarg, "--count");
			break;
		case 't':
			o.timeout = parse_ul(optarg, "--timeout");
			break;
		case 'N':
			parse_netns(&o, optarg);
			break;
		case 'b':
			o.bind = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case OPT_CLOSE_FIRST:
			if (!strcmp(optarg, "server"))
				o.close_first = CLOSE_SERVER;
			else if (!strcmp(optarg, "client"))
				o.close_first = CLOSE_CLIENT;
			else
				usage(stderr, 2);
			break;
		case OPT_REQ:
			o.req_bytes = parse_ul(optarg, "--req-bytes");
			break;
		case OPT_RESP:
			o.resp_bytes = parse_ul(optarg, "--resp-bytes");
			break;
		case OPT_LINGER0:
			o.linger0 = true;
			break;
		case OPT_NO_ACCEPT:
			o.no_accept = true;
			break;
		case OPT_BACKLOG:
			o.backlog = parse_ul(optarg, "--backlog");
			break;
		case OPT_READY:
			o.ready_file = optarg;
			break;
		case OPT_REUSEADDR:
			o.reuseaddr = true;
			break;
		case OPT_BARRIER:
			o.barrier = true;
			break;
		case OPT_CTIMEOUT:
			o.connect_timeout_ms = parse_ul(optarg,
							"--connect-timeout");
			break;
		case OPT_RATE:
			/* accept "N" and "N/s" */
			rate = strsep(&optarg, "/");
			if (optarg && strcmp(optarg, "s"))
				usage(stderr, 2);
			o.rate = parse_ul(rate, "--rate");
			break;
		case OPT_GAP:
			o.gap_ms = parse_ul(optarg, "--gap-ms");
			break;
		case OPT_ALIGN:
			o.align = true;
			break;
		case OPT_BURST:
			o.burst = parse_ul(optarg, "--burst");
			break;
		case OPT_ALIGN_EVERY:
			o.align_every = parse_ul(optarg, "--align-every");
			o.align = true;
			break;
		case OPT_MARK:
			o.mark = true;
			break;
		case OPT_REUSEPORT:
			o.reuseport = parse_ul(optarg, "--reuseport");
			if (!o.reuseport || o.reuseport > MAX_LISTENERS)
				usage(stderr, 2);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc || !o.addr || !o.timeout)
		usage(stderr, 2);
	if (!o.server && !o.count)
		o.count = 1;
	if (!o.burst)
		o.burst = o.count ? o.count : 1;
	if (!o.align_every)
		o.align_every = 1;
	/* a peer RST must not kill us with SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	return o.server ? run_server(&o) : run_client(&o);
}

// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "ctr_names.h"

static const char *const REMEDY_PAWS[] = {
	"Let the clients close first (HTTP keep-alive, or close from the",
	"client side) so TIME_WAIT stays on the clients, not on a server",
	"that many clients reach through one NAT address. Keep",
	"net.ipv4.tcp_timestamps=1: turning it off only hides this counter,",
	"the same SYNs are then refused on sequence number",
	"(TwSynSeqRejected). tcp_tw_recycle is gone since 4.12 and is no",
	"fix.",
	NULL
};

static const char *const REMEDY_SEQ[] = {
	"Turn timestamps back on (net.ipv4.tcp_timestamps=1 on server and",
	"clients): with them a TIME_WAIT socket accepts a client's newer SYN,",
	"and tcp_tw_reuse works. Behind a NAT shared by several clients that",
	"is not enough: their clocks differ, and the same SYNs are then",
	"refused by PAWS (nat_paws). Fix the cause as for PAWS: let the",
	"clients close first (keep-alive).",
	NULL
};

static const char *const REMEDY_FW2[] = {
	"This host closed first and the peer never closed its side: its",
	"socket sits in CLOSE_WAIT (an application that does not close()",
	"after the server's FIN) or vanished without a FIN, and a new",
	"connection on the same ports (a NAT reusing its mapping, a client",
	"with a fixed source port) meets this host's orphaned FIN_WAIT2",
	"socket. Make the peer close its sockets (ss -tan state close-wait",
	"there), and lower net.ipv4.tcp_fin_timeout (60 s by default) so",
	"orphaned FIN_WAIT2 sockets end sooner.",
	NULL
};

static const char *const REMEDY_PORTS[] = {
	"Reuse connections: HTTP keep-alive, and for a proxy upstream",
	"keepalive with at least as many idle connections as the",
	"concurrency. Widen net.ipv4.ip_local_port_range (e.g. \"1024",
	"65535\") or add source addresses. tcp_tw_reuse=1 only raises the",
	"ceiling to one reuse per port per second (tcp_tw_reuse_delay) and",
	"needs timestamps on both ends. SO_LINGER with 0 timeout (RST on",
	"close) where losing TIME_WAIT is acceptable.",
	NULL
};

static const char *const REMEDY_TWO[] = {
	"Raise net.ipv4.tcp_max_tw_buckets (sockets over it close without",
	"TIME_WAIT protection; each bucket costs a few hundred bytes), or",
	"cut the rate of short connections with keep-alive.",
	NULL
};

static const char *const REMEDY_LISTEN[] = {
	"Raise net.core.somaxconn and the application's listen backlog (the",
	"smaller wins: nginx \"listen ... backlog=N\"), and accept faster",
	"(more workers). For SYN-queue drops raise",
	"net.ipv4.tcp_max_syn_backlog and keep net.ipv4.tcp_syncookies=1.",
	NULL
};

static const char *const REMEDY_CT[] = {
	"Raise net.netfilter.nf_conntrack_max (and nf_conntrack_buckets),",
	"shorten nf_conntrack_tcp_timeout_time_wait, or exempt the",
	"benchmark traffic from tracking (nft \"notrack\", iptables -t raw",
	"-j NOTRACK).",
	NULL
};

static const char *const REMEDY_CT_INSERT[] = {
	"New flows got a SNAT tuple that another entry holds: the SNAT",
	"ports toward that destination are used up (widen the port range",
	"of SNAT/MASQUERADE \"to\", add SNAT addresses, keep fewer",
	"connections open), or concurrent connections raced for one tuple",
	"(MASQUERADE/SNAT --random-fully, nft \"masquerade fully-random\").",
	NULL
};

static const char *const REMEDY_IDLE[] = {
	"Send keepalives more often than the NAT's idle timeout:",
	"SO_KEEPALIVE with TCP_KEEPIDLE and TCP_KEEPINTVL below it, or",
	"net.ipv4.tcp_keepalive_time and tcp_keepalive_intvl (below half",
	"the shortest silence that was reset; 300 s suffices for a 350 s",
	"AWS NAT gateway/NLB), or application pings. On a local NAT raise",
	"nf_conntrack_tcp_timeout_established; drop ct state invalid rather",
	"than letting those packets reach the socket.",
	NULL
};

static uint64_t mod_delta(const struct diag_input *in, const char *name)
{
	return in->mod ? deltaset_get(in->mod, name) : 0;
}

static uint64_t mib_delta(const struct diag_input *in, const char *name)
{
	return in->mib ? deltaset_get(in->mib, name) : 0;
}

static uint64_t ct_delta(const struct diag_input *in, const char *name)
{
	return in->ct ? deltaset_get(in->ct, name) : 0;
}

/* Join @pieces with spaces into @buf. */
static void join(char *buf, size_t len, const char *const *pieces)
{
	size_t o = 0;

	buf[0] = '\0';
	for (; *pieces && o < len; pieces++)
		o += snprintf(buf + o, len - o, "%s%s", o ? " " : "", *pieces);
}

static struct finding *add(struct diag_result *r, const char *id,
			   const char *title, const char *const *remedy)
{
	struct finding *f;

	if (r->n == DIAG_MAX)
		return NULL;
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	snprintf(f->title, sizeof(f->title), "%s", title);
	join(f->remedy, sizeof(f->remedy), remedy);
	return f;
}

/* A command of the remedy (the finding's "commands"). */
static void __attribute__((format(printf, 2, 3)))
cmd(struct finding *f, const char *fmt, ...)
{
	va_list ap;

	if (f->ncmds == DIAG_MAX_CMDS)
		return;
	va_start(ap, fmt);
	vsnprintf(f->cmds[f->ncmds++], sizeof(f->cmds[0]), fmt, ap);
	va_end(ap);
}

/* sysctl -w NAME=V when V is more than the current value */
static void cmd_raise(struct finding *f, const struct diag_input *in,
		      int sc, const char *name, long long v)
{
	if (!in->sys->have[sc] || in->sys->v[sc] < v)
		cmd(f, "sysctl -w %s=%lld", name, v);
}

/* sysctl -w NAME=1 when it was read as 0 (a switch turned off) */
static void cmd_enable(struct finding *f, const struct diag_input *in,
		       int sc, const char *name)
{
	if (sysctl_get(in->sys, sc, 1) == 0)
		cmd(f, "sysctl -w %s=1", name);
}

/* a queue's sysctl to twice its value, at least 4096 */
static void cmd_double(struct finding *f, const struct diag_input *in,
		       int sc, const char *name)
{
	long long v = 2 * sysctl_get(in->sys, sc, 4096);

	cmd_raise(f, in, sc, name, v > 4096 ? v : 4096);
}

/* Evidence from a counter delta; nothing if it did not move. */
static void ev_delta(struct finding *f, const struct diag_input *in,
		     const char *name, uint64_t d)
{
	struct evidence *e;

	if (!d || f->nev == DIAG_MAX_EV)
		return;
	e = &f->ev[f->nev++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->kind = EVK_DELTA;
	e->v = d;
	e->x = in->secs > 0 ? d / in->secs : 0;
}

static void ev_sysctl(struct finding *f, const struct diag_input *in,
		      enum sysctl_id id)
{
	struct evidence *e;

	if (!in->sys->have[id] || f->nev == DIAG_MAX_EV)
		return;
	e = &f->ev[f->nev++];
	snprintf(e->name, sizeof(e->name), "%s", sysctl_dotted(id));
	if (id == SC_PORT_RANGE_HI)
		strcat(e->name, "[hi]");
	else if (id == SC_PORT_RANGE_LO)
		strcat(e->name, "[lo]");
	e->kind = EVK_VALUE;
	e->v = in->sys->v[id];
}

static void ev_value(struct finding *f, const char *name, int64_t v)
{
	struct evidence *e;

	if (f->nev == DIAG_MAX_EV)
		return;
	e = &f->ev[f->nev++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->kind = EVK_VALUE;
	e->v = v;
}

static void note(struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct finding *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nnotes == DIAG_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(f->notes[f->nnotes++], sizeof(f->notes[0]), fmt, ap);
	va_end(ap);
}

/* Continue the last note (keeps each source line short). */
static void more(struct finding *f, const char *text)
{
	size_t o;

	if (!f->nnotes)
		return;
	o = strlen(f->notes[f->nnotes - 1]);
	snprintf(f->notes[f->nnotes - 1] + o, sizeof(f->notes[0]) - o, " %s",
		 text);
}

static void caveat(struct diag_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void caveat(struct diag_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->ncaveats == DIAG_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(r->caveats[r->ncaveats++], sizeof(r->caveats[0]), fmt, ap);
	va_end(ap);
}

/*
 * Who caused it: the events' addresses first (@dst_side: connect()-side
 * events name the remote in dst=), else the peers table's @col.
 */
static void name_peers(struct finding *f, const struct diag_input *in,
		       const char *event, bool dst_side, const char *col)
{
	size_t r;
	int n = 0;

	if (in->events && in->events->n) {
		n = events_top(in->events, event, dst_side, f->peers,
			       DIAG_MAX_PEERS);
		if (n) {
			f->npeers = n;
			f->peers_from = "events";
			return;
		}
	}
	if (!in->peers || table_col(in->peers, col) < 0)
		return;
	for (r = 0; r < in->peers->nrows && n < DIAG_MAX_PEERS; r++) {
		uint64_t v = table_get(in->peers, r, col);

		if (!v || v == TBL_NONE)
			continue;
		snprintf(f->peers[n].addr, sizeof(f->peers[n].addr), "%s",
			 in->peers->rows[r].key);
		f->peers[n++].n = v;
	}
	f->npeers = n;
	if (n)
		f->peers_from = "peers";
}

static void rfc1337_note(struct finding *f, const struct diag_input *in)
{
	if (sysctl_get(in->sys, SC_TCP_RFC1337, 0) != 1)
		return;
	note(f, "aggravating: net.ipv4.tcp_rfc1337=1, so the client's RST");
	more(f, "no longer clears the TIME_WAIT socket: each rejected SYN");
	more(f, "becomes a connect() stalled in retransmits until TIME_WAIT");
	more(f, "expires");
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Gaps closer than this (ms) count as one clock offset. */
#define CLOCK_GAP_MS 60000u
#define CLOCK_MIN_SYNS 4
#define CLOCK_MAX_SYNS 1024

/*
 * How many timestamp clocks sent the PAWS-rejected SYNs from @addr? Each
 * rejected SYN carries its own TSval, and the TIME_WAIT socket it hit the
 * previous connection's last TSval (ts_recent): ts_recent - tsval is the
 * offset between the two connections' clocks (plus the ms in between).
 * Hosts with one clock each (the TS offset hashed from the addresses)
 * repeat the same few gaps; a kernel that hashes the ports in too (commit
 * 165573e41f2f: upstream 7.0, Debian 6.1.192 and 6.12.94, CVE-2026-23247)
 * draws a new clock for every connection, and one client behind a NAT
 * that rewrites source ports is then enough to be rejected.
 */
static void clock_note(struct finding *f, const struct diag_input *in,
		       const char *addr)
{
	uint32_t gaps[CLOCK_MAX_SYNS];
	char a[48];
	size_t i, n = 0, k = 0;

	if (!in->events)
		return;
	for (i = 0; i < in->events->n && n < CLOCK_MAX_SYNS; i++) {
		const struct tcptw_event *e = &in->events->v[i];

		if (strcmp(e->name, "tw_syn_paws_rejected") ||
		    e->tsval == EV_NONE || e->ts_recent == EV_NONE ||
		    split_endpoint(e->src, a, sizeof(a), NULL) ||
		    strcmp(a, addr))
			continue;
		gaps[n++] = (uint32_t)e->ts_recent - (uint32_t)e->tsval;
	}
	if (n < CLOCK_MIN_SYNS)
		return;
	qsort(gaps, n, sizeof(gaps[0]), cmp_u32);
	for (i = 0; i < n; i++)
		if (!i || gaps[i] - gaps[i - 1] > CLOCK_GAP_MS)
			k++;
	ev_value(f, "ts_clock_offsets", k);
	if (k * 4 >= n * 3) {
		note(f, "%zu of %zu rejected SYNs from %s have a TS clock of", k,
		     n, addr);
		more(f, "their own: clients on Linux 7.0+, Debian 6.1.192+ or");
		more(f, "6.12.94+ (CVE-2026-23247) get one per connection, so");
		more(f, "one client behind a NAT that rewrites ports");
		more(f, "(--random-fully) suffices");
	} else {
		note(f, "the rejected SYNs from %s show %zu clock offset(s):",
		     addr, k);
		more(f, "a few hosts, each with its own TS clock, share it");
	}
}

static void rule_paws(const struct diag_input *in, struct diag_result *r)
{
	uint64_t syn = mod_delta(in, CTR(TW_SYN_PAWS_REJECTED));
	uint64_t tw = mod_delta(in, CTR(TW_PAWS_REJECTED));
	uint64_t ktw = mib_delta(in, "TcpExtPAWSTimewait");
	struct finding *f;

	/*
	 * With the module, only refused SYNs cost connections: a TIME_WAIT
	 * socket that drops an old duplicate segment (TwPawsRejected alone)
	 * is doing its job. Without it, PAWSTimewait cannot tell the two.
	 */
	if (in->module ? !syn : !ktw)
		return;
	f = add(r, "nat_paws", syn ?
		"PAWS rejected SYNs on TIME_WAIT sockets (clients behind NAT)" :
		"PAWS rejections on TIME_WAIT sockets",
		REMEDY_PAWS);
	if (!f)
		return;
	f->app = true;
	cmd_enable(f, in, SC_TCP_TIMESTAMPS, "net.ipv4.tcp_timestamps");
	ev_delta(f, in, CTR(TW_SYN_PAWS_REJECTED), syn);
	ev_delta(f, in, CTR(TW_PAWS_REJECTED), tw);
	ev_delta(f, in, "TcpExtPAWSTimewait", ktw);
	ev_delta(f, in, "TcpExtPAWSEstab", mib_delta(in, "TcpExtPAWSEstab"));
	ev_delta(f, in, "TcpExtTCPSynRetrans", mib_delta(in, "TcpExtTCPSynRetrans"));
	ev_sysctl(f, in, SC_TCP_TIMESTAMPS);
	name_peers(f, in, EV(TW_SYN_PAWS_REJECTED), false, "syn_paws_rejected");
	if (f->npeers) {
		note(f, "the SYNs came from %s,", f->peers[0].addr);
		more(f, "most likely a NAT address shared by several clients");
		more(f, "whose timestamp clocks differ");
		clock_note(f, in, f->peers[0].addr);
	} else if (in->module && (in->events_err == -EPERM ||
				  in->events_err == -EACCES)) {
		note(f, "the events file needs CAP_NET_ADMIN:");
		more(f, "run as root to name the NAT address");
	}
	rfc1337_note(f, in);
}

static void rule_seq(const struct diag_input *in, struct diag_result *r)
{
	uint64_t seq = mod_delta(in, CTR(TW_SYN_SEQ_REJECTED));
	bool ts_off = sysctl_get(in->sys, SC_TCP_TIMESTAMPS, 1) == 0;
	struct finding *f;

	if (!seq)
		return;
	f = add(r, "ts_off_seq", ts_off ?
		"Timestamps off hide PAWS, but SYNs are still refused on sequence" :
		"TIME_WAIT refuses SYNs on sequence (peers without timestamps)",
		REMEDY_SEQ);
	if (!f)
		return;
	f->app = true;
	cmd_enable(f, in, SC_TCP_TIMESTAMPS, "net.ipv4.tcp_timestamps");
	ev_delta(f, in, CTR(TW_SYN_SEQ_REJECTED), seq);
	ev_delta(f, in, "TcpExtTCPSynRetrans", mib_delta(in, "TcpExtTCPSynRetrans"));
	ev_sysctl(f, in, SC_TCP_TIMESTAMPS);
	name_peers(f, in, EV(TW_SYN_SEQ_REJECTED), false, "");
	rfc1337_note(f, in);
}

/*
 * SYNs refused by a TIME_WAIT socket still in the FIN_WAIT2 substate:
 * the kernel counts them in no MIB (PAWS there is not PAWSTimewait), so
 * only the module sees them; each costs its client a SYN retransmit or,
 * in window, a RST.
 */
static void rule_fin_wait2(const struct diag_input *in, struct diag_result *r)
{
	uint64_t n = mod_delta(in, CTR(TW_SYN_FIN_WAIT2_REJECTED));
	struct finding *f;

	if (!n)
		return;
	f = add(r, "fin_wait2_syn",
		"SYNs refused by FIN_WAIT2 sockets (the peer never closed its side)",
		REMEDY_FW2);
	if (!f)
		return;
	f->app = true;
	ev_delta(f, in, CTR(TW_SYN_FIN_WAIT2_REJECTED), n);
	ev_delta(f, in, CTR(TW_RST_SENT), mod_delta(in, CTR(TW_RST_SENT)));
	ev_delta(f, in, "TcpExtTCPSynRetrans", mib_delta(in, "TcpExtTCPSynRetrans"));
	note(f, "these SYNs appear in no kernel MIB: a FIN_WAIT2 socket's PAWS");
	more(f, "reject is not counted as PAWSTimewait");
}

/*
 * Which side holds the TIME_WAIT sockets: the one that closed first. Here
 * as the client, a socket keeps its local port of ip_local_port_range for
 * 60 s; here as the server, it sits on a listening port and costs the
 * clients nothing (census_add: a local port outside the range counts per
 * local port). Evidence and a note, from the census at the window's end.
 */
static void tw_sides(struct finding *f, const struct diag_input *in)
{
	const struct census *c = in->census;
	const struct census_ep *top = NULL;
	uint32_t srv = 0, cli;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nlocal; i++) {
		srv += c->local[i].n[CS_TIME_WAIT];
		if (!top || c->local[i].n[CS_TIME_WAIT] > top->n[CS_TIME_WAIT])
			top = &c->local[i];
	}
	cli = c->total[CS_TIME_WAIT] - srv;
	ev_value(f, "TIME_WAIT here as client", cli);
	ev_value(f, "TIME_WAIT here as server", srv);
	if (cli && cli >= srv) {
		note(f, "%u TIME_WAIT sockets are held here, on the connecting",
		     cli);
		more(f, "side, each on a local port: this host closed those");
		more(f, "connections first (as a load tester does on exit).");
		more(f, "A server that closes first holds TIME_WAIT itself");
	} else if (srv) {
		note(f, "%u TIME_WAIT sockets are held here as the server %s %u):",
		     srv, "(most on local port", top->port);
		more(f, "it closed first, so they hold no port of this host's");
		more(f, "range; the clients' ports are free");
	}
}

/*
 * The host's part of the ports remedy: the widest usual range, then what
 * stood in the way of reuse. Keep-alive is the application's.
 */
static void ports_cmds(struct finding *f, const struct diag_input *in)
{
	if (sysctl_get(in->sys, SC_PORT_RANGE_LO, 32768) > 1024 ||
	    sysctl_get(in->sys, SC_PORT_RANGE_HI, 60999) < 65535)
		cmd(f, "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"");
	if (mod_delta(in, CTR(TW_REUSE_DENIED_DISABLED)) ||
	    mod_delta(in, CTR(TW_REUSE_DENIED_LOOPBACK_ONLY)))
		cmd(f, "sysctl -w net.ipv4.tcp_tw_reuse=1");
	if (mod_delta(in, CTR(TW_REUSE_DENIED_NO_TIMESTAMPS)))
		cmd_enable(f, in, SC_TCP_TIMESTAMPS, "net.ipv4.tcp_timestamps");
	f->app = true;
}

static void rule_ports(const struct diag_input *in, struct diag_result *r)
{
	uint64_t ex = mod_delta(in, CTR(CONNECT_PORT_EXHAUSTED));
	uint64_t tup = mod_delta(in, CTR(CONNECT_TUPLE_IN_USE));
	const struct census_ep *worst = NULL;
	double share = 0, s;
	struct finding *f;
	long long reuse;
	char name[80];
	size_t i;

	for (i = 0; in->census && i < in->census->nremote; i++) {
		s = census_share(in->census, &in->census->remote[i]);
		if (s > share) {
			share = s;
			worst = &in->census->remote[i];
		}
	}
	if (!ex && !tup && share < DIAG_PORT_SHARE)
		return;
	f = add(r, "port_exhaustion",
		"Ephemeral port exhaustion (connect() finds no free local port)",
		REMEDY_PORTS);
	if (!f)
		return;
	ports_cmds(f, in);
	ev_delta(f, in, CTR(CONNECT_PORT_EXHAUSTED), ex);
	ev_delta(f, in, CTR(CONNECT_TUPLE_IN_USE), tup);
	ev_delta(f, in, CTR(TW_REUSE_GRANTED), mod_delta(in, CTR(TW_REUSE_GRANTED)));
	ev_delta(f, in, CTR(TW_REUSE_DENIED_DISABLED),
		 mod_delta(in, CTR(TW_REUSE_DENIED_DISABLED)));
	ev_delta(f, in, CTR(TW_REUSE_DENIED_LOOPBACK_ONLY),
		 mod_delta(in, CTR(TW_REUSE_DENIED_LOOPBACK_ONLY)));
	ev_delta(f, in, CTR(TW_REUSE_DENIED_NO_TIMESTAMPS),
		 mod_delta(in, CTR(TW_REUSE_DENIED_NO_TIMESTAMPS)));
	ev_delta(f, in, CTR(TW_REUSE_DENIED_TOO_RECENT),
		 mod_delta(in, CTR(TW_REUSE_DENIED_TOO_RECENT)));
	ev_delta(f, in, CTR(TW_REUSE_DENIED_FIN_WAIT2),
		 mod_delta(in, CTR(TW_REUSE_DENIED_FIN_WAIT2)));
	if (worst && share > 0 && f->nev < DIAG_MAX_EV) {
		struct evidence *e = &f->ev[f->nev++];

		snprintf(name, sizeof(name), "%s:%u", worst->addr,
			 worst->port);
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->kind = EVK_SHARE;
		e->v = worst->ephemeral;
		e->x = share;
	}
	ev_sysctl(f, in, SC_PORT_RANGE_LO);
	ev_sysctl(f, in, SC_PORT_RANGE_HI);
	ev_sysctl(f, in, SC_TCP_TW_REUSE);
	name_peers(f, in, EV(CONNECT_PORT_EXHAUSTED), true, "port_exhausted");
	tw_sides(f, in);
	reuse = sysctl_get(in->sys, SC_TCP_TW_REUSE, 2);
	if (mod_delta(in, CTR(TW_REUSE_DENIED_DISABLED)) ||
	    mod_delta(in, CTR(TW_REUSE_DENIED_LOOPBACK_ONLY)))
		note(f, "net.ipv4.tcp_tw_reuse=%lld: TIME_WAIT ports are reused %s",
		     reuse, reuse == 2 ? "only over loopback" : "never");
	if (mod_delta(in, CTR(TW_REUSE_DENIED_NO_TIMESTAMPS))) {
		note(f, "reuse denied for lack of timestamps:");
		more(f, "tcp_tw_reuse needs tcp_timestamps on both ends");
	}
	if (mod_delta(in, CTR(TW_REUSE_DENIED_TOO_RECENT))) {
		note(f, "reuse denied as too recent: one reuse per port per %lld",
		     sysctl_get(in->sys, SC_TCP_TW_REUSE_DELAY, 1000));
		more(f, "ms (tcp_tw_reuse_delay), so the range caps the");
		more(f, "connection rate per destination");
	}
}

static void rule_tw_overflow(const struct diag_input *in,
			     struct diag_result *r)
{
	uint64_t o = mod_delta(in, CTR(TW_OVERFLOW));
	uint64_t k = mib_delta(in, "TcpExtTCPTimeWaitOverflow");
	struct finding *f;

	if (!o && !k)
		return;
	f = add(r, "tw_overflow",
		"TIME_WAIT bucket table overflow (tcp_max_tw_buckets reached)",
		REMEDY_TWO);
	if (!f)
		return;
	/* room for the sockets that were refused, twice over */
	cmd_raise(f, in, SC_TCP_MAX_TW_BUCKETS, "net.ipv4.tcp_max_tw_buckets",
		  2 * (sysctl_get(in->sys, SC_TCP_MAX_TW_BUCKETS, 0) +
		       (long long)(o ? o : k)));
	ev_delta(f, in, CTR(TW_OVERFLOW), o);
	ev_delta(f, in, "TcpExtTCPTimeWaitOverflow", k);
	ev_sysctl(f, in, SC_TCP_MAX_TW_BUCKETS);
	if (in->census)
		ev_value(f, "sockets in TIME_WAIT",
			 in->census->total[CS_TIME_WAIT]);
	tw_sides(f, in);
}

/*
 * The host's part of the listen remedy: somaxconn caps every backlog
 * (at listen(): the application listens again, or is restarted, for it
 * to apply, and asks for as much itself), the SYN queue and cookies.
 */
static void listen_cmds(struct finding *f, const struct diag_input *in,
			uint64_t syn)
{
	cmd_double(f, in, SC_SOMAXCONN, "net.core.somaxconn");
	if (syn)
		cmd_double(f, in, SC_TCP_MAX_SYN_BACKLOG,
			   "net.ipv4.tcp_max_syn_backlog");
	cmd_enable(f, in, SC_TCP_SYNCOOKIES, "net.ipv4.tcp_syncookies");
	f->app = true;
}

static void rule_listen(const struct diag_input *in, struct diag_result *r)
{
	uint64_t ov = mod_delta(in, CTR(LISTEN_OVERFLOW));
	uint64_t kov = mib_delta(in, "TcpExtListenOverflows");
	uint64_t kdr = mib_delta(in, "TcpExtListenDrops");
	uint64_t syn = mod_delta(in, CTR(LISTEN_SYN_DROP)) +
		       mib_delta(in, "TcpExtTCPReqQFullDrop");
	struct finding *f;
	size_t i;

	/*
	 * ListenDrops alone is no evidence: it also counts SYNs and ACKs a
	 * listener dropped for other reasons (no route, memory, a bad
	 * cookie), which a busy server sees now and then.
	 */
	if (!ov && !kov && !syn)
		return;
	f = add(r, "accept_queue",
		"Listen queue overflow (accept queue or SYN queue full)",
		REMEDY_LISTEN);
	if (!f)
		return;
	listen_cmds(f, in, syn);
	ev_delta(f, in, CTR(LISTEN_OVERFLOW), ov);
	ev_delta(f, in, CTR(LISTEN_OVERFLOW_SYN), mod_delta(in, CTR(LISTEN_OVERFLOW_SYN)));
	ev_delta(f, in, CTR(LISTEN_OVERFLOW_ACK), mod_delta(in, CTR(LISTEN_OVERFLOW_ACK)));
	ev_delta(f, in, CTR(LISTEN_SYN_DROP), mod_delta(in, CTR(LISTEN_SYN_DROP)));
	ev_delta(f, in, CTR(LISTEN_SYN_COOKIE_SENT), mod_delta(in, CTR(LISTEN_SYN_COOKIE_SENT)));
	ev_delta(f, in, "TcpExtListenOverflows", kov);
	ev_delta(f, in, "TcpExtListenDrops", kdr);
	ev_delta(f, in, "TcpExtTCPReqQFullDrop",
		 mib_delta(in, "TcpExtTCPReqQFullDrop"));
	ev_delta(f, in, "TcpExtSyncookiesSent", mib_delta(in, "TcpExtSyncookiesSent"));
	ev_sysctl(f, in, SC_SOMAXCONN);
	ev_sysctl(f, in, SC_TCP_MAX_SYN_BACKLOG);
	ev_sysctl(f, in, SC_TCP_SYNCOOKIES);
	for (i = 0; in->listeners && i < in->listeners->nrows &&
	     f->nev < DIAG_MAX_EV; i++) {
		const struct table *t = in->listeners;
		uint64_t os = table_get(t, i, "overflow_syn");
		uint64_t oa = table_get(t, i, "overflow_ack");
		uint64_t mb = table_get(t, i, "max_backlog");
		struct evidence *e;

		if ((!os || os == TBL_NONE) && (!oa || oa == TBL_NONE))
			continue;
		e = &f->ev[f->nev++];
		snprintf(e->name, sizeof(e->name), "listener %s:%llu",
			 t->rows[i].key,
			 (unsigned long long)table_get(t, i, "port"));
		e->kind = EVK_LISTENER;
		e->v = (os == TBL_NONE ? 0 : os) + (oa == TBL_NONE ? 0 : oa);
		e->a = table_get(t, i, "backlog");
		e->b = mb;
		if (mb != TBL_NONE && in->sys->have[SC_SOMAXCONN] &&
		    (long long)mb == in->sys->v[SC_SOMAXCONN])
			note(f, "%s:%llu: its backlog %llu is capped by %s",
			     t->rows[i].key,
			     (unsigned long long)table_get(t, i, "port"),
			     (unsigned long long)mb, "net.core.somaxconn");
	}
}

/* Share of the dump at which one kind of entry "fills" the table. */
#define CT_FILL_SHARE 0.5

/*
 * What fills the table, from the entries dumped at the window's end: the
 * TCP state most entries are in and the destination most go to, as
 * evidence and a note; *@tcp_state and *@dst say which (-1, NULL: none
 * holds CT_FILL_SHARE of the entries).
 */
static void ct_fillers(struct finding *f, const struct diag_input *in,
		       int *tcp_state, const struct ctc_slot **dst)
{
	const struct ct_census *c = in->ctc;
	const struct ctc_slot *top[1];
	unsigned int st, best = 0;
	char name[80], ep[48];
	const char *pn;

	*tcp_state = -1;
	*dst = NULL;
	if (!c || !c->total)
		return;
	ev_value(f, "conntrack entries dumped", c->total);
	for (st = 1; st < CTC_TCP_STATES; st++)
		if (c->tcp_state[st] > c->tcp_state[best])
			best = st;
	if (c->tcp_state[best] >= CT_FILL_SHARE * c->total) {
		*tcp_state = best;
		snprintf(name, sizeof(name), "conntrack tcp %s",
			 ct_tcp_state_name(best));
		ev_value(f, name, c->tcp_state[best]);
		if (c->timeout[best] >= 0)
			note(f, "%llu of %llu entries are TCP %s, held %lld s (%s)",
			     (unsigned long long)c->tcp_state[best],
			     (unsigned long long)c->total,
			     ct_tcp_state_name(best), c->timeout[best],
			     ct_tcp_state_sysctl(best));
		else
			note(f, "%llu of %llu entries are TCP %s",
			     (unsigned long long)c->tcp_state[best],
			     (unsigned long long)c->total,
			     ct_tcp_state_name(best));
	} else if (c->proto[IPPROTO_UDP] >= CT_FILL_SHARE * c->total) {
		ev_value(f, "conntrack udp", c->proto[IPPROTO_UDP]);
		note(f, "%llu of %llu entries are UDP",
		     (unsigned long long)c->proto[IPPROTO_UDP],
		     (unsigned long long)c->total);
	}
	/* n - err: the entries it surely has (n while the census is exact) */
	if (ct_census_top(&c->dst, top, 1) &&
	    top[0]->n - top[0]->err >= CT_FILL_SHARE * c->total) {
		*dst = top[0];
		ctc_key_str(&top[0]->k, ep, sizeof(ep));
		pn = ct_proto_name(top[0]->k.proto);
		snprintf(name, sizeof(name), "conntrack to %.8s %s",
			 pn ? pn : "proto", ep);
		ev_value(f, name, top[0]->n - top[0]->err);
		note(f, "%s%llu of %llu entries go to %s %s%s",
		     top[0]->err ? "at least " : "",
		     (unsigned long long)(top[0]->n - top[0]->err),
		     (unsigned long long)c->total, pn ? pn : "proto", ep,
		     ctc_key_loopback(&top[0]->k) ?
		     " (loopback: an upstream on this host)" : "");
	}
}

/*
 * nf_conntrack_max with room for the table and what it dropped, twice
 * over: the entries of the failed run still hold their slots when the
 * load comes again. It is global, writable only in the initial netns:
 * the command enters init's.
 */
static void ct_max_cmd(struct finding *f, const struct diag_input *in)
{
	long long m = in->ct_max ? (long long)in->ct_max :
		      sysctl_get(in->sys, SC_NF_CONNTRACK_MAX, 65536);
	uint64_t full = mod_delta(in, CTR(CONNTRACK_TABLE_FULL));

	if (!full)
		full = ct_delta(in, "drop");
	cmd(f, "nsenter -t 1 -n sysctl -w net.netfilter.nf_conntrack_max=%lld",
	    2 * (m + (long long)full));
}

/* the loopback upstream's notrack rules, both directions */
static void ct_notrack_cmds(struct finding *f, const char *proto,
			    unsigned int port)
{
	cmd(f, "nft add table inet tcptw_notrack");
	cmd(f, "nft 'add chain inet tcptw_notrack output { %s }'",
	    "type filter hook output priority raw;");
	cmd(f, "nft add rule inet tcptw_notrack output oif lo %s dport %u notrack",
	    proto, port);
	cmd(f, "nft add rule inet tcptw_notrack output oif lo %s sport %u notrack",
	    proto, port);
}

/* The remedy for a full table, picked from what fills it. */
static void ct_full_remedy(struct finding *f, const struct diag_input *in,
			   int st, const struct ctc_slot *dst)
{
	const struct ct_census *c = in->ctc;
	char what[360] = "", tail[360] = "";
	const char *pn;

	if (!c || (st < 0 && !dst &&
		   c->proto[IPPROTO_UDP] < CT_FILL_SHARE * c->total)) {
		/* nothing dominates: the generic remedy */
		ct_max_cmd(f, in);
		return;
	}
	if (st == CTC_TCP_ESTABLISHED)
		snprintf(what, sizeof(what),
			 "%llu of %llu entries are live TCP flows (ESTABLISHED, held %lld s by nf_conntrack_tcp_timeout_established): raise net.netfilter.nf_conntrack_max (and nf_conntrack_buckets) to hold them, or shorten the timeout if idle flows linger",
			 (unsigned long long)c->tcp_state[st],
			 (unsigned long long)c->total, c->timeout[st]);
	else if (st >= 0 && c->timeout[st] >= 0)
		snprintf(what, sizeof(what),
			 "%llu of %llu entries are TCP %s, held %lld s (%s): shorten it (net.netfilter.%s, e.g. %s)",
			 (unsigned long long)c->tcp_state[st],
			 (unsigned long long)c->total, ct_tcp_state_name(st),
			 c->timeout[st], ct_tcp_state_sysctl(st),
			 ct_tcp_state_sysctl(st),
			 st == CTC_TCP_TIME_WAIT ? "30" : "a tenth of it");
	else if (st < 0 && c->proto[IPPROTO_UDP] >= CT_FILL_SHARE * c->total)
		snprintf(what, sizeof(what),
			 "%llu of %llu entries are UDP: shorten net.netfilter.nf_conntrack_udp_timeout and nf_conntrack_udp_timeout_stream",
			 (unsigned long long)c->proto[IPPROTO_UDP],
			 (unsigned long long)c->total);
	if (st >= 0 && st != CTC_TCP_ESTABLISHED && c->timeout[st] >= 0)
		cmd(f, "sysctl -w net.netfilter.%s=%lld",
		    ct_tcp_state_sysctl(st),
		    st == CTC_TCP_TIME_WAIT ? 30 : c->timeout[st] / 10);
	/*
	 * A shorter timeout frees no entry that holds one now, nor makes
	 * room for a burst: the max too, unless notrack keeps the flows out
	 */
	if (dst && ctc_key_loopback(&dst->k) && dst->k.port)
		ct_notrack_cmds(f, ct_proto_name(dst->k.proto) ?: "tcp",
				dst->k.port);
	else
		ct_max_cmd(f, in);
	if (dst) {
		pn = ct_proto_name(dst->k.proto);
		if (ctc_key_loopback(&dst->k) && dst->k.port)
			snprintf(tail, sizeof(tail),
				 "add a notrack rule for the loopback upstream on :%u, both directions (nft: table inet raw, chain output type filter hook output priority raw, \"%s dport %u oif lo notrack\" and \"%s sport %u oif lo notrack\"; the second, for the upstream's replies, or conntrack picks them up mid-stream)",
				 dst->k.port, pn ? pn : "tcp", dst->k.port,
				 pn ? pn : "tcp", dst->k.port);
		else
			snprintf(tail, sizeof(tail),
				 "exempt the %s%llu entries toward that destination from tracking (nft \"notrack\" in a raw-priority chain) if no NAT or stateful rule needs them",
				 dst->err ? "at least " : "",
				 (unsigned long long)(dst->n - dst->err));
	}
	snprintf(f->remedy, sizeof(f->remedy), "%s%s%s%s. %s", what,
		 *what && *tail ? ", or " : "",
		 !*what && *tail ? "Most entries go to one destination: " : "",
		 tail, "Raising nf_conntrack_max alone only delays it.");
}

static void rule_conntrack(const struct diag_input *in,
			   struct diag_result *r)
{
	uint64_t full = mod_delta(in, CTR(CONNTRACK_TABLE_FULL));
	uint64_t drop = ct_delta(in, "drop");
	uint64_t early = ct_delta(in, "early_drop");
	uint64_t ct_ins = ct_delta(in, "insert_failed");
	uint64_t ins = mod_delta(in, CTR(CONNTRACK_INSERT_FAILED)) + ct_ins;
	/*
	 * A tuple clash at confirm bumps both insert_failed and drop
	 * (nf_ct_resolve_clash()), so only the drops beyond insert_failed
	 * can be a full table; the module's ConntrackTableFull is exact.
	 */
	uint64_t full_drops = drop > ct_ins ? drop - ct_ins : 0;
	bool filled = in->ct_have_count && in->ct_max &&
		      in->ct_count >= DIAG_CT_FILL * in->ct_max;
	const struct ctc_slot *dst;
	struct finding *f;
	int st;

	if (full || full_drops || early || filled) {
		f = add(r, "conntrack_full",
			"Conntrack table full (new flows dropped)", REMEDY_CT);
		if (f) {
			ev_delta(f, in, CTR(CONNTRACK_TABLE_FULL), full);
			ev_delta(f, in, "conntrack drop", drop);
			ev_delta(f, in, "conntrack early_drop", early);
			if (in->ct_have_count) {
				ev_value(f, "net.netfilter.nf_conntrack_count",
					 in->ct_count);
				ev_value(f, "net.netfilter.nf_conntrack_max",
					 in->ct_max);
			}
			ct_fillers(f, in, &st, &dst);
			ct_full_remedy(f, in, st, dst);
		}
	}
	if (ins) {
		f = add(r, "conntrack_insert_failed",
			"Conntrack insert failures (SNAT tuple clashes)",
			REMEDY_CT_INSERT);
		if (f) {
			f->app = true;	/* the NAT rule's ports and flags */
			ev_delta(f, in, CTR(CONNTRACK_INSERT_FAILED),
				 mod_delta(in, CTR(CONNTRACK_INSERT_FAILED)));
			ev_delta(f, in, "conntrack insert_failed", ct_ins);
			/* the destinations whose SNAT tuples clashed */
			name_peers(f, in, EV(CONNTRACK_INSERT_FAILED), true, "");
			ct_fillers(f, in, &st, &dst);
			if (dst)
				more(f, "(the SNAT tuples toward it run out first)");
		}
	}
}

/*
 * RSTs received after at least DIAG_IDLE_RST_MS of silence: the buckets of
 * the module's rst_received_idle histogram whose lower bound (half the
 * le_ms bound; the +Inf bucket starts at the last bound) reaches it.
 * @lo_min: the lowest such bound with a reset, in ms (untouched if none).
 */
static uint64_t idle_rsts(const struct diag_input *in,
			  unsigned long long *lo_min)
{
	const struct ctr_delta *d;
	uint64_t n = 0;
	size_t i;

	for (i = 0; in->hist && i < in->hist->n; i++) {
		const char *le;
		unsigned long long lo;

		d = &in->hist->v[i];
		if (strncmp(d->name, "rst_received_idle.", 18) ||
		    (d->flags & CTR_GONE))
			continue;
		le = d->name + 18;
		if (!strcmp(le, "+Inf"))
			lo = 65536;
		else
			lo = strtoull(le, NULL, 10) / 2;
		if (lo >= DIAG_IDLE_RST_MS && d->delta) {
			n += d->delta;
			if (lo < *lo_min)
				*lo_min = lo;
		}
	}
	return n;
}

static const char idle_untold[] =
	"without tcptw.ko's rst_received_idle histogram, NAT idle resets cannot be told apart";

static void rule_idle(const struct diag_input *in, struct diag_result *r)
{
	uint64_t rst = mod_delta(in, CTR(RST_RECEIVED));
	uint64_t er = mib_delta(in, "TcpEstabResets");
	long long ka = sysctl_get(in->sys, SC_TCP_KEEPALIVE_TIME, 0);
	long long kv = sysctl_get(in->sys, SC_TCP_KEEPALIVE_INTVL, 75);
	unsigned long long lo = 65536;
	uint64_t idle = idle_rsts(in, &lo);
	struct finding *f;
	long long want;
	char nm[48], line[80];

	if ((!rst && !er) || ka <= DIAG_NAT_IDLE_S)
		return;
	/*
	 * Resets are part of normal traffic (a client that gives up, a
	 * proxy that aborts): only a RST that ended a silence longer than
	 * a NAT keeps idle flows tells a forgotten flow from the rest, and
	 * only the module's rst_received_idle histogram measures that
	 * silence. Without it, say what could not be told apart.
	 */
	if (!in->idle_hist) {
		caveat(r, "%llu connections were reset: %s",
		       (unsigned long long)(er ? er : rst), idle_untold);
		r->idle_untold = true;
		return;
	}
	if (!idle)
		return;
	f = add(r, "nat_idle_reset",
		"Idle connections reset; keepalive slower than NAT idle timeouts",
		REMEDY_IDLE);
	if (!f)
		return;
	/*
	 * For sockets with SO_KEEPALIVE (the application sets it). A reset
	 * after lo ms of silence means a middlebox forgot the flow sooner,
	 * at a timeout the histogram cannot bound from below: probe after
	 * half of it (32 s at most: the last bucket starts at 65.5 s).
	 * After a probe the next one waits tcp_keepalive_intvl, so that
	 * must be as short.
	 */
	want = (long long)(lo / 2000);
	if (want < 1)
		want = 1;
	cmd(f, "sysctl -w net.ipv4.tcp_keepalive_time=%lld", want);
	if (kv > want)
		cmd(f, "sysctl -w net.ipv4.tcp_keepalive_intvl=%lld", want);
	f->app = true;
	snprintf(nm, sizeof(nm), "rst_received_idle>=%dms", DIAG_IDLE_RST_MS);
	ev_delta(f, in, nm, idle);
	ev_delta(f, in, CTR(RST_RECEIVED), rst);
	ev_delta(f, in, "TcpEstabResets", er);
	ev_delta(f, in, "conntrack invalid", ct_delta(in, "invalid"));
	ev_sysctl(f, in, SC_TCP_KEEPALIVE_TIME);
	ev_sysctl(f, in, SC_TCP_KEEPALIVE_INTVL);
	ev_sysctl(f, in, SC_NF_CT_TCP_TIMEOUT_ESTABLISHED);
	note(f, "connections were reset after %llu s or more of silence:",
	     lo / 1000);
	more(f, "a NAT or load balancer on the path forgot them sooner");
	snprintf(line, sizeof(line), "(AWS NAT gateways and NLBs: %d s), and",
		 DIAG_NAT_IDLE_S);
	more(f, line);
	snprintf(line, sizeof(line), "tcp_keepalive_time=%lld s probes later",
		 ka);
	more(f, line);
}

void diagnose_run(const struct diag_input *in, struct diag_result *r)
{
	memset(r, 0, sizeof(*r));
	if (!in->module)
		caveat(r, "%s", "tcptw.ko not loaded: only kernel MIBs were checked");
	rule_paws(in, r);
	rule_seq(in, r);
	rule_fin_wait2(in, r);
	rule_ports(in, r);
	rule_tw_overflow(in, r);
	rule_listen(in, r);
	rule_conntrack(in, r);
	rule_idle(in, r);
	if (!in->census)
		caveat(r, "%s", "no socket census: port-range share not checked");
	if (!in->ct)
		caveat(r, "%s", "no conntrack statistics");
}

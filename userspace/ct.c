// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <libnfnetlink/libnfnetlink.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "ct.h"
#include "proc.h"
#include "sysctl.h"

/*
 * libnetfilter_conntrack has no statistics call (conntrack -S builds the
 * IPCTNL_MSG_CT_GET_STATS{,_CPU} requests itself), so this goes one layer
 * down to libnfnetlink, which it is built on: framing, sequence numbers,
 * attribute parsing and the dump loop are the library's.
 */
static const struct {
	int attr;
	const char *name;
} ct_attrs[] = {
	{ CTA_STATS_FOUND, "found" },
	{ CTA_STATS_INVALID, "invalid" },
	{ CTA_STATS_INSERT, "insert" },
	{ CTA_STATS_INSERT_FAILED, "insert_failed" },
	{ CTA_STATS_DROP, "drop" },
	{ CTA_STATS_EARLY_DROP, "early_drop" },
	{ CTA_STATS_ERROR, "error" },
	{ CTA_STATS_SEARCH_RESTART, "search_restart" },
	{ CTA_STATS_CLASH_RESOLVE, "clash_resolve" },
	{ CTA_STATS_CHAIN_TOOLONG, "chaintoolong" },
};

#define CT_NATTRS ARRAY_SIZE(ct_attrs)

struct ct_sum {
	uint64_t v[CT_NATTRS];
	bool seen[CT_NATTRS];
	int cpus;
};

static int stats_cpu_cb(struct nlmsghdr *nlh, struct nfattr *nfa[], void *data)
{
	struct ct_sum *sum = data;
	size_t i;

	(void)nlh;
	for (i = 0; i < CT_NATTRS; i++) {
		struct nfattr *a = nfa[ct_attrs[i].attr - 1];

		if (!a || NFA_PAYLOAD(a) < 4)
			continue;
		sum->v[i] += ntohl(*(uint32_t *)NFA_DATA(a));
		sum->seen[i] = true;
	}
	sum->cpus++;
	return NFNL_CB_CONTINUE;
}

static int stats_global_cb(struct nlmsghdr *nlh, struct nfattr *nfa[],
			   void *data)
{
	struct ct_info *ct = data;
	struct nfattr *a;

	(void)nlh;
	a = nfa[CTA_STATS_GLOBAL_ENTRIES - 1];
	if (a && NFA_PAYLOAD(a) >= 4) {
		ct->count = ntohl(*(uint32_t *)NFA_DATA(a));
		ct->have_count = true;
	}
	a = nfa[CTA_STATS_GLOBAL_MAX_ENTRIES - 1];
	if (a && NFA_PAYLOAD(a) >= 4) {
		ct->max = ntohl(*(uint32_t *)NFA_DATA(a));
		ct->have_max = true;
	}
	return NFNL_CB_CONTINUE;
}

static int ct_request(struct nfnl_handle *h, struct nfnl_subsys_handle *ssh,
		      uint8_t type, uint16_t flags)
{
	union {
		struct nlmsghdr nlh;
		char buf[NFNL_HEADER_LEN + 64];
	} req;

	memset(&req, 0, sizeof(req));
	nfnl_fill_hdr(ssh, &req.nlh, 0, AF_UNSPEC, 0, type,
		      NLM_F_REQUEST | flags);
	if (nfnl_send(h, &req.nlh) < 0)
		return -errno;
	/* 0 or -1 with errno; a finished dump ends the loop either way */
	if (nfnl_catch(h) < 0 && errno != 0 && errno != EINTR)
		return -errno;
	return 0;
}

int ct_read_netlink(struct ct_info *ct)
{
	struct nfnl_callback cpu_cb = {
		.call = stats_cpu_cb, .attr_count = CTA_STATS_MAX,
	};
	struct nfnl_callback glob_cb = {
		.call = stats_global_cb, .attr_count = CTA_STATS_GLOBAL_MAX,
	};
	struct nfnl_subsys_handle *ssh;
	struct nfnl_handle *h;
	struct ct_sum sum = { 0 };
	size_t i;
	int err;

	h = nfnl_open();
	if (!h)
		return errno ? -errno : -EPROTONOSUPPORT;
	ssh = nfnl_subsys_open(h, NFNL_SUBSYS_CTNETLINK, IPCTNL_MSG_MAX, 0);
	if (!ssh) {
		err = errno ? -errno : -EPROTONOSUPPORT;
		goto err_close;
	}
	cpu_cb.data = &sum;
	glob_cb.data = ct;
	nfnl_callback_register(ssh, IPCTNL_MSG_CT_GET_STATS_CPU, &cpu_cb);
	nfnl_callback_register(ssh, IPCTNL_MSG_CT_GET_STATS, &glob_cb);

	err = ct_request(h, ssh, IPCTNL_MSG_CT_GET_STATS_CPU, NLM_F_DUMP);
	if (!err && !sum.cpus)
		err = -ENOENT;
	if (err)
		goto err_subsys;
	for (i = 0; i < CT_NATTRS; i++)
		if (sum.seen[i])
			ctrset_add(&ct->stats, ct_attrs[i].name, sum.v[i]);
	ct->have_stats = true;
	/* count and max: v4.? kernels lack GET_STATS; sysctls cover that */
	ct_request(h, ssh, IPCTNL_MSG_CT_GET_STATS, NLM_F_ACK);
	err = 0;

err_subsys:
	nfnl_subsys_close(ssh);
err_close:
	nfnl_close(h);
	return err;
}

/* Column names of /proc/net/stat/nf_conntrack mapped to conntrack -S's. */
static const char *proc_col_name(const char *col)
{
	static const char *const map[][2] = {
		{ "clashres", "clash_resolve" },
		{ "chainlength", "chaintoolong" },
		{ "icmp_error", "error" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(col, map[i][0]))
			return map[i][1];
	return col;
}

int ct_parse_proc_stat(const char *buf, struct ctrset *stats,
		       uint64_t *entries)
{
	char *copy, *line, *save = NULL, *s2, *tok, *end;
	char cols[32][24];
	uint64_t sum[32] = { 0 }, v;
	size_t ncols = 0, c;
	int rows = 0;

	copy = strdup(buf);
	if (!copy)
		return -ENOMEM;
	line = strtok_r(copy, "\n", &save);
	for (s2 = NULL, tok = line ? strtok_r(line, " \t", &s2) : NULL;
	     tok && ncols < 32; tok = strtok_r(NULL, " \t", &s2)) {
		if (strlen(tok) >= sizeof(cols[0]))
			break;
		strcpy(cols[ncols++], tok);
	}
	if (!ncols || strcmp(cols[0], "entries")) {
		free(copy);
		return -EINVAL;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		for (c = 0, s2 = NULL, tok = strtok_r(line, " \t", &s2);
		     tok && c < ncols; tok = strtok_r(NULL, " \t", &s2), c++) {
			errno = 0;
			v = strtoull(tok, &end, 16);
			if (errno || *end)
				break;
			/* entries is the netns-wide count, repeated per CPU */
			if (c == 0 && rows > 0)
				continue;
			sum[c] += v;
		}
		rows++;
	}
	free(copy);
	if (!rows)
		return -EINVAL;
	if (entries)
		*entries = sum[0];
	for (c = 1; c < ncols; c++)
		if (ctrset_add(stats, proc_col_name(cols[c]), sum[c]) ==
		    -ENOMEM)
			return -ENOMEM;
	return rows;
}

static int ct_read_proc(struct ct_info *ct)
{
	uint64_t entries;
	char *buf;
	int n;

	buf = tcptw_read("net/stat/nf_conntrack", NULL);
	if (!buf)
		return -errno;
	n = ct_parse_proc_stat(buf, &ct->stats, &entries);
	free(buf);
	if (n < 0)
		return n;
	ct->have_stats = true;
	if (!ct->have_count) {
		ct->count = entries;
		ct->have_count = true;
	}
	return 0;
}

int ct_read(struct ct_info *ct)
{
	long long v;

	memset(ct, 0, sizeof(*ct));
	ct->source = "none";
	/* fixture trees (unit tests) never talk to the running kernel */
	if (!getenv("TCPTW_PROC_ROOT")) {
		ct->err = ct_read_netlink(ct);
		if (!ct->err)
			ct->source = "netlink";
	} else {
		ct->err = -ENOENT;
	}
	if (!ct->have_stats && !ct_read_proc(ct))
		ct->source = "proc";
	if (!ct->have_count &&
	    tcptw_read_ints("sys/net/netfilter/nf_conntrack_count", &v, 1) == 1) {
		ct->count = v;
		ct->have_count = true;
	}
	if (!ct->have_max &&
	    tcptw_read_ints("sys/net/netfilter/nf_conntrack_max", &v, 1) == 1) {
		ct->max = v;
		ct->have_max = true;
	}
	return ct->have_stats || ct->have_count ? 0 : -ENOENT;
}

void ct_free(struct ct_info *ct)
{
	ctrset_free(&ct->stats);
}

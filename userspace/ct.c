// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "ct.h"
#include "nl.h"
#include "proc.h"
#include "sysctl.h"

/*
 * ctnetlink statistics through libmnl, as conntrack -S does:
 * IPCTNL_MSG_CT_GET_STATS_CPU (a dump, one message per CPU) and
 * IPCTNL_MSG_CT_GET_STATS (count and max). libnetfilter_conntrack has
 * no call for them, so it is not used.
 */
/*
 * Attribute numbers are uapi and never renumbered. The newest two are
 * spelled out: bullseye's headers (5.10) have no CTA_STATS_CHAIN_TOOLONG
 * (added in 5.15), and a CLI built there must still ask for it.
 */
#define CT_STATS_CLASH_RESOLVE	14	/* CTA_STATS_CLASH_RESOLVE, 5.9 */
#define CT_STATS_CHAIN_TOOLONG	15	/* CTA_STATS_CHAIN_TOOLONG, 5.15 */

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
	{ CT_STATS_CLASH_RESOLVE, "clash_resolve" },
	{ CT_STATS_CHAIN_TOOLONG, "chaintoolong" },
};

#define CT_NATTRS ARRAY_SIZE(ct_attrs)

struct ct_sum {
	uint64_t v[CT_NATTRS];
	bool seen[CT_NATTRS];
	int cpus;
	struct ct_info *ct;
};

/* A u32 attribute of @nlh's payload (after the nfgenmsg), or false. */
static bool attr_u32(const struct nlmsghdr *nlh, int type, uint32_t *v)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != type)
			continue;
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return false;
		*v = ntohl(mnl_attr_get_u32(a));
		return true;
	}
	return false;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ct_sum *sum = data;
	uint32_t v;
	size_t i;

	if ((nlh->nlmsg_type & 0xff) == IPCTNL_MSG_CT_GET_STATS) {
		if (attr_u32(nlh, CTA_STATS_GLOBAL_ENTRIES, &v)) {
			sum->ct->count = v;
			sum->ct->have_count = true;
		}
		if (attr_u32(nlh, CTA_STATS_GLOBAL_MAX_ENTRIES, &v)) {
			sum->ct->max = v;
			sum->ct->have_max = true;
		}
		return MNL_CB_OK;
	}
	for (i = 0; i < CT_NATTRS; i++) {
		if (!attr_u32(nlh, ct_attrs[i].attr, &v))
			continue;
		sum->v[i] += v;
		sum->seen[i] = true;
	}
	sum->cpus++;
	return MNL_CB_OK;
}

static int ct_request(struct mnl_socket *nl, char *buf, size_t len,
		      uint8_t type, uint16_t flags, struct ct_sum *sum)
{
	struct nfgenmsg *nfg;
	struct nlmsghdr *nlh;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = time(NULL) + type;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nl_talk(nl, buf, len, nlh, stats_cb, sum);
}

int ct_read_netlink(struct ct_info *ct)
{
	struct ct_sum sum = { .ct = ct };
	struct mnl_socket *nl;
	size_t i, len = MNL_SOCKET_BUFFER_SIZE;
	char *buf;
	int err;

	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl)
		return errno ? -errno : -EPROTONOSUPPORT;
	buf = malloc(len);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}
	err = nl_set_timeout(nl);
	if (err)
		goto out;
	err = ct_request(nl, buf, len, IPCTNL_MSG_CT_GET_STATS_CPU, NLM_F_DUMP,
			 &sum);
	if (!err && !sum.cpus)
		err = -ENOENT;
	if (err)
		goto out;
	for (i = 0; i < CT_NATTRS; i++)
		if (sum.seen[i])
			ctrset_add(&ct->stats, ct_attrs[i].name, sum.v[i]);
	ct->have_stats = true;
	/* count and max: kernels before 4.? lack GET_STATS; sysctls cover it */
	ct_request(nl, buf, len, IPCTNL_MSG_CT_GET_STATS, NLM_F_ACK, &sum);
	err = 0;
out:
	free(buf);
	mnl_socket_close(nl);
	return err;
}

/* Is @name one of conntrack -S's statistics? */
static bool ct_stat_known(const char *name)
{
	size_t i;

	for (i = 0; i < CT_NATTRS; i++)
		if (!strcmp(ct_attrs[i].name, name))
			return true;
	return false;
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
	/*
	 * Only conntrack -S's names, as netlink gives them: the keys must not
	 * depend on whether root (netlink) or not (/proc) runs tcptw.
	 */
	for (c = 1; c < ncols; c++)
		if (ct_stat_known(proc_col_name(cols[c])) &&
		    ctrset_add(stats, proc_col_name(cols[c]), sum[c]) ==
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

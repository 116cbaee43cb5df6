// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * /proc/net/tcptw/peers: which upstream runs out of ports, which NAT
 * gateway's SYNs are PAWS-rejected.
 */
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "pernet.h"
#include "table.h"

unsigned int tcptw_peer_table_size = 256;
module_param_named(peer_table_size, tcptw_peer_table_size, uint, 0444);
MODULE_PARM_DESC(peer_table_size,
		 "remote endpoints kept per netns (rounded up to a power of two, 8..65536)");

/* header line after "addr port"; ABI order, append only */
static const char * const peer_cols[TCPTW_NR_PEER_COLS] = {
	[TCPTW_PEER_REUSE_GRANTED] = "reuse_granted",
	[TCPTW_PEER_DENIED_DISABLED] = "denied_disabled",
	[TCPTW_PEER_DENIED_LOOPBACK_ONLY] = "denied_loopback_only",
	[TCPTW_PEER_DENIED_NO_TIMESTAMPS] = "denied_no_timestamps",
	[TCPTW_PEER_DENIED_TOO_RECENT] = "denied_too_recent",
	[TCPTW_PEER_DENIED_FIN_WAIT2] = "denied_fin_wait2",
	[TCPTW_PEER_PORT_EXHAUSTED] = "port_exhausted",
	[TCPTW_PEER_TUPLE_IN_USE] = "tuple_in_use",
	[TCPTW_PEER_SYN_PAWS_REJECTED] = "syn_paws_rejected",
	[TCPTW_PEER_SYN_RECYCLED] = "syn_recycled",
};

static void peer_show(struct seq_file *seq, const struct tcptw_row *r)
{
	unsigned int c;

	tcptw_table_show_endpoint(seq, r);
	for (c = 0; c < TCPTW_NR_PEER_COLS; c++)
		seq_printf(seq, " %llu", r->cnt[c]);
	seq_printf(seq, " %llu\n", jiffies64_to_msecs(jiffies - r->last));
}

static struct tcptw_table *peers_table(struct net *net)
{
	struct tcptw_state *st = tcptw_state(net);

	return st ? st->peers : NULL;
}

static void *peers_start(struct seq_file *seq, loff_t *pos)
{
	return tcptw_table_seq_start(seq, pos, peers_table);
}

static int peers_show(struct seq_file *seq, void *v)
{
	unsigned int c;

	if (v != SEQ_START_TOKEN) {
		peer_show(seq, v);
		return 0;
	}
	seq_puts(seq, "addr port");
	for (c = 0; c < TCPTW_NR_PEER_COLS; c++)
		seq_printf(seq, " %s", peer_cols[c]);
	seq_puts(seq, " last_ms\n");
	return 0;
}

static const struct seq_operations peers_seq_ops = {
	.start = peers_start,
	.next = tcptw_table_seq_next,
	.stop = tcptw_table_seq_stop,
	.show = peers_show,
};

int tcptw_peers_proc_init(struct proc_dir_entry *dir)
{
	if (!proc_create_net("peers", 0444, dir, &peers_seq_ops,
			     sizeof(struct tcptw_table_seq)))
		return -ENOMEM;
	return 0;
}

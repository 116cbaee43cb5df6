// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * /proc/net/tcptw/listeners: per listening socket, the SYNs and ACKs it
 * dropped and the cookies it sent. The per-port numbers users have asked
 * for instead of the global ListenOverflows.
 */
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "pernet.h"
#include "table.h"

unsigned int tcptw_listener_table_size = 256;
module_param_named(listener_table_size, tcptw_listener_table_size, uint,
		   0444);
MODULE_PARM_DESC(listener_table_size,
		 "listening sockets kept per netns (rounded up to a power of two, 8..65536)");

static void print_age(struct seq_file *seq, unsigned long stamp)
{
	if (stamp)
		seq_printf(seq, " %llu", jiffies64_to_msecs(jiffies - stamp));
	else
		seq_puts(seq, " -");
}

static void listener_show(struct seq_file *seq, const struct tcptw_row *r)
{
	unsigned long ovf = max(r->col_last[TCPTW_LISTENER_OVERFLOW_SYN],
				r->col_last[TCPTW_LISTENER_OVERFLOW_ACK]);
	unsigned int c;

	tcptw_table_show_endpoint(seq, r);
	seq_printf(seq, " %u %u", r->gauge[0], r->gauge[1]);
	for (c = 0; c < TCPTW_NR_LISTENER_COLS; c++)
		seq_printf(seq, " %llu", r->cnt[c]);
	/* a zero stamp on either side means that one never moved */
	if (!r->col_last[TCPTW_LISTENER_OVERFLOW_SYN] ||
	    !r->col_last[TCPTW_LISTENER_OVERFLOW_ACK])
		ovf = r->col_last[TCPTW_LISTENER_OVERFLOW_SYN] |
		      r->col_last[TCPTW_LISTENER_OVERFLOW_ACK];
	print_age(seq, ovf);
	print_age(seq, r->col_last[TCPTW_LISTENER_SYN_DROP]);
	print_age(seq, r->col_last[TCPTW_LISTENER_COOKIE_SENT]);
	seq_putc(seq, '\n');
}

static struct tcptw_table *listeners_table(struct net *net)
{
	struct tcptw_state *st = tcptw_state(net);

	return st ? st->listeners : NULL;
}

static void *listeners_start(struct seq_file *seq, loff_t *pos)
{
	struct net *net = seq_file_net(seq);
	struct tcptw_state *st;

	/* the decisions the kernel made since their hooks ran, first */
	if (!*pos) {
		rcu_read_lock();
		st = tcptw_state(net);
		if (st)
			tcptw_listen_settle(net, st);
		rcu_read_unlock();
	}
	return tcptw_table_seq_start(seq, pos, listeners_table);
}

static int listeners_show(struct seq_file *seq, void *v)
{
	if (v == SEQ_START_TOKEN)
		seq_puts(seq, "addr port backlog max_backlog overflow_syn overflow_ack syn_drop cookie_sent last_overflow_ms last_syn_drop_ms last_cookie_ms\n");
	else
		listener_show(seq, v);
	return 0;
}

static const struct seq_operations listeners_seq_ops = {
	.start = listeners_start,
	.next = tcptw_table_seq_next,
	.stop = tcptw_table_seq_stop,
	.show = listeners_show,
};

int tcptw_listeners_proc_init(struct proc_dir_entry *dir)
{
	if (!proc_create_net("listeners", 0444, dir, &listeners_seq_ops,
			     sizeof(struct tcptw_table_seq)))
		return -ENOMEM;
	return 0;
}

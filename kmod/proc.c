// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * /proc/net/tcptw/{counters,events,probes,control} of one netns. The
 * format is an ABI documented in README.md: append only.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/capability.h>
#include <linux/string.h>
#include <net/net_namespace.h>

#include "pernet.h"
#include "probes.h"
#include "proc.h"

const char * const tcptw_counter_names[TCPTW_NR_COUNTERS] = {
	[TCPTW_TW_CREATED] = "TwCreated",
	[TCPTW_TW_OVERFLOW] = "TwOverflow",
	[TCPTW_TW_PAWS_REJECTED] = "TwPawsRejected",
	[TCPTW_TW_SYN_PAWS_REJECTED] = "TwSynPawsRejected",
	[TCPTW_TW_SYN_SEQ_REJECTED] = "TwSynSeqRejected",
	[TCPTW_TW_SYN_RECYCLED] = "TwSynRecycled",
	[TCPTW_TW_ACK_SENT] = "TwAckSent",
	[TCPTW_TW_RST_SENT] = "TwRstSent",
	[TCPTW_TW_KILLED_BY_RST] = "TwKilledByRst",
};

/* snmp6 format, so `PROC_NET_SNMP6=... nstat` reads it */
static int counters_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct tcptw_state *st;
	int i;

	rcu_read_lock();
	st = tcptw_state(net);
	for (i = 0; st && i < TCPTW_NR_COUNTERS; i++)
		seq_printf(seq, "%-32s\t%llu\n", tcptw_counter_names[i],
			   tcptw_counter_sum(st, i));
	rcu_read_unlock();
	return 0;
}

static int probes_show(struct seq_file *seq, void *v)
{
	tcptw_probes_show(seq);
	return 0;
}

static int control_show(struct seq_file *seq, void *v)
{
	return 0;
}

/*
 * "reset" (an optional trailing newline) zeroes this netns's counters and
 * events; anything else is EINVAL and changes nothing. The file is
 * world-writable so that the capability check, not the file mode, decides:
 * an unprivileged writer gets EPERM.
 */
static int control_write(struct file *file, char *buf, size_t size)
{
	struct seq_file *seq = file->private_data;
	struct net *net = seq_file_single_net(seq);
	struct tcptw_state *st;

	if (!file_ns_capable(file, net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (size && buf[size - 1] == '\n')
		buf[--size] = '\0';
	if (strcmp(buf, "reset"))
		return -EINVAL;
	/* the netns outlives its open /proc files: no RCU needed here */
	st = rcu_dereference_protected(((struct tcptw_net *)
					net_generic(net, tcptw_net_id))->state,
				       true);
	if (!st)
		return -ENODEV;
	tcptw_state_reset(st);
	return 0;
}

int tcptw_proc_net_init(struct net *net)
{
	struct proc_dir_entry *dir;

	dir = proc_net_mkdir(net, "tcptw", net->proc_net);
	if (!dir)
		return -ENOMEM;
	if (!proc_create_net_single("counters", 0444, dir, counters_show,
				    NULL) ||
	    tcptw_events_proc_init(dir) ||
	    !proc_create_net_single("probes", 0444, dir, probes_show, NULL) ||
	    !proc_create_net_single_write("control", 0222, dir, control_show,
					  control_write, NULL)) {
		remove_proc_subtree("tcptw", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

void tcptw_proc_net_exit(struct net *net)
{
	remove_proc_subtree("tcptw", net->proc_net);
}

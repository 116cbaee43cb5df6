// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * /proc/net/tcptw/{counters,events,probes,control} of one netns. The
 * format is an ABI documented in docs/proc-format.md: append only.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/capability.h>
#include <linux/string.h>
#include <net/net_namespace.h>

#include "pernet.h"
#include "table.h"
#include "probes.h"
#include "proc.h"
#include "mem.h"
#include "mib.h"

/* in enum order: the same list */
const char * const tcptw_counter_names[TCPTW_NR_COUNTERS] = {
#define TCPTW_COUNTER(id, name, how, help) name,
#include "uapi/tcptw_counters.h"
};

const char * const tcptw_hist_names[TCPTW_NR_HIST] = {
	[TCPTW_HIST_REUSE_GRANTED] = "reuse_granted",
	[TCPTW_HIST_REUSE_DENIED] = "reuse_denied",
	[TCPTW_HIST_SYN_RECYCLED] = "syn_recycled",
	[TCPTW_HIST_SYN_PAWS_REJECTED] = "syn_paws_rejected",
	[TCPTW_HIST_RST_IDLE] = "rst_received_idle",
};

const char * const tcptw_reuse_reason_names[TCPTW_NR_REUSE_REASONS] = {
	[TCPTW_REUSE_OK] = "-",
	[TCPTW_REUSE_DISABLED] = "disabled",
	[TCPTW_REUSE_LOOPBACK_ONLY] = "loopback_only",
	[TCPTW_REUSE_NO_TIMESTAMPS] = "no_timestamps",
	[TCPTW_REUSE_TOO_RECENT] = "too_recent",
	[TCPTW_REUSE_FIN_WAIT2] = "fin_wait2",
};

/* snmp6 format, so `PROC_NET_SNMP6=... nstat` reads it */
static int counters_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	u64 val[TCPTW_NR_COUNTERS];
	struct tcptw_state *st;
	int i;

	rcu_read_lock();
	st = tcptw_state(net);
	if (st)
		tcptw_counters_read(net, st, val);
	for (i = 0; st && i < TCPTW_NR_COUNTERS; i++)
		seq_printf(seq, "%-32s\t%llu\n", tcptw_counter_names[i],
			   val[i]);
	rcu_read_unlock();
	return 0;
}

/* first line: exclusive upper bounds; then one line per histogram */
static int hist_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct tcptw_state *st;
	unsigned int h, b;

	seq_puts(seq, "le_ms");
	for (b = 0; b < TCPTW_HIST_BUCKETS - 1; b++)
		seq_printf(seq, " %u", 1U << b);
	seq_puts(seq, " +Inf\n");
	rcu_read_lock();
	st = tcptw_state(net);
	for (h = 0; st && h < TCPTW_NR_HIST; h++) {
		seq_puts(seq, tcptw_hist_names[h]);
		for (b = 0; b < TCPTW_HIST_BUCKETS; b++)
			seq_printf(seq, " %llu",
				   tcptw_slot_sum(st, TCPTW_HIST_SLOT(h, b)));
		seq_putc(seq, '\n');
	}
	rcu_read_unlock();
	return 0;
}

static void status_row(struct seq_file *seq, const char *part, u8 state,
		       unsigned long entries, unsigned long bytes)
{
	seq_printf(seq, "%s\t%s\t%lu\t%lu\n", part,
		   tcptw_mem_state_names[state], entries, bytes);
}

/*
 * What this netns got: a header, then one row per part (its state: ok,
 * budget or nomem; entries; bytes charged), then the module-wide budget
 * of the rings and tables (rows "all_netns" and "budget").
 */
static int status_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct tcptw_state *st;

	seq_puts(seq, "part\tstate\tentries\tbytes\n");
	rcu_read_lock();
	st = tcptw_state(net);
	if (st) {
		status_row(seq, "counters", TCPTW_MEM_OK, TCPTW_NR_SLOTS,
			   sizeof(struct tcptw_pcpu) * num_possible_cpus() +
			   sizeof(*st));
		status_row(seq, "events", st->ring_state,
			   st->ring ? st->ring->mask + 1 : 0,
			   st->ring ? st->ring->bytes : 0);
		status_row(seq, "peers", st->peers_state,
			   tcptw_table_rows(st->peers),
			   tcptw_table_bytes(st->peers));
		status_row(seq, "listeners", st->listeners_state,
			   tcptw_table_rows(st->listeners),
			   tcptw_table_bytes(st->listeners));
	}
	rcu_read_unlock();
	status_row(seq, "all_netns", TCPTW_MEM_OK, 0, tcptw_mem_used());
	status_row(seq, "budget", TCPTW_MEM_OK, 0, tcptw_mem_max());
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
	/* the whole write, not a prefix up to an embedded NUL */
	if (strlen(buf) != size || strcmp(buf, "reset"))
		return -EINVAL;
	/* the netns outlives its open /proc files: no RCU needed here */
	st = rcu_dereference_protected(((struct tcptw_net *)
					net_generic(net, tcptw_net_id))->state,
				       true);
	if (!st)
		return -ENODEV;
	tcptw_state_reset(net, st);
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
	    tcptw_peers_proc_init(dir) ||
	    tcptw_listeners_proc_init(dir) ||
	    !proc_create_net_single("hist", 0444, dir, hist_show, NULL) ||
	    !proc_create_net_single("probes", 0444, dir, probes_show, NULL) ||
	    !proc_create_net_single("status", 0444, dir, status_show, NULL) ||
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

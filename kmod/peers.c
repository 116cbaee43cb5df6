// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * A bounded table of remote endpoints per netns: which upstream runs out
 * of ports, which NAT gateway's SYNs are PAWS-rejected.
 *
 * Lock-light: the table is split into buckets of PEER_WAYS slots, each
 * with its own spinlock; an endpoint hashes to one bucket. An update takes
 * only that lock, with interrupts off (probes run in BH and process
 * context), and does bounded work: compare PEER_WAYS keys, then increment,
 * or take over the least recently updated slot of the bucket. No
 * allocation ever happens after the table is created, different peers
 * rarely share a lock, and nothing nests inside it.
 */
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <net/net_namespace.h>

#include "pernet.h"
#include "peers.h"

static unsigned int peer_table_size = 256;
module_param(peer_table_size, uint, 0444);
MODULE_PARM_DESC(peer_table_size,
		 "remote endpoints kept per netns (rounded up to a power of two, 8..65536)");

#define PEER_WAYS 8

struct peer_key {
	struct in6_addr addr;	/* IPv4 in the first word */
	__be16 port;
	u16 family;
};

struct peer {
	struct peer_key key;
	unsigned long last;	/* jiffies of the last update */
	u64 cnt[TCPTW_NR_PEER_COLS];
	bool used;
};

struct peer_bucket {
	/* protects the slots of this bucket only */
	spinlock_t lock;
	struct peer slot[PEER_WAYS];
};

struct tcptw_peers {
	unsigned int nbuckets;
	struct peer_bucket b[];
};

struct tcptw_peers *tcptw_peers_alloc(void)
{
	unsigned int n = clamp(peer_table_size, PEER_WAYS, 65536U);
	struct tcptw_peers *peers;
	unsigned int i;

	n = roundup_pow_of_two(n) / PEER_WAYS;
	peers = vzalloc(struct_size(peers, b, n));
	if (!peers)
		return NULL;
	peers->nbuckets = n;
	for (i = 0; i < n; i++)
		spin_lock_init(&peers->b[i].lock);
	return peers;
}

void tcptw_peers_free(struct tcptw_peers *peers)
{
	vfree(peers);
}

void tcptw_peers_reset(struct tcptw_peers *peers)
{
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < peers->nbuckets; i++) {
		spin_lock_irqsave(&peers->b[i].lock, flags);
		memset(peers->b[i].slot, 0, sizeof(peers->b[i].slot));
		spin_unlock_irqrestore(&peers->b[i].lock, flags);
	}
}

void tcptw_peers_inc(struct tcptw_peers *peers, u16 family, const void *addr,
		     __be16 port, enum tcptw_peer_col col)
{
	struct peer_key key = { .port = port, .family = family };
	struct peer *p, *victim = NULL;
	struct peer_bucket *b;
	unsigned long flags;
	unsigned int i;

	memcpy(&key.addr, addr, family == AF_INET6 ? 16 : 4);
	b = &peers->b[jhash(&key, sizeof(key), 0) & (peers->nbuckets - 1)];

	spin_lock_irqsave(&b->lock, flags);
	for (i = 0; i < PEER_WAYS; i++) {
		p = &b->slot[i];
		if (p->used && !memcmp(&p->key, &key, sizeof(key)))
			goto found;
		/* the first free slot, else the least recently updated */
		if (!victim ||
		    (victim->used && !p->used) ||
		    (victim->used && time_before(p->last, victim->last)))
			victim = p;
	}
	p = victim;
	memset(p, 0, sizeof(*p));
	p->key = key;
	p->used = true;
found:
	p->cnt[col]++;
	p->last = jiffies;
	spin_unlock_irqrestore(&b->lock, flags);
}

/* column names of the header line, after "addr port" */
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

static void peer_show(struct seq_file *seq, const struct peer *p)
{
	unsigned int c;

	if (p->key.family == AF_INET6)
		seq_printf(seq, "%pI6c", &p->key.addr);
	else
		seq_printf(seq, "%pI4", &p->key.addr);
	seq_printf(seq, " %u", ntohs(p->key.port));
	for (c = 0; c < TCPTW_NR_PEER_COLS; c++)
		seq_printf(seq, " %llu", p->cnt[c]);
	seq_printf(seq, " %u\n", jiffies_to_msecs(jiffies - p->last));
}

static int peers_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct tcptw_state *st;
	struct peer_bucket *b;
	unsigned long flags;
	struct peer copy;
	unsigned int i, j;

	/* rows name peers: admins only, like events */
	if (!file_ns_capable(seq->file, net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	seq_puts(seq, "addr port");
	for (j = 0; j < TCPTW_NR_PEER_COLS; j++)
		seq_printf(seq, " %s", peer_cols[j]);
	seq_puts(seq, " last_ms\n");
	rcu_read_lock();
	st = tcptw_state(net);
	for (i = 0; st && i < st->peers->nbuckets; i++) {
		b = &st->peers->b[i];
		for (j = 0; j < PEER_WAYS; j++) {
			spin_lock_irqsave(&b->lock, flags);
			copy = b->slot[j];
			spin_unlock_irqrestore(&b->lock, flags);
			if (copy.used)
				peer_show(seq, &copy);
		}
	}
	rcu_read_unlock();
	return 0;
}

int tcptw_peers_proc_init(struct proc_dir_entry *dir)
{
	if (!proc_create_net_single("peers", 0444, dir, peers_show, NULL))
		return -ENOMEM;
	return 0;
}

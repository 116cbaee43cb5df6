// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Lock-light bounded tables. A table is split into buckets of TABLE_WAYS
 * rows, each bucket with its own spinlock; an endpoint hashes to one
 * bucket. An update takes only that lock, with interrupts off (probes run
 * in BH and process context), and does bounded work: compare TABLE_WAYS
 * keys, then increment, or take over the least recently updated row of the
 * bucket. Nothing is allocated after the table is created, different
 * endpoints rarely share a lock, and nothing nests inside it.
 */
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "table.h"

#define TABLE_WAYS 8U

struct table_bucket {
	/* protects the rows of this bucket only */
	spinlock_t lock;
	struct tcptw_row row[TABLE_WAYS];
};

struct tcptw_table {
	unsigned int nbuckets;
	struct table_bucket b[];
};

struct tcptw_table *tcptw_table_alloc(unsigned int size)
{
	unsigned int n = clamp(size, TABLE_WAYS, 65536U);
	struct tcptw_table *tbl;
	unsigned int i;

	n = roundup_pow_of_two(n) / TABLE_WAYS;
	tbl = vzalloc(struct_size(tbl, b, n));
	if (!tbl)
		return NULL;
	tbl->nbuckets = n;
	for (i = 0; i < n; i++)
		spin_lock_init(&tbl->b[i].lock);
	return tbl;
}

void tcptw_table_free(struct tcptw_table *tbl)
{
	vfree(tbl);
}

void tcptw_table_reset(struct tcptw_table *tbl)
{
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < tbl->nbuckets; i++) {
		spin_lock_irqsave(&tbl->b[i].lock, flags);
		memset(tbl->b[i].row, 0, sizeof(tbl->b[i].row));
		spin_unlock_irqrestore(&tbl->b[i].lock, flags);
	}
}

struct table_key {
	struct in6_addr addr;
	__be16 port;
	u16 family;
};

static bool row_matches(const struct tcptw_row *r, const struct table_key *k)
{
	return r->used && r->port == k->port && r->family == k->family &&
	       !memcmp(&r->addr, &k->addr, sizeof(k->addr));
}

void tcptw_table_inc(struct tcptw_table *tbl, u16 family, const void *addr,
		     __be16 port, unsigned int col, u32 g0, u32 g1)
{
	struct table_key key = { .port = port, .family = family };
	struct tcptw_row *r, *victim = NULL;
	unsigned long now = jiffies;
	struct table_bucket *b;
	unsigned long flags;
	unsigned int i;

	if (WARN_ON_ONCE(col >= TCPTW_TABLE_COLS))
		return;
	memcpy(&key.addr, addr, family == AF_INET6 ? 16 : 4);
	b = &tbl->b[jhash(&key, sizeof(key), 0) & (tbl->nbuckets - 1)];

	spin_lock_irqsave(&b->lock, flags);
	for (i = 0; i < TABLE_WAYS; i++) {
		r = &b->row[i];
		if (row_matches(r, &key))
			goto found;
		/* the first free row, else the least recently updated */
		if (!victim ||
		    (victim->used && !r->used) ||
		    (victim->used && time_before(r->last, victim->last)))
			victim = r;
	}
	r = victim;
	memset(r, 0, sizeof(*r));
	r->addr = key.addr;
	r->port = port;
	r->family = family;
	r->used = true;
found:
	r->cnt[col]++;
	/* 0 means "never": keep a moved column's stamp non-zero */
	r->col_last[col] = now ?: 1;
	r->last = now;
	r->gauge[0] = g0;
	r->gauge[1] = g1;
	spin_unlock_irqrestore(&b->lock, flags);
}

void tcptw_table_for_each(struct tcptw_table *tbl, struct seq_file *seq,
			  void (*show)(struct seq_file *seq,
				       const struct tcptw_row *row))
{
	struct table_bucket *b;
	struct tcptw_row copy;
	unsigned long flags;
	unsigned int i, j;

	for (i = 0; i < tbl->nbuckets; i++) {
		b = &tbl->b[i];
		for (j = 0; j < TABLE_WAYS; j++) {
			spin_lock_irqsave(&b->lock, flags);
			copy = b->row[j];
			spin_unlock_irqrestore(&b->lock, flags);
			if (copy.used)
				show(seq, &copy);
		}
	}
}

void tcptw_table_show_endpoint(struct seq_file *seq,
			       const struct tcptw_row *row)
{
	if (row->family == AF_INET6)
		seq_printf(seq, "%pI6c %u", &row->addr, ntohs(row->port));
	else
		seq_printf(seq, "%pI4 %u", &row->addr, ntohs(row->port));
}

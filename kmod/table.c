// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Bounded tables, lock-free on the hot path. A table is split into
 * buckets of TABLE_WAYS rows; an endpoint hashes to one bucket. Counting
 * for an endpoint that has a row takes no lock: compare TABLE_WAYS keys
 * (each checked against its row's sequence number, odd while the key is
 * being rewritten), then one atomic increment and a few stamps. Only an
 * endpoint without a row takes the bucket's spinlock (interrupts off:
 * probes run in BH and process context) to take over a free row or the
 * least recently updated one. Nothing is allocated after the table is
 * created, and nothing nests inside the lock.
 *
 * The one inexact case: an increment racing with the takeover of its own
 * row (the bucket's least recently updated one, taken for a new endpoint
 * at that moment) may be counted for the new endpoint.
 */
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/random.h>

#include "table.h"
#include "mem.h"

#define TABLE_WAYS 8U

struct table_row {
	u32 seq;		/* odd while the key is rewritten (under lock) */
	bool used;
	u16 family;
	__be16 port;
	struct in6_addr addr;	/* IPv4 in the first word */
	unsigned long last;	/* jiffies of the last update */
	unsigned long col_last[TCPTW_TABLE_COLS];	/* 0: never moved */
	atomic64_t cnt[TCPTW_TABLE_COLS];
	u32 gauge[2];
};

struct table_bucket {
	/* serializes takeovers and resets of this bucket's rows */
	spinlock_t lock;
	struct table_row row[TABLE_WAYS];
};

struct tcptw_table {
	unsigned int nbuckets;
	/*
	 * Random per table: with a fixed seed a remote peer could pick
	 * addresses that share one bucket and so evict chosen rows.
	 */
	u32 seed;
	size_t bytes;		/* as allocated (mem.c) */
	struct table_bucket b[];
};

struct tcptw_table *tcptw_table_alloc(unsigned int size, u8 *state)
{
	unsigned int n = clamp(size, TABLE_WAYS, 65536U);
	struct tcptw_table *tbl;
	unsigned int i;
	size_t bytes;

	n = roundup_pow_of_two(n) / TABLE_WAYS;
	bytes = struct_size(tbl, b, n);
	tbl = tcptw_mem_alloc(bytes, state);
	if (!tbl)
		return NULL;
	tbl->nbuckets = n;
	tbl->seed = get_random_u32();
	tbl->bytes = bytes;
	for (i = 0; i < n; i++)
		spin_lock_init(&tbl->b[i].lock);
	return tbl;
}

void tcptw_table_free(struct tcptw_table *tbl)
{
	if (tbl)
		tcptw_mem_free(tbl, tbl->bytes);
}

unsigned int tcptw_table_rows(const struct tcptw_table *tbl)
{
	return tbl ? tbl->nbuckets * TABLE_WAYS : 0;
}

size_t tcptw_table_bytes(const struct tcptw_table *tbl)
{
	return tbl ? tbl->bytes : 0;
}

/* under the bucket lock: readers without it see an odd seq meanwhile */
static void row_rewrite_begin(struct table_row *r)
{
	WRITE_ONCE(r->seq, r->seq + 1);
	/* the odd seq is visible before any field changes */
	smp_wmb();
}

static void row_rewrite_end(struct table_row *r)
{
	/* pairs with the acquire in row_find(): the fields before the seq */
	smp_store_release(&r->seq, r->seq + 1);
}

static void row_clear(struct table_row *r)
{
	unsigned int c;

	WRITE_ONCE(r->used, false);
	WRITE_ONCE(r->family, 0);
	WRITE_ONCE(r->port, 0);
	memset(&r->addr, 0, sizeof(r->addr));
	WRITE_ONCE(r->last, 0);
	for (c = 0; c < TCPTW_TABLE_COLS; c++) {
		WRITE_ONCE(r->col_last[c], 0);
		atomic64_set(&r->cnt[c], 0);
	}
	WRITE_ONCE(r->gauge[0], 0);
	WRITE_ONCE(r->gauge[1], 0);
}

void tcptw_table_reset(struct tcptw_table *tbl)
{
	struct table_bucket *b;
	unsigned long flags;
	unsigned int i, j;

	for (i = 0; tbl && i < tbl->nbuckets; i++) {
		b = &tbl->b[i];
		spin_lock_irqsave(&b->lock, flags);
		for (j = 0; j < TABLE_WAYS; j++) {
			row_rewrite_begin(&b->row[j]);
			row_clear(&b->row[j]);
			row_rewrite_end(&b->row[j]);
		}
		spin_unlock_irqrestore(&b->lock, flags);
	}
}

struct table_key {
	struct in6_addr addr;
	__be16 port;
	u16 family;
};

static bool row_matches(const struct table_row *r, const struct table_key *k)
{
	if (!READ_ONCE(r->used) || READ_ONCE(r->port) != k->port ||
	    READ_ONCE(r->family) != k->family)
		return false;
	/* lock-free readers recheck seq: a key rewritten meanwhile is ignored */
	return !data_race(memcmp(&r->addr, &k->addr, sizeof(k->addr)));
}

/* The row of @k in @b, without the lock; NULL if none (or being rewritten). */
static struct table_row *row_find(struct table_bucket *b,
				  const struct table_key *k)
{
	struct table_row *r;
	unsigned int i;
	u32 seq;

	for (i = 0; i < TABLE_WAYS; i++) {
		r = &b->row[i];
		/* pairs with row_rewrite_end(): a whole key after an even seq */
		seq = smp_load_acquire(&r->seq);
		if ((seq & 1) || !row_matches(r, k))
			continue;
		/* the key was read whole: no rewrite began meanwhile */
		smp_rmb();
		if (READ_ONCE(r->seq) == seq)
			return r;
	}
	return NULL;
}

static void row_count(struct table_row *r, unsigned int col,
		      unsigned long now, u32 g0, u32 g1)
{
	atomic64_inc(&r->cnt[col]);
	/* 0 means "never": keep a moved column's stamp non-zero */
	WRITE_ONCE(r->col_last[col], now ?: 1);
	WRITE_ONCE(r->last, now);
	WRITE_ONCE(r->gauge[0], g0);
	WRITE_ONCE(r->gauge[1], g1);
}

void tcptw_table_inc(struct tcptw_table *tbl, u16 family, const void *addr,
		     __be16 port, unsigned int col, u32 g0, u32 g1)
{
	struct table_key key = { .port = port, .family = family };
	struct table_row *r, *victim = NULL;
	unsigned long now = jiffies;
	struct table_bucket *b;
	unsigned long flags;
	unsigned int i;

	if (!tbl)
		return;		/* no table in this netns (status file) */
	if (WARN_ON_ONCE(col >= TCPTW_TABLE_COLS))
		return;
	memcpy(&key.addr, addr, family == AF_INET6 ? 16 : 4);
	b = &tbl->b[jhash(&key, sizeof(key), tbl->seed) & (tbl->nbuckets - 1)];

	r = row_find(b, &key);
	if (r) {
		row_count(r, col, now, g0, g1);
		return;
	}

	spin_lock_irqsave(&b->lock, flags);
	/* another CPU may have taken a row for this endpoint meanwhile */
	for (i = 0; i < TABLE_WAYS; i++) {
		r = &b->row[i];
		if (row_matches(r, &key))
			goto found;
		/* the first free row, else the least recently updated */
		if (!victim ||
		    (victim->used && !r->used) ||
		    (victim->used &&
		     time_before(READ_ONCE(r->last), READ_ONCE(victim->last))))
			victim = r;
	}
	r = victim;
	row_rewrite_begin(r);
	row_clear(r);
	r->addr = key.addr;
	WRITE_ONCE(r->port, port);
	WRITE_ONCE(r->family, family);
	WRITE_ONCE(r->used, true);
	row_rewrite_end(r);
found:
	row_count(r, col, now, g0, g1);
	spin_unlock_irqrestore(&b->lock, flags);
}

/* a copy of @r for the formatters (counters and stamps may move during it) */
static void row_copy(struct tcptw_row *out, const struct table_row *r)
{
	unsigned int c;

	/* the key under the bucket lock; the rest may move meanwhile */
	out->addr = r->addr;
	out->port = r->port;
	out->family = r->family;
	out->used = r->used;
	out->last = READ_ONCE(r->last);
	for (c = 0; c < TCPTW_TABLE_COLS; c++) {
		out->col_last[c] = READ_ONCE(r->col_last[c]);
		out->cnt[c] = atomic64_read(&r->cnt[c]);
	}
	out->gauge[0] = READ_ONCE(r->gauge[0]);
	out->gauge[1] = READ_ONCE(r->gauge[1]);
}

void tcptw_table_for_each(struct tcptw_table *tbl, struct seq_file *seq,
			  void (*show)(struct seq_file *seq,
				       const struct tcptw_row *row))
{
	struct table_bucket *b;
	struct tcptw_row copy;
	unsigned long flags;
	unsigned int i, j;

	for (i = 0; tbl && i < tbl->nbuckets; i++) {
		b = &tbl->b[i];
		for (j = 0; j < TABLE_WAYS; j++) {
			/* the lock keeps the key whole while it is copied */
			spin_lock_irqsave(&b->lock, flags);
			row_copy(&copy, &b->row[j]);
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

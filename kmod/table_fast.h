/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The tables' layout and their counting fast path (table.c says how they
 * work), for table.c and for a hook that counts inline: a flood at one
 * endpoint counts in its CPU's batch without a call.
 */
#ifndef _TCPTW_TABLE_FAST_H
#define _TCPTW_TABLE_FAST_H

#include <linux/compiler.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>

#include "table.h"
#include "test.h"

#define TABLE_WAYS 8U
/* counts a CPU keeps aside before it writes them to their row */
#define TABLE_BATCH 1024U

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

#define table_key tcptw_table_key

/*
 * Per CPU: counts of one row not yet added to the row, per column. Written
 * only by its CPU, by one writer at a time: the fast path claims it with
 * @busy (a writer that interrupted another on this CPU finds it set and
 * counts in the row instead), the slow path with interrupts off as well.
 * @gen is odd while it changes, so that a reader on another CPU takes a
 * whole entry or tries again.
 */
struct table_pending {
	u32 gen;
	bool busy;
	u32 seq;		/* the row's seq when they were counted */
	struct table_row *row;	/* NULL: nothing pending */
	struct table_key key;	/* the row's key at @seq */
	u32 bucket;		/* the row's bucket (its lock) */
	u16 total;		/* the sum of n[] */
	u16 cols;		/* the columns counted in: BIT(column) */
	u16 n[TCPTW_TABLE_COLS];
	u32 gauge[2];		/* the latest values given with them */
	unsigned long since;	/* jiffies of the batch's last count */
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
	/* NULL if its allocation failed: then every count goes to its row */
	struct table_pending __percpu *pending;
	struct table_bucket b[];
};

static __always_inline bool key_eq(const struct table_key *a,
				   const struct table_key *b)
{
	const __be32 *x = a->addr.s6_addr32, *y = b->addr.s6_addr32;

	return !((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) |
		 (x[3] ^ y[3])) &&
	       a->port == b->port && a->family == b->family;
}

/* the columns of a count in @col (and @col2) */
static __always_inline u16 cols_of(unsigned int col, unsigned int col2)
{
	BUILD_BUG_ON(TCPTW_TABLE_COLS > 16);
	return BIT(col) | (col2 != TCPTW_TABLE_NO_COL ? BIT(col2) : 0);
}

/* are @col and @col2 (or TCPTW_TABLE_NO_COL) columns of a row? */
static __always_inline bool table_cols_ok(unsigned int col, unsigned int col2)
{
	return col < TCPTW_TABLE_COLS &&
	       (col2 < TCPTW_TABLE_COLS || col2 == TCPTW_TABLE_NO_COL);
}

/*
 * May a count in columns @cols at jiffies @now join @p's batch of the
 * same row? The batch's time is that of its last count: only if it is of
 * the same jiffy, or every count in it is in the same columns.
 */
static __always_inline bool pending_joins(const struct table_pending *p,
					  u16 cols, unsigned long now)
{
	return p->since == now || p->cols == cols;
}

/*
 * Count @n in @col (and one in @col2) at jiffies @now in @p, whose gen is
 * odd, and end the update; @add is their sum. No other writer on this CPU
 * meanwhile.
 */
static __always_inline void pending_bump(struct table_pending *p,
					 unsigned int col, unsigned int col2,
					 unsigned int n, unsigned int add,
					 unsigned long now, u32 g0, u32 g1)
{
	/* a settled decision may come with an older time than the batch's */
	if (time_after(now, p->since))
		WRITE_ONCE(p->since, now);
	WRITE_ONCE(p->cols, p->cols | cols_of(col, col2));
	WRITE_ONCE(p->gauge[0], g0);
	WRITE_ONCE(p->gauge[1], g1);
	WRITE_ONCE(p->n[col], p->n[col] + n);
	if (col2 != TCPTW_TABLE_NO_COL)
		WRITE_ONCE(p->n[col2], p->n[col2] + 1);
	WRITE_ONCE(p->total, p->total + add);
	/* pairs with pending_read(): the fields before the even gen */
	smp_store_release(&p->gen, p->gen + 1);
}

#ifdef TCPTW_TEST
/* test build: counts nested in the fast path's claim (table.c) */
void tcptw_table_test_nest(struct tcptw_table *tbl);

static __always_inline void table_test_nest(struct tcptw_table *tbl)
{
	if (READ_ONCE(tcptw_test_table_nest))
		tcptw_table_test_nest(tbl);
}

static __always_inline void table_test_busy_seen(void)
{
	WRITE_ONCE(tcptw_test_table_busy_seen,
		   READ_ONCE(tcptw_test_table_busy_seen) + 1);
}
#else
static __always_inline void table_test_nest(struct tcptw_table *tbl)
{
}

static __always_inline void table_test_busy_seen(void)
{
}
#endif

/*
 * The fast path, taken by a flood at one endpoint: this CPU's pending
 * counts are @k's, may take this one (pending_joins()), have room for @n
 * (and @col2's one) more, and their row still holds @k (its sequence
 * number has not moved since the key was found there). No hash, no bucket,
 * nothing of the row read but its sequence number. False: take the slow
 * path. Preemption is disabled (a hook); interrupts are not: the entry is
 * claimed (@busy) before any of it is read, and a writer that interrupted
 * the claim's holder finds it set and takes the slow path, which counts in
 * the row. One that came between the test and the claim has finished by
 * then.
 */
static __always_inline bool
table_count_fast(struct tcptw_table *tbl, const struct table_key *k,
		 unsigned int col, unsigned int col2, unsigned int n,
		 unsigned long now, u32 g0, u32 g1)
{
	unsigned int add = n + (col2 != TCPTW_TABLE_NO_COL);
	struct table_pending *p = this_cpu_ptr(tbl->pending);
	bool hit = false;

	if (READ_ONCE(p->busy)) {
		table_test_busy_seen();
		return false;
	}
	WRITE_ONCE(p->busy, true);
	/* the claim before any read of the entry (this CPU's writers only) */
	barrier();
	if (!p->row || !pending_joins(p, cols_of(col, col2), now) ||
	    p->total > TABLE_BATCH - add || !key_eq(&p->key, k) ||
	    READ_ONCE(p->row->seq) != p->seq)
		goto out;
	table_test_nest(tbl);
	WRITE_ONCE(p->gen, p->gen + 1);
	/* the odd gen is visible before any field changes */
	smp_wmb();
	pending_bump(p, col, col2, n, add, now, g0, g1);
	hit = true;
out:
	barrier();
	WRITE_ONCE(p->busy, false);
	return hit;
}

/* tcptw_table_inc2_key()'s slow path and checks (table.c) */
void tcptw_table_inc2_slow(struct tcptw_table *tbl,
			   const struct tcptw_table_key *k, unsigned int col,
			   unsigned int col2, unsigned long now);

/*
 * One in @col and one in @col2 (or TCPTW_TABLE_NO_COL) of key @k's row,
 * now, without gauges. Preemption disabled (a hook), any context. Inline:
 * a failed connect() under port pressure counts with no call when its
 * CPU's batch is the row's.
 */
static __always_inline void tcptw_table_inc2_key(struct tcptw_table *tbl,
						 const struct tcptw_table_key *k,
						 unsigned int col,
						 unsigned int col2)
{
	unsigned long now = jiffies;

	if (tbl && tbl->pending && table_cols_ok(col, col2) &&
	    table_count_fast(tbl, k, col, col2, 1, now, 0, 0))
		return;
	tcptw_table_inc2_slow(tbl, k, col, col2, now);
}

#endif /* _TCPTW_TABLE_FAST_H */

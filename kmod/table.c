// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Bounded tables, lock-free on the hot path. A table is split into
 * buckets of TABLE_WAYS rows; an endpoint hashes to one bucket. Counting
 * for an endpoint that has a row takes no lock: compare TABLE_WAYS keys
 * (each checked against its row's sequence number, odd while the key is
 * being rewritten), then a count on this CPU (below). Only an
 * endpoint without a row takes the bucket's spinlock (interrupts off:
 * probes run in BH and process context) to take over a free row or the
 * least recently updated one. Nothing is allocated after the table is
 * created, and nothing nests inside the lock.
 *
 * The one inexact case: an increment racing with the takeover of its own
 * row (the bucket's least recently updated one, taken for a new endpoint
 * at that moment) may be counted for the new endpoint.
 *
 * Floods hit one row from every CPU (a SYN flood at one listener, PAWS
 * rejects from one NAT address), so a row's cache line must not take a
 * write per event. Each CPU keeps its latest row's counts aside (struct
 * table_pending: which row, at which sequence number, how many in each
 * column, the columns a batch counts in and the jiffy of its last count)
 * and adds them to the row when the row changes, when a jiffy has passed
 * and the next count is in other columns (so that every column's count
 * in a batch has the batch's time, exact to the jiffy), or after
 * TABLE_BATCH counts (a batch of more than one under the bucket's lock,
 * so that a takeover cannot take it). That row is also
 * where the next count looks first: a flood at one endpoint neither hashes
 * its key nor walks its bucket, and reads nothing of the row but its
 * sequence number (the CPU keeps a copy of the key). Readers take
 * every CPU's pending counts once per read (a generation number per CPU
 * gives them whole entries) and add those of each row they copy, so the
 * files are exact once the counting stops; while it runs, a CPU flushing
 * between the two may show its batch twice, for that one read. Pending
 * counts of a row since taken over or reset (its sequence number moved on)
 * are dropped with the row's own.
 */
#include <linux/capability.h>
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/seq_file_net.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/random.h>

#include "table_fast.h"
#include "mem.h"
#include "test.h"

/* what a reader took of one CPU's pending counts */
struct table_pending_copy {
	const struct table_row *row;
	u32 seq;
	u16 n[TCPTW_TABLE_COLS];
	u32 gauge[2];
	unsigned long since;
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
	/* 80 bytes per CPU, charged; optional, and not in the budget */
	tbl->pending = alloc_percpu_gfp(struct table_pending,
					GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	for (i = 0; i < n; i++)
		spin_lock_init(&tbl->b[i].lock);
	return tbl;
}

void tcptw_table_free(struct tcptw_table *tbl)
{
	if (!tbl)
		return;
	free_percpu(tbl->pending);
	tcptw_mem_free(tbl, tbl->bytes);
}

unsigned int tcptw_table_rows(const struct tcptw_table *tbl)
{
	return tbl ? tbl->nbuckets * TABLE_WAYS : 0;
}

/* the rows' bytes (the budget's share; the per-CPU part is not in it) */
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

static bool row_matches(const struct table_row *r, const struct table_key *k)
{
	const __be32 *a = r->addr.s6_addr32, *b = k->addr.s6_addr32;

	if (!READ_ONCE(r->used) || READ_ONCE(r->port) != k->port ||
	    READ_ONCE(r->family) != k->family)
		return false;
	/* lock-free readers recheck seq: a key rewritten meanwhile is ignored */
	return !data_race((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) |
			  (a[3] ^ b[3]));
}

/* @r holds @k at sequence number @seq (even), read without the lock */
static bool row_holds(const struct table_row *r, const struct table_key *k,
		      u32 seq)
{
	/* pairs with row_rewrite_end(): a whole key after an even seq */
	if ((seq & 1) || smp_load_acquire(&r->seq) != seq ||
	    !row_matches(r, k))
		return false;
	/* the key was read whole: no rewrite began meanwhile */
	smp_rmb();
	return READ_ONCE(r->seq) == seq;
}

/*
 * The row of @k in @b, without the lock, and its sequence number in
 * *@seqp; NULL if none (or being rewritten).
 */
static struct table_row *row_find(struct table_bucket *b,
				  const struct table_key *k, u32 *seqp)
{
	struct table_row *r;
	unsigned int i;
	u32 seq;

	for (i = 0; i < TABLE_WAYS; i++) {
		r = &b->row[i];
		seq = READ_ONCE(r->seq);
		if (row_holds(r, k, seq)) {
			*seqp = seq;
			return r;
		}
	}
	return NULL;
}

/*
 * Add @n to column @col of @r, counted at jiffies @when. Stamps and gauges
 * only move forward: a CPU's batch may reach its row after newer counts.
 */
static void row_count(struct table_row *r, unsigned int col, unsigned int n,
		      unsigned long when, u32 g0, u32 g1)
{
	unsigned long c = READ_ONCE(r->col_last[col]);

	atomic64_add(n, &r->cnt[col]);
	/* 0 means "never": keep a moved column's stamp non-zero */
	if (!c || time_after(when, c))
		WRITE_ONCE(r->col_last[col], when ?: 1);
	if (time_before(when, READ_ONCE(r->last)))
		return;
	WRITE_ONCE(r->last, when);
	WRITE_ONCE(r->gauge[0], g0);
	WRITE_ONCE(r->gauge[1], g1);
}

/*
 * Add @p's counts to their row, unless the row has changed hands since.
 * Interrupts are off. A batch of more than one takes the bucket's lock, so
 * that a takeover or reset of the row cannot slip in between the check and
 * the add and leave the batch with the row's next endpoint; a single count
 * races as any count does (the header).
 */
static void pending_add(const struct table_pending *p)
{
	unsigned int c;

	for (c = 0; c < TCPTW_TABLE_COLS; c++)
		if (p->n[c])
			row_count(p->row, c, p->n[c], p->since, p->gauge[0],
				  p->gauge[1]);
}

static void pending_flush(struct tcptw_table *tbl, struct table_pending *p)
{
	struct table_row *r = p->row;
	struct table_bucket *b;

	if (!r || !p->total)
		return;
	if (p->total == 1) {
		if (READ_ONCE(r->seq) == p->seq)
			pending_add(p);
		return;
	}
	b = &tbl->b[p->bucket];
	spin_lock(&b->lock);
	if (r->seq == p->seq)
		pending_add(p);
	spin_unlock(&b->lock);
}

/*
 * table_count() without pending counts (their allocation failed): to the
 * row at once, a batch of more than one under the bucket's lock, as
 * pending_flush() adds one.
 */
static void row_count_now(struct tcptw_table *tbl, struct table_row *r,
			  u32 seq, u32 bi, unsigned int col, unsigned int col2,
			  unsigned int n, unsigned long now, u32 g0, u32 g1)
{
	struct table_bucket *b = &tbl->b[bi];
	unsigned long flags;

	if (n == 1) {
		row_count(r, col, 1, now, g0, g1);
		if (col2 != TCPTW_TABLE_NO_COL)
			row_count(r, col2, 1, now, g0, g1);
		return;
	}
	spin_lock_irqsave(&b->lock, flags);
	if (r->seq == seq) {
		row_count(r, col, n, now, g0, g1);
		if (col2 != TCPTW_TABLE_NO_COL)
			row_count(r, col2, 1, now, g0, g1);
	}
	spin_unlock_irqrestore(&b->lock, flags);
}

/*
 * Count @n in @col and, unless it is TCPTW_TABLE_NO_COL, one in @col2 of
 * @r (found at @seq in bucket @bi) on this CPU, aside.
 */
static void table_count(struct tcptw_table *tbl, struct table_row *r,
			const struct table_key *k, u32 seq, u32 bi,
			unsigned int col, unsigned int col2, unsigned int n,
			unsigned long now, u32 g0, u32 g1)
{
	unsigned int add = n + (col2 != TCPTW_TABLE_NO_COL);
	struct table_pending *p;
	unsigned long flags;
	unsigned int c;

	if (!tbl->pending) {
		row_count_now(tbl, r, seq, bi, col, col2, n, now, g0, g1);
		return;
	}
	/* hooks run in task and BH context: one writer per CPU at a time */
	local_irq_save(flags);
	p = this_cpu_ptr(tbl->pending);
	if (READ_ONCE(p->busy)) {
		/* this interrupted the fast path's writer (table_count_fast()) */
		local_irq_restore(flags);
		row_count_now(tbl, r, seq, bi, col, col2, n, now, g0, g1);
		return;
	}
	WRITE_ONCE(p->gen, p->gen + 1);
	/* the odd gen is visible before any field changes */
	smp_wmb();
	if (p->row != r || p->seq != seq ||
	    !pending_joins(p, cols_of(col, col2), now) ||
	    p->total > TABLE_BATCH - add) {
		/* readers never see a batch that is already in its row */
		pending_flush(tbl, p);
		WRITE_ONCE(p->row, r);
		p->key = *k;
		WRITE_ONCE(p->seq, seq);
		WRITE_ONCE(p->bucket, bi);
		WRITE_ONCE(p->since, now);
		WRITE_ONCE(p->total, 0);
		WRITE_ONCE(p->cols, 0);
		for (c = 0; c < TCPTW_TABLE_COLS; c++)
			WRITE_ONCE(p->n[c], 0);
	}
	pending_bump(p, col, col2, n, add, now, g0, g1);
	local_irq_restore(flags);
}

#ifdef TCPTW_TEST
/*
 * Test build: a count from a hook in an interrupt, made where one could
 * come, inside a task's claim of its CPU's batch (tcptw_tables.sh).
 */
void tcptw_table_test_nest(struct tcptw_table *tbl)
{
	const __be32 addr = cpu_to_be32(0xc612fffe);	/* 198.18.255.254 */
	unsigned int left = READ_ONCE(tcptw_test_table_nest);

	if (!left || !in_task())
		return;
	WRITE_ONCE(tcptw_test_table_nest, left - 1);
	WRITE_ONCE(tcptw_test_table_nested,
		   READ_ONCE(tcptw_test_table_nested) + 1);
	tcptw_table_inc(tbl, AF_INET, &addr, 0, TCPTW_PEER_PORT_EXHAUSTED,
			0, 0);
}
#endif

/*
 * The row this CPU counted last, if it still holds @k: a flood at one
 * endpoint finds its row without hashing. Read with interrupts on: a
 * handler that moves the pending entry meanwhile only makes this a miss
 * (or a hit on a row that still holds @k, checked by its seq).
 */
static struct table_row *row_last(struct tcptw_table *tbl,
				  const struct table_key *k, u32 *seqp,
				  u32 *bi)
{
	struct table_pending *p;
	struct table_row *r;
	u32 seq;

	if (!tbl->pending)
		return NULL;
	p = raw_cpu_ptr(tbl->pending);
	r = READ_ONCE(p->row);
	seq = READ_ONCE(p->seq);
	*bi = READ_ONCE(p->bucket);
	if (!r || *bi >= tbl->nbuckets || !row_holds(r, k, seq))
		return NULL;
	*seqp = seq;
	return r;
}

/* the slow path: @k's row found again, found in its bucket, or taken */
static noinline void table_inc_slow(struct tcptw_table *tbl,
				    const struct table_key *k,
				    unsigned int col, unsigned int col2,
				    unsigned int n, u32 g0, u32 g1,
				    unsigned long now)
{
	const struct table_key key = *k;
	struct table_row *r, *victim = NULL;
	struct table_bucket *b;
	unsigned long flags;
	unsigned int i;
	u32 seq, bi;

	r = row_last(tbl, &key, &seq, &bi);
	if (r) {
		table_count(tbl, r, &key, seq, bi, col, col2, n, now, g0, g1);
		return;
	}
	bi = jhash(&key, sizeof(key), tbl->seed) & (tbl->nbuckets - 1);
	b = &tbl->b[bi];
	r = row_find(b, &key, &seq);
	if (r) {
		table_count(tbl, r, &key, seq, bi, col, col2, n, now, g0, g1);
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
	WRITE_ONCE(r->port, key.port);
	WRITE_ONCE(r->family, key.family);
	WRITE_ONCE(r->used, true);
	row_rewrite_end(r);
found:
	/* a row's first count is its own: it stamps the row at once */
	row_count(r, col, n, now, g0, g1);
	if (col2 != TCPTW_TABLE_NO_COL)
		row_count(r, col2, 1, now, g0, g1);
	spin_unlock_irqrestore(&b->lock, flags);
}

/* @n in @col (and one in @col2) of @k's row at jiffies @when */
static __always_inline void table_add(struct tcptw_table *tbl,
				      const struct table_key *k,
				      unsigned int col, unsigned int col2,
				      unsigned int n, u32 g0, u32 g1,
				      unsigned long when)
{
	BUILD_BUG_ON(TCPTW_TABLE_ADD_MAX > TABLE_BATCH);
	if (!tbl || !n)
		return;		/* no table in this netns (status file) */
	if (WARN_ON_ONCE(!table_cols_ok(col, col2) ||
			 n > TCPTW_TABLE_ADD_MAX))
		return;
	if (tbl->pending &&
	    table_count_fast(tbl, k, col, col2, n, when, g0, g1))
		return;
	table_inc_slow(tbl, k, col, col2, n, g0, g1, when);
}

static void table_inc(struct tcptw_table *tbl, u16 family, const void *addr,
		      __be16 port, unsigned int col, unsigned int col2,
		      u32 g0, u32 g1, unsigned long now)
{
	struct table_key key;

	tcptw_table_key_set(&key, family, addr, port);
	table_add(tbl, &key, col, col2, 1, g0, g1, now);
}

void tcptw_table_add_key_bh(struct tcptw_table *tbl,
			    const struct tcptw_table_key *k, unsigned int col,
			    unsigned int n, u32 g0, u32 g1, unsigned long when)
{
	table_add(tbl, k, col, TCPTW_TABLE_NO_COL, n, g0, g1, when);
}

void tcptw_table_inc2_slow(struct tcptw_table *tbl,
			   const struct tcptw_table_key *k, unsigned int col,
			   unsigned int col2, unsigned long now)
{
	/* the inline fast path has been tried (table_fast.h) */
	if (!tbl || WARN_ON_ONCE(!table_cols_ok(col, col2)))
		return;
	table_inc_slow(tbl, k, col, col2, 1, 0, 0, now);
}

void tcptw_table_inc(struct tcptw_table *tbl, u16 family, const void *addr,
		     __be16 port, unsigned int col, u32 g0, u32 g1)
{
	table_inc(tbl, family, addr, port, col, TCPTW_TABLE_NO_COL, g0, g1,
		  jiffies);
}

void tcptw_table_inc_at(struct tcptw_table *tbl, u16 family, const void *addr,
			__be16 port, unsigned int col, u32 g0, u32 g1,
			unsigned long when)
{
	table_inc(tbl, family, addr, port, col, TCPTW_TABLE_NO_COL, g0, g1,
		  when);
}

/* a whole copy of @p (written by another CPU); false if it has nothing */
static bool pending_read(const struct table_pending *p,
			 struct table_pending_copy *c)
{
	unsigned int tries = 0, col;
	u32 gen, total;

	do {
		/* pairs with the release in table_count() */
		gen = smp_load_acquire(&p->gen);
		if (gen & 1) {
			/* its writer runs with interrupts off: nanoseconds */
			cpu_relax();
			continue;
		}
		c->row = READ_ONCE(p->row);
		c->seq = READ_ONCE(p->seq);
		total = READ_ONCE(p->total);
		for (col = 0; col < TCPTW_TABLE_COLS; col++)
			c->n[col] = READ_ONCE(p->n[col]);
		c->gauge[0] = READ_ONCE(p->gauge[0]);
		c->gauge[1] = READ_ONCE(p->gauge[1]);
		c->since = READ_ONCE(p->since);
		/* the fields were read whole: no update began meanwhile */
		smp_rmb();
		if (READ_ONCE(p->gen) == gen)
			return c->row && total;
	} while (++tries < 1000);
	return false;
}

/* add @c's counts to @out, the copy of their row */
static void row_add_pending(struct tcptw_row *out,
			    const struct table_pending_copy *c)
{
	unsigned long last;
	unsigned int col;

	for (col = 0; col < TCPTW_TABLE_COLS; col++) {
		if (!c->n[col])
			continue;
		last = out->col_last[col];
		out->cnt[col] += c->n[col];
		if (!last || time_after(c->since, last))
			out->col_last[col] = c->since ?: 1;
	}
	if (time_after(c->since, out->last)) {
		out->last = c->since;
		out->gauge[0] = c->gauge[0];
		out->gauge[1] = c->gauge[1];
	}
}

static int pending_cmp(const void *a, const void *b)
{
	const struct table_pending_copy *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return 0;
}

/*
 * Every CPU's pending counts, taken once per read and sorted by row, in
 * @pc (nr_cpu_ids entries); the number taken.
 */
static unsigned int pending_take(const struct tcptw_table *tbl,
				 struct table_pending_copy *pc)
{
	unsigned int cpu, k = 0;

	for_each_possible_cpu(cpu)
		if (pending_read(per_cpu_ptr(tbl->pending, cpu), &pc[k]))
			k++;
	sort(pc, k, sizeof(*pc), pending_cmp, NULL);
	return k;
}

/* add the pending counts of @r (at @rseq) among the @k in @pc to @out */
static void row_add_all_pending(struct tcptw_row *out,
				const struct table_pending_copy *pc, unsigned int k,
				const struct table_row *r, u32 rseq)
{
	unsigned int lo = 0, hi = k, mid;

	/* the first entry of @r */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc[mid].row < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < k && pc[lo].row == r; lo++)
		if (pc[lo].seq == rseq)
			row_add_pending(out, &pc[lo]);
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

/* the same, CPU by CPU, when there was no memory for pending_take() */
static void row_add_pending_walk(struct tcptw_row *out,
				 const struct tcptw_table *tbl,
				 const struct table_row *r, u32 rseq)
{
	struct table_pending_copy c;
	unsigned int cpu;

	if (!tbl->pending)
		return;
	for_each_possible_cpu(cpu)
		if (pending_read(per_cpu_ptr(tbl->pending, cpu), &c) &&
		    c.row == r && c.seq == rseq)
			row_add_pending(out, &c);
}

/*
 * Streaming a table into a seq_file, a buffer at a time (the peers and
 * listeners files): from start() to stop() (one read() call's worth of
 * rows) under rcu_read_lock(), with every CPU's pending counts taken once
 * at start(); between two read() calls nothing is held, so a 65536-row
 * table never keeps a CPU in one RCU read section for its whole length,
 * and a full buffer costs one row again, not the whole table. *pos is 0
 * for the header, then one past the slot of the row last shown.
 */
static void *table_seq_row(struct tcptw_table_seq *ts, loff_t *pos)
{
	struct tcptw_table *tbl = ts->tbl;
	unsigned int nslots = tbl->nbuckets * TABLE_WAYS;
	struct table_bucket *b;
	struct table_row *r;
	unsigned long flags;
	loff_t slot;
	u32 rseq;

	for (slot = *pos - 1; slot < nslots; slot++) {
		b = &tbl->b[slot / TABLE_WAYS];
		r = &b->row[slot % TABLE_WAYS];
		if (!READ_ONCE(r->used))
			continue;
		/* the lock keeps the key whole while it is copied */
		spin_lock_irqsave(&b->lock, flags);
		row_copy(&ts->row, r);
		rseq = r->seq;
		spin_unlock_irqrestore(&b->lock, flags);
		if (!ts->row.used)
			continue;
		if (ts->pc)
			row_add_all_pending(&ts->row, ts->pc, ts->npc, r, rseq);
		else
			row_add_pending_walk(&ts->row, tbl, r, rseq);
		tcptw_test_table_row_copied(++ts->rows);
		*pos = slot + 1;
		return &ts->row;
	}
	*pos = nslots + 1;
	return NULL;
}

/*
 * The rows' part of a read section: the namespace's table, and every
 * CPU's pending counts once; then the first row from *@pos on.
 */
static void *table_seq_rows(struct tcptw_table_seq *ts, struct net *net,
			    loff_t *pos)
{
	ts->tbl = ts->table(net);
	if (!ts->tbl)
		return NULL;
	if (ts->tbl->pending && ts->pc)
		ts->npc = pending_take(ts->tbl, ts->pc);
	return table_seq_row(ts, pos);
}

void *tcptw_table_seq_start(struct seq_file *seq, loff_t *pos,
			    struct tcptw_table *(*table)(struct net *net))
	__acquires(RCU)
{
	struct tcptw_table_seq *ts = seq->private;
	struct net *net = seq_file_net(seq);

	ts->table = table;
	ts->tbl = NULL;
	ts->npc = 0;
	ts->rows = 0;
	/* may sleep: before the RCU section; stop() frees it */
	ts->pc = kmalloc_array(nr_cpu_ids, sizeof(*ts->pc),
			       GFP_KERNEL | __GFP_NOWARN);
	rcu_read_lock();
	/* rows name peers and listening sockets: admins only, like events */
	if (!file_ns_capable(seq->file, net->user_ns, CAP_NET_ADMIN))
		return ERR_PTR(-EPERM);
	if (!*pos)
		return SEQ_START_TOKEN;
	return table_seq_rows(ts, net, pos);
}

void *tcptw_table_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	struct tcptw_table_seq *ts = seq->private;

	++*pos;
	/* the header was shown: the rows, under this RCU section */
	if (v == SEQ_START_TOKEN)
		return table_seq_rows(ts, seq_file_net(seq), pos);
	return table_seq_row(ts, pos);
}

void tcptw_table_seq_stop(struct seq_file *seq, void *v)
	__releases(RCU)
{
	struct tcptw_table_seq *ts = seq->private;

	rcu_read_unlock();
	kfree(ts->pc);
	ts->pc = NULL;
	ts->tbl = NULL;
}

void tcptw_table_show_endpoint(struct seq_file *seq,
			       const struct tcptw_row *row)
{
	if (row->family == AF_INET6)
		seq_printf(seq, "%pI6c %u", &row->addr, ntohs(row->port));
	else
		seq_printf(seq, "%pI4 %u", &row->addr, ntohs(row->port));
}

#ifdef TCPTW_TEST
#include "selftest/table.c"
#endif

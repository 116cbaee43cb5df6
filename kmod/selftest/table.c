// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The table's self-test, run at load by the test build (kmod/main.c),
 * included at the end of table.c for its internals. Deterministic: one
 * bucket of TABLE_WAYS rows, counts at given jiffies, the rows read back
 * as the peers and listeners files read them (every CPU's pending counts
 * taken once, then row by row). No emulator timing is involved.
 */

/* the rows of @tbl, as a read of its file gets them; how many */
static unsigned int __init st_table_read(struct tcptw_table *tbl,
					 struct tcptw_row *out,
					 unsigned int max)
{
	struct tcptw_table_seq ts = { .tbl = tbl };
	struct tcptw_row *r;
	unsigned int n = 0;
	loff_t pos = 1;

	ts.pc = kmalloc_array(nr_cpu_ids, sizeof(*ts.pc), GFP_KERNEL);
	if (!ts.pc)
		return tcptw_st_nomem("table: a read's buffer");
	rcu_read_lock();
	ts.npc = pending_take(tbl, ts.pc);
	while (n < max && (r = table_seq_row(&ts, &pos))) {
		out[n++] = *r;
		pos++;
	}
	rcu_read_unlock();
	kfree(ts.pc);
	return n;
}

/* the row of IPv4 @a (host order) and @port among @n in @rows, or NULL */
static const struct tcptw_row * __init st_row(const struct tcptw_row *rows,
					      unsigned int n, u16 family,
					      u32 a, u16 port)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rows[i].family == family &&
		    rows[i].addr.s6_addr32[0] == htonl(a) &&
		    rows[i].port == htons(port))
			return &rows[i];
	return NULL;
}

static void __init st_count(struct tcptw_table *tbl, u16 family, u32 a,
			    u16 port, unsigned int col, unsigned int times,
			    unsigned long when)
{
	struct in6_addr addr = {};
	unsigned int i;

	addr.s6_addr32[0] = htonl(a);
	local_bh_disable();
	for (i = 0; i < times; i++)
		tcptw_table_inc_at(tbl, family, &addr, htons(port), col,
				   times, i, when);
	local_bh_enable();
}

#define ST_ADDR		0xc6120000U	/* 198.18.0.0 */
#define ST_KEYS		(TABLE_WAYS + 3)

/* one bucket: the TABLE_WAYS most recently counted rows kept, each exact */
static bool __init st_table_lru(struct tcptw_row *rows, unsigned int *checks)
{
	unsigned long base = jiffies;
	const struct tcptw_row *r;
	struct tcptw_table *tbl;
	unsigned int i, c, n;
	bool ok = false;
	u8 state;

	tbl = tcptw_table_alloc(TABLE_WAYS, &state);
	if (!tbl)
		return tcptw_st_nomem("table: alloc");
	if (!tcptw_st_check("table: one bucket", tbl->nbuckets, 1, checks))
		goto out;
	/* key i: i + 1 counts in column i % COLS at jiffies base + i */
	for (i = 0; i < ST_KEYS; i++)
		st_count(tbl, AF_INET, ST_ADDR + i, 1000 + i,
			 i % TCPTW_TABLE_COLS, i + 1, base + i);
	n = st_table_read(tbl, rows, ST_KEYS);
	if (!tcptw_st_check("table: rows kept", n, TABLE_WAYS, checks))
		goto out;
	for (i = 0; i < ST_KEYS; i++) {
		r = st_row(rows, n, AF_INET, ST_ADDR + i, 1000 + i);
		if (!tcptw_st_check("table: the most recent rows kept", !!r,
				    i >= ST_KEYS - TABLE_WAYS, checks))
			goto out;
		if (!r)
			continue;
		for (c = 0; c < TCPTW_TABLE_COLS; c++)
			if (!tcptw_st_check("table: a row's count", r->cnt[c],
					    c == i % TCPTW_TABLE_COLS ? i + 1 : 0,
					    checks))
				goto out;
		if (!tcptw_st_check("table: a row's last update", r->last,
				    base + i, checks))
			goto out;
	}
	ok = true;
out:
	tcptw_table_free(tbl);
	return ok;
}

/*
 * Batches over TABLE_BATCH, whole adds, an IPv6 key sharing an IPv4 key's
 * first word, and a reset that drops what was pending.
 */
static bool __init st_table_batch(struct tcptw_row *rows, unsigned int *checks)
{
	const unsigned int many = 3 * TABLE_BATCH + 7;
	const struct tcptw_row *r4, *r6;
	struct tcptw_table_key k;
	struct tcptw_table *tbl;
	struct in6_addr addr = {};
	bool ok = false;
	unsigned int n;
	u8 state;

	tbl = tcptw_table_alloc(64, &state);
	if (!tbl)
		return tcptw_st_nomem("table: alloc");
	st_count(tbl, AF_INET, ST_ADDR + 1, 80, 2, many, jiffies);
	addr.s6_addr32[0] = htonl(ST_ADDR + 1);
	tcptw_table_key_set(&k, AF_INET6, &addr, htons(80));
	local_bh_disable();
	tcptw_table_add_key_bh(tbl, &k, 3, TCPTW_TABLE_ADD_MAX, 0, 0, jiffies);
	tcptw_table_add_key_bh(tbl, &k, 3, 5, 0, 0, jiffies);
	local_bh_enable();
	n = st_table_read(tbl, rows, ST_KEYS);
	r4 = st_row(rows, n, AF_INET, ST_ADDR + 1, 80);
	r6 = st_row(rows, n, AF_INET6, ST_ADDR + 1, 80);
	if (!tcptw_st_check("table: two rows, IPv4 and IPv6", n, 2, checks) ||
	    !tcptw_st_check("table: IPv4 row", !!r4, 1, checks) ||
	    !tcptw_st_check("table: IPv6 row", !!r6, 1, checks) ||
	    !tcptw_st_check("table: batched counts", r4->cnt[2], many,
			    checks) ||
	    !tcptw_st_check("table: IPv6 row's adds", r6->cnt[3],
			    TCPTW_TABLE_ADD_MAX + 5, checks) ||
	    !tcptw_st_check("table: IPv6 row's other column", r6->cnt[2], 0,
			    checks))
		goto out;
	/* a batch pending on this CPU, then a reset: both gone */
	st_count(tbl, AF_INET, ST_ADDR + 1, 80, 2, 10, jiffies);
	tcptw_table_reset(tbl);
	n = st_table_read(tbl, rows, ST_KEYS);
	if (!tcptw_st_check("table: rows after a reset", n, 0, checks))
		goto out;
	st_count(tbl, AF_INET, ST_ADDR + 1, 80, 2, 4, jiffies);
	n = st_table_read(tbl, rows, ST_KEYS);
	r4 = st_row(rows, n, AF_INET, ST_ADDR + 1, 80);
	ok = tcptw_st_check("table: one row after the reset", n, 1, checks) &&
	     tcptw_st_check("table: its key", !!r4, 1, checks) &&
	     tcptw_st_check("table: its count, nothing from before", r4->cnt[2],
			    4, checks);
out:
	tcptw_table_free(tbl);
	return ok;
}

bool __init tcptw_table_selftest(unsigned int *checks)
{
	struct tcptw_row *rows;
	bool ok;

	rows = kcalloc(ST_KEYS, sizeof(*rows), GFP_KERNEL);
	if (!rows)
		return tcptw_st_nomem("table: rows");
	ok = st_table_lru(rows, checks) && st_table_batch(rows, checks);
	kfree(rows);
	/* the reads above are nobody's: test_table_rows_max starts at 0 */
	WRITE_ONCE(tcptw_test_table_rows_max, 0);
	return ok;
}

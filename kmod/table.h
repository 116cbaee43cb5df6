/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * A bounded per-netns table of endpoints with counter columns: the peers
 * and listeners files.
 */
#ifndef _TCPTW_TABLE_H
#define _TCPTW_TABLE_H

#include <linux/in6.h>
#include <linux/seq_file_net.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <linux/types.h>

struct seq_file;
struct proc_dir_entry;
struct net;
struct table_pending_copy;

#define TCPTW_TABLE_COLS 10

struct tcptw_table;

/* A row's key: IPv4 in the first word of @addr, the other three zero. */
struct tcptw_table_key {
	struct in6_addr addr;
	__be16 port;
	u16 family;
};

/* A row as the formatters see it (a copy, its key taken under the lock). */
struct tcptw_row {
	struct in6_addr addr;	/* IPv4 in the first word */
	__be16 port;
	u16 family;
	bool used;
	unsigned long last;	/* jiffies of the last update */
	unsigned long col_last[TCPTW_TABLE_COLS];	/* 0: never moved */
	u64 cnt[TCPTW_TABLE_COLS];
	u32 gauge[2];		/* last values given with an update */
};

/*
 * @size rows (rounded up to a power of two, at least one bucket); NULL
 * (*state says why: enum tcptw_mem_state) leaves the table out. Every
 * function below accepts a NULL table and does nothing with it.
 */
struct tcptw_table *tcptw_table_alloc(unsigned int size, u8 *state);
void tcptw_table_free(struct tcptw_table *tbl);
unsigned int tcptw_table_rows(const struct tcptw_table *tbl);
size_t tcptw_table_bytes(const struct tcptw_table *tbl);
void tcptw_table_reset(struct tcptw_table *tbl);
/*
 * Count column @col for endpoint @family/@addr/@port (network order) and
 * remember @g0/@g1 (e.g. a listener's backlog).
 */
void tcptw_table_inc(struct tcptw_table *tbl, u16 family, const void *addr,
		     __be16 port, unsigned int col, u32 g0, u32 g1);
/* the same for a decision made at jiffies @when (its row's last times) */
void tcptw_table_inc_at(struct tcptw_table *tbl, u16 family, const void *addr,
			__be16 port, unsigned int col, u32 g0, u32 g1,
			unsigned long when);
/*
 * Add @n (1 to TCPTW_TABLE_ADD_MAX) to column @col of key @k's row, counted
 * at jiffies @when, where every writer of this table runs in BH context or
 * with BH disabled (the listeners): one writer per CPU at a time without
 * disabling interrupts.
 */
#define TCPTW_TABLE_ADD_MAX 1023U
void tcptw_table_add_key_bh(struct tcptw_table *tbl,
			    const struct tcptw_table_key *k, unsigned int col,
			    unsigned int n, u32 g0, u32 g1, unsigned long when);
/* in place of a second column: a count in one column only */
#define TCPTW_TABLE_NO_COL	(~0U)

/* @k: the row key of @family's @addr (4 or 16 bytes) and @port */
static __always_inline void tcptw_table_key_set(struct tcptw_table_key *k,
						u16 family, const void *addr,
						__be16 port)
{
	/* fixed sizes: a copy of a variable length is a loop */
	if (family == AF_INET6) {
		memcpy(&k->addr, addr, 16);
	} else {
		memcpy(&k->addr, addr, 4);
		k->addr.s6_addr32[1] = 0;
		k->addr.s6_addr32[2] = 0;
		k->addr.s6_addr32[3] = 0;
	}
	k->port = port;
	k->family = family;
}

/*
 * A table file (peers, listeners) streamed a buffer at a time: its
 * seq_file state, sized by proc_create_net(..., sizeof(struct
 * tcptw_table_seq)). The file's start calls tcptw_table_seq_start() with
 * a function that finds the namespace's table (under rcu_read_lock());
 * its next and stop are the two below; its show gets SEQ_START_TOKEN for
 * the header line, then one struct tcptw_row per used row, a copy.
 */
struct tcptw_table_seq {
	struct seq_net_private p;	/* must be first (seq_file_net) */
	struct tcptw_table *(*table)(struct net *net);
	struct tcptw_table *tbl;	/* from start to stop */
	struct table_pending_copy *pc;	/* every CPU's, taken at start */
	unsigned int npc;
	unsigned int rows;		/* rows copied since start */
	struct tcptw_row row;
};

void *tcptw_table_seq_start(struct seq_file *seq, loff_t *pos,
			    struct tcptw_table *(*table)(struct net *net));
void *tcptw_table_seq_next(struct seq_file *seq, void *v, loff_t *pos);
void tcptw_table_seq_stop(struct seq_file *seq, void *v);
/* "addr port" of a row, as the tables print it */
void tcptw_table_show_endpoint(struct seq_file *seq,
			       const struct tcptw_row *row);

/* peers.c, listeners.c */
enum tcptw_peer_col {
	TCPTW_PEER_REUSE_GRANTED,
	TCPTW_PEER_DENIED_DISABLED,
	TCPTW_PEER_DENIED_LOOPBACK_ONLY,
	TCPTW_PEER_DENIED_NO_TIMESTAMPS,
	TCPTW_PEER_DENIED_TOO_RECENT,
	TCPTW_PEER_DENIED_FIN_WAIT2,
	TCPTW_PEER_PORT_EXHAUSTED,
	TCPTW_PEER_TUPLE_IN_USE,
	TCPTW_PEER_SYN_PAWS_REJECTED,
	TCPTW_PEER_SYN_RECYCLED,
	TCPTW_NR_PEER_COLS
};

enum tcptw_listener_col {
	TCPTW_LISTENER_OVERFLOW_SYN,
	TCPTW_LISTENER_OVERFLOW_ACK,
	TCPTW_LISTENER_SYN_DROP,
	TCPTW_LISTENER_COOKIE_SENT,
	TCPTW_NR_LISTENER_COLS
};

extern unsigned int tcptw_peer_table_size;
extern unsigned int tcptw_listener_table_size;

int tcptw_peers_proc_init(struct proc_dir_entry *dir);
int tcptw_listeners_proc_init(struct proc_dir_entry *dir);

#endif /* _TCPTW_TABLE_H */

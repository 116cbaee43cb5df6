/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Per-netns table of remote endpoints (/proc/net/tcptw/peers).
 */
#ifndef _TCPTW_PEERS_H
#define _TCPTW_PEERS_H

#include "events.h"

struct seq_file;
struct tcptw_peers;

/* Columns of a peers row after addr and port; ABI order, append only. */
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

struct tcptw_peers *tcptw_peers_alloc(void);
void tcptw_peers_free(struct tcptw_peers *peers);
void tcptw_peers_reset(struct tcptw_peers *peers);
/*
 * Count @col for the endpoint @family/@addr/@port (network order; port 0
 * for rows that aggregate every port of an address).
 */
void tcptw_peers_inc(struct tcptw_peers *peers, u16 family, const void *addr,
		     __be16 port, enum tcptw_peer_col col);
int tcptw_peers_proc_init(struct proc_dir_entry *dir);

#endif /* _TCPTW_PEERS_H */

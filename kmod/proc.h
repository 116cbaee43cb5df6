/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 */
#ifndef _TCPTW_PROC_H
#define _TCPTW_PROC_H

struct net;

int tcptw_proc_net_init(struct net *net);
void tcptw_proc_net_exit(struct net *net);

#endif /* _TCPTW_PROC_H */

/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_NETNS_H
#define _TCPTW_NETNS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Enter a network namespace before anything is read: by name through
 * /run/netns/NAME (as ip netns and ss -N do) or through a process's
 * /proc/PID/ns/net. /proc/net, /proc/sys/net and netlink sockets opened
 * afterwards all belong to the new netns. Returns 0 or -errno.
 */
int netns_enter_name(const char *name);
int netns_enter_pid(pid_t pid);
/* The label printed and exported: the name, "pid:N" or "net:[inode]". */
void netns_label(char *buf, size_t len, const char *name, pid_t pid);

#endif /* _TCPTW_NETNS_H */

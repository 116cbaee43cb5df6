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
int netns_enter_fd(int fd);
/* The same netns held open (O_CLOEXEC) for later: an fd, or -errno. */
int netns_open_name(const char *name);
int netns_open_pid(pid_t pid);
/*
 * The label printed and exported. The name under /run/netns of the netns
 * this process is in now, if it has one (it survives a reboot, and
 * "ip netns attach NAME PID" gives a container's netns one); else
 * @name, "pid:N" for --pid, or "net:[inode]" (new on every boot).
 */
void netns_label(char *buf, size_t len, const char *name, pid_t pid);

/* One network namespace of the host, held open by @fd. */
struct netns_ent {
	char label[128];
	int fd;
	dev_t dev;
	ino_t ino;
	pid_t pid;	/* a process in it, 0 for a named one */
};

struct netns_list {
	struct netns_ent *v;
	size_t n;
};

/*
 * --all-netns: every named netns (/run/netns, sorted by name), then every
 * other one a running process is in (/proc/PID/ns/net, by PID), each once.
 * Namespaces this process may not open are left out. -errno.
 */
int netns_list_all(struct netns_list *l);
void netns_list_free(struct netns_list *l);

#endif /* _TCPTW_NETNS_H */

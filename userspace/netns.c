// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "netns.h"

static int enter(const char *path)
{
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET) < 0)
		err = -errno;
	close(fd);
	return err;
}

int netns_enter_name(const char *name)
{
	char path[4096];

	if (!*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return enter(path);
}

int netns_enter_pid(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	return enter(path);
}

void netns_label(char *buf, size_t len, const char *name, pid_t pid)
{
	ssize_t n;

	if (name) {
		snprintf(buf, len, "%s", name);
		return;
	}
	if (pid > 0) {
		snprintf(buf, len, "pid:%d", (int)pid);
		return;
	}
	n = readlink("/proc/self/ns/net", buf, len - 1);
	if (n <= 0) {
		snprintf(buf, len, "self");
		return;
	}
	buf[n] = '\0';
	if (!strncmp(buf, "net:", 4))
		return;
	snprintf(buf, len, "self");
}

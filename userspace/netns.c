// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netns.h"

int netns_enter_fd(int fd)
{
	return setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
}

static int enter(const char *path)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = netns_enter_fd(fd);
	close(fd);
	return err;
}

static bool name_ok(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

int netns_enter_name(const char *name)
{
	char path[4096];

	if (!name_ok(name))
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

static int open_ns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int netns_open_name(const char *name)
{
	char path[4096];

	if (!name_ok(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return open_ns(path);
}

int netns_open_pid(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	return open_ns(path);
}

/* The name under /run/netns of the netns @st is, into @buf; false if none. */
static bool named(const struct stat *st, char *buf, size_t len)
{
	struct dirent *de;
	char path[4096];
	struct stat ns;
	bool found = false;
	DIR *d;

	d = opendir("/run/netns");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (!name_ok(de->d_name) || strlen(de->d_name) >= len)
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (stat(path, &ns) || ns.st_dev != st->st_dev ||
		    ns.st_ino != st->st_ino)
			continue;
		snprintf(buf, len, "%s", de->d_name);
		found = true;
	}
	closedir(d);
	return found;
}

void netns_label(char *buf, size_t len, const char *name, pid_t pid)
{
	struct stat st;

	if (!stat("/proc/self/ns/net", &st) && named(&st, buf, len))
		return;
	if (name) {
		snprintf(buf, len, "%s", name);
		return;
	}
	if (pid > 0) {
		snprintf(buf, len, "pid:%d", (int)pid);
		return;
	}
	if (!stat("/proc/self/ns/net", &st))
		snprintf(buf, len, "net:[%llu]", (unsigned long long)st.st_ino);
	else
		snprintf(buf, len, "self");
}

/* Add the netns at @path unless it is in @l already. Keeps its fd. */
static int add(struct netns_list *l, const char *path, const char *name,
	       pid_t pid)
{
	struct netns_ent *nv, *e;
	struct stat st;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* gone, or not ours to open: left out */
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	for (i = 0; i < l->n; i++)
		if (l->v[i].dev == st.st_dev && l->v[i].ino == st.st_ino) {
			close(fd);
			return 0;
		}
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv) {
		close(fd);
		return -ENOMEM;
	}
	l->v = nv;
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->fd = fd;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->pid = pid;
	if (name)
		snprintf(e->label, sizeof(e->label), "%s", name);
	else
		snprintf(e->label, sizeof(e->label), "net:[%llu]",
			 (unsigned long long)st.st_ino);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_named(struct netns_list *l)
{
	char **names = NULL, **nv, path[4096];
	size_t n = 0, i;
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir("/run/netns");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!name_ok(de->d_name) || strlen(de->d_name) >= 128)
			continue;
		nv = realloc(names, (n + 1) * sizeof(*nv));
		if (!nv) {
			err = -ENOMEM;
			break;
		}
		names = nv;
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/run/netns/%s", names[i]);
		if (!err)
			err = add(l, path, names[i], 0);
		free(names[i]);
	}
	free(names);
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int netns_list_all(struct netns_list *l)
{
	pid_t *pids = NULL, *nv;
	size_t n = 0, i;
	struct dirent *de;
	char path[64];
	int err;
	DIR *d;

	memset(l, 0, sizeof(*l));
	err = add_named(l);
	d = opendir("/proc");
	if (!d)
		err = err ? err : -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		nv = realloc(pids, (n + 1) * sizeof(*nv));
		if (!nv) {
			err = -ENOMEM;
			break;
		}
		pids = nv;
		pids[n++] = pid;
	}
	if (d)
		closedir(d);
	if (n > 1)
		qsort(pids, n, sizeof(*pids), cmp_pid);
	for (i = 0; !err && i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pids[i]);
		err = add(l, path, NULL, pids[i]);
	}
	free(pids);
	if (err)
		netns_list_free(l);
	return err;
}

void netns_list_free(struct netns_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		close(l->v[i].fd);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

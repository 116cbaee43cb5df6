// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"

const char *tcptw_proc_root(void)
{
	const char *root = getenv("TCPTW_PROC_ROOT");

	return root && *root ? root : "/proc";
}

int tcptw_path(char *buf, size_t len, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", tcptw_proc_root(), rel);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* /proc files report st_size 0, so read until EOF into a growing buffer. */
char *tcptw_read(const char *rel, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char path[512], *buf, *nbuf;
	ssize_t n;
	int fd, err;

	err = tcptw_path(path, sizeof(path), rel);
	if (err) {
		errno = -err;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf)
		goto err_close;
	for (;;) {
		if (cap - len < 2) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf)
				goto err_free;
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto err_free;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;

err_free:
	err = errno;
	free(buf);
	errno = err;
err_close:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

int tcptw_read_ints(const char *rel, long long *v, int max)
{
	char *buf, *p, *end;
	int n = 0;

	buf = tcptw_read(rel, NULL);
	if (!buf)
		return -errno;
	p = buf;
	while (n < max) {
		errno = 0;
		v[n] = strtoll(p, &end, 10);
		if (end == p || errno)
			break;
		n++;
		p = end;
	}
	free(buf);
	return n ? n : -EINVAL;
}

bool tcptw_module_loaded(void)
{
	char path[512];
	struct stat st;

	if (tcptw_path(path, sizeof(path), TCPTW_DIR "/counters"))
		return false;
	return stat(path, &st) == 0;
}

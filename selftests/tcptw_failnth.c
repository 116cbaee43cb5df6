// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * tcptw_failnth N OP [ARGS...]: run one operation with the kernel's
 * fault injection set to fail exactly the Nth allocation this thread
 * makes from there (/proc/thread-self/fail-nth, CONFIG_FAULT_INJECTION;
 * failslab and fail_page_alloc decide which allocations count), then
 * print what happened on one line:
 *
 *   op=OP n=N ret=R errno=ENOMEM|NUMBER calls=C failed=0|1
 *
 * calls is how many allocations counted before the operation ended (N or
 * more when failed=1, the Nth failed). fail-nth's own file and FILE's
 * directory are opened before it is set: the count starts at the lookup
 * of FILE's last component in that directory. (The walk through
 * /proc/self would count procfs' instantiation of this process's
 * directories, which fails with ENOENT when its inode cannot be
 * allocated: proc_pid_instantiate() and proc_pident_instantiate().)
 *
 * OPs:
 *   read FILE              open(), read() to the end, close()
 *   write FILE DATA        open(), one write() of DATA, close()
 *
 * (A load and a namespace's creation are swept by the test build's
 * test_failnth_at instead, from the entry of tcptw's own code: the
 * loader's and setup_net()'s allocations before it vary from one try to
 * the next.)
 *
 * Exit status: 0 once it printed the line (the operation's own result is
 * in it), 2 on bad arguments, 1 if fail-nth cannot be used.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[65536];

static int failnth_fd = -1;

static void failnth_set(unsigned long n)
{
	char s[32];
	int len = snprintf(s, sizeof(s), "%lu", n);

	if (pwrite(failnth_fd, s, len, 0) != len) {
		perror("tcptw_failnth: /proc/thread-self/fail-nth");
		exit(1);
	}
}

/* what is left of N: 0 once the Nth allocation was made to fail */
static unsigned long failnth_left(void)
{
	char s[32];
	ssize_t len = pread(failnth_fd, s, sizeof(s) - 1, 0);

	if (len <= 0) {
		perror("tcptw_failnth: /proc/thread-self/fail-nth");
		exit(1);
	}
	s[len] = '\0';
	return strtoul(s, NULL, 10);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: tcptw_failnth N read FILE\n"
		"       tcptw_failnth N write FILE DATA\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long n, left, calls;
	char *end, *dir, *name;
	const char *op;
	int fd, dirfd, err;
	long ret;

	if (argc < 3)
		usage();
	errno = 0;
	n = strtoul(argv[1], &end, 10);
	if (errno || *end || !n || n > UINT_MAX)
		usage();
	op = argv[2];
	if (!(!strcmp(op, "read") && argc == 4) &&
	    !(!strcmp(op, "write") && argc == 5))
		usage();

	failnth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (failnth_fd < 0) {
		perror("tcptw_failnth: /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
		return 1;
	}

	dir = strdup(argv[3]);
	name = strdup(argv[3]);
	if (!dir || !name) {
		perror("tcptw_failnth");
		return 1;
	}
	dirfd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "tcptw_failnth: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	name = basename(name);

	failnth_set(n);
	if (!strcmp(op, "read")) {
		ret = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
		if (ret >= 0) {
			fd = ret;
			do {
				ret = read(fd, buf, sizeof(buf));
			} while (ret > 0);
			err = errno;
			close(fd);
			errno = err;
		}
	} else {
		ret = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
		if (ret >= 0) {
			fd = ret;
			ret = write(fd, argv[4], strlen(argv[4]));
			err = errno;
			close(fd);
			errno = err;
		}
	}
	err = ret < 0 ? errno : 0;
	left = failnth_left();
	failnth_set(0);

	calls = left ? n - left : n;
	/* ENOMEM by name (what the sweep expects), any other by number */
	printf("op=%s n=%lu ret=%ld errno=", op, n,
	       ret < 0 ? -1L : ret > 0 ? 1L : 0L);
	if (err == ENOMEM)
		printf("ENOMEM");
	else
		printf("%d", err);
	printf(" calls=%lu failed=%d\n", calls, !left);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_PROC_H
#define _TCPTW_PROC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Every file tcptw reads is named relative to the proc root, which is
 * $TCPTW_PROC_ROOT when set (unit tests point it at a fixture tree) and
 * /proc otherwise. Names look like "net/tcptw/counters".
 */
const char *tcptw_proc_root(void);
int tcptw_path(char *buf, size_t len, const char *rel);
/* Whole file, NUL-terminated, caller frees; NULL with errno set. */
char *tcptw_read(const char *rel, size_t *len);
/* Read a file holding one or more integers (a sysctl); -errno on failure. */
int tcptw_read_ints(const char *rel, long long *v, int max);
bool tcptw_module_loaded(void);

#define TCPTW_DIR "net/tcptw"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#endif /* _TCPTW_PROC_H */

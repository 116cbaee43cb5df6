/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Memory of the per-netns event rings and tables: charged to the memory
 * cgroup of the task that creates the namespace, and bounded module-wide.
 */
#ifndef _TCPTW_MEM_H
#define _TCPTW_MEM_H

#include <linux/types.h>

/* why a part of a namespace's state is missing (the status file) */
enum tcptw_mem_state {
	TCPTW_MEM_OK,
	TCPTW_MEM_BUDGET,	/* would exceed mem_max_mb over all netns */
	TCPTW_MEM_NOMEM,	/* the allocation (or the memcg charge) failed */
};

extern const char * const tcptw_mem_state_names[];

void tcptw_mem_init(void);
/* zeroed, charged, counted against the budget; NULL with *state set */
void *tcptw_mem_alloc(size_t size, u8 *state);
void tcptw_mem_free(void *p, size_t size);
unsigned long tcptw_mem_used(void);
unsigned long tcptw_mem_max(void);

#endif /* _TCPTW_MEM_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Every namespace gets an event ring and two tables whose sizes are
 * module parameters (up to 1M events, 64k rows). Any user who can create
 * network namespaces creates them, so they are:
 *  - charged to the creating task's memory cgroup (GFP_KERNEL_ACCOUNT),
 *    where a container's limit applies to them;
 *  - allocated with __GFP_RETRY_MAYFAIL: a failure never calls the OOM
 *    killer, it leaves that part out;
 *  - bounded over all namespaces by mem_max_mb.
 * A part left out never fails the namespace: its counters still count,
 * and /proc/net/tcptw/status says which part is missing and why.
 */
#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "mem.h"

static unsigned int mem_max_mb;
module_param(mem_max_mb, uint, 0444);
MODULE_PARM_DESC(mem_max_mb,
		 "event rings and tables of all netns together, MiB (0: 1/32 of RAM, at least 16)");

const char * const tcptw_mem_state_names[] = {
	[TCPTW_MEM_OK] = "ok",
	[TCPTW_MEM_BUDGET] = "budget",
	[TCPTW_MEM_NOMEM] = "nomem",
};

static unsigned long mem_max __read_mostly;
/* only namespace creation and teardown write it, never a probe */
static atomic_long_t mem_used = ATOMIC_LONG_INIT(0);

void tcptw_mem_init(void)
{
	if (mem_max_mb)
		mem_max = (unsigned long)mem_max_mb << 20;
	else
		mem_max = max((totalram_pages() << PAGE_SHIFT) / 32, 16UL << 20);
}

void *tcptw_mem_alloc(size_t size, u8 *state)
{
	void *p;

	if (atomic_long_add_return(size, &mem_used) > mem_max) {
		atomic_long_sub(size, &mem_used);
		*state = TCPTW_MEM_BUDGET;
		return NULL;
	}
	p = kvzalloc(size, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
		     __GFP_NOWARN);
	if (!p) {
		atomic_long_sub(size, &mem_used);
		*state = TCPTW_MEM_NOMEM;
		return NULL;
	}
	*state = TCPTW_MEM_OK;
	return p;
}

void tcptw_mem_free(void *p, size_t size)
{
	if (!p)
		return;
	kvfree(p);
	atomic_long_sub(size, &mem_used);
}

unsigned long tcptw_mem_used(void)
{
	return atomic_long_read(&mem_used);
}

unsigned long tcptw_mem_max(void)
{
	return mem_max;
}

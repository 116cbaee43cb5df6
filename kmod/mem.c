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
 *  - bounded over all namespaces by mem_max_mb. The per-CPU counters are
 *    not: refused, they would leave the namespace untracked, and they
 *    grow with CPUs as the kernel's own per-namespace MIBs do, at a
 *    third of their size (docs/design.md, Memory).
 * A part left out never fails the namespace: its counters still count,
 * and /proc/net/tcptw/status says which part is missing and why.
 *
 * What is larger than a page is built from single pages and vmap()ed,
 * not vmalloc()ed: a failed allocation must give its pages back before it
 * returns. Since v6.17 a vmalloc() that fails part way frees the pages it
 * got from a workqueue, later; meanwhile the memory cgroup sits at its
 * limit, and the next allocation of the task creating the namespace (ip,
 * unshare, a container runtime) is OOM-killed there. Page by page, the
 * first page the cgroup refuses ends the attempt and every page already
 * charged is freed, and uncharged, before the namespace goes on.
 */
#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

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

#define MEM_GFP (GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/*
 * In front of what the caller gets, a cache line apart: how to free it.
 * pages is NULL for a kmalloc()ed block.
 */
struct mem_hdr {
	struct page **pages;
	unsigned int nr_pages;
};

#define MEM_HDR_SIZE ALIGN(sizeof(struct mem_hdr), SMP_CACHE_BYTES)

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

static void free_pages_array(struct page **pages, unsigned int n)
{
	while (n)
		__free_page(pages[--n]);
	kvfree(pages);
}

static struct mem_hdr *alloc_mapped(size_t total)
{
	unsigned int i, n = DIV_ROUND_UP(total, PAGE_SIZE);
	struct page **pages;
	struct mem_hdr *hdr;

	/* 8 bytes a page; vmalloc()ed only for rings above 2 GB */
	pages = kvmalloc_array(n, sizeof(*pages), MEM_GFP);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(MEM_GFP | __GFP_ZERO);
		if (!pages[i]) {
			free_pages_array(pages, i);
			return NULL;
		}
		cond_resched();
	}
	hdr = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	if (!hdr) {
		free_pages_array(pages, n);
		return NULL;
	}
	hdr->pages = pages;
	hdr->nr_pages = n;
	return hdr;
}

void *tcptw_mem_alloc(size_t size, u8 *state)
{
	size_t total = size + MEM_HDR_SIZE;
	struct mem_hdr *hdr;

	if (atomic_long_add_return(size, &mem_used) > mem_max) {
		atomic_long_sub(size, &mem_used);
		*state = TCPTW_MEM_BUDGET;
		return NULL;
	}
	/* zeroed: a kmalloc()ed block's hdr->pages is NULL */
	if (total <= PAGE_SIZE)
		hdr = kzalloc(total, MEM_GFP);
	else
		hdr = alloc_mapped(total);
	if (!hdr) {
		atomic_long_sub(size, &mem_used);
		*state = TCPTW_MEM_NOMEM;
		return NULL;
	}
	*state = TCPTW_MEM_OK;
	return (char *)hdr + MEM_HDR_SIZE;
}

void tcptw_mem_free(void *p, size_t size)
{
	struct mem_hdr *hdr;

	if (!p)
		return;
	hdr = (struct mem_hdr *)((char *)p - MEM_HDR_SIZE);
	if (hdr->pages) {
		struct page **pages = hdr->pages;
		unsigned int n = hdr->nr_pages;

		vunmap(hdr);
		free_pages_array(pages, n);
	} else {
		kfree(hdr);
	}
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

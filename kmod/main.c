// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * tcptw: why did these TCP connections fail? Per-netns counters of
 * TIME_WAIT and PAWS decisions under /proc/net/tcptw/.
 */
#include <linux/module.h>

#include "mem.h"
#include "pernet.h"
#include "probes.h"
#include "test.h"

static int __init tcptw_load(void)
{
	int err;

	tcptw_mem_init();
	/* the test build's self-tests of the table and the ring */
	err = tcptw_selftest();
	if (err)
		return err;
	/* state and /proc first: probes may fire as soon as they attach */
	tcptw_test_failnth_mark(TCPTW_FAILNTH_PERNET, false);
	err = tcptw_pernet_init();
	tcptw_test_failnth_mark(TCPTW_FAILNTH_PERNET, true);
	if (err)
		return err;
	tcptw_test_failnth_mark(TCPTW_FAILNTH_PROBES, false);
	err = tcptw_probes_init();
	tcptw_test_failnth_mark(TCPTW_FAILNTH_PROBES, true);
	if (err)
		goto err_uninit_pernet;
	tcptw_pernet_rebase();
	pr_info("loaded (%s)\n", TCPTW_VERSION);
	return 0;

err_uninit_pernet:
	tcptw_pernet_uninit();
	return err;
}

static int __init tcptw_init(void)
{
	int err;

	/* the test build's fail-nth region: the load, failed or not */
	tcptw_test_failnth_mark(TCPTW_FAILNTH_LOAD, false);
	err = tcptw_load();
	tcptw_test_failnth_mark(TCPTW_FAILNTH_LOAD, true);
	return err;
}

static void __exit tcptw_exit(void)
{
	tcptw_test_coexist_uninit();
	tcptw_probes_uninit();
	tcptw_test_uninit();
	tcptw_pernet_uninit();
}

module_init(tcptw_init);
module_exit(tcptw_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-netns counters of TCP TIME_WAIT, PAWS and connect failures");
MODULE_AUTHOR("The tcptw authors");
MODULE_VERSION(TCPTW_VERSION);

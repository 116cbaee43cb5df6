// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw export --prometheus: one exposition of every netns asked for. */

#include <errno.h>
#include <stdio.h>

#include "util.h"
#include "prom.h"

static int export_one(const struct opts *opt, const char *label, void *arg)
{
	struct snapshot s;
	int err;

	(void)opt;
	snapshot_take(&s, SNAP_ALL | SNAP_CTCENSUS);
	if (s.mib_err) {
		snapshot_free(&s);
		return fail("/proc/net/netstat", s.mib_err);
	}
	err = prom_add(arg, &s, label);
	snapshot_free(&s);
	return err ? fail("export", err) : EXIT_OK;
}

/* One exposition: with --all-netns every family holds every netns. */
int cmd_export(const struct opts *opt)
{
	struct prom *p = prom_new();
	int rc, err;

	if (!p)
		return fail("export", -ENOMEM);
	rc = each_netns(opt, export_one, p);
	/* what could be read is worth exporting even if a netns failed */
	err = prom_emit(stdout, p);
	prom_free(p);
	if (!err && fflush(stdout))
		err = -errno;
	return err ? fail("export", err) : rc;
}

// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* libFuzzer: the snmp6 and netstat/snmp parsers, and deltas between them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctrset a = { 0 }, b = { 0 };
	struct deltaset d;
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	ctr_parse_snmp6(&a, buf, "x");
	ctr_parse_table(&b, buf);
	if (!ctr_diff(&a, &b, 1.0, &d))
		deltaset_free(&d);
	if (!ctr_diff(&b, &a, 0, &d))
		deltaset_free(&d);
	ctrset_free(&a);
	ctrset_free(&b);
	free(buf);
	return 0;
}

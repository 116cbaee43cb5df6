// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* libFuzzer: /proc/net/stat/nf_conntrack, per-CPU rows summed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctrset s = { 0 };
	char *buf = malloc(size + 1);
	uint64_t entries;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	ct_parse_proc_stat(buf, &s, &entries);
	ctrset_free(&s);
	free(buf);
	return 0;
}

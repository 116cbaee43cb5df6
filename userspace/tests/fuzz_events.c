// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* libFuzzer: the events parser and the per-peer counting over it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer_count top[8];
	struct event_list l;
	char *buf = malloc(size + 1);
	char addr[48];
	size_t i;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (events_parse(buf, &l) >= 0) {
		struct ev_follow f = { 0 };
		uint64_t lost;

		events_sort_seq(&l);
		for (i = 0; i < l.n; i++) {
			split_endpoint(l.v[i].src, addr, sizeof(addr), NULL);
			ev_follow_take(&f, &l.v[i], &lost);
		}
		if (l.n)
			events_top(&l, l.v[0].name, false, top, 8);
		if (l.n)
			events_top(&l, l.v[l.n - 1].name, true, top, 8);
		events_free(&l);
	}
	split_endpoint(buf, addr, sizeof(addr), NULL);
	free(buf);
	return 0;
}

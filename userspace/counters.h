/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_COUNTERS_H
#define _TCPTW_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTR_NAME_MAX 64

struct ctr {
	char name[CTR_NAME_MAX];
	uint64_t val;
};

/* An ordered set of named counters, in the order the source printed them. */
struct ctrset {
	struct ctr *v;
	size_t n, cap;
};

/* Flags of one counter delta. */
enum {
	CTR_NEW = 1 << 0,	/* absent before: delta from 0 if its set was */
	CTR_GONE = 1 << 1,	/* absent now: no delta, last value kept */
	CTR_WRAP32 = 1 << 2,	/* went backwards near 2^32: 32-bit wrap */
	CTR_RESET = 1 << 3,	/* went backwards otherwise: reset, from 0 */
};

struct ctr_delta {
	char name[CTR_NAME_MAX];
	uint64_t val, delta;
	double rate;
	unsigned int flags;
};

struct deltaset {
	struct ctr_delta *v;
	size_t n;
};

int ctrset_add(struct ctrset *s, const char *name, uint64_t val);
const struct ctr *ctrset_find(const struct ctrset *s, const char *name);
bool ctrset_get(const struct ctrset *s, const char *name, uint64_t *val);
void ctrset_free(struct ctrset *s);

/*
 * snmp6 format (/proc/net/tcptw/counters, /proc/net/snmp6): "Name value"
 * per line. Names get @prefix prepended (NULL for none). Lines that do not
 * parse are skipped; returns the number of counters added or -errno.
 */
int ctr_parse_snmp6(struct ctrset *s, const char *buf, const char *prefix);

/*
 * /proc/net/tcptw/probes: "name\tkind\tstate\tmissed" per line. Adds
 * each hook's missed calls under the hook's name; a line without exactly
 * four fields and a number last is skipped. Returns the number added or
 * -errno.
 */
int ctr_parse_probes(struct ctrset *s, const char *buf);

/*
 * /proc/net/netstat and /proc/net/snmp: pairs of "Tag: names..." and
 * "Tag: values..." lines. Names become TagName as nstat prints them
 * (TcpExtPAWSEstab). Negative values (Tcp MaxConn -1) are stored as their
 * two's complement. Returns the number of counters added or -errno.
 */
int ctr_parse_table(struct ctrset *s, const char *buf);

/*
 * One counter's increase from @prev to @cur. A counter that went backwards
 * either wrapped at 32 bits (old value within 2^31 of 2^32: the kernel's
 * unsigned long on 32-bit) or was reset (control "reset", module reload):
 * then the increase is counted from 0.
 */
uint64_t ctr_sub(uint64_t prev, uint64_t cur, unsigned int *flags);

/*
 * Deltas of every counter in @cur (in @cur's order) against @prev, rates
 * over @secs (0: no rate). Counters only in @prev are appended with
 * CTR_GONE. Free with deltaset_free().
 */
int ctr_diff(const struct ctrset *prev, const struct ctrset *cur, double secs,
	     struct deltaset *out);
const struct ctr_delta *deltaset_find(const struct deltaset *d,
				      const char *name);
uint64_t deltaset_get(const struct deltaset *d, const char *name);
void deltaset_free(struct deltaset *d);

#endif /* _TCPTW_COUNTERS_H */

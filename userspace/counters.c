// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "ctr_names.h"

int ctrset_add(struct ctrset *s, const char *name, uint64_t val)
{
	struct ctr *nv;

	if (!*name || strlen(name) >= CTR_NAME_MAX)
		return -EINVAL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;

		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	snprintf(s->v[s->n].name, CTR_NAME_MAX, "%s", name);
	s->v[s->n].val = val;
	s->n++;
	return 0;
}

const struct ctr *ctrset_find(const struct ctrset *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

bool ctrset_get(const struct ctrset *s, const char *name, uint64_t *val)
{
	const struct ctr *c = ctrset_find(s, name);

	if (c && val)
		*val = c->val;
	return c;
}

void ctrset_free(struct ctrset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* A decimal u64, or a negative s64 stored as two's complement. */
static int parse_value(const char *tok, uint64_t *v)
{
	char *end;

	errno = 0;
	if (*tok == '-')
		*v = (uint64_t)strtoll(tok, &end, 10);
	else if (*tok >= '0' && *tok <= '9')
		*v = strtoull(tok, &end, 10);
	else
		return -EINVAL;
	if (errno || end == tok || *end)
		return -EINVAL;
	return 0;
}

/*
 * One counter per line of exactly @nf (at most 4) fields split by @delim:
 * named by the first (after @prefix, NULL for none), valued by the last.
 * Other lines, and "#" comments, are skipped. Returns the number added
 * or -ENOMEM.
 */
static int parse_lines(struct ctrset *s, const char *buf, const char *delim,
		       int nf, const char *prefix)
{
	char *copy, *line, *save = NULL, *f[5], *sp;
	char full[CTR_NAME_MAX];
	int added = 0, err, i;
	uint64_t v;

	copy = strdup(buf);
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		sp = NULL;
		for (i = 0; i <= nf; i++)
			f[i] = strtok_r(i ? NULL : line, delim, &sp);
		if (!f[nf - 1] || f[nf] || *f[0] == '#')
			continue;
		if (parse_value(f[nf - 1], &v))
			continue;
		if (snprintf(full, sizeof(full), "%s%s", prefix ? prefix : "",
			     f[0]) >= (int)sizeof(full))
			continue;
		err = ctrset_add(s, full, v);
		if (err == -ENOMEM) {
			free(copy);
			return err;
		}
		added += !err;
	}
	free(copy);
	return added;
}

int ctr_parse_snmp6(struct ctrset *s, const char *buf, const char *prefix)
{
	return parse_lines(s, buf, " \t\r", 2, prefix);
}

int ctr_parse_probes(struct ctrset *s, const char *buf)
{
	return parse_lines(s, buf, "\t\r", 4, NULL);
}

static char *next_line(char **p)
{
	char *line = *p, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = NULL;
	}
	return line;
}

/* "Tag:" and the rest of the line; NULL if the line has no tag. */
static char *split_tag(char *line, char **rest)
{
	char *colon = strchr(line, ':');

	if (!colon || colon == line)
		return NULL;
	*colon = '\0';
	*rest = colon + 1;
	return line;
}

static int table_pair(struct ctrset *s, const char *tag, char *names,
		      char *vals)
{
	char *ns = NULL, *vs = NULL, *n, *v;
	char full[CTR_NAME_MAX];
	int added = 0, err;
	uint64_t val;

	n = strtok_r(names, " \t\r", &ns);
	v = strtok_r(vals, " \t\r", &vs);
	/* A short row (truncated read) keeps the columns it has. */
	for (; n && v; n = strtok_r(NULL, " \t\r", &ns),
	     v = strtok_r(NULL, " \t\r", &vs)) {
		if (parse_value(v, &val))
			continue;
		if (snprintf(full, sizeof(full), "%s%s", tag, n) >=
		    (int)sizeof(full))
			continue;
		err = ctrset_add(s, full, val);
		if (err == -ENOMEM)
			return err;
		added += !err;
	}
	return added;
}

int ctr_parse_table(struct ctrset *s, const char *buf)
{
	char *copy, *p, *l1, *l2, *tag1, *tag2, *names, *vals;
	int added = 0, n;

	copy = strdup(buf);
	if (!copy)
		return -ENOMEM;
	p = copy;
	l1 = next_line(&p);
	while (l1) {
		tag1 = split_tag(l1, &names);
		l2 = next_line(&p);
		if (!tag1) {
			l1 = l2;
			continue;
		}
		if (!l2)
			break;
		tag2 = split_tag(l2, &vals);
		if (!tag2 || strcmp(tag1, tag2)) {
			/* out of step: the second line may start a pair */
			if (tag2)
				*(vals - 1) = ':';
			l1 = l2;
			continue;
		}
		l1 = next_line(&p);
		n = table_pair(s, tag1, names, vals);
		if (n < 0) {
			free(copy);
			return n;
		}
		added += n;
	}
	free(copy);
	return added;
}

uint64_t ctr_sub(uint64_t prev, uint64_t cur, unsigned int *flags)
{
	if (cur >= prev)
		return cur - prev;
	if (prev <= UINT32_MAX && prev >= (1ULL << 31)) {
		if (flags)
			*flags |= CTR_WRAP32;
		return (UINT32_MAX - prev) + cur + 1;
	}
	if (flags)
		*flags |= CTR_RESET;
	return cur;
}

int ctr_diff(const struct ctrset *prev, const struct ctrset *cur, double secs,
	     struct deltaset *out)
{
	size_t i, n = 0, cap = cur->n + (prev ? prev->n : 0);
	const struct ctr *p;
	struct ctr_delta *d;

	out->v = calloc(cap ? cap : 1, sizeof(*out->v));
	out->n = 0;
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i < cur->n; i++) {
		d = &out->v[n++];
		snprintf(d->name, sizeof(d->name), "%s", cur->v[i].name);
		d->val = cur->v[i].val;
		p = prev ? ctrset_find(prev, d->name) : NULL;
		if (p) {
			d->delta = ctr_sub(p->val, d->val, &d->flags);
		} else {
			/*
			 * A whole set that was absent (module or conntrack
			 * loaded since) counted from 0 at load: its value is
			 * the delta. One counter missing from a set that was
			 * there is unknown, not its lifetime value.
			 */
			d->flags |= CTR_NEW;
			d->delta = prev && prev->n ? 0 : d->val;
		}
		d->rate = secs > 0 ? d->delta / secs : 0;
	}
	for (i = 0; prev && i < prev->n; i++) {
		if (ctrset_find(cur, prev->v[i].name))
			continue;
		d = &out->v[n++];
		snprintf(d->name, sizeof(d->name), "%s", prev->v[i].name);
		d->val = prev->v[i].val;
		d->flags = CTR_GONE;
	}
	out->n = n;
	return 0;
}

const struct ctr_delta *deltaset_find(const struct deltaset *d,
				      const char *name)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	return NULL;
}

uint64_t deltaset_get(const struct deltaset *d, const char *name)
{
	const struct ctr_delta *c = deltaset_find(d, name);

	return c ? c->delta : 0;
}

void deltaset_free(struct deltaset *d)
{
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

/* in enum order: the same lists as enum ctr_id and enum ev_id */
const char *const ctr_names[CTR_NR] = {
#define TCPTW_COUNTER(id, name, how, help) name,
#include "../kmod/uapi/tcptw_counters.h"
};

const char *const ctr_helps[CTR_NR] = {
#define TCPTW_COUNTER(id, name, how, help) help,
#include "../kmod/uapi/tcptw_counters.h"
};

const char *const ev_names[EV_NR] = {
#define TCPTW_EVENT(id, name) name,
#include "../kmod/uapi/tcptw_events.h"
};

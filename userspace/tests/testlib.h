/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_TESTLIB_H
#define _TCPTW_TESTLIB_H

/* Shared by the cmocka tests: fixture paths, file loading, a JSON checker. */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static inline const char *fixtures(void)
{
	const char *f = getenv("TCPTW_FIXTURES");

	return f ? f : "tests/fixtures";
}

/* Point the proc root at fixtures/<scenario>/<t>. */
static inline void use_tree(const char *scenario, const char *t)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/%s", fixtures(), scenario, t);
	setenv("TCPTW_PROC_ROOT", path, 1);
}

static inline char *load(const char *rel)
{
	char path[512], *buf;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fixtures(), rel);
	f = fopen(path, "r");
	assert_non_null(f);
	buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * A strict RFC 8259 checker, test-only: returns the end of one value or
 * NULL. Enough to prove the output parses back; python3 -m json.tool
 * double-checks the CLI's output in test_cli.
 */
static const char *json_value(const char *p, int depth);

static inline const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static inline const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static inline const char *json_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p;
}

static const char *json_value(const char *p, int depth)
{
	char close;

	if (depth > 64)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		close = *p == '{' ? '}' : ']';
		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

/* Every line of @s is one complete JSON document. */
static inline bool json_lines_valid(const char *s)
{
	const char *p = s;

	while (*(p = json_ws(p))) {
		p = json_value(p, 0);
		if (!p)
			return false;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '\n')
			return false;
	}
	return true;
}

#endif /* _TCPTW_TESTLIB_H */

// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <math.h>
#include <stdarg.h>

#include "output.h"

void out_init(struct out *o, FILE *f, bool json)
{
	o->f = f;
	o->json = json;
	o->pretty = false;
	o->depth = 0;
	o->comma[0] = false;
}

size_t utf8_len(const unsigned char *p)
{
	unsigned int c = p[0], n, i, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	cp = c & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void out_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', f);
	for (; *p; p++) {
		/* JSON is UTF-8: a byte that is not becomes U+FFFD */
		n = utf8_len(p);
		if (n != 1) {
			if (n)
				fwrite(p, 1, n, f);
			else
				fputs("\\ufffd", f);
			p += n ? n - 1 : 0;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* -p: a newline and two spaces per level before each member */
static void indent(struct out *o, int depth)
{
	if (o->pretty)
		fprintf(o->f, "\n%*s", 2 * depth, "");
}

/* Separator and key of the next JSON member. */
static void json_key(struct out *o, const char *key)
{
	if (o->depth > 0 && o->comma[o->depth])
		fputc(',', o->f);
	if (o->depth > 0) {
		o->comma[o->depth] = true;
		indent(o, o->depth);
	}
	if (key) {
		out_json_string(o->f, key);
		fputs(o->pretty ? ": " : ":", o->f);
	}
}

static void open_any(struct out *o, const char *key, char c)
{
	if (!o->json)
		return;
	json_key(o, key);
	fputc(c, o->f);
	if (o->depth < OUT_MAX_DEPTH - 1)
		o->depth++;
	o->comma[o->depth] = false;
}

static void close_any(struct out *o, char c)
{
	if (!o->json)
		return;
	/* a container with members closes on a line of its own */
	if (o->comma[o->depth] && o->depth > 0)
		indent(o, o->depth - 1);
	fputc(c, o->f);
	if (o->depth > 0)
		o->depth--;
	if (o->depth == 0) {
		fputc('\n', o->f);
		fflush(o->f);
	}
}

void out_obj_open(struct out *o, const char *key)
{
	open_any(o, key, '{');
}

void out_obj_close(struct out *o)
{
	close_any(o, '}');
}

void out_arr_open(struct out *o, const char *key)
{
	open_any(o, key, '[');
}

void out_arr_close(struct out *o)
{
	close_any(o, ']');
}

void out_u64(struct out *o, const char *key, const char *fmt, uint64_t v)
{
	if (o->json) {
		json_key(o, key);
		fprintf(o->f, "%llu", (unsigned long long)v);
	} else if (fmt) {
		fprintf(o->f, fmt, (unsigned long long)v);
	}
}

void out_s64(struct out *o, const char *key, const char *fmt, int64_t v)
{
	if (o->json) {
		json_key(o, key);
		fprintf(o->f, "%lld", (long long)v);
	} else if (fmt) {
		fprintf(o->f, fmt, (long long)v);
	}
}

void out_double(struct out *o, const char *key, const char *fmt, double v)
{
	if (o->json) {
		json_key(o, key);
		if (isfinite(v))
			fprintf(o->f, "%.3f", v);
		else
			fputs("null", o->f);
	} else if (fmt) {
		fprintf(o->f, fmt, v);
	}
}

void out_str(struct out *o, const char *key, const char *fmt, const char *s)
{
	if (o->json) {
		json_key(o, key);
		out_json_string(o->f, s);
	} else if (fmt) {
		fprintf(o->f, fmt, s);
	}
}

void out_bool(struct out *o, const char *key, const char *fmt, bool v)
{
	if (o->json) {
		json_key(o, key);
		fputs(v ? "true" : "false", o->f);
	} else if (fmt) {
		fprintf(o->f, fmt, v ? "yes" : "no");
	}
}

void out_null(struct out *o, const char *key, const char *fmt)
{
	if (o->json) {
		json_key(o, key);
		fputs("null", o->f);
	} else if (fmt) {
		fputs(fmt, o->f);
	}
}

void out_text(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->json)
		return;
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_OUTPUT_H
#define _TCPTW_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One code path for plain and JSON output, after iproute2's json_print:
 * every value is emitted with a JSON key and a plain printf format. In JSON
 * mode the key is used and the format ignored; in plain mode the format is
 * used (NULL: print nothing) and the key ignored. Objects and arrays only
 * exist in JSON; out_text() only in plain. A top-level object ends with a
 * newline, so a stream of samples is one JSON object per line.
 */
#define OUT_MAX_DEPTH 16

struct out {
	FILE *f;
	bool json;
	bool pretty;		/* -p: JSON indented, one member per line */
	int depth;
	bool comma[OUT_MAX_DEPTH];
};

void out_init(struct out *o, FILE *f, bool json);
void out_obj_open(struct out *o, const char *key);
void out_obj_close(struct out *o);
void out_arr_open(struct out *o, const char *key);
void out_arr_close(struct out *o);
void out_u64(struct out *o, const char *key, const char *fmt, uint64_t v);
void out_s64(struct out *o, const char *key, const char *fmt, int64_t v);
void out_double(struct out *o, const char *key, const char *fmt, double v);
void out_str(struct out *o, const char *key, const char *fmt, const char *s);
void out_bool(struct out *o, const char *key, const char *fmt, bool v);
void out_null(struct out *o, const char *key, const char *fmt);
void out_text(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A JSON string literal with its quotes, escaped per RFC 8259; bytes that
 * are not UTF-8 (a netns name can hold any) become U+FFFD.
 */
void out_json_string(FILE *f, const char *s);
/* Length of the valid UTF-8 sequence at @p (1 for ASCII), 0 if invalid. */
size_t utf8_len(const unsigned char *p);

#endif /* _TCPTW_OUTPUT_H */

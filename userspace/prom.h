/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_PROM_H
#define _TCPTW_PROM_H

#include <stdio.h>

#include "snapshot.h"

/*
 * Prometheus text exposition (format 0.0.4) of a snapshot, for
 * node_exporter's textfile collector: one family per counter, each with
 * # HELP and # TYPE once, all samples of a family together, every sample
 * labelled netns="...".
 */
/* Destinations exported per label: at most this many ... */
#define PROM_DEST_MAX 10
/* ... each holding at least this share of the ephemeral range. */
#define PROM_DEST_MIN_SHARE 0.01

int prom_write(FILE *f, const struct snapshot *s, const char *netns);
/* The same over several namespaces: add each, then emit them together. */
struct prom;
struct prom *prom_new(void);
int prom_add(struct prom *p, const struct snapshot *s, const char *netns);
int prom_emit(FILE *f, const struct prom *p);
void prom_free(struct prom *p);
/* A label value escaped into @buf: backslash, double quote, newline. */
void prom_escape(char *buf, size_t len, const char *s);
/* TwSynPawsRejected -> tw_syn_paws_rejected. */
void prom_snake(char *buf, size_t len, const char *camel);

#endif /* _TCPTW_PROM_H */

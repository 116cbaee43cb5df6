/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 */
#ifndef _TCPTW_TWAGE_H
#define _TCPTW_TWAGE_H

#include <linux/types.h>

struct inet_timewait_sock;

void tcptw_tw_birth_record(const void *tw);
/* age of @tw in ms, -1 if unknown */
s32 tcptw_tw_age_ms(const struct inet_timewait_sock *tw);

#endif /* _TCPTW_TWAGE_H */

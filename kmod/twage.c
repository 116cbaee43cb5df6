// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Age of TIME_WAIT sockets. Kernels with tw_entry_stamp say it themselves
 * (compat.h); for the others tcptw keeps birth times in a lossy
 * direct-mapped table keyed by the socket's address: one 64-bit word per
 * slot (tag << 32 | jiffies), so a reader never sees a torn entry, and a
 * slot taken over by another socket only makes the age unknown. Creation
 * always overwrites, so a reused object never inherits an old time.
 */
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <net/inet_timewait_sock.h>

#include "twage.h"

#define TW_BIRTH_BITS 16
static u64 tw_birth[1 << TW_BIRTH_BITS];

static u32 tw_birth_tag(const void *tw)
{
	return (u32)((unsigned long)tw >> 4);
}

void tcptw_tw_birth_record(const void *tw)
{
	u32 i = hash_ptr(tw, TW_BIRTH_BITS);

	WRITE_ONCE(tw_birth[i], (u64)tw_birth_tag(tw) << 32 | (u32)jiffies);
}

s32 tcptw_tw_age_ms(const struct inet_timewait_sock *tw)
{
	s32 age = tcptw_compat_tw_age_ms(tw);
	u64 v;

	if (age >= 0)
		return age;
	v = READ_ONCE(tw_birth[hash_ptr(tw, TW_BIRTH_BITS)]);
	if ((u32)(v >> 32) != tw_birth_tag(tw))
		return -1;
	return jiffies_to_msecs((u32)jiffies - (u32)v);
}

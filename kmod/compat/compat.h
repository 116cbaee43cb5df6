/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Force-included into every kmod/ file (see Kbuild). The only place with
 * kernel version or feature conditionals; everything else calls the
 * helpers below. TCPTW_HAVE_* flags come from compat/Kbuild.include.
 */
#ifndef _TCPTW_COMPAT_H
#define _TCPTW_COMPAT_H

#include <linux/version.h>
#include <linux/types.h>

#if KERNEL_VERSION(5, 10, 0) > LINUX_VERSION_CODE
#error "tcptw requires Linux >= 5.10"
#endif

/* Counters are plain u64 per-CPU slots: a 64-bit store never tears. */
#ifndef CONFIG_64BIT
#error "tcptw requires a 64-bit kernel"
#endif

#include <net/tcp.h>

/* tcp_timewait_state_process() decided to send an ACK */
static inline bool tcptw_compat_tw_is_ack(int status)
{
#ifdef TCPTW_HAVE_TW_ACK_OOW
	/* v6.16 split rate-limited out-of-window ACKs into TCP_TW_ACK_OOW */
	if (status == TCP_TW_ACK_OOW)
		return true;
#endif
	return status == TCP_TW_ACK;
}

/*
 * Age of a TIME_WAIT socket in ms from the kernel's own entry stamp, or -1
 * where the kernel has none (tcptw then keeps its own birth table).
 */
#ifdef TCPTW_HAVE_TW_ENTRY_STAMP
/* v6.14 added tw_entry_stamp (ms, tcp_clock_ms()) for tcp_tw_reuse_delay */
static inline s32 tcptw_compat_tw_age_ms(const struct inet_timewait_sock *tw)
{
	return (s32)(tcp_clock_ms() - READ_ONCE(tw->tw_entry_stamp));
}
#else
static inline s32 tcptw_compat_tw_age_ms(const struct inet_timewait_sock *tw)
{
	return -1;
}
#endif

#endif /* _TCPTW_COMPAT_H */

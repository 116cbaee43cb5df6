// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Which tcptw counters the kernel already counts, and how. A counter is
 * the sum of its per-CPU slot (what tcptw's hooks counted) and of the MIB
 * terms below, less their baseline. Counters that are a MIB alone have no
 * hook at all; the others combine a hook's count with a MIB the kernel
 * keeps for the same decision:
 *
 *   TwCreated            TW + TWKilled (6.1+, which count at birth;
 *                        5.10: tw.c's hook)
 *   TwOverflow           TCPTimeWaitOverflow
 *   TwPawsRejected       PAWSTimewait (v6.16+; earlier: tw.c's hook)
 *   TwAckSent            tw.c's count of ACK candidates, less the ones the
 *                        kernel's rate limit kept (TCPACKSkippedTimeWait,
 *                        TCPACKSkippedFinWait2)
 *   TwReuseGranted       TWRecycled
 *   ListenOverflow       ListenOverflows
 *   ListenOverflowAck    ListenOverflows less ListenOverflowSyn
 *   ListenSynDrop        TCPReqQFullDrop
 *   ListenSynCookieSent  SyncookiesSent
 *   PawsSynRecvRejected  PAWSEstab less PawsEstabRejected (and, before
 *                        v6.16, less TwPawsRejected: TIME_WAIT's rejects
 *                        were counted there)
 *   PawsActiveRejected   PAWSActive
 *   RstSent              OutRsts
 */
#include <linux/kernel.h>

#include "mib.h"
#include "pernet.h"

/* the MIB part of counter @c now, before its baseline */
static s64 mib_part(const struct net *net, enum tcptw_counter c)
{
	switch (c) {
	case TCPTW_TW_CREATED:
		if (!TCPTW_COMPAT_TW_MIB_AT_BIRTH)
			return 0;
		return tcptw_mib_linux_sum(net, LINUX_MIB_TIMEWAITED) +
		       tcptw_mib_linux_sum(net, LINUX_MIB_TIMEWAITKILLED);
	case TCPTW_TW_OVERFLOW:
		return tcptw_mib_linux_sum(net, LINUX_MIB_TCPTIMEWAITOVERFLOW);
	case TCPTW_TW_PAWS_REJECTED:
		if (!TCPTW_COMPAT_TW_PAWS_MIB)
			return 0;
		return tcptw_mib_linux_sum(net, TCPTW_COMPAT_MIB_PAWS_TW);
	case TCPTW_TW_ACK_SENT:
		/* the ACKs the rate limit kept, of the candidates counted */
		return -(s64)tcptw_mib_linux_sum(net,
						 LINUX_MIB_TCPACKSKIPPEDTIMEWAIT) -
		       (s64)tcptw_mib_linux_sum(net,
						LINUX_MIB_TCPACKSKIPPEDFINWAIT2);
	case TCPTW_TW_REUSE_GRANTED:
		return tcptw_mib_linux_sum(net, LINUX_MIB_TIMEWAITRECYCLED);
	case TCPTW_LISTEN_OVERFLOW:
	case TCPTW_LISTEN_OVERFLOW_ACK:
		return tcptw_mib_linux_sum(net, LINUX_MIB_LISTENOVERFLOWS);
	case TCPTW_LISTEN_SYN_DROP:
		return tcptw_mib_linux_sum(net, LINUX_MIB_TCPREQQFULLDROP);
	case TCPTW_LISTEN_SYN_COOKIE_SENT:
		return tcptw_mib_linux_sum(net, LINUX_MIB_SYNCOOKIESSENT);
	case TCPTW_PAWS_SYNRECV_REJECTED:
		return tcptw_mib_linux_sum(net, LINUX_MIB_PAWSESTABREJECTED);
	case TCPTW_PAWS_ACTIVE_REJECTED:
		return tcptw_mib_linux_sum(net, LINUX_MIB_PAWSACTIVEREJECTED);
	case TCPTW_RST_SENT:
		return tcptw_mib_tcp_sum(net, TCP_MIB_OUTRSTS);
	default:
		return 0;
	}
}

/* hook-counted slots a derived counter subtracts from its MIB */
static s64 slots_less(const struct tcptw_state *st, enum tcptw_counter c)
{
	switch (c) {
	case TCPTW_LISTEN_OVERFLOW_ACK:
		return tcptw_slot_sum(st, TCPTW_LISTEN_OVERFLOW_SYN);
	case TCPTW_PAWS_SYNRECV_REJECTED:
		/* before its own MIB, TIME_WAIT's rejects were in PAWSEstab */
		return tcptw_slot_sum(st, TCPTW_PAWS_ESTAB_REJECTED) +
		       (TCPTW_COMPAT_TW_PAWS_MIB ? 0 :
			tcptw_slot_sum(st, TCPTW_TW_PAWS_REJECTED));
	default:
		return 0;
	}
}

u64 tcptw_counter_read(const struct net *net, const struct tcptw_state *st,
		       enum tcptw_counter c)
{
	/* the baseline first, as in tcptw_slot_sum() */
	s64 base = smp_load_acquire(&st->mib_base[c]);
	s64 v = mib_part(net, c) - base;

	v += tcptw_slot_sum(st, c) - slots_less(st, c);
	/* a read racing a reset, or a hook ahead of the kernel's count */
	return v > 0 ? v : 0;
}

void tcptw_mib_baseline(const struct net *net, struct tcptw_state *st)
{
	int c;

	for (c = 0; c < TCPTW_NR_COUNTERS; c++)
		/* pairs with the acquire in tcptw_counter_read() */
		smp_store_release(&st->mib_base[c], mib_part(net, c));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Which tcptw counters the kernel already counts, and how. A counter is
 * the sum of its per-CPU slot (what tcptw's hooks counted) and of the
 * MIB terms below, less its value at the baseline (counters_raw()).
 * Counters that are a MIB alone have no hook at all; the others combine
 * a hook's count with a MIB the kernel keeps for the same decision:
 *
 *   TwCreated            TW + TWKilled (6.1+, which count at birth;
 *                        5.10: tw.c's hook)
 *   TwOverflow           TCPTimeWaitOverflow
 *   TwPawsRejected       PAWSTimewait (v6.16+; earlier: tw.c's hook)
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
 *   ConntrackInsertFailed  conntrack's insert_failed (net->ct.stat, as
 *                        conntrack -S shows it; ct.c)
 */
#include <linux/kernel.h>

#include "mib.h"
#include "pernet.h"

/* the MIB part of counter @c now, before its baseline */
static s64 mib_part(const struct net *net, const struct tcptw_state *st,
		    enum tcptw_counter c)
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
	case TCPTW_CONNTRACK_INSERT_FAILED:
		return tcptw_ct_insert_failed(net, st);
	default:
		return 0;
	}
}

/* hook-counted slots a derived counter subtracts from its MIB */
static s64 slots_less(const struct tcptw_state *st, enum tcptw_counter c)
{
	switch (c) {
	case TCPTW_LISTEN_OVERFLOW_ACK:
		return tcptw_slot_raw(st, TCPTW_LISTEN_OVERFLOW_SYN);
	case TCPTW_PAWS_SYNRECV_REJECTED:
		/* before its own MIB, TIME_WAIT's rejects were in PAWSEstab */
		return tcptw_slot_raw(st, TCPTW_PAWS_ESTAB_REJECTED) +
		       (TCPTW_COMPAT_TW_PAWS_MIB ? 0 :
			tcptw_slot_raw(st, TCPTW_TW_PAWS_REJECTED));
	default:
		return 0;
	}
}

/*
 * Every counter of @st now, counted since the state was made: each one
 * value, from one pass. The MIBs first, then the listeners' records
 * settled, then the slots: the slots a counter subtracts from its MIB
 * are counted at or after the hook's entry, before the kernel's MIB
 * (tw.c's PAWS rejects), or when the record is settled once the MIB
 * moved (ListenOverflowSyn): read after the MIB and the settling, they
 * are not behind it, and a read racing a decision falls short of it
 * rather than beyond. One exception: PawsEstabRejected's hook runs a few
 * instructions after the kernel's PAWSEstab, so PawsSynRecvRejected may
 * show one more for a read that falls in between. Under RCU.
 */
static void counters_raw(const struct net *net, struct tcptw_state *st,
			 s64 *v)
{
	int c;

	for (c = 0; c < TCPTW_NR_COUNTERS; c++)
		v[c] = mib_part(net, st, c);
	/* the MIBs before the slots (the writers' order is in the comment) */
	smp_rmb();
	tcptw_listen_settle(net, st);
	for (c = 0; c < TCPTW_NR_COUNTERS; c++)
		v[c] += (s64)tcptw_slot_raw(st, c) - slots_less(st, c);
}

/*
 * The counters as the counters file shows them: since the baseline, and
 * never lower than a read before showed (a read that fell short of a
 * decision in flight is the only way down).
 */
void tcptw_counters_read(const struct net *net, struct tcptw_state *st,
			 u64 *out)
{
	s64 v[TCPTW_NR_COUNTERS];
	int c;

	spin_lock(&st->count_lock);
	counters_raw(net, st, v);
	for (c = 0; c < TCPTW_NR_COUNTERS; c++) {
		v[c] -= st->count_base[c];
		if (v[c] > 0 && v[c] > st->count_shown[c])
			st->count_shown[c] = v[c];
		out[c] = st->count_shown[c];
	}
	spin_unlock(&st->count_lock);
}

void tcptw_counters_baseline(const struct net *net, struct tcptw_state *st)
{
	s64 v[TCPTW_NR_COUNTERS];
	int c;

	spin_lock(&st->count_lock);
	counters_raw(net, st, v);
	for (c = 0; c < TCPTW_NR_COUNTERS; c++) {
		st->count_base[c] = v[c];
		st->count_shown[c] = 0;
	}
	spin_unlock(&st->count_lock);
}

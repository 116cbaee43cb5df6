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

#include <linux/types.h>

/* Counters are plain u64 per-CPU slots: a 64-bit store never tears. */
#ifndef CONFIG_64BIT
#error "tcptw requires a 64-bit kernel"
#endif

#include <net/tcp.h>
#include <net/inet_hashtables.h>
#if IS_ENABLED(CONFIG_IPV6)
#include <net/inet6_hashtables.h>
#endif

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
 * A tracepoint handler's body runs with preemption disabled, as every
 * hook's does: the per-CPU counters and the event rate limit's
 * read-modify-write must not migrate half way.
 */
static inline void tcptw_compat_tp_enter(void)
{
#ifdef TCPTW_HAVE_TP_PREEMPTIBLE
	/* v6.14-ish: tracepoints call their handlers under SRCU-fast */
	preempt_disable_notrace();
#endif
}

static inline void tcptw_compat_tp_exit(void)
{
#ifdef TCPTW_HAVE_TP_PREEMPTIBLE
	preempt_enable_notrace();
#endif
}

/*
 * The ISN a TIME_WAIT socket gave the SYN @skb (TCP_TW_SYN), 0 for any
 * other SYN, as tcp_conn_request() reads it on this CPU: a SYN with one
 * skips the SYN queue's test. (5.10 and 6.1 zero it before
 * tcp_conn_request() runs, so every SYN reads 0 there.)
 */
static inline u32 tcptw_compat_tw_isn(const struct sk_buff *skb)
{
#ifdef TCPTW_HAVE_PERCPU_TW_ISN
	/* v6.12: a per-CPU variable between the TIME_WAIT and the listener */
	return __this_cpu_read(tcp_tw_isn);
#else
	return TCP_SKB_CB(skb)->tcp_tw_isn;
#endif
}

/* what an ftrace_ops callback gets besides the ips and the ops */
#ifdef TCPTW_HAVE_FTRACE_REGS
/* v5.11: struct ftrace_regs in place of struct pt_regs */
#define tcptw_ftrace_regs	ftrace_regs
#else
#define tcptw_ftrace_regs	pt_regs
#endif

/* TcpExt TW + TWKilled count every TIME_WAIT socket as it is born */
#ifdef TCPTW_HAVE_TW_MIB_AT_BIRTH
#define TCPTW_COMPAT_TW_MIB_AT_BIRTH	true
#else
/* 5.10 counts them when the socket's timer expires */
#define TCPTW_COMPAT_TW_MIB_AT_BIRTH	false
#endif

/* the kernel stamps a TIME_WAIT socket's birth itself */
#ifdef TCPTW_HAVE_TW_ENTRY_STAMP
#define TCPTW_COMPAT_TW_ENTRY_STAMP	true
#else
#define TCPTW_COMPAT_TW_ENTRY_STAMP	false
#endif

/*
 * A failed connect(), once the socket was in SYN-SENT: from 6.1 its
 * failure path calls inet_bhash2_reset_saddr(), which nothing on a clean
 * connection's path calls (reuse.c hooks its entry). 5.10 calls nothing
 * there: tcptw reads the failure from the sock:inet_sock_set_state
 * tracepoint (SYN-SENT -> CLOSE), which then also sees the births below.
 */
#ifdef TCPTW_HAVE_CONNECT_FAIL_FN
#define TCPTW_COMPAT_CONNECT_FAIL_FN	true
#else
#define TCPTW_COMPAT_CONNECT_FAIL_FN	false
#endif
/* the state-change tracepoint is needed (5.10 alone) */
#define TCPTW_COMPAT_STATE_TP		(!TCPTW_COMPAT_CONNECT_FAIL_FN)

/*
 * Where the kernel neither stamps a TIME_WAIT socket's birth nor counts
 * it at birth (before v6.14), tcptw sees each birth: on 5.10 from its
 * parent's state change (tcptw_tw_born()), in the established-hash chain
 * of @hash in @net, where inet_twsk_hashdance() put the new socket; on
 * 6.1 to 6.13, whose kernel counts it at birth (TW + TWKilled) and where
 * the tracepoint is not attached, at the entry of the function that
 * hashes it (TCPTW_COMPAT_TW_BIRTH_FN, tw.c), for its age alone.
 */
#if defined(TCPTW_HAVE_TW_ENTRY_STAMP) && defined(TCPTW_HAVE_TW_MIB_AT_BIRTH)
#define TCPTW_COMPAT_TW_BIRTH_SEEN	false
#else
#define TCPTW_COMPAT_TW_BIRTH_SEEN	true
#endif
#define TCPTW_COMPAT_TW_BIRTH_HOOK \
	(TCPTW_COMPAT_TW_BIRTH_SEEN && !TCPTW_COMPAT_STATE_TP)
#ifdef TCPTW_HAVE_TW_HASHDANCE_SCHEDULE
#define TCPTW_COMPAT_TW_BIRTH_FN	"inet_twsk_hashdance_schedule"
#else
#define TCPTW_COMPAT_TW_BIRTH_FN	"inet_twsk_hashdance"
#endif

/* the chain tcptw_tw_born() looks in (5.10); elsewhere NULL */
#if !defined(TCPTW_HAVE_CONNECT_FAIL_FN) && !defined(TCPTW_HAVE_TW_ENTRY_STAMP)
static inline struct hlist_nulls_head *
tcptw_compat_ehash_chain(const struct net *net, u32 hash)
{
	return &inet_ehash_bucket(net->ipv4.tcp_death_row.hashinfo,
				  hash)->chain;
}
#else
static inline struct hlist_nulls_head *
tcptw_compat_ehash_chain(const struct net *net, u32 hash)
{
	return NULL;
}
#endif

/*
 * The kernel counts TIME_WAIT's PAWS rejects in a MIB of their own: its
 * index, or -1 where they are counted in PAWSEstab
 */
#ifdef TCPTW_HAVE_MIB_PAWS_TW
#define TCPTW_COMPAT_MIB_PAWS_TW	LINUX_MIB_PAWS_TW_REJECTED
#else
#define TCPTW_COMPAT_MIB_PAWS_TW	(-1)
#endif
#define TCPTW_COMPAT_TW_PAWS_MIB	(TCPTW_COMPAT_MIB_PAWS_TW >= 0)

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

/*
 * Does tcp_twsk_unique() refuse sockets still in the FIN_WAIT2 substate?
 * Debian's 6.1 (6.1.192) and later do, 5.10.223 does not (Kbuild.include).
 */
static inline bool tcptw_compat_tw_reuse_checks_fin_wait2(void)
{
#ifdef TCPTW_HAVE_TW_REUSE_FIN_WAIT2
	return true;
#else
	return false;
#endif
}

/*
 * The ephemeral range connect() searches for @sk: its own
 * (IP_LOCAL_PORT_RANGE, v6.3, in Debian's 6.1 too) within the netns' one,
 * as inet_sk_get_local_port_range() computes it; the netns' one before.
 */
static inline void tcptw_compat_port_range(const struct sock *sk, int *low,
					   int *high)
{
#ifdef TCPTW_HAVE_SK_PORT_RANGE
	inet_sk_get_local_port_range(sk, low, high);
#else
	inet_get_local_port_range(sock_net(sk), low, high);
#endif
}

/*
 * connect() of a TCP_FASTOPEN_CONNECT socket with a cookie left SYN-SENT
 * without a SYN, waiting for the first write (v6.6 made the bitfield a
 * flag of inet_sock).
 */
static inline bool tcptw_compat_defer_connect(const struct sock *sk)
{
#ifdef TCPTW_HAVE_INET_FLAGS_DEFER_CONNECT
	return inet_test_bit(DEFER_CONNECT, sk);
#else
	return inet_sk(sk)->defer_connect;
#endif
}

/* the local address @sk is bound to (IPv4 in the first word) */
static inline const void *tcptw_compat_sk_bound_addr(const struct sock *sk)
{
#if IS_ENABLED(CONFIG_IPV6)
	/* skc_v6_rcv_saddr exists only with IPv6 built in */
	if (sk->sk_family == AF_INET6)
		return &sk->sk_v6_rcv_saddr;
#endif
	return &sk->sk_rcv_saddr;
}

/*
 * Why the kernel sent a RST, as an index into its own reason list plus one
 * (0: the kernel gives none), and that reason's name. @regs are the
 * registers at entry to tcp_v4_send_reset() / tcp_v6_send_reset().
 */
#ifdef TCPTW_HAVE_RST_REASON
#include <net/rstreason.h>
#include <linux/ptrace.h>
/* v6.10 added enum sk_rst_reason as the 3rd argument */
static inline u8 tcptw_compat_rst_reason(struct pt_regs *regs)
{
	unsigned long r = regs_get_kernel_argument(regs, 2);

	return r < SK_RST_REASON_MAX ? r + 1 : 0;
}

/* the names come from the target kernel's own list, never from ours */
static inline const char *tcptw_compat_rst_reason_name(u8 r)
{
#define TCPTW_RST_NAME(x)	{ SK_RST_REASON_##x, #x },
#define TCPTW_RST_NAME_END(x)
	static const struct {
		int reason;
		const char *name;
	} names[] = {
		DEFINE_RST_REASON(TCPTW_RST_NAME, TCPTW_RST_NAME_END)
	};
#undef TCPTW_RST_NAME
#undef TCPTW_RST_NAME_END
	unsigned int i;

	for (i = 0; r && i < ARRAY_SIZE(names); i++)
		if (names[i].reason == r - 1)
			return names[i].name;
	return NULL;
}

/* SYN-SENT's PAWS test rejected the SYN-ACK this RST answers */
static inline bool tcptw_compat_rst_is_paws(u8 r)
{
	return r == SK_RST_REASON_TCP_RFC7323_PAWS + 1;
}
#else
struct pt_regs;
static inline u8 tcptw_compat_rst_reason(struct pt_regs *regs)
{
	return 0;
}

static inline const char *tcptw_compat_rst_reason_name(u8 r)
{
	return NULL;
}

static inline bool tcptw_compat_rst_is_paws(u8 r)
{
	return false;
}
#endif

/*
 * The socket in @net's established hash (full, or TIME_WAIT) that holds
 * local @laddr:@lport and remote @raddr:@rport, with a reference the
 * caller drops with sock_gen_put(); NULL if none. Before v6.18-ish the
 * lookups take the netns' hash table as an argument.
 */
static inline struct sock *tcptw_compat_lookup_est4(struct net *net,
						    __be32 raddr, __be16 rport,
						    __be32 laddr, u16 lport,
						    int dif)
{
#ifdef TCPTW_HAVE_LOOKUP_EST_NO_HASHINFO
	return __inet_lookup_established(net, raddr, rport, laddr, lport,
					 dif, 0);
#else
	return __inet_lookup_established(net, net->ipv4.tcp_death_row.hashinfo,
					 raddr, rport, laddr, lport, dif, 0);
#endif
}

#if IS_ENABLED(CONFIG_IPV6)
static inline struct sock *
tcptw_compat_lookup_est6(struct net *net, const struct in6_addr *raddr,
			 __be16 rport, const struct in6_addr *laddr, u16 lport,
			 int dif)
{
#ifdef TCPTW_HAVE_LOOKUP_EST_NO_HASHINFO
	return __inet6_lookup_established(net, raddr, rport, laddr, lport,
					  dif, 0);
#else
	return __inet6_lookup_established(net,
					  net->ipv4.tcp_death_row.hashinfo,
					  raddr, rport, laddr, lport, dif, 0);
#endif
}
#endif

#endif /* _TCPTW_COMPAT_H */

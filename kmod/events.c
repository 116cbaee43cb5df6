// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * A lock-free ring per netns. Writers (probes, any CPU, BH or process
 * context) reserve a slot with one atomic increment and publish it by
 * writing its generation last; readers copy a slot and keep it only if the
 * generation is the expected one before and after the copy. A slot being
 * overwritten is skipped, never shown torn; a writer claims its slot with a
 * cmpxchg, so two writers a lap apart never write one slot at once.
 */
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/proc_fs.h>
#include <linux/capability.h>
#include <linux/time64.h>
#include <linux/ctype.h>
#include <net/net_namespace.h>

#include "pernet.h"
#include "events.h"
#include "mem.h"
#include "test.h"

unsigned int tcptw_event_ring_size = 1024;
module_param_named(event_ring_size, tcptw_event_ring_size, uint, 0444);
MODULE_PARM_DESC(event_ring_size,
		 "events kept per netns (rounded up to a power of two, 16..1048576)");

static const char * const event_names[TCPTW_NR_EVENTS] = {
#define TCPTW_EVENT(id, name) name,
#include "uapi/tcptw_events.h"
};

struct tcptw_ring *tcptw_ring_alloc(u8 *state)
{
	unsigned int n = clamp(tcptw_event_ring_size, 16U, 1U << 20);
	struct tcptw_ring *ring;
	size_t bytes;

	n = roundup_pow_of_two(n);
	bytes = struct_size(ring, ev, n);
	ring = tcptw_mem_alloc(bytes, state);
	if (!ring)
		return NULL;
	ring->mask = n - 1;
	ring->bytes = bytes;
	return ring;
}

void tcptw_ring_free(struct tcptw_ring *ring)
{
	if (ring)
		tcptw_mem_free(ring, ring->bytes);
}

void tcptw_ring_reset(struct tcptw_ring *ring)
{
	if (ring)
		WRITE_ONCE(ring->tail, atomic64_read(&ring->head));
}

/* where the payload starts: everything after gen */
#define TCPTW_EV_PAYLOAD offsetof(struct tcptw_event, time_ns)

void tcptw_ring_push(struct tcptw_ring *ring, const struct tcptw_event *ev)
{
	u64 idx, old;
	struct tcptw_event *slot;

	if (!ring)
		return;		/* no ring in this netns (status file) */
	idx = atomic64_inc_return(&ring->head) - 1;
	slot = &ring->ev[idx & ring->mask];
	old = READ_ONCE(slot->gen);

	/*
	 * Claim the slot. A writer still in it (preempted, or interrupted,
	 * for a whole lap of the ring) keeps it, as does a newer event: this
	 * one is lost rather than mixed with theirs. A successful cmpxchg is
	 * a full barrier: readers see the claim before any of the payload.
	 */
	if ((old & TCPTW_GEN_BUSY) || old > idx ||
	    cmpxchg64(&slot->gen, old, (idx + 1) | TCPTW_GEN_BUSY) != old)
		return;
	/*
	 * Everything after gen. A reader may copy the slot meanwhile: racy by
	 * design, ring_read() discards a copy whose generation moved.
	 */
	data_race(memcpy((char *)slot + TCPTW_EV_PAYLOAD,
			 (const char *)ev + TCPTW_EV_PAYLOAD,
			 sizeof(*slot) - TCPTW_EV_PAYLOAD));
	/* pairs with ring_read(): the payload is complete before gen */
	smp_wmb();
	WRITE_ONCE(slot->gen, idx + 1);
}

static bool ring_read(struct tcptw_ring *ring, u64 idx, struct tcptw_event *out)
{
	const struct tcptw_event *slot = &ring->ev[idx & ring->mask];

	if (READ_ONCE(slot->gen) != idx + 1)
		return false;
	/* pairs with the second smp_wmb() in tcptw_ring_push() */
	smp_rmb();
	/* racy by design: the generation check below discards a torn copy */
	data_race(*out = *slot);
	/* pairs with the first: a rewrite started during the copy shows */
	smp_rmb();
	return READ_ONCE(slot->gen) == idx + 1;
}

static void print_endpoint(struct seq_file *seq, const char *key, u16 family,
			   const void *addr, __be16 port)
{
	if (family == AF_INET6)
		seq_printf(seq, " %s=[%pI6c]:%u", key, addr, ntohs(port));
	else
		seq_printf(seq, " %s=%pI4:%u", key, addr, ntohs(port));
}

/* Per-event reason word; 0 means none. */
static const char *tcptw_event_reason(const struct tcptw_event *ev)
{
	if ((ev->type == TCPTW_EV_TW_REUSE_DENIED ||
	     ev->type == TCPTW_EV_CONNECT_PORT_EXHAUSTED ||
	     ev->type == TCPTW_EV_CONNECT_TUPLE_IN_USE) && ev->reason &&
	    ev->reason < TCPTW_NR_REUSE_REASONS)
		return tcptw_reuse_reason_names[ev->reason];
	if (ev->type == TCPTW_EV_LISTEN_OVERFLOW)
		return ev->reason == TCPTW_LISTEN_REASON_SYN ? "syn" : "ack";
	if (ev->type == TCPTW_EV_RST_SENT)
		return tcptw_compat_rst_reason_name(ev->reason) ?: "-";
	return "-";
}

/* the kernel's own reason names are upper case; ours are lower case */
static void print_reason(struct seq_file *seq, const char *r)
{
	seq_puts(seq, " reason=");
	while (*r)
		seq_putc(seq, tolower(*r++));
}

static void event_show(struct seq_file *seq, const struct tcptw_event *ev,
		       u64 seqno)
{
	struct timespec64 ts = ns_to_timespec64(ev->time_ns);

	seq_printf(seq, "%lld.%09ld %s", (s64)ts.tv_sec, ts.tv_nsec,
		   ev->type < TCPTW_NR_EVENTS ? event_names[ev->type] : "?");
	if (ev->flags & TCPTW_EV_NO_TUPLE) {
		seq_puts(seq, " src=- dst=-");
	} else {
		print_endpoint(seq, "src", ev->t.family, &ev->t.saddr,
			       ev->t.sport);
		print_endpoint(seq, "dst", ev->t.family, &ev->t.daddr,
			       ev->t.dport);
	}
	if (ev->age_ms >= 0)
		seq_printf(seq, " age_ms=%d", ev->age_ms);
	else
		seq_puts(seq, " age_ms=-");
	if (ev->flags & TCPTW_EV_HAS_TSVAL)
		seq_printf(seq, " tsval=%u", ev->tsval);
	else
		seq_puts(seq, " tsval=-");
	if (ev->flags & TCPTW_EV_HAS_TS_RECENT)
		seq_printf(seq, " ts_recent=%u", ev->ts_recent);
	else
		seq_puts(seq, " ts_recent=-");
	print_reason(seq, tcptw_event_reason(ev));
	/* appended tokens (docs/proc-format.md: new key=value tokens go last) */
	if (ev->flags & TCPTW_EV_HAS_IDLE)
		seq_printf(seq, " idle_ms=%u", ev->idle_ms);
	/*
	 * The event's number in this netns, from 1, never reused (a reset
	 * does not restart it): a reader that follows the file sees what it
	 * missed as a gap.
	 */
	seq_printf(seq, " seq=%llu", seqno);
	seq_putc(seq, '\n');
}

/* seq_file iteration: *pos counts from the oldest event still in the ring */
struct events_iter {
	struct seq_net_private p;	/* must be first (seq_file_net) */
	u64 first;
	u64 last;
};

static void *events_start(struct seq_file *seq, loff_t *pos)
	__acquires(RCU)
{
	struct events_iter *it = seq->private;
	struct net *net = seq_file_net(seq);
	struct tcptw_state *st;
	u64 head, tail, size;

	rcu_read_lock();
	/* events name peers: like /proc/net/nf_conntrack, admins only */
	if (!file_ns_capable(seq->file, net->user_ns, CAP_NET_ADMIN))
		return ERR_PTR(-EPERM);
	st = tcptw_state(net);
	if (!st || !st->ring)
		return NULL;
	if (*pos == 0) {
		/* the listener decisions made since their hooks ran, first */
		tcptw_listen_settle(net, st);
		head = atomic64_read(&st->ring->head);
		tail = READ_ONCE(st->ring->tail);
		size = (u64)st->ring->mask + 1;
		it->first = max(tail, head > size ? head - size : 0);
		it->last = head;
	}
	if (it->first + *pos >= it->last)
		return NULL;
	return st;
}

static void *events_next(struct seq_file *seq, void *v, loff_t *pos)
{
	struct events_iter *it = seq->private;

	++*pos;
	return it->first + *pos < it->last ? v : NULL;
}

static void events_stop(struct seq_file *seq, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int events_show(struct seq_file *seq, void *v)
{
	struct events_iter *it = seq->private;
	struct tcptw_state *st = v;
	struct tcptw_event ev;

	/* overwritten since start(): skip rather than show it torn */
	if (ring_read(st->ring, it->first + seq->index, &ev))
		event_show(seq, &ev, ev.gen);
	return 0;
}

static const struct seq_operations events_seq_ops = {
	.start = events_start,
	.next = events_next,
	.stop = events_stop,
	.show = events_show,
};

int tcptw_events_proc_init(struct proc_dir_entry *dir)
{
	if (!proc_create_net("events", 0444, dir, &events_seq_ops,
			     sizeof(struct events_iter)))
		return -ENOMEM;
	return 0;
}

#ifdef TCPTW_TEST
#include "selftest/ring.c"
#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * The event ring's self-test, run at load by the test build
 * (kmod/main.c), included at the end of events.c for its internals: a
 * lap and a bit of the ring, a writer still in its slot, a reset.
 */

bool __init tcptw_ring_selftest(unsigned int *checks)
{
	struct tcptw_event ev = {}, got;
	struct tcptw_ring *ring;
	u64 n, idx, lost;
	bool ok = false;
	u8 state;

	ring = tcptw_ring_alloc(&state);
	if (!ring)
		return tcptw_st_nomem("ring: alloc");
	n = ring->mask + 1;
	/* n + 5 events: the first 5 overwritten, the others each in place */
	for (idx = 0; idx < n + 5; idx++) {
		ev.age_ms = idx;
		ev.type = idx % TCPTW_NR_EVENTS;
		tcptw_ring_push(ring, &ev);
	}
	for (idx = 0; idx < n + 5; idx++) {
		bool there = ring_read(ring, idx, &got);

		if (!tcptw_st_check("ring: the last lap readable", there,
				    idx >= 5, checks))
			goto out;
		if (there &&
		    (!tcptw_st_check("ring: an event's payload", got.age_ms,
				     idx, checks) ||
		     !tcptw_st_check("ring: an event's type", got.type,
				     idx % TCPTW_NR_EVENTS, checks)))
			goto out;
	}
	/* a writer still in the next slot (preempted a lap ago) keeps it */
	lost = atomic64_read(&ring->head);
	WRITE_ONCE(ring->ev[lost & ring->mask].gen,
		   (lost + 1 - n) | TCPTW_GEN_BUSY);
	ev.age_ms = 1;
	tcptw_ring_push(ring, &ev);
	ev.age_ms = 2;
	tcptw_ring_push(ring, &ev);
	if (!tcptw_st_check("ring: a busy slot's event lost",
			    ring_read(ring, lost, &got), 0, checks) ||
	    !tcptw_st_check("ring: the next one kept",
			    ring_read(ring, lost + 1, &got) && got.age_ms == 2,
			    1, checks))
		goto out;
	/* a reset shows nothing before it */
	tcptw_ring_reset(ring);
	ok = tcptw_st_check("ring: reset moves the tail to the head",
			    ring->tail, atomic64_read(&ring->head), checks);
out:
	tcptw_ring_free(ring);
	return ok;
}

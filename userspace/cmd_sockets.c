// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw sockets: the sock_diag census per endpoint. */

#include <stdio.h>
#include <string.h>

#include "util.h"
#include "census.h"

static void print_eps(struct out *o, const char *key,
		      const struct census *c, const struct census_ep *v,
		      size_t n, bool remote)
{
	size_t i;

	out_arr_open(o, key);
	out_text(o, "%-40s %8s %8s %8s %8s%s\n",
		 remote ? "remote endpoint" : "local port", "estab",
		 "timewait", "synrecv", "synsent",
		 remote ? "   range%" : "");
	for (i = 0; i < n; i++) {
		char ep[64];

		if (remote)
			snprintf(ep, sizeof(ep), "%s:%u", v[i].addr,
				 v[i].port);
		else
			snprintf(ep, sizeof(ep), "%u", v[i].port);
		out_obj_open(o, NULL);
		if (remote) {
			out_str(o, "addr", NULL, v[i].addr);
			out_u64(o, "port", NULL, v[i].port);
			out_text(o, "%-40s", ep);
		} else {
			out_u64(o, "port", "%-40llu", v[i].port);
		}
		out_u64(o, "established", " %8llu", v[i].n[CS_ESTAB]);
		out_u64(o, "time_wait", " %8llu", v[i].n[CS_TIME_WAIT]);
		out_u64(o, "syn_recv", " %8llu", v[i].n[CS_SYN_RECV]);
		out_u64(o, "syn_sent", " %8llu", v[i].n[CS_SYN_SENT]);
		if (remote) {
			out_u64(o, "ephemeral_in_use", NULL, v[i].ephemeral);
			out_double(o, "range_share", NULL,
				   census_share(c, &v[i]));
			out_text(o, " %7.1f%%", 100 * census_share(c, &v[i]));
		}
		out_text(o, "\n");
		out_obj_close(o);
	}
	out_arr_close(o);
}

int cmd_sockets(const struct opts *opt)
{
	struct snapshot s;
	struct out o;
	int st;

	snapshot_take(&s, SNAP_CENSUS);
	if (s.census_err) {
		fprintf(stderr, "tcptw: %s: %s\n",
			s.census.why ? s.census.why : "sock_diag dump",
			strerror(-s.census_err));
		snapshot_free(&s);
		return EXIT_RUNTIME;
	}
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	print_header(&o, opt->label, s.ts);
	out_obj_open(&o, "port_range");
	out_u64(&o, "lo", "ephemeral range %llu", s.census.port_lo);
	out_u64(&o, "hi", "-%llu", s.census.port_hi);
	out_u64(&o, "size", " (%llu ports)\n",
		s.census.port_hi - s.census.port_lo + 1);
	out_obj_close(&o);
	/* the same object as watch's "sockets" */
	out_obj_open(&o, "sockets");
	out_text(&o, "total:");
	for (st = 0; st < CS_OTHER; st++)
		out_u64(&o, census_state_name(st), NULL, s.census.total[st]);
	out_text(&o, " established %u, time_wait %u, syn_recv %u, syn_sent %u\n\n",
		 s.census.total[CS_ESTAB],
		 s.census.total[CS_TIME_WAIT], s.census.total[CS_SYN_RECV],
		 s.census.total[CS_SYN_SENT]);
	out_obj_close(&o);
	print_eps(&o, "remote", &s.census, s.census.remote,
		  s.census.nremote < 20 ? s.census.nremote : 20, true);
	out_text(&o, "\n");
	print_eps(&o, "local", &s.census, s.census.local,
		  s.census.nlocal < 20 ? s.census.nlocal : 20, false);
	out_obj_close(&o);
	snapshot_free(&s);
	return EXIT_OK;
}

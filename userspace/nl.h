/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
/* One request and its replies over libmnl, for ct.c and census.c. */
#ifndef _TCPTW_NL_H
#define _TCPTW_NL_H

#include <stddef.h>
#include <libmnl/libmnl.h>

/* a reply that never comes must not hang export or watch: 5 s */
int nl_set_timeout(struct mnl_socket *nl);
/*
 * Send @nlh (in @buf) and run @cb over the replies with @data until the
 * kernel is done with its sequence number. 0, or -errno (a callback that
 * failed sets errno, or leaves its own error in @data).
 */
int nl_talk(struct mnl_socket *nl, char *buf, size_t len,
	    const struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

#endif /* _TCPTW_NL_H */

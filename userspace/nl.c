// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "nl.h"

int nl_set_timeout(struct mnl_socket *nl)
{
	static const struct timeval timeout = { .tv_sec = 5 };

	if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO,
		       &timeout, sizeof(timeout)) < 0)
		return -errno;
	return 0;
}

int nl_talk(struct mnl_socket *nl, char *buf, size_t len,
	    const struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	/* read before the replies overwrite @buf, where @nlh lives */
	unsigned int portid = mnl_socket_get_portid(nl), seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, len);
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, seq, portid, cb, data);
	} while (ret > MNL_CB_STOP);
	return ret < 0 ? -errno : 0;
}

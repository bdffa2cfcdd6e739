/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Which interface the kernel's route to an address leaves by: one
 * RTM_GETROUTE request on a NETLINK_ROUTE socket (no privileges needed), as
 * `ip route get ADDR` asks. Pure C, no Open MPI headers.
 */
#ifndef EBTL_ROUTE_H
#define EBTL_ROUTE_H

/* The ifindex the route to addr (family AF_INET or AF_INET6; 4 or 16 bytes,
 * network byte order) leaves by, or -1 when there is no route (unreachable,
 * blackhole, prohibit, no default) or netlink fails. */
int ebtl_route_oif(int family, const void *addr);

/* A route lookup as the path choice takes it, so that tests can give their
 * own: the ifindex to addr, or -1. */
typedef struct ebtl_route {
    int (*oif)(void *ctx, int family, const void *addr);
    void *ctx;
} ebtl_route_t;

/* The kernel's (ebtl_route_oif). */
extern const ebtl_route_t ebtl_route_kernel;

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Route lookup by netlink: which interface the route to an address leaves by. */
#include "ebtl_route.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Everything the kernel answers about one route fits easily (a few hundred
 * bytes); a longer answer is refused (MSG_TRUNC). */
#define ROUTE_REPLY_BYTES 8192

/* The interface of a route reply, or -1: only a route data can take
 * (unicast, or local for our own addresses); IPv6 answers an address it
 * has no route to with a route of type unreachable by lo. */
static int reply_oif(struct nlmsghdr *nh)
{
    if (nh->nlmsg_len < NLMSG_SPACE(sizeof(struct rtmsg))) {
        return -1;
    }
    struct rtmsg *rtm = NLMSG_DATA(nh);
    if (rtm->rtm_type != RTN_UNICAST && rtm->rtm_type != RTN_LOCAL) {
        return -1;
    }
    int oif = -1;
    int len = (int) (nh->nlmsg_len - NLMSG_SPACE(sizeof(struct rtmsg)));
    for (struct rtattr *rta = RTM_RTA(rtm); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        if (rta->rta_type == RTA_OIF && RTA_PAYLOAD(rta) >= sizeof(int)) {
            memcpy(&oif, RTA_DATA(rta), sizeof(int));
        }
    }
    return oif > 0 ? oif : -1;
}

int ebtl_route_oif(int family, const void *addr)
{
    size_t alen = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
    if (alen == 0 || addr == NULL) {
        return -1;
    }
    struct {
        struct nlmsghdr nh;
        struct rtmsg rt;
        char attrs[RTA_SPACE(16)];
    } req;
    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
    req.nh.nlmsg_type = RTM_GETROUTE;
    req.nh.nlmsg_flags = NLM_F_REQUEST;
    req.nh.nlmsg_seq = 1;   /* a socket of its own: one request */
    req.rt.rtm_family = (unsigned char) family;
    req.rt.rtm_dst_len = (unsigned char) (alen * 8);
    struct rtattr *rta = (struct rtattr *) ((char *) &req + NLMSG_ALIGN(req.nh.nlmsg_len));
    rta->rta_type = RTA_DST;
    rta->rta_len = (unsigned short) RTA_LENGTH(alen);
    memcpy(RTA_DATA(rta), addr, alen);
    req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_SPACE(alen);

    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        return -1;
    }
    struct timeval tv = {.tv_sec = 1};   /* the kernel answers at once; never hang */
    (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int oif = -1;
    if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof(kernel))
        != (ssize_t) req.nh.nlmsg_len) {
        goto out;
    }
    /* Our answer, skipping anything else (there should be nothing else). */
    for (int tries = 0; tries < 4; tries++) {
        union {
            struct nlmsghdr nh;
            char bytes[ROUTE_REPLY_BYTES];
        } buf;
        struct sockaddr_nl from;
        struct iovec iov = {.iov_base = buf.bytes, .iov_len = sizeof(buf.bytes)};
        struct msghdr msg = {.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
                             .msg_iovlen = 1};
        ssize_t n = recvmsg(fd, &msg, 0);
        if (n < 0 || (msg.msg_flags & MSG_TRUNC) != 0) {
            goto out;
        }
        if (msg.msg_namelen < sizeof(from) || from.nl_pid != 0) {
            continue;   /* not from the kernel */
        }
        int len = (int) n;
        for (struct nlmsghdr *nh = &buf.nh; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
            if (nh->nlmsg_seq != req.nh.nlmsg_seq) {
                continue;
            }
            if (nh->nlmsg_type == RTM_NEWROUTE) {
                oif = reply_oif(nh);
            }
            goto out;   /* the answer, or NLMSG_ERROR: no route */
        }
    }
out:
    close(fd);
    return oif;
}

static int kernel_oif(void *ctx, int family, const void *addr)
{
    (void) ctx;
    return ebtl_route_oif(family, addr);
}

const ebtl_route_t ebtl_route_kernel = {kernel_oif, NULL};

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The core every layer of the sctp transport stands on: the table of
 * links, the socket options of the configuration, the receive buffer and
 * one read off a socket, and packet sizing. It calls nothing above it.
 */
#include "btl_sctp_core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <usrsctp.h>

/* --------------------------------------------------------------- links */

int bsctp_core_link(bsctp_stack_t *st, const ebtl_sockaddr_t *udp, size_t nic, uint16_t sctp_port,
                    bool stranger)
{
    for (uint32_t i = 0; i < st->num_links; i++) {
        for (int k = 0; k < st->links[i].num_paths; k++) {
            if (ebtl_sockaddr_equal(&st->links[i].paths[k].udp, udp)) {
                if (!stranger) {
                    bsctp_core_link_known(st, i, sctp_port);
                }
                return (int) i;
            }
        }
    }
    if (st->num_links >= 0xfffffeu) {
        return -1;   /* conn mode's AF_CONN address holds 24 bits of index */
    }
    if (st->num_links == st->cap_links) {
        uint32_t cap = st->cap_links ? st->cap_links * 2 : 16;
        bsctp_link_t *n = realloc(st->links, cap * sizeof(*n));
        if (n == NULL) {
            return -1;
        }
        st->links = n;
        st->cap_links = cap;
    }
    uint32_t i = st->num_links++;
    bsctp_link_t *l = &st->links[i];
    memset(l, 0, sizeof(*l));
    l->udp = *udp;
    l->paths[0].udp = *udp;
    l->paths[0].nic = (uint16_t) nic;
    l->num_paths = 1;
    l->sctp_port = sctp_port;
    l->in_use = true;
    l->stranger = stranger;
    if (stranger) {
        st->strangers++;
    }
    return (int) i;
}

void bsctp_core_link_known(bsctp_stack_t *st, uint32_t link, uint16_t sctp_port)
{
    bsctp_link_t *l = &st->links[link];
    if (l->stranger && sctp_port != 0) {
        l->sctp_port = sctp_port;
    }
}

int bsctp_core_add_path(bsctp_stack_t *st, uint32_t link, size_t nic, const ebtl_sockaddr_t *udp)
{
    bsctp_link_t *l = &st->links[link];
    for (int k = 0; k < l->num_paths; k++) {
        if (l->paths[k].nic == nic && ebtl_sockaddr_equal(&l->paths[k].udp, udp)) {
            return 0;
        }
    }
    if (l->num_paths >= BSCTP_MAX_PATHS) {
        return -1;
    }
    bsctp_path_t *p = &l->paths[l->num_paths++];
    memset(p, 0, sizeof(*p));
    p->udp = *udp;
    p->nic = (uint16_t) nic;
    st->multipath = true;
    return 0;
}

int bsctp_core_link_of_source(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *udp,
                              int *path)
{
    uint32_t c = st->last_rx_link;
    int from_cache = -1;
    if (c < st->num_links) {
        const bsctp_link_t *l = &st->links[c];
        for (int k = 0; k < l->num_paths && from_cache < 0; k++) {
            if (l->paths[k].nic == nic && ebtl_sockaddr_equal(&l->paths[k].udp, udp)) {
                from_cache = k;
            }
        }
        if (from_cache >= 0) {
            *path = from_cache;
            return (int) c;
        }
    }
    /* Linear: fine for the peers of one job on one host; a hash when it
     * shows. The peer's address on another of our sockets (a routed pair
     * the peer chose the other way round) still names its link. */
    int link = -1;
    for (uint32_t i = 0; i < st->num_links; i++) {
        const bsctp_link_t *l = &st->links[i];
        for (int k = 0; k < l->num_paths; k++) {
            if (!ebtl_sockaddr_equal(&l->paths[k].udp, udp)) {
                continue;
            }
            if (l->paths[k].nic == nic) {
                st->last_rx_link = i;
                *path = k;
                return (int) i;
            }
            if (link < 0) {
                link = (int) i;
                *path = k;
            }
        }
    }
    return link;
}

void bsctp_core_links_free(bsctp_stack_t *st)
{
    free(st->links);
    st->links = NULL;
    st->num_links = st->cap_links = 0;
}

/* ------------------------------------------------------------- sockets */

static int opt(struct socket *so, int level, int name, const void *val, socklen_t len,
               const char *what, char *err, size_t errlen)
{
    if (usrsctp_setsockopt(so, level, name, val, len) != 0) {
        snprintf(err, errlen, "usrsctp socket option %s: %s", what, strerror(errno));
        return -1;
    }
    return 0;
}

static uint32_t clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
    return v < lo ? lo : v > hi ? hi : (uint32_t) v;
}

void bsctp_core_sysctls(void)
{
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    /* No limit on one chunk's retransmissions: usrsctp's (30) aborted an
     * association after about 3 s of them, whatever btl_sctp_peer_timeout
     * said: a peer computing that long without calling MPI (its stack
     * runs only in its progress in conn mode) was declared lost. The
     * association's own limit, peer_timeout / rto_max, decides. */
    usrsctp_sysctl_set_sctp_max_retran_chunk(0);
}

int bsctp_core_set_options(bsctp_stack_t *st, struct socket *so, char *err, size_t errlen)
{
    const bsctp_stack_config_t *c = &st->cfg;
    int one = 1;
    int rcv = (int) c->so_rcvbuf, snd = (int) c->so_sndbuf;
    /* Retransmissions to a peer that does not answer (busy outside MPI:
     * in conn mode its stack runs only in its progress) before it is
     * declared lost: peer_timeout / rto_max. */
    uint16_t maxrxt = (uint16_t) clamp_u32(c->peer_timeout_ms / (c->rto_max_ms ? c->rto_max_ms : 1),
                                           2, 65535);
    struct sctp_initmsg init = {
        .sinit_num_ostreams = c->streams,
        .sinit_max_instreams = c->streams,
        .sinit_max_attempts = maxrxt,
        .sinit_max_init_timeo = (uint16_t) clamp_u32(c->rto_max_ms, 1, 65535),
    };
    struct sctp_rtoinfo rto = {
        .srto_assoc_id = SCTP_FUTURE_ASSOC,
        .srto_initial = c->rto_init_ms,
        .srto_max = c->rto_max_ms,
        .srto_min = c->rto_min_ms,
    };
    struct sctp_assocparams assoc = {.sasoc_assoc_id = SCTP_FUTURE_ASSOC, .sasoc_asocmaxrxt = maxrxt};
    /* Heartbeats (cfg.heartbeat_ms 0 where the mode's stack could not
     * answer them while the process computes). usrsctp's path MTU is fixed
     * at 1500: raise it to what the UDP datagrams carry. */
    uint32_t hb = c->heartbeat_ms;
    struct sctp_paddrparams pp;
    memset(&pp, 0, sizeof(pp));
    pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
    pp.spp_flags = SPP_PMTUD_DISABLE | (hb ? SPP_HB_ENABLE : SPP_HB_DISABLE);
    pp.spp_hbinterval = hb;
    pp.spp_pathmtu = c->pmtu;
    /* A multihomed association leaves a path that stops answering after
     * path_max_retrans timeouts (new data goes by another address); the
     * association itself lasts peer_timeout. */
    pp.spp_pathmaxrxt = c->path_max_retrans ? c->path_max_retrans : maxrxt;
    struct sctp_assoc_value burst = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = c->max_burst};
    struct sctp_sack_info sack = {
        .sack_assoc_id = SCTP_FUTURE_ASSOC, .sack_delay = c->sack_delay_ms, .sack_freq = c->sack_freq};
    /* Level 2: a message partly delivered blocks neither other peers nor
     * the association's other streams; btl_sctp_assoc.c reassembles per
     * link and stream (usrsctp interleaves streams at level 1 too). */
    int interleave = 2;

    if (opt(so, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv), "SO_RCVBUF", err, errlen)
        || opt(so, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd), "SO_SNDBUF", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one, sizeof(one), "SCTP_RECVRCVINFO", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof(one), "SCTP_NODELAY", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &interleave, sizeof(interleave),
               "SCTP_FRAGMENT_INTERLEAVE", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof(init), "SCTP_INITMSG", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_RTOINFO, &rto, sizeof(rto), "SCTP_RTOINFO", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_ASSOCINFO, &assoc, sizeof(assoc), "SCTP_ASSOCINFO", err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp), "SCTP_PEER_ADDR_PARAMS",
               err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_DELAYED_SACK, &sack, sizeof(sack), "SCTP_DELAYED_SACK",
               err, errlen)
        || opt(so, IPPROTO_SCTP, SCTP_MAX_BURST, &burst, sizeof(burst), "SCTP_MAX_BURST", err,
               errlen)
        || (st->explicit_eor
            && opt(so, IPPROTO_SCTP, SCTP_EXPLICIT_EOR, &one, sizeof(one), "SCTP_EXPLICIT_EOR",
                   err, errlen))) {
        return -1;
    }
    /* Explicit EOR: a message can go in pieces, the headers and then the
     * payload from the user's buffer (btl_sctp_assoc.c), which saves a
     * copy. It also lets usrsctp take part of a message, so assoc.c sends
     * one only when all of it fits in what usrsctp made of SO_SNDBUF. */
    int got = 0;
    socklen_t gotlen = sizeof(got);
    st->sndbuf_limit = usrsctp_getsockopt(so, SOL_SOCKET, SO_SNDBUF, &got, &gotlen) == 0 && got > 0
                           ? (size_t) got : c->so_sndbuf;
    /* A message arrives whole when it fits half the receive buffer (usrsctp
     * caps the point there and refuses one above the buffer): no copy into
     * a reassembly buffer. */
    got = 0;
    gotlen = sizeof(got);
    uint32_t pd_point = (uint32_t) c->max_msg;
    if (usrsctp_getsockopt(so, SOL_SOCKET, SO_RCVBUF, &got, &gotlen) == 0 && got > 0
        && (uint32_t) got < pd_point) {
        pd_point = (uint32_t) got;
    }
    if (opt(so, IPPROTO_SCTP, SCTP_PARTIAL_DELIVERY_POINT, &pd_point, sizeof(pd_point),
            "SCTP_PARTIAL_DELIVERY_POINT", err, errlen)) {
        return -1;
    }
    static const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT,
                                      SCTP_PARTIAL_DELIVERY_EVENT};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i], .se_on = 1};
        if (opt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev), "SCTP_EVENT", err, errlen)) {
            return -1;
        }
    }
    return 0;
}

static const char *family_name(int family)
{
    return family == AF_CONN ? "AF_CONN" : family == AF_INET6 ? "AF_INET6" : "AF_INET";
}

struct socket *bsctp_core_socket(bsctp_stack_t *st, int family, char *err, size_t errlen)
{
    const char *type = st->so_type == SOCK_STREAM ? "SOCK_STREAM" : "SOCK_SEQPACKET";
    struct socket *so = usrsctp_socket(family, st->so_type, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (so == NULL) {
        snprintf(err, errlen, "usrsctp_socket(%s, %s): %s", family_name(family), type,
                 strerror(errno));
        return NULL;
    }
    if (usrsctp_set_non_blocking(so, 1) != 0) {
        snprintf(err, errlen, "usrsctp_set_non_blocking: %s", strerror(errno));
    } else if (bsctp_core_set_options(st, so, err, errlen) == 0) {
        return so;
    }
    int e = errno;
    usrsctp_close(so);
    errno = e ? e : EIO;
    return NULL;
}

long bsctp_core_recv(bsctp_stack_t *st, struct socket *so, bsctp_read_t *r)
{
    socklen_t infolen = sizeof(r->rcv);
    unsigned infotype = 0;
    memset(&r->from, 0, sizeof(r->from));
    r->fromlen = sizeof(r->from);
    r->flags = 0;
    ssize_t n = usrsctp_recvv(so, st->rxbuf, st->rxbuf_size, (struct sockaddr *) &r->from,
                              &r->fromlen, &r->rcv, &infolen, &infotype, &r->flags);
    r->has_info = infotype == SCTP_RECVV_RCVINFO;
    return n;
}

int bsctp_core_alloc_rxbuf(bsctp_stack_t *st, char *err, size_t errlen)
{
    st->rxbuf_size = st->cfg.max_msg;
    st->rxbuf = malloc(st->rxbuf_size);
    if (st->rxbuf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void bsctp_core_free_rxbuf(bsctp_stack_t *st)
{
    free(st->rxbuf);
    st->rxbuf = NULL;
}

/* ------------------------------------------------------- packet sizing */

void bsctp_core_clamp_pmtu(bsctp_stack_t *st, uint32_t limit)
{
    if (st->cfg.pmtu == 0 || st->cfg.pmtu > limit) {
        st->cfg.pmtu = limit;
    }
    st->cfg.pmtu &= ~3u;   /* SCTP wants a multiple of 4 */
}

/* Bytes of a packet that are not message data, counted high so that it
 * holds in both modes (on AF_CONN usrsctp takes only the DATA chunk header
 * off the path MTU, measured; over IP it takes an IP header and the common
 * header too): IPv6, the common header, a DATA chunk header. Too high only
 * wastes a few bytes per packet. */
#define PACKET_OVERHEAD (40 + 12 + 16)

size_t bsctp_core_whole_packets(const bsctp_stack_t *st, size_t len)
{
    size_t pmtu = st->cfg.pmtu;
    size_t per_packet = pmtu > PACKET_OVERHEAD ? (pmtu - PACKET_OVERHEAD) & ~(size_t) 3 : 0;
    if (per_packet == 0 || len <= per_packet) {
        return len;
    }
    return len / per_packet * per_packet;
}

/*
 * usrsctp in conn mode and the UDP layer beneath it. usrsctp runs no
 * threads here: every packet it emits leaves through bsctp_conn_output on
 * the caller's thread, every datagram we read goes in through
 * usrsctp_conninput, and its timers advance only when a poll calls
 * usrsctp_handle_timers. All of it happens inside progress.
 */
#include "btl_sctp_stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <usrsctp.h>

#include "btl_sctp_mem.h"
#include "ebtl_crc32c.h"

/* Stacks one process may hold (MPI: one, or one per interface in the
 * one-to-one style; tests: two). */
#define BSCTP_MAX_STACKS 16
/* Links created by unknown senders' INITs before we stop taking more. */
#define BSCTP_MAX_STRANGERS 1024
/* UDP batches read from one socket per pass at most. */
#define RX_BATCHES_PER_PASS 4
/* Bytes the path MTU given to usrsctp stays under the UDP payload limit. */
#define PMTU_MARGIN 32
/* How long close waits for the peers to acknowledge the shutdown. */
#define CLOSE_WAIT_MS 500

static bsctp_stack_t *stacks[BSCTP_MAX_STACKS];
static int stacks_open;
/* usrsctp's clock is the process's: every stack advances it from here, or
 * with two stacks it would run twice as fast. */
static uint64_t last_tick_ms;

/* ------------------------------------------------------ AF_CONN addresses */

/* instance+1 in the bits above 24, link+1 below: never NULL, and usrsctp
 * only compares it and hands it back to bsctp_conn_output. */
void *bsctp_stack_conn_addr(const bsctp_stack_t *st, uint32_t link)
{
    return (void *) (((uintptr_t) (st->instance + 1) << 24) | ((uintptr_t) link + 1));
}

bsctp_stack_t *bsctp_stack_from_conn_addr(const void *addr, uint32_t *link)
{
    uintptr_t v = (uintptr_t) addr;
    uintptr_t inst = (v >> 24) - 1, l = (v & 0xffffffu) - 1;
    if (v == 0 || (v & 0xffffffu) == 0 || inst >= BSCTP_MAX_STACKS || stacks[inst] == NULL
        || l >= stacks[inst]->num_links) {
        return NULL;
    }
    *link = (uint32_t) l;
    return stacks[inst];
}

/* ------------------------------------------------------------ CRC32c */

/* usrsctp's own CRC32c is a table-driven loop over its mbufs, about as
 * costly as a copy; ours (common/ebtl_crc32c: carry-less multiplication or
 * the SSE4.2 instruction) runs over the linear packet conn mode hands us.
 * Byte 8..11: the checksum field. */
#define CSUM_OFF 8

uint32_t bsctp_packet_crc32c(const uint8_t *pkt, size_t len)
{
    static const uint8_t zero[4];
    uint32_t c = ebtl_crc32c(0, pkt, CSUM_OFF);
    c = ebtl_crc32c(c, zero, sizeof(zero));
    return ebtl_crc32c(c, pkt + CSUM_OFF + 4, len - CSUM_OFF - 4);
}

static void csum_store(uint8_t *pkt, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        pkt[CSUM_OFF + i] = (uint8_t) (v >> (8 * i));
    }
}

static uint32_t csum_load(const uint8_t *pkt)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        v |= (uint32_t) pkt[CSUM_OFF + i] << (8 * i);
    }
    return v;
}

/* ------------------------------------------------ addressing (assoc.c) */

void bsctp_stack_peer_sockaddr(const bsctp_stack_t *st, uint32_t link,
                              struct sockaddr_storage *ss, socklen_t *len)
{
    if (st->cfg.inet) {
        bsctp_inet_peer_sockaddr(st, link, ss, len);
        return;
    }
    struct sockaddr_conn to;
    memset(&to, 0, sizeof(to));
    to.sconn_family = AF_CONN;
    to.sconn_port = htons(st->links[link].sctp_port);
    to.sconn_addr = bsctp_stack_conn_addr(st, link);
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, &to, sizeof(to));
    *len = sizeof(to);
}

void bsctp_stack_prepare_send(bsctp_stack_t *st, uint32_t link)
{
    if (st->cfg.inet) {
        bsctp_inet_prepare_send(st, link);
    }
}

int bsctp_stack_link_of_sockaddr(bsctp_stack_t *st, const struct sockaddr *sa, socklen_t len,
                                bool create)
{
    if (st->cfg.inet) {
        return bsctp_inet_link_of_sockaddr(st, sa, len, create);
    }
    struct sockaddr_conn sc;
    uint32_t link;
    if (len < (socklen_t) sizeof(sc) || sa->sa_family != AF_CONN) {
        return -1;
    }
    memcpy(&sc, sa, sizeof(sc));
    return bsctp_stack_from_conn_addr(sc.sconn_addr, &link) == st ? (int) link : -1;
}

struct socket *bsctp_stack_o2o_socket(bsctp_stack_t *st, uint32_t link)
{
    if (st->cfg.inet) {
        return bsctp_inet_o2o_socket(st, link);
    }
    struct socket *so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (so == NULL) {
        return NULL;
    }
    char err[256];
    struct sockaddr_conn me;
    memset(&me, 0, sizeof(me));
    me.sconn_family = AF_CONN;   /* port 0: any; no address: every registered one */
    if (usrsctp_set_non_blocking(so, 1) != 0 || bsctp_stack_set_options(st, so, err, sizeof(err)) != 0
        || usrsctp_bind(so, (struct sockaddr *) &me, sizeof(me)) != 0) {
        int e = errno;
        usrsctp_close(so);
        errno = e ? e : EIO;
        return NULL;
    }
    return so;
}

int bsctp_stack_accepted_link(bsctp_stack_t *st, struct socket *so, const struct sockaddr *from,
                             socklen_t len)
{
    return st->cfg.inet ? bsctp_inet_accepted_link(st, so, from, len)
                        : bsctp_stack_link_of_sockaddr(st, from, len, true);
}

/* usrsctp's only way out: one SCTP packet to the peer the address names. */
static int bsctp_conn_output(void *addr, void *buffer, size_t length, uint8_t tos, uint8_t set_df)
{
    uint32_t link;
    bsctp_stack_t *st = bsctp_stack_from_conn_addr(addr, &link);
    (void) tos;
    (void) set_df;
    if (st == NULL) {
        return EINVAL;
    }
    bsctp_link_t *l = &st->links[link];
    if (st->cfg.crc32c && length >= sizeof(struct sctp_common_header)) {
        csum_store(buffer, bsctp_packet_crc32c(buffer, length));
    }
    struct iovec iov = {buffer, length};
    int rc = ebtl_dgram_send(&st->socks[l->nic], &l->udp, &iov, 1);
    if (rc != 0) {
        st->stats.out_errors++;   /* lost, as on a wire: SCTP retransmits */
        return -rc;
    }
    return 0;
}

/* --------------------------------------------------------------- links */

int bsctp_stack_link(bsctp_stack_t *st, const ebtl_sockaddr_t *udp, size_t nic, uint16_t sctp_port,
                    bool stranger)
{
    for (uint32_t i = 0; i < st->num_links; i++) {
        if (ebtl_sockaddr_equal(&st->links[i].udp, udp)) {
            return (int) i;
        }
    }
    if (st->num_links >= 0xfffffeu) {
        return -1;
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
    l->nic = nic;
    l->sctp_port = sctp_port;
    l->in_use = true;
    l->stranger = stranger;
    if (stranger) {
        st->strangers++;
    }
    /* A bound-all socket accepts packets for registered addresses only. */
    if (!st->cfg.inet) {
        usrsctp_register_address(bsctp_stack_conn_addr(st, i));
    }
    return (int) i;
}

/* Which link sent this datagram; strangers only by an INIT. */
static int link_for_source(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *from,
                           const uint8_t *pkt, size_t len)
{
    uint32_t c = st->last_rx_link;
    if (c < st->num_links && ebtl_sockaddr_equal(&st->links[c].udp, from)) {
        return (int) c;
    }
    /* Linear: fine for the peers of one job on one host; a hash when it shows. */
    for (uint32_t i = 0; i < st->num_links; i++) {
        if (ebtl_sockaddr_equal(&st->links[i].udp, from)) {
            st->last_rx_link = i;
            return (int) i;
        }
    }
    /* An unknown sender may only start an association: the first chunk of
     * its packet (after the 12-byte common header) must be INIT (type 1). */
    if (len < 16 || pkt[12] != 1 || st->strangers >= BSCTP_MAX_STRANGERS || st->closing) {
        st->stats.rx_unknown_src++;
        return -1;
    }
    uint16_t port = (uint16_t) (pkt[0] << 8 | pkt[1]);
    return bsctp_stack_link(st, from, nic, port, true);
}

/* ---------------------------------------------------------- set-up */

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

int bsctp_stack_set_options(bsctp_stack_t *st, struct socket *so, char *err, size_t errlen)
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
    /* One path per association in conn mode: heartbeats buy no failover,
     * and a peer computing outside MPI could not answer them (heartbeat_ms
     * 0; inet mode's stack threads answer them). usrsctp's path MTU is
     * fixed at 1500: raise it to what the UDP socket carries. */
    struct sctp_paddrparams pp;
    memset(&pp, 0, sizeof(pp));
    pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
    pp.spp_flags = SPP_PMTUD_DISABLE | (c->heartbeat_ms ? SPP_HB_ENABLE : SPP_HB_DISABLE);
    pp.spp_hbinterval = c->heartbeat_ms;
    pp.spp_pathmtu = c->pmtu;
    pp.spp_pathmaxrxt = maxrxt;
    struct sctp_sack_info sack = {
        .sack_assoc_id = SCTP_FUTURE_ASSOC, .sack_delay = c->sack_delay_ms, .sack_freq = 2};
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
        || (bsctp_stack_takes_pieces(st)
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

static void close_sockets(bsctp_stack_t *st)
{
    for (size_t i = 0; i < st->num_socks; i++) {
        ebtl_dgram_close(&st->socks[i]);
    }
    free(st->socks);
    st->socks = NULL;
    st->num_socks = 0;
}

int bsctp_stack_open(bsctp_stack_t *st, const bsctp_stack_config_t *cfg,
                    const bsctp_stack_ops_t *ops, void *ctx, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    st->cfg = *cfg;
    st->ops = *ops;
    st->ctx = ctx;
    st->instance = -1;
    if (cfg->inet) {
        return bsctp_inet_open(st, err, errlen);
    }
    for (int i = 0; i < BSCTP_MAX_STACKS; i++) {
        if (stacks[i] == NULL) {
            st->instance = i;
            break;
        }
    }
    if (st->instance < 0 || cfg->num_ifaces == 0) {
        snprintf(err, errlen, "%s", cfg->num_ifaces == 0 ? "no local address"
                                                         : "too many sctp stacks in one process");
        return -1;
    }
    st->socks = calloc(cfg->num_ifaces, sizeof(*st->socks));
    st->rxbuf_size = cfg->max_msg;
    st->rxbuf = malloc(st->rxbuf_size);
    if (st->socks == NULL || st->rxbuf == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    uint32_t pmtu = 65536;
    for (size_t i = 0; i < cfg->num_ifaces; i++) {
        ebtl_dgram_open_args_t a = {&cfg->ifaces[i], 0, cfg->udp_rcvbuf, cfg->udp_sndbuf, false};
        char e[256];
        if (ebtl_dgram_open(&st->socks[i], &a, e, sizeof(e)) != 0) {
            snprintf(err, errlen, "%s", e);
            goto fail;
        }
        st->num_socks++;
        if (st->socks[i].max_payload < pmtu) {
            pmtu = (uint32_t) st->socks[i].max_payload;
        }
    }
    /* A whole SCTP packet must fit one UDP datagram (no IP fragmentation).
     * usrsctp 0.9.5 hands conn_output packets up to 12 bytes longer than
     * the path MTU it was given (65516 for 65504, measured): keep a margin.
     * SCTP wants a multiple of 4. */
    pmtu = pmtu > PMTU_MARGIN + 1200 ? pmtu - PMTU_MARGIN : 1200;
    if (st->cfg.pmtu == 0 || st->cfg.pmtu > pmtu) {
        st->cfg.pmtu = pmtu;
    }
    st->cfg.pmtu &= ~3u;

    if (stacks_open == 0) {
        usrsctp_init_nothreads(0, bsctp_conn_output, NULL);
        usrsctp_sysctl_set_sctp_ecn_enable(0);
        /* The checksum is ours (above): usrsctp then neither computes nor
         * checks it. */
        usrsctp_enable_crc32c_offload();
    }
    stacks[st->instance] = st;
    stacks_open++;
    if (stacks_open == 1) {
        last_tick_ms = ebtl_dgram_now_ns() / 1000000u;
    }

    /* One-to-one: this socket only listens; each association gets its own. */
    st->so = usrsctp_socket(AF_CONN, cfg->one_to_one ? SOCK_STREAM : SOCK_SEQPACKET, IPPROTO_SCTP,
                            NULL, NULL, 0, NULL);
    if (st->so == NULL) {
        snprintf(err, errlen, "usrsctp_socket(AF_CONN, %s): %s",
                 cfg->one_to_one ? "SOCK_STREAM" : "SOCK_SEQPACKET", strerror(errno));
        goto fail_stack;
    }
    if (usrsctp_set_non_blocking(st->so, 1) != 0) {
        snprintf(err, errlen, "usrsctp_set_non_blocking: %s", strerror(errno));
        goto fail_stack;
    }
    if (bsctp_stack_set_options(st, st->so, err, errlen) != 0) {
        goto fail_stack;
    }
    /* No address: bound to every registered AF_CONN address (every link). */
    struct sockaddr_conn me;
    memset(&me, 0, sizeof(me));
    me.sconn_family = AF_CONN;
    me.sconn_port = htons(cfg->sctp_port);
    if (usrsctp_bind(st->so, (struct sockaddr *) &me, sizeof(me)) != 0) {
        snprintf(err, errlen, "usrsctp_bind(AF_CONN port %u): %s", cfg->sctp_port, strerror(errno));
        goto fail_stack;
    }
    if (usrsctp_listen(st->so, cfg->one_to_one ? 128 : 1) != 0) {
        snprintf(err, errlen, "usrsctp_listen: %s", strerror(errno));
        goto fail_stack;
    }
    if (cfg->one_to_one && bsctp_o2o_init(st, err, errlen) != 0) {
        goto fail_stack;
    }
    return 0;

fail_stack:
    bsctp_stack_close(st);
    return -1;
fail:
    close_sockets(st);
    free(st->rxbuf);
    st->rxbuf = NULL;
    return -1;
}

uint16_t bsctp_stack_udp_port(const bsctp_stack_t *st, size_t i)
{
    if (st->cfg.inet) {
        return bsctp_inet_udp_port();   /* one for the process, on every address */
    }
    const ebtl_sockaddr_t *a = &st->socks[i].local;
    return ntohs(a->u.sa.sa_family == AF_INET ? a->u.in4.sin_port : a->u.in6.sin6_port);
}

/* Bytes of a packet that are not message data, counted high so that it
 * holds in both modes (on AF_CONN usrsctp takes only the DATA chunk header
 * off the path MTU, measured; over IP it takes an IP header and the common
 * header too): IPv6, the common header, a DATA chunk header. Too high only
 * wastes a few bytes per packet. */
#define PACKET_OVERHEAD (40 + 12 + 16)

size_t bsctp_stack_whole_packets(const bsctp_stack_t *st, size_t len)
{
    size_t pmtu = st->cfg.pmtu;
    size_t per_packet = pmtu > PACKET_OVERHEAD ? (pmtu - PACKET_OVERHEAD) & ~(size_t) 3 : 0;
    if (per_packet == 0 || len <= per_packet) {
        return len;
    }
    return len / per_packet * per_packet;
}

size_t bsctp_stack_num_addrs(const bsctp_stack_t *st)
{
    return st->cfg.inet ? st->cfg.num_ifaces : st->num_socks;
}

unsigned bsctp_stack_addr_mtu(const bsctp_stack_t *st, size_t i)
{
    if (st->cfg.inet) {
        const ebtl_if_t *ifa = &st->cfg.ifaces[i];
        return ifa->mtu != 0 ? ifa->mtu : ifa->loopback ? 65536 : 1500;
    }
    return st->socks[i].mtu;
}

/* ---------------------------------------------------------- input */

static void advance_timers(bsctp_stack_t *st, uint64_t now_ms)
{
    (void) st;
    if (now_ms > last_tick_ms) {
        usrsctp_handle_timers((uint32_t) (now_ms - last_tick_ms));
        last_tick_ms = now_ms;
    }
}

static int read_input(bsctp_stack_t *st, uint64_t now_ns)
{
    ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    int total = 0;
    for (size_t s = 0; s < st->num_socks; s++) {
        for (int b = 0; b < RX_BATCHES_PER_PASS; b++) {
            int n = ebtl_dgram_recv(&st->socks[s], msgs, EBTL_DGRAM_RX_BATCH, now_ns);
            for (int k = 0; k < n; k++) {
                /* usrsctp checks the packet (CRC32c, verification tag,
                 * chunk lengths); we only refuse what is not even a header. */
                if (msgs[k].len < sizeof(struct sctp_common_header)) {
                    st->stats.rx_bad++;
                    continue;
                }
                /* A sender with btl_sctp_crc32c 0 leaves the field 0. */
                uint32_t sum = csum_load(msgs[k].buf);
                if (st->cfg.crc32c && sum != 0
                    && sum != bsctp_packet_crc32c(msgs[k].buf, msgs[k].len)) {
                    st->stats.rx_badsum++;
                    continue;
                }
                int link = link_for_source(st, s, &msgs[k].from, msgs[k].buf, msgs[k].len);
                if (link >= 0) {
                    usrsctp_conninput(bsctp_stack_conn_addr(st, (uint32_t) link), msgs[k].buf,
                                      msgs[k].len, 0);
                }
            }
            if (n <= 0) {
                break;
            }
            total += n;
            st->input_datagrams += (uint64_t) n;
            if (n < EBTL_DGRAM_RX_BATCH) {
                break;   /* drained */
            }
        }
    }
    return total;
}

int bsctp_stack_poll(bsctp_stack_t *st)
{
    if (st->so == NULL) {
        return 0;
    }
    if (st->cfg.inet) {
        return bsctp_inet_poll(st);
    }
    uint64_t now = ebtl_dgram_now_ns();
    st->polled_ns = now;
    int n = read_input(st, now);
    advance_timers(st, now / 1000000u);
    if (st->cfg.one_to_one) {
        bsctp_o2o_drain(st);
    } else {
        bsctp_assoc_drain(st);
    }
    return n;
}

/* ---------------------------------------------------------- close */

void bsctp_stack_flush_rests(bsctp_stack_t *st)
{
    uint64_t end = ebtl_dgram_now_ns() + (uint64_t) CLOSE_WAIT_MS * 1000000u;
    while (st->so != NULL && bsctp_assoc_send_rests(st) > 0 && ebtl_dgram_now_ns() < end) {
        uint64_t now = ebtl_dgram_now_ns();
        read_input(st, now);
        advance_timers(st, now / 1000000u);
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

void bsctp_stack_close(bsctp_stack_t *st)
{
    if (st->cfg.inet) {
        bsctp_inet_close(st);
        return;
    }
    bool finished = false;   /* usrsctp_finish succeeded: the stack is gone */
    bsctp_stack_flush_rests(st);
    st->closing = true;
    if (st->so != NULL) {
        /* Graceful: queued data goes out, then SHUTDOWN; the peers see a
         * shutdown, not a lost association. */
        if (st->o2o != NULL) {
            bsctp_o2o_shutdown(st);
        }
        usrsctp_close(st->so);
        st->so = NULL;
        uint64_t end = ebtl_dgram_now_ns() + (uint64_t) CLOSE_WAIT_MS * 1000000u;
        while (ebtl_dgram_now_ns() < end) {
            /* The whole process's stack answers: other stacks' input too. */
            for (int i = 0; i < BSCTP_MAX_STACKS; i++) {
                if (stacks[i] != NULL) {
                    read_input(stacks[i], ebtl_dgram_now_ns());
                }
            }
            advance_timers(st, ebtl_dgram_now_ns() / 1000000u);
            if (st->o2o != NULL) {
                bsctp_o2o_drain(st);   /* closes the sockets whose association is gone */
                if (stacks_open > 1 && bsctp_o2o_live(st) == 0) {
                    break;   /* ours are gone; usrsctp itself stops with the last stack */
                }
            }
            if (stacks_open == 1 && usrsctp_finish() == 0) {
                finished = true;
                break;
            }
            /* The peer's answer takes a round trip through its progress. */
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
    }
    if (st->o2o != NULL) {
        bsctp_o2o_fini(st);
    }
    for (uint32_t i = 0; i < st->num_links; i++) {
        if (!finished) {
            usrsctp_deregister_address(bsctp_stack_conn_addr(st, i));
        }
        bsctp_assoc_link_fini(st, &st->links[i]);
    }
    if (st->instance >= 0 && stacks[st->instance] == st) {
        stacks[st->instance] = NULL;
        if (--stacks_open == 0 && !finished) {
            for (int i = 0; i < 100 && usrsctp_finish() != 0; i++) {
                usrsctp_handle_timers(10);
            }
        }
        if (stacks_open == 0) {
            bsctp_mem_release();
        }
    }
    close_sockets(st);
    free(st->links);
    st->links = NULL;
    st->num_links = st->cap_links = 0;
    free(st->rxbuf);
    st->rxbuf = NULL;
}

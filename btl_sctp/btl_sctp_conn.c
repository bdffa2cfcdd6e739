/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Mode conn: usrsctp without threads, on AF_CONN, over the BTL's own UDP
 * sockets (common/ebtl_dgram, test-only fault layer included). Every
 * packet usrsctp emits leaves through conn_output on the caller's thread,
 * every datagram we read goes in through usrsctp_conninput, and its timers
 * advance only when a poll calls usrsctp_handle_timers. All of it happens
 * inside progress.
 */
#include "btl_sctp_mode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <usrsctp.h>

#include "btl_sctp_mem.h"
#include "btl_sctp_segs.h"
#include "ebtl_crc32c.h"

/* Stacks one process may hold (MPI: one, or one per interface in the
 * one-to-one style; tests: two). */
#define MAX_STACKS 16
/* Links created by unknown senders' INITs before we stop taking more. */
#define MAX_STRANGERS 1024
/* The rescue's space beyond the send buffer and its packets' headers: one
 * more packet of the largest kind (btl_sctp_packet). */
#define RESCUE_EXTRA (64u << 10)
/* UDP batches read from one socket per pass at most. */
#define RX_BATCHES_PER_PASS 4
/* Bytes the path MTU given to usrsctp stays under the UDP payload limit:
 * usrsctp 0.9.5 hands conn_output packets up to 12 bytes longer than the
 * path MTU it was given (65516 for 65504, measured). */
#define PMTU_MARGIN 32

static bsctp_stack_t *stacks[MAX_STACKS];
static int stacks_open;
/* usrsctp's clock is the process's: every stack advances it from here, or
 * with two stacks it would run twice as fast. */
static uint64_t last_tick_ms;
/* usrsctp's counters of fast retransmits and timeouts at the last look, and
 * whether DATA went again since (btl_sctp_paths.h, bsctp_recovery_t). */
static uint32_t seen_fast_rtx, seen_timeouts;
static bool rtx_unexplained;

/* ------------------------------------------------------ AF_CONN addresses */

/* instance+1 in the bits above 24, link+1 below: never NULL, and usrsctp
 * only compares it and hands it back to conn_output. */
static void *conn_addr(const bsctp_stack_t *st, uint32_t link)
{
    return (void *) (((uintptr_t) (st->instance + 1) << 24) | ((uintptr_t) link + 1));
}

/* The stack and link an AF_CONN address names, or NULL. */
static bsctp_stack_t *stack_of_conn_addr(const void *addr, uint32_t *link)
{
    uintptr_t v = (uintptr_t) addr;
    uintptr_t inst = (v >> 24) - 1, l = (v & 0xffffffu) - 1;
    if (v == 0 || (v & 0xffffffu) == 0 || inst >= MAX_STACKS || stacks[inst] == NULL
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

/* ------------------------------------------------------------ output */

/* The packets usrsctp emits during one call into it (a send can emit a
 * window's worth, an input a SACK and what it lets out) leave together
 * when the call returns: one sendmmsg per socket, and each run of
 * equal-sized packets to one peer as one UDP GSO send, which the peer's
 * UDP GRO reads back in one go. usrsctp's buffer is gone once conn_output
 * returns, so each packet is copied into a slot. Larger packets
 * (loopback's 64 KiB ones) go at once, after what is queued. */
#define TX_SLOT_MAX 9216u

/* Packets held for the DATA before them (btl_sctp_paths.h, BSCTP_HOLD_NS):
 * at most this many per stack, copied into slots like the send queue's. */
#define HOLD_MAX 128

struct held {
    bool used;
    uint32_t link;
    uint32_t first, last;                      /* TSNs of its DATA */
    uint64_t at_ns;
    size_t len;
};

typedef struct bsctp_conn_tx {
    ebtl_dgram_txq_t q;
    struct held held[HOLD_MAX];
    uint8_t *hold_arena;                       /* HOLD_MAX slots; NULL: one path per peer */
    unsigned num_held;
    /* Several paths: one pass's datagrams from every socket, put back in
     * TSN order per peer before usrsctp sees them (rx_order). */
    ebtl_dgram_msg_t *rx_msgs;                 /* EBTL_DGRAM_RX_BATCH per socket */
    struct rx_item *rx_order;
    size_t slot;                               /* bytes per slot */
    size_t hold_slot;                          /* bytes per hold slot: a whole packet, segmented
                                                  ones too (btl_sctp_packet) */
    uint8_t arena[];                           /* EBTL_DGRAM_TXQ_LEN slots */
} bsctp_conn_tx_t;

/* One datagram of a pass, where it came from and, for DATA, its peer and
 * first TSN (the key rx_order sorts by). */
struct rx_item {
    ebtl_dgram_msg_t *m;
    uint16_t sock;
    int link;                                  /* -1: not DATA, or no known peer */
    uint32_t tsn;
};

/* A NIC's kernel queue, for the scheduler (btl_sctp_paths.h): after each
 * flush, on the sockets that sent or still hold something. */
static void look_at_queues(bsctp_stack_t *st, uint64_t now)
{
    for (size_t i = 0; i < st->num_socks; i++) {
        bsctp_nic_load_t *n = &st->nic_load[i];
        int q = 0;
        if ((n->queued != 0 || n->sent_since != 0)
            && ioctl(st->socks[i].fd, SIOCOUTQ, &q) == 0 && q >= 0) {
            bsctp_nic_look(n, (uint64_t) q, now);
        }
    }
}

static void tx_flush(bsctp_stack_t *st)
{
    bsctp_conn_tx_t *tx = st->conn_tx;
    if (tx != NULL && tx->q.count > 0) {
        st->stats.out_errors += ebtl_dgram_txq_flush(&tx->q);   /* lost, as on a wire */
        if (st->multipath) {
            look_at_queues(st, ebtl_dgram_now_ns());
        }
    }
}

/* usrsctp is one per process: any call into it may emit for any stack. */
static void conn_flush(bsctp_stack_t *st)
{
    (void) st;
    for (int i = 0; i < MAX_STACKS; i++) {
        if (stacks[i] != NULL) {
            tx_flush(stacks[i]);
        }
    }
}

static void path_unreachable(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *to);

static void on_unreachable(void *arg, const ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to, int err)
{
    bsctp_stack_t *st = arg;
    (void) err;
    path_unreachable(st, (size_t) (s - st->socks), to);
}

static int tx_open(bsctp_stack_t *st, size_t largest)
{
    size_t slot = largest < TX_SLOT_MAX ? largest : TX_SLOT_MAX;
    bsctp_conn_tx_t *tx = calloc(1, sizeof(bsctp_conn_tx_t) + (size_t) EBTL_DGRAM_TXQ_LEN * slot);
    size_t rx = st->num_socks * EBTL_DGRAM_RX_BATCH;
    if (tx == NULL || (tx->rx_msgs = calloc(rx, sizeof(*tx->rx_msgs))) == NULL
        || (tx->rx_order = calloc(rx, sizeof(*tx->rx_order))) == NULL
        || (st->nic_load = calloc(st->num_socks, sizeof(*st->nic_load))) == NULL) {
        if (tx != NULL) {
            free(tx->rx_msgs);
            free(tx->rx_order);
            free(tx);
        }
        return -1;
    }
    ebtl_dgram_txq_init(&tx->q);
    tx->q.unreachable = on_unreachable;
    tx->q.unreachable_arg = st;
    tx->slot = slot;
    tx->hold_slot = slot;
    st->conn_tx = tx;
    return 0;
}

static void tx_close(bsctp_stack_t *st)
{
    tx_flush(st);
    if (st->conn_tx != NULL) {
        free(st->conn_tx->rx_msgs);
        free(st->conn_tx->rx_order);
        free(st->conn_tx->hold_arena);
    }
    free(st->conn_tx);
    st->conn_tx = NULL;
    free(st->nic_load);
    st->nic_load = NULL;
    free(st->segs);
    st->segs = NULL;
}

/* ------------------------------------------------------------- paths */

/* btl_sctp_verbose 2: one line per path going down or up. */
static void trace_path(const bsctp_stack_t *st, uint32_t link, int k, const char *what,
                       uint64_t now)
{
    if (!st->cfg.trace_paths) {
        return;
    }
    const bsctp_link_t *l = &st->links[link];
    const bsctp_path_t *p = &l->paths[k];
    const bsctp_nic_load_t *n = &st->nic_load[p->nic];
    char peer[64];
    ebtl_sockaddr_format(&p->udp, peer, sizeof(peer));
    fprintf(stderr, "btl_sctp %d: %.3f s peer %u path %d (%s) %s: heard %.1f ms ago, sent %.1f ms "
            "ago; NIC queue %llu B, rate %llu MB/s\n", (int) getpid(), (double) now / 1e9, link, k,
            peer, what, (double) (now - p->heard_ns) / 1e6, (double) (now - p->sent_ns) / 1e6,
            (unsigned long long) n->queued, (unsigned long long) (n->rate / 1000000u));
}

/* The kernel refused a datagram to `to` on our socket nic: that way is
 * closed (the NIC is down or has no route), not just full. A peer with
 * another path leaves it at once. */
static void path_unreachable(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *to)
{
    for (uint32_t i = 0; i < st->num_links; i++) {
        bsctp_link_t *l = &st->links[i];
        if (l->num_paths < 2) {
            continue;
        }
        for (int k = 0; k < l->num_paths; k++) {
            bsctp_path_t *p = &l->paths[k];
            if (!p->down && p->nic == nic && ebtl_sockaddr_equal(&p->udp, to)) {
                p->down = true;
                p->downs++;
                st->stats.path_downs++;
                trace_path(st, i, k, "down: the kernel refused a datagram", ebtl_dgram_now_ns());
            }
        }
    }
}

static void send_probe(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *to, int kind,
                       uint32_t nonce)
{
    uint8_t b[BSCTP_PROBE_LEN];
    bsctp_probe_make(b, kind, nonce);
    struct iovec iov = {b, sizeof(b)};
    int rc = ebtl_dgram_send(&st->socks[nic], to, &iov, 1);
    if (rc != 0 && ebtl_dgram_way_closed(-rc)) {
        path_unreachable(st, nic, to);
    }
}

/* The paths' timers, every millisecond at most: probes and silent paths. */
static void tick_paths(bsctp_stack_t *st, uint64_t now)
{
    if (!st->multipath || now - st->paths_tick_ns < 1000000u) {
        return;
    }
    st->paths_tick_ns = now;
    for (uint32_t i = 0; i < st->num_links; i++) {
        bsctp_link_t *l = &st->links[i];
        bool probe[BSCTP_MAX_PATHS];
        if (l->num_paths < 2 || l->failed) {
            continue;
        }
        bool was_down[BSCTP_MAX_PATHS];
        for (int k = 0; k < l->num_paths; k++) {
            was_down[k] = l->paths[k].down;
        }
        st->stats.path_downs += (uint64_t) bsctp_paths_tick(l->paths, l->num_paths, now, probe);
        for (int k = 0; k < l->num_paths; k++) {
            if (l->paths[k].down && !was_down[k]) {
                trace_path(st, i, k, "down: silent while another path hears", now);
            }
            if (probe[k]) {
                st->stats.probes_tx++;
                send_probe(st, l->paths[k].nic, &l->paths[k].udp, BSCTP_PROBE,
                           (uint32_t) (i << 4 | (uint32_t) k));
            }
        }
    }
}

/* A packet larger than the socket's datagrams (btl_sctp_segs.h): its
 * pieces copied into queue slots, each behind its header, all sent at the
 * next flush. Pieces of equal size (the last may be shorter): a run of
 * equal-sized packets then makes one GSO run of equal segments too. */
static int send_segments(bsctp_stack_t *st, bsctp_conn_tx_t *tx, ebtl_dgram_sock_t *sock,
                         const ebtl_sockaddr_t *to, const uint8_t *pkt, size_t length,
                         unsigned segs)
{
    size_t piece = (length + segs - 1) / segs;
    segs = (unsigned) ((length + piece - 1) / piece);
    if (tx->q.count + segs > EBTL_DGRAM_TXQ_LEN) {
        tx_flush(st);
    }
    uint16_t id = st->seg_id++;
    for (unsigned i = 0; i < segs; i++) {
        size_t off = (size_t) i * piece;
        size_t n = length - off < piece ? length - off : piece;
        uint8_t *p = tx->arena + (size_t) tx->q.count * tx->slot;
        uint8_t h[BSCTP_SEG_HDR];
        bsctp_seg_header(h, id, (uint16_t) length, (uint16_t) piece, (uint8_t) i);
        memcpy(p, pkt + off, n);
        struct iovec iov[2] = {{h, sizeof(h)}, {p, n}};
        int rc = ebtl_dgram_txq_add(&tx->q, sock, to, iov, 2);
        if (rc != 0) {
            return -rc;
        }
    }
    st->stats.seg_tx++;
    return 0;
}

/* One SCTP packet to the link's peer, on the path the mode picks. */
static int send_packet(bsctp_stack_t *st, bsctp_link_t *l, const uint8_t *buffer, size_t length)
{
    int k = 0;
    if (l->num_paths > 1) {
        k = bsctp_paths_pick(l->paths, l->num_paths, st->nic_load, length);
        bsctp_paths_sent(l->paths, k, &st->nic_load[l->paths[k].nic], length, st->polled_ns);
    }
    bsctp_path_t *path = &l->paths[k];
    ebtl_dgram_sock_t *sock = &st->socks[path->nic];
    bsctp_conn_tx_t *tx = st->conn_tx;
    if (tx != NULL && length > sock->max_payload) {
        size_t room = sock->max_payload < tx->slot ? sock->max_payload : tx->slot;
        unsigned segs = bsctp_seg_count(length, room);
        if (segs > 0) {
            bsctp_seg_loss_sent(&l->seg_loss);
            return send_segments(st, tx, sock, &path->udp, buffer, length, segs);
        }
    }
    if (tx != NULL && length <= tx->slot) {
        if (tx->q.count == EBTL_DGRAM_TXQ_LEN) {
            tx_flush(st);
        }
        uint8_t *p = tx->arena + (size_t) tx->q.count * tx->slot;
        memcpy(p, buffer, length);
        /* No header piece: the whole packet is the second entry. */
        struct iovec iov[2] = {{p, 0}, {p, length}};
        return -ebtl_dgram_txq_add(&tx->q, sock, &path->udp, iov, 2);
    }
    tx_flush(st);   /* what usrsctp emitted first leaves first */
    struct iovec iov = {(void *) buffer, length};
    int rc = ebtl_dgram_send(sock, &path->udp, &iov, 1);
    if (rc != 0) {
        st->stats.out_errors++;   /* lost, as on a wire: SCTP retransmits */
        if (ebtl_dgram_way_closed(-rc)) {
            path_unreachable(st, path->nic, &path->udp);
        }
        return -rc;
    }
    return 0;
}

/* usrsctp's only way out: one SCTP packet to the peer the address names
 * (a copy kept for the stall watch's rescue once the link loses). */
static int conn_output(void *addr, void *buffer, size_t length, uint8_t tos, uint8_t set_df)
{
    uint32_t link;
    bsctp_stack_t *st = stack_of_conn_addr(addr, &link);
    (void) tos;
    (void) set_df;
    if (st == NULL) {
        return EINVAL;
    }
    bsctp_link_t *l = &st->links[link];
    if (st->cfg.crc32c && length >= sizeof(struct sctp_common_header)) {
        csum_store(buffer, bsctp_packet_crc32c(buffer, length));
    }
    uint32_t first = 0, last = 0;
    bool data = bsctp_packet_tsns(buffer, length, &first, &last);
    if (data && l->num_paths > 1) {
        bsctp_recovery_sent(&l->recovery, first, last);   /* usrsctp's sends, not the rescue's */
        rtx_unexplained |= l->recovery.rtx;
    }
    /* The clock only where a tail probe may follow: a loss-free link's
     * packets take the poll's (usrsctp retransmits from within a poll). */
    bsctp_rescue_sent(&l->rescue, buffer, length, data, first, last,
                      data && l->rescue.keeping ? ebtl_dgram_now_ns() : st->polled_ns);
    if (data && st->cfg.test_drop_data != 0 && ++st->test_data_pkts == st->cfg.test_drop_data) {
        st->stats.test_dropped++;   /* TESTING ONLY: lost on the wire */
        return 0;
    }
    return send_packet(st, l, buffer, length);
}

/* ------------------------------------------------------------- links */

static void conn_link_added(bsctp_stack_t *st, uint32_t link)
{
    /* A bound-all socket accepts packets for registered addresses only. */
    usrsctp_register_address(conn_addr(st, link));
    /* usrsctp holds at most a send buffer of chunks unacknowledged; their
     * packets' headers and a last large packet on top. */
    size_t snd = st->cfg.so_sndbuf;
    bsctp_rescue_init(&st->links[link].rescue, snd + snd / 4 + RESCUE_EXTRA);
}

/* Which link (and *path) sent this datagram; strangers only by an INIT. */
static int link_for_source(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *from,
                           const uint8_t *pkt, size_t len, int *path)
{
    int link = bsctp_core_link_of_source(st, nic, from, path);
    if (link >= 0) {
        return link;
    }
    /* An unknown sender may only start an association: the first chunk of
     * its packet (after the 12-byte common header) must be INIT (type 1). */
    if (len < 16 || pkt[12] != 1 || st->strangers >= MAX_STRANGERS || st->closing) {
        st->stats.rx_unknown_src++;
        return -1;
    }
    uint16_t port = (uint16_t) (pkt[0] << 8 | pkt[1]);
    link = bsctp_core_link(st, from, nic, port, true);
    if (link >= 0) {
        conn_link_added(st, (uint32_t) link);
    }
    *path = 0;
    return link;
}

static void conn_peer_sockaddr(const bsctp_stack_t *st, uint32_t link, struct sockaddr_storage *ss,
                               socklen_t *len)
{
    struct sockaddr_conn to;
    memset(&to, 0, sizeof(to));
    to.sconn_family = AF_CONN;
    to.sconn_port = htons(st->links[link].sctp_port);
    to.sconn_addr = conn_addr(st, link);
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, &to, sizeof(to));
    *len = sizeof(to);
}

static int conn_link_of_sockaddr(bsctp_stack_t *st, const struct sockaddr *sa, socklen_t len,
                                 bool create)
{
    struct sockaddr_conn sc;
    uint32_t link = 0;
    (void) create;   /* links come from datagrams (link_for_source) */
    if (len < (socklen_t) sizeof(sc) || sa->sa_family != AF_CONN) {
        return -1;
    }
    memcpy(&sc, sa, sizeof(sc));
    return stack_of_conn_addr(sc.sconn_addr, &link) == st ? (int) link : -1;
}

static struct socket *conn_socket_for_link(bsctp_stack_t *st, uint32_t link)
{
    char err[256];
    (void) link;   /* the connect names it */
    struct socket *so = bsctp_core_socket(st, AF_CONN, err, sizeof(err));
    if (so == NULL) {
        return NULL;
    }
    struct sockaddr_conn me;
    memset(&me, 0, sizeof(me));
    me.sconn_family = AF_CONN;   /* port 0: any; no address: every registered one */
    if (usrsctp_bind(so, (struct sockaddr *) &me, sizeof(me)) != 0) {
        int e = errno;
        usrsctp_close(so);
        errno = e ? e : EIO;
        return NULL;
    }
    return so;
}

static int conn_accepted_link(bsctp_stack_t *st, struct socket *so, const struct sockaddr *from,
                              socklen_t len)
{
    (void) so;
    return conn_link_of_sockaddr(st, from, len, true);
}

/* ---------------------------------------------------------- addresses */

static size_t conn_num_addrs(const bsctp_stack_t *st)
{
    return st->num_socks;
}

static uint16_t conn_udp_port(const bsctp_stack_t *st, size_t i)
{
    const ebtl_sockaddr_t *a = &st->socks[i].local;
    return ntohs(a->u.sa.sa_family == AF_INET ? a->u.in4.sin_port : a->u.in6.sin6_port);
}

static unsigned conn_addr_mtu(const bsctp_stack_t *st, size_t i)
{
    return st->socks[i].mtu;
}

/* ---------------------------------------------------------- input */

/* What made the DATA that went again since the last look: usrsctp's
 * counters tell a fast retransmit from a timeout (they count after the
 * packet left, so this runs at the next SACK or poll). */
static void explain_retransmissions(void)
{
    if (!rtx_unexplained) {
        return;
    }
    rtx_unexplained = false;
    struct sctpstat u;
    usrsctp_get_stat(&u);
    bool fast = u.sctps_sendfastretrans != seen_fast_rtx;
    bool timeout = u.sctps_timodata != seen_timeouts;
    seen_fast_rtx = u.sctps_sendfastretrans;
    seen_timeouts = u.sctps_timodata;
    for (int i = 0; i < MAX_STACKS; i++) {
        for (uint32_t j = 0; stacks[i] != NULL && j < stacks[i]->num_links; j++) {
            bsctp_recovery_cause(&stacks[i]->links[j].recovery, fast, timeout);
        }
    }
}

/* usrsctp's timers to now; retransmissions explained before (the input's
 * fast retransmits) and after (the timers' timeouts), one cause a look. */
static void advance_timers(uint64_t now_ms)
{
    explain_retransmissions();
    if (now_ms > last_tick_ms) {
        usrsctp_handle_timers((uint32_t) (now_ms - last_tick_ms));
        last_tick_ms = now_ms;
        explain_retransmissions();
    }
}

/* ------------------------------------------- DATA ahead of its turn */

/* What the peer's DATA up to last means for the next TSN usrsctp expects. */
static void rx_advance(bsctp_link_t *l, uint32_t last)
{
    if (!l->rx_sync || !bsctp_tsn_le(last + 1u, l->rx_next)) {
        l->rx_next = last + 1u;
    }
    l->rx_sync = true;
}

static void feed_held(bsctp_stack_t *st, bsctp_conn_tx_t *io, unsigned i)
{
    struct held *h = &io->held[i];
    bsctp_link_t *l = &st->links[h->link];
    usrsctp_conninput(conn_addr(st, h->link), io->hold_arena + (size_t) i * io->hold_slot, h->len, 0);
    rx_advance(l, h->last);
    h->used = false;
    io->num_held--;
    l->rx_held--;
}

/* Hand usrsctp a link's held packets that are now in turn (all of them,
 * in TSN order, when all: the gap did not fill in time, a loss). */
static void release_held(bsctp_stack_t *st, uint32_t link, bool all)
{
    bsctp_conn_tx_t *io = st->conn_tx;
    while (st->links[link].rx_held > 0) {
        int next = -1;
        for (unsigned i = 0; i < HOLD_MAX; i++) {
            const struct held *h = &io->held[i];
            if (h->used && h->link == link
                && (next < 0 || bsctp_tsn_le(h->first, io->held[next].first))) {
                next = (int) i;
            }
        }
        if (next < 0 || (!all && !bsctp_tsn_le(io->held[next].first, st->links[link].rx_next))) {
            return;
        }
        feed_held(st, io, (unsigned) next);
    }
}

/* DATA of a peer with several paths: true when held because it runs
 * ahead of the next TSN (it waits for the packets before it), false when
 * the caller hands it to usrsctp now. */
static bool hold_ahead(bsctp_stack_t *st, uint32_t link, const uint8_t *pkt, size_t len,
                       uint32_t first, uint32_t last, uint64_t now)
{
    bsctp_conn_tx_t *io = st->conn_tx;
    bsctp_link_t *l = &st->links[link];
    if (io != NULL && io->hold_arena == NULL) {
        io->hold_arena = malloc((size_t) HOLD_MAX * io->hold_slot);   /* the first peer with paths */
    }
    if (!l->rx_sync || bsctp_tsn_le(first, l->rx_next) || io == NULL || io->hold_arena == NULL
        || len > io->hold_slot) {
        rx_advance(l, last);
        return false;
    }
    if (io->num_held == HOLD_MAX) {
        release_held(st, link, true);   /* no room: what waits goes first */
        if (io->num_held == HOLD_MAX) {
            rx_advance(l, last);
            return false;
        }
    }
    unsigned i = 0;
    while (io->held[i].used) {
        i++;
    }
    memcpy(io->hold_arena + (size_t) i * io->hold_slot, pkt, len);
    io->held[i] = (struct held){true, link, first, last, now, len};
    io->num_held++;
    l->rx_held++;
    st->stats.rx_held++;
    return true;
}

/* Packets held longer than BSCTP_HOLD_NS: the gap before them is a loss;
 * usrsctp gets them (and reports the gap). */
static void expire_held(bsctp_stack_t *st, uint64_t now)
{
    bsctp_conn_tx_t *io = st->conn_tx;
    for (unsigned i = 0; io != NULL && io->num_held > 0 && i < HOLD_MAX; i++) {
        if (io->held[i].used && now - io->held[i].at_ns >= BSCTP_HOLD_NS) {
            st->stats.rx_hold_expired++;
            release_held(st, io->held[i].link, true);
        }
    }
}

/* A SACK from a peer with several paths that would keep usrsctp in fast
 * recovery (btl_sctp_paths.h) is cut from its packet. Returns the packet's
 * length, 0 when nothing is left. */
static size_t filter_sack(bsctp_stack_t *st, bsctp_link_t *l, uint8_t *pkt, size_t len)
{
    bsctp_sack_t sk;
    if (!l->recovery.active && !rtx_unexplained) {
        return len;
    }
    if (!bsctp_packet_sack(pkt, len, &sk)) {
        return len;
    }
    explain_retransmissions();
    if (bsctp_recovery_sack(&l->recovery, sk.cum, sk.gaps)) {
        return len;
    }
    st->stats.sacks_withheld++;
    len = bsctp_packet_cut(pkt, len, sk.off, sk.len);
    return len > sizeof(struct sctp_common_header) ? len : 0;
}

/* A probe of ours, answered on the way it came; an answer: the path works. */
static void take_probe(bsctp_stack_t *st, size_t s, const ebtl_dgram_msg_t *m, int kind,
                       uint32_t nonce, uint64_t now)
{
    int path = 0;
    int link = bsctp_core_link_of_source(st, s, &m->from, &path);
    if (link < 0) {
        st->stats.rx_unknown_src++;   /* never answered: no reflection for strangers */
        return;
    }
    bsctp_link_t *l = &st->links[link];
    if (bsctp_paths_heard(l->paths, path, m->len, now)) {
        st->stats.path_ups++;
        trace_path(st, (uint32_t) link, path, "up: a probe came in on it", now);
    }
    if (kind == BSCTP_PROBE) {
        send_probe(st, s, &m->from, BSCTP_PROBE_ECHO, nonce);
    } else {
        st->stats.probes_rx++;
    }
}

/* A segment of a larger packet (btl_sctp_segs.h): true when it completed
 * the packet, which then replaces it in *m. Only from a known peer. */
static bool take_segment(bsctp_stack_t *st, size_t s, ebtl_dgram_msg_t *m,
                         const bsctp_seg_info_t *seg, uint64_t now)
{
    int path = 0;
    int link = bsctp_core_link_of_source(st, s, &m->from, &path);
    if (link < 0) {
        st->stats.rx_unknown_src++;
        return false;
    }
    if (st->segs == NULL && (st->segs = calloc(1, sizeof(*st->segs))) == NULL) {
        return false;   /* lost, as on a wire */
    }
    size_t len = 0;
    const uint8_t *pkt = bsctp_seg_add(st->segs, (uint32_t) link, seg, m->buf + BSCTP_SEG_HDR,
                                       now, &len);
    if (pkt == NULL) {
        return false;
    }
    st->stats.seg_rx++;
    m->buf = (void *) pkt;   /* the table's, valid until its next segment */
    m->len = len;
    return true;
}

/* One datagram from socket s into usrsctp (or the paths' probes). */
static void take_datagram(bsctp_stack_t *st, size_t s, ebtl_dgram_msg_t *m, uint64_t now)
{
    /* usrsctp checks the packet (CRC32c, verification tag, chunk lengths);
     * we only refuse what is not even a header. */
    if (m->len < sizeof(struct sctp_common_header)) {
        st->stats.rx_bad++;
        return;
    }
    uint32_t nonce;
    int kind = bsctp_probe_parse(m->buf, m->len, &nonce);
    if (kind != 0) {
        take_probe(st, s, m, kind, nonce, now);
        return;
    }
    bsctp_seg_info_t seg;
    if (bsctp_seg_parse(m->buf, m->len, &seg)) {
        if (!take_segment(st, s, m, &seg, now)) {
            return;   /* more to come */
        }
    }
    /* A sender with btl_sctp_crc32c 0 leaves the field 0. */
    uint32_t sum = csum_load(m->buf);
    if (st->cfg.crc32c && sum != 0 && sum != bsctp_packet_crc32c(m->buf, m->len)) {
        st->stats.rx_badsum++;
        return;
    }
    int path = 0;
    int link = link_for_source(st, s, &m->from, m->buf, m->len, &path);
    if (link < 0) {
        return;
    }
    bsctp_link_t *l = &st->links[link];
    uint32_t first, last;
    if (l->num_paths > 1) {
        if (bsctp_paths_heard(l->paths, path, m->len, now)) {
            st->stats.path_ups++;
            trace_path(st, (uint32_t) link, path, "up: a packet came in on it", now);
        }
        if ((m->len = filter_sack(st, l, m->buf, m->len)) == 0) {
            return;
        }
        if (bsctp_packet_tsns(m->buf, m->len, &first, &last)
            && hold_ahead(st, (uint32_t) link, m->buf, m->len, first, last, now)) {
            return;
        }
    }
    bsctp_sack_t sk;
    bool small = m->len <= BSCTP_LAST_SACK_MAX;
    if ((small || (st->frame_pmtu != 0 && !l->lossy) || l->rescue.count > 0)
        && bsctp_packet_sack(m->buf, m->len, &sk)) {
        bsctp_rescue_acked(&l->rescue, sk.cum, sk.gap_lo, sk.gap_hi, sk.gap_n, now);
        if (small) {
            memcpy(l->last_sack, m->buf, m->len);   /* for conn_kick */
            l->last_sack_len = (uint16_t) m->len;
        }
        if (st->frame_pmtu != 0 && !l->lossy && bsctp_seg_loss_sack(&l->seg_loss, sk.gaps > 0)) {
            l->lossy = true;   /* bsctp_assoc_shrink_packets, outside usrsctp's calls */
            st->shrink_due = true;
        }
    }
    usrsctp_conninput(conn_addr(st, (uint32_t) link), m->buf, m->len, 0);
    if (st->links[link].rx_held > 0) {
        release_held(st, (uint32_t) link, false);   /* the gap before them may be filled */
    }
}

/* A read of n datagrams emptied the socket: the kernel gave fewer than
 * asked for (a GRO socket asks for rx_bufs at a time: 8 whole datagrams
 * of loopback's 64 KiB are a full read, not the end) and none wait split
 * off a GRO read. */
static bool drained(const ebtl_dgram_sock_t *s, int n)
{
    int full = s->rx_bufs < EBTL_DGRAM_RX_BATCH ? (int) s->rx_bufs : EBTL_DGRAM_RX_BATCH;
    return n < full && !ebtl_dgram_rx_buffered(s);
}

/* a before b: DATA of one peer, a's first TSN earlier (serial arithmetic). */
static bool rx_before(const struct rx_item *a, const struct rx_item *b)
{
    return a->link >= 0 && a->link == b->link && (int32_t) (a->tsn - b->tsn) < 0;
}

/* Several paths: a pass reads every socket once, then hands usrsctp the
 * datagrams with each peer's DATA in TSN order. Read one socket after the
 * other, the packets of two paths would reach usrsctp a whole batch out of
 * order, and its SACKs would report gaps that are none (three reports and
 * the sender retransmits). Returns the datagrams read; *more: a socket
 * may hold more. */
static int read_merged(bsctp_stack_t *st, uint64_t now_ns, bool *more)
{
    bsctp_conn_tx_t *io = st->conn_tx;
    unsigned count = 0;
    *more = false;
    for (size_t s = 0; s < st->num_socks; s++) {
        ebtl_dgram_msg_t *msgs = &io->rx_msgs[s * EBTL_DGRAM_RX_BATCH];
        int n = ebtl_dgram_recv(&st->socks[s], msgs, EBTL_DGRAM_RX_BATCH, now_ns);
        *more |= !drained(&st->socks[s], n);
        for (int k = 0; k < n; k++) {
            struct rx_item it = {&msgs[k], (uint16_t) s, -1, 0};
            int path;
            uint32_t last;
            if (bsctp_packet_tsns(msgs[k].buf, msgs[k].len, &it.tsn, &last)) {
                it.link = bsctp_core_link_of_source(st, s, &msgs[k].from, &path);
            }
            /* insertion: runs per socket are already in order */
            unsigned j = count++;
            while (j > 0 && rx_before(&it, &io->rx_order[j - 1])) {
                io->rx_order[j] = io->rx_order[j - 1];
                j--;
            }
            io->rx_order[j] = it;
        }
        if (n > 0) {
            st->input_datagrams += (uint64_t) n;
        }
    }
    for (unsigned i = 0; i < count; i++) {
        take_datagram(st, io->rx_order[i].sock, io->rx_order[i].m, now_ns);
    }
    return (int) count;
}

static int read_input(bsctp_stack_t *st, uint64_t now_ns)
{
    int total = 0;
    if (st->multipath && st->conn_tx != NULL) {
        bool more = true;
        for (int b = 0; b < RX_BATCHES_PER_PASS && more; b++) {
            total += read_merged(st, now_ns, &more);
        }
        return total;
    }
    ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    for (size_t s = 0; s < st->num_socks; s++) {
        for (int b = 0; b < RX_BATCHES_PER_PASS; b++) {
            int n = ebtl_dgram_recv(&st->socks[s], msgs, EBTL_DGRAM_RX_BATCH, now_ns);
            for (int k = 0; k < n; k++) {
                take_datagram(st, s, &msgs[k], now_ns);
            }
            if (n <= 0) {
                break;
            }
            total += n;
            st->input_datagrams += (uint64_t) n;
            if (drained(&st->socks[s], n)) {
                break;
            }
        }
    }
    return total;
}

/* The stall watch's kick: the peer's last SACK fed to usrsctp once more
 * (its input runs the association's output: what was marked for
 * retransmission leaves, and T3 restarts for data in flight), then the
 * rescue: our copies of every packet beyond the peer's cumulative ack go
 * again, in order. A lost T3 timer (usrsctp 0.9.5) leaves chunks that
 * nothing sends again, which re-feeding a SACK does not change; the
 * peer's SACK of the copies acknowledges them, and usrsctp's SACK path
 * starts over from there. Copies the peer has are duplicates it drops. */
static void conn_kick(bsctp_stack_t *st, uint32_t link)
{
    bsctp_link_t *l = &st->links[link];
    uint8_t pkt[BSCTP_LAST_SACK_MAX];
    size_t len = l->last_sack_len;
    if (len > 0) {
        memcpy(pkt, l->last_sack, len);   /* usrsctp may write into what it is given */
        usrsctp_conninput(conn_addr(st, link), pkt, len, 0);
    }
    uint32_t i = 0, sent = 0;
    const uint8_t *copy;
    while ((copy = bsctp_rescue_next(&l->rescue, &i, &len)) != NULL) {
        sent += send_packet(st, l, copy, len) == 0;
    }
    if (sent > 0) {
        st->stats.rescues++;
        st->stats.rescued_pkts += sent;
        conn_flush(st);
    }
}

/* The tail probe (btl_sctp_rescue.h): on each link whose peer's SACKs and
 * usrsctp's sends have been still for tail_probe_ms with packets beyond
 * the peer's cumulative ack, the copies its last SACK does not report go
 * again, at most TAIL_PROBE_PKTS (the oldest: the cumulative ack's hole
 * first; the peer's answer shows what else is missing). */
#define TAIL_PROBE_PKTS 8u
#define TAIL_CHECK_NS (1000u * 1000u)

static void probe_tails(bsctp_stack_t *st, uint64_t now)
{
    if (st->cfg.tail_probe_ms == 0 || now - st->tail_check_ns < TAIL_CHECK_NS) {
        return;
    }
    st->tail_check_ns = now;
    uint64_t quiet = (uint64_t) st->cfg.tail_probe_ms * 1000000u;
    for (uint32_t k = 0; k < st->num_links; k++) {
        bsctp_link_t *l = &st->links[k];
        if (!bsctp_rescue_probe_due(&l->rescue, now, quiet)) {
            continue;
        }
        uint32_t i = 0, sent = 0;
        size_t len;
        const uint8_t *copy;
        while (sent < TAIL_PROBE_PKTS
               && (copy = bsctp_rescue_next_missing(&l->rescue, &i, &len)) != NULL) {
            sent += send_packet(st, l, copy, len) == 0;
        }
        if (sent > 0) {
            st->stats.tail_probes++;
            st->stats.tail_probe_pkts += sent;
            conn_flush(st);
        }
    }
}

static int conn_poll(bsctp_stack_t *st)
{
    uint64_t now = st->polled_ns;
    int n = read_input(st, now);
    expire_held(st, now);
    probe_tails(st, now);
    if (!st->cfg.test_no_timers) {
        advance_timers(now / 1000000u);
    }
    tick_paths(st, now);
    return n;
}

static void conn_pump(bsctp_stack_t *st)
{
    (void) st;
    /* The whole process's usrsctp answers: every stack's input (a test
     * runs two stacks, each the other's peer). */
    for (int i = 0; i < MAX_STACKS; i++) {
        if (stacks[i] != NULL) {
            read_input(stacks[i], ebtl_dgram_now_ns());
        }
    }
    if (!st->cfg.test_no_timers) {
        advance_timers(ebtl_dgram_now_ns() / 1000000u);
    }
    conn_flush(st);
    /* The peer's answer takes a round trip through its progress. */
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

/* ---------------------------------------------------- open and close */

static void close_sockets(bsctp_stack_t *st)
{
    tx_close(st);
    for (size_t i = 0; i < st->num_socks; i++) {
        ebtl_dgram_close(&st->socks[i]);
    }
    free(st->socks);
    st->socks = NULL;
    st->num_socks = 0;
}

/* One UDP socket per local address; the path MTU the smallest carries. */
static int open_sockets(bsctp_stack_t *st, char *err, size_t errlen)
{
    const bsctp_stack_config_t *cfg = &st->cfg;
    st->socks = calloc(cfg->num_ifaces, sizeof(*st->socks));
    if (st->socks == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t pmtu = 65536;
    for (size_t i = 0; i < cfg->num_ifaces; i++) {
        ebtl_dgram_open_args_t a = {&cfg->ifaces[i], 0, cfg->udp_rcvbuf, cfg->udp_sndbuf,
                                    cfg->gro};
        char e[256];
        if (ebtl_dgram_open(&st->socks[i], &a, e, sizeof(e)) != 0) {
            snprintf(err, errlen, "%s", e);
            close_sockets(st);
            return -1;
        }
        st->num_socks++;
        if (!cfg->gso) {
            st->socks[i].gso = false;   /* still sendmmsg batches */
        }
        if (st->socks[i].max_payload < pmtu) {
            pmtu = (uint32_t) st->socks[i].max_payload;
        }
    }
    if (tx_open(st, pmtu) != 0) {
        snprintf(err, errlen, "out of memory");
        close_sockets(st);
        return -1;
    }
    /* A whole SCTP packet fits one UDP datagram (no IP fragmentation), or
     * a larger one asked for goes in segments (btl_sctp_segs.h). Chosen,
     * they pay where frames are small: 4 MiB on a link as fast as the CPUs
     * at MTU 1500 ×1.34–1.37 of packets of a frame; at MTU 9000 no faster
     * (1809 against 1828 MB/s), so packets of a frame, which lose less to a
     * lost frame (docs/sctp-modes.md). */
    uint32_t packet = cfg->packet;
    if (packet == BSCTP_PACKET_AUTO) {
        packet = pmtu * 4 <= BSCTP_SEG_PACKET_MAX ? BSCTP_SEG_PACKET_MAX : 0;
    }
    if (packet > pmtu) {
        st->frame_pmtu = pmtu > PMTU_MARGIN + 1200 ? (pmtu - PMTU_MARGIN) & ~3u : 1200;
        pmtu = packet;
        st->conn_tx->hold_slot = packet;   /* several paths reorder them too */
    }
    bsctp_core_clamp_pmtu(st, pmtu > PMTU_MARGIN + 1200 ? pmtu - PMTU_MARGIN : 1200);
    if (st->cfg.pmtu <= st->frame_pmtu) {
        st->frame_pmtu = 0;   /* btl_sctp_pmtu keeps every packet within a frame */
    }
    return 0;
}

static void conn_close(bsctp_stack_t *st);

static int conn_open(bsctp_stack_t *st, bool port_is_identity, char *err, size_t errlen)
{
    (void) port_is_identity;   /* every AF_CONN stack has its own ports */
    st->instance = -1;
    for (int i = 0; i < MAX_STACKS; i++) {
        if (stacks[i] == NULL) {
            st->instance = i;
            break;
        }
    }
    if (st->instance < 0) {
        snprintf(err, errlen, "too many sctp stacks in one process");
        return -1;
    }
    if (open_sockets(st, err, errlen) != 0) {
        st->instance = -1;
        return -1;
    }
    if (stacks_open == 0) {
        usrsctp_init_nothreads(0, conn_output, NULL);
        bsctp_core_sysctls();
        /* The checksum is ours (above): usrsctp then neither computes nor
         * checks it. */
        usrsctp_enable_crc32c_offload();
        last_tick_ms = ebtl_dgram_now_ns() / 1000000u;
        seen_fast_rtx = seen_timeouts = 0;   /* a new usrsctp counts from 0 */
        rtx_unexplained = false;
    }
    stacks[st->instance] = st;
    stacks_open++;

    /* No address: bound to every registered AF_CONN address (every link). */
    st->so = bsctp_core_socket(st, AF_CONN, err, errlen);
    if (st->so == NULL) {
        goto fail;
    }
    struct sockaddr_conn me;
    memset(&me, 0, sizeof(me));
    me.sconn_family = AF_CONN;
    me.sconn_port = htons(st->cfg.sctp_port);
    if (usrsctp_bind(st->so, (struct sockaddr *) &me, sizeof(me)) != 0) {
        snprintf(err, errlen, "usrsctp_bind(AF_CONN port %u): %s", st->cfg.sctp_port,
                 strerror(errno));
        goto fail;
    }
    return 0;
fail:
    conn_close(st);
    return -1;
}

static void conn_close(bsctp_stack_t *st)
{
    if (st->so != NULL) {
        usrsctp_close(st->so);   /* graceful for any association still there */
        st->so = NULL;
        conn_flush(st);
    }
    for (uint32_t i = 0; i < st->num_links; i++) {
        usrsctp_deregister_address(conn_addr(st, i));
        bsctp_rescue_fini(&st->links[i].rescue);
    }
    if (st->instance >= 0 && stacks[st->instance] == st) {
        stacks[st->instance] = NULL;
        if (--stacks_open == 0) {
            for (int i = 0; i < 100 && usrsctp_finish() != 0; i++) {
                usrsctp_handle_timers(10);
                tx_flush(st);
            }
            bsctp_mem_release();
        }
    }
    st->instance = -1;
    close_sockets(st);
}

const bsctp_mode_t bsctp_mode_conn = {
    .name = "conn",
    .takes_pieces = true,
    .heartbeats = false,
    .threads = false,
    .room_from_input = true,
    .btl_sockets = true,
    .resends = false,
    .watch_stalls = true,
    .kick = conn_kick,
    .open = conn_open,
    .close = conn_close,
    .poll = conn_poll,
    .pump = conn_pump,
    .idle = NULL,
    .flush = conn_flush,
    .num_addrs = conn_num_addrs,
    .udp_port = conn_udp_port,
    .addr_mtu = conn_addr_mtu,
    .link_added = conn_link_added,
    .peer_sockaddr = conn_peer_sockaddr,
    .prepare_send = NULL,
    .link_of_sockaddr = conn_link_of_sockaddr,
    .socket_for_link = conn_socket_for_link,
    .accepted_link = conn_accepted_link,
};

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The sctp transport's life, the same for every mode and style: open
 * (the mode starts usrsctp and its socket, then the style), progress
 * (the mode's input and timers, the style's reads into the association
 * layer, the stall watch, the ends of messages the links hold), and close
 * (kept ends sent, a graceful shutdown with a bounded wait, then the
 * style's and the mode's release).
 */
#include "btl_sctp_stack.h"
#include "btl_sctp_assoc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <usrsctp.h>

/* How long close waits for the peers: to take the ends of messages, and
 * to complete a graceful shutdown. */
#define CLOSE_WAIT_NS (500ull * 1000000u)
/* How often the stall watch looks, the least time it waits before it
 * declares the peer lost, and the least a stall lasts before the mode's
 * kick: with data unacknowledged usrsctp's T3 timer expires within
 * RTO.max (100 ms by default) unless acknowledgements come, so three
 * RTO.max without one is a stall, not a slow peer. */
#define WATCH_PERIOD_NS (100u * 1000000u)
#define STALL_MIN_MS 10000u
#define KICK_MIN_MS 300u

int bsctp_stack_link(bsctp_stack_t *st, const ebtl_sockaddr_t *udp, size_t nic, uint16_t sctp_port,
                     bool stranger)
{
    uint32_t known = st->num_links;
    int link = bsctp_core_link(st, udp, nic, sctp_port, stranger);
    if (link >= 0 && (uint32_t) link >= known && st->mode->link_added != NULL) {
        st->mode->link_added(st, (uint32_t) link);
    }
    return link;
}

/* ------------------------------------------------------ open and close */

/* The style's and the mode's release, then the links. */
static void release(bsctp_stack_t *st)
{
    if (st->style->fini != NULL) {
        st->style->fini(st);
    }
    st->mode->close(st);
    for (uint32_t i = 0; i < st->num_links; i++) {
        bsctp_assoc_link_fini(st, &st->links[i]);
    }
    bsctp_core_links_free(st);
    bsctp_core_free_rxbuf(st);
}

int bsctp_stack_open(bsctp_stack_t *st, const bsctp_stack_config_t *cfg,
                     const bsctp_stack_ops_t *ops, void *ctx, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    st->cfg = *cfg;
    st->mode = cfg->mode;
    st->style = cfg->style;
    st->ops = *ops;
    st->ctx = ctx;
    st->rx = bsctp_assoc_rx;
    st->so_type = cfg->style->socket_type;
    st->explicit_eor = cfg->mode->takes_pieces;
    if (!cfg->mode->heartbeats) {
        st->cfg.heartbeat_ms = 0;   /* in conn mode a peer computing outside MPI cannot answer */
        st->cfg.path_max_retrans = 0;   /* ... and its one path is the association's */
    }
    st->instance = -1;
    if (cfg->num_ifaces == 0) {
        snprintf(err, errlen, "no local address");
        return -1;
    }
    if (bsctp_core_alloc_rxbuf(st, err, errlen) != 0) {
        return -1;
    }
    if (st->mode->open(st, st->style->port_is_identity, err, errlen) != 0) {
        bsctp_core_free_rxbuf(st);
        return -1;
    }
    if (usrsctp_listen(st->so, st->style->backlog) != 0) {
        snprintf(err, errlen, "usrsctp_listen: %s", strerror(errno));
        release(st);
        return -1;
    }
    if (st->style->init != NULL && st->style->init(st, err, errlen) != 0) {
        release(st);
        return -1;
    }
    return 0;
}

void bsctp_stack_close(bsctp_stack_t *st)
{
    /* The ends of messages the links still hold (ob1 counted them sent):
     * the SACKs that make room arrive with the peers' answers. */
    uint64_t end = ebtl_dgram_now_ns() + CLOSE_WAIT_NS;
    while (st->so != NULL && bsctp_assoc_send_rests(st) > 0 && ebtl_dgram_now_ns() < end) {
        st->mode->pump(st);
    }
    st->closing = true;
    /* Graceful: queued data goes out, then SHUTDOWN; the peers see a
     * shutdown, not a lost association. */
    st->style->shutdown(st);
    end = ebtl_dgram_now_ns() + CLOSE_WAIT_NS;
    for (;;) {
        st->style->reap(st);
        if (st->style->live(st) == 0 || ebtl_dgram_now_ns() >= end) {
            break;
        }
        st->mode->pump(st);
    }
    release(st);
}

/* ------------------------------------------------------------- stalls */

/* usrsctp 0.9.5's threads can lose an association's retransmission (T3)
 * timer: a timer expiry that marks nothing for retransmission (the RTO
 * estimate above RTO.max) relies on a count of running timers that a race
 * between its threads leaves too high, so the timer is not started again.
 * Seen under loss in inet mode: unacknowledged chunks never retransmitted,
 * heartbeats keeping the association up, the job hung. Conn mode (no
 * threads) hung alike once in CI at 1 % loss: 406 chunks unacknowledged,
 * the peer holding 30 behind a gap, no T3 expiry for 90 s. A link whose
 * unacknowledged chunks and queued bytes stay the same while no T3 timer
 * of the process expires and nothing is retransmitted has stalled: after
 * 3 RTO.max (300 ms at least) the mode is asked to make usrsctp look
 * again (conn: the peer's last SACK once more, which runs its output, and
 * the rescue); after STALL_MIN_MS
 * (or 3 RTO.max) its peer is declared lost, so the job ends with a
 * message. A peer that only stopped reading keeps T3 running (window
 * probes), as does one computing outside MPI. */
bool bsctp_stack_link_stalled(bsctp_link_t *l, uint64_t now_ns, bool have, uint32_t unacked,
                              uint32_t queued, bool timers_ran, uint64_t stall_ns)
{
    if (!have || unacked == 0 || timers_ran || unacked != l->watch_unacked
        || queued != l->watch_queued) {
        l->watch_unacked = have ? unacked : 0;
        l->watch_queued = have ? queued : 0;
        l->watch_since_ns = now_ns;
        l->watch_kicked = false;
        return false;
    }
    return now_ns - l->watch_since_ns >= stall_ns;
}

static void watch_stalls(bsctp_stack_t *st, uint64_t now)
{
    if (now - st->watch_ns < WATCH_PERIOD_NS) {
        return;
    }
    st->watch_ns = now;
    struct sctpstat u;
    usrsctp_get_stat(&u);
    uint64_t t3 = (uint64_t) u.sctps_timodata + u.sctps_sendretransdata;
    bool timers_ran = t3 != st->watch_t3;
    st->watch_t3 = t3;
    uint64_t stall_ms = 3u * (uint64_t) st->cfg.rto_max_ms;
    if (stall_ms < STALL_MIN_MS) {
        stall_ms = STALL_MIN_MS;
    }
    uint64_t kick_ms = 3u * (uint64_t) st->cfg.rto_max_ms;
    kick_ms = kick_ms < KICK_MIN_MS ? KICK_MIN_MS : kick_ms > stall_ms / 2 ? stall_ms / 2 : kick_ms;
    for (uint32_t i = 0; i < st->num_links; i++) {
        bsctp_link_t *l = &st->links[i];
        uint32_t unacked = 0, queued = 0;
        if (!l->in_use || l->failed) {
            continue;
        }
        bool have = bsctp_assoc_outstanding(st, i, &unacked, &queued);
        if (bsctp_stack_link_stalled(l, now, have, unacked, queued, timers_ran,
                                     stall_ms * 1000000u)) {
            char why[640], usr[384];
            bsctp_assoc_describe(st, i, usr, sizeof(usr));
            snprintf(why, sizeof(why), "has not acknowledged %u chunk(s) of ours for %llu s and "
                     "usrsctp no longer retransmits them (a lost timer in usrsctp 0.9.5, mode "
                     "%s; kicked %s; usrsctp: %s)", unacked, (unsigned long long) (stall_ms / 1000u),
                     st->mode->name, l->watch_kicked ? "once" : "never", usr);
            bsctp_assoc_fail(st, i, why);
        } else if (have && unacked > 0 && !l->watch_kicked && st->mode->kick != NULL
                   && now - l->watch_since_ns >= kick_ms * 1000000u) {
            l->watch_kicked = true;
            st->stats.stall_kicks++;
            st->mode->kick(st, i);
        }
    }
}

/* --------------------------------------------------------- idle audit */

/* Each link that sent fragments and then went idle audits its numbers
 * (btl_sctp_seq.h), once its association holds nothing unacknowledged or
 * queued: then every fragment before the audit is in the peer's stack and
 * the peer reads them before it. A peer short of a claim at two audits
 * lost a message (usrsctp 0.9.5 in inet mode: docs/sctp-modes.md). */
static void audit_links(bsctp_stack_t *st, uint64_t now)
{
    if (now - st->audit_ns < BSCTP_AUDIT_TICK_NS) {
        return;
    }
    st->audit_ns = now;
    for (uint32_t i = 0; i < st->num_links; i++) {
        bsctp_link_t *l = &st->links[i];
        uint32_t unacked, queued;
        if (!l->in_use || l->failed || !bsctp_seq_tick(&l->seq)) {
            continue;
        }
        if (l->rest == NULL && bsctp_assoc_outstanding(st, i, &unacked, &queued) && unacked == 0
            && queued == 0 && bsctp_assoc_audit(st, i) == 0) {
            bsctp_seq_audited(&l->seq);
        }
    }
}

/* ------------------------------------------------------------ progress */

int bsctp_stack_poll(bsctp_stack_t *st)
{
    /* One clock read a pass (the pass is short), which the module's
     * progress uses after it too. */
    uint64_t now = ebtl_dgram_now_ns();
    st->polled_ns = now;
    if (st->so == NULL) {
        return 0;
    }
    uint64_t before = st->stats.rx_msgs;
    int n = st->mode->poll(st);
    if (st->shrink_due) {
        bsctp_assoc_shrink_packets(st);
    }
    st->style->drain(st);
    if (st->mode->watch_stalls) {
        watch_stalls(st, now);
    }
    audit_links(st, now);
    int delivered = (int) (st->stats.rx_msgs - before);
    if (n == 0 && delivered == 0 && st->mode->idle != NULL) {
        st->mode->idle(st);
    }
    bsctp_assoc_send_rests(st);
    bsctp_stack_flush(st);
    return n > 0 ? n : delivered;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Associations, whatever the style and mode: made lazily by the first
 * send to a link (through the style), identified by the first message each
 * side sends on each stream, sending one SCTP message per fragment (in
 * pieces where the mode takes them), and what comes back: the style reads
 * its sockets and hands every message and notification to the hooks here
 * (bsctp_assoc_rx). Messages larger than the receive buffer (or delivered
 * early under receive-buffer pressure) arrive in pieces until MSG_EOR,
 * and pieces of messages on different streams of one association
 * interleave (fragment interleave level 2): reassembled per link and
 * stream. Every received byte is checked before use. Fragments are
 * numbered per stream and an idle sender audits its numbers, so that a
 * message usrsctp acknowledged but never delivered is sent again (mode
 * inet, from the copies kept of the last few) or ends the job with a
 * message instead of a hang (btl_sctp_seq.h).
 */
#include "btl_sctp_assoc.h"

#include "btl_sctp_hdr.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <usrsctp.h>

/* usrsctp's SCTP_GET_SNDBUF_USE (its netinet/sctp.h; usrsctp.h lacks it):
 * the bytes queued on an association. */
#define BSCTP_SNDBUF_USE_OPT 0x00001101
struct bsctp_sndbuf_use {
    sctp_assoc_t assoc_id;
    uint32_t total_sndbuf;
    uint32_t total_recv_buf;
};

void bsctp_assoc_shrink_packets(bsctp_stack_t *st)
{
    st->shrink_due = false;
    for (uint32_t i = 0; i < st->num_links; i++) {
        bsctp_link_t *l = &st->links[i];
        struct socket *so;
        uint32_t id;
        if (!l->lossy || l->shrunk) {
            continue;
        }
        if (!st->style->assoc_socket(st, l, &so, &id)) {
            st->shrink_due = true;   /* not up: at a later poll */
            continue;
        }
        /* Every address of the association (conn mode: the one with larger
         * packets). usrsctp also resends at once, in the same large chunks,
         * what it had in flight (sctp_pathmtu_adjustment); new data goes in
         * chunks of a frame. */
        struct sctp_paddrparams pp;
        memset(&pp, 0, sizeof(pp));
        pp.spp_assoc_id = id;
        ((struct sockaddr_conn *) &pp.spp_address)->sconn_family = AF_CONN;
        pp.spp_flags = SPP_PMTUD_DISABLE;
        pp.spp_pathmtu = st->frame_pmtu;
        if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp)) != 0) {
            continue;   /* the association is going: its successor starts over */
        }
        l->shrunk = true;
        st->stats.seg_shrinks++;
        if (st->cfg.trace_paths) {
            fprintf(stderr, "btl_sctp %d: peer %u reported %u holes in %u packets sent in "
                    "segments: packets of %u bytes from now on\n", (int) getpid(), i,
                    l->seg_loss.holes, l->seg_loss.packets, st->frame_pmtu);
        }
    }
}

/* Bytes usrsctp takes whole on the link's association now: under explicit
 * EOR it takes any part of a message that fits, so a message goes only
 * when all of it fits. The queued bytes include the chunks' overhead,
 * which usrsctp's own test leaves out: an underestimate, never more. */
static size_t send_room(bsctp_stack_t *st, const bsctp_link_t *l)
{
    if (!st->mode->takes_pieces) {
        return SIZE_MAX;   /* one piece per message: usrsctp takes all of it or none */
    }
    struct socket *so;
    uint32_t id;
    if (!st->style->assoc_socket(st, l, &so, &id)) {
        return SIZE_MAX;   /* no association yet: the first send makes an empty one */
    }
    struct bsctp_sndbuf_use u = {.assoc_id = (sctp_assoc_t) id};
    socklen_t n = sizeof(u);
    if (usrsctp_getsockopt(so, IPPROTO_SCTP, BSCTP_SNDBUF_USE_OPT, &u, &n) != 0) {
        return st->sndbuf_limit;
    }
    if (u.total_sndbuf == 0) {
        /* Empty: any message goes. One larger than the buffer (usrsctp
         * took less than asked for) would otherwise wait for ever; usrsctp
         * takes what fits and the link keeps the rest. */
        return SIZE_MAX;
    }
    return u.total_sndbuf < st->sndbuf_limit ? st->sndbuf_limit - u.total_sndbuf : 0;
}

/* A piece of a message on stream sid (eor: its last). Returns the bytes
 * usrsctp took (under explicit EOR possibly fewer than len, even 0), or
 * -errno (-EAGAIN: send buffer full). */
static long send_piece(bsctp_stack_t *st, uint32_t link, uint16_t sid, const void *data, size_t len,
                       bool eor, uint16_t flags)
{
    struct sctp_sndinfo info = {
        .snd_sid = sid,
        .snd_flags = (uint16_t) (flags | (eor ? SCTP_EOR : 0)),
        .snd_ppid = htonl(BSCTP_WIRE_PPID),
    };
    long n = st->style->send(st, link, data, len, &info);
    int e = errno;
    if (st->mode->flush != NULL) {
        st->mode->flush(st);   /* what the send let out leaves now */
    }
    if (n < 0) {
        return e == EWOULDBLOCK || e == EAGAIN ? -EAGAIN : -(e ? e : EIO);
    }
    return n;
}

static void rest_drop(bsctp_stack_t *st, bsctp_link_t *l)
{
    if (l->rest != NULL) {
        free(l->rest);
        l->rest = NULL;
        st->rests--;
    }
}

/* usrsctp took the first done bytes of a message: keep the end, so that
 * the caller may reuse its buffers (and ob1 complete the fragment). */
static int rest_keep(bsctp_stack_t *st, bsctp_link_t *l, uint16_t sid, const struct iovec *iov,
                     int iovcnt, size_t done)
{
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        total += iov[i].iov_len;
    }
    l->rest = malloc(total - done);
    if (l->rest == NULL) {
        return -ENOMEM;   /* half a message is out: the link cannot go on */
    }
    size_t at = 0, skip = done;
    for (int i = 0; i < iovcnt; i++) {
        size_t take = iov[i].iov_len > skip ? iov[i].iov_len - skip : 0;
        memcpy(l->rest + at, (const uint8_t *) iov[i].iov_base + (iov[i].iov_len - take), take);
        at += take;
        skip -= iov[i].iov_len - take;
    }
    l->rest_len = total - done;
    l->rest_off = 0;
    l->rest_sid = sid;
    st->rests++;
    st->stats.tx_split++;
    return 0;
}

/* Push the link's kept end of a message: 0 when none is left, else
 * -EAGAIN or -errno. */
static int rest_send(bsctp_stack_t *st, uint32_t link)
{
    bsctp_link_t *l = &st->links[link];
    while (l->rest != NULL && l->rest_off < l->rest_len) {
        long n = send_piece(st, link, l->rest_sid, l->rest + l->rest_off,
                            l->rest_len - l->rest_off, true, 0);
        if (n <= 0) {
            return n == 0 ? -EAGAIN : (int) n;
        }
        l->rest_off += (size_t) n;
    }
    rest_drop(st, l);
    return 0;
}

uint32_t bsctp_assoc_send_rests(bsctp_stack_t *st)
{
    for (uint32_t i = 0; st->rests > 0 && i < st->num_links; i++) {
        bsctp_link_t *l = &st->links[i];
        if (l->rest != NULL && rest_send(st, i) != 0 && l->failed) {
            rest_drop(st, l);   /* the peer is lost: the job ends with its message */
        }
    }
    return st->rests;
}

/* One SCTP message on stream sid, in pieces: all of it or none. */
static int send_message(bsctp_stack_t *st, uint32_t link, uint16_t sid, const struct iovec *iov,
                        int iovcnt)
{
    bsctp_link_t *l = &st->links[link];
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0) {
            return -EINVAL;   /* the last piece carries the EOR */
        }
        total += iov[i].iov_len;
    }
    if (total > send_room(st, l)) {
        st->stats.tx_busy++;
        return -EAGAIN;
    }
    /* The thesis's I-bit (btl_sctp_sack_immediately): a message of one
     * packet is SACKed at once. Off, the SACK rides on the peer's next
     * packet (an MPI reply) or follows every second packet. */
    uint16_t flags = st->cfg.sack_immediately && total <= st->cfg.pmtu ? SCTP_SACK_IMMEDIATELY : 0;
    size_t done = 0;
    for (int i = 0; i < iovcnt; i++) {
        for (size_t off = 0; off < iov[i].iov_len;) {
            long n = send_piece(st, link, sid, (const uint8_t *) iov[i].iov_base + off,
                                iov[i].iov_len - off, i == iovcnt - 1, flags);
            if (n > 0) {
                off += (size_t) n;
                done += (size_t) n;
                continue;
            }
            if (done == 0) {
                if (n == 0 || n == -EAGAIN) {
                    st->stats.tx_busy++;
                    return -EAGAIN;
                }
                return (int) n;
            }
            /* Room ran out after all (usrsctp's queue limit of chunks):
             * usrsctp holds the start, the link keeps the end. */
            return n == 0 || n == -EAGAIN ? rest_keep(st, l, sid, iov, iovcnt, done) : (int) n;
        }
    }
    return 0;
}

static int send_one(bsctp_stack_t *st, uint32_t link, uint16_t sid, const void *data, size_t len)
{
    struct iovec iov = {(void *) data, len};
    return send_message(st, link, sid, &iov, 1);
}

/* usrsctp's status and queue use of the link's association. */
static bool assoc_status(bsctp_stack_t *st, uint32_t link, struct sctp_status *s,
                         struct bsctp_sndbuf_use *u)
{
    struct socket *so;
    uint32_t id = 0;
    socklen_t n = sizeof(*s), un = sizeof(*u);
    memset(s, 0, sizeof(*s));
    memset(u, 0, sizeof(*u));
    bool have = st->style->assoc_socket(st, &st->links[link], &so, &id);
    s->sstat_assoc_id = u->assoc_id = (sctp_assoc_t) id;
    if (!have || usrsctp_getsockopt(so, IPPROTO_SCTP, SCTP_STATUS, s, &n) != 0) {
        return false;
    }
    if (usrsctp_getsockopt(so, IPPROTO_SCTP, BSCTP_SNDBUF_USE_OPT, u, &un) != 0) {
        u->total_sndbuf = u->total_recv_buf = 0;
    }
    return true;
}

void bsctp_assoc_describe(bsctp_stack_t *st, uint32_t link, char *buf, size_t len)
{
    const bsctp_link_t *l = &st->links[link];
    struct sctp_status s;
    struct bsctp_sndbuf_use u;
    buf[0] = '\0';
    if (!assoc_status(st, link, &s, &u)) {
        return;
    }
    /* Where a message the peer sent can be: usrsctp's queues of the
     * association (rcvbuf_used; rx_held: chunks behind a gap), its socket,
     * read by nobody yet (unread: a look without taking it; a one-to-many
     * socket's next message may be another peer's), or pieces the BTL
     * holds before the message's end (partial). */
    struct socket *so;
    uint32_t id;
    uint8_t peek[64];
    int flags = MSG_PEEK | MSG_DONTWAIT;
    socklen_t infolen = 0;
    unsigned int infotype = 0;
    long unread = st->style->assoc_socket(st, l, &so, &id)
                      ? (long) usrsctp_recvv(so, peek, sizeof(peek), NULL, NULL, NULL, &infolen,
                                             &infotype, &flags)
                      : -1;
    size_t partial = 0;
    for (uint16_t i = 0; l->reasm != NULL && i < l->reasm_streams; i++) {
        partial += l->reasm[i].len;
    }
    /* sstat_penddata counts received chunks waiting for a gap to fill. */
    snprintf(buf, len, "state=%d peer_rwnd=%u unacked=%u rx_held=%u sndbuf_used=%u "
             "rcvbuf_used=%u unread=%s partial=%zu cwnd=%u srtt=%u rto=%u mtu=%u path_state=%d "
             "rest=%zu",
             (int) s.sstat_state, s.sstat_rwnd, (unsigned) s.sstat_unackdata,
             (unsigned) s.sstat_penddata, u.total_sndbuf, u.total_recv_buf,
             unread > 0 ? "yes" : "no", partial, s.sstat_primary.spinfo_cwnd,
             s.sstat_primary.spinfo_srtt, s.sstat_primary.spinfo_rto,
             s.sstat_primary.spinfo_mtu, (int) s.sstat_primary.spinfo_state,
             l->rest ? l->rest_len - l->rest_off : 0);
}

bool bsctp_assoc_outstanding(bsctp_stack_t *st, uint32_t link, uint32_t *unacked,
                            uint32_t *queued)
{
    struct sctp_status s;
    struct bsctp_sndbuf_use u;
    if (!assoc_status(st, link, &s, &u)) {
        return false;
    }
    *unacked = s.sstat_unackdata;
    *queued = u.total_sndbuf;
    return true;
}

void bsctp_assoc_fail(bsctp_stack_t *st, uint32_t link, const char *why)
{
    bsctp_link_t *l = &st->links[link];
    if (l->failed) {
        return;
    }
    l->failed = true;
    if (st->ops.peer_failed != NULL && l->user != NULL) {
        st->ops.peer_failed(st->ctx, l->user, link, why, false);
    }
}

/* Drop every half-received message of the link (its association is gone). */
static void reasm_clear(bsctp_link_t *l)
{
    for (uint16_t i = 0; l->reasm != NULL && i < l->reasm_streams; i++) {
        free(l->reasm[i].buf);
    }
    free(l->reasm);
    l->reasm = NULL;
    l->reasm_streams = 0;
}

/* Forget what we told the peer on which streams (a new or lost association). */
static void streams_reset(bsctp_link_t *l)
{
    l->out_streams = 0;
    free(l->ident_sids);
    l->ident_sids = NULL;
    bsctp_seq_tx_forget(&l->seq, 1);   /* numbered afresh after their identification */
}

/* Our identification on the association is forgotten: stream 0 starts
 * over with the next one (the others with streams_reset). */
static void ident_tx_forget(bsctp_link_t *l)
{
    l->ident_tx = false;
    bsctp_seq_tx_forget(&l->seq, 0);
}

static int send_ident(bsctp_stack_t *st, uint32_t link, uint16_t sid)
{
    bsctp_wire_ident_t id;
    memset(&id, 0, sizeof(id));
    id.hdr.version = BSCTP_WIRE_VERSION;
    id.hdr.kind = BSCTP_WIRE_IDENT;
    id.magic = htonl(BSCTP_IDENT_MAGIC);
    id.jobid = htonl(st->cfg.jobid);
    id.vpid = htonl(st->cfg.vpid);
    uint64_t k = st->cfg.job_key;
    id.job_key = ((uint64_t) htonl((uint32_t) k) << 32) | htonl((uint32_t) (k >> 32));
    int rc = send_one(st, link, sid, &id, sizeof(id));
    if (rc == 0) {
        /* The peer restarts the stream's numbering where it reads this. */
        bsctp_seq_tx_restart(&st->links[link].seq, sid);
    }
    return rc;
}

int bsctp_assoc_ident(bsctp_stack_t *st, uint32_t link)
{
    bsctp_link_t *l = &st->links[link];
    if (l->ident_tx) {
        return 0;
    }
    int rc = send_ident(st, link, 0);
    l->ident_tx = rc == 0;
    return rc;
}

uint16_t bsctp_assoc_stream(bsctp_stack_t *st, uint32_t link, uint8_t tag, const void *ob1,
                           size_t len)
{
    uint16_t n = link < st->num_links ? st->links[link].out_streams : 0;
    enum bsctp_ob1_kind kind;
    uint16_t sid = bsctp_stream_choose(st->cfg.stream_map, n, tag, ob1, len, &kind);
    bsctp_streams_stats_t *s = &st->stream_stats;
    if (kind == BSCTP_OB1_NONE) {
        s->chose_not_ob1++;
    } else if (!st->cfg.stream_map || n < 2) {
        s->chose_unmapped++;
    } else if (kind == BSCTP_OB1_ENVELOPE) {
        s->chose_envelope++;
    } else {
        s->chose_other++;
    }
    return sid;
}

int bsctp_assoc_sendv(bsctp_stack_t *st, uint32_t link, uint16_t sid, const struct iovec *iov,
                     int iovcnt)
{
    if (link >= st->num_links || st->so == NULL || iovcnt < 1
        || (iovcnt > 1 && !st->mode->takes_pieces) || iov[0].iov_len < sizeof(bsctp_wire_hdr_t)) {
        return -EINVAL;
    }
    bsctp_link_t *l = &st->links[link];
    if (l->failed) {
        return -EPIPE;
    }
    if (l->rest != NULL) {
        int rc = rest_send(st, link);   /* nothing passes a message's kept end */
        if (rc != 0) {
            return rc;
        }
    }
    if (sid >= l->out_streams || sid >= st->cfg.streams) {
        sid = 0;   /* chosen for an association that is gone, or not known yet */
    }
    /* The identification first, on stream 0 and then on every other stream
     * before its first use: SCTP orders only within a stream, and the peer
     * refuses data before identification (duplicates change nothing). */
    if (!l->ident_tx) {
        int rc = send_ident(st, link, 0);
        if (rc != 0) {
            return rc;
        }
        l->ident_tx = true;
    }
    if (sid != 0) {
        if (l->ident_sids == NULL && (l->ident_sids = calloc((l->out_streams + 7u) / 8u, 1)) == NULL) {
            return -EAGAIN;
        }
        if (!(l->ident_sids[sid / 8] & (1u << (sid % 8)))) {
            int rc = send_ident(st, link, sid);
            if (rc != 0) {
                return rc;
            }
            l->ident_sids[sid / 8] |= (uint8_t) (1u << (sid % 8));
            st->stream_stats.ident_extra++;
        }
    }
    /* A fragment carries its number on the stream (the header is ours to
     * write: the caller's first piece). */
    uint8_t *hdr = iov[0].iov_base;
    bool numbered = hdr[offsetof(bsctp_wire_hdr_t, kind)] == BSCTP_WIRE_FRAG;
    if (numbered) {
        if (!bsctp_seq_ready(&l->seq, st->cfg.streams)) {
            return -ENOMEM;
        }
        uint32_t seq = htonl(bsctp_seq_tx_next(&l->seq, sid));
        memcpy(hdr + offsetof(bsctp_wire_hdr_t, seq), &seq, sizeof(seq));
    }
    int rc = send_message(st, link, sid, iov, iovcnt);
    if (rc == 0) {
        if (numbered) {
            bsctp_seq_tx_sent(&l->seq, sid);
            if (st->mode->resends) {
                bsctp_seq_keep(&l->seq, sid, iov, iovcnt);
            }
        }
        st->stats.tx_msgs++;
        for (int i = 0; i < iovcnt; i++) {
            st->stats.tx_bytes += iov[i].iov_len;
        }
        st->stream_stats.tx_stream[sid < BSCTP_STREAMS_COUNTED ? sid : BSCTP_STREAMS_COUNTED]++;
    }
    return rc;
}

int bsctp_assoc_audit(bsctp_stack_t *st, uint32_t link)
{
    bsctp_link_t *l = &st->links[link];
    if (l->failed || !l->ident_tx || l->rest != NULL || l->seq.s == NULL) {
        return -EAGAIN;
    }
    size_t cap = sizeof(bsctp_wire_hdr_t) + (size_t) l->seq.n * sizeof(bsctp_wire_audit_entry_t);
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        return -ENOMEM;
    }
    bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_AUDIT, 0, 0, 0};
    memcpy(buf, &h, sizeof(h));
    size_t n = bsctp_seq_audit_entries(&l->seq, buf + sizeof(h), cap - sizeof(h));
    /* On stream 0, behind its data and its identification. */
    int rc = n > 0 ? send_one(st, link, 0, buf, sizeof(h) + n) : -EAGAIN;
    free(buf);
    if (rc == 0) {
        st->stats.audits_tx++;
    }
    return rc;
}

int bsctp_assoc_send_on(bsctp_stack_t *st, uint32_t link, uint16_t sid, void *data, size_t len)
{
    struct iovec iov = {data, len};
    return bsctp_assoc_sendv(st, link, sid, &iov, 1);
}

int bsctp_assoc_send(bsctp_stack_t *st, uint32_t link, void *data, size_t len)
{
    if (len < sizeof(bsctp_wire_hdr_t)) {
        return -EINVAL;
    }
    const bsctp_wire_hdr_t *h = data;
    uint16_t sid = h->kind == BSCTP_WIRE_FRAG
                       ? bsctp_assoc_stream(st, link, h->tag, (const uint8_t *) data + sizeof(*h),
                                           len - sizeof(*h))
                       : 0;
    return bsctp_assoc_send_on(st, link, sid, data, len);
}

void bsctp_assoc_abort(bsctp_stack_t *st, bsctp_link_t *l, const char *why)
{
    (void) why;
    st->stats.assoc_rejected++;
    l->aborted_id = l->assoc_id;
    st->style->abort(st, l);
    l->assoc_id = 0;
    ident_tx_forget(l);
    l->ident_rx = false;
    bsctp_seq_rx_forget(&l->seq);
    reasm_clear(l);
    streams_reset(l);
    rest_drop(st, l);
}

void bsctp_assoc_link_fini(bsctp_stack_t *st, bsctp_link_t *l)
{
    streams_reset(l);
    reasm_clear(l);
    rest_drop(st, l);
    bsctp_seq_free(&l->seq);
}

/* ------------------------------------------------------------ receive */

static bsctp_link_t *link_by_assoc(bsctp_stack_t *st, uint32_t assoc_id, uint32_t *index)
{
    if (assoc_id == 0) {
        return NULL;
    }
    for (uint32_t i = 0; i < st->num_links; i++) {
        if (st->links[i].assoc_id == assoc_id) {
            *index = i;
            return &st->links[i];
        }
    }
    /* An association the peer made, which no link names yet. */
    int link = st->style->link_of_assoc != NULL ? st->style->link_of_assoc(st, assoc_id) : -1;
    if (link < 0) {
        return NULL;
    }
    *index = (uint32_t) link;
    return &st->links[link];
}

/* A new association on a link: identification starts over (a message's
 * kept end belonged to the old one). */
static void new_association(bsctp_stack_t *st, bsctp_link_t *l, uint32_t assoc_id)
{
    l->assoc_id = assoc_id;
    l->ident_rx = false;
    bsctp_seq_rx_forget(&l->seq);   /* the peer identifies itself on each stream again */
    rest_drop(st, l);
    reasm_clear(l);
    streams_reset(l);   /* its COMM_UP tells the streams (until then: stream 0) */
}

static void association_ended(bsctp_stack_t *st, uint32_t index, bsctp_link_t *l, const char *why,
                              bool failure, bool never_up)
{
    /* never_up: no association could be made to a peer ob1 sends to (its
     * INITs ran out, or it answered ABORT): connecting again would only
     * repeat that, without end, while ob1's sends wait. */
    bool in_use = l->user != NULL && (never_up || (!l->stranger && (l->ident_tx || l->ident_rx)));
    l->assoc_id = 0;
    ident_tx_forget(l);
    l->ident_rx = false;
    bsctp_seq_rx_forget(&l->seq);
    reasm_clear(l);
    streams_reset(l);
    rest_drop(st, l);
    if (failure && in_use && !st->closing) {
        l->failed = true;
        if (st->ops.peer_failed != NULL) {
            st->ops.peer_failed(st->ctx, l->user, index, why, never_up);
        }
    }
}

static void on_notification(bsctp_stack_t *st, const uint8_t *buf, size_t len)
{
    union sctp_notification n;
    if (len < sizeof(n.sn_header)) {
        st->stats.rx_bad++;
        return;
    }
    memcpy(&n, buf, len < sizeof(n) ? len : sizeof(n));
    uint32_t index = 0;
    bsctp_link_t *l;
    switch (n.sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE: {
        if (len < sizeof(struct sctp_assoc_change)) {
            st->stats.rx_bad++;
            return;
        }
        const struct sctp_assoc_change *ac = &n.sn_assoc_change;
        l = link_by_assoc(st, (uint32_t) ac->sac_assoc_id, &index);
        if (l == NULL) {
            st->stats.assoc_unknown++;   /* an association no link uses: seen, not acted on */
        }
        switch (ac->sac_state) {
        case SCTP_COMM_UP:
            st->stats.assoc_up++;
            if (l != NULL && l->assoc_id != (uint32_t) ac->sac_assoc_id) {
                new_association(st, l, (uint32_t) ac->sac_assoc_id);
            }
            if (l != NULL && l->out_streams != ac->sac_outbound_streams) {
                /* What the peer granted: the streams we may send on. */
                streams_reset(l);
                l->out_streams = ac->sac_outbound_streams;
            }
            break;
        case SCTP_RESTART:
            /* The peer's stack started again: a process that lost its state. */
            if (l != NULL) {
                association_ended(st, index, l, "restarted its association (the process was "
                                  "replaced or lost its state)", true, false);
            }
            break;
        case SCTP_COMM_LOST:
        case SCTP_CANT_STR_ASSOC:
            st->stats.assoc_lost++;
            if (l != NULL) {
                /* The cause an ABORT carried (RFC 9260 3.3.10), 0 after
                 * our own retransmissions ran out: it tells the two apart. */
                char why[160];
                snprintf(why, sizeof(why), "%s (SCTP cause %u)",
                         ac->sac_state == SCTP_COMM_LOST
                             ? "stopped answering: its SCTP association was lost or aborted"
                             : "could not be reached: no SCTP association could be made",
                         (unsigned) ac->sac_error);
                association_ended(st, index, l, why, true,
                                  ac->sac_state == SCTP_CANT_STR_ASSOC);
            }
            break;
        case SCTP_SHUTDOWN_COMP:
            /* The peer closed gracefully (its MPI_Finalize). */
            if (l != NULL) {
                association_ended(st, index, l, NULL, false, false);
            }
            break;
        default:
            break;
        }
        break;
    }
    case SCTP_PARTIAL_DELIVERY_EVENT:
        if (len >= sizeof(struct sctp_pdapi_event)
            && (l = link_by_assoc(st, (uint32_t) n.sn_pdapi_event.pdapi_assoc_id, &index)) != NULL
            && n.sn_pdapi_event.pdapi_stream < l->reasm_streams) {
            /* The rest of that stream's message will never come. */
            bsctp_reasm_t *r = &l->reasm[n.sn_pdapi_event.pdapi_stream];
            free(r->buf);
            memset(r, 0, sizeof(*r));
        }
        break;
    case SCTP_SENDER_DRY_EVENT:
        st->stats.audit_pokes++;   /* only poke_receive asks for it: the poke came through */
        break;
    default:
        break;   /* SCTP_SHUTDOWN_EVENT: the peer is closing; nothing to do */
    }
}

static void reject(bsctp_stack_t *st, bsctp_link_t *l, const char *why)
{
    bsctp_assoc_abort(st, l, why);
}

static void on_ident(bsctp_stack_t *st, uint32_t index, bsctp_link_t *l, uint16_t sid,
                     const uint8_t *msg, size_t len)
{
    bsctp_wire_ident_t id;
    if (len != sizeof(id)) {
        st->stats.rx_bad++;
        reject(st, l, "malformed identification");
        return;
    }
    memcpy(&id, msg, sizeof(id));
    uint64_t key = ((uint64_t) ntohl((uint32_t) id.job_key) << 32) | ntohl((uint32_t) (id.job_key >> 32));
    uint32_t jobid = ntohl(id.jobid), vpid = ntohl(id.vpid);
    if (ntohl(id.magic) != BSCTP_IDENT_MAGIC || key != st->cfg.job_key) {
        reject(st, l, "another job");
        return;
    }
    if (l->stranger) {
        void *user = NULL;
        if (st->ops.identify == NULL
            || st->ops.identify(st->ctx, index, &l->udp, jobid, vpid, &user) != 0) {
            reject(st, l, "unknown peer");
            return;
        }
        l->stranger = false;
        st->strangers--;
        l->jobid = jobid;
        l->vpid = vpid;
        l->user = user;
    } else if (jobid != l->jobid || vpid != l->vpid) {
        reject(st, l, "not the process published at this address");
        return;
    }
    l->ident_rx = true;   /* a repeat (one per stream, later) changes nothing */
    bsctp_seq_rx_restart(&l->seq, sid);   /* the sender numbers the stream afresh after it */
}

/* A message was lost between usrsctp and us: the peer fails (the job ends
 * with why), and nothing more of it is delivered. */
static void lost(bsctp_stack_t *st, uint32_t index, const char *why)
{
    st->stats.rx_lost++;
    bsctp_assoc_fail(st, index, why);
}

/* usrsctp 0.9.5 can leave a message on its read queue while the socket's
 * byte count says it is empty: every read says EWOULDBLOCK until more
 * arrives (sctp_sorecvmsg tests the count first). A notification of our
 * own adds to that count: SENDER_DRY, which usrsctp raises at once when
 * asked for on an association with nothing left to send. Switched off
 * again at once; the notification is only counted (audit_pokes). */
static void poke_receive(bsctp_stack_t *st, bsctp_link_t *l)
{
    struct socket *so;
    uint32_t id;
    if (!st->style->assoc_socket(st, l, &so, &id)) {
        return;
    }
    struct sctp_event ev = {.se_assoc_id = (sctp_assoc_t) id, .se_type = SCTP_SENDER_DRY_EVENT,
                            .se_on = 1};
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev)) == 0) {
        ev.se_on = 0;
        (void) usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev));
    }
}

/* After a short audit (mode inet): ask the peer to send again what each
 * short stream misses (btl_sctp_seq.h, "Resending"), once per claim. */
static void ask_resends(bsctp_stack_t *st, uint32_t index, bsctp_link_t *l)
{
    uint16_t sid;
    uint32_t first, last;
    while (bsctp_seq_rx_ask(&l->seq, &sid, &first, &last)) {
        bsctp_wire_resend_t r = {{BSCTP_WIRE_VERSION, BSCTP_WIRE_RESEND, 0, 0, 0}, htons(sid), 0,
                                 htonl(first), htonl(last), 0};
        /* Through the identification: a receiver may not have sent yet. */
        if (bsctp_assoc_send_on(st, index, 0, &r, sizeof(r)) == 0) {
            st->stats.resend_asks++;
        }
    }
}

/* A peer's RESEND: send the kept copies of first..last on sid again, each
 * wrapped (RESENT, its stream in seq) on stream 0, in order, behind the
 * audit that found them missing. A number no longer kept fails the peer:
 * its message is lost. */
static void on_resend(bsctp_stack_t *st, uint32_t index, bsctp_link_t *l, const uint8_t *msg,
                      size_t len)
{
    bsctp_wire_resend_t r;
    if (len != sizeof(r)) {
        st->stats.rx_bad++;
        return;
    }
    memcpy(&r, msg, sizeof(r));
    uint16_t sid = ntohs(r.sid);
    uint32_t first = ntohl(r.first), last = ntohl(r.last);
    if (sid >= st->cfg.streams || r.reserved != 0 || r.reserved2 != 0
        || last - first >= BSCTP_KEEP_SLOTS || l->seq.s == NULL
        || (int32_t) (l->seq.s[sid].tx_last - last) < 0) {   /* beyond what we sent */
        st->stats.rx_bad++;
        return;
    }
    for (uint32_t seq = first; seq != last + 1u; seq++) {
        if (bsctp_seq_kept(&l->seq, sid, seq) == NULL) {
            char why[320];
            snprintf(why, sizeof(why), "never read message %u we sent on SCTP stream %u, which "
                     "SCTP acknowledged (lost in usrsctp's receive queue, mode %s), and this "
                     "process no longer holds a copy to send again (it keeps its last %u "
                     "fragments of up to %u bytes; docs/sctp-modes.md, \"Lost messages\")",
                     seq, sid, st->mode->name, BSCTP_KEEP_SLOTS, BSCTP_KEEP_MAX);
            lost(st, index, why);
            return;
        }
    }
    for (uint32_t seq = first; seq != last + 1u; seq++) {
        const bsctp_seq_kept_t *k = bsctp_seq_kept(&l->seq, sid, seq);
        bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_RESENT, 0, 0, htonl(sid)};
        memcpy(k->buf, &h, sizeof(h));   /* the room kept before the copy */
        if (send_one(st, index, 0, k->buf + BSCTP_KEEP_ROOM - sizeof(h), sizeof(h) + k->len) != 0) {
            return;   /* the peer's next audit finds it still missing and fails */
        }
        st->stats.resent_tx++;
    }
}

/* An idle peer's audit (btl_sctp_seq.h): its last numbers per stream. */
static void on_audit(bsctp_stack_t *st, uint32_t index, bsctp_link_t *l, uint16_t sid,
                     const uint8_t *msg, size_t len)
{
    bsctp_seq_short_t sh;
    st->stats.audits_rx++;
    int verdict = sid == 0 && bsctp_seq_ready(&l->seq, st->cfg.streams)
                      ? bsctp_seq_audit_check(&l->seq, msg + sizeof(bsctp_wire_hdr_t),
                                              len - sizeof(bsctp_wire_hdr_t), &sh)
                      : BSCTP_AUDIT_BAD;   /* on stream 0 only: behind that stream's data */
    if (verdict == BSCTP_AUDIT_BAD) {
        st->stats.rx_bad++;
    } else if (verdict == BSCTP_AUDIT_SHORT) {
        /* Noted: lost if still short at its next audit. */
        st->stats.audit_shorts++;
        if (st->cfg.trace_paths) {
            char usr[400];   /* where usrsctp may hold it (rx_held: behind a gap) */
            bsctp_assoc_describe(st, index, usr, sizeof(usr));
            fprintf(stderr, "btl_sctp %d: peer %u's audit: stream %u has messages up to %u, "
                    "the peer sent up to %u; reading again (usrsctp: %s)\n", (int) getpid(),
                    index, sh.sid, sh.have, sh.claim, usr);
        }
        poke_receive(st, l);
        if (st->mode->resends) {
            ask_resends(st, index, l);
        }
    } else if (verdict == BSCTP_AUDIT_LOST) {
        char why[320];
        snprintf(why, sizeof(why), "sent message %u on SCTP stream %u, which SCTP acknowledged "
                 "but which never reached the BTL (the last delivered on that stream is %u; "
                 "lost in usrsctp's receive queue, mode %s; docs/sctp-modes.md, \"Lost "
                 "messages\")", sh.have + 1u, sh.sid, sh.have, st->mode->name);
        lost(st, index, why);
    }
}

static void on_message(bsctp_stack_t *st, uint32_t index, bsctp_link_t *l, uint16_t sid,
                       const uint8_t *msg, size_t len)
{
    bsctp_wire_hdr_t h;
    if (len < sizeof(h)) {
        st->stats.rx_bad++;
        return;
    }
    memcpy(&h, msg, sizeof(h));
    /* A fragment sent again comes in one more header. */
    if (len > st->cfg.max_msg + (h.kind == BSCTP_WIRE_RESENT ? sizeof(h) : 0)) {
        /* Whole in one read yet larger than any fragment we send. */
        st->stats.rx_bad++;
        reject(st, l, "message larger than the largest fragment");
        return;
    }
    if (h.version != BSCTP_WIRE_VERSION) {
        st->stats.rx_bad++;
        if (!l->stranger && l->user != NULL) {
            /* Our peer on another build: say so rather than hang. */
            char why[160];
            snprintf(why, sizeof(why), "speaks btl sctp wire version %u, this process %u: "
                     "every rank must run the same build of the component",
                     (unsigned) h.version, (unsigned) BSCTP_WIRE_VERSION);
            bsctp_assoc_fail(st, index, why);
        }
        return;
    }
    if (h.kind == BSCTP_WIRE_IDENT) {
        on_ident(st, index, l, sid, msg, len);
        return;
    }
    if (h.kind != BSCTP_WIRE_FRAG && h.kind != BSCTP_WIRE_AUDIT && h.kind != BSCTP_WIRE_RESEND
        && h.kind != BSCTP_WIRE_RESENT) {
        st->stats.rx_bad++;
        return;
    }
    if (!l->ident_rx) {
        /* Data before identification: not a peer of ours. */
        st->stats.rx_unidentified++;
        reject(st, l, "data before identification");
        return;
    }
    if (l->failed) {
        return;   /* the job ends over this peer: nothing more from it */
    }
    if (h.kind == BSCTP_WIRE_AUDIT) {
        on_audit(st, index, l, sid, msg, len);
        return;
    }
    if (h.kind == BSCTP_WIRE_RESEND) {
        on_resend(st, index, l, msg, len);
        return;
    }
    bool resent = h.kind == BSCTP_WIRE_RESENT;
    if (resent) {
        /* One of ours sent again: its own header and bytes follow, its
         * stream in seq. */
        uint32_t inner_sid = ntohl(h.seq);
        if (len < 2 * sizeof(h) || inner_sid >= st->cfg.streams) {
            st->stats.rx_bad++;
            return;
        }
        sid = (uint16_t) inner_sid;
        msg += sizeof(h);
        len -= sizeof(h);
        memcpy(&h, msg, sizeof(h));
        if (h.version != BSCTP_WIRE_VERSION || h.kind != BSCTP_WIRE_FRAG) {
            st->stats.rx_bad++;
            return;
        }
    }
    if (sid >= st->cfg.streams || !bsctp_seq_ready(&l->seq, st->cfg.streams)) {
        st->stats.rx_bad++;
        reject(st, l, sid >= st->cfg.streams ? "a stream we did not grant"
                                              : "out of memory for the streams' numbers");
        return;
    }
    if (!resent && st->cfg.test_drop_msg != 0 && ++st->test_frags == st->cfg.test_drop_msg) {
        st->stats.test_dropped++;   /* TESTING ONLY: as if usrsctp had lost it */
        return;
    }
    uint32_t seq = ntohl(h.seq);
    if (!bsctp_seq_rx_check(&l->seq, sid, seq)) {
        if (bsctp_seq_rx_dup(&l->seq, sid, seq)) {
            st->stats.rx_dups++;   /* asked again, and both the original and its copy came */
            return;
        }
        /* SCTP delivers a stream in order: a number out of turn means a
         * message was lost (or duplicated) between usrsctp and us. */
        char why[320];
        snprintf(why, sizeof(why), "sent message %u on SCTP stream %u where message %u was due: "
                 "a message it sent was lost between usrsctp and the BTL (mode %s; "
                 "docs/sctp-modes.md, \"Lost messages\")", seq, sid,
                 bsctp_seq_rx_expected(&l->seq, sid), st->mode->name);
        lost(st, index, why);
        return;
    }
    st->stats.resent_rx += resent;
    st->stats.rx_msgs++;
    st->stats.rx_bytes += len;
    st->ops.deliver(st->ctx, l->user, h.tag, msg + sizeof(h), len - sizeof(h));
}

/* The reassembly of stream sid on a link; NULL for a stream beyond those
 * we accept or out of memory. */
static bsctp_reasm_t *reasm_for(bsctp_stack_t *st, bsctp_link_t *l, uint16_t sid)
{
    if (sid >= st->cfg.streams) {
        return NULL;
    }
    if (l->reasm == NULL) {
        if ((l->reasm = calloc(st->cfg.streams, sizeof(*l->reasm))) == NULL) {
            return NULL;
        }
        l->reasm_streams = st->cfg.streams;
    }
    return &l->reasm[sid];
}

/* Keep a piece; true when it fits under the largest message we accept. */
static bool reasm_append(bsctp_stack_t *st, bsctp_reasm_t *r, const uint8_t *p, size_t n)
{
    size_t most = st->cfg.max_msg + sizeof(bsctp_wire_hdr_t);   /* a fragment sent again */
    if (r->len + n > most) {
        return false;
    }
    if (n == 0) {
        return true;   /* an empty piece: nothing to keep (and no buffer yet) */
    }
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 64 * 1024;
        while (cap < r->len + n) {
            cap *= 2;
        }
        if (cap > most) {
            cap = most;
        }
        uint8_t *b = realloc(r->buf, cap);
        if (b == NULL) {
            return false;
        }
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    return true;
}

/* One message, or a piece of one, read for a link on an association. */
void bsctp_assoc_input(bsctp_stack_t *st, uint32_t index, uint32_t assoc_id, uint16_t sid,
                      int flags, const uint8_t *buf, size_t n)
{
    bsctp_link_t *l = &st->links[index];
    if (assoc_id == l->aborted_id) {
        return;   /* queued before our abort */
    }
    if (assoc_id != l->assoc_id) {
        new_association(st, l, assoc_id);
    }
    bsctp_reasm_t *r = sid < l->reasm_streams ? &l->reasm[sid] : NULL;
    if ((flags & MSG_EOR) && (r == NULL || r->len == 0)) {
        on_message(st, index, l, sid, buf, n);   /* whole in one read: the common case */
        return;
    }
    st->stats.rx_partial++;
    if (r == NULL && (r = reasm_for(st, l, sid)) == NULL) {
        st->stats.rx_bad++;
        reject(st, l, sid >= st->cfg.streams ? "a stream we did not grant"
                                              : "out of memory for a message in pieces");
        return;
    }
    if (!reasm_append(st, r, buf, n)) {
        st->stats.rx_bad++;
        reject(st, l, "message larger than the largest fragment");
        return;
    }
    if (!(flags & MSG_EOR)) {
        return;
    }
    /* Delivered synchronously (ob1 copies it): the buffer goes with it, so
     * an idle peer holds none. */
    uint8_t *msg = r->buf;
    size_t len = r->len;
    memset(r, 0, sizeof(*r));
    on_message(st, index, l, sid, msg, len);
    free(msg);
}

void bsctp_assoc_notification(bsctp_stack_t *st, int flags, const uint8_t *buf, size_t n)
{
    if (flags & MSG_EOR) {
        on_notification(st, buf, n);
    } else {
        st->stats.rx_bad++;   /* notifications fit the buffer; never split */
    }
}

/* The link now uses association assoc_id (one-to-one: a socket it
 * connected or adopted): identification both ways, reassembly and streams
 * start over. */
static void use_association(bsctp_stack_t *st, uint32_t link, uint32_t assoc_id)
{
    bsctp_link_t *l = &st->links[link];
    bsctp_assoc_link_fini(st, l);   /* numbering too: afresh on the new association */
    l->assoc_id = assoc_id;
    l->ident_tx = l->ident_rx = false;
}

const bsctp_rx_hooks_t bsctp_assoc_rx = {
    .message = bsctp_assoc_input,
    .notification = bsctp_assoc_notification,
    .new_association = use_association,
    .identify = bsctp_assoc_ident,
};

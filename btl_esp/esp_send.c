/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The sending half of a connection: cutting messages into segments, the
 * send window and congestion window, transmission, acknowledgements (and
 * selective ones), RTT and retransmit timeout, fast retransmit, the resend
 * queue the hotel's evictions feed.
 */
#include "esp_proto_int.h"

#include <stdlib.h>
#include <string.h>

#define RTT_GRANULARITY_NS (64 * 1000)   /* the hotel's tick */

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

void esp_send_init(esp_conn_t *c)
{
    esp_proto_t *p = c->p;
    c->snd_isn = p->cfg.isn != 0 ? p->cfg.isn : (uint32_t) esp_rand(p);
    c->snd_una = c->snd_nxt = c->snd_isn;
    c->cwnd = max_sz(p->cfg.initial_burst, 2 * c->max_payload);
    c->ssthresh = SIZE_MAX / 4;
    c->peer_wnd = p->cfg.initial_burst;
    c->rto_ns = p->cfg.rto_init_ns;
    c->next_frag_id = 1;
}

/* ------------------------------------------------------------- segments */

static esp_seg_t *seg_alloc(esp_proto_t *p, bool copy)
{
    esp_seg_t **pool = copy ? &p->free_copy_segs : &p->free_segs;
    esp_seg_t *s = *pool;
    if (s != NULL) {
        *pool = s->free_next;
    } else {
        s = malloc(sizeof(*s) + (copy ? ESP_COPY_LIMIT : 0));
        if (s == NULL) {
            return NULL;
        }
    }
    memset(s, 0, sizeof(*s));
    s->copied = copy;
    return s;
}

void esp_seg_free(esp_proto_t *p, esp_seg_t *s)
{
    esp_seg_t **pool = s->copied ? &p->free_copy_segs : &p->free_segs;
    s->free_next = *pool;
    *pool = s;
}

static void resend_remove(esp_proto_t *p, esp_seg_t *s)
{
    if (s->rs_prev != NULL) {
        s->rs_prev->rs_next = s->rs_next;
    } else if (p->resend_head == s) {
        p->resend_head = s->rs_next;
    } else {
        return;   /* not queued */
    }
    if (s->rs_next != NULL) {
        s->rs_next->rs_prev = s->rs_prev;
    } else {
        p->resend_tail = s->rs_prev;
    }
    s->rs_prev = s->rs_next = NULL;
}

static bool on_resend_queue(const esp_proto_t *p, const esp_seg_t *s)
{
    return s->rs_prev != NULL || p->resend_head == s;
}

static void resend_append(esp_proto_t *p, esp_seg_t *s)
{
    if (on_resend_queue(p, s)) {
        return;
    }
    s->rs_next = NULL;
    s->rs_prev = p->resend_tail;
    if (p->resend_tail != NULL) {
        p->resend_tail->rs_next = s;
    } else {
        p->resend_head = s;
    }
    p->resend_tail = s;
}

void esp_send_fini(esp_conn_t *c)
{
    esp_proto_t *p = c->p;
    for (uint32_t q = c->snd_una; q != c->snd_nxt; q++) {
        esp_seg_t *s = c->sring[q & (c->scap - 1)];
        if (s != NULL) {
            esp_hotel_checkout(&p->hotel, &s->room);
            resend_remove(p, s);
            free(s);
        }
    }
    free(c->sring);
    c->sring = NULL;
    c->scap = 0;
}

/* Make room in the ring for one more in-flight segment. */
static bool sring_reserve(esp_conn_t *c)
{
    uint32_t need = c->snd_nxt - c->snd_una + 1;
    if (need <= c->scap) {
        return true;
    }
    uint32_t cap = c->scap ? c->scap * 2 : 16;
    esp_seg_t **ring = calloc(cap, sizeof(*ring));
    if (ring == NULL) {
        return false;
    }
    for (uint32_t q = c->snd_una; q != c->snd_nxt; q++) {
        ring[q & (cap - 1)] = c->sring[q & (c->scap - 1)];
    }
    free(c->sring);
    c->sring = ring;
    c->scap = cap;
    return true;
}

/* The pieces of msg's bytes [off, off + len) as at most ESP_MSG_MAX_IOV iovecs. */
static int msg_range(const esp_msg_t *m, size_t off, size_t len, struct iovec *out)
{
    int n = 0;
    for (int i = 0; i < m->iovcnt && len > 0; i++) {
        size_t l = m->iov[i].iov_len;
        if (off >= l) {
            off -= l;
            continue;
        }
        size_t take = min_sz(l - off, len);
        out[n].iov_base = (char *) m->iov[i].iov_base + off;
        out[n].iov_len = take;
        n++;
        len -= take;
        off = 0;
    }
    return n;
}

/* ---------------------------------------------------------- transmission */

void esp_transmit(esp_conn_t *c, esp_hdr_t *h, const void *ext, const struct iovec *payload,
                  int n, enum esp_channel ch)
{
    esp_proto_t *p = c->p;
    struct iovec iov[ESP_TX_MAX_IOV];
    uint8_t buf[ESP_HDR_LEN + ESP_EXT_LEN];
    h->version = ESP_WIRE_VERSION;
    h->token = c->peer_token;
    size_t hl = esp_hdr_encode(h, ext, buf);
    if (c->crc) {
        esp_hdr_seal(buf, hl, payload, n);
    }
    iov[0].iov_base = buf;
    iov[0].iov_len = hl;
    for (int i = 0; i < n; i++) {
        iov[1 + i] = payload[i];
    }
    p->ops.transmit(p->ctx, c->peer, ch, iov, 1 + n);
}

static uint64_t seg_rto(const esp_conn_t *c, unsigned xmits)
{
    uint64_t rto = c->rto_ns;
    for (unsigned i = 1; i < xmits && rto < c->p->cfg.rto_max_ns; i++) {
        rto *= 2;
    }
    return rto < c->p->cfg.rto_max_ns ? rto : c->p->cfg.rto_max_ns;
}

/* Which channel a segment travels on: small ones take the priority channel. */
static enum esp_channel seg_channel(const esp_conn_t *c, const esp_seg_t *s)
{
    return s->len <= c->p->cfg.tiny ? ESP_CH_PRIO : ESP_CH_DATA;
}

/* Send (or send again) one segment with the newest acknowledgement on it,
 * and check it into the hotel. */
static void seg_transmit(esp_conn_t *c, esp_seg_t *s, uint64_t now)
{
    esp_proto_t *p = c->p;
    esp_hdr_t h = {
        .type = s->type,
        .flags = (uint8_t) (s->flags | (s->xmits > 0 ? ESP_F_RETX : 0)),
        .tag = s->tag,
        .seq = s->seq,
        .len = (uint16_t) s->len,
    };
    esp_fill_ack(c, &h);
    struct iovec pl[ESP_MSG_MAX_IOV];
    int n;
    if (s->copied) {
        pl[0].iov_base = s->data;
        pl[0].iov_len = s->len;
        n = s->len > 0;
    } else {
        n = msg_range(s->msg, s->off, s->len, pl);
    }
    esp_transmit(c, &h, &s->ext, pl, n, seg_channel(c, s));
    s->xmits++;
    s->sent_ns = now;
    esp_hotel_checkin(&p->hotel, &s->room, now + seg_rto(c, s->xmits));
    p->stats.segs_tx++;
    p->stats.bytes_tx += s->len;
}

/* Bytes the receiver lets us have in flight now. */
static size_t granted(const esp_conn_t *c)
{
    if (c->bursting && !c->txs_acked) {
        return min_sz(c->peer_wnd, c->p->cfg.initial_burst);
    }
    return c->peer_wnd;
}

/* Bytes the windows (the receiver's, and the path's congestion window) let
 * us have in flight now. */
static size_t send_limit(const esp_conn_t *c)
{
    return min_sz(c->cwnd, granted(c));
}

/* Give a new segment its sequence number, burst flags and place in the
 * window, and send it. */
static void seg_launch(esp_conn_t *c, esp_seg_t *s, uint64_t now)
{
    s->conn = c;
    s->seq = c->snd_nxt++;
    c->sring[s->seq & (c->scap - 1)] = s;
    if (!c->bursting) {
        s->flags |= ESP_F_TXS;
        c->bursting = true;
        c->txs_acked = false;
        c->txs_seq = s->seq;
    }
    if (c->sendq_head == NULL) {
        s->flags |= ESP_F_TXF;   /* nothing more queued: the burst ends here */
        c->bursting = false;
    }
    if (c->flight == 0 && s->seq == c->snd_una) {
        c->last_progress_ns = now;   /* the peer's answer is awaited from now */
    }
    c->flight += s->len;
    /* Ask for the ACK at once when we will wait for it: the message's
     * completion, or the window, depends on it. */
    bool will_wait = c->sendq_head == NULL
                         ? s->msg != NULL && s->msg->prompt_ack && s->off + s->len == s->msg->len
                         : c->snd_nxt - c->snd_una >= c->p->cfg.window
                               || c->flight + c->max_payload > granted(c);
    if (will_wait) {
        s->flags |= ESP_F_ACKNOW;
    }
    seg_transmit(c, s, now);
}

/* Payload bytes of the next segment of m. */
static size_t next_piece(const esp_conn_t *c, const esp_msg_t *m, uint8_t *type)
{
    size_t left = m->len - m->queued;
    if (m->kind == ESP_MSG_PUT) {
        *type = ESP_T_PUT;
    } else if (m->queued == 0 && m->len <= c->max_payload - ESP_HDR_LEN) {
        *type = ESP_T_FRAG;
        return m->len;
    } else {
        *type = ESP_T_CHUNK;
    }
    return min_sz(left, c->max_payload - esp_hdr_space(*type));
}

void esp_push(esp_conn_t *c, uint64_t now)
{
    esp_proto_t *p = c->p;
    if (c->state != ESP_ESTABLISHED) {
        return;
    }
    while (c->sendq_head != NULL) {
        esp_msg_t *m = c->sendq_head;
        uint8_t type;
        size_t piece = next_piece(c, m, &type);
        if (c->snd_nxt - c->snd_una >= p->cfg.window
            || (c->flight > 0 && c->flight + piece > send_limit(c))) {
            if (!c->window_stalled) {
                c->window_stalled = true;
                p->stats.window_stalls++;
            }
            return;
        }
        esp_seg_t *s;
        if (!sring_reserve(c) || (s = seg_alloc(p, false)) == NULL) {
            return;   /* out of memory: try again on the next ACK or tick */
        }
        c->window_stalled = false;
        s->msg = m;
        s->type = type;
        s->tag = m->tag;
        s->off = (uint32_t) m->queued;
        s->len = (uint32_t) piece;
        if (type == ESP_T_CHUNK) {
            if (m->queued == 0) {
                m->frag_id = c->next_frag_id++;
            }
            s->ext.chunk = (esp_chunk_ext_t){m->frag_id, (uint32_t) m->len, s->off, 0};
        } else if (type == ESP_T_PUT) {
            s->ext.put = (esp_put_ext_t){m->put_key, m->put_addr + s->off};
            s->tag = 0;
        }
        m->queued += piece;
        m->segs_out++;
        if (m->queued == m->len) {
            c->sendq_head = m->next;
            if (c->sendq_head == NULL) {
                c->sendq_tail = NULL;
            }
        }
        seg_launch(c, s, now);
    }
}

size_t esp_proto_copy_limit(const esp_proto_t *p)
{
    (void) p;
    return ESP_COPY_LIMIT;
}

int esp_proto_send_copy(esp_proto_t *p, uint32_t peer, uint8_t tag, const struct iovec *iov,
                        int iovcnt, uint64_t now)
{
    now = esp_clock(p, now);
    esp_conn_t *c = esp_conn_get(p, peer);
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
    }
    /* Only when it can go now, behind nothing queued (order is kept). */
    if (c == NULL || c->state != ESP_ESTABLISHED || c->sendq_head != NULL
        || len > ESP_COPY_LIMIT || len > c->max_payload - ESP_HDR_LEN
        || c->snd_nxt - c->snd_una >= p->cfg.window
        || (c->flight > 0 && c->flight + len > send_limit(c))) {
        return -1;
    }
    esp_seg_t *s;
    if (!sring_reserve(c) || (s = seg_alloc(p, true)) == NULL) {
        return -1;
    }
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(s->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    s->type = ESP_T_FRAG;
    s->tag = tag;
    s->len = (uint32_t) len;
    p->depth++;
    seg_launch(c, s, now);
    p->depth--;
    esp_flush_completions(p);
    return 0;
}

/* ------------------------------------------------------ acknowledgements */

static void rtt_sample(esp_conn_t *c, uint64_t rtt)
{
    if (c->srtt_ns == 0) {
        c->srtt_ns = rtt;
        c->rttvar_ns = rtt / 2;
        c->min_rtt_ns = rtt;
    } else {
        uint64_t err = rtt > c->srtt_ns ? rtt - c->srtt_ns : c->srtt_ns - rtt;
        c->rttvar_ns = (3 * c->rttvar_ns + err) / 4;
        c->srtt_ns = (7 * c->srtt_ns + rtt) / 8;
        if (rtt < c->min_rtt_ns) {
            c->min_rtt_ns = rtt;
        }
    }
    uint64_t var = 4 * c->rttvar_ns;
    uint64_t rto = c->srtt_ns + (var > RTT_GRANULARITY_NS ? var : RTT_GRANULARITY_NS);
    const esp_proto_config_t *cfg = &c->p->cfg;
    c->rto_ns = rto < cfg->rto_min_ns ? cfg->rto_min_ns : rto > cfg->rto_max_ns ? cfg->rto_max_ns : rto;
}

/*
 * Keep the queue we build on the path short. Loss alone would let the
 * congestion window grow until a switch queue overflows (5 ms at line rate
 * is common), and the round trip would swing far above the retransmit
 * timeout. When a round trip exceeds the least one seen by more than the
 * allowance, the window shrinks by a quarter, at most once per round trip;
 * this also ends slow start.
 */
#define QUEUE_ALLOWANCE_NS (500 * 1000)

static uint64_t queue_allowance(const esp_conn_t *c)
{
    return 2 * c->min_rtt_ns > QUEUE_ALLOWANCE_NS ? 2 * c->min_rtt_ns : QUEUE_ALLOWANCE_NS;
}

static void queue_check(esp_conn_t *c, uint64_t rtt, uint64_t now)
{
    c->last_rtt_ns = rtt;
    if (rtt <= c->min_rtt_ns + queue_allowance(c) || now < c->cc_hold_ns) {
        return;
    }
    size_t floor = 2 * c->max_payload;
    c->cwnd = max_sz(floor, c->cwnd - c->cwnd / 4);
    c->ssthresh = c->cwnd;
    c->cc_hold_ns = now + rtt;
    c->p->stats.delay_backoffs++;
}

/* A segment is acknowledged: stop its timer, account its message. */
static void seg_acked(esp_conn_t *c, esp_seg_t *s)
{
    esp_proto_t *p = c->p;
    esp_hotel_checkout(&p->hotel, &s->room);
    resend_remove(p, s);
    esp_msg_t *m = s->msg;
    if (m != NULL && --m->segs_out == 0 && m->queued == m->len) {
        m->next = NULL;
        if (p->done_tail != NULL) {
            p->done_tail->next = m;
        } else {
            p->done_head = m;
        }
        p->done_tail = m;
    }
    esp_seg_free(p, s);
}

/* Loss seen (timeout or fast retransmit): halve the congestion window, once
 * per window of data. */
static void loss_event(esp_conn_t *c, bool timeout)
{
    if (c->in_recovery && !timeout) {
        return;
    }
    /* A loss while the round trip is near its least is not a queue
     * overflowing (the delay back-off keeps queues short): random loss on
     * the wire, which a smaller window would not prevent. */
    if (!timeout && c->last_rtt_ns != 0
        && c->last_rtt_ns <= c->min_rtt_ns + queue_allowance(c) / 2) {
        c->p->stats.random_losses++;
        c->in_recovery = true;
        c->recover = c->snd_nxt;
        return;
    }
    size_t floor = 2 * c->max_payload;
    c->ssthresh = max_sz(c->flight / 2, floor);
    c->cwnd = timeout ? max_sz(c->p->cfg.initial_burst, floor) : c->ssthresh;
    c->in_recovery = true;
    c->recover = c->snd_nxt;
}

static void fast_retransmit(esp_conn_t *c, esp_seg_t *s, uint64_t now)
{
    esp_proto_t *p = c->p;
    /* Not again within a round trip: its answer may be on the way. With no
     * RTT measured yet, the RTO stands for it: a guard of 0 resends every
     * hole on every ACK, and as resent segments give no RTT sample (Karn),
     * that storm never ends. */
    uint64_t guard = c->srtt_ns == 0 ? c->rto_ns
                     : c->srtt_ns > c->min_rtt_ns / 2 ? c->srtt_ns : c->min_rtt_ns / 2;
    if (now - s->sent_ns < guard) {
        return;
    }
    loss_event(c, false);
    esp_hotel_checkout(&p->hotel, &s->room);
    resend_remove(p, s);
    p->stats.fast_retransmits++;
    p->stats.retransmits++;
    seg_transmit(c, s, now);
}

void esp_on_ack(esp_conn_t *c, const esp_hdr_t *h, uint64_t now)
{
    esp_proto_t *p = c->p;
    uint32_t ack = h->ack;
    if (esp_seq_gt(ack, c->snd_nxt)) {
        p->stats.malformed++;   /* acknowledges what we never sent */
        return;
    }
    if (esp_seq_lt(ack, c->snd_una)) {
        return;   /* older than what we know: reordered, nothing new */
    }
    size_t newly = 0;
    bool advanced = ack != c->snd_una;
    if (advanced) {
        /* The newest segment acknowledged gives the RTT, when every segment
         * acknowledged was sent once and not sacked: after a hole (a loss,
         * or a segment overtaken) the ACK waited for the hole to fill, and
         * the time since the newest was sent says nothing of the path. */
        bool clean = true;
        uint64_t newest_sent = 0;
        for (uint32_t q = c->snd_una; q != ack; q++) {
            esp_seg_t **slot = &c->sring[q & (c->scap - 1)];
            esp_seg_t *s = *slot;
            *slot = NULL;
            if (!s->sacked) {
                c->flight -= s->len;
                newly += s->len;
            }
            if (c->bursting && !c->txs_acked && q == c->txs_seq) {
                c->txs_acked = true;
            }
            if (s->xmits != 1 || s->sacked) {
                clean = false;
            }
            newest_sent = s->sent_ns;
            seg_acked(c, s);
        }
        if (clean) {
            rtt_sample(c, now - newest_sent);
            queue_check(c, now - newest_sent, now);
        }
        c->snd_una = ack;
        c->last_progress_ns = now;
        if (c->in_recovery && esp_seq_ge(ack, c->recover)) {
            c->in_recovery = false;
        }
        /* Slow start, then one segment per window (congestion avoidance). */
        size_t cap = (size_t) p->cfg.window * c->max_payload;
        if (c->cwnd < c->ssthresh) {
            c->cwnd += newly;
        } else {
            c->cwnd += max_sz(1, c->max_payload * newly / c->cwnd);
        }
        if (c->cwnd > cap) {
            c->cwnd = cap;
        }
    }
    c->peer_wnd = h->wnd == 0xffff ? SIZE_MAX / 4 : (size_t) h->wnd << 10;
    if (h->sack != 0 && c->snd_una != c->snd_nxt) {
        /* Selective acknowledgement of ack+1 .. ack+32. The receiver
         * answers an out-of-order segment at once, so the newest segment
         * newly sacked, if sent once, gives an RTT sample too; but not when
         * the ACK advanced: then the bits are new because the range moved,
         * and may report segments that arrived long ago. */
        /* Later segments acknowledged first, per channel: the priority
         * channel overtakes the data channel, which is reordering, not loss. */
        unsigned above[2] = {0, 0};
        bool sampled = advanced;
        for (int i = 31; i >= 0; i--) {
            uint32_t q = ack + 1 + (uint32_t) i;
            if (!esp_seq_lt(q, c->snd_nxt)) {
                continue;
            }
            esp_seg_t *s = c->sring[q & (c->scap - 1)];
            if (h->sack & (1u << i)) {
                if (s != NULL) {
                    above[seg_channel(c, s)]++;
                }
                if (s != NULL && !s->sacked) {
                    if (!sampled && s->xmits == 1) {
                        rtt_sample(c, now - s->sent_ns);
                        sampled = true;
                    }
                    s->sacked = true;
                    c->flight -= s->len;
                    /* It keeps a timer: should the ACK that covers it be
                     * lost, the oldest sacked segment is sent again as a
                     * probe (esp_on_timeout). */
                    resend_remove(p, s);
                    if (!esp_room_occupied(&s->room)) {
                        esp_hotel_checkin(&p->hotel, &s->room, now + seg_rto(c, s->xmits));
                    }
                }
            } else if (s != NULL && !s->sacked && above[seg_channel(c, s)] >= ESP_DUPTHRESH) {
                fast_retransmit(c, s, now);
            }
        }
        esp_seg_t *first = c->sring[ack & (c->scap - 1)];
        if (first != NULL && !first->sacked && above[seg_channel(c, first)] >= ESP_DUPTHRESH) {
            fast_retransmit(c, first, now);
        }
    }
    esp_push(c, now);
}

/* ------------------------------------------------------- retransmission */

void esp_on_timeout(esp_proto_t *p, esp_seg_t *s, uint64_t now)
{
    esp_conn_t *c = s->conn;
    if (c->state != ESP_ESTABLISHED) {
        return;
    }
    if (now - c->last_progress_ns >= p->cfg.peer_timeout_ns) {
        const esp_seg_t *old = c->sring[c->snd_una & (c->scap - 1)];
        esp_conn_fail(c, "no acknowledgement for %.1f s (%u segments unacknowledged; the "
                      "oldest sent %u times, %s%s%s)",
                      (double) (now - c->last_progress_ns) / 1e9, c->snd_nxt - c->snd_una,
                      old->xmits, old->sacked ? "sacked, " : "",
                      esp_room_occupied(&old->room) ? "timer running" : "no timer",
                      on_resend_queue(p, old) ? ", queued for resend" : "");
        return;
    }
    /* The retransmit timer restarts whenever the peer acknowledges new data
     * (RFC 6298 5.3): a segment behind a deep queue is not lost while the
     * ACKs still advance. And a segment beyond what an ACK's SACK bits can
     * report waits for the oldest one: when that is lost, the peer may well
     * have this one, and resending the whole window on every timeout is a
     * retransmission storm. */
    uint64_t rto = seg_rto(c, s->xmits);
    uint64_t from = s->sent_ns > c->last_progress_ns ? s->sent_ns : c->last_progress_ns;
    if (from + rto > now) {
        esp_hotel_checkin(&p->hotel, &s->room, from + rto);
        return;
    }
    if (s->seq - c->snd_una > ESP_SACK_BITS || (s->sacked && s->seq != c->snd_una)) {
        esp_hotel_checkin(&p->hotel, &s->room, now + rto);
        return;
    }
    if (s->sacked) {
        /* The peer has the oldest segment, yet no ACK covers it: that ACK
         * was lost, and with every other segment sacked or waiting behind
         * this one nothing else would make the peer speak. The copy it
         * gets is a duplicate, which it answers at once. Not a loss of
         * data: no congestion response. */
        p->stats.probes++;
        resend_append(p, s);
        return;
    }
    p->stats.timeouts++;
    loss_event(c, true);
    resend_append(p, s);
}

void esp_resend_pass(esp_proto_t *p, uint64_t now)
{
    for (uint32_t n = 0; n < p->cfg.resend_per_pass && p->resend_head != NULL; n++) {
        esp_seg_t *s = p->resend_head;
        resend_remove(p, s);
        if (s->conn->state != ESP_ESTABLISHED) {
            continue;
        }
        p->stats.retransmits++;
        seg_transmit(s->conn, s, now);
    }
}

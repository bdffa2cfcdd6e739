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
#define PATH_RATE_INTERVAL_NS (1000 * 1000)  /* a path's delivery rate is measured over this */

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* A path's window and loss state from scratch (new, or back from the dead). */
static void path_restart(esp_conn_t *c, esp_path_t *pa, uint64_t now)
{
    pa->cwnd = max_sz(c->p->cfg.initial_burst, 2 * c->max_payload);
    pa->ssthresh = SIZE_MAX / 4;
    pa->in_recovery = pa->undo_valid = false;
    pa->rack_sent_ns[0] = pa->rack_sent_ns[1] = 0;
    pa->rack_rtt_ns = 0;
    pa->heard_ns = pa->answered_ns = now;
    pa->owe_since_ns = 0;
}

void esp_send_init_paths(esp_conn_t *c)
{
    for (unsigned k = 0; k < c->npaths; k++) {
        path_restart(c, &c->path[k], c->p->now);
    }
}

void esp_send_init(esp_conn_t *c)
{
    esp_proto_t *p = c->p;
    c->snd_isn = p->cfg.isn != 0 ? p->cfg.isn : (uint32_t) esp_rand(p);
    c->snd_una = c->snd_nxt = c->sack_high = c->sack_unsure_to = c->snd_isn;
    c->path = &c->path0;
    c->npaths = 1;
    c->path[0].up = true;
    esp_send_init_paths(c);
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

/* m's caller may have it back: ops->complete at the next flush. */
static void msg_done(esp_proto_t *p, esp_msg_t *m)
{
    esp_msg_append(&p->done_head, &p->done_tail, m);
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
            if (s->msg != NULL && s->msg->released && --s->msg->segs_out == 0) {
                free(s->msg);
            }
            free(s);
        }
    }
    free(c->sring);
    c->sring = NULL;
    c->scap = 0;
    free(c->resent_log);
    c->resent_log = NULL;
    if (c->path != &c->path0) {
        free(c->path);
        c->path = &c->path0;
        c->npaths = 1;
    }
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

/* Copy the n pieces of iov to dst, one after the other; their length. */
static size_t iov_gather(void *dst, const struct iovec *iov, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        memcpy((uint8_t *) dst + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    return at;
}

/* ---------------------------------------------------------- transmission */

void esp_transmit(esp_conn_t *c, unsigned path, esp_hdr_t *h, const void *ext,
                  const struct iovec *payload, int n, enum esp_channel ch)
{
    esp_proto_t *p = c->p;
    struct iovec iov[ESP_TX_MAX_IOV];
    uint8_t buf[ESP_ACK_MAX_LEN > ESP_HDR_LEN + ESP_EXT_LEN + ESP_CRC_EXT_LEN
                    ? ESP_ACK_MAX_LEN : ESP_HDR_LEN + ESP_EXT_LEN + ESP_CRC_EXT_LEN];
    h->version = ESP_WIRE_VERSION;
    size_t hl;
    if (esp_type_compact(h->type)) {
        h->conn = (uint32_t) c->peer_token;
        hl = esp_hdr_encode(h, ext, buf);
        esp_hdr_seal_compact(buf, c->peer_token, payload, n, c->crc);
    } else {
        h->token = c->peer_token;
        hl = esp_hdr_seal(buf, esp_hdr_encode(h, ext, buf), payload, n, c->crc);
    }
    iov[0].iov_base = buf;
    iov[0].iov_len = hl;
    if (h->type == ESP_T_ACK) {
        /* An ACK's payload (SACK blocks) is the caller's, gone when it
         * returns: it goes in the header piece, which transmit copies. */
        iov[0].iov_len += iov_gather(buf + iov[0].iov_len, payload, n);
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        iov[1 + i] = payload[i];
    }
    p->ops.transmit(p->ctx, c->peer, path, ch, iov, 1 + n);
}

static uint64_t seg_rto(const esp_conn_t *c, unsigned xmits)
{
    uint64_t rto = c->rto_ns;
    for (unsigned i = 1; i < xmits && rto < c->p->cfg.rto_max_ns; i++) {
        rto *= 2;
    }
    return rto < c->p->cfg.rto_max_ns ? rto : c->p->cfg.rto_max_ns;
}

/* Which channel a segment travels on: small messages take the priority
 * channel. A large message's pieces all go on the data channel, its short
 * last one too: on the priority channel that one overtook the others, and
 * its delivery, in another order than theirs, could not show one of them
 * lost (rack_detect), which then waited for the timeout. */
static enum esp_channel seg_channel(const esp_conn_t *c, const esp_seg_t *s)
{
    return s->type == ESP_T_FRAG && s->len <= c->p->cfg.tiny ? ESP_CH_PRIO : ESP_CH_DATA;
}

/*
 * Tail loss probe (RFC 8985 7): the last segment of a burst has nothing
 * after it whose delivery would show it lost, and a timeout can be long
 * (it stays above the largest round trip of late). When no ACK came in two
 * round trips plus the ACK delay, it is sent once more as a probe: if it was
 * lost, that repairs it; if not, the receiver drops the copy. One probe per
 * tail until new data is acknowledged. The time it is due, or never.
 */
static uint64_t tail_probe_due(const esp_conn_t *c, const esp_seg_t *s)
{
    /* The tail: the last segment of a burst, or a segment sent again for
     * a loss by order with nothing sent since (which nothing would show
     * lost a second time but the timeout, backed off). */
    bool tail = s->xmits == 1 ? (s->flags & ESP_F_TXF) && s->seq == c->snd_nxt - 1
                              : s->xmits == 2 && s->resent == ESP_RESENT_ORDER
                                    && s->seq == c->newest_tx;
    if (!tail || c->tlp_out || c->srtt_ns == 0) {
        return UINT64_MAX;
    }
    /* A message sent alone (an allreduce's 8 bytes, say) is answered in
     * the least round trip, not in one that a stream's queue made. The
     * receiver's delayed ACK waits for its next progress pass, the hotel's
     * timers for their slot: a granularity more. And no later than the
     * timeout (RFC 8985 7.2): a tail whose ACK was lost is then probed, its
     * copy's duplicate report expected, not taken for a round trip that
     * outgrew the timeout (which raises the timeout for the next loss). */
    uint64_t rtt = s->alone && c->min_rtt_ns != 0 ? c->min_rtt_ns : c->srtt_ns;
    uint64_t probe = s->sent_ns + 2 * rtt + c->p->cfg.ack_delay_ns + RTT_GRANULARITY_NS;
    uint64_t timeout = s->sent_ns + seg_rto(c, s->xmits);
    return probe < timeout ? probe : timeout;
}

/* Remember why s was sent again: its original may well be acknowledged
 * before the copy arrives, and the duplicate report then names a segment
 * that is gone (on_dup_report). Allocated at the first resend. */
static void log_resend(esp_conn_t *c, const esp_seg_t *s, uint64_t now)
{
    if (c->resent_log == NULL
        && (c->resent_log = calloc(ESP_RESENT_LOG, sizeof(*c->resent_log))) == NULL) {
        return;
    }
    esp_resent_t *e = &c->resent_log[c->resent_next++ % ESP_RESENT_LOG];
    e->at_ns = now;
    e->seq = s->seq;
    e->why = s->resent;
    e->path = s->path;
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
        .offset = esp_type_compact(s->type) ? s->ext.chunk.offset : 0,
    };
    if (esp_type_compact(s->type)) {
        p->stats.compact_tx++;   /* no acknowledgement on it: the ACK timer has it */
    } else {
        esp_fill_ack(c, &h);
    }
    struct iovec pl[ESP_MSG_MAX_IOV];
    int n;
    if (s->copied) {
        pl[0].iov_base = s->data;
        pl[0].iov_len = s->len;
        n = s->len > 0;
    } else {
        n = msg_range(s->msg, s->off, s->len, pl);
    }
    if (s->xmits > 0
        && (s->resent == ESP_RESENT_ORDER || s->resent == ESP_RESENT_TIMEOUT
            || s->resent == ESP_RESENT_REPORT)) {
        log_resend(c, s, now);
    }
    esp_transmit(c, s->path, &h, &s->ext, pl, n, seg_channel(c, s));
    c->newest_tx = s->seq;
    esp_path_t *pa = &c->path[s->path];
    pa->segs_tx++;
    pa->bytes_tx += s->len;
    if (pa->owe_since_ns == 0) {
        pa->owe_since_ns = now;   /* the peer's answer by this path is awaited from now */
    }
    s->xmits++;
    s->sent_ns = now;
    if (s->xmits == 1) {
        s->first_sent_ns = now;
    }
    uint64_t due = now + seg_rto(c, s->xmits), probe = tail_probe_due(c, s);
    if (probe < due) {
        due = probe;
    }
    esp_hotel_checkin(&p->hotel, &s->room, due);
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

/* ---------------------------------------------------------------- pacing */

/* The grant is what the receiver lets us have in flight over a round
 * trip. Sent at once, as it is when a late ACK reopens it, it arrives as
 * one burst; several senders bursting together into one receiver
 * (incast: its rank was off its core, then acknowledged them all) overflow
 * the switch port before it, and whoever it answers first gets ahead. So
 * new data goes at PACE_GAIN times grant / srtt, in bursts of at most an
 * eighth of the grant (PACE_BURST_MIN at least: a GSO send's worth). On
 * a link of its own the pace is above what the path carries, and changes
 * nothing. */
#define PACE_GAIN_NUM 5
#define PACE_GAIN_DEN 4
#define PACE_BURST_MIN ((int64_t) 64 << 10)
#define PACE_REFILL_MAX_NS (100 * 1000 * 1000)

/* Bytes/s new data goes at; 0: not paced (no round trip yet, no grant). */
static uint64_t pace_rate(const esp_conn_t *c)
{
    if (!c->p->cfg.pace || c->srtt_ns == 0 || c->peer_wnd > ((size_t) 0xffff << 10)) {
        return 0;
    }
    return (uint64_t) c->peer_wnd * 1000000000ull / c->srtt_ns * PACE_GAIN_NUM / PACE_GAIN_DEN;
}

/* May new data go now? Its tokens accrue at the pace, up to a burst. */
static bool pace_allows(esp_conn_t *c, uint64_t now)
{
    uint64_t rate = pace_rate(c);
    if (rate == 0) {
        return true;
    }
    if (now > c->pace_ns) {
        uint64_t dt = now - c->pace_ns;
        if (dt > PACE_REFILL_MAX_NS) {
            dt = PACE_REFILL_MAX_NS;
        }
        int64_t burst = (int64_t) c->peer_wnd / 8;
        if (burst < PACE_BURST_MIN) {
            burst = PACE_BURST_MIN;
        }
        c->pace_tokens += (int64_t) (dt * (rate / 1000) / 1000000);
        if (c->pace_tokens > burst) {
            c->pace_tokens = burst;
        }
        c->pace_ns = now;
    }
    return c->pace_tokens > 0;
}

/* New data waits for its pace: the next tick pushes again. */
static void pace_wait(esp_conn_t *c)
{
    if (!c->on_pace_list) {
        c->on_pace_list = true;
        c->pace_next = c->p->pace_list;
        c->p->pace_list = c;
        c->p->stats.pace_waits++;
    }
}

void esp_pace_timers(esp_proto_t *p, uint64_t now)
{
    esp_conn_t *c = p->pace_list;
    p->pace_list = NULL;
    while (c != NULL) {
        esp_conn_t *next = c->pace_next;
        c->on_pace_list = false;
        esp_push(c, now);
        c = next;
    }
}

/* What path pa delivers, bytes/s: measured, else (not yet) the best any
 * path of c delivers, so that it gets its share and gets measured; 0 while
 * none is measured. */
static uint64_t path_rate(const esp_conn_t *c, const esp_path_t *pa)
{
    uint64_t r = pa->rate_bps;
    for (unsigned k = 0; r == 0 && k < c->npaths; k++) {
        r = c->path[k].rate_bps > r ? c->path[k].rate_bps : r;
    }
    return r;
}

/* Would len more bytes by a arrive after them by b? What each path has out
 * drains at its rate: the earliest arrival takes the segment, which spreads
 * a stream over the paths in proportion to what each delivers. */
static bool later(const esp_conn_t *c, const esp_path_t *a, const esp_path_t *b, size_t len)
{
    uint64_t ra = path_rate(c, a), rb = path_rate(c, b);
    if (ra == 0 || rb == 0) {
        return a->flight > b->flight;   /* nothing measured yet: even shares */
    }
    return (unsigned __int128) (a->flight + len) * rb > (unsigned __int128) (b->flight + len) * ra;
}

/*
 * The path a new segment of len bytes goes by, or ESP_NO_PATH when every
 * live path's congestion window is full. Data goes to the live path by
 * which it would arrive first (later()), within each path's own congestion
 * window, grown and cut by its own deliveries and losses. A tiny segment
 * (latency, not volume) takes the live path with the shortest round trip.
 * With no path live (all dead, being probed), every path is tried in turn:
 * whichever comes back carries the data, and the peer timeout still ends
 * the job when none does. `avoid` is not chosen while another path can be.
 * Standby paths are left out while another live path (not `avoid`) is.
 */
static unsigned pick_path(const esp_conn_t *c, size_t len, unsigned avoid)
{
    if (c->npaths == 1) {
        const esp_path_t *pa = &c->path[0];
        return pa->flight == 0 || pa->flight + len <= pa->cwnd ? 0 : ESP_NO_PATH;
    }
    bool any_up = false, main_up = false;
    for (unsigned k = 0; k < c->npaths; k++) {
        any_up |= c->path[k].up;
        main_up |= c->path[k].up && !c->path[k].standby && k != avoid;
    }
    bool tiny = len <= c->p->cfg.tiny;
    unsigned best = ESP_NO_PATH, fallback = ESP_NO_PATH;
    for (unsigned k = 0; k < c->npaths; k++) {
        const esp_path_t *pa = &c->path[k];
        if ((any_up && !pa->up) || (main_up && pa->standby)
            || (pa->flight > 0 && pa->flight + len > pa->cwnd)) {
            continue;
        }
        if (k == avoid) {
            fallback = k;
            continue;
        }
        if (best == ESP_NO_PATH || (tiny ? pa->srtt_ns < c->path[best].srtt_ns
                                         : later(c, &c->path[best], pa, len))) {
            best = k;
        }
    }
    return best != ESP_NO_PATH ? best : fallback;
}

/* The first live path, standby ones last (the handshake's and a lone
 * resend's fallback). */
static unsigned first_path(const esp_conn_t *c)
{
    for (int standby = 0; standby < 2; standby++) {
        for (unsigned k = 0; k < c->npaths; k++) {
            if (c->path[k].up && c->path[k].standby == (standby == 1)) {
                return k;
            }
        }
    }
    return 0;
}

/* Account s as out on path k (it was out on none, or on another). */
static void seg_set_path(esp_conn_t *c, esp_seg_t *s, unsigned k)
{
    if (!s->sacked && s->path != ESP_NO_PATH) {
        c->path[s->path].flight -= s->len;
    }
    s->path = (uint8_t) k;
    if (!s->sacked) {
        esp_path_t *pa = &c->path[k];
        pa->flight += s->len;
        if (pa->flight + c->max_payload > pa->cwnd) {
            pa->rate_full = true;   /* it carries what its window lets it */
        }
    }
}

/* Give a new segment its sequence number, burst flags and place in the
 * window, and send it. */
static void seg_launch(esp_conn_t *c, esp_seg_t *s, unsigned path, uint64_t now)
{
    s->conn = c;
    s->path = ESP_NO_PATH;
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
    s->alone = c->flight == 0 && (s->flags & ESP_F_TXF);
    c->flight += s->len;
    seg_set_path(c, s, path);
    /* Ask for the ACK at once when we will wait for it: the message's
     * completion, or the window, depends on it. */
    bool will_wait = c->sendq_head == NULL
                         ? s->msg != NULL && s->msg->prompt_ack && s->off + s->len == s->msg->len
                         : c->snd_nxt - c->snd_una >= c->p->cfg.window
                               || c->flight + c->max_payload > granted(c)
                               || pick_path(c, c->max_payload, ESP_NO_PATH) == ESP_NO_PATH;
    if (will_wait) {
        s->flags |= ESP_F_ACKNOW;
    }
    seg_transmit(c, s, now);
}

/* Payload bytes a segment of this type carries at most. */
static size_t piece_room(const esp_conn_t *c, uint8_t type)
{
    if (esp_type_compact(type)) {
        /* its CRC is inside; its length, as any payload's, fits 16 bits */
        return min_sz(c->max_payload + ESP_CRC_EXT_LEN - ESP_COMPACT_LEN, UINT16_MAX);
    }
    return c->max_payload - esp_hdr_space(type);
}

/* A compact piece goes only where it would not hold back an acknowledgement
 * the peer is owed (it has no room for one; in a one-way stream, never). */
static bool compact_now(const esp_conn_t *c, size_t left)
{
    return c->compact && left > ESP_HEAD_PAYLOAD && c->ack_sent == c->rcv_nxt && !c->ack_pending
           && c->rx_ahead == 0;
}

/* A PUT's first piece defines a slot when one is free: its number, and
 * the generation it did not have last (what tells the receiver that its
 * definition has not come yet). */
static uint8_t put_slot_take(esp_conn_t *c)
{
    if (!c->compact) {
        return 0;
    }
    for (uint8_t k = 1; k <= ESP_PUT_SLOTS; k++) {
        uint32_t bit = 1u << k;
        if (!(c->put_slots_busy & bit)) {
            c->put_slots_busy |= bit;
            c->put_slots_gen ^= bit;
            return (uint8_t) (k | (c->put_slots_gen & bit ? ESP_SLOT_GEN : 0));
        }
    }
    return 0;
}

/* Payload bytes of the next segment of m, and its type. */
static size_t next_piece(const esp_conn_t *c, const esp_msg_t *m, uint8_t *type)
{
    size_t left = m->len - m->queued;
    if (m->kind == ESP_MSG_PUT) {
        /* CPUTs after the piece that defined the slot */
        *type = m->put_slot != 0 && m->queued != 0 && compact_now(c, left) ? ESP_T_CPUT
                                                                             : ESP_T_PUT;
    } else if (m->queued == 0 && m->len <= c->max_payload - ESP_HDR_LEN) {
        *type = ESP_T_FRAG;
        return m->len;
    } else {
        *type = m->queued != 0 && compact_now(c, left) ? ESP_T_CCHUNK : ESP_T_CHUNK;
    }
    return min_sz(left, piece_room(c, *type));
}

/*
 * A PUT whose last piece is out goes back to its caller at once, not a
 * round trip later when the peer acknowledges it: what the peer has not
 * acknowledged yet is copied, and the message's segments resend from the
 * copy. ob1 sends its FIN at the completion, so the FIN follows the data
 * at once (it is delivered after them: one sequence space) and the
 * receiver completes a round trip sooner. The copy costs CPU, so only
 * where the link is the limit, and a bounded one.
 */
#define RELEASE_MAX (256u << 10)

/* Where a path delivers this, bytes/s, the CPU and not the link is the
 * limit: the copy would cost more than the round trip it saves. */
#define RELEASE_RATE_MAX (500ull * 1000 * 1000)

/* No path to c delivers RELEASE_RATE_MAX (or none is measured yet). */
bool esp_link_bound(const esp_conn_t *c)
{
    for (unsigned k = 0; k < c->npaths; k++) {
        if (c->path[k].up && c->path[k].rate_bps >= RELEASE_RATE_MAX) {
            return false;
        }
    }
    return true;
}

static void put_release(esp_conn_t *c, esp_msg_t *m)
{
    /* its segments not yet acknowledged: the newest ones, in a row */
    uint32_t first = c->snd_nxt, n = 0;
    while (first != c->snd_una) {
        const esp_seg_t *s = c->sring[(first - 1) & (c->scap - 1)];
        if (s->msg != m) {
            break;
        }
        first--;
        n++;
    }
    if (n != m->segs_out) {
        return;   /* not as expected: keep the caller waiting, as before */
    }
    size_t lo = c->sring[first & (c->scap - 1)]->off, copy_len = m->len - lo;
    esp_msg_t *k;
    if (copy_len > RELEASE_MAX || (k = malloc(sizeof(*k) + copy_len)) == NULL) {
        return;
    }
    uint8_t *copy = (uint8_t *) (k + 1);
    struct iovec pl[ESP_MSG_MAX_IOV];
    iov_gather(copy, pl, msg_range(m, lo, copy_len, pl));
    *k = *m;
    k->user = NULL;
    k->next = NULL;
    k->released = true;
    /* the bytes below lo are never read again: the first iovec only
     * keeps the offsets */
    k->iovcnt = 2;
    k->iov[0] = (struct iovec){copy, lo};
    k->iov[1] = (struct iovec){copy, copy_len};
    for (uint32_t q = first; q != c->snd_nxt; q++) {
        c->sring[q & (c->scap - 1)]->msg = k;
    }
    m->segs_out = 0;
    m->put_slot = 0;   /* the copy frees it, once acknowledged */
    c->p->stats.put_released++;
    msg_done(c->p, m);
}

static bool release_now(const esp_conn_t *c, const esp_msg_t *m)
{
    return m->kind == ESP_MSG_PUT && m->queued == m->len && m->segs_out != 0
           && c->p->cfg.release && esp_link_bound(c);
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
        if (c->flight > 0 && c->flight + piece > granted(c)) {
            if (!c->grant_stalled) {
                c->grant_stalled = true;
                p->stats.grant_stalls++;
            }
            return;
        }
        unsigned path = c->snd_nxt - c->snd_una >= p->cfg.window ? ESP_NO_PATH
                                                                 : pick_path(c, piece, ESP_NO_PATH);
        if (path == ESP_NO_PATH) {
            if (!c->window_stalled) {
                c->window_stalled = true;
                p->stats.window_stalls++;
            }
            return;
        }
        if (!pace_allows(c, now)) {
            pace_wait(c);
            return;
        }
        esp_seg_t *s;
        if (!sring_reserve(c) || (s = seg_alloc(p, false)) == NULL) {
            return;   /* out of memory: try again on the next ACK or tick */
        }
        c->window_stalled = c->grant_stalled = false;
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
            if (m->queued == 0) {
                m->put_slot = put_slot_take(c);
                s->tag = m->put_slot;   /* this piece defines the slot (or none) */
            }
        } else if (esp_type_compact(type)) {
            s->ext.chunk = (esp_chunk_ext_t){0, 0, s->off, 0};   /* the offset only */
            s->tag = type == ESP_T_CPUT ? m->put_slot : 0;
        }
        m->queued += piece;
        c->sendq_bytes -= piece;
        c->pace_tokens -= (int64_t) piece;
        m->segs_out++;
        if (m->queued == m->len) {
            c->sendq_head = m->next;
            if (c->sendq_head == NULL) {
                c->sendq_tail = NULL;
            }
        }
        seg_launch(c, s, path, now);
        if (release_now(c, m)) {
            put_release(c, m);
        }
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
        || (c->flight > 0 && c->flight + len > granted(c))) {
        return -1;
    }
    unsigned path = pick_path(c, len, ESP_NO_PATH);
    if (path == ESP_NO_PATH) {
        return -1;
    }
    esp_seg_t *s;
    if (!sring_reserve(c) || (s = seg_alloc(p, true)) == NULL) {
        return -1;
    }
    iov_gather(s->data, iov, iovcnt);
    s->type = ESP_T_FRAG;
    s->tag = tag;
    s->len = (uint32_t) len;
    p->depth++;
    seg_launch(c, s, path, now);
    p->depth--;
    esp_flush_completions(p);
    return 0;
}

/* ------------------------------------------------------ acknowledgements */

/* The largest round trip is remembered for one to two of these: a
 * receiver descheduled for a few ms, or a queue that built up, keeps the
 * retransmit timeout above what the path has shown for a while. */
#define RTT_PEAK_PERIOD_NS (50 * 1000 * 1000)

static uint64_t rtt_peak(const esp_conn_t *c)
{
    return c->rtt_peak_ns[0] > c->rtt_peak_ns[1] ? c->rtt_peak_ns[0] : c->rtt_peak_ns[1];
}

static void rtt_peak_note(esp_conn_t *c, uint64_t rtt, uint64_t now)
{
    if (now - c->rtt_peak_at_ns >= RTT_PEAK_PERIOD_NS) {
        c->rtt_peak_ns[1] = c->rtt_peak_ns[0];
        c->rtt_peak_ns[0] = 0;
        c->rtt_peak_at_ns = now;
    }
    if (rtt > c->rtt_peak_ns[0]) {
        c->rtt_peak_ns[0] = rtt;
    }
}

/*
 * The retransmit timeout is the last resort (loss is found by order and
 * time first, rack_detect): the smoothed round trip and four times its
 * variation (RFC 6298), plus the receiver's ACK delay, and never below a
 * quarter more than the largest round trip seen lately.
 */
static void rto_update(esp_conn_t *c)
{
    const esp_proto_config_t *cfg = &c->p->cfg;
    uint64_t var = 4 * c->rttvar_ns;
    uint64_t rto = c->srtt_ns + (var > RTT_GRANULARITY_NS ? var : RTT_GRANULARITY_NS)
                   + cfg->ack_delay_ns;
    uint64_t peak = rtt_peak(c);
    if (rto < peak + peak / 4) {
        rto = peak + peak / 4;
    }
    c->rto_ns = rto < cfg->rto_min_ns ? cfg->rto_min_ns : rto > cfg->rto_max_ns ? cfg->rto_max_ns : rto;
}

static void rtt_sample(esp_conn_t *c, unsigned path, uint64_t rtt, uint64_t now)
{
    if (path != ESP_NO_PATH && rtt != 0) {
        esp_path_t *pa = &c->path[path];
        pa->srtt_ns = pa->srtt_ns == 0 ? rtt : (7 * pa->srtt_ns + rtt) / 8;
        if (pa->min_rtt_ns == 0 || rtt < pa->min_rtt_ns) {
            pa->min_rtt_ns = rtt;
        }
        pa->last_rtt_ns = rtt;
    }
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
    rtt_peak_note(c, rtt, now);
    rto_update(c);
}

/*
 * The round trip a loss is judged by: a loss while it is near its least is
 * random loss on the wire, not a queue overflowing, and does not cut the
 * window. "Near" allows for the queue the receiver's grant lets build
 * ahead of it (grant_delay) and for the least being stale.
 */
#define QUEUE_ALLOWANCE_NS (500 * 1000)

static uint64_t queue_allowance(const esp_conn_t *c)
{
    uint64_t a = 2 * c->min_rtt_ns > QUEUE_ALLOWANCE_NS ? 2 * c->min_rtt_ns : QUEUE_ALLOWANCE_NS;
    return a > 2 * c->p->cfg.grant_delay_ns ? a : 2 * c->p->cfg.grant_delay_ns;
}

/* A segment is acknowledged: stop its timer, account its message. */
static void seg_acked(esp_conn_t *c, esp_seg_t *s)
{
    esp_proto_t *p = c->p;
    esp_hotel_checkout(&p->hotel, &s->room);
    resend_remove(p, s);
    esp_msg_t *m = s->msg;
    if (m != NULL && --m->segs_out == 0 && m->queued == m->len) {
        if (m->put_slot != 0) {
            /* the whole PUT is acknowledged: the slot may be used again */
            c->put_slots_busy &= ~(1u << (m->put_slot & ESP_SLOT_NUM));
            m->put_slot = 0;
        }
        if (m->released) {
            free(m);   /* its caller had its completion at put_release */
        } else {
            msg_done(p, m);
        }
    }
    esp_seg_free(p, s);
}

/* Loss seen (by order or by timeout): halve the congestion window, once
 * per window of data, and remember how to undo that should the segments
 * sent again turn out not to have been lost. */
static void loss_event(esp_conn_t *c, unsigned path, bool timeout)
{
    if (path == ESP_NO_PATH) {
        return;   /* out on no path (a dead one's, awaiting its resend) */
    }
    esp_path_t *pa = &c->path[path];
    if (pa->in_recovery && !timeout) {
        return;
    }
    /* A loss while the round trip is near its least is not a queue
     * overflowing: random loss on the wire, which a smaller window would
     * not prevent. */
    if (!timeout && pa->last_rtt_ns != 0
        && pa->last_rtt_ns <= pa->min_rtt_ns + queue_allowance(c) / 2) {
        c->p->stats.random_losses++;
        pa->in_recovery = true;
        pa->recover = c->snd_nxt;
        return;
    }
    if (!pa->undo_valid) {
        pa->undo_valid = true;
        pa->undo_cwnd = pa->cwnd;
        pa->undo_ssthresh = pa->ssthresh;
        pa->undo_una = c->snd_una;
        pa->undo_retrans = 0;
    }
    size_t floor = 2 * c->max_payload;
    pa->ssthresh = max_sz(pa->flight / 2, floor);
    pa->cwnd = timeout ? max_sz(c->p->cfg.initial_burst, floor) : pa->ssthresh;
    pa->in_recovery = true;
    pa->recover = c->snd_nxt;
}

/* A resend counts toward undoing its path's window cut. */
static void note_resend(esp_conn_t *c, const esp_seg_t *s)
{
    if (s->path != ESP_NO_PATH) {
        esp_path_t *pa = &c->path[s->path];
        pa->undo_retrans += pa->undo_valid;
    }
}

/* Send s again now, for a loss found by order and time (ESP_RESENT_ORDER)
 * or reported by the receiver (ESP_RESENT_REPORT). */
static void resend_lost(esp_conn_t *c, esp_seg_t *s, int why, uint64_t now)
{
    esp_proto_t *p = c->p;
    loss_event(c, s->path, false);
    esp_hotel_checkout(&p->hotel, &s->room);
    resend_remove(p, s);
    s->resent = (uint8_t) why;
    s->alone = c->flight == s->len;   /* everything else out is acknowledged or sacked */
    note_resend(c, s);
    if (why == ESP_RESENT_ORDER) {
        p->stats.fast_retransmits++;
    } else {
        p->stats.loss_report_resends++;
    }
    p->stats.retransmits++;
    seg_transmit(c, s, now);
}

/*
 * The receiver's kernel dropped datagrams while it was away, and it has
 * read all it kept (ESP_F_LOSS): what it does not report and we sent long
 * enough ago to have reached it by then is lost. Typically the tail of a
 * burst, which nothing after it would show lost. "Long enough" is the
 * least round trip and the queue the grant lets build (queue_allowance):
 * a segment still on its way is sent again at worst, and reported a
 * duplicate.
 */
static void resend_reported(esp_conn_t *c, uint64_t now)
{
    uint64_t age = c->min_rtt_ns + queue_allowance(c);
    for (uint32_t q = c->snd_una; q != c->snd_nxt; q++) {
        esp_seg_t *s = c->sring[q & (c->scap - 1)];
        if (s != NULL && !s->sacked && !on_resend_queue(c->p, s) && s->path != ESP_NO_PATH
            && s->sent_ns + age <= now) {
            resend_lost(c, s, ESP_RESENT_REPORT, now);
        }
    }
}

/* ------------------------------------------------------------------ RACK */

/*
 * Loss by order and time (RACK, RFC 8985): a segment is lost when a segment
 * sent after it on the same channel was delivered and a reordering
 * allowance has passed since. Each channel is its own order: the priority
 * channel overtakes the data channel, which is reordering, not loss. A
 * queue at the receiver delays every segment alike and so never reads as
 * loss here, unlike a timer.
 */
static uint64_t reo_wnd(const esp_conn_t *c)
{
    uint64_t w = (c->min_rtt_ns / 4) << c->reo_shift;
    if (w < RTT_GRANULARITY_NS) {
        w = RTT_GRANULARITY_NS;
    }
    return c->srtt_ns != 0 && w > c->srtt_ns ? c->srtt_ns : w;
}

/* Was s sent before the newest delivered segment of its path and channel?
 * (Paths of different delays overtake each other: that is not loss.) */
static bool sent_before_rack(const esp_conn_t *c, const esp_seg_t *s, int ch)
{
    if (s->path == ESP_NO_PATH) {
        return false;
    }
    const esp_path_t *pa = &c->path[s->path];
    return s->sent_ns < pa->rack_sent_ns[ch]
           || (s->sent_ns == pa->rack_sent_ns[ch] && esp_seq_lt(s->seq, pa->rack_seq[ch]));
}

/* s was delivered (acknowledged or sacked for the first time). */
static void rack_note(esp_conn_t *c, const esp_seg_t *s, uint64_t now)
{
    /* A resent segment's ACK may answer either copy (both may have waited
     * in the same queue): its first send is the time it surely went after,
     * so only what was sent before that counts as overtaken. That still
     * lets a tail probe's answer show the segments before it lost. */
    if (s->path == ESP_NO_PATH) {
        return;
    }
    esp_path_t *pa = &c->path[s->path];
    int ch = seg_channel(c, s);
    if (s->first_sent_ns > pa->rack_sent_ns[ch]
        || (s->first_sent_ns == pa->rack_sent_ns[ch] && esp_seq_gt(s->seq, pa->rack_seq[ch]))) {
        pa->rack_sent_ns[ch] = s->first_sent_ns;
        pa->rack_seq[ch] = s->seq;
        if (s->xmits == 1) {
            pa->rack_rtt_ns = now - s->sent_ns;
        }
    }
}

/* When s, sent before a delivered segment, counts as lost. */
static uint64_t rack_deadline(const esp_conn_t *c, const esp_seg_t *s)
{
    return s->sent_ns + c->path[s->path].rack_rtt_ns + reo_wnd(c);
}

/* The end of what an ACK can tell us about: segments beyond it wait for
 * older ones (esp_on_timeout), and loss by order looks no further. */
static uint32_t reportable_end(const esp_conn_t *c)
{
    uint32_t end = c->snd_una + ESP_SACK_BITS + 1;
    if (esp_seq_gt(c->sack_high, end)) {
        end = c->sack_high;
    }
    return esp_seq_gt(end, c->snd_nxt) ? c->snd_nxt : end;
}

/* Did the latest ACK tell whether q arrived? Not beyond what it can report
 * (reportable_end: later segments were sent later), nor between its SACK
 * bits and its oldest block when it had more ranges than blocks: over
 * several paths the holes a slower path leaves outnumber the blocks, and
 * an unreported segment taken for lost is a spurious resend and a window
 * cut. A real loss there comes within the bits as the ACK advances. */
static bool ack_reported(const esp_conn_t *c, uint32_t q)
{
    if (!esp_seq_lt(q, reportable_end(c))) {
        return false;
    }
    uint32_t bits_end = c->snd_una + ESP_SACK_BITS + 1;
    return esp_seq_lt(q, bits_end) || !esp_seq_lt(q, c->sack_unsure_to);
}

/* Send again what order and time say is lost; arm the timer of what will
 * be once the reordering allowance passes. Only segments the ACK reported
 * on (ack_reported) are looked at. */
static void rack_detect(esp_conn_t *c, uint64_t now)
{
    esp_proto_t *p = c->p;
    uint32_t end = reportable_end(c);
    for (uint32_t q = c->snd_una; q != end; q++) {
        esp_seg_t *s = c->sring[q & (c->scap - 1)];
        if (s == NULL || s->sacked || on_resend_queue(p, s) || !ack_reported(c, q)
            || !sent_before_rack(c, s, seg_channel(c, s))) {
            continue;
        }
        uint64_t due = rack_deadline(c, s);
        if (due <= now) {
            resend_lost(c, s, ESP_RESENT_ORDER, now);
        } else if (!esp_room_occupied(&s->room) || s->room.expiry > due) {
            esp_hotel_checkout(&p->hotel, &s->room);
            esp_hotel_checkin(&p->hotel, &s->room, due);
        }
    }
}

/*
 * An ACK answered a segment sent again after a timeout: the peer speaks
 * again (it was descheduled, or the way was down). What it does not report
 * of what we sent before may be lost too, the tail with it, which nothing
 * sent after would show, and each of those would otherwise wait for its
 * own timer, one timeout after the other. The last segment on the oldest
 * one's channel (each channel is its own order) goes again now: the peer's
 * report of it shows the holes before it lost (rack_detect), at the cost
 * of a duplicate when nothing was.
 */
static void probe_tail(esp_conn_t *c)
{
    esp_proto_t *p = c->p;
    const esp_seg_t *oldest = c->sring[c->snd_una & (c->scap - 1)];
    if (oldest == NULL) {
        return;
    }
    enum esp_channel ch = seg_channel(c, oldest);
    esp_seg_t *s = NULL;
    for (uint32_t q = c->snd_nxt; q != c->snd_una && s == NULL; q--) {
        esp_seg_t *t = c->sring[(q - 1) & (c->scap - 1)];
        if (t != NULL && !t->sacked && seg_channel(c, t) == ch) {
            s = t;
        }
    }
    if (s == NULL || s == oldest || on_resend_queue(p, s) || s->path == ESP_NO_PATH) {
        return;
    }
    esp_hotel_checkout(&p->hotel, &s->room);
    p->stats.probes++;
    s->resent = ESP_RESENT_PROBE;
    resend_append(p, s);
}

/* --------------------------------------------------------- spurious resends */

/* The receiver reports segment seq arrived twice. When we had sent it
 * again, that resend was spurious: count it, widen what made us resend
 * (the reordering allowance, or the timeout), and once every resend since
 * the last window cut proved spurious, undo the cut. */
static void on_dup_report(esp_conn_t *c, uint32_t seq)
{
    esp_proto_t *p = c->p;
    int why = ESP_RESENT_NO;      /* a copy the network made, or long ago */
    esp_path_t *pa = NULL;
    uint64_t resent_at = 0;
    if (esp_seq_ge(seq, c->snd_una) && esp_seq_lt(seq, c->snd_nxt)) {
        const esp_seg_t *s = c->sring[seq & (c->scap - 1)];
        if (s != NULL) {
            why = s->resent;
            pa = s->path != ESP_NO_PATH ? &c->path[s->path] : NULL;
            resent_at = s->sent_ns;
        }
    } else if (esp_seq_lt(seq, c->snd_una) && c->resent_log != NULL) {
        /* acknowledged since: found among the recent resends, or not at all */
        for (unsigned i = 0; i < ESP_RESENT_LOG; i++) {
            esp_resent_t *e = &c->resent_log[i];
            if (e->seq == seq && e->why != ESP_RESENT_NO) {
                why = e->why;
                pa = e->path != ESP_NO_PATH && e->path < c->npaths ? &c->path[e->path] : NULL;
                resent_at = e->at_ns;
                e->why = ESP_RESENT_NO;   /* one duplicate per resend */
                break;
            }
        }
    }
    if (why == ESP_RESENT_NO || why == ESP_RESENT_PROBE || why == ESP_RESENT_FAILOVER) {
        return;   /* a probe is meant to be a duplicate; a dead path's may arrive late */
    }
    p->stats.spurious_retransmits++;
    if (why == ESP_RESENT_TIMEOUT) {
        /* The round trip outgrew the timeout: remember that it can. Once
         * per stall: the other segments the same stall timed out were
         * sent again under the old timeout, and raising it again for
         * each compounded it to rto_max (100 ms of silence at the next
         * loss). Only when the copy's answer was late too (the peer was
         * away, and had both when it came back): an answer within a round
         * trip of the copy means the peer was there and its ACK of the
         * original was lost, which a longer timeout would only make
         * costlier (at 1 % loss, it grew to 78 ms in a few such losses). */
        if (resent_at >= c->rto_raised_ns && p->now - resent_at > c->srtt_ns) {
            rtt_peak_note(c, 2 * c->rto_ns, p->now);
            rto_update(c);
            c->rto_raised_ns = p->now;
        }
    } else if (why == ESP_RESENT_ORDER && c->reo_shift < 4) {
        c->reo_shift++;
    }
    if (pa != NULL && pa->undo_valid && pa->undo_retrans > 0 && --pa->undo_retrans == 0) {
        pa->cwnd = max_sz(pa->cwnd, pa->undo_cwnd);
        pa->ssthresh = max_sz(pa->ssthresh, pa->undo_ssthresh);
        pa->undo_valid = false;
        pa->in_recovery = false;
    }
}

/* s reached the peer (acknowledged, or sacked, for the first time): its
 * path delivered, and its window may grow by newly[path]. */
static void seg_delivered(esp_conn_t *c, const esp_seg_t *s, size_t newly[], uint64_t now)
{
    rack_note(c, s, now);
    if (s->path == ESP_NO_PATH) {
        return;
    }
    esp_path_t *pa = &c->path[s->path];
    pa->flight -= s->len;
    pa->dlv_ns = now;
    pa->owe_since_ns = 0;   /* it works (this way) */
    newly[s->path] += s->len;
    /* Its delivery rate over 1 ms intervals: a new high at once; a lower
     * one slowly, and only from an interval in which it never ran dry and
     * its window was full (one we fed less says nothing of what it can
     * carry, and would starve it further). */
    pa->rate_bytes += s->len;
    if (now - pa->rate_from_ns >= PATH_RATE_INTERVAL_NS) {
        if (pa->rate_from_ns != 0) {
            uint64_t r = pa->rate_bytes * 1000000000ull / (now - pa->rate_from_ns);
            if (r > pa->rate_bps) {
                pa->rate_bps = r;
            } else if (!pa->rate_idle && pa->rate_full) {
                pa->rate_bps = pa->rate_bps - pa->rate_bps / 8 + r / 8;
            }
        }
        pa->rate_bytes = 0;
        pa->rate_from_ns = now;
        pa->rate_idle = pa->rate_full = false;
    }
    if (pa->flight == 0) {
        pa->rate_idle = true;
    }
}

/* Segment q was reported received beyond the cumulative ACK; *newest is
 * the highest such segment of this ACK so far. */
static void sack_one(esp_conn_t *c, uint32_t q, size_t newly[], esp_seg_t **newest, uint64_t now)
{
    esp_proto_t *p = c->p;
    esp_seg_t *s = c->sring[q & (c->scap - 1)];
    if (s == NULL || s->sacked) {
        return;
    }
    if (*newest == NULL || esp_seq_gt(q, (*newest)->seq)) {
        *newest = s;
    }
    c->flight -= s->len;
    seg_delivered(c, s, newly, now);
    s->sacked = true;
    if (esp_seq_ge(q, c->sack_high)) {
        c->sack_high = q + 1;
    }
    /* It keeps a timer: should the ACK that covers it be lost, the oldest
     * sacked segment is sent again as a probe (esp_on_timeout). */
    resend_remove(p, s);
    if (!esp_room_occupied(&s->room)) {
        esp_hotel_checkin(&p->hotel, &s->room, now + seg_rto(c, s->xmits));
    }
}

/*
 * Is this ACK as new as any before it? What the receiver has only grows,
 * so an ACK reporting less far than the farthest reported (sack_high)
 * left it before another we already read: over several paths ACKs come
 * back by different ways, and the reader drains one socket after another.
 * Its reports are true but old: a hole it shows may have filled since, so
 * it must not make a segment look lost (RACK), nor say what went
 * unreported.
 */
static bool ack_is_fresh(const esp_conn_t *c, const esp_parsed_t *d)
{
    const esp_hdr_t *h = &d->h;
    uint32_t far = h->ack;
    if (h->sack != 0) {
        far = h->ack + 1 + (uint32_t) (31 - __builtin_clz(h->sack)) + 1;
    }
    if ((h->flags & ESP_F_SACKB) && d->payload_len >= ESP_SACK_BLOCK_LEN) {
        uint32_t to = esp_get32(d->payload + 4);   /* the newest block's end */
        if (esp_seq_gt(to, far) && esp_seq_le(to, c->snd_nxt)) {
            far = to;
        }
    }
    return !esp_seq_lt(far, c->sack_high);
}

void esp_on_ack(esp_conn_t *c, const esp_parsed_t *d, uint64_t now)
{
    const esp_hdr_t *h = &d->h;
    esp_proto_t *p = c->p;
    uint32_t ack = h->ack;
    if (esp_seq_gt(ack, c->snd_nxt)) {
        p->stats.malformed++;   /* acknowledges what we never sent */
        return;
    }
    if (h->flags & ESP_F_DUP) {
        /* Before the ACK frees the segment; and even from an ACK that
         * came late (reordered): the duplicate it reports is news. */
        on_dup_report(c, h->seq);
    }
    if (esp_seq_lt(ack, c->snd_una)) {
        return;   /* older than what we know: reordered, nothing new */
    }
    size_t newly[ESP_MAX_PATHS] = {0};
    bool advanced = ack != c->snd_una, answered_timeout = false;
    if (advanced) {
        /* The newest segment acknowledged gives the RTT, when every segment
         * acknowledged was sent once and not sacked: after a hole (a loss,
         * or a segment overtaken) the ACK waited for the hole to fill, and
         * the time since the newest was sent says nothing of the path. */
        bool clean = true;
        uint64_t newest_sent = 0;
        unsigned newest_path = ESP_NO_PATH;
        for (uint32_t q = c->snd_una; q != ack; q++) {
            esp_seg_t **slot = &c->sring[q & (c->scap - 1)];
            esp_seg_t *s = *slot;
            *slot = NULL;
            if (!s->sacked) {
                c->flight -= s->len;
                seg_delivered(c, s, newly, now);
            }
            if (c->bursting && !c->txs_acked && q == c->txs_seq) {
                c->txs_acked = true;
            }
            if (s->xmits != 1 || s->sacked) {
                clean = false;
            }
            answered_timeout = answered_timeout || s->resent == ESP_RESENT_TIMEOUT;
            newest_sent = s->sent_ns;
            newest_path = s->path;
            seg_acked(c, s);
        }
        /* Over several paths, an ACK that jumps far waited for a hole the
         * slower path left, beyond what SACK bits report: no sample. */
        if (clean && (c->npaths == 1 || ack - c->snd_una <= 2 * ESP_SACK_BITS)) {
            rtt_sample(c, newest_path, now - newest_sent, now);
        }
        c->snd_una = ack;
        c->last_progress_ns = now;
        c->tlp_out = false;
        for (unsigned k = 0; k < c->npaths; k++) {
            esp_path_t *pa = &c->path[k];
            if (pa->in_recovery && esp_seq_ge(ack, pa->recover)) {
                pa->in_recovery = false;
            }
            if (pa->undo_valid && pa->undo_retrans == 0 && esp_seq_ge(ack, pa->recover)) {
                pa->undo_valid = false;   /* the episode ended with nothing left to undo */
            }
        }
    }
    c->peer_wnd = h->wnd == 0xffff ? SIZE_MAX / 4 : (size_t) h->wnd << 10;
    if (esp_seq_lt(c->sack_high, c->snd_una)) {
        c->sack_high = c->snd_una;
    }
    if (esp_seq_lt(c->sack_unsure_to, c->snd_una)) {
        c->sack_unsure_to = c->snd_una;
    }
    /* Selective acknowledgement of ack+1 .. ack+32 (bits), and of ranges
     * beyond (blocks). The receiver answers an out-of-order segment at
     * once, so the newest segment newly sacked, if sent once and newer
     * than any sacked before, gives an RTT sample too; but not when the
     * ACK advanced: then the bits are new because the range moved, and may
     * report segments that arrived long ago. */
    esp_seg_t *newest = NULL;
    uint32_t high_before = c->sack_high;
    bool fresh = ack_is_fresh(c, d);
    if (h->sack != 0 && c->snd_una != c->snd_nxt) {
        for (int i = 31; i >= 0; i--) {
            uint32_t q = ack + 1 + (uint32_t) i;
            if (esp_seq_lt(q, c->snd_nxt) && (h->sack & (1u << i))) {
                sack_one(c, q, newly, &newest, now);
            }
        }
    }
    if (h->type == ESP_T_ACK && fresh) {
        c->sack_unsure_to = ack;   /* a standalone ACK reports what it can */
    }
    if ((h->flags & ESP_F_SACKB) && c->snd_una != c->snd_nxt) {
        size_t nblocks = d->payload_len / ESP_SACK_BLOCK_LEN;
        for (size_t b = 0; b + ESP_SACK_BLOCK_LEN <= d->payload_len; b += ESP_SACK_BLOCK_LEN) {
            uint32_t from = esp_get32(d->payload + b), to = esp_get32(d->payload + b + 4);
            /* Untrusted: only what we sent and have not seen acknowledged. */
            if (esp_seq_le(to, from) || esp_seq_le(from, ack) || esp_seq_gt(to, c->snd_nxt)
                || to - from > p->cfg.window) {
                p->stats.malformed++;
                break;
            }
            if (nblocks >= ESP_SACK_BLOCKS_MAX && fresh) {
                c->sack_unsure_to = from;   /* newest first: the last is the oldest */
            }
            for (uint32_t q = from; q != to; q++) {
                sack_one(c, q, newly, &newest, now);
            }
        }
    }
    if (newest != NULL && !advanced && newest->xmits == 1 && esp_seq_ge(newest->seq, high_before)) {
        rtt_sample(c, newest->path, now - newest->sent_ns, now);
    }
    /* Each path's window grows by what it delivered, acknowledged or
     * sacked (over several paths, much arrives out of order): slow start,
     * then one segment per window (congestion avoidance). */
    size_t cap = (size_t) p->cfg.window * c->max_payload;
    for (unsigned k = 0; k < c->npaths; k++) {
        esp_path_t *pa = &c->path[k];
        if (newly[k] == 0) {
            continue;
        }
        if (pa->cwnd < pa->ssthresh) {
            pa->cwnd += newly[k];
        } else {
            pa->cwnd += max_sz(1, c->max_payload * newly[k] / pa->cwnd);
        }
        if (pa->cwnd > cap) {
            pa->cwnd = cap;
        }
    }
    if (c->snd_una != c->snd_nxt && fresh && (h->flags & ESP_F_LOSS)) {
        resend_reported(c, now);
    }
    if (c->snd_una != c->snd_nxt && fresh && answered_timeout) {
        probe_tail(c);
    }
    if (c->snd_una != c->snd_nxt && fresh) {
        rack_detect(c, now);
    }
    esp_push(c, now);
}

/* ------------------------------------------------------- retransmission */

/* When the peer was last heard from, by any path. */
static uint64_t peer_heard_ns(const esp_conn_t *c)
{
    uint64_t t = 0;
    for (unsigned k = 0; k < c->npaths; k++) {
        t = c->path[k].heard_ns > t ? c->path[k].heard_ns : t;
    }
    return t;
}

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
    /* The reordering allowance of a segment overtaken has passed. Its
     * deadline moves later as later segments are delivered (rack_rtt
     * grows) while the timer stays where it was set: not passed yet, it is
     * the timer's next expiry (soon), else the retransmit timeout would
     * take its place. */
    bool reportable = esp_seq_lt(s->seq, reportable_end(c));
    uint64_t soon = UINT64_MAX;
    if (!s->sacked && ack_reported(c, s->seq) && sent_before_rack(c, s, seg_channel(c, s))) {
        soon = rack_deadline(c, s);
        if (soon <= now) {
            resend_lost(c, s, ESP_RESENT_ORDER, now);
            return;
        }
    }
    uint64_t probe = s->sacked ? UINT64_MAX : tail_probe_due(c, s);
    if (probe <= now) {
        c->tlp_out = true;
        p->stats.probes++;
        s->resent = ESP_RESENT_PROBE;
        resend_append(p, s);
        return;
    }
    if (probe < soon) {
        soon = probe;
    }
    /* The retransmit timer restarts whenever the peer acknowledges new data
     * (RFC 6298 5.3): a segment behind a deep queue is not lost while the
     * ACKs still advance. And a segment beyond what an ACK's SACK bits can
     * report waits for the oldest one: when that is lost, the peer may well
     * have this one, and resending the whole window on every timeout is a
     * retransmission storm. */
    uint64_t rto = seg_rto(c, s->xmits);
    uint64_t from = s->sent_ns > c->last_progress_ns ? s->sent_ns : c->last_progress_ns;
    /* Over several paths, its own path delivering later segments keeps it
     * waiting too: loss on that path shows by order (RACK); a slower path's
     * segment holding back the cumulative ACK is not late. */
    if (c->npaths > 1 && s->path != ESP_NO_PATH && c->path[s->path].dlv_ns > from) {
        from = c->path[s->path].dlv_ns;
    }
    if (from + rto > now) {
        esp_hotel_checkin(&p->hotel, &s->room, from + rto < soon ? from + rto : soon);
        return;
    }
    if (!reportable || (s->sacked && s->seq != c->snd_una)) {
        esp_hotel_checkin(&p->hotel, &s->room, now + rto < soon ? now + rto : soon);
        return;
    }
    if (s->sacked) {
        /* The peer has the oldest segment, yet no ACK covers it: that ACK
         * was lost, and with every other segment sacked or waiting behind
         * this one nothing else would make the peer speak. The copy it
         * gets is a duplicate, which it answers at once. Not a loss of
         * data: no congestion response. */
        p->stats.probes++;
        s->resent = ESP_RESENT_PROBE;
        resend_append(p, s);
        return;
    }
    /* The peer silent for a whole timeout (descheduled, or computing
     * without a call into MPI): the oldest segment alone goes again, and
     * backs off, to wake it; the rest wait for its answer, which tells
     * what is missing. Sending them all again would bring only duplicates
     * and a cut window. */
    if (s->seq != c->snd_una && now - peer_heard_ns(c) >= rto) {
        esp_hotel_checkin(&p->hotel, &s->room, now + rto < soon ? now + rto : soon);
        return;
    }
    p->stats.timeouts++;
    loss_event(c, s->path, true);
    s->resent = ESP_RESENT_TIMEOUT;
    note_resend(c, s);
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
        /* A segment whose path died, or that timed out, goes by another
         * path when there is one. */
        esp_conn_t *c = s->conn;
        if (s->path == ESP_NO_PATH || (s->resent == ESP_RESENT_TIMEOUT && c->npaths > 1)) {
            unsigned k = pick_path(c, 0, s->path);
            seg_set_path(c, s, k != ESP_NO_PATH ? k : first_path(c));
        }
        seg_transmit(c, s, now);
    }
}

/* ---------------------------------------------------------------- paths */

/* How long a path may stay silent after we sent by it before it counts as
 * dead: the floor, or several of its own round trips when longer (the
 * connection's retransmit timeout is no measure: it follows the slowest
 * path, and spurious resends push it up). */
static uint64_t path_dead_after(const esp_conn_t *c, const esp_path_t *pa)
{
    uint64_t t = 4 * pa->srtt_ns + c->p->cfg.ack_delay_ns;
    return t > c->p->cfg.path_timeout_ns ? t : c->p->cfg.path_timeout_ns;
}

/* Ask the peer to answer by path k at once (a dead path's probe). */
static void path_probe(esp_conn_t *c, unsigned k)
{
    c->path[k].probed = true;
    esp_hdr_t h = {.type = ESP_T_ACK, .flags = ESP_F_ACKNOW};
    esp_fill_ack(c, &h);
    esp_transmit(c, k, &h, NULL, NULL, 0, ESP_CH_PRIO);
    c->p->stats.acks_tx++;
}

/* Path k is dead: what it had out goes again by the others, it is probed
 * from now on, and ACKs no longer go back by it. */
static void path_down(esp_conn_t *c, unsigned k, uint64_t now)
{
    esp_proto_t *p = c->p;
    esp_path_t *pa = &c->path[k];
    pa->up = false;
    pa->downs++;
    p->stats.path_down++;
    for (uint32_t q = c->snd_una; q != c->snd_nxt; q++) {
        esp_seg_t *s = c->sring[q & (c->scap - 1)];
        if (s == NULL || s->path != k) {
            continue;
        }
        if (!s->sacked) {
            pa->flight -= s->len;
            s->resent = ESP_RESENT_FAILOVER;
            esp_hotel_checkout(&p->hotel, &s->room);
            resend_append(p, s);
            p->stats.failover_resent++;
        }
        s->path = ESP_NO_PATH;
    }
    path_restart(c, pa, now);
    pa->probed = false;
    pa->probe_next_ns = now;
    if (c->rx_path == k) {
        c->rx_path = first_path(c);
    }
}

/*
 * Liveness of c's paths, often (every tick when it has several). A path
 * we sent by, none of whose segments the peer reported since (SACK blocks
 * report the newest arrivals, however the paths reorder the data), and that
 * brought no answer (a probe's) for path_dead_after, while another path
 * delivered, is dead; a receiver that stalls, or a peer
 * that died, silences every path alike, and that is for the retransmit
 * and peer timeouts to judge. Dead paths are probed every path_probe_ns.
 */
void esp_paths_tick(esp_conn_t *c, uint64_t now)
{
    for (unsigned k = 0; k < c->npaths; k++) {
        esp_path_t *pa = &c->path[k];
        if (!pa->up) {
            if (now >= pa->probe_next_ns) {
                path_probe(c, k);
                pa->probe_next_ns = now + c->p->cfg.path_probe_ns;
            }
            continue;
        }
        uint64_t since = pa->owe_since_ns;
        if (since == 0 || now - since < path_dead_after(c, pa)) {
            continue;
        }
        /* Another path heard well after this one began to wait: not a
         * stall of the peer, which would silence both. */
        uint64_t after = since + path_dead_after(c, pa) / 2;
        for (unsigned j = 0; j < c->npaths; j++) {
            const esp_path_t *o = &c->path[j];
            if (j != k && o->up && (o->dlv_ns > after || o->answered_ns > after)) {
                path_down(c, k, now);
                esp_push(c, now);
                break;
            }
        }
    }
}

/* The wire could not send by path k at all: dead now, when another path
 * is live (with none, the retransmit and peer timeouts judge). */
void esp_path_refused(esp_conn_t *c, unsigned k, uint64_t now)
{
    if (!c->path[k].up) {
        return;
    }
    for (unsigned j = 0; j < c->npaths; j++) {
        if (j != k && c->path[j].up) {
            path_down(c, k, now);
            return;
        }
    }
}

/* A datagram from the peer came by path k: ACKs go back by it. An answer
 * (a standalone ACK: the peer sends one by a path only when that path
 * brought it something) shows the path works both ways; a dead path that
 * answers after a probe is live again (not for a datagram that was on its
 * way before it was declared dead). The peer's own data and probes show
 * only its direction. */
void esp_path_heard(esp_conn_t *c, unsigned k, bool answer, uint64_t now)
{
    c->rx_path = k;
    esp_path_t *pa = &c->path[k];
    pa->heard_ns = now;
    if (!answer) {
        return;
    }
    pa->answered_ns = now;
    pa->owe_since_ns = 0;
    if (!pa->up && pa->probed) {
        pa->up = true;
        pa->ups++;
        c->p->stats.path_up++;
        path_restart(c, pa, now);
    }
}

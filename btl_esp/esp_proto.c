/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The ESP engine: connections and their handshake, input dispatch, timers,
 * peer failure, statistics. Sending is in esp_send.c, receiving in esp_recv.c.
 */
#include "esp_proto_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELLO_RTO_NS (20ull * 1000 * 1000)   /* first HELLO retry; doubles, capped */
#define HELLO_RTO_MAX_NS (1000ull * 1000 * 1000)

void esp_proto_config_default(esp_proto_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->window = 4096;
    cfg->ack_delay_ns = 50 * 1000;
    cfg->ack_every = 16;
    cfg->rto_min_ns = 1000 * 1000;
    cfg->rto_max_ns = 100 * 1000 * 1000;
    cfg->rto_init_ns = 10 * 1000 * 1000;
    cfg->peer_timeout_ns = 30ull * 1000 * 1000 * 1000;
    cfg->resend_per_pass = 64;
    cfg->rcv_budget = 4u << 20;
    cfg->grant_delay_ns = 1000 * 1000;
    cfg->initial_burst = 256u << 10;
    cfg->hold_budget = 8u << 20;
    cfg->tiny = 1024;
    cfg->checksum = true;
    cfg->path_timeout_ns = 20 * 1000 * 1000;
    cfg->path_probe_ns = 50 * 1000 * 1000;
    cfg->compact = true;
    cfg->release = true;
    cfg->pace = false;   /* measured: fewer losses, less goodput (docs/tuning.md) */
    cfg->fair = true;
}

/* A handshake's round trip longer than this is not taken for the path's. */
#define HANDSHAKE_RTT_MAX_NS (100 * 1000 * 1000)
/* How often the liveness of multipath peers is looked at. */
#define PATHS_TICK_NS (1000 * 1000)

/* splitmix64: tokens and initial sequence numbers need to be unguessable
 * by accident (another job, an earlier run), not by an attacker. */
uint64_t esp_rand(esp_proto_t *p)
{
    uint64_t z = (p->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

esp_proto_t *esp_proto_create(const esp_proto_config_t *cfg, const esp_proto_ops_t *ops,
                              void *ctx, uint64_t now)
{
    esp_proto_t *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    p->cfg = *cfg;
    p->ops = *ops;
    p->ctx = ctx;
    p->now = now;
    p->rng = cfg->seed ^ cfg->my_epoch ^ (cfg->my_id * 0x9E3779B97F4A7C15ull);
    if (esp_hotel_init(&p->hotel, 1024, 16, now) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

static void conn_free(esp_conn_t *c)
{
    esp_send_fini(c);
    esp_recv_fini(c);
    free(c);
}

void esp_proto_destroy(esp_proto_t *p)
{
    if (p == NULL) {
        return;
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        if (p->conns[i] != NULL) {
            conn_free(p->conns[i]);
        }
    }
    free(p->conns);
    for (esp_seg_t *s = p->free_segs, *n; s != NULL; s = n) {
        n = s->free_next;
        free(s);
    }
    for (esp_seg_t *s = p->free_copy_segs, *n; s != NULL; s = n) {
        n = s->free_next;
        free(s);
    }
    esp_hotel_fini(&p->hotel);
    free(p);
}

int esp_proto_add_peer(esp_proto_t *p, uint32_t peer, uint64_t id, uint64_t epoch,
                       size_t max_datagram)
{
    if (peer >= 0x7fffffffu || max_datagram < esp_hdr_space(ESP_T_CHUNK) + 64) {
        return -1;
    }
    /* The header's 16-bit length bounds a datagram, whatever the wire takes. */
    if (max_datagram > ESP_HDR_LEN + UINT16_MAX) {
        max_datagram = ESP_HDR_LEN + UINT16_MAX;
    }
    if (peer >= p->nconns) {
        uint32_t n = p->nconns ? p->nconns : 16;
        while (n <= peer) {
            n *= 2;
        }
        esp_conn_t **conns = realloc(p->conns, n * sizeof(*conns));
        if (conns == NULL) {
            return -1;
        }
        memset(conns + p->nconns, 0, (n - p->nconns) * sizeof(*conns));
        p->conns = conns;
        p->nconns = n;
    }
    esp_conn_t *c = p->conns[peer];
    if (c != NULL) {
        /* Already known (add_procs twice, or from a HELLO): keep its state. */
        return c->peer_id == id && c->peer_epoch == epoch ? 0 : -1;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return -1;
    }
    c->p = p;
    c->peer = peer;
    c->peer_id = id;
    c->peer_epoch = epoch;
    /* Room for the CRC extension in every datagram, whatever the setting:
     * the handshake may still turn full checksums on. */
    c->max_payload = max_datagram - ESP_CRC_EXT_LEN;
    c->crc = p->cfg.checksum;
    /* The low half names the peer slot, the high half is random and never 0. */
    c->local_token = ((esp_rand(p) | 1ull << 63) & ~0xffffffffull) | peer;
    esp_send_init(c);
    esp_recv_init(c);
    p->conns[peer] = c;
    return 0;
}

int esp_proto_set_paths(esp_proto_t *p, uint32_t peer, unsigned n, const unsigned *via,
                        const bool *standby)
{
    esp_conn_t *c = esp_conn_get(p, peer);
    /* Before any traffic: segments in flight are accounted to paths. */
    if (c == NULL || n == 0 || n > ESP_MAX_PATHS || c->state != ESP_CLOSED
        || c->snd_una != c->snd_nxt) {
        return -1;
    }
    if (n > 1) {
        esp_path_t *paths = calloc(n, sizeof(*paths));
        if (paths == NULL) {
            return -1;
        }
        if (c->path != &c->path0) {
            free(c->path);
        }
        c->path = paths;
        p->multipath = true;
    }
    c->npaths = n;
    for (unsigned k = 0; k < n; k++) {
        memset(&c->path[k], 0, sizeof(c->path[k]));
        c->path[k].up = true;
        c->path[k].via = via[k];
        c->path[k].standby = standby != NULL && standby[k];
    }
    esp_send_init_paths(c);
    return 0;
}

void esp_proto_path_unreachable(esp_proto_t *p, uint32_t peer, unsigned path, uint64_t now)
{
    now = esp_clock(p, now);
    esp_conn_t *c = esp_conn_get(p, peer);
    if (c != NULL && c->state == ESP_ESTABLISHED && path < c->npaths) {
        esp_path_refused(c, path, now);
    }
}

int esp_proto_peer_checksum(esp_proto_t *p, uint32_t peer, bool on)
{
    esp_conn_t *c = esp_conn_get(p, peer);
    if (c == NULL || c->state != ESP_CLOSED) {
        return -1;
    }
    c->crc = on;
    return 0;
}

esp_conn_t *esp_conn_get(esp_proto_t *p, uint32_t peer)
{
    return peer < p->nconns ? p->conns[peer] : NULL;
}

static esp_conn_t *conn_by_token(esp_proto_t *p, uint64_t token)
{
    esp_conn_t *c = esp_conn_get(p, (uint32_t) token);
    return c != NULL && c->local_token == token ? c : NULL;
}

void esp_conn_fail(esp_conn_t *c, const char *fmt, ...)
{
    if (c->state == ESP_FAILED) {
        return;
    }
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    c->state = ESP_FAILED;
    c->p->stats.peers_failed++;
    if (c->rx_active) {
        /* Its burst will not end: stop sharing the receive budget with it. */
        c->rx_active = false;
        c->p->active_senders--;
    }
    if (c->p->ops.peer_failed != NULL) {
        c->p->ops.peer_failed(c->p->ctx, c->peer, why);
    }
}

void esp_flush_completions(esp_proto_t *p)
{
    while (p->depth == 0 && p->done_head != NULL) {
        esp_msg_t *m = p->done_head;
        p->done_head = m->next;
        if (p->done_head == NULL) {
            p->done_tail = NULL;
        }
        m->next = NULL;
        p->ops.complete(p->ctx, m);
    }
}

/* ------------------------------------------------------------ handshake */

static void send_hello(esp_conn_t *c, uint8_t type)
{
    esp_proto_t *p = c->p;
    esp_hdr_t h = {
        .version = ESP_WIRE_VERSION,
        .type = type,
        .token = type == ESP_T_HELLO ? 0 : c->peer_token,
    };
    esp_hello_t m = {
        .job_key = p->cfg.job_key,
        .src_id = p->cfg.my_id,
        .src_epoch = p->cfg.my_epoch,
        .dst_epoch = c->peer_epoch,
        .src_token = c->local_token,
        .isn = c->snd_isn,
        .options = (c->crc ? ESP_O_CRC : 0) | (p->cfg.no_loss_reports ? 0 : ESP_O_LOSS)
                   | (p->cfg.compact ? ESP_O_COMPACT : 0),
    };
    uint8_t buf[ESP_HDR_LEN + sizeof(esp_hello_t)];
    size_t n = esp_hdr_encode(&h, &m, buf);
    /* No payload: the head CRC covers all of it. */
    n = esp_hdr_seal(buf, n, NULL, 0, false);
    struct iovec iov = {buf, n};
    /* A HELLO tries each path in turn (one may be dead); the answer goes
     * back by the path the HELLO came by. */
    unsigned path = c->rx_path;
    if (type == ESP_T_HELLO) {
        path = c->hello_path;
        c->hello_path = (c->hello_path + 1) % c->npaths;
    }
    p->ops.transmit(p->ctx, c->peer, path, ESP_CH_PRIO, &iov, 1);
    c->hello_sent_ns = p->now;
}

static void hs_list_add(esp_conn_t *c)
{
    if (!c->on_hs_list) {
        c->on_hs_list = true;
        c->hs_next = c->p->hs_list;
        c->p->hs_list = c;
    }
}

/* Start the handshake if it has not started. */
static void conn_open(esp_conn_t *c, uint64_t now)
{
    if (c->state != ESP_CLOSED) {
        return;
    }
    c->state = ESP_HELLO_SENT;
    c->hello_since_ns = now;
    c->hello_tries = 1;
    c->hello_next_ns = now + HELLO_RTO_NS;
    c->last_progress_ns = now;
    c->p->stats.connects++;
    send_hello(c, ESP_T_HELLO);
    hs_list_add(c);
}

static void conn_established(esp_conn_t *c, const esp_hello_t *m, uint64_t now)
{
    c->peer_token = m->src_token;
    c->rcv_nxt = c->rx_high = m->isn;
    c->peer_crc = (m->options & ESP_O_CRC) != 0;
    c->peer_loss = (m->options & ESP_O_LOSS) != 0 && !c->p->cfg.no_loss_reports;
    c->compact = (m->options & ESP_O_COMPACT) != 0 && c->p->cfg.compact;
    /* Every payload byte is checked both ways when either end asks for it;
     * both ends see both options before any data, so they agree. */
    c->crc = c->crc || c->peer_crc;
    c->state = ESP_ESTABLISHED;
    c->last_progress_ns = now;
}

/* The checks a HELLO and a HELLO_ACK share. Returns the connection, or NULL
 * after counting the datagram as stray. */
static esp_conn_t *hello_conn(esp_proto_t *p, const esp_parsed_t *d)
{
    const esp_hello_t *m = &d->x.hello;
    if (m->job_key != p->cfg.job_key || m->dst_epoch != p->cfg.my_epoch) {
        p->stats.stray++;   /* another job, or meant for an earlier run */
        return NULL;
    }
    esp_conn_t *c;
    if (d->h.type == ESP_T_HELLO_ACK) {
        c = conn_by_token(p, d->h.token);
    } else {
        c = NULL;
        for (uint32_t i = 0; i < p->nconns && c == NULL; i++) {
            if (p->conns[i] != NULL && p->conns[i]->peer_id == m->src_id) {
                c = p->conns[i];
            }
        }
        uint32_t peer;
        if (c == NULL && p->ops.unknown_peer != NULL
            && p->ops.unknown_peer(p->ctx, m->src_id, &peer) == 0) {
            c = esp_conn_get(p, peer);
        }
    }
    if (c == NULL || c->peer_id != m->src_id || c->peer_epoch != m->src_epoch) {
        p->stats.stray++;
        return NULL;
    }
    return c;
}

/* The handshake's round trip, the least round trip until one is measured:
 * a side that only receives measures none, and its grant covers a round
 * trip (esp_recv.c). */
static void handshake_rtt(esp_conn_t *c, uint64_t now)
{
    /* Connections open on a first send, so the answer follows at once; a
     * late one says nothing of the path. */
    if (c->min_rtt_ns == 0 && c->hello_sent_ns != 0 && now > c->hello_sent_ns
        && now - c->hello_sent_ns < HANDSHAKE_RTT_MAX_NS) {
        c->min_rtt_ns = now - c->hello_sent_ns;
    }
}

/* The datagram being handled came from c by the interface p->rx_via; an
 * answer is a standalone ACK or a HELLO_ACK (esp_path_heard). */
static void heard(esp_proto_t *p, esp_conn_t *c, bool answer, uint64_t now)
{
    for (unsigned k = 0; k < c->npaths; k++) {
        if (c->path[k].via == p->rx_via) {
            esp_path_heard(c, k, answer, now);
            return;
        }
    }
}

static void on_hello(esp_proto_t *p, const esp_parsed_t *d, uint64_t now)
{
    esp_conn_t *c = hello_conn(p, d);
    if (c == NULL) {
        return;
    }
    heard(p, c, false, now);
    const esp_hello_t *m = &d->x.hello;
    if (c->state == ESP_FAILED) {
        return;
    }
    if (c->state == ESP_ESTABLISHED) {
        if (m->src_token != c->peer_token) {
            p->stats.stray++;   /* not the connection we have */
            return;
        }
        /* Our HELLO_ACK was lost: answer again. */
        send_hello(c, ESP_T_HELLO_ACK);
        return;
    }
    /* CLOSED, or HELLO_SENT (both opened at once): each side keeps its own
     * token and learns the other's, so both end with one connection. */
    c->hello_since_ns = now;
    conn_established(c, m, now);
    /* The answer first: data ahead of it would reach a peer still waiting
     * for it, and be dropped there. */
    send_hello(c, ESP_T_HELLO_ACK);
    esp_push(c, now);
}

static void on_hello_ack(esp_proto_t *p, const esp_parsed_t *d, uint64_t now)
{
    esp_conn_t *c = hello_conn(p, d);
    if (c == NULL || c->state == ESP_FAILED) {
        return;
    }
    heard(p, c, true, now);
    const esp_hello_t *m = &d->x.hello;
    if (c->state == ESP_ESTABLISHED) {
        if (m->src_token != c->peer_token) {
            p->stats.stray++;
        }
        return;   /* a duplicate, or the answer to a crossed HELLO */
    }
    if (c->state != ESP_HELLO_SENT) {
        p->stats.stray++;   /* an answer to a HELLO we never sent */
        return;
    }
    handshake_rtt(c, now);
    conn_established(c, m, now);
    esp_push(c, now);
}

static void handshake_timers(esp_proto_t *p, uint64_t now)
{
    esp_conn_t **link = &p->hs_list;
    while (*link != NULL) {
        esp_conn_t *c = *link;
        if (c->state != ESP_HELLO_SENT) {
            *link = c->hs_next;
            c->on_hs_list = false;
            continue;
        }
        if (now >= c->hello_next_ns) {
            if (now - c->hello_since_ns >= p->cfg.peer_timeout_ns) {
                *link = c->hs_next;
                c->on_hs_list = false;
                esp_conn_fail(c, "no answer to %u connection requests in %.1f s",
                              c->hello_tries, (double) (now - c->hello_since_ns) / 1e9);
                continue;
            }
            uint64_t rto = HELLO_RTO_NS << (c->hello_tries < 6 ? c->hello_tries : 6);
            c->hello_next_ns = now + (rto < HELLO_RTO_MAX_NS ? rto : HELLO_RTO_MAX_NS);
            /* Look again when the timeout is up, not up to a retry later. */
            if (c->hello_next_ns > c->hello_since_ns + p->cfg.peer_timeout_ns) {
                c->hello_next_ns = c->hello_since_ns + p->cfg.peer_timeout_ns;
            }
            c->hello_tries++;
            send_hello(c, ESP_T_HELLO);
        }
        link = &c->hs_next;
    }
}

/* ---------------------------------------------------------------- input */

void esp_proto_input_via(esp_proto_t *p, unsigned via, const void *buf, size_t len,
                         uint64_t now)
{
    p->rx_via = via;
    esp_proto_input(p, buf, len, now);
    p->rx_via = 0;
}

/* The connection a compact piece names, when its CRC (seeded with that
 * connection's token) checks out; NULL after counting it. */
static esp_conn_t *compact_conn(esp_proto_t *p, const void *buf, const esp_parsed_t *d)
{
    esp_conn_t *c = esp_conn_get(p, d->h.conn);
    if (c == NULL || (uint32_t) c->local_token != d->h.conn) {
        p->stats.stray++;
        return NULL;
    }
    if (!esp_hdr_head_ok(buf, d, c->local_token)) {
        p->stats.corrupt++;
        return NULL;
    }
    return c;
}

void esp_proto_input(esp_proto_t *p, const void *buf, size_t len, uint64_t now)
{
    now = esp_clock(p, now);
    esp_parsed_t d;
    if (esp_hdr_parse(buf, len, &d) != ESP_PARSE_OK) {
        p->stats.malformed++;
        return;
    }
    bool compact = esp_type_compact(d.h.type);
    /* Whatever the checksum setting, nothing a datagram says is used before
     * its head checks out: flipped bits must not steer the engine, nor
     * reach ob1 as one of its headers. */
    if (!compact && !esp_hdr_head_ok(buf, &d, 0)) {
        p->stats.corrupt++;
        return;
    }
    p->depth++;
    if (d.h.type == ESP_T_HELLO || d.h.type == ESP_T_HELLO_ACK) {
        if (d.h.type == ESP_T_HELLO) {
            on_hello(p, &d, now);
        } else {
            on_hello_ack(p, &d, now);
        }
        goto out;
    }
    esp_conn_t *c;
    if (compact) {
        c = compact_conn(p, buf, &d);
    } else if ((c = conn_by_token(p, d.h.token)) == NULL) {
        p->stats.stray++;
    }
    if (c == NULL) {
        goto out;
    }
    /* The rest of the payload: required where full checksums are on, and
     * checked wherever present. A PUT's is checked while it is copied into
     * place (esp_recv.c), everything else's here, before anything uses it. */
    if ((c->crc && d.payload_len > ESP_HEAD_PAYLOAD && !(d.h.flags & ESP_F_CRC))
        || (d.h.type != ESP_T_PUT && !esp_hdr_payload_ok(&d))) {
        p->stats.corrupt++;
        goto out;
    }
    if (c->state != ESP_ESTABLISHED) {
        /* Data before our handshake finished (its HELLO_ACK is lost or
         * late): dropped; the HELLO retry brings the answer again. */
        p->stats.stray++;
        goto out;
    }
    heard(p, c, d.h.type == ESP_T_ACK && !(d.h.flags & ESP_F_ACKNOW), now);
    handshake_rtt(c, now);   /* the acceptor: our HELLO_ACK's answer */
    if (d.h.type == ESP_T_ACK) {
        p->stats.acks_rx++;
    }
    if (!compact) {
        esp_on_ack(c, &d, now);   /* a compact piece carries no acknowledgement */
    }
    if (d.h.type == ESP_T_ACK && (d.h.flags & ESP_F_ACKNOW) && c->state == ESP_ESTABLISHED) {
        esp_send_ack(c);   /* a path probe: answered at once, by the path it came by */
    }
    if (d.h.type != ESP_T_ACK && c->state == ESP_ESTABLISHED) {
        esp_recv_data(c, &d, now);
    }
out:
    p->depth--;
    esp_flush_completions(p);
}

void esp_proto_flush_acks(esp_proto_t *p, uint64_t now)
{
    now = esp_clock(p, now);
    if (p->ack_list != NULL) {
        p->depth++;
        esp_ack_timers(p, now);
        p->depth--;
        esp_flush_completions(p);
    }
}

void esp_proto_rx_overflow(esp_proto_t *p, uint64_t now)
{
    now = esp_clock(p, now);
    p->depth++;
    for (uint32_t i = 0; i < p->nconns; i++) {
        esp_conn_t *c = p->conns[i];
        if (c != NULL && c->state == ESP_ESTABLISHED && c->peer_loss) {
            esp_recv_report_loss(c, now);
        }
    }
    esp_ack_timers(p, now);
    p->depth--;
    esp_flush_completions(p);
}

void esp_proto_tick(esp_proto_t *p, uint64_t now)
{
    now = esp_clock(p, now);
    p->depth++;
    for (esp_room_t *r = esp_hotel_evict(&p->hotel, now), *next; r != NULL; r = next) {
        next = r->prev;
        r->prev = NULL;
        esp_on_timeout(p, (esp_seg_t *) r, now);
    }
    if (p->multipath && now >= p->paths_next_ns) {
        p->paths_next_ns = now + PATHS_TICK_NS;
        for (uint32_t i = 0; i < p->nconns; i++) {
            esp_conn_t *c = p->conns[i];
            if (c != NULL && c->npaths > 1 && c->state == ESP_ESTABLISHED) {
                esp_paths_tick(c, now);
            }
        }
    }
    esp_resend_pass(p, now);
    if (p->pace_list != NULL) {
        esp_pace_timers(p, now);
    }
    if (p->ack_list != NULL) {
        esp_ack_timers(p, now);
    }
    if (p->hs_list != NULL) {
        handshake_timers(p, now);
    }
    p->depth--;
    esp_flush_completions(p);
}

int esp_proto_send(esp_proto_t *p, uint32_t peer, esp_msg_t *msg, uint64_t now)
{
    now = esp_clock(p, now);
    esp_conn_t *c = esp_conn_get(p, peer);
    if (c == NULL || c->state == ESP_FAILED) {
        return -1;
    }
    if (msg->iovcnt < 0 || msg->iovcnt > ESP_MSG_MAX_IOV
        || (msg->kind != ESP_MSG_SEND && msg->kind != ESP_MSG_PUT)) {
        return -1;
    }
    size_t len = 0;
    for (int i = 0; i < msg->iovcnt; i++) {
        len += msg->iov[i].iov_len;
    }
    /* Segments keep their offset in 32 bits. */
    if ((msg->kind == ESP_MSG_SEND && len > ESP_MAX_FRAG)
        || (msg->kind == ESP_MSG_PUT && (len == 0 || len > UINT32_MAX))) {
        return -1;
    }
    msg->len = len;
    c->sendq_bytes += len;
    msg->queued = 0;
    msg->segs_out = 0;
    msg->put_slot = 0;
    msg->released = false;
    esp_msg_append(&c->sendq_head, &c->sendq_tail, msg);
    p->depth++;
    if (c->state == ESP_CLOSED) {
        conn_open(c, now);
    } else if (c->state == ESP_ESTABLISHED) {
        esp_push(c, now);
    }
    p->depth--;
    esp_flush_completions(p);
    return 0;
}

size_t esp_proto_backlog(const esp_proto_t *p, uint32_t peer)
{
    const esp_conn_t *c = esp_conn_get((esp_proto_t *) p, peer);
    return c != NULL ? c->sendq_bytes : 0;
}

bool esp_proto_link_bound(const esp_proto_t *p, uint32_t peer)
{
    const esp_conn_t *c = esp_conn_get((esp_proto_t *) p, peer);
    return c == NULL || esp_link_bound(c);
}

bool esp_proto_idle(const esp_proto_t *p)
{
    if (p->hotel.guests != 0 || p->resend_head != NULL) {
        return false;
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        const esp_conn_t *c = p->conns[i];
        if (c != NULL && c->state != ESP_FAILED
            && (c->sendq_head != NULL || c->snd_una != c->snd_nxt)) {
            return false;
        }
    }
    return true;
}

const esp_proto_stats_t *esp_proto_stats(const esp_proto_t *p)
{
    return &p->stats;
}

void esp_proto_peer_info(const esp_proto_t *p, uint32_t peer, esp_peer_info_t *info)
{
    memset(info, 0, sizeof(*info));
    const esp_conn_t *c = esp_conn_get((esp_proto_t *) p, peer);
    if (c == NULL) {
        return;
    }
    info->connected = c->state == ESP_ESTABLISHED;
    info->srtt_ns = c->srtt_ns;
    info->min_rtt_ns = c->min_rtt_ns;
    info->rto_ns = c->rto_ns;
    info->in_flight = c->snd_nxt - c->snd_una;
    for (unsigned k = 0; k < c->npaths; k++) {
        if (c->path[k].up) {
            info->cwnd += c->path[k].cwnd;
            info->ssthresh = c->path[k].ssthresh > info->ssthresh ? c->path[k].ssthresh
                                                                  : info->ssthresh;
        }
    }
    info->peer_wnd = c->peer_wnd;
    info->state_bytes = sizeof(*c) + c->scap * sizeof(*c->sring) + c->rcap * sizeof(*c->rring)
                        + c->asm_cap + c->held_bytes
                        + (c->put_slots != NULL ? (ESP_PUT_SLOTS + 1) * sizeof(*c->put_slots) : 0)
                        + (c->path != &c->path0 ? c->npaths * sizeof(*c->path) : 0);
}

unsigned esp_proto_path_info(const esp_proto_t *p, uint32_t peer, unsigned i,
                             esp_path_info_t *info)
{
    memset(info, 0, sizeof(*info));
    const esp_conn_t *c = esp_conn_get((esp_proto_t *) p, peer);
    if (c == NULL) {
        return 0;
    }
    if (i < c->npaths) {
        const esp_path_t *pa = &c->path[i];
        info->up = pa->up;
        info->standby = pa->standby;
        info->via = pa->via;
        info->srtt_ns = pa->srtt_ns;
        info->min_rtt_ns = pa->min_rtt_ns;
        info->cwnd = pa->cwnd;
        info->flight = pa->flight;
        info->segs_tx = pa->segs_tx;
        info->bytes_tx = pa->bytes_tx;
        info->segs_rx = pa->segs_rx;
        info->bytes_rx = pa->bytes_rx;
        info->downs = pa->downs;
        info->ups = pa->ups;
    }
    return c->npaths;
}

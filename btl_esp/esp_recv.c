/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The receiving half of a connection: the receive window, duplicates,
 * in-order delivery (out-of-order data is held until the gap fills),
 * reassembly of CHUNKs, PUT writes, the sender-activity count that divides
 * the receive budget, and the ACK policy (piggy-backed, delayed, or at once).
 */
#include "esp_proto_int.h"

#include <stdlib.h>
#include <string.h>

void esp_recv_init(esp_conn_t *c)
{
    (void) c;   /* rcv_nxt comes with the peer's HELLO; rings grow with traffic */
}

void esp_recv_fini(esp_conn_t *c)
{
    for (uint32_t i = 0; i < c->rcap; i++) {
        free(c->rring[i].held);
    }
    free(c->rring);
    free(c->asm_buf);
    if (c->put_slots != NULL) {
        for (unsigned k = 0; k <= ESP_PUT_SLOTS; k++) {
            for (esp_held_t *h = c->put_slots[k].waiting, *next; h != NULL; h = next) {
                next = h->next;
                free(h);
            }
        }
    }
    free(c->put_slots);
    c->put_slots = NULL;
    c->rring = NULL;
    c->asm_buf = NULL;
    c->rcap = c->asm_cap = 0;
    if (c->rx_active) {
        c->rx_active = false;
        c->p->active_senders--;
    }
}

/* Make the receive ring reach rcv_nxt + off. */
static bool rring_reserve(esp_conn_t *c, uint32_t off)
{
    if (off < c->rcap) {
        return true;
    }
    uint32_t cap = c->rcap ? c->rcap : 16;
    while (cap <= off) {
        cap *= 2;
    }
    esp_rslot_t *ring = calloc(cap, sizeof(*ring));
    if (ring == NULL) {
        return false;
    }
    for (uint32_t i = 0; i < c->rcap; i++) {
        uint32_t q = c->rcv_nxt + i;
        ring[q & (cap - 1)] = c->rring[q & (c->rcap - 1)];
    }
    free(c->rring);
    c->rring = ring;
    c->rcap = cap;
    return true;
}

/* ----------------------------------------------------------------- grant */

/*
 * The receiver paces its senders: together they may have in flight what it
 * drains in grant_delay (plus a round trip), so the queue they build ahead
 * of it (its socket buffer, or the switch port before a slower link) stays
 * near that delay however fast or slow it reads, and never grows until it
 * reads as loss. The drain rate is an average over intervals of at least
 * DRAIN_INTERVAL_NS of the bytes it accepted: the catch-up after it was
 * descheduled averages out with the stall before it (a peak would count the
 * CPU's speed, not the link's). An interval that began after an idle gap
 * is not a measure. Each sender in a burst gets an equal share. The grant
 * converges to a queue of grant_delay: it grows by (grant_delay + rtt) /
 * (rtt + queue) per measure.
 */
#define DRAIN_INTERVAL_NS (500 * 1000)
#define DRAIN_IDLE_NS (5 * 1000 * 1000)
#define GRANT_FLOOR (64u << 10)

static void drain_note(esp_proto_t *p, size_t bytes, uint64_t now)
{
    uint64_t dt = now - p->drain_from_ns;
    if (p->drain_from_ns == 0 || dt > DRAIN_IDLE_NS) {
        p->drain_from_ns = now;   /* after idleness: start a fresh interval */
        p->drain_bytes = bytes;
        return;
    }
    p->drain_bytes += bytes;
    if (dt < DRAIN_INTERVAL_NS) {
        return;
    }
    uint64_t rate = p->drain_bytes * 1000000000ull / dt;
    p->drain_rate = p->drain_rate == 0 ? rate : (3 * p->drain_rate + rate) / 4;
    p->drain_bytes = 0;
    p->drain_from_ns = now;
}

void esp_proto_set_cpu_wait(esp_proto_t *p, uint64_t ns)
{
    p->cpu_wait_ns = ns;
}

/*
 * Fair shares (cfg.fair). An equal split of the grant is not an equal
 * share of the link where ranks wait for CPUs: a sender that runs less
 * often, or loses more at a full switch port and waits for its repair,
 * moves less with the same grant (the 7 -> 1 incast: 10 against 24 MB/s).
 * Every FAIR_EPOCH_NS the receiver compares what each sender in a burst
 * delivered with the equal share; the shortfall, decayed by a quarter an
 * epoch, raises the sender's weight in the split, an excess lowers it,
 * within [1/2, 2] of the equal share. Senders joining a burst start equal.
 */
#define FAIR_EPOCH_NS (10 * 1000 * 1000)
#define FAIR_ONE 256

static void fair_epoch(esp_proto_t *p, uint64_t now)
{
    p->fair_from_ns = now;
    unsigned n = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->nconns; i++) {
        const esp_conn_t *o = p->conns[i];
        if (o != NULL && o->rx_active) {
            n++;
            total += o->fair_bytes;
        }
    }
    int64_t share = n ? (int64_t) (total / n) : 0;
    int64_t sum = 0;
    for (uint32_t i = 0; i < p->nconns; i++) {
        esp_conn_t *o = p->conns[i];
        if (o == NULL || !o->rx_active || n < 2 || share == 0) {
            if (o != NULL) {
                o->fair_credit = 0;
                o->fair_adjust = 0;
                o->fair_bytes = 0;
            }
            continue;
        }
        o->fair_credit = o->fair_credit * 3 / 4 + (share - (int64_t) o->fair_bytes);
        int64_t w = FAIR_ONE + o->fair_credit * FAIR_ONE / (2 * share);
        w = w < FAIR_ONE / 2 ? FAIR_ONE / 2 : w > 2 * FAIR_ONE ? 2 * FAIR_ONE : w;
        o->fair_adjust = (int32_t) (w - FAIR_ONE);
        o->fair_bytes = 0;
        sum += w;
    }
    /* The weights average one: the split still sums to the grant. */
    for (uint32_t i = 0; sum > 0 && i < p->nconns; i++) {
        esp_conn_t *o = p->conns[i];
        if (o != NULL && o->rx_active) {
            o->fair_adjust = (int32_t) ((FAIR_ONE + o->fair_adjust) * (int64_t) n * FAIR_ONE / sum
                                        - FAIR_ONE);
        }
    }
}

static void fair_note(esp_conn_t *c, size_t bytes, uint64_t now)
{
    esp_proto_t *p = c->p;
    if (!p->cfg.fair) {
        return;
    }
    c->fair_bytes += bytes;
    if (now - p->fair_from_ns >= FAIR_EPOCH_NS) {
        fair_epoch(p, now);
    }
}

/* Bytes c's peer may have in flight toward us beyond what we acknowledged. */
static size_t grant(const esp_conn_t *c)
{
    const esp_proto_t *p = c->p;
    uint64_t rate = p->drain_rate;
    uint64_t total = rate / 1000 * ((p->cfg.grant_delay_ns + c->min_rtt_ns + p->cpu_wait_ns) / 1000)
                     / 1000;
    /* Before any measure, an initial burst; after, a floor small enough
     * for a slow link (64 KiB is 0.5 ms at 1 Gbit/s): the grant grows by
     * itself while the queue is shorter than grant_delay. */
    uint64_t floor = rate == 0 ? p->cfg.initial_burst : GRANT_FLOOR;
    if (total < floor) {
        total = floor;
    }
    if (total > p->cfg.rcv_budget) {
        total = p->cfg.rcv_budget;
    }
    /* fair_adjust: 0 without cfg.fair, or outside a burst */
    uint64_t weight = (uint64_t) (FAIR_ONE + c->fair_adjust);
    return (size_t) (total * weight / FAIR_ONE / (p->active_senders ? p->active_senders : 1));
}

/* ------------------------------------------------------------------ ACKs */

void esp_fill_ack(esp_conn_t *c, esp_hdr_t *h)
{
    if (esp_seq_lt(c->rx_high, c->rcv_nxt)) {
        c->rx_high = c->rcv_nxt;
    }
    h->ack = c->rcv_nxt;
    c->ack_sent = c->rcv_nxt;
    h->sack = 0;
    if (c->rx_ahead != 0) {
        for (uint32_t i = 0; i < 32 && i + 1 < c->rcap; i++) {
            if (c->rring[(c->rcv_nxt + 1 + i) & (c->rcap - 1)].flags & ESP_R_HAVE) {
                h->sack |= 1u << i;
            }
        }
    }
    size_t g = grant(c);
    h->wnd = g >= (size_t) 0xffff << 10 ? 0xffff : (uint16_t) (g >> 10);
    c->unacked = 0;
    c->ack_pending = false;
}

/* SACK blocks of what arrived beyond the sack bits' reach (ack + 33 ..),
 * the newest ranges first (they show the paths that still deliver, and the
 * newest arrival gives the sender a fresh round trip), into out; returns
 * their bytes. */
static size_t sack_blocks(const esp_conn_t *c, uint8_t *out)
{
    if (c->rx_ahead == 0 || c->rcap == 0) {
        return 0;
    }
    uint32_t low = c->rcv_nxt + 1 + ESP_SACK_BITS, q = c->rx_high;
    if (q - c->rcv_nxt > c->rcap) {
        q = c->rcv_nxt + c->rcap;
    }
    size_t n = 0;
    while (esp_seq_gt(q, low) && n < ESP_SACK_BLOCKS_MAX) {
        /* q is just after a candidate range: walk down over what we have */
        while (esp_seq_gt(q, low) && !(c->rring[(q - 1) & (c->rcap - 1)].flags & ESP_R_HAVE)) {
            q--;
        }
        if (!esp_seq_gt(q, low)) {
            break;
        }
        uint32_t end = q;
        while (esp_seq_gt(q, low) && (c->rring[(q - 1) & (c->rcap - 1)].flags & ESP_R_HAVE)) {
            q--;
        }
        esp_put32(out + n * ESP_SACK_BLOCK_LEN, q);
        esp_put32(out + n * ESP_SACK_BLOCK_LEN + 4, end);
        n++;
    }
    return n * ESP_SACK_BLOCK_LEN;
}

void esp_send_ack(esp_conn_t *c)
{
    esp_hdr_t h = {.type = ESP_T_ACK};
    esp_fill_ack(c, &h);
    uint8_t blocks[ESP_SACK_BLOCKS_MAX * ESP_SACK_BLOCK_LEN];
    struct iovec pl = {blocks, sack_blocks(c, blocks)};
    if (pl.iov_len != 0) {
        h.flags |= ESP_F_SACKB;
        h.len = (uint16_t) pl.iov_len;
    }
    if (c->loss_owed) {
        h.flags |= ESP_F_LOSS;
        c->loss_owed = false;
        c->p->stats.loss_reports_tx++;
    }
    /* By the latest arrival's path, and by every other that brought
     * something since our last ACK by it: the peer judges a path alive by
     * hearing from it (esp_paths_tick). */
    for (unsigned k = 0; k < c->npaths; k++) {
        esp_path_t *pa = &c->path[k];
        if (k == c->rx_path || pa->heard_ns > pa->acked_ns) {
            pa->acked_ns = c->p->now;
            esp_transmit(c, k, &h, NULL, &pl, pl.iov_len != 0, ESP_CH_PRIO);
            c->p->stats.acks_tx++;
        }
    }
}

/* The segment seq arrived again: say so, with the acknowledgement, so that
 * the sender learns its retransmission was not needed. */
void esp_send_dup(esp_conn_t *c, uint32_t seq)
{
    esp_hdr_t h = {.type = ESP_T_ACK, .flags = ESP_F_DUP, .seq = seq};
    esp_fill_ack(c, &h);
    esp_transmit(c, c->rx_path, &h, NULL, NULL, 0, ESP_CH_PRIO);
    c->p->stats.acks_tx++;
}

void esp_ack_timers(esp_proto_t *p, uint64_t now)
{
    esp_conn_t **link = &p->ack_list;
    while (*link != NULL) {
        esp_conn_t *c = *link;
        if (c->ack_pending && c->state == ESP_ESTABLISHED && now < c->ack_due_ns) {
            link = &c->ack_next;
            continue;
        }
        *link = c->ack_next;
        c->on_ack_list = false;
        if (c->ack_pending && c->state == ESP_ESTABLISHED) {
            esp_send_ack(c);
        }
    }
}

static void ack_later(esp_conn_t *c, uint64_t now)
{
    if (c->ack_pending) {
        return;
    }
    c->ack_pending = true;
    c->ack_due_ns = now + c->p->cfg.ack_delay_ns;
    if (!c->on_ack_list) {
        c->on_ack_list = true;
        c->ack_next = c->p->ack_list;
        c->p->ack_list = c;
    }
}

/* Acknowledge at the end of this batch of input (esp_proto_flush_acks, or
 * the next tick), not after the ACK delay: one ACK per peer and batch, with
 * the newest state, however many segments asked for one. */
static void ack_soon(esp_conn_t *c, uint64_t now)
{
    ack_later(c, now);
    c->ack_due_ns = now;
}

/* Our kernel dropped datagrams, perhaps the peer's: say so in an ACK at
 * the end of this batch (esp_proto_rx_overflow). */
void esp_recv_report_loss(esp_conn_t *c, uint64_t now)
{
    c->loss_owed = true;
    ack_soon(c, now);
}

/* ------------------------------------------------------------- delivery */

/* The number of senders changed: every other sender's share shrank or
 * grew; tell them at once. */
static void shares_changed(esp_conn_t *c)
{
    esp_proto_t *p = c->p;
    for (uint32_t i = 0; i < p->nconns; i++) {
        esp_conn_t *o = p->conns[i];
        if (o != NULL && o != c && o->rx_active && o->state == ESP_ESTABLISHED) {
            ack_soon(o, p->now);
        }
    }
}

/* A burst flag taking effect, in sequence order. A one-segment burst (TXS
 * and TXF together: a lone message) changes no share, and with no other
 * sender active there is no one to tell: the common cases cost no walk
 * over the peers. */
static void note_activity(esp_conn_t *c, uint8_t flags)
{
    bool was = c->rx_active;
    if (flags & ESP_R_TXS) {
        c->rx_active = true;
    }
    if (flags & ESP_R_TXF) {
        c->rx_active = false;
    }
    if (c->rx_active == was) {
        return;
    }
    esp_proto_t *p = c->p;
    c->fair_credit = 0;   /* a new burst starts from the equal share */
    c->fair_adjust = 0;
    c->fair_bytes = 0;
    if (c->rx_active) {
        p->active_senders++;
    } else {
        p->active_senders--;
    }
    if (p->active_senders > (c->rx_active ? 1u : 0u)) {
        shares_changed(c);
    }
}

/* A FRAG or CHUNK whose turn has come. */
static void consume(esp_conn_t *c, uint8_t type, uint8_t tag, const esp_chunk_ext_t *ch,
                    const uint8_t *data, size_t len)
{
    esp_proto_t *p = c->p;
    if (type == ESP_T_FRAG) {
        p->ops.deliver(p->ctx, c->peer, tag, data, len);
        return;
    }
    /* CHUNKs of one fragment come in sequence order, so in offset order;
     * a CCHUNK continues the fragment its CHUNK opened. */
    if (type == ESP_T_CCHUNK) {
        if (c->asm_filled == 0 || ch->offset != c->asm_filled
            || len > c->asm_len - c->asm_filled) {
            p->stats.malformed++;   /* the sender broke the order: drop the fragment */
            c->asm_filled = 0;
            return;
        }
        tag = c->asm_tag;
    } else if (c->asm_filled == 0) {
        if (ch->offset != 0 || ch->frag_len > ESP_MAX_FRAG) {
            p->stats.malformed++;
            return;
        }
        if (c->asm_cap < ch->frag_len) {
            uint8_t *buf = realloc(c->asm_buf, ch->frag_len);
            if (buf == NULL) {
                esp_conn_fail(c, "out of memory reassembling a %u-byte fragment", ch->frag_len);
                return;
            }
            c->asm_buf = buf;
            c->asm_cap = ch->frag_len;
        }
        c->asm_len = ch->frag_len;
        c->asm_frag_id = ch->frag_id;
        c->asm_tag = tag;
    }
    if (type != ESP_T_CCHUNK
        && (ch->frag_id != c->asm_frag_id || ch->frag_len != c->asm_len
            || ch->offset != c->asm_filled || tag != c->asm_tag)) {
        p->stats.malformed++;   /* the sender broke the order: drop the fragment */
        c->asm_filled = 0;
        return;
    }
    memcpy(c->asm_buf + c->asm_filled, data, len);
    c->asm_filled += len;
    if (c->asm_filled == c->asm_len) {
        c->asm_filled = 0;
        p->ops.deliver(p->ctx, c->peer, tag, c->asm_buf, c->asm_len);
    }
}

/* Deliver everything now in order, starting at rcv_nxt. `cur` is the
 * datagram just received when it is the one at rcv_nxt (not copied). */
static void advance(esp_conn_t *c, const esp_parsed_t *cur)
{
    while (c->rcap != 0) {
        esp_rslot_t *slot = &c->rring[c->rcv_nxt & (c->rcap - 1)];
        if (!(slot->flags & ESP_R_HAVE)) {
            break;
        }
        esp_held_t *held = slot->held;
        uint8_t flags = slot->flags;
        /* Settle the state first: a delivery may send, and that send
         * carries our acknowledgement. */
        slot->held = NULL;
        slot->flags = 0;
        c->rcv_nxt++;
        if (cur == NULL) {
            c->rx_ahead--;
        }
        note_activity(c, flags);
        if (cur != NULL) {
            if (cur->h.type != ESP_T_PUT && cur->h.type != ESP_T_CPUT) {
                consume(c, cur->h.type, cur->h.tag, &cur->x.chunk, cur->payload, cur->payload_len);
            }
            cur = NULL;
        } else if (held != NULL) {
            c->held_bytes -= held->len;
            consume(c, held->type, held->tag, &held->chunk, held->data, held->len);
            free(held);
        }
        if (c->state == ESP_FAILED) {
            return;
        }
    }
}

/* A PUT's payload is checked as it is copied into place; one that will not
 * be copied (a duplicate, beyond the window) is checked first, so that it
 * is counted as corrupt and not answered like an intact one. */
static bool put_copied(const esp_conn_t *c, uint32_t q)
{
    uint32_t off = q - c->rcv_nxt;
    return !esp_seq_lt(q, c->rcv_nxt) && off < c->p->cfg.window
           && (off >= c->rcap || !(c->rring[q & (c->rcap - 1)].flags & ESP_R_HAVE));
}

/* ------------------------------------------------------------------ PUTs */

/* The slots c's PUTs define, from the first definition on. */
static esp_put_slot_t *put_slots(esp_conn_t *c)
{
    if (c->put_slots == NULL) {
        c->put_slots = calloc(ESP_PUT_SLOTS + 1, sizeof(*c->put_slots));
    }
    return c->put_slots;
}

/* Write checked bytes of a CPUT where its slot says. */
static void cput_write(esp_conn_t *c, const esp_put_slot_t *sl, uint32_t offset,
                       const uint8_t *data, size_t len)
{
    esp_proto_t *p = c->p;
    void *dst = sl->base <= UINT64_MAX - offset - len
                    ? p->ops.put_target(p->ctx, c->peer, sl->key, sl->base + offset, len)
                    : NULL;
    if (dst == NULL) {
        p->stats.put_rejected++;
        return;
    }
    memcpy(dst, data, len);
}

/* A PUT's first piece defines its slot for the CPUTs after it; those that
 * came first are written now. Nothing is acknowledged before it is written
 * but these: their PUT cannot complete, nor its slot be used again, before
 * this piece is acknowledged, and so before they are written. */
static void slot_define(esp_conn_t *c, const esp_parsed_t *d)
{
    /* Always the newest: a copy of an older one would have been a duplicate
     * (the caller's check), and the slot is used again only once its last
     * PUT was wholly received. */
    esp_put_slot_t *sl = &c->put_slots[d->h.tag & ESP_SLOT_NUM];
    sl->defined = true;
    sl->gen = d->h.tag & ESP_SLOT_GEN;
    sl->seq = d->h.seq;
    sl->key = d->x.put.key;
    sl->base = d->x.put.addr;
    for (esp_held_t **link = &sl->waiting, *h; (h = *link) != NULL;) {
        if ((h->tag & ESP_SLOT_GEN) != sl->gen || !esp_seq_gt(h->seq, sl->seq)) {
            link = &h->next;   /* not this definition's (a broken sender's) */
            continue;
        }
        cput_write(c, sl, h->chunk.offset, h->data, h->len);
        c->held_bytes -= h->len;
        *link = h->next;
        free(h);
    }
}

/* A copy of d kept for later, within the hold budget; NULL (counted) when
 * there is no room: the sender will send it again. */
static esp_held_t *hold_copy(esp_conn_t *c, const esp_parsed_t *d)
{
    esp_proto_t *p = c->p;
    esp_held_t *h;
    if (c->held_bytes + d->payload_len > p->cfg.hold_budget
        || (h = malloc(sizeof(*h) + d->payload_len)) == NULL) {
        p->stats.hold_dropped++;
        return NULL;
    }
    h->type = d->h.type;
    h->tag = d->h.tag;
    h->len = (uint32_t) d->payload_len;
    h->chunk = d->x.chunk;
    h->seq = d->h.seq;
    h->next = NULL;
    memcpy(h->data, d->payload, d->payload_len);
    c->held_bytes += h->len;
    p->stats.held++;
    return h;
}

/* A CPUT before its slot's definition: kept until it comes. */
static bool cput_wait(esp_conn_t *c, esp_put_slot_t *sl, const esp_parsed_t *d)
{
    esp_held_t *h = hold_copy(c, d);
    if (h == NULL) {
        return false;
    }
    h->next = sl->waiting;
    sl->waiting = h;
    return true;
}

/*
 * A PUT piece, written at once, in or out of order: a full PUT names its
 * key and address, a CPUT its slot and an offset. A full PUT's CRC is
 * checked in the copy (esp_proto_input checked the head, so the place is
 * right), a CPUT's was checked whole. False when it is not to be
 * acknowledged: bad bytes (the sender resends them and overwrites them
 * before its PUT can complete), no room to wait, or a CPUT no definition
 * can place (a broken sender: it ends in a peer timeout, never in bytes
 * lost).
 */
static bool put_piece(esp_conn_t *c, const esp_parsed_t *d)
{
    esp_proto_t *p = c->p;
    bool slot = (d->h.tag & ESP_SLOT_NUM) != 0;
    if (slot && put_slots(c) == NULL) {
        p->stats.hold_dropped++;
        return false;
    }
    if (d->h.type == ESP_T_PUT) {
        void *dst = p->ops.put_target(p->ctx, c->peer, d->x.put.key, d->x.put.addr,
                                      d->payload_len);
        if (dst == NULL) {
            if (!esp_hdr_payload_ok(d)) {
                p->stats.corrupt++;
                return false;
            }
            p->stats.put_rejected++;
        } else if (!esp_hdr_payload_copy(dst, d)) {
            p->stats.corrupt++;
            return false;
        }
        if (slot) {
            slot_define(c, d);
        }
        return true;
    }
    esp_put_slot_t *sl = &c->put_slots[d->h.tag & ESP_SLOT_NUM];
    if (!sl->defined || sl->gen != (d->h.tag & ESP_SLOT_GEN)) {
        return cput_wait(c, sl, d);
    }
    if (!esp_seq_gt(d->h.seq, sl->seq)) {
        p->stats.malformed++;
        return false;
    }
    cput_write(c, sl, d->h.offset, d->payload, d->payload_len);
    return true;
}

void esp_recv_data(esp_conn_t *c, const esp_parsed_t *d, uint64_t now)
{
    esp_proto_t *p = c->p;
    uint32_t q = d->h.seq;
    if (d->h.type == ESP_T_PUT && !put_copied(c, q) && !esp_hdr_payload_ok(d)) {
        p->stats.corrupt++;
        return;
    }
    if (esp_seq_lt(q, c->rcv_nxt)) {
        p->stats.duplicates++;   /* our ACK was lost or late: repeat it now */
        esp_send_dup(c, q);
        return;
    }
    uint32_t off = q - c->rcv_nxt;
    if (off >= p->cfg.window) {
        p->stats.out_of_window++;
        return;
    }
    if (!rring_reserve(c, off)) {
        p->stats.hold_dropped++;
        return;
    }
    esp_rslot_t *slot = &c->rring[q & (c->rcap - 1)];
    if (slot->flags & ESP_R_HAVE) {
        p->stats.duplicates++;
        esp_send_dup(c, q);
        return;
    }
    uint8_t flags = ESP_R_HAVE | (d->h.flags & ESP_F_TXS ? ESP_R_TXS : 0)
                    | (d->h.flags & ESP_F_TXF ? ESP_R_TXF : 0);
    if (d->h.type == ESP_T_PUT || d->h.type == ESP_T_CPUT) {
        if (!put_piece(c, d)) {
            return;
        }
    } else if (off != 0 && (slot->held = hold_copy(c, d)) == NULL) {
        return;
    }
    slot->flags = flags;
    if (esp_seq_ge(q, c->rx_high)) {
        c->rx_high = q + 1;
    }
    drain_note(p, d->payload_len, now);
    fair_note(c, d->payload_len, now);
    p->stats.segs_rx++;
    p->stats.bytes_rx += d->payload_len;
    c->path[c->rx_path].segs_rx++;
    c->path[c->rx_path].bytes_rx += d->payload_len;
    c->unacked++;
    if (off != 0) {
        c->rx_ahead++;
        ack_soon(c, now);   /* a gap: tell the sender what we have */
        return;
    }
    uint32_t ahead_before = c->rx_ahead;
    advance(c, d);
    /* A delivery may have sent data, and the ACK went with it; but it was
     * taken in the middle of the drain, so what the drain passed after it
     * is still to be told. */
    if (c->state != ESP_ESTABLISHED || c->ack_sent == c->rcv_nxt) {
        return;
    }
    bool filled_gap = c->rx_ahead != ahead_before;   /* held data was drained */
    if (filled_gap || (d->h.flags & ESP_F_ACKNOW) || c->unacked >= p->cfg.ack_every) {
        ack_soon(c, now);
    } else {
        ack_later(c, now);
    }
}

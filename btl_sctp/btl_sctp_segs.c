/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * SCTP packets larger than a frame, cut into segments and put back
 * together (btl_sctp_segs.h says why and how).
 */
#include "btl_sctp_segs.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

void bsctp_seg_header(uint8_t h[BSCTP_SEG_HDR], uint16_t id, uint16_t total, uint16_t size,
                      uint8_t index)
{
    memset(h, 0, BSCTP_SEG_HDR);   /* ports 0 (bytes 0..3) */
    for (int i = 0; i < 4; i++) {
        h[4 + i] = (uint8_t) (BSCTP_SEG_TAG >> (24 - 8 * i));
    }
    put16(h + 8, id);
    put16(h + 10, total);
    put16(h + 12, size);
    h[14] = index;
    h[15] = (uint8_t) ((total + size - 1u) / size);
}

unsigned bsctp_seg_count(size_t len, size_t room)
{
    if (room <= BSCTP_SEG_HDR || len <= room) {
        return 0;
    }
    size_t piece = room - BSCTP_SEG_HDR;
    size_t n = (len + piece - 1) / piece;
    return n <= BSCTP_SEG_MAX && len <= BSCTP_SEG_PACKET_MAX ? (unsigned) n : 0;
}

bool bsctp_seg_parse(const uint8_t *buf, size_t len, bsctp_seg_info_t *s)
{
    if (len <= BSCTP_SEG_HDR || buf[0] != 0 || buf[1] != 0 || buf[2] != 0 || buf[3] != 0) {
        return false;
    }
    uint32_t tag = (uint32_t) buf[4] << 24 | (uint32_t) buf[5] << 16 | (uint32_t) buf[6] << 8
                   | buf[7];
    if (tag != BSCTP_SEG_TAG) {
        return false;
    }
    s->id = get16(buf + 8);
    s->total = get16(buf + 10);
    s->size = get16(buf + 12);
    s->index = buf[14];
    s->count = buf[15];
    if (s->size == 0 || s->total <= s->size || s->total > BSCTP_SEG_PACKET_MAX
        || s->count != (s->total + s->size - 1u) / s->size || s->count > BSCTP_SEG_MAX
        || s->index >= s->count) {
        return false;
    }
    size_t piece = s->index + 1u < s->count ? s->size
                                            : s->total - (size_t) s->size * (s->count - 1u);
    return len - BSCTP_SEG_HDR == piece;
}

/* The slot for (link, id), a free or stale one for a new packet, or the
 * oldest (its packet is lost). */
static bsctp_seg_slot_t *slot_for(bsctp_seg_table_t *t, uint32_t link, uint16_t id, uint64_t now)
{
    bsctp_seg_slot_t *fresh = NULL, *oldest = NULL;
    for (int i = 0; i < BSCTP_SEG_SLOTS; i++) {
        bsctp_seg_slot_t *q = &t->slot[i];
        if (q->used && now - q->at_ns >= BSCTP_SEG_EXPIRE_NS) {
            q->used = false;
            t->lost++;
        }
        if (q->used && q->link == link && q->info.id == id) {
            return q;
        }
        if (!q->used && fresh == NULL) {
            fresh = q;
        }
        if (q->used && (oldest == NULL || q->at_ns < oldest->at_ns)) {
            oldest = q;
        }
    }
    if (fresh == NULL) {
        fresh = oldest;
        t->lost++;
    }
    fresh->used = false;
    return fresh;
}

const uint8_t *bsctp_seg_add(bsctp_seg_table_t *t, uint32_t link, const bsctp_seg_info_t *s,
                             const uint8_t *piece, uint64_t now, size_t *len)
{
    bsctp_seg_slot_t *q = slot_for(t, link, s->id, now);
    if (!q->used) {
        q->used = true;
        q->link = link;
        q->info = *s;
        q->have = 0;
        q->at_ns = now;
    } else if (q->info.total != s->total || q->info.size != s->size) {
        t->bad++;   /* an id reused, or forged: start over with this one */
        q->info = *s;
        q->have = 0;
        q->at_ns = now;
    }
    size_t off = (size_t) s->index * s->size;
    size_t n = s->index + 1u < s->count ? s->size : s->total - off;
    memcpy(q->buf + off, piece, n);
    q->have |= 1u << s->index;
    if (q->have != (1u << s->count) - 1u) {
        return NULL;
    }
    q->used = false;
    *len = s->total;
    return q->buf;
}

void bsctp_seg_loss_sent(bsctp_seg_loss_t *w)
{
    if (w->packets == BSCTP_SEG_WINDOW) {
        w->packets = 0;
        w->holes = 0;
    }
    w->packets++;
}

bool bsctp_seg_loss_sack(bsctp_seg_loss_t *w, bool gaps)
{
    w->holes += gaps && !w->gap;
    w->gap = gaps;
    return w->holes >= BSCTP_SEG_LOSSY;
}

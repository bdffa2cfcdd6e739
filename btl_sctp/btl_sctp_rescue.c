/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Copies of a link's DATA packets for the stall watch's rescue
 * (btl_sctp_rescue.h). The space is a byte ring: packets follow one
 * another and wrap to its start, the oldest make room.
 */
#include "btl_sctp_rescue.h"

#include <stdlib.h>
#include <string.h>

/* One index entry per this many bytes of space: a packet of DATA is at
 * least 48 bytes (headers and a chunk of a few bytes); the index runs out
 * first only for packets that small, and then drops the oldest too. */
#define BYTES_PER_PKT 64u

static bool tsn_gt(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) > 0;
}

void bsctp_rescue_init(bsctp_rescue_t *r, size_t cap)
{
    memset(r, 0, sizeof(*r));
    r->cap = cap;
}

void bsctp_rescue_fini(bsctp_rescue_t *r)
{
    free(r->space);
    free(r->pkts);
    memset(r, 0, sizeof(*r));
}

/* The space, on the first copy: most links never lose a packet. */
static bool allocate(bsctp_rescue_t *r)
{
    r->pkts_cap = (uint32_t) (r->cap / BYTES_PER_PKT);
    r->space = malloc(r->cap);
    r->pkts = malloc((size_t) r->pkts_cap * sizeof(*r->pkts));
    if (r->space == NULL || r->pkts == NULL || r->pkts_cap == 0) {
        bsctp_rescue_fini(r);   /* cap 0: nothing kept from now on */
        return false;
    }
    return true;
}

static uint32_t vtag_of(const uint8_t *pkt)
{
    return (uint32_t) pkt[4] << 24 | (uint32_t) pkt[5] << 16 | (uint32_t) pkt[6] << 8 | pkt[7];
}

static bsctp_rescue_pkt_t *at(const bsctp_rescue_t *r, uint32_t i)
{
    return &r->pkts[(r->head + i) % r->pkts_cap];
}

static void drop_oldest(bsctp_rescue_t *r)
{
    r->head = (r->head + 1) % r->pkts_cap;
    r->count--;
}

static void keep(bsctp_rescue_t *r, const uint8_t *pkt, size_t len, uint32_t first, uint32_t last)
{
    size_t tail = 0;
    if (r->count > 0) {
        const bsctp_rescue_pkt_t *newest = at(r, r->count - 1);
        tail = (size_t) newest->off + newest->len;
    }
    size_t pos = tail + len <= r->cap ? tail : 0;
    /* Room at pos: the oldest go while they lie in it, or (wrapping) in
     * the end of the space skipped. */
    while (r->count > 0) {
        const bsctp_rescue_pkt_t *h = at(r, 0);
        bool skipped = pos == 0 && tail != 0 && h->off >= tail;
        bool overlaps = h->off < pos + len && h->off + h->len > pos;
        if (!skipped && !overlaps && r->count < r->pkts_cap) {
            break;
        }
        drop_oldest(r);
    }
    memcpy(r->space + pos, pkt, len);
    *at(r, r->count) = (bsctp_rescue_pkt_t){first, last, (uint32_t) pos, (uint32_t) len};
    r->count++;
}

bool bsctp_rescue_sent(bsctp_rescue_t *r, const uint8_t *pkt, size_t len, bool has_data,
                       uint32_t first, uint32_t last, uint64_t now)
{
    if (!has_data || r->cap == 0 || len < 12) {
        return false;
    }
    r->moved_ns = now;
    r->probed = false;
    if (r->sent_any && vtag_of(pkt) != r->vtag) {
        /* a new association: its TSNs start elsewhere, the copies are void */
        r->count = r->head = 0;
        r->sent_any = r->keeping = r->cum_known = false;
        r->gap_n = 0;
    }
    r->vtag = vtag_of(pkt);
    if (r->sent_any && !tsn_gt(first, r->hi)) {
        r->keeping = true;   /* sent before: usrsctp retransmits, the link loses */
    }
    if (!r->sent_any || tsn_gt(last, r->hi)) {
        r->hi = last;
    }
    r->sent_any = true;
    if (!r->keeping || len > r->cap || (r->space == NULL && !allocate(r))) {
        return false;
    }
    keep(r, pkt, len, first, last);
    return true;
}

void bsctp_rescue_acked(bsctp_rescue_t *r, uint32_t cum, const uint32_t *lo, const uint32_t *hi,
                        unsigned n, uint64_t now)
{
    bool newer = !r->cum_known || tsn_gt(cum, r->cum);
    if (!newer && cum != r->cum) {
        return;   /* older than one seen: its gap blocks too */
    }
    /* moved: a higher cum, or the highest TSN reported beyond it */
    uint32_t top = n > 0 ? hi[n - 1] : cum, old_top = r->gap_n > 0 ? r->gap_hi[r->gap_n - 1] : r->cum;
    if (newer || tsn_gt(top, old_top)) {
        r->moved_ns = now;
        r->probed = false;
    }
    r->cum = cum;
    r->cum_known = true;
    r->gap_n = n < BSCTP_RESCUE_GAPS ? n : BSCTP_RESCUE_GAPS;
    for (unsigned k = 0; k < r->gap_n; k++) {
        r->gap_lo[k] = lo[k];
        r->gap_hi[k] = hi[k];
    }
    while (r->count > 0 && !tsn_gt(at(r, 0)->last, r->cum)) {
        drop_oldest(r);
    }
}

bool bsctp_rescue_probe_due(bsctp_rescue_t *r, uint64_t now, uint64_t quiet_ns)
{
    if (r->probed || r->count == 0 || !r->cum_known || !tsn_gt(r->hi, r->cum)
        || now - r->moved_ns < quiet_ns) {
        return false;
    }
    r->probed = true;
    return true;
}

/* Wholly inside a gap block of the last SACK: the peer has it. */
static bool reported(const bsctp_rescue_t *r, const bsctp_rescue_pkt_t *p)
{
    for (uint32_t k = 0; k < r->gap_n; k++) {
        if (!tsn_gt(r->gap_lo[k], p->first) && !tsn_gt(p->last, r->gap_hi[k])) {
            return true;
        }
    }
    return false;
}

/* The next copy from *i beyond the cumulative ack (and, with
 * missing_only, not reported in a gap block). */
static const uint8_t *next_copy(const bsctp_rescue_t *r, uint32_t *i, size_t *len,
                                bool missing_only)
{
    for (; *i < r->count; (*i)++) {
        const bsctp_rescue_pkt_t *p = at(r, *i);
        if ((!r->cum_known || tsn_gt(p->last, r->cum)) && !(missing_only && reported(r, p))) {
            (*i)++;
            *len = p->len;
            return r->space + p->off;
        }
    }
    return NULL;
}

const uint8_t *bsctp_rescue_next_missing(const bsctp_rescue_t *r, uint32_t *i, size_t *len)
{
    return next_copy(r, i, len, true);
}

const uint8_t *bsctp_rescue_next(const bsctp_rescue_t *r, uint32_t *i, size_t *len)
{
    return next_copy(r, i, len, false);
}

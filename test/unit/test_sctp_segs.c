/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of SCTP packets larger than a frame (btl_sctp/btl_sctp_segs.c):
 * a packet cut into segments comes back byte for byte in any order, a
 * duplicate changes nothing, a lost segment loses only its packet (after
 * the expiry, or when the slots run out), and the parser refuses every
 * truncation and every inconsistent header. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../btl_sctp/btl_sctp_segs.h"
#include "unit.h"

#define MS 1000000ull
#define ROOM 1472u   /* a 1500-byte frame's UDP payload */

/* Packet `len` bytes of pattern `seed` cut into datagrams of at most ROOM
 * bytes: dg[i] (lens in dl[i]). Returns the count. */
static unsigned cut(uint8_t *pkt, size_t len, uint8_t seed, uint16_t id,
                    uint8_t dg[BSCTP_SEG_MAX][ROOM], size_t dl[BSCTP_SEG_MAX])
{
    for (size_t i = 0; i < len; i++) {
        pkt[i] = (uint8_t) (seed + i * 7);
    }
    unsigned n = bsctp_seg_count(len, ROOM);
    size_t piece = ROOM - BSCTP_SEG_HDR;
    for (unsigned i = 0; i < n; i++) {
        size_t off = i * piece, k = len - off < piece ? len - off : piece;
        bsctp_seg_header(dg[i], id, (uint16_t) len, (uint16_t) piece, (uint8_t) i);
        memcpy(dg[i] + BSCTP_SEG_HDR, pkt + off, k);
        dl[i] = BSCTP_SEG_HDR + k;
    }
    return n;
}

/* Feed datagram i: the whole packet when it completed one. */
static const uint8_t *feed(bsctp_seg_table_t *t, uint32_t link, const uint8_t *dg, size_t len,
                           uint64_t now, size_t *out)
{
    bsctp_seg_info_t s;
    if (!bsctp_seg_parse(dg, len, &s)) {
        return NULL;
    }
    return bsctp_seg_add(t, link, &s, dg + BSCTP_SEG_HDR, now, out);
}

static uint8_t dg[BSCTP_SEG_MAX][ROOM];
static size_t dl[BSCTP_SEG_MAX];
static uint8_t pkt[BSCTP_SEG_PACKET_MAX];

static void test_count(void)
{
    CHECK(bsctp_seg_count(1472, ROOM) == 0);              /* fits a datagram */
    CHECK(bsctp_seg_count(1473, ROOM) == 2);
    CHECK(bsctp_seg_count(9000, ROOM) == 7);              /* 1456 bytes a piece */
    CHECK(bsctp_seg_count(16384, ROOM) == 12);
    CHECK(bsctp_seg_count(16385, ROOM) == 0);             /* larger than any packet */
    CHECK(bsctp_seg_count(16384, 1000) == 0);             /* more than BSCTP_SEG_MAX */
    CHECK(bsctp_seg_count(3000, BSCTP_SEG_HDR) == 0);
}

static void test_whole_in_any_order(void)
{
    bsctp_seg_table_t *t = calloc(1, sizeof(*t));
    size_t out = 0;
    /* in order */
    unsigned n = cut(pkt, 9000, 1, 7, dg, dl);
    CHECK(n == 7);
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *p = feed(t, 3, dg[i], dl[i], 1 * MS, &out);
        CHECK((p != NULL) == (i == n - 1));
        if (p != NULL) {
            CHECK(out == 9000 && memcmp(p, pkt, 9000) == 0);
        }
    }
    /* reversed, with a duplicate in the middle (ignored) */
    n = cut(pkt, 5000, 2, 8, dg, dl);
    CHECK(feed(t, 3, dg[n - 1], dl[n - 1], 2 * MS, &out) == NULL);
    CHECK(feed(t, 3, dg[n - 1], dl[n - 1], 2 * MS, &out) == NULL);
    const uint8_t *p = NULL;
    for (int i = (int) n - 2; i >= 0; i--) {
        p = feed(t, 3, dg[i], dl[i], 2 * MS, &out);
    }
    CHECK(p != NULL && out == 5000 && memcmp(p, pkt, 5000) == 0);
    /* two peers with the same id interleaved: each its own */
    static uint8_t dg2[BSCTP_SEG_MAX][ROOM], pkt2[BSCTP_SEG_PACKET_MAX];
    static size_t dl2[BSCTP_SEG_MAX];
    n = cut(pkt, 3000, 3, 9, dg, dl);
    unsigned n2 = cut(pkt2, 3000, 4, 9, dg2, dl2);
    CHECK(n == 3 && n2 == 3);
    const uint8_t *a = NULL, *b = NULL;
    for (unsigned i = 0; i < n; i++) {
        a = feed(t, 1, dg[i], dl[i], 3 * MS, &out);
        if (a != NULL) {
            CHECK(out == 3000 && memcmp(a, pkt, 3000) == 0);
        }
        b = feed(t, 2, dg2[i], dl2[i], 3 * MS, &out);
        if (b != NULL) {
            CHECK(out == 3000 && memcmp(b, pkt2, 3000) == 0);
        }
    }
    CHECK(a != NULL && b != NULL && t->lost == 0 && t->bad == 0);
    free(t);
}

static void test_lost_segment_loses_its_packet_only(void)
{
    bsctp_seg_table_t *t = calloc(1, sizeof(*t));
    size_t out = 0;
    unsigned n = cut(pkt, 4000, 5, 1, dg, dl);
    for (unsigned i = 1; i < n; i++) {   /* the first never comes */
        CHECK(feed(t, 0, dg[i], dl[i], 1 * MS, &out) == NULL);
    }
    /* later packets still come whole, and after the expiry the slot is lost */
    n = cut(pkt, 4000, 6, 2, dg, dl);
    const uint8_t *p = NULL;
    for (unsigned i = 0; i < n; i++) {
        p = feed(t, 0, dg[i], dl[i], 1 * MS + BSCTP_SEG_EXPIRE_NS, &out);
    }
    CHECK(p != NULL && memcmp(p, pkt, 4000) == 0 && t->lost == 1);
    /* more unfinished packets than slots: the oldest goes */
    for (uint16_t id = 10; id < 10 + BSCTP_SEG_SLOTS + 1; id++) {
        cut(pkt, 4000, 7, id, dg, dl);
        CHECK(feed(t, 0, dg[0], dl[0], 20 * MS + id, &out) == NULL);
    }
    CHECK(t->lost == 2);
    /* an id reused with another length starts over (counted) */
    n = cut(pkt, 4000, 8, 30, dg, dl);
    CHECK(feed(t, 0, dg[0], dl[0], 21 * MS, &out) == NULL);
    n = cut(pkt, 3000, 9, 30, dg, dl);
    for (unsigned i = 0; i < n; i++) {
        p = feed(t, 0, dg[i], dl[i], 21 * MS, &out);
    }
    CHECK(p != NULL && out == 3000 && memcmp(p, pkt, 3000) == 0 && t->bad == 1);
    free(t);
}

static void test_parser_refuses_what_is_not_a_segment(void)
{
    bsctp_seg_info_t s;
    unsigned n = cut(pkt, 3000, 1, 5, dg, dl);
    CHECK(n == 3 && bsctp_seg_parse(dg[1], dl[1], &s) && s.index == 1 && s.count == 3
          && s.total == 3000 && s.id == 5);
    for (size_t len = 0; len < dl[2]; len++) {   /* every truncation of the last */
        CHECK(!bsctp_seg_parse(dg[2], len, &s));
    }
    CHECK(!bsctp_seg_parse(dg[0], dl[0] + 1, &s));   /* longer than its header says */
    uint8_t b[ROOM];
    struct {
        int at;
        uint8_t v;
    } bad[] = {
        {0, 1},   {4, 'X'}, {12, 0xff}, {13, 0xff}, /* a port, the tag, the piece size */
        {14, 3},  {15, 2},  {15, 0},                /* index >= count, wrong count */
        {10, 0x80},                                 /* longer than any packet */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memcpy(b, dg[1], dl[1]);
        b[bad[i].at] = bad[i].v;
        CHECK(!bsctp_seg_parse(b, dl[1], &s));
    }
    memcpy(b, dg[1], dl[1]);
    b[12] = 0, b[13] = 0;   /* piece size 0 */
    CHECK(!bsctp_seg_parse(b, dl[1], &s));
    uint8_t sctp[32] = {0x13, 0x88, 0x13, 0x88};   /* an SCTP packet's ports */
    CHECK(!bsctp_seg_parse(sctp, sizeof(sctp), &s));
}

/* Holes the peer reports, not retransmissions, make a link lossy; a hole
 * is one however many SACKs report it; holes count within a window of
 * packets sent in segments. */
static void test_loss_is_holes_per_window(void)
{
    bsctp_seg_loss_t w;
    memset(&w, 0, sizeof(w));
    for (int i = 0; i < 10; i++) {
        bsctp_seg_loss_sent(&w);
    }
    /* One hole, reported by five SACKs, then filled. */
    for (int i = 0; i < 5; i++) {
        CHECK(!bsctp_seg_loss_sack(&w, true));
    }
    CHECK(!bsctp_seg_loss_sack(&w, false) && w.holes == 1);
    CHECK(!bsctp_seg_loss_sack(&w, true));                    /* a second */
    CHECK(!bsctp_seg_loss_sack(&w, false));
    /* A new window forgets them: two holes per window never make it lossy. */
    for (int i = 0; i < BSCTP_SEG_WINDOW; i++) {
        bsctp_seg_loss_sent(&w);
    }
    CHECK(w.holes == 0 && w.packets == 10);
    for (int round = 0; round < 4; round++) {
        CHECK(!bsctp_seg_loss_sack(&w, true) && !bsctp_seg_loss_sack(&w, false));
        CHECK(!bsctp_seg_loss_sack(&w, true) && !bsctp_seg_loss_sack(&w, false));
        for (int i = 0; i < BSCTP_SEG_WINDOW; i++) {
            bsctp_seg_loss_sent(&w);
        }
    }
    /* The third hole of a window does. */
    CHECK(!bsctp_seg_loss_sack(&w, true) && !bsctp_seg_loss_sack(&w, false));
    CHECK(!bsctp_seg_loss_sack(&w, true) && !bsctp_seg_loss_sack(&w, false));
    CHECK(bsctp_seg_loss_sack(&w, true));
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_segs", test_count);
    RUN("bsctp_segs", test_whole_in_any_order);
    RUN("bsctp_segs", test_lost_segment_loses_its_packet_only);
    RUN("bsctp_segs", test_parser_refuses_what_is_not_a_segment);
    RUN("bsctp_segs", test_loss_is_holes_per_window);
    return UNIT_RESULT();
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of mode conn's copies of DATA packets (btl_sctp/btl_sctp_rescue.c):
 * nothing is kept before a retransmission, every packet after it is, byte
 * for byte, in order; the peer's cumulative ack drops what it covers (an
 * older ack changes nothing); a full space drops the oldest, across its
 * wrap, and never hands out a packet overwritten; a new association
 * (another verification tag) forgets the old one's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../btl_sctp/btl_sctp_rescue.h"
#include "unit.h"

#define VTAG 0x11223344u

/* A packet of len bytes: common header with vtag, tsn, then a pattern of
 * tsn and len. */
static void packet(uint8_t *p, size_t len, uint32_t vtag, uint32_t tsn)
{
    memset(p, 0, 12);
    p[4] = (uint8_t) (vtag >> 24);
    p[5] = (uint8_t) (vtag >> 16);
    p[6] = (uint8_t) (vtag >> 8);
    p[7] = (uint8_t) vtag;
    memcpy(p + 12, &tsn, sizeof(tsn));
    for (size_t i = 16; i < len; i++) {
        p[i] = (uint8_t) (tsn * 31u + i + len);
    }
}

static bool send_one(bsctp_rescue_t *r, size_t len, uint32_t vtag, uint32_t first, uint32_t last)
{
    static uint8_t p[70000];
    packet(p, len, vtag, first);
    return bsctp_rescue_sent(r, p, len, true, first, last);
}

/* The copies handed out: their first TSNs (from the pattern) in out. */
static unsigned handed_out(const bsctp_rescue_t *r, uint32_t *firsts, unsigned max)
{
    uint32_t i = 0;
    unsigned n = 0;
    size_t len;
    const uint8_t *c;
    static uint8_t want[70000];
    while ((c = bsctp_rescue_next(r, &i, &len)) != NULL && n < max) {
        uint32_t tsn;
        CHECK(len >= 16);
        memcpy(&tsn, c + 12, sizeof(tsn));
        packet(want, len, r->vtag, tsn);
        CHECK(memcmp(want, c, len) == 0);   /* whole, never overwritten */
        firsts[n++] = tsn;
    }
    return n;
}

static void test_kept_after_a_retransmission(void)
{
    bsctp_rescue_t r;
    bsctp_rescue_init(&r, 64 << 10);
    for (uint32_t t = 1; t <= 5; t++) {
        CHECK(!send_one(&r, 1000, VTAG, t, t));   /* new data, no loss yet */
    }
    CHECK(!bsctp_rescue_sent(&r, NULL, 0, false, 0, 0));   /* no DATA: never kept */
    CHECK(r.space == NULL && r.count == 0 && !r.keeping);
    CHECK(send_one(&r, 1000, VTAG, 3, 3));   /* TSN 3 again: the link lost it */
    CHECK(r.keeping && r.count == 1);
    for (uint32_t t = 6; t <= 9; t++) {
        CHECK(send_one(&r, 1000 + t, VTAG, t, t));
    }
    uint32_t f[16];
    CHECK(handed_out(&r, f, 16) == 5);
    CHECK(f[0] == 3 && f[1] == 6 && f[2] == 7 && f[3] == 8 && f[4] == 9);
    /* The peer has everything up to 6: 7, 8, 9 are left; an older ack
     * changes nothing. */
    bsctp_rescue_acked(&r, 6);
    bsctp_rescue_acked(&r, 4);
    CHECK(r.cum == 6);
    CHECK(handed_out(&r, f, 16) == 3 && f[0] == 7 && f[2] == 9);
    bsctp_rescue_acked(&r, 9);
    CHECK(handed_out(&r, f, 16) == 0 && r.count == 0);
    bsctp_rescue_fini(&r);
}

static void test_full_space_drops_the_oldest(void)
{
    bsctp_rescue_t r;
    const size_t cap = 10000;
    bsctp_rescue_init(&r, cap);
    CHECK(!send_one(&r, 900, VTAG, 1, 1));
    CHECK(send_one(&r, 900, VTAG, 1, 1));   /* keeping from here */
    /* 300 packets of 900..1899 bytes through a 10000-byte space: wraps
     * many times; what is handed out is always whole and in order. */
    uint32_t f[64];
    size_t total = 900;
    for (uint32_t t = 2; t < 302; t++) {
        size_t len = 900 + (t * 337) % 1000;
        total += len;
        CHECK(send_one(&r, len, VTAG, t, t));
        size_t bytes = 0;
        for (uint32_t k = 0; k < r.count; k++) {
            bytes += r.pkts[(r.head + k) % r.pkts_cap].len;
        }
        /* Never more than the space; never less than the space less two of
         * the largest packets (the end skipped at a wrap, and the room made). */
        CHECK(bytes <= cap && (bytes == total || bytes + 2 * 1899 >= cap));
        unsigned n = handed_out(&r, f, 64);
        CHECK(n == r.count);
        CHECK(f[n - 1] == t);
        for (unsigned k = 1; k < n; k++) {
            CHECK(f[k] == f[k - 1] + 1);
        }
    }
    /* Larger than the space: not kept, the rest stays. */
    uint32_t before = r.count;
    CHECK(!send_one(&r, cap + 1, VTAG, 302, 302));
    CHECK(r.count == before);
    bsctp_rescue_fini(&r);
}

static void test_tsns_wrap(void)
{
    bsctp_rescue_t r;
    bsctp_rescue_init(&r, 64 << 10);
    uint32_t t0 = 0xfffffffdu;
    CHECK(!send_one(&r, 500, VTAG, t0, t0));
    CHECK(send_one(&r, 500, VTAG, t0, t0));   /* again */
    for (uint32_t k = 1; k <= 5; k++) {
        CHECK(send_one(&r, 500, VTAG, t0 + k, t0 + k));   /* ... 0, 1, 2 */
    }
    bsctp_rescue_acked(&r, 0xffffffffu);
    CHECK(r.count == 3);   /* 0, 1, 2 beyond the ack */
    bsctp_rescue_acked(&r, 1);
    CHECK(r.count == 1 && r.pkts[r.head].first == 2);
    bsctp_rescue_fini(&r);
}

static void test_new_association_forgets(void)
{
    bsctp_rescue_t r;
    bsctp_rescue_init(&r, 64 << 10);
    CHECK(!send_one(&r, 500, VTAG, 10, 10));
    CHECK(send_one(&r, 500, VTAG, 10, 10));
    CHECK(send_one(&r, 500, VTAG, 11, 12));
    bsctp_rescue_acked(&r, 9);
    CHECK(r.count == 2 && r.cum_known);
    /* Another tag: TSNs start elsewhere, nothing is kept until it loses. */
    CHECK(!send_one(&r, 500, VTAG + 1, 5000, 5000));
    CHECK(r.count == 0 && !r.keeping && !r.cum_known);
    CHECK(send_one(&r, 500, VTAG + 1, 5000, 5000));
    uint32_t i = 0;
    size_t len;
    CHECK(bsctp_rescue_next(&r, &i, &len) != NULL && len == 500);
    CHECK(bsctp_rescue_next(&r, &i, &len) == NULL);
    bsctp_rescue_fini(&r);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_rescue", test_kept_after_a_retransmission);
    RUN("bsctp_rescue", test_full_space_drops_the_oldest);
    RUN("bsctp_rescue", test_tsns_wrap);
    RUN("bsctp_rescue", test_new_association_forgets);
    return UNIT_RESULT();
}

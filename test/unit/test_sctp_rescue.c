/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of mode conn's copies of DATA packets (btl_sctp/btl_sctp_rescue.c):
 * nothing is kept before a retransmission, every packet after it is, byte
 * for byte, in order; the peer's cumulative ack drops what it covers (an
 * older ack changes nothing); a full space drops the oldest, across its
 * wrap, and never hands out a packet overwritten; a new association
 * (another verification tag) forgets the old one's. The tail probe: due
 * only after the link was quiet long enough with packets unacknowledged,
 * once until the SACKs or usrsctp move again, and it sends only what the
 * peer's last SACK did not report. */
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
    return bsctp_rescue_sent(r, p, len, true, first, last, 0);
}

/* A SACK of cum with no gap block. */
static void ack(bsctp_rescue_t *r, uint32_t cum)
{
    bsctp_rescue_acked(r, cum, NULL, NULL, 0, 0);
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
    CHECK(!bsctp_rescue_sent(&r, NULL, 0, false, 0, 0, 0));   /* no DATA: never kept */
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
    ack(&r, 6);
    ack(&r, 4);
    CHECK(r.cum == 6);
    CHECK(handed_out(&r, f, 16) == 3 && f[0] == 7 && f[2] == 9);
    ack(&r, 9);
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
    ack(&r, 0xffffffffu);
    CHECK(r.count == 3);   /* 0, 1, 2 beyond the ack */
    ack(&r, 1);
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
    ack(&r, 9);
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

#define MS 1000000ull

/* Packets 1-10 sent at 0 (after 1 was lost and sent again: copies kept),
 * the peer reports 1-2 and 5-6 and 9: a quiet 5 ms later the probe sends
 * 3, 4, 7, 8 and 10, once; a SACK that moves allows another. */
static void test_tail_probe(void)
{
    bsctp_rescue_t r;
    bsctp_rescue_init(&r, 64 << 10);
    const uint64_t quiet = 5 * MS;
    uint8_t p[1000];
    packet(p, sizeof(p), VTAG, 1);
    CHECK(!bsctp_rescue_sent(&r, p, sizeof(p), true, 1, 1, 0));
    for (uint32_t t = 1; t <= 10; t++) {
        packet(p, sizeof(p), VTAG, t);
        CHECK(bsctp_rescue_sent(&r, p, sizeof(p), true, t, t, 0));
    }
    CHECK(!bsctp_rescue_probe_due(&r, 100 * MS, quiet));   /* no SACK yet: no cum known */
    uint32_t lo[2] = {5, 9}, hi[2] = {6, 9};
    bsctp_rescue_acked(&r, 2, lo, hi, 2, 1 * MS);
    CHECK(!bsctp_rescue_probe_due(&r, 5 * MS, quiet));   /* 4 ms since the SACK moved */
    CHECK(bsctp_rescue_probe_due(&r, 6 * MS, quiet));
    CHECK(!bsctp_rescue_probe_due(&r, 60 * MS, quiet));   /* once, until something moves */
    uint32_t i = 0, got[16];
    unsigned n = 0;
    size_t len;
    const uint8_t *c;
    while ((c = bsctp_rescue_next_missing(&r, &i, &len)) != NULL && n < 16) {
        CHECK(len == sizeof(p));
        memcpy(&got[n++], c + 12, sizeof(uint32_t));
    }
    CHECK(n == 5 && got[0] == 3 && got[1] == 4 && got[2] == 7 && got[3] == 8 && got[4] == 10);
    /* The same SACK again moves nothing; an older one neither. */
    bsctp_rescue_acked(&r, 2, lo, hi, 2, 61 * MS);
    bsctp_rescue_acked(&r, 1, NULL, NULL, 0, 62 * MS);
    CHECK(!bsctp_rescue_probe_due(&r, 100 * MS, quiet) && r.cum == 2 && r.gap_n == 2);
    /* The probe's answer: everything up to 8 and 10 beyond it. */
    uint32_t lo2[1] = {10}, hi2[1] = {10};
    bsctp_rescue_acked(&r, 8, lo2, hi2, 1, 101 * MS);
    CHECK(!bsctp_rescue_probe_due(&r, 105 * MS, quiet));
    CHECK(bsctp_rescue_probe_due(&r, 106 * MS, quiet));
    i = 0;
    uint32_t tsn = 0;
    CHECK((c = bsctp_rescue_next_missing(&r, &i, &len)) != NULL);
    memcpy(&tsn, c + 12, sizeof(tsn));
    CHECK(tsn == 9 && bsctp_rescue_next_missing(&r, &i, &len) == NULL);   /* 10 was reported */
    /* usrsctp sends (a retransmission of 9): moved. */
    packet(p, sizeof(p), VTAG, 9);
    CHECK(bsctp_rescue_sent(&r, p, sizeof(p), true, 9, 9, 200 * MS));
    CHECK(!bsctp_rescue_probe_due(&r, 204 * MS, quiet) && bsctp_rescue_probe_due(&r, 205 * MS, quiet));
    ack(&r, 10);
    CHECK(r.count == 0 && !bsctp_rescue_probe_due(&r, 300 * MS, quiet));   /* nothing left */
    bsctp_rescue_fini(&r);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_rescue", test_kept_after_a_retransmission);
    RUN("bsctp_rescue", test_full_space_drops_the_oldest);
    RUN("bsctp_rescue", test_tsns_wrap);
    RUN("bsctp_rescue", test_new_association_forgets);
    RUN("bsctp_rescue", test_tail_probe);
    return UNIT_RESULT();
}

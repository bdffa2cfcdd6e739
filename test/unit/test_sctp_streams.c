/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the ob1 header parser (btl_sctp/btl_sctp_ob1.c) and the
 * stream rule (btl_sctp/btl_sctp_streams.c): ob1 4.1 header bytes written
 * out by hand at their offsets (x86_64, little endian, no heterogeneous
 * padding), every truncation, bytes that are not ob1's, and the streams
 * chosen from them. Buffers are allocated to the exact length so a read
 * past it is caught by valgrind or ASan. */
#include <stdint.h>
#include <stdlib.h>

#include "../../btl_sctp/btl_sctp_ob1.h"
#include "../../btl_sctp/btl_sctp_streams.h"
#include "unit.h"

/* A match header as ob1 4.1 sends it: 14 bytes, then payload. */
static const uint8_t match_hdr[14] = {
    0x41, 0x01,             /* hdr_type MATCH (65), hdr_flags ACK */
    0x03, 0x00,             /* hdr_ctx 3 */
    0x01, 0x00, 0x00, 0x00, /* hdr_src 1 */
    0x07, 0x00, 0x00, 0x00, /* hdr_tag 7 */
    0x05, 0x01              /* hdr_seq 0x105 */
};

/* A rendezvous header: match (16 with the compiler's padding), length, request. */
static const uint8_t rndv_hdr[32] = {
    0x42, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0x7f, /* RNDV, ctx 4, src 0x7fffffff */
    0xf6, 0xff, 0xff, 0xff, 0x02, 0x00, 0xaa, 0xbb, /* tag -10, seq 2, padding */
    0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, /* hdr_msg_length 1 MiB */
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88  /* hdr_src_req */
};

/* A frag header: type, flags, 6 padding, offset, src_req, dst_req. */
static void frag_hdr(uint8_t *b, uint64_t offset, uint64_t dst_req)
{
    memset(b, 0, 32);
    b[0] = 0x46;
    memcpy(b + 8, &offset, 8);
    memset(b + 16, 0x5a, 8);
    memcpy(b + 24, &dst_req, 8);
}

static void *exact(const void *src, size_t len)
{
    void *p = malloc(len ? len : 1);
    memcpy(p, src, len);
    return p;
}

static void test_match_layout(void)
{
    bsctp_ob1_info_t h;
    uint8_t *b = exact(match_hdr, sizeof(match_hdr));
    CHECK(bsctp_ob1_parse(BSCTP_OB1_MATCH, b, 14, &h) == BSCTP_OB1_ENVELOPE);
    CHECK(h.type == 65 && h.flags == 1);
    CHECK(h.ctx == 3 && h.src == 1 && h.tag == 7 && h.seq == 0x105);
    free(b);
    CHECK(BSCTP_OB1_MATCH == 'A' && BSCTP_OB1_FIN == 73 && BSCTP_OB1_FRAG == 70);
}

static void test_rndv_layout(void)
{
    bsctp_ob1_info_t h;
    uint8_t *b = exact(rndv_hdr, sizeof(rndv_hdr));
    CHECK(bsctp_ob1_parse(BSCTP_OB1_RNDV, b, 32, &h) == BSCTP_OB1_ENVELOPE);
    CHECK(h.ctx == 4 && h.src == 0x7fffffff && h.tag == -10 && h.seq == 2);
    free(b);
}

static void test_nbo(void)
{
    uint8_t m[14];
    memcpy(m, match_hdr, 14);
    m[1] = 0x02;                      /* NBO: fields big endian */
    m[2] = 0x01; m[3] = 0x02;         /* ctx 0x0102 */
    m[8] = 0; m[9] = 0; m[10] = 0; m[11] = 9;
    bsctp_ob1_info_t h;
    CHECK(bsctp_ob1_parse(BSCTP_OB1_MATCH, m, 14, &h) == BSCTP_OB1_ENVELOPE);
    CHECK(h.ctx == 0x0102 && h.tag == 9);
}

static void test_frag_key(void)
{
    uint8_t b[32];
    bsctp_ob1_info_t h;
    frag_hdr(b, 65536, 0x1122334455667788ull);
    CHECK(bsctp_ob1_parse(BSCTP_OB1_FRAG, b, 32, &h) == BSCTP_OB1_OTHER);
    CHECK(h.key == 0x1122334455667788ull);
}

/* Every length below each type's fixed part is refused, and the exact
 * allocation means nothing past it was read. */
static void test_truncated(void)
{
    static const struct {
        uint8_t type;
        size_t need;
    } t[] = {{BSCTP_OB1_MATCH, 14}, {BSCTP_OB1_RNDV, 32}, {BSCTP_OB1_RGET, 48},
             {BSCTP_OB1_ACK, 40},   {BSCTP_OB1_FRAG, 32}, {BSCTP_OB1_PUT, 56},
             {BSCTP_OB1_FIN, 24}};
    uint8_t full[64];
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        memset(full, 0, sizeof(full));
        full[0] = t[i].type;
        for (size_t len = 0; len <= t[i].need; len++) {
            uint8_t *b = exact(full, len);
            bsctp_ob1_info_t h;
            enum bsctp_ob1_kind k = bsctp_ob1_parse(t[i].type, b, len, &h);
            CHECK((len < t[i].need) == (k == BSCTP_OB1_NONE));
            CHECK(len < t[i].need || bsctp_stream_choose(true, 16, t[i].type, b, len, NULL) != 0);
            if (len < t[i].need) {
                CHECK(bsctp_stream_choose(true, 16, t[i].type, b, len, NULL) == 0);
            }
            free(b);
        }
    }
    bsctp_ob1_info_t h;
    CHECK(bsctp_ob1_parse(BSCTP_OB1_MATCH, NULL, 0, &h) == BSCTP_OB1_NONE);
}

static void test_not_ob1(void)
{
    bsctp_ob1_info_t h;
    uint8_t m[14];
    memcpy(m, match_hdr, 14);
    /* A tag that is not ob1's (BTL-internal 0x20, OSC 0x60, 0, 255, 0x40). */
    static const uint8_t tags[] = {0x00, 0x20, 0x40, 0x4a, 0x60, 0x80, 0xff};
    for (size_t i = 0; i < sizeof(tags); i++) {
        m[0] = tags[i];
        CHECK(bsctp_ob1_parse(tags[i], m, 14, &h) == BSCTP_OB1_NONE);
        CHECK(bsctp_stream_choose(true, 16, tags[i], m, 14, NULL) == 0);
    }
    /* hdr_type not repeating the tag. */
    m[0] = BSCTP_OB1_FRAG;
    CHECK(bsctp_ob1_parse(BSCTP_OB1_MATCH, m, 14, &h) == BSCTP_OB1_NONE);
    /* An unknown flag bit. */
    m[0] = BSCTP_OB1_MATCH;
    m[1] = 0x40;
    CHECK(bsctp_ob1_parse(BSCTP_OB1_MATCH, m, 14, &h) == BSCTP_OB1_NONE);
    m[1] = 0x3f;
    CHECK(bsctp_ob1_parse(BSCTP_OB1_MATCH, m, 14, &h) == BSCTP_OB1_ENVELOPE);
    /* Random bytes under an ob1 tag: only accepted when they look like it. */
    uint64_t z = 42;
    int accepted = 0;
    for (int i = 0; i < 10000; i++) {
        uint8_t r[14];
        for (int j = 0; j < 14; j++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            r[j] = (uint8_t) (z >> 56);
        }
        if (bsctp_ob1_parse(BSCTP_OB1_MATCH, r, 14, &h) != BSCTP_OB1_NONE) {
            accepted++;
            CHECK(r[0] == BSCTP_OB1_MATCH && (r[1] & 0xc0) == 0);
        }
    }
    CHECK(accepted < 100);
}

static void test_ranges(void)
{
    uint16_t ef, ec, of, oc;
    bsctp_stream_ranges(16, &ef, &ec, &of, &oc);
    CHECK(ef == 1 && ec == 7 && of == 8 && oc == 8);
    bsctp_stream_ranges(3, &ef, &ec, &of, &oc);
    CHECK(ef == 1 && ec == 1 && of == 2 && oc == 1);
    bsctp_stream_ranges(2, &ef, &ec, &of, &oc);
    CHECK(ef == 1 && ec == 1 && of == 1 && oc == 1);
}

static void test_choose(void)
{
    uint8_t m[14];
    memcpy(m, match_hdr, 14);
    /* Off, or streams not known / only one: stream 0. */
    CHECK(bsctp_stream_choose(false, 16, BSCTP_OB1_MATCH, m, 14, NULL) == 0);
    CHECK(bsctp_stream_choose(true, 0, BSCTP_OB1_MATCH, m, 14, NULL) == 0);
    CHECK(bsctp_stream_choose(true, 1, BSCTP_OB1_MATCH, m, 14, NULL) == 0);
    CHECK(bsctp_stream_choose(true, 2, BSCTP_OB1_MATCH, m, 14, NULL) == 1);
    /* Envelopes on 1..7 of 16, stable, depending on (ctx, tag) only. */
    uint16_t s0 = bsctp_stream_choose(true, 16, BSCTP_OB1_MATCH, m, 14, NULL);
    CHECK(s0 >= 1 && s0 <= 7);
    m[12] = 0x99; m[4] = 0x05; m[1] = 0;  /* another seq, source, flags */
    CHECK(bsctp_stream_choose(true, 16, BSCTP_OB1_MATCH, m, 14, NULL) == s0);
    uint8_t r[32];
    memcpy(r, rndv_hdr, 32);
    memcpy(r + 2, m + 2, 2);
    memcpy(r + 8, m + 8, 4);              /* same ctx and tag as a rendezvous */
    CHECK(bsctp_stream_choose(true, 16, BSCTP_OB1_RNDV, r, 32, NULL) == s0);
    int seen[16] = {0};
    for (int32_t tag = 0; tag < 200; tag++) {
        memcpy(m + 8, &tag, 4);
        uint16_t s = bsctp_stream_choose(true, 16, BSCTP_OB1_MATCH, m, 14, NULL);
        CHECK(s >= 1 && s <= 7);
        seen[s]++;
    }
    for (int s = 1; s <= 7; s++) {
        CHECK(seen[s] > 10);   /* 200 tags spread over all seven */
    }
    /* A message's fragments on one stream of 8..15, whatever the offset. */
    uint8_t f[32];
    frag_hdr(f, 0, 0xdeadbeef00ull);
    uint16_t fs = bsctp_stream_choose(true, 16, BSCTP_OB1_FRAG, f, 32, NULL);
    CHECK(fs >= 8 && fs <= 15);
    for (uint64_t off = 65536; off < 65536 * 20; off += 65536) {
        frag_hdr(f, off, 0xdeadbeef00ull);
        CHECK(bsctp_stream_choose(true, 16, BSCTP_OB1_FRAG, f, 32, NULL) == fs);
    }
    int fseen[16] = {0};
    for (uint64_t req = 0; req < 400; req++) {
        frag_hdr(f, 0, 0x7f0000001000ull + req * 512);
        fseen[bsctp_stream_choose(true, 16, BSCTP_OB1_FRAG, f, 32, NULL)]++;
    }
    for (int s = 0; s < 8; s++) {
        CHECK(fseen[s] == 0);
    }
    for (int s = 8; s < 16; s++) {
        CHECK(fseen[s] > 10);
    }
    enum bsctp_ob1_kind k;
    CHECK(bsctp_stream_choose(true, 16, 0x20, f, 32, &k) == 0 && k == BSCTP_OB1_NONE);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_streams", test_match_layout);
    RUN("bsctp_streams", test_rndv_layout);
    RUN("bsctp_streams", test_nbo);
    RUN("bsctp_streams", test_frag_key);
    RUN("bsctp_streams", test_truncated);
    RUN("bsctp_streams", test_not_ob1);
    RUN("bsctp_streams", test_ranges);
    RUN("bsctp_streams", test_choose);
    return UNIT_RESULT();
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of CRC-32C (common/ebtl_crc32c.c). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebtl_crc32c.h"
#include "unit.h"

/* Test hooks defined in ebtl_crc32c.c, deliberately not in its header. */
extern uint32_t ebtl_crc32c_table(uint32_t crc, const void *buf, size_t len);
extern uint32_t ebtl_crc32c_hw(uint32_t crc, const void *buf, size_t len);
extern uint32_t ebtl_crc32c_sse42(uint32_t crc, const void *buf, size_t len);
extern uint32_t ebtl_crc32c_copy_table(uint32_t crc, void *dst, const void *src, size_t len);
extern uint32_t ebtl_crc32c_copy_sse42(uint32_t crc, void *dst, const void *src, size_t len);

/* Block sizes of ebtl_crc32c.c: the crc32 instruction's interleaved blocks
 * (LONG_BLOCK, SHORT_BLOCK), clmul's loop and its least length. */
enum { LONG_BLOCK = 8192, SHORT_BLOCK = 256, CLMUL_STRIDE = 256, CLMUL_MIN = 128 };

/* Deterministic xorshift64 so that a failure reproduces. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static unsigned char *random_buf(size_t len)
{
    unsigned char *b = malloc(len);
    for (size_t i = 0; i < len; i++) {
        b[i] = (unsigned char) rng();
    }
    return b;
}

/* Bit-at-a-time reference, independent of both implementations' tables. */
static uint32_t crc_bitwise(const unsigned char *p, size_t len)
{
    uint32_t crc = ~0u;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
        }
    }
    return ~crc;
}

static void known_vectors(void)
{
    unsigned char zeros[32], ones[32], inc[32];
    memset(zeros, 0, sizeof(zeros));
    memset(ones, 0xff, sizeof(ones));
    for (int i = 0; i < 32; i++) {
        inc[i] = (unsigned char) i;
    }
    uint32_t (*const fns[])(uint32_t, const void *, size_t) = {
        ebtl_crc32c, ebtl_crc32c_table, ebtl_crc32c_hw, ebtl_crc32c_sse42};
    for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
        CHECK(fns[f](0, "123456789", 9) == 0xE3069283u);
        CHECK(fns[f](0, zeros, 32) == 0x8A9136AAu); /* RFC 3720 B.4 */
        CHECK(fns[f](0, ones, 32) == 0x62A8AB43u);
        CHECK(fns[f](0, inc, 32) == 0x46DD794Eu);
        CHECK(fns[f](0, NULL, 0) == 0);
        CHECK(fns[f](0x12345678u, NULL, 0) == 0x12345678u);
    }
    CHECK(crc_bitwise((const unsigned char *) "123456789", 9) == 0xE3069283u);
}

/* Every length 0..2048 at every offset 0..7: hw (the chosen one and the
 * crc32 instruction alone) == table, and for the shorter ones all == the
 * bit-at-a-time reference. */
static void hw_matches_table(void)
{
    unsigned char *buf = random_buf(2048 + 8);
    int bad_hw = 0, bad_ref = 0;
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len <= 2048; len++) {
            uint32_t t = ebtl_crc32c_table(0, buf + off, len);
            if (ebtl_crc32c_hw(0, buf + off, len) != t || ebtl_crc32c(0, buf + off, len) != t
                || ebtl_crc32c_sse42(0, buf + off, len) != t) {
                if (bad_hw++ == 0) {
                    printf("    hw != table at offset %zu length %zu\n", off, len);
                }
            }
            if (len <= 300 && crc_bitwise(buf + off, len) != t) {
                if (bad_ref++ == 0) {
                    printf("    table != reference at offset %zu length %zu\n", off, len);
                }
            }
        }
    }
    CHECK(bad_hw == 0);
    CHECK(bad_ref == 0);
    free(buf);
}

/* Lengths where the interleaved or the clmul path changes block size or
 * hands over to the serial tail. */
static void block_boundaries(void)
{
    static const size_t bases[] = {
        LONG_BLOCK,      SHORT_BLOCK,     3 * LONG_BLOCK,  3 * SHORT_BLOCK,
        6 * LONG_BLOCK,  6 * SHORT_BLOCK, 9 * LONG_BLOCK,  30 * SHORT_BLOCK,
        3 * LONG_BLOCK + 3 * SHORT_BLOCK, 65536, 65507, 200000,
        CLMUL_MIN,       CLMUL_MIN + CLMUL_STRIDE, 7 * CLMUL_STRIDE, 65464};
    unsigned char *buf = random_buf(200000 + 16);
    int bad = 0, checked = 0;
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        for (size_t len = bases[i] - 1; len <= bases[i] + 1 && len <= 200000; len++) {
            for (size_t off = 0; off < 8; off += 3) {
                uint32_t t = ebtl_crc32c_table(0, buf + off, len);
                checked++;
                if (ebtl_crc32c_hw(0, buf + off, len) != t || ebtl_crc32c(0, buf + off, len) != t
                    || ebtl_crc32c_sse42(0, buf + off, len) != t) {
                    if (bad++ == 0) {
                        printf("    hw != table at offset %zu length %zu\n", off, len);
                    }
                }
            }
        }
    }
    /* one long buffer against the independent reference too */
    CHECK(ebtl_crc32c(0, buf, 65507) == crc_bitwise(buf, 65507));
    CHECK(bad == 0);
    CHECK(checked > 0);
    free(buf);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return (x > y) - (x < y);
}

/* Splitting a buffer anywhere and chaining gives the CRC of the whole. */
static void chaining(void)
{
    enum { LEN = 100000, TRIALS = 200, MAX_CUTS = 16 };
    unsigned char *buf = random_buf(LEN);
    uint32_t whole = ebtl_crc32c(0, buf, LEN);
    CHECK(whole == ebtl_crc32c_table(0, buf, LEN));
    int bad = 0;
    for (int t = 0; t < TRIALS; t++) {
        size_t cuts[MAX_CUTS + 2];
        size_t n = 1 + rng() % MAX_CUTS;
        cuts[0] = 0;
        for (size_t i = 1; i <= n; i++) {
            cuts[i] = rng() % (LEN + 1);
        }
        cuts[n + 1] = LEN;
        qsort(cuts, n + 2, sizeof(cuts[0]), cmp_size);
        uint32_t crc = 0, crc_t = 0;
        for (size_t i = 0; i <= n; i++) {
            crc = ebtl_crc32c(crc, buf + cuts[i], cuts[i + 1] - cuts[i]);
            crc_t = ebtl_crc32c_table(crc_t, buf + cuts[i], cuts[i + 1] - cuts[i]);
        }
        bad += crc != whole || crc_t != whole;
    }
    CHECK(bad == 0);
    free(buf);
}

/* ebtl_crc32c_iov over 1-4 pieces that cover a buffer equals the whole;
 * some pieces are empty, and an empty one may have a NULL base. */
static void iov(void)
{
    enum { LEN = 70000 };
    unsigned char *buf = random_buf(LEN);
    uint32_t whole = ebtl_crc32c(0, buf, LEN);
    int bad = 0;
    for (int t = 0; t < 500; t++) {
        struct iovec v[4];
        int n = 1 + (int) (rng() % 4);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            size_t piece = i == n - 1 ? LEN - at : rng() % (LEN - at + 1);
            if (i < n - 1 && rng() % 4 == 0) {
                piece = 0;
            }
            v[i].iov_base = piece == 0 && rng() % 2 ? NULL : buf + at;
            v[i].iov_len = piece;
            at += piece;
        }
        bad += ebtl_crc32c_iov(v, n) != whole;
    }
    CHECK(bad == 0);
    CHECK(ebtl_crc32c_iov(NULL, 0) == 0);
    struct iovec two[3] = {{(void *) "1234", 4}, {NULL, 0}, {(void *) "56789", 5}};
    CHECK(ebtl_crc32c_iov(two, 3) == 0xE3069283u);
    free(buf);
}

typedef uint32_t copy_fn(uint32_t crc, void *dst, const void *src, size_t len);

/* One copy+CRC call: the CRC equals the plain one from the same start, the
 * bytes arrive, and nothing around the destination is touched. */
static int copy_case(copy_fn *fn, const unsigned char *src, unsigned char *dst_area,
                     size_t dst_off, size_t len, uint32_t start)
{
    enum { GUARD = 64 };
    memset(dst_area, 0x5a, dst_off + len + 2 * GUARD);
    unsigned char *dst = dst_area + GUARD + dst_off;
    uint32_t want = ebtl_crc32c_table(start, src, len);
    uint32_t got = fn(start, dst, src, len);
    int bad = got != want || (len > 0 && memcmp(dst, src, len) != 0);
    for (size_t i = 0; i < GUARD + dst_off; i++) {
        bad |= dst_area[i] != 0x5a;
    }
    for (size_t i = 0; i < GUARD; i++) {
        bad |= dst[len + i] != 0x5a;
    }
    return bad;
}

/* ebtl_crc32c_copy and each implementation: every length 0..300 at every
 * source and destination alignment mod 8, then lengths around the block
 * sizes and a datagram's, continuing from a CRC other than 0 too. */
static void copy_matches_crc(void)
{
    static copy_fn *const fns[] = {ebtl_crc32c_copy, ebtl_crc32c_copy_table,
                                   ebtl_crc32c_copy_sse42};
    static const char *const names[] = {"copy", "copy_table", "copy_sse42"};
    enum { MAX = 70000 };
    unsigned char *src = random_buf(MAX + 16);
    unsigned char *dst = malloc(MAX + 256);
    int checked = 0;
    for (size_t f = 0; f < 3; f++) {
        int bad = 0;
        for (size_t len = 0; len <= 300; len++) {
            for (size_t so = 0; so < 8; so++) {
                for (size_t d = 0; d < 8; d++) {
                    int b = copy_case(fns[f], src + so, dst, d, len, (uint32_t) (len * so));
                    if (b && bad++ == 0) {
                        printf("    %s wrong: length %zu, source +%zu, destination +%zu\n",
                               names[f], len, so, d);
                    }
                    checked++;
                }
            }
        }
        static const size_t lens[] = {
            CLMUL_MIN - 1,   CLMUL_MIN,        CLMUL_MIN + 1,    CLMUL_MIN + CLMUL_STRIDE + 7,
            3 * SHORT_BLOCK, 3 * SHORT_BLOCK + 1, 4095, 4096,    4097, 3 * LONG_BLOCK + 5,
            65000,           65464,            65507,            MAX};
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            for (size_t so = 0; so < 8; so += 3) {
                int b = copy_case(fns[f], src + so, dst, 7 - so, lens[i], 0xdeadbeefu);
                if (b && bad++ == 0) {
                    printf("    %s wrong: length %zu, source +%zu\n", names[f], lens[i], so);
                }
                checked++;
            }
        }
        CHECK(bad == 0);
    }
    /* the public one chains like ebtl_crc32c */
    uint32_t a = ebtl_crc32c_copy(0, dst, src, 1000);
    CHECK(ebtl_crc32c_copy(a, dst + 1000, src + 1000, 5000) == ebtl_crc32c(0, src, 6000));
    CHECK(ebtl_crc32c_copy(0, NULL, NULL, 0) == 0);
    CHECK(ebtl_crc32c_copy(0, dst, "123456789", 9) == 0xE3069283u);
    CHECK(checked > 3 * 301 * 64);
    free(src);
    free(dst);
}

static void impl_name(void)
{
    const char *impl = ebtl_crc32c_impl();
#if defined(__x86_64__) || defined(__i386__)
    /* every x86 we run on has SSE4.2; clmul where VPCLMULQDQ and AVX-512 are */
    __builtin_cpu_init();
    bool clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx512f")
                 && __builtin_cpu_supports("vpclmulqdq");
    CHECK(strcmp(impl, clmul ? "vpclmulqdq" : "sse4.2") == 0);
#else
    CHECK(strcmp(impl, "table") == 0);
#endif
    printf("    implementation: %s\n", impl);
}

#if defined(__x86_64__)
#include <cpuid.h>

/* XGETBV with ECX 1: the XSAVE components not in their initial state. */
static uint64_t xinuse(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return (uint64_t) hi << 32 | lo;
}
#endif

/* The 512-bit code leaves the upper halves of the vector registers clean
 * (vzeroupper): dirty, every legacy SSE instruction after it (the caller's,
 * ours compiled for plain x86-64, Open MPI's) waits on a register's old
 * value, which made a datagram's header copy wait for its payload CRC. */
static void upper_state_clean(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (strcmp(ebtl_crc32c_impl(), "vpclmulqdq") != 0 || !__get_cpuid(1, &a, &b, &c, &d)
        || !(c & bit_OSXSAVE) || !__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & 4)) {
        printf("    skipped: no 512-bit code here, or no XGETBV 1\n");
        return;
    }
    /* YMM_Hi128 (bit 2) and ZMM_Hi256 (bit 6): what vzeroupper clears */
    const uint64_t upper = 1u << 2 | 1u << 6;
    enum { LEN = 4096 };
    unsigned char *src = random_buf(LEN), *dst = malloc(LEN);
    uint32_t crc = ebtl_crc32c(0, src, LEN);
    CHECK((xinuse() & upper) == 0);
    CHECK(ebtl_crc32c_copy(0, dst, src, LEN) == crc);
    CHECK((xinuse() & upper) == 0);
    free(src);
    free(dst);
#endif
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("crc32c", known_vectors);
    RUN("crc32c", hw_matches_table);
    RUN("crc32c", block_boundaries);
    RUN("crc32c", chaining);
    RUN("crc32c", iov);
    RUN("crc32c", copy_matches_crc);
    RUN("crc32c", impl_name);
    RUN("crc32c", upper_state_clean);
    return UNIT_RESULT();
}

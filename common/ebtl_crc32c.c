/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
 *
 * Two implementations of the same "raw" CRC (no pre/post inversion; the
 * public functions add that):
 *   - hw: the SSE4.2 crc32 instruction.  It has a latency of 3 cycles but a
 *     throughput of 1 per cycle, so long buffers are cut into three equal
 *     blocks whose CRCs run interleaved, and are then combined with tables
 *     that "shift" a CRC over a block of zeros (Mark Adler's scheme, with a
 *     long and a short block size).
 *   - clmul: where the CPU has VPCLMULQDQ and AVX-512, buffers of 128
 *     bytes or more are folded 256 bytes at a time by carry-less
 *     multiplication (sixteen 16-byte lanes, each multiplied forward by
 *     x^2048 mod P), then 64 at a time into one register, its lanes folded
 *     into one, and the crc32 instruction finishes the last 0-63 bytes.
 *   - table: slicing-by-8, for CPUs without SSE4.2 and non-x86.
 * The tables are built once (pthread_once); the choice between the two is
 * then published in a function pointer, so the hot path is a single
 * indirect call.
 *
 * ebtl_crc32c_copy is the same CRC fused into a copy: every byte is loaded
 * once, stored, and folded into the CRC from the register, so checking
 * bytes that are being copied anyway costs about nothing more than the copy.
 */
#include "ebtl_crc32c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define CRC32C_X86 1
#include <immintrin.h>
#endif

#define POLY 0x82F63B78u
#define POLY_NORMAL 0x1EDC6F41u /* the same polynomial, highest degree first */

/* Interleaved block sizes (bytes, multiples of 8).  A 64 KiB datagram
 * takes two long rounds, then short rounds; fewer, longer rounds mean
 * fewer combine steps, shorter ones leave less for the serial tail.
 * Long blocks of 2-16 KiB measured the same on AMD EPYC (~25 GB/s). */
#define LONG_BLOCK 8192
#define SHORT_BLOCK 256

/* Test hooks (not in the header): each implementation, with the usual
 * pre/post inversion.  ebtl_crc32c_hw falls back to the table without
 * SSE4.2. */
uint32_t ebtl_crc32c_table(uint32_t crc, const void *buf, size_t len);
uint32_t ebtl_crc32c_hw(uint32_t crc, const void *buf, size_t len);
uint32_t ebtl_crc32c_sse42(uint32_t crc, const void *buf, size_t len);
uint32_t ebtl_crc32c_copy_table(uint32_t crc, void *dst, const void *src, size_t len);
uint32_t ebtl_crc32c_copy_sse42(uint32_t crc, void *dst, const void *src, size_t len);

typedef uint32_t crc_fn(uint32_t crc, const unsigned char *p, size_t len);
typedef uint32_t copy_fn(uint32_t crc, unsigned char *d, const unsigned char *p, size_t len);

static uint32_t slice8[8][256]; /* slice8[k][b]: b followed by k zero bytes */
#ifdef CRC32C_X86
static uint32_t shift_long[4][256];  /* advance a CRC over LONG_BLOCK zeros */
static uint32_t shift_short[4][256]; /* ... over SHORT_BLOCK zeros */
#endif

/* ---- table (slicing-by-8) ------------------------------------------------ */

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len)
{
    while (len >= 8) {
        /* Byte-wise assembly keeps this endian-neutral; it is one load on
         * little-endian targets. */
        uint32_t lo = crc ^ ((uint32_t) p[0] | (uint32_t) p[1] << 8 |
                             (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24);
        crc = slice8[7][lo & 0xff] ^ slice8[6][(lo >> 8) & 0xff] ^
              slice8[5][(lo >> 16) & 0xff] ^ slice8[4][lo >> 24] ^
              slice8[3][p[4]] ^ slice8[2][p[5]] ^ slice8[1][p[6]] ^ slice8[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--) {
        crc = slice8[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

static uint32_t copy_table(uint32_t crc, unsigned char *d, const unsigned char *p, size_t len)
{
    if (len > 0) {
        memcpy(d, p, len);
    }
    return crc_table(crc, p, len);
}

/* ---- SSE4.2 -------------------------------------------------------------- */

#ifdef CRC32C_X86
#define HW __attribute__((target("sse4.2")))

/* Advance a raw CRC over the run of zero bytes tab was built for. */
static inline uint32_t shift(uint32_t tab[4][256], uint32_t crc)
{
    return tab[0][crc & 0xff] ^ tab[1][(crc >> 8) & 0xff] ^
           tab[2][(crc >> 16) & 0xff] ^ tab[3][crc >> 24];
}

/* CRC over 8 bytes; memcpy because p need not be aligned. */
HW static inline uint32_t hw8(uint32_t crc, const unsigned char *p)
{
#ifdef __x86_64__
    uint64_t w;
    memcpy(&w, p, 8);
    return (uint32_t) _mm_crc32_u64(crc, w);
#else
    uint32_t w0, w1;
    memcpy(&w0, p, 4);
    memcpy(&w1, p + 4, 4);
    return _mm_crc32_u32(_mm_crc32_u32(crc, w0), w1);
#endif
}

/* CRC over 3 * block bytes as three interleaved streams.  Streams 1 and 2
 * start from 0; by linearity, crc(A B) = shift_|B|(crc(A)) ^ crc0(B). */
HW static inline __attribute__((always_inline)) uint32_t
hw_3way(uint32_t crc, const unsigned char *p, size_t block, uint32_t tab[4][256])
{
    uint32_t c0 = crc, c1 = 0, c2 = 0;
    for (size_t i = 0; i < block; i += 8) {
        c0 = hw8(c0, p + i);
        c1 = hw8(c1, p + block + i);
        c2 = hw8(c2, p + 2 * block + i);
    }
    return shift(tab, shift(tab, c0) ^ c1) ^ c2;
}

HW static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
    for (; len >= 3 * LONG_BLOCK; p += 3 * LONG_BLOCK, len -= 3 * LONG_BLOCK) {
        crc = hw_3way(crc, p, LONG_BLOCK, shift_long);
    }
    for (; len >= 3 * SHORT_BLOCK; p += 3 * SHORT_BLOCK, len -= 3 * SHORT_BLOCK) {
        crc = hw_3way(crc, p, SHORT_BLOCK, shift_short);
    }
    for (; len >= 8; p += 8, len -= 8) {
        crc = hw8(crc, p);
    }
    if (len & 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        crc = _mm_crc32_u32(crc, w);
        p += 4;
    }
    if (len & 2) {
        uint16_t w;
        memcpy(&w, p, 2);
        crc = _mm_crc32_u16(crc, w);
        p += 2;
    }
    if (len & 1) {
        crc = _mm_crc32_u8(crc, *p);
    }
    return crc;
}

/* Without wide registers the CRC cannot ride on the copy's stores (eight-
 * byte stores to memory not in cache are much slower than memcpy's), so
 * copy a piece that fits the L1 cache and CRC it from there. */
#define COPY_PIECE 4096
HW static uint32_t copy_hw(uint32_t crc, unsigned char *d, const unsigned char *p, size_t len)
{
    while (len > 0) {
        size_t n = len < COPY_PIECE ? len : COPY_PIECE;
        memcpy(d, p, n);
        crc = crc_hw(crc, p, n);
        d += n;
        p += n;
        len -= n;
    }
    return crc;
}

/* ---- carry-less multiplication (VPCLMULQDQ) ------------------------------ */

#define HWC __attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
#define CLMUL_STRIDE 256 /* bytes per loop: four 64-byte registers */
#define CLMUL_MIN 128    /* shorter buffers: crc_hw */

/* Fold constants for moving a 16-byte lane CLMUL_STRIDE, 64 and 16 bytes
 * on (fold_consts). */
static uint64_t k_stride[2], k_64[2], k_16[2];

/* A 16-byte lane X of the stream, moved D bytes on: in the reflected
 * order its low half H weighs x^64 more than its high half G, so
 * X * x^(8D) = H * x^(8D+64) + G * x^(8D). clmul multiplies by a 33-bit
 * constant K and by x^32, hence K = x^(8D+32) resp. x^(8D-32) mod P. */
HWC static inline __m512i fold512(__m512i x, __m512i k)
{
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00),
                            _mm512_clmulepi64_epi128(x, k, 0x11));
}

HWC static inline __m128i fold128(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

HWC static inline __m512i consts512(const uint64_t k[2])
{
    return _mm512_set_epi64((long long) k[1], (long long) k[0], (long long) k[1],
                            (long long) k[0], (long long) k[1], (long long) k[0],
                            (long long) k[1], (long long) k[0]);
}

HWC static inline __m512i load512(const unsigned char *p)
{
    return _mm512_loadu_si512((const void *) p);
}

HWC static inline void store512(unsigned char *d, __m512i x)
{
    _mm512_storeu_si512((void *) d, x);
}

/* Fold the four registers into the last: one register standing for
 * everything read so far. */
HWC static inline __m512i clmul_fold4(__m512i a0, __m512i a1, __m512i a2, __m512i a3)
{
    const __m512i k4 = consts512(k_64);
    __m512i a = _mm512_xor_si512(fold512(a0, k4), a1);
    a = _mm512_xor_si512(fold512(a, k4), a2);
    return _mm512_xor_si512(fold512(a, k4), a3);
}

/* Fold a register's four lanes into the last; its CRC from 0. */
HWC static inline uint32_t clmul_reduce(__m512i a)
{
    const __m128i k1 = _mm_set_epi64x((long long) k_16[1], (long long) k_16[0]);
    __m128i y = _mm512_extracti32x4_epi32(a, 0);
    y = _mm_xor_si128(fold128(y, k1), _mm512_extracti32x4_epi32(a, 1));
    y = _mm_xor_si128(fold128(y, k1), _mm512_extracti32x4_epi32(a, 2));
    y = _mm_xor_si128(fold128(y, k1), _mm512_extracti32x4_epi32(a, 3));
    uint64_t w[2];
    _mm_storeu_si128((__m128i *) w, y);
    return (uint32_t) _mm_crc32_u64(_mm_crc32_u64(0, w[0]), w[1]);
}

/* Leave the vector registers' upper halves clean before returning to code
 * compiled for plain x86-64. Dirty, every legacy SSE instruction after (ours,
 * the caller's, Open MPI's) waits on its register's old 512-bit value: a
 * datagram's header copy then waited for its payload's CRC, and the sender
 * lost the overlap between datagrams (measured: 600 TSC ticks per 1.4 KB
 * datagram's seal and queueing against 170 clean). GCC 12 inserts no
 * vzeroupper before a tail call such as the ones below. */
HWC static inline void clean_upper(void)
{
    _mm256_zeroupper();
}

HWC static uint32_t crc_clmul(uint32_t crc, const unsigned char *p, size_t len)
{
    if (len < CLMUL_MIN) {
        return crc_hw(crc, p, len);
    }
    /* crc(c, data) = crc(0, data with c xored into its first 4 bytes) */
    __m512i a = _mm512_xor_si512(load512(p), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int) crc)));
    if (len >= CLMUL_STRIDE) {
        __m512i a1 = load512(p + 64), a2 = load512(p + 128), a3 = load512(p + 192);
        p += CLMUL_STRIDE;
        len -= CLMUL_STRIDE;
        const __m512i ks = consts512(k_stride);
        for (; len >= CLMUL_STRIDE; p += CLMUL_STRIDE, len -= CLMUL_STRIDE) {
            a = _mm512_xor_si512(fold512(a, ks), load512(p));
            a1 = _mm512_xor_si512(fold512(a1, ks), load512(p + 64));
            a2 = _mm512_xor_si512(fold512(a2, ks), load512(p + 128));
            a3 = _mm512_xor_si512(fold512(a3, ks), load512(p + 192));
        }
        a = clmul_fold4(a, a1, a2, a3);
    } else {
        p += 64;
        len -= 64;
    }
    /* the rest 64 bytes at a time: the crc32 instruction's serial chain
     * (3 cycles per 8 bytes) is left under 64 bytes */
    const __m512i k4 = consts512(k_64);
    for (; len >= 64; p += 64, len -= 64) {
        a = _mm512_xor_si512(fold512(a, k4), load512(p));
    }
    uint32_t r = clmul_reduce(a);
    clean_upper();
    return crc_hw(r, p, len);
}

/* crc_clmul, copying as it goes: the loaded registers are stored at d
 * before they are folded. */
HWC static uint32_t copy_clmul(uint32_t crc, unsigned char *d, const unsigned char *p, size_t len)
{
    if (len < CLMUL_MIN) {
        return copy_hw(crc, d, p, len);
    }
    __m512i x0 = load512(p);
    store512(d, x0);
    __m512i a = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int) crc)));
    if (len >= CLMUL_STRIDE) {
        __m512i x1 = load512(p + 64), x2 = load512(p + 128), x3 = load512(p + 192);
        store512(d + 64, x1);
        store512(d + 128, x2);
        store512(d + 192, x3);
        __m512i a1 = x1, a2 = x2, a3 = x3;
        p += CLMUL_STRIDE;
        d += CLMUL_STRIDE;
        len -= CLMUL_STRIDE;
        const __m512i ks = consts512(k_stride);
        for (; len >= CLMUL_STRIDE; p += CLMUL_STRIDE, d += CLMUL_STRIDE, len -= CLMUL_STRIDE) {
            x0 = load512(p);
            x1 = load512(p + 64);
            x2 = load512(p + 128);
            x3 = load512(p + 192);
            store512(d, x0);
            store512(d + 64, x1);
            store512(d + 128, x2);
            store512(d + 192, x3);
            a = _mm512_xor_si512(fold512(a, ks), x0);
            a1 = _mm512_xor_si512(fold512(a1, ks), x1);
            a2 = _mm512_xor_si512(fold512(a2, ks), x2);
            a3 = _mm512_xor_si512(fold512(a3, ks), x3);
        }
        a = clmul_fold4(a, a1, a2, a3);
    } else {
        p += 64;
        d += 64;
        len -= 64;
    }
    const __m512i k4 = consts512(k_64);
    for (; len >= 64; p += 64, d += 64, len -= 64) {
        x0 = load512(p);
        store512(d, x0);
        a = _mm512_xor_si512(fold512(a, k4), x0);
    }
    uint32_t r = clmul_reduce(a);
    clean_upper();
    return copy_hw(r, d, p, len);
}

/* x^n mod P, highest degree first. */
static uint32_t xpow_mod(unsigned n)
{
    uint64_t r = 1;
    for (unsigned i = 0; i < n; i++) {
        r <<= 1;
        if (r & ((uint64_t) 1 << 32)) {
            r ^= (uint64_t) 1 << 32 | POLY_NORMAL;
        }
    }
    return (uint32_t) r;
}

/* The 33-bit reflected form clmul takes: x^m at bit 32 - m. */
static uint64_t reflect_shift(uint32_t v)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) {
        r |= ((v >> i) & 1u) << (31 - i);
    }
    return (uint64_t) r << 1;
}

static void fold_consts(uint64_t k[2], unsigned bytes)
{
    k[0] = reflect_shift(xpow_mod(8 * bytes + 32));
    k[1] = reflect_shift(xpow_mod(8 * bytes - 32));
}
#endif /* CRC32C_X86 */

/* ---- one-time set-up and dispatch ---------------------------------------- */

static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static uint32_t crc_resolve(uint32_t crc, const unsigned char *p, size_t len);
/* Acquire/release: whoever sees the final pointer also sees the tables. */
static _Atomic(crc_fn *) crc_impl = crc_resolve;
static uint32_t copy_resolve(uint32_t crc, unsigned char *d, const unsigned char *p, size_t len);
static _Atomic(copy_fn *) copy_impl = copy_resolve;

#ifdef CRC32C_X86
/* tab[k][b] = the raw CRC of (b << 8k) advanced over len zero bytes.  The
 * shift is linear, so it is built from the images of the 32 single bits. */
static void build_shift(uint32_t tab[4][256], size_t len)
{
    static const unsigned char zeros[256];
    uint32_t bit[32];
    for (int j = 0; j < 32; j++) {
        uint32_t c = (uint32_t) 1 << j;
        for (size_t n = len; n > 0;) {
            size_t step = n < sizeof(zeros) ? n : sizeof(zeros);
            c = crc_table(c, zeros, step);
            n -= step;
        }
        bit[j] = c;
    }
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t c = 0;
            for (int j = 0; j < 8; j++) {
                if (b & (1 << j)) {
                    c ^= bit[8 * k + j];
                }
            }
            tab[k][b] = c;
        }
    }
}
#endif

static void crc_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++) {
            c = (c >> 1) ^ (POLY & (0u - (c & 1)));
        }
        slice8[0][b] = c;
    }
    for (int k = 1; k < 8; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t c = slice8[k - 1][b];
            slice8[k][b] = (c >> 8) ^ slice8[0][c & 0xff];
        }
    }
    crc_fn *impl = crc_table;
    copy_fn *copy = copy_table;
#ifdef CRC32C_X86
    _Static_assert(LONG_BLOCK % 8 == 0 && SHORT_BLOCK % 8 == 0,
                   "hw_3way steps 8 bytes at a time");
    build_shift(shift_long, LONG_BLOCK);
    build_shift(shift_short, SHORT_BLOCK);
    fold_consts(k_stride, CLMUL_STRIDE);
    fold_consts(k_64, 64);
    fold_consts(k_16, 16);
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        impl = crc_hw;
        copy = copy_hw;
        if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx512f")
            && __builtin_cpu_supports("vpclmulqdq")) {
            impl = crc_clmul;
            copy = copy_clmul;
        }
    }
#endif
    atomic_store_explicit(&copy_impl, copy, memory_order_release);
    atomic_store_explicit(&crc_impl, impl, memory_order_release);
}

/* The implementation crc_init chose. */
static crc_fn *crc_chosen(void)
{
    pthread_once(&crc_once, crc_init);
    return atomic_load_explicit(&crc_impl, memory_order_acquire);
}

/* crc_impl's value until crc_init has run. */
static uint32_t crc_resolve(uint32_t crc, const unsigned char *p, size_t len)
{
    return crc_chosen()(crc, p, len);
}

static uint32_t copy_resolve(uint32_t crc, unsigned char *d, const unsigned char *p, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return atomic_load_explicit(&copy_impl, memory_order_acquire)(crc, d, p, len);
}

/* ---- public API ---------------------------------------------------------- */

uint32_t ebtl_crc32c(uint32_t crc, const void *buf, size_t len)
{
    crc_fn *impl = atomic_load_explicit(&crc_impl, memory_order_acquire);
    return ~impl(~crc, buf, len);
}

uint32_t ebtl_crc32c_iov(const struct iovec *iov, int n)
{
    crc_fn *impl = atomic_load_explicit(&crc_impl, memory_order_acquire);
    uint32_t crc = ~0u;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > 0) {
            crc = impl(crc, iov[i].iov_base, iov[i].iov_len);
        }
    }
    return ~crc;
}

uint32_t ebtl_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
    copy_fn *impl = atomic_load_explicit(&copy_impl, memory_order_acquire);
    return ~impl(~crc, dst, src, len);
}

const char *ebtl_crc32c_impl(void)
{
    crc_fn *impl = crc_chosen();
    return impl == crc_table ? "table" : impl == crc_hw ? "sse4.2" : "vpclmulqdq";
}

uint32_t ebtl_crc32c_table(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return ~crc_table(~crc, buf, len);
}

uint32_t ebtl_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    /* the fastest the CPU has: crc_table without SSE4.2 */
    return ~crc_chosen()(~crc, buf, len);
}

uint32_t ebtl_crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
    /* the crc32 instruction alone, even where clmul is chosen */
    crc_fn *impl = crc_chosen();
#ifdef CRC32C_X86
    if (impl != crc_table) {
        impl = crc_hw;
    }
#endif
    return ~impl(~crc, buf, len);
}

uint32_t ebtl_crc32c_copy_table(uint32_t crc, void *dst, const void *src, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return ~copy_table(~crc, dst, src, len);
}

uint32_t ebtl_crc32c_copy_sse42(uint32_t crc, void *dst, const void *src, size_t len)
{
    /* the crc32 instruction alone, even where clmul is chosen */
    pthread_once(&crc_once, crc_init);
    copy_fn *impl = atomic_load_explicit(&copy_impl, memory_order_acquire);
#ifdef CRC32C_X86
    if (impl != copy_table) {
        impl = copy_hw;
    }
#endif
    return ~impl(~crc, dst, src, len);
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* mpitest.c - shared helpers for the MPI data-integrity tests. */
#include "mpitest.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mt_rank = -1, mt_size = 0;

static const char *mt_name = "mpitest";
static double mt_t0;
static int mt_corrupt_rank = -1; /* rank that injects corruption, -1: none */
static int mt_hang = 0;
static atomic_int mt_corrupt_done;
static atomic_long mt_corrupt_skip; /* non-empty checks to let pass first */
static atomic_int mt_hang_done;

/* ------------------------------------------------------------------ */
/* init / finish                                                       */

static void mt_setup(const char *name)
{
    const char *e;

    mt_name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    /* Errors are reported by return code, so MT_MPI can name the call. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    e = getenv("MPITEST_CORRUPT");
    if (e && *e && strcmp(e, "0") != 0) {
        const char *r = getenv("MPITEST_CORRUPT_RANK");
        const char *k = getenv("MPITEST_CORRUPT_SKIP");
        mt_corrupt_rank = r && *r ? atoi(r) : (mt_size > 1 ? 1 : 0);
        atomic_init(&mt_corrupt_skip, k && *k ? atol(k) : 0);
        if (mt_rank == 0)
            fprintf(stderr, "%s: MPITEST_CORRUPT set: rank %d will flip one "
                    "received byte\n", mt_name, mt_corrupt_rank);
    }
    e = getenv("MPITEST_HANG");
    if (e && *e && strcmp(e, "0") != 0) {
        mt_hang = 1;
        if (mt_rank == 0)
            fprintf(stderr, "%s: MPITEST_HANG set: rank 0 will skip one send"
                    "\n", mt_name);
    }
    atomic_init(&mt_corrupt_done, 0);
    atomic_init(&mt_hang_done, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    mt_t0 = MPI_Wtime();
}

void mt_init(int *argc, char ***argv, const char *name)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed\n", name);
        exit(MT_EXIT_ERROR);
    }
    mt_setup(name);
}

int mt_init_thread(int *argc, char ***argv, int required, const char *name)
{
    int provided = MPI_THREAD_SINGLE;

    if (MPI_Init_thread(argc, argv, required, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init_thread failed\n", name);
        exit(MT_EXIT_ERROR);
    }
    mt_setup(name);
    return provided;
}

void mt_finish(const char *fmt, ...)
{
    char details[512];
    va_list ap;
    double dt;

    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    dt = MPI_Wtime() - mt_t0;
    if (mt_rank == 0) {
        va_start(ap, fmt);
        vsnprintf(details, sizeof details, fmt, ap);
        va_end(ap);
        printf("%s: OK np=%d %s (%.2fs)\n", mt_name, mt_size, details, dt);
        fflush(stdout);
    }
    MPI_Finalize();
}

double mt_total_mib(double bytes)
{
    double total = 0;
    MT_MPI(MPI_Reduce(&bytes, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    return total / 1048576.0;
}

long mt_total_count(long count)
{
    long total = 0;
    MT_MPI(MPI_Reduce(&count, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    return total;
}

int mt_scale(void)
{
    const char *e = getenv("MPITEST_SCALE");
    int s = e && *e ? atoi(e) : 1;

    return s >= 1 ? s : 1;
}

/* ------------------------------------------------------------------ */
/* failure reporting                                                   */

void mt_fail(int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "mpitest FAIL %s rank %d: %s\n", mt_name, mt_rank, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached */
}

void mt_mismatch(size_t off, unsigned expected, unsigned got, const char *what)
{
    mt_fail(MT_EXIT_MISMATCH,
            "MISMATCH in %s: first bad byte at offset %zu: expected 0x%02x "
            "got 0x%02x", what, off, expected & 0xffu, got & 0xffu);
}

/* ------------------------------------------------------------------ */
/* hashing and pattern                                                 */

uint64_t mt_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

uint64_t mt_hash3(uint64_t a, uint64_t b, uint64_t c)
{
    return mt_mix64(mt_mix64(mt_mix64(a + 0x9e3779b97f4a7c15ULL) ^ b) ^ c);
}

uint64_t mt_rand(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ULL;
    return mt_mix64(*state);
}

uint64_t mt_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + mt_rand(state) % (hi - lo + 1);
}

static inline uint64_t mt_seed(int src, uint64_t idx)
{
    return mt_hash3((uint64_t)(uint32_t)src ^ 0x5157ULL << 32, idx,
                    0x6d70697465737431ULL);
}

/* 8 pattern bytes for word w (logical offsets 8w..8w+7). */
static inline uint64_t mt_word(uint64_t seed, uint64_t w)
{
    return mt_mix64(seed + (w + 1) * 0x9e3779b97f4a7c15ULL);
}

unsigned char mt_pat_byte(int src, uint64_t idx, size_t off)
{
    uint64_t v = mt_word(mt_seed(src, idx), off >> 3);
    return (unsigned char)(v >> (8 * (off & 7)));
}

/* Byte j (0..7) of the little-endian representation, host independent. */
static inline void mt_put_word(unsigned char *p, uint64_t v, size_t from,
                               size_t to)
{
    for (size_t j = from; j < to; j++)
        p[j - from] = (unsigned char)(v >> (8 * j));
}

void mt_fill(void *buf, size_t len, int src, uint64_t idx, size_t off0)
{
    unsigned char *p = buf;
    uint64_t seed = mt_seed(src, idx);
    size_t off = off0, end = off0 + len;

    /* leading partial word */
    if (off < end && (off & 7)) {
        size_t stop = (off | 7) + 1;
        if (stop > end)
            stop = end;
        mt_put_word(p, mt_word(seed, off >> 3), off & 7, (off & 7) + (stop - off));
        p += stop - off;
        off = stop;
    }
    /* full words */
    while (off + 8 <= end) {
        uint64_t v = mt_word(seed, off >> 3);
        unsigned char b[8];
        for (int j = 0; j < 8; j++)
            b[j] = (unsigned char)(v >> (8 * j));
        memcpy(p, b, 8);
        p += 8;
        off += 8;
    }
    /* trailing partial word */
    if (off < end)
        mt_put_word(p, mt_word(seed, off >> 3), 0, end - off);
}

static MT_NORETURN void mt_check_report(const unsigned char *p, size_t len,
                                        int src, uint64_t idx, size_t off0,
                                        const char *fmt, va_list ap)
{
    char what[512];
    char full[700];
    size_t i;

    vsnprintf(what, sizeof what, fmt, ap);
    for (i = 0; i < len; i++)
        if (p[i] != mt_pat_byte(src, idx, off0 + i))
            break;
    if (i == len) /* cannot happen */
        i = 0;
    snprintf(full, sizeof full, "%s (len %zu, sender %d, msg %llu)", what,
             len, src, (unsigned long long)idx);
    mt_mismatch(i, mt_pat_byte(src, idx, off0 + i), p[i], full);
}

void mt_check(void *buf, size_t len, int src, uint64_t idx, size_t off0,
              const char *fmt, ...)
{
    unsigned char *p = buf;
    uint64_t seed = mt_seed(src, idx);
    size_t off = off0, end = off0 + len;
    int bad = 0;

    mt_maybe_corrupt(buf, len);

    while (off < end && !bad) {
        uint64_t v = mt_word(seed, off >> 3);
        size_t j0 = off & 7;
        size_t j1 = 8;
        if (end - off < 8 - j0)
            j1 = j0 + (end - off);
        if (j0 == 0 && j1 == 8) {
            unsigned char b[8];
            for (int j = 0; j < 8; j++)
                b[j] = (unsigned char)(v >> (8 * j));
            if (memcmp(p + (off - off0), b, 8) != 0)
                bad = 1;
        } else {
            for (size_t j = j0; j < j1; j++)
                if (p[off - off0 + j - j0] != (unsigned char)(v >> (8 * j)))
                    bad = 1;
        }
        off += j1 - j0;
    }
    if (bad) {
        va_list ap;
        va_start(ap, fmt);
        mt_check_report(p, len, src, idx, off0, fmt, ap);
    }
}

void mt_check_const(void *buf, size_t len, unsigned char byte,
                    const char *fmt, ...)
{
    unsigned char *p = buf;

    for (size_t i = 0; i < len; i++) {
        if (p[i] != byte) {
            char what[512];
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(what, sizeof what, fmt, ap);
            va_end(ap);
            mt_mismatch(i, byte, p[i], what);
        }
    }
}

void mt_check_status(const MPI_Status *st, int src, int tag, size_t bytes,
                     const char *fmt, ...)
{
    int count = -1;
    MPI_Status s = *st;

    MPI_Get_count(&s, MPI_BYTE, &count);
    if (s.MPI_SOURCE != src || (tag >= 0 && s.MPI_TAG != tag) ||
        count < 0 || (size_t)count != bytes) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        mt_fail(MT_EXIT_MISMATCH,
                "BAD STATUS in %s: source %d tag %d count %d, expected source "
                "%d tag %d count %zu", what, s.MPI_SOURCE, s.MPI_TAG, count,
                src, tag, bytes);
    }
}

/* ------------------------------------------------------------------ */
/* fault injection                                                     */

void mt_maybe_corrupt(void *buf, size_t len)
{
    if (mt_corrupt_rank != mt_rank || len == 0)
        return;
    if (atomic_load(&mt_corrupt_skip) > 0 &&
        atomic_fetch_sub(&mt_corrupt_skip, 1) > 0)
        return;
    if (atomic_exchange(&mt_corrupt_done, 1) != 0)
        return;
    ((unsigned char *)buf)[len / 2] ^= 0x10;
    fprintf(stderr, "%s rank %d: MPITEST_CORRUPT: flipped byte %zu of a "
            "%zu-byte receive buffer\n", mt_name, mt_rank, len / 2, len);
    fflush(stderr);
}

int mt_hang_skip(void)
{
    if (!mt_hang || mt_rank != 0)
        return 0;
    if (atomic_exchange(&mt_hang_done, 1) != 0)
        return 0;
    fprintf(stderr, "%s rank 0: MPITEST_HANG: skipping one send\n", mt_name);
    fflush(stderr);
    return 1;
}

void mt_hang_point(void)
{
    int dummy;

    if (!mt_hang_skip())
        return;
    /* A receive nobody will ever match: the job deadlocks. */
    MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 32000, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

void *mt_malloc(size_t len)
{
    void *p = malloc(len ? len : 1);

    if (!p)
        mt_fail(MT_EXIT_ERROR, "out of memory allocating %zu bytes", len);
    return p;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of usrsctp's allocator (btl_sctp/btl_sctp_mem.c): every size
 * class boundary holds what was asked for, on a cache line, every byte
 * writable and kept; calloc zeroes and refuses an overflowing product; a
 * freed block comes back to the next allocation of its class on the same
 * thread (not under AddressSanitizer, where the cache is off); blocks move
 * between threads; release empties the cache and the allocator still
 * works after it. ASan/valgrind catch an access past a block. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../btl_sctp/btl_sctp_mem.h"
#include "unit.h"

/* Test hook in btl_sctp_mem.c, deliberately not in its header. */
extern size_t bsctp_mem_capacity(const void *p);

#if defined(__SANITIZE_ADDRESS__)
#define CACHED 0
#else
#define CACHED 1
#endif

static uint8_t pattern(size_t n, size_t i)
{
    return (uint8_t) (n * 31u + i * 7u);
}

/* Every size around each class limit (a 64-byte header included) up to
 * 140000. */
static void sizes_hold_their_bytes(void)
{
    int bad = 0, checked = 0;
    for (size_t step = 64; step <= 262144; step = step < 96 ? 96 : step % 3 ? step * 3 / 2
                                                                         : step * 4 / 3) {
        size_t limit = step + 64;   /* the class: a step plus 64 bytes, header included */
        for (size_t n = limit - 68; n <= limit - 60 && n <= 140000; n++) {
            uint8_t *p = bsctp_mem_malloc(n);
            checked++;
            /* room for n, in the smallest class (at most half again) */
            size_t cap = p != NULL ? bsctp_mem_capacity(p) : 0;
            bool direct = n + 64 > 131072 + 64;   /* beyond the largest class */
            if (p == NULL || ((uintptr_t) p & 63) != 0
                || (direct ? cap != 0 : cap < n || cap > n + n / 2 + 128)) {
                if (bad++ == 0) {
                    printf("    size %zu: block %p holds %zu\n", n, (void *) p, cap);
                }
                bsctp_mem_free(p);
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                p[i] = pattern(n, i);
            }
            for (size_t i = 0; i < n; i++) {
                bad += p[i] != pattern(n, i);
            }
            bsctp_mem_free(p);
        }
    }
    uint8_t *zero = bsctp_mem_malloc(0);
    CHECK(zero != NULL);
    bsctp_mem_free(zero);
    bsctp_mem_free(NULL);
    CHECK(bad == 0);
    CHECK(checked > 100);
    printf("    %d sizes checked\n", checked);
}

static void calloc_zeroes_and_refuses_overflow(void)
{
    uint8_t *p = bsctp_mem_malloc(2048);
    CHECK(p != NULL);
    memset(p, 0xab, 2048);
    bsctp_mem_free(p);   /* cached dirty: calloc must still zero it */
    uint8_t *q = bsctp_mem_calloc(64, 32);
    CHECK(q != NULL);
    int nonzero = 0;
    for (size_t i = 0; q != NULL && i < 2048; i++) {
        nonzero += q[i] != 0;
    }
    CHECK(nonzero == 0);
    bsctp_mem_free(q);
    CHECK(bsctp_mem_calloc(SIZE_MAX / 2, 3) == NULL);
    CHECK(bsctp_mem_malloc(SIZE_MAX - 8) == NULL);
}

static void freed_block_comes_back(void)
{
    void *a = bsctp_mem_malloc(2048);
    bsctp_mem_free(a);
    void *b = bsctp_mem_malloc(2000);   /* the same class (a 2 KiB step plus the header) */
    CHECK(b != NULL);
    if (CACHED) {
        CHECK(a == b);
    }
    void *big = bsctp_mem_malloc(1u << 20);   /* beyond the classes: malloc's */
    CHECK(big != NULL && bsctp_mem_capacity(big) == 0);
    memset(big, 1, 1u << 20);
    bsctp_mem_free(big);
    bsctp_mem_free(b);
}

static void *free_all(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < 1000; i++) {
        bsctp_mem_free(blocks[i]);
    }
    return NULL;
}

/* Blocks allocated here, freed on a thread that then exits (its cache is
 * flushed at exit), and the allocator still serves this thread. */
static void blocks_cross_threads(void)
{
    void *blocks[1000];
    for (int i = 0; i < 1000; i++) {
        blocks[i] = bsctp_mem_malloc((size_t) (i % 7) * 700 + 1);
        CHECK(blocks[i] != NULL);
    }
    pthread_t t;
    CHECK(pthread_create(&t, NULL, free_all, blocks) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    void *p = bsctp_mem_malloc(3000);
    CHECK(p != NULL);
    bsctp_mem_free(p);
}

static void release_then_again(void)
{
    void *p = bsctp_mem_malloc(500);
    bsctp_mem_free(p);
    bsctp_mem_release();
    void *q = bsctp_mem_malloc(500);
    CHECK(q != NULL);
    bsctp_mem_free(q);
    bsctp_mem_release();
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_mem", sizes_hold_their_bytes);
    RUN("bsctp_mem", calloc_zeroes_and_refuses_overflow);
    RUN("bsctp_mem", freed_block_comes_back);
    RUN("bsctp_mem", blocks_cross_threads);
    RUN("bsctp_mem", release_then_again);
    return UNIT_RESULT();
}

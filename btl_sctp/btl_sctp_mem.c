/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * usrsctp's memory, cached per thread.
 *
 * usrsctp allocates for every 2 KiB of data an mbuf and a cluster, and in
 * conn mode a linear copy of every packet, and frees them a moment later:
 * glibc's allocator took a fifth of a streaming sender's time. The build
 * links a copy of usrsctp's static library whose malloc, calloc and free
 * are renamed to the functions below (Makefile.am, objcopy), so only
 * usrsctp's own blocks come here (and its in6addr_any to ours, below).
 * Each block starts on a cache line after a 64-byte header with its size
 * class; a freed block goes onto the freeing thread's list for its class
 * (up to CACHE_BYTES per class), and the next allocation of that class on
 * that thread takes it back without a lock. Blocks larger than the largest
 * class, and every block under AddressSanitizer (which must see each use
 * after free), go straight to the C library.
 */
#include "btl_sctp_mem.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define BSCTP_MEM_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BSCTP_MEM_CACHE 0
#endif
#endif
#ifndef BSCTP_MEM_CACHE
#define BSCTP_MEM_CACHE 1
#endif

#define HEADER 64              /* a cache line: blocks start on one (the copies into
                                  mbuf clusters then never split a line) */
#define NUM_CLASSES 23         /* 128, 160, 192, 256, ... 98368, 131136 bytes */
#define DIRECT NUM_CLASSES     /* the header's class of a block from malloc */
#define CACHE_BYTES (4u << 20) /* most a thread keeps per class */

typedef struct block_header {
    uint32_t cls;
    uint32_t magic;
    uint8_t unused[HEADER - 8];
} block_header_t;
_Static_assert(sizeof(block_header_t) == HEADER, "the header keeps blocks line-aligned");

#define MAGIC 0x5c7bu

/* Class sizes, header included: a step (64, then 2^b and 3 * 2^(b-1) for
 * b >= 7) plus the header, so that usrsctp's usual blocks fit exactly: an
 * mbuf (256 + 64), a cluster (2048 + 64), a packet of the loopback MTU
 * (up to 64 KiB + 64). */
#define SLACK HEADER

static size_t class_size(unsigned cls)
{
    unsigned b = 6 + (cls + 1) / 2;
    size_t step = cls == 0 ? 64 : cls % 2 ? (size_t) 3 << (b - 2) : (size_t) 1 << b;
    return step + SLACK;
}

/* The smallest class that holds total bytes, or DIRECT. */
static unsigned class_of(size_t total)
{
    if (total <= 64 + SLACK) {
        return 0;
    }
    size_t step = total - SLACK;
    /* 2^b < step <= 2^(b+1) */
    unsigned b = 63u - (unsigned) __builtin_clzll((unsigned long long) (step - 1));
    unsigned cls = step <= ((size_t) 3 << (b - 1)) ? 2 * (b - 6) + 1 : 2 * (b - 5);
    return cls < NUM_CLASSES ? cls : DIRECT;
}

#if BSCTP_MEM_CACHE
typedef struct thread_cache {
    void *head[NUM_CLASSES];   /* free blocks (user pointers), linked through their first word */
    uint32_t count[NUM_CLASSES];
    unsigned key_gen;          /* exit_key's generation this thread registered with */
} thread_cache_t;

static __thread thread_cache_t cache;
/* Flushes a thread's cache when it exits. Deleted at bsctp_mem_release
 * (the last stack closed), so that no thread exiting after Open MPI
 * unloads the component calls into it; made again on the next use. */
static pthread_key_t exit_key;
static _Atomic unsigned key_gen;   /* 0: no key */
static unsigned key_gens;
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

static void flush(thread_cache_t *c)
{
    for (unsigned cls = 0; cls < NUM_CLASSES; cls++) {
        while (c->head[cls] != NULL) {
            void *p = c->head[cls];
            memcpy(&c->head[cls], p, sizeof(void *));
            free((uint8_t *) p - HEADER);
        }
        c->count[cls] = 0;
    }
}

static void on_thread_exit(void *unused)
{
    (void) unused;
    flush(&cache);
}

static void register_thread(void)
{
    pthread_mutex_lock(&key_lock);
    if (key_gen == 0 && pthread_key_create(&exit_key, on_thread_exit) == 0) {
        key_gen = ++key_gens;   /* never 0 again in a process's life */
    }
    if (key_gen != 0) {
        (void) pthread_setspecific(exit_key, &cache);   /* any non-NULL value */
    }
    cache.key_gen = key_gen;
    pthread_mutex_unlock(&key_lock);
}
#endif

void *bsctp_mem_malloc(size_t n)
{
    if (n > SIZE_MAX - HEADER) {
        return NULL;
    }
    unsigned cls = class_of(n + HEADER);
#if BSCTP_MEM_CACHE
    if (cls != DIRECT && cache.head[cls] != NULL) {
        void *p = cache.head[cls];
        memcpy(&cache.head[cls], p, sizeof(void *));
        cache.count[cls]--;
        return p;
    }
#endif
    void *raw = NULL;
    if (posix_memalign(&raw, HEADER, cls == DIRECT ? n + HEADER : class_size(cls)) != 0) {
        return NULL;
    }
    block_header_t *h = raw;
    h->cls = cls;
    h->magic = MAGIC;
    return (uint8_t *) h + HEADER;
}

void *bsctp_mem_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        return NULL;
    }
    void *p = bsctp_mem_malloc(count * size);
    if (p != NULL) {
        memset(p, 0, count * size);
    }
    return p;
}

void bsctp_mem_free(void *p)
{
    if (p == NULL) {
        return;
    }
    block_header_t *h = (block_header_t *) ((uint8_t *) p - HEADER);
    if (h->magic != MAGIC || h->cls > DIRECT) {
        abort();   /* not ours: a bug in the build's renaming, never in the network's bytes */
    }
#if BSCTP_MEM_CACHE
    unsigned cls = h->cls;
    if (cls != DIRECT && (size_t) cache.count[cls] * class_size(cls) < CACHE_BYTES) {
        if (cache.key_gen != key_gen || key_gen == 0) {
            register_thread();
        }
        memcpy(p, &cache.head[cls], sizeof(void *));
        cache.head[cls] = p;
        cache.count[cls]++;
        return;
    }
#endif
    free(h);
}

/* Test hook (not in the header): the bytes a block of ours holds, 0 for
 * a block from malloc beyond the classes. */
size_t bsctp_mem_capacity(const void *p);
size_t bsctp_mem_capacity(const void *p)
{
    const block_header_t *h = (const block_header_t *) ((const uint8_t *) p - HEADER);
    return h->cls == DIRECT ? 0 : class_size(h->cls) - HEADER;
}

/* The static library reads glibc's in6addr_any with a relocation a shared
 * object cannot carry; the copy reads this one, in our object. */
const struct in6_addr bsctp_in6addr_any = IN6ADDR_ANY_INIT;

void bsctp_mem_release(void)
{
#if BSCTP_MEM_CACHE
    flush(&cache);
    pthread_mutex_lock(&key_lock);
    if (key_gen != 0) {
        (void) pthread_key_delete(exit_key);
        key_gen = 0;
    }
    pthread_mutex_unlock(&key_lock);
#endif
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The test-only fault layer: drop, corrupt, duplicate and reorder received
 * datagrams, deterministically from a seed (xoshiro256** seeded through
 * splitmix64; the same arrivals give the same decisions however they are
 * batched, except for the time-based release of held datagrams).
 *
 * For each arrival, in this order: drop; else corrupt one byte; then a
 * duplicate (a copy) is output right away; then, if reorder fires, the
 * datagram itself is held (copied) instead of output and released after
 * 1-3 later arrivals have been output or once held hold_ns. At most
 * FAULT_HOLD_MAX are held; when full, the datagram is output instead.
 *
 * Copies live in buffers of max_len bytes owned here: a pool that grows to
 * the largest number needed in one call and is handed out again at the next
 * call. A datagram longer than max_len cannot be copied, so it is neither
 * duplicated nor held (the decisions are still drawn).
 */
#include "ebtl_fault.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAULT_HOLD_MAX 4
#define FAULT_DEFAULT_HOLD_NS 200000u

typedef struct fault_held {
    unsigned char *buf;       /* a pool buffer */
    size_t len;
    unsigned char from[32];
    uint64_t since_ns;
    unsigned after;           /* later arrivals still to be output before release */
} fault_held_t;

struct ebtl_fault {
    ebtl_fault_config_t cfg;
    size_t max_len;
    uint64_t rng[4];
    ebtl_fault_stats_t stats;

    fault_held_t held[FAULT_HOLD_MAX]; /* in the order they were held */
    unsigned nheld;

    /* Every buffer allocated is in exactly one place: free, busy (handed
     * out by the last call) or held. Both stacks can hold all of them. */
    unsigned char **free_bufs, **busy_bufs;
    size_t nfree, nbusy, nalloc, stack_cap;

    ebtl_fault_pkt_t *scratch;  /* the arrivals of the current call */
    size_t scratch_cap;
};

/* ---- PRNG ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(ebtl_fault_t *f)
{
    uint64_t *s = f->rng;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static double rng_unit(ebtl_fault_t *f)
{
    return (double) (rng_next(f) >> 11) * 0x1.0p-53;
}

/* True with probability p (never for p <= 0 or NaN, always for p >= 1). */
static bool rng_chance(ebtl_fault_t *f, double p)
{
    return rng_unit(f) < p;
}

/* Uniform in [0, n), n > 0. */
static uint64_t rng_below(ebtl_fault_t *f, uint64_t n)
{
    return rng_next(f) % n;
}

/* ---- configuration ---- */

bool ebtl_fault_config_active(const ebtl_fault_config_t *cfg)
{
    return cfg != NULL && (cfg->drop > 0 || cfg->duplicate > 0 || cfg->reorder > 0 ||
                           cfg->corrupt > 0);
}

const char *ebtl_fault_config_format(const ebtl_fault_config_t *cfg, char *buf, size_t len)
{
    if (len == 0) {
        return buf;
    }
    int n = snprintf(buf, len, "drop=%g dup=%g reorder=%g corrupt=%g seed=%llu", cfg->drop,
                     cfg->duplicate, cfg->reorder, cfg->corrupt, (unsigned long long) cfg->seed);
    if (cfg->hold_ns != 0 && n > 0 && (size_t) n < len) {
        snprintf(buf + n, len - (size_t) n, " hold_ns=%llu", (unsigned long long) cfg->hold_ns);
    }
    return buf;
}

static int check_probability(const char *name, double p, bool below_one, char *err,
                             size_t errlen)
{
    if (isfinite(p) && p >= 0 && (below_one ? p < 1 : p <= 1)) {
        return 0;
    }
    if (err != NULL && errlen > 0) {
        snprintf(err, errlen, "fault %s=%g is not a probability in [0, 1%s", name, p,
                 below_one ? ")" : "]");
    }
    return -1;
}

int ebtl_fault_config_check(const ebtl_fault_config_t *cfg, char *err, size_t errlen)
{
    if (check_probability("drop", cfg->drop, true, err, errlen) != 0 ||
        check_probability("dup", cfg->duplicate, false, err, errlen) != 0 ||
        check_probability("reorder", cfg->reorder, false, err, errlen) != 0 ||
        check_probability("corrupt", cfg->corrupt, false, err, errlen) != 0) {
        return -1;
    }
    return 0;
}

/* ---- life cycle ---- */

ebtl_fault_t *ebtl_fault_create(const ebtl_fault_config_t *cfg, size_t max_len)
{
    ebtl_fault_t *f = calloc(1, sizeof(*f));
    if (f == NULL) {
        return NULL;
    }
    f->cfg = *cfg;
    if (f->cfg.hold_ns == 0) {
        f->cfg.hold_ns = FAULT_DEFAULT_HOLD_NS;
    }
    f->max_len = max_len;
    uint64_t x = cfg->seed;
    for (int i = 0; i < 4; i++) {
        f->rng[i] = splitmix64(&x);
    }
    return f;
}

void ebtl_fault_destroy(ebtl_fault_t *f)
{
    if (f == NULL) {
        return;
    }
    for (size_t i = 0; i < f->nfree; i++) {
        free(f->free_bufs[i]);
    }
    for (size_t i = 0; i < f->nbusy; i++) {
        free(f->busy_bufs[i]);
    }
    for (unsigned i = 0; i < f->nheld; i++) {
        free(f->held[i].buf);
    }
    free(f->free_bufs);
    free(f->busy_bufs);
    free(f->scratch);
    free(f);
}

const ebtl_fault_stats_t *ebtl_fault_stats(const ebtl_fault_t *f)
{
    return &f->stats;
}

void ebtl_fault_stats_add(ebtl_fault_stats_t *sum, const ebtl_fault_t *f)
{
    if (f == NULL) {
        return;
    }
    const ebtl_fault_stats_t *s = ebtl_fault_stats(f);
    sum->seen += s->seen;
    sum->dropped += s->dropped;
    sum->duplicated += s->duplicated;
    sum->reordered += s->reordered;
    sum->corrupted += s->corrupted;
}

const char *ebtl_fault_stats_format(const ebtl_fault_stats_t *s, char *buf, size_t len)
{
    if (len > 0) {
        snprintf(buf, len, "fault_seen=%llu fault_dropped=%llu fault_duplicated=%llu "
                 "fault_reordered=%llu fault_corrupted=%llu", (unsigned long long) s->seen,
                 (unsigned long long) s->dropped, (unsigned long long) s->duplicated,
                 (unsigned long long) s->reordered, (unsigned long long) s->corrupted);
    }
    return buf;
}

/* ---- buffers ---- */

/* A free buffer of max_len bytes, or NULL (allocation failed). */
static unsigned char *buf_get(ebtl_fault_t *f)
{
    if (f->nfree > 0) {
        return f->free_bufs[--f->nfree];
    }
    if (f->nalloc == f->stack_cap) {
        size_t cap = f->stack_cap ? 2 * f->stack_cap : 16;
        unsigned char **fb = realloc(f->free_bufs, cap * sizeof(*fb));
        if (fb == NULL) {
            return NULL;
        }
        f->free_bufs = fb;
        unsigned char **bb = realloc(f->busy_bufs, cap * sizeof(*bb));
        if (bb == NULL) {
            return NULL;
        }
        f->busy_bufs = bb;
        f->stack_cap = cap;
    }
    unsigned char *b = malloc(f->max_len ? f->max_len : 1);
    if (b != NULL) {
        f->nalloc++;
    }
    return b;
}

/* Hand out b until the next call. */
static void buf_busy(ebtl_fault_t *f, unsigned char *b)
{
    f->busy_bufs[f->nbusy++] = b;
}

/* What was handed out by the last call may be reused now. */
static void bufs_recycle(ebtl_fault_t *f)
{
    while (f->nbusy > 0) {
        f->free_bufs[f->nfree++] = f->busy_bufs[--f->nbusy];
    }
}

/* ---- the filter ---- */

typedef struct fault_out {
    ebtl_fault_pkt_t *pkts;
    unsigned count, cap;
} fault_out_t;

static bool out_put(fault_out_t *o, void *buf, size_t len, const unsigned char *from)
{
    if (o->count >= o->cap) {
        return false;
    }
    ebtl_fault_pkt_t *p = &o->pkts[o->count++];
    p->buf = buf;
    p->len = len;
    memcpy(p->from, from, sizeof(p->from));
    return true;
}

/* Output held datagram i (its buffer becomes busy) and forget it. */
static bool release_held(ebtl_fault_t *f, fault_out_t *o, unsigned i)
{
    fault_held_t *h = &f->held[i];
    if (!out_put(o, h->buf, h->len, h->from)) {
        return false; /* no room: stays held, released at the next call */
    }
    buf_busy(f, h->buf);
    memmove(&f->held[i], &f->held[i + 1], (f->nheld - i - 1) * sizeof(f->held[0]));
    f->nheld--;
    return true;
}

/* Release, oldest first, what is due: its later arrivals were output or it
 * was held long enough. */
static void release_due(ebtl_fault_t *f, fault_out_t *o, uint64_t now_ns)
{
    unsigned i = 0;
    while (i < f->nheld) {
        fault_held_t *h = &f->held[i];
        bool due = h->after == 0 || now_ns - h->since_ns >= f->cfg.hold_ns ||
                   now_ns < h->since_ns /* clock went back: do not hold forever */;
        if (due && release_held(f, o, i)) {
            continue;
        }
        i++;
    }
}

/* An arrival was output: count it against every held datagram. */
static void arrival_output(ebtl_fault_t *f)
{
    for (unsigned i = 0; i < f->nheld; i++) {
        if (f->held[i].after > 0) {
            f->held[i].after--;
        }
    }
}

static bool grow_scratch(ebtl_fault_t *f, size_t n)
{
    if (n <= f->scratch_cap) {
        return true;
    }
    size_t cap = f->scratch_cap ? f->scratch_cap : 32;
    while (cap < n) {
        cap *= 2;
    }
    ebtl_fault_pkt_t *s = realloc(f->scratch, cap * sizeof(*s));
    if (s == NULL) {
        return false;
    }
    f->scratch = s;
    f->scratch_cap = cap;
    return true;
}

unsigned ebtl_fault_filter(ebtl_fault_t *f, ebtl_fault_pkt_t *pkts, unsigned n, unsigned cap,
                          uint64_t now_ns)
{
    bufs_recycle(f);
    if (pkts == NULL) {
        n = cap = 0;
    }
    if (n > 0 && !grow_scratch(f, n)) {
        /* cannot work without a copy of the arrivals: pass them through */
        f->stats.seen += n;
        if (n > cap) {
            f->stats.dropped += n - cap;
            n = cap;
        }
        return n;
    }
    if (n > 0) {
        memcpy(f->scratch, pkts, n * sizeof(*pkts));
    }
    fault_out_t o = {.pkts = pkts, .count = 0, .cap = cap};
    release_due(f, &o, now_ns);

    for (unsigned i = 0; i < n; i++) {
        ebtl_fault_pkt_t *a = &f->scratch[i];
        f->stats.seen++;
        if (rng_chance(f, f->cfg.drop)) {
            f->stats.dropped++;
            continue;
        }
        if (rng_chance(f, f->cfg.corrupt)) {
            uint64_t pos = rng_next(f);
            unsigned char x = (unsigned char) (1 + rng_below(f, 255));
            if (a->len > 0) {
                ((unsigned char *) a->buf)[pos % a->len] ^= x;
                f->stats.corrupted++;
            }
        }
        bool copyable = a->len <= f->max_len;
        /* a duplicate only when the original fits after it too */
        if (rng_chance(f, f->cfg.duplicate) && copyable && o.count + 1 < o.cap) {
            unsigned char *b = buf_get(f);
            if (b != NULL) {
                if (a->len > 0) {
                    memcpy(b, a->buf, a->len);
                }
                out_put(&o, b, a->len, a->from);
                buf_busy(f, b);
                f->stats.duplicated++;
            }
        }
        if (rng_chance(f, f->cfg.reorder)) {
            unsigned after = 1 + (unsigned) rng_below(f, 3);
            if (copyable && f->nheld < FAULT_HOLD_MAX) {
                unsigned char *b = buf_get(f);
                if (b != NULL) {
                    fault_held_t *h = &f->held[f->nheld++];
                    if (a->len > 0) {
                        memcpy(b, a->buf, a->len);
                    }
                    h->buf = b;
                    h->len = a->len;
                    memcpy(h->from, a->from, sizeof(h->from));
                    h->since_ns = now_ns;
                    h->after = after;
                    f->stats.reordered++;
                    continue;
                }
            }
        }
        if (!out_put(&o, a->buf, a->len, a->from)) {
            f->stats.dropped++; /* the caller's array is full */
            continue;
        }
        arrival_output(f);
        release_due(f, &o, now_ns);
    }
    return o.count;
}

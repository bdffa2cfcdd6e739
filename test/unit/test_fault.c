/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the fault layer (common/ebtl_fault.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ebtl_fault.h"
#include "unit.h"

/* Every payload: its number three times (so it is known even when one byte
 * of it was corrupted) and 8 bytes derived from it. */
enum { PAY = 32, BATCH_MAX = 16, CAP_MAX = 2 * BATCH_MAX + 8 };

static void fill(unsigned char *b, uint64_t id)
{
    uint64_t x = id * 0x9E3779B97F4A7C15ull ^ 0xA5A5A5A5A5A5A5A5ull;
    memcpy(b, &id, 8);
    memcpy(b + 8, &id, 8);
    memcpy(b + 16, &id, 8);
    memcpy(b + 24, &x, 8);
}

static uint64_t id_of(const unsigned char *b)
{
    uint64_t x, y, z;
    memcpy(&x, b, 8);
    memcpy(&y, b + 8, 8);
    memcpy(&z, b + 16, 8);
    return x == y || x == z ? x : y;
}

static int diff_bytes(const unsigned char *b, uint64_t id)
{
    unsigned char want[PAY];
    fill(want, id);
    int d = 0;
    for (int i = 0; i < PAY; i++) {
        d += b[i] != want[i];
    }
    return d;
}

static uint64_t hash(const unsigned char *b, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

/* The test's own deterministic batch sizes. */
static uint64_t trng_state;
static uint64_t trng(void)
{
    trng_state ^= trng_state << 13;
    trng_state ^= trng_state >> 7;
    trng_state ^= trng_state << 17;
    return trng_state;
}

/* What came out of one run. */
typedef struct obs {
    uint64_t n;                 /* arrivals fed */
    uint64_t outputs;
    uint8_t *count;             /* per id */
    uint8_t *corrupted;         /* per id: an output differed from the original */
    uint64_t *first_hash;       /* per id: hash of its first output */
    uint64_t late;              /* outputs after a higher number was output */
    uint64_t bad_id, multi_byte, dup_mismatch, bad_len;
    uint64_t max_seen;
    bool any_seen;
    uint64_t *seq;              /* (id, hash) of every output, when recording */
    size_t seq_len, seq_cap;
    ebtl_fault_stats_t stats;
    unsigned held_at_end;       /* outputs of the final flush */
} obs_t;

static void obs_init(obs_t *o, uint64_t n, bool record)
{
    memset(o, 0, sizeof(*o));
    o->n = n;
    o->count = calloc(n, 1);
    o->corrupted = calloc(n, 1);
    o->first_hash = calloc(n, sizeof(uint64_t));
    if (record) {
        o->seq_cap = 4 * n + 16;
        o->seq = malloc(o->seq_cap * sizeof(uint64_t));
    }
}

static void obs_free(obs_t *o)
{
    free(o->count);
    free(o->corrupted);
    free(o->first_hash);
    free(o->seq);
}

static void observe(obs_t *o, const ebtl_fault_pkt_t *p)
{
    o->outputs++;
    if (p->len != PAY) {
        o->bad_len++;
        return;
    }
    uint64_t id = id_of(p->buf);
    if (id >= o->n) {
        o->bad_id++;
        return;
    }
    uint64_t h = hash(p->buf, p->len);
    int d = diff_bytes(p->buf, id);
    if (d > 1) {
        o->multi_byte++;
    }
    if (d == 1) {
        o->corrupted[id] = 1;
    }
    if (o->count[id] == 0) {
        o->first_hash[id] = h;
    } else if (o->first_hash[id] != h) {
        o->dup_mismatch++;
    }
    if (o->count[id] < 255) {
        o->count[id]++;
    }
    if (o->any_seen && id < o->max_seen) {
        o->late++;
    }
    if (!o->any_seen || id > o->max_seen) {
        o->max_seen = id;
        o->any_seen = true;
    }
    if (o->seq != NULL && o->seq_len + 2 <= o->seq_cap) {
        o->seq[o->seq_len++] = id;
        o->seq[o->seq_len++] = h;
    }
}

enum cap_mode { CAP_ROOMY, CAP_TIGHT };

/*
 * Feed n numbered datagrams through a filter made from cfg, in batches of
 * batch (0: random 1..BATCH_MAX from batch_seed), the clock advancing
 * step_ns per arrival; then release what is held with an empty call far in
 * the future.
 */
static void run(const ebtl_fault_config_t *cfg, uint64_t n, unsigned batch, uint64_t batch_seed,
                uint64_t step_ns, enum cap_mode mode, obs_t *o, bool record)
{
    obs_init(o, n, record);
    ebtl_fault_t *f = ebtl_fault_create(cfg, PAY);
    CHECK(f != NULL);
    if (f == NULL) {
        return;
    }
    trng_state = batch_seed | 1;
    static unsigned char bufs[BATCH_MAX][PAY];
    ebtl_fault_pkt_t pkts[CAP_MAX];
    uint64_t now = 1000000, id = 0;
    while (id < n) {
        unsigned k = batch ? batch : 1 + (unsigned) (trng() % BATCH_MAX);
        if (k > n - id) {
            k = (unsigned) (n - id);
        }
        for (unsigned i = 0; i < k; i++) {
            fill(bufs[i], id + i);
            pkts[i].buf = bufs[i];
            pkts[i].len = PAY;
            memset(pkts[i].from, (int) i, sizeof(pkts[i].from));
        }
        id += k;
        now += step_ns * k;
        unsigned cap = mode == CAP_TIGHT ? k + 2 : CAP_MAX;
        unsigned got = ebtl_fault_filter(f, pkts, k, cap, now);
        CHECK(got <= cap);
        for (unsigned i = 0; i < got && i < cap; i++) {
            observe(o, &pkts[i]);
        }
    }
    for (int round = 0; round < 4; round++) { /* a tight cap may defer releases */
        now += 1000000000ull;
        unsigned got = ebtl_fault_filter(f, pkts, 0, mode == CAP_TIGHT ? 2 : CAP_MAX, now);
        o->held_at_end += got;
        for (unsigned i = 0; i < got; i++) {
            observe(o, &pkts[i]);
        }
    }
    o->stats = *ebtl_fault_stats(f);
    ebtl_fault_destroy(f);
}

static uint64_t count_ids(const obs_t *o, unsigned times)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < o->n; i++) {
        c += o->count[i] == times;
    }
    return c;
}

static uint64_t count_corrupted(const obs_t *o)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < o->n; i++) {
        c += o->corrupted[i];
    }
    return c;
}

static bool within10(const char *what, double measured, double p)
{
    bool ok = fabs(measured - p) <= 0.1 * p;
    if (!ok) {
        printf("    %s: measured %.6f, configured %.6f\n", what, measured, p);
    }
    return ok;
}

/* Every datagram that was not dropped comes out exactly once, plus its
 * duplicate; nothing else comes out; the counts agree with the stats. */
static void check_accounting(const obs_t *o)
{
    CHECK(o->bad_id == 0);
    CHECK(o->bad_len == 0);
    CHECK(o->multi_byte == 0);
    CHECK(o->dup_mismatch == 0);
    CHECK(o->stats.seen == o->n);
    CHECK(count_ids(o, 0) == o->stats.dropped);
    CHECK(count_ids(o, 2) == o->stats.duplicated);
    CHECK(count_ids(o, 0) + count_ids(o, 1) + count_ids(o, 2) == o->n);
    CHECK(o->outputs == o->n - o->stats.dropped + o->stats.duplicated);
}

/* Measured rates: drop of all arrivals, the others of those not dropped. */
static void check_rates(const ebtl_fault_config_t *cfg, const obs_t *o)
{
    double kept = (double) (o->n - o->stats.dropped);
    check_accounting(o);
    if (cfg->drop > 0) {
        CHECK(within10("drop", (double) count_ids(o, 0) / (double) o->n, cfg->drop));
    } else {
        CHECK(o->stats.dropped == 0);
    }
    if (cfg->duplicate > 0) {
        CHECK(within10("duplicate", (double) count_ids(o, 2) / kept, cfg->duplicate));
    } else {
        CHECK(o->stats.duplicated == 0 && count_ids(o, 2) == 0);
    }
    if (cfg->corrupt > 0) {
        CHECK(within10("corrupt", (double) count_corrupted(o) / kept, cfg->corrupt));
        CHECK(count_corrupted(o) == o->stats.corrupted);
    } else {
        CHECK(o->stats.corrupted == 0 && count_corrupted(o) == 0);
    }
    if (cfg->reorder > 0) {
        CHECK(within10("reorder (seen late)", (double) o->late / kept, cfg->reorder));
        CHECK(within10("reorder (stats)", (double) o->stats.reordered / kept, cfg->reorder));
    } else {
        CHECK(o->stats.reordered == 0 && o->late == 0);
    }
}

static void rate_case(double drop, double dup, double corrupt, double reorder, uint64_t n)
{
    ebtl_fault_config_t cfg = {.drop = drop, .duplicate = dup, .corrupt = corrupt,
                              .reorder = reorder, .seed = 12345};
    obs_t o;
    run(&cfg, n, 0, 99, 1000, CAP_ROOMY, &o, false);
    check_rates(&cfg, &o);
    obs_free(&o);
}

enum { N_RATE = 200000, N_RARE = 2000000 };

static void rate_drop(void)
{
    rate_case(0.2, 0, 0, 0, N_RATE);
}

static void rate_duplicate(void)
{
    rate_case(0, 0.01, 0, 0, N_RATE);
}

/* 0.001 of 200000 is 200 events, and +-10 % of that is only 1.4 standard
 * deviations: over 2000000 it is 4.5. */
static void rate_corrupt(void)
{
    rate_case(0, 0, 0.001, 0, N_RARE);
}

static void rate_reorder(void)
{
    rate_case(0, 0, 0, 0.05, N_RATE);
}

static void rate_combined(void)
{
    rate_case(0.2, 0.01, 0.001, 0.05, N_RARE);
}

static bool same_seq(const obs_t *a, const obs_t *b)
{
    return a->seq_len == b->seq_len &&
           memcmp(a->seq, b->seq, a->seq_len * sizeof(uint64_t)) == 0;
}

static void determinism(void)
{
    ebtl_fault_config_t cfg = {.drop = 0.2, .duplicate = 0.05, .corrupt = 0.05, .reorder = 0.1,
                              .seed = 7};
    obs_t a, b, c, d;
    run(&cfg, 20000, 0, 5, 1000, CAP_ROOMY, &a, true);
    run(&cfg, 20000, 0, 5, 1000, CAP_ROOMY, &b, true);
    CHECK(a.seq_len > 0);
    CHECK(same_seq(&a, &b));
    CHECK(memcmp(&a.stats, &b.stats, sizeof(a.stats)) == 0);
    /* the decisions follow the arrivals, not how they are batched */
    run(&cfg, 20000, 1, 0, 1000, CAP_ROOMY, &c, true);
    CHECK(same_seq(&a, &c));
    cfg.seed = 8;
    run(&cfg, 20000, 0, 5, 1000, CAP_ROOMY, &d, true);
    CHECK(!same_seq(&a, &d));
    CHECK(memcmp(&a.stats, &d.stats, sizeof(a.stats)) != 0);
    obs_free(&a);
    obs_free(&b);
    obs_free(&c);
    obs_free(&d);
}

/* Lots of everything: each datagram not dropped exactly once (plus its
 * duplicate), reordered ones released by later arrivals in the run and the
 * last few by time. */
static void exactly_once(void)
{
    ebtl_fault_config_t cfg = {.drop = 0.1, .duplicate = 0.1, .reorder = 0.3, .seed = 3};
    obs_t o;
    run(&cfg, 50000, 0, 11, 1000, CAP_ROOMY, &o, false);
    check_accounting(&o);
    CHECK(o.stats.reordered > 10000);
    CHECK(o.late > 10000);
    CHECK(o.held_at_end <= 4);
    obs_free(&o);
}

/* cap = n + 2, the least the contract allows: duplicates and releases that
 * do not fit wait or are skipped, nothing is lost or invented. */
static void tight_cap(void)
{
    ebtl_fault_config_t cfg = {.drop = 0.1, .duplicate = 0.5, .reorder = 0.5, .seed = 4};
    obs_t o;
    run(&cfg, 50000, 0, 13, 1000, CAP_TIGHT, &o, false);
    check_accounting(&o);
    CHECK(o.stats.duplicated > 0);
    CHECK(o.stats.reordered > 0);
    obs_free(&o);
}

/* Held datagrams come out by time alone, in the order they were held. */
static void release_by_time(void)
{
    static const uint64_t holds[] = {1000, 0 /* default: 200 us */};
    for (size_t h = 0; h < 2; h++) {
        uint64_t hold = holds[h] ? holds[h] : 200000;
        ebtl_fault_config_t cfg = {.reorder = 1, .seed = 1, .hold_ns = holds[h]};
        ebtl_fault_t *f = ebtl_fault_create(&cfg, PAY);
        unsigned char bufs[3][PAY];
        ebtl_fault_pkt_t pkts[8];
        for (unsigned i = 0; i < 3; i++) {
            fill(bufs[i], i);
            pkts[i].buf = bufs[i];
            pkts[i].len = PAY;
            memset(pkts[i].from, 0x40 + (int) i, sizeof(pkts[i].from));
        }
        uint64_t t0 = 5000000;
        CHECK(ebtl_fault_filter(f, pkts, 3, 8, t0) == 0);
        memset(bufs, 0, sizeof(bufs)); /* held as copies */
        CHECK(ebtl_fault_filter(f, pkts, 0, 8, t0 + hold - 1) == 0);
        unsigned got = ebtl_fault_filter(f, pkts, 0, 8, t0 + hold);
        CHECK(got == 3);
        for (unsigned i = 0; i < got && i < 3; i++) {
            CHECK(pkts[i].len == PAY && id_of(pkts[i].buf) == i && diff_bytes(pkts[i].buf, i) == 0);
            CHECK(pkts[i].from[0] == 0x40 + i && pkts[i].from[31] == 0x40 + i);
        }
        CHECK(ebtl_fault_filter(f, pkts, 0, 8, t0 + 10 * hold) == 0);
        CHECK(ebtl_fault_stats(f)->reordered == 3);
        ebtl_fault_destroy(f);
    }
}

/* A held datagram is released after 1-3 later arrivals were output. */
static void release_by_arrivals(void)
{
    int released_after[4] = {0};
    for (uint64_t seed = 1; seed <= 200; seed++) {
        /* find, for this seed, the first datagram held, then feed single
         * datagrams until it comes out */
        ebtl_fault_config_t cfg = {.reorder = 0.3, .seed = seed, .hold_ns = 1000000000};
        ebtl_fault_t *f = ebtl_fault_create(&cfg, PAY);
        unsigned char buf[PAY];
        ebtl_fault_pkt_t pkts[4];
        int held = -1, later = 0;
        for (uint64_t id = 0; id < 200; id++) {
            fill(buf, id);
            pkts[0].buf = buf;
            pkts[0].len = PAY;
            unsigned got = ebtl_fault_filter(f, pkts, 1, 4, 1000 + id);
            if (held < 0 && got == 0) {
                held = (int) id;
                continue;
            }
            bool out = false;
            for (unsigned i = 0; i < got; i++) {
                if (id_of(pkts[i].buf) == (uint64_t) held) {
                    out = true;
                } else if (held >= 0 && id_of(pkts[i].buf) == id) {
                    later++; /* this arrival was output */
                }
            }
            if (held >= 0 && out) {
                break;
            }
        }
        CHECK(held >= 0);
        CHECK(later >= 1 && later <= 3);
        if (later >= 1 && later <= 3) {
            released_after[later]++;
        }
        ebtl_fault_destroy(f);
    }
    /* all three counts happen */
    CHECK(released_after[1] > 0 && released_after[2] > 0 && released_after[3] > 0);
}

/* Corruption changes exactly one byte to a different value. */
static void corrupt_one_byte(void)
{
    ebtl_fault_config_t cfg = {.corrupt = 1, .seed = 9};
    ebtl_fault_t *f = ebtl_fault_create(&cfg, 1500);
    unsigned char buf[1500], orig[1500];
    int bad = 0, positions_seen = 0;
    static unsigned char hit[1500];
    for (int t = 0; t < 20000; t++) {
        size_t len = 1 + (size_t) (t % 1500);
        for (size_t i = 0; i < len; i++) {
            orig[i] = buf[i] = (unsigned char) (i * 7 + (size_t) t);
        }
        ebtl_fault_pkt_t p = {.buf = buf, .len = len};
        unsigned got = ebtl_fault_filter(f, &p, 1, 3, 0);
        int d = 0;
        size_t where = 0;
        for (size_t i = 0; i < len; i++) {
            if (buf[i] != orig[i]) {
                d++;
                where = i;
            }
        }
        bad += got != 1 || p.buf != buf || p.len != len || d != 1;
        if (d == 1 && len == 1500 && !hit[where]) {
            hit[where] = 1;
            positions_seen++;
        }
    }
    CHECK(bad == 0);
    CHECK(ebtl_fault_stats(f)->corrupted == 20000);
    CHECK(positions_seen > 5); /* anywhere in the datagram */
    ebtl_fault_destroy(f);
}

/* Duplicates are byte-identical copies owned by the fault layer. */
static void duplicates_identical(void)
{
    ebtl_fault_config_t cfg = {.duplicate = 1, .seed = 10};
    ebtl_fault_t *f = ebtl_fault_create(&cfg, 100);
    unsigned char bufs[8][100];
    ebtl_fault_pkt_t pkts[8 * 2 + 2];
    int bad = 0;
    for (int round = 0; round < 100; round++) {
        for (unsigned i = 0; i < 8; i++) {
            for (int j = 0; j < 100; j++) {
                bufs[i][j] = (unsigned char) (round * 31 + (int) i * 5 + j);
            }
            pkts[i].buf = bufs[i];
            pkts[i].len = 1 + i * 12;
            memset(pkts[i].from, (int) i, sizeof(pkts[i].from));
        }
        unsigned got = ebtl_fault_filter(f, pkts, 8, 18, 0);
        bad += got != 16;
        for (unsigned i = 0; i + 1 < got; i += 2) {
            /* copy first, then the original in its own buffer */
            bad += pkts[i + 1].buf != bufs[i / 2];
            bad += pkts[i].buf == bufs[i / 2];
            bad += pkts[i].len != pkts[i + 1].len;
            bad += memcmp(pkts[i].buf, pkts[i + 1].buf, pkts[i + 1].len) != 0;
            bad += memcmp(pkts[i].from, pkts[i + 1].from, sizeof(pkts[i].from)) != 0;
        }
    }
    CHECK(bad == 0);
    CHECK(ebtl_fault_stats(f)->duplicated == 800);
    ebtl_fault_destroy(f);
}

static void inactive_identity(void)
{
    ebtl_fault_config_t cfg = {.seed = 77};
    CHECK(!ebtl_fault_config_active(&cfg));
    ebtl_fault_t *f = ebtl_fault_create(&cfg, 64);
    unsigned char bufs[5][64];
    ebtl_fault_pkt_t pkts[7], orig[7];
    for (unsigned i = 0; i < 5; i++) {
        memset(bufs[i], (int) i, sizeof(bufs[i]));
        pkts[i].buf = bufs[i];
        pkts[i].len = 10 * i;
        memset(pkts[i].from, 0x11 * (int) i, sizeof(pkts[i].from));
    }
    memcpy(orig, pkts, sizeof(pkts));
    for (int round = 0; round < 100; round++) {
        CHECK(ebtl_fault_filter(f, pkts, 5, 7, (uint64_t) round * 1000000) == 5);
    }
    CHECK(memcmp(orig, pkts, 5 * sizeof(pkts[0])) == 0);
    for (unsigned i = 0; i < 5; i++) {
        unsigned char want[64];
        memset(want, (int) i, sizeof(want));
        CHECK(memcmp(bufs[i], want, sizeof(want)) == 0);
    }
    CHECK(ebtl_fault_stats(f)->seen == 500 && ebtl_fault_stats(f)->dropped == 0);
    ebtl_fault_destroy(f);

    ebtl_fault_config_t on = {.corrupt = 0.001};
    CHECK(ebtl_fault_config_active(&on));
}

/* Zero-length datagrams (even without a buffer), datagrams longer than
 * max_len (never copied), and a cap below n (never written past). */
static void robustness(void)
{
    ebtl_fault_config_t cfg = {.drop = 0.1, .duplicate = 0.5, .reorder = 0.5, .corrupt = 1,
                              .seed = 21};
    ebtl_fault_t *f = ebtl_fault_create(&cfg, 16);
    ebtl_fault_pkt_t pkts[40];
    uint64_t out = 0;
    for (int round = 0; round < 1000; round++) {
        for (unsigned i = 0; i < 16; i++) {
            pkts[i].buf = NULL;
            pkts[i].len = 0;
        }
        unsigned got = ebtl_fault_filter(f, pkts, 16, 40, (uint64_t) round * 100000);
        CHECK(got <= 40);
        for (unsigned i = 0; i < got && i < 40; i++) {
            CHECK(pkts[i].len == 0);
        }
        out += got;
    }
    out += ebtl_fault_filter(f, pkts, 0, 40, 1ull << 40);
    const ebtl_fault_stats_t *st = ebtl_fault_stats(f);
    CHECK(st->corrupted == 0); /* nothing to change */
    CHECK(st->duplicated > 0 && st->reordered > 0);
    CHECK(out == st->seen - st->dropped + st->duplicated);
    ebtl_fault_destroy(f);

    /* longer than max_len: passed on, never copied (ASan sees any overrun) */
    ebtl_fault_config_t dup = {.duplicate = 1, .reorder = 1, .seed = 22};
    f = ebtl_fault_create(&dup, 16);
    unsigned char big[4][64];
    for (unsigned i = 0; i < 4; i++) {
        memset(big[i], (int) i, sizeof(big[i]));
        pkts[i].buf = big[i];
        pkts[i].len = 64;
    }
    CHECK(ebtl_fault_filter(f, pkts, 4, 10, 0) == 4);
    for (unsigned i = 0; i < 4; i++) {
        CHECK(pkts[i].buf == big[i] && pkts[i].len == 64);
    }
    CHECK(ebtl_fault_stats(f)->duplicated == 0 && ebtl_fault_stats(f)->reordered == 0);
    ebtl_fault_destroy(f);

    /* cap smaller than n: at most cap written, the rest counted as dropped,
     * the entries past cap left alone */
    ebtl_fault_config_t drop = {.drop = 0.01, .seed = 23};
    f = ebtl_fault_create(&drop, 64);
    unsigned char small[20][8];
    for (unsigned i = 0; i < 20; i++) {
        pkts[i].buf = small[i];
        pkts[i].len = 8;
    }
    ebtl_fault_pkt_t guard[20];
    memcpy(guard, pkts, sizeof(guard));
    unsigned got = ebtl_fault_filter(f, pkts, 20, 5, 0);
    CHECK(got <= 5);
    CHECK(memcmp(&pkts[5], &guard[5], 15 * sizeof(pkts[0])) == 0);
    CHECK(ebtl_fault_stats(f)->dropped == 20 - got);
    CHECK(ebtl_fault_filter(f, pkts, 3, 0, 0) == 0);
    CHECK(ebtl_fault_stats(f)->dropped == 23 - got);
    CHECK(ebtl_fault_filter(f, NULL, 0, 0, 0) == 0);
    ebtl_fault_destroy(f);
    ebtl_fault_destroy(NULL);
}

static void config_check(void)
{
    char err[256];
    ebtl_fault_config_t ok = {.drop = 0.5, .duplicate = 1, .reorder = 0, .corrupt = 1e-6};
    CHECK(ebtl_fault_config_check(&ok, err, sizeof(err)) == 0);

    ebtl_fault_config_t c = {.drop = 1.5};
    CHECK(ebtl_fault_config_check(&c, err, sizeof(err)) == -1);
    CHECK(strcmp(err, "fault drop=1.5 is not a probability in [0, 1)") == 0);
    c.drop = 1;
    CHECK(ebtl_fault_config_check(&c, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "fault drop=1 ");
    c.drop = 0;
    c.duplicate = -0.1;
    CHECK(ebtl_fault_config_check(&c, err, sizeof(err)) == -1);
    CHECK(strcmp(err, "fault dup=-0.1 is not a probability in [0, 1]") == 0);
    c.duplicate = 0;
    c.reorder = NAN;
    CHECK(ebtl_fault_config_check(&c, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "fault reorder=");
    c.reorder = 0;
    c.corrupt = INFINITY;
    CHECK(ebtl_fault_config_check(&c, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "fault corrupt=inf");
    c.corrupt = 1.0000001;
    CHECK(ebtl_fault_config_check(&c, err, sizeof(err)) == -1);
    CHECK(ebtl_fault_config_check(&c, NULL, 0) == -1);

    ebtl_fault_config_t fmt = {.drop = 0.01, .corrupt = 0.001, .seed = 7};
    CHECK(strcmp(ebtl_fault_config_format(&fmt, err, sizeof(err)),
                 "drop=0.01 dup=0 reorder=0 corrupt=0.001 seed=7") == 0);
    fmt.hold_ns = 5000;
    CHECK_STR_CONTAINS(ebtl_fault_config_format(&fmt, err, sizeof(err)), "hold_ns=5000");
    char tiny[8];
    ebtl_fault_config_format(&fmt, tiny, sizeof(tiny));
    CHECK(strlen(tiny) == 7);
}

/* The counters both components print at finalize: summed over sockets
 * (a socket without the layer adds nothing) and formatted by name. */
static void stats_sum_format(void)
{
    ebtl_fault_config_t cfg = {.drop = 0.5, .seed = 11};
    ebtl_fault_t *f = ebtl_fault_create(&cfg, 64);
    CHECK(f != NULL);
    unsigned char data[8][16];
    ebtl_fault_pkt_t pkts[12];
    for (int i = 0; i < 8; i++) {
        pkts[i].buf = data[i];
        pkts[i].len = sizeof(data[i]);
        memset(pkts[i].from, 0, sizeof(pkts[i].from));
    }
    unsigned got = ebtl_fault_filter(f, pkts, 8, 12, 0);
    ebtl_fault_stats_t sum = {0};
    ebtl_fault_stats_add(&sum, f);
    ebtl_fault_stats_add(&sum, NULL);
    ebtl_fault_stats_add(&sum, f);
    CHECK(sum.seen == 16);
    CHECK(sum.dropped == 2 * (8 - got));
    char buf[256];
    sum = (ebtl_fault_stats_t){1, 2, 3, 4, 5};
    CHECK(strcmp(ebtl_fault_stats_format(&sum, buf, sizeof(buf)),
                 "fault_seen=1 fault_dropped=2 fault_duplicated=3 fault_reordered=4 "
                 "fault_corrupted=5") == 0);
    ebtl_fault_destroy(f);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("fault", determinism);
    RUN("fault", rate_drop);
    RUN("fault", rate_duplicate);
    RUN("fault", rate_corrupt);
    RUN("fault", rate_reorder);
    RUN("fault", rate_combined);
    RUN("fault", exactly_once);
    RUN("fault", tight_cap);
    RUN("fault", release_by_time);
    RUN("fault", release_by_arrivals);
    RUN("fault", corrupt_one_byte);
    RUN("fault", duplicates_identical);
    RUN("fault", inactive_identity);
    RUN("fault", robustness);
    RUN("fault", config_check);
    RUN("fault", stats_sum_format);
    return UNIT_RESULT();
}

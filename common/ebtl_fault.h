/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The test-only fault layer: on the receive path, drop, duplicate, reorder
 * and corrupt datagrams with given probabilities, deterministically from a
 * seed. Off unless one probability is non-zero. Pure C.
 */
#ifndef EBTL_FAULT_H
#define EBTL_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ebtl_fault_config {
    double drop;        /* probability a datagram is lost */
    double duplicate;   /* probability it is delivered twice */
    double reorder;     /* probability it is held back and delivered after later ones */
    double corrupt;     /* probability one of its bytes is changed */
    uint64_t seed;      /* same seed, same decisions for the same arrivals */
    uint64_t hold_ns;   /* longest a reordered datagram is held (default 200 us) */
} ebtl_fault_config_t;

typedef struct ebtl_fault_stats {
    uint64_t seen, dropped, duplicated, reordered, corrupted;
} ebtl_fault_stats_t;

typedef struct ebtl_fault ebtl_fault_t;

/* True when cfg asks for any fault. */
bool ebtl_fault_config_active(const ebtl_fault_config_t *cfg);
/* "drop=0.01 dup=0 reorder=0 corrupt=0.001 seed=7" into buf, for messages. */
const char *ebtl_fault_config_format(const ebtl_fault_config_t *cfg, char *buf, size_t len);
/* Check probabilities are in [0, 1] and drop < 1. Returns 0, or -1 with a
 * message naming the field in err. */
int ebtl_fault_config_check(const ebtl_fault_config_t *cfg, char *err, size_t errlen);

/* NULL on allocation failure. max_len: largest datagram it may have to copy. */
ebtl_fault_t *ebtl_fault_create(const ebtl_fault_config_t *cfg, size_t max_len);
void ebtl_fault_destroy(ebtl_fault_t *f);
const ebtl_fault_stats_t *ebtl_fault_stats(const ebtl_fault_t *f);
/* Add f's counters to sum (nothing when f is NULL: the layer is off). */
void ebtl_fault_stats_add(ebtl_fault_stats_t *sum, const ebtl_fault_t *f);
/* "fault_seen=N fault_dropped=N fault_duplicated=N fault_reordered=N
 * fault_corrupted=N" into buf: the names both components print at finalize. */
const char *ebtl_fault_stats_format(const ebtl_fault_stats_t *s, char *buf, size_t len);

/* One datagram going through the filter. `from` is the sender's address,
 * opaque here (an ebtl_sockaddr_t), copied along with held or duplicated
 * datagrams. */
typedef struct ebtl_fault_pkt {
    void *buf;
    size_t len;
    unsigned char from[32];
} ebtl_fault_pkt_t;

/*
 * Filter a batch of received datagrams in place: pkts[0..n) are the
 * arrivals; the result (at most cap entries, cap >= n + 2) is written back
 * to pkts, each pointing either at an arrival's own buffer (possibly changed
 * by corruption) or at a copy the fault layer owns (duplicates, released
 * held datagrams), valid until the next call. A held datagram is released
 * after a few later arrivals or once held longer than hold_ns (also when n
 * is 0). Returns the number of entries written.
 */
unsigned ebtl_fault_filter(ebtl_fault_t *f, ebtl_fault_pkt_t *pkts, unsigned n, unsigned cap,
                          uint64_t now_ns);

#endif

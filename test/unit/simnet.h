/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * A deterministic simulated network for the ESP engine (esp_proto): N
 * engines on a virtual clock (ns). A datagram handed to simnet_send is
 * copied into an event queue (a binary heap by delivery time, ties in
 * insertion order) to arrive after the sender's serialisation (a per-node
 * transmit queue at `bandwidth`), the channel's latency and random jitter;
 * a per-link fault model from a seeded PRNG drops, duplicates, delays
 * (reorders) and corrupts datagrams, and a link or a node can be
 * blackholed from a given time. The run loop delivers each datagram with
 * esp_proto_input and calls esp_proto_tick on the receiver after each
 * input and on every engine at least every tick_ns.
 *
 * Node numbers are also the engines' peer numbers: engine i knows node j
 * as peer j.
 */
#ifndef SIMNET_H
#define SIMNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "esp_proto.h"

#define SIMNET_MAX_NODES 16
#define SIMNET_NEVER UINT64_MAX

typedef struct sim_fault {
    double drop;          /* probability a datagram is lost */
    double dup;           /* ... delivered twice */
    double reorder;       /* ... delayed by up to reorder_factor x latency more */
    double corrupt;       /* ... has a random bit flipped or byte replaced */
    uint64_t blackhole_at; /* from this time on nothing passes (SIMNET_NEVER) */
    uint64_t blackhole_for; /* ... for this long (0: for ever) */
} sim_fault_t;

typedef struct simnet_config {
    unsigned nodes;
    uint64_t seed;
    uint64_t latency_ns;       /* data channel */
    uint64_t prio_latency_ns;  /* priority channel */
    uint64_t jitter_ns;        /* uniform extra delay 0..jitter (keeps a link in order) */
    double reorder_factor;     /* reordered datagrams: extra 0..factor x latency */
    double bandwidth_bps;      /* per sender, bits/s; 0: infinite */
    uint64_t queue_limit_ns;   /* tail drop when the sender's queue is longer; 0: none */
    uint64_t tick_ns;          /* esp_proto_tick on every engine at least this often */
    /* A receiver slower than the wire: each node reads what arrives from a
     * queue of rx_queue_bytes (its socket buffer; arrivals that do not fit
     * are dropped and counted as rx_overflow), spending rx_dgram_ns plus
     * len at rx_rate_bps on each datagram, and reads nothing during the
     * first rx_stall_ns of every rx_stall_every_ns (descheduled). All 0: the
     * engine reads each datagram the moment it arrives. */
    double rx_rate_bps;
    uint64_t rx_dgram_ns;
    size_t rx_queue_bytes;
    uint64_t rx_stall_every_ns, rx_stall_ns;
} simnet_config_t;

/* What a hook says about a datagram being sent. */
enum sim_verdict { SIM_PASS = 0, SIM_DROP = 1 };

/* Called for every datagram handed to simnet_send (before faults), with
 * the gathered bytes. */
typedef enum sim_verdict (*sim_hook_fn)(void *arg, unsigned src, unsigned dst,
                                        enum esp_channel ch, const uint8_t *buf, size_t len,
                                        uint64_t now);

/* Called after every event the loop handles (input or tick round); return
 * true to stop the loop. */
typedef bool (*sim_step_fn)(void *arg, uint64_t now);

typedef struct sim_link_stats {
    uint64_t sent, bytes, dropped, duplicated, reordered, corrupted, blackholed, tail_dropped;
    uint64_t delivered;
    uint64_t rx_overflow;      /* dropped at the receiver: its queue was full */
} sim_link_stats_t;

typedef struct simnet simnet_t;

void simnet_config_default(simnet_config_t *cfg, unsigned nodes, uint64_t seed);
simnet_t *simnet_create(const simnet_config_t *cfg);
void simnet_destroy(simnet_t *net);

void simnet_attach(simnet_t *net, unsigned node, esp_proto_t *engine);
/* Fault model of the link src -> dst (either may be -1: all). */
void simnet_set_fault(simnet_t *net, int src, int dst, const sim_fault_t *f);
/* Nothing to or from node passes from time at on. */
void simnet_blackhole_node(simnet_t *net, unsigned node, uint64_t at);
void simnet_set_hook(simnet_t *net, sim_hook_fn hook, void *arg);

/* The engines' ops->transmit calls this (at the current virtual time). */
void simnet_send(simnet_t *net, unsigned src, unsigned dst, enum esp_channel ch,
                 const struct iovec *iov, int iovcnt);
/* Put raw bytes on the wire to dst, arriving at time at (>= now). */
void simnet_inject(simnet_t *net, unsigned src, unsigned dst, const void *buf, size_t len,
                   uint64_t at);

/* Run until step returns true (step may be NULL) or the clock would pass
 * until (then the clock stops at until). Returns the time. */
uint64_t simnet_run(simnet_t *net, uint64_t until, sim_step_fn step, void *arg);

uint64_t simnet_now(const simnet_t *net);
size_t simnet_pending(const simnet_t *net);   /* datagrams on the wire */
const sim_link_stats_t *simnet_link_stats(const simnet_t *net, unsigned src, unsigned dst);
/* Sums over all links. */
void simnet_total_stats(const simnet_t *net, sim_link_stats_t *out);
uint64_t simnet_events(const simnet_t *net);
/* The PRNG the network uses (tests may draw from their own). */
uint64_t simnet_rand(uint64_t *state);

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * A deterministic simulated network for the ESP engine (esp_proto): N
 * engines on a virtual clock (ns). A datagram handed to simnet_send is
 * copied into an event queue (a binary heap by delivery time, ties in
 * insertion order) to arrive after the sender's serialisation (a transmit
 * queue per node and path at `bandwidth`), the channel's latency and
 * random jitter;
 * a per-link fault model from a seeded PRNG drops, duplicates, delays
 * (reorders) and corrupts datagrams, and a link or a node can be
 * blackholed from a given time. The run loop delivers each datagram with
 * esp_proto_input_via (the path it took) and calls esp_proto_tick on the
 * receiver after each input and on every engine at least every tick_ns.
 *
 * Between two nodes there may be several independent paths (cfg.paths,
 * up to SIMNET_MAX_PATHS): one NIC per path on each node, each with its own
 * transmit queue, bandwidth, latency, jitter and reordering
 * (simnet_set_path) and, per link, its own fault model and blackhole
 * window (simnet_set_fault_via). A datagram sent by path k arrives by path
 * k and is handed to the receiver as via k. Path 0 takes the top-level
 * figures of the config; by default there is one path.
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
#define SIMNET_MAX_PATHS 4
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
    unsigned paths;            /* independent paths between any two nodes (0: 1) */
    /* Path 0's figures, and every other path's until simnet_set_path: */
    uint64_t latency_ns;       /* data channel */
    uint64_t prio_latency_ns;  /* priority channel */
    uint64_t jitter_ns;        /* uniform extra delay 0..jitter (keeps a link in order) */
    double reorder_factor;     /* reordered datagrams: extra 0..factor x latency */
    double bandwidth_bps;      /* per sender, bits/s; 0: infinite */
    uint64_t queue_limit_ns;   /* tail drop when the sender's queue is longer; 0: none */
    /* The rest is per node, whatever the path: */
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
    /* With rx_stall_every_ns 0: one stall of rx_stall_ns from this time, of
     * node rx_stall_node only (a rank computing). */
    uint64_t rx_stall_at_ns;
    unsigned rx_stall_node;
    /* When a receiver has read its queue empty after arrivals were dropped
     * for want of room, tell its engine (esp_proto_rx_overflow), as the
     * BTL does when the kernel's drop count grew. */
    bool rx_report_drops;
    /* A reader that polls (the BTL's progress loop): what arrives is read
     * at the next multiple of rx_poll_ns, one path's socket after the
     * other (path 0's datagrams first), so a newer datagram by a lower
     * path is read before an older one by a higher path. 0: at once. */
    uint64_t rx_poll_ns;
} simnet_config_t;

/* One path's figures (the meaning of the config's fields of the same names;
 * the sender's transmit queue is per path: one NIC each). */
typedef struct simnet_path {
    uint64_t latency_ns, prio_latency_ns, jitter_ns;
    double reorder_factor;
    double bandwidth_bps;
    uint64_t queue_limit_ns;
} simnet_path_t;

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
    uint64_t delivered, delivered_bytes;   /* handed to the receiving engine */
    uint64_t rx_overflow;      /* dropped at the receiver: its queue was full */
} sim_link_stats_t;

typedef struct simnet simnet_t;

void simnet_config_default(simnet_config_t *cfg, unsigned nodes, uint64_t seed);
simnet_t *simnet_create(const simnet_config_t *cfg);
void simnet_destroy(simnet_t *net);

void simnet_attach(simnet_t *net, unsigned node, esp_proto_t *engine);
/* Path k's figures (before traffic; k < cfg.paths). */
void simnet_set_path(simnet_t *net, unsigned path, const simnet_path_t *pc);
const simnet_path_t *simnet_get_path(const simnet_t *net, unsigned path);
unsigned simnet_paths(const simnet_t *net);
/* Fault model of the link src -> dst (either may be -1: all), on every path. */
void simnet_set_fault(simnet_t *net, int src, int dst, const sim_fault_t *f);
/* ... on one path (-1: all). */
void simnet_set_fault_via(simnet_t *net, int src, int dst, int path, const sim_fault_t *f);
/* Nothing to or from node passes from time at on. */
void simnet_blackhole_node(simnet_t *net, unsigned node, uint64_t at);
void simnet_set_hook(simnet_t *net, sim_hook_fn hook, void *arg);

/* The engines' ops->transmit calls this (at the current virtual time), by
 * path 0, or by the path given. A path the network does not have is a
 * test bug: it aborts. */
void simnet_send(simnet_t *net, unsigned src, unsigned dst, enum esp_channel ch,
                 const struct iovec *iov, int iovcnt);
void simnet_send_via(simnet_t *net, unsigned src, unsigned dst, unsigned path,
                     enum esp_channel ch, const struct iovec *iov, int iovcnt);
/* The path of the datagram a hook is being called for. */
unsigned simnet_hook_path(const simnet_t *net);
/* Put raw bytes on the wire to dst (path 0), arriving at time at (>= now). */
void simnet_inject(simnet_t *net, unsigned src, unsigned dst, const void *buf, size_t len,
                   uint64_t at);

/* Run until step returns true (step may be NULL) or the clock would pass
 * until (then the clock stops at until). Returns the time. */
uint64_t simnet_run(simnet_t *net, uint64_t until, sim_step_fn step, void *arg);

uint64_t simnet_now(const simnet_t *net);
size_t simnet_pending(const simnet_t *net);   /* datagrams on the wire */
/* The link src -> dst, all paths together (valid until the next call), or
 * one path. */
const sim_link_stats_t *simnet_link_stats(const simnet_t *net, unsigned src, unsigned dst);
const sim_link_stats_t *simnet_path_stats(const simnet_t *net, unsigned src, unsigned dst,
                                          unsigned path);
/* Sums over all links and paths. */
void simnet_total_stats(const simnet_t *net, sim_link_stats_t *out);
uint64_t simnet_events(const simnet_t *net);
/* The PRNG the network uses (tests may draw from their own). */
uint64_t simnet_rand(uint64_t *state);

#endif

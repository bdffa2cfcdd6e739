/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* A deterministic simulated network for the ESP engine: see simnet.h. */
#include "simnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim_ev {
    uint64_t t, n;       /* delivery time, insertion number (ties) */
    uint8_t *buf;
    uint32_t len;
    uint16_t src, dst;
    uint8_t path;
    bool queued;         /* arrived, in the receiver's queue: read at t */
    bool polled;         /* arrived, waiting for the reader's poll at t */
} sim_ev_t;

#define NN SIMNET_MAX_NODES
#define NP SIMNET_MAX_PATHS

struct simnet {
    simnet_config_t cfg;
    simnet_path_t path[NP];
    esp_proto_t *eng[NN];
    sim_fault_t fault[NN][NN][NP];
    sim_link_stats_t st[NN][NN][NP];
    sim_link_stats_t link_sum[NN][NN];         /* simnet_link_stats' answers */
    uint64_t node_bh[NN];
    uint64_t tx_free[NN][NP];                  /* each path is a NIC of its own */
    uint64_t rx_free[NN];                      /* the receiver is busy until then */
    size_t rx_queued[NN];                      /* bytes in its queue (all paths) */
    uint64_t rx_dropped[NN], rx_told[NN];      /* overflow drops, and those reported */
    /* Jitter keeps each link's channel on a path in order (only `reorder`
     * reorders); paths of different delays overtake each other. */
    uint64_t last_arrival[NN][NN][NP][2];
    unsigned hook_path;                        /* of the datagram the hook sees */
    uint64_t rng;
    uint64_t now, next_tick, events, seqno;
    sim_ev_t *heap;
    size_t nheap, capheap;
    sim_hook_fn hook;
    void *hook_arg;
};

uint64_t simnet_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unit_rand(simnet_t *net)
{
    return (double) (simnet_rand(&net->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t rand_below(simnet_t *net, uint64_t n)
{
    return n == 0 ? 0 : simnet_rand(&net->rng) % n;
}

void simnet_config_default(simnet_config_t *cfg, unsigned nodes, uint64_t seed)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->nodes = nodes;
    cfg->seed = seed;
    cfg->latency_ns = 5000;
    cfg->prio_latency_ns = 4000;
    cfg->jitter_ns = 500;
    cfg->reorder_factor = 10;
    cfg->bandwidth_bps = 10e9;
    cfg->tick_ns = 20000;
}

simnet_t *simnet_create(const simnet_config_t *cfg)
{
    if (cfg->nodes == 0 || cfg->nodes > SIMNET_MAX_NODES) {
        return NULL;
    }
    simnet_t *net = calloc(1, sizeof(*net));
    if (net == NULL) {
        return NULL;
    }
    net->cfg = *cfg;
    if (net->cfg.tick_ns == 0) {
        net->cfg.tick_ns = 20000;
    }
    if (net->cfg.paths == 0) {
        net->cfg.paths = 1;
    }
    if (net->cfg.paths > NP) {
        free(net);
        return NULL;
    }
    net->rng = cfg->seed * 0x2545F4914F6CDD1Dull + 0x1234567;
    for (unsigned k = 0; k < NP; k++) {
        net->path[k] = (simnet_path_t){cfg->latency_ns, cfg->prio_latency_ns, cfg->jitter_ns,
                                       cfg->reorder_factor, cfg->bandwidth_bps,
                                       cfg->queue_limit_ns};
    }
    for (unsigned i = 0; i < NN; i++) {
        net->node_bh[i] = SIMNET_NEVER;
        for (unsigned j = 0; j < NN; j++) {
            for (unsigned k = 0; k < NP; k++) {
                net->fault[i][j][k].blackhole_at = SIMNET_NEVER;
            }
        }
    }
    net->next_tick = net->cfg.tick_ns;
    return net;
}

void simnet_destroy(simnet_t *net)
{
    if (net == NULL) {
        return;
    }
    for (size_t i = 0; i < net->nheap; i++) {
        free(net->heap[i].buf);
    }
    free(net->heap);
    free(net);
}

void simnet_attach(simnet_t *net, unsigned node, esp_proto_t *engine)
{
    net->eng[node] = engine;
}

void simnet_set_path(simnet_t *net, unsigned path, const simnet_path_t *pc)
{
    if (path >= net->cfg.paths) {
        fprintf(stderr, "simnet: no path %u (%u paths)\n", path, net->cfg.paths);
        abort();
    }
    net->path[path] = *pc;
}

const simnet_path_t *simnet_get_path(const simnet_t *net, unsigned path)
{
    return &net->path[path < NP ? path : 0];
}

unsigned simnet_paths(const simnet_t *net) { return net->cfg.paths; }

void simnet_set_fault_via(simnet_t *net, int src, int dst, int path, const sim_fault_t *f)
{
    for (unsigned i = 0; i < net->cfg.nodes; i++) {
        for (unsigned j = 0; j < net->cfg.nodes; j++) {
            for (unsigned k = 0; k < net->cfg.paths; k++) {
                if ((src < 0 || (unsigned) src == i) && (dst < 0 || (unsigned) dst == j)
                    && (path < 0 || (unsigned) path == k)) {
                    net->fault[i][j][k] = *f;
                }
            }
        }
    }
}

void simnet_set_fault(simnet_t *net, int src, int dst, const sim_fault_t *f)
{
    simnet_set_fault_via(net, src, dst, -1, f);
}

void simnet_blackhole_node(simnet_t *net, unsigned node, uint64_t at)
{
    net->node_bh[node] = at;
}

void simnet_set_hook(simnet_t *net, sim_hook_fn hook, void *arg)
{
    net->hook = hook;
    net->hook_arg = arg;
}

uint64_t simnet_now(const simnet_t *net) { return net->now; }
size_t simnet_pending(const simnet_t *net) { return net->nheap; }
uint64_t simnet_events(const simnet_t *net) { return net->events; }

const sim_link_stats_t *simnet_path_stats(const simnet_t *net, unsigned src, unsigned dst,
                                          unsigned path)
{
    return &net->st[src][dst][path < NP ? path : 0];
}

static void stats_add(sim_link_stats_t *out, const sim_link_stats_t *s)
{
    out->sent += s->sent;
    out->bytes += s->bytes;
    out->dropped += s->dropped;
    out->duplicated += s->duplicated;
    out->reordered += s->reordered;
    out->corrupted += s->corrupted;
    out->blackholed += s->blackholed;
    out->tail_dropped += s->tail_dropped;
    out->delivered += s->delivered;
    out->delivered_bytes += s->delivered_bytes;
    out->rx_overflow += s->rx_overflow;
}

const sim_link_stats_t *simnet_link_stats(const simnet_t *net, unsigned src, unsigned dst)
{
    /* The sum lives in the network (the answer is a pointer, as it was
     * before there were paths). */
    sim_link_stats_t *sum = &((simnet_t *) net)->link_sum[src][dst];
    memset(sum, 0, sizeof(*sum));
    for (unsigned k = 0; k < net->cfg.paths; k++) {
        stats_add(sum, &net->st[src][dst][k]);
    }
    return sum;
}

void simnet_total_stats(const simnet_t *net, sim_link_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < net->cfg.nodes; i++) {
        for (unsigned j = 0; j < net->cfg.nodes; j++) {
            for (unsigned k = 0; k < net->cfg.paths; k++) {
                stats_add(out, &net->st[i][j][k]);
            }
        }
    }
}

/* ------------------------------------------------------------ the heap */

static bool ev_before(const sim_ev_t *a, const sim_ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->n < b->n);
}

static void heap_push_ev(simnet_t *net, sim_ev_t ev)
{
    if (net->nheap == net->capheap) {
        net->capheap = net->capheap ? 2 * net->capheap : 1024;
        net->heap = realloc(net->heap, net->capheap * sizeof(*net->heap));
        if (net->heap == NULL) {
            fprintf(stderr, "simnet: out of memory\n");
            abort();
        }
    }
    ev.n = net->seqno++;
    size_t i = net->nheap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ev_before(&ev, &net->heap[parent])) {
            break;
        }
        net->heap[i] = net->heap[parent];
        i = parent;
    }
    net->heap[i] = ev;
}

static void heap_push(simnet_t *net, uint64_t t, unsigned src, unsigned dst, unsigned path,
                      uint8_t *buf, size_t len)
{
    heap_push_ev(net, (sim_ev_t){.t = t, .buf = buf, .len = (uint32_t) len, .src = (uint16_t) src,
                                 .dst = (uint16_t) dst, .path = (uint8_t) path});
}

static sim_ev_t heap_pop(simnet_t *net)
{
    sim_ev_t top = net->heap[0];
    sim_ev_t last = net->heap[--net->nheap];
    size_t n = net->nheap, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) {
            break;
        }
        if (c + 1 < n && ev_before(&net->heap[c + 1], &net->heap[c])) {
            c++;
        }
        if (!ev_before(&net->heap[c], &last)) {
            break;
        }
        net->heap[i] = net->heap[c];
        i = c;
    }
    if (n > 0) {
        net->heap[i] = last;
    }
    return top;
}

/* ------------------------------------------------------------- sending */

static bool blackholed(const simnet_t *net, unsigned src, unsigned dst, unsigned path,
                       uint64_t t)
{
    const sim_fault_t *f = &net->fault[src][dst][path];
    return net->node_bh[src] <= t || net->node_bh[dst] <= t
           || (f->blackhole_at <= t && (f->blackhole_for == 0 || t - f->blackhole_at < f->blackhole_for));
}

static void corrupt(simnet_t *net, uint8_t *buf, size_t len)
{
    if (len == 0) {
        return;
    }
    size_t at = rand_below(net, len);
    if (simnet_rand(&net->rng) & 1) {
        buf[at] ^= (uint8_t) (1u << rand_below(net, 8));
    } else {
        buf[at] ^= (uint8_t) (1 + rand_below(net, 255));   /* a different byte */
    }
}

/* Arrival time of a datagram leaving at depart: latency and jitter (in
 * order per link, path and channel), and now and then a reordering delay. */
static uint64_t arrival(simnet_t *net, unsigned src, unsigned dst, unsigned path,
                        const sim_fault_t *f, sim_link_stats_t *st, enum esp_channel ch,
                        uint64_t depart)
{
    const simnet_path_t *pc = &net->path[path];
    uint64_t lat = ch == ESP_CH_PRIO ? pc->prio_latency_ns : pc->latency_ns;
    uint64_t t = depart + lat + rand_below(net, pc->jitter_ns + 1);
    if (f->reorder > 0 && unit_rand(net) < f->reorder) {
        st->reordered++;
        return t + (uint64_t) (unit_rand(net) * pc->reorder_factor * (double) pc->latency_ns);
    }
    uint64_t *last = &net->last_arrival[src][dst][path][ch == ESP_CH_PRIO];
    if (t < *last) {
        t = *last;
    }
    *last = t;
    return t;
}

static void schedule(simnet_t *net, unsigned src, unsigned dst, unsigned path,
                     enum esp_channel ch, uint8_t *buf, size_t len)
{
    const simnet_path_t *pc = &net->path[path];
    const sim_fault_t *f = &net->fault[src][dst][path];
    sim_link_stats_t *st = &net->st[src][dst][path];
    st->sent++;
    st->bytes += len;
    if (blackholed(net, src, dst, path, net->now)) {
        st->blackholed++;
        free(buf);
        return;
    }
    /* Serialisation on the sender's link of this path, in order. */
    uint64_t depart = net->now;
    if (pc->bandwidth_bps > 0) {
        uint64_t *tx_free = &net->tx_free[src][path];
        uint64_t start = *tx_free > net->now ? *tx_free : net->now;
        if (pc->queue_limit_ns != 0 && start - net->now > pc->queue_limit_ns) {
            st->tail_dropped++;
            free(buf);
            return;
        }
        uint64_t ser = (uint64_t) ((double) len * 8e9 / pc->bandwidth_bps);
        *tx_free = start + ser;
        depart = start + ser;
    }
    if (f->drop > 0 && unit_rand(net) < f->drop) {
        st->dropped++;
        free(buf);
        return;
    }
    if (f->corrupt > 0 && unit_rand(net) < f->corrupt) {
        corrupt(net, buf, len);
        st->corrupted++;
    }
    if (f->dup > 0 && unit_rand(net) < f->dup) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        st->duplicated++;
        heap_push(net, arrival(net, src, dst, path, f, st, ch, depart), src, dst, path, copy, len);
    }
    heap_push(net, arrival(net, src, dst, path, f, st, ch, depart), src, dst, path, buf, len);
}

void simnet_send(simnet_t *net, unsigned src, unsigned dst, enum esp_channel ch,
                 const struct iovec *iov, int iovcnt)
{
    simnet_send_via(net, src, dst, 0, ch, iov, iovcnt);
}

unsigned simnet_hook_path(const simnet_t *net) { return net->hook_path; }

void simnet_send_via(simnet_t *net, unsigned src, unsigned dst, unsigned path,
                     enum esp_channel ch, const struct iovec *iov, int iovcnt)
{
    if (path >= net->cfg.paths) {
        fprintf(stderr, "simnet: %u -> %u by path %u, of %u\n", src, dst, path, net->cfg.paths);
        abort();
    }
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
    }
    uint8_t *buf = malloc(len ? len : 1);
    if (buf == NULL) {
        fprintf(stderr, "simnet: out of memory\n");
        abort();
    }
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > 0) {
            memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
        }
        off += iov[i].iov_len;
    }
    net->hook_path = path;
    if (net->hook != NULL
        && net->hook(net->hook_arg, src, dst, ch, buf, len, net->now) == SIM_DROP) {
        net->st[src][dst][path].sent++;
        net->st[src][dst][path].dropped++;
        free(buf);
        return;
    }
    schedule(net, src, dst, path, ch, buf, len);
}

void simnet_inject(simnet_t *net, unsigned src, unsigned dst, const void *buf, size_t len,
                   uint64_t at)
{
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    heap_push(net, at < net->now ? net->now : at, src, dst, 0, copy, len);
}

/* ------------------------------------------------------- slow receivers */

static bool rx_model(const simnet_t *net)
{
    return net->cfg.rx_rate_bps > 0 || net->cfg.rx_dgram_ns > 0 || net->cfg.rx_stall_ns > 0;
}


/* The end of the stall t falls in, or t when node runs then. */
static uint64_t rx_awake(const simnet_t *net, unsigned node, uint64_t t)
{
    uint64_t every = net->cfg.rx_stall_every_ns, stall = net->cfg.rx_stall_ns;
    uint64_t at = net->cfg.rx_stall_at_ns;
    if (every == 0 && stall != 0 && at != 0) {
        return node == net->cfg.rx_stall_node && t >= at && t < at + stall ? at + stall : t;
    }
    if (every == 0 || stall == 0 || t % every >= stall) {
        return t;
    }
    return t - t % every + stall;
}

/* A datagram reached a slow receiver: queue it to be read in turn, or drop
 * it when the queue is full. */
static void rx_enqueue(simnet_t *net, sim_ev_t ev)
{
    size_t limit = net->cfg.rx_queue_bytes;
    if (limit != 0 && net->rx_queued[ev.dst] + ev.len > limit) {
        net->st[ev.src][ev.dst][ev.path].rx_overflow++;
        net->rx_dropped[ev.dst]++;
        free(ev.buf);
        return;
    }
    net->rx_queued[ev.dst] += ev.len;
    uint64_t start = rx_awake(net, ev.dst, ev.t > net->rx_free[ev.dst] ? ev.t : net->rx_free[ev.dst]);
    uint64_t cost = net->cfg.rx_dgram_ns;
    if (net->cfg.rx_rate_bps > 0) {
        cost += (uint64_t) ((double) ev.len * 8e9 / net->cfg.rx_rate_bps);
    }
    net->rx_free[ev.dst] = start + cost;
    ev.t = start + cost;
    ev.queued = true;
    heap_push_ev(net, ev);
}

/* ------------------------------------------------------------ the loop */

uint64_t simnet_run(simnet_t *net, uint64_t until, sim_step_fn step, void *arg)
{
    for (;;) {
        uint64_t tev = net->nheap ? net->heap[0].t : SIMNET_NEVER;
        if (net->next_tick <= tev) {
            if (net->next_tick > until) {
                break;
            }
            net->now = net->next_tick;
            net->next_tick += net->cfg.tick_ns;
            for (unsigned i = 0; i < net->cfg.nodes; i++) {
                /* A descheduled receiver runs no timers either. */
                if (net->eng[i] != NULL && rx_awake(net, i, net->now) == net->now) {
                    esp_proto_tick(net->eng[i], net->now);
                }
            }
        } else {
            if (tev > until) {
                break;
            }
            sim_ev_t ev = heap_pop(net);
            net->now = ev.t;
            net->events++;
            sim_link_stats_t *st = &net->st[ev.src][ev.dst][ev.path];
            if (blackholed(net, ev.src, ev.dst, ev.path, ev.t)) {
                st->blackholed++;
                free(ev.buf);
                continue;
            }
            if (rx_model(net) && !ev.queued) {
                rx_enqueue(net, ev);
                continue;
            }
            if (net->cfg.rx_poll_ns > 0 && !ev.polled) {
                /* read at the next poll, after the lower paths' sockets */
                uint64_t poll = net->cfg.rx_poll_ns;
                ev.t = (ev.t / poll + 1) * poll + ev.path;
                ev.polled = true;
                heap_push_ev(net, ev);
                continue;
            }
            if (ev.queued) {
                net->rx_queued[ev.dst] -= ev.len;
            }
            st->delivered++;
            st->delivered_bytes += ev.len;
            esp_proto_t *e = net->eng[ev.dst];
            if (e != NULL) {
                esp_proto_input_via(e, ev.path, ev.buf, ev.len, net->now);
                if (ev.queued && net->cfg.rx_report_drops && net->rx_queued[ev.dst] == 0
                    && net->rx_dropped[ev.dst] > net->rx_told[ev.dst]) {
                    net->rx_told[ev.dst] = net->rx_dropped[ev.dst];
                    esp_proto_rx_overflow(e, net->now);
                }
                esp_proto_tick(e, net->now);
            }
            free(ev.buf);
        }
        if (step != NULL && step(arg, net->now)) {
            return net->now;
        }
    }
    if (until != SIMNET_NEVER && net->now < until) {
        net->now = until;
    }
    return net->now;
}

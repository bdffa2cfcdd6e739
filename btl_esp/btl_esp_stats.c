/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Counters a tuner asks about: printed per process at finalize under
 * btl_esp_verbose, and readable while the job runs as MPI_T performance
 * variables (btl_esp_<name>). Meanings in docs/counters.md.
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "ebtl_stats.h"

#include <opal/mca/base/mca_base_pvar.h>

typedef struct esp_counter {
    ebtl_counter_t id;      /* name and help */
    size_t offset;          /* in esp_proto_stats_t */
} esp_counter_t;

#define C(field, help) {{#field, help}, offsetof(esp_proto_stats_t, field)}
static const esp_counter_t counters[] = {
    C(segs_tx, "Data segments sent, retransmissions included"),
    C(segs_rx, "Data segments received and accepted"),
    C(bytes_tx, "Payload bytes sent, retransmissions included"),
    C(bytes_rx, "Payload bytes received and accepted"),
    C(acks_tx, "Standalone ACK datagrams sent (others ride on data)"),
    C(acks_rx, "Standalone ACK datagrams received"),
    C(retransmits, "Segments sent again (timeouts and fast retransmits)"),
    C(fast_retransmits, "Segments sent again because later ones were acknowledged first"),
    C(timeouts, "Retransmit timer expiries that sent a segment again"),
    C(spurious_retransmits, "Retransmissions the receiver reported as duplicates: the segment was not lost"),
    C(probes, "Segments sent again to make the peer speak: the last of a burst unanswered for two round trips (tail probe), or the oldest, which the peer had reported, when the ACK covering it was lost"),
    C(duplicates, "Data segments received again and dropped"),
    C(out_of_window, "Data segments too far ahead of the receive window, dropped"),
    C(stray, "Datagrams from another job, an earlier run or a stranger, dropped"),
    C(corrupt, "Datagrams failing the CRC-32C check, dropped"),
    C(malformed, "Datagrams failing the format checks, dropped"),
    C(put_rejected, "PUT segments outside any registered region, dropped"),
    C(held, "Out-of-order segments kept until the gap before them filled"),
    C(hold_dropped, "Out-of-order segments dropped for lack of holding room"),
    C(window_stalls, "Times a sender waited for the send or congestion window"),
    C(grant_stalls, "Times a sender waited for the receiver's grant (the receiver drains slower)"),
    C(random_losses, "Losses seen while the round trip was short: random loss, no window cut"),
    C(connects, "Connections opened (HELLO handshakes started)"),
    C(peers_failed, "Peers declared failed"),
    C(path_down, "Paths declared dead: data out on them went unanswered while another path delivered"),
    C(path_up, "Dead paths that answered a probe and carry data again"),
    C(failover_resent, "Segments a dead path had out, sent again by another path"),
    C(loss_reports_tx, "ACKs telling peers that the kernel dropped datagrams here (flag LOSS)"),
    C(loss_report_resends, "Segments sent again because the peer reported its kernel dropped them"),
    C(compact_tx, "Data segments sent as compact pieces (20-byte header)"),
    C(put_released, "PUTs completed as soon as sent, their unacknowledged bytes copied"),
    C(pace_waits, "Times new data waited for its pace (btl_esp_pace: the grant spread over the "
                  "round trip)"),
};
#undef C
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

/* The engine's counters of module m (0s without one), in table order. */
static void collect_module(const mca_btl_esp_module_t *m, uint64_t *v)
{
    const esp_proto_stats_t *st = m != NULL && m->proto != NULL ? esp_proto_stats(m->proto) : NULL;
    for (size_t i = 0; i < NCOUNTERS; i++) {
        v[i] = st ? *(const uint64_t *) ((const char *) st + counters[i].offset) : 0;
    }
}

static void collect(uint64_t *v)
{
    collect_module(mca_btl_esp_component.module, v);
}

static const ebtl_stats_t stats = {counters, NCOUNTERS, sizeof(counters[0]), collect};

/* ------------------------------------------------------------- per NIC */

/* What every peer's paths by one of our NICs carried (module NIC order,
 * the order the finalize lines name them in). */
typedef struct nic_totals {
    uint64_t segs_tx, bytes_tx, segs_rx, bytes_rx, path_down, path_up, paths_dead;
    uint64_t kernel_drops;
} nic_totals_t;

typedef struct nic_counter {
    ebtl_counter_t id;
    size_t offset;          /* in nic_totals_t */
    bool level;             /* a state now, not a count */
} nic_counter_t;

#define N(field, level, help) {{"nic_" #field, help}, offsetof(nic_totals_t, field), level}
static const nic_counter_t nic_counters[] = {
    N(segs_tx, false, "Per NIC: data segments sent by paths through it, resends included"),
    N(bytes_tx, false, "Per NIC: payload bytes sent by paths through it, resends included"),
    N(segs_rx, false, "Per NIC: data segments accepted that came in through it"),
    N(bytes_rx, false, "Per NIC: payload bytes accepted that came in through it"),
    N(path_down, false, "Per NIC: times a path through it was declared dead"),
    N(path_up, false, "Per NIC: times a dead path through it answered and carried data again"),
    N(paths_dead, true, "Per NIC: paths through it to connected peers that are dead now"),
    N(kernel_drops, false, "Per NIC: datagrams for it the kernel dropped because a receive "
                           "buffer was full (0 where the wire cannot tell: ofi)"),
};
#undef N
#define NNIC_COUNTERS (sizeof(nic_counters) / sizeof(nic_counters[0]))

/* t[0 .. m->num_nics): each NIC's totals over every peer's paths. */
static void nic_collect(const mca_btl_esp_module_t *m, nic_totals_t *t)
{
    memset(t, 0, m->num_nics * sizeof(*t));
    for (size_t i = 0; i < m->num_nics && m->wire->rx_drops != NULL; i++) {
        t[i].kernel_drops = m->wire->rx_drops(&m->nics[i]);
    }
    if (m->proto == NULL) {
        return;
    }
    for (uint32_t p = 0; p < m->num_peers; p++) {
        esp_peer_info_t info;
        esp_proto_peer_info(m->proto, p, &info);
        esp_path_info_t pi;
        for (unsigned k = 0; k < esp_proto_path_info(m->proto, p, k, &pi); k++) {
            if (pi.via >= m->num_nics) {
                continue;
            }
            nic_totals_t *n = &t[pi.via];
            n->segs_tx += pi.segs_tx;
            n->bytes_tx += pi.bytes_tx;
            n->segs_rx += pi.segs_rx;
            n->bytes_rx += pi.bytes_rx;
            n->path_down += pi.downs;
            n->path_up += pi.ups;
            n->paths_dead += info.connected && !pi.up;
        }
    }
}

/* An MPI_T handle holds one value per NIC. */
static int nic_pvar_notify(struct mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj,
                           int *count)
{
    (void) pvar;
    (void) obj;
    if (event == MCA_BASE_PVAR_HANDLE_BIND) {
        const mca_btl_esp_module_t *m = mca_btl_esp_component.module;
        *count = m != NULL && m->num_nics > 0 ? (int) m->num_nics : 1;
    }
    return OPAL_SUCCESS;
}

static int nic_pvar_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const nic_counter_t *c = pvar->ctx;
    const mca_btl_esp_module_t *m = mca_btl_esp_component.module;
    unsigned long long *out = value;
    (void) obj;
    if (m == NULL || m->num_nics == 0) {
        out[0] = 0;
        return OPAL_SUCCESS;
    }
    nic_totals_t t[m->num_nics];
    nic_collect(m, t);
    for (size_t i = 0; i < m->num_nics; i++) {
        out[i] = *(const uint64_t *) ((const char *) &t[i] + c->offset);
    }
    return OPAL_SUCCESS;
}

void esp_stats_register_pvars(void)
{
    static bool done;
    mca_base_component_t *comp = &mca_btl_esp_component.base.super.btl_version;
    ebtl_stats_register_pvars(comp, &stats);
    if (done) {
        return;
    }
    done = true;
    for (size_t i = 0; i < NNIC_COUNTERS; i++) {
        const nic_counter_t *c = &nic_counters[i];
        (void) mca_base_component_pvar_register(
            comp, c->id.name, c->id.help, OPAL_INFO_LVL_4,
            c->level ? MCA_BASE_PVAR_CLASS_LEVEL : MCA_BASE_PVAR_CLASS_COUNTER,
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
            MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, nic_pvar_read, NULL,
            nic_pvar_notify, (void *) c);
    }
}

/* One line per NIC: what its paths carried, and how often they failed. */
static void nic_report(const mca_btl_esp_module_t *m, unsigned rank)
{
    if (m->num_nics == 0) {
        return;
    }
    nic_totals_t t[m->num_nics];
    nic_collect(m, t);
    for (size_t i = 0; i < m->num_nics; i++) {
        char line[512];
        size_t len = 0;
        for (size_t k = 0; k < NNIC_COUNTERS && len < sizeof(line); k++) {
            len += (size_t) snprintf(line + len, sizeof(line) - len, " %s=%llu",
                                     nic_counters[k].id.name + 4,
                                     (unsigned long long) *(const uint64_t *) ((const char *) &t[i]
                                                                 + nic_counters[k].offset));
        }
        opal_output(0, "btl esp stats rank %u: nic %zu (%s%s)%s", rank, i, m->nics[i].iface.name,
                    m->nics[i].place == EBTL_NIC_FAR ? ", far: fallback only"
                    : m->nics[i].place == EBTL_NIC_NEAR ? ", near" : "", line);
    }
}

void esp_stats_report(mca_btl_esp_module_t *m)
{
    if (mca_btl_esp_component.verbose < 1 || m->proto == NULL) {
        return;
    }
    uint64_t v[NCOUNTERS];
    collect_module(m, v);
    ebtl_stats_print("esp", &stats, v, 0, NCOUNTERS, NULL);
    unsigned rank = OPAL_PROC_MY_NAME.vpid;

    /* Round trip and memory per peer that saw traffic. */
    uint64_t srtt_sum = 0;
    size_t connected = 0, mem = 0;
    for (uint32_t p = 0; p < m->num_peers; p++) {
        esp_peer_info_t info;
        esp_proto_peer_info(m->proto, p, &info);
        mem += info.state_bytes;
        if (info.connected) {
            connected++;
            srtt_sum += info.srtt_ns;
            if (mca_btl_esp_component.verbose >= 2) {
                opal_output(0, "btl esp stats rank %u: peer %u srtt_us=%.1f min_rtt_us=%.1f "
                            "rto_us=%.1f in_flight=%u cwnd=%zu ssthresh=%zu peer_wnd=%zu", rank,
                            p, info.srtt_ns / 1e3, info.min_rtt_ns / 1e3, info.rto_ns / 1e3,
                            info.in_flight, info.cwnd, info.ssthresh, info.peer_wnd);
                esp_path_info_t pi;
                const mca_btl_esp_endpoint_t *ep = opal_pointer_array_get_item(&m->peers, (int) p);
                for (unsigned k = 0; k < esp_proto_path_info(m->proto, p, k, &pi); k++) {
                    bool routed = ep != NULL && k < ep->npaths && ep->path[k].routed;
                    opal_output(0, "btl esp stats rank %u: peer %u path %u (%s%s%s) %s srtt_us=%.1f "
                                "min_rtt_us=%.1f cwnd=%zu flight=%zu segs_tx=%llu bytes_tx=%llu "
                                "segs_rx=%llu bytes_rx=%llu downs=%llu ups=%llu", rank, p, k,
                                m->nics[pi.via].iface.name, routed ? " routed" : "",
                                pi.standby ? " standby" : "",
                                pi.up ? "up" : "down", pi.srtt_ns / 1e3, pi.min_rtt_ns / 1e3,
                                pi.cwnd, pi.flight, (unsigned long long) pi.segs_tx,
                                (unsigned long long) pi.bytes_tx, (unsigned long long) pi.segs_rx,
                                (unsigned long long) pi.bytes_rx, (unsigned long long) pi.downs,
                                (unsigned long long) pi.ups);
                }
            }
        }
    }
    opal_output(0, "btl esp stats rank %u: peers=%u connected=%zu srtt_avg_us=%.1f "
                "peer_state_bytes=%zu idle_peer_heap_bytes=%zu cpu_wait_us=%.1f "
                "busy_yields=%llu runnable=%.1f", rank,
                m->num_peers, connected, connected ? (double) srtt_sum / connected / 1e3 : 0.0, mem,
                m->base.add_procs_peers ? m->base.add_procs_heap / m->base.add_procs_peers : 0,
                (double) m->cpu_wait_ns / 1e3, (unsigned long long) m->yield.yields,
                m->yield.runnable_x16 / 16.0);

    nic_report(m, rank);

    /* The wire: datagrams, GSO sends and GRO reads, kernel refusals, the
     * test-only fault layer, and this process's CPU time (per MB moved, the
     * per-datagram cost). */
    ebtl_dgram_stats_t w = {0};
    ebtl_fault_stats_t faults = {0};
    bool gso = false, gro = false;
    for (size_t i = 0; i < m->num_nics; i++) {
        m->wire->stats(&m->nics[i], &w, &faults, &gso, &gro);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        memset(&ru, 0, sizeof(ru));
    }
    opal_output(0, "btl esp stats rank %u: wire=%s tx_datagrams=%llu tx_gso=%llu tx_gso_refused=%llu "
                "tx_errors=%llu rx_datagrams=%llu rx_gro=%llu rx_truncated=%llu "
                "rx_kernel_drops=%llu gso=%s gro=%s cpu_user_s=%.3f cpu_sys_s=%.3f", rank,
                m->wire->name, (unsigned long long) w.tx_datagrams, (unsigned long long) w.tx_gso,
                (unsigned long long) w.tx_gso_refused, (unsigned long long) w.tx_errors,
                (unsigned long long) w.rx_datagrams, (unsigned long long) w.rx_gro,
                (unsigned long long) w.rx_truncated, (unsigned long long) w.rx_kernel_drops,
                gso ? "on" : "off", gro ? "on" : "off",
                ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
                ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    esp_wire_eth_report(m, rank);
    char fline[256];
    opal_output(0, "btl esp stats rank %u: %s", rank,
                ebtl_fault_stats_format(&faults, fline, sizeof(fline)));
    opal_output(0, "btl esp stats rank %u: %s", rank,
                ebtl_thread_format(&mca_btl_esp_component.base.thread, fline, sizeof(fline)));
}

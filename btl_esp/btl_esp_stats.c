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

#include <stddef.h>
#include <string.h>
#include <sys/resource.h>

#include "ebtl_stats.h"

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

void esp_stats_register_pvars(void)
{
    ebtl_stats_register_pvars(&mca_btl_esp_component.base.super.btl_version, &stats);
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
                    opal_output(0, "btl esp stats rank %u: peer %u path %u (%s%s) %s srtt_us=%.1f "
                                "min_rtt_us=%.1f cwnd=%zu flight=%zu segs_tx=%llu bytes_tx=%llu "
                                "downs=%llu", rank, p, k, m->nics[pi.via].iface.name,
                                routed ? " routed" : "",
                                pi.up ? "up" : "down", pi.srtt_ns / 1e3, pi.min_rtt_ns / 1e3,
                                pi.cwnd, pi.flight, (unsigned long long) pi.segs_tx,
                                (unsigned long long) pi.bytes_tx, (unsigned long long) pi.downs);
                }
            }
        }
    }
    opal_output(0, "btl esp stats rank %u: peers=%u connected=%zu srtt_avg_us=%.1f "
                "peer_state_bytes=%zu idle_peer_heap_bytes=%zu", rank, m->num_peers, connected,
                connected ? (double) srtt_sum / connected / 1e3 : 0.0, mem,
                m->base.add_procs_peers ? m->base.add_procs_heap / m->base.add_procs_peers : 0);

    /* The wire: datagrams, GSO sends and GRO reads, kernel refusals, the
     * test-only fault layer, and this process's CPU time (per MB moved, the
     * per-datagram cost). */
    ebtl_dgram_stats_t w = {0};
    ebtl_fault_stats_t faults = {0};
    bool gso = false, gro = false;
    for (size_t i = 0; i < m->num_nics; i++) {
        for (int ch = 0; ch < 2; ch++) {
            const ebtl_dgram_sock_t *s = &m->nics[i].sock[ch];
            w.tx_datagrams += s->stats.tx_datagrams;
            w.tx_gso += s->stats.tx_gso;
            w.tx_gso_refused += s->stats.tx_gso_refused;
            w.tx_errors += s->stats.tx_errors;
            w.rx_datagrams += s->stats.rx_datagrams;
            w.rx_gro += s->stats.rx_gro;
            w.rx_truncated += s->stats.rx_truncated;
            gso |= ch == ESP_CH_DATA && s->gso;
            gro |= ch == ESP_CH_DATA && s->gro;
            ebtl_fault_stats_add(&faults, m->nics[i].sock[ch].fault);
        }
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        memset(&ru, 0, sizeof(ru));
    }
    opal_output(0, "btl esp stats rank %u: tx_datagrams=%llu tx_gso=%llu tx_gso_refused=%llu "
                "tx_errors=%llu rx_datagrams=%llu rx_gro=%llu rx_truncated=%llu gso=%s gro=%s "
                "cpu_user_s=%.3f cpu_sys_s=%.3f", rank,
                (unsigned long long) w.tx_datagrams, (unsigned long long) w.tx_gso,
                (unsigned long long) w.tx_gso_refused, (unsigned long long) w.tx_errors,
                (unsigned long long) w.rx_datagrams, (unsigned long long) w.rx_gro,
                (unsigned long long) w.rx_truncated, gso ? "on" : "off", gro ? "on" : "off",
                ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
                ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    char fline[256];
    opal_output(0, "btl esp stats rank %u: %s", rank,
                ebtl_fault_stats_format(&faults, fline, sizeof(fline)));
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the path logic under one conn-mode association
 * (btl_sctp/btl_sctp_paths.c): the shares links of equal and unequal rates
 * get from a sender that keeps them busy (the NICs drained at their rates
 * by a simulated clock, their queues measured as the mode measures them),
 * which paths are probed and declared down, and the probe datagrams'
 * parser fed every truncation and foreign bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../btl_sctp/btl_sctp_paths.h"
#include "unit.h"

#define MS 1000000ull
#define PKT 1452u

/* Two paths, path k on NIC k. */
static void two_paths(bsctp_path_t p[2], bsctp_nic_load_t nics[2])
{
    memset(p, 0, 2 * sizeof(*p));
    memset(nics, 0, 2 * sizeof(*nics));
    p[0].nic = 0;
    p[1].nic = 1;
}

/* A sender keeping `window` bytes queued over both NICs for `ms`, the NICs
 * draining rate[k] bytes/s, looked at every 100 us. Returns the share of
 * bytes path 0 carried, in percent; *reorder: packets that arrived before
 * one sent earlier (a queue's wait as arrival time). */
static double run_shares(const uint64_t rate[2], uint64_t window, unsigned ms, unsigned *reorder)
{
    bsctp_path_t p[2];
    bsctp_nic_load_t nics[2];
    two_paths(p, nics);
    double q[2] = {0, 0};   /* the true kernel queues */
    uint64_t now = 1 * MS;
    double last_arrival = 0;
    *reorder = 0;
    for (uint64_t t = 0; t < ms * 10ull; t++) {
        now += 100000;
        for (int k = 0; k < 2; k++) {
            q[k] -= (double) rate[k] * 1e-4;
            if (q[k] < 0) {
                q[k] = 0;
            }
            bsctp_nic_look(&nics[k], (uint64_t) q[k], now);
        }
        while (q[0] + q[1] + PKT <= (double) window) {
            int k = bsctp_paths_pick(p, 2, nics, PKT);
            bsctp_paths_sent(p, k, &nics[k], PKT, now);
            q[k] += PKT;
            double arrival = (double) now + q[k] / (double) rate[k] * 1e9;
            if (arrival + 20000 < last_arrival && t >= 1000) {   /* after 100 ms */
                (*reorder)++;
            }
            if (arrival > last_arrival) {
                last_arrival = arrival;
            }
        }
    }
    return 100.0 * (double) p[0].tx_bytes / (double) (p[0].tx_bytes + p[1].tx_bytes);
}

static void test_equal_links_share_equally(void)
{
    const uint64_t rate[2] = {125000000, 125000000};
    unsigned reorder;
    double share = run_shares(rate, 256 * 1024, 200, &reorder);
    printf("    1:1 -> %.1f %% on path 0, %u packets overtaken\n", share, reorder);
    CHECK(share > 47 && share < 53);
    CHECK(reorder == 0);
}

static void test_unequal_links_share_by_rate(void)
{
    const uint64_t rate[2] = {125000000, 12500000};   /* 1 Gbit/s + 100 Mbit/s */
    unsigned reorder;
    double share = run_shares(rate, 256 * 1024, 500, &reorder);
    printf("    10:1 -> %.1f %% on path 0 (rate share 90.9 %%), %u packets overtaken\n", share,
           reorder);
    CHECK(share > 88 && share < 94);
    CHECK(reorder < 10);
}

static void test_rate_measured_while_backlogged(void)
{
    bsctp_nic_load_t n;
    memset(&n, 0, sizeof(n));
    bsctp_nic_look(&n, 0, 1 * MS);
    n.queued += 100000;
    n.sent_since += 100000;
    bsctp_nic_look(&n, 100000, 2 * MS);   /* idle before: no sample */
    CHECK(n.rate == 0);
    n.queued += 50000;
    n.sent_since += 50000;
    bsctp_nic_look(&n, 25000, 3 * MS);    /* 125000 bytes left in 1 ms */
    CHECK(n.rate == 125000000);
    bsctp_nic_look(&n, 25000, 3 * MS + 1000);   /* too soon: the queue only */
    CHECK(n.rate == 125000000 && n.queued == 25000);
    bsctp_nic_look(&n, 0, 4 * MS);        /* drained: no sample */
    CHECK(n.rate == 125000000 && n.queued == 0);
}

static void test_small_packets_take_the_emptier_path(void)
{
    bsctp_path_t p[2];
    bsctp_nic_load_t nics[2];
    two_paths(p, nics);
    nics[0].rate = nics[1].rate = 125000000;
    nics[0].queued = 200000;
    CHECK(bsctp_paths_pick(p, 2, nics, 60) == 1);
    nics[1].queued = 300000;
    CHECK(bsctp_paths_pick(p, 2, nics, 60) == 0);
    /* A slow link with a short queue still waits longer. */
    nics[1].rate = 1250000;
    nics[1].queued = 20000;
    CHECK(bsctp_paths_pick(p, 2, nics, 60) == 0);
}

static void test_down_path_not_picked(void)
{
    bsctp_path_t p[2];
    bsctp_nic_load_t nics[2];
    two_paths(p, nics);
    nics[1].queued = 1 << 20;
    p[0].down = true;
    CHECK(bsctp_paths_pick(p, 2, nics, PKT) == 1);
    p[1].down = true;
    p[0].heard_ns = 5;
    p[1].heard_ns = 9;
    CHECK(bsctp_paths_pick(p, 2, nics, PKT) == 1);   /* all down: heard last */
}

static void test_silent_path_probed_then_down_then_back(void)
{
    bsctp_path_t p[2];
    bsctp_nic_load_t nics[2];
    bool probe[BSCTP_MAX_PATHS];
    two_paths(p, nics);
    uint64_t t = 100 * MS;
    for (int k = 0; k < 2; k++) {
        bsctp_paths_sent(p, k, &nics[k], PKT, t);
        bsctp_paths_heard(p, k, PKT, t);
    }
    int probes1 = 0, downs = 0;
    uint64_t down_at = 0;
    for (uint64_t dt = 0; dt <= 60 * MS; dt += MS) {
        uint64_t now = t + dt;
        bsctp_paths_sent(p, 1, &nics[1], PKT, now);   /* path 1 carries, never hears */
        bsctp_paths_sent(p, 0, &nics[0], PKT, now);
        bsctp_paths_heard(p, 0, 60, now);              /* path 0 hears */
        int d = bsctp_paths_tick(p, 2, now, probe);
        CHECK(!probe[0]);
        probes1 += probe[1];
        if (d > 0 && down_at == 0) {
            down_at = dt;
        }
        downs += d;
    }
    printf("    path 1 down after %llu ms of silence, %d probes\n",
           (unsigned long long) (down_at / MS), probes1);
    CHECK(downs == 1 && p[1].down && !p[0].down);
    CHECK(down_at >= BSCTP_DEAD_AFTER_NS && down_at <= BSCTP_DEAD_AFTER_NS + 2 * MS);
    CHECK(probes1 >= 2);
    CHECK(bsctp_paths_pick(p, 2, nics, PKT) == 0);
    /* Down: probed every BSCTP_PROBE_DOWN_NS, back with the first answer. */
    uint64_t now = t + 61 * MS;
    bsctp_paths_tick(p, 2, now, probe);
    CHECK(!probe[1]);
    bsctp_paths_tick(p, 2, now + BSCTP_PROBE_DOWN_NS, probe);
    CHECK(probe[1]);
    CHECK(bsctp_paths_heard(p, 1, BSCTP_PROBE_LEN, now + BSCTP_PROBE_DOWN_NS + MS));
    CHECK(!p[1].down && p[1].ups == 1);
}

/* A standby path carries nothing while the main one lives, however long
 * the main NIC's queue; it is probed once the main path goes silent while
 * carrying data, and its answers make the main path down: then it carries. */
static void test_standby_path(void)
{
    bsctp_path_t p[2];
    bsctp_nic_load_t nics[2];
    bool probe[BSCTP_MAX_PATHS];
    two_paths(p, nics);
    p[1].standby = true;
    nics[0].queued = 4u << 20;   /* the main NIC backlogged, the standby empty */
    CHECK(bsctp_paths_pick(p, 2, nics, PKT) == 0);
    uint64_t t = 100 * MS;
    int standby_probes = 0;
    for (uint64_t dt = 0; dt <= 20 * MS; dt += MS) {   /* main path hears: no probe */
        bsctp_paths_sent(p, 0, &nics[0], PKT, t + dt);
        bsctp_paths_heard(p, 0, 60, t + dt);
        bsctp_paths_tick(p, 2, t + dt, probe);
        standby_probes += probe[1];
    }
    CHECK(standby_probes == 0);
    t += 20 * MS;
    uint64_t down_at = 0, first_probe = 0;
    for (uint64_t dt = MS; dt <= 60 * MS && down_at == 0; dt += MS) {   /* main path silent */
        uint64_t now = t + dt;
        bsctp_paths_sent(p, 0, &nics[0], PKT, now);
        if (bsctp_paths_tick(p, 2, now, probe) > 0) {
            down_at = dt;
        }
        if (probe[1]) {
            first_probe = first_probe ? first_probe : dt;
            bsctp_paths_heard(p, 1, BSCTP_PROBE_LEN, now + MS / 2);   /* its echo */
        }
    }
    printf("    standby probed %llu ms into the silence, main path down at %llu ms\n",
           (unsigned long long) (first_probe / MS), (unsigned long long) (down_at / MS));
    CHECK(first_probe >= BSCTP_PROBE_AFTER_NS && first_probe <= BSCTP_PROBE_AFTER_NS + MS);
    CHECK(p[0].down && !p[1].down && down_at <= BSCTP_DEAD_AFTER_NS + 2 * MS);
    CHECK(bsctp_paths_pick(p, 2, nics, PKT) == 1);
    /* the main path back: it carries again */
    CHECK(bsctp_paths_heard(p, 0, BSCTP_PROBE_LEN, t + 70 * MS));
    CHECK(bsctp_paths_pick(p, 2, nics, PKT) == 0);
}

static void test_peer_silent_everywhere_keeps_paths(void)
{
    bsctp_path_t p[2];
    bsctp_nic_load_t nics[2];
    bool probe[BSCTP_MAX_PATHS];
    two_paths(p, nics);
    uint64_t t = 100 * MS;
    for (int k = 0; k < 2; k++) {
        bsctp_paths_heard(p, k, PKT, t);
    }
    int downs = 0, probes = 0;
    for (uint64_t dt = 0; dt <= 5000 * MS; dt += MS) {
        for (int k = 0; k < 2; k++) {
            bsctp_paths_sent(p, k, &nics[k], PKT, t + dt);   /* retransmissions */
        }
        downs += bsctp_paths_tick(p, 2, t + dt, probe);
        probes += probe[0] + probe[1];
    }
    CHECK(downs == 0 && !p[0].down && !p[1].down);
    CHECK(probes > 0);
    /* Idle (nothing sent lately): not even probed. */
    bsctp_paths_tick(p, 2, t + 6000 * MS, probe);
    CHECK(!probe[0] && !probe[1]);
}

static void test_one_path_left_alone(void)
{
    bsctp_path_t p[1];
    bool probe[BSCTP_MAX_PATHS];
    memset(p, 0, sizeof(p));
    p[0].sent_ns = 1;
    CHECK(bsctp_paths_tick(p, 1, 10000 * MS, probe) == 0 && !probe[0] && !p[0].down);
}

static void test_probe_round_trip_and_foreign_bytes(void)
{
    uint8_t b[BSCTP_PROBE_LEN];
    uint32_t nonce = 0;
    bsctp_probe_make(b, BSCTP_PROBE, 0xdeadbeef);
    CHECK(bsctp_probe_parse(b, sizeof(b), &nonce) == BSCTP_PROBE && nonce == 0xdeadbeef);
    bsctp_probe_make(b, BSCTP_PROBE_ECHO, 7);
    CHECK(bsctp_probe_parse(b, sizeof(b), &nonce) == BSCTP_PROBE_ECHO && nonce == 7);
    for (size_t len = 0; len < sizeof(b); len++) {
        uint8_t *e = malloc(len ? len : 1);
        memcpy(e, b, len);
        CHECK(bsctp_probe_parse(e, len, &nonce) == 0);
        free(e);
    }
    uint8_t longer[BSCTP_PROBE_LEN + 1];
    memcpy(longer, b, sizeof(b));
    CHECK(bsctp_probe_parse(longer, sizeof(longer), &nonce) == 0);
    for (size_t i = 0; i < 9; i++) {
        uint8_t c[BSCTP_PROBE_LEN];
        memcpy(c, b, sizeof(c));
        c[i] ^= 0x10;
        CHECK(bsctp_probe_parse(c, sizeof(c), &nonce) == 0);
    }
    /* A real SCTP packet's common header (ports not 0) is not a probe. */
    uint8_t sctp[BSCTP_PROBE_LEN] = {0x13, 0x88, 0x13, 0x89};
    CHECK(bsctp_probe_parse(sctp, sizeof(sctp), &nonce) == 0);
}

/* A chunk at b: type, length (header included), TSN for DATA. */
static size_t chunk(uint8_t *b, uint8_t type, uint16_t len, uint32_t tsn)
{
    memset(b, 0, (len + 3u) & ~3u);
    b[0] = type;
    b[2] = (uint8_t) (len >> 8);
    b[3] = (uint8_t) len;
    if (type == 0) {
        b[4] = (uint8_t) (tsn >> 24), b[5] = (uint8_t) (tsn >> 16);
        b[6] = (uint8_t) (tsn >> 8), b[7] = (uint8_t) tsn;
    }
    return (len + 3u) & ~3u;
}

static void test_packet_tsns(void)
{
    uint8_t pkt[128] = {0};
    uint32_t first = 0, last = 0;
    size_t n = 12;
    n += chunk(pkt + n, 3, 16, 0);              /* a SACK first */
    n += chunk(pkt + n, 0, 16 + 5, 0x12345678); /* DATA, padded */
    n += chunk(pkt + n, 0, 16 + 8, 0x12345679);
    CHECK(bsctp_packet_tsns(pkt, n, &first, &last) && first == 0x12345678 && last == 0x12345679);
    /* Every truncation: never read past it, never a wrong answer. */
    for (size_t len = 0; len < n; len++) {
        uint8_t *e = malloc(len ? len : 1);
        memcpy(e, pkt, len);
        uint32_t f = 0, l = 0;
        bool any = bsctp_packet_tsns(e, len, &f, &l);
        CHECK(!any || f == 0x12345678);
        free(e);
    }
    uint8_t sack[32] = {0};
    n = 12 + chunk(sack + 12, 3, 16, 0);
    CHECK(!bsctp_packet_tsns(sack, n, &first, &last));
    uint8_t bad[32] = {0};
    chunk(bad + 12, 0, 4, 0);   /* DATA shorter than its TSN */
    CHECK(!bsctp_packet_tsns(bad, 16, &first, &last));
    CHECK(bsctp_tsn_le(0xfffffff0u, 5) && !bsctp_tsn_le(5, 0xfffffff0u) && bsctp_tsn_le(7, 7));
}

/* A SACK chunk at b: cumulative ack, gap blocks (4 bytes each, zeroed). */
static size_t sack_chunk(uint8_t *b, uint32_t cum, uint16_t gaps)
{
    size_t n = chunk(b, 3, (uint16_t) (16 + 4 * gaps), 0);
    b[4] = (uint8_t) (cum >> 24), b[5] = (uint8_t) (cum >> 16);
    b[6] = (uint8_t) (cum >> 8), b[7] = (uint8_t) cum;
    b[12] = (uint8_t) (gaps >> 8), b[13] = (uint8_t) gaps;
    return n;
}

static void test_packet_sack_found_and_cut(void)
{
    uint8_t pkt[128] = {0};
    bsctp_sack_t sk;
    size_t n = 12;
    n += chunk(pkt + n, 0, 16 + 3, 41);         /* DATA first, padded */
    size_t at = n;
    n += sack_chunk(pkt + n, 0xabcdef01, 2);
    size_t after = n;
    n += chunk(pkt + n, 0, 16 + 4, 42);
    CHECK(bsctp_packet_sack(pkt, n, &sk) && sk.cum == 0xabcdef01 && sk.gaps == 2 && sk.off == at
          && sk.len == after - at);
    size_t cut = bsctp_packet_cut(pkt, n, sk.off, sk.len);
    uint32_t first = 0, last = 0;
    CHECK(cut == n - sk.len && !bsctp_packet_sack(pkt, cut, &sk));
    CHECK(bsctp_packet_tsns(pkt, cut, &first, &last) && first == 41 && last == 42);
    /* Every truncation of a SACK-only packet: a SACK only when it is whole. */
    uint8_t only[64] = {0};
    n = 12 + sack_chunk(only + 12, 7, 1);
    for (size_t len = 0; len <= n; len++) {
        uint8_t *e = malloc(len ? len : 1);
        memcpy(e, only, len);
        bool found = bsctp_packet_sack(e, len, &sk);
        CHECK(found == (len == n) && (!found || (sk.cum == 7 && sk.off + sk.len <= len)));
        free(e);
    }
    only[12 + 3] = 12;   /* a SACK chunk too short for its fields */
    CHECK(!bsctp_packet_sack(only, 12 + 12, &sk));
}

/* The gap blocks' TSNs: as many as the chunk holds and BSCTP_SACK_GAPS
 * keeps, a count claiming more than the chunk carries read only as far as
 * it goes, and a block that is none (start 0, or end before start) ends
 * the reading. */
static void test_packet_sack_gap_blocks(void)
{
    uint8_t pkt[128] = {0};
    bsctp_sack_t sk;
    size_t n = 12 + sack_chunk(pkt + 12, 0xfffffffeu, 6);
    static const uint16_t blocks[6][2] = {{2, 3}, {5, 5}, {8, 10}, {12, 12}, {14, 15}, {20, 21}};
    for (int k = 0; k < 6; k++) {
        uint8_t *b = pkt + 12 + 16 + 4 * k;
        b[0] = (uint8_t) (blocks[k][0] >> 8), b[1] = (uint8_t) blocks[k][0];
        b[2] = (uint8_t) (blocks[k][1] >> 8), b[3] = (uint8_t) blocks[k][1];
    }
    CHECK(bsctp_packet_sack(pkt, n, &sk) && sk.gaps == 6 && sk.gap_n == BSCTP_SACK_GAPS);
    CHECK(sk.gap_lo[0] == 0 && sk.gap_hi[0] == 1);   /* across the TSN wrap */
    CHECK(sk.gap_lo[2] == 6 && sk.gap_hi[2] == 8 && sk.gap_lo[3] == 10 && sk.gap_hi[3] == 10);
    pkt[12 + 3] = 16 + 4 * 2;   /* the chunk says 6 blocks but holds 2 */
    CHECK(bsctp_packet_sack(pkt, 12 + 16 + 8, &sk) && sk.gaps == 6 && sk.gap_n == 2);
    pkt[12 + 3] = 16 + 4 * 6;
    pkt[12 + 16 + 4 + 1] = 0;   /* the second block starts at 0: not a block */
    CHECK(bsctp_packet_sack(pkt, n, &sk) && sk.gap_n == 1);
    pkt[12 + 16 + 1] = 4;   /* the first ends before it starts */
    CHECK(bsctp_packet_sack(pkt, n, &sk) && sk.gap_n == 0);
}

static void test_recovery_ends_on_the_sack_usrsctp_needs(void)
{
    bsctp_recovery_t r;
    memset(&r, 0, sizeof(r));
    for (uint32_t t = 100; t < 200; t++) {
        bsctp_recovery_sent(&r, t, t);
    }
    CHECK(!r.rtx && bsctp_recovery_sack(&r, 150, 0));
    bsctp_recovery_sent(&r, 120, 120);          /* again: a retransmission */
    CHECK(r.rtx);
    bsctp_recovery_sent(&r, 200, 205);          /* and new data */
    bsctp_recovery_cause(&r, true, false);      /* usrsctp: a fast retransmit */
    CHECK(r.active && r.until == 205 && !r.rtx);
    CHECK(bsctp_recovery_sack(&r, 119, 3));     /* gaps: usrsctp's slow path, kept */
    CHECK(!bsctp_recovery_sack(&r, 180, 0));    /* no gap, short: withheld */
    CHECK(r.active);
    CHECK(bsctp_recovery_sack(&r, 205, 0));     /* reaches it: ends recovery */
    CHECK(!r.active && bsctp_recovery_sack(&r, 206, 0));
    /* A recovery that begins while ours lasts moves its end on. */
    bsctp_recovery_sent(&r, 206, 210);
    bsctp_recovery_sent(&r, 207, 207);
    bsctp_recovery_cause(&r, true, false);
    bsctp_recovery_sent(&r, 211, 220);
    bsctp_recovery_sent(&r, 208, 208);
    bsctp_recovery_cause(&r, true, false);
    CHECK(r.active && r.until == 220 && !bsctp_recovery_sack(&r, 215, 0));
    CHECK(bsctp_recovery_sack(&r, 220, 0) && !r.active);
    /* A timeout ends recovery (usrsctp's does); without a cause nothing starts. */
    bsctp_recovery_sent(&r, 150, 150);
    bsctp_recovery_cause(&r, true, false);
    CHECK(r.active);
    bsctp_recovery_sent(&r, 151, 151);
    bsctp_recovery_cause(&r, true, true);
    CHECK(!r.active && bsctp_recovery_sack(&r, 160, 0));
    bsctp_recovery_cause(&r, true, false);      /* nothing went again since */
    CHECK(!r.active);
    /* Serial arithmetic across the wrap. */
    memset(&r, 0, sizeof(r));
    bsctp_recovery_sent(&r, 0xfffffff0u, 0xfffffffeu);
    bsctp_recovery_sent(&r, 0xfffffff8u, 3);
    bsctp_recovery_cause(&r, true, false);
    CHECK(r.active && r.until == 3 && !bsctp_recovery_sack(&r, 0xfffffffeu, 0)
          && bsctp_recovery_sack(&r, 4, 0) && !r.active);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_paths", test_equal_links_share_equally);
    RUN("bsctp_paths", test_unequal_links_share_by_rate);
    RUN("bsctp_paths", test_rate_measured_while_backlogged);
    RUN("bsctp_paths", test_small_packets_take_the_emptier_path);
    RUN("bsctp_paths", test_down_path_not_picked);
    RUN("bsctp_paths", test_silent_path_probed_then_down_then_back);
    RUN("bsctp_paths", test_peer_silent_everywhere_keeps_paths);
    RUN("bsctp_paths", test_standby_path);
    RUN("bsctp_paths", test_one_path_left_alone);
    RUN("bsctp_paths", test_probe_round_trip_and_foreign_bytes);
    RUN("bsctp_paths", test_packet_tsns);
    RUN("bsctp_paths", test_packet_sack_found_and_cut);
    RUN("bsctp_paths", test_packet_sack_gap_blocks);
    RUN("bsctp_paths", test_recovery_ends_on_the_sack_usrsctp_needs);
    return UNIT_RESULT();
}

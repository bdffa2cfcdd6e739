/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Several NICs under one association (mode conn): usrsctp sees one peer
 * address per association (AF_CONN cannot carry more, docs/sctp-modes.md),
 * and the BTL chooses, for each packet usrsctp emits, which of the pairs
 * (our NIC, the peer's address) carries it. Sans I/O: the mode
 * (btl_sctp_conn.c) measures the NICs' queues, sends, reads and probes;
 * this file decides. Unit-tested alone (test/unit/test_sctp_paths.c).
 *
 *  - Scheduling: a packet goes where it would leave soonest: the bytes
 *    queued on that NIC (the kernel's queue, measured, plus what went since)
 *    over the rate the NIC was measured to drain them, so links of unequal
 *    speed are each filled and packets arrive about in the order they left
 *    (SCTP takes three reports of a gap as a loss).
 *  - Liveness: a path hears its peer by any datagram that comes in on it.
 *    One that carried data but has heard nothing for a while is probed (a
 *    datagram the peer's BTL echoes, usrsctp never sees it); one that stays
 *    silent while another path of the peer hears is down, and new packets
 *    avoid it. A peer silent on every path (computing outside MPI) loses no
 *    path. A down path is probed and comes back with the first echo.
 *  - Standby paths (by a NIC far from our cores, btl_sctp_if_locality)
 *    carry packets only while every other path is down. They are probed
 *    while another path is silent, so that a dead main path shows as one
 *    (the standby hears, it does not) and the standby takes over.
 */
#ifndef BTL_SCTP_PATHS_H
#define BTL_SCTP_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebtl_dgram.h"

/* Paths per peer at most. */
#define BSCTP_MAX_PATHS 4

/* Silence on a path that carried data, before it is probed; between probes. */
#define BSCTP_PROBE_AFTER_NS (10u * 1000000u)
/* Silence on a path while another path of the peer hears, before it is down. */
#define BSCTP_DEAD_AFTER_NS (30u * 1000000u)
/* Probes of a down path. */
#define BSCTP_PROBE_DOWN_NS (50u * 1000000u)
/* A path counts as carrying data this long after its last packet. */
#define BSCTP_ACTIVE_NS (200u * 1000000u)

typedef struct bsctp_path {
    ebtl_sockaddr_t udp;          /* the peer's address on it */
    uint16_t nic;                 /* our socket */
    bool down;
    bool standby;                 /* a fallback: used only while every other path is down */
    uint64_t heard_ns;            /* the last datagram that came in on it */
    uint64_t sent_ns;             /* the last packet that left on it */
    uint64_t probe_ns;            /* the last probe */
    uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes;
    uint64_t downs, ups, probes;
} bsctp_path_t;

/* What a NIC has queued and how fast it drains (the mode measures it). */
typedef struct bsctp_nic_load {
    uint64_t queued;              /* bytes: the kernel's queue at the last look + sent since */
    uint64_t rate;                /* bytes per second drained while backlogged; 0: not known */
    /* the mode's bookkeeping between looks */
    uint64_t look_ns, look_queued, sent_since;
} bsctp_nic_load_t;

/* The path for a packet of len bytes: the live one where it would leave
 * soonest (unknown rates taken as the best known, or equal), standby paths
 * only when no other is live; every path down: the one heard last. n >= 1. */
int bsctp_paths_pick(const bsctp_path_t *p, int n, const bsctp_nic_load_t *nics, size_t len);

/* The packet went on path k. */
void bsctp_paths_sent(bsctp_path_t *p, int k, bsctp_nic_load_t *nic, size_t len, uint64_t now);

/* A datagram came in on path k: heard; a down path is up again. Returns
 * true when it came back. */
bool bsctp_paths_heard(bsctp_path_t *p, int k, size_t len, uint64_t now);

/* Timers of one peer's paths at now: marks silent paths down (only while
 * another path hears) and sets probe[k] for each path to probe now. Returns
 * how many went down. */
int bsctp_paths_tick(bsctp_path_t *p, int n, uint64_t now, bool probe[BSCTP_MAX_PATHS]);

/* A new look at a NIC's kernel queue (bytes) at now: its drain rate from
 * what left since the last look, when it stayed backlogged. */
void bsctp_nic_look(bsctp_nic_load_t *nic, uint64_t queued_now, uint64_t now);

/* The BTL's probe datagrams: 16 bytes, an SCTP common header with ports 0
 * (no SCTP packet has them) and a tag usrsctp never sees. */
#define BSCTP_PROBE_LEN 16
#define BSCTP_PROBE_TAG 0x42505242u   /* "BPRB" */
enum { BSCTP_PROBE = 1, BSCTP_PROBE_ECHO = 2 };
/* Write a probe or echo with the sender's nonce into buf. */
void bsctp_probe_make(uint8_t buf[BSCTP_PROBE_LEN], int kind, uint32_t nonce);
/* The kind of a datagram that is one of ours (BSCTP_PROBE or _ECHO) with
 * its nonce, or 0 (an SCTP packet, or not well formed). Bytes untrusted. */
int bsctp_probe_parse(const uint8_t *buf, size_t len, uint32_t *nonce);

/* The TSNs of the first and the last DATA chunk of an SCTP packet: true,
 * or false when it has none (or its chunks are not well formed). Bytes
 * untrusted. */
bool bsctp_packet_tsns(const uint8_t *pkt, size_t len, uint32_t *first, uint32_t *last);

/* The SACK chunk of an SCTP packet (type 3): its cumulative TSN ack, its
 * number of gap blocks and the TSNs of the first BSCTP_SACK_GAPS of them
 * (each lo..hi received, gap_n of them read), and where it lies (offset,
 * length padded to 4 bytes). */
#define BSCTP_SACK_GAPS 4
typedef struct bsctp_sack {
    uint32_t cum;
    uint16_t gaps;
    uint16_t gap_n;
    uint32_t gap_lo[BSCTP_SACK_GAPS], gap_hi[BSCTP_SACK_GAPS];
    size_t off, len;
} bsctp_sack_t;
/* True with *s when the packet has a SACK chunk; false when it has none
 * or its chunks are not well formed. Bytes untrusted. */
bool bsctp_packet_sack(const uint8_t *pkt, size_t len, bsctp_sack_t *s);
/* The packet without the chunk at off (padded length clen, as found by
 * bsctp_packet_sack): returns its new length. */
size_t bsctp_packet_cut(uint8_t *pkt, size_t len, size_t off, size_t clen);

/* Fast recovery, as usrsctp 0.9.5 keeps it for a peer, mirrored so that it
 * can end. usrsctp leaves recovery only on a SACK it handles on its slow
 * path (one with gap blocks, or the first without after one with) whose
 * cumulative ack reaches the highest TSN sent when recovery began; every
 * later SACK without gaps takes its express path, which never leaves
 * recovery and never grows the window. With several paths a retransmission
 * overtakes data sent before it on the other path, the peer's next SACK
 * has no gap and stops short of that TSN, and usrsctp stays in recovery
 * with a window of two packets until a timeout (seconds at 1 Gbit/s,
 * measured). So while recovery lasts, a SACK without gaps that stops short
 * is withheld: the data in flight arrives and the next SACK ends recovery,
 * or the retransmission timer (which also ends it) fires. */
typedef struct bsctp_recovery {
    bool sent_any;
    uint32_t hi;                  /* the highest DATA TSN sent */
    bool rtx;                     /* DATA went again since the last bsctp_recovery_cause */
    bool active;
    uint32_t until;               /* recovery ends with a SACK reaching this TSN */
} bsctp_recovery_t;

/* A packet with DATA TSNs first..last left. */
void bsctp_recovery_sent(bsctp_recovery_t *r, uint32_t first, uint32_t last);
/* What made the retransmissions since the last call: usrsctp's counters
 * of fast retransmits and timeouts grew (fast, timeout). The caller asks
 * before and after usrsctp's timers run, so both seldom grow at once. */
void bsctp_recovery_cause(bsctp_recovery_t *r, bool fast, bool timeout);
/* A SACK from the peer: true when usrsctp may have it, false to withhold. */
bool bsctp_recovery_sack(bsctp_recovery_t *r, uint32_t cum, uint16_t gaps);

/* Receive side: packets of two paths arrive out of the order they left
 * in (a pass reads one socket after the other; the paths' queues differ
 * a little). usrsctp SACKs each gap at once and the sender retransmits
 * after three reports, so DATA that runs ahead of the next TSN expected
 * waits up to BSCTP_HOLD_NS for the packets before it. */
#define BSCTP_HOLD_NS (2u * 1000000u)
/* a at or before b in TSN (serial) order. */
static inline bool bsctp_tsn_le(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) <= 0;
}

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Mode conn's last resort against a lost retransmission timer: copies of
 * the DATA packets usrsctp handed a link, kept once the link has needed a
 * retransmission (loss seen), oldest dropped first when the space is full.
 * When the stall watch finds usrsctp holding unacknowledged chunks with
 * no timer left to send them again, the mode sends its copies of every
 * packet beyond the peer's cumulative acknowledgement itself: the peer
 * acknowledges them, and usrsctp's SACK path starts over from a clean
 * flight (btl_sctp_stack.c, "stalls"). usrsctp bounds what it holds
 * unacknowledged by the socket's send buffer, so a space somewhat larger
 * than that keeps every packet that can still be missing.
 *
 * The same copies repair a lost tail early (the tail probe): when neither
 * usrsctp sent DATA nor the peer's SACKs moved for a while (a few ms,
 * where usrsctp's T3 waits its RTO: 20-60 ms on a LAN whose round trip is
 * 0.1 ms, since its RTO.min and the variance of a shared CPU's round
 * trips), the copies the peer's last SACK does not report are sent again,
 * a few at a time. A lost last packet of an MPI exchange has no later
 * packet to reveal it, so only a timer finds it.
 */
#ifndef BTL_SCTP_RESCUE_H
#define BTL_SCTP_RESCUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BSCTP_RESCUE_GAPS 4   /* gap blocks of a SACK looked at */

typedef struct bsctp_rescue_pkt {
    uint32_t first, last;   /* its DATA chunks' TSNs */
    uint32_t off, len;      /* where in the space */
} bsctp_rescue_pkt_t;

typedef struct bsctp_rescue {
    uint8_t *space;
    size_t cap;
    bsctp_rescue_pkt_t *pkts;   /* oldest at head */
    uint32_t pkts_cap, head, count;
    uint32_t vtag;              /* the association's (its packets' verification tag) */
    uint32_t hi;                /* the highest TSN usrsctp has sent (valid with sent_any) */
    uint32_t cum;               /* the peer's highest cumulative ack (valid with cum_known) */
    bool sent_any, cum_known;
    bool keeping;               /* a retransmission was seen: copies are kept */
    /* the tail probe: the peer's last SACK's first gap blocks (TSNs
     * received beyond cum), the last time usrsctp sent DATA or the SACKs
     * moved, and whether a probe went since */
    uint32_t gap_lo[BSCTP_RESCUE_GAPS], gap_hi[BSCTP_RESCUE_GAPS];
    uint32_t gap_n;
    uint64_t moved_ns;
    bool probed;
} bsctp_rescue_t;

/* Copies of at most cap bytes of packets; the space is taken on the first
 * copy (out of memory: nothing is kept). */
void bsctp_rescue_init(bsctp_rescue_t *r, size_t cap);
void bsctp_rescue_fini(bsctp_rescue_t *r);

/* usrsctp hands the link a packet (len bytes, DATA TSNs first..last when
 * has_data) at now: a retransmission turns keeping on; while keeping, a
 * copy is kept. A packet of another association (verification tag) drops
 * what was kept for the one before. Returns true if a copy was kept. */
bool bsctp_rescue_sent(bsctp_rescue_t *r, const uint8_t *pkt, size_t len, bool has_data,
                       uint32_t first, uint32_t last, uint64_t now);

/* A SACK from the peer (possibly old) at now: it acknowledged every TSN
 * up to cum, and lo[k]..hi[k] (n blocks) beyond it. Copies of nothing
 * beyond the highest such cum are dropped. */
void bsctp_rescue_acked(bsctp_rescue_t *r, uint32_t cum, const uint32_t *lo, const uint32_t *hi,
                        unsigned n, uint64_t now);

/* A tail probe is due: copies beyond the peer's cumulative ack, nothing
 * sent by usrsctp nor moved in the SACKs for quiet_ns, no probe since.
 * Marks it sent: the next waits for the SACKs or usrsctp to move. */
bool bsctp_rescue_probe_due(bsctp_rescue_t *r, uint64_t now, uint64_t quiet_ns);

/* The copies a probe sends: beyond the cumulative ack and not wholly
 * inside a gap block of the last SACK, oldest first (*i starts at 0). */
const uint8_t *bsctp_rescue_next_missing(const bsctp_rescue_t *r, uint32_t *i, size_t *len);

/* The copies holding a TSN beyond the peer's cumulative ack, oldest
 * first: *i starts at 0; returns NULL after the last. */
const uint8_t *bsctp_rescue_next(const bsctp_rescue_t *r, uint32_t *i, size_t *len);

#endif

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
 */
#ifndef BTL_SCTP_RESCUE_H
#define BTL_SCTP_RESCUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
} bsctp_rescue_t;

/* Copies of at most cap bytes of packets; the space is taken on the first
 * copy (out of memory: nothing is kept). */
void bsctp_rescue_init(bsctp_rescue_t *r, size_t cap);
void bsctp_rescue_fini(bsctp_rescue_t *r);

/* usrsctp hands the link a packet (len bytes, DATA TSNs first..last when
 * has_data): a retransmission turns keeping on; while keeping, a copy is
 * kept. A packet of another association (verification tag) drops what was
 * kept for the one before. Returns true if a copy was kept. */
bool bsctp_rescue_sent(bsctp_rescue_t *r, const uint8_t *pkt, size_t len, bool has_data,
                       uint32_t first, uint32_t last);

/* The peer acknowledged every TSN up to cum (a SACK from it, possibly
 * old): copies of nothing beyond its highest such cum are dropped. */
void bsctp_rescue_acked(bsctp_rescue_t *r, uint32_t cum);

/* The copies holding a TSN beyond the peer's cumulative ack, oldest
 * first: *i starts at 0; returns NULL after the last. */
const uint8_t *bsctp_rescue_next(const bsctp_rescue_t *r, uint32_t *i, size_t *len);

#endif

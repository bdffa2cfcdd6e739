/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Which SCTP stream a fragment goes on (docs/sctp-streams.md). SCTP orders
 * messages only within a stream, so a loss on one stream does not hold
 * back the others. The rule, for an association with n outbound streams:
 *   - stream 0: bytes that are not a recognisable ob1 header
 *     (btl_sctp_ob1.h), every fragment while n is not known yet, every
 *     fragment with btl_sctp_stream_map 0, and everything if n is 1;
 *   - ob1 envelopes (MATCH, RNDV, RGET): a hash of (context, tag) over
 *     streams 1 .. M, M = (n - 1) / 2 (all of 1 .. n-1 when that is 0);
 *   - ob1's other headers (FRAG, ACK, PUT, FIN, ...): a hash of the
 *     request or fragment the header names over streams M+1 .. n-1, so the
 *     fragments of one message stay on one stream and bulk data does not
 *     share a stream with envelopes.
 * Pure functions: unit-tested without usrsctp (test/unit/test_sctp_streams.c).
 */
#ifndef BTL_SCTP_STREAMS_H
#define BTL_SCTP_STREAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btl_sctp_ob1.h"

/* Streams counted one by one in the statistics; higher ones share a bucket. */
#define BSCTP_STREAMS_COUNTED 16

typedef struct bsctp_streams_stats {
    uint64_t tx_stream[BSCTP_STREAMS_COUNTED + 1];   /* messages sent per stream */
    uint64_t chose_envelope, chose_other, chose_not_ob1, chose_unmapped;
    uint64_t ident_extra;                           /* identifications on streams other than 0 */
} bsctp_streams_stats_t;

/* The stream for a fragment (ob1 bytes at data, len of them, sent under
 * btl_tag) on an association with out_streams outbound streams (0: not
 * known yet). *kind (may be NULL) tells what was recognised. */
uint16_t bsctp_stream_choose(bool map, uint16_t out_streams, uint8_t btl_tag, const void *data,
                            size_t len, enum bsctp_ob1_kind *kind);

/* The envelope streams' range [1, 1 + M) and the others' [1 + M, n) for n streams. */
void bsctp_stream_ranges(uint16_t n, uint16_t *env_first, uint16_t *env_count,
                        uint16_t *other_first, uint16_t *other_count);

#endif

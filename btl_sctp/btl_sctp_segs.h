/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * SCTP packets larger than a frame (mode conn, btl_sctp_packet).
 *
 * On a link as fast as the CPUs with 1500-byte frames, usrsctp's work per
 * packet bounds the transport, not the bytes (docs/sctp-modes.md). Given a
 * larger path MTU, usrsctp builds fewer, larger packets; the BTL carries
 * each one that does not fit a datagram as segments: a 16-byte header
 * (ports 0, which no SCTP packet has, the tag "BSEG", the packet's id and
 * length, the segment size, index and count) and a piece. The segments of
 * a packet leave together on one path (one UDP GSO run), and the receiver
 * puts the packet back together before usrsctp sees it. A lost segment
 * loses the packet: SCTP retransmits it whole. Sans I/O; unit-tested
 * (test/unit/test_sctp_segs.c) and fuzzed.
 */
#ifndef BTL_SCTP_SEGS_H
#define BTL_SCTP_SEGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BSCTP_SEG_HDR 16
#define BSCTP_SEG_TAG 0x42534547u   /* "BSEG" */
/* Segments of one packet, and its bytes, at most. */
#define BSCTP_SEG_MAX 16
#define BSCTP_SEG_PACKET_MAX 16384
/* Packets being put together per stack; one unfinished this long is lost. */
#define BSCTP_SEG_SLOTS 8
#define BSCTP_SEG_EXPIRE_NS (10u * 1000000u)

typedef struct bsctp_seg_info {
    uint16_t id, total, size;     /* the packet's id and bytes; bytes per segment */
    uint8_t index, count;
} bsctp_seg_info_t;

/* The header of segment index of a packet of total bytes cut in size-byte
 * pieces. */
void bsctp_seg_header(uint8_t h[BSCTP_SEG_HDR], uint16_t id, uint16_t total, uint16_t size,
                      uint8_t index);

/* Segments of a packet of len bytes, each piece at most room bytes; 0 when
 * it fits one datagram or cannot be cut (more than BSCTP_SEG_MAX). */
unsigned bsctp_seg_count(size_t len, size_t room);

/* True with *s when buf (len bytes, untrusted) is a well-formed segment:
 * its header agrees with itself and with the length of its piece. */
bool bsctp_seg_parse(const uint8_t *buf, size_t len, bsctp_seg_info_t *s);

typedef struct bsctp_seg_slot {
    bool used;
    uint32_t link;
    bsctp_seg_info_t info;        /* of its first segment (index aside) */
    uint32_t have;                /* bit i: segment i came */
    uint64_t at_ns;               /* its first segment */
    uint8_t buf[BSCTP_SEG_PACKET_MAX];
} bsctp_seg_slot_t;

typedef struct bsctp_seg_table {
    bsctp_seg_slot_t slot[BSCTP_SEG_SLOTS];
    uint64_t lost;                /* packets whose segments did not all come */
    uint64_t bad;                 /* segments that disagreed with their packet's others */
} bsctp_seg_table_t;

/* A well-formed segment (s from bsctp_seg_parse) of peer link at now:
 * returns the whole packet (valid until the next call) with its length in
 * *len once its last segment came, else NULL. */
const uint8_t *bsctp_seg_add(bsctp_seg_table_t *t, uint32_t link, const bsctp_seg_info_t *s,
                             const uint8_t *piece, uint64_t now, size_t *len);

#endif

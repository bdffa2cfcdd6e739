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
 * loses the packet: SCTP retransmits it whole, so a link that loses
 * frames goes back to packets of a frame (bsctp_seg_loss_t). Sans I/O;
 * unit-tested (test/unit/test_sctp_segs.c) and fuzzed.
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

/* Loss on a link sending packets larger than a frame. A packet of 11
 * frames is lost when any one of them is: at 1 % frame loss one packet in
 * ten goes again and SCTP's window collapses (measured: ×0.57 of tcp at
 * 1 Gbit/s, against ×0.99 with packets of a frame). The sign is the
 * peer's SACKs: a SACK with gap blocks after one without (a hole opened;
 * one path delivers in order). Once BSCTP_SEG_LOSSY holes opened while
 * BSCTP_SEG_WINDOW packets went in segments, the link goes back to packets
 * of a frame, for good: usrsctp 0.9.5 can lower an association's chunk
 * size but never raise it, and the large chunks, not the large packets,
 * are what saves the CPU (measured: 16 KiB packets of 1400-byte chunks are
 * no faster than 1500-byte packets). Retransmissions would be the wrong
 * sign: a peer computing outside MPI answers nothing and its data is
 * retransmitted by timeout, with no frame lost. */
#define BSCTP_SEG_WINDOW 256
#define BSCTP_SEG_LOSSY 3

typedef struct bsctp_seg_loss {
    uint16_t packets;             /* packets sent in segments in this window */
    uint16_t holes;               /* holes the peer reported in it */
    bool gap;                     /* the last SACK had gap blocks */
} bsctp_seg_loss_t;

/* A packet went in segments. */
void bsctp_seg_loss_sent(bsctp_seg_loss_t *w);
/* A SACK came from the peer (gaps: it had gap blocks): true when the link
 * should now go back to packets of a frame. */
bool bsctp_seg_loss_sack(bsctp_seg_loss_t *w, bool gaps);

#endif

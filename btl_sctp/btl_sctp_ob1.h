/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * ob1's fragment headers as the sctp BTL sees them: the first bytes of what
 * ob1 hands to btl_send/btl_sendi, under the BTL tag it uses. We read them
 * only to choose an SCTP stream (btl_sctp_streams.c), never to act on them,
 * and we do not include Open MPI's pml headers (they are not installed):
 * this is our own description of the layout of Open MPI 4.1's
 * ompi/mca/pml/ob1/pml_ob1_hdr.h as built by Debian (x86_64, heterogeneous
 * support off, so no explicit padding fields; docs/sctp-streams.md says
 * what was checked and how).
 *
 * The headers are in the sender's byte order unless hdr_flags has NBO;
 * the BTL parses only the headers its own process is sending.
 */
#ifndef BTL_SCTP_OB1_H
#define BTL_SCTP_OB1_H

#include <stddef.h>
#include <stdint.h>

/* BTL tags: MCA_BTL_TAG_PML (0x40) + n, and hdr_type equals the tag. */
#define BSCTP_OB1_TAG_PML 0x40
enum bsctp_ob1_type {
    BSCTP_OB1_MATCH = BSCTP_OB1_TAG_PML + 1, /* 65 'A': eager message, envelope */
    BSCTP_OB1_RNDV = BSCTP_OB1_TAG_PML + 2,  /* 66: rendezvous, envelope + length */
    BSCTP_OB1_RGET = BSCTP_OB1_TAG_PML + 3,  /* 67: rendezvous for RDMA get */
    BSCTP_OB1_ACK = BSCTP_OB1_TAG_PML + 4,   /* 68 */
    BSCTP_OB1_NACK = BSCTP_OB1_TAG_PML + 5,  /* 69 */
    BSCTP_OB1_FRAG = BSCTP_OB1_TAG_PML + 6,  /* 70: later fragment of a message */
    BSCTP_OB1_GET = BSCTP_OB1_TAG_PML + 7,   /* 71 */
    BSCTP_OB1_PUT = BSCTP_OB1_TAG_PML + 8,   /* 72 */
    BSCTP_OB1_FIN = BSCTP_OB1_TAG_PML + 9    /* 73 */
};

/* hdr_flags bits ob1 4.1 defines (ACK, NBO, PIN, CONTIG, NORDMA, SIGNAL). */
#define BSCTP_OB1_FLAG_NBO 0x02
#define BSCTP_OB1_FLAGS_KNOWN 0x3f

/* The layouts, field for field (mca_pml_ob1_*_hdr_t). Mirrors only: the
 * parser reads at the offsets below with memcpy, never through these. */
typedef struct bsctp_ob1_match {
    uint8_t hdr_type, hdr_flags;  /* mca_pml_ob1_common_hdr_t */
    uint16_t hdr_ctx;             /* communicator context id */
    int32_t hdr_src;              /* sender's rank in the communicator */
    int32_t hdr_tag;              /* MPI tag (negative: collectives, internal) */
    uint16_t hdr_seq;             /* per (communicator, peer) sequence number */
} bsctp_ob1_match_t;               /* ob1 sends 14 bytes (OMPI_PML_OB1_MATCH_HDR_LEN) */

typedef struct bsctp_ob1_rndv {
    bsctp_ob1_match_t hdr_match;
    uint64_t hdr_msg_length;
    uint64_t hdr_src_req;
} bsctp_ob1_rndv_t;

typedef struct bsctp_ob1_rget {
    bsctp_ob1_rndv_t hdr_rndv;
    uint64_t hdr_frag;
    uint64_t hdr_src_ptr;         /* registration data follows */
} bsctp_ob1_rget_t;

typedef struct bsctp_ob1_frag {
    uint8_t hdr_type, hdr_flags;
    uint64_t hdr_frag_offset;
    uint64_t hdr_src_req;
    uint64_t hdr_dst_req;         /* the receiver's request: same for a message's fragments */
} bsctp_ob1_frag_t;

typedef struct bsctp_ob1_ack {
    uint8_t hdr_type, hdr_flags;
    uint64_t hdr_src_req;
    uint64_t hdr_dst_req;
    uint64_t hdr_send_offset;
    uint64_t hdr_send_size;
} bsctp_ob1_ack_t;

typedef struct bsctp_ob1_rdma {   /* PUT */
    uint8_t hdr_type, hdr_flags;
    uint64_t hdr_req;
    uint64_t hdr_frag;
    uint64_t hdr_recv_req;
    uint64_t hdr_rdma_offset;
    uint64_t hdr_dst_ptr;
    uint64_t hdr_dst_size;        /* registration data follows */
} bsctp_ob1_rdma_t;

typedef struct bsctp_ob1_fin {
    uint8_t hdr_type, hdr_flags;
    int64_t hdr_size;
    uint64_t hdr_frag;
} bsctp_ob1_fin_t;

#define BSCTP_OB1_MATCH_LEN 14   /* bytes ob1 puts on the wire for a match header */

/* The offsets the parser uses, checked against the mirrors above. */
#define BSCTP_OB1_OFF_CTX 2
#define BSCTP_OB1_OFF_SRC 4
#define BSCTP_OB1_OFF_TAG 8
#define BSCTP_OB1_OFF_SEQ 12
#define BSCTP_OB1_OFF_FRAG_DST_REQ 24
#define BSCTP_OB1_OFF_ACK_DST_REQ 16
#define BSCTP_OB1_OFF_PUT_REQ 8
#define BSCTP_OB1_OFF_FIN_FRAG 16

_Static_assert(offsetof(bsctp_ob1_match_t, hdr_ctx) == BSCTP_OB1_OFF_CTX, "ob1 match: hdr_ctx");
_Static_assert(offsetof(bsctp_ob1_match_t, hdr_src) == BSCTP_OB1_OFF_SRC, "ob1 match: hdr_src");
_Static_assert(offsetof(bsctp_ob1_match_t, hdr_tag) == BSCTP_OB1_OFF_TAG, "ob1 match: hdr_tag");
_Static_assert(offsetof(bsctp_ob1_match_t, hdr_seq) == BSCTP_OB1_OFF_SEQ, "ob1 match: hdr_seq");
_Static_assert(sizeof(bsctp_ob1_match_t) == 16, "ob1 match header: 16 bytes in memory");
_Static_assert(offsetof(bsctp_ob1_rndv_t, hdr_msg_length) == 16, "ob1 rndv: hdr_msg_length");
_Static_assert(offsetof(bsctp_ob1_rndv_t, hdr_src_req) == 24, "ob1 rndv: hdr_src_req");
_Static_assert(sizeof(bsctp_ob1_rndv_t) == 32, "ob1 rndv header: 32 bytes");
_Static_assert(sizeof(bsctp_ob1_rget_t) == 48, "ob1 rget header: 48 bytes before registration");
_Static_assert(offsetof(bsctp_ob1_frag_t, hdr_frag_offset) == 8, "ob1 frag: hdr_frag_offset");
_Static_assert(offsetof(bsctp_ob1_frag_t, hdr_dst_req) == BSCTP_OB1_OFF_FRAG_DST_REQ,
               "ob1 frag: hdr_dst_req");
_Static_assert(sizeof(bsctp_ob1_frag_t) == 32, "ob1 frag header: 32 bytes");
_Static_assert(offsetof(bsctp_ob1_ack_t, hdr_dst_req) == BSCTP_OB1_OFF_ACK_DST_REQ,
               "ob1 ack: hdr_dst_req");
_Static_assert(sizeof(bsctp_ob1_ack_t) == 40, "ob1 ack header: 40 bytes");
_Static_assert(offsetof(bsctp_ob1_rdma_t, hdr_req) == BSCTP_OB1_OFF_PUT_REQ, "ob1 put: hdr_req");
_Static_assert(sizeof(bsctp_ob1_rdma_t) == 56, "ob1 put header: 56 bytes before registration");
_Static_assert(offsetof(bsctp_ob1_fin_t, hdr_frag) == BSCTP_OB1_OFF_FIN_FRAG, "ob1 fin: hdr_frag");
_Static_assert(sizeof(bsctp_ob1_fin_t) == 24, "ob1 fin header: 24 bytes");

/* What a fragment's first bytes are. */
enum bsctp_ob1_kind {
    BSCTP_OB1_NONE = 0,    /* not a recognisable ob1 header (tag, type, flags or length) */
    BSCTP_OB1_ENVELOPE,    /* MATCH, RNDV, RGET: ctx, src, tag, seq are valid */
    BSCTP_OB1_OTHER        /* ACK, NACK, FRAG, GET, PUT, FIN: key is valid */
};

typedef struct bsctp_ob1_info {
    uint8_t type;
    uint8_t flags;
    uint16_t ctx;
    int32_t src;
    int32_t tag;
    uint16_t seq;
    uint64_t key;         /* OTHER: the request or fragment the header names (0 if none) */
} bsctp_ob1_info_t;

/* Parse ob1's header at data (len bytes, as handed to the BTL under
 * btl_tag). Reads nothing past len. */
enum bsctp_ob1_kind bsctp_ob1_parse(uint8_t btl_tag, const void *data, size_t len,
                                  bsctp_ob1_info_t *out);

#endif

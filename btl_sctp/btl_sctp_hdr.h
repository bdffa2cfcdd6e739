/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * What btl sctp puts inside each SCTP user message. SCTP keeps message
 * boundaries, so there is no length field and no stream parsing: one BTL
 * fragment is one SCTP message, an 8-byte header then ob1's bytes.
 * Network byte order; every field is checked on receipt (docs/sctp-modes.md,
 * "Lost messages").
 *
 * Version 2 numbers each fragment per SCTP stream (seq): SCTP delivers a
 * stream's messages in order (nothing is sent unordered), so a number that
 * is not the next one means a message was lost between usrsctp and us.
 * Version 3 adds RESEND and RESENT (btl_sctp_seq.h, "Resending").
 */
#ifndef BTL_SCTP_HDR_H
#define BTL_SCTP_HDR_H

#include <stdint.h>

#define BSCTP_WIRE_VERSION 3
/* Payload protocol identifier on every DATA chunk, so captures tell our
 * messages apart ("OMPB"); the receiver does not trust it. */
#define BSCTP_WIRE_PPID 0x4f4d5042u
#define BSCTP_IDENT_MAGIC 0x53435449u /* "SCTI" */

enum bsctp_wire_kind {
    BSCTP_WIRE_FRAG = 1,   /* a BTL fragment: ob1's bytes follow */
    BSCTP_WIRE_IDENT = 2,  /* who sends on this association: the first message */
    BSCTP_WIRE_AUDIT = 3,  /* an idle sender's last numbers per stream (stream 0) */
    BSCTP_WIRE_RESEND = 4, /* a receiver short of an audit's claim: send these again */
    BSCTP_WIRE_RESENT = 5  /* one fragment sent again (stream 0): seq holds its stream,
                              the fragment as first sent follows */
};

typedef struct bsctp_wire_hdr {
    uint8_t version;
    uint8_t kind;
    uint8_t tag;          /* ob1's active-message tag (FRAG) */
    uint8_t flags;        /* 0 */
    uint32_t seq;         /* FRAG: its number on its stream, 1 after the stream's
                             identification, then +1 (wraps); else 0. Also keeps
                             ob1's bytes 8-byte aligned */
} bsctp_wire_hdr_t;

typedef struct bsctp_wire_ident {
    bsctp_wire_hdr_t hdr;
    uint32_t magic;
    uint32_t jobid;       /* the sender's Open MPI process name */
    uint32_t vpid;
    uint32_t reserved;
    uint64_t job_key;     /* same for every job one mpirun launched */
} bsctp_wire_ident_t;

/* AUDIT: the header, then one entry per stream the sender has numbered
 * fragments on since its identification there (at least one). */
typedef struct bsctp_wire_audit_entry {
    uint16_t sid;
    uint16_t reserved;    /* 0 */
    uint32_t last;        /* the number of the last fragment sent on sid */
} bsctp_wire_audit_entry_t;

/* RESEND (stream 0): numbers first..last of stream sid, which the
 * sender's audit claimed and the receiver never read. */
typedef struct bsctp_wire_resend {
    bsctp_wire_hdr_t hdr;
    uint16_t sid;
    uint16_t reserved;    /* 0 */
    uint32_t first, last;
    uint32_t reserved2;   /* 0 */
} bsctp_wire_resend_t;

_Static_assert(sizeof(bsctp_wire_resend_t) == 24, "sctp resend request is 24 bytes");
_Static_assert(sizeof(bsctp_wire_audit_entry_t) == 8, "sctp audit entry is 8 bytes");
_Static_assert(sizeof(bsctp_wire_hdr_t) == 8, "sctp message header is 8 bytes");
_Static_assert(sizeof(bsctp_wire_ident_t) == 32, "sctp identification is 32 bytes");

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Numbered fragments and the idle audit (btl_sctp_seq.c), per link: the
 * rule that a message SCTP acknowledged is never lost silently
 * (docs/sctp-modes.md, "Lost messages").
 *
 * Numbers: each fragment carries its number on its SCTP stream (the
 * header's seq). A stream's numbering starts over at the identification
 * sent on it, which goes before any data on that stream of an association,
 * so both ends restart at the same point of the stream's order. SCTP
 * delivers each stream in order and nothing here is sent unordered: a
 * fragment whose number is not the next one means a message was lost
 * between usrsctp and the BTL. One compare per message.
 *
 * The audit: a message lost last on its stream shows no gap until the
 * next one, which may never come (the peer waits for it: a hang). A
 * sender idle for BSCTP_AUDIT_IDLE_TICKS ticks whose association holds
 * nothing unacknowledged sends an audit (stream 0) with the last number
 * of every stream it used: everything before it is already in the peer's
 * stack, so the peer reads it before the audit. A stream short of its
 * claim is only noted; still short of that claim at a later audit, the
 * message is lost. Up to BSCTP_AUDITS_MAX audits per idle spell.
 *
 * Resending (modes whose usrsctp threads race our reads: inet): the
 * sender keeps copies of its last BSCTP_KEEP_SLOTS numbered fragments of
 * up to BSCTP_KEEP_MAX bytes. A receiver whose audit found a stream short
 * asks once for the missing numbers (RESEND); the sender sends the kept
 * copies again (on stream 0, wrapped, behind the audit that found them
 * missing), or fails the peer if it no longer holds one. A message the
 * receiver then reads twice (the original surfaced late) is dropped by its
 * number. So the loss seen in usrsctp 0.9.5 (one small message, the last
 * before the sender waited) costs a stall of about 0.5 s, not the job.
 * Pure functions: no socket, no clock (test/unit/test_sctp_seq.c).
 */
#ifndef BTL_SCTP_SEQ_H
#define BTL_SCTP_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* The audit's clock: the stack calls bsctp_seq_tick on every link this
 * often. A link idle for 3 ticks (0.5-0.75 s) audits, again 2 ticks later,
 * and a third time; the peer decides at the second. */
#define BSCTP_AUDIT_TICK_NS (250u * 1000000u)
#define BSCTP_AUDIT_IDLE_TICKS 3u
#define BSCTP_AUDIT_EVERY_TICKS 2u
#define BSCTP_AUDITS_MAX 3u
/* Fragments kept for resending, per link, and the largest kept: every
 * fragment at the default btl_sctp_max_send_size (128 KiB). At most 1 MiB
 * per peer, and only toward peers sent that much; the copy costs little
 * beside inet mode's 150 MB/s. */
#define BSCTP_KEEP_SLOTS 8u
#define BSCTP_KEEP_MAX (128u * 1024u + 64u)
/* Bytes before each kept copy, for the resend wrapper's header. */
#define BSCTP_KEEP_ROOM 8u

typedef struct bsctp_seq_stream {
    uint32_t tx_last;     /* the number of the last fragment sent on it */
    uint32_t rx_last;     /* ... and of the last one delivered from it */
    uint32_t rx_claim;    /* an audit's last number it was short of; 0: none */
    uint32_t rx_asked;    /* the last number asked for again (RESEND); 0: none */
} bsctp_seq_stream_t;

/* A fragment kept for resending: BSCTP_KEEP_ROOM free bytes, then its
 * len bytes as sent (header and payload). */
typedef struct bsctp_seq_kept {
    uint8_t *buf;
    size_t len, cap;
    uint32_t seq;
    uint16_t sid;
    bool used;
} bsctp_seq_kept_t;

typedef struct bsctp_seq {
    bsctp_seq_stream_t *s;   /* n streams; NULL until first used */
    uint16_t n;
    bool tx_any;             /* a fragment numbered since the last reset */
    uint8_t audits;          /* audits sent in this idle spell */
    uint16_t idle_ticks;     /* ticks without a fragment sent */
    uint16_t audit_tick;     /* idle_ticks when the last audit went */
    uint32_t tx_total;       /* fragments sent (wraps): tells idle from busy */
    uint32_t idle_mark;      /* tx_total at the last tick */
    bsctp_seq_kept_t *kept;  /* BSCTP_KEEP_SLOTS, on the first bsctp_seq_keep */
    uint8_t kept_next;       /* the slot the next kept fragment takes */
} bsctp_seq_t;

/* What an audit found on one stream. */
typedef struct bsctp_seq_short {
    uint16_t sid;
    uint32_t have;        /* the last number delivered */
    uint32_t claim;       /* the sender's last number (first audit found short) */
} bsctp_seq_short_t;

enum bsctp_audit_verdict {
    BSCTP_AUDIT_OK = 0,      /* every stream complete */
    BSCTP_AUDIT_SHORT = 1,   /* a stream short for the first time: wait for the next */
    BSCTP_AUDIT_LOST = 2,    /* a stream still short of an earlier audit's claim */
    BSCTP_AUDIT_BAD = -1     /* malformed: nothing changed */
};

/* The streams' table, n of them (a no-op when there); false: out of memory. */
bool bsctp_seq_ready(bsctp_seq_t *q, uint16_t n);
void bsctp_seq_free(bsctp_seq_t *q);
/* Sending (sid < n, table ready): the number the next fragment carries;
 * once usrsctp took it, bsctp_seq_tx_sent. */
static inline uint32_t bsctp_seq_tx_next(const bsctp_seq_t *q, uint16_t sid)
{
    return q->s[sid].tx_last + 1u;
}
static inline void bsctp_seq_tx_sent(bsctp_seq_t *q, uint16_t sid)
{
    q->s[sid].tx_last++;
    q->tx_total++;
    q->tx_any = true;
}
/* The identification went (came) on sid: its numbering starts over (and
 * the copies kept of its old numbers go). */
void bsctp_seq_tx_restart(bsctp_seq_t *q, uint16_t sid);
static inline void bsctp_seq_rx_restart(bsctp_seq_t *q, uint16_t sid)
{
    if (q->s != NULL && sid < q->n) {
        q->s[sid].rx_last = q->s[sid].rx_claim = q->s[sid].rx_asked = 0;
    }
}
/* The identification state of streams first.. was forgotten (a new or
 * lost association): they will be identified, and numbered, afresh. */
static inline void bsctp_seq_tx_forget(bsctp_seq_t *q, uint16_t first)
{
    for (uint16_t i = first; q->s != NULL && i < q->n; i++) {
        bsctp_seq_tx_restart(q, i);
    }
}
/* The peer's identification is forgotten on every stream. */
static inline void bsctp_seq_rx_forget(bsctp_seq_t *q)
{
    for (uint16_t i = 0; q->s != NULL && i < q->n; i++) {
        bsctp_seq_rx_restart(q, i);
    }
}
/* Receiving (sid < n, table ready): true and counted when seq is the next
 * number on sid; false (nothing changed) otherwise. */
static inline bool bsctp_seq_rx_check(bsctp_seq_t *q, uint16_t sid, uint32_t seq)
{
    if (seq != q->s[sid].rx_last + 1u) {
        return false;
    }
    q->s[sid].rx_last = seq;
    return true;
}
static inline uint32_t bsctp_seq_rx_expected(const bsctp_seq_t *q, uint16_t sid)
{
    return q->s[sid].rx_last + 1u;
}
/* A number already delivered on sid, read again because we asked for it
 * (the original or its copy came second): drop it. */
bool bsctp_seq_rx_dup(const bsctp_seq_t *q, uint16_t sid, uint32_t seq);

/* Resending. The sender keeps the fragment it just numbered on sid (after
 * bsctp_seq_tx_sent; its iovcnt pieces, header first); one too large or
 * without memory is simply not kept. */
void bsctp_seq_keep(bsctp_seq_t *q, uint16_t sid, const struct iovec *iov, int iovcnt);
/* The kept copy of number seq on sid, or NULL. */
const bsctp_seq_kept_t *bsctp_seq_kept(const bsctp_seq_t *q, uint16_t sid, uint32_t seq);
/* The receiver, after an audit found streams short: the next stream to ask
 * again for, with its missing numbers first..last (each stream once per
 * claim); false when none is left. */
bool bsctp_seq_rx_ask(bsctp_seq_t *q, uint16_t *sid, uint32_t *first, uint32_t *last);

/* Once per BSCTP_AUDIT_TICK_NS: true when the link has been idle long
 * enough for an audit (the caller checks the association holds nothing
 * unacknowledged, sends it, and calls bsctp_seq_audited). */
bool bsctp_seq_tick(bsctp_seq_t *q);
void bsctp_seq_audited(bsctp_seq_t *q);

/* The audit's entries (after the 8-byte header) into buf: their bytes, 0
 * when no stream has a numbered fragment or cap is too small. */
size_t bsctp_seq_audit_entries(const bsctp_seq_t *q, uint8_t *buf, size_t cap);
/* A peer's audit entries (untrusted, len bytes): the verdict, and in *out
 * the stream it concerns (LOST: the first stream still short; SHORT: the
 * first short one). */
int bsctp_seq_audit_check(bsctp_seq_t *q, const uint8_t *entries, size_t len,
                          bsctp_seq_short_t *out);

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Numbered fragments and the idle audit (btl_sctp_seq.h). */
#include "btl_sctp_seq.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "btl_sctp_hdr.h"

bool bsctp_seq_ready(bsctp_seq_t *q, uint16_t n)
{
    if (q->s != NULL) {
        return true;
    }
    if (n == 0 || (q->s = calloc(n, sizeof(*q->s))) == NULL) {
        return false;
    }
    q->n = n;
    return true;
}

void bsctp_seq_free(bsctp_seq_t *q)
{
    for (unsigned i = 0; q->kept != NULL && i < BSCTP_KEEP_SLOTS; i++) {
        free(q->kept[i].buf);
    }
    free(q->kept);
    free(q->s);
    memset(q, 0, sizeof(*q));
}

void bsctp_seq_tx_restart(bsctp_seq_t *q, uint16_t sid)
{
    if (q->s == NULL || sid >= q->n) {
        return;
    }
    q->s[sid].tx_last = 0;
    for (unsigned i = 0; q->kept != NULL && i < BSCTP_KEEP_SLOTS; i++) {
        if (q->kept[i].sid == sid) {
            q->kept[i].used = false;
        }
    }
}

void bsctp_seq_keep(bsctp_seq_t *q, uint16_t sid, const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
    }
    if (len > BSCTP_KEEP_MAX
        || (q->kept == NULL && (q->kept = calloc(BSCTP_KEEP_SLOTS, sizeof(*q->kept))) == NULL)) {
        return;
    }
    bsctp_seq_kept_t *k = &q->kept[q->kept_next];
    k->used = false;   /* until its copy is whole */
    if (k->cap < BSCTP_KEEP_ROOM + len) {
        uint8_t *b = realloc(k->buf, BSCTP_KEEP_ROOM + len);
        if (b == NULL) {
            return;
        }
        k->buf = b;
        k->cap = BSCTP_KEEP_ROOM + len;
    }
    size_t off = BSCTP_KEEP_ROOM;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(k->buf + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    k->len = len;
    k->sid = sid;
    k->seq = q->s[sid].tx_last;
    k->used = true;
    q->kept_next = (uint8_t) ((q->kept_next + 1u) % BSCTP_KEEP_SLOTS);
}

const bsctp_seq_kept_t *bsctp_seq_kept(const bsctp_seq_t *q, uint16_t sid, uint32_t seq)
{
    for (unsigned i = 0; q->kept != NULL && i < BSCTP_KEEP_SLOTS; i++) {
        if (q->kept[i].used && q->kept[i].sid == sid && q->kept[i].seq == seq) {
            return &q->kept[i];
        }
    }
    return NULL;
}

bool bsctp_seq_tick(bsctp_seq_t *q)
{
    if (q->tx_total != q->idle_mark) {
        q->idle_mark = q->tx_total;   /* busy: a new idle spell starts later */
        q->idle_ticks = 0;
        q->audits = 0;
        return false;
    }
    if (q->idle_ticks < UINT16_MAX) {
        q->idle_ticks++;
    }
    unsigned since = (unsigned) (q->idle_ticks - q->audit_tick);
    return q->tx_any && q->s != NULL && q->audits < BSCTP_AUDITS_MAX
           && q->idle_ticks >= BSCTP_AUDIT_IDLE_TICKS
           && (q->audits == 0 || since >= BSCTP_AUDIT_EVERY_TICKS);
}

void bsctp_seq_audited(bsctp_seq_t *q)
{
    q->audits++;
    q->audit_tick = q->idle_ticks;
}

size_t bsctp_seq_audit_entries(const bsctp_seq_t *q, uint8_t *buf, size_t cap)
{
    size_t len = 0;
    for (uint16_t i = 0; q->s != NULL && i < q->n; i++) {
        if (q->s[i].tx_last == 0) {
            continue;   /* nothing numbered on it since its identification */
        }
        if (len + sizeof(bsctp_wire_audit_entry_t) > cap) {
            return 0;
        }
        bsctp_wire_audit_entry_t e = {htons(i), 0, htonl(q->s[i].tx_last)};
        memcpy(buf + len, &e, sizeof(e));
        len += sizeof(e);
    }
    return len;
}

/* a before b in wrapping 32-bit order */
static bool seq_before(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) < 0;
}

bool bsctp_seq_rx_dup(const bsctp_seq_t *q, uint16_t sid, uint32_t seq)
{
    const bsctp_seq_stream_t *s = &q->s[sid];
    return s->rx_asked != 0 && !seq_before(s->rx_last, seq) && !seq_before(s->rx_asked, seq);
}

bool bsctp_seq_rx_ask(bsctp_seq_t *q, uint16_t *sid, uint32_t *first, uint32_t *last)
{
    for (uint16_t i = 0; q->s != NULL && i < q->n; i++) {
        bsctp_seq_stream_t *s = &q->s[i];
        if (s->rx_claim != 0 && seq_before(s->rx_last, s->rx_claim) && s->rx_asked != s->rx_claim) {
            s->rx_asked = s->rx_claim;
            *sid = i;
            *first = s->rx_last + 1u;
            *last = s->rx_claim;
            return true;
        }
    }
    return false;
}

int bsctp_seq_audit_check(bsctp_seq_t *q, const uint8_t *entries, size_t len,
                          bsctp_seq_short_t *out)
{
    size_t count = len / sizeof(bsctp_wire_audit_entry_t);
    if (q->s == NULL || len == 0 || len % sizeof(bsctp_wire_audit_entry_t) != 0 || count > q->n) {
        return BSCTP_AUDIT_BAD;
    }
    /* Check all of it before changing anything. */
    for (size_t k = 0; k < count; k++) {
        bsctp_wire_audit_entry_t e;
        memcpy(&e, entries + k * sizeof(e), sizeof(e));
        if (ntohs(e.sid) >= q->n || e.reserved != 0) {
            return BSCTP_AUDIT_BAD;
        }
    }
    int verdict = BSCTP_AUDIT_OK;
    for (size_t k = 0; k < count; k++) {
        bsctp_wire_audit_entry_t e;
        memcpy(&e, entries + k * sizeof(e), sizeof(e));
        uint16_t sid = ntohs(e.sid);
        uint32_t last = ntohl(e.last);
        bsctp_seq_stream_t *s = &q->s[sid];
        /* Ahead of the claim is fine: data sent after the audit may pass it
         * (another stream, or the audit retransmitted). */
        if (!seq_before(s->rx_last, last)) {
            s->rx_claim = 0;
            continue;
        }
        if (s->rx_claim != 0 && seq_before(s->rx_last, s->rx_claim)) {
            /* Short of what an earlier audit claimed: everything up to that
             * claim was in our stack before that audit was sent. */
            if (verdict != BSCTP_AUDIT_LOST) {
                *out = (bsctp_seq_short_t){sid, s->rx_last, s->rx_claim};
                verdict = BSCTP_AUDIT_LOST;
            }
            continue;
        }
        s->rx_claim = last;
        if (verdict == BSCTP_AUDIT_OK) {
            *out = (bsctp_seq_short_t){sid, s->rx_last, last};
            verdict = BSCTP_AUDIT_SHORT;
        }
    }
    return verdict;
}

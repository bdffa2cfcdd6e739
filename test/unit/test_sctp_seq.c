/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of fragment numbers and the idle audit (btl_sctp/btl_sctp_seq.c),
 * without sockets or a clock: numbering per stream and its restarts, the
 * receiver's check, when an idle sender audits, the audit's entries, and
 * the receiver's verdicts (complete, short once, still short: lost; a
 * claim overtaken; malformed audits change nothing), and resending: the
 * copies the sender keeps, what the receiver asks for again, and the
 * duplicates it then drops. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../btl_sctp/btl_sctp_hdr.h"
#include "../../btl_sctp/btl_sctp_seq.h"
#include "unit.h"

/* One audit entry in wire form. */
static void entry(uint8_t *buf, size_t k, uint16_t sid, uint32_t last)
{
    bsctp_wire_audit_entry_t e = {htons(sid), 0, htonl(last)};
    memcpy(buf + k * sizeof(e), &e, sizeof(e));
}

static void numbers_per_stream(void)
{
    bsctp_seq_t tx = {0}, rx = {0};
    CHECK(bsctp_seq_ready(&tx, 4) && bsctp_seq_ready(&rx, 4));
    CHECK(bsctp_seq_ready(&tx, 4));   /* already there: unchanged */
    /* 3 on stream 1, 2 on stream 3, interleaved: each stream from 1 */
    uint32_t got[5];
    uint16_t sids[5] = {1, 3, 1, 3, 1};
    for (int i = 0; i < 5; i++) {
        got[i] = bsctp_seq_tx_next(&tx, sids[i]);
        bsctp_seq_tx_sent(&tx, sids[i]);
    }
    CHECK(got[0] == 1 && got[1] == 1 && got[2] == 2 && got[3] == 2 && got[4] == 3);
    CHECK(tx.tx_total == 5 && tx.tx_any);
    /* A refused send (the caller did not call tx_sent) keeps its number. */
    CHECK(bsctp_seq_tx_next(&tx, 1) == 4 && bsctp_seq_tx_next(&tx, 1) == 4);
    /* The receiver: in turn on each stream; anything else refused, unchanged. */
    CHECK(bsctp_seq_rx_check(&rx, 1, 1));
    CHECK(bsctp_seq_rx_check(&rx, 3, 1));
    CHECK(!bsctp_seq_rx_check(&rx, 1, 3));   /* 2 missing */
    CHECK(bsctp_seq_rx_expected(&rx, 1) == 2);
    CHECK(!bsctp_seq_rx_check(&rx, 1, 1));   /* a duplicate */
    CHECK(!bsctp_seq_rx_check(&rx, 1, 0));
    CHECK(bsctp_seq_rx_check(&rx, 1, 2) && bsctp_seq_rx_check(&rx, 1, 3));
    CHECK(!bsctp_seq_rx_check(&rx, 2, 2));   /* stream 2 starts at 1 */
    /* Identification restarts one stream; forgetting restarts from a stream on. */
    bsctp_seq_tx_restart(&tx, 3);
    CHECK(bsctp_seq_tx_next(&tx, 3) == 1 && bsctp_seq_tx_next(&tx, 1) == 4);
    bsctp_seq_tx_forget(&tx, 1);
    CHECK(bsctp_seq_tx_next(&tx, 1) == 1);
    bsctp_seq_rx_restart(&rx, 1);
    CHECK(bsctp_seq_rx_expected(&rx, 1) == 1 && bsctp_seq_rx_expected(&rx, 3) == 2);
    bsctp_seq_rx_forget(&rx);
    CHECK(bsctp_seq_rx_expected(&rx, 3) == 1);
    bsctp_seq_tx_restart(&tx, 9);   /* beyond the table: ignored */
    bsctp_seq_rx_restart(&rx, 9);
    /* Wrap: after 0xffffffff comes 0. */
    rx.s[2].rx_last = 0xfffffffeu;
    CHECK(bsctp_seq_rx_check(&rx, 2, 0xffffffffu) && bsctp_seq_rx_check(&rx, 2, 0));
    bsctp_seq_free(&tx);
    bsctp_seq_free(&rx);
    CHECK(tx.s == NULL && tx.n == 0);
    bsctp_seq_t none = {0};
    CHECK(!bsctp_seq_ready(&none, 0));
}

static void idle_sender_audits(void)
{
    bsctp_seq_t q = {0};
    CHECK(bsctp_seq_ready(&q, 4));
    /* Nothing numbered yet: never due. */
    for (int t = 0; t < 10; t++) {
        CHECK(!bsctp_seq_tick(&q));
    }
    bsctp_seq_tx_sent(&q, 2);
    /* Busy at this tick; then idle: due at the 3rd idle tick, every 2nd
     * after, 3 times in all. */
    int due_at[16], n = 0;
    for (int t = 0; t < 16; t++) {
        if (bsctp_seq_tick(&q)) {
            due_at[n++] = t;
            bsctp_seq_audited(&q);
        }
    }
    CHECK(n == (int) BSCTP_AUDITS_MAX);
    CHECK(n == 3 && due_at[0] == 3 && due_at[1] == 5 && due_at[2] == 7);
    /* An audit that could not go (association busy) is due at the next tick. */
    bsctp_seq_tx_sent(&q, 2);
    int first = -1, second = -1;
    for (int t = 0; t < 10 && second < 0; t++) {
        if (bsctp_seq_tick(&q)) {
            if (first < 0) {
                first = t;   /* not sent */
            } else {
                second = t;
                bsctp_seq_audited(&q);
            }
        }
    }
    CHECK(first == 3 && second == 4);
    /* Sending again ends the spell: nothing due until idle again. */
    bsctp_seq_tx_sent(&q, 1);
    CHECK(!bsctp_seq_tick(&q) && !bsctp_seq_tick(&q) && !bsctp_seq_tick(&q));
    CHECK(bsctp_seq_tick(&q));
    bsctp_seq_free(&q);
}

static void audit_entries(void)
{
    bsctp_seq_t q = {0};
    uint8_t buf[64];
    CHECK(bsctp_seq_ready(&q, 8));
    CHECK(bsctp_seq_audit_entries(&q, buf, sizeof(buf)) == 0);   /* nothing numbered */
    bsctp_seq_tx_sent(&q, 0);
    bsctp_seq_tx_sent(&q, 5);
    bsctp_seq_tx_sent(&q, 5);
    size_t len = bsctp_seq_audit_entries(&q, buf, sizeof(buf));
    CHECK(len == 2 * sizeof(bsctp_wire_audit_entry_t));
    bsctp_wire_audit_entry_t e[2];
    memcpy(e, buf, sizeof(e));
    CHECK(ntohs(e[0].sid) == 0 && ntohl(e[0].last) == 1 && e[0].reserved == 0);
    CHECK(ntohs(e[1].sid) == 5 && ntohl(e[1].last) == 2);
    CHECK(bsctp_seq_audit_entries(&q, buf, 8) == 0);   /* no room for both: none */
    /* A stream identified afresh leaves the audit until it is numbered again. */
    bsctp_seq_tx_restart(&q, 5);
    CHECK(bsctp_seq_audit_entries(&q, buf, sizeof(buf)) == sizeof(bsctp_wire_audit_entry_t));
    bsctp_seq_free(&q);
}

static void audit_verdicts(void)
{
    bsctp_seq_t rx = {0};
    bsctp_seq_short_t sh;
    uint8_t a[32];
    CHECK(bsctp_seq_ready(&rx, 4));
    for (uint32_t i = 1; i <= 3; i++) {
        CHECK(bsctp_seq_rx_check(&rx, 1, i));
    }
    CHECK(bsctp_seq_rx_check(&rx, 2, 1));
    /* Complete. */
    entry(a, 0, 1, 3);
    entry(a, 1, 2, 1);
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_OK);
    /* Stream 1 short of 5: noted; delivered up to 4 by the next audit,
     * which claims 5 again: still short of the first claim (5): lost. */
    entry(a, 0, 1, 5);
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_SHORT);
    CHECK(sh.sid == 1 && sh.have == 3 && sh.claim == 5);
    CHECK(bsctp_seq_rx_check(&rx, 1, 4));
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_LOST);
    CHECK(sh.sid == 1 && sh.have == 4 && sh.claim == 5);
    /* The claim met after all (the message was late, not lost): fine. */
    CHECK(bsctp_seq_rx_check(&rx, 1, 5));
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_OK);
    /* Short once, then met before the next audit: never lost. */
    entry(a, 1, 2, 2);
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_SHORT && sh.sid == 2);
    CHECK(bsctp_seq_rx_check(&rx, 2, 2));
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_OK);
    /* Ahead of the claim (data sent after the audit passed it): fine, and
     * forgets a claim. */
    entry(a, 1, 2, 1);
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_OK);
    /* A short stream whose claim moves on (the sender sent more since)
     * but which moved past the first claim: short again, not lost. */
    entry(a, 0, 3, 2);
    CHECK(bsctp_seq_audit_check(&rx, a, 8, &sh) == BSCTP_AUDIT_SHORT);
    CHECK(bsctp_seq_rx_check(&rx, 3, 1) && bsctp_seq_rx_check(&rx, 3, 2));
    entry(a, 0, 3, 4);
    CHECK(bsctp_seq_audit_check(&rx, a, 8, &sh) == BSCTP_AUDIT_SHORT && sh.claim == 4);
    /* Identification afresh forgets the claim. */
    bsctp_seq_rx_restart(&rx, 3);
    entry(a, 0, 3, 1);
    CHECK(bsctp_seq_audit_check(&rx, a, 8, &sh) == BSCTP_AUDIT_SHORT && sh.have == 0);
    /* Malformed: nothing changes (stream 3's claim stays 1). */
    CHECK(bsctp_seq_audit_check(&rx, a, 0, &sh) == BSCTP_AUDIT_BAD);
    CHECK(bsctp_seq_audit_check(&rx, a, 7, &sh) == BSCTP_AUDIT_BAD);
    entry(a, 0, 3, 9);
    entry(a, 1, 4, 1);   /* a stream beyond the table */
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_BAD);
    a[2] = 1;            /* reserved not 0 */
    CHECK(bsctp_seq_audit_check(&rx, a, 8, &sh) == BSCTP_AUDIT_BAD);
    entry(a, 0, 3, 1);
    entry(a, 1, 3, 1);
    entry(a, 2, 3, 1);
    entry(a, 3, 3, 1);
    uint8_t many[40];
    memcpy(many, a, 32);
    entry(many, 4, 3, 1);   /* more entries than streams */
    CHECK(bsctp_seq_audit_check(&rx, many, 40, &sh) == BSCTP_AUDIT_BAD);
    CHECK(rx.s[3].rx_claim == 1);
    /* The next audit still short of that claim: lost. */
    CHECK(bsctp_seq_audit_check(&rx, a, 8, &sh) == BSCTP_AUDIT_LOST && sh.sid == 3);
    bsctp_seq_t none = {0};
    CHECK(bsctp_seq_audit_check(&none, a, 8, &sh) == BSCTP_AUDIT_BAD);
    bsctp_seq_free(&rx);
}

/* Send one numbered fragment of len bytes (first byte: its number) on sid
 * and keep it. */
static uint32_t send_kept(bsctp_seq_t *tx, uint16_t sid, size_t len, uint8_t *buf)
{
    uint32_t seq = bsctp_seq_tx_next(tx, sid);
    bsctp_seq_tx_sent(tx, sid);
    memset(buf, 0, len);
    buf[0] = (uint8_t) seq;
    struct iovec iov[2] = {{buf, 1}, {buf + 1, len - 1}};   /* in two pieces */
    bsctp_seq_keep(tx, sid, iov, 2);
    return seq;
}

static void kept_copies(void)
{
    static uint8_t big[BSCTP_KEEP_MAX + 1];
    uint8_t buf[100];
    bsctp_seq_t tx = {0};
    CHECK(bsctp_seq_ready(&tx, 4));
    CHECK(bsctp_seq_kept(&tx, 1, 1) == NULL);   /* nothing kept yet */
    CHECK(send_kept(&tx, 1, 40, buf) == 1 && send_kept(&tx, 2, 60, buf) == 1);
    const bsctp_seq_kept_t *k = bsctp_seq_kept(&tx, 1, 1);
    CHECK(k != NULL && k->len == 40 && k->buf[BSCTP_KEEP_ROOM] == 1
          && k->cap >= BSCTP_KEEP_ROOM + 40);
    k = bsctp_seq_kept(&tx, 2, 1);
    CHECK(k != NULL && k->len == 60);
    CHECK(bsctp_seq_kept(&tx, 1, 2) == NULL && bsctp_seq_kept(&tx, 3, 1) == NULL);
    /* The oldest goes once BSCTP_KEEP_SLOTS more were kept. */
    for (unsigned i = 0; i < BSCTP_KEEP_SLOTS - 1; i++) {
        send_kept(&tx, 3, 10 + i, buf);
    }
    CHECK(bsctp_seq_kept(&tx, 1, 1) == NULL && bsctp_seq_kept(&tx, 2, 1) != NULL);
    CHECK(bsctp_seq_kept(&tx, 3, BSCTP_KEEP_SLOTS - 1) != NULL);
    /* Too large to keep: not kept (its slot keeps nothing stale). */
    uint32_t seq = send_kept(&tx, 2, sizeof(big), big);
    CHECK(seq == 2 && bsctp_seq_kept(&tx, 2, 2) == NULL);
    CHECK(send_kept(&tx, 2, BSCTP_KEEP_MAX, big) == 3 && bsctp_seq_kept(&tx, 2, 3) != NULL);
    /* A stream numbered afresh drops its copies: its numbers mean new
     * fragments now. */
    bsctp_seq_tx_restart(&tx, 3);
    CHECK(bsctp_seq_kept(&tx, 3, BSCTP_KEEP_SLOTS - 1) == NULL);
    CHECK(bsctp_seq_kept(&tx, 2, 3) != NULL);
    bsctp_seq_tx_forget(&tx, 0);
    CHECK(bsctp_seq_kept(&tx, 2, 3) == NULL);
    bsctp_seq_free(&tx);
    CHECK(tx.kept == NULL && tx.s == NULL);
}

static void asked_again(void)
{
    bsctp_seq_t rx = {0};
    bsctp_seq_short_t sh;
    uint8_t a[16];
    uint16_t sid;
    uint32_t first, last;
    CHECK(bsctp_seq_ready(&rx, 4));
    CHECK(!bsctp_seq_rx_ask(&rx, &sid, &first, &last));   /* no claim: nothing */
    CHECK(bsctp_seq_rx_check(&rx, 1, 1));
    /* Streams 1 and 2 short: each asked once, for what it misses. */
    entry(a, 0, 1, 3);
    entry(a, 1, 2, 2);
    CHECK(bsctp_seq_audit_check(&rx, a, 16, &sh) == BSCTP_AUDIT_SHORT);
    CHECK(bsctp_seq_rx_ask(&rx, &sid, &first, &last) && sid == 1 && first == 2 && last == 3);
    CHECK(bsctp_seq_rx_ask(&rx, &sid, &first, &last) && sid == 2 && first == 1 && last == 2);
    CHECK(!bsctp_seq_rx_ask(&rx, &sid, &first, &last));
    /* Nothing read twice yet; the copies come: in turn, then the
     * originals surface late and are duplicates. */
    CHECK(!bsctp_seq_rx_dup(&rx, 1, 2));
    CHECK(bsctp_seq_rx_check(&rx, 1, 2) && bsctp_seq_rx_check(&rx, 1, 3));
    CHECK(bsctp_seq_rx_dup(&rx, 1, 2) && bsctp_seq_rx_dup(&rx, 1, 3));
    CHECK(bsctp_seq_rx_dup(&rx, 1, 1));   /* also before what was asked: read already */
    CHECK(!bsctp_seq_rx_dup(&rx, 1, 4));  /* the next one is new */
    CHECK(!bsctp_seq_rx_dup(&rx, 3, 1));  /* a stream never asked for: no duplicates */
    /* The same claim again: not asked twice; a later audit meets it. */
    CHECK(bsctp_seq_audit_check(&rx, a, 8, &sh) == BSCTP_AUDIT_OK);
    CHECK(!bsctp_seq_rx_ask(&rx, &sid, &first, &last));
    /* A new identification forgets what was asked. */
    bsctp_seq_rx_restart(&rx, 1);
    CHECK(!bsctp_seq_rx_dup(&rx, 1, 1) && bsctp_seq_rx_check(&rx, 1, 1));
    bsctp_seq_free(&rx);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("bsctp_seq", numbers_per_stream);
    RUN("bsctp_seq", idle_sender_audits);
    RUN("bsctp_seq", audit_entries);
    RUN("bsctp_seq", audit_verdicts);
    RUN("bsctp_seq", kept_copies);
    RUN("bsctp_seq", asked_again);
    return UNIT_RESULT();
}

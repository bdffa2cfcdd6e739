/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Which of a peer's paths carries each packet, and which paths are alive
 * (btl_sctp_paths.h says how).
 */
#include "btl_sctp_paths.h"

#include <string.h>

/* A rate nobody measured yet: equal shares until one is. */
#define RATE_GUESS (1000ull * 1000u * 1000u)
/* Looks closer together than this measure noise, not a rate. */
#define LOOK_MIN_NS 200000u

/* Nanoseconds until len more bytes would have left the NIC. A rate not
 * measured yet (its queue never built up) is taken as fast: the NIC gets
 * packets until its queue shows what it carries. */
static uint64_t leave_ns(const bsctp_nic_load_t *nic, size_t len)
{
    uint64_t rate = nic->rate ? nic->rate : RATE_GUESS;
    return (nic->queued + len) * 1000000000ull / rate;
}

int bsctp_paths_pick(const bsctp_path_t *p, int n, const bsctp_nic_load_t *nics, size_t len)
{
    int pick = -1;
    uint64_t soonest = UINT64_MAX;
    bool main_up = false;
    for (int k = 0; k < n; k++) {
        main_up |= !p[k].down && !p[k].standby;
    }
    for (int k = 0; k < n; k++) {
        if (p[k].down || (main_up && p[k].standby)) {
            continue;
        }
        uint64_t t = leave_ns(&nics[p[k].nic], len);
        if (t < soonest) {
            soonest = t;
            pick = k;
        }
    }
    if (pick >= 0) {
        return pick;
    }
    /* Every path down: the one heard last (a probe answered there first). */
    pick = 0;
    for (int k = 1; k < n; k++) {
        if (p[k].heard_ns > p[pick].heard_ns) {
            pick = k;
        }
    }
    return pick;
}

void bsctp_paths_sent(bsctp_path_t *p, int k, bsctp_nic_load_t *nic, size_t len, uint64_t now)
{
    p[k].sent_ns = now;
    p[k].tx_packets++;
    p[k].tx_bytes += len;
    nic->queued += len;
    nic->sent_since += len;
}

bool bsctp_paths_heard(bsctp_path_t *p, int k, size_t len, uint64_t now)
{
    p[k].heard_ns = now;
    p[k].rx_packets++;
    p[k].rx_bytes += len;
    if (p[k].down) {
        p[k].down = false;
        p[k].ups++;
        return true;
    }
    return false;
}

int bsctp_paths_tick(bsctp_path_t *p, int n, uint64_t now, bool probe[BSCTP_MAX_PATHS])
{
    memset(probe, 0, sizeof(bool) * BSCTP_MAX_PATHS);
    if (n < 2) {
        return 0;   /* one path: the association's own timers decide */
    }
    uint64_t heard_last = 0;
    for (int k = 0; k < n; k++) {
        if (!p[k].down && p[k].heard_ns > heard_last) {
            heard_last = p[k].heard_ns;
        }
    }
    int downs = 0;
    bool suspect = false;   /* a path carrying data has gone silent */
    for (int k = 0; k < n; k++) {
        bsctp_path_t *q = &p[k];
        if (q->heard_ns == 0) {
            q->heard_ns = now;   /* never heard: its silence counts from the first tick */
        }
        uint64_t silent = now > q->heard_ns ? now - q->heard_ns : 0;
        if (q->down) {
            probe[k] = now - q->probe_ns >= BSCTP_PROBE_DOWN_NS;
            continue;
        }
        bool active = q->sent_ns != 0 && now - q->sent_ns < BSCTP_ACTIVE_NS;
        if (!active || silent < BSCTP_PROBE_AFTER_NS) {
            continue;
        }
        suspect = true;
        /* Down only while another path hears: a peer silent everywhere is
         * busy (or gone: the association's timers say so), not its NIC. */
        if (silent >= BSCTP_DEAD_AFTER_NS && heard_last > q->heard_ns
            && now - heard_last < BSCTP_PROBE_AFTER_NS) {
            q->down = true;
            q->downs++;
            downs++;
            probe[k] = true;
            continue;
        }
        probe[k] = now - q->probe_ns >= BSCTP_PROBE_AFTER_NS;
    }
    /* An idle standby hears only when asked: ask it while a path is in doubt. */
    for (int k = 0; suspect && k < n; k++) {
        const bsctp_path_t *q = &p[k];
        bool idle = q->sent_ns == 0 || now - q->sent_ns >= BSCTP_ACTIVE_NS;
        if (q->standby && !q->down && idle && now - q->probe_ns >= BSCTP_PROBE_AFTER_NS) {
            probe[k] = true;
        }
    }
    for (int k = 0; k < n; k++) {
        if (probe[k]) {
            p[k].probe_ns = now;
            p[k].probes++;
        }
    }
    return downs;
}

void bsctp_nic_look(bsctp_nic_load_t *nic, uint64_t queued_now, uint64_t now)
{
    uint64_t dt = now - nic->look_ns;
    if (nic->look_ns != 0 && dt < LOOK_MIN_NS) {
        nic->queued = queued_now;   /* too soon for a rate: the queue only */
        return;
    }
    if (nic->look_ns != 0) {
        uint64_t in = nic->look_queued + nic->sent_since;
        uint64_t left = in > queued_now ? in - queued_now : 0;
        uint64_t sample = left * 1000000000ull / dt;
        if (nic->look_queued > 0 && queued_now > 0) {
            /* Backlogged from look to look: what left is the drain rate. */
            nic->rate = nic->rate ? (nic->rate * 7 + sample) / 8 : sample;
        } else if (queued_now == 0 && nic->rate != 0 && sample > nic->rate) {
            /* Emptied: it drains at least that fast (an estimate too low
             * would starve the NIC of the packets that correct it). */
            nic->rate = sample;
        }
    }
    nic->queued = queued_now;
    nic->look_queued = queued_now;
    nic->sent_since = 0;
    nic->look_ns = now;
}

void bsctp_probe_make(uint8_t buf[BSCTP_PROBE_LEN], int kind, uint32_t nonce)
{
    memset(buf, 0, BSCTP_PROBE_LEN);
    /* ports 0 and 0 (bytes 0..3), the tag where the verification tag goes */
    for (int i = 0; i < 4; i++) {
        buf[4 + i] = (uint8_t) (BSCTP_PROBE_TAG >> (24 - 8 * i));
        buf[12 + i] = (uint8_t) (nonce >> (24 - 8 * i));
    }
    buf[8] = (uint8_t) kind;
}

int bsctp_probe_parse(const uint8_t *buf, size_t len, uint32_t *nonce)
{
    if (len != BSCTP_PROBE_LEN || buf[0] != 0 || buf[1] != 0 || buf[2] != 0 || buf[3] != 0) {
        return 0;
    }
    uint32_t tag = 0, n = 0;
    for (int i = 0; i < 4; i++) {
        tag = tag << 8 | buf[4 + i];
        n = n << 8 | buf[12 + i];
    }
    if (tag != BSCTP_PROBE_TAG || (buf[8] != BSCTP_PROBE && buf[8] != BSCTP_PROBE_ECHO)) {
        return 0;
    }
    *nonce = n;
    return buf[8];
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* One chunk of an SCTP packet: where it starts, its length (header
 * included) and that length padded to 4 bytes. */
typedef struct chunk {
    size_t at, len, padded;
} chunk_t;

/* The chunk at *at (12: the first, after the common header), *at moved to
 * the next: 1, or 0 at the end, or -1 when its length does not fit. Each
 * chunk: type, flags, length (16 bits). */
static int next_chunk(const uint8_t *pkt, size_t len, size_t *at, chunk_t *c)
{
    if (*at + 4 > len) {
        return 0;
    }
    c->at = *at;
    c->len = (size_t) pkt[c->at + 2] << 8 | pkt[c->at + 3];
    if (c->len < 4 || c->len > len - c->at) {
        return -1;
    }
    c->padded = (c->len + 3u) & ~(size_t) 3u;
    *at += c->padded;
    return 1;
}

bool bsctp_packet_tsns(const uint8_t *pkt, size_t len, uint32_t *first, uint32_t *last)
{
    bool any = false;
    size_t at = 12;
    chunk_t c;
    int r;
    while ((r = next_chunk(pkt, len, &at, &c)) > 0) {
        if (pkt[c.at] != 0) {
            continue;
        }
        if (c.len < 8) {
            return false;   /* DATA (type 0) shorter than its TSN */
        }
        uint32_t t = be32(pkt + c.at + 4);
        if (!any) {
            *first = t;
        }
        *last = t;
        any = true;
    }
    return r == 0 && any;
}

bool bsctp_packet_sack(const uint8_t *pkt, size_t len, bsctp_sack_t *s)
{
    size_t at = 12;
    chunk_t c;
    while (next_chunk(pkt, len, &at, &c) > 0) {
        if (pkt[c.at] != 3) {
            continue;
        }
        /* cumulative TSN ack, a_rwnd, gap blocks, duplicate TSNs */
        if (c.len < 16) {
            return false;
        }
        s->cum = be32(pkt + c.at + 4);
        s->gaps = (uint16_t) (pkt[c.at + 12] << 8 | pkt[c.at + 13]);
        /* gap blocks: 16-bit start and end offsets from the cumulative ack */
        s->gap_n = 0;
        for (size_t g = c.at + 16; s->gap_n < s->gaps && s->gap_n < BSCTP_SACK_GAPS
                                   && g + 4 <= c.at + c.len; g += 4) {
            uint16_t lo = (uint16_t) (pkt[g] << 8 | pkt[g + 1]);
            uint16_t hi = (uint16_t) (pkt[g + 2] << 8 | pkt[g + 3]);
            if (lo == 0 || hi < lo) {
                break;   /* not a gap block (RFC 9260 3.3.4) */
            }
            s->gap_lo[s->gap_n] = s->cum + lo;
            s->gap_hi[s->gap_n] = s->cum + hi;
            s->gap_n++;
        }
        s->off = c.at;
        s->len = c.padded < len - c.at ? c.padded : len - c.at;
        return true;
    }
    return false;
}

size_t bsctp_packet_cut(uint8_t *pkt, size_t len, size_t off, size_t clen)
{
    memmove(pkt + off, pkt + off + clen, len - off - clen);
    return len - clen;
}

void bsctp_recovery_sent(bsctp_recovery_t *r, uint32_t first, uint32_t last)
{
    if (r->sent_any && bsctp_tsn_le(first, r->hi)) {
        r->rtx = true;
    }
    if (!r->sent_any || !bsctp_tsn_le(last, r->hi)) {
        r->hi = last;
    }
    r->sent_any = true;
}

void bsctp_recovery_cause(bsctp_recovery_t *r, bool fast, bool timeout)
{
    if (!r->rtx) {
        return;
    }
    r->rtx = false;
    if (timeout) {
        r->active = false;   /* usrsctp's timeout ends recovery */
    } else if (fast) {
        /* At or past usrsctp's own mark (the highest TSN sent when it
         * began; a recovery that began since ours is past ours): to
         * withhold a little longer costs only a SACK. */
        r->active = true;
        r->until = r->hi;
    }
}

bool bsctp_recovery_sack(bsctp_recovery_t *r, uint32_t cum, uint16_t gaps)
{
    if (!r->active) {
        return true;
    }
    if (bsctp_tsn_le(r->until, cum)) {
        r->active = false;   /* this one ends usrsctp's recovery too */
        return true;
    }
    return gaps > 0;
}

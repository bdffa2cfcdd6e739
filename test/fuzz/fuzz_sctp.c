/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * libFuzzer target for everything btl sctp parses from an SCTP message:
 * the 8-byte message header, the identification message, reassembly of
 * pieces until MSG_EOR per stream (pieces of different streams interleave;
 * the size limit; a stream beyond those granted), and usrsctp's notifications
 * (association changes, partial-delivery aborts), fragment numbers per
 * stream, idle audits and resends (btl_sctp_seq.c), all through the two
 * functions the receive loop calls (bsctp_assoc_input and
 * bsctp_assoc_notification) on a stack with three links: two known peers
 * and one stranger (a UDP source nobody added).
 *
 * The input is cut into records. Each is either raw bytes (a message, a
 * piece, a notification) or one built from the input around valid values
 * (a good header or identification with some fields from the input, an
 * association change with a chosen state), so that the deeper paths are
 * reached: identified peers' fragments delivered, strangers accepted or
 * refused, associations replaced, lost and aborted.
 *
 * The stream rule's parser of ob1 headers (btl_sctp_ob1.c: it reads our own
 * outgoing bytes, but must not trust them either) gets every raw record too,
 * and so do conn mode's parsers of whole datagrams (btl_sctp_paths.c: the
 * paths' probes, the TSNs of a packet's DATA chunks).
 *
 * Checked besides the sanitizers: a fragment is delivered only to a link
 * that has not failed, with the next number on its stream, and only to a link
 * that identified itself on its current association, to the endpoint of
 * that link, and never larger than the largest message less the header.
 * No socket is open: a style of no socket stands in (aborts are counted,
 * not sent).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

#include "btl_sctp_hdr.h"
#include "btl_sctp_assoc.h"
#include "btl_sctp_paths.h"
#include "btl_sctp_segs.h"
#include "btl_sctp_streams.h"

#define NLINKS 3
#define JOBID 0x12340000u
#define JOB_KEY 0xabcdef0123456789ull
#define MAX_MSG 3000
#define STREAMS 4   /* granted; the input names one more */

static int users[NLINKS + 1];    /* endpoints; users[NLINKS]: accepted strangers */
static volatile uint8_t sink;

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "fuzz_sctp: check failed: %s (line %d)\n", #c, __LINE__); \
            abort();                                                             \
        }                                                                        \
    } while (0)

/* No socket: the style the association layer calls sends nothing and
 * knows no association, and an abort is only counted (by assoc.c). */
static long no_send(bsctp_stack_t *st, uint32_t link, const void *data, size_t len,
                    struct sctp_sndinfo *info)
{
    (void) st;
    (void) link;
    (void) data;
    (void) len;
    (void) info;
    errno = EAGAIN;
    return -1;
}

static bool no_assoc_socket(const bsctp_stack_t *st, const bsctp_link_t *l, struct socket **so,
                            uint32_t *assoc_id)
{
    (void) st;
    (void) l;
    *so = NULL;
    *assoc_id = 0;
    return false;
}

static void no_abort(bsctp_stack_t *st, bsctp_link_t *l)
{
    (void) st;
    (void) l;
}

static const bsctp_style_t no_socket_style = {
    .name = "fuzz",
    .send = no_send,
    .assoc_socket = no_assoc_socket,
    .abort = no_abort,
};

static const bsctp_mode_t no_socket_mode = {.name = "fuzz"};

static void on_deliver(void *ctx, void *peer_user, uint8_t tag, const void *data, size_t len)
{
    bsctp_stack_t *st = ctx;
    (void) tag;
    CHECK(len <= MAX_MSG - sizeof(bsctp_wire_hdr_t));
    bool found = false;
    for (uint32_t i = 0; i < st->num_links; i++) {
        const bsctp_link_t *l = &st->links[i];
        if (l->user == peer_user && l->ident_rx && !l->stranger && !l->failed) {
            found = true;
        }
    }
    CHECK(found);
    const uint8_t *p = data;
    uint8_t x = 0;
    for (size_t i = 0; i < len; i++) {
        x ^= p[i];
    }
    sink = x;
}

static void on_peer_failed(void *ctx, void *peer_user, uint32_t link, const char *why,
                           bool never_up)
{
    bsctp_stack_t *st = ctx;
    (void) never_up;
    CHECK(link < st->num_links && why != NULL && peer_user != NULL);
}

static int on_identify(void *ctx, uint32_t link, const ebtl_sockaddr_t *from, uint32_t jobid,
                       uint32_t vpid, void **peer_user)
{
    (void) ctx;
    (void) link;
    (void) from;
    if (jobid != JOBID || (vpid & 1)) {
        return -1;   /* odd ranks: not in our job */
    }
    *peer_user = &users[NLINKS];
    return 0;
}

/* ---- reading the input */

typedef struct {
    const uint8_t *p;
    size_t n;
} input_t;

static unsigned take8(input_t *in)
{
    if (in->n == 0) {
        return 0;
    }
    in->n--;
    return *in->p++;
}

static unsigned take16(input_t *in)
{
    unsigned hi = take8(in);
    return hi << 8 | take8(in);
}

static const uint8_t *take(input_t *in, size_t *len)
{
    if (*len > in->n) {
        *len = in->n;
    }
    const uint8_t *p = in->p;
    in->p += *len;
    in->n -= *len;
    return p;
}

/* Feed a message in pieces whose sizes come from the input. */
static void feed(bsctp_stack_t *st, uint32_t link, uint32_t assoc, uint16_t sid, const uint8_t *msg,
                 size_t len, unsigned piece)
{
    size_t step = piece == 0 ? len : piece;
    size_t off = 0;
    do {
        size_t k = len - off < step ? len - off : step;
        int flags = off + k == len ? MSG_EOR : 0;
        bsctp_assoc_input(st, link, assoc, sid, flags, msg + off, k);
        off += k;
    } while (off < len);
}

static void assoc_change(bsctp_stack_t *st, input_t *in)
{
    static const uint16_t states[] = {SCTP_COMM_UP, SCTP_COMM_LOST, SCTP_RESTART,
                                      SCTP_SHUTDOWN_COMP, SCTP_CANT_STR_ASSOC};
    struct sctp_assoc_change ac;
    memset(&ac, 0, sizeof(ac));
    ac.sac_type = SCTP_ASSOC_CHANGE;
    ac.sac_length = sizeof(ac);
    ac.sac_state = states[take8(in) % 5];
    ac.sac_assoc_id = (sctp_assoc_t) (take8(in) % 5);
    ac.sac_outbound_streams = (uint16_t) take8(in);
    size_t len = sizeof(ac) - (take8(in) % 4 == 0 ? take8(in) % sizeof(ac) : 0);
    bsctp_assoc_notification(st, MSG_EOR | MSG_NOTIFICATION, (const uint8_t *) &ac, len);
}

static void partial_delivery_aborted(bsctp_stack_t *st, input_t *in)
{
    struct sctp_pdapi_event pd;
    memset(&pd, 0, sizeof(pd));
    pd.pdapi_type = SCTP_PARTIAL_DELIVERY_EVENT;
    pd.pdapi_length = sizeof(pd);
    pd.pdapi_assoc_id = (sctp_assoc_t) (take8(in) % 5);
    pd.pdapi_stream = (uint16_t) (take8(in) % (STREAMS + 1));
    bsctp_assoc_notification(st, MSG_EOR | MSG_NOTIFICATION, (const uint8_t *) &pd, sizeof(pd));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bsctp_stack_t st;
    bsctp_link_t links[NLINKS];
    memset(&st, 0, sizeof(st));
    memset(links, 0, sizeof(links));
    st.cfg.max_msg = MAX_MSG;
    st.cfg.streams = STREAMS;
    st.cfg.jobid = JOBID;
    st.cfg.vpid = 0;
    st.cfg.job_key = JOB_KEY;
    st.ops.deliver = on_deliver;
    st.ops.peer_failed = on_peer_failed;
    st.ops.identify = on_identify;
    st.ctx = &st;
    st.mode = &no_socket_mode;
    st.style = &no_socket_style;
    st.rx = bsctp_assoc_rx;
    st.links = links;
    st.num_links = st.cap_links = NLINKS;
    for (uint32_t i = 0; i < NLINKS; i++) {
        links[i].in_use = true;
        links[i].jobid = JOBID;
        links[i].vpid = i + 1;
        links[i].user = &users[i];
    }
    links[NLINKS - 1].stranger = true;   /* known only by its datagrams */
    links[NLINKS - 1].user = NULL;
    st.strangers = 1;

    input_t in = {data, size};
    uint8_t msg[MAX_MSG + 64];
    while (in.n > 0) {
        unsigned op = take8(&in) % 10;
        uint32_t link = take8(&in) % NLINKS;
        uint32_t assoc = take8(&in) % 5;   /* 0: "none yet" */
        uint16_t stream = (uint16_t) (take8(&in) % (STREAMS + 1));
        switch (op) {
        case 0: {   /* raw message or piece */
            int flags = take8(&in) & 1 ? MSG_EOR : 0;
            size_t len = take16(&in) % (MAX_MSG + 64);
            const uint8_t *p = take(&in, &len);
            uint16_t n = (uint16_t) (assoc * 7);
            uint16_t sid = bsctp_stream_choose(flags != 0, n, (uint8_t) (0x40 + link), p, len, NULL);
            CHECK(sid == 0 || sid < n);
            uint32_t nonce, first, last;
            int kind = bsctp_probe_parse(p, len, &nonce);
            CHECK(kind == 0
                  || (len == BSCTP_PROBE_LEN && (kind == BSCTP_PROBE || kind == BSCTP_PROBE_ECHO)));
            (void) bsctp_packet_tsns(p, len, &first, &last);
            bsctp_seg_info_t seg;
            if (bsctp_seg_parse(p, len, &seg)) {
                static bsctp_seg_table_t segs;   /* packets put together across inputs */
                size_t whole = 0;
                const uint8_t *pkt = bsctp_seg_add(&segs, link % 3, &seg, p + BSCTP_SEG_HDR,
                                                   (uint64_t) take16(&in) * 100000u, &whole);
                CHECK(pkt == NULL || (whole == seg.total && whole <= BSCTP_SEG_PACKET_MAX));
            }
            bsctp_sack_t sk;
            if (bsctp_packet_sack(p, len, &sk)) {
                CHECK(sk.off >= 12 && sk.len >= 16 && sk.off + sk.len <= len);
                CHECK(sk.gap_n <= sk.gaps && sk.gap_n <= BSCTP_SACK_GAPS
                      && 16 + 4u * sk.gap_n <= sk.len);
                for (unsigned g = 0; g < sk.gap_n; g++) {
                    CHECK(sk.gap_hi[g] - sk.cum >= sk.gap_lo[g] - sk.cum
                          && sk.gap_lo[g] != sk.cum);   /* lo..hi beyond cum */
                }
                uint8_t cut[MAX_MSG + 64];
                memcpy(cut, p, len);
                CHECK(bsctp_packet_cut(cut, len, sk.off, sk.len) == len - sk.len);
            }
            bsctp_assoc_input(&st, link, assoc, stream, flags, p, len);
            break;
        }
        case 1: {   /* identification, some fields from the input */
            bsctp_wire_ident_t id;
            memset(&id, 0, sizeof(id));
            unsigned bad = take8(&in);
            id.hdr.version = bad & 1 ? (uint8_t) take8(&in) : BSCTP_WIRE_VERSION;
            id.hdr.kind = BSCTP_WIRE_IDENT;
            id.magic = htonl(bad & 2 ? take16(&in) : BSCTP_IDENT_MAGIC);
            id.jobid = htonl(bad & 4 ? take16(&in) : JOBID);
            id.vpid = htonl(bad & 8 ? take8(&in) : link + 1);
            uint64_t k = bad & 16 ? take16(&in) : JOB_KEY;
            id.job_key = ((uint64_t) htonl((uint32_t) k) << 32) | htonl((uint32_t) (k >> 32));
            size_t len = bad & 32 ? take8(&in) % (sizeof(id) + 8) : sizeof(id);
            memcpy(msg, &id, sizeof(id));
            memset(msg + sizeof(id), 0, 8);
            feed(&st, link, assoc, stream, msg, len, take8(&in) % 16);
            break;
        }
        case 2: {   /* a fragment behind a good header, mostly with the next number */
            bsctp_wire_hdr_t h = {.version = BSCTP_WIRE_VERSION, .kind = BSCTP_WIRE_FRAG,
                                 .tag = (uint8_t) take8(&in)};
            unsigned how = take8(&in);
            const bsctp_seq_t *q = &links[link].seq;
            uint32_t next = q->s != NULL && stream < q->n ? bsctp_seq_rx_expected(q, stream) : 1u;
            h.seq = htonl(how & 1 ? next + (how >> 1) - 64u : next);
            size_t len = take16(&in) % (MAX_MSG + 64 - sizeof(h));
            const uint8_t *p = take(&in, &len);
            memcpy(msg, &h, sizeof(h));
            memcpy(msg + sizeof(h), p, len);
            feed(&st, link, assoc, stream, msg, sizeof(h) + len, take16(&in) % 1024);
            break;
        }
        case 3: {   /* raw notification */
            int flags = MSG_NOTIFICATION | (take8(&in) & 1 ? MSG_EOR : 0);
            size_t len = take8(&in);
            const uint8_t *p = take(&in, &len);
            bsctp_assoc_notification(&st, flags, p, len);
            break;
        }
        case 4:
            assoc_change(&st, &in);
            break;
        case 7: {   /* an audit: a good header, entries from the input */
            bsctp_wire_hdr_t h = {.version = BSCTP_WIRE_VERSION, .kind = BSCTP_WIRE_AUDIT};
            size_t len = take8(&in) % (8 * (STREAMS + 2) + 4);
            const uint8_t *p = take(&in, &len);
            memcpy(msg, &h, sizeof(h));
            memcpy(msg + sizeof(h), p, len);
            feed(&st, link, assoc, stream, msg, sizeof(h) + len, take8(&in) % 16);
            break;
        }
        case 8: {   /* a request to send again: a good header, fields from the input */
            bsctp_wire_resend_t r = {.hdr = {.version = BSCTP_WIRE_VERSION,
                                             .kind = BSCTP_WIRE_RESEND}};
            unsigned bad = take8(&in);
            r.sid = htons((uint16_t) (bad & 1 ? take16(&in) : take8(&in) % (STREAMS + 1)));
            uint32_t first = take16(&in);
            r.first = htonl(first);
            r.last = htonl(bad & 2 ? take16(&in) : first + take8(&in) % 10u);
            r.reserved = (uint16_t) (bad & 4 ? take8(&in) : 0);
            size_t len = bad & 8 ? take8(&in) % (sizeof(r) + 8) : sizeof(r);
            memcpy(msg, &r, sizeof(r));
            memset(msg + sizeof(r), 0, 8);
            feed(&st, link, assoc, stream, msg, len, take8(&in) % 16);
            break;
        }
        case 9: {   /* a fragment sent again: the wrapper, then a good header
                     * with mostly the next number on the stream it names */
            uint16_t sid = (uint16_t) (take8(&in) % (STREAMS + 1));
            bsctp_wire_hdr_t w = {.version = BSCTP_WIRE_VERSION, .kind = BSCTP_WIRE_RESENT,
                                 .seq = htonl(sid)};
            bsctp_wire_hdr_t h = {.version = BSCTP_WIRE_VERSION, .kind = BSCTP_WIRE_FRAG,
                                 .tag = (uint8_t) take8(&in)};
            unsigned how = take8(&in);
            const bsctp_seq_t *q = &links[link].seq;
            uint32_t next = q->s != NULL && sid < q->n ? bsctp_seq_rx_expected(q, sid) : 1u;
            h.seq = htonl(how & 1 ? next + (how >> 1) - 64u : next);
            if (how & 0x80) {
                h.kind = (uint8_t) take8(&in);   /* not a fragment inside */
            }
            size_t len = take16(&in) % (MAX_MSG + 64 - 2 * sizeof(h));
            const uint8_t *p = take(&in, &len);
            memcpy(msg, &w, sizeof(w));
            memcpy(msg + sizeof(w), &h, sizeof(h));
            memcpy(msg + 2 * sizeof(h), p, len);
            feed(&st, link, assoc, stream, msg, 2 * sizeof(h) + len, take16(&in) % 1024);
            break;
        }
        case 5:
            partial_delivery_aborted(&st, &in);
            break;
        default:   /* the peer aborted by us, as a bad identification would; and
                    * (a shortcut) its link usable again if it had failed */
            bsctp_assoc_abort(&st, &links[link], "fuzz");
            links[link].failed = false;
            break;
        }
    }
    for (uint32_t i = 0; i < NLINKS; i++) {
        bsctp_assoc_link_fini(&st, &links[i]);
    }
    return 0;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The sctp transport without MPI: two usrsctp conn-mode stacks in one
 * process, each on its own UDP socket on 127.0.0.1, one-to-many sockets.
 * Checks every byte of messages of 1 B .. 1 MiB both ways (whole, and in
 * pieces into a small receive buffer), the send buffer filling and draining, a peer learnt from its identification, that a
 * stack of another job is refused, and (no socket) that pieces of messages
 * on different streams of one association, interleaved as usrsctp reads
 * them out, are put together per stream. Fragment numbers and idle
 * audits (btl_sctp_seq.h): a fragment dropped at the receiver (the
 * test-only cfg.test_drop_msg) ends the link with a message naming the
 * stream and numbers, by the next fragment's number or, when it was the
 * last, by the sender's idle audits within 2 s; an idle link without a
 * loss audits and nothing fails. The socket tests run in both
 * styles (one-to-many, one-to-one); in one-to-one, both sides sending first
 * at once must end with one association and every message once, in order.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <usrsctp.h>

#include "../../btl_sctp/btl_sctp_hdr.h"
#include "../../btl_sctp/btl_sctp_stack.h"
#include "unit.h"
#include "unit_lo.h"

#define MAX_PAYLOAD (1u << 20)
#ifndef TEST_INET
#define TEST_INET 0   /* test_sctp_inet.c: the same cases in inet mode */
#endif
#define SUITE (TEST_INET ? "bsctp_inet" : "bsctp_stack")
#define JOB_KEY 0x1234567890abcdefull

typedef struct side {
    bsctp_stack_t st;
    const char *name;
    /* what arrived */
    uint64_t received, bytes;
    uint32_t expect_seq;
    int bad;
    int failed;
    char why[512];           /* the last failure's reason */
    bool never_up;           /* ... said no association was ever made */
    int identified;
    bool echo;               /* send every message back */
    uint32_t known_vpid;     /* a stranger of this vpid identifies too (besides 0) */
    uint32_t echo_link;
    uint8_t *echo_buf;
    size_t echo_len;         /* a message waiting to go back */
} side_t;

static uint8_t pattern(uint32_t seq, size_t i)
{
    return (uint8_t) (seq * 131u + i * 7u + (i >> 8));
}

static void fill(uint8_t *buf, uint32_t seq, size_t len)
{
    bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_FRAG, 0x42, 0, 0};
    memcpy(buf, &h, sizeof(h));
    uint8_t *p = buf + sizeof(h);
    for (size_t i = 0; i < len; i++) {
        p[i] = pattern(seq, i);
    }
    if (len >= 4) {
        memcpy(p, &seq, 4);
    }
}

static void on_deliver(void *ctx, void *peer_user, uint8_t tag, const void *data, size_t len)
{
    side_t *s = ctx;
    (void) peer_user;
    const uint8_t *p = data;
    uint32_t seq = s->expect_seq;
    if (len >= 4) {
        memcpy(&seq, p, 4);
    }
    if (tag != 0x42 || seq != s->expect_seq) {
        s->bad++;
    }
    for (size_t i = 4; i < len; i++) {
        if (p[i] != pattern(seq, i)) {
            s->bad++;
            break;
        }
    }
    if (len < 4) {
        for (size_t i = 0; i < len; i++) {
            s->bad += p[i] != pattern(seq, i);
        }
    }
    s->expect_seq++;
    s->received++;
    s->bytes += len;
    if (s->echo) {
        /* Sent back from the test loop, not from inside the stack's drain. */
        memcpy(s->echo_buf + sizeof(bsctp_wire_hdr_t), data, len);
        s->echo_len = len + sizeof(bsctp_wire_hdr_t);
    }
}

static void on_failed(void *ctx, void *peer_user, uint32_t link, const char *why, bool never_up)
{
    side_t *s = ctx;
    (void) peer_user;
    s->never_up = never_up;
    printf("    %s: link %u failed: %s (out errors %llu)\n", s->name, link, why,
           (unsigned long long) s->st.stats.out_errors);
    snprintf(s->why, sizeof(s->why), "%s", why);
    s->failed++;
}

static int on_identify(void *ctx, uint32_t link, const ebtl_sockaddr_t *from, uint32_t jobid,
                       uint32_t vpid, void **peer_user)
{
    side_t *s = ctx;
    (void) from;
    if (jobid != 7 || (vpid != 0 && vpid != s->known_vpid)) {
        return -1;
    }
    s->identified++;
    s->echo_link = link;
    *peer_user = s;
    return 0;
}

static const bsctp_stack_ops_t ops = {on_deliver, on_failed, on_identify};

static ebtl_if_t lo;
static bool one_to_one;   /* the style the socket tests run in */

static uint64_t drop_msg;   /* the next side opened drops its n-th fragment (0: none) */
static uint32_t rto_min_ms = 20;   /* usrsctp's RTO.min of the sides opened next */
static uint32_t peer_timeout_ms = 30000;   /* ... and how long a silent peer is retried */

static bool open_side_with(side_t *s, const char *name, uint16_t port, uint32_t vpid, uint64_t key,
                           bool crc32c, size_t so_rcvbuf, size_t so_sndbuf)
{
    memset(s, 0, sizeof(*s));
    s->name = name;
    bsctp_stack_config_t cfg = {
        .ifaces = &lo,
        .num_ifaces = 1,
        .sctp_port = port,
        .udp_rcvbuf = 8u << 20,
        .udp_sndbuf = 4u << 20,
        .so_rcvbuf = so_rcvbuf,
        .so_sndbuf = so_sndbuf,
        .max_msg = MAX_PAYLOAD + sizeof(bsctp_wire_hdr_t),
        .rto_min_ms = rto_min_ms,
        .rto_max_ms = rto_min_ms > 100 ? rto_min_ms : 100,
        .rto_init_ms = rto_min_ms > 50 ? rto_min_ms : 50,
        .peer_timeout_ms = peer_timeout_ms,
        .streams = 16,
        .sack_delay_ms = 10,
        .sack_freq = 2,
        .max_burst = 4,
        .jobid = 7,
        .vpid = vpid,
        .job_key = key,
        .crc32c = crc32c,
        .mode = TEST_INET ? &bsctp_mode_inet : &bsctp_mode_conn,
        .style = one_to_one ? &bsctp_style_one_to_one : &bsctp_style_one_to_many,
        .heartbeat_ms = 100,   /* where the mode has heartbeats (inet) */
        .gso = true,
        .gro = true,
        .test_drop_msg = drop_msg,
    };
    char err[256] = "";
    if (bsctp_stack_open(&s->st, &cfg, &ops, s, err, sizeof(err)) != 0) {
        printf("    %s: %s\n", name, err);
        return false;
    }
    s->echo_buf = malloc(MAX_PAYLOAD + 64);
    return s->echo_buf != NULL;
}

static bool open_side_crc(side_t *s, const char *name, uint16_t port, uint32_t vpid, uint64_t key,
                          bool crc32c)
{
    return open_side_with(s, name, port, vpid, key, crc32c, 4u << 20, 4u << 20);
}

static bool open_side(side_t *s, const char *name, uint16_t port, uint32_t vpid, uint64_t key)
{
    return open_side_crc(s, name, port, vpid, key, true);
}

static void close_side(side_t *s)
{
    bsctp_stack_close(&s->st);
    free(s->echo_buf);
}

static void send_echo(side_t *s)
{
    if (s->echo_len == 0) {
        return;
    }
    bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_FRAG, 0x42, 0, 0};
    memcpy(s->echo_buf, &h, sizeof(h));
    int rc = bsctp_assoc_send(&s->st, s->echo_link, s->echo_buf, s->echo_len);
    if (rc == 0) {
        s->echo_len = 0;
    } else if (rc != -EAGAIN) {
        s->bad++;
        s->echo_len = 0;
    }
}

static void poll_both(side_t *a, side_t *b)
{
    bsctp_stack_poll(&a->st);
    bsctp_stack_poll(&b->st);
    send_echo(a);
    send_echo(b);
}

static int link_to(side_t *from, side_t *to, uint32_t vpid)
{
    ebtl_sockaddr_t udp;
    ebtl_sockaddr_set(&udp, AF_INET, lo.addr, bsctp_stack_udp_port(&to->st, 0));
    int l = bsctp_stack_link(&from->st, &udp, 0, to->st.cfg.sctp_port, false);
    if (l >= 0) {
        from->st.links[l].jobid = 7;
        from->st.links[l].vpid = vpid;
        from->st.links[l].user = to;
    }
    return l;
}

/* Sizes from 1 B to 1 MiB, A -> B -> (echo) -> A, every byte checked. */
static void sizes_both_ways(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5001, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5002, 1, JOB_KEY));
    b.echo = true;
    int l = link_to(&a, &b, 1);
    CHECK(l >= 0);
    static const size_t sizes[] = {1,     3,      4,      8,      100,    1000,   1400,
                                   4096,  8192,   16384,  65000,  65496,  65535,  65536,
                                   100000, 262144, 500000, 1048575, MAX_PAYLOAD};
    size_t n = sizeof(sizes) / sizeof(sizes[0]);
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
    for (size_t i = 0; i < n && l >= 0; i++) {
        fill(buf, (uint32_t) i, sizes[i]);
        int rc;
        while ((rc = bsctp_assoc_send(&a.st, (uint32_t) l, buf, sizes[i] + 8)) == -EAGAIN) {
            poll_both(&a, &b);
        }
        CHECK(rc == 0);
        if (rc != 0) {
            break;
        }
        while (a.received < i + 1 && ebtl_dgram_now_ns() < deadline && !a.failed && !b.failed) {
            poll_both(&a, &b);
        }
    }
    CHECK(b.received == n);
    CHECK(a.received == n);
    CHECK(a.bad == 0 && b.bad == 0);
    CHECK(b.identified == 1);   /* B learnt A from A's identification */
    CHECK(a.failed == 0 && b.failed == 0);
    CHECK(a.st.stats.rx_bad == 0 && b.st.stats.rx_bad == 0);
    /* The partial delivery point: a message that fits half the receive
     * buffer arrives whole, never copied into a reassembly buffer. */
    CHECK(a.st.stats.rx_partial == 0 && b.st.stats.rx_partial == 0);
    printf("    %s: %llu+%llu messages, %llu bytes; partial pieces A %llu B %llu; busy A %llu "
           "B %llu; path MTU %u\n", one_to_one ? "one-to-one" : "one-to-many",
           (unsigned long long) b.received, (unsigned long long) a.received,
           (unsigned long long) (a.bytes + b.bytes), (unsigned long long) a.st.stats.rx_partial,
           (unsigned long long) b.st.stats.rx_partial, (unsigned long long) a.st.stats.tx_busy,
           (unsigned long long) b.st.stats.tx_busy, a.st.cfg.pmtu);
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* A receive buffer smaller than twice a message: usrsctp hands it over in
 * pieces as they come (its partial delivery point is capped at half the
 * buffer), the link puts them together, every byte checked. */
static void small_receive_buffer_reassembles(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5023, 0, JOB_KEY));
    CHECK(open_side_with(&b, "B", 5024, 1, JOB_KEY, true, 256u << 10, 4u << 20));
    int l = link_to(&a, &b, 1);
    CHECK(l >= 0);
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    const uint32_t count = 12;
    uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
    for (uint32_t i = 0; i < count && l >= 0 && ebtl_dgram_now_ns() < deadline; i++) {
        size_t len = i % 2 ? MAX_PAYLOAD : 300000;
        fill(buf, i, len);
        int rc;
        while ((rc = bsctp_assoc_send(&a.st, (uint32_t) l, buf, len + 8)) == -EAGAIN
               && ebtl_dgram_now_ns() < deadline) {
            poll_both(&a, &b);
        }
        CHECK(rc == 0);
        if (rc != 0) {
            break;
        }
    }
    while (b.received < count && ebtl_dgram_now_ns() < deadline && !a.failed && !b.failed) {
        poll_both(&a, &b);
    }
    CHECK(b.received == count);
    CHECK(b.bad == 0 && b.st.stats.rx_bad == 0);
    CHECK(b.st.stats.rx_partial > 0);
    printf("    %s: %llu messages of 300000 B and 1 MiB into a 256 KiB receive buffer; "
           "partial pieces %llu\n", one_to_one ? "one-to-one" : "one-to-many",
           (unsigned long long) b.received, (unsigned long long) b.st.stats.rx_partial);
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* A stream of 64 KiB messages that overruns the send buffer: -EAGAIN, then
 * everything arrives in order once polled. */
static void stream_fills_send_buffer(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5003, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5004, 1, JOB_KEY));
    int l = link_to(&a, &b, 1);
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    const uint32_t count = 400;
    uint64_t t0 = ebtl_dgram_now_ns(), deadline = t0 + 20000000000ull;
    for (uint32_t i = 0; i < count && ebtl_dgram_now_ns() < deadline; i++) {
        fill(buf, i, 65536 - 8);
        int rc;
        while ((rc = bsctp_assoc_send(&a.st, (uint32_t) l, buf, 65536)) == -EAGAIN) {
            poll_both(&a, &b);
        }
        CHECK(rc == 0);
        if (rc != 0) {
            break;
        }
    }
    while (b.received < count && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    double s = (double) (ebtl_dgram_now_ns() - t0) / 1e9;
    CHECK(b.received == count);
    CHECK(b.bad == 0);
    CHECK(a.st.stats.tx_busy > 0);
    printf("    %u x 64 KiB in %.3f s (%.0f MB/s), send buffer full %llu times\n", count, s,
           count * 65536.0 / s / 1e6, (unsigned long long) a.st.stats.tx_busy);
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* Send, polling while the stack says -EAGAIN; the final result. */
static int send_polling(side_t *a, side_t *b, int l, uint8_t *buf, size_t len,
                        uint64_t deadline)
{
    int rc;
    while ((rc = bsctp_assoc_send(&a->st, (uint32_t) l, buf, len)) == -EAGAIN
           && ebtl_dgram_now_ns() < deadline) {
        poll_both(a, b);
    }
    return rc;
}

/* A message larger than the send buffer can never go (usrsctp refuses it
 * even from an empty buffer; btl_sctp_component.c refuses such a
 * configuration): the send fails with EMSGSIZE, on a new association and
 * on an idle one, instead of waiting for room that never comes. (usrsctp
 * may have taken its start: the BTL ends the job on that error.) */
static void message_larger_than_send_buffer(void)
{
    const size_t big = 200000, small = 1000;
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    for (int idle = 0; idle < 2; idle++) {
        side_t a, b;
        CHECK(open_side_with(&a, "A", (uint16_t) (5025 + 2 * idle), 0, JOB_KEY, true, 4u << 20,
                             64u << 10));
        CHECK(open_side(&b, "B", (uint16_t) (5026 + 2 * idle), 1, JOB_KEY));
        int l = link_to(&a, &b, 1);
        CHECK(l >= 0);
        uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
        if (idle) {
            fill(buf, 0, small);
            CHECK(send_polling(&a, &b, l, buf, small + 8, deadline) == 0);
            while (b.received < 1 && ebtl_dgram_now_ns() < deadline) {
                poll_both(&a, &b);
            }
            CHECK(b.received == 1 && b.bad == 0);
        }
        fill(buf, 1, big);
        CHECK(send_polling(&a, &b, l, buf, big + 8, deadline) == -EMSGSIZE);
        CHECK(ebtl_dgram_now_ns() < deadline);
        close_side(&a);
        close_side(&b);
    }
    free(buf);
}

/* Messages in two pieces (headers, then the payload from another buffer)
 * arrive as one message each. With the stack's idea of the send buffer
 * made too large, usrsctp takes only the start of some (as after a wrong
 * room estimate or a full chunk queue): the stack keeps their end, sends
 * it before the next message, and the caller's buffers are free after
 * every call. */
static void message_in_pieces_and_kept_ends(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5021, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5022, 1, JOB_KEY));
    int l = link_to(&a, &b, 1);
    const size_t head = 32;
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    const uint32_t count = 300;
    uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
    for (uint32_t i = 0; i < count && ebtl_dgram_now_ns() < deadline; i++) {
        size_t len = 2000 + (i * 7919u) % 60000u;
        fill(buf, i, len);
        struct iovec iov[2] = {{buf, head}, {buf + head, sizeof(bsctp_wire_hdr_t) + len - head}};
        int rc;
        /* (again each time: every new socket's options set it) */
        while ((a.st.sndbuf_limit = SIZE_MAX / 2,
                rc = bsctp_assoc_sendv(&a.st, (uint32_t) l, 0, iov, 2)) == -EAGAIN) {
            poll_both(&a, &b);
        }
        CHECK(rc == 0);
        memset(buf, 0xee, sizeof(bsctp_wire_hdr_t) + len);   /* not read after the call */
        if (rc != 0) {
            break;
        }
    }
    while ((b.received < count || a.st.rests > 0) && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
        bsctp_assoc_send_rests(&a.st);
    }
    CHECK(b.received == count);
    CHECK(b.bad == 0);
    CHECK(a.st.stats.tx_split > 0);   /* the kept-end path ran */
    CHECK(a.st.rests == 0);
    printf("    %llu of %u messages taken in part, their end kept and sent after\n",
           (unsigned long long) a.st.stats.tx_split, count);
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* Both sides start their association at once (INIT collision, as when two
 * ranks send to each other first): one association, no failure, a stream
 * of messages both ways arrives whole and in order. */
static void both_start_at_once(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5007, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5008, 1, JOB_KEY));
    int la = link_to(&a, &b, 1), lb = link_to(&b, &a, 0);
    CHECK(la >= 0 && lb >= 0);
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    const uint32_t count = 200;
    uint32_t sent_a = 0, sent_b = 0;
    uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
    while ((a.received < count || b.received < count) && ebtl_dgram_now_ns() < deadline
           && !a.failed && !b.failed) {
        size_t len = 1000 + (sent_a % 7) * 3000;
        if (sent_a < count) {
            fill(buf, sent_a, len);
            sent_a += bsctp_assoc_send(&a.st, (uint32_t) la, buf, len + 8) == 0;
        }
        len = 1000 + (sent_b % 7) * 3000;
        if (sent_b < count) {
            fill(buf, sent_b, len);
            sent_b += bsctp_assoc_send(&b.st, (uint32_t) lb, buf, len + 8) == 0;
        }
        poll_both(&a, &b);
    }
    printf("    A got %llu, B got %llu; up A %llu B %llu; lost A %llu B %llu; links A %u B %u\n",
           (unsigned long long) a.received, (unsigned long long) b.received,
           (unsigned long long) a.st.stats.assoc_up, (unsigned long long) b.st.stats.assoc_up,
           (unsigned long long) a.st.stats.assoc_lost, (unsigned long long) b.st.stats.assoc_lost,
           a.st.num_links, b.st.num_links);
    printf("    rejected A %llu B %llu; unidentified A %llu B %llu; bad A %llu B %llu\n",
           (unsigned long long) a.st.stats.assoc_rejected, (unsigned long long) b.st.stats.assoc_rejected,
           (unsigned long long) a.st.stats.rx_unidentified, (unsigned long long) b.st.stats.rx_unidentified,
           (unsigned long long) a.st.stats.rx_bad, (unsigned long long) b.st.stats.rx_bad);
    {
        struct sctpstat u;
        usrsctp_get_stat(&u);
        printf("    usrsctp: aborted %u timodata %u hb sent %u hb rx %u hback %u senderrors %u badsum %u "
               "hdrops %u recvpackets %u sendpackets %u ootb %u badvtag %u\n",
               u.sctps_aborted, u.sctps_timodata, u.sctps_sendheartbeat, u.sctps_recvheartbeat,
               u.sctps_recvheartbeatack, u.sctps_senderrors, u.sctps_badsum, u.sctps_hdrops,
               u.sctps_recvpackets, u.sctps_sendpackets, u.sctps_outoftheblue, u.sctps_badvtag);
    }
    CHECK(a.received == count && b.received == count);
    CHECK(a.bad == 0 && b.bad == 0 && a.failed == 0 && b.failed == 0);
    CHECK(a.identified == 0 && b.identified == 0);   /* each knew the other */
    CHECK(a.st.num_links == 1 && b.st.num_links == 1);
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* A stack of another job reaches B's address: B aborts the association and
 * counts it; nothing is delivered. */
static void other_job_refused(void)
{
    side_t b, x;
    CHECK(open_side(&b, "B", 5005, 1, JOB_KEY));
    CHECK(open_side(&x, "X", 5006, 0, JOB_KEY ^ 1));
    int l = link_to(&x, &b, 1);
    uint8_t buf[64];
    fill(buf, 0, 32);
    uint64_t deadline = ebtl_dgram_now_ns() + 2000000000ull;
    int rc;   /* one-to-one: -EAGAIN until X's own association is up */
    while ((rc = bsctp_assoc_send(&x.st, (uint32_t) l, buf, 40)) == -EAGAIN
           && ebtl_dgram_now_ns() < deadline) {
        poll_both(&x, &b);
    }
    CHECK(rc == 0);
    while (b.st.stats.assoc_rejected == 0 && ebtl_dgram_now_ns() < deadline) {
        poll_both(&x, &b);
    }
    for (int i = 0; i < 100; i++) {
        poll_both(&x, &b);
    }
    CHECK(b.st.stats.assoc_rejected == 1);
    printf("    B: rejected %llu, unknown sources %llu, bad %llu, up %llu; X failed %d\n",
           (unsigned long long) b.st.stats.assoc_rejected,
           (unsigned long long) b.st.stats.rx_unknown_src, (unsigned long long) b.st.stats.rx_bad,
           (unsigned long long) b.st.stats.assoc_up, x.failed);
    CHECK(b.received == 0);
    CHECK(b.identified == 0);
    close_side(&x);
    close_side(&b);
}

/* Feed one piece as the drain would (assoc 3, link 0). */
static void piece(side_t *s, uint16_t sid, const uint8_t *p, size_t n, bool eor)
{
    bsctp_assoc_input(&s->st, 0, 3, sid, eor ? MSG_EOR : 0, p, n);
}

/* A fragment's number on its stream, as the sender writes it. */
static void number(uint8_t *msg, uint32_t seq)
{
    uint32_t v = htonl(seq);
    memcpy(msg + 4, &v, 4);
}

/* One receiving side without a socket (an abort is only counted), its
 * peer identified on stream 0 of association 3. */
static void open_receiver(side_t *s, bsctp_link_t *link, uint16_t streams)
{
    memset(s, 0, sizeof(*s));
    memset(link, 0, sizeof(*link));
    s->name = "R";
    s->st.cfg.max_msg = 70000;
    s->st.cfg.streams = streams;
    s->st.cfg.jobid = 7;
    s->st.cfg.job_key = JOB_KEY;
    s->st.ops = ops;
    s->st.ctx = s;
    s->st.mode = &bsctp_mode_conn;
    s->st.style = &bsctp_style_one_to_many;
    s->st.rx = bsctp_assoc_rx;
    s->st.links = link;
    s->st.num_links = s->st.cap_links = 1;
    link->in_use = true;
    link->jobid = 7;
    link->user = s;
    bsctp_wire_ident_t id;
    memset(&id, 0, sizeof(id));
    id.hdr.version = BSCTP_WIRE_VERSION;
    id.hdr.kind = BSCTP_WIRE_IDENT;
    id.magic = htonl(BSCTP_IDENT_MAGIC);
    id.jobid = htonl(7);
    id.job_key = ((uint64_t) htonl((uint32_t) JOB_KEY) << 32) | htonl((uint32_t) (JOB_KEY >> 32));
    piece(s, 0, (const uint8_t *) &id, sizeof(id), true);
}

/* The receiver's checks, no socket: fragments in turn per stream are
 * delivered; one out of turn fails the link with a message naming the
 * stream and both numbers, and nothing more is delivered; an audit finds
 * a stream complete, short once (noted), and still short (lost); a
 * malformed audit is dropped and counted; another wire version fails a
 * known peer. */
static void numbers_checked_on_receipt(void)
{
    side_t s;
    bsctp_link_t link;
    open_receiver(&s, &link, 4);
    CHECK(link.ident_rx);
    static uint8_t m[5][108];
    for (uint32_t i = 0; i < 5; i++) {
        fill(m[i], i, 100);
    }
    number(m[0], 1);
    number(m[1], 1);   /* stream 2 */
    number(m[2], 2);
    number(m[3], 4);   /* 3 never came */
    piece(&s, 1, m[0], sizeof(m[0]), true);
    piece(&s, 2, m[1], sizeof(m[1]), true);
    piece(&s, 1, m[2], sizeof(m[2]), true);
    CHECK(s.received == 3 && s.failed == 0 && s.bad == 0);
    piece(&s, 1, m[3], sizeof(m[3]), true);
    CHECK(s.received == 3 && s.failed == 1 && link.failed);
    CHECK_STR_CONTAINS(s.why, "sent message 4 on SCTP stream 1 where message 3 was due");
    CHECK(s.st.stats.rx_lost == 1);
    number(m[4], 2);
    piece(&s, 2, m[4], sizeof(m[4]), true);   /* in turn, but the peer has failed */
    CHECK(s.received == 3 && s.failed == 1);
    bsctp_assoc_link_fini(&s.st, &link);

    /* Audits. */
    open_receiver(&s, &link, 4);
    for (uint32_t i = 0; i < 3; i++) {
        fill(m[i], i, 100);
        number(m[i], i + 1);
        piece(&s, 3, m[i], sizeof(m[i]), true);
    }
    CHECK(s.received == 3);
    uint8_t audit[8 + 2 * sizeof(bsctp_wire_audit_entry_t)];
    bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_AUDIT, 0, 0, 0};
    memcpy(audit, &h, sizeof(h));
    bsctp_wire_audit_entry_t e[2] = {{htons(3), 0, htonl(3)}, {htons(0), 0, htonl(0)}};
    memcpy(audit + 8, e, 8);
    piece(&s, 0, audit, 16, true);
    CHECK(s.st.stats.audits_rx == 1 && s.st.stats.audit_shorts == 0 && s.failed == 0);
    piece(&s, 1, audit, 16, true);   /* an audit on another stream: dropped */
    memcpy(audit + 8, e, sizeof(e));   /* stream 0 claimed at 0: fine */
    piece(&s, 0, audit, 13, true);   /* not whole entries: dropped */
    CHECK(s.st.stats.rx_bad == 2 && s.failed == 0);
    e[0].last = htonl(4);   /* one more than came */
    memcpy(audit + 8, e, 8);
    piece(&s, 0, audit, 16, true);
    CHECK(s.st.stats.audit_shorts == 1 && s.failed == 0);
    piece(&s, 0, audit, 16, true);   /* still short at the next audit: lost */
    CHECK(s.failed == 1 && s.st.stats.rx_lost == 1);
    CHECK_STR_CONTAINS(s.why, "sent message 4 on SCTP stream 3, which SCTP acknowledged but "
                              "which never reached the BTL (the last delivered on that stream "
                              "is 3");
    bsctp_assoc_link_fini(&s.st, &link);

    /* A short audit whose claim then arrives: never lost. */
    open_receiver(&s, &link, 4);
    fill(m[0], 0, 100);
    number(m[0], 1);
    piece(&s, 0, audit, 16, true);   /* stream 3 claimed at 4, none came yet */
    CHECK(s.st.stats.audit_shorts == 1);
    for (uint32_t i = 0; i < 4; i++) {
        fill(m[0], i, 100);
        number(m[0], i + 1);
        piece(&s, 3, m[0], sizeof(m[0]), true);
    }
    piece(&s, 0, audit, 16, true);
    CHECK(s.received == 4 && s.failed == 0 && s.st.stats.audit_shorts == 1);
    /* Another wire version from this peer: it fails, saying so. */
    fill(m[1], 0, 100);
    m[1][0] = BSCTP_WIRE_VERSION + 1;
    piece(&s, 3, m[1], sizeof(m[1]), true);
    CHECK(s.failed == 1);
    CHECK_STR_CONTAINS(s.why, "wire version");
    bsctp_assoc_link_fini(&s.st, &link);
}

/* Send count fragments of 100 B from a to link l (not ob1's bytes: all on
 * stream 0), then poll both until b received want, either failed, or the
 * time is up. */
static void send_some(side_t *a, side_t *b, int l, uint32_t count, uint64_t want,
                      uint64_t deadline)
{
    uint8_t buf[108];
    for (uint32_t i = 0; i < count && l >= 0; i++) {
        fill(buf, i, 100);
        int rc;
        while ((rc = bsctp_assoc_send(&a->st, (uint32_t) l, buf, sizeof(buf))) == -EAGAIN
               && ebtl_dgram_now_ns() < deadline) {
            poll_both(a, b);
        }
        CHECK(rc == 0);
    }
    while (b->received < want && ebtl_dgram_now_ns() < deadline && !a->failed && !b->failed) {
        poll_both(a, b);
    }
}

/* The receiver drops its 3rd fragment (cfg.test_drop_msg): the 4th's
 * number shows it at once; the message names stream and numbers. */
static void lost_fragment_found_by_number(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5041, 0, JOB_KEY));
    drop_msg = 3;
    CHECK(open_side(&b, "B", 5042, 1, JOB_KEY));
    drop_msg = 0;
    int l = link_to(&a, &b, 1);
    CHECK(l >= 0);
    uint64_t deadline = ebtl_dgram_now_ns() + 10000000000ull;
    send_some(&a, &b, l, 5, 5, deadline);
    while (!b.failed && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    CHECK(b.failed == 1 && b.received == 2 && b.st.stats.test_dropped == 1);
    CHECK(b.st.stats.rx_lost == 1);
    CHECK_STR_CONTAINS(b.why, "sent message 4 on SCTP stream ");
    CHECK_STR_CONTAINS(b.why, "where message 3 was due");
    close_side(&a);
    close_side(&b);
}

/* The receiver drops the last fragment the sender sends before going
 * idle: no later fragment shows it; the sender's idle audits do (two
 * audits 0.5 s apart after 0.5-0.75 s idle). Mode conn: the job fails
 * within 2 s. Mode inet (usrsctp's threads once lost such a message):
 * the first short audit asks for it again and the sender's kept copy
 * arrives, also one of the largest size the receiver accepts (its copy
 * comes in one more header); one too large to keep fails the peer on the
 * sender's side. Without a drop the idle link audits 3 times and nothing
 * fails. */
static void lost_fragment_found_by_audit(void)
{
    static uint8_t big[BSCTP_KEEP_MAX + 8];
    for (int drop = 3; drop >= 0; drop--) {
        if (drop >= 2 && !TEST_INET) {
            continue;   /* nothing is kept in mode conn */
        }
        side_t a, b;
        CHECK(open_side(&a, "A", (uint16_t) (5043 + 2 * drop), 0, JOB_KEY));
        drop_msg = drop ? 3 : 0;
        CHECK(open_side(&b, "B", (uint16_t) (5044 + 2 * drop), 1, JOB_KEY));
        drop_msg = 0;
        int l = link_to(&a, &b, 1);
        CHECK(l >= 0);
        uint64_t t0 = ebtl_dgram_now_ns(), deadline = t0 + 10000000000ull;
        if (drop >= 2) {   /* the 3rd too large to keep, or the largest kept */
            size_t len = drop == 2 ? sizeof(big) : BSCTP_KEEP_MAX;
            b.st.cfg.max_msg = len;   /* the largest the receiver accepts */
            send_some(&a, &b, l, 2, 2, deadline);
            fill(big, 2, len - 8);
            int rc;
            while ((rc = bsctp_assoc_send(&a.st, (uint32_t) l, big, len)) == -EAGAIN
                   && ebtl_dgram_now_ns() < deadline) {
                poll_both(&a, &b);
            }
            CHECK(rc == 0);
        } else {
            send_some(&a, &b, l, 3, drop ? 2 : 3, deadline);
        }
        uint64_t idle = ebtl_dgram_now_ns(), quiet_end = idle + 2500000000ull;
        bool recovers = (drop == 1 || drop == 3) && TEST_INET;
        while (!b.failed && !a.failed && ebtl_dgram_now_ns() < (drop && !recovers ? deadline : quiet_end)) {
            poll_both(&a, &b);
        }
        double secs = (double) (ebtl_dgram_now_ns() - idle) / 1e9;
        printf("    %s, %s: %s after %.2f s idle; audits sent %llu, read %llu, short %llu, "
               "pokes answered %llu, asked again %llu, sent again %llu, read again %llu\n",
               one_to_one ? "one-to-one" : "one-to-many",
               drop == 3 ? "3rd (largest kept) dropped" : drop == 2 ? "3rd (too large to keep) dropped"
               : drop ? "3rd fragment dropped" : "no drop",
               b.failed ? "receiver failed" : a.failed ? "sender failed" : "no failure",
               secs, (unsigned long long) a.st.stats.audits_tx,
               (unsigned long long) b.st.stats.audits_rx,
               (unsigned long long) b.st.stats.audit_shorts,
               (unsigned long long) b.st.stats.audit_pokes,
               (unsigned long long) b.st.stats.resend_asks,
               (unsigned long long) a.st.stats.resent_tx,
               (unsigned long long) b.st.stats.resent_rx);
        if (drop == 2) {
            CHECK(a.failed == 1 && b.received == 2 && b.st.stats.test_dropped == 1);
            CHECK(secs < 2.0 && b.st.stats.resend_asks == 1 && a.st.stats.resent_tx == 0);
            CHECK_STR_CONTAINS(a.why, "never read message 3 we sent on SCTP stream ");
            CHECK_STR_CONTAINS(a.why, "no longer holds a copy");
        } else if (recovers) {
            CHECK(b.failed == 0 && a.failed == 0 && b.received == 3);
            CHECK(b.st.stats.test_dropped == 1 && b.st.stats.audit_shorts == 1);
            CHECK(b.st.stats.resend_asks == 1 && a.st.stats.resent_tx == 1);
            CHECK(b.st.stats.resent_rx == 1 && b.st.stats.rx_dups == 0 && b.st.stats.rx_bad == 0);
        } else if (drop) {
            CHECK(b.failed == 1 && b.received == 2 && b.st.stats.test_dropped == 1);
            CHECK(secs < 2.0);
            CHECK(a.st.stats.audits_tx >= 2 && b.st.stats.audit_shorts == 1);
            CHECK(b.st.stats.audit_pokes == 1);   /* usrsctp answered the poke */
            CHECK(b.st.stats.resend_asks == 0);   /* mode conn keeps nothing */
            CHECK_STR_CONTAINS(b.why, "sent message 3 on SCTP stream ");
            CHECK_STR_CONTAINS(b.why, "which SCTP acknowledged but which never reached the BTL");
        } else {
            CHECK(b.failed == 0 && a.failed == 0 && b.received == 3);
            CHECK(a.st.stats.audits_tx == BSCTP_AUDITS_MAX);
            CHECK(b.st.stats.audits_rx == BSCTP_AUDITS_MAX && b.st.stats.audit_shorts == 0);
        }
        close_side(&a);
        close_side(&b);
    }
}

/* usrsctp hands out a piece of a message on one stream, then pieces (or
 * whole messages) of other streams, before the rest of the first: every
 * message must still arrive whole. A partial delivery aborted on one stream
 * drops only that stream's half message. */
static void pieces_interleave_across_streams(void)
{
    side_t s;
    bsctp_link_t link;
    open_receiver(&s, &link, 4);
    CHECK(link.ident_rx);

    /* Numbered in the order they complete (on_deliver checks it). */
    static uint8_t a[60008], b[30008], c[5008], d[40008], e[40008];
    fill(a, 0, sizeof(a) - 8);
    fill(c, 1, sizeof(c) - 8);   /* whole, on a third stream, in between */
    fill(b, 2, sizeof(b) - 8);
    fill(d, 3, sizeof(d) - 8);
    fill(e, 4, sizeof(e) - 8);
    /* each stream's numbers: a 1 (stream 1), c 1 (3), b 1 and d 2 (2), e 2
     * (1: sent again whole after its aborted start, with the same number) */
    number(a, 1);
    number(c, 1);
    number(b, 1);
    number(d, 2);
    number(e, 2);
    piece(&s, 1, a, 20000, false);
    piece(&s, 2, b, 10000, false);
    piece(&s, 1, a + 20000, 20000, false);
    piece(&s, 2, b + 10000, 10000, false);
    piece(&s, 1, a + 40000, sizeof(a) - 40000, true);
    CHECK(s.received == 1);
    piece(&s, 3, c, sizeof(c), true);
    CHECK(s.received == 2);
    piece(&s, 2, b + 20000, sizeof(b) - 20000, true);
    CHECK(s.received == 3);

    /* A half message on stream 1 whose delivery is aborted: gone; stream 2's
     * half stays and completes. */
    piece(&s, 1, e, 1000, false);
    piece(&s, 2, d, 2000, false);
    struct sctp_pdapi_event pd;
    memset(&pd, 0, sizeof(pd));
    pd.pdapi_type = SCTP_PARTIAL_DELIVERY_EVENT;
    pd.pdapi_length = sizeof(pd);
    pd.pdapi_assoc_id = 3;
    pd.pdapi_stream = 1;
    bsctp_assoc_notification(&s.st, MSG_EOR | MSG_NOTIFICATION, (const uint8_t *) &pd, sizeof(pd));
    piece(&s, 2, d + 2000, sizeof(d) - 2000, true);
    CHECK(s.received == 4);
    piece(&s, 1, e, sizeof(e), true);   /* stream 1 starts clean */
    CHECK(s.received == 5);
    CHECK(s.bad == 0);
    CHECK(s.bytes == sizeof(a) + sizeof(b) + sizeof(c) + sizeof(d) + sizeof(e) - 5 * 8);
    CHECK(s.st.stats.rx_bad == 0);

    /* A stream beyond those granted is refused, not indexed. */
    piece(&s, 4, d, 100, false);
    CHECK(s.st.stats.rx_bad == 1);
    CHECK(s.st.stats.assoc_rejected == 1);
    bsctp_assoc_link_fini(&s.st, &link);
}

/* Our CRC32c is SCTP's: the value usrsctp's own routine computes over the
 * packet with the field zeroed, in the field's byte order. */
static void crc32c_matches_usrsctp(void)
{
    static uint8_t pkt[9000];
    for (size_t i = 0; i < sizeof(pkt); i++) {
        pkt[i] = (uint8_t) (i * 37u + (i >> 7));
    }
    static const size_t lens[] = {12, 13, 16, 100, 1452, 8999, 9000};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        uint8_t copy[sizeof(pkt)];
        memcpy(copy, pkt, lens[k]);
        memset(copy + 8, 0, 4);
        uint32_t theirs = usrsctp_crc32c(copy, lens[k]);   /* as stored in the field */
        uint32_t ours = bsctp_packet_crc32c(pkt, lens[k]);  /* the field ignored */
        uint8_t field[4] = {(uint8_t) ours, (uint8_t) (ours >> 8), (uint8_t) (ours >> 16),
                            (uint8_t) (ours >> 24)};
        CHECK(memcmp(field, &theirs, 4) == 0);
    }
}

/* A known peer's packet with a wrong checksum is dropped and counted before
 * usrsctp sees it; a peer with btl_sctp_crc32c 0 (checksum field 0) is
 * still understood, both ways. */
static void crc32c_checked(void)
{
    side_t a, b;
    CHECK(open_side_crc(&a, "A", 5007, 0, JOB_KEY, false));
    CHECK(open_side(&b, "B", 5008, 1, JOB_KEY));
    b.echo = true;
    int l = link_to(&a, &b, 1);
    uint8_t buf[2000];
    fill(buf, 0, 1500);
    CHECK(l >= 0 && bsctp_assoc_send(&a.st, (uint32_t) l, buf, 1508) == 0);
    uint64_t deadline = ebtl_dgram_now_ns() + 5000000000ull;
    while (a.received < 1 && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    CHECK(b.received == 1 && a.received == 1 && a.bad == 0 && b.bad == 0);
    CHECK(b.st.stats.rx_badsum == 0);

    /* An SCTP header with a checksum that does not match, from A's address. */
    uint8_t bad[64];
    memset(bad, 0x5a, sizeof(bad));
    bad[8] = 1;
    struct iovec iov = {bad, sizeof(bad)};
    CHECK(ebtl_dgram_send(&a.st.socks[0], &b.st.socks[0].local, &iov, 1) == 0);
    deadline = ebtl_dgram_now_ns() + 2000000000ull;
    while (b.st.stats.rx_badsum == 0 && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    CHECK(b.st.stats.rx_badsum == 1);
    CHECK(b.st.stats.rx_bad == 0 && b.failed == 0);
    close_side(&a);
    close_side(&b);
}

/* Live usrsctp sockets of a one-to-one stack (listener not counted). */
static size_t live_sockets(side_t *s)
{
    return s->st.style->live(&s->st);
}

/* One of the style's own counters (its describe text, " name=value ..."). */
static unsigned long long style_counter(side_t *s, const char *name)
{
    char text[512], key[64];
    s->st.style->describe(&s->st, text, sizeof(text));
    snprintf(key, sizeof(key), " %s=", name);
    const char *p = strstr(text, key);
    return p != NULL ? strtoull(p + strlen(key), NULL, 10) : 0;   /* missing: checks fail */
}

/* Our end of the association a link uses: its local and remote SCTP ports. */
static bool link_ports(side_t *s, uint32_t link, uint16_t *local, uint16_t *remote)
{
    struct socket *so;
    uint32_t id;
    struct sockaddr *addrs = NULL;
    if (!s->st.style->assoc_socket(&s->st, &s->st.links[link], &so, &id)) {
        return false;   /* none up */
    }
    int n = usrsctp_getladdrs(so, id, &addrs);
    bool ok = n > 0 && addrs[0].sa_family == AF_CONN;
    if (ok) {
        *local = ntohs(((struct sockaddr_conn *) addrs)->sconn_port);
    }
    if (addrs != NULL) {
        usrsctp_freeladdrs(addrs);
    }
    addrs = NULL;
    n = usrsctp_getpaddrs(so, id, &addrs);
    ok = ok && n > 0 && addrs[0].sa_family == AF_CONN;
    if (ok) {
        *remote = ntohs(((struct sockaddr_conn *) addrs)->sconn_port);
    }
    if (addrs != NULL) {
        usrsctp_freepaddrs(addrs);
    }
    return ok;
}

/* One-to-one: both sides know each other and send first at the same time,
 * so both connect. The association of the lower vpid (A) must win: one
 * association remains, the other is shut down, and every message arrives
 * once, in order (on_deliver checks the sequence). Run with B lower too
 * (sides swapped), and with sizes that go in pieces. */
static void both_send_first_once(uint32_t vpid_a, uint32_t vpid_b, uint16_t port_a, uint16_t port_b)
{
    side_t a, b;
    CHECK(open_side(&a, "A", port_a, vpid_a, JOB_KEY));
    CHECK(open_side(&b, "B", port_b, vpid_b, JOB_KEY));
    int la = link_to(&a, &b, vpid_b), lb = link_to(&b, &a, vpid_a);
    CHECK(la >= 0 && lb >= 0);
    const uint32_t count = 300;
    static const size_t sizes[] = {8, 100, 1400, 9000, 70000};
    uint8_t *buf = malloc(MAX_PAYLOAD + 64);
    uint32_t sent_a = 0, sent_b = 0;
    uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
    /* Each side sends as far as it may before either polls: both connect. */
    while ((sent_a < count || sent_b < count || a.received < count || b.received < count)
           && ebtl_dgram_now_ns() < deadline && !a.failed && !b.failed) {
        while (sent_a < count) {
            size_t len = sizes[sent_a % 5];
            fill(buf, sent_a, len);
            int rc = bsctp_assoc_send(&a.st, (uint32_t) la, buf, len + 8);
            if (rc == -EAGAIN) {
                break;
            }
            CHECK(rc == 0);
            sent_a++;
        }
        while (sent_b < count) {
            size_t len = sizes[sent_b % 5];
            fill(buf, sent_b, len);
            int rc = bsctp_assoc_send(&b.st, (uint32_t) lb, buf, len + 8);
            if (rc == -EAGAIN) {
                break;
            }
            CHECK(rc == 0);
            sent_b++;
        }
        poll_both(&a, &b);
    }
    /* Let the losing association finish shutting down. */
    for (int i = 0; i < 2000 && (live_sockets(&a) > 1 || live_sockets(&b) > 1); i++) {
        poll_both(&a, &b);
    }
    CHECK(a.received == count && b.received == count);   /* once each: no more, no fewer */
    CHECK(a.bad == 0 && b.bad == 0);
    CHECK(a.failed == 0 && b.failed == 0);
    CHECK(style_counter(&a, "connects") == 1 && style_counter(&b, "connects") == 1);   /* both connected */
    CHECK(style_counter(&a, "accepts") == 1 && style_counter(&b, "accepts") == 1);
    CHECK(live_sockets(&a) == 1 && live_sockets(&b) == 1);   /* one association remains */
    uint16_t a_local = 0, a_remote = 0, b_local = 0, b_remote = 0;
    CHECK(link_ports(&a, (uint32_t) la, &a_local, &a_remote));
    CHECK(link_ports(&b, (uint32_t) lb, &b_local, &b_remote));
    CHECK(a_local == b_remote && a_remote == b_local);   /* the same one at both ends */
    /* The lower side's connection won: its remote port is the listener's. */
    CHECK(vpid_a < vpid_b ? a_remote == port_b : b_remote == port_a);
    CHECK(style_counter(&a, "upcalls") > 0 && style_counter(&b, "upcalls") > 0);
    printf("    A vpid %u, B vpid %u: %u+%u messages; association A:%u <-> B:%u; elections A %llu "
           "B %llu; dropped A %llu B %llu; upcalls A %llu B %llu\n",
           vpid_a, vpid_b, (unsigned) b.received, (unsigned) a.received, a_local, b_local,
           style_counter(&a, "elections"),
           style_counter(&b, "elections"),
           style_counter(&a, "dropped"), style_counter(&b, "dropped"),
           style_counter(&a, "upcalls"), style_counter(&b, "upcalls"));
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* One-to-one: the higher side (B) connects first; its INIT reaches the
 * lower side (A) before A knows B, so A's link to B is a stranger's that
 * took the INIT's source port: B's connecting socket's, where nothing
 * listens. A then learns B (ob1's add_proc: bsctp_stack_link with B's
 * published port) and sends before it accepted B's association: its own
 * connection wins the election and must reach B's listener. It went to
 * the connecting socket's port, was answered with ABORT, and was made
 * again without end (a hang in the 1 % loss cluster runs). */
static void stranger_link_connects_to_listener(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5027, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5028, 1, JOB_KEY));
    a.known_vpid = 1;   /* as ob1 knows every rank */
    int lb = link_to(&b, &a, 0);
    CHECK(lb >= 0);
    uint8_t buf[108];
    fill(buf, 0, 100);
    CHECK(bsctp_assoc_send(&b.st, (uint32_t) lb, buf, sizeof(buf)) == -EAGAIN);   /* connects, not sent */
    bsctp_stack_flush(&b.st);
    uint64_t deadline = ebtl_dgram_now_ns() + 10000000000ull;
    while (a.st.num_links == 0 && ebtl_dgram_now_ns() < deadline) {
        bsctp_stack_poll(&a.st);   /* B's INIT makes A's stranger link */
    }
    CHECK(a.st.num_links == 1 && a.st.links[0].stranger);
    uint16_t init_port = a.st.links[0].sctp_port;
    int la = link_to(&a, &b, 1);   /* A learns B */
    CHECK(la == 0);
    CHECK(a.st.links[la].sctp_port == b.st.cfg.sctp_port);
    fill(buf, 0, 100);
    int rc;
    while ((rc = bsctp_assoc_send(&a.st, (uint32_t) la, buf, sizeof(buf))) == -EAGAIN
           && ebtl_dgram_now_ns() < deadline && !a.failed) {
        poll_both(&a, &b);
    }
    CHECK(rc == 0);
    while ((rc = bsctp_assoc_send(&b.st, (uint32_t) lb, buf, sizeof(buf))) == -EAGAIN
           && ebtl_dgram_now_ns() < deadline && !b.failed) {
        poll_both(&a, &b);   /* and B's, on the association that won */
    }
    CHECK(rc == 0);
    while ((b.received < 1 || a.received < 1) && ebtl_dgram_now_ns() < deadline && !a.failed
           && !b.failed) {
        poll_both(&a, &b);
    }
    printf("    B's INIT came from port %u (B listens on %u); A connected %llu time(s), "
           "elections A %llu B %llu; A got %llu, B got %llu\n", init_port,
           (unsigned) b.st.cfg.sctp_port, style_counter(&a, "connects"),
           style_counter(&a, "elections"), style_counter(&b, "elections"),
           (unsigned long long) a.received, (unsigned long long) b.received);
    CHECK(init_port != b.st.cfg.sctp_port);   /* the case this is about */
    CHECK(a.received == 1 && b.received == 1 && a.bad == 0 && b.bad == 0);
    CHECK(a.failed == 0 && b.failed == 0);
    CHECK(style_counter(&a, "connects") == 1);
    close_side(&a);
    close_side(&b);
}

/* One-to-one: the port B published has no listener (B's process is gone,
 * or it published another port). A's INIT is answered with ABORT: A fails
 * the peer once, saying it never reached it (the help text then speaks of
 * addresses, not of the peer timeout), instead of connecting for ever. */
static void unreachable_listener_fails_once(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5029, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5030, 1, JOB_KEY));
    int la = link_to(&a, &b, 1);
    CHECK(la >= 0);
    a.st.links[la].sctp_port = 5031;   /* nothing listens there */
    uint8_t buf[108];
    fill(buf, 0, 100);
    uint64_t deadline = ebtl_dgram_now_ns() + 10000000000ull;
    int rc;
    while ((rc = bsctp_assoc_send(&a.st, (uint32_t) la, buf, sizeof(buf))) == -EAGAIN
           && ebtl_dgram_now_ns() < deadline && !a.failed) {
        poll_both(&a, &b);
    }
    printf("    send rc %d, A connected %llu time(s), failed %d (never up %d)\n", rc,
           style_counter(&a, "connects"), a.failed, (int) a.never_up);
    CHECK(a.failed == 1 && a.never_up);
    CHECK_STR_CONTAINS(a.why, "could not be reached");
    CHECK(style_counter(&a, "connects") == 1);
    CHECK(b.received == 0 && b.failed == 0);
    close_side(&a);
    close_side(&b);
}

/* A peer that stops answering (its process stopped) is reported lost once
 * usrsctp gives up on it, never a silent hang. In style one-to-many of mode
 * conn usrsctp's timers queue that notification without an upcall. Conn
 * mode only: in inet mode usrsctp's threads answer for an unpolled B. */
static void silent_peer_is_lost(void)
{
    side_t a, b;
    peer_timeout_ms = 600;   /* 6 retransmissions at RTO.max 100 ms */
    CHECK(open_side(&a, "A", 5043, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5044, 1, JOB_KEY));
    peer_timeout_ms = 30000;
    int la = link_to(&a, &b, 1);
    CHECK(la >= 0);
    uint8_t buf[108];
    fill(buf, 0, 100);
    uint64_t deadline = ebtl_dgram_now_ns() + 5000000000ull;
    while (bsctp_assoc_send(&a.st, (uint32_t) la, buf, sizeof(buf)) == -EAGAIN
           && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    while (b.received == 0 && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    CHECK(b.received == 1 && b.bad == 0);
    /* B stops: only A runs from now on. */
    fill(buf, 1, 100);
    CHECK(bsctp_assoc_send(&a.st, (uint32_t) la, buf, sizeof(buf)) == 0);
    uint64_t t0 = ebtl_dgram_now_ns();
    deadline = t0 + 10000000000ull;
    while (a.failed == 0 && ebtl_dgram_now_ns() < deadline) {
        bsctp_stack_poll(&a.st);
    }
    printf("    A: failed %d after %.3f s\n", a.failed, (double) (ebtl_dgram_now_ns() - t0) / 1e9);
    CHECK(a.failed == 1);
    CHECK_STR_CONTAINS(a.why, "association was lost");
    close_side(&a);
    close_side(&b);
}

/* Inet mode: once the last stack closed, usrsctp's timer and receive
 * threads are gone (usrsctp_finish succeeded). */
static void no_thread_left(void)
{
    int threads = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        threads += e->d_name[0] != '.';
    }
    if (d != NULL) {
        closedir(d);
    }
    printf("    threads now %d\n", threads);
    CHECK(threads == 1);
}

static void both_send_first(void)
{
    both_send_first_once(0, 1, 5011, 5012);
    both_send_first_once(3, 2, 5013, 5014);
}

/* The stall watch's kick (conn mode: the peer's last SACK fed to usrsctp
 * again) may come at any time: it must never disturb an association. A
 * stream both ways with both sides kicked every few messages arrives
 * whole and in order. */
static void kick_is_harmless(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5023, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5024, 1, JOB_KEY));
    int la = link_to(&a, &b, 1);
    b.echo = true;   /* B sends every message back: SACKs and DATA both ways */
    uint8_t *buf = malloc(65536);
    const uint32_t count = 300;
    uint64_t deadline = ebtl_dgram_now_ns() + 20000000000ull;
    unsigned kicks = 0;
    for (uint32_t i = 0; i < count && ebtl_dgram_now_ns() < deadline; i++) {
        fill(buf, i, 65536 - 8);
        int rc;
        while ((rc = bsctp_assoc_send(&a.st, (uint32_t) la, buf, 65536)) == -EAGAIN) {
            poll_both(&a, &b);
        }
        CHECK(rc == 0);
        if (rc != 0) {
            break;
        }
        while (a.received <= i && ebtl_dgram_now_ns() < deadline) {
            poll_both(&a, &b);   /* its echo back: one message at a time */
        }
        if (i % 7 == 0) {
            a.st.mode->kick(&a.st, (uint32_t) la);
            for (uint32_t k = 0; k < b.st.num_links; k++) {
                b.st.mode->kick(&b.st, k);
            }
            kicks += a.st.links[la].last_sack_len > 0;
        }
    }
    while ((b.received < count || a.received < count) && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    CHECK(b.received == count && a.received == count);
    CHECK(a.bad == 0 && b.bad == 0 && a.failed == 0 && b.failed == 0);
    CHECK(kicks > 10);   /* A had a SACK to feed again most times */
    printf("    %u x 64 KiB echoed, %u kicks with a SACK kept\n", count, kicks);
    free(buf);
    close_side(&a);
    close_side(&b);
}

/* Messages seq .. seq + count - 1 of len bytes from a to b, each sent once
 * usrsctp takes it. */
static void send_seq(side_t *a, side_t *b, int l, uint32_t seq, uint32_t count, size_t len,
                     uint64_t deadline)
{
    static uint8_t buf[16384 + sizeof(bsctp_wire_hdr_t)];
    for (uint32_t i = seq; i < seq + count; i++) {
        fill(buf, i, len);
        int rc;
        while ((rc = bsctp_assoc_send(&a->st, (uint32_t) l, buf, len + sizeof(bsctp_wire_hdr_t)))
                   == -EAGAIN
               && ebtl_dgram_now_ns() < deadline) {
            poll_both(a, b);
        }
        CHECK(rc == 0);
    }
}

/* send_seq, then polls until b has them all. */
static void send_all(side_t *a, side_t *b, int l, uint32_t seq, uint32_t count, size_t len,
                     uint64_t deadline)
{
    send_seq(a, b, l, seq, count, len, deadline);
    while (b->received < seq + count && !a->failed && !b->failed && ebtl_dgram_now_ns() < deadline) {
        poll_both(a, b);
    }
    CHECK(b->received == seq + count);
}

/* Messages 0-4, then 5-44 with their 3rd packet lost: usrsctp sends it
 * again (fast or by T3), which turns mode conn's copies on. */
static void lose_one_mid_stream(side_t *a, side_t *b, int l, uint64_t deadline)
{
    send_all(a, b, l, 0, 5, 1000, deadline);   /* the association up */
    CHECK(!a->st.links[l].rescue.keeping);
    a->st.cfg.test_drop_data = a->st.test_data_pkts + 3;
    send_all(a, b, l, 5, 40, 4000, deadline);
    CHECK(a->st.links[l].rescue.keeping);
}

/* Mode conn's tail probe (btl_sctp_rescue.h): once a link has lost a
 * packet, the lost only packet of a message is sent again by the probe
 * after tail_probe_ms of quiet, before usrsctp's T3 timer (RTO.min 300 ms
 * here) expires; with the probe off, only that timer sends it. */
static double tail_loss_secs(side_t *a, side_t *b, int l, uint32_t seq, uint32_t probe_ms,
                             uint64_t *t3, uint64_t deadline)
{
    uint32_t unacked = 1, queued;
    while (unacked != 0 && ebtl_dgram_now_ns() < deadline) {
        poll_both(a, b);   /* everything acknowledged first */
        CHECK(bsctp_assoc_outstanding(&a->st, (uint32_t) l, &unacked, &queued));
    }
    struct sctpstat u0, u1;
    usrsctp_get_stat(&u0);
    a->st.cfg.tail_probe_ms = probe_ms;
    a->st.cfg.test_drop_data = a->st.test_data_pkts + 1;
    uint64_t t0 = ebtl_dgram_now_ns();
    send_all(a, b, l, seq, 1, 1000, deadline);
    double secs = (double) (ebtl_dgram_now_ns() - t0) / 1e9;
    usrsctp_get_stat(&u1);
    *t3 = u1.sctps_timodata - u0.sctps_timodata;
    return secs;
}

static void tail_probe_repairs_a_lost_last_packet(void)
{
    side_t a, b;
    rto_min_ms = 300;
    bool opened = open_side(&a, "A", 5031, 0, JOB_KEY) && open_side(&b, "B", 5032, 1, JOB_KEY);
    rto_min_ms = 20;
    CHECK(opened);
    int l = link_to(&a, &b, 1);
    CHECK(l >= 0);
    uint64_t deadline = ebtl_dgram_now_ns() + 30000000000ull;
    lose_one_mid_stream(&a, &b, l, deadline);
    uint64_t t3_off, t3_on;
    double off = tail_loss_secs(&a, &b, l, 45, 0, &t3_off, deadline);
    uint64_t probes_off = a.st.stats.tail_probes;
    double on = tail_loss_secs(&a, &b, l, 46, 15, &t3_on, deadline);
    printf("    lost last packet: probe off %.3f s (T3 expiries %llu), probe on (15 ms) %.3f s "
           "(T3 expiries %llu, probes %llu, packets %llu)\n", off, (unsigned long long) t3_off, on,
           (unsigned long long) t3_on, (unsigned long long) a.st.stats.tail_probes,
           (unsigned long long) a.st.stats.tail_probe_pkts);
    CHECK(probes_off == 0 && t3_off >= 1 && off >= 0.25);   /* usrsctp's T3 did it */
    CHECK(a.st.stats.tail_probes == 1 && a.st.stats.tail_probe_pkts == 1);
    CHECK(t3_on == 0 && on < 0.25);   /* the probe did it, before any T3 */
    send_all(&a, &b, l, 47, 10, 1000, deadline);   /* and on as before */
    CHECK(a.failed == 0 && b.failed == 0 && b.bad == 0);
    close_side(&a);
    close_side(&b);
}

/* Mode conn's rescue of a lost T3 timer (btl_sctp_rescue.h): a packet lost
 * and retransmitted turns the copies on; then, with usrsctp's timers held
 * still (as when it lost its T3), the only packet of a message is lost. No
 * SACK reports it and nothing sends it again: the stall watch's kick sends
 * our copy, and the message arrives. */
static void rescue_sends_what_usrsctp_does_not(void)
{
    side_t a, b;
    CHECK(open_side(&a, "A", 5025, 0, JOB_KEY));
    CHECK(open_side(&b, "B", 5026, 1, JOB_KEY));
    int l = link_to(&a, &b, 1);
    CHECK(l >= 0);
    uint64_t deadline = ebtl_dgram_now_ns() + 30000000000ull;
    bsctp_rescue_t *r = &a.st.links[l].rescue;
    lose_one_mid_stream(&a, &b, l, deadline);
    CHECK(a.st.stats.test_dropped == 1);
    /* Timers held still, the next packet of DATA lost. */
    uint32_t unacked = 1, queued;
    while (unacked != 0 && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);   /* everything acknowledged first */
        CHECK(bsctp_assoc_outstanding(&a.st, (uint32_t) l, &unacked, &queued));
    }
    a.st.cfg.test_no_timers = b.st.cfg.test_no_timers = true;
    a.st.cfg.test_drop_data = a.st.test_data_pkts + 1;
    uint64_t t0 = ebtl_dgram_now_ns();
    send_seq(&a, &b, l, 45, 1, 1000, deadline);
    while (b.received < 46 && !a.failed && !b.failed && ebtl_dgram_now_ns() < deadline) {
        poll_both(&a, &b);
    }
    double secs = (double) (ebtl_dgram_now_ns() - t0) / 1e9;
    printf("    lost with no timer: arrived after %.2f s; kicks %llu, rescues %llu, packets %llu, "
           "copies kept %u\n", secs, (unsigned long long) a.st.stats.stall_kicks,
           (unsigned long long) a.st.stats.rescues, (unsigned long long) a.st.stats.rescued_pkts,
           r->count);
    CHECK(b.received == 46 && a.st.stats.test_dropped == 2);
    CHECK(a.st.stats.stall_kicks == 1 && a.st.stats.rescues == 1 && a.st.stats.rescued_pkts >= 1);
    CHECK(secs >= 0.25 && secs < 2.0);   /* the watch's kick, after 3 RTO.max (300 ms) */
    a.st.cfg.test_no_timers = b.st.cfg.test_no_timers = false;
    send_all(&a, &b, l, 46, 10, 1000, deadline);   /* and on as before */
    CHECK(b.bad == 0 && a.failed == 0 && b.failed == 0);
    close_side(&a);
    close_side(&b);
}

/* The stall watch's decision: only the same unacknowledged data, with no
 * T3 expiry or retransmission in the process, for the whole period. */
static void stall_watch_decides(void)
{
    const uint64_t S = 1000000000u, stall = 10 * S;
    bsctp_link_t l;

    memset(&l, 0, sizeof(l));   /* the same data, untouched */
    CHECK(!bsctp_stack_link_stalled(&l, 1 * S, true, 5, 1000, false, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 5 * S, true, 5, 1000, false, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 10 * S, true, 5, 1000, false, stall));
    CHECK(bsctp_stack_link_stalled(&l, 11 * S, true, 5, 1000, false, stall));

    memset(&l, 0, sizeof(l));   /* a T3 expiry somewhere starts the period again */
    CHECK(!bsctp_stack_link_stalled(&l, 1 * S, true, 5, 1000, false, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 6 * S, true, 5, 1000, true, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 15 * S, true, 5, 1000, false, stall));
    CHECK(bsctp_stack_link_stalled(&l, 16 * S, true, 5, 1000, false, stall));

    memset(&l, 0, sizeof(l));   /* acknowledgements or newly queued bytes: moving */
    CHECK(!bsctp_stack_link_stalled(&l, 1 * S, true, 5, 1000, false, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 9 * S, true, 4, 1000, false, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 18 * S, true, 4, 1200, false, stall));
    CHECK(!bsctp_stack_link_stalled(&l, 27 * S, true, 4, 1200, false, stall));
    CHECK(bsctp_stack_link_stalled(&l, 28 * S, true, 4, 1200, false, stall));

    memset(&l, 0, sizeof(l));   /* nothing unacknowledged, or no association: never */
    for (uint64_t t = 1; t < 100; t += 7) {
        CHECK(!bsctp_stack_link_stalled(&l, t * S, true, 0, 5000, false, stall));
    }
    for (uint64_t t = 100; t < 200; t += 7) {
        CHECK(!bsctp_stack_link_stalled(&l, t * S, false, 0, 0, false, stall));
    }

    memset(&l, 0, sizeof(l));   /* a kick is tried once per stall */
    CHECK(!bsctp_stack_link_stalled(&l, 1 * S, true, 5, 1000, false, stall));
    l.watch_kicked = true;
    CHECK(!bsctp_stack_link_stalled(&l, 2 * S, true, 5, 1000, false, stall) && l.watch_kicked);
    CHECK(!bsctp_stack_link_stalled(&l, 3 * S, true, 4, 1000, false, stall) && !l.watch_kicked);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    lo = unit_lo_if(65536);
    RUN(SUITE, sizes_both_ways);
    RUN(SUITE, stream_fills_send_buffer);
    RUN(SUITE, small_receive_buffer_reassembles);
    RUN(SUITE, other_job_refused);
    RUN(SUITE, both_start_at_once);
    RUN(SUITE, stall_watch_decides);
    RUN(SUITE, lost_fragment_found_by_number);
    RUN(SUITE, lost_fragment_found_by_audit);
    if (!TEST_INET) {
        RUN(SUITE, silent_peer_is_lost);   /* inet: usrsctp's threads answer for B */
        RUN(SUITE, message_in_pieces_and_kept_ends);   /* conn mode only: bsctp_stack_takes_pieces */
        RUN(SUITE, message_larger_than_send_buffer);
        RUN(SUITE, pieces_interleave_across_streams);   /* no socket: the same in both modes */
        RUN(SUITE, numbers_checked_on_receipt);   /* no socket too */
        RUN(SUITE, crc32c_matches_usrsctp);
        RUN(SUITE, crc32c_checked);   /* our check on our UDP sockets: conn mode */
        RUN(SUITE, kick_is_harmless);   /* conn mode's kick */
        RUN(SUITE, rescue_sends_what_usrsctp_does_not);   /* ... and its rescue */
        RUN(SUITE, tail_probe_repairs_a_lost_last_packet);   /* ... and its tail probe */
        one_to_one = true;
        RUN("bsctp_stack one-to-one", sizes_both_ways);
        RUN("bsctp_stack one-to-one", stream_fills_send_buffer);
        RUN("bsctp_stack one-to-one", small_receive_buffer_reassembles);
        RUN("bsctp_stack one-to-one", message_in_pieces_and_kept_ends);
        RUN("bsctp_stack one-to-one", message_larger_than_send_buffer);
        RUN("bsctp_stack one-to-one", other_job_refused);
        RUN("bsctp_stack one-to-one", both_send_first);
        RUN("bsctp_stack one-to-one", stranger_link_connects_to_listener);
        RUN("bsctp_stack one-to-one", unreachable_listener_fails_once);
        RUN("bsctp_stack one-to-one", lost_fragment_found_by_number);
        RUN("bsctp_stack one-to-one", lost_fragment_found_by_audit);
    } else {
        RUN(SUITE, no_thread_left);
    }
    return UNIT_RESULT();
}

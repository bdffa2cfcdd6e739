/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the UDP datagram layer (common/ebtl_dgram.c), on 127.0.0.1
 * only. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ebtl_dgram.h"
#include "ebtl_fault.h"
#include "unit.h"
#include "unit_lo.h"

static bool open_lo_mtu(ebtl_dgram_sock_t *s, bool gro, unsigned mtu)
{
    ebtl_if_t ifa = unit_lo_if(mtu);
    ebtl_dgram_open_args_t args = {
        .iface = &ifa, .port = 0, .rcvbuf = 8u << 20, .sndbuf = 4u << 20, .want_gro = gro};
    char err[256] = "";
    if (ebtl_dgram_open(s, &args, err, sizeof(err)) != 0) {
        printf("    open on lo: %s\n", err);
        return false;
    }
    return true;
}

static bool open_lo(ebtl_dgram_sock_t *s, bool gro)
{
    return open_lo_mtu(s, gro, 65536);
}

/* A received datagram, copied (the layer's buffer lasts until the next call). */
typedef struct got {
    unsigned char *data;
    size_t len;
    ebtl_sockaddr_t from;
} got_t;

static void sleep_us(long us)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};
    nanosleep(&ts, NULL);
}

/* Poll until want datagrams arrived or about timeout_ms passed (then a
 * little longer, to see any extra). Returns how many, at most cap kept. */
static unsigned recv_wait(ebtl_dgram_sock_t *s, got_t *got, unsigned cap, unsigned want,
                          unsigned max_per_call, int timeout_ms)
{
    unsigned n = 0;
    uint64_t deadline = ebtl_dgram_now_ns() + (uint64_t) timeout_ms * 1000000u;
    uint64_t extra_until = 0;
    ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    for (;;) {
        uint64_t now = ebtl_dgram_now_ns();
        int r = ebtl_dgram_recv(s, msgs, max_per_call, now);
        if (r < 0) {
            printf("    ebtl_dgram_recv: %s\n", strerror(-r));
            break;
        }
        CHECK((unsigned) r <= max_per_call);
        for (int i = 0; i < r; i++) {
            if (got != NULL && n < cap) {
                got[n].data = malloc(msgs[i].len ? msgs[i].len : 1);
                memcpy(got[n].data, msgs[i].buf, msgs[i].len);
                got[n].len = msgs[i].len;
                got[n].from = msgs[i].from;
            }
            n++;
        }
        if (r > 0) {
            continue;
        }
        if (n >= want && extra_until == 0) {
            extra_until = now + 20000000u; /* 20 ms more for anything extra */
        }
        if (now > deadline || (extra_until != 0 && now > extra_until)) {
            break;
        }
        sleep_us(100);
    }
    return n;
}

static void got_free(got_t *got, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(got[i].data);
    }
}

static void pattern(unsigned char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = (unsigned char) (i * 131 + seed * 7 + (i >> 8));
    }
}

static void open_two(void)
{
    ebtl_dgram_sock_t a, b;
    CHECK(open_lo(&a, false));
    CHECK(open_lo(&b, true));
    CHECK(a.fd >= 0 && b.fd >= 0);
    CHECK(a.family == AF_INET && a.local.u.in4.sin_family == AF_INET);
    CHECK(ntohs(a.local.u.in4.sin_port) != 0);
    CHECK(ntohs(a.local.u.in4.sin_port) != ntohs(b.local.u.in4.sin_port));
    CHECK(a.local.u.in4.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    CHECK(a.mtu == 65536 && a.max_payload == 65507);
    CHECK(a.rx_buf_size >= 65507 && a.rx_buf_size % 64 == 0);
    CHECK(b.rx_buf_size >= 65536);
    CHECK(a.rcvbuf > 0 && a.sndbuf > 0);
    CHECK(a.fault == NULL);
    char buf[64];
    CHECK_STR_CONTAINS(ebtl_sockaddr_format(&a.local, buf, sizeof(buf)), "127.0.0.1:");
    printf("    rcvbuf %zu sndbuf %zu (asked 8 MiB / 4 MiB), gso %d, gro %d\n", a.rcvbuf,
           a.sndbuf, a.gso, b.gro);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
    ebtl_dgram_close(&b); /* twice is harmless */

    /* mtu 0: loopback 65536, else 1500 */
    ebtl_if_t ifa = unit_lo_if(0);
    ebtl_dgram_open_args_t args = {.iface = &ifa};
    char err[256];
    CHECK(ebtl_dgram_open(&a, &args, err, sizeof(err)) == 0);
    CHECK(a.mtu == 65536 && a.max_payload == 65507);
    ebtl_dgram_close(&a);
    ifa.loopback = false;
    CHECK(ebtl_dgram_open(&a, &args, err, sizeof(err)) == 0);
    CHECK(a.mtu == 1500 && a.max_payload == 1472);
    ebtl_dgram_close(&a);
}

static void sockaddr_helpers(void)
{
    const unsigned char v4[4] = {10, 1, 2, 3};
    unsigned char v6[16] = {0xfd, 0};
    v6[15] = 1;
    ebtl_sockaddr_t a, b;
    char buf[64];
    ebtl_sockaddr_set(&a, AF_INET, v4, 4567);
    CHECK(strcmp(ebtl_sockaddr_format(&a, buf, sizeof(buf)), "10.1.2.3:4567") == 0);
    CHECK(a.len == sizeof(struct sockaddr_in));
    ebtl_sockaddr_set(&b, AF_INET, v4, 4567);
    CHECK(ebtl_sockaddr_equal(&a, &b));
    ebtl_sockaddr_set(&b, AF_INET, v4, 4568);
    CHECK(!ebtl_sockaddr_equal(&a, &b));
    ebtl_sockaddr_set(&b, AF_INET6, v6, 4567);
    CHECK(!ebtl_sockaddr_equal(&a, &b));
    CHECK(strcmp(ebtl_sockaddr_format(&b, buf, sizeof(buf)), "[fd00::1]:4567") == 0);
    CHECK(b.len == sizeof(struct sockaddr_in6));
    ebtl_sockaddr_set(&a, AF_INET6, v6, 4567);
    CHECK(ebtl_sockaddr_equal(&a, &b));
    v6[15] = 2;
    ebtl_sockaddr_set(&a, AF_INET6, v6, 4567);
    CHECK(!ebtl_sockaddr_equal(&a, &b));
}

/* One datagram gathered from 3 pieces arrives byte-exact from the sender. */
static void gathered_send(void)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    unsigned char p1[10], p2[1000], p3[33], whole[1043];
    pattern(p1, sizeof(p1), 1);
    pattern(p2, sizeof(p2), 2);
    pattern(p3, sizeof(p3), 3);
    memcpy(whole, p1, 10);
    memcpy(whole + 10, p2, 1000);
    memcpy(whole + 1010, p3, 33);
    struct iovec v[3] = {{p1, sizeof(p1)}, {p2, sizeof(p2)}, {p3, sizeof(p3)}};
    CHECK(ebtl_dgram_send(&a, &b.local, v, 3) == 0);
    got_t got[4];
    unsigned n = recv_wait(&b, got, 4, 1, EBTL_DGRAM_RX_BATCH, 1000);
    CHECK(n == 1);
    if (n >= 1) {
        CHECK(got[0].len == sizeof(whole) && memcmp(got[0].data, whole, sizeof(whole)) == 0);
        CHECK(ebtl_sockaddr_equal(&got[0].from, &a.local));
    }
    CHECK(a.stats.tx_datagrams == 1 && a.stats.tx_bytes == sizeof(whole));
    CHECK(b.stats.rx_datagrams == 1 && b.stats.rx_bytes == sizeof(whole));
    got_free(got, n < 4 ? n : 4);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* 40 datagrams of varying sizes from two senders through one queue: the
 * headers are copied at add (their storage is reused at once), all arrive
 * byte-exact from the right sender, each sender's in order (the flush sends
 * one socket's group after the other's). */
static void txq_batch(void)
{
    enum { N = 40 };
    ebtl_dgram_sock_t a, c, b;
    if (!open_lo(&a, false) || !open_lo(&c, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    static unsigned char payload[N][9000];
    size_t len[N];
    ebtl_dgram_txq_t q;
    ebtl_dgram_txq_init(&q);
    for (unsigned i = 0; i < N; i++) {
        unsigned char hdr[EBTL_DGRAM_HDR_COPY];
        size_t hl = 4 + i % 3 * 40;
        memset(hdr, (int) i, hl);
        memcpy(hdr, &i, sizeof(i));
        len[i] = (i * 1777) % 9000;
        pattern(payload[i], len[i], i);
        struct iovec v[3] = {{hdr, hl}, {payload[i], len[i] / 2}, {payload[i] + len[i] / 2, len[i] - len[i] / 2}};
        ebtl_dgram_sock_t *from = i >= 20 && i < 30 ? &c : &a;
        CHECK(ebtl_dgram_txq_add(&q, from, &b.local, v, i % 2 ? 3 : 2) == 0);
        if (i % 2 == 0) {
            len[i] = len[i] / 2; /* only two pieces sent */
        }
        memset(hdr, 0xEE, sizeof(hdr)); /* the queue holds its own copy */
        len[i] += hl;
    }
    CHECK(q.count == N);
    CHECK(ebtl_dgram_txq_flush(&q) == 0);
    CHECK(q.count == 0);
    CHECK(a.stats.tx_datagrams == 30 && c.stats.tx_datagrams == 10);
    got_t got[N + 4];
    unsigned n = recv_wait(&b, got, N + 4, N, EBTL_DGRAM_RX_BATCH, 1000);
    CHECK(n == N);
    int bad = 0;
    for (unsigned k = 0; k < n && k < N; k++) {
        /* a's 30 (0..19, 30..39) then c's 10 (20..29) */
        unsigned i = k < 20 ? k : k < 30 ? k + 10 : k - 10;
        unsigned id;
        memcpy(&id, got[k].data, sizeof(id));
        size_t hl = 4 + i % 3 * 40;
        unsigned char want[9000 + EBTL_DGRAM_HDR_COPY];
        memset(want, (int) i, hl);
        memcpy(want, &i, sizeof(i));
        memcpy(want + hl, payload[i], len[i] - hl);
        bad += id != i || got[k].len != len[i] || memcmp(got[k].data, want, len[i]) != 0;
        bad += !ebtl_sockaddr_equal(&got[k].from, i >= 20 && i < 30 ? &c.local : &a.local);
    }
    CHECK(bad == 0);
    got_free(got, n < N + 4 ? n : N + 4);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
    ebtl_dgram_close(&c);
}

/* More than a queue holds: it flushes itself; bad arguments are refused. */
static void txq_autoflush(void)
{
    enum { N = 3 * EBTL_DGRAM_TXQ_LEN + 5 };
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    ebtl_dgram_txq_t q;
    ebtl_dgram_txq_init(&q);
    unsigned char big[EBTL_DGRAM_HDR_COPY + 1];
    memset(big, 0, sizeof(big));
    struct iovec v[EBTL_DGRAM_MAX_IOV + 1];
    for (int i = 0; i <= EBTL_DGRAM_MAX_IOV; i++) {
        v[i].iov_base = big;
        v[i].iov_len = 1;
    }
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, v, 0) == -EINVAL);
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, v, EBTL_DGRAM_MAX_IOV + 1) == -EINVAL);
    v[0].iov_len = EBTL_DGRAM_HDR_COPY + 1;
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, v, 1) == -EINVAL);
    CHECK(q.count == 0);
    v[0].iov_len = EBTL_DGRAM_HDR_COPY;
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, v, EBTL_DGRAM_MAX_IOV) == 0);
    ebtl_dgram_txq_flush(&q);
    CHECK(recv_wait(&b, NULL, 0, 1, EBTL_DGRAM_RX_BATCH, 1000) == 1);

    for (unsigned i = 0; i < N; i++) {
        unsigned char hdr[8];
        memcpy(hdr, &i, sizeof(i));
        struct iovec one = {hdr, 4};
        CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, &one, 1) == 0);
        CHECK(q.count >= 1 && q.count <= EBTL_DGRAM_TXQ_LEN);
    }
    CHECK(ebtl_dgram_txq_flush(&q) == 0);
    got_t got[N + 4];
    unsigned n = recv_wait(&b, got, N + 4, N, 7, 1000);
    CHECK(n == N);
    int bad = 0;
    for (unsigned i = 0; i < n && i < N; i++) {
        unsigned id;
        memcpy(&id, got[i].data, sizeof(id));
        bad += got[i].len != 4 || id != i;
    }
    CHECK(bad == 0);
    got_free(got, n < N + 4 ? n : N + 4);
    CHECK(ebtl_dgram_txq_flush(&q) == 0); /* empty */
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* The largest datagram goes through; one byte more fails and nothing
 * arrives, also from a send queue. */
static void max_and_oversize(void)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    static unsigned char buf[EBTL_DGRAM_MAX_PAYLOAD + 1];
    pattern(buf, sizeof(buf), 77);
    struct iovec v = {buf, EBTL_DGRAM_MAX_PAYLOAD};
    CHECK(ebtl_dgram_send(&a, &b.local, &v, 1) == 0);
    got_t got[2];
    unsigned n = recv_wait(&b, got, 2, 1, EBTL_DGRAM_RX_BATCH, 1000);
    CHECK(n == 1);
    if (n >= 1) {
        CHECK(got[0].len == EBTL_DGRAM_MAX_PAYLOAD &&
              memcmp(got[0].data, buf, EBTL_DGRAM_MAX_PAYLOAD) == 0);
    }
    got_free(got, n < 2 ? n : 2);

    v.iov_len = EBTL_DGRAM_MAX_PAYLOAD + 1;
    int rc = ebtl_dgram_send(&a, &b.local, &v, 1);
    CHECK(rc < 0);
    if (rc != -EMSGSIZE) {
        printf("    oversize send returned %d (%s)\n", rc, strerror(-rc));
    }
    CHECK(a.stats.tx_errors == 1);

    /* in a queue: that one dropped, its neighbours sent */
    ebtl_dgram_txq_t q;
    ebtl_dgram_txq_init(&q);
    unsigned char h[4] = {1, 2, 3, 4};
    struct iovec ok[2] = {{h, 4}, {buf, 100}};
    struct iovec over[2] = {{h, 4}, {buf, EBTL_DGRAM_MAX_PAYLOAD - 3}};
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, ok, 2) == 0);
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, over, 2) == 0);
    CHECK(ebtl_dgram_txq_add(&q, &a, &b.local, ok, 2) == 0);
    CHECK(ebtl_dgram_txq_flush(&q) == 1);
    CHECK(a.stats.tx_errors == 2);
    n = recv_wait(&b, NULL, 0, 2, EBTL_DGRAM_RX_BATCH, 1000);
    CHECK(n == 2);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* A datagram longer than the receive buffer is counted and dropped. */
static void truncated_dropped(void)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo_mtu(&b, false, 1500)) {
        CHECK(0);
        return;
    }
    CHECK(b.max_payload == 1472 && b.rx_buf_size < 2000);
    static unsigned char buf[2000];
    pattern(buf, sizeof(buf), 5);
    struct iovec big = {buf, 2000}, small = {buf, 1000};
    CHECK(ebtl_dgram_send(&a, &b.local, &big, 1) == 0);
    CHECK(ebtl_dgram_send(&a, &b.local, &small, 1) == 0);
    got_t got[2];
    unsigned n = recv_wait(&b, got, 2, 1, EBTL_DGRAM_RX_BATCH, 1000);
    CHECK(n == 1);
    if (n >= 1) {
        CHECK(got[0].len == 1000 && memcmp(got[0].data, buf, 1000) == 0);
    }
    CHECK(b.stats.rx_truncated == 1 && b.stats.rx_datagrams == 1);
    got_free(got, n < 2 ? n : 2);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* A receiver that does not read: once its buffer is full the kernel
 * drops, and ebtl_dgram_kernel_drops counts what it dropped. */
static void kernel_drops_counted(void)
{
    ebtl_dgram_sock_t a, b;
    ebtl_if_t ifa = unit_lo_if(65536);
    ebtl_dgram_open_args_t args = {.iface = &ifa, .port = 0, .rcvbuf = 64u << 10, .sndbuf = 4u << 20};
    char err[256] = "";
    if (!open_lo(&a, false) || ebtl_dgram_open(&b, &args, err, sizeof(err)) != 0) {
        printf("    open: %s\n", err);
        CHECK(0);
        return;
    }
    CHECK(ebtl_dgram_kernel_drops(&b) == 0);
    static unsigned char buf[8192];
    pattern(buf, sizeof(buf), 9);
    struct iovec v = {buf, sizeof(buf)};
    unsigned sent = 0;
    for (int i = 0; i < 200; i++) {   /* 1.6 MB into a buffer of 64 KiB (128 KiB granted) */
        sent += ebtl_dgram_send(&a, &b.local, &v, 1) == 0;
    }
    got_t got[EBTL_DGRAM_RX_BATCH];
    unsigned n = 0, r;
    while ((r = recv_wait(&b, got, EBTL_DGRAM_RX_BATCH, 1, EBTL_DGRAM_RX_BATCH, 100)) > 0) {
        got_free(got, r);
        n += r;
    }
    uint64_t drops = ebtl_dgram_kernel_drops(&b);
    printf("    %u sent, %u read, %llu dropped by the kernel\n", sent, n, (unsigned long long) drops);
    CHECK(sent == 200 && n < sent && drops > 0 && n + drops == sent);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* Segments from one send_gso: each an independent datagram, in order,
 * whether the kernel segments (GSO), the receiver splits (GRO) or the
 * layer falls back to one by one. */
static void gso_case(bool gro, bool force_fallback, size_t len, size_t seg, unsigned max_per_call)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, gro)) {
        CHECK(0);
        return;
    }
    if (force_fallback) {
        a.gso = false;
    }
    unsigned char *buf = malloc(len);
    pattern(buf, len, 9);
    unsigned want = (unsigned) ((len + seg - 1) / seg);
    CHECK(ebtl_dgram_send_gso(&a, &b.local, buf, len, seg) == 0);
    CHECK(a.stats.tx_datagrams == want && a.stats.tx_bytes == len);
    got_t *got = calloc(want + 4, sizeof(*got));
    unsigned n = recv_wait(&b, got, want + 4, want, max_per_call, 1000);
    CHECK(n == want);
    int bad = 0;
    for (unsigned i = 0; i < n && i < want; i++) {
        size_t l = i + 1 < want ? seg : len - (size_t) i * seg;
        bad += got[i].len != l || memcmp(got[i].data, buf + (size_t) i * seg, l) != 0;
        bad += !ebtl_sockaddr_equal(&got[i].from, &a.local);
    }
    CHECK(bad == 0);
    CHECK(b.stats.rx_datagrams == want);
    got_free(got, n < want + 4 ? n : want + 4);
    free(got);
    free(buf);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

static void gso_ten_segments(void)
{
    ebtl_dgram_sock_t a;
    if (open_lo(&a, false)) {
        bool probed = a.gso;
        static unsigned char two[2000];
        CHECK(ebtl_dgram_send_gso(&a, &a.local, two, sizeof(two), 1000) == 0);
        printf("    UDP GSO %s\n", !probed ? "not available (one by one)"
                                   : a.gso ? "available and used"
                                           : "refused at send (fell back to one by one)");
        ebtl_dgram_close(&a);
    }
    gso_case(false, false, 10000, 1000, EBTL_DGRAM_RX_BATCH);
}

static void gso_to_gro_receiver(void)
{
    gso_case(true, false, 10000, 1000, EBTL_DGRAM_RX_BATCH);
    gso_case(true, false, 10000, 1000, 3); /* split kept for the next calls */
    gso_case(true, false, 9500, 1000, 1);  /* last segment shorter */
}

static void gso_many_segments(void)
{
    gso_case(false, false, 150 * 400, 400, EBTL_DGRAM_RX_BATCH); /* > 64 per call: split */
    gso_case(true, false, 150 * 400, 400, EBTL_DGRAM_RX_BATCH);
    gso_case(false, false, 3 * 30000, 30000, EBTL_DGRAM_RX_BATCH); /* 2 per call */
}

static void gso_fallback(void)
{
    gso_case(false, true, 10000, 1000, EBTL_DGRAM_RX_BATCH);
    gso_case(true, true, 10000, 1000, EBTL_DGRAM_RX_BATCH);
    ebtl_dgram_sock_t a;
    if (open_lo(&a, false)) {
        static unsigned char buf[10];
        CHECK(ebtl_dgram_send_gso(&a, &a.local, buf, sizeof(buf), 0) == -EINVAL);
        CHECK(ebtl_dgram_send_gso(&a, &a.local, buf, 0, 1000) == 0);
        CHECK(a.stats.tx_datagrams == 0);
        ebtl_dgram_close(&a);
    }
}

/* ---- the send queue's GSO coalescing, through real sockets ---- */

/* A datagram of a txq case: its destination (index), header bytes and
 * total bytes; its content is made from its number. */
typedef struct dg_spec {
    unsigned dst;
    size_t hl, len;
} dg_spec_t;

/* Seeded, so a failing case fails the same way again. */
static unsigned lcg(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

typedef struct txq_result {
    uint64_t tx_gso, tx_gso_refused, tx_errors, rx_gro;
    bool gso_after;
    int bad;             /* datagrams missing, extra, or not byte-exact */
} txq_result_t;

enum { TXQ_MAX_DST = 3 };

/* Send the n datagrams of spec through one send queue from socket a (GSO
 * off when gso_off, SO_NO_CHECK when no_check: the kernel then refuses
 * GSO), each gathered from a header (overwritten after add: the queue keeps
 * a copy) and up to 3 pieces of its content; receive them on ndst sockets
 * (GRO on those whose bit is set in gro_mask), and check each receiver got
 * exactly its datagrams, in order, every byte and every boundary. */
static txq_result_t txq_case(const dg_spec_t *spec, unsigned n, unsigned ndst, unsigned gro_mask,
                             bool gso_off, bool no_check)
{
    txq_result_t res = {0};
    ebtl_dgram_sock_t a, b[TXQ_MAX_DST];
    bool ok = open_lo(&a, false);
    for (unsigned d = 0; d < ndst; d++) {
        ok = open_lo(&b[d], (gro_mask >> d) & 1) && ok;
    }
    if (!ok) {
        res.bad = -1;
        return res;
    }
    if (gso_off) {
        a.gso = false;
    }
    if (no_check) {
        int one = 1;
        CHECK(setsockopt(a.fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0);
    }
    unsigned char **data = calloc(n, sizeof(*data));
    ebtl_dgram_txq_t *q = malloc(sizeof(*q));
    ebtl_dgram_txq_init(q);
    size_t bytes = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t len = spec[i].len, hl = spec[i].hl;
        data[i] = malloc(len);
        pattern(data[i], len, i);
        memcpy(data[i], &i, sizeof(i));
        unsigned char hdr[EBTL_DGRAM_HDR_COPY];
        memcpy(hdr, data[i], hl);
        /* the rest in 1..3 pieces (an empty piece included now and then) */
        size_t rest = len - hl, cut1 = rest / 3, cut2 = rest - rest / 5;
        struct iovec v[4] = {{hdr, hl}, {data[i] + hl, cut1}, {data[i] + hl + cut1, cut2 - cut1},
                             {data[i] + hl + cut2, rest - cut2}};
        int cnt = 2 + (int) (i % 3);
        if (cnt == 2) {
            v[1].iov_len = rest;
        } else if (cnt == 3) {
            v[2].iov_len = rest - cut1;
        }
        CHECK(ebtl_dgram_txq_add(q, &a, &b[spec[i].dst].local, v, cnt) == 0);
        memset(hdr, 0xEE, sizeof(hdr));
        bytes += len;
    }
    (void) ebtl_dgram_txq_flush(q);
    CHECK(q->count == 0);
    res.tx_gso = a.stats.tx_gso;
    res.tx_gso_refused = a.stats.tx_gso_refused;
    res.tx_errors = a.stats.tx_errors;
    res.gso_after = a.gso;
    CHECK(a.stats.tx_datagrams + a.stats.tx_errors == n);
    if (a.stats.tx_errors == 0) {
        CHECK(a.stats.tx_bytes == bytes);
    }
    for (unsigned d = 0; d < ndst; d++) {
        unsigned want = 0;
        for (unsigned i = 0; i < n; i++) {
            want += spec[i].dst == d;
        }
        got_t *got = calloc(want + 4, sizeof(*got));
        unsigned k = recv_wait(&b[d], got, want + 4, want, EBTL_DGRAM_RX_BATCH, 2000);
        if (k != want) {
            printf("    receiver %u: %u datagrams, %u sent to it\n", d, k, want);
            res.bad++;
        }
        unsigned at = 0;
        for (unsigned i = 0; i < n && at < k && at < want + 4; i++) {
            if (spec[i].dst != d) {
                continue;
            }
            if (got[at].len != spec[i].len || memcmp(got[at].data, data[i], spec[i].len) != 0 ||
                !ebtl_sockaddr_equal(&got[at].from, &a.local)) {
                if (res.bad < 5) {
                    unsigned id = ~0u;
                    if (got[at].len >= sizeof(id)) {
                        memcpy(&id, got[at].data, sizeof(id));
                    }
                    printf("    receiver %u: datagram %u (of %zu bytes) arrived as #%u of %zu "
                           "bytes\n", d, i, spec[i].len, id, got[at].len);
                }
                res.bad++;
            }
            at++;
        }
        res.rx_gro += b[d].stats.rx_gro;
        CHECK(b[d].stats.rx_truncated == 0);
        got_free(got, k < want + 4 ? k : want + 4);
        free(got);
        ebtl_dgram_close(&b[d]);
    }
    for (unsigned i = 0; i < n; i++) {
        free(data[i]);
    }
    free(data);
    free(q);
    ebtl_dgram_close(&a);
    return res;
}

/* 150 datagrams of 1472 bytes (esp's CHUNK at MTU 1500), one destination:
 * sent in few GSO messages, each cut back into exactly the datagrams,
 * received with and without GRO, and with GSO off. */
static void txq_gso_equal_runs(void)
{
    enum { N = 150 };
    dg_spec_t spec[N];
    for (unsigned i = 0; i < N; i++) {
        spec[i] = (dg_spec_t){0, 48, i + 1 < N ? 1472 : 1000};
    }
    for (unsigned gro = 0; gro < 2; gro++) {
        txq_result_t r = txq_case(spec, N, 1, gro, false, false);
        CHECK(r.bad == 0 && r.tx_errors == 0 && r.tx_gso_refused == 0 && r.gso_after);
        /* at most 44 of 1472 bytes per message (65507 bytes): at least 4 */
        CHECK(r.tx_gso >= 4 && r.tx_gso <= N / 2);
        if (gro) {
            CHECK(r.rx_gro >= 1); /* loopback carries GSO packets whole */
        }
        printf("    %u datagrams in %llu GSO sends, GRO %s: %llu super-datagrams read\n", N,
               (unsigned long long) r.tx_gso, gro ? "on" : "off", (unsigned long long) r.rx_gro);
    }
    txq_result_t r = txq_case(spec, N, 1, 1, true, false);
    CHECK(r.bad == 0 && r.tx_gso == 0 && r.rx_gro == 0 && !r.gso_after);
}

/* Sizes mixed at random from a few (a longer one after a shorter, runs of
 * one size, tiny ones, header only): every boundary kept. */
static void txq_gso_mixed_sizes(void)
{
    enum { N = 400 };
    static const size_t sizes[] = {1472, 1472, 1472, 1472, 1000, 1471, 64, 5, 9000, 1473};
    dg_spec_t spec[N];
    unsigned st = 7;
    for (unsigned i = 0; i < N; i++) {
        size_t len = sizes[lcg(&st) % (sizeof(sizes) / sizeof(sizes[0]))];
        unsigned run = lcg(&st) % 8; /* repeat it a few times */
        for (unsigned k = 0; k <= run && i < N; k++, i++) {
            spec[i] = (dg_spec_t){0, len < 48 ? 4 : 48, len};
        }
        i--;
    }
    for (unsigned gro = 0; gro < 2; gro++) {
        txq_result_t r = txq_case(spec, N, 1, gro, false, false);
        CHECK(r.bad == 0 && r.tx_errors == 0 && r.tx_gso > 0);
    }
    txq_result_t r = txq_case(spec, N, 1, 0, true, false);
    CHECK(r.bad == 0 && r.tx_gso == 0);
}

/* Three destinations interleaved in runs of 1..9 (two with GRO): each
 * receives exactly its own datagrams, in order. */
static void txq_gso_interleaved(void)
{
    enum { N = 500 };
    dg_spec_t spec[N];
    unsigned st = 11, i = 0;
    while (i < N) {
        unsigned dst = lcg(&st) % 3, run = 1 + lcg(&st) % 9;
        size_t len = lcg(&st) % 4 == 0 ? 700 : 1200;
        for (unsigned k = 0; k < run && i < N; k++, i++) {
            spec[i] = (dg_spec_t){dst, 32, k + 1 == run && lcg(&st) % 2 ? 300 : len};
        }
    }
    txq_result_t r = txq_case(spec, N, 3, 5, false, false);
    CHECK(r.bad == 0 && r.tx_errors == 0 && r.tx_gso > 0 && r.rx_gro > 0);
    r = txq_case(spec, N, 3, 5, true, false);
    CHECK(r.bad == 0 && r.tx_gso == 0);
}

/* Equal datagrams to 3 destinations in strict turn (a stream spread over
 * paths): the flush groups each destination's, so they go as GSO messages
 * of many datagrams, not one system call per datagram; each receiver gets
 * its own in order. */
static void txq_gso_alternating(void)
{
    enum { N = 3 * EBTL_DGRAM_TXQ_LEN };
    dg_spec_t spec[N];
    for (unsigned i = 0; i < N; i++) {
        spec[i] = (dg_spec_t){i % 3, 56, 1472};
    }
    txq_result_t r = txq_case(spec, N, 3, 0, false, false);
    CHECK(r.bad == 0 && r.tx_errors == 0);
    /* 3 flushes of 64 entries, 3 destinations each: 9 messages, not 192 */
    CHECK(r.tx_gso >= 9 && r.tx_gso <= 12);
}

/* Many small equal datagrams: no message carries more than 64 (older
 * kernels' UDP_MAX_SEGMENTS, refused beyond), all arrive. */
static void txq_gso_many_small(void)
{
    enum { N = 3 * EBTL_DGRAM_TXQ_LEN + 7 };
    dg_spec_t spec[N];
    for (unsigned i = 0; i < N; i++) {
        spec[i] = (dg_spec_t){0, 8, 100};
    }
    for (unsigned gro = 0; gro < 2; gro++) {
        txq_result_t r = txq_case(spec, N, 1, gro, false, false);
        CHECK(r.bad == 0 && r.tx_errors == 0 && r.tx_gso_refused == 0);
        CHECK(r.tx_gso >= (N + EBTL_DGRAM_GSO_MAX_SEGS - 1) / EBTL_DGRAM_GSO_MAX_SEGS);
        CHECK(r.tx_gso <= N / 2);
    }
}

/* The kernel refuses GSO on a socket without UDP checksums (SO_NO_CHECK,
 * as a device that cannot checksum would): the queue sends the datagrams
 * one by one, nothing is lost, and GSO stays off on that socket. */
static void txq_gso_refused_fallback(void)
{
    enum { N = 100 };
    dg_spec_t spec[N];
    for (unsigned i = 0; i < N; i++) {
        spec[i] = (dg_spec_t){0, 48, 1472};
    }
    txq_result_t r = txq_case(spec, N, 1, 1, false, true);
    CHECK(r.bad == 0 && r.tx_errors == 0);
    CHECK(r.tx_gso_refused == 1 && r.tx_gso == 0 && !r.gso_after);
}

/* A GSO message refused because its datagrams are bad (an address too
 * short: EINVAL, with or without GSO) does not turn GSO off: the bad ones
 * are dropped, the good ones behind them sent, and the next flush uses GSO
 * again. */
static void txq_gso_refused_datagram(void)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    CHECK(a.gso);
    ebtl_sockaddr_t bad = b.local;
    bad.len = 4;
    ebtl_dgram_txq_t *q = malloc(sizeof(*q));
    ebtl_dgram_txq_init(q);
    static unsigned char pay[1000];
    unsigned char h[8] = {0};
    struct iovec v[2] = {{h, sizeof(h)}, {pay, sizeof(pay)}};
    for (int i = 0; i < 13; i++) {
        CHECK(ebtl_dgram_txq_add(q, &a, i < 3 ? &bad : &b.local, v, 2) == 0);
    }
    CHECK(ebtl_dgram_txq_flush(q) == 3);
    CHECK(a.stats.tx_errors == 3 && a.stats.tx_datagrams == 10 && a.stats.tx_gso_refused == 1);
    CHECK(a.gso);
    for (int i = 0; i < 10; i++) {
        CHECK(ebtl_dgram_txq_add(q, &a, &b.local, v, 2) == 0);
    }
    CHECK(ebtl_dgram_txq_flush(q) == 0);
    CHECK(a.stats.tx_gso == 1 && a.stats.tx_datagrams == 20);
    CHECK(recv_wait(&b, NULL, 0, 20, EBTL_DGRAM_RX_BATCH, 1000) == 20);
    free(q);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* ---- GRO on receive ---- */

/* The ring of a GRO socket: fewer, 64 KiB buffers; single datagrams (no
 * GSO sender) still all arrive, at most a ring's worth per read; the rest
 * of a super-datagram waits for the next calls (ebtl_dgram_rx_buffered). */
static void gro_ring(void)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo_mtu(&b, true, 1500)) {
        CHECK(0);
        return;
    }
    CHECK(b.gro && b.rx_bufs == EBTL_DGRAM_RX_GRO_BUFS && b.rx_buf_size >= 65536);
    CHECK(a.rx_bufs == EBTL_DGRAM_RX_BATCH);
    for (unsigned i = 0; i < 50; i++) {
        struct iovec v = {&i, sizeof(i)};
        CHECK(ebtl_dgram_send(&a, &b.local, &v, 1) == 0);
    }
    sleep_us(20000);
    ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    unsigned n = 0, bad = 0;
    for (int tries = 0; tries < 100 && n < 50; tries++) {
        int r = ebtl_dgram_recv(&b, msgs, EBTL_DGRAM_RX_BATCH, ebtl_dgram_now_ns());
        CHECK(r >= 0 && r <= (int) EBTL_DGRAM_RX_GRO_BUFS);
        for (int k = 0; k < r; k++, n++) {
            unsigned id;
            memcpy(&id, msgs[k].buf, sizeof(id));
            bad += msgs[k].len != sizeof(id) || id != n;
        }
    }
    CHECK(n == 50 && bad == 0 && b.stats.rx_gro == 0);
    CHECK(!ebtl_dgram_rx_buffered(&b));

    /* 20 datagrams in one GSO send: one read, returned 3 at a time */
    static unsigned char buf[20 * 1000];
    pattern(buf, sizeof(buf), 3);
    CHECK(ebtl_dgram_send_gso(&a, &b.local, buf, sizeof(buf), 1000) == 0);
    sleep_us(20000);
    n = 0;
    bad = 0;
    for (int tries = 0; tries < 100 && n < 20; tries++) {
        int r = ebtl_dgram_recv(&b, msgs, 3, ebtl_dgram_now_ns());
        CHECK(r >= 0 && r <= 3);
        for (int k = 0; k < r; k++, n++) {
            bad += msgs[k].len != 1000 || memcmp(msgs[k].buf, buf + n * 1000, 1000) != 0;
        }
        if (r > 0) {
            CHECK(ebtl_dgram_rx_buffered(&b) == (n < 20));
        }
    }
    CHECK(n == 20 && bad == 0 && b.stats.rx_gro == 1 && b.stats.rx_datagrams == 70);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* GSO sends into a GRO receiver with the fault layer on: the layer sees
 * every datagram alone (seen = sent, not super-datagrams), and what
 * arrives is exactly what it let through, byte-exact. */
static void gro_faults(void)
{
    enum { N = 400 };
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, true)) {
        CHECK(0);
        return;
    }
    ebtl_fault_config_t cfg = {.drop = 0.2, .duplicate = 0.2, .reorder = 0.2, .seed = 3,
                               .hold_ns = 1000000};
    b.fault = ebtl_fault_create(&cfg, b.rx_buf_size);
    CHECK(b.fault != NULL);
    static unsigned char data[N][1200];
    ebtl_dgram_txq_t *q = malloc(sizeof(*q));
    ebtl_dgram_txq_init(q);
    for (unsigned i = 0; i < N; i++) {
        pattern(data[i], sizeof(data[i]), i);
        memcpy(data[i], &i, sizeof(i));
        struct iovec v[2] = {{data[i], 16}, {data[i] + 16, sizeof(data[i]) - 16}};
        CHECK(ebtl_dgram_txq_add(q, &a, &b.local, v, 2) == 0);
    }
    CHECK(ebtl_dgram_txq_flush(q) == 0);
    CHECK(a.stats.tx_gso > 0);
    got_t *got = calloc(2 * N + 4, sizeof(*got));
    unsigned n = recv_wait(&b, got, 2 * N + 4, 2 * N + 4, 5, 300);
    const ebtl_fault_stats_t *st = ebtl_fault_stats(b.fault);
    CHECK(st->seen == N && b.stats.rx_datagrams == N);
    CHECK(b.stats.rx_gro > 0);
    CHECK(n == N - st->dropped + st->duplicated);
    CHECK(st->dropped > 0 && st->duplicated > 0 && st->reordered > 0);
    unsigned count[N] = {0};
    int bad = 0;
    for (unsigned i = 0; i < n && i < 2 * N + 4; i++) {
        unsigned id;
        memcpy(&id, got[i].data, sizeof(id));
        bad += id >= N || got[i].len != sizeof(data[0]) ||
               memcmp(got[i].data, data[id < N ? id : 0], sizeof(data[0])) != 0;
        if (id < N) {
            count[id]++;
        }
    }
    unsigned none = 0;
    for (unsigned i = 0; i < N; i++) {
        bad += count[i] > 2;
        none += count[i] == 0;
    }
    CHECK(bad == 0 && none == st->dropped);
    printf("    %u sent in %llu GSO sends, %llu GRO reads; %llu dropped, %llu duplicated, "
           "%llu reordered\n", N, (unsigned long long) a.stats.tx_gso,
           (unsigned long long) b.stats.rx_gro, (unsigned long long) st->dropped,
           (unsigned long long) st->duplicated, (unsigned long long) st->reordered);
    got_free(got, n < 2 * N + 4 ? n : 2 * N + 4);
    free(got);
    free(q);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

/* Half of 1000 dropped by the fault layer on the receiver: what arrives is
 * exactly what it did not drop. */
static void fault_drop_half(void)
{
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    ebtl_fault_config_t cfg = {.drop = 0.5, .seed = 42};
    b.fault = ebtl_fault_create(&cfg, b.rx_buf_size);
    CHECK(b.fault != NULL);
    unsigned received = 0;
    for (unsigned i = 0; i < 1000; i += 50) {
        for (unsigned j = i; j < i + 50; j++) {
            struct iovec v = {&j, sizeof(j)};
            CHECK(ebtl_dgram_send(&a, &b.local, &v, 1) == 0);
        }
        /* wait until the layer has seen all 50 */
        uint64_t deadline = ebtl_dgram_now_ns() + 1000000000u;
        ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
        while (ebtl_fault_stats(b.fault)->seen < i + 50 && ebtl_dgram_now_ns() < deadline) {
            int r = ebtl_dgram_recv(&b, msgs, EBTL_DGRAM_RX_BATCH, ebtl_dgram_now_ns());
            CHECK(r >= 0);
            if (r > 0) {
                received += (unsigned) r;
            } else {
                sleep_us(100);
            }
        }
    }
    received += recv_wait(&b, NULL, 0, 0, EBTL_DGRAM_RX_BATCH, 50);
    const ebtl_fault_stats_t *st = ebtl_fault_stats(b.fault);
    CHECK(st->seen == 1000);
    CHECK(received == 1000 - st->dropped);
    CHECK(st->dropped > 400 && st->dropped < 600);
    CHECK(b.stats.rx_datagrams == 1000);
    printf("    1000 sent, %llu dropped, %u received\n", (unsigned long long) st->dropped,
           received);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b); /* destroys the fault layer too */
    CHECK(b.fault == NULL);
}

/* Duplicates and reordering through the socket with one datagram per call:
 * what the layer holds back comes out in later calls, each exactly once
 * (plus duplicates), with the sender's address. */
static void fault_dup_reorder(void)
{
    enum { N = 300 };
    ebtl_dgram_sock_t a, b;
    if (!open_lo(&a, false) || !open_lo(&b, false)) {
        CHECK(0);
        return;
    }
    ebtl_fault_config_t cfg = {.duplicate = 0.5, .reorder = 0.3, .seed = 5, .hold_ns = 1000000};
    b.fault = ebtl_fault_create(&cfg, b.rx_buf_size);
    for (unsigned j = 0; j < N; j++) {
        struct iovec v = {&j, sizeof(j)};
        CHECK(ebtl_dgram_send(&a, &b.local, &v, 1) == 0);
    }
    got_t got[2 * N + 4];
    unsigned n = recv_wait(&b, got, 2 * N + 4, 2 * N + 4, 1, 300);
    const ebtl_fault_stats_t *st = ebtl_fault_stats(b.fault);
    CHECK(st->seen == N);
    CHECK(n == N + st->duplicated);
    unsigned count[N] = {0};
    int bad = 0;
    for (unsigned i = 0; i < n && i < 2 * N + 4; i++) {
        unsigned id;
        memcpy(&id, got[i].data, sizeof(id));
        bad += got[i].len != sizeof(id) || id >= N || !ebtl_sockaddr_equal(&got[i].from, &a.local);
        if (id < N) {
            count[id]++;
        }
    }
    unsigned twice = 0;
    for (unsigned i = 0; i < N; i++) {
        bad += count[i] < 1 || count[i] > 2;
        twice += count[i] == 2;
    }
    CHECK(bad == 0);
    CHECK(twice == st->duplicated);
    CHECK(st->reordered > 0 && st->duplicated > 0);
    got_free(got, n < 2 * N + 4 ? n : 2 * N + 4);
    ebtl_dgram_close(&a);
    ebtl_dgram_close(&b);
}

static void recv_empty(void)
{
    ebtl_dgram_sock_t b;
    if (!open_lo(&b, true)) {
        CHECK(0);
        return;
    }
    ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    CHECK(ebtl_dgram_recv(&b, msgs, EBTL_DGRAM_RX_BATCH, ebtl_dgram_now_ns()) == 0);
    CHECK(ebtl_dgram_recv(&b, msgs, 0, ebtl_dgram_now_ns()) == 0);
    ebtl_fault_config_t cfg = {.drop = 0.5, .reorder = 0.5, .seed = 1};
    b.fault = ebtl_fault_create(&cfg, b.rx_buf_size);
    CHECK(ebtl_dgram_recv(&b, msgs, EBTL_DGRAM_RX_BATCH, ebtl_dgram_now_ns()) == 0);
    ebtl_dgram_close(&b);
}

/* Binding an address this host does not have fails with a message naming
 * it (TEST-NET-1: only bind is tried, nothing is sent). */
static void open_foreign_address(void)
{
    ebtl_if_t ifa = unit_lo_if(1500);
    ifa.addr[0] = 192;
    ifa.addr[1] = 0;
    ifa.addr[2] = 2;
    ifa.addr[3] = 1;
    ifa.prefixlen = 24;
    ifa.loopback = false;
    ebtl_dgram_open_args_t args = {.iface = &ifa};
    ebtl_dgram_sock_t s;
    char err[256] = "";
    CHECK(ebtl_dgram_open(&s, &args, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "192.0.2.1");
    CHECK_STR_CONTAINS(err, strerror(EADDRNOTAVAIL));
    CHECK(s.fd == -1 && s.rx == NULL);
    ebtl_dgram_close(&s); /* harmless after a failed open */
    printf("    %s\n", err);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("dgram", open_two);
    RUN("dgram", sockaddr_helpers);
    RUN("dgram", gathered_send);
    RUN("dgram", txq_batch);
    RUN("dgram", txq_autoflush);
    RUN("dgram", max_and_oversize);
    RUN("dgram", truncated_dropped);
    RUN("dgram", kernel_drops_counted);
    RUN("dgram", gso_ten_segments);
    RUN("dgram", gso_to_gro_receiver);
    RUN("dgram", gso_many_segments);
    RUN("dgram", gso_fallback);
    RUN("dgram", txq_gso_equal_runs);
    RUN("dgram", txq_gso_mixed_sizes);
    RUN("dgram", txq_gso_interleaved);
    RUN("dgram", txq_gso_alternating);
    RUN("dgram", txq_gso_many_small);
    RUN("dgram", txq_gso_refused_fallback);
    RUN("dgram", txq_gso_refused_datagram);
    RUN("dgram", gro_ring);
    RUN("dgram", gro_faults);
    RUN("dgram", fault_drop_half);
    RUN("dgram", fault_dup_reorder);
    RUN("dgram", recv_empty);
    RUN("dgram", open_foreign_address);
    return UNIT_RESULT();
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the raw Ethernet layer (common/ebtl_eth.c) on a veth pair
 * (ethx-t0, ethx-t1) in a network namespace of the test's own
 * (unshare(CLONE_NEWNET)): it disappears with the process, however that
 * ends. Needs root; otherwise prints SKIP and exits 77. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ebtl_eth.h"
#include "unit.h"

#define IF_A "ethx-t0"
#define IF_B "ethx-t1"
#define ET EBTL_ETH_TYPE_DEFAULT

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    char full[600];
    snprintf(full, sizeof(full), "%s >/dev/null 2>&1", cmd);
    int rc = system(full);
    if (rc != 0) {
        printf("    command failed: %s\n", cmd);
    }
    return rc;
}

static void set_mtu(unsigned mtu)
{
    sh("ip link set " IF_A " mtu %u && ip link set " IF_B " mtu %u", mtu, mtu);
}

static ebtl_if_t iface(const char *name)
{
    ebtl_if_t ifa;
    memset(&ifa, 0, sizeof(ifa));
    snprintf(ifa.name, sizeof(ifa.name), "%s", name);
    ifa.family = AF_INET;
    ifa.ifindex = if_nametoindex(name);
    return ifa;
}

static bool open_on(ebtl_eth_sock_t *s, const char *name, size_t ring)
{
    ebtl_if_t ifa = iface(name);
    char err[256] = "";
    if (ebtl_eth_open(s, &ifa, ET, ring, err, sizeof(err)) != 0) {
        printf("    open on %s: %s\n", name, err);
        return false;
    }
    return true;
}

static void read_mac(const char *name, uint8_t mac[6])
{
    /* not /sys/class/net: sysfs still shows the namespace it was mounted in */
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    memset(mac, 0, 6);
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0) {
        memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    } else {
        printf("    SIOCGIFHWADDR %s: %s\n", name, strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
}

static unsigned char pat(unsigned seed, size_t i)
{
    return (unsigned char) (seed * 131u + i * 7u + (i >> 8));
}

static void fill(unsigned char *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        b[i] = pat(seed, i);
    }
}

static bool check_bytes(const unsigned char *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        if (b[i] != pat(seed, i)) {
            printf("    byte %zu of frame %u: %u, not %u\n", i, seed, b[i], pat(seed, i));
            return false;
        }
    }
    return true;
}

/* Queue one frame of len bytes with pattern seed, gathered from three
 * pieces (a header of up to 56 bytes and the rest in two). */
static int queue_pat(ebtl_eth_sock_t *s, const uint8_t *dst, size_t len, unsigned seed)
{
    static unsigned char buf[65536];
    fill(buf, len, seed);
    size_t h = len < 56 ? len : 56, rest = len - h;
    struct iovec iov[3] = {{buf, h}, {buf + h, rest / 2}, {buf + h + rest / 2, rest - rest / 2}};
    return ebtl_eth_queue(s, dst, iov, 3);
}

typedef struct {
    unsigned char *buf;
    size_t len;
    uint8_t from[6];
} got_t;

/* Receive frames until want arrived or 1 s passed; copies them out. */
static unsigned collect(ebtl_eth_sock_t *s, got_t *got, unsigned want)
{
    unsigned n = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (n < want) {
        ebtl_eth_msg_t m[16];
        int k = ebtl_eth_recv(s, m, want - n < 16 ? want - n : 16);
        for (int i = 0; i < k; i++) {
            got[n].buf = malloc(m[i].len ? m[i].len : 1);
            memcpy(got[n].buf, m[i].buf, m[i].len);
            got[n].len = m[i].len;
            memcpy(got[n].from, m[i].from, 6);
            n++;
        }
        if (k > 0) {
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > 1000) {
            break;
        }
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        (void) poll(&p, 1, 10);
    }
    return n;
}

static void free_got(got_t *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(g[i].buf);
    }
}

/* After the sender's flush: let any straggler land, then nothing more. */
static void settle(void)
{
    usleep(20000);
}

/* ---------------------------------------------------------------- cases */

static void open_both(void)
{
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 0) || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    uint8_t ma[6], mb[6];
    read_mac(IF_A, ma);
    read_mac(IF_B, mb);
    CHECK(memcmp(a.mac, ma, 6) == 0);
    CHECK(memcmp(b.mac, mb, 6) == 0);
    CHECK(a.mtu == 1500 && a.max_payload == 1500);
    CHECK(a.ifindex == if_nametoindex(IF_A));
    CHECK(a.rx_frames >= 2 && a.tx_frames >= 2);
    CHECK(a.rx_ring_bytes >= EBTL_ETH_RING_DEFAULT && a.tx_ring_bytes >= EBTL_ETH_RING_DEFAULT);
    CHECK(a.fd >= 0);
    CHECK(!ebtl_eth_rx_buffered(&a));
    ebtl_eth_msg_t m[4];
    CHECK(ebtl_eth_recv(&a, m, 4) == 0);
    CHECK(ebtl_eth_flush(&a) == 0);
    printf("    qdisc_bypass %d, ignore_outgoing %d, %u rx / %u tx frames\n", a.qdisc_bypass,
           a.ignore_outgoing, a.rx_frames, a.tx_frames);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
    CHECK(a.fd == -1 && a.ring == NULL);
    ebtl_eth_close(&a); /* twice is harmless */
}

static void sizes_one_way(ebtl_eth_sock_t *tx, ebtl_eth_sock_t *rx, const size_t *sizes,
                          unsigned n, unsigned seed0)
{
    uint64_t f0 = tx->stats.tx_frames, r0 = rx->stats.rx_frames;
    for (unsigned i = 0; i < n; i++) {
        CHECK(queue_pat(tx, rx->mac, sizes[i], seed0 + i) == 0);
    }
    CHECK(ebtl_eth_tx_pending(tx) == n);
    CHECK(ebtl_eth_flush(tx) == 0);
    CHECK(ebtl_eth_tx_pending(tx) == 0);
    got_t g[64];
    unsigned k = collect(rx, g, n);
    CHECK(k == n);
    for (unsigned i = 0; i < k; i++) {
        if (g[i].len != sizes[i]) {
            printf("    frame %u: %zu bytes, not %zu\n", i, g[i].len, sizes[i]);
            CHECK(0);
            continue;
        }
        CHECK(check_bytes(g[i].buf, g[i].len, seed0 + i));
        CHECK(memcmp(g[i].from, tx->mac, 6) == 0);
    }
    free_got(g, k);
    CHECK(tx->stats.tx_frames - f0 == n);
    CHECK(rx->stats.rx_frames - r0 == n);
}

static void sizes_both_ways(void)
{
    static const size_t sizes[] = {1, 2, 45, 46, 47, 56, 57, 100, 1000, 1486, 1499, 1500};
    unsigned n = sizeof(sizes) / sizeof(sizes[0]);
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 0) || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    sizes_one_way(&a, &b, sizes, n, 100);
    sizes_one_way(&b, &a, sizes, n, 200);
    sizes_one_way(&a, &b, sizes, n, 300);
    size_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        sum += sizes[i];
    }
    CHECK(a.stats.tx_bytes == 2 * sum && b.stats.rx_bytes == 2 * sum);
    CHECK(a.stats.tx_errors == 0 && b.stats.tx_errors == 0);
    CHECK(b.stats.rx_dropped_foreign + b.stats.rx_dropped_own + b.stats.rx_short +
              b.stats.rx_truncated == 0);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
}

static void mtu_9000(void)
{
    static const size_t sizes[] = {1, 1500, 4000, 8972, 8999, 9000};
    unsigned n = sizeof(sizes) / sizeof(sizes[0]);
    set_mtu(9000);
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 0) || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        set_mtu(1500);
        return;
    }
    CHECK(a.mtu == 9000 && a.max_payload == 9000 && b.max_payload == 9000);
    sizes_one_way(&a, &b, sizes, n, 400);
    sizes_one_way(&b, &a, sizes, n, 500);
    unsigned char big[9001] = {0};
    struct iovec iov = {big, sizeof(big)};
    CHECK(ebtl_eth_queue(&a, b.mac, &iov, 1) == -EMSGSIZE);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
    set_mtu(1500);
}

/* More frames than the TX ring holds, without a flush: it flushes itself. */
static void full_tx_ring(void)
{
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 64u << 10) || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    unsigned n = 5 * a.tx_frames + 7;
    CHECK(n < b.rx_frames);
    for (unsigned i = 0; i < n; i++) {
        unsigned char f[200];
        fill(f, sizeof(f), 1000 + i);
        memcpy(f, &i, sizeof(i));
        struct iovec iov = {f, sizeof(f)};
        CHECK(ebtl_eth_queue(&a, b.mac, &iov, 1) == 0);
    }
    CHECK(ebtl_eth_flush(&a) == 0);
    CHECK(a.stats.tx_frames == n && a.stats.tx_errors == 0);
    CHECK(a.stats.tx_flushes >= 5);
    unsigned got = 0, inorder = 1;
    for (unsigned tries = 0; got < n && tries < 100; tries++) {
        ebtl_eth_msg_t m[32];
        int k = ebtl_eth_recv(&b, m, 32);
        for (int i = 0; i < k; i++) {
            unsigned seq;
            memcpy(&seq, m[i].buf, sizeof(seq));
            inorder &= seq == got && m[i].len == 200;
            for (size_t j = 4; j < m[i].len; j++) {
                inorder &= ((unsigned char *) m[i].buf)[j] == pat(1000 + seq, j);
            }
            got++;
        }
        if (k == 0) {
            usleep(10000);
        }
    }
    CHECK(got == n);
    CHECK(inorder);
    printf("    %u frames through a %u-frame TX ring, %llu flushes\n", n, a.tx_frames,
           (unsigned long long) a.stats.tx_flushes);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
}

/* Short reads leave frames in the ring; each call's buffers stay valid
 * until the next call. */
static void recv_batches(void)
{
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 0) || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    for (unsigned i = 0; i < 10; i++) {
        CHECK(queue_pat(&a, b.mac, 300 + i, 600 + i) == 0);
    }
    CHECK(ebtl_eth_flush(&a) == 0);
    settle();
    CHECK(ebtl_eth_rx_buffered(&b));
    unsigned total = 0;
    for (int call = 0; call < 5; call++) {
        ebtl_eth_msg_t m[3];
        int k = ebtl_eth_recv(&b, m, 3);
        CHECK(k == (call < 3 ? 3 : call == 3 ? 1 : 0));
        for (int i = 0; i < k; i++, total++) {
            CHECK(m[i].len == 300 + total);
            CHECK(check_bytes(m[i].buf, m[i].len, 600 + total));
        }
        CHECK(ebtl_eth_rx_buffered(&b) == (total < 10));
    }
    CHECK(total == 10);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
}

static void bad_sends(void)
{
    ebtl_eth_sock_t a;
    if (!open_on(&a, IF_A, 0)) {
        CHECK(0);
        return;
    }
    static unsigned char buf[1501];
    uint8_t dst[6] = {2, 0, 0, 0, 0, 1};
    struct iovec iov = {buf, 1501};
    CHECK(ebtl_eth_queue(&a, dst, &iov, 1) == -EMSGSIZE);
    struct iovec two[2] = {{buf, 1000}, {buf, 501}};
    CHECK(ebtl_eth_queue(&a, dst, two, 2) == -EMSGSIZE);
    iov.iov_len = 0;
    CHECK(ebtl_eth_queue(&a, dst, &iov, 1) == -EINVAL);
    CHECK(ebtl_eth_queue(&a, dst, NULL, 0) == -EINVAL);
    CHECK(ebtl_eth_queue(&a, dst, &iov, -1) == -EINVAL);
    struct iovec nul = {NULL, 10};
    CHECK(ebtl_eth_queue(&a, dst, &nul, 1) == -EINVAL);
    CHECK(ebtl_eth_tx_pending(&a) == 0 && a.stats.tx_errors == 0);
    ebtl_eth_close(&a);
}

/* A plain packet socket on IF_A writing whole frames. */
static int raw_sock(void)
{
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) {
        printf("    raw socket: %s\n", strerror(errno));
    }
    return fd;
}

static bool raw_send(int fd, const unsigned char *frame, size_t len)
{
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = (int) if_nametoindex(IF_A);
    sll.sll_halen = 6;
    memcpy(sll.sll_addr, frame, 6);
    if (sendto(fd, frame, len, 0, (struct sockaddr *) &sll, sizeof(sll)) != (ssize_t) len) {
        printf("    raw send of %zu bytes: %s\n", len, strerror(errno));
        return false;
    }
    return true;
}

static size_t make_frame(unsigned char *f, const uint8_t *dst, const uint8_t *src, uint16_t type,
                         size_t payload, unsigned seed)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = (unsigned char) (type >> 8);
    f[13] = (unsigned char) type;
    fill(f + 14, payload, seed);
    return 14 + payload;
}

/* Frames that are not ours are dropped and counted; the good one after
 * them comes through. */
static void dropped_and_counted(void)
{
    ebtl_eth_sock_t b;
    int fd = raw_sock();
    if (fd < 0 || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    uint8_t ma[6], other[6] = {0x02, 0, 0, 0, 0, 0x99}, mcast[6] = {0x03, 0, 0, 0, 0, 0x01};
    read_mac(IF_A, ma);
    unsigned char f[2000];
    size_t l;
    /* another ethertype: the kernel never gives it to the socket */
    l = make_frame(f, b.mac, ma, ET + 1, 100, 1);
    CHECK(raw_send(fd, f, l));
    /* header only: no payload */
    l = make_frame(f, b.mac, ma, ET, 0, 2);
    CHECK(raw_send(fd, f, l));
    /* for another host (veth delivers everything to its peer) */
    l = make_frame(f, other, ma, ET, 100, 3);
    CHECK(raw_send(fd, f, l));
    /* VLAN 7, our ethertype inside */
    memcpy(f, b.mac, 6);
    memcpy(f + 6, ma, 6);
    f[12] = 0x81, f[13] = 0x00, f[14] = 0x00, f[15] = 0x07;
    f[16] = ET >> 8, f[17] = ET & 0xff;
    fill(f + 18, 100, 4);
    CHECK(raw_send(fd, f, 118));
    /* with the receiver's own address as source */
    l = make_frame(f, b.mac, b.mac, ET, 100, 5);
    CHECK(raw_send(fd, f, l));
    /* a multicast source address */
    l = make_frame(f, b.mac, mcast, ET, 100, 6);
    CHECK(raw_send(fd, f, l));
    /* and a good one */
    l = make_frame(f, b.mac, ma, ET, 700, 7);
    CHECK(raw_send(fd, f, l));
    settle();
    got_t g[4];
    unsigned k = collect(&b, g, 2); /* only one is due */
    CHECK(k == 1);
    if (k >= 1) {
        CHECK(g[0].len == 700 && check_bytes(g[0].buf, 700, 7));
        CHECK(memcmp(g[0].from, ma, 6) == 0);
    }
    free_got(g, k);
    printf("    foreign %llu, own %llu, short %llu, truncated %llu\n",
           (unsigned long long) b.stats.rx_dropped_foreign,
           (unsigned long long) b.stats.rx_dropped_own, (unsigned long long) b.stats.rx_short,
           (unsigned long long) b.stats.rx_truncated);
    CHECK(b.stats.rx_dropped_foreign == 3); /* other host, VLAN 7, multicast source */
    CHECK(b.stats.rx_dropped_own == 1);
    CHECK(b.stats.rx_short == 1);
    CHECK(b.stats.rx_truncated == 0);
    CHECK(b.stats.rx_frames == 1 && b.stats.rx_bytes == 700);
    CHECK(ebtl_eth_kernel_stats(&b) == 0);
    CHECK(b.stats.rx_kernel_packets == 6); /* all but the other ethertype */
    CHECK(b.stats.rx_kernel_drops == 0);
    close(fd);
    ebtl_eth_close(&b);
}

/* A frame longer than the ring's frames (the MTU went up after open). */
static void truncated(void)
{
    ebtl_eth_sock_t b;
    int fd = raw_sock();
    if (fd < 0 || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    set_mtu(4000);
    uint8_t ma[6];
    read_mac(IF_A, ma);
    unsigned char f[4100];
    size_t l = make_frame(f, b.mac, ma, ET, 3000, 8);
    CHECK(raw_send(fd, f, l));
    l = make_frame(f, b.mac, ma, ET, 1500, 9);
    CHECK(raw_send(fd, f, l));
    settle();
    got_t g[2];
    unsigned k = collect(&b, g, 2);
    CHECK(k == 1);
    if (k >= 1) {
        CHECK(g[0].len == 1500 && check_bytes(g[0].buf, 1500, 9));
    }
    free_got(g, k);
    CHECK(b.stats.rx_truncated == 1);
    set_mtu(1500);
    close(fd);
    ebtl_eth_close(&b);
}

/* A receiver that does not read: the kernel drops what its ring cannot
 * hold, and says so. */
static void rx_ring_full(void)
{
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 0) || !open_on(&b, IF_B, 64u << 10)) {
        CHECK(0);
        return;
    }
    unsigned n = b.rx_frames + 100;
    for (unsigned i = 0; i < n; i++) {
        CHECK(queue_pat(&a, b.mac, 1000, i) == 0);
    }
    CHECK(ebtl_eth_flush(&a) == 0);
    settle();
    CHECK(ebtl_eth_kernel_stats(&b) == 0);
    printf("    %u sent to a %u-frame RX ring: kernel counted %llu, dropped %llu\n", n, b.rx_frames,
           (unsigned long long) b.stats.rx_kernel_packets,
           (unsigned long long) b.stats.rx_kernel_drops);
    CHECK(b.stats.rx_kernel_packets == n);
    CHECK(b.stats.rx_kernel_drops == 100);
    got_t g[1];
    unsigned total = 0;
    ebtl_eth_msg_t m[64];
    int k;
    while ((k = ebtl_eth_recv(&b, m, 64)) > 0) {
        for (int i = 0; i < k; i++, total++) {
            CHECK(m[i].len == 1000 && check_bytes(m[i].buf, 1000, total));
        }
    }
    CHECK(total == b.rx_frames);
    /* and the ring works again */
    CHECK(queue_pat(&a, b.mac, 77, 77) == 0 && ebtl_eth_flush(&a) == 0);
    k = (int) collect(&b, g, 1);
    CHECK(k == 1 && g[0].len == 77 && check_bytes(g[0].buf, 77, 77));
    free_got(g, (unsigned) k);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
}

/* Sends on a down interface are refused and dropped; the ring is not left
 * stuck: once the interface is up again frames go. */
static void interface_down(void)
{
    ebtl_eth_sock_t a, b;
    if (!open_on(&a, IF_A, 64u << 10) || !open_on(&b, IF_B, 0)) {
        CHECK(0);
        return;
    }
    sh("ip link set " IF_A " down");
    for (unsigned i = 0; i < 10; i++) {
        CHECK(queue_pat(&a, b.mac, 500, i) == 0);
    }
    int d = ebtl_eth_flush(&a);
    printf("    flush on a down interface dropped %d of 10\n", d);
    CHECK(d == 10);
    CHECK(a.stats.tx_errors == 10 && ebtl_eth_tx_pending(&a) == 0);
    /* a full ring's worth while down: each queue flushes and drops */
    unsigned ok = 0;
    for (unsigned i = 0; i < 3 * a.tx_frames; i++) {
        ok += queue_pat(&a, b.mac, 500, i) == 0;
    }
    CHECK(ok == 3 * a.tx_frames);
    CHECK(ebtl_eth_flush(&a) > 0);
    sh("ip link set " IF_A " up && ip link set " IF_B " up");
    usleep(100000);
    CHECK(ebtl_eth_recv(&b, (ebtl_eth_msg_t[4]){0}, 4) == 0); /* nothing got out */
    static const size_t sizes[] = {10, 1500, 600};
    sizes_one_way(&a, &b, sizes, 3, 900);
    ebtl_eth_close(&a);
    ebtl_eth_close(&b);
}

/* Without CAP_NET_RAW (as nobody, in a child) open fails and says how to
 * fix it; a non-Ethernet interface and a missing one are refused. */
static void open_refused(void)
{
    int p[2];
    if (pipe(p) != 0) {
        CHECK(0);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char err[512] = "";
        int rc = -2;
        if (setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0) {
            ebtl_eth_sock_t s;
            ebtl_if_t ifa = iface(IF_A);
            rc = ebtl_eth_open(&s, &ifa, ET, 0, err, sizeof(err));
            if (rc == 0) {
                ebtl_eth_close(&s);
            }
        } else {
            snprintf(err, sizeof(err), "could not become nobody: %s", strerror(errno));
        }
        ssize_t w = write(p[1], err, strlen(err) + 1);
        _exit(rc == -1 && w > 0 ? 0 : 1);
    }
    close(p[1]);
    char msg[512] = "";
    ssize_t r = read(p[0], msg, sizeof(msg) - 1);
    msg[r > 0 ? r : 0] = 0;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    printf("    as nobody: %s\n", msg);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_STR_CONTAINS(msg, "needs CAP_NET_RAW");
    CHECK_STR_CONTAINS(msg, "setcap cap_net_raw+ep");
    CHECK_STR_CONTAINS(msg, "btl_esp_wire udp");
    CHECK_STR_CONTAINS(msg, IF_A);

    ebtl_eth_sock_t s;
    char err[256] = "";
    ebtl_if_t lo = iface("lo");
    CHECK(ebtl_eth_open(&s, &lo, ET, 0, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "not an Ethernet interface");
    CHECK(s.fd == -1 && s.ring == NULL);
    ebtl_if_t none = iface(IF_A);
    none.ifindex = 999999;
    CHECK(ebtl_eth_open(&s, &none, ET, 0, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, IF_A);
    ebtl_if_t a = iface(IF_A);
    CHECK(ebtl_eth_open(&s, &a, 0x0100, 0, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "ethertype");
}

/* The receive check on slots built here (ebtl_eth_frame_check, no socket):
 * each verdict, and the bounds exactly at the slot's end. */
#define SLOT 256u
static const uint8_t OUR[6] = {0x02, 0, 0, 0, 0, 1}, PEER[6] = {0x02, 0, 0, 0, 0, 2};
static void mkslot(uint8_t *slot, uint32_t tp_mac, uint32_t snaplen, uint32_t len,
                   const uint8_t *src, uint16_t type, uint8_t pkttype, uint16_t tci)
{
    memset(slot, 0, SLOT);
    struct tpacket2_hdr h = {.tp_len = len, .tp_snaplen = snaplen, .tp_mac = (uint16_t) tp_mac,
                             .tp_vlan_tci = tci};
    memcpy(slot, &h, sizeof(h));
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_pkttype = pkttype};
    memcpy(slot + TPACKET_ALIGN(sizeof(h)), &sll, sizeof(sll));
    if (tp_mac + 14 <= SLOT) {
        memcpy(slot + tp_mac, OUR, 6);
        memcpy(slot + tp_mac + 6, src, 6);
        slot[tp_mac + 12] = (uint8_t) (type >> 8);
        slot[tp_mac + 13] = (uint8_t) type;
    }
}
static enum ebtl_eth_verdict fc(const uint8_t *slot, size_t size, uint32_t st, size_t *off,
                                size_t *len)
{
    return ebtl_eth_frame_check(slot, size, st, ET, OUR, off, len);
}
static void frame_check(void)
{
    _Alignas(16) uint8_t slot[SLOT];
    size_t off, len;
    const uint32_t U = TP_STATUS_USER;
    mkslot(slot, 66, 114, 114, PEER, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_OK && off == 80 && len == 100);
    /* ending exactly at the slot's end, and one byte past it */
    mkslot(slot, 66, SLOT - 66, SLOT - 66, PEER, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_OK && off + len == SLOT);
    CHECK(fc(slot, SLOT - 1, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED && off == 0 && len == 0);
    mkslot(slot, SLOT - 20, 40, 40, PEER, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    mkslot(slot, 66, 0xfffffff0u, 0xfffffff0u, PEER, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    mkslot(slot, 8, 50, 50, PEER, ET, PACKET_HOST, 0); /* frame inside the header */
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    /* a slot too small for the header and the address after it */
    mkslot(slot, 66, 114, 114, PEER, ET, PACKET_HOST, 0);
    CHECK(fc(slot, TPACKET2_HDRLEN - 1, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    CHECK(fc(slot, SLOT, U | TP_STATUS_COPY, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    mkslot(slot, 66, 114, 200, PEER, ET, PACKET_HOST, 0); /* cut */
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    mkslot(slot, 66, 114, 100, PEER, ET, PACKET_HOST, 0); /* more captured than received */
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
    mkslot(slot, 66, 14, 14, PEER, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_SHORT);
    mkslot(slot, 66, 15, 15, PEER, ET, PACKET_HOST, 0); /* one byte of payload */
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_OK && len == 1);
    mkslot(slot, 66, 114, 114, OUR, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_OWN);
    mkslot(slot, 66, 114, 114, PEER, ET, PACKET_OUTGOING, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_OWN);
    mkslot(slot, 66, 114, 114, PEER, ET, PACKET_OTHERHOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_FOREIGN);
    mkslot(slot, 66, 114, 114, (const uint8_t[6]){3, 0, 0, 0, 0, 2}, ET, PACKET_HOST, 0);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_FOREIGN);
    mkslot(slot, 66, 114, 114, PEER, 0x8100, PACKET_HOST, 0); /* a tag left in the frame */
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_FOREIGN);
    mkslot(slot, 66, 114, 114, PEER, ET, PACKET_HOST, 7); /* VLAN 7 */
    CHECK(fc(slot, SLOT, U | TP_STATUS_VLAN_VALID, &off, &len) == EBTL_ETH_FRAME_FOREIGN);
    CHECK(fc(slot, SLOT, U, &off, &len) == EBTL_ETH_FRAME_OK); /* tci without VLAN_VALID */
    mkslot(slot, 66, 114, 114, PEER, ET, PACKET_HOST, 0x6000); /* priority only: VLAN 0 */
    CHECK(fc(slot, SLOT, U | TP_STATUS_VLAN_VALID, &off, &len) == EBTL_ETH_FRAME_OK);
    CHECK(ebtl_eth_frame_check(NULL, SLOT, U, ET, OUR, &off, &len) == EBTL_ETH_FRAME_TRUNCATED);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    bool listing = false;
    for (int i = 1; i < argc; i++) {
        listing |= strcmp(argv[i], "--list") == 0;
    }
    RUN("eth", frame_check); /* no socket: runs as anyone */
    if (!listing) {
        if (geteuid() != 0) {
            printf("SKIP unit/eth (needs root: makes a veth pair in a network namespace of "
                   "its own)\n");
            return 77;
        }
        if (unshare(CLONE_NEWNET) != 0) {
            printf("SKIP unit/eth (unshare(CLONE_NEWNET): %s)\n", strerror(errno));
            return 77;
        }
        if (sh("ip link set lo up && ip link add " IF_A " type veth peer name " IF_B
               " && ip link set " IF_A " up && ip link set " IF_B " up") != 0) {
            printf("SKIP unit/eth (cannot make a veth pair with ip(8))\n");
            return 77;
        }
        set_mtu(1500);
    }
    RUN("eth", open_both);
    RUN("eth", sizes_both_ways);
    RUN("eth", mtu_9000);
    RUN("eth", full_tx_ring);
    RUN("eth", recv_batches);
    RUN("eth", bad_sends);
    RUN("eth", dropped_and_counted);
    RUN("eth", truncated);
    RUN("eth", rx_ring_full);
    RUN("eth", interface_down);
    RUN("eth", open_refused);
    return UNIT_RESULT();
}

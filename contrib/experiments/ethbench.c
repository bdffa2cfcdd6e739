/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * ethbench: one-way streaming throughput of three datagram wires on one
 * interface (issue 19, part A). Not part of the build:
 *
 *   cc -O2 -Icommon -o /tmp/ethbench contrib/experiments/ethbench.c common/ebtl_eth.c
 *   contrib/experiments/ethbench.sh          (makes the veth pair, runs all)
 *
 *   ethbench rx MODE IF PAYLOAD SECS
 *   ethbench tx MODE IF PAYLOAD SECS PEER     (PEER: IPv4 for udp, MAC else)
 *
 * MODE: udp    UDP, sendmsg with UDP_SEGMENT (GSO) of up to 64 KiB, each
 *              segment gathered from a 56-byte header + payload; receiver
 *              UDP_GRO + recvmmsg
 *       udp1   as udp, but the receiver has no UDP_GRO (recvmmsg of datagrams)
 *       mmsg   AF_PACKET SOCK_DGRAM, sendmmsg/recvmmsg of 64, qdisc bypass
 *       ring   AF_PACKET SOCK_RAW, PACKET_TX_RING (TPACKET_V2) + one send()
 *              per batch, PACKET_RX_RING TPACKET_V3, qdisc bypass
 *       ring2  as ring, but the RX ring is TPACKET_V2 (per-frame status)
 *       ring2b as ring2, the receiver polls the ring busily (no poll())
 *       lib    common/ebtl_eth (TX ring, V2 RX ring polled busily), 64
 *              frames a flush
 *   ethbench ping|pong 2|3|lib IF N PEERMAC    ping-pong latency
 *   ethbench ping|pong udp IF N PEERIP
 * PAYLOAD is the bytes of one datagram / frame payload (header included).
 * Each side prints one line "key=value ..." the script parses.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ebtl_eth.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define ETYPE 0x88B5
#define HDR 56
#define BATCH 64
#define PORT 47019

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static int ifindex_of(const char *ifn)
{
    int i = (int)if_nametoindex(ifn);
    if (i == 0) die(ifn);
    return i;
}

static void my_mac(int fd, const char *ifn, unsigned char mac[6])
{
    char path[128];
    snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifn);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
                     &mac[4], &mac[5]) != 6)
        die(path);
    fclose(f);
    (void)fd;
}

static int packet_socket(int type, const char *ifn)
{
    int fd = socket(AF_PACKET, type, htons(ETYPE));
    if (fd < 0) die("socket(AF_PACKET)");
    int one = 1, big = 32 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
    if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)
        perror("PACKET_QDISC_BYPASS");
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
    return fd;
}

static void bind_packet(int fd, const char *ifn)
{
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETYPE),
                              .sll_ifindex = ifindex_of(ifn)};
    if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) die("bind(AF_PACKET)");
}

static void kstats(int fd, unsigned *pk, unsigned *dr)
{
    struct tpacket_stats_v3 st;
    socklen_t l = sizeof(st);
    memset(&st, 0, sizeof(st));
    *pk = *dr = 0;
    if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0) {
        *pk = st.tp_packets;
        *dr = st.tp_drops;
    }
}

/* ring geometry: frames of fsz bytes (power of two >= needed), blocks of bsz */
static unsigned pow2(unsigned x)
{
    unsigned p = 1;
    while (p < x) p <<= 1;
    return p;
}

/* ---------------------------------------------------------------- sender */
static int run_tx(const char *mode, const char *ifn, unsigned pay, double secs, const char *peer)
{
    static unsigned char payload[65536];
    static unsigned char hdr[BATCH * 64][HDR];
    memset(payload, 0xab, sizeof(payload));
    unsigned long frames = 0, bytes = 0, errs = 0, calls = 0;
    double t0, c0;

    if (strncmp(mode, "udp", 3) == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        int big = 32 << 20;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(PORT)};
        inet_pton(AF_INET, peer, &to.sin_addr);
        if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) die("connect");
        unsigned nseg = 65507 / pay;
        if (nseg > 64) nseg = 64;
        struct iovec iov[128];
        for (unsigned i = 0; i < nseg; i++) {
            iov[2 * i].iov_base = hdr[i];
            iov[2 * i].iov_len = HDR;
            iov[2 * i + 1].iov_base = payload;
            iov[2 * i + 1].iov_len = pay - HDR;
        }
        char cbuf[CMSG_SPACE(sizeof(uint16_t))] = {0};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2 * nseg, .msg_control = cbuf,
                           .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        *(uint16_t *)CMSG_DATA(cm) = (uint16_t)pay;
        t0 = now(), c0 = cpu();
        while (now() - t0 < secs) {
            for (unsigned i = 0; i < nseg; i++) memcpy(hdr[i], &frames, 8), frames += 0;
            ssize_t n = sendmsg(fd, &m, 0);
            calls++;
            if (n < 0) {
                errs++;
                continue;
            }
            frames += nseg;
            bytes += (unsigned long)n;
        }
    } else if (strcmp(mode, "mmsg") == 0) {
        int fd = packet_socket(SOCK_DGRAM, ifn);
        bind_packet(fd, ifn);
        struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_protocol = htons(ETYPE),
                                 .sll_ifindex = ifindex_of(ifn), .sll_halen = 6};
        sscanf(peer, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &to.sll_addr[0], &to.sll_addr[1],
               &to.sll_addr[2], &to.sll_addr[3], &to.sll_addr[4], &to.sll_addr[5]);
        static struct mmsghdr mm[BATCH];
        static struct iovec iov[BATCH][2];
        for (unsigned i = 0; i < BATCH; i++) {
            iov[i][0] = (struct iovec){hdr[i], HDR};
            iov[i][1] = (struct iovec){payload, pay - HDR};
            mm[i].msg_hdr = (struct msghdr){.msg_name = &to, .msg_namelen = sizeof(to),
                                            .msg_iov = iov[i], .msg_iovlen = 2};
        }
        t0 = now(), c0 = cpu();
        while (now() - t0 < secs) {
            for (unsigned i = 0; i < BATCH; i++) {
                unsigned long s = frames + i;
                memcpy(hdr[i], &s, 8);
            }
            int n = sendmmsg(fd, mm, BATCH, 0);
            calls++;
            if (n < 0) {
                errs++;
                continue;
            }
            frames += (unsigned)n;
            bytes += (unsigned long)n * pay;
        }
    } else { /* ring, ring2: TX ring TPACKET_V2, SOCK_RAW */
        int fd = packet_socket(SOCK_RAW, ifn);
        int v = TPACKET_V2;
        if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) die("PACKET_VERSION");
        unsigned fsz = pow2(TPACKET2_HDRLEN + 14 + pay);
        unsigned bsz = fsz > 65536 ? fsz : 65536;
        unsigned ring = 4 << 20;
        struct tpacket_req req = {.tp_block_size = bsz, .tp_block_nr = ring / bsz,
                                  .tp_frame_size = fsz, .tp_frame_nr = ring / fsz};
        if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0)
            die("PACKET_TX_RING");
        unsigned char *base = mmap(NULL, ring, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) die("mmap tx");
        bind_packet(fd, ifn);
        unsigned char eh[14];
        sscanf(peer, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &eh[0], &eh[1], &eh[2], &eh[3], &eh[4],
               &eh[5]);
        my_mac(fd, ifn, eh + 6);
        eh[12] = ETYPE >> 8, eh[13] = ETYPE & 0xff;
        unsigned nfr = req.tp_frame_nr, idx = 0;
        t0 = now(), c0 = cpu();
        while (now() - t0 < secs) {
            unsigned q = 0;
            for (; q < BATCH; q++) {
                struct tpacket2_hdr *h = (void *)(base + (size_t)idx * fsz);
                if (h->tp_status != TP_STATUS_AVAILABLE) break;
                unsigned char *d = (unsigned char *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
                memcpy(d, eh, 14);
                unsigned long s = frames + q;
                memcpy(d + 14, &s, 8);
                memset(d + 22, 0, HDR - 8);
                memcpy(d + 14 + HDR, payload, pay - HDR);
                h->tp_len = 14 + pay;
                __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
                idx = (idx + 1) % nfr;
            }
            if (q == 0) { /* ring full: wait for completions */
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 10);
            }
            ssize_t n = send(fd, NULL, 0, MSG_DONTWAIT);
            calls++;
            if (n < 0 && errno != EAGAIN) errs++;
            frames += q;
            bytes += (unsigned long)q * pay;
        }
        send(fd, NULL, 0, 0);
        /* frames the kernel marked wrong */
        for (unsigned i = 0; i < nfr; i++) {
            struct tpacket2_hdr *h = (void *)(base + (size_t)i * fsz);
            if (h->tp_status == TP_STATUS_WRONG_FORMAT) errs++;
        }
    }
    double dt = now() - t0, dc = cpu() - c0;
    printf("role=tx mode=%s frames=%lu bytes=%lu secs=%.3f cpu=%.1f errs=%lu calls=%lu\n", mode,
           frames, bytes, dt, 100 * dc / dt, errs, calls);
    return 0;
}

/* -------------------------------------------------------------- receiver */
static unsigned long rframes, rbytes, rbad;
static double tfirst, tlast, cfirst;

static void got(size_t len, unsigned pay)
{
    if (rframes == 0) tfirst = now(), cfirst = cpu();
    rframes++;
    rbytes += len;
    if (len != pay) rbad++;
}

static int run_rx(const char *mode, const char *ifn, unsigned pay, double secs)
{
    double start = now(), idle = 1.0;
    unsigned kpk = 0, kdr = 0;
    int fd;
#define DONE() ((rframes && now() - tlast > idle) || now() - start > secs + 5)
    if (strncmp(mode, "udp", 3) == 0) {
        fd = socket(AF_INET, SOCK_DGRAM, 0);
        int big = 32 << 20, one = strcmp(mode, "udp") == 0;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
        if (setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0) perror("UDP_GRO");
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) die("bind");
        struct timeval tv = {0, 100000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        enum { N = 64 };
        static unsigned char buf[N][65536];
        static char cbuf[N][CMSG_SPACE(sizeof(int))];
        struct iovec iov[N];
        struct mmsghdr mm[N];
        printf("ready\n");
        fflush(stdout);
        while (!DONE()) {
            for (int i = 0; i < N; i++) {
                iov[i] = (struct iovec){buf[i], sizeof(buf[i])};
                mm[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1,
                                                .msg_control = cbuf[i],
                                                .msg_controllen = sizeof(cbuf[i])};
            }
            int n = recvmmsg(fd, mm, N, MSG_WAITFORONE, NULL);
            if (n <= 0) continue;
            for (int i = 0; i < n; i++) {
                size_t len = mm[i].msg_len, seg = len;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mm[i].msg_hdr); c;
                     c = CMSG_NXTHDR(&mm[i].msg_hdr, c))
                    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
                        seg = (size_t) * (int *)CMSG_DATA(c);
                for (size_t off = 0; off < len; off += seg)
                    got(len - off < seg ? len - off : seg, pay);
            }
            tlast = now();
        }
    } else if (strcmp(mode, "mmsg") == 0) {
        fd = packet_socket(SOCK_DGRAM, ifn);
        bind_packet(fd, ifn);
        struct timeval tv = {0, 100000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        static unsigned char buf[BATCH][9216];
        struct iovec iov[BATCH];
        struct mmsghdr mm[BATCH];
        struct sockaddr_ll from[BATCH];
        printf("ready\n");
        fflush(stdout);
        while (!DONE()) {
            for (int i = 0; i < BATCH; i++) {
                iov[i] = (struct iovec){buf[i], sizeof(buf[i])};
                mm[i].msg_hdr = (struct msghdr){.msg_name = &from[i],
                                                .msg_namelen = sizeof(from[i]),
                                                .msg_iov = &iov[i], .msg_iovlen = 1};
            }
            int n = recvmmsg(fd, mm, BATCH, MSG_WAITFORONE, NULL);
            if (n <= 0) continue;
            for (int i = 0; i < n; i++) got(mm[i].msg_len, pay);
            tlast = now();
        }
    } else if (strcmp(mode, "ring") == 0) { /* RX ring TPACKET_V3 */
        fd = packet_socket(SOCK_RAW, ifn);
        int v = TPACKET_V3;
        if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) die("PACKET_VERSION");
        unsigned bsz = 1 << 20, bnr = 16;
        struct tpacket_req3 req = {.tp_block_size = bsz, .tp_block_nr = bnr,
                                   .tp_frame_size = 16384, .tp_frame_nr = bsz / 16384 * bnr,
                                   .tp_retire_blk_tov = 1};
        if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
            die("PACKET_RX_RING");
        unsigned char *base = mmap(NULL, (size_t)bsz * bnr, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) die("mmap rx");
        bind_packet(fd, ifn);
        printf("ready\n");
        fflush(stdout);
        unsigned b = 0;
        while (!DONE()) {
            struct tpacket_block_desc *bd = (void *)(base + (size_t)b * bsz);
            if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                poll(&p, 1, 100);
                continue;
            }
            struct tpacket3_hdr *h = (void *)((unsigned char *)bd + bd->hdr.bh1.offset_to_first_pkt);
            for (unsigned i = 0; i < bd->hdr.bh1.num_pkts; i++) {
                got(h->tp_snaplen - 14, pay);
                h = (void *)((unsigned char *)h + h->tp_next_offset);
            }
            __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
            b = (b + 1) % bnr;
            tlast = now();
        }
    } else { /* ring2: RX ring TPACKET_V2 */
        fd = packet_socket(SOCK_RAW, ifn);
        int v = TPACKET_V2;
        if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) die("PACKET_VERSION");
        unsigned fsz = pow2(TPACKET2_HDRLEN + 16 + 14 + pay);
        unsigned bsz = fsz > 65536 ? fsz : 65536, ring = 16 << 20;
        struct tpacket_req req = {.tp_block_size = bsz, .tp_block_nr = ring / bsz,
                                  .tp_frame_size = fsz, .tp_frame_nr = ring / fsz};
        if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
            die("PACKET_RX_RING");
        unsigned char *base = mmap(NULL, ring, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) die("mmap rx");
        bind_packet(fd, ifn);
        printf("ready\n");
        fflush(stdout);
        unsigned idx = 0, nfr = req.tp_frame_nr;
        int busy = strcmp(mode, "ring2b") == 0;
        while (!DONE()) {
            struct tpacket2_hdr *h = (void *)(base + (size_t)idx * fsz);
            if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (!busy) poll(&p, 1, 100);
                continue;
            }
            got(h->tp_snaplen - 14, pay);
            __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
            idx = (idx + 1) % nfr;
            tlast = now();
        }
    }
    if (strncmp(mode, "udp", 3) != 0) kstats(fd, &kpk, &kdr);
    double dt = tlast - tfirst, dc = cpu() - cfirst;
    if (dt <= 0) dt = 1e-9;
    printf("role=rx mode=%s frames=%lu bytes=%lu secs=%.3f cpu=%.1f badlen=%lu kpk=%u kdrops=%u\n",
           mode, rframes, rbytes, dt, 100 * dc / dt, rbad, kpk, kdr);
    return 0;
}

/* ---------------------------------------------------- ping-pong latency
 * ethbench ping|pong V IF N PEERMAC: 60-byte frames echoed N times; the RX
 * ring is TPACKET_V{V} (3: block retire timeout 1 ms), polled busily. */
static int run_lat(int ping, int ver, const char *ifn, int n, const char *peer)
{
    int fd = packet_socket(SOCK_RAW, ifn);
    if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) < 0) die("PACKET_VERSION");
    unsigned bsz = 1 << 16, bnr = 64, fsz = 2048;
    struct tpacket_req3 req = {.tp_block_size = bsz, .tp_block_nr = bnr, .tp_frame_size = fsz,
                               .tp_frame_nr = bsz / fsz * bnr, .tp_retire_blk_tov = 1};
    if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req,
                   ver == TPACKET_V3 ? sizeof(req) : sizeof(struct tpacket_req)) < 0)
        die("PACKET_RX_RING");
    unsigned char *base = mmap(NULL, (size_t)bsz * bnr, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) die("mmap");
    bind_packet(fd, ifn);
    unsigned char f[60] = {0};
    sscanf(peer, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]);
    my_mac(fd, ifn, f + 6);
    f[12] = ETYPE >> 8, f[13] = ETYPE & 0xff;
    unsigned idx = 0, nfr = req.tp_frame_nr, b = 0;
    struct tpacket3_hdr *h3 = NULL;
    unsigned left = 0;
    double *rtt = calloc((size_t)n, sizeof(double));
    printf("ready\n");
    for (int i = 0; i < n + (ping ? 0 : 0); i++) {
        double t = now();
        if (ping && send(fd, f, sizeof(f), 0) < 0) die("send");
        for (;;) { /* wait for one frame */
            if (now() - t > 2) { printf("timeout at %d\n", i); return 1; }
            if (ver == TPACKET_V2) {
                struct tpacket2_hdr *h = (void *)(base + (size_t)idx * fsz);
                if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) continue;
                __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
                idx = (idx + 1) % nfr;
                break;
            }
            struct tpacket_block_desc *bd = (void *)(base + (size_t)b * bsz);
            if (left == 0) {
                if (h3) { /* give back the finished block */
                    __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
                    b = (b + 1) % bnr;
                    bd = (void *)(base + (size_t)b * bsz);
                    h3 = NULL;
                }
                if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
                    continue;
                left = bd->hdr.bh1.num_pkts;
                h3 = (void *)((unsigned char *)bd + bd->hdr.bh1.offset_to_first_pkt);
                if (left == 0) continue;
            } else {
                h3 = (void *)((unsigned char *)h3 + h3->tp_next_offset);
            }
            left--;
            break;
        }
        if (!ping && send(fd, f, sizeof(f), 0) < 0) die("send");
        rtt[i] = now() - t;
    }
    if (ping) {
        int cmp(const void *a, const void *b2) { double x = *(const double *)a, y = *(const double *)b2; return x < y ? -1 : x > y; }
        qsort(rtt, (size_t)n, sizeof(double), cmp);
        printf("role=ping v=%d n=%d rtt_us_median=%.1f p10=%.1f p90=%.1f\n", ver + 1, n, rtt[n / 2] * 1e6,
               rtt[n / 10] * 1e6, rtt[n * 9 / 10] * 1e6);
    }
    return 0;
}

/* ------------------------------------- the same through common/ebtl_eth
 * MODE lib (rx/tx), and ping|pong with V = lib. */
static ebtl_eth_sock_t *lib_open(const char *ifn)
{
    static ebtl_eth_sock_t s;
    ebtl_if_t ifa;
    memset(&ifa, 0, sizeof(ifa));
    snprintf(ifa.name, sizeof(ifa.name), "%s", ifn);
    ifa.ifindex = (unsigned)ifindex_of(ifn);
    char err[256];
    if (ebtl_eth_open(&s, &ifa, ETYPE, 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    return &s;
}

static void parse_mac(const char *p, uint8_t m[6])
{
    sscanf(p, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]);
}

static int lib_tx(const char *ifn, unsigned pay, double secs, const char *peer)
{
    static unsigned char payload[65536], hdr[HDR];
    ebtl_eth_sock_t *s = lib_open(ifn);
    uint8_t dst[6];
    parse_mac(peer, dst);
    unsigned long frames = 0, errs = 0;
    struct iovec iov[2] = {{hdr, HDR}, {payload, pay - HDR}};
    double t0 = now(), c0 = cpu();
    while (now() - t0 < secs) {
        for (unsigned i = 0; i < BATCH; i++, frames++) {
            memcpy(hdr, &frames, 8);
            if (ebtl_eth_queue(s, dst, iov, 2) != 0) errs++;
        }
        errs += (unsigned)ebtl_eth_flush(s);
    }
    while (ebtl_eth_tx_pending(s) > 0) ebtl_eth_flush(s);
    double dt = now() - t0, dc = cpu() - c0;
    printf("role=tx mode=lib frames=%llu bytes=%llu secs=%.3f cpu=%.1f errs=%lu calls=%llu\n",
           (unsigned long long)s->stats.tx_frames, (unsigned long long)s->stats.tx_bytes, dt,
           100 * dc / dt, errs, (unsigned long long)s->stats.tx_flushes);
    return 0;
}

static int lib_rx(const char *ifn, unsigned pay, double secs)
{
    ebtl_eth_sock_t *s = lib_open(ifn);
    double start = now(), idle = 1.0;
    printf("ready\n");
    while (!DONE()) {
        ebtl_eth_msg_t m[64];
        int n = ebtl_eth_recv(s, m, 64);
        for (int i = 0; i < n; i++) got(m[i].len, pay);
        if (n > 0) tlast = now();
    }
    ebtl_eth_kernel_stats(s);
    double dt = tlast - tfirst, dc = cpu() - cfirst;
    if (dt <= 0) dt = 1e-9;
    printf("role=rx mode=lib frames=%lu bytes=%lu secs=%.3f cpu=%.1f badlen=%lu kpk=%llu kdrops=%llu\n",
           rframes, rbytes, dt, 100 * dc / dt, rbad, (unsigned long long)s->stats.rx_kernel_packets,
           (unsigned long long)s->stats.rx_kernel_drops);
    return 0;
}

static int lib_lat(int ping, const char *ifn, int n, const char *peer)
{
    ebtl_eth_sock_t *s = lib_open(ifn);
    uint8_t dst[6];
    parse_mac(peer, dst);
    unsigned char f[46] = {0};
    struct iovec iov = {f, sizeof(f)};
    double *rtt = calloc((size_t)n, sizeof(double));
    printf("ready\n");
    for (int i = 0; i < n; i++) {
        double t = now();
        if (ping) { ebtl_eth_queue(s, dst, &iov, 1); ebtl_eth_flush(s); }
        ebtl_eth_msg_t m[4];
        while (ebtl_eth_recv(s, m, 4) == 0)
            if (now() - t > 2) { printf("timeout at %d\n", i); return 1; }
        if (!ping) { ebtl_eth_queue(s, dst, &iov, 1); ebtl_eth_flush(s); }
        rtt[i] = now() - t;
    }
    if (ping) {
        int cmp(const void *a, const void *b2) { double x = *(const double *)a, y = *(const double *)b2; return x < y ? -1 : x > y; }
        qsort(rtt, (size_t)n, sizeof(double), cmp);
        printf("role=ping v=lib n=%d rtt_us_median=%.1f p10=%.1f p90=%.1f\n", n, rtt[n / 2] * 1e6,
               rtt[n / 10] * 1e6, rtt[n * 9 / 10] * 1e6);
    }
    return 0;
}

/* UDP ping-pong for comparison: 46-byte datagrams, recv polled busily
 * (MSG_DONTWAIT), as the esp progress loop reads its UDP socket. */
static int udp_lat(int ping, int n, const char *peer)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) die("bind");
    inet_pton(AF_INET, peer, &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) die("connect");
    unsigned char f[46] = {0};
    double *rtt = calloc((size_t)n, sizeof(double));
    printf("ready\n");
    for (int i = 0; i < n; i++) {
        double t = now();
        if (ping && send(fd, f, sizeof(f), 0) < 0) die("send");
        while (recv(fd, f, sizeof(f), MSG_DONTWAIT) < 0)
            if (now() - t > 2) { printf("timeout at %d\n", i); return 1; }
        if (!ping && send(fd, f, sizeof(f), 0) < 0) die("send");
        rtt[i] = now() - t;
    }
    if (ping) {
        int cmp(const void *x1, const void *b2) { double x = *(const double *)x1, y = *(const double *)b2; return x < y ? -1 : x > y; }
        qsort(rtt, (size_t)n, sizeof(double), cmp);
        printf("role=ping v=udp n=%d rtt_us_median=%.1f p10=%.1f p90=%.1f\n", n, rtt[n / 2] * 1e6,
               rtt[n / 10] * 1e6, rtt[n * 9 / 10] * 1e6);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: ethbench rx|tx MODE IF PAYLOAD SECS [PEER]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((strcmp(argv[1], "ping") == 0 || strcmp(argv[1], "pong") == 0) &&
        strcmp(argv[2], "udp") == 0)
        return udp_lat(argv[1][1] == 'i', atoi(argv[4]), argv[5]);
    if ((strcmp(argv[1], "ping") == 0 || strcmp(argv[1], "pong") == 0) &&
        strcmp(argv[2], "lib") == 0)
        return lib_lat(argv[1][1] == 'i', argv[3], atoi(argv[4]), argv[5]);
    if (strcmp(argv[2], "lib") == 0)
        return strcmp(argv[1], "rx") == 0 ? lib_rx(argv[3], (unsigned)atoi(argv[4]), atof(argv[5]))
                                          : lib_tx(argv[3], (unsigned)atoi(argv[4]), atof(argv[5]), argv[6]);
    if (strcmp(argv[1], "ping") == 0 || strcmp(argv[1], "pong") == 0)
        return run_lat(argv[1][1] == 'i', atoi(argv[2]) == 3 ? TPACKET_V3 : TPACKET_V2, argv[3], atoi(argv[4]), argv[5]);
    unsigned pay = (unsigned)atoi(argv[4]);
    double secs = atof(argv[5]);
    if (strcmp(argv[1], "rx") == 0) return run_rx(argv[2], argv[3], pay, secs);
    if (argc < 7) return 2;
    return run_tx(argv[2], argv[3], pay, secs, argv[6]);
}

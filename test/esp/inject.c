/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * inject - capture a running job's UDP datagrams on one interface and send
 * them back to where they were going with 1..MAX bits flipped: real
 * datagrams, the job's real tokens, a few bits wrong (issue 15's report).
 * Needs root (AF_PACKET). IPv4 only.
 *
 *   inject --if NAME --ports P[,P...] [--rate N] [--seconds S] [--bits MAX]
 *          [--span BYTES] [--outgoing] [--seed N]
 *
 *   --ports     the job's UDP ports: datagrams from or to one are captured
 *   --rate      flipped datagrams sent per second (default 50000)
 *   --seconds   stop after this long (default 5; also on SIGTERM/SIGINT)
 *   --bits      flip 1..MAX bits per datagram (default 8)
 *   --span      flip only within the first BYTES of each datagram (default:
 *               anywhere)
 *   --outgoing  capture datagrams this host sends too (on lo every datagram
 *               is seen twice, so only arrivals are taken there)
 *
 * Captured datagrams go into two rings, small (up to 512 bytes: ACKs, ob1's
 * control messages) and large (data); three of four replays are small ones
 * (while there are any), so that the few small ones are replayed often and
 * the large ones do not take the whole machine. GSO
 * super-packets are cut into their datagrams (PACKET_VNET_HDR, which only
 * a SOCK_RAW packet socket takes: frames come with their Ethernet header,
 * as on lo and veth).
 * Prints "inject: captured C (small S, large L), sent N, send errors E".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 64
#define SMALL_MAX 512
#define SMALL_RING 256
#define LARGE_RING 64
#define BATCH 32

typedef struct {
    struct sockaddr_in to;
    size_t len;
    uint8_t *data;
} captured_t;

typedef struct {
    captured_t *slot;
    unsigned cap, count, next;
    size_t maxlen;
} ring_t;

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void) sig; stop = 1; }

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "inject: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void ring_init(ring_t *r, unsigned cap, size_t maxlen)
{
    memset(r, 0, sizeof(*r));
    r->slot = calloc(cap, sizeof(*r->slot));
    r->cap = cap;
    r->maxlen = maxlen;
    for (unsigned i = 0; r->slot != NULL && i < cap; i++) {
        r->slot[i].data = malloc(maxlen);
        if (r->slot[i].data == NULL) {
            r->slot = NULL;
        }
    }
    if (r->slot == NULL) {
        fprintf(stderr, "inject: out of memory\n");
        exit(1);
    }
}

static void ring_put(ring_t *r, const struct sockaddr_in *to, const uint8_t *p, size_t len)
{
    captured_t *c = &r->slot[r->next];
    r->next = (r->next + 1) % r->cap;
    if (r->count < r->cap) {
        r->count++;
    }
    c->to = *to;
    c->len = len;
    memcpy(c->data, p, len);
}

static bool port_in(const uint16_t *ports, int n, uint16_t p)
{
    for (int i = 0; i < n; i++) {
        if (ports[i] == p) {
            return true;
        }
    }
    return false;
}

int main(int argc, char **argv)
{
    const char *ifname = NULL;
    uint16_t ports[MAX_PORTS];
    int nports = 0;
    double rate = 50000, seconds = 5;
    unsigned maxbits = 8;
    size_t span = 0;
    bool outgoing = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--outgoing") == 0) {
            outgoing = true;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "inject: %s needs a value (see the top of inject.c)\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--if") == 0) {
            ifname = v;
        } else if (strcmp(a, "--ports") == 0) {
            for (char *s = (char *) v; *s && nports < MAX_PORTS;) {
                char *end;
                long p = strtol(s, &end, 10);
                if (end == s || p <= 0 || p > 65535 || (*end != ',' && *end != '\0')) {
                    fprintf(stderr, "inject: bad port list '%s'\n", v);
                    return 2;
                }
                ports[nports++] = (uint16_t) p;
                s = *end == ',' ? end + 1 : end;
            }
        } else if (strcmp(a, "--rate") == 0) {
            rate = atof(v);
        } else if (strcmp(a, "--seconds") == 0) {
            seconds = atof(v);
        } else if (strcmp(a, "--bits") == 0) {
            maxbits = (unsigned) atoi(v);
        } else if (strcmp(a, "--span") == 0) {
            span = (size_t) atol(v);
        } else if (strcmp(a, "--seed") == 0) {
            rng_state ^= strtoull(v, NULL, 0) * 0x9E3779B97F4A7C15ull;
        } else {
            fprintf(stderr, "inject: unknown option %s\n", a);
            return 2;
        }
    }
    if (ifname == NULL || nports == 0 || maxbits < 1 || rate <= 0) {
        fprintf(stderr, "inject: need --if and --ports; --bits and --rate above 0\n");
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    unsigned ifindex = if_nametoindex(ifname);
    if (ifindex == 0) {
        die(ifname);
    }
    int ps = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
    if (ps < 0) {
        die("AF_PACKET socket (needs root)");
    }
    int one = 1;
    if (setsockopt(ps, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) != 0) {
        die("PACKET_VNET_HDR");
    }
    struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
                             .sll_ifindex = (int) ifindex};
    if (bind(ps, (struct sockaddr *) &ll, sizeof(ll)) != 0) {
        die("bind to the interface");
    }
    int us = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET};
    socklen_t mel = sizeof(me);
    if (us < 0 || bind(us, (struct sockaddr *) &me, sizeof(me)) != 0
        || getsockname(us, (struct sockaddr *) &me, &mel) != 0) {
        die("UDP socket");
    }
    int bufsize = 4 << 20;
    (void) setsockopt(us, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
    /* room for many 64 KiB frames while the sends run (root: past rmem_max) */
    int rcvbuf = 32 << 20;
    if (setsockopt(ps, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0) {
        (void) setsockopt(ps, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }

    ring_t small, large;
    ring_init(&small, SMALL_RING, SMALL_MAX);
    ring_init(&large, LARGE_RING, 65536);
    static uint8_t pkt[sizeof(struct virtio_net_hdr) + ETH_HLEN + 65536 + 256];
    static uint8_t out[BATCH][65536];
    struct mmsghdr mm[BATCH];
    struct iovec iov[BATCH];
    uint64_t captured = 0, sent = 0, errors = 0;
    unsigned turn = 0;
    double t0 = now_s();

    while (!stop) {
        double t = now_s() - t0;
        if (t >= seconds) {
            break;
        }
        /* capture whatever has arrived */
        struct pollfd pf = {.fd = ps, .events = POLLIN};
        (void) poll(&pf, 1, 1);
        for (int k = 0; k < 64; k++) {
            struct sockaddr_ll from;
            socklen_t fl = sizeof(from);
            ssize_t n = recvfrom(ps, pkt, sizeof(pkt), MSG_DONTWAIT, (struct sockaddr *) &from, &fl);
            if (n < 0) {
                break;
            }
            if (from.sll_pkttype == PACKET_OUTGOING && !outgoing) {
                continue;
            }
            struct virtio_net_hdr vh;
            size_t l2 = sizeof(vh) + ETH_HLEN;
            if ((size_t) n < l2 + sizeof(struct iphdr)
                || (pkt[sizeof(vh) + 12] << 8 | pkt[sizeof(vh) + 13]) != ETH_P_IP) {
                continue;
            }
            memcpy(&vh, pkt, sizeof(vh));
            const uint8_t *ip = pkt + l2;
            size_t iplen = (size_t) n - l2;
            struct iphdr ih;
            memcpy(&ih, ip, sizeof(ih));
            size_t ihl = (size_t) ih.ihl * 4;
            if (ih.version != 4 || ih.protocol != IPPROTO_UDP || ihl < 20
                || iplen < ihl + sizeof(struct udphdr)) {
                continue;
            }
            struct udphdr uh;
            memcpy(&uh, ip + ihl, sizeof(uh));
            uint16_t sport = ntohs(uh.source), dport = ntohs(uh.dest);
            if (sport == ntohs(me.sin_port)
                || (!port_in(ports, nports, sport) && !port_in(ports, nports, dport))) {
                continue;
            }
            const uint8_t *payload = ip + ihl + sizeof(uh);
            size_t plen = iplen - ihl - sizeof(uh);
            /* a GSO super-packet carries datagrams of gso_size each */
            size_t seg = vh.gso_type != VIRTIO_NET_HDR_GSO_NONE && vh.gso_size > 0 ? vh.gso_size : plen;
            struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = uh.dest,
                                     .sin_addr.s_addr = ih.daddr};
            for (size_t at = 0; plen > 0 && at < plen; at += seg) {
                size_t len = plen - at < seg ? plen - at : seg;
                ring_put(len <= SMALL_MAX ? &small : &large, &to, payload + at, len);
                captured++;
            }
        }
        /* send what the rate allows by now */
        /* (a few batches at a time: capturing must go on when sending lags) */
        uint64_t due = (uint64_t) (rate * t);
        for (int round = 0; round < 8 && sent + errors < due && (small.count > 0 || large.count > 0);
             round++) {
            unsigned b = 0;
            for (; b < BATCH && sent + errors + b < due; b++) {
                ring_t *r = (turn++ & 3) == 3 ? &large : &small;
                if (r->count == 0) {
                    r = r == &small ? &large : &small;
                }
                const captured_t *c = &r->slot[rnd() % r->count];
                memcpy(out[b], c->data, c->len);
                size_t lim = span > 0 && span < c->len ? span : c->len;
                unsigned bits = 1 + (unsigned) (rnd() % maxbits);
                do {
                    for (unsigned i = 0; i < bits; i++) {
                        size_t bit = rnd() % (lim * 8);
                        out[b][bit / 8] ^= (uint8_t) (1u << (bit % 8));
                    }
                    bits = 1;   /* the flips cancelled out: one more */
                } while (memcmp(out[b], c->data, c->len) == 0);
                iov[b].iov_base = out[b];
                iov[b].iov_len = c->len;
                memset(&mm[b], 0, sizeof(mm[b]));
                mm[b].msg_hdr.msg_name = (void *) &c->to;
                mm[b].msg_hdr.msg_namelen = sizeof(c->to);
                mm[b].msg_hdr.msg_iov = &iov[b];
                mm[b].msg_hdr.msg_iovlen = 1;
            }
            int r = sendmmsg(us, mm, b, MSG_DONTWAIT);
            if (r < 0) {
                if (errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED && errno != EINTR) {
                    die("sendmmsg");
                }
                errors += b;   /* counted as attempted: the rate is not made up later */
                break;
            }
            sent += (uint64_t) r;
            errors += b - (unsigned) r;
        }
    }
    printf("inject: captured %llu (small %u, large %u), sent %llu, send errors %llu\n",
           (unsigned long long) captured, small.count, large.count, (unsigned long long) sent,
           (unsigned long long) errors);
    return 0;
}

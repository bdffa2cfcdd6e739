/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * ofibench: a libfabric FI_EP_DGRAM provider (through common/ebtl_ofi.c)
 * against plain UDP sockets, between two processes on 127.0.0.1 (this
 * program forks; the two exchange endpoint names over a socketpair).
 * Not part of the build:
 *
 *   gcc -O2 -std=gnu11 -Icommon contrib/experiments/ofibench.c common/ebtl_ofi.c \
 *       -lfabric -o /tmp/ofibench
 *   /tmp/ofibench [-w udp|sockets|raw,...] [-n ITERS] [-t SECS] [-s BYTES] [-r REPS]
 *                 [-b RCVBUF]
 *
 * For each wire (default "udp,raw": the udp provider, then plain sockets),
 * REPS rounds of:
 *   latency  8 B ping-pong, both sides busy-polling: half round trip (median
 *            over the round's ITERS exchanges, and the mean)
 *   stream   one side sends BYTES-byte datagrams (default 1472) as fast as
 *            it can for SECS seconds, the other busy-polls: MB/s (10^6 B/s)
 *            received between first and last arrival, MB/s offered, loss
 *   burst    10,000 datagrams of BYTES sent back to back (retried on
 *            -EAGAIN), the other side busy-polling: how many arrive
 * Both use the kernel's default socket buffers (libfabric has no way to
 * change the udp provider's) unless -b RCVBUF: then the receiving socket's
 * SO_RCVBUF(FORCE) is set, for the udp provider by finding its socket among
 * the process's descriptors (getsockname equal to the endpoint's name), an
 * experiment only. One datagram per system call (the udp provider's recvmsg
 * per fi_cq_read; plain sockets recv/send).
 *
 * Seen here (libfabric 1.17.0, 2 cores, quiet moments; -n 20000 -t 1):
 *   udp provider  8 B half round trip 3.75-3.81 us, stream of 1472 B
 *                 459-480 MB/s (sender-bound: offered = received, loss
 *                 0-0.7 %), burst 9947-10000 of 10000
 *   raw sockets   3.31-3.35 us, 470-489 MB/s, burst 10000
 *   -b 4194304    (8 MiB granted) both: no loss in stream or burst
 *   sockets       4.0-6.9 ms (its progress thread sleeps: with
 *                 FI_SOCKETS_PE_WAITTIME=0 43-53 us), 23-37 MB/s without
 *                 loss (TCP underneath; sends mostly -EAGAIN), inject 255 B
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ebtl_ofi.h"

typedef struct wire {
    const char *name;
    bool raw;
    ebtl_ofi_ep_t *ep;
    uint64_t peer;
    int fd;
    struct sockaddr_in peer_sa;
    unsigned char rbuf[65536];
} wire_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "ofibench: %s\n", what);
    exit(1);
}

static void wire_open(wire_t *w, const char *name)
{
    memset(w, 0, sizeof(*w));
    w->name = name;
    w->fd = -1;
    if (strcmp(name, "raw") == 0) {
        w->raw = true;
        w->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (w->fd < 0 || bind(w->fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
            die("socket/bind");
        }
        return;
    }
    ebtl_if_t ifa;
    memset(&ifa, 0, sizeof(ifa));
    snprintf(ifa.name, sizeof(ifa.name), "lo");
    ifa.family = AF_INET;
    ifa.addr[0] = 127;
    ifa.addr[3] = 1;
    ifa.ifindex = if_nametoindex("lo");
    ifa.mtu = 65536;
    ifa.loopback = true;
    char err[512];
    if (ebtl_ofi_open(&w->ep, name, &ifa, 256, err, sizeof(err)) != 0) {
        die(err);
    }
}

static size_t wire_name(wire_t *w, unsigned char *buf)
{
    if (w->raw) {
        socklen_t l = sizeof(struct sockaddr_in);
        getsockname(w->fd, (struct sockaddr *) buf, &l);
        return l;
    }
    return ebtl_ofi_name(w->ep, buf, EBTL_OFI_NAME_MAX);
}

static void wire_insert(wire_t *w, const unsigned char *name, size_t len)
{
    if (w->raw) {
        memcpy(&w->peer_sa, name, sizeof(w->peer_sa));
        return;
    }
    if (ebtl_ofi_insert(w->ep, name, len, &w->peer) != 0) {
        die("ebtl_ofi_insert");
    }
}

/* 0 sent, -EAGAIN busy, other negative: error */
static int wire_send(wire_t *w, const void *buf, size_t len)
{
    if (w->raw) {
        ssize_t r = sendto(w->fd, buf, len, 0, (struct sockaddr *) &w->peer_sa,
                           sizeof(w->peer_sa));
        return r == (ssize_t) len ? 0 : -errno;
    }
    struct iovec v = {(void *) buf, len};
    return ebtl_ofi_send(w->ep, w->peer, &v, 1);
}

/* Up to max datagrams; lens[i] their lengths (the data is not needed). */
static int wire_recv(wire_t *w, size_t *lens, unsigned max)
{
    if (w->raw) {
        unsigned n = 0;
        while (n < max) {
            ssize_t r = recv(w->fd, w->rbuf, sizeof(w->rbuf), 0);
            if (r < 0) {
                break;
            }
            lens[n++] = (size_t) r;
        }
        return (int) n;
    }
    ebtl_ofi_msg_t m[32];
    int r = ebtl_ofi_recv(w->ep, m, max < 32 ? max : 32);
    for (int i = 0; i < r; i++) {
        lens[i] = m[i].len;
    }
    return r;
}

/* SO_RCVBUF of the wire's socket (the udp provider's: found by its name). */
static int wire_rcvbuf(wire_t *w, int bytes)
{
    int fd = w->fd;
    if (!w->raw) {
        unsigned char name[EBTL_OFI_NAME_MAX];
        size_t nl = ebtl_ofi_name(w->ep, name, sizeof(name));
        fd = -1;
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        while (d != NULL && (de = readdir(d)) != NULL) {
            int f = atoi(de->d_name);
            struct sockaddr_storage ss;
            socklen_t l = sizeof(ss);
            int type = 0;
            socklen_t tl = sizeof(type);
            if (f > 2 && getsockname(f, (struct sockaddr *) &ss, &l) == 0 && l == nl &&
                memcmp(&ss, name, nl) == 0 &&
                getsockopt(f, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_DGRAM) {
                fd = f;
            }
        }
        if (d != NULL) {
            closedir(d);
        }
        if (fd < 0) {
            return -1;
        }
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
    }
    int got = 0;
    socklen_t gl = sizeof(got);
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &gl);
    return got;
}

static void wire_close(wire_t *w)
{
    if (w->raw) {
        close(w->fd);
    } else {
        ebtl_ofi_close(w->ep);
    }
}

/* ---- control channel: small fixed messages over the socketpair */
static void ctl_put(int fd, uint64_t v)
{
    if (write(fd, &v, sizeof(v)) != sizeof(v)) {
        die("control write");
    }
}

static uint64_t ctl_get(int fd)
{
    uint64_t v;
    if (read(fd, &v, sizeof(v)) != sizeof(v)) {
        die("control read");
    }
    return v;
}

static bool ctl_ready(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

/* One ping-pong round; the initiator returns the half round trips' median
 * and mean (ns). A lost datagram ends the exchange after 200 ms and
 * restarts it (counted). */
static void pingpong(wire_t *w, bool initiator, unsigned iters, int ctl, double *med, double *mean,
                     unsigned *lost)
{
    unsigned char msg[8] = {0};
    size_t lens[32];
    uint64_t *t = initiator ? calloc(iters, sizeof(uint64_t)) : NULL;
    *lost = 0;
    if (!initiator) {
        /* echo until told to stop */
        for (;;) {
            int r = wire_recv(w, lens, 32);
            for (int i = 0; i < r; i++) {
                while (wire_send(w, msg, 8) == -EAGAIN) {
                }
            }
            if (r == 0 && ctl_ready(ctl)) {
                ctl_get(ctl);
                return;
            }
        }
    }
    for (unsigned i = 0; i < iters + 100; i++) {
        uint64_t t0 = now_ns();
        while (wire_send(w, msg, 8) == -EAGAIN) {
        }
        int r;
        while ((r = wire_recv(w, lens, 1)) == 0) {
            if (now_ns() - t0 > 200000000u) {
                (*lost)++;
                break;
            }
        }
        if (r > 0 && i >= 100) {
            t[i - 100] = now_ns() - t0; /* the first 100 warm up */
        }
    }
    ctl_put(ctl, 1);
    double sum = 0;
    for (unsigned i = 0; i < iters; i++) {
        sum += (double) t[i];
    }
    qsort(t, iters, sizeof(uint64_t), cmp_u64);
    *med = (double) t[iters / 2] / 2.0;
    *mean = sum / iters / 2.0;
    free(t);
}

/* One stream round: the initiator sends for secs; the responder reports
 * what arrived over ctl: count, bytes, first and last arrival. */
static void stream(wire_t *w, bool initiator, size_t size, double secs, int ctl, double *mbs,
                   double *offered, double *loss)
{
    size_t lens[32];
    if (!initiator) {
        uint64_t n = 0, bytes = 0, first = 0, last = 0, done_at = 0;
        unsigned idle = 0;
        ctl_put(ctl, 1); /* ready */
        for (;;) {
            int r = wire_recv(w, lens, 32);
            if (r > 0) {
                uint64_t t = now_ns();
                if (first == 0) {
                    first = t;
                }
                last = t;
                n += (uint64_t) r;
                for (int i = 0; i < r; i++) {
                    bytes += lens[i];
                }
                continue;
            }
            if (done_at == 0 && (++idle & 255) == 0 && ctl_ready(ctl)) {
                ctl_get(ctl);
                done_at = now_ns();
            }
            if (done_at != 0 && now_ns() - done_at > 50000000u) {
                break; /* 50 ms after the sender stopped */
            }
        }
        ctl_put(ctl, n);
        ctl_put(ctl, bytes);
        ctl_put(ctl, last - first);
        return;
    }
    unsigned char *buf = calloc(1, size);
    ctl_get(ctl);
    uint64_t sent = 0, t0 = now_ns(), end = t0 + (uint64_t) (secs * 1e9), t;
    while ((t = now_ns()) < end) {
        for (int k = 0; k < 64; k++) {
            memcpy(buf, &sent, sizeof(sent));
            if (wire_send(w, buf, size) == 0) {
                sent++;
            }
        }
    }
    double elapsed = (double) (now_ns() - t0) / 1e9;
    ctl_put(ctl, 1);
    uint64_t n = ctl_get(ctl), bytes = ctl_get(ctl), span = ctl_get(ctl);
    *mbs = span ? (double) bytes / ((double) span / 1e9) / 1e6 : 0;
    *offered = (double) sent * (double) size / elapsed / 1e6;
    *loss = sent ? 100.0 * (double) (sent - n) / (double) sent : 0;
    free(buf);
}

/* One burst: the initiator sends count datagrams back to back; the
 * responder reports how many arrived. */
static void burst(wire_t *w, bool initiator, size_t size, unsigned count, int ctl,
                  unsigned *arrived, unsigned *eagain)
{
    size_t lens[32];
    if (!initiator) {
        uint64_t n = 0, done_at = 0;
        unsigned idle = 0;
        ctl_put(ctl, 1);
        for (;;) {
            int r = wire_recv(w, lens, 32);
            if (r > 0) {
                n += (uint64_t) r;
                continue;
            }
            if (done_at == 0 && (++idle & 255) == 0 && ctl_ready(ctl)) {
                ctl_get(ctl);
                done_at = now_ns();
            }
            if (done_at != 0 && now_ns() - done_at > 50000000u) {
                break;
            }
        }
        ctl_put(ctl, n);
        return;
    }
    unsigned char *buf = calloc(1, size);
    ctl_get(ctl);
    *eagain = 0;
    for (unsigned i = 0; i < count; i++) {
        int rc;
        while ((rc = wire_send(w, buf, size)) == -EAGAIN) {
            (*eagain)++;
        }
    }
    ctl_put(ctl, 1);
    *arrived = (unsigned) ctl_get(ctl);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *wires = "udp,raw";
    unsigned iters = 20000, reps = 3;
    double secs = 1.0;
    size_t size = 1472;
    int rcvbuf = 0;
    int opt;
    while ((opt = getopt(argc, argv, "w:n:t:s:r:b:")) != -1) {
        switch (opt) {
        case 'w': wires = optarg; break;
        case 'n': iters = (unsigned) atoi(optarg); break;
        case 't': secs = atof(optarg); break;
        case 's': size = (size_t) atol(optarg); break;
        case 'r': reps = (unsigned) atoi(optarg); break;
        case 'b': rcvbuf = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-w udp|sockets|raw,...] [-n ITERS] [-t SECS] [-s BYTES] "
                            "[-r REPS] [-b RCVBUF]\n", argv[0]);
            return 2;
        }
    }
    if (iters < 1) {
        iters = 1;
    }
    char list[256];
    snprintf(list, sizeof(list), "%s", wires);
    printf("# wire  round  lat_med_us  lat_mean_us  lost  stream_MBps  offered_MBps  loss_%%  "
           "burst_arrived/10000  (%zu B datagrams, %.1f s)\n", size, secs);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0) {
            die("socketpair");
        }
        fflush(stdout);
        pid_t pid = fork();
        bool initiator = pid != 0;
        int ctl = initiator ? sp[0] : sp[1];
        close(initiator ? sp[1] : sp[0]);
        wire_t *w = malloc(sizeof(*w));
        wire_open(w, name);
        unsigned char me[EBTL_OFI_NAME_MAX], peer[EBTL_OFI_NAME_MAX];
        uint64_t ml = wire_name(w, me);
        ctl_put(ctl, ml);
        if (write(ctl, me, ml) != (ssize_t) ml) {
            die("control write");
        }
        uint64_t pl = ctl_get(ctl);
        if (pl > sizeof(peer) || read(ctl, peer, pl) != (ssize_t) pl) {
            die("control read");
        }
        wire_insert(w, peer, pl);
        if (rcvbuf > 0) {
            int got = wire_rcvbuf(w, rcvbuf);
            if (initiator) {
                printf("# %s: SO_RCVBUF %d (asked %d)\n", name, got, rcvbuf);
            }
        }
        if (initiator && !w->raw) {
            const ebtl_ofi_attr_t *a = ebtl_ofi_attr(w->ep);
            printf("# %s: max_payload %zu inject_size %zu max_msg_size %zu source %d\n", name,
                   ebtl_ofi_max_payload(w->ep), a->inject_size, a->max_msg_size, a->source);
        }
        size_t sz = size;
        if (!w->raw && sz > ebtl_ofi_max_payload(w->ep)) {
            sz = ebtl_ofi_max_payload(w->ep);
        }
        for (unsigned r = 0; r < reps; r++) {
            double med = 0, mean = 0, mbs = 0, off = 0, loss = 0;
            unsigned lost = 0;
            pingpong(w, initiator, iters, ctl, &med, &mean, &lost);
            stream(w, initiator, sz, secs, ctl, &mbs, &off, &loss);
            unsigned arrived = 0, eagain = 0;
            burst(w, initiator, sz, 10000, ctl, &arrived, &eagain);
            if (initiator) {
                printf("%-7s %5u  %10.2f  %11.2f  %4u  %11.1f  %12.1f  %6.2f  %5u\n", name, r + 1,
                       med / 1000, mean / 1000, lost, mbs, off, loss, arrived);
                fflush(stdout);
            }
        }
        if (initiator && !w->raw) {
            const ebtl_ofi_stats_t *s = ebtl_ofi_stats(w->ep);
            printf("# %s sender: %llu sent, %llu injected, %llu -EAGAIN, %llu errors\n", name,
                   (unsigned long long) s->tx_datagrams, (unsigned long long) s->tx_inject,
                   (unsigned long long) s->tx_eagain, (unsigned long long) s->tx_errors);
        }
        wire_close(w);
        free(w);
        close(ctl);
        if (!initiator) {
            _exit(0);
        }
        waitpid(pid, NULL, 0);
    }
    return 0;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * xdpbench: AF_XDP (copy mode) against AF_PACKET rings between two network
 * namespaces joined by a veth pair (issue 19, "AF_XDP instead or beside
 * it"). Self-contained: no libbpf/libxdp; the XDP program is hand-assembled
 * BPF, loaded with bpf(BPF_PROG_LOAD) and attached with bpf(BPF_LINK_CREATE)
 * (the link dies with the process that holds it, so nothing stays attached).
 * Not part of the build:
 *
 *   cc -O2 -Wall -o /tmp/xdpbench contrib/experiments/xdpbench.c
 *   /tmp/xdpbench [REPS [SECS [MTU [CONFIG...]]]]          (root)
 *
 * It makes netns xdpA and xdpB, veth xdpva (in A) <-> xdpvb (in B), and
 * removes them on every exit (normal, error, SIGINT/TERM/HUP).
 * CONFIG (default: all):  TX:RX:ATTACH  streaming A -> B of MTU-byte frames
 *   TX     xsk  AF_XDP TX ring, copy mode, 64 descriptors then one sendto()
 *               kick (the kernel builds at most 32 skbs per kick by default)
 *          xskb as xsk with XDP_MAX_TX_SKB_BUDGET = 512 (6.17+) and 512
 *               descriptors per kick
 *          ring AF_PACKET TX ring TPACKET_V2 as in ethbench (64 frames/send)
 *          liveN / liveNk  BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES:
 *               an XDP program bpf_redirect()s the frame to xdpva, which
 *               passes it to xdpvb as an xdp_frame (no skb); N repeats of
 *               one frame per syscall (live1: a distinct frame per call)
 *   RX     busy AF_XDP RX ring polled busily
 *          poll AF_XDP RX ring, poll() when empty
 *   ATTACH drv  XDP_FLAGS_DRV_MODE (veth native XDP)   skb  generic XDP
 * and lat:ATTACH  ping-pong of 60-byte frames, AF_XDP TX+RX on both sides,
 *   both polling busily, 5000 round trips.
 * The XDP program redirects ethertype 0x88B5 to an XSKMAP (key =
 * rx_queue_index, fallback XDP_PASS) and passes everything else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define ETYPE 0x88B5
#define HDR 56
#define BATCH 64
#define NFRAMES 8192
#define FSIZE 2048
#define NSA "xdpA"
#define NSB "xdpB"
#define IFA "xdpva"
#define IFB "xdpvb"

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

/* results and handshakes between the parent and its two children */
struct shared {
    volatile int ready, fail;
    char attach[64];
    char line[2][512];
    char err[2][256];
    unsigned char mac[2][6];
};
static struct shared *sh;
static int role; /* 0 = sender side (A), 1 = receiver side (B) */

static void fail(const char *step)
{
    int e = errno;
    snprintf(sh->err[role], sizeof(sh->err[role]), "%s: errno %d (%s)", step, e, strerror(e));
    fprintf(stderr, "[%s] %s\n", role ? "B" : "A", sh->err[role]);
    sh->fail = 1;
    _exit(1);
}

/* ------------------------------------------------------------- netns */
static pid_t kids[2];
static int made;

static void sh_run(const char *cmd)
{
    if (system(cmd) != 0) fprintf(stderr, "failed: %s\n", cmd);
}

static void teardown(void)
{
    if (!made) return;
    for (int i = 0; i < 2; i++)
        if (kids[i] > 0) kill(kids[i], SIGKILL), waitpid(kids[i], NULL, 0), kids[i] = 0;
    int r = system("ip netns del " NSA " 2>/dev/null; ip netns del " NSB
                   " 2>/dev/null; ip link del " IFA " 2>/dev/null; true");
    (void)r;
    made = 0;
}

static void on_signal(int sig)
{
    teardown();
    _exit(128 + sig);
}

static void setup(int mtu)
{
    char cmd[512];
    made = 1;
    teardown();
    made = 1;
    sh_run("ip netns add " NSA " && ip netns add " NSB);
    sh_run("ip link add " IFA " type veth peer name " IFB);
    sh_run("ip link set " IFA " netns " NSA " && ip link set " IFB " netns " NSB);
    snprintf(cmd, sizeof(cmd),
             "ip -n " NSA " link set " IFA " mtu %d up && ip -n " NSB " link set " IFB
             " mtu %d up && ip -n " NSA " link set lo up && ip -n " NSB " link set lo up",
             mtu, mtu);
    sh_run(cmd);
}

static void enter_ns(const char *name)
{
    char p[64];
    snprintf(p, sizeof(p), "/run/netns/%s", name);
    int fd = open(p, O_RDONLY);
    if (fd < 0) fail("open netns");
    if (setns(fd, CLONE_NEWNET) < 0) fail("setns");
    close(fd);
}

static int ifindex_of(const char *ifn)
{
    int i = (int)if_nametoindex(ifn);
    if (i == 0) fail("if_nametoindex");
    return i;
}

static void get_mac(const char *ifn, unsigned char mac[6])
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifn);
    if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) fail("SIOCGIFHWADDR");
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    close(fd);
}

/* ------------------------------------------------------------- bpf */
static long sys_bpf(int cmd, union bpf_attr *a)
{
    return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

static int xdp_attach(const char *ifn, int xsk_fd, int skb_mode)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_type = BPF_MAP_TYPE_XSKMAP;
    a.key_size = 4;
    a.value_size = 4;
    a.max_entries = 4;
    int map = (int)sys_bpf(BPF_MAP_CREATE, &a);
    if (map < 0) fail("BPF_MAP_CREATE(XSKMAP)");

    struct bpf_insn prog[] = {
        INSN(BPF_LDX | BPF_W | BPF_MEM, 2, 1, 0, 0),         /* r2 = ctx->data */
        INSN(BPF_LDX | BPF_W | BPF_MEM, 3, 1, 4, 0),         /* r3 = ctx->data_end */
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0),       /* r4 = r2 */
        INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 14),      /* r4 += 14 */
        INSN(BPF_JMP | BPF_JGT | BPF_X, 4, 3, 8, 0),         /* if r4 > r3 goto pass */
        INSN(BPF_LDX | BPF_H | BPF_MEM, 4, 2, 12, 0),        /* r4 = ethertype (BE) */
        INSN(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 6, 0xB588),    /* != htons(0x88B5) -> pass */
        INSN(BPF_LDX | BPF_W | BPF_MEM, 2, 1, 16, 0),        /* r2 = ctx->rx_queue_index */
        INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map),
        INSN(0, 0, 0, 0, 0),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS), /* fallback action */
        INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map),
        INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS), /* pass: */
        INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };
    static char log[65536];
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_XDP;
    a.expected_attach_type = BPF_XDP;
    a.insns = (uintptr_t)prog;
    a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
    a.license = (uintptr_t) "Dual BSD/GPL";
    a.log_buf = (uintptr_t)log;
    a.log_size = sizeof(log);
    a.log_level = 1;
    int pfd = (int)sys_bpf(BPF_PROG_LOAD, &a);
    if (pfd < 0) {
        fprintf(stderr, "verifier log:\n%s\n", log);
        fail("BPF_PROG_LOAD(XDP)");
    }
    /* the socket must be bound before it can enter the map */
    unsigned key = 0;
    int val = xsk_fd;
    memset(&a, 0, sizeof(a));
    a.map_fd = map;
    a.key = (uintptr_t)&key;
    a.value = (uintptr_t)&val;
    if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0) fail("BPF_MAP_UPDATE_ELEM(xskmap[0]=xsk)");
    memset(&a, 0, sizeof(a));
    a.link_create.prog_fd = pfd;
    a.link_create.target_ifindex = ifindex_of(ifn);
    a.link_create.attach_type = BPF_XDP;
    a.link_create.flags = skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
    int link = (int)sys_bpf(BPF_LINK_CREATE, &a);
    if (link < 0) fail(skb_mode ? "BPF_LINK_CREATE(XDP, SKB_MODE)" : "BPF_LINK_CREATE(XDP, DRV_MODE)");
    return link;
}

/* ------------------------------------------------------------- AF_XDP */
struct ring {
    uint32_t *prod, *cons, *flags;
    void *desc;
    uint32_t mask, size;
    uint32_t cached; /* our own index (prod for producer rings, cons for consumer rings) */
};

struct xsk {
    int fd;
    unsigned char *umem;
    struct ring fill, comp, rx, tx;
    uint64_t freel[NFRAMES];
    unsigned nfree;
};

static void map_ring(int fd, struct ring *r, struct xdp_ring_offset *o, uint32_t n, size_t dsz,
                     off_t pgoff, const char *what)
{
    size_t len = o->desc + n * dsz;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
    if (m == MAP_FAILED) fail(what);
    r->prod = (void *)(m + o->producer);
    r->cons = (void *)(m + o->consumer);
    r->flags = (void *)(m + o->flags);
    r->desc = m + o->desc;
    r->mask = n - 1;
    r->size = n;
    r->cached = 0;
}

static void xsk_open(struct xsk *x, const char *ifn, int want_rx, int want_tx)
{
    x->fd = socket(AF_XDP, SOCK_RAW, 0);
    if (x->fd < 0) fail("socket(AF_XDP)");
    size_t ulen = (size_t)NFRAMES * FSIZE;
    x->umem = mmap(NULL, ulen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (x->umem == MAP_FAILED) fail("mmap umem");
    struct xdp_umem_reg ur;
    memset(&ur, 0, sizeof(ur));
    ur.addr = (uintptr_t)x->umem;
    ur.len = ulen;
    ur.chunk_size = FSIZE;
    ur.headroom = 0;
    if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &ur, sizeof(ur)) < 0) fail("XDP_UMEM_REG");
    int n = NFRAMES;
    if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) < 0) fail("XDP_UMEM_FILL_RING");
    if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) < 0)
        fail("XDP_UMEM_COMPLETION_RING");
    if (want_rx && setsockopt(x->fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) < 0) fail("XDP_RX_RING");
    if (want_tx && setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n)) < 0) fail("XDP_TX_RING");
    int big = 64 << 20;
    setsockopt(x->fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
    struct xdp_mmap_offsets off;
    socklen_t ol = sizeof(off);
    if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &ol) < 0) fail("XDP_MMAP_OFFSETS");
    map_ring(x->fd, &x->fill, &off.fr, NFRAMES, sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING, "mmap fill");
    map_ring(x->fd, &x->comp, &off.cr, NFRAMES, sizeof(uint64_t), XDP_UMEM_PGOFF_COMPLETION_RING,
             "mmap comp");
    if (want_rx) map_ring(x->fd, &x->rx, &off.rx, NFRAMES, sizeof(struct xdp_desc), XDP_PGOFF_RX_RING, "mmap rx");
    if (want_tx) map_ring(x->fd, &x->tx, &off.tx, NFRAMES, sizeof(struct xdp_desc), XDP_PGOFF_TX_RING, "mmap tx");
    struct sockaddr_xdp sx;
    memset(&sx, 0, sizeof(sx));
    sx.sxdp_family = AF_XDP;
    sx.sxdp_ifindex = (unsigned)ifindex_of(ifn);
    sx.sxdp_queue_id = 0;
    sx.sxdp_flags = XDP_COPY;
    /* the previous run's socket leaves the queue's pool in place until a
     * deferred release runs: EBUSY for a while after it closed */
    double tb = now();
    while (bind(x->fd, (struct sockaddr *)&sx, sizeof(sx)) < 0)
        if (errno != EBUSY || now() - tb > 5) fail("bind(AF_XDP, XDP_COPY, queue 0)");
        else usleep(10000);
    if (now() - tb > 0.01) fprintf(stderr, "[%s] bind: EBUSY for %.2f s\n", role ? "B" : "A", now() - tb);
    /* frames: the first half feeds the fill ring (RX), the second half is TX's
     * free list (when both are used); a lone RX or TX socket gets them all */
    unsigned lo = 0, hi = NFRAMES;
    if (want_rx && want_tx) hi = NFRAMES / 2;
    if (want_rx) {
        uint64_t *d = x->fill.desc;
        for (unsigned i = lo; i < hi; i++) d[x->fill.cached++ & x->fill.mask] = (uint64_t)i * FSIZE;
        __atomic_store_n(x->fill.prod, x->fill.cached, __ATOMIC_RELEASE);
    }
    x->nfree = 0;
    if (want_tx)
        for (unsigned i = want_rx ? hi : 0; i < NFRAMES; i++) x->freel[x->nfree++] = (uint64_t)i * FSIZE;
}

/* drain the completion ring into the TX free list; returns frames completed */
static unsigned xsk_complete(struct xsk *x)
{
    uint32_t p = __atomic_load_n(x->comp.prod, __ATOMIC_ACQUIRE), c = x->comp.cached, n = p - c;
    uint64_t *d = x->comp.desc;
    for (uint32_t i = 0; i < n; i++) x->freel[x->nfree++] = d[(c + i) & x->comp.mask];
    x->comp.cached = p;
    __atomic_store_n(x->comp.cons, p, __ATOMIC_RELEASE);
    return n;
}

static int xsk_kick(struct xsk *x)
{
    if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) return 0;
    return errno == EAGAIN || errno == EBUSY || errno == ENOBUFS ? 0 : -1;
}

static void xstats(int fd, char *out, size_t n)
{
    struct xdp_statistics st;
    socklen_t l = sizeof(st);
    memset(&st, 0, sizeof(st));
    if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &l) < 0) {
        snprintf(out, n, "xstats=errno%d", errno);
        return;
    }
    snprintf(out, n, "rx_dropped=%llu rx_invalid=%llu tx_invalid=%llu rx_ring_full=%llu fill_empty=%llu tx_ring_empty=%llu",
             (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_invalid_descs,
             (unsigned long long)st.tx_invalid_descs, (unsigned long long)st.rx_ring_full,
             (unsigned long long)st.rx_fill_ring_empty_descs, (unsigned long long)st.tx_ring_empty_descs);
}

static void fill_frame(unsigned char *d, const unsigned char eh[14], unsigned long seq, unsigned pay,
                       const unsigned char *payload)
{
    memcpy(d, eh, 14);
    memcpy(d + 14, &seq, 8);
    memset(d + 22, 0, HDR - 8);
    memcpy(d + 14 + HDR, payload, pay - HDR);
}

/* ------------------------------------------------------------- sender (A) */
static unsigned pow2(unsigned x)
{
    unsigned p = 1;
    while (p < x) p <<= 1;
    return p;
}

static void tx_main(const char *txm, unsigned pay, double secs)
{
    static unsigned char payload[9216];
    memset(payload, 0xab, sizeof(payload));
    enter_ns(NSA);
    unsigned char eh[14];
    memcpy(eh, sh->mac[1], 6);
    get_mac(IFA, eh + 6);
    eh[12] = ETYPE >> 8, eh[13] = ETYPE & 0xff;
    unsigned long frames = 0, errs = 0, calls = 0;
    int lasterr = 0;
    double t0, c0;
    char xs[256] = "";
    if (strcmp(txm, "xsk") == 0 || strcmp(txm, "xskb") == 0) {
        static struct xsk x;
        xsk_open(&x, IFA, 0, 1);
        if (txm[3] == 'b') { /* XDP_MAX_TX_SKB_BUDGET (6.17+): frames per sendto() in copy mode */
            int budget = 512;
            if (setsockopt(x.fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget)) < 0)
                fail("setsockopt(XDP_MAX_TX_SKB_BUDGET)");
        }
        unsigned long queued = 0;
        t0 = now(), c0 = cpu();
        while (now() - t0 < secs) {
            frames += xsk_complete(&x);
            uint32_t tc = __atomic_load_n(x.tx.cons, __ATOMIC_ACQUIRE);
            unsigned room = x.tx.size - (x.tx.cached - tc), q = 0;
            struct xdp_desc *d = x.tx.desc;
            for (; q < (txm[3] == 'b' ? 512u : BATCH) && q < room && x.nfree > 0; q++) {
                uint64_t a = x.freel[--x.nfree];
                fill_frame(x.umem + a, eh, queued + q, pay, payload);
                d[x.tx.cached++ & x.tx.mask] = (struct xdp_desc){.addr = a, .len = 14 + pay};
            }
            __atomic_store_n(x.tx.prod, x.tx.cached, __ATOMIC_RELEASE);
            queued += q;
            if (xsk_kick(&x) < 0) errs++;
            calls++;
        }
        double tend = now() + 1;
        while (frames < queued && now() < tend) {
            xsk_kick(&x);
            frames += xsk_complete(&x);
        }
        xstats(x.fd, xs, sizeof(xs));
    } else if (strncmp(txm, "live", 4) == 0) {
        /* XDP live frames: BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES runs
         * a program that bpf_redirect()s each frame to xdpva, which hands it by
         * ndo_xdp_xmit to xdpvb as an xdp_frame (no skb at all on the wire).
         * live1: one frame per syscall (a distinct frame each call);
         * live64: the same frame repeated 64 times per syscall (upper bound) */
        char *e;
        unsigned rep = (unsigned)strtoul(txm + 4, &e, 10);
        if (*e == 'k') rep *= 1024;
        if (rep == 0) rep = 1;
        int ifi = ifindex_of(IFA);
        struct bpf_insn prog[] = {
            INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, ifi),
            INSN(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0),
            INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect),
            INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        };
        union bpf_attr a;
        memset(&a, 0, sizeof(a));
        a.prog_type = BPF_PROG_TYPE_XDP;
        a.expected_attach_type = BPF_XDP;
        a.insns = (uintptr_t)prog;
        a.insn_cnt = 4;
        a.license = (uintptr_t) "Dual BSD/GPL";
        int pfd = (int)sys_bpf(BPF_PROG_LOAD, &a);
        if (pfd < 0) fail("BPF_PROG_LOAD(redirect)");
        static unsigned char frame[9216];
        struct xdp_md ctx;
        memset(&ctx, 0, sizeof(ctx));
        ctx.ingress_ifindex = (unsigned)ifi;
        ctx.data_end = 14 + pay; /* test_run insists data_end == data_size_in */
        t0 = now(), c0 = cpu();
        while (now() - t0 < secs) {
            fill_frame(frame, eh, frames, pay, payload);
            memset(&a, 0, sizeof(a));
            a.test.prog_fd = (unsigned)pfd;
            a.test.data_in = (uintptr_t)frame;
            a.test.data_size_in = 14 + pay;
            a.test.ctx_in = (uintptr_t)&ctx;
            a.test.ctx_size_in = sizeof(ctx);
            a.test.repeat = rep;
            a.test.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
            a.test.batch_size = rep < 64 ? rep : 64;
            if (sys_bpf(BPF_PROG_TEST_RUN, &a) < 0) {
                if (errs++ == 0) lasterr = errno;
                if (errs > 1000 && frames == 0) fail("BPF_PROG_TEST_RUN(XDP live frames)");
                continue;
            }
            calls++;
            frames += rep;
        }
    } else { /* AF_PACKET TX ring TPACKET_V2, as ethbench's ring/ring2 */
        int fd = socket(AF_PACKET, SOCK_RAW, htons(ETYPE));
        if (fd < 0) fail("socket(AF_PACKET)");
        int one = 1, big = 32 << 20, v = TPACKET_V2;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
        setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
        setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
        if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) fail("PACKET_VERSION");
        unsigned fsz = pow2(TPACKET2_HDRLEN + 14 + pay), bsz = fsz > 65536 ? fsz : 65536, ring = 4 << 20;
        struct tpacket_req req = {.tp_block_size = bsz, .tp_block_nr = ring / bsz,
                                  .tp_frame_size = fsz, .tp_frame_nr = ring / fsz};
        if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0) fail("PACKET_TX_RING");
        unsigned char *base = mmap(NULL, ring, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) fail("mmap tx ring");
        struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETYPE),
                                  .sll_ifindex = ifindex_of(IFA)};
        if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) fail("bind(AF_PACKET)");
        unsigned nfr = req.tp_frame_nr, idx = 0;
        t0 = now(), c0 = cpu();
        while (now() - t0 < secs) {
            unsigned q = 0;
            for (; q < BATCH; q++) {
                struct tpacket2_hdr *h = (void *)(base + (size_t)idx * fsz);
                if (h->tp_status != TP_STATUS_AVAILABLE) break;
                unsigned char *d = (unsigned char *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
                fill_frame(d, eh, frames + q, pay, payload);
                h->tp_len = 14 + pay;
                __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
                idx = (idx + 1) % nfr;
            }
            if (q == 0) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 10);
            }
            if (send(fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN) errs++, lasterr = errno;
            calls++;
            frames += q;
        }
        send(fd, NULL, 0, 0);
    }
    double dt = now() - t0, dc = cpu() - c0;
    snprintf(sh->line[0], sizeof(sh->line[0]), "tx=%s frames=%lu secs=%.3f cpu=%.1f errs=%lu(errno %d) calls=%lu %s",
             txm, frames, dt, 100 * dc / dt, errs, lasterr, calls, xs);
    _exit(0);
}

/* ------------------------------------------------------------- receiver (B) */
static void rx_main(const char *rxm, int skb_mode, unsigned pay, double secs)
{
    enter_ns(NSB);
    static struct xsk x;
    xsk_open(&x, IFB, 1, 0);
    int link = xdp_attach(IFB, x.fd, skb_mode);
    (void)link;
    int busy = strcmp(rxm, "busy") == 0;
    unsigned long rframes = 0, rbytes = 0, rbad = 0;
    double start = now(), tfirst = 0, tlast = 0, cfirst = 0;
    sh->ready = 1;
    while (!((rframes && now() - tlast > 1.0) || now() - start > secs + 8)) {
        uint32_t p = __atomic_load_n(x.rx.prod, __ATOMIC_ACQUIRE), c = x.rx.cached, n = p - c;
        if (n == 0) {
            if (!busy) {
                struct pollfd pf = {.fd = x.fd, .events = POLLIN};
                poll(&pf, 1, 100);
            }
            continue;
        }
        if (rframes == 0) tfirst = now(), cfirst = cpu();
        struct xdp_desc *d = x.rx.desc;
        uint64_t *f = x.fill.desc;
        for (uint32_t i = 0; i < n; i++) {
            struct xdp_desc *e = &d[(c + i) & x.rx.mask];
            rframes++;
            rbytes += e->len - 14;
            if (e->len != 14 + pay) rbad++;
            f[x.fill.cached++ & x.fill.mask] = e->addr & ~(uint64_t)(FSIZE - 1);
        }
        x.rx.cached = p;
        __atomic_store_n(x.rx.cons, p, __ATOMIC_RELEASE);
        __atomic_store_n(x.fill.prod, x.fill.cached, __ATOMIC_RELEASE);
        tlast = now();
    }
    double dt = tlast - tfirst, dc = cpu() - cfirst;
    if (dt <= 0) dt = 1e-9;
    char xs[256];
    xstats(x.fd, xs, sizeof(xs));
    snprintf(sh->line[1], sizeof(sh->line[1]), "rx=%s frames=%lu bytes=%lu secs=%.3f cpu=%.1f badlen=%lu %s",
             rxm, rframes, rbytes, dt, 100 * dc / dt, rbad, xs);
    _exit(0);
}

/* ------------------------------------------------------------- ping-pong */
static void lat_main(int ping, int skb_mode, int n)
{
    enter_ns(ping ? NSA : NSB);
    const char *ifn = ping ? IFA : IFB;
    static struct xsk x;
    xsk_open(&x, ifn, 1, 1);
    xdp_attach(ifn, x.fd, skb_mode);
    unsigned char eh[14];
    memcpy(eh, sh->mac[ping ? 1 : 0], 6);
    get_mac(ifn, eh + 6);
    eh[12] = ETYPE >> 8, eh[13] = ETYPE & 0xff;
    double *rtt = calloc((size_t)n, sizeof(double));
    __atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
    while (sh->ready < 2) usleep(1000);
    usleep(100000);
    struct xdp_desc *txd = x.tx.desc, *rxd = x.rx.desc;
    uint64_t *f = x.fill.desc;
    for (int i = 0; i < n; i++) {
        double t = now();
        for (int step = 0; step < 2; step++) {
            if (step == (ping ? 0 : 1)) { /* send one 60-byte frame */
                xsk_complete(&x);
                uint64_t a = x.freel[--x.nfree];
                memcpy(x.umem + a, eh, 14);
                memset(x.umem + a + 14, 0, 46);
                memcpy(x.umem + a + 14, &i, sizeof(i));
                txd[x.tx.cached++ & x.tx.mask] = (struct xdp_desc){.addr = a, .len = 60};
                __atomic_store_n(x.tx.prod, x.tx.cached, __ATOMIC_RELEASE);
                if (xsk_kick(&x) < 0) fail("sendto(AF_XDP kick)");
            } else { /* wait for one frame, busily */
                uint32_t p;
                while ((p = __atomic_load_n(x.rx.prod, __ATOMIC_ACQUIRE)) == x.rx.cached)
                    if (now() - t > 2) {
                        errno = ETIMEDOUT;
                        fail("ping-pong: no frame in 2 s");
                    }
                struct xdp_desc *e = &rxd[x.rx.cached & x.rx.mask];
                f[x.fill.cached++ & x.fill.mask] = e->addr & ~(uint64_t)(FSIZE - 1);
                x.rx.cached++;
                __atomic_store_n(x.rx.cons, x.rx.cached, __ATOMIC_RELEASE);
                __atomic_store_n(x.fill.prod, x.fill.cached, __ATOMIC_RELEASE);
                if (!ping) t = now(); /* pong: nothing to time */
            }
        }
        rtt[i] = now() - t;
    }
    if (ping) {
        int cmp(const void *a, const void *b) { double u = *(const double *)a, v = *(const double *)b; return u < v ? -1 : u > v; }
        qsort(rtt, (size_t)n, sizeof(double), cmp);
        snprintf(sh->line[0], sizeof(sh->line[0]), "lat n=%d rtt_us_median=%.1f p10=%.1f p90=%.1f", n,
                 rtt[n / 2] * 1e6, rtt[n / 10] * 1e6, rtt[n * 9 / 10] * 1e6);
    }
    _exit(0);
}

/* ------------------------------------------------------------- parent */
static void attach_mode(void)
{
    FILE *p = popen("ip -n " NSB " -d link show " IFB " 2>&1 | head -1 | grep -o ' xdp[a-z]* '", "r");
    sh->attach[0] = 0;
    if (p) {
        if (!fgets(sh->attach, sizeof(sh->attach), p)) snprintf(sh->attach, sizeof(sh->attach), "none");
        sh->attach[strcspn(sh->attach, "\n")] = 0;
        pclose(p);
    }
}

static pid_t spawn(int r, void (*fn)(void *), void *arg)
{
    pid_t p = fork();
    if (p < 0) {
        perror("fork");
        exit(1);
    }
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        role = r;
        fn(arg);
        _exit(0);
    }
    kids[r] = p;
    return p;
}

struct cfg { char tx[16], rx[8]; int skb; unsigned pay; double secs; };
static void rx_fn(void *a) { struct cfg *c = a; rx_main(c->rx, c->skb, c->pay, c->secs); }
static void tx_fn(void *a) { struct cfg *c = a; tx_main(c->tx, c->pay, c->secs); }
static void ping_fn(void *a) { struct cfg *c = a; lat_main(1, c->skb, 5000); }
static void pong_fn(void *a) { struct cfg *c = a; lat_main(0, c->skb, 5000); }

static int reap(void)
{
    int bad = 0;
    for (int i = 0; i < 2; i++)
        if (kids[i] > 0) {
            int st;
            waitpid(kids[i], &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad = 1;
            kids[i] = 0;
        }
    return bad;
}

static void busy_read(unsigned long long *b, unsigned long long *t)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long u, ni, sy, id, io, irq, sirq;
    *b = *t = 0;
    if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &u, &ni, &sy, &id, &io, &irq, &sirq) == 7) {
        *b = u + ni + sy + irq + sirq;
        *t = *b + id + io;
    }
    if (f) fclose(f);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3;
    double secs = argc > 2 ? atof(argv[2]) : 3;
    int mtu = argc > 3 ? atoi(argv[3]) : 1500;
    const char *defaults[] = {"xsk:busy:drv", "xsk:poll:drv", "xskb:busy:drv", "xskb:poll:drv", "ring:busy:drv",
                              "ring:poll:drv", "xsk:busy:skb", "xskb:poll:skb", "live1:poll:drv",
                              "live1024k:poll:drv", "lat:drv", "lat:skb"};
    const char **cfgs = argc > 4 ? (const char **)argv + 4 : defaults;
    int ncfg = argc > 4 ? argc - 4 : (int)(sizeof(defaults) / sizeof(defaults[0]));
    setvbuf(stdout, NULL, _IOLBF, 0);
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    atexit(teardown);
    setup(mtu);
    {
        char q[256];
        snprintf(q, sizeof(q), "echo \"queues: $(ip netns exec " NSB " ls /sys/class/net/" IFB "/queues | tr '\\n' ' ')\"");
        sh_run(q);
    }
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < ncfg; i++) {
            struct cfg c;
            memset(&c, 0, sizeof(c));
            c.pay = (unsigned)mtu;
            c.secs = secs;
            char tx[16] = "", rx[8] = "", at[8] = "";
            int lat = strncmp(cfgs[i], "lat:", 4) == 0;
            if (lat) sscanf(cfgs[i] + 4, "%7s", at);
            else if (sscanf(cfgs[i], "%15[^:]:%7[^:]:%7s", tx, rx, at) != 3) {
                fprintf(stderr, "bad config %s\n", cfgs[i]);
                continue;
            }
            snprintf(c.tx, sizeof(c.tx), "%s", tx);
            snprintf(c.rx, sizeof(c.rx), "%s", rx);
            c.skb = strcmp(at, "skb") == 0;
            /* MACs via netns exec (sysfs there is the namespace's) */
            memset((void *)sh, 0, sizeof(*sh));
            for (int s = 0; s < 2; s++) {
                char cmd[160];
                snprintf(cmd, sizeof(cmd), "ip netns exec %s cat /sys/class/net/%s/address", s ? NSB : NSA, s ? IFB : IFA);
                FILE *p = popen(cmd, "r");
                unsigned char *m = sh->mac[s];
                if (!p || fscanf(p, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
                    fprintf(stderr, "cannot read MAC of %s\n", s ? IFB : IFA);
                if (p) pclose(p);
            }
            unsigned long long b0, t0, b1, t1;
            int bad;
            if (lat) {
                spawn(1, pong_fn, &c);
                spawn(0, ping_fn, &c);
                double w = now();
                while (sh->ready < 2 && !sh->fail && now() - w < 10) usleep(1000);
                attach_mode();
                bad = reap();
                printf("rep=%d cfg=%s attach=\"%s\" | %s%s%s%s\n", r + 1, cfgs[i], sh->attach, sh->line[0],
                       bad ? " FAILED " : "", sh->err[0], sh->err[1]);
                continue;
            }
            spawn(1, rx_fn, &c);
            double w = now();
            while (!sh->ready && !sh->fail && now() - w < 10) usleep(1000);
            if (!sh->ready) {
                reap();
                printf("rep=%d cfg=%s FAILED rx setup: %s\n", r + 1, cfgs[i], sh->err[1]);
                continue;
            }
            attach_mode();
            busy_read(&b0, &t0);
            spawn(0, tx_fn, &c);
            waitpid(kids[0], NULL, 0);
            kids[0] = 0;
            busy_read(&b1, &t1);
            bad = reap();
            printf("rep=%d cfg=%s attach=\"%s\" sysbusy=%.0f | %s | %s%s%s%s\n", r + 1, cfgs[i], sh->attach,
                   t1 > t0 ? 200.0 * (double)(b1 - b0) / (double)(t1 - t0) : 0.0, sh->line[0], sh->line[1],
                   bad ? " FAILED " : "", sh->err[0], sh->err[1]);
        }
    teardown();
    return 0;
}

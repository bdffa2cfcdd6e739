/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Mode inet: the threaded usrsctp (usrsctp_init) over UDP encapsulation
 * on AF_INET/AF_INET6, the mode of multihoming and CMT. usrsctp owns the
 * UDP sockets and runs its own timer and receive threads; they never call
 * into the BTL (no output callback; a one-to-one upcall only counts).
 * Progress reads the SCTP sockets without blocking (the style's drain) and
 * sends happen on the caller's thread, exactly as in conn mode.
 *
 * Ports: usrsctp binds one UDP port for the whole process, and cannot say
 * when that bind failed (it logs and carries on without UDP). So we pick a
 * free port from the kernel, start usrsctp on it and check that one of our
 * own sockets now holds it; if another process took it in between, stop
 * usrsctp and try another. The SCTP port is bound to the same number: the
 * UDP port is unique among the ranks sharing an IP address, so (address,
 * SCTP port) names one rank (an SCTP port picked by usrsctp could repeat).
 */
#define _GNU_SOURCE   /* dladdr, RTLD_NODELETE */
#include "btl_sctp_mem.h"
#include "btl_sctp_mode.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <usrsctp.h>

/* Ports tried before giving up (each lost only to a racing process). */
#define PORT_TRIES 8
/* usrsctp sizes its UDP sockets at 128 KiB: too small for bulk data. */
#define UDP_BUF (8u << 20)
/* Links created by unknown peers' associations before we stop taking more. */
#define MAX_STRANGERS 1024
/* How long the last close retries usrsctp_finish (associations being freed). */
#define FINISH_WAIT_MS 3000
/* Bytes the path MTU we give usrsctp stays under the interface MTU: the IP
 * and UDP headers, and SCTP's common header (usrsctp adds it beyond
 * spp_pathmtu). */
#define V4_OVERHEAD (20 + 8 + 12)
#define V6_OVERHEAD (40 + 8 + 12)
/* usrsctp 0.9.5 hands a UDP packet to sendmsg as its mbuf chain and drops
 * it silently ("mbuf chain couldn't be copied completely", shown with
 * SCTP_INET_DEBUG set) beyond 32 mbufs. One-way bulk on loopback: path MTU
 * 56000 worked, 60000 lost the association; both directions at once
 * (test_sctp_inet both_start_at_once): 40000 lost the association, 4000
 * and 9000 lost a few packets, 1400 none. */
#define MAX_PMTU 1400

static int inet_stacks;        /* open inet stacks; usrsctp runs while > 0 */
static uint16_t udp_port;      /* usrsctp's UDP encapsulation port */

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000u, (long) (ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t now_ms(void)
{
    return ebtl_dgram_now_ns() / 1000000u;
}

/* ------------------------------------------------------ the UDP port */

/* A port the kernel considers free for family right now, or 0. */
static uint16_t free_udp_port(int family)
{
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
    if (fd < 0) {
        return 0;
    }
    ebtl_sockaddr_t a;
    unsigned char any[16] = {0};
    ebtl_sockaddr_set(&a, family, any, 0);
    socklen_t len = sizeof(a.u);
    uint16_t port = 0;
    if (bind(fd, &a.u.sa, a.len) == 0 && getsockname(fd, &a.u.sa, &len) == 0) {
        port = ntohs(family == AF_INET ? a.u.in4.sin_port : a.u.in6.sin6_port);
    }
    close(fd);
    return port;
}

static void raise_buffer(int fd, int force_opt, int opt)
{
    int v = (int) UDP_BUF;
    if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) != 0) {
        (void) setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));   /* capped by [rw]mem_max */
    }
}

/* Whether one of this process's sockets is a UDP socket of family bound
 * to port (usrsctp's: nothing else here binds that port); if so, give it
 * larger buffers. */
static bool process_holds_udp_port(int family, uint16_t port)
{
    DIR *d = opendir("/proc/self/fd");
    bool found = false;
    if (d == NULL) {
        return false;
    }
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        int type = 0;
        socklen_t tl = sizeof(type);
        ebtl_sockaddr_t a;
        socklen_t al = sizeof(a.u);
        if (*end != '\0' || fd < 0 || fd == dirfd(d)
            || getsockopt((int) fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM
            || getsockname((int) fd, &a.u.sa, &al) != 0 || a.u.sa.sa_family != family) {
            continue;
        }
        uint16_t p = ntohs(family == AF_INET ? a.u.in4.sin_port : a.u.in6.sin6_port);
        if (p == port) {
            raise_buffer((int) fd, SO_RCVBUFFORCE, SO_RCVBUF);
            raise_buffer((int) fd, SO_SNDBUFFORCE, SO_SNDBUF);
            found = true;
        }
    }
    closedir(d);
    return found;
}

/* usrsctp's own messages (from its threads too): only with
 * SCTP_INET_DEBUG set in the environment, on stderr. */
static void on_usrsctp_message(const char *fmt, ...)
{
    static int enabled = -1;
    if (enabled < 0) {
        enabled = getenv("SCTP_INET_DEBUG") != NULL;
    }
    if (enabled) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
}

/* usrsctp's threads can outlive our close: usrsctp_finish refuses while
 * associations are still being freed, and we stop asking after
 * FINISH_WAIT_MS. Open MPI dlcloses the component at finalize, which would
 * unmap libusrsctp (and our upcall) under them. Keep both loaded to exit. */
static void keep_code_loaded(void)
{
    const void *code[] = {(const void *) &keep_code_loaded, (const void *) &usrsctp_init};
    for (size_t i = 0; i < sizeof(code) / sizeof(code[0]); i++) {
        Dl_info di;
        if (dladdr(code[i], &di) != 0 && di.dli_fname != NULL) {
            (void) dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        }
    }
}

/* Start usrsctp on a UDP port it really holds for every family we use. */
static int start_usrsctp(bool need4, bool need6, bool cmt, char *err, size_t errlen)
{
    uint16_t port = 0;
    for (int i = 0; i < PORT_TRIES; i++) {
        port = free_udp_port(need4 ? AF_INET : AF_INET6);
        if (port == 0) {
            continue;
        }
        usrsctp_init(port, NULL, on_usrsctp_message);
        if ((!need4 || process_holds_udp_port(AF_INET, port))
            && (!need6 || process_holds_udp_port(AF_INET6, port))) {
            udp_port = port;
            keep_code_loaded();
            bsctp_core_sysctls();
            /* Copy chunks of up to ~100 KB into the packet's clusters
             * instead of chaining their mbufs: fewer mbufs per packet. */
            usrsctp_sysctl_set_sctp_mbuf_threshold_count(512);
            /* Concurrent multipath transfer: every association of the
             * process sends new data by all of a peer's addresses. */
            if (cmt) {
                usrsctp_sysctl_set_sctp_cmt_on_off(1);
            }
            return 0;
        }
        /* Another process took the port between our probe and usrsctp's
         * bind: usrsctp runs without it. No socket yet, so it stops. */
        usrsctp_finish();
    }
    snprintf(err, errlen, "usrsctp could not bind a UDP encapsulation port (%d tries, last %u); "
             "are ephemeral UDP ports exhausted?", PORT_TRIES, port);
    return -1;
}

static uint16_t inet_udp_port(const bsctp_stack_t *st, size_t i)
{
    (void) st;
    (void) i;
    return udp_port;   /* one for the process, on every address */
}

/* ------------------------------------------------------------ links */

/* The peer's address as bsctp_link_t keeps it: IPv4-mapped IPv6 as IPv4. */
static bool parse_peer(const struct sockaddr *sa, socklen_t len, ebtl_sockaddr_t *ip,
                       uint16_t *sctp_port)
{
    if (sa->sa_family == AF_INET && len >= (socklen_t) sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof(in));
        ebtl_sockaddr_set(ip, AF_INET, (const unsigned char *) &in.sin_addr, 0);
        *sctp_port = ntohs(in.sin_port);
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t) sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof(in6));
        const unsigned char *b = in6.sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(b, mapped, sizeof(mapped)) == 0) {
            ebtl_sockaddr_set(ip, AF_INET, b + 12, 0);
        } else {
            ebtl_sockaddr_set(ip, AF_INET6, b, 0);
        }
        *sctp_port = ntohs(in6.sin6_port);
        return true;
    }
    return false;
}

static bool same_host(const ebtl_sockaddr_t *a, const ebtl_sockaddr_t *b)
{
    if (a->u.sa.sa_family != b->u.sa.sa_family) {
        return false;
    }
    return a->u.sa.sa_family == AF_INET
               ? a->u.in4.sin_addr.s_addr == b->u.in4.sin_addr.s_addr
               : memcmp(&a->u.in6.sin6_addr, &b->u.in6.sin6_addr, 16) == 0;
}

static int inet_link_of_sockaddr(bsctp_stack_t *st, const struct sockaddr *sa, socklen_t len,
                               bool create)
{
    ebtl_sockaddr_t ip;
    uint16_t port;
    if (!parse_peer(sa, len, &ip, &port)) {
        return -1;
    }
    uint32_t c = st->last_rx_link;
    if (c < st->num_links && st->links[c].sctp_port == port && same_host(&st->links[c].udp, &ip)) {
        return (int) c;
    }
    /* Linear: fine for the peers of one job; a hash when it shows. */
    for (uint32_t i = 0; i < st->num_links; i++) {
        if (st->links[i].sctp_port == port && same_host(&st->links[i].udp, &ip)) {
            st->last_rx_link = i;
            return (int) i;
        }
    }
    if (!create || st->closing || st->strangers >= MAX_STRANGERS) {
        st->stats.rx_unknown_src++;
        return -1;
    }
    /* A peer we have not added made an association: a stranger until its
     * identification. Our ranks' UDP and SCTP ports are equal. */
    ebtl_sockaddr_t udp;
    ebtl_sockaddr_set(&udp, ip.u.sa.sa_family,
                     ip.u.sa.sa_family == AF_INET ? (const unsigned char *) &ip.u.in4.sin_addr
                                                  : (const unsigned char *) &ip.u.in6.sin6_addr,
                     port);
    return bsctp_core_link(st, &udp, 0, port, true);
}

static void inet_peer_sockaddr(const bsctp_stack_t *st, uint32_t link,
                               struct sockaddr_storage *ss, socklen_t *len)
{
    const bsctp_link_t *l = &st->links[link];
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, &l->udp.u, l->udp.len);
    if (l->udp.u.sa.sa_family == AF_INET) {
        ((struct sockaddr_in *) ss)->sin_port = htons(l->sctp_port);
    } else {
        ((struct sockaddr_in6 *) ss)->sin6_port = htons(l->sctp_port);
    }
    *len = l->udp.len;
}

/* A new association takes the socket's remote encapsulation port
 * (SCTP_FUTURE_ASSOC) when a send or connect creates it: the peer's UDP
 * port, set just before. The passive side learns the port from the INIT. */
static int set_encaps_port(struct socket *so, const ebtl_sockaddr_t *udp)
{
    struct sctp_udpencaps enc;
    memset(&enc, 0, sizeof(enc));
    enc.sue_assoc_id = SCTP_FUTURE_ASSOC;
    enc.sue_port = udp->u.sa.sa_family == AF_INET ? udp->u.in4.sin_port : udp->u.in6.sin6_port;
    return usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, sizeof(enc));
}

static void inet_prepare_send(bsctp_stack_t *st, struct socket *so, uint32_t link)
{
    if (set_encaps_port(so, &st->links[link].udp) != 0) {
        st->stats.out_errors++;   /* the INIT goes out raw and is lost: counted */
    }
}


/* ---------------------------------------------------------- set-up */

static size_t inet_num_addrs(const bsctp_stack_t *st)
{
    return st->cfg.num_ifaces;
}

static unsigned inet_addr_mtu(const bsctp_stack_t *st, size_t i)
{
    const ebtl_if_t *ifa = &st->cfg.ifaces[i];
    return ifa->mtu != 0 ? ifa->mtu : ifa->loopback ? 65536 : 1500;
}

/* Our local addresses with SCTP port port, for usrsctp_bindx. */
static struct sockaddr *bind_addrs(const bsctp_stack_config_t *c, uint16_t port, size_t *size)
{
    size_t n = 0;
    for (size_t i = 0; i < c->num_ifaces; i++) {
        n += c->ifaces[i].family == AF_INET ? sizeof(struct sockaddr_in)
                                            : sizeof(struct sockaddr_in6);
    }
    uint8_t *buf = calloc(1, n ? n : 1), *p = buf;
    if (buf == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < c->num_ifaces; i++) {
        ebtl_sockaddr_t a;
        ebtl_sockaddr_set(&a, c->ifaces[i].family, c->ifaces[i].addr, port);
        memcpy(p, &a.u, a.len);
        p += a.len;
    }
    *size = n;
    return (struct sockaddr *) buf;
}

/* Bind every selected address on port (0: usrsctp chooses); 0 or errno. */
static int bind_all(bsctp_stack_t *st, struct socket *so, uint16_t port)
{
    size_t size = 0;
    struct sockaddr *addrs = bind_addrs(&st->cfg, port, &size);
    if (addrs == NULL) {
        return ENOMEM;
    }
    int rc = usrsctp_bindx(so, addrs, (int) st->cfg.num_ifaces, SCTP_BINDX_ADD_ADDR) == 0
                 ? 0 : errno;
    free(addrs);
    return rc;
}

/* The SCTP port the socket is bound to, or 0. */
static uint16_t bound_port(bsctp_stack_t *st)
{
    struct sockaddr *addrs = NULL;
    uint16_t port = 0;
    if (usrsctp_getladdrs(st->so, 0, &addrs) > 0 && addrs != NULL) {
        port = ntohs(addrs[0].sa_family == AF_INET ? ((struct sockaddr_in *) addrs)->sin_port
                                                   : ((struct sockaddr_in6 *) addrs)->sin6_port);
    }
    if (addrs != NULL) {
        usrsctp_freeladdrs(addrs);
    }
    return port;
}

static void stop_usrsctp(void)
{
    uint64_t end = now_ms() + FINISH_WAIT_MS;
    while (usrsctp_finish() != 0 && now_ms() < end) {
        sleep_ms(10);   /* associations aborted at close are freed by the timer thread */
    }
    bsctp_mem_release();
    udp_port = 0;
}

/* A socket to connect to link on an association of its own: on an SCTP
 * port of its own (usrsctp_bindx refuses the listener's even with
 * SCTP_REUSE_PORT, and two associations on the same ports could not be
 * told apart), every selected address, the peer's encapsulation port.
 * The peer finds our link from that UDP port (inet_accepted_link). */
static struct socket *inet_socket_for_link(bsctp_stack_t *st, uint32_t link)
{
    char err[256];
    struct socket *so = bsctp_core_socket(st, st->inet_family, err, sizeof(err));
    if (so == NULL) {
        return NULL;
    }
    int rc = bind_all(st, so, 0);
    if (rc == 0 && set_encaps_port(so, &st->links[link].udp) == 0) {
        return so;
    }
    usrsctp_close(so);
    errno = rc ? rc : EIO;
    return NULL;
}

static int inet_accepted_link(bsctp_stack_t *st, struct socket *so, const struct sockaddr *from,
                              socklen_t len)
{
    /* Our ranks' UDP port is their listener's SCTP port: the peer's UDP
     * port, with its address, names its link whichever SCTP port its
     * socket connected from. */
    struct sctp_udpencaps enc;
    socklen_t elen = sizeof(enc);
    memset(&enc, 0, sizeof(enc));
    if (len > (socklen_t) sizeof(enc.sue_address)) {
        return -1;
    }
    memcpy(&enc.sue_address, from, len);
    if (usrsctp_getsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, &elen) != 0
        || enc.sue_port == 0) {
        return -1;
    }
    struct sockaddr_storage peer;
    memcpy(&peer, from, len);
    if (from->sa_family == AF_INET) {
        ((struct sockaddr_in *) &peer)->sin_port = enc.sue_port;
    } else {
        ((struct sockaddr_in6 *) &peer)->sin6_port = enc.sue_port;
    }
    return inet_link_of_sockaddr(st, (struct sockaddr *) &peer, len, true);
}

static void inet_close(bsctp_stack_t *st);

static int inet_open(bsctp_stack_t *st, bool port_is_identity, char *err, size_t errlen)
{
    const bsctp_stack_config_t *c = &st->cfg;
    bool need4 = false, need6 = false;
    uint32_t pmtu = 65536;
    for (size_t i = 0; i < c->num_ifaces; i++) {
        bool v4 = c->ifaces[i].family == AF_INET;
        need4 |= v4;
        need6 |= !v4;
        unsigned mtu = inet_addr_mtu(st, i);
        unsigned over = v4 ? V4_OVERHEAD : V6_OVERHEAD;
        mtu = mtu > over + 1200 ? mtu - over : 1200;
        if (mtu < pmtu) {
            pmtu = mtu;
        }
    }
    bsctp_core_clamp_pmtu(st, pmtu > MAX_PMTU ? MAX_PMTU : pmtu);
    if (inet_stacks == 0 && start_usrsctp(need4, need6, st->cfg.cmt, err, errlen) != 0) {
        return -1;
    }
    inet_stacks++;
    /* usrsctp owns the packets here: btl_sctp_crc32c 1 leaves its own
     * (software) CRC32c on, 0 switches it off (then every rank needs 0). */
    if (!c->crc32c) {
        usrsctp_enable_crc32c_offload();
    }
    st->inet_family = need6 ? AF_INET6 : AF_INET;
    st->so = bsctp_core_socket(st, st->inet_family, err, errlen);
    if (st->so == NULL) {
        goto fail;
    }
    /* Every selected address, so that a peer can reach us on each
     * (multihoming); the SCTP port numbered as our UDP port, or any when a
     * second stack of this process has it (tests). */
    int rc = bind_all(st, st->so, udp_port);
    if (rc == EADDRINUSE && port_is_identity) {
        /* A peer tells our associations apart by our UDP port. */
        snprintf(err, errlen, "style one-to-one in mode inet needs SCTP port %u (the UDP "
                 "encapsulation port) on every address, and another stack of this process "
                 "holds it on one of them: select interfaces with distinct addresses",
                 udp_port);
        goto fail;
    }
    if (rc == EADDRINUSE) {
        rc = bind_all(st, st->so, 0);
    }
    st->cfg.sctp_port = rc == 0 ? bound_port(st) : 0;
    if (rc != 0 || st->cfg.sctp_port == 0) {
        snprintf(err, errlen, "usrsctp_bindx of %zu address(es): %s", c->num_ifaces,
                 strerror(rc ? rc : EADDRNOTAVAIL));
        goto fail;
    }
    return 0;
fail:
    inet_close(st);
    return -1;
}

/* ---------------------------------------------------------- progress */

static int inet_poll(bsctp_stack_t *st)
{
    (void) st;
    return 0;   /* usrsctp's threads read the UDP socket and run the timers */
}

static void inet_idle(bsctp_stack_t *st)
{
    (void) st;
    /* Nothing yet: what we wait for is work for usrsctp's threads, which
     * compete with busy-polling ranks for the cores (8-byte half round
     * trip on 2 cores, 2 ranks: ~300 us without, ~45 with). */
    sched_yield();
}

static void inet_pump(bsctp_stack_t *st)
{
    (void) st;
    sleep_ms(1);   /* the peers' threads answer even outside MPI */
}

static void inet_close(bsctp_stack_t *st)
{
    if (st->so != NULL) {
        /* What is left (a peer that died, or never answered) is aborted:
         * close must not wait for its retransmissions to give up. */
        struct linger lg = {1, 0};
        (void) usrsctp_setsockopt(st->so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        usrsctp_close(st->so);
        st->so = NULL;
    }
    if (st->inet_family != 0) {   /* this stack counted in inet_stacks */
        st->inet_family = 0;
        if (--inet_stacks == 0) {
            stop_usrsctp();
        }
    }
}

const bsctp_mode_t bsctp_mode_inet = {
    .name = "inet",
    .takes_pieces = false,
    .heartbeats = true,
    .threads = true,
    .room_from_input = false,
    .btl_sockets = false,
    .resends = true,
    .watch_stalls = true,
    .open = inet_open,
    .close = inet_close,
    .poll = inet_poll,
    .pump = inet_pump,
    .idle = inet_idle,
    .flush = NULL,   /* usrsctp's threads send each packet */
    .num_addrs = inet_num_addrs,
    .udp_port = inet_udp_port,
    .addr_mtu = inet_addr_mtu,
    .link_added = NULL,
    .peer_sockaddr = inet_peer_sockaddr,
    .prepare_send = inet_prepare_send,
    .link_of_sockaddr = inet_link_of_sockaddr,
    .socket_for_link = inet_socket_for_link,
    .accepted_link = inet_accepted_link,
};

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The UDP datagram layer: non-blocking sockets bound to one local address,
 * gathered sends (sendmsg, sendmmsg from a send queue, UDP GSO), batched
 * receives (recvmmsg) with UDP GRO super-datagrams split back into their
 * datagrams, and the fault layer on the receive path.
 *
 * Send side: a queue flushed with one sendmmsg per socket, whose runs of
 * equal-size datagrams to one destination go as UDP GSO messages.
 *
 * Receive side: a ring of rx_bufs buffers filled by one recvmmsg.
 * A call returns datagrams of one ring fill only (what an earlier call
 * returned stays valid until this call starts). When GRO splitting or the
 * fault layer yields more than the caller asked for, the rest is kept and
 * returned by the next calls before the socket is read again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#endif
#include "ebtl_dgram.h"

#include <linux/sock_diag.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

_Static_assert(sizeof(ebtl_sockaddr_t) <= sizeof(((ebtl_fault_pkt_t *) 0)->from),
               "ebtl_fault_pkt_t.from must hold an ebtl_sockaddr_t");

#define IPV4_MAX_PAYLOAD 65507u   /* 65535 - 20 - 8 */
#define IPV6_MAX_PAYLOAD 65487u   /* 65535 - 40 - 8, kept symmetric with IPv4 */
#define GRO_BUF_SIZE 65536u       /* a GRO super-datagram is at most 64 KiB */
#define GSO_MAX_SEGS ((unsigned) EBTL_DGRAM_GSO_MAX_SEGS)
#define RX_ALIGN 64u
/* Fault layer output of one batch: each arrival at most twice, plus the
 * few it holds (4) released. */
#define FAULT_OUT_MAX (2 * EBTL_DGRAM_RX_BATCH + 8)
/* Reads of a batch the fault layer dropped entirely before giving up. */
#define FAULT_REREADS 4

struct ebtl_dgram_rxring {
    unsigned char *mem;                        /* RX_BATCH * rx_buf_size, aligned */
    struct mmsghdr mm[EBTL_DGRAM_RX_BATCH];
    struct iovec iov[EBTL_DGRAM_RX_BATCH];
    ebtl_sockaddr_t from[EBTL_DGRAM_RX_BATCH];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctrl[EBTL_DGRAM_RX_BATCH];
    size_t seg[EBTL_DGRAM_RX_BATCH];            /* GRO segment size; 0: one datagram */
    bool skip[EBTL_DGRAM_RX_BATCH];             /* truncated: dropped */
    unsigned nmsg, cur;                        /* filled by the last recvmmsg; next to return */
    unsigned dirty;                            /* entries whose headers need resetting */
    size_t off;                                /* within mm[cur] (GRO split) */

    ebtl_fault_pkt_t fpkts[FAULT_OUT_MAX];
    ebtl_dgram_msg_t pend[FAULT_OUT_MAX];       /* to return before reading again */
    unsigned npend, pend_at;
};

static void ring_init(ebtl_dgram_sock_t *s);

/* ---- addresses ---- */

void ebtl_sockaddr_set(ebtl_sockaddr_t *sa, int family, const unsigned char *addr, uint16_t port)
{
    memset(sa, 0, sizeof(*sa));
    if (family == AF_INET) {
        sa->u.in4.sin_family = AF_INET;
        sa->u.in4.sin_port = htons(port);
        memcpy(&sa->u.in4.sin_addr, addr, 4);
        sa->len = sizeof(sa->u.in4);
    } else if (family == AF_INET6) {
        sa->u.in6.sin6_family = AF_INET6;
        sa->u.in6.sin6_port = htons(port);
        memcpy(&sa->u.in6.sin6_addr, addr, 16);
        sa->len = sizeof(sa->u.in6);
    } else {
        sa->u.sa.sa_family = AF_UNSPEC;
        sa->len = 0;
    }
}

bool ebtl_sockaddr_equal(const ebtl_sockaddr_t *a, const ebtl_sockaddr_t *b)
{
    if (a->u.sa.sa_family != b->u.sa.sa_family) {
        return false;
    }
    switch (a->u.sa.sa_family) {
    case AF_INET:
        return a->u.in4.sin_port == b->u.in4.sin_port &&
               a->u.in4.sin_addr.s_addr == b->u.in4.sin_addr.s_addr;
    case AF_INET6:
        return a->u.in6.sin6_port == b->u.in6.sin6_port &&
               a->u.in6.sin6_scope_id == b->u.in6.sin6_scope_id &&
               memcmp(&a->u.in6.sin6_addr, &b->u.in6.sin6_addr, 16) == 0;
    default:
        return a->len == b->len;
    }
}

const char *ebtl_sockaddr_format(const ebtl_sockaddr_t *sa, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN];
    if (len == 0) {
        return buf;
    }
    switch (sa->u.sa.sa_family) {
    case AF_INET:
        if (inet_ntop(AF_INET, &sa->u.in4.sin_addr, a, sizeof(a)) == NULL) {
            snprintf(a, sizeof(a), "?");
        }
        snprintf(buf, len, "%s:%u", a, ntohs(sa->u.in4.sin_port));
        break;
    case AF_INET6:
        if (inet_ntop(AF_INET6, &sa->u.in6.sin6_addr, a, sizeof(a)) == NULL) {
            snprintf(a, sizeof(a), "?");
        }
        if (sa->u.in6.sin6_scope_id != 0) {
            snprintf(buf, len, "[%s%%%u]:%u", a, (unsigned) sa->u.in6.sin6_scope_id,
                     ntohs(sa->u.in6.sin6_port));
        } else {
            snprintf(buf, len, "[%s]:%u", a, ntohs(sa->u.in6.sin6_port));
        }
        break;
    default:
        snprintf(buf, len, "(no address)");
        break;
    }
    return buf;
}

/* ---- open / close ---- */

static size_t set_buffer(int fd, int force_opt, int opt, size_t want)
{
    if (want > 0) {
        int v = want > (size_t) INT_MAX / 2 ? INT_MAX / 2 : (int) want;
        if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) != 0) {
            (void) setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v)); /* capped by rmem/wmem_max */
        }
    }
    int got = 0;
    socklen_t l = sizeof(got);
    if (getsockopt(fd, SOL_SOCKET, opt, &got, &l) != 0 || got < 0) {
        got = 0;
    }
    return (size_t) got;
}

uint64_t ebtl_dgram_kernel_drops(const ebtl_dgram_sock_t *s)
{
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t l = sizeof(mem);
    if (s->fd < 0 || getsockopt(s->fd, SOL_SOCKET, SO_MEMINFO, mem, &l) != 0
        || l <= SK_MEMINFO_DROPS * sizeof(mem[0])) {
        return 0;
    }
    return mem[SK_MEMINFO_DROPS];
}

static bool is_link_local6(const unsigned char *a)
{
    return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

static int open_fail(ebtl_dgram_sock_t *s, char *err, size_t errlen, const char *what,
                     const ebtl_if_t *ifa, uint16_t port, int e)
{
    char ifs[INET6_ADDRSTRLEN + IF_NAMESIZE + 16], ps[16] = "";
    ebtl_if_format(ifa, ifs, sizeof(ifs));
    if (port != 0) {
        snprintf(ps, sizeof(ps), " port %u", (unsigned) port);
    }
    if (err != NULL && errlen > 0) {
        snprintf(err, errlen, "UDP socket on %s%s: %s failed: %s", ifs, ps, what, strerror(e));
    }
    ebtl_dgram_close(s);
    return -1;
}

int ebtl_dgram_open(ebtl_dgram_sock_t *s, const ebtl_dgram_open_args_t *args, char *err,
                   size_t errlen)
{
    const ebtl_if_t *ifa = args->iface;
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    if (ifa == NULL) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "UDP socket: no local interface given");
        }
        return -1;
    }
    if (ifa->family != AF_INET && ifa->family != AF_INET6) {
        return open_fail(s, err, errlen, "choosing the address family", ifa,
                         args->port, EAFNOSUPPORT);
    }
    bool v4 = ifa->family == AF_INET;
    s->family = ifa->family;
    s->fd = socket(ifa->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
    if (s->fd < 0) {
        return open_fail(s, err, errlen, "socket", ifa, args->port, errno);
    }
    int one = 1;
    if (!v4 && setsockopt(s->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) {
        return open_fail(s, err, errlen, "IPV6_V6ONLY", ifa, args->port, errno);
    }

    ebtl_sockaddr_t a;
    ebtl_sockaddr_set(&a, ifa->family, ifa->addr, args->port);
    if (!v4 && is_link_local6(ifa->addr)) {
        a.u.in6.sin6_scope_id = ifa->ifindex;
    }
    if (bind(s->fd, &a.u.sa, a.len) != 0) {
        return open_fail(s, err, errlen, "bind", ifa, args->port, errno);
    }
    socklen_t sl = sizeof(s->local.u);
    if (getsockname(s->fd, &s->local.u.sa, &sl) != 0) {
        return open_fail(s, err, errlen, "getsockname", ifa, args->port, errno);
    }
    s->local.len = sl;

    /* No IP fragmentation: an oversize datagram fails with EMSGSIZE. */
    int pmtu = v4 ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;
    if (setsockopt(s->fd, v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MTU_DISCOVER : IPV6_MTU_DISCOVER,
                   &pmtu, sizeof(pmtu)) != 0) {
        return open_fail(s, err, errlen, "disabling fragmentation (MTU_DISCOVER)", ifa,
                         args->port, errno);
    }

    s->rcvbuf = set_buffer(s->fd, SO_RCVBUFFORCE, SO_RCVBUF, args->rcvbuf);
    s->sndbuf = set_buffer(s->fd, SO_SNDBUFFORCE, SO_SNDBUF, args->sndbuf);

    unsigned hdr = v4 ? 20 + 8 : 40 + 8;
    unsigned mtu = ifa->mtu != 0 ? ifa->mtu : ifa->loopback ? 65536 : 1500;
    if (mtu < (v4 ? 576u : 1280u)) {
        mtu = v4 ? 576u : 1280u; /* the least every IPv4 / IPv6 link carries */
    }
    s->mtu = mtu;
    size_t limit = v4 ? IPV4_MAX_PAYLOAD : IPV6_MAX_PAYLOAD;
    s->max_payload = mtu - hdr < limit ? mtu - hdr : limit;

    /* UDP GSO: the kernel knows the option (whether the device can do it
     * shows at the first send, which falls back on error). 0 = no default
     * segmentation, so the probe changes nothing. */
    int zero = 0;
    s->gso = setsockopt(s->fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) == 0;
    s->gro = args->want_gro && setsockopt(s->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;

    /* With GRO every buffer must hold a 64 KiB super-datagram (a shorter
     * one would truncate, losing all its datagrams); fewer of them keep
     * the ring small, and each still holds many datagrams. */
    size_t bufsz = s->max_payload;
    s->rx_bufs = EBTL_DGRAM_RX_BATCH;
    if (s->gro && bufsz < GRO_BUF_SIZE) {
        bufsz = GRO_BUF_SIZE;
        s->rx_bufs = EBTL_DGRAM_RX_GRO_BUFS;
    }
    bufsz = (bufsz + RX_ALIGN - 1) / RX_ALIGN * RX_ALIGN;
    s->rx_buf_size = bufsz;
    s->rx = calloc(1, sizeof(*s->rx));
    if (s->rx == NULL) {
        return open_fail(s, err, errlen, "allocating the receive ring", ifa, args->port, ENOMEM);
    }
    s->rx->mem = aligned_alloc(RX_ALIGN, s->rx_bufs * bufsz);
    if (s->rx->mem == NULL) {
        return open_fail(s, err, errlen, "allocating the receive buffers", ifa, args->port,
                         ENOMEM);
    }
    ring_init(s);
    return 0;
}

void ebtl_dgram_close(ebtl_dgram_sock_t *s)
{
    if (s->fd >= 0) {
        close(s->fd);
    }
    s->fd = -1;
    if (s->rx != NULL) {
        free(s->rx->mem);
        free(s->rx);
        s->rx = NULL;
    }
    ebtl_fault_destroy(s->fault);
    s->fault = NULL;
}

/* ---- send ---- */

int ebtl_dgram_send(ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to, const struct iovec *iov,
                   int iovcnt)
{
    if (iovcnt < 0) {
        return -EINVAL;
    }
    struct msghdr m = {
        .msg_name = (void *) &to->u,
        .msg_namelen = to->len,
        .msg_iov = (struct iovec *) iov,
        .msg_iovlen = (size_t) iovcnt,
    };
    ssize_t r = sendmsg(s->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0) {
        int e = errno;
        s->stats.tx_errors++;
        return -e;
    }
    s->stats.tx_datagrams++;
    s->stats.tx_bytes += (uint64_t) r;
    return 0;
}

/* Errors with which the kernel refuses a GSO send that it would take as
 * single datagrams: the device cannot checksum (EIO), the socket cannot
 * segment (EINVAL, e.g. SO_NO_CHECK), an old kernel. */
static bool gso_refused(int e)
{
    return e == EIO || e == EINVAL || e == ENOPROTOOPT || e == EOPNOTSUPP;
}

/* A UDP_SEGMENT cmsg of gso_size into ctrl (CMSG_SPACE(sizeof(uint16_t))
 * bytes); sets m's control fields. */
static void set_segment_cmsg(struct msghdr *m, void *ctrl, size_t ctrl_len, size_t gso_size)
{
    memset(ctrl, 0, ctrl_len);
    m->msg_control = ctrl;
    m->msg_controllen = ctrl_len;
    struct cmsghdr *c = CMSG_FIRSTHDR(m);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t g = (uint16_t) gso_size;
    memcpy(CMSG_DATA(c), &g, sizeof(g));
}

/* One sendmsg of len bytes cut by the kernel into seg_size datagrams. */
static ssize_t send_segmented(ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to, const void *buf,
                              size_t len, size_t seg_size)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(uint16_t))];
    } ctrl;
    struct iovec v = {.iov_base = (void *) buf, .iov_len = len};
    struct msghdr m = {
        .msg_name = (void *) &to->u,
        .msg_namelen = to->len,
        .msg_iov = &v,
        .msg_iovlen = 1,
    };
    set_segment_cmsg(&m, ctrl.buf, sizeof(ctrl.buf), seg_size);
    return sendmsg(s->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

int ebtl_dgram_send_gso(ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to, const void *buf,
                       size_t len, size_t seg_size)
{
    if (seg_size == 0) {
        return -EINVAL;
    }
    if (seg_size > s->max_payload && len > s->max_payload) {
        return -EMSGSIZE;
    }
    const unsigned char *p = buf;
    size_t limit = s->family == AF_INET ? IPV4_MAX_PAYLOAD : IPV6_MAX_PAYLOAD;
    size_t per_call = limit / seg_size;
    if (per_call > GSO_MAX_SEGS) {
        per_call = GSO_MAX_SEGS;
    }
    size_t off = 0;
    while (off < len) {
        size_t rest = len - off;
        if (s->gso && per_call >= 2 && rest > seg_size) {
            size_t chunk = per_call * seg_size < rest ? per_call * seg_size : rest;
            size_t nseg = (chunk + seg_size - 1) / seg_size;
            ssize_t r = send_segmented(s, to, p + off, chunk, seg_size);
            if (r >= 0) {
                s->stats.tx_datagrams += nseg;
                s->stats.tx_bytes += chunk;
                off += chunk;
                continue;
            }
            int e = errno;
            if (gso_refused(e)) {
                s->gso = false; /* the kernel or device cannot: one by one from now on */
                s->stats.tx_gso_refused++;
                continue;
            }
            s->stats.tx_errors += nseg;
            return -e;
        }
        size_t one = rest < seg_size ? rest : seg_size;
        struct iovec v = {.iov_base = (void *) (p + off), .iov_len = one};
        int rc = ebtl_dgram_send(s, to, &v, 1);
        if (rc != 0) {
            return rc;
        }
        off += one;
    }
    return 0;
}

/* ---- send queue ---- */

void ebtl_dgram_txq_init(ebtl_dgram_txq_t *q)
{
    q->count = 0;
    q->niov = 0;
    q->unreachable = NULL;
    q->unreachable_arg = NULL;
}

bool ebtl_dgram_way_closed(int e)
{
    return e == ENETUNREACH || e == EHOSTUNREACH || e == ENETDOWN || e == EPERM
           || e == EADDRNOTAVAIL;
}

int ebtl_dgram_txq_add(ebtl_dgram_txq_t *q, ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to,
                      const struct iovec *iov, int iovcnt)
{
    if (s == NULL || iovcnt < 1 || iovcnt > EBTL_DGRAM_MAX_IOV ||
        iov[0].iov_len > EBTL_DGRAM_HDR_COPY) {
        return -EINVAL;
    }
    if (q->count >= EBTL_DGRAM_TXQ_LEN) {
        (void) ebtl_dgram_txq_flush(q);
    }
    struct ebtl_dgram_txq_entry *e = &q->entry[q->count++];
    e->sock = s;
    e->to = *to;
    if (iov[0].iov_len > 0) {
        memcpy(e->hdr, iov[0].iov_base, iov[0].iov_len);
    }
    struct iovec *v = &q->iov[q->niov];
    v[0].iov_base = e->hdr;
    v[0].iov_len = iov[0].iov_len;
    size_t len = iov[0].iov_len;
    for (int i = 1; i < iovcnt; i++) {
        v[i] = iov[i];
        len += iov[i].iov_len;
    }
    e->len = len;
    e->iov_at = q->niov;
    e->iovcnt = iovcnt;
    q->niov += (unsigned) iovcnt;
    return 0;
}

/* The messages of one flush (on the stack): the entries in sending order
 * (ord, grouped by socket and destination), their pieces gathered in that
 * order, and the first position and datagram count of each message. */
typedef struct txq_msgs {
    unsigned ord[EBTL_DGRAM_TXQ_LEN];
    struct iovec iov[EBTL_DGRAM_TXQ_LEN * EBTL_DGRAM_MAX_IOV];
    struct mmsghdr mm[EBTL_DGRAM_TXQ_LEN];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(uint16_t))];
    } ctrl[EBTL_DGRAM_TXQ_LEN];
    unsigned first[EBTL_DGRAM_TXQ_LEN], segs[EBTL_DGRAM_TXQ_LEN];
} txq_msgs_t;

/* Order the queue's entries into m->ord by socket, then destination, each
 * group in queue order (a peer's datagrams keep their order on each way).
 * A caller spreading a stream over several ways (esp's paths) interleaves
 * them; grouped, each way's run goes as one GSO message instead of one
 * system call per datagram. */
static void group_entries(const ebtl_dgram_txq_t *q, txq_msgs_t *m, unsigned count)
{
    bool placed[EBTL_DGRAM_TXQ_LEN] = {false};
    unsigned n = 0;
    for (unsigned i = 0; i < count; i++) {
        if (placed[i]) {
            continue;
        }
        const struct ebtl_dgram_txq_entry *a = &q->entry[i];
        for (unsigned j = i; j < count; j++) {
            const struct ebtl_dgram_txq_entry *e = &q->entry[j];
            if (!placed[j] && e->sock == a->sock && ebtl_sockaddr_equal(&e->to, &a->to)) {
                placed[j] = true;
                m->ord[n++] = j;
            }
        }
    }
}

/* Append entry e's pieces to m->iov at *niov (its header from its copy). */
static void gather(const struct ebtl_dgram_txq_entry *e, const ebtl_dgram_txq_t *q,
                   txq_msgs_t *m, unsigned *niov)
{
    memcpy(&m->iov[*niov], &q->iov[e->iov_at], (size_t) e->iovcnt * sizeof(struct iovec));
    m->iov[*niov].iov_base = (void *) e->hdr;
    *niov += (unsigned) e->iovcnt;
}

/* Cut positions [at, end) of m->ord, all of one socket, into messages
 * m->mm[0..n): with GSO a message carries a run of datagrams to one
 * destination, all of the first one's size but the last, which may be
 * shorter (the kernel cuts the gathered bytes at that size). Returns n. */
static unsigned build_msgs(const ebtl_dgram_txq_t *q, txq_msgs_t *m, const ebtl_dgram_sock_t *s,
                           unsigned at, unsigned end)
{
    size_t limit = s->family == AF_INET ? IPV4_MAX_PAYLOAD : IPV6_MAX_PAYLOAD;
    unsigned n = 0, niov = 0;
    while (at < end) {
        const struct ebtl_dgram_txq_entry *first = &q->entry[m->ord[at]];
        size_t size = first->len, total = size;
        unsigned segs = 1, iov_at = niov;
        gather(first, q, m, &niov);
        unsigned j = at + 1;
        /* an empty or oversize datagram goes alone (and fails alone) */
        if (s->gso && size > 0 && size <= s->max_payload) {
            while (j < end && segs < GSO_MAX_SEGS) {
                const struct ebtl_dgram_txq_entry *e = &q->entry[m->ord[j]];
                if (e->len == 0 || e->len > size || total + e->len > limit ||
                    niov - iov_at + (unsigned) e->iovcnt > UIO_MAXIOV ||
                    !ebtl_sockaddr_equal(&e->to, &first->to)) {
                    break;
                }
                gather(e, q, m, &niov);
                total += e->len;
                segs++;
                j++;
                if (e->len < size) {
                    break; /* a shorter one ends the message */
                }
            }
        }
        struct msghdr *h = &m->mm[n].msg_hdr;
        memset(&m->mm[n], 0, sizeof(m->mm[n]));
        h->msg_name = (void *) &first->to.u;
        h->msg_namelen = first->to.len;
        h->msg_iov = &m->iov[iov_at];
        h->msg_iovlen = niov - iov_at;
        if (segs > 1) {
            set_segment_cmsg(h, m->ctrl[n].buf, sizeof(m->ctrl[n].buf), size);
        }
        m->first[n] = at;
        m->segs[n] = segs;
        n++;
        at = j;
    }
    return n;
}

/* Send positions [at, end) of m->ord, all of socket s; returns how many
 * datagrams were dropped. */
static unsigned flush_run(ebtl_dgram_txq_t *q, txq_msgs_t *m, ebtl_dgram_sock_t *s, unsigned at,
                          unsigned end)
{
    unsigned dropped = 0;
    /* GSO was just refused: whether the first datagram of that message
     * goes alone tells whether GSO or the datagram was the problem */
    bool probing = false;
    for (;;) {
        unsigned n = build_msgs(q, m, s, at, end), k = 0;
        int interrupted = 0;
        while (k < n) {
            int r = sendmmsg(s->fd, m->mm + k, n - k, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (r > 0) {
                for (unsigned i = k; i < k + (unsigned) r; i++) {
                    s->stats.tx_datagrams += m->segs[i];
                    s->stats.tx_bytes += m->mm[i].msg_len;
                    s->stats.tx_gso += m->segs[i] > 1;
                }
                probing = false; /* alone it went: GSO stays off */
                k += (unsigned) r; /* a partial send: the loop retries the rest */
                continue;
            }
            int e = r < 0 ? errno : EAGAIN;
            if (e == EINTR && interrupted++ == 0) {
                continue;
            }
            if (m->segs[k] > 1 && gso_refused(e)) {
                /* the kernel will not segment here: the rest one by one */
                s->gso = false;
                s->stats.tx_gso_refused++;
                probing = true;
                break;
            }
            if (probing) {
                s->gso = true; /* refused alone too: the datagram, not GSO */
                probing = false;
            }
            if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) {
                /* no room: the rest would fail the same way */
                unsigned rest = end - m->first[k];
                s->stats.tx_errors += rest;
                return dropped + rest;
            }
            /* this one message was refused (EMSGSIZE, ECONNREFUSED...): drop it */
            s->stats.tx_errors += m->segs[k];
            dropped += m->segs[k];
            if (ebtl_dgram_way_closed(e) && q->unreachable != NULL) {
                q->unreachable(q->unreachable_arg, s, &q->entry[m->ord[m->first[k]]].to, e);
            }
            k++;
        }
        if (k >= n) {
            return dropped;
        }
        at = m->first[k]; /* GSO refused: build the rest again without it */
    }
}

unsigned ebtl_dgram_txq_flush(ebtl_dgram_txq_t *q)
{
    txq_msgs_t m;
    unsigned dropped = 0, i = 0, count = q->count;
    group_entries(q, &m, count);
    q->count = 0;
    q->niov = 0;
    while (i < count) {
        ebtl_dgram_sock_t *s = q->entry[m.ord[i]].sock;
        unsigned j = i + 1;
        while (j < count && q->entry[m.ord[j]].sock == s) {
            j++;
        }
        dropped += flush_run(q, &m, s, i, j);
        i = j;
    }
    return dropped;
}

/* ---- receive ---- */

static void ring_init(ebtl_dgram_sock_t *s)
{
    struct ebtl_dgram_rxring *rx = s->rx;
    for (unsigned i = 0; i < s->rx_bufs; i++) {
        rx->iov[i].iov_base = rx->mem + (size_t) i * s->rx_buf_size;
        rx->iov[i].iov_len = s->rx_buf_size;
        struct msghdr *h = &rx->mm[i].msg_hdr;
        h->msg_name = &rx->from[i].u;
        h->msg_namelen = sizeof(rx->from[i].u);
        h->msg_iov = &rx->iov[i];
        h->msg_iovlen = 1;
        h->msg_control = s->gro ? rx->ctrl[i].buf : NULL;
        h->msg_controllen = s->gro ? sizeof(rx->ctrl[i].buf) : 0;
        h->msg_flags = 0;
    }
}

/* One recvmmsg of up to vlen (<= rx_bufs) into the ring. Returns the
 * count, 0 when nothing waits, or -errno. */
static int ring_fill(ebtl_dgram_sock_t *s, unsigned vlen)
{
    struct ebtl_dgram_rxring *rx = s->rx;
    /* the kernel rewrote these fields of the entries it filled last time
     * (a busy poll of an empty socket then costs one syscall only) */
    for (unsigned i = 0; i < rx->dirty; i++) {
        struct msghdr *h = &rx->mm[i].msg_hdr;
        h->msg_namelen = sizeof(rx->from[i].u);
        h->msg_controllen = s->gro ? sizeof(rx->ctrl[i].buf) : 0;
        h->msg_flags = 0;
    }
    rx->dirty = 0;
    rx->nmsg = rx->cur = 0;
    rx->off = 0;
    int r = -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        r = recvmmsg(s->fd, rx->mm, vlen, MSG_DONTWAIT, NULL);
        /* EINTR, or a pending ICMP error reported once (ECONNREFUSED...):
         * it is cleared now, read again */
        if (r >= 0 || (errno != EINTR && errno != ECONNREFUSED && errno != EHOSTUNREACH &&
                       errno != ENETUNREACH)) {
            break;
        }
    }
    if (r < 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
    }
    rx->dirty = (unsigned) r;
    for (unsigned i = 0; i < (unsigned) r; i++) {
        struct msghdr *h = &rx->mm[i].msg_hdr;
        rx->from[i].len = h->msg_namelen;
        rx->seg[i] = 0;
        rx->skip[i] = (h->msg_flags & MSG_TRUNC) != 0;
        if (rx->skip[i]) {
            s->stats.rx_truncated++;
            continue;
        }
        if (s->gro && h->msg_controllen > 0) {
            for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
                if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
                    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
                    int g;
                    memcpy(&g, CMSG_DATA(c), sizeof(g));
                    rx->seg[i] = g > 0 ? (size_t) g : 0;
                }
            }
            s->stats.rx_gro += rx->seg[i] != 0 && rx->mm[i].msg_len > rx->seg[i];
        }
    }
    rx->nmsg = (unsigned) r;
    return r;
}

/* Up to max datagrams from the ring (GRO super-datagrams split). rx_*
 * stats count them here: as the kernel delivered them, before the fault
 * layer. */
static unsigned ring_take(ebtl_dgram_sock_t *s, ebtl_dgram_msg_t *dst, unsigned max)
{
    struct ebtl_dgram_rxring *rx = s->rx;
    unsigned n = 0;
    while (n < max && rx->cur < rx->nmsg) {
        unsigned i = rx->cur;
        if (rx->skip[i]) {
            rx->cur++;
            rx->off = 0;
            continue;
        }
        size_t len = rx->mm[i].msg_len;
        size_t piece = len - rx->off;
        if (rx->seg[i] != 0 && piece > rx->seg[i]) {
            piece = rx->seg[i];
        }
        dst[n].buf = rx->mem + (size_t) i * s->rx_buf_size + rx->off;
        dst[n].len = piece;
        dst[n].from = rx->from[i];
        n++;
        s->stats.rx_datagrams++;
        s->stats.rx_bytes += piece;
        rx->off += piece;
        if (rx->off >= len) {
            rx->cur++;
            rx->off = 0;
        }
    }
    return n;
}

static unsigned pend_take(struct ebtl_dgram_rxring *rx, ebtl_dgram_msg_t *out, unsigned max)
{
    unsigned k = rx->npend - rx->pend_at;
    if (k > max) {
        k = max;
    }
    memcpy(out, &rx->pend[rx->pend_at], k * sizeof(*out));
    rx->pend_at += k;
    if (rx->pend_at == rx->npend) {
        rx->npend = rx->pend_at = 0;
    }
    return k;
}

int ebtl_dgram_recv(ebtl_dgram_sock_t *s, ebtl_dgram_msg_t *out, unsigned max, uint64_t now_ns)
{
    struct ebtl_dgram_rxring *rx = s->rx;
    if (rx == NULL || s->fd < 0) {
        return -EBADF;
    }
    if (max > EBTL_DGRAM_RX_BATCH) {
        max = EBTL_DGRAM_RX_BATCH;
    }
    if (max == 0) {
        return 0;
    }
    if (rx->npend > 0) {
        return (int) pend_take(rx, out, max);
    }
    for (int read = 0; read < FAULT_REREADS; read++) {
        if (rx->cur >= rx->nmsg) {
            int r = ring_fill(s, max < s->rx_bufs ? max : s->rx_bufs);
            if (r < 0) {
                return r;
            }
        }
        if (s->fault == NULL) {
            return (int) ring_take(s, out, max);
        }
        /* through the fault layer: the arrivals go in pend, the result into
         * out and what does not fit back into pend */
        unsigned n = ring_take(s, rx->pend, max);
        for (unsigned i = 0; i < n; i++) {
            rx->fpkts[i].buf = rx->pend[i].buf;
            rx->fpkts[i].len = rx->pend[i].len;
            memset(rx->fpkts[i].from, 0, sizeof(rx->fpkts[i].from));
            memcpy(rx->fpkts[i].from, &rx->pend[i].from, sizeof(ebtl_sockaddr_t));
        }
        unsigned k = ebtl_fault_filter(s->fault, rx->fpkts, n, FAULT_OUT_MAX, now_ns);
        rx->npend = rx->pend_at = 0;
        for (unsigned j = 0; j < k; j++) {
            ebtl_dgram_msg_t *m = j < max ? &out[j] : &rx->pend[rx->npend++];
            m->buf = rx->fpkts[j].buf;
            m->len = rx->fpkts[j].len;
            memcpy(&m->from, rx->fpkts[j].from, sizeof(ebtl_sockaddr_t));
        }
        if (k > 0 || n == 0) {
            return (int) (k < max ? k : max);
        }
        /* everything read was dropped: read again rather than report none */
    }
    return 0;
}

bool ebtl_dgram_rx_buffered(const ebtl_dgram_sock_t *s)
{
    const struct ebtl_dgram_rxring *rx = s->rx;
    return rx != NULL && (rx->npend > rx->pend_at || rx->cur < rx->nmsg);
}

uint64_t ebtl_dgram_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The UDP datagram layer both components use: non-blocking sockets bound to
 * one local address, batched sends (sendmmsg) whose payload is gathered
 * straight from the caller's buffers, batched receives (recvmmsg), UDP GSO
 * and GRO where the kernel has them, and the test-only fault layer on the
 * receive path. Knows nothing of reliability. Pure C, no Open MPI headers.
 */
#ifndef EBTL_DGRAM_H
#define EBTL_DGRAM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "ebtl_fault.h"
#include "ebtl_ifsel.h"

/* Largest UDP payload of one datagram: IPv4 65535 - 20 - 8. */
#define EBTL_DGRAM_MAX_PAYLOAD 65507
/* Most iovec entries one datagram may be gathered from. */
#define EBTL_DGRAM_MAX_IOV 4
/* Bytes of the first iovec entry the send queue copies (protocol headers),
 * so the caller's header storage may be reused at once. */
#define EBTL_DGRAM_HDR_COPY 128
/* Datagrams one send queue holds before it flushes itself. */
#define EBTL_DGRAM_TXQ_LEN 64
/* Datagrams one receive call returns at most. */
#define EBTL_DGRAM_RX_BATCH 32
/* Receive buffers of a socket with UDP GRO: each holds a 64 KiB
 * super-datagram (up to 44 datagrams at MTU 1500), so fewer than
 * EBTL_DGRAM_RX_BATCH keep the ring at 512 KiB (docs/architecture.md). */
#define EBTL_DGRAM_RX_GRO_BUFS 8
/* Most datagrams one GSO send carries: UDP_MAX_SEGMENTS of older kernels
 * (newer ones allow 128). */
#define EBTL_DGRAM_GSO_MAX_SEGS 64

typedef struct ebtl_sockaddr {
    union {
        struct sockaddr sa;
        struct sockaddr_in in4;
        struct sockaddr_in6 in6;
    } u;
    socklen_t len;
} ebtl_sockaddr_t;

/* Build a socket address from a family (AF_INET/AF_INET6), address bytes
 * (network order, IPv4 in the first 4) and a port (host order). */
void ebtl_sockaddr_set(ebtl_sockaddr_t *sa, int family, const unsigned char *addr, uint16_t port);
bool ebtl_sockaddr_equal(const ebtl_sockaddr_t *a, const ebtl_sockaddr_t *b);
/* "10.1.2.3:4567" or "[fd00::1]:4567" into buf. */
const char *ebtl_sockaddr_format(const ebtl_sockaddr_t *sa, char *buf, size_t len);

typedef struct ebtl_dgram_stats {
    uint64_t tx_datagrams, tx_bytes, tx_errors;   /* errors: datagrams the kernel refused */
    uint64_t tx_gso;          /* sends that carried several datagrams (UDP GSO) */
    uint64_t tx_gso_refused;  /* GSO sends the kernel refused, sent again one by one */
    uint64_t rx_datagrams, rx_bytes;
    uint64_t rx_gro;          /* reads that returned several datagrams (UDP GRO) */
    uint64_t rx_truncated;    /* longer than the receive buffer: dropped */
    uint64_t rx_kernel_drops; /* only in sums made for reports (ebtl_dgram_kernel_drops) */
} ebtl_dgram_stats_t;

typedef struct ebtl_dgram_sock {
    int fd;
    int family;
    ebtl_sockaddr_t local;      /* bound address and port */
    unsigned mtu;              /* of the interface */
    size_t max_payload;        /* largest datagram payload without IP fragmentation */
    size_t rcvbuf, sndbuf;     /* what the kernel granted */
    size_t rx_buf_size;        /* bytes of each receive buffer */
    unsigned rx_bufs;          /* receive buffers (datagrams or GRO super-datagrams
                                * one read returns at most) */
    bool gso, gro;             /* kernel support found and enabled; the caller may
                                * clear gso after open (never set it); a send the
                                * kernel refuses with GSO clears it too */
    ebtl_fault_t *fault;        /* NULL unless the fault layer is on: the caller sets it
                                * (ebtl_fault_create(cfg, rx_buf_size)) after open;
                                * ebtl_dgram_close destroys it */
    ebtl_dgram_stats_t stats;
    /* receive buffers and recvmmsg state (ebtl_dgram.c) */
    struct ebtl_dgram_rxring *rx;
} ebtl_dgram_sock_t;

typedef struct ebtl_dgram_open_args {
    const ebtl_if_t *iface;     /* local address to bind */
    uint16_t port;             /* 0: any free port */
    size_t rcvbuf, sndbuf;     /* wanted socket buffers; SO_*BUFFORCE tried first */
    bool want_gro;             /* try UDP_GRO on the socket */
} ebtl_dgram_open_args_t;

/* Datagrams the kernel dropped before this socket could read them: its
 * receive buffer was full (or a checksum was bad). The kernel's count for
 * the socket (SO_MEMINFO), 0 when it cannot be read. A system call: for
 * counters, not for every pass. */
uint64_t ebtl_dgram_kernel_drops(const ebtl_dgram_sock_t *s);

/* Open a non-blocking UDP socket bound to iface's address. Returns 0, or -1
 * with one message in err (naming the address and the system error). */
int ebtl_dgram_open(ebtl_dgram_sock_t *s, const ebtl_dgram_open_args_t *args, char *err,
                   size_t errlen);
void ebtl_dgram_close(ebtl_dgram_sock_t *s);

/* Send one datagram gathered from iov now. Returns 0, or -errno (-EAGAIN
 * when the socket buffer is full). */
int ebtl_dgram_send(ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to, const struct iovec *iov,
                   int iovcnt);

/* Whether a send's errno closes a way (a route, an interface, a firewall
 * rule: ENETUNREACH, EHOSTUNREACH, ENETDOWN, EPERM, EADDRNOTAVAIL), as
 * opposed to a full queue or a datagram too big. */
bool ebtl_dgram_way_closed(int err);

/* Send len bytes of buf as datagrams of seg_size bytes each (the last may be
 * shorter) in one call with UDP GSO when s->gso, else one by one. Each
 * segment is an independent datagram. Returns 0 or -errno. */
int ebtl_dgram_send_gso(ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to, const void *buf,
                       size_t len, size_t seg_size);

/* A send queue: datagrams collected during one pass and sent with one
 * sendmmsg per socket at flush. The first iovec entry (<= EBTL_DGRAM_HDR_COPY
 * bytes) is copied; later entries must stay valid until the flush.
 * At flush the datagrams are grouped by socket and destination, each group
 * in queue order. On a socket with s->gso, a group's datagrams of one size
 * (the last of a run may be shorter) go as one message with a UDP_SEGMENT
 * cmsg: the kernel cuts the gathered bytes back into exactly those
 * datagrams. */
typedef struct ebtl_dgram_txq {
    /* Told of each datagram the kernel refused for its destination or
     * interface (ENETUNREACH, EHOSTUNREACH, ENETDOWN, EPERM, EADDRNOTAVAIL:
     * that way is closed, not just full), with the errno; may be NULL. */
    void (*unreachable)(void *arg, const ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to,
                        int err);
    void *unreachable_arg;
    unsigned count;
    unsigned niov;                       /* of iov[] in use */
    struct ebtl_dgram_txq_entry {
        ebtl_dgram_sock_t *sock;
        ebtl_sockaddr_t to;
        size_t len;                      /* bytes of the datagram */
        unsigned iov_at;                 /* its pieces: iov[iov_at .. + iovcnt) */
        int iovcnt;
        unsigned char hdr[EBTL_DGRAM_HDR_COPY];
    } entry[EBTL_DGRAM_TXQ_LEN];
    /* Every entry's pieces in queue order; the flush gathers them again
     * grouped by socket and destination (a GSO message is one run). */
    struct iovec iov[EBTL_DGRAM_TXQ_LEN * EBTL_DGRAM_MAX_IOV];
} ebtl_dgram_txq_t;

/* An empty queue with no unreachable callback. */
void ebtl_dgram_txq_init(ebtl_dgram_txq_t *q);
/* Queue one datagram (flushes first when full). Returns 0, or -EINVAL when
 * iovcnt or the first entry's length exceeds the limits above. */
int ebtl_dgram_txq_add(ebtl_dgram_txq_t *q, ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to,
                      const struct iovec *iov, int iovcnt);
/* Send everything queued. Returns the number of datagrams the kernel
 * refused (counted in each socket's tx_errors); they are dropped, which the
 * protocol above treats as loss. A GSO message the kernel refuses (e.g. the
 * device cannot checksum it) is sent again one datagram at a time, and GSO
 * stays off on that socket when that works. */
unsigned ebtl_dgram_txq_flush(ebtl_dgram_txq_t *q);

/* One received datagram; buf is valid until the next ebtl_dgram_recv on the
 * same socket. */
typedef struct ebtl_dgram_msg {
    void *buf;
    size_t len;
    ebtl_sockaddr_t from;
} ebtl_dgram_msg_t;

/* Receive up to max (<= EBTL_DGRAM_RX_BATCH) datagrams without blocking;
 * GRO super-datagrams are split back into their datagrams, the fault layer
 * (when on) drops, duplicates, reorders and corrupts. Returns the count
 * (0 when nothing is waiting) or -errno on a socket error. now_ns is the
 * caller's clock (the fault layer releases held datagrams by it). */
int ebtl_dgram_recv(ebtl_dgram_sock_t *s, ebtl_dgram_msg_t *out, unsigned max, uint64_t now_ns);
/* True when datagrams already read from the socket wait for the next
 * ebtl_dgram_recv (the rest of a read or of a GRO super-datagram, or fault
 * layer output): a short return then does not mean the socket is drained. */
bool ebtl_dgram_rx_buffered(const ebtl_dgram_sock_t *s);

/* Monotonic clock in nanoseconds. */
uint64_t ebtl_dgram_now_ns(void);

#endif

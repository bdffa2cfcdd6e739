/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The raw Ethernet datagram layer (issue 19): payloads carried straight in
 * Ethernet frames of their own ethertype (IEEE local experimental 0x88B5 by
 * default) on one interface, through an AF_PACKET socket with a
 * memory-mapped TX ring and RX ring (TPACKET_V2 both ways) and
 * PACKET_QDISC_BYPASS. Sends are copied into TX ring frames and handed to
 * the kernel with one send() per flush; receives are read from the RX ring
 * with no system call. Knows nothing of reliability. Pure C, no Open MPI
 * headers; the shape follows ebtl_dgram.h.
 *
 * Why TPACKET_V2 for the RX ring and not V3: a V3 block reaches user space
 * only when it is full or its retire timer (whole milliseconds) fires, so a
 * lone frame waits up to a millisecond (a 1000 us ping-pong against 3 us
 * with V2, contrib/experiments/ethbench-results.md); a V2 ring polled by
 * the progress loop streams as fast as V3 does.
 *
 * Needs CAP_NET_RAW. Every frame received is untrusted: frames without
 * payload, of another ethertype or VLAN, for another host, truncated, or
 * with our own source address are dropped and counted. A socket bound to
 * an ethertype receives every frame of it on the interface: processes
 * sharing an interface each see all the others' frames, and the protocol
 * above must tell its own from them. A frame's payload may arrive longer
 * than it was sent: Ethernet pads frames to 60 bytes (46 bytes of payload).
 */
#ifndef EBTL_ETH_H
#define EBTL_ETH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ebtl_ifsel.h"

/* IEEE 802 local experimental ethertype 1. */
#define EBTL_ETH_TYPE_DEFAULT 0x88B5
#define EBTL_ETH_HLEN 14
/* Bytes of each ring (RX and TX) when ebtl_eth_open is given 0, and the
 * most it accepts (the rings are pinned kernel memory, not charged to the
 * socket buffers). */
#define EBTL_ETH_RING_DEFAULT (4u << 20)
#define EBTL_ETH_RING_MAX (256u << 20)

typedef struct ebtl_eth_stats {
    uint64_t tx_frames, tx_bytes;  /* taken by the kernel; bytes of payload */
    uint64_t tx_errors;            /* frames dropped: the ring stayed full, or
                                    * the kernel refused them (interface down) */
    uint64_t tx_flushes;           /* send() calls */
    uint64_t rx_frames, rx_bytes;  /* returned by ebtl_eth_recv; bytes of payload */
    uint64_t rx_dropped_foreign;   /* another ethertype, a VLAN, another host's
                                    * frame, a multicast source address */
    uint64_t rx_dropped_own;       /* our own frames seen again (outgoing, or
                                    * with our source address) */
    uint64_t rx_short;             /* no payload: 14 bytes or fewer */
    uint64_t rx_truncated;         /* longer than a ring frame (TP_STATUS_COPY,
                                    * snaplen < len) */
    uint64_t rx_kernel_packets;    /* PACKET_STATISTICS, summed by
                                    * ebtl_eth_kernel_stats */
    uint64_t rx_kernel_drops;      /* frames the kernel dropped: RX ring full */
} ebtl_eth_stats_t;

typedef struct ebtl_eth_sock {
    int fd;                        /* non-blocking; POLLIN when the RX ring has frames;
                                    * after the interface went down, also POLLERR
                                    * (ENETDOWN) until the next flush or a read of
                                    * SO_ERROR */
    unsigned ifindex;
    char ifname[IF_NAMESIZE];
    uint16_t ethertype;            /* host order */
    uint8_t mac[6];                /* the interface's address */
    unsigned mtu;                  /* of the interface when opened */
    size_t max_payload;            /* bytes one frame carries: the MTU */
    size_t rx_ring_bytes, tx_ring_bytes;
    unsigned rx_frames, tx_frames; /* ring slots */
    bool qdisc_bypass;             /* PACKET_QDISC_BYPASS accepted */
    bool ignore_outgoing;          /* PACKET_IGNORE_OUTGOING accepted (Linux 4.20) */
    ebtl_eth_stats_t stats;
    struct ebtl_eth_ring *ring;    /* the mapped rings and their cursors (ebtl_eth.c) */
} ebtl_eth_sock_t;

/* Open a raw Ethernet socket for ethertype (host order) bound to iface
 * (its ifindex; its name for messages), with an RX ring and a TX ring of
 * about ring_bytes each (0: EBTL_ETH_RING_DEFAULT; at least two 64 KiB
 * blocks), frames sized for the interface's current MTU. A later lower MTU
 * makes the kernel drop longer frames silently (PACKET_LOSS), a higher one
 * makes longer frames arrive truncated: reopen on an MTU change. Returns 0,
 * or -1 with one message in err naming the interface and the system error;
 * without CAP_NET_RAW the message says how to get it or to use the UDP
 * wire. */
int ebtl_eth_open(ebtl_eth_sock_t *s, const ebtl_if_t *iface, uint16_t ethertype,
                  size_t ring_bytes, char *err, size_t errlen);
void ebtl_eth_close(ebtl_eth_sock_t *s);

/* Copy one frame's payload, gathered from iov, into the next TX ring frame
 * for dst_mac (from s->mac). When the ring is full it flushes first.
 * Returns 0; -EMSGSIZE when the payload exceeds s->max_payload; -EINVAL when
 * it is empty or iov is invalid; -EAGAIN when the ring stays full after the
 * flush (the frame is dropped and counted in tx_errors: the protocol above
 * treats it as loss). The caller's buffers may be reused at once. */
int ebtl_eth_queue(ebtl_eth_sock_t *s, const uint8_t dst_mac[6], const struct iovec *iov,
                   int iovcnt);
/* Hand every queued frame to the kernel with one send(). Returns the number
 * of frames dropped (the kernel refused them for good, e.g. the interface
 * is down; counted in tx_errors). Frames the kernel could not take yet
 * (socket buffer or device queue full) stay queued for the next flush. */
int ebtl_eth_flush(ebtl_eth_sock_t *s);
/* Frames queued and not yet taken by the kernel. */
unsigned ebtl_eth_tx_pending(const ebtl_eth_sock_t *s);

/* One received frame; buf (the payload after the Ethernet header) is valid
 * until the next ebtl_eth_recv on the same socket, which returns its ring
 * frame to the kernel. */
typedef struct ebtl_eth_msg {
    void *buf;
    size_t len;
    uint8_t from[6];               /* source MAC */
} ebtl_eth_msg_t;

/* What ebtl_eth_frame_check makes of a received ring frame. */
enum ebtl_eth_verdict {
    EBTL_ETH_FRAME_OK,         /* returned: the payload is at *payload_off */
    EBTL_ETH_FRAME_FOREIGN,    /* another ethertype, a VLAN, another host's frame,
                                * a multicast source address (rx_dropped_foreign) */
    EBTL_ETH_FRAME_OWN,        /* outgoing, or our source address (rx_dropped_own) */
    EBTL_ETH_FRAME_SHORT,      /* no payload (rx_short) */
    EBTL_ETH_FRAME_TRUNCATED   /* cut (TP_STATUS_COPY, snaplen < len), or a slot
                                * the kernel would not lay out (rx_truncated) */
};

/* The pure part of the receive check, for tests and fuzzing: whether the
 * TPACKET_V2 RX ring frame at slot (slot_size bytes: a struct tpacket2_hdr,
 * the struct sockaddr_ll after it, the Ethernet frame at tp_mac; aligned as
 * a ring frame is, TPACKET_ALIGNMENT) with status (its tp_status, read by the
 * caller; the slot's own field is not read) is a frame of ethertype for the
 * interface whose address is mac. Trusts nothing in the slot: on
 * EBTL_ETH_FRAME_OK the payload (after the Ethernet header) is
 * [*payload_off, *payload_off + *payload_len), non-empty and inside
 * [0, slot_size), and the Ethernet header is the 14 bytes before it;
 * otherwise both are 0. Does not discard a TP_STATUS_COPY frame from the
 * socket's queue (ebtl_eth_recv does). */
enum ebtl_eth_verdict ebtl_eth_frame_check(const void *slot, size_t slot_size, uint32_t status,
                                           uint16_t ethertype, const uint8_t mac[6],
                                           size_t *payload_off, size_t *payload_len);

/* Receive up to max frames from the RX ring without blocking or a system
 * call. Returns the count (0 when nothing is waiting). */
int ebtl_eth_recv(ebtl_eth_sock_t *s, ebtl_eth_msg_t *out, unsigned max);
/* True when the RX ring holds a frame the next ebtl_eth_recv returns (or
 * drops): a short return then does not mean the ring is drained. */
bool ebtl_eth_rx_buffered(const ebtl_eth_sock_t *s);

/* Add the kernel's PACKET_STATISTICS (which reading resets) to
 * s->stats.rx_kernel_packets and rx_kernel_drops. Returns 0 or -errno. */
int ebtl_eth_kernel_stats(ebtl_eth_sock_t *s);

/* "02:00:00:00:00:01" into buf (at least 18 bytes), for messages. */
const char *ebtl_eth_mac_format(const uint8_t mac[6], char *buf, size_t len);

#endif

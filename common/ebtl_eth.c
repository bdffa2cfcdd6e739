/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The raw Ethernet datagram layer: one AF_PACKET SOCK_RAW socket per
 * interface with a TPACKET_V2 RX ring and TX ring in one mapping (RX
 * first, as the kernel lays them out).
 *
 * TX: frames are written in ring order at tx_next; tx_first is the oldest
 * frame queued that the kernel has not taken (it takes them in ring order
 * from its own head, which is tx_first). A flush is one send(MSG_DONTWAIT);
 * afterwards the frames from tx_first that no longer read SEND_REQUEST were
 * taken. On a hard error the rest go back to AVAILABLE and tx_next rewinds
 * to tx_first, so the kernel's head and ours stay together. PACKET_LOSS is
 * set so that a frame the kernel finds malformed is skipped, not left
 * blocking the ring as TP_STATUS_WRONG_FORMAT.
 *
 * RX: frames from rx_next whose status has TP_STATUS_USER are ours. The
 * frames one ebtl_eth_recv passes over (returned or dropped) are held as
 * the range [rx_held, rx_next) and given back to the kernel at the start of
 * the next call; dropped frames before the first returned one go back at
 * once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ebtl_eth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef PACKET_QDISC_BYPASS
#define PACKET_QDISC_BYPASS 20
#endif
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define BLOCK_MIN (64u << 10)
/* Where a TPACKET_V2 TX frame's data starts (no PACKET_TX_HAS_OFF). */
#define TX_DATA_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))
/* Where a TPACKET_V2 RX frame's MAC header starts on a SOCK_RAW socket:
 * TPACKET_ALIGN(hdrlen + 16) - 14, so a frame needs RX_MAC_END + MTU. */
#define RX_MAC_END (TPACKET_ALIGN(TPACKET2_HDRLEN + 16))

struct ebtl_eth_ring {
    unsigned char *map;
    size_t map_len;
    unsigned char *rx, *tx;          /* the two rings inside map */
    unsigned rx_fsz, rx_bsz, rx_fpb;  /* frame size, block size, frames per block */
    unsigned tx_fsz, tx_bsz, tx_fpb;
    unsigned rx_next, rx_held, rx_nheld;
    unsigned tx_next, tx_first, tx_queued;
    unsigned char discard[64];
};

static unsigned pow2_at_least(unsigned x)
{
    unsigned p = 1;
    while (p < x) {
        p <<= 1;
    }
    return p;
}

static inline void *frame_at(unsigned char *ring, unsigned i, unsigned fsz, unsigned bsz,
                             unsigned fpb)
{
    return ring + (size_t) (i / fpb) * bsz + (size_t) (i % fpb) * fsz;
}

static inline struct tpacket2_hdr *rx_frame(const struct ebtl_eth_ring *r, unsigned i)
{
    return frame_at(r->rx, i, r->rx_fsz, r->rx_bsz, r->rx_fpb);
}

static inline struct tpacket2_hdr *tx_frame(const struct ebtl_eth_ring *r, unsigned i)
{
    return frame_at(r->tx, i, r->tx_fsz, r->tx_bsz, r->tx_fpb);
}

static inline uint32_t status_get(const struct tpacket2_hdr *h)
{
    return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
}

static inline void status_set(struct tpacket2_hdr *h, uint32_t st)
{
    __atomic_store_n(&h->tp_status, st, __ATOMIC_RELEASE);
}

const char *ebtl_eth_mac_format(const uint8_t mac[6], char *buf, size_t len)
{
    snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
             mac[5]);
    return buf;
}

static int open_fail(ebtl_eth_sock_t *s, char *err, size_t errlen, const char *ifname,
                     const char *what, int e)
{
    if (err != NULL && errlen > 0) {
        if (e == EPERM || e == EACCES) {
            snprintf(err, errlen,
                     "raw Ethernet socket on %s: %s failed: %s: needs CAP_NET_RAW: run as root, "
                     "or `setcap cap_net_raw+ep` on the program, or use btl_esp_wire udp",
                     ifname, what, strerror(e));
        } else {
            snprintf(err, errlen, "raw Ethernet socket on %s: %s failed: %s", ifname, what,
                     strerror(e));
        }
    }
    ebtl_eth_close(s);
    return -1;
}

/* A ring of about want bytes of frames of fsz bytes. */
static void ring_geometry(size_t want, unsigned fsz, struct tpacket_req *req, unsigned *bsz,
                          unsigned *fpb)
{
    unsigned b = pow2_at_least(fsz);
    long page = sysconf(_SC_PAGESIZE);
    if (b < BLOCK_MIN) {
        b = BLOCK_MIN;
    }
    if (page > 0 && b < (unsigned) page) {
        b = (unsigned) page;
    }
    size_t nb = (want + b - 1) / b;
    if (nb < 2) {
        nb = 2;
    }
    *bsz = b;
    *fpb = b / fsz;
    req->tp_block_size = b;
    req->tp_block_nr = (unsigned) nb;
    req->tp_frame_size = fsz;
    req->tp_frame_nr = (unsigned) nb * *fpb;
}

int ebtl_eth_open(ebtl_eth_sock_t *s, const ebtl_if_t *iface, uint16_t ethertype,
                  size_t ring_bytes, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    if (iface == NULL || iface->ifindex == 0) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "raw Ethernet socket: no interface given");
        }
        return -1;
    }
    const char *ifn = iface->name;
    snprintf(s->ifname, sizeof(s->ifname), "%s", iface->name);
    s->ifindex = iface->ifindex;
    s->ethertype = ethertype;
    if (ethertype < 0x0600) { /* 802.3 lengths, not ethertypes */
        return open_fail(s, err, errlen, ifn, "checking the ethertype (below 0x0600)", EINVAL);
    }
    if (ring_bytes == 0) {
        ring_bytes = EBTL_ETH_RING_DEFAULT;
    }
    if (ring_bytes > EBTL_ETH_RING_MAX) {
        ring_bytes = EBTL_ETH_RING_MAX;
    }

    /* Protocol 0 until the rings exist and bind names the ethertype: no
     * frame is queued to the socket before then. */
    s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        return open_fail(s, err, errlen, ifn, "socket(AF_PACKET)", errno);
    }
    s->ring = calloc(1, sizeof(*s->ring));
    if (s->ring == NULL) {
        return open_fail(s, err, errlen, ifn, "allocating", ENOMEM);
    }

    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    if (if_indextoname(iface->ifindex, ifr.ifr_name) == NULL) {
        return open_fail(s, err, errlen, ifn, "finding the interface index", errno);
    }
    if (ioctl(s->fd, SIOCGIFHWADDR, &ifr) != 0) {
        return open_fail(s, err, errlen, ifn, "SIOCGIFHWADDR", errno);
    }
    if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen,
                     "raw Ethernet socket on %s: not an Ethernet interface (hardware type %u)",
                     ifn, (unsigned) ifr.ifr_hwaddr.sa_family);
        }
        ebtl_eth_close(s);
        return -1;
    }
    memcpy(s->mac, ifr.ifr_hwaddr.sa_data, 6);
    if (ioctl(s->fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0) {
        s->mtu = (unsigned) ifr.ifr_mtu;
    } else {
        s->mtu = iface->mtu != 0 ? iface->mtu : 1500;
    }
    s->max_payload = s->mtu;

    int v = TPACKET_V2, one = 1;
    if (setsockopt(s->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) != 0) {
        return open_fail(s, err, errlen, ifn, "PACKET_VERSION TPACKET_V2", errno);
    }
    if (setsockopt(s->fd, SOL_PACKET, PACKET_LOSS, &one, sizeof(one)) != 0) {
        return open_fail(s, err, errlen, ifn, "PACKET_LOSS", errno);
    }
    struct ebtl_eth_ring *r = s->ring;
    struct tpacket_req rxq, txq;
    unsigned rx_fsz = TPACKET_ALIGN(RX_MAC_END + s->mtu);
    unsigned tx_fsz = TPACKET_ALIGN(TX_DATA_OFF + EBTL_ETH_HLEN + s->mtu);
    ring_geometry(ring_bytes, rx_fsz, &rxq, &r->rx_bsz, &r->rx_fpb);
    ring_geometry(ring_bytes, tx_fsz, &txq, &r->tx_bsz, &r->tx_fpb);
    r->rx_fsz = rx_fsz;
    r->tx_fsz = tx_fsz;
    if (setsockopt(s->fd, SOL_PACKET, PACKET_RX_RING, &rxq, sizeof(rxq)) != 0) {
        return open_fail(s, err, errlen, ifn, "PACKET_RX_RING", errno);
    }
    if (setsockopt(s->fd, SOL_PACKET, PACKET_TX_RING, &txq, sizeof(txq)) != 0) {
        return open_fail(s, err, errlen, ifn, "PACKET_TX_RING", errno);
    }
    s->rx_ring_bytes = (size_t) rxq.tp_block_size * rxq.tp_block_nr;
    s->tx_ring_bytes = (size_t) txq.tp_block_size * txq.tp_block_nr;
    s->rx_frames = rxq.tp_frame_nr;
    s->tx_frames = txq.tp_frame_nr;
    r->map_len = s->rx_ring_bytes + s->tx_ring_bytes;
    void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s->fd, 0);
    if (m == MAP_FAILED) {
        r->map = NULL;
        return open_fail(s, err, errlen, ifn, "mmap of the rings", errno);
    }
    r->map = m;
    r->rx = r->map;
    r->tx = r->map + s->rx_ring_bytes;

    /* The socket buffer bounds the frames in flight (taken from the TX
     * ring, not yet sent by the device): let the ring bound them. */
    int sb = s->tx_ring_bytes > (size_t) (1 << 30) ? 1 << 30 : (int) s->tx_ring_bytes;
    if (setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)) != 0) {
        (void) setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
    }
    s->qdisc_bypass =
        setsockopt(s->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) == 0;
    s->ignore_outgoing =
        setsockopt(s->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) == 0;

    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ethertype);
    sll.sll_ifindex = (int) iface->ifindex;
    if (bind(s->fd, (struct sockaddr *) &sll, sizeof(sll)) != 0) {
        return open_fail(s, err, errlen, ifn, "bind", errno);
    }
    return 0;
}

void ebtl_eth_close(ebtl_eth_sock_t *s)
{
    if (s->ring != NULL) {
        if (s->ring->map != NULL) {
            munmap(s->ring->map, s->ring->map_len);
        }
        free(s->ring);
        s->ring = NULL;
    }
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
}

/* ------------------------------------------------------------------ TX */

/* Account for the frames the kernel took since tx_first. */
static void tx_reap(ebtl_eth_sock_t *s)
{
    struct ebtl_eth_ring *r = s->ring;
    while (r->tx_queued > 0) {
        struct tpacket2_hdr *h = tx_frame(r, r->tx_first);
        uint32_t st = status_get(h);
        if (st == TP_STATUS_SEND_REQUEST) {
            break;
        }
        if (st == TP_STATUS_WRONG_FORMAT) { /* only without PACKET_LOSS */
            s->stats.tx_errors++;
            status_set(h, TP_STATUS_AVAILABLE);
        } else {
            s->stats.tx_frames++;
            s->stats.tx_bytes += h->tp_len - EBTL_ETH_HLEN;
        }
        r->tx_first = (r->tx_first + 1) % s->tx_frames;
        r->tx_queued--;
    }
}

static bool tx_transient(int e)
{
    return e == 0 || e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS || e == EINTR;
}

int ebtl_eth_flush(ebtl_eth_sock_t *s)
{
    struct ebtl_eth_ring *r = s->ring;
    if (r == NULL || r->tx_queued == 0) {
        return 0;
    }
    int e = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        ssize_t n = send(s->fd, NULL, 0, MSG_DONTWAIT);
        e = n < 0 ? errno : 0;
        s->stats.tx_flushes++;
        tx_reap(s);
        /* A socket's error is reported once, by the next send, even when
         * it is stale (ENETDOWN from an interface since brought up again):
         * a second send tells. */
        if (r->tx_queued == 0 || tx_transient(e)) {
            return 0; /* all taken, or the rest wait for room */
        }
    }
    /* Refused for good (ENETDOWN, ENXIO, ...): drop what is left. */
    int dropped = (int) r->tx_queued;
    for (unsigned i = 0, k = r->tx_first; i < r->tx_queued; i++, k = (k + 1) % s->tx_frames) {
        status_set(tx_frame(r, k), TP_STATUS_AVAILABLE);
    }
    s->stats.tx_errors += r->tx_queued;
    r->tx_next = r->tx_first;
    r->tx_queued = 0;
    return dropped;
}

unsigned ebtl_eth_tx_pending(const ebtl_eth_sock_t *s)
{
    return s->ring != NULL ? s->ring->tx_queued : 0;
}

int ebtl_eth_queue(ebtl_eth_sock_t *s, const uint8_t dst_mac[6], const struct iovec *iov,
                   int iovcnt)
{
    struct ebtl_eth_ring *r = s->ring;
    if (r == NULL || iovcnt < 0 || (iovcnt > 0 && iov == NULL)) {
        return -EINVAL;
    }
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > 0 && iov[i].iov_base == NULL) {
            return -EINVAL;
        }
        if (iov[i].iov_len > s->max_payload - len) {
            return -EMSGSIZE;
        }
        len += iov[i].iov_len;
    }
    if (len == 0) {
        return -EINVAL;
    }
    struct tpacket2_hdr *h = tx_frame(r, r->tx_next);
    if (r->tx_queued == s->tx_frames || status_get(h) != TP_STATUS_AVAILABLE) {
        (void) ebtl_eth_flush(s);
        h = tx_frame(r, r->tx_next);
        if (r->tx_queued == s->tx_frames || status_get(h) != TP_STATUS_AVAILABLE) {
            s->stats.tx_errors++;
            return -EAGAIN;
        }
    }
    unsigned char *d = (unsigned char *) h + TX_DATA_OFF;
    memcpy(d, dst_mac, 6);
    memcpy(d + 6, s->mac, 6);
    d[12] = (unsigned char) (s->ethertype >> 8);
    d[13] = (unsigned char) (s->ethertype & 0xff);
    unsigned char *p = d + EBTL_ETH_HLEN;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > 0) {
            memcpy(p, iov[i].iov_base, iov[i].iov_len);
            p += iov[i].iov_len;
        }
    }
    h->tp_len = (uint32_t) (EBTL_ETH_HLEN + len);
    status_set(h, TP_STATUS_SEND_REQUEST);
    r->tx_next = (r->tx_next + 1) % s->tx_frames;
    r->tx_queued++;
    return 0;
}

/* ------------------------------------------------------------------ RX */

enum ebtl_eth_verdict ebtl_eth_frame_check(const void *slot, size_t slot_size, uint32_t status,
                                           uint16_t ethertype, const uint8_t mac[6],
                                           size_t *payload_off, size_t *payload_len)
{
    *payload_off = 0;
    *payload_len = 0;
    if (status & TP_STATUS_COPY) {
        return EBTL_ETH_FRAME_TRUNCATED; /* the frame went to the socket's queue */
    }
    const size_t sll_off = TPACKET_ALIGN(sizeof(struct tpacket2_hdr));
    if (slot == NULL || slot_size < sll_off + sizeof(struct sockaddr_ll)) {
        return EBTL_ETH_FRAME_TRUNCATED; /* not a ring frame */
    }
    const struct tpacket2_hdr *h = slot;
    /* each field read once: the checks and the result agree */
    const size_t mac_off = h->tp_mac, snaplen = h->tp_snaplen, len = h->tp_len;
    if (mac_off < sizeof(*h) || mac_off > slot_size || snaplen > slot_size - mac_off) {
        return EBTL_ETH_FRAME_TRUNCATED; /* not a frame the kernel lays out: distrust it */
    }
    if (snaplen <= EBTL_ETH_HLEN || len <= EBTL_ETH_HLEN) {
        return EBTL_ETH_FRAME_SHORT;
    }
    /* the kernel cuts snaplen below len, never the other way: a slot with
     * more captured than received is not its own either */
    if (snaplen != len) {
        return EBTL_ETH_FRAME_TRUNCATED;
    }
    const struct sockaddr_ll *sll = (const void *) ((const unsigned char *) slot + sll_off);
    if (sll->sll_pkttype == PACKET_OUTGOING) {
        return EBTL_ETH_FRAME_OWN;
    }
    if (sll->sll_pkttype == PACKET_OTHERHOST) {
        return EBTL_ETH_FRAME_FOREIGN;
    }
    if ((status & TP_STATUS_VLAN_VALID) && (h->tp_vlan_tci & 0x0fff) != 0) {
        return EBTL_ETH_FRAME_FOREIGN;
    }
    const unsigned char *d = (const unsigned char *) slot + mac_off;
    if (((unsigned) d[12] << 8 | d[13]) != ethertype) {
        return EBTL_ETH_FRAME_FOREIGN;
    }
    if (d[6] & 1) { /* a multicast source address is never valid */
        return EBTL_ETH_FRAME_FOREIGN;
    }
    if (memcmp(d + 6, mac, 6) == 0) {
        return EBTL_ETH_FRAME_OWN;
    }
    *payload_off = mac_off + EBTL_ETH_HLEN;
    *payload_len = snaplen - EBTL_ETH_HLEN;
    return EBTL_ETH_FRAME_OK;
}

static enum ebtl_eth_verdict rx_check(ebtl_eth_sock_t *s, const struct tpacket2_hdr *h,
                                      uint32_t st, size_t *off, size_t *len)
{
    if (st & TP_STATUS_COPY) {
        /* The whole frame went to the socket's queue instead: discard it. */
        (void) recv(s->fd, s->ring->discard, sizeof(s->ring->discard), MSG_DONTWAIT | MSG_TRUNC);
    }
    return ebtl_eth_frame_check(h, s->ring->rx_fsz, st, s->ethertype, s->mac, off, len);
}

/* Give the held frames back to the kernel. */
static void rx_release(ebtl_eth_sock_t *s)
{
    struct ebtl_eth_ring *r = s->ring;
    for (; r->rx_nheld > 0; r->rx_nheld--) {
        status_set(rx_frame(r, r->rx_held), TP_STATUS_KERNEL);
        r->rx_held = (r->rx_held + 1) % s->rx_frames;
    }
}

int ebtl_eth_recv(ebtl_eth_sock_t *s, ebtl_eth_msg_t *out, unsigned max)
{
    struct ebtl_eth_ring *r = s->ring;
    if (r == NULL) {
        return -EBADF;
    }
    rx_release(s);
    unsigned n = 0, seen = 0;
    while (n < max && seen < s->rx_frames) {
        struct tpacket2_hdr *h = rx_frame(r, r->rx_next);
        uint32_t st = status_get(h);
        if (!(st & TP_STATUS_USER)) {
            break;
        }
        seen++;
        r->rx_next = (r->rx_next + 1) % s->rx_frames;
        size_t off, len;
        switch (rx_check(s, h, st, &off, &len)) {
        case EBTL_ETH_FRAME_OK:
            out[n].buf = (unsigned char *) h + off;
            out[n].len = len;
            memcpy(out[n].from, (unsigned char *) h + off - EBTL_ETH_HLEN + 6, 6);
            s->stats.rx_frames++;
            s->stats.rx_bytes += out[n].len;
            n++;
            r->rx_nheld++;
            continue;
        case EBTL_ETH_FRAME_FOREIGN:
            s->stats.rx_dropped_foreign++;
            break;
        case EBTL_ETH_FRAME_OWN:
            s->stats.rx_dropped_own++;
            break;
        case EBTL_ETH_FRAME_SHORT:
            s->stats.rx_short++;
            break;
        case EBTL_ETH_FRAME_TRUNCATED:
            s->stats.rx_truncated++;
            break;
        }
        if (n == 0) { /* nothing returned yet: give it back now */
            status_set(h, TP_STATUS_KERNEL);
            r->rx_held = r->rx_next;
        } else {
            r->rx_nheld++;
        }
    }
    return (int) n;
}

bool ebtl_eth_rx_buffered(const ebtl_eth_sock_t *s)
{
    const struct ebtl_eth_ring *r = s->ring;
    if (r == NULL) {
        return false;
    }
    return (status_get(rx_frame(r, r->rx_next)) & TP_STATUS_USER) != 0;
}

int ebtl_eth_kernel_stats(ebtl_eth_sock_t *s)
{
    struct tpacket_stats st;
    socklen_t l = sizeof(st);
    memset(&st, 0, sizeof(st));
    if (getsockopt(s->fd, SOL_PACKET, PACKET_STATISTICS, &st, &l) != 0) {
        return -errno;
    }
    s->stats.rx_kernel_packets += st.tp_packets;
    s->stats.rx_kernel_drops += st.tp_drops;
    return 0;
}

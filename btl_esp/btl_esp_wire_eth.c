/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The eth wire (btl_esp_wire=eth): esp segments straight in Ethernet frames
 * of their own ethertype (btl_esp_eth_type) to peers on the same link,
 * through an AF_PACKET socket with memory-mapped rings per NIC
 * (common/ebtl_eth.[ch]). Every NIC also keeps the udp wire's two sockets:
 * peers off the link (routed, or on this host, which a frame to our own
 * MAC would never reach) and the loopback interface (where every process
 * would see every frame) go by UDP, as does everything on a NIC whose raw
 * socket could not be opened (no CAP_NET_RAW): each case says so once.
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"

#include <errno.h>
#include <string.h>

#include "ebtl_eth.h"
#include "ebtl_help.h"
#include "esp_hdr.h"

/* Receive queues: the udp wire's two (by channel), then the raw ring. */
#define RXQ_RING 2
/* A NIC whose peers all go by its raw socket still reads its UDP sockets
 * now and then (a peer we do not know yet, one that lost its raw socket):
 * every this many reads of the ring, not at the cost of two system calls
 * in every pass. */
#define UDP_IDLE_EVERY 64
/* Payload of a minimum-size frame: a shorter one arrives padded to it. */
#define ETH_MIN_PAYLOAD 46

typedef struct eth_nic {
    ebtl_eth_sock_t sock;
    bool open;                  /* the raw socket is open (else: udp only) */
    unsigned udp_peers;         /* peers this NIC reaches by UDP */
    unsigned ring_reads;        /* for UDP_IDLE_EVERY */
    ebtl_fault_t *fault;        /* the test-only fault layer, NULL when off */
    esp_wire_rx_t rx;
} eth_nic_t;

static eth_nic_t *en(const mca_btl_esp_nic_t *nic)
{
    return nic->link;
}

/* Said once per process: some peers go by udp on the eth wire. */
static bool said_udp_peer, said_no_raw;

static void eth_close(mca_btl_esp_nic_t *nic)
{
    eth_nic_t *e = en(nic);
    if (e != NULL) {
        if (e->open) {
            ebtl_eth_close(&e->sock);
        }
        ebtl_fault_destroy(e->fault);
        free(e);
        nic->link = NULL;
    }
    esp_wire_udp_close(nic);
}

static int eth_open(mca_btl_esp_nic_t *nic, char *err, size_t errlen)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    if (esp_wire_udp_open(nic, err, errlen) != 0) {
        return -1;
    }
    eth_nic_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    nic->link = e;
    if (nic->iface.loopback) {
        return 0;   /* no link: udp */
    }
    char why[512];
    if (ebtl_eth_open(&e->sock, &nic->iface, (uint16_t) c->eth_type, 0, why, sizeof(why)) != 0) {
        if (!said_no_raw) {
            said_no_raw = true;
            EBTL_SHOW_HELP("eth-wire-unusable", why, ebtl_help_host());
        }
        return 0;   /* udp on this NIC, as the message says */
    }
    e->open = true;
    e->fault = ebtl_mca_faults_create(&c->base.faults, 3, 2, e->sock.max_payload);
    nic->max_payload = e->sock.max_payload;   /* a frame: no IP or UDP header */
    return 0;
}

/* The udp wire's record, and the MAC and ethertype where the raw socket
 * is open. */
static void eth_publish(const mca_btl_esp_nic_t *nic, ebtl_modex_addr_t *rec)
{
    const eth_nic_t *e = en(nic);
    esp_wire_udp_publish(nic, rec);
    if (e->open) {
        rec->link_kind = EBTL_MODEX_LINK_ETHER;
        rec->link_len = 6;
        rec->link_arg = e->sock.ethertype;
        memcpy(rec->link, e->sock.mac, 6);
    }
}

static int eth_resolve(const mca_btl_esp_nic_t *nic, const ebtl_modex_addr_t *rec,
                       bool same_host, esp_wire_dest_t to[2], size_t *max_payload)
{
    eth_nic_t *e = en(nic);
    if (e->open && !same_host && rec->link_kind == EBTL_MODEX_LINK_ETHER && rec->link_len == 6
        && rec->link_arg == e->sock.ethertype && ebtl_modex_on_link(&nic->iface, rec)) {
        for (int ch = 0; ch < 2; ch++) {
            to[ch].way = ESP_WAY_LINK;
            memcpy(to[ch].u.mac, rec->link, 6);
        }
        *max_payload = rec->mtu;   /* no IP or UDP header in the frame */
        return 0;
    }
    if (e->open && !same_host && !said_udp_peer) {
        char buf[96];
        said_udp_peer = true;
        EBTL_SHOW_HELP("eth-wire-peer-by-udp", ebtl_help_host(), nic->iface.name,
                       ebtl_if_format(&nic->iface, buf, sizeof(buf)),
                       rec->link_kind != EBTL_MODEX_LINK_ETHER
                           ? "it has no raw Ethernet socket (see its own message)"
                           : rec->link_arg != e->sock.ethertype
                               ? "it uses another btl_esp_eth_type"
                               : "its address is not on this NIC's subnet (routed)");
    }
    e->udp_peers++;
    return esp_wire_udp_resolve(nic, rec, same_host, to, max_payload);
}

static const char *eth_format(const esp_wire_dest_t *to, char *buf, size_t len)
{
    if (to->way == ESP_WAY_UDP) {
        return ebtl_sockaddr_format(&to->u.ip, buf, len);
    }
    return ebtl_eth_mac_format(to->u.mac, buf, len);
}

static void eth_queue(mca_btl_esp_module_t *m, mca_btl_esp_nic_t *nic, int ch,
                      const esp_wire_dest_t *to, const struct iovec *iov, int iovcnt)
{
    if (to->way == ESP_WAY_UDP) {
        esp_wire_udp_queue(m, nic, ch, to, iov, iovcnt);
        return;
    }
    /* copied into the ring now; a full ring that stays full drops it, which
     * the engine treats as loss */
    (void) ebtl_eth_queue(&en(nic)->sock, to->u.mac, iov, iovcnt);
}

static void eth_flush(mca_btl_esp_module_t *m)
{
    (void) ebtl_dgram_txq_flush(&m->txq);
    for (size_t i = 0; i < m->num_nics; i++) {
        eth_nic_t *e = en(&m->nics[i]);
        if (e->open && ebtl_eth_tx_pending(&e->sock) > 0) {
            (void) ebtl_eth_flush(&e->sock);
        }
    }
}

/* The ring's frames, with the padding of short frames cut off (the header
 * says how long the datagram is; the parser still checks it). */
static int ring_read(void *src, ebtl_dgram_msg_t *out, unsigned max)
{
    ebtl_eth_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    int n = ebtl_eth_recv(src, msgs, max);
    for (int i = 0; i < n; i++) {
        size_t len = msgs[i].len;
        if (len <= ETH_MIN_PAYLOAD) {
            /* up to the minimum: a VLAN tag removed after padding leaves less */
            size_t declared = esp_hdr_declared_len(msgs[i].buf, len);
            if (declared != 0 && declared < len) {
                len = declared;
            }
        }
        out[i].buf = msgs[i].buf;
        out[i].len = len;
    }
    return n;
}

static int eth_recv(mca_btl_esp_nic_t *nic, unsigned q, ebtl_dgram_msg_t *out, unsigned max,
                    uint64_t now)
{
    eth_nic_t *e = en(nic);
    if (q < RXQ_RING) {
        if (e->open && e->udp_peers == 0 && e->ring_reads % UDP_IDLE_EVERY != 0
            && !ebtl_dgram_rx_buffered(&nic->sock[q])) {
            return 0;
        }
        return ebtl_dgram_recv(&nic->sock[q], out, max, now);
    }
    if (!e->open) {
        return 0;
    }
    e->ring_reads++;
    return esp_wire_recv_filtered(e->fault, &e->rx, out, max, now, ring_read, &e->sock);
}

static bool eth_rx_buffered(const mca_btl_esp_nic_t *nic, unsigned q)
{
    const eth_nic_t *e = en(nic);
    if (q < RXQ_RING) {
        return ebtl_dgram_rx_buffered(&nic->sock[q]);
    }
    return e->open && (esp_wire_rx_pending(&e->rx) || ebtl_eth_rx_buffered(&e->sock));
}

/* The RX ring's socket and the UDP sockets (peers off the link). */
static int eth_wait_fds(const mca_btl_esp_nic_t *nic, int *out, int max)
{
    const eth_nic_t *e = en(nic);
    int n = 0;
    if (e->open && max > 0) {
        out[n++] = e->sock.fd;
    }
    return n + esp_wire_udp_wait_fds(nic, out + n, max - n);
}

static uint64_t eth_rx_drops(const mca_btl_esp_nic_t *nic)
{
    eth_nic_t *e = en(nic);
    uint64_t d = esp_wire_udp_rx_drops(nic);
    if (e->open) {
        (void) ebtl_eth_kernel_stats(&e->sock);
        d += e->sock.stats.rx_kernel_drops;
    }
    return d;
}

static void eth_stats(const mca_btl_esp_nic_t *nic, ebtl_dgram_stats_t *w,
                      ebtl_fault_stats_t *faults, bool *gso, bool *gro)
{
    eth_nic_t *e = en(nic);
    esp_wire_udp_stats(nic, w, faults, gso, gro);
    if (e->open) {
        (void) ebtl_eth_kernel_stats(&e->sock);
        const ebtl_eth_stats_t *s = &e->sock.stats;
        w->tx_datagrams += s->tx_frames;
        w->tx_bytes += s->tx_bytes;
        w->tx_errors += s->tx_errors;
        w->rx_datagrams += s->rx_frames;
        w->rx_bytes += s->rx_bytes;
        w->rx_truncated += s->rx_truncated;
        w->rx_kernel_drops += s->rx_kernel_drops;
        ebtl_fault_stats_add(faults, e->fault);
    }
}

/* The raw socket's own counters, for btl_esp_verbose. */
void esp_wire_eth_report(const mca_btl_esp_module_t *m, unsigned rank)
{
    if (m->wire != &esp_wire_eth) {
        return;
    }
    for (size_t i = 0; i < m->num_nics; i++) {
        const eth_nic_t *e = en(&m->nics[i]);
        if (!e->open) {
            opal_output(0, "btl esp stats rank %u: nic %zu (%s) eth: not open (udp only)", rank, i,
                        m->nics[i].iface.name);
            continue;
        }
        const ebtl_eth_stats_t *s = &e->sock.stats;
        opal_output(0, "btl esp stats rank %u: nic %zu (%s) eth: tx_frames=%llu tx_flushes=%llu "
                    "tx_errors=%llu rx_frames=%llu rx_dropped_foreign=%llu rx_dropped_own=%llu "
                    "rx_short=%llu rx_truncated=%llu rx_kernel_drops=%llu", rank, i,
                    m->nics[i].iface.name, (unsigned long long) s->tx_frames,
                    (unsigned long long) s->tx_flushes, (unsigned long long) s->tx_errors,
                    (unsigned long long) s->rx_frames, (unsigned long long) s->rx_dropped_foreign,
                    (unsigned long long) s->rx_dropped_own, (unsigned long long) s->rx_short,
                    (unsigned long long) s->rx_truncated,
                    (unsigned long long) s->rx_kernel_drops);
    }
}

const esp_wire_ops_t esp_wire_eth = {
    .name = "eth",
    .rx_queues = 3,
    .rx_prio_mask = 1u << ESP_CH_PRIO | 1u << RXQ_RING,
    .init = esp_wire_udp_init,
    .open = eth_open,
    .close = eth_close,
    .publish = eth_publish,
    .resolve = eth_resolve,
    .format = eth_format,
    .queue = eth_queue,
    .flush = eth_flush,
    .recv = eth_recv,
    .rx_buffered = eth_rx_buffered,
    .wait_fds = eth_wait_fds,
    .rx_drops = eth_rx_drops,
    .stats = eth_stats,
};

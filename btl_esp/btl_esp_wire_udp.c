/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The udp wire (the default): two UDP sockets per NIC, the priority channel
 * for ACKs and tiny fragments and the data channel for the rest, a send
 * queue flushed at the end of every pass with GSO (common/ebtl_dgram.[ch]).
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"

#include <errno.h>
#include <string.h>

/* The priority channel carries small datagrams: a modest buffer. */
#define PRIO_BUF (1u << 20)

/* The kernel refused a datagram because the way is closed (route gone,
 * interface down, firewall): the paths that go that way are dead now, not
 * after the engine's liveness time. Rare: a scan of the peers will do. */
static void udp_unreachable(void *arg, const ebtl_dgram_sock_t *s, const ebtl_sockaddr_t *to,
                            int err)
{
    mca_btl_esp_module_t *m = arg;
    (void) err;
    for (uint32_t p = 0; p < m->num_peers; p++) {
        mca_btl_esp_endpoint_t *ep = opal_pointer_array_get_item(&m->peers, (int) p);
        for (unsigned k = 0; ep != NULL && k < ep->npaths; k++) {
            const mca_btl_esp_nic_t *nic = &m->nics[ep->path[k].nic];
            for (int ch = 0; ch < 2; ch++) {
                if (&nic->sock[ch] == s && ep->path[k].to[ch].way == ESP_WAY_UDP
                    && ebtl_sockaddr_equal(&ep->path[k].to[ch].u.ip, to)) {
                    esp_proto_path_unreachable(m->proto, ep->peer, k, ebtl_dgram_now_ns());
                }
            }
        }
    }
}

void esp_wire_udp_init(mca_btl_esp_module_t *m)
{
    ebtl_dgram_txq_init(&m->txq);
    m->txq.unreachable = udp_unreachable;
    m->txq.unreachable_arg = m;
}

void esp_wire_udp_close(mca_btl_esp_nic_t *nic)
{
    for (int ch = 0; ch < 2; ch++) {
        /* ebtl_dgram_close destroys the fault layer too */
        ebtl_dgram_close(&nic->sock[ch]);
    }
}

int esp_wire_udp_open(mca_btl_esp_nic_t *nic, char *err, size_t errlen)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    nic->sock[0].fd = nic->sock[1].fd = -1;
    ebtl_dgram_open_args_t data = {&nic->iface, 0, c->rcvbuf_bytes, c->sndbuf_bytes, c->gro != 0};
    ebtl_dgram_open_args_t prio = {&nic->iface, 0, PRIO_BUF, PRIO_BUF, false};
    if (ebtl_dgram_open(&nic->sock[ESP_CH_DATA], &data, err, errlen) != 0
        || ebtl_dgram_open(&nic->sock[ESP_CH_PRIO], &prio, err, errlen) != 0) {
        return -1;
    }
    for (int ch = 0; ch < 2; ch++) {
        nic->sock[ch].fault = ebtl_mca_faults_create(&c->base.faults, 2, (unsigned) ch,
                                                   EBTL_DGRAM_MAX_PAYLOAD);
        if (!c->gso) {
            nic->sock[ch].gso = false;
        }
    }
    nic->max_payload = nic->sock[ESP_CH_DATA].max_payload;
    nic->rcvbuf = nic->sock[ESP_CH_DATA].rcvbuf;
    return 0;
}

static uint16_t local_port(const ebtl_dgram_sock_t *s)
{
    return ntohs(s->family == AF_INET ? s->local.u.in4.sin_port : s->local.u.in6.sin6_port);
}

void esp_wire_udp_publish(const mca_btl_esp_nic_t *nic, ebtl_modex_addr_t *rec)
{
    rec->mtu = nic->sock[ESP_CH_DATA].mtu;
    rec->port = local_port(&nic->sock[ESP_CH_DATA]);
    rec->port2 = local_port(&nic->sock[ESP_CH_PRIO]);
}

int esp_wire_udp_resolve(const mca_btl_esp_nic_t *nic, const ebtl_modex_addr_t *rec,
                         bool same_host, esp_wire_dest_t to[2], size_t *max_payload)
{
    (void) nic;
    (void) same_host;
    if (rec->port == 0 || rec->port2 == 0) {
        return -1;
    }
    int family = rec->family == 4 ? AF_INET : AF_INET6;
    size_t ip_udp = family == AF_INET ? 28u : 48u;
    to[ESP_CH_DATA].way = to[ESP_CH_PRIO].way = ESP_WAY_UDP;
    ebtl_sockaddr_set(&to[ESP_CH_DATA].u.ip, family, rec->addr, rec->port);
    ebtl_sockaddr_set(&to[ESP_CH_PRIO].u.ip, family, rec->addr, rec->port2);
    *max_payload = rec->mtu > ip_udp ? rec->mtu - ip_udp : 0;
    return 0;
}

static const char *udp_format(const esp_wire_dest_t *to, char *buf, size_t len)
{
    return ebtl_sockaddr_format(&to->u.ip, buf, len);
}

void esp_wire_udp_queue(mca_btl_esp_module_t *m, mca_btl_esp_nic_t *nic, int ch,
                        const esp_wire_dest_t *to, const struct iovec *iov, int iovcnt)
{
    (void) ebtl_dgram_txq_add(&m->txq, &nic->sock[ch], &to->u.ip, iov, iovcnt);
}

static void udp_flush(mca_btl_esp_module_t *m)
{
    (void) ebtl_dgram_txq_flush(&m->txq);
}

/* Receive queues: one per channel, numbered as the channels. */
static int udp_recv(mca_btl_esp_nic_t *nic, unsigned q, ebtl_dgram_msg_t *out, unsigned max,
                    uint64_t now)
{
    return ebtl_dgram_recv(&nic->sock[q], out, max, now);
}

static bool udp_rx_buffered(const mca_btl_esp_nic_t *nic, unsigned q)
{
    return ebtl_dgram_rx_buffered(&nic->sock[q]);
}

int esp_wire_udp_wait_fds(const mca_btl_esp_nic_t *nic, int *out, int max)
{
    int n = 0;
    for (int ch = 0; ch < 2 && n < max; ch++) {
        if (nic->sock[ch].fd >= 0) {
            out[n++] = nic->sock[ch].fd;
        }
    }
    return n;
}

uint64_t esp_wire_udp_rx_drops(const mca_btl_esp_nic_t *nic)
{
    return ebtl_dgram_kernel_drops(&nic->sock[0]) + ebtl_dgram_kernel_drops(&nic->sock[1]);
}

void esp_wire_udp_stats(const mca_btl_esp_nic_t *nic, ebtl_dgram_stats_t *w,
                      ebtl_fault_stats_t *faults, bool *gso, bool *gro)
{
    for (int ch = 0; ch < 2; ch++) {
        const ebtl_dgram_sock_t *s = &nic->sock[ch];
        w->tx_datagrams += s->stats.tx_datagrams;
        w->tx_bytes += s->stats.tx_bytes;
        w->tx_gso += s->stats.tx_gso;
        w->tx_gso_refused += s->stats.tx_gso_refused;
        w->tx_errors += s->stats.tx_errors;
        w->rx_datagrams += s->stats.rx_datagrams;
        w->rx_bytes += s->stats.rx_bytes;
        w->rx_gro += s->stats.rx_gro;
        w->rx_truncated += s->stats.rx_truncated;
        w->rx_kernel_drops += ebtl_dgram_kernel_drops(s);
        *gso |= ch == ESP_CH_DATA && s->gso;
        *gro |= ch == ESP_CH_DATA && s->gro;
        ebtl_fault_stats_add(faults, s->fault);
    }
}

const esp_wire_ops_t esp_wire_udp = {
    .name = "udp",
    .rx_queues = 2,
    .rx_prio_mask = 1u << ESP_CH_PRIO,
    .init = esp_wire_udp_init,
    .open = esp_wire_udp_open,
    .close = esp_wire_udp_close,
    .publish = esp_wire_udp_publish,
    .resolve = esp_wire_udp_resolve,
    .format = udp_format,
    .queue = esp_wire_udp_queue,
    .flush = udp_flush,
    .recv = udp_recv,
    .rx_buffered = udp_rx_buffered,
    .wait_fds = esp_wire_udp_wait_fds,
    .rx_drops = esp_wire_udp_rx_drops,
    .stats = esp_wire_udp_stats,
};

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The ofi wire (btl_esp_wire=ofi): one libfabric FI_EP_DGRAM endpoint per
 * NIC (common/ebtl_ofi.[ch]), for fabrics whose datagram service is
 * libfabric's (EFA, usNIC; here the udp provider). Both channels share the
 * endpoint; peers are reached through its address vector, filled from the
 * endpoint names in the modex.
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"

#include <errno.h>
#include <string.h>

#include "ebtl_ofi.h"

/* A NIC's state on this wire (nic->link). */
typedef struct ofi_nic {
    ebtl_ofi_ep_t *ep;
    ebtl_fault_t *fault;        /* the test-only fault layer, NULL when off */
    esp_wire_rx_t rx;
} ofi_nic_t;

static ofi_nic_t *of(const mca_btl_esp_nic_t *nic)
{
    return nic->link;
}

static void ofi_init(mca_btl_esp_module_t *m)
{
    (void) m;
}

static void ofi_close(mca_btl_esp_nic_t *nic)
{
    ofi_nic_t *o = of(nic);
    if (o != NULL) {
        ebtl_ofi_close(o->ep);
        ebtl_fault_destroy(o->fault);
        free(o);
        nic->link = NULL;
    }
}

static int ofi_open(mca_btl_esp_nic_t *nic, char *err, size_t errlen)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    const char *prov = c->ofi_provider != NULL ? c->ofi_provider : "";
    ofi_nic_t *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    nic->link = o;
    if (ebtl_ofi_open(&o->ep, prov, &nic->iface, 0, err, errlen) != 0) {
        return -1;
    }
    uint8_t name[EBTL_OFI_NAME_MAX];
    size_t len = ebtl_ofi_name(o->ep, name, sizeof(name));
    if (len == 0 || len > EBTL_MODEX_LINK_MAX) {
        snprintf(err, errlen, "libfabric provider %s: its endpoint names are %zu bytes, more "
                 "than the %d the modex record carries; use another provider "
                 "(btl_esp_ofi_provider) or btl_esp_wire=udp", ebtl_ofi_provider(o->ep), len,
                 EBTL_MODEX_LINK_MAX);
        return -1;
    }
    nic->max_payload = ebtl_ofi_max_payload(o->ep);
    if (nic->max_payload > UINT16_MAX) {
        nic->max_payload = UINT16_MAX;   /* what the record's link_arg carries */
    }
    nic->rcvbuf = (size_t) ebtl_ofi_attr(o->ep)->rx_depth * nic->max_payload;
    o->fault = ebtl_mca_faults_create(&c->base.faults, 1, 0, nic->max_payload);
    return 0;
}

/* The record: the endpoint's name, and (in link_arg) the largest datagram
 * it takes. */
static void ofi_publish(const mca_btl_esp_nic_t *nic, ebtl_modex_addr_t *rec)
{
    rec->mtu = nic->iface.mtu;
    rec->link_kind = EBTL_MODEX_LINK_OFI;
    rec->link_len = (uint8_t) ebtl_ofi_name(of(nic)->ep, rec->link, sizeof(rec->link));
    rec->link_arg = (uint16_t) nic->max_payload;
}

static int ofi_resolve(const mca_btl_esp_nic_t *nic, const ebtl_modex_addr_t *rec,
                       bool same_host, esp_wire_dest_t to[2], size_t *max_payload)
{
    (void) same_host;
    uint64_t addr;
    if (rec->link_kind != EBTL_MODEX_LINK_OFI
        || ebtl_ofi_insert(of(nic)->ep, rec->link, rec->link_len, &addr) != 0) {
        return -1;
    }
    for (int ch = 0; ch < 2; ch++) {
        to[ch].way = ESP_WAY_LINK;
        to[ch].u.fi_addr = addr;
    }
    *max_payload = rec->link_arg;
    return 0;
}

static const char *ofi_format(const esp_wire_dest_t *to, char *buf, size_t len)
{
    snprintf(buf, len, "fi_addr %llu", (unsigned long long) to->u.fi_addr);
    return buf;
}

/* The endpoint copies each datagram into a bounce buffer and the provider
 * sends it at once: nothing waits for the flush. A datagram it cannot take
 * now is lost, as on a full socket; the engine resends it. */
static void ofi_queue(mca_btl_esp_module_t *m, mca_btl_esp_nic_t *nic, int ch,
                      const esp_wire_dest_t *to, const struct iovec *iov, int iovcnt)
{
    (void) m;
    (void) ch;
    (void) ebtl_ofi_send(of(nic)->ep, to->u.fi_addr, iov, iovcnt);
}

static void ofi_flush(mca_btl_esp_module_t *m)
{
    (void) m;
}

static int ofi_read(void *src, ebtl_dgram_msg_t *out, unsigned max)
{
    ebtl_ofi_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    int n = ebtl_ofi_recv(src, msgs, max);
    for (int i = 0; i < n; i++) {
        out[i].buf = msgs[i].buf;
        out[i].len = msgs[i].len;
    }
    return n;
}

static int ofi_recv(mca_btl_esp_nic_t *nic, unsigned q, ebtl_dgram_msg_t *out, unsigned max,
                    uint64_t now)
{
    (void) q;
    ofi_nic_t *o = of(nic);
    return esp_wire_recv_filtered(o->fault, &o->rx, out, max, now, ofi_read, o->ep);
}

static bool ofi_rx_buffered(const mca_btl_esp_nic_t *nic, unsigned q)
{
    (void) q;
    return esp_wire_rx_pending(&of(nic)->rx);
}

static void ofi_stats(const mca_btl_esp_nic_t *nic, ebtl_dgram_stats_t *w,
                      ebtl_fault_stats_t *faults, bool *gso, bool *gro)
{
    (void) gso;
    (void) gro;
    const ebtl_ofi_stats_t *s = ebtl_ofi_stats(of(nic)->ep);
    w->tx_datagrams += s->tx_datagrams;
    w->tx_bytes += s->tx_bytes;
    w->tx_errors += s->tx_errors + s->tx_eagain;
    w->rx_datagrams += s->rx_datagrams;
    w->rx_bytes += s->rx_bytes;
    w->rx_truncated += s->rx_truncated;
    ebtl_fault_stats_add(faults, of(nic)->fault);
}

const esp_wire_ops_t esp_wire_ofi = {
    .name = "ofi",
    .rx_queues = 1,
    .rx_prio_mask = 1u,
    .init = ofi_init,
    .open = ofi_open,
    .close = ofi_close,
    .publish = ofi_publish,
    .resolve = ofi_resolve,
    .format = ofi_format,
    .queue = ofi_queue,
    .flush = ofi_flush,
    .recv = ofi_recv,
    .rx_buffered = ofi_rx_buffered,
    .wait_fds = NULL,           /* no wait object asked of the provider: the thread ticks */
    .rx_drops = NULL,           /* a provider's drops are not counted where we can read them */
    .stats = ofi_stats,
};

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * What every wire shares: the chosen wire opened on each selected interface
 * (a NIC), the modex record that publishes them, the engine's transmit
 * callback (datagrams queued during a pass, flushed at its end) and
 * receiving. The wires themselves are btl_esp_wire_*.c.
 */
#include "ebtl_config.h"
#include "btl_esp.h"
#include "btl_esp_endpoint.h"

#include <errno.h>
#include <string.h>

#include <opal/util/proc.h>

#include "ebtl_help.h"

/* Batches read from one channel per progress pass at most. */
#define RX_BATCHES_PER_PASS 4

int esp_wire_open(mca_btl_esp_module_t *m)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    m->wire = c->wire == ESP_WIRE_ETH ? &esp_wire_eth : &esp_wire_udp;
#ifdef EBTL_HAVE_LIBFABRIC
    if (c->wire == ESP_WIRE_OFI) {
        m->wire = &esp_wire_ofi;
    }
#endif
    m->nics = calloc(c->base.ifaces.count, sizeof(*m->nics));
    if (m->nics == NULL) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    m->wire->init(m);
    m->num_nics = 0;
    for (size_t i = 0; i < c->base.ifaces.count; i++) {
        mca_btl_esp_nic_t *nic = &m->nics[m->num_nics];
        char err[512];
        memset(nic, 0, sizeof(*nic));
        nic->iface = c->base.ifaces.selected[i];
        nic->place = c->base.ifaces.prefer_near ? c->base.ifaces.place[i] : EBTL_NIC_UNKNOWN;
        if (m->wire->open(nic, err, sizeof(err)) != 0) {
            char buf[96];
            EBTL_SHOW_HELP("interface-unusable", ebtl_if_format(&nic->iface, buf, sizeof(buf)), err,
                           ebtl_help_host());
            m->wire->close(nic);
            continue;
        }
        m->num_nics++;
    }
    if (m->num_nics == 0) {
        free(m->nics);
        m->nics = NULL;
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}

void esp_wire_close(mca_btl_esp_module_t *m)
{
    for (size_t i = 0; i < m->num_nics; i++) {
        m->wire->close(&m->nics[i]);
    }
    free(m->nics);
    m->nics = NULL;
    m->num_nics = 0;
}

int esp_wire_modex_send(mca_btl_esp_module_t *m)
{
    ebtl_modex_addr_t addrs[EBTL_MODEX_MAX_ADDRS];
    size_t n = 0;
    for (size_t i = 0; i < m->num_nics && n < EBTL_MODEX_MAX_ADDRS; i++, n++) {
        const mca_btl_esp_nic_t *nic = &m->nics[i];
        memset(&addrs[n], 0, sizeof(addrs[n]));
        addrs[n].family = nic->iface.family == AF_INET ? 4 : 6;
        addrs[n].prefixlen = (uint8_t) nic->iface.prefixlen;
        addrs[n].net_id = (uint16_t) i;
        memcpy(addrs[n].addr, nic->iface.addr, sizeof(addrs[n].addr));
        m->wire->publish(nic, &addrs[n]);
    }
    uint8_t buf[256 + EBTL_MODEX_MAX_ADDRS * sizeof(ebtl_modex_wire_addr_t)];
    size_t len = ebtl_modex_encode(EBTL_MODEX_KIND_ESP, m->base.epoch, addrs, n, buf, sizeof(buf));
    return ebtl_modex_send(&mca_btl_esp_component.base.super.btl_version, buf, len);
}

void esp_wire_transmit(void *ctx, uint32_t peer, unsigned path, enum esp_channel ch,
                       const struct iovec *iov, int iovcnt)
{
    mca_btl_esp_module_t *m = ctx;
    mca_btl_esp_endpoint_t *ep = opal_pointer_array_get_item(&m->peers, (int) peer);
    if (ep == NULL || path >= ep->npaths) {
        return;
    }
    /* The payload pieces stay valid until the flush at the end of this pass:
     * they belong to segments not yet acknowledged (a retransmission acked
     * in the same pass would be a duplicate the receiver drops by number). */
    m->wire->queue(m, &m->nics[ep->path[path].nic], ch, &ep->path[path].to[ch], iov, iovcnt);
}

int esp_wire_recv_filtered(ebtl_fault_t *f, esp_wire_rx_t *rx, ebtl_dgram_msg_t *out,
                           unsigned max, uint64_t now, esp_wire_read_fn read, void *src)
{
    if (max > EBTL_DGRAM_RX_BATCH) {
        max = EBTL_DGRAM_RX_BATCH;
    }
    if (f == NULL) {
        return read(src, out, max);
    }
    if (rx->at == rx->n) {
        /* the source's buffers stay valid until its next read, which waits
         * until everything the filter returned has been handed on */
        int n = read(src, out, max);
        if (n < 0) {
            return n;
        }
        for (int i = 0; i < n; i++) {
            rx->pkt[i].buf = out[i].buf;
            rx->pkt[i].len = out[i].len;
            memset(rx->pkt[i].from, 0, sizeof(rx->pkt[i].from));
        }
        rx->n = ebtl_fault_filter(f, rx->pkt, (unsigned) n,
                                  sizeof(rx->pkt) / sizeof(rx->pkt[0]), now);
        rx->at = 0;
    }
    unsigned k = 0;
    for (; k < max && rx->at < rx->n; k++, rx->at++) {
        out[k].buf = rx->pkt[rx->at].buf;
        out[k].len = rx->pkt[rx->at].len;
        memset(&out[k].from, 0, sizeof(out[k].from));
    }
    return (int) k;
}

bool esp_wire_rx_pending(const esp_wire_rx_t *rx)
{
    return rx->at < rx->n;
}

/* Every read is a system call, and the latency of a small message is a few
 * of them: the priority queues of a NIC in use (udp: the priority socket)
 * are read every pass, the others every pass while traffic is recent
 * ("hot"), else every few passes; NICs no path uses yet once in a while. */
#define IDLE_NIC_POLL_EVERY 64
#define COLD_DATA_POLL_EVERY 8
#define HOT_PASSES 4096

static bool should_poll(const mca_btl_esp_module_t *m, const mca_btl_esp_nic_t *nic, unsigned q,
                        unsigned pass)
{
    if (!nic->active) {
        return pass % IDLE_NIC_POLL_EVERY == 0;
    }
    return (m->wire->rx_prio_mask >> q & 1u) != 0 || pass - nic->last_rx[q] < HOT_PASSES
           || pass % COLD_DATA_POLL_EVERY == 0;
}

/* A NIC's drop count is read at most this often (a system call per queue). */
#define DROPS_READ_NS (1000 * 1000)

/* Every queue of nic was read empty: note whether the kernel dropped
 * datagrams since we last looked (the process was away and a buffer
 * filled). */
static void read_drops(mca_btl_esp_module_t *m, mca_btl_esp_nic_t *nic, uint64_t now)
{
    if (m->wire->rx_drops == NULL || now - nic->drops_read_ns < DROPS_READ_NS) {
        return;
    }
    nic->drops_read_ns = now;
    uint64_t d = m->wire->rx_drops(nic);
    if (d > nic->drops_seen) {
        nic->drops_seen = d;
        m->drops_unreported = true;
    }
}

/* After drops, once every NIC in use was read empty in one pass, what the
 * peers sent and we lack is lost, not late (nor waiting on another NIC,
 * when they stripe): tell them (ESP_F_LOSS) rather than wait for their
 * timers. */
static void report_drops(mca_btl_esp_module_t *m, uint64_t now)
{
    m->drops_unreported = false;
    esp_proto_rx_overflow(m->proto, now);
    m->wire->flush(m);
}

int esp_wire_poll(mca_btl_esp_module_t *m, uint64_t now)
{
    int total = 0;
    ebtl_dgram_msg_t msgs[EBTL_DGRAM_RX_BATCH];
    unsigned pass = m->passes++;
    bool all_drained = true;
    for (size_t i = 0; i < m->num_nics; i++) {
        mca_btl_esp_nic_t *nic = &m->nics[i];
        bool drained = true;
        /* The last queues first: the priority ones (ACKs, tiny messages). */
        for (unsigned q = m->wire->rx_queues; q-- > 0;) {
            if (!should_poll(m, nic, q, pass)) {
                drained = false;
                continue;
            }
            int b;
            for (b = 0; b < RX_BATCHES_PER_PASS; b++) {
                int n = m->wire->recv(nic, q, msgs, EBTL_DGRAM_RX_BATCH, now);
                for (int k = 0; k < n; k++) {
                    esp_proto_input_via(m->proto, (unsigned) i, msgs[k].buf, msgs[k].len, now);
                }
                esp_proto_flush_acks(m->proto, now);
                if (n <= 0) {
                    break;
                }
                nic->active = true;   /* a peer sends here */
                nic->last_rx[q] = pass;
                total += n;
                /* Answers (ACKs, data) go out before the next batch. */
                m->wire->flush(m);
                if (n < EBTL_DGRAM_RX_BATCH && !m->wire->rx_buffered(nic, q)) {
                    break;   /* drained: another read now would only cost a system call */
                }
            }
            drained = drained && b < RX_BATCHES_PER_PASS;
        }
        if (drained) {
            read_drops(m, nic, now);
        } else if (nic->active) {
            all_drained = false;
        }
    }
    if (m->drops_unreported && all_drained) {
        report_drops(m, now);
    }
    return total;
}

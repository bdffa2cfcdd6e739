/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The wires esp runs on (btl_esp_wire): each moves datagrams for one
 * selected interface (a NIC) and knows nothing of reliability. What all
 * wires share (opening every NIC, the modex record, the engine's transmit
 * callback, polling) is btl_esp_wire.c; each wire is one file behind this
 * interface: btl_esp_wire_udp.c, ...
 */
#ifndef MCA_BTL_ESP_WIRE_H
#define MCA_BTL_ESP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ebtl_dgram.h"
#include "ebtl_modex.h"

struct mca_btl_esp_module;
struct mca_btl_esp_nic;

/* Where a datagram goes, as the wire resolved it from a peer's modex
 * record: by UDP, or straight on the wire's own link. */
enum esp_wire_way { ESP_WAY_UDP = 0, ESP_WAY_LINK = 1 };
typedef struct esp_wire_dest {
    enum esp_wire_way way;
    union {
        ebtl_sockaddr_t ip;  /* UDP: the peer's address and port */
        uint8_t mac[6];      /* eth: the peer's MAC */
        uint64_t fi_addr;    /* ofi: the peer in the address vector */
    } u;
} esp_wire_dest_t;

/* Most receive queues a NIC of any wire has. */
#define ESP_WIRE_MAX_RXQ 3

typedef struct esp_wire_ops {
    const char *name;
    /* Receive queues per NIC (recv's q: 0..rx_queues-1, polled from the
     * last down), and which of them are read in every progress pass (ACKs,
     * tiny messages: bit q set); the others while traffic is recent. */
    unsigned rx_queues;
    unsigned rx_prio_mask;
    /* Once per module, before any NIC is opened. */
    void (*init)(struct mca_btl_esp_module *m);
    /* Open nic (its iface set, the rest zero): set nic->max_payload and
     * nic->rcvbuf. Returns 0, or -1 with one message in err saying what to
     * do; close then undoes what was opened. */
    int (*open)(struct mca_btl_esp_nic *nic, char *err, size_t errlen);
    void (*close)(struct mca_btl_esp_nic *nic);
    /* Fill this wire's fields of nic's modex record (ports, link address). */
    void (*publish)(const struct mca_btl_esp_nic *nic, ebtl_modex_addr_t *rec);
    /* A peer's record into where each channel sends to it from nic, and the
     * largest datagram that record's interface takes; same_host: the peer
     * runs on this host. -1: this wire cannot reach it. */
    int (*resolve)(const struct mca_btl_esp_nic *nic, const ebtl_modex_addr_t *rec,
                   bool same_host, esp_wire_dest_t to[2], size_t *max_payload);
    /* "10.1.2.3:4567" for messages. */
    const char *(*format)(const esp_wire_dest_t *to, char *buf, size_t len);
    /* Queue one datagram for the end of the pass. The first iovec entry
     * (headers, <= EBTL_DGRAM_HDR_COPY bytes) is copied; the others stay
     * valid until flush. */
    void (*queue)(struct mca_btl_esp_module *m, struct mca_btl_esp_nic *nic, int ch,
                  const esp_wire_dest_t *to, const struct iovec *iov, int iovcnt);
    /* Hand everything queued to the kernel/provider. */
    void (*flush)(struct mca_btl_esp_module *m);
    /* Up to max datagrams of receive queue q, without blocking; each buffer
     * valid until the next recv on that queue. Returns the count or -errno. */
    int (*recv)(struct mca_btl_esp_nic *nic, unsigned q, ebtl_dgram_msg_t *out, unsigned max,
                uint64_t now);
    /* Datagrams already read wait for the next recv on q. */
    bool (*rx_buffered)(const struct mca_btl_esp_nic *nic, unsigned q);
    /* Add nic's counters to sum; gso/gro: whether they are on. */
    /* The descriptors that become readable when a datagram comes in, for
     * the progress thread to sleep on (into out, at most max; returns how
     * many, 0 when the wire has none: the thread then ticks). */
    int (*wait_fds)(const struct mca_btl_esp_nic *nic, int *out, int max);
    /* Datagrams for nic the kernel dropped so far (its queues were full),
     * a system call or two; NULL when the wire cannot tell. */
    uint64_t (*rx_drops)(const struct mca_btl_esp_nic *nic);
    void (*stats)(const struct mca_btl_esp_nic *nic, ebtl_dgram_stats_t *sum,
                  ebtl_fault_stats_t *faults, bool *gso, bool *gro);
} esp_wire_ops_t;

/* btl_esp_wire.c: receiving through the test-only fault layer, for wires
 * whose datagrams do not come from common/ebtl_dgram (which has its own).
 * read: up to max datagrams from src, each valid until the next read. */
typedef int (*esp_wire_read_fn)(void *src, ebtl_dgram_msg_t *out, unsigned max);
typedef struct esp_wire_rx {
    ebtl_fault_pkt_t pkt[EBTL_DGRAM_RX_BATCH + 8];   /* the filter's output */
    unsigned n, at;                                 /* of which at.. wait to be returned */
} esp_wire_rx_t;
/* Without a fault layer (f NULL): read(src, out, max). With one: what the
 * last filter pass left, else a read put through the filter. */
int esp_wire_recv_filtered(ebtl_fault_t *f, esp_wire_rx_t *rx, ebtl_dgram_msg_t *out,
                           unsigned max, uint64_t now, esp_wire_read_fn read, void *src);
/* The filter's output waits to be returned. */
bool esp_wire_rx_pending(const esp_wire_rx_t *rx);

/* btl_esp_wire_eth.c; the report prints its raw sockets' counters
 * (btl_esp_verbose), nothing on another wire */
extern const esp_wire_ops_t esp_wire_eth;
void esp_wire_eth_report(const struct mca_btl_esp_module *m, unsigned rank);

/* btl_esp_wire_ofi.c (with libfabric) */
extern const esp_wire_ops_t esp_wire_ofi;

/* btl_esp_wire_udp.c; its parts are the eth wire's way to peers off the
 * link (routed, on this host) */
extern const esp_wire_ops_t esp_wire_udp;
void esp_wire_udp_init(struct mca_btl_esp_module *m);
int esp_wire_udp_open(struct mca_btl_esp_nic *nic, char *err, size_t errlen);
void esp_wire_udp_close(struct mca_btl_esp_nic *nic);
void esp_wire_udp_publish(const struct mca_btl_esp_nic *nic, ebtl_modex_addr_t *rec);
int esp_wire_udp_resolve(const struct mca_btl_esp_nic *nic, const ebtl_modex_addr_t *rec,
                         bool same_host, esp_wire_dest_t to[2], size_t *max_payload);
void esp_wire_udp_queue(struct mca_btl_esp_module *m, struct mca_btl_esp_nic *nic, int ch,
                        const esp_wire_dest_t *to, const struct iovec *iov, int iovcnt);
int esp_wire_udp_wait_fds(const struct mca_btl_esp_nic *nic, int *out, int max);
uint64_t esp_wire_udp_rx_drops(const struct mca_btl_esp_nic *nic);
void esp_wire_udp_stats(const struct mca_btl_esp_nic *nic, ebtl_dgram_stats_t *sum,
                        ebtl_fault_stats_t *faults, bool *gso, bool *gro);

#endif

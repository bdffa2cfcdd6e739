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

/* Where a datagram goes on a wire, as the wire resolved it from a peer's
 * modex record. */
typedef union esp_wire_dest {
    ebtl_sockaddr_t ip;      /* udp: the peer's address and port */
} esp_wire_dest_t;

typedef struct esp_wire_ops {
    const char *name;
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
     * largest datagram that record's interface takes. -1: this wire cannot
     * reach it. */
    int (*resolve)(const struct mca_btl_esp_nic *nic, const ebtl_modex_addr_t *rec,
                   esp_wire_dest_t to[2], size_t *max_payload);
    /* "10.1.2.3:4567" for messages. */
    const char *(*format)(const esp_wire_dest_t *to, char *buf, size_t len);
    /* Queue one datagram for the end of the pass. The first iovec entry
     * (headers, <= EBTL_DGRAM_HDR_COPY bytes) is copied; the others stay
     * valid until flush. */
    void (*queue)(struct mca_btl_esp_module *m, struct mca_btl_esp_nic *nic, int ch,
                  const esp_wire_dest_t *to, const struct iovec *iov, int iovcnt);
    /* Hand everything queued to the kernel/provider. */
    void (*flush)(struct mca_btl_esp_module *m);
    /* Up to max datagrams of channel ch, without blocking; each buffer valid
     * until the next recv on that channel. Returns the count or -errno. */
    int (*recv)(struct mca_btl_esp_nic *nic, int ch, ebtl_dgram_msg_t *out, unsigned max,
                uint64_t now);
    /* Datagrams already read wait for the next recv on ch. */
    bool (*rx_buffered)(const struct mca_btl_esp_nic *nic, int ch);
    /* Add nic's counters to sum; gso/gro: whether they are on. */
    void (*stats)(const struct mca_btl_esp_nic *nic, ebtl_dgram_stats_t *sum,
                  ebtl_fault_stats_t *faults, bool *gso, bool *gro);
} esp_wire_ops_t;

/* btl_esp_wire_udp.c */
extern const esp_wire_ops_t esp_wire_udp;

#endif

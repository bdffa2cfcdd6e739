/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The libfabric datagram layer (esp's `ofi` wire): one FI_EP_DGRAM endpoint
 * of a libfabric provider (the `udp` provider, or whichever the host offers)
 * bound to one local address, with its own registered bounce buffers: a send
 * gathers the caller's pieces into one (after the provider's message prefix)
 * or injects them; receives are a ring of rx_depth posted buffers read
 * through the completion queue. Knows nothing of reliability; datagrams may
 * be lost, duplicated or reordered. Pure C, no Open MPI headers.
 *
 * Compiled only when configure found libfabric (EBTL_HAVE_LIBFABRIC).
 * One endpoint is not thread-safe: its caller serialises the calls.
 * Uses the FI_VERSION(1, 9) API (builds against libfabric 1.x and 2.x).
 */
#ifndef EBTL_OFI_H
#define EBTL_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ebtl_ifsel.h"

/* Largest payload of one datagram whatever the provider allows (its
 * buffers are allocated at this size at most): IPv4's 65535 - 20 - 8. */
#define EBTL_OFI_MAX_PAYLOAD 65507
/* Receive buffers when open is given rx_depth 0. */
#define EBTL_OFI_RX_DEPTH_DEFAULT 256
/* Send bounce buffers (for datagrams above the provider's inject size). */
#define EBTL_OFI_TX_BUFS 256
/* Completions read from the CQ per fi_cq_read call. */
#define EBTL_OFI_CQ_BATCH 32
/* A datagram whose sender the provider did not name (== FI_ADDR_NOTAVAIL). */
#define EBTL_OFI_ADDR_NONE UINT64_MAX
/* Longest endpoint name ebtl_ofi_name may report (a sockaddr_in6 is 28). */
#define EBTL_OFI_NAME_MAX 64

typedef struct ebtl_ofi_stats {
    uint64_t tx_datagrams, tx_bytes; /* accepted by the provider */
    uint64_t tx_inject;              /* of which sent with fi_inject (no completion) */
    uint64_t tx_eagain;              /* sends refused -EAGAIN (no buffer, provider busy) */
    uint64_t tx_errors;              /* sends the provider refused, or completed in error */
    uint64_t rx_datagrams, rx_bytes;
    uint64_t rx_errors;              /* receive completions in error (fi_cq_readerr) */
    uint64_t rx_truncated;           /* longer than the buffer: dropped (counted in
                                      * rx_errors too when the provider says
                                      * FI_ETRUNC; udp does not: it delivers them cut) */
    uint64_t rx_runt;                /* shorter than the message prefix: dropped */
    uint64_t rx_nosrc;               /* delivered without a source address */
    uint64_t rx_repost_eagain;       /* buffers the provider would not take back at once */
} ebtl_ofi_stats_t;

/* What the chosen provider reported (fi_getinfo's answer), for messages,
 * tests and tuning. */
typedef struct ebtl_ofi_attr {
    char provider[32];               /* fabric_attr->prov_name, e.g. "udp" */
    char fabric[64];                 /* fabric_attr->name, e.g. "127.0.0.1/32" */
    char domain[64];                 /* domain_attr->name, e.g. "lo" */
    uint32_t addr_format;            /* FI_SOCKADDR_IN, ... */
    size_t max_msg_size;             /* ep_attr->max_msg_size */
    size_t msg_prefix_size;          /* 0 unless the provider wants FI_MSG_PREFIX */
    size_t inject_size;              /* tx_attr->inject_size */
    size_t tx_size, rx_size;         /* tx_attr->size, rx_attr->size */
    int mr_mode;                     /* domain_attr->mr_mode (FI_MR_* bits) */
    uint64_t mode;                   /* info->mode (FI_MSG_PREFIX, FI_CONTEXT, ...) */
    size_t addrlen;                  /* bytes of an endpoint name (fi_getname) */
    bool source;                     /* FI_SOURCE granted: receives name their sender */
    bool mr_local;                   /* FI_MR_LOCAL: the buffers are registered */
    unsigned rx_depth;               /* receive buffers posted */
    unsigned tx_bufs;                /* send bounce buffers */
} ebtl_ofi_attr_t;

typedef struct ebtl_ofi_ep ebtl_ofi_ep_t;

/* One received datagram: buf is valid until the next ebtl_ofi_recv on the
 * same endpoint (its buffer is then posted again). from is the sender's
 * address as ebtl_ofi_insert gave it, or EBTL_OFI_ADDR_NONE when the
 * provider does not give sources (FI_SOURCE) or the sender was never
 * inserted. */
typedef struct ebtl_ofi_msg {
    void *buf;
    size_t len;
    uint64_t from;
} ebtl_ofi_msg_t;

/*
 * Open an FI_EP_DGRAM endpoint. provider: a libfabric provider name ("udp",
 * "sockets"), or NULL / "" for the best one available. iface: the local
 * address to bind (port 0: any free port); NULL lets the provider choose.
 * rx_depth: receive buffers to post (0: EBTL_OFI_RX_DEPTH_DEFAULT; at most
 * what the provider allows). Returns 0 and *ep, or a negative errno-style
 * code with one message in err naming the provider and libfabric's reason
 * (or, when no provider answers, the FI_EP_DGRAM providers this host has).
 */
int ebtl_ofi_open(ebtl_ofi_ep_t **ep, const char *provider, const ebtl_if_t *iface,
                  size_t rx_depth, char *err, size_t errlen);
/* Close everything open returned; NULL is harmless. */
void ebtl_ofi_close(ebtl_ofi_ep_t *ep);

/* The endpoint's address for the modex (fi_getname; for the udp provider a
 * struct sockaddr_in or sockaddr_in6). Returns its length, copying it into
 * buf only when len is large enough; 0 on failure. */
size_t ebtl_ofi_name(ebtl_ofi_ep_t *ep, void *buf, size_t len);

/* Add a peer's name (from the modex: untrusted) to the address vector.
 * Returns 0 and its address in *addr, -EINVAL when len is not the
 * provider's name length or the name's family does not match its address
 * format, or another negative code from fi_av_insert. */
int ebtl_ofi_insert(ebtl_ofi_ep_t *ep, const void *name, size_t len, uint64_t *addr);

/* Send one datagram gathered from iov (any number of pieces, copied before
 * return: the caller's buffers are free again at once) to addr. Returns 0,
 * -EMSGSIZE above ebtl_ofi_max_payload, -EAGAIN when no send buffer is free
 * or the provider is busy even after being progressed once (try again
 * later), or another negative code (counted in tx_errors). */
int ebtl_ofi_send(ebtl_ofi_ep_t *ep, uint64_t addr, const struct iovec *iov, int iovcnt);

/* Receive up to max datagrams without blocking (progresses the provider;
 * buffers returned by the previous call are posted again first). Returns
 * the count (0 when nothing is waiting) or a negative code on a CQ error.
 * Completions in error are counted (rx_errors) and their buffers reused. */
int ebtl_ofi_recv(ebtl_ofi_ep_t *ep, ebtl_ofi_msg_t *out, unsigned max);

/* Largest payload one datagram may carry: the provider's max_msg_size,
 * and for the udp provider what the interface's MTU allows without IP
 * fragmentation (MTU - 28 on IPv4, MTU - 48 on IPv6). */
size_t ebtl_ofi_max_payload(const ebtl_ofi_ep_t *ep);

/* The provider's name, e.g. "udp". */
const char *ebtl_ofi_provider(const ebtl_ofi_ep_t *ep);
const ebtl_ofi_attr_t *ebtl_ofi_attr(const ebtl_ofi_ep_t *ep);
const ebtl_ofi_stats_t *ebtl_ofi_stats(const ebtl_ofi_ep_t *ep);

/* The FI_EP_DGRAM providers fi_getinfo offers on this host, comma-separated
 * and each named once ("udp, sockets"), into buf; "none" when there are
 * none. */
const char *ebtl_ofi_providers(char *buf, size_t len);

#endif

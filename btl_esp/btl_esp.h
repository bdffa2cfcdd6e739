/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * btl esp: a reliable streaming protocol over unreliable datagrams.
 * Component and module types. The layers (docs/architecture.md):
 *   wire   btl_esp/btl_esp_wire*.[ch] datagrams on a wire (udp: common/ebtl_dgram.[ch])
 *   proto  btl_esp/esp_*.[ch]      the sans-I/O protocol engine
 *   btl    btl_esp/btl_esp_*.[ch]  this Open MPI glue
 */
#ifndef MCA_BTL_ESP_H
#define MCA_BTL_ESP_H

#include <opal_config.h>
#include <opal/class/opal_free_list.h>
#include <opal/class/opal_hash_table.h>
#include <opal/class/opal_pointer_array.h>
#include <opal/mca/btl/btl.h>

#include "ebtl_base.h"
#include "ebtl_dgram.h"
#include "ebtl_fault.h"
#include "ebtl_ifsel.h"
#include "ebtl_mca.h"
#include "ebtl_yield.h"
#include "esp_proto.h"
#include "btl_esp_wire.h"

/* Datagram backends the wire layer can use (btl_esp_wire). */
enum mca_btl_esp_wire { ESP_WIRE_UDP = 0, ESP_WIRE_OFI = 1, ESP_WIRE_ETH = 2 };

/* One selected local address, opened by the wire. */
typedef struct mca_btl_esp_nic {
    ebtl_if_t iface;
    size_t max_payload;                  /* largest datagram it sends whole */
    size_t rcvbuf;                       /* bytes the data channel queues */
    ebtl_dgram_sock_t sock[2];           /* udp (and eth's way off its link): a socket per
                                            channel (enum esp_channel) */
    void *link;                          /* eth, ofi: the wire's own state (its file's type) */
    bool active;                        /* a peer path uses it: polled every pass */
    ebtl_nic_place_t place;             /* near or far from our cores (btl_esp_if_locality) */
    unsigned last_rx[ESP_WIRE_MAX_RXQ]; /* pass of the last datagram, by receive queue */
    uint64_t drops_seen;                /* the kernel's drop count when last read (rx_drops) */
    uint64_t drops_read_ns;             /* ... read then */
} mca_btl_esp_nic_t;

/* A registered memory region (btl_register_mem): PUTs may write into it. */
typedef struct esp_reg_slot {
    uint64_t base, len;
    uint32_t gen;                        /* bumped on every reuse of the slot */
    int32_t next_free;                   /* -1: in use */
} esp_reg_slot_t;

typedef struct mca_btl_esp_module {
    ebtl_module_t base;      /* endpoints, lock, error callback, descriptors */
    const esp_wire_ops_t *wire;          /* what the NICs move datagrams on */
    mca_btl_esp_nic_t *nics;
    size_t num_nics;
    esp_proto_t *proto;
    ebtl_dgram_txq_t txq;                 /* udp: datagrams of this pass, sent at its end */
    opal_pointer_array_t peers;          /* endpoint by peer number (the references
                                            are base.peer_by_id's) */
    uint32_t num_peers;
    /* registrations for PUT targets */
    esp_reg_slot_t *regs;
    int32_t num_regs, reg_free;
    /* fragment descriptors besides base's */
    ebtl_frag_list_t frags_user;         /* header room only: data stays in user memory */
    ebtl_frag_list_t frags_put;          /* no payload room: PUT */
    unsigned passes;                     /* progress passes, for polling idle NICs */
    bool drops_unreported;               /* a NIC's kernel drops, not yet told to peers */
    /* the progress thread's waits for a CPU (btl_esp_module.c, cpu_wait) */
    uint64_t cpu_wait_next_ns, cpu_wait_total_ns, cpu_wait_slices, cpu_wait_ns;
    int cpu_wait_tid;                    /* the thread those totals are of */
    ebtl_yield_t yield;                  /* idle passes give the CPU away on a busy host */
} mca_btl_esp_module_t;

typedef struct mca_btl_esp_component {
    ebtl_component_t base;        /* Open MPI's component, interfaces, fault layer */

    /* MCA parameters (btl_esp_component.c) */
    char *wire_name;
    enum mca_btl_esp_wire wire;
    char *ofi_provider;          /* ofi: libfabric provider, "" the best one */
    int eth_type;                /* eth: the ethertype of esp frames */
    int window;
    int ack_delay_us, ack_every;
    int rto_min_us, rto_max_us, rto_init_us;
    int grant_delay_us;
    int peer_timeout_s;
    int resend_per_pass;
    char *rcvbuf, *sndbuf, *rcv_budget, *initial_burst, *hold_budget;
    size_t rcvbuf_bytes, sndbuf_bytes, rcv_budget_bytes, initial_burst_bytes, hold_budget_bytes;
    int tiny;
    int gso, gro;                /* UDP GSO on send, GRO on the data socket: 1 on, 0 off */
    int max_paths;               /* ways to one peer at most (one per NIC of ours) */
    int path_timeout_us, path_probe_us;
    int checksum;                /* 1 (or -1) every byte, 0 only each datagram's head */
    int compact;                 /* 1: the bulk of large messages in compact pieces */
    int put_release;             /* 1: a PUT completes when sent, its unacknowledged
                                    tail copied */
    int pace;                    /* 1: new data spread over the round trip (esp_send.c) */
    int fair;                    /* 1: the grant split by what each sender delivered */
    int yield_load;              /* an idle pass yields the CPU while the host's runnable
                                    threads exceed this % of its CPUs (0: never) */
    int port_min;
    int free_list_max;
    int verbose;

    mca_btl_esp_module_t *module;  /* the one module (all NICs, all peers) */
} mca_btl_esp_component_t;

OPAL_DECLSPEC extern mca_btl_esp_component_t mca_btl_esp_component;

/* Template every module starts from; holds the btl_esp_* base parameters. */
extern mca_btl_esp_module_t mca_btl_esp_module_template;

/* btl_esp_module.c */
int mca_btl_esp_module_init(mca_btl_esp_module_t *m);
int mca_btl_esp_progress(void);
/* Whether esp has data out or timers due (the progress thread ticks faster). */
bool mca_btl_esp_busy(void);
/* The sockets of esp's NICs, for the progress thread to sleep on. */
int mca_btl_esp_wait_fds(int *out, int max);

/* btl_esp_wire.c: the NICs on the chosen wire, the engine's transmit
 * callback, receiving */
int esp_wire_open(mca_btl_esp_module_t *m);
void esp_wire_close(mca_btl_esp_module_t *m);
int esp_wire_modex_send(mca_btl_esp_module_t *m);
int esp_wire_poll(mca_btl_esp_module_t *m, uint64_t now);
void esp_wire_transmit(void *ctx, uint32_t peer, unsigned path, enum esp_channel ch,
                       const struct iovec *iov, int iovcnt);

/* btl_esp_reg.c: registrations, PUT targets */
struct mca_btl_base_registration_handle_t *esp_reg_register(struct mca_btl_base_module_t *btl,
                                                            struct mca_btl_base_endpoint_t *ep,
                                                            void *base, size_t size,
                                                            uint32_t flags);
int esp_reg_deregister(struct mca_btl_base_module_t *btl,
                       struct mca_btl_base_registration_handle_t *handle);
void *esp_reg_put_target(void *ctx, uint32_t peer, uint64_t key, uint64_t addr, size_t len);
void esp_reg_fini(mca_btl_esp_module_t *m);

/* btl_esp_stats.c: counters at finalize and as MPI_T performance variables */
void esp_stats_register_pvars(void);
void esp_stats_report(mca_btl_esp_module_t *m);

/* Take the module lock (a no-op unless MPI_THREAD_MULTIPLE). */
#define ESP_LOCK(m) OPAL_THREAD_LOCK(&(m)->base.lock)
#define ESP_UNLOCK(m) OPAL_THREAD_UNLOCK(&(m)->base.lock)
/* Bytes queued for one peer and not yet sent beyond which a send of our
 * own copy no longer completes at once for ob1, but when the peer
 * acknowledges it: only progress reads the ACKs that let the queue move, and
 * a sender whose sends all completed at once might never wait in progress
 * (eager messages sent in a loop). The window and grant are full by then. */
#define ESP_SEND_INLINE_MAX (1u << 20)
/* ... and beyond which a send runs the engine's timers itself (a hundred
 * 64 KiB eager messages and more), so that a peer that stopped answering is
 * noticed even by a sender that never waits. */
#define ESP_SEND_BACKLOG_MAX (8u << 20)

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * btl sctp: MPI over SCTP on the userspace stack usrsctp.
 * Component and module types. The Open MPI glue (component, module,
 * endpoint, frag, stats) drives the transport beneath through
 * btl_sctp_stack.h; its layers are listed in btl_sctp_core.h.
 */
#ifndef MCA_BTL_SCTP_H
#define MCA_BTL_SCTP_H

#include <opal_config.h>
#include <opal/class/opal_free_list.h>
#include <opal/class/opal_hash_table.h>
#include <opal/class/opal_list.h>
#include <opal/mca/btl/btl.h>

#include "btl_sctp_stack.h"
#include "ebtl_base.h"
#include "ebtl_ifsel.h"
#include "ebtl_mca.h"
#include "ebtl_modex.h"
#include "ebtl_yield.h"

typedef struct mca_btl_sctp_module {
    ebtl_module_t base;      /* endpoints, lock, error callback, descriptors */
    ebtl_if_t *ifaces;           /* one (one-to-one) or all (one-to-many) local addresses */
    size_t num_ifaces;
    bsctp_stack_t stack;
    bool stack_open;
    opal_list_t pending;            /* fragments waiting for send-buffer room, in order per
                                       peer and stream (btl_sctp_module.c flush_pending) */
    uint32_t flush_pass;
    uint64_t flush_input, flush_ns; /* stack.input_datagrams and the clock at the last pass */
    uint8_t *scratch;               /* sendi builds its message here */
} mca_btl_sctp_module_t;

typedef struct mca_btl_sctp_component {
    ebtl_component_t base;        /* Open MPI's component, interfaces, fault layer */

    /* MCA parameters (btl_sctp_component.c) */
    char *mode_name;
    char *style_name;
    const bsctp_mode_t *mode;    /* how usrsctp runs (btl_sctp_mode.h) */
    const bsctp_style_t *style;  /* the socket style (btl_sctp_style.h) */
    int port;
    int rto_min_ms, rto_max_ms, rto_init_ms;
    int sack_delay_ms;
    int tail_probe_ms;
    int sack_freq;
    int sack_immediately;
    int peer_timeout_s;
    int heartbeat_ms;            /* inet mode: heartbeat interval, 0 off */
    int path_max_retrans;        /* inet mode: timeouts on a path before it fails */
    int cmt;                     /* inet mode: 1: concurrent multipath transfer */
    int streams;
    int sndbuf, rcvbuf;          /* the SCTP socket's buffers, bytes */
    int crc32c;                  /* 1: CRC32c on every packet; 0: skip it (btl_sctp_crc32c) */
    int stream_map;              /* 1: ob1's fragments spread over streams; 0: all on stream 0 */
    int max_burst;               /* packets one output pass may send; 0: no limit */
    int gso, gro;                /* conn mode: UDP GSO sends, UDP GRO reads (1: where the
                                    kernel has them) */
    int packet;                  /* conn mode: largest SCTP packet, bytes (0: a frame's; -1:
                                    chosen by the frame size) */
    int free_list_max;
    int yield_load;              /* an idle pass yields the CPU while the host's runnable
                                    threads exceed this % of its CPUs (0: never) */
    int verbose;                 /* 1: counters of each process at finalize */
    int test_drop_msg;           /* TESTING ONLY: drop the n-th fragment read (0: off) */

    mca_btl_sctp_module_t *module;  /* the first module (MPI_T counters read it) */
    /* one-to-many: the one module; one-to-one: one per local address */
    mca_btl_sctp_module_t *modules[EBTL_MODEX_MAX_ADDRS];
    size_t num_modules;
    ebtl_yield_t yield;          /* progress passes give the CPU away on a busy host
                                    (under modules[0]'s lock) */
} mca_btl_sctp_component_t;

OPAL_DECLSPEC extern mca_btl_sctp_component_t mca_btl_sctp_component;

/* Template every module starts from; holds the btl_sctp_* base parameters. */
extern mca_btl_sctp_module_t mca_btl_sctp_module_template;

int mca_btl_sctp_module_init(mca_btl_sctp_module_t *module, ebtl_if_t *ifaces, size_t count,
                             uint16_t sctp_port);
/* Publish every module's addresses in one modex record. */
int mca_btl_sctp_modex_send(void);
int mca_btl_sctp_progress(void);

/* Under btl_sctp_verbose >= 1, print the module's counters, usrsctp's and
 * the fault layer's as name=value lines (btl_sctp_stats.c). */
void bsctp_stats_report(mca_btl_sctp_module_t *m);
/* The same counters as MPI_T performance variables btl_sctp_<name>. */
void bsctp_stats_register_pvars(void);
/* Print every module's state on fd (a hung job: called from gdb). */
void mca_btl_sctp_dump_state(int fd);

#define BSCTP_LOCK(m) OPAL_THREAD_LOCK(&(m)->base.lock)
#define BSCTP_UNLOCK(m) OPAL_THREAD_UNLOCK(&(m)->base.lock)

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* An sctp endpoint: one peer process and the link (association) to it. */
#ifndef MCA_BTL_SCTP_ENDPOINT_H
#define MCA_BTL_SCTP_ENDPOINT_H

#include <opal_config.h>
#include <opal/class/opal_list.h>
#include <opal/util/proc.h>

#include <stdint.h>

struct mca_btl_sctp_module;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    struct mca_btl_sctp_module *module;
    opal_proc_t *proc;
    uint32_t link;            /* index in the transport: its AF_CONN address */
    /* Fragments waiting for send-buffer room, per stream (btl_sctp_streams.h):
     * a fragment may pass waiting ones only if none waits on its stream. */
    struct bsctp_ep_stream {
        uint32_t pending;     /* how many wait in the module's pending list */
        uint32_t blocked;     /* flush pass in which this stream stopped */
    } *streams;
    uint16_t num_streams;
    uint32_t flush_pass;      /* the pass min_fail belongs to */
    size_t min_fail;          /* smallest message refused in that pass */
};
typedef struct mca_btl_base_endpoint_t mca_btl_sctp_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_endpoint_t);

#endif

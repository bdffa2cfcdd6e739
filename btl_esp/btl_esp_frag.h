/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * esp fragment descriptors: what ob1 hands to send and put. Each embeds the
 * engine's message, so the engine sends straight from the descriptor's
 * segments (our buffer, or the user's memory) and keeps it until every byte
 * is acknowledged (super.held). The lists and alloc/free/prepare_src are
 * common/ebtl_frag's.
 */
#ifndef MCA_BTL_ESP_FRAG_H
#define MCA_BTL_ESP_FRAG_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>

#include "ebtl_frag.h"
#include "esp_proto.h"

/* What ob1 passes to btl_put as the peer's registration. */
struct mca_btl_base_registration_handle_t {
    uint64_t key;
    uint64_t base;
    uint64_t len;
};

typedef struct mca_btl_esp_frag {
    ebtl_frag_t super;
    esp_msg_t msg;
    /* PUT */
    mca_btl_base_rdma_completion_fn_t put_cb;
    void *put_local, *put_ctx, *put_cbdata;
    struct mca_btl_base_registration_handle_t *put_local_handle;
} mca_btl_esp_frag_t;

#endif

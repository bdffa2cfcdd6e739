/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* sctp endpoints: per-peer state of the module. */
#include "btl_sctp_endpoint.h"

#include <stdlib.h>

static void bsctp_endpoint_construct(mca_btl_sctp_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->link = 0;
    ep->streams = NULL;
    ep->num_streams = 0;
    ep->flush_pass = 0;
    ep->min_fail = 0;
}

static void bsctp_endpoint_destruct(mca_btl_sctp_endpoint_t *ep)
{
    free(ep->streams);
    ep->streams = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_endpoint_t, opal_list_item_t, bsctp_endpoint_construct,
                   bsctp_endpoint_destruct);

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * An esp endpoint: one peer process. It names the peer's number in the
 * protocol engine and the path datagrams take to it: which of our NICs, and
 * the peer's address and ports on that network (one per channel).
 */
#ifndef MCA_BTL_ESP_ENDPOINT_H
#define MCA_BTL_ESP_ENDPOINT_H

#include <opal_config.h>
#include <opal/class/opal_list.h>
#include <opal/util/proc.h>

#include "ebtl_dgram.h"
#include "ebtl_modex.h"
#include "esp_proto.h"
#include "btl_esp_wire.h"

struct mca_btl_esp_module;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    struct mca_btl_esp_module *module;
    opal_proc_t *proc;
    uint32_t peer;                 /* number in the protocol engine */
    uint64_t id;                   /* job id << 32 | rank */
    unsigned npaths;               /* ways to it, each a path of the engine */
    struct {
        size_t nic;                /* which of our NICs */
        bool routed;               /* its address is not on that NIC's subnet */
        esp_wire_dest_t to[2];     /* its address on that network, by channel */
    } path[ESP_MAX_PATHS];
};
typedef struct mca_btl_base_endpoint_t mca_btl_esp_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_esp_endpoint_t);

/*
 * Choose the paths to a peer from its published addresses
 * (ebtl_modex_choose_paths with the kernel's routes): each NIC of ours on
 * the same subnet as one of its addresses, then each other NIC of ours the
 * route to one of its addresses leaves by (loopback alone, and only when
 * the peer is on this host), at most max, far NICs (btl_esp_if_locality)
 * after the others. Fills nic[] and addr[] (indexes into addrs); returns
 * how many, 0 when no NIC of ours can reach it.
 */
int esp_endpoint_choose_paths(const struct mca_btl_esp_module *m, const ebtl_modex_addr_t *addrs,
                              int naddrs, bool same_host, size_t *nic, int *addr, int max);

/* Which of those paths are standby (esp_proto_set_paths): those by a far
 * NIC when another path is by a near one. Returns whether any is. */
bool esp_endpoint_standby_paths(const struct mca_btl_esp_module *m, const size_t *nic, int npaths,
                                bool *standby);

#endif

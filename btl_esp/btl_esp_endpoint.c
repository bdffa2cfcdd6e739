/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* esp endpoints: per-peer state of the module, and the choice of path. */
#include "btl_esp_endpoint.h"

#include <stdlib.h>

#include "btl_esp.h"

static void esp_endpoint_construct(mca_btl_esp_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->peer = 0;
    ep->npaths = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_esp_endpoint_t, opal_list_item_t, esp_endpoint_construct, NULL);

int esp_endpoint_choose_paths(const mca_btl_esp_module_t *m, const ebtl_modex_addr_t *addrs,
                              int naddrs, bool same_host, size_t *nic, int *addr, int max)
{
    /* The rule is common/'s; our NICs are those whose sockets opened, far
     * ones (btl_esp_if_locality) last. */
    ebtl_if_t *ifs = malloc(m->num_nics * sizeof(*ifs));
    bool *far = malloc(m->num_nics * sizeof(*far));
    int n = 0;
    if (ifs != NULL && far != NULL) {
        for (size_t i = 0; i < m->num_nics; i++) {
            ifs[i] = m->nics[i].iface;
            far[i] = m->nics[i].place == EBTL_NIC_FAR;
        }
        n = ebtl_modex_choose_paths_near_first(ifs, far, m->num_nics, addrs, naddrs, same_host,
                                               &ebtl_route_kernel, nic, addr, max);
    }
    free(ifs);
    free(far);
    return n;
}

bool esp_endpoint_standby_paths(const mca_btl_esp_module_t *m, const size_t *nic, int npaths,
                                bool *standby)
{
    bool any_far = false, any_other = false;
    for (int k = 0; k < npaths; k++) {
        standby[k] = m->nics[nic[k]].place == EBTL_NIC_FAR;
        any_far |= standby[k];
        any_other |= !standby[k];
    }
    return any_far && any_other;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The one place that knows which Open MPI series the components are built
 * for: 4.1 (BTL API 3.1) or 5.0 (BTL API 3.3). Everything else includes
 * this header and uses the names below; no other file tests
 * OPAL_MAJOR_VERSION. What changed between the series (PLATFORM.md, "Open
 * MPI 5"): the receive callback takes a receive descriptor, two headers
 * moved, the modex scope lost its OPAL_ prefix, a proc's host name became a
 * function. configure accepts only these two series.
 */
#ifndef EBTL_OMPI_H
#define EBTL_OMPI_H

#include <opal_config.h>
#include <string.h>

#include <opal/mca/btl/btl.h>
#include <opal/util/proc.h>

#if OPAL_MAJOR_VERSION == 4 && OPAL_MINOR_VERSION == 1
#define EBTL_OMPI_5 0
#include <opal/mca/pmix/pmix.h>
#include <opal/threads/mutex.h>
#elif OPAL_MAJOR_VERSION == 5 && OPAL_MINOR_VERSION == 0
#define EBTL_OMPI_5 1
#include <opal/mca/pmix/pmix-internal.h>
#include <opal/mca/threads/mutex.h>
#else
#error "these components build for Open MPI 4.1 or 5.0 (configure checks this)"
#endif

/* The modex scope of the address records: every process of the job. */
#if EBTL_OMPI_5
#define EBTL_MODEX_SCOPE PMIX_GLOBAL
#else
#define EBTL_MODEX_SCOPE OPAL_PMIX_GLOBAL
#endif

/* The host a process runs on, for messages ("?" when unknown). */
static inline const char *ebtl_ompi_proc_host(opal_proc_t *proc)
{
    const char *host = NULL;
    if (proc != NULL) {
#if EBTL_OMPI_5
        host = opal_get_proc_hostname(proc);
#else
        host = proc->proc_hostname;
#endif
    }
    return host != NULL ? host : "?";
}

/* Hand ob1 one received fragment of one contiguous segment through the
 * callback registered for tag. ep: the sender's endpoint, or NULL where the
 * transport does not have it at hand (5.0 allows that; 4.1 has no field). */
static inline void ebtl_ompi_deliver(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                                     uint8_t tag, const void *data, size_t len)
{
    const mca_btl_active_message_callback_t *reg = &mca_btl_base_active_message_trigger[tag];
    if (reg->cbfunc == NULL) {
        return;   /* no one listens to this tag: nothing ob1 sent */
    }
    mca_btl_base_segment_t seg = {.seg_addr.pval = (void *) data, .seg_len = len};
#if EBTL_OMPI_5
    const mca_btl_base_receive_descriptor_t des = {
        .endpoint = ep, .des_segments = &seg, .des_segment_count = 1, .tag = tag,
        .cbdata = reg->cbdata};
    reg->cbfunc(btl, &des);
#else
    (void) ep;
    mca_btl_base_descriptor_t des;
    memset(&des, 0, sizeof(des));
    des.des_segments = &seg;
    des.des_segment_count = 1;
    reg->cbfunc(btl, tag, &des, reg->cbdata);
#endif
}

#endif /* EBTL_OMPI_H */

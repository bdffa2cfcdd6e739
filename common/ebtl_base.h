/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The module base both components share: what a module holds for every
 * peer (endpoints by list and by process, the lock, ob1's error callback),
 * its fragment descriptors (ebtl_frag.h), and the module functions that
 * work on those alone: add_procs, del_procs, alloc, free, prepare_src,
 * register_error, and the end of finalize. A component's module embeds
 * ebtl_module_t first and makes its template with EBTL_MODULE_TEMPLATE;
 * its endpoints begin with an opal_list_item_t.
 */
#ifndef EBTL_BASE_H
#define EBTL_BASE_H

#include <opal_config.h>
#include <opal/class/opal_hash_table.h>
#include <opal/class/opal_list.h>
#include <opal/mca/btl/btl.h>
#include <opal/util/proc.h>

#include "ebtl_ompi.h"

#include "ebtl_frag.h"
#include "ebtl_modex.h"

typedef struct ebtl_module ebtl_module_t;

/* Make the endpoint for proc from the addresses it published (naddrs > 0),
 * or return OPAL_ERR_UNREACH when no network of ours reaches it. The new
 * endpoint (OBJ_NEW: one reference) belongs to the caller. */
typedef int (*ebtl_add_proc_fn_t)(ebtl_module_t *m, opal_proc_t *proc,
                                  const ebtl_modex_addr_t *addrs, int naddrs, uint64_t epoch,
                                  struct mca_btl_base_endpoint_t **ep);

struct ebtl_module {
    mca_btl_base_module_t super;
    opal_mutex_t lock;
    mca_btl_base_module_error_cb_fn_t error_cb;
    int failed;                       /* a peer failed: the job is ending */
    uint64_t epoch;                   /* random per module, published in the modex */

    /* endpoints: each has a reference from the list (del_procs drops it)
     * and one from the table */
    opal_list_t endpoints;
    opal_hash_table_t peer_by_id;     /* endpoint by ebtl_proc_id */
    enum ebtl_modex_kind modex_kind;  /* the record its peers publish */
    ebtl_add_proc_fn_t add_proc;      /* the component's part of adding a peer */
    size_t add_procs_heap;            /* heap bytes add_procs took ... */
    uint32_t add_procs_peers;         /* ... for this many peers */

    /* fragment descriptors */
    ebtl_frag_list_t frags_eager;     /* payload room: the eager limit */
    ebtl_frag_list_t frags_max;       /* payload room: the max send size */
    /* prepare_src leaves a contiguous payload in the user's memory when it
     * has at least inplace_min bytes and, with ob1's header, more than
     * inplace_above; the descriptor then comes from frags_inplace, whose
     * room holds ob1's header. SIZE_MAX: never. */
    ebtl_frag_list_t *frags_inplace;
    size_t inplace_min, inplace_above;
};

/* A component's module template: the module functions shared from here
 * and the component's own finalize, send and sendi, e.g.
 *   mca_btl_x_module_t mca_btl_x_module_template = {.base.super = {
 *       EBTL_MODULE_TEMPLATE(&mca_btl_x_component.super, x_finalize, x_send, x_sendi),
 *       .btl_put = ...}};
 * The component's register function fills in the limits and flags
 * (ebtl_mca_register_base_params). */
#define EBTL_MODULE_TEMPLATE(component, finalize, send, sendi)      \
    .btl_component = (component),                                   \
    .btl_add_procs = ebtl_module_add_procs,                         \
    .btl_del_procs = ebtl_module_del_procs,                         \
    .btl_finalize = (finalize),                                     \
    .btl_alloc = ebtl_alloc,                                        \
    .btl_free = ebtl_free,                                          \
    .btl_prepare_src = ebtl_prepare_src,                            \
    .btl_send = (send),                                             \
    .btl_sendi = (sendi),                                           \
    .btl_register_error = ebtl_module_register_error

/* Set up the shared part of a module copied from its template: the lists of
 * descriptors (each of frag_size bytes, the component's type; header_room
 * bytes before each payload), no in-place sends until the component sets
 * the policy. Its peers publish modex records of `kind`; add_proc makes
 * their endpoints. */
int ebtl_module_construct(ebtl_module_t *m, enum ebtl_modex_kind kind, ebtl_add_proc_fn_t add_proc,
                          size_t frag_size, size_t header_room, int free_list_max);

/* The endpoint of proc: the one made before, or a new one from its modex
 * record (the component's add_proc). Under the module lock. */
int ebtl_module_add_proc(ebtl_module_t *m, opal_proc_t *proc, struct mca_btl_base_endpoint_t **ep);

int ebtl_module_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                          struct opal_bitmap_t *reachable);
int ebtl_module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints);
/* The end of a component's finalize: endpoints, descriptors, the lock. */
int ebtl_module_finalize(struct mca_btl_base_module_t *btl);
int ebtl_module_register_error(struct mca_btl_base_module_t *btl,
                               mca_btl_base_module_error_cb_fn_t cb);

/* A fragment arrived from ep (NULL: not at hand): hand ob1 its bytes
 * (tag: ob1's active-message tag). */
static inline void ebtl_module_deliver(ebtl_module_t *m, struct mca_btl_base_endpoint_t *ep,
                                       uint8_t tag, const void *data, size_t len)
{
    ebtl_ompi_deliver(&m->super, ep, tag, data, len);
}

/* A peer failed (why: what the transport saw): say so once, naming its rank
 * and host, and end the job through ob1's error callback. proc may be NULL
 * (then `rank` names it). peer_timeout_s: the component's setting, which
 * the message suggests raising. never_reached: no connection to the peer
 * was ever made (the advice is then about addresses, not the timeout). */
void ebtl_module_peer_failed(ebtl_module_t *m, opal_proc_t *proc, unsigned rank, const char *why,
                             int peer_timeout_s, bool never_reached);

/* A process's identity as both components key peers: jobid << 32 | vpid. */
static inline uint64_t ebtl_proc_id(opal_process_name_t name)
{
    return (uint64_t) name.jobid << 32 | name.vpid;
}

/* 64 random bits (the kernel's, else the clock and process id). */
uint64_t ebtl_random64(void);

/* Publish this process's address record for component (encoded with
 * ebtl_modex_encode) to every process of the job. */
int ebtl_modex_send(const mca_base_component_t *component, const uint8_t *buf, size_t len);

/* Fetch and decode proc's address record that component published.
 * Returns the number of addresses (> 0), or OPAL_ERR_UNREACH when it
 * published none (the component is not running there) or a malformed one
 * (said once, naming the rank). */
int ebtl_modex_recv(const mca_base_component_t *component, enum ebtl_modex_kind kind,
                    struct opal_proc_t *proc, ebtl_modex_addr_t *addrs, size_t max,
                    uint64_t *epoch);

#endif

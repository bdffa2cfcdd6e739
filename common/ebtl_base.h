/*
 * What every module of both components shares: the endpoint list, its lock,
 * ob1's error callback, and the module functions that only manage those.
 * A component's module embeds ebtl_module_t first; its endpoints begin
 * with an opal_list_item_t.
 */
#ifndef EBTL_BASE_H
#define EBTL_BASE_H

#include <opal_config.h>
#include <opal/class/opal_list.h>
#include <opal/mca/btl/btl.h>
#include <opal/threads/mutex.h>
#include <opal/util/proc.h>

#include "ebtl_modex.h"

typedef struct ebtl_module {
    mca_btl_base_module_t super;
    opal_list_t endpoints;
    opal_mutex_t lock;
    mca_btl_base_module_error_cb_fn_t error_cb;
} ebtl_module_t;

/* Set up the shared part of a module copied from its template. */
void ebtl_module_construct(ebtl_module_t *module);

/* add_procs of a module without a data path: reaches nobody, so the BML
 * picks another BTL. */
int ebtl_module_add_procs_none(struct mca_btl_base_module_t *btl, size_t nprocs,
                                  struct opal_proc_t **procs,
                                  struct mca_btl_base_endpoint_t **endpoints,
                                  struct opal_bitmap_t *reachable);
int ebtl_module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                             struct opal_proc_t **procs,
                             struct mca_btl_base_endpoint_t **endpoints);
int ebtl_module_finalize(struct mca_btl_base_module_t *btl);
int ebtl_module_register_error(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_module_error_cb_fn_t cb);

/* A process's identity as both components key peers: jobid << 32 | vpid. */
static inline uint64_t ebtl_proc_id(opal_process_name_t name)
{
    return (uint64_t) name.jobid << 32 | name.vpid;
}

/* Fetch and decode proc's address record that component published.
 * Returns the number of addresses (> 0), or OPAL_ERR_UNREACH when it
 * published none (the component is not running there) or a malformed one
 * (said once, naming the rank). */
int ebtl_modex_recv(const mca_base_component_t *component, enum ebtl_modex_kind kind,
                       struct opal_proc_t *proc, ebtl_modex_addr_t *addrs, size_t max,
                       uint64_t *epoch);

#endif

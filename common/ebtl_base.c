/* Module functions both components share: endpoint bookkeeping. */
#include "ebtl_base.h"

#include <stdlib.h>

#include <opal/mca/pmix/pmix.h>

#include "ebtl_mca.h"

void ebtl_module_construct(ebtl_module_t *module)
{
    OBJ_CONSTRUCT(&module->endpoints, opal_list_t);
    /* Recursive: a receive callback into the PML may send at once. */
    OBJ_CONSTRUCT(&module->lock, opal_recursive_mutex_t);
    module->error_cb = NULL;
}

int ebtl_module_add_procs_none(struct mca_btl_base_module_t *btl, size_t nprocs,
                                  struct opal_proc_t **procs,
                                  struct mca_btl_base_endpoint_t **endpoints,
                                  struct opal_bitmap_t *reachable)
{
    (void) btl;
    (void) procs;
    (void) reachable;
    for (size_t i = 0; i < nprocs; i++) {
        endpoints[i] = NULL;
    }
    return OPAL_SUCCESS;
}

int ebtl_module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                             struct opal_proc_t **procs,
                             struct mca_btl_base_endpoint_t **endpoints)
{
    ebtl_module_t *module = (ebtl_module_t *) btl;
    (void) procs;
    OPAL_THREAD_LOCK(&module->lock);
    for (size_t i = 0; i < nprocs; i++) {
        opal_list_item_t *item = (opal_list_item_t *) endpoints[i];
        if (item != NULL) {
            opal_list_remove_item(&module->endpoints, item);
            OBJ_RELEASE(item);
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

int ebtl_module_finalize(struct mca_btl_base_module_t *btl)
{
    ebtl_module_t *module = (ebtl_module_t *) btl;
    OPAL_LIST_DESTRUCT(&module->endpoints);
    OBJ_DESTRUCT(&module->lock);
    return OPAL_SUCCESS;
}

int ebtl_module_register_error(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_module_error_cb_fn_t cb)
{
    ((ebtl_module_t *) btl)->error_cb = cb;
    return OPAL_SUCCESS;
}

int ebtl_modex_recv(const mca_base_component_t *component, enum ebtl_modex_kind kind,
                       struct opal_proc_t *proc, ebtl_modex_addr_t *addrs, size_t max,
                       uint64_t *epoch)
{
    uint8_t *buf = NULL;
    size_t size = 0;
    int rc;
    OPAL_MODEX_RECV(rc, component, &proc->proc_name, (uint8_t **) &buf, &size);
    if (rc != OPAL_SUCCESS || buf == NULL) {
        return OPAL_ERR_UNREACH;   /* the component is not running there */
    }
    int n = ebtl_modex_decode(kind, buf, size, addrs, max, epoch);
    free(buf);
    if (n <= 0) {
        EBTL_ERROR("btl %s: the address record of rank %u is malformed; not using %s to it",
                  component->mca_component_name, proc->proc_name.vpid,
                  component->mca_component_name);
        return OPAL_ERR_UNREACH;
    }
    return n;
}

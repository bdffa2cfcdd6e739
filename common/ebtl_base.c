/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The module base: set-up, peers and their endpoints, errors. */
#include "ebtl_base.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "ebtl_dgram.h"
#include "ebtl_help.h"
#include "ebtl_mca.h"

int ebtl_module_construct(ebtl_module_t *m, enum ebtl_modex_kind kind, ebtl_add_proc_fn_t add_proc,
                          size_t frag_size, size_t header_room, int free_list_max)
{
    /* Recursive: a receive callback into the PML may send at once. */
    OBJ_CONSTRUCT(&m->lock, opal_recursive_mutex_t);
    m->error_cb = NULL;
    m->failed = 0;
    m->epoch = ebtl_random64() | 1;
    OBJ_CONSTRUCT(&m->endpoints, opal_list_t);
    OBJ_CONSTRUCT(&m->peer_by_id, opal_hash_table_t);
    opal_hash_table_init(&m->peer_by_id, 64);
    m->modex_kind = kind;
    m->add_proc = add_proc;
    m->add_procs_heap = 0;
    m->add_procs_peers = 0;
    m->frags_inplace = &m->frags_eager;
    m->inplace_min = SIZE_MAX;
    m->inplace_above = SIZE_MAX;
    mca_btl_base_module_t *b = &m->super;
    if (ebtl_frag_list_init(&m->frags_eager, frag_size, header_room, b->btl_eager_limit,
                            free_list_max) != OPAL_SUCCESS
        || ebtl_frag_list_init(&m->frags_max, frag_size, header_room, b->btl_max_send_size,
                               free_list_max) != OPAL_SUCCESS) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int ebtl_module_add_proc(ebtl_module_t *m, opal_proc_t *proc, struct mca_btl_base_endpoint_t **out)
{
    uint64_t id = ebtl_proc_id(proc->proc_name);
    void *known;
    if (opal_hash_table_get_value_uint64(&m->peer_by_id, id, &known) == OPAL_SUCCESS) {
        *out = known;
        return OPAL_SUCCESS;
    }
    ebtl_modex_addr_t addrs[EBTL_MODEX_MAX_ADDRS];
    uint64_t epoch = 0;
    int n = ebtl_modex_recv(&m->super.btl_component->btl_version, m->modex_kind, proc, addrs,
                            EBTL_MODEX_MAX_ADDRS, &epoch);
    if (n < 0) {
        return n;
    }
    struct mca_btl_base_endpoint_t *ep = NULL;
    int rc = m->add_proc(m, proc, addrs, n, epoch, &ep);
    if (rc != OPAL_SUCCESS) {
        return rc;
    }
    opal_hash_table_set_value_uint64(&m->peer_by_id, id, ep);
    opal_list_append(&m->endpoints, (opal_list_item_t *) ep);
    OBJ_RETAIN(ep);   /* one reference for the list (del_procs), one for the table */
    *out = ep;
    return OPAL_SUCCESS;
}

int ebtl_module_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                          struct opal_bitmap_t *reachable)
{
    ebtl_module_t *m = (ebtl_module_t *) btl;
    opal_proc_t *me = opal_proc_local_get();
    OPAL_THREAD_LOCK(&m->lock);
    /* What a peer costs before any traffic, for the finalize report. */
    size_t heap_before = mallinfo2().uordblks;
    size_t peers_before = opal_hash_table_get_size(&m->peer_by_id);
    for (size_t i = 0; i < nprocs; i++) {
        struct mca_btl_base_endpoint_t *ep = NULL;
        endpoints[i] = NULL;
        if (procs[i] == me || ebtl_module_add_proc(m, procs[i], &ep) != OPAL_SUCCESS) {
            continue;
        }
        endpoints[i] = ep;
        if (reachable != NULL) {
            opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    size_t heap_after = mallinfo2().uordblks;
    m->add_procs_heap += heap_after > heap_before ? heap_after - heap_before : 0;
    m->add_procs_peers += (uint32_t) (opal_hash_table_get_size(&m->peer_by_id) - peers_before);
    OPAL_THREAD_UNLOCK(&m->lock);
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
    ebtl_module_t *m = (ebtl_module_t *) btl;
    uint64_t key;
    void *val, *node = NULL;
    int rc = opal_hash_table_get_first_key_uint64(&m->peer_by_id, &key, &val, &node);
    while (rc == OPAL_SUCCESS) {
        opal_object_t *ep = val;
        OBJ_RELEASE(ep);
        rc = opal_hash_table_get_next_key_uint64(&m->peer_by_id, &key, &val, node, &node);
    }
    OBJ_DESTRUCT(&m->peer_by_id);
    OPAL_LIST_DESTRUCT(&m->endpoints);
    OBJ_DESTRUCT(&m->frags_eager.super);
    OBJ_DESTRUCT(&m->frags_max.super);
    OBJ_DESTRUCT(&m->lock);
    return OPAL_SUCCESS;
}

int ebtl_module_register_error(struct mca_btl_base_module_t *btl,
                               mca_btl_base_module_error_cb_fn_t cb)
{
    ((ebtl_module_t *) btl)->error_cb = cb;
    return OPAL_SUCCESS;
}

void ebtl_module_peer_failed(ebtl_module_t *m, opal_proc_t *proc, unsigned rank, const char *why,
                             int peer_timeout_s, bool never_reached)
{
    const char *name = m->super.btl_component->btl_version.mca_component_name;
    const char *host = ebtl_ompi_proc_host(proc);
    unsigned vpid = proc ? (unsigned) proc->proc_name.vpid : rank;
    EBTL_SHOW_HELP(never_reached ? "peer-unreachable" : "peer-failed", name, vpid, host, why,
                   name, ebtl_help_host(), name, peer_timeout_s);
    /* What ob1 prints when it aborts the job. */
    char desc[512];
    snprintf(desc, sizeof(desc), "btl %s: rank %u (host %s) %s; ending the job", name, vpid,
             host, why);
    m->failed = 1;
    if (m->error_cb != NULL) {
        m->error_cb(&m->super, MCA_BTL_ERROR_FLAGS_FATAL, proc, desc);
    } else {
        opal_output(0, "btl %s: no error handler registered; aborting", name);
        abort();
    }
}

uint64_t ebtl_random64(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t) sizeof(v)) {
        v = ebtl_dgram_now_ns() ^ ((uint64_t) getpid() << 32);
    }
    return v;
}

int ebtl_modex_send(const mca_base_component_t *component, const uint8_t *buf, size_t len)
{
    int rc;
    OPAL_MODEX_SEND(rc, EBTL_MODEX_SCOPE, component, (void *) buf, len);
    return rc;
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
        const char *name = component->mca_component_name;
        EBTL_SHOW_HELP("malformed-modex", name, (unsigned) proc->proc_name.vpid, name,
                       ebtl_help_host(), ebtl_ompi_proc_host(proc));
        return OPAL_ERR_UNREACH;
    }
    return n;
}

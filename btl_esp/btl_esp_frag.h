/*
 * esp fragment descriptors: what ob1 hands to send and put. Each embeds the
 * engine's message, so the engine sends straight from the descriptor's
 * segments (our buffer, or the user's memory) and keeps it until every byte
 * is acknowledged.
 */
#ifndef MCA_BTL_ESP_FRAG_H
#define MCA_BTL_ESP_FRAG_H

#include <opal_config.h>
#include <opal/class/opal_free_list.h>
#include <opal/mca/btl/btl.h>

#include "esp_proto.h"

/* What ob1 passes to btl_put as the peer's registration. */
struct mca_btl_base_registration_handle_t {
    uint64_t key;
    uint64_t base;
    uint64_t len;
};

typedef struct mca_btl_esp_frag {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2];
    esp_msg_t msg;
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *list;        /* where it goes back */
    uint8_t *buf;                  /* our payload room (capacity bytes), or NULL */
    size_t capacity;
    bool in_engine;                /* sent, not yet acknowledged */
    bool pml_owns;                 /* ob1 still holds it (it frees it with btl_free) */
    /* PUT */
    mca_btl_base_rdma_completion_fn_t put_cb;
    void *put_local, *put_ctx, *put_cbdata;
    struct mca_btl_base_registration_handle_t *put_local_handle;
} mca_btl_esp_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_esp_frag_t);

struct mca_btl_esp_module;

/* Set up a free list of descriptors with `capacity` payload bytes each. */
int esp_frag_list_init(opal_free_list_t *list, size_t capacity, int max);

static inline mca_btl_esp_frag_t *esp_frag_get(opal_free_list_t *list)
{
    mca_btl_esp_frag_t *f = (mca_btl_esp_frag_t *) opal_free_list_get(list);
    if (f != NULL) {
        f->base.des_segment_count = 1;
        f->base.des_flags = 0;
        f->base.des_cbfunc = NULL;
        f->segments[0].seg_addr.pval = f->buf;
        f->segments[0].seg_len = 0;
        f->in_engine = false;
        f->pml_owns = true;
        f->endpoint = NULL;
    }
    return f;
}

static inline void esp_frag_return(mca_btl_esp_frag_t *f)
{
    opal_free_list_return(f->list, &f->base.super);
}

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Fragment descriptors: their lists, and alloc, free and prepare_src. */
#include "ebtl_frag.h"

#include <opal/runtime/opal.h>

#include "ebtl_base.h"

static void frag_construct(ebtl_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->buf = NULL;
    frag->capacity = 0;
    frag->list = NULL;
}

OBJ_CLASS_INSTANCE(ebtl_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

#define ALIGN8(n) (((n) + 7) & ~(size_t) 7)

/* ctx is the list: it knows where each element's payload room is. */
static int frag_init(opal_free_list_item_t *item, void *ctx)
{
    ebtl_frag_list_t *list = ctx;
    ebtl_frag_t *f = (ebtl_frag_t *) item;
    f->list = &list->super;
    f->capacity = list->capacity;
    f->buf = list->capacity ? (uint8_t *) f + list->buf_offset : NULL;
    return OPAL_SUCCESS;
}

int ebtl_frag_list_init(ebtl_frag_list_t *list, size_t frag_size, size_t header_room,
                        size_t capacity, int max)
{
    OBJ_CONSTRUCT(&list->super, opal_free_list_t);
    list->buf_offset = ALIGN8(frag_size) + ALIGN8(header_room);
    list->capacity = capacity;
    return opal_free_list_init(&list->super, list->buf_offset + capacity, opal_cache_line_size,
                               OBJ_CLASS(ebtl_frag_t), 0, 0, 8, max, 32, NULL, 0, NULL,
                               frag_init, list);
}

mca_btl_base_descriptor_t *ebtl_alloc(struct mca_btl_base_module_t *btl,
                                      struct mca_btl_base_endpoint_t *ep, uint8_t order,
                                      size_t size, uint32_t flags)
{
    ebtl_module_t *m = (ebtl_module_t *) btl;
    (void) order;
    ebtl_frag_list_t *list = size <= btl->btl_eager_limit ? &m->frags_eager
                             : size <= btl->btl_max_send_size ? &m->frags_max : NULL;
    ebtl_frag_t *f = list ? ebtl_frag_get(list) : NULL;
    if (f == NULL) {
        return NULL;
    }
    f->endpoint = ep;
    f->segments[0].seg_len = size;
    f->base.des_flags = flags;
    f->base.order = MCA_BTL_NO_ORDER;
    return &f->base;
}

int ebtl_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    ebtl_frag_t *f = (ebtl_frag_t *) des;
    (void) btl;
    f->pml_owns = false;
    if (!f->held) {
        ebtl_frag_return(f);
    }
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *ebtl_prepare_src(struct mca_btl_base_module_t *btl,
                                            struct mca_btl_base_endpoint_t *ep,
                                            struct opal_convertor_t *conv, uint8_t order,
                                            size_t reserve, size_t *size, uint32_t flags)
{
    ebtl_module_t *m = (ebtl_module_t *) btl;
    size_t max_data = *size;
    (void) order;
    if (reserve > btl->btl_max_send_size) {
        return NULL;
    }
    if (max_data + reserve > btl->btl_max_send_size) {
        max_data = btl->btl_max_send_size - reserve;
    }
    /* A contiguous payload the module's policy leaves in the user's memory
     * (a second segment, behind a descriptor with room for ob1's header);
     * anything else is packed behind ob1's header. */
    bool in_place = max_data >= m->inplace_min && reserve + max_data > m->inplace_above
                    && reserve <= m->frags_inplace->capacity && !opal_convertor_need_buffers(conv);
    ebtl_frag_t *f = ebtl_frag_get(in_place ? m->frags_inplace
                                   : reserve + max_data <= btl->btl_eager_limit ? &m->frags_eager
                                   : &m->frags_max);
    if (f == NULL) {
        return NULL;
    }
    /* In place, the convertor points iov_base at the data. */
    struct iovec iov = {.iov_base = in_place ? NULL : f->buf + reserve, .iov_len = max_data};
    uint32_t iov_count = 1;
    if (opal_convertor_pack(conv, &iov, &iov_count, &max_data) < 0 || (in_place && max_data == 0)) {
        ebtl_frag_return(f);
        return NULL;
    }
    if (in_place) {
        f->segments[0].seg_len = reserve;
        f->segments[1].seg_addr.pval = iov.iov_base;
        f->segments[1].seg_len = max_data;
        f->base.des_segment_count = 2;
    } else {
        f->segments[0].seg_len = reserve + max_data;
    }
    f->endpoint = ep;
    f->base.des_flags = flags;
    f->base.order = MCA_BTL_NO_ORDER;
    *size = max_data;
    return &f->base;
}

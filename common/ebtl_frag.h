/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Fragment descriptors both components hand to ob1, their free lists, and
 * the module functions that give them out (alloc, prepare_src) and take
 * them back (free).
 *
 * A component's descriptor embeds ebtl_frag_t first and adds what its
 * transport needs (esp: the engine's message; sctp: tag and stream). Each
 * free list element is the component's descriptor, then optional header
 * room, then the payload room `buf` points to (8-byte aligned):
 *
 *     | component descriptor | pad to 8 | header room | payload room ... |
 *                                                     ^ buf
 *
 * Segment 0 is ob1's header and any packed payload, in buf; segment 1, when
 * present, is a contiguous payload left in the user's memory.
 */
#ifndef EBTL_FRAG_H
#define EBTL_FRAG_H

#include <opal_config.h>
#include <opal/class/opal_free_list.h>
#include <opal/datatype/opal_convertor.h>
#include <opal/mca/btl/btl.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct ebtl_frag {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *list;        /* where it goes back */
    uint8_t *buf;                  /* payload room (capacity bytes), or NULL */
    size_t capacity;
    bool held;                     /* the transport still holds it (esp: not yet
                                      acknowledged; sctp: waiting for send-buffer room) */
    bool pml_owns;                 /* ob1 still holds it (it frees it with btl_free) */
} ebtl_frag_t;
OBJ_CLASS_DECLARATION(ebtl_frag_t);

/* A free list of descriptors, and the layout of its elements. */
typedef struct ebtl_frag_list {
    opal_free_list_t super;
    size_t buf_offset;             /* from the descriptor to its payload room */
    size_t capacity;               /* payload bytes */
} ebtl_frag_list_t;

/* Set up a list of descriptors of frag_size bytes (the component's type,
 * ebtl_frag_t first), each followed by header_room bytes (a multiple of 8)
 * and `capacity` payload bytes; buf is NULL when capacity is 0. max: the
 * most descriptors (-1: no limit). OBJ_DESTRUCT(&list->super) releases it. */
int ebtl_frag_list_init(ebtl_frag_list_t *list, size_t frag_size, size_t header_room,
                        size_t capacity, int max);

/* A descriptor from the list, ready for one segment in buf; NULL when the
 * list is at its limit. */
static inline ebtl_frag_t *ebtl_frag_get(ebtl_frag_list_t *list)
{
    ebtl_frag_t *f = (ebtl_frag_t *) opal_free_list_get(&list->super);
    if (f != NULL) {
        f->base.des_segment_count = 1;
        f->base.des_flags = 0;
        f->base.des_cbfunc = NULL;
        f->segments[0].seg_addr.pval = f->buf;
        f->segments[0].seg_len = 0;
        f->endpoint = NULL;
        f->held = false;
        f->pml_owns = true;
    }
    return f;
}

static inline void ebtl_frag_return(ebtl_frag_t *f)
{
    opal_free_list_return(f->list, &f->base.super);
}

/* The transport let go of a descriptor it held: it went out (status
 * OPAL_SUCCESS) or never will. ob1 learns it now, from the callback, unless
 * the send already completed for ob1 or ob1 freed it; the descriptor goes
 * back unless ob1 keeps it (no BTL ownership: ob1 frees it with btl_free,
 * maybe inside the callback). */
static inline void ebtl_frag_complete(struct mca_btl_base_module_t *btl, ebtl_frag_t *f, int status)
{
    f->held = false;
    if (!f->pml_owns) {
        ebtl_frag_return(f);
        return;
    }
    bool ours = (f->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) != 0;
    if (f->base.des_cbfunc != NULL) {
        f->base.des_cbfunc(btl, f->endpoint, &f->base, status);
    }
    if (ours) {
        ebtl_frag_return(f);
    }
}

/* The module functions (btl_alloc, btl_free, btl_prepare_src) on the lists
 * and policy of ebtl_module_t (ebtl_base.h). */
mca_btl_base_descriptor_t *ebtl_alloc(struct mca_btl_base_module_t *btl,
                                      struct mca_btl_base_endpoint_t *ep, uint8_t order,
                                      size_t size, uint32_t flags);
int ebtl_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *ebtl_prepare_src(struct mca_btl_base_module_t *btl,
                                            struct mca_btl_base_endpoint_t *ep,
                                            struct opal_convertor_t *conv, uint8_t order,
                                            size_t reserve, size_t *size, uint32_t flags);

/* sendi's copy: ob1's header then payload_size bytes from the convertor,
 * into dst. False when the convertor could not give them all; its position
 * is then where it was, so the normal path can start again. *pos: that
 * position, for a caller whose transport then refuses the bytes (0 when
 * there is no payload: Open MPI 5's ob1 then passes no convertor). */
static inline bool ebtl_sendi_pack(uint8_t *dst, struct opal_convertor_t *conv, const void *header,
                                   size_t header_size, size_t payload_size, size_t *pos)
{
    memcpy(dst, header, header_size);
    *pos = 0;
    if (payload_size > 0) {   /* else conv may be NULL (Open MPI 5's control messages) */
        *pos = conv->bConverted;
        struct iovec iov = {dst + header_size, payload_size};
        uint32_t n = 1;
        size_t max = payload_size;
        if (opal_convertor_pack(conv, &iov, &n, &max) < 0 || max != payload_size) {
            opal_convertor_set_position(conv, pos);
            return false;
        }
    }
    return true;
}

/* The transport refused what ebtl_sendi_pack packed: put the convertor
 * back to pos, where the normal path starts again. Without payload nothing
 * was taken from it (and Open MPI 5's ob1 may pass none, or one it never
 * prepared). */
static inline void ebtl_sendi_rewind(struct opal_convertor_t *conv, size_t payload_size, size_t pos)
{
    if (payload_size > 0) {
        opal_convertor_set_position(conv, &pos);
    }
}

/* sendi could not send now: ob1 gets a descriptor (if it asked) and sends
 * by the normal path. */
static inline int ebtl_sendi_busy(struct mca_btl_base_module_t *btl,
                                  struct mca_btl_base_endpoint_t *ep, uint8_t order, size_t size,
                                  uint32_t flags, mca_btl_base_descriptor_t **descriptor)
{
    if (descriptor != NULL) {
        *descriptor = ebtl_alloc(btl, ep, order, size, flags);
    }
    return OPAL_ERR_RESOURCE_BUSY;
}

#endif

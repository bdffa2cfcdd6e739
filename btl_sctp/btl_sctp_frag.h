/*
 * sctp fragment descriptors handed to and from ob1. The payload room
 * follows the descriptor, with the 8-byte message header just before it,
 * so a fragment goes to usrsctp_sendv as one buffer without a copy. A
 * large contiguous payload stays in the user's buffer instead, as a second
 * segment (ob1 counts the bytes a send delivered from the segments): the
 * fragment is then two pieces of one SCTP message.
 */
#ifndef MCA_BTL_SCTP_FRAG_H
#define MCA_BTL_SCTP_FRAG_H

#include <opal_config.h>
#include <opal/class/opal_free_list.h>
#include <opal/mca/btl/btl.h>

#include <stdint.h>

#include "btl_sctp_hdr.h"

typedef struct mca_btl_sctp_frag {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2];  /* ob1's header (and packed payload) in buf;
                                            the payload in the user's buffer, if any */
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *list;       /* where it goes back */
    uint8_t *buf;                 /* payload room (capacity bytes); the header is before it */
    size_t capacity;
    uint8_t tag;
    uint16_t sid;                 /* the SCTP stream it goes on (chosen once, at send) */
    bool pending;                 /* waiting in the module's pending list */
    bool pml_owns;                /* ob1 still holds it (frees it with btl_free) */
} mca_btl_sctp_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_t);

int bsctp_frag_list_init(opal_free_list_t *list, size_t capacity, int max);

static inline mca_btl_sctp_frag_t *bsctp_frag_get(opal_free_list_t *list)
{
    mca_btl_sctp_frag_t *f = (mca_btl_sctp_frag_t *) opal_free_list_get(list);
    if (f != NULL) {
        f->base.des_segment_count = 1;
        f->base.des_flags = 0;
        f->base.des_cbfunc = NULL;
        f->segments[0].seg_addr.pval = f->buf;
        f->segments[0].seg_len = 0;
        f->endpoint = NULL;
        f->pending = false;
        f->pml_owns = true;
    }
    return f;
}

static inline void bsctp_frag_return(mca_btl_sctp_frag_t *f)
{
    opal_free_list_return(f->list, &f->base.super);
}

#endif

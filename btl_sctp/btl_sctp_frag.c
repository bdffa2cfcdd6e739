/* sctp fragment descriptors: header room then payload room after the descriptor. */
#include "btl_sctp_frag.h"

#include <opal/runtime/opal.h>

static void bsctp_frag_construct(mca_btl_sctp_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->buf = NULL;
    frag->capacity = 0;
    frag->list = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_frag_t, mca_btl_base_descriptor_t, bsctp_frag_construct, NULL);

/* The descriptor is a multiple of 8 bytes long, so ob1's bytes after the
 * 8-byte header stay 8-byte aligned. */
#define FRAG_HDR_OFFSET ((sizeof(mca_btl_sctp_frag_t) + 7) & ~(size_t) 7)

static int frag_init(opal_free_list_item_t *item, void *ctx)
{
    opal_free_list_t *list = ctx;
    mca_btl_sctp_frag_t *f = (mca_btl_sctp_frag_t *) item;
    f->list = list;
    f->capacity = list->fl_frag_size - FRAG_HDR_OFFSET - sizeof(bsctp_wire_hdr_t);
    f->buf = (uint8_t *) f + FRAG_HDR_OFFSET + sizeof(bsctp_wire_hdr_t);
    return OPAL_SUCCESS;
}

int bsctp_frag_list_init(opal_free_list_t *list, size_t capacity, int max)
{
    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, FRAG_HDR_OFFSET + sizeof(bsctp_wire_hdr_t) + capacity,
                               opal_cache_line_size, OBJ_CLASS(mca_btl_sctp_frag_t), 0, 0, 8, max,
                               32, NULL, 0, NULL, frag_init, list);
}

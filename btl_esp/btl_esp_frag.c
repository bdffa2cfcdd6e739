/* esp fragment descriptors: payload room follows the descriptor. */
#include "btl_esp_frag.h"

#include <opal/runtime/opal.h>

static void esp_frag_construct(mca_btl_esp_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->buf = NULL;
    frag->capacity = 0;
    frag->list = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_esp_frag_t, mca_btl_base_descriptor_t, esp_frag_construct, NULL);

/* ctx is the list itself: its element size tells the payload room. */
static int frag_init(opal_free_list_item_t *item, void *ctx)
{
    opal_free_list_t *list = ctx;
    mca_btl_esp_frag_t *f = (mca_btl_esp_frag_t *) item;
    f->list = list;
    f->capacity = list->fl_frag_size - sizeof(mca_btl_esp_frag_t);
    f->buf = f->capacity ? (uint8_t *) (f + 1) : NULL;
    return OPAL_SUCCESS;
}

int esp_frag_list_init(opal_free_list_t *list, size_t capacity, int max)
{
    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, sizeof(mca_btl_esp_frag_t) + capacity, opal_cache_line_size,
                               OBJ_CLASS(mca_btl_esp_frag_t), 0, 0, 8, max, 32, NULL, 0, NULL,
                               frag_init, list);
}

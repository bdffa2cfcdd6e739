/* esp fragment descriptors: payload follows the descriptor in one allocation. */
#include "btl_esp_frag.h"

static void esp_frag_construct(mca_btl_esp_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->segment.seg_addr.pval = frag + 1;
    frag->segment.seg_len = 0;
    frag->endpoint = NULL;
    frag->capacity = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_esp_frag_t, mca_btl_base_descriptor_t, esp_frag_construct, NULL);

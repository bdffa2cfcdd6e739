/* esp endpoints: per-peer state of a module. */
#include "btl_esp_endpoint.h"

static void esp_endpoint_construct(mca_btl_esp_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->num_addrs = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_esp_endpoint_t, opal_list_item_t, esp_endpoint_construct, NULL);

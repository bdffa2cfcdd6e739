/* sctp endpoints: per-peer state of the module. */
#include "btl_sctp_endpoint.h"

static void sctp_endpoint_construct(mca_btl_sctp_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->link = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_endpoint_t, opal_list_item_t, sctp_endpoint_construct, NULL);

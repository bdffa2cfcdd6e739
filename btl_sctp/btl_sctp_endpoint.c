/* sctp endpoints: per-peer association state. */
#include "btl_sctp_endpoint.h"

static void sctp_endpoint_construct(mca_btl_sctp_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->num_addrs = 0;
    ep->assoc_id = 0;
    ep->connect_initiator = false;
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_endpoint_t, opal_list_item_t, sctp_endpoint_construct, NULL);

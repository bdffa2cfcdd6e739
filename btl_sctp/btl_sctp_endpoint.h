/* An sctp endpoint: one peer process and the link (association) to it. */
#ifndef MCA_BTL_SCTP_ENDPOINT_H
#define MCA_BTL_SCTP_ENDPOINT_H

#include <opal_config.h>
#include <opal/class/opal_list.h>
#include <opal/util/proc.h>

#include <stdint.h>

struct mca_btl_sctp_module;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    struct mca_btl_sctp_module *module;
    opal_proc_t *proc;
    uint32_t link;            /* index in the transport: its AF_CONN address */
};
typedef struct mca_btl_base_endpoint_t mca_btl_sctp_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_endpoint_t);

#endif

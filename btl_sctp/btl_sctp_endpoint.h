/* An sctp endpoint: one peer process, its association and stream state. */
#ifndef MCA_BTL_SCTP_ENDPOINT_H
#define MCA_BTL_SCTP_ENDPOINT_H

#include <opal_config.h>
#include <opal/class/opal_list.h>
#include <opal/util/proc.h>

#include <stdbool.h>
#include <stdint.h>

#include "esp_modex.h"

struct mca_btl_sctp_module;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    struct mca_btl_sctp_module *module;
    opal_proc_t *proc;
    esp_modex_addr_t addrs[ESP_MODEX_MAX_ADDRS]; /* the peer's published addresses */
    int num_addrs;
    uint32_t assoc_id;        /* usrsctp association, 0 until connected */
    bool connect_initiator;   /* the lower rank connects (no simultaneous-open race) */
};
typedef struct mca_btl_base_endpoint_t mca_btl_sctp_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_endpoint_t);

#endif

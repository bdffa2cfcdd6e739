/* An esp endpoint: one peer process as seen by one module. */
#ifndef MCA_BTL_ESP_ENDPOINT_H
#define MCA_BTL_ESP_ENDPOINT_H

#include <opal_config.h>
#include <opal/class/opal_list.h>
#include <opal/util/proc.h>

#include "esp_modex.h"

struct mca_btl_esp_module;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    struct mca_btl_esp_module *module;
    opal_proc_t *proc;
    esp_modex_addr_t addrs[ESP_MODEX_MAX_ADDRS]; /* the peer's published addresses */
    int num_addrs;
};
typedef struct mca_btl_base_endpoint_t mca_btl_esp_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_esp_endpoint_t);

#endif

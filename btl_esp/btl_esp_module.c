/*
 * btl esp module: one per usable local address. The functions ob1 calls to
 * move data (alloc, prepare_src, send, sendi, put) arrive with the transport;
 * until then init hands ob1 no module, so nothing here is reached by a job.
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"

mca_btl_esp_module_t mca_btl_esp_module_template = {
    .base.super = {
        .btl_component = &mca_btl_esp_component.super,
        .btl_add_procs = esp_btl_module_add_procs_none,
        .btl_del_procs = esp_btl_module_del_procs,
        .btl_finalize = esp_btl_module_finalize,
        .btl_register_error = esp_btl_module_register_error,
    },
};

int mca_btl_esp_module_init(mca_btl_esp_module_t *module, const esp_if_t *iface)
{
    *module = mca_btl_esp_module_template;
    esp_btl_module_construct(&module->base);
    module->iface = *iface;
    return OPAL_SUCCESS;
}

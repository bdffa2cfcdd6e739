/*
 * btl sctp module: one per NIC (one-to-one) or one for all NICs (one-to-many).
 * The functions ob1 calls to move data arrive with the transport; until then
 * init hands ob1 no module, so nothing here is reached by a job.
 */
#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"

mca_btl_sctp_module_t mca_btl_sctp_module_template = {
    .base.super = {
        .btl_component = &mca_btl_sctp_component.super,
        .btl_add_procs = esp_btl_module_add_procs_none,
        .btl_del_procs = esp_btl_module_del_procs,
        .btl_finalize = esp_btl_module_finalize,
        .btl_register_error = esp_btl_module_register_error,
    },
};

int mca_btl_sctp_module_init(mca_btl_sctp_module_t *module, esp_if_t *ifaces, size_t count)
{
    *module = mca_btl_sctp_module_template;
    esp_btl_module_construct(&module->base);
    module->ifaces = ifaces;
    module->num_ifaces = count;
    return OPAL_SUCCESS;
}

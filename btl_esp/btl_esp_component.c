/*
 * btl esp component: MCA parameters, open/close, init.
 * Until the transport lands (wire, proto, data path), init claims no peers.
 */
#include "esp_config.h"

#include "btl_esp.h"

#include <opal/mca/base/mca_base_var.h>

#include "esp_params.h"

static const char *const esp_wire_names[] = {"udp", "ofi", "eth", NULL};

static int esp_component_register(void);
static int esp_component_open(void);
static int esp_component_close(void);
static mca_btl_base_module_t **esp_component_init(int *num_btls, bool enable_progress_threads,
                                                  bool enable_mpi_threads);

mca_btl_esp_component_t mca_btl_esp_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("esp"),
            .mca_open_component = esp_component_open,
            .mca_close_component = esp_component_close,
            .mca_register_component_params = esp_component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .btl_init = esp_component_init,
        .btl_progress = NULL,
    },
};

static int esp_component_register(void)
{
    mca_base_component_t *c = &mca_btl_esp_component.super.btl_version;

    esp_mca_ifaces_register(c, &mca_btl_esp_component.ifaces, "127.0.0.0/8,::1");

    mca_btl_esp_component.wire_name = "udp";
    (void) mca_base_component_var_register(c, "wire",
        "Datagram service under the protocol: udp (UDP sockets, unprivileged), "
        "ofi (libfabric FI_EP_DGRAM), eth (raw Ethernet frames, needs CAP_NET_RAW)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &mca_btl_esp_component.wire_name);

    /* Open MPI's standard btl_esp_* parameters (exclusivity, limits, ...). */
    static const esp_btl_defaults_t defaults = {
        .exclusivity = MCA_BTL_EXCLUSIVITY_LOW + 100, /* above tcp, below shared memory */
        .eager_limit = 8 * 1024,
        .max_send_size = 64 * 1024,
        .rdma_pipeline_frag_size = 1024 * 1024,
        .flags = MCA_BTL_FLAGS_SEND,
    };
    return esp_mca_register_base_params(c, &mca_btl_esp_module_template.base.super, &defaults);
}

static int esp_component_open(void)
{
    esp_mca_ifaces_release(&mca_btl_esp_component.ifaces);
    return OPAL_SUCCESS;
}

static int esp_component_close(void)
{
    esp_mca_ifaces_release(&mca_btl_esp_component.ifaces);
    return OPAL_SUCCESS;
}

/* Check every parameter once, with one message naming what is wrong. */
static bool esp_params_valid(void)
{
    char err[256];
    int wire = esp_param_keyword("btl_esp_wire", mca_btl_esp_component.wire_name,
                                 esp_wire_names, err, sizeof(err));
    if (wire < 0) {
        ESP_ERROR("btl esp: %s", err);
        return false;
    }
    mca_btl_esp_component.wire = (enum mca_btl_esp_wire) wire;
#ifndef ESP_HAVE_LIBFABRIC
    if (wire == ESP_WIRE_OFI) {
        ESP_ERROR("btl esp: btl_esp_wire=ofi needs libfabric, and this build has none "
                  "(install libfabric-dev and rebuild, or use btl_esp_wire=udp)");
        return false;
    }
#endif
    return true;
}

static mca_btl_base_module_t **esp_component_init(int *num_btls, bool enable_progress_threads,
                                                  bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;

    if (!esp_mca_version_ok("esp") || !esp_params_valid()) {
        return NULL;
    }
    if (esp_mca_ifaces_select("esp", &mca_btl_esp_component.ifaces) != 0) {
        return NULL;
    }
    ESP_VERBOSE(1, "btl esp: %zu usable address(es), wire %s; the esp data path is not "
                "built yet, so esp claims no peers (use another BTL)",
                mca_btl_esp_component.ifaces.count, esp_wire_names[mca_btl_esp_component.wire]);
    return NULL;
}

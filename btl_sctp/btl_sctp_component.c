/*
 * btl sctp component: MCA parameters, open/close, init.
 * Until the transport lands (stack, associations, streams), init claims no peers.
 */
#include "btl_sctp.h"

#include <opal/mca/base/mca_base_var.h>

#include "esp_params.h"

static const char *const sctp_mode_names[] = {"conn", "inet", NULL};
static const char *const sctp_style_names[] = {"one-to-one", "one-to-many", NULL};

static int sctp_component_register(void);
static int sctp_component_open(void);
static int sctp_component_close(void);
static mca_btl_base_module_t **sctp_component_init(int *num_btls, bool enable_progress_threads,
                                                   bool enable_mpi_threads);

mca_btl_sctp_component_t mca_btl_sctp_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("sctp"),
            .mca_open_component = sctp_component_open,
            .mca_close_component = sctp_component_close,
            .mca_register_component_params = sctp_component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .btl_init = sctp_component_init,
        .btl_progress = NULL,
    },
};

static int sctp_component_register(void)
{
    mca_base_component_t *c = &mca_btl_sctp_component.super.btl_version;

    esp_mca_ifaces_register(c, &mca_btl_sctp_component.ifaces, "127.0.0.0/8,::1");

    mca_btl_sctp_component.mode_name = "conn";
    (void) mca_base_component_var_register(c, "mode",
        "How usrsctp is driven: conn (AF_CONN over the BTL's own UDP sockets, no stack "
        "threads, fastest, one path per association) or inet (threaded usrsctp over UDP "
        "encapsulation; needed for multihoming failover and CMT)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &mca_btl_sctp_component.mode_name);

    mca_btl_sctp_component.style_name = "one-to-one";
    (void) mca_base_component_var_register(c, "style",
        "SCTP socket style: one-to-one (a socket per peer, one module per NIC, the BML "
        "stripes across NICs) or one-to-many (one socket and one module for all peers; "
        "with mode inet, multihoming and CMT stripe across NICs)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &mca_btl_sctp_component.style_name);

    /* Open MPI's standard btl_sctp_* parameters (exclusivity, limits, ...). */
    static const esp_btl_defaults_t defaults = {
        .exclusivity = MCA_BTL_EXCLUSIVITY_LOW + 50,
        .eager_limit = 64 * 1024,
        .max_send_size = 128 * 1024,
        .rdma_pipeline_frag_size = 1024 * 1024,
        .flags = MCA_BTL_FLAGS_SEND,
    };
    return esp_mca_register_base_params(c, &mca_btl_sctp_module_template.base.super, &defaults);
}

static int sctp_component_open(void)
{
    esp_mca_ifaces_release(&mca_btl_sctp_component.ifaces);
    return OPAL_SUCCESS;
}

static int sctp_component_close(void)
{
    esp_mca_ifaces_release(&mca_btl_sctp_component.ifaces);
    return OPAL_SUCCESS;
}

/* Check every parameter once, with one message naming what is wrong. */
static bool sctp_params_valid(void)
{
    char err[256];
    int mode = esp_param_keyword("btl_sctp_mode", mca_btl_sctp_component.mode_name,
                                 sctp_mode_names, err, sizeof(err));
    int style = mode < 0 ? -1
                         : esp_param_keyword("btl_sctp_style", mca_btl_sctp_component.style_name,
                                             sctp_style_names, err, sizeof(err));
    if (mode < 0 || style < 0) {
        ESP_ERROR("btl sctp: %s", err);
        return false;
    }
    mca_btl_sctp_component.mode = (enum mca_btl_sctp_mode) mode;
    mca_btl_sctp_component.style = (enum mca_btl_sctp_style) style;
    return true;
}

static mca_btl_base_module_t **sctp_component_init(int *num_btls, bool enable_progress_threads,
                                                   bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;

    if (!esp_mca_version_ok("sctp") || !sctp_params_valid()) {
        return NULL;
    }
    if (esp_mca_ifaces_select("sctp", &mca_btl_sctp_component.ifaces) != 0) {
        return NULL;
    }
    ESP_VERBOSE(1, "btl sctp: %zu usable address(es), mode %s, style %s; the sctp data path "
                "is not built yet, so sctp claims no peers (use another BTL)",
                mca_btl_sctp_component.ifaces.count, sctp_mode_names[mca_btl_sctp_component.mode],
                sctp_style_names[mca_btl_sctp_component.style]);
    return NULL;
}

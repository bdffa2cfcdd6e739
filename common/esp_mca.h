/*
 * Open MPI glue shared by both components: the runtime version guard, the
 * interface-selection parameters, and reporting through btl_base_verbose.
 */
#ifndef ESP_MCA_H
#define ESP_MCA_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>
#include <opal/mca/btl/base/base.h>
#include <opal/util/output.h>

#include "esp_ifsel.h"

/* Messages under --mca btl_base_verbose N. */
#define ESP_VERBOSE(level, ...) \
    opal_output_verbose((level), opal_btl_base_framework.framework_output, __VA_ARGS__)

/* One clear message, always shown: a bad value or an unusable setup. */
#define ESP_ERROR(...) opal_output(0, __VA_ARGS__)

/* The interface-selection parameters every component has. */
typedef struct esp_mca_if_params {
    char *if_include;
    char *if_exclude;
    int if_exclude_index;   /* to tell a user's value from the default */
} esp_mca_if_params_t;

/* Register <component>_if_include / _if_exclude with help text. */
void esp_mca_register_if_params(mca_base_component_t *component, esp_mca_if_params_t *params,
                                const char *default_exclude);

/* False (with one message) when the running Open MPI is not the 4.1 series
 * these components were compiled for: the BTL ABI differs across series. */
bool esp_mca_version_ok(const char *component_name);

/* Enumerate and filter this host's addresses by the parameters. Returns 0 with
 * a malloc'd array, or -1 after printing one message that says what to set. */
int esp_mca_select_interfaces(const char *component_name, const esp_mca_if_params_t *params,
                              esp_if_t **out, size_t *count);

#endif

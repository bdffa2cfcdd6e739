/* Open MPI glue shared by both components. */
#include "ebtl_mca.h"

#include <opal/mca/base/mca_base_var.h>
#include <opal/runtime/opal.h>
#include <opal/util/proc.h>

#include <stdio.h>
#include <stdlib.h>

void ebtl_mca_ifaces_register(mca_base_component_t *component, ebtl_mca_ifaces_t *params,
                             const char *default_exclude)
{
    params->selected = NULL;
    params->count = 0;
    params->if_include = NULL;
    (void) mca_base_component_var_register(component, "if_include",
        "Comma-separated interface names and/or CIDR subnets to use "
        "(e.g. \"eth1,10.10.0.0/16\"); mutually exclusive with if_exclude",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_1,
        MCA_BASE_VAR_SCOPE_READONLY, &params->if_include);
    params->if_exclude = (char *) default_exclude;
    params->if_exclude_index = mca_base_component_var_register(component, "if_exclude",
        "Comma-separated interface names and/or CIDR subnets not to use; "
        "mutually exclusive with if_include",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_1,
        MCA_BASE_VAR_SCOPE_READONLY, &params->if_exclude);
}

bool ebtl_mca_version_ok(const char *component_name)
{
    int major = 0, minor = 0;
    if (sscanf(opal_version_string, "%d.%d", &major, &minor) != 2
        || major != OPAL_MAJOR_VERSION || minor != OPAL_MINOR_VERSION) {
        EBTL_ERROR("btl %s: built for Open MPI %d.%d but running under Open MPI %s; "
                  "the BTL interface differs, so %s is disabled. Rebuild it against this "
                  "Open MPI.", component_name, OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION,
                  opal_version_string, component_name);
        return false;
    }
    return true;
}

int ebtl_mca_ifaces_select(const char *component_name, ebtl_mca_ifaces_t *params)
{
    ebtl_if_t **out = &params->selected;
    size_t *count = &params->count;
    char prefix[64], err[1024];
    ebtl_if_t *all;
    size_t nall;

    snprintf(prefix, sizeof(prefix), "btl_%s", component_name);
    if (ebtl_if_enumerate(&all, &nall, err, sizeof(err)) != 0) {
        EBTL_ERROR("btl %s: %s", component_name, err);
        return -1;
    }
    /* An include list replaces the default exclude list; both set by the
     * user is an error that ebtl_if_select reports. */
    const char *exclude = params->if_exclude;
    mca_base_var_source_t source = MCA_BASE_VAR_SOURCE_DEFAULT;
    if (params->if_exclude_index >= 0) {
        (void) mca_base_var_get_value(params->if_exclude_index, NULL, &source, NULL);
    }
    if (params->if_include && *params->if_include && source == MCA_BASE_VAR_SOURCE_DEFAULT) {
        exclude = NULL;
    }
    int rc = ebtl_if_select(all, nall, params->if_include, exclude, prefix, out, count,
                           err, sizeof(err));
    bool user_chose = (params->if_include && *params->if_include)
                      || source != MCA_BASE_VAR_SOURCE_DEFAULT;
    if (rc != 0 && !user_chose) {
        /* Nothing but loopback on this host: it is the only way to reach the
         * ranks here, and they are the only ones reachable. */
        rc = ebtl_if_select(all, nall, NULL, NULL, prefix, out, count, err, sizeof(err));
        size_t n = 0;
        for (size_t i = 0; rc == 0 && i < *count; i++) {
            if ((*out)[i].loopback) {
                (*out)[n++] = (*out)[i];
            }
        }
        if (rc == 0 && n > 0) {
            *count = n;
            EBTL_VERBOSE(1, "btl %s: no interface but loopback; using loopback, which reaches "
                        "only the ranks on this host", component_name);
        } else if (rc == 0) {
            ebtl_mca_ifaces_release(params);
            rc = -1;
        }
    }
    free(all);
    if (rc != 0) {
        EBTL_ERROR("btl %s: %s", component_name, err);
        return -1;
    }
    for (size_t i = 0; i < *count; i++) {
        char buf[96];
        EBTL_VERBOSE(10, "btl %s: may use %s", component_name, ebtl_if_format(&(*out)[i], buf, sizeof(buf)));
    }
    return 0;
}

void ebtl_mca_ifaces_release(ebtl_mca_ifaces_t *ifaces)
{
    free(ifaces->selected);
    ifaces->selected = NULL;
    ifaces->count = 0;
}

int ebtl_mca_register_base_params(mca_base_component_t *component, mca_btl_base_module_t *module,
                                 const ebtl_defaults_t *defaults)
{
    module->btl_exclusivity = defaults->exclusivity;
    module->btl_eager_limit = defaults->eager_limit;
    module->btl_rndv_eager_limit = defaults->eager_limit;
    module->btl_max_send_size = defaults->max_send_size;
    module->btl_rdma_pipeline_send_length = defaults->max_send_size;
    module->btl_rdma_pipeline_frag_size = defaults->rdma_pipeline_frag_size;
    module->btl_min_rdma_pipeline_size = 0;
    module->btl_flags = defaults->flags;
    module->btl_latency = 100;
    module->btl_bandwidth = 1000;
    return mca_btl_base_param_register(component, module);
}

static void reg_probability(mca_base_component_t *component, const char *name, const char *help,
                            double *storage)
{
    *storage = 0.0;
    (void) mca_base_component_var_register(component, name, help, MCA_BASE_VAR_TYPE_DOUBLE, NULL,
                                           0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
                                           storage);
}

void ebtl_mca_faults_register(mca_base_component_t *component, ebtl_mca_faults_t *f)
{
    reg_probability(component, "fault_drop", "TESTING: probability a received datagram is dropped",
                    &f->drop);
    reg_probability(component, "fault_dup",
                    "TESTING: probability a received datagram is delivered twice", &f->dup);
    reg_probability(component, "fault_reorder", "TESTING: probability a received datagram is "
                    "held back behind later ones", &f->reorder);
    reg_probability(component, "fault_corrupt",
                    "TESTING: probability one byte of a received datagram is changed", &f->corrupt);
    f->seed = 1;
    (void) mca_base_component_var_register(component, "fault_seed",
        "TESTING: seed of the fault layer (each rank adds its rank)", MCA_BASE_VAR_TYPE_INT, NULL,
        0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY, &f->seed);
}

static ebtl_fault_config_t faults_config(const ebtl_mca_faults_t *f)
{
    ebtl_fault_config_t c = {
        .drop = f->drop, .duplicate = f->dup, .reorder = f->reorder, .corrupt = f->corrupt};
    return c;
}

bool ebtl_mca_faults_valid(const char *component_name, const ebtl_mca_faults_t *f)
{
    ebtl_fault_config_t c = faults_config(f);
    char err[256];
    if (ebtl_fault_config_check(&c, err, sizeof(err)) != 0) {
        EBTL_ERROR("btl %s: btl_%s_%s", component_name, component_name, err);
        return false;
    }
    return true;
}

ebtl_fault_t *ebtl_mca_faults_create(const ebtl_mca_faults_t *f, unsigned per_rank, unsigned index,
                                   size_t max_len)
{
    ebtl_fault_config_t c = faults_config(f);
    c.seed = (uint64_t) f->seed * 1000003u + (uint64_t) OPAL_PROC_MY_NAME.vpid * per_rank + index;
    return ebtl_fault_config_active(&c) ? ebtl_fault_create(&c, max_len) : NULL;
}

void ebtl_mca_counters_register_pvars(mca_base_component_t *component, const void *table,
                                     size_t count, size_t stride, mca_base_get_value_fn_t read)
{
    for (size_t i = 0; i < count; i++) {
        const ebtl_mca_counter_t *c = (const void *) ((const char *) table + i * stride);
        (void) mca_base_component_pvar_register(
            component, c->name, c->help, OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
            MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, read, NULL, NULL,
            (void *) c);
    }
}

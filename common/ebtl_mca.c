/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The component base: parameters, open, close, init, the fault layer. */
#include "ebtl_mca.h"

#include <opal/mca/base/mca_base_var.h>
#include <opal/mca/hwloc/base/base.h>
#include <opal/runtime/opal.h>
#include <opal/util/proc.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include "ebtl_help.h"
#include "ebtl_params.h"

/* The component this copy of common/ belongs to (one per .so), for open,
 * close and init: set by ebtl_mca_register, which Open MPI calls first. */
static ebtl_component_t *self;

/* ------------------------------------------------------ registration */

static void ifaces_register(mca_base_component_t *component, ebtl_mca_ifaces_t *params,
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
    params->if_locality = "nearest";
    (void) mca_base_component_var_register(component, "if_locality",
        "Which interfaces a process bound to part of a node sends by: nearest (those on "
        "its own package or NUMA node, as Open MPI's hwloc topology shows them; the others "
        "only for a peer none of those reaches, or when their paths fail) or all. An "
        "unbound process, or a node where no NIC is nearer than another, uses all",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &params->if_locality);
    params->place = NULL;
    params->prefer_near = false;
    params->locality[0] = '\0';
}

static void params_register(mca_base_component_t *component, const ebtl_mca_param_t *params,
                            size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const ebtl_mca_param_t *p = &params[i];
        void *storage;
        mca_base_var_type_t type;
        if (p->int_var != NULL) {
            *p->int_var = p->int_default;
            storage = p->int_var;
            type = MCA_BASE_VAR_TYPE_INT;
        } else {
            *p->str_var = (char *) p->str_default;
            storage = p->str_var;
            type = MCA_BASE_VAR_TYPE_STRING;
        }
        (void) mca_base_component_var_register(component, p->name, p->help, type, NULL, 0, 0,
                                               p->level, MCA_BASE_VAR_SCOPE_READONLY, storage);
    }
}

static void reg_probability(mca_base_component_t *component, const char *name, const char *help,
                            double *storage)
{
    *storage = 0.0;
    (void) mca_base_component_var_register(component, name, help, MCA_BASE_VAR_TYPE_DOUBLE, NULL,
                                           0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
                                           storage);
}

static void faults_register(mca_base_component_t *component, ebtl_mca_faults_t *f)
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

static int base_params_register(mca_base_component_t *component, mca_btl_base_module_t *module,
                                const ebtl_defaults_t *defaults)
{
    module->btl_exclusivity = defaults->exclusivity;
    module->btl_eager_limit = defaults->eager_limit;
    module->btl_rndv_eager_limit = defaults->eager_limit;
    module->btl_max_send_size = defaults->max_send_size;
    module->btl_rdma_pipeline_send_length = defaults->rdma_pipeline_send_length;
    module->btl_rdma_pipeline_frag_size = defaults->rdma_pipeline_frag_size;
    module->btl_min_rdma_pipeline_size = 0;
    module->btl_flags = defaults->flags;
    module->btl_latency = 100;
    module->btl_bandwidth = 1000;
    return mca_btl_base_param_register(component, module);
}

/* False (with one message) when the running Open MPI is not the series
 * (4.1 or 5.0) these components were compiled for: the BTL ABI differs
 * across series, so nothing may touch Open MPI's structures before this. */
static bool version_ok(const char *component_name)
{
    int major = 0, minor = 0;
    if (sscanf(opal_version_string, "%d.%d", &major, &minor) != 2
        || major != OPAL_MAJOR_VERSION || minor != OPAL_MINOR_VERSION) {
        /* The host from the kernel: opal_process_info's layout is the other
         * series'. The help call's signature is the same in both. */
        char host[256] = "?";
        (void) gethostname(host, sizeof(host) - 1);
        EBTL_SHOW_HELP("version-mismatch", component_name, OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION,
                       opal_version_string, component_name, host);
        return false;
    }
    return true;
}

int ebtl_mca_register(ebtl_component_t *component, const ebtl_mca_param_t *params,
                      size_t num_params, const ebtl_defaults_t *defaults,
                      mca_btl_base_module_t *module_template)
{
    mca_base_component_t *v = &component->super.btl_version;
    /* Register is the first call Open MPI makes into a component. */
    ebtl_help_open(v->mca_component_name);
    if (!version_ok(v->mca_component_name)) {
        return OPAL_ERR_NOT_AVAILABLE;   /* the framework drops the component quietly */
    }
    self = component;
    ifaces_register(v, &component->ifaces, "127.0.0.0/8,::1");
    component->progress_thread = 0;
    (void) mca_base_component_var_register(v, "progress_thread",
        "1: a thread that moves this BTL's data while the application computes between MPI "
        "calls (rendezvous, pipelines, ACKs, retransmissions, the peer's liveness), as btl "
        "tcp's does; it makes Open MPI's locks real for the whole job. 0: data moves only "
        "inside MPI calls (docs/tuning.md, the progress thread)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &component->progress_thread);
    params_register(v, params, num_params);
    faults_register(v, &component->faults);
    return base_params_register(v, module_template, defaults);
}

/* ----------------------------------------------- open, close, init */

static void ifaces_release(ebtl_mca_ifaces_t *ifaces)
{
    free(ifaces->selected);
    ifaces->selected = NULL;
    ifaces->count = 0;
    free(ifaces->place);
    ifaces->place = NULL;
    ifaces->prefer_near = false;
}

static void interfaces_unusable(const char *name, const char *why)
{
    EBTL_SHOW_HELP("interfaces", name, why, name, name, name, ebtl_help_host());
}

/* Enumerate and filter this host's addresses by the parameters into
 * ifaces->selected. Returns 0, or -1 after one message that says what to set. */
static int ifaces_select(const char *component_name, ebtl_mca_ifaces_t *params)
{
    ebtl_if_t **out = &params->selected;
    size_t *count = &params->count;
    char prefix[96], err[1024];
    ebtl_if_t *all;
    size_t nall;

    snprintf(prefix, sizeof(prefix), "btl_%s", component_name);
    if (ebtl_if_enumerate(&all, &nall, err, sizeof(err)) != 0) {
        interfaces_unusable(component_name, err);
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
            ifaces_release(params);
            rc = -1;
        }
    }
    free(all);
    if (rc != 0) {
        interfaces_unusable(component_name, err);
        return -1;
    }
    for (size_t i = 0; i < *count; i++) {
        char buf[96];
        EBTL_VERBOSE(10, "btl %s: may use %s", component_name, ebtl_if_format(&(*out)[i], buf, sizeof(buf)));
    }
    return 0;
}

/* The progress thread's tick: fast while the component has work. */
static bool component_busy(void *ctx)
{
    (void) ctx;
    return self->busy == NULL || self->busy();
}

static const char *const locality_names[] = {"nearest", "all", NULL};

/* Place the selected addresses' NICs relative to this process's binding,
 * from Open MPI's topology (the launcher's, which --mca
 * hwloc_base_topo_file replaces). Returns 0, or -1 after one message about
 * a bad if_locality. */
static int ifaces_locate(const char *component_name, ebtl_mca_ifaces_t *params)
{
    char name[96], err[256];
    snprintf(name, sizeof(name), "btl_%s_if_locality", component_name);
    int choice = ebtl_param_keyword(name, params->if_locality, locality_names, err, sizeof(err));
    if (choice < 0) {
        ebtl_help_bad_param(err);
        return -1;
    }
    params->place = calloc(params->count, sizeof(*params->place));
    const char **names = calloc(params->count, sizeof(*names));
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    if (params->place == NULL || names == NULL || cpus == NULL) {
        free(names);
        hwloc_bitmap_free(cpus);
        snprintf(params->locality, sizeof(params->locality), "all interfaces: out of memory");
        return 0;
    }
    for (size_t i = 0; i < params->count; i++) {
        names[i] = params->selected[i].name;
    }
    hwloc_topology_t topo = NULL;
    if (opal_hwloc_base_get_topology() == OPAL_SUCCESS) {
        topo = opal_hwloc_topology;
    }
    char why[128], where[64];
    bool bound = ebtl_locality_my_cpus(cpus) == 0;
    bool differs = ebtl_locality_place(topo, bound ? cpus : NULL, names, params->count,
                                       params->place, why, sizeof(why));
    params->prefer_near = differs && choice == 0;
    if (!params->prefer_near) {
        snprintf(params->locality, sizeof(params->locality), "all interfaces (%s)",
                 choice == 0 ? why : "if_locality all");
    } else {
        int n = snprintf(params->locality, sizeof(params->locality), "bound to %s: prefers",
                         ebtl_locality_where(topo, cpus, where, sizeof(where)));
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < params->count && n > 0 && (size_t) n < sizeof(params->locality); i++) {
                bool far = params->place[i] == EBTL_NIC_FAR;
                if (far == (pass == 1) && (i == 0 || strcmp(names[i], names[i - 1]) != 0)) {
                    n += snprintf(params->locality + n, sizeof(params->locality) - n, " %s (%s)",
                                  names[i], ebtl_nic_place_name(params->place[i]));
                }
            }
            if (pass == 0 && n > 0 && (size_t) n < sizeof(params->locality)) {
                n += snprintf(params->locality + n, sizeof(params->locality) - n, "; %s:",
                              params->far_use != NULL ? params->far_use : "only as a fallback");
            }
        }
    }
    free(names);
    hwloc_bitmap_free(cpus);
    return 0;
}

int ebtl_mca_component_open(void)
{
    return OPAL_SUCCESS;
}

int ebtl_mca_component_close(void)
{
    if (self != NULL) {
        ebtl_thread_stop(&self->thread);
        ifaces_release(&self->ifaces);
    }
    return OPAL_SUCCESS;
}

mca_btl_base_module_t **ebtl_mca_component_init(int *num_btls, bool enable_progress_threads,
                                                bool enable_mpi_threads)
{
    const char *name = self->super.btl_version.mca_component_name;
    (void) enable_progress_threads;
    *num_btls = 0;
    if (!self->params_valid() || ifaces_select(name, &self->ifaces) != 0
        || ifaces_locate(name, &self->ifaces) != 0) {
        return NULL;
    }
    char err[256], param[96];
    snprintf(param, sizeof(param), "btl_%s_progress_thread", name);
    if (ebtl_param_check_range(param, self->progress_thread, 0, 1, err, sizeof(err)) != 0) {
        ebtl_help_bad_param(err);
        return NULL;
    }
    mca_btl_base_module_t **btls = self->make_modules(num_btls);
    if (btls != NULL && *num_btls > 0 && (enable_mpi_threads || self->progress_thread)) {
        ebtl_thread_add_peers_at_start(btls, *num_btls);
    }
    if (btls != NULL && *num_btls > 0 && self->progress_thread) {
        /* Before ob1 looks at the modules: it guards its matching then. */
        ebtl_thread_enable(btls, *num_btls);
        int fds[EBTL_THREAD_MAX_FDS];
        int nfds = self->wait_fds != NULL ? self->wait_fds(fds, EBTL_THREAD_MAX_FDS) : 0;
        if (ebtl_thread_start(&self->thread, component_busy, NULL, 1000000, 10000000, fds, nfds)
            != 0) {
            snprintf(err, sizeof(err), "%s=1: cannot start the thread (%s); data moves only "
                     "inside MPI calls", param, strerror(errno));
            ebtl_help_bad_param(err);
        }
    }
    return btls;
}

/* ------------------------------------------------- the fault layer */

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
        EBTL_SHOW_HELP("fault-parameter", component_name, component_name, err, component_name,
                       ebtl_help_host());
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

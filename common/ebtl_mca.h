/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The component both components share: Open MPI's component struct with
 * the parameters every component has (interfaces, the test-only fault
 * layer), registration (first the runtime version guard, then the
 * parameters from a table), open, close and init (the component's checks,
 * interface selection), and reporting through btl_base_verbose.
 */
#ifndef EBTL_MCA_H
#define EBTL_MCA_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>
#include <opal/mca/btl/base/base.h>
#include <opal/util/output.h>

#include "ebtl_fault.h"
#include "ebtl_ifsel.h"
#include "ebtl_locality.h"
#include "ebtl_thread.h"

/* Messages under --mca btl_base_verbose N. */
#define EBTL_VERBOSE(level, ...) \
    opal_output_verbose((level), opal_btl_base_framework.framework_output, __VA_ARGS__)

/* The interface-selection parameters every component has, and what they
 * selected at init (ebtl_mca_component_init). */
typedef struct ebtl_mca_ifaces {
    char *if_include;
    char *if_exclude;
    int if_exclude_index;   /* to tell a user's value from the default */
    char *if_locality;       /* "nearest" or "all" */
    ebtl_if_t *selected;     /* after init */
    size_t count;
    /* NIC locality, after init: each selected address's place, and whether
     * the far ones are only a fallback (bound, and the topology shows a
     * difference); `locality` says what was chosen and why, for verbose
     * output */
    ebtl_nic_place_t *place;
    bool prefer_near;
    char locality[256];
    /* how the component uses the far NICs, for that line (set before
     * init; NULL: "only as a fallback") */
    const char *far_use;
} ebtl_mca_ifaces_t;

/* A component's defaults for Open MPI's standard btl_<c>_* parameters. */
typedef struct ebtl_defaults {
    uint32_t exclusivity;
    size_t eager_limit;           /* also the rendezvous eager limit */
    size_t max_send_size;
    /* a pipelined message's last bytes that go by send, not PUT (only
     * with MCA_BTL_FLAGS_PUT) */
    size_t rdma_pipeline_send_length;
    size_t rdma_pipeline_frag_size;
    uint32_t flags;
} ebtl_defaults_t;

/* The test-only fault layer's parameters every component has:
 * <component>_fault_drop, _dup, _reorder, _corrupt (probabilities per
 * received datagram, 0 = off) and _fault_seed (TESTING in the help text,
 * level 9, all off). */
typedef struct ebtl_mca_faults {
    double drop, dup, reorder, corrupt;
    int seed;
} ebtl_mca_faults_t;

/* One of a component's own parameters: an int or a string. */
typedef struct ebtl_mca_param {
    const char *name;         /* without btl_<component>_ */
    int level;                /* OPAL_INFO_LVL_* */
    int *int_var;             /* an int parameter, or NULL */
    char **str_var;           /* a string parameter, or NULL */
    int int_default;
    const char *str_default;
    const char *help;
} ebtl_mca_param_t;
#define EBTL_PARAM_INT(name, level, var, def, help) {(name), (level), (var), NULL, (def), NULL, (help)}
#define EBTL_PARAM_STR(name, level, var, def, help) {(name), (level), NULL, (var), 0, (def), (help)}

/* The part of a component both components share: Open MPI's component,
 * the parameters every component has, and the component's own steps of
 * init. A component's type embeds it first. */
typedef struct ebtl_component {
    mca_btl_base_component_3_0_0_t super;
    ebtl_mca_ifaces_t ifaces;        /* if_include/if_exclude and what they selected */
    ebtl_mca_faults_t faults;        /* test-only fault layer (btl_<c>_fault_*) */
    /* init: check every parameter (false after one message naming what is
     * wrong), then make the modules on ifaces.selected (NULL if none) */
    bool (*params_valid)(void);
    mca_btl_base_module_t **(*make_modules)(int *num_btls);
    /* btl_<c>_progress_thread: the thread (ebtl_thread.h), started at init
     * after make_modules; busy(): data out or timers due (the thread then
     * ticks every millisecond, else every 10) */
    int progress_thread;
    ebtl_thread_t thread;
    bool (*busy)(void);
    /* the sockets a datagram comes in on, for the thread to sleep on (into
     * out, at most max; returns how many); NULL: none, it ticks */
    int (*wait_fds)(int *out, int max);
} ebtl_component_t;

/* The initializer of a component's ebtl_component_t, e.g.
 *   mca_btl_x_component_t mca_btl_x_component = {
 *       .base = EBTL_COMPONENT("x", x_register, x_progress, x_params_valid, x_make_modules)};
 * Open, close and init are common/'s (below). */
#define EBTL_COMPONENT(name, register_fn, progress_fn, params_valid_fn, make_modules_fn, busy_fn, \
                       wait_fds_fn)                                             \
    {                                                                           \
        .super = {                                                              \
            .btl_version = {                                                    \
                MCA_BTL_DEFAULT_VERSION(name),                                  \
                .mca_open_component = ebtl_mca_component_open,                  \
                .mca_close_component = ebtl_mca_component_close,                \
                .mca_register_component_params = (register_fn),                 \
            },                                                                  \
            .btl_data = {.param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT},    \
            .btl_init = ebtl_mca_component_init,                                \
            .btl_progress = (progress_fn),                                      \
        },                                                                      \
        .params_valid = (params_valid_fn),                                      \
        .make_modules = (make_modules_fn),                                      \
        .busy = (busy_fn),                                                      \
        .wait_fds = (wait_fds_fn),                                              \
    }

/* The component's register function: if_include and if_exclude (loopback
 * excluded by default), then its own parameters in table order, the fault
 * layer's, and Open MPI's standard btl_<c>_* parameters (exclusivity,
 * limits, ...) with these defaults, which go into the module template.
 * Also tells ebtl_mca_component_open, _close and _init which component
 * they are for (each .so has its own copy of common/). Returns an OPAL
 * status. */
int ebtl_mca_register(ebtl_component_t *component, const ebtl_mca_param_t *params,
                      size_t num_params, const ebtl_defaults_t *defaults,
                      mca_btl_base_module_t *module_template);

/* The component's open, close and init functions. Init refuses (after one
 * message) an Open MPI other than the one the component was built for, a
 * parameter params_valid() refuses, or a host with no usable interface;
 * then make_modules() makes the modules. Close forgets the interface
 * selection. */
int ebtl_mca_component_open(void);
int ebtl_mca_component_close(void);
mca_btl_base_module_t **ebtl_mca_component_init(int *num_btls, bool enable_progress_threads,
                                                bool enable_mpi_threads);

/* True when the values are probabilities (drop below 1); else false after one
 * message naming the parameter ("btl esp: btl_esp_fault drop=1.5 is not ..."). */
bool ebtl_mca_faults_valid(const char *component_name, const ebtl_mca_faults_t *faults);

/* A fault layer for one of this process's sockets, or NULL when every
 * probability is 0 (or out of memory). Each socket gets its own seed:
 * seed * 1000003 + rank * per_rank + index (index < per_rank). max_len: the
 * largest datagram the socket receives. */
ebtl_fault_t *ebtl_mca_faults_create(const ebtl_mca_faults_t *faults, unsigned per_rank,
                                   unsigned index, size_t max_len);

#endif

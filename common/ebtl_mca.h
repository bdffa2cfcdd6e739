/*
 * Open MPI glue shared by both components: the runtime version guard, the
 * interface-selection parameters, and reporting through btl_base_verbose.
 */
#ifndef EBTL_MCA_H
#define EBTL_MCA_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>
#include <opal/mca/btl/base/base.h>
#include <opal/mca/base/mca_base_pvar.h>
#include <opal/util/output.h>

#include "ebtl_fault.h"
#include "ebtl_ifsel.h"

/* Messages under --mca btl_base_verbose N. */
#define EBTL_VERBOSE(level, ...) \
    opal_output_verbose((level), opal_btl_base_framework.framework_output, __VA_ARGS__)

/* One clear message, always shown: a bad value or an unusable setup. */
#define EBTL_ERROR(...) opal_output(0, __VA_ARGS__)

/* The interface-selection parameters every component has, and what they
 * selected at init. */
typedef struct ebtl_mca_ifaces {
    char *if_include;
    char *if_exclude;
    int if_exclude_index;   /* to tell a user's value from the default */
    ebtl_if_t *selected;     /* after ebtl_mca_ifaces_select */
    size_t count;
} ebtl_mca_ifaces_t;

/* Register <component>_if_include / _if_exclude with help text. */
void ebtl_mca_ifaces_register(mca_base_component_t *component, ebtl_mca_ifaces_t *ifaces,
                             const char *default_exclude);

/* Enumerate and filter this host's addresses by the parameters into
 * ifaces->selected. Returns 0, or -1 after one message that says what to set. */
int ebtl_mca_ifaces_select(const char *component_name, ebtl_mca_ifaces_t *ifaces);

/* Forget the selection (component open and close). */
void ebtl_mca_ifaces_release(ebtl_mca_ifaces_t *ifaces);

/* A component's defaults for Open MPI's standard btl_<c>_* parameters. */
typedef struct ebtl_defaults {
    uint32_t exclusivity;
    size_t eager_limit;           /* also the rendezvous eager limit */
    size_t max_send_size;         /* also the pipeline send length */
    size_t rdma_pipeline_frag_size;
    uint32_t flags;
} ebtl_defaults_t;

/* Put the defaults into a module template and register the standard parameters. */
int ebtl_mca_register_base_params(mca_base_component_t *component, mca_btl_base_module_t *module,
                                 const ebtl_defaults_t *defaults);

/* The test-only fault layer's parameters every component has:
 * <component>_fault_drop, _dup, _reorder, _corrupt (probabilities per
 * received datagram, 0 = off) and _fault_seed. */
typedef struct ebtl_mca_faults {
    double drop, dup, reorder, corrupt;
    int seed;
} ebtl_mca_faults_t;

/* Register them (TESTING in the help text, level 9, all off). */
void ebtl_mca_faults_register(mca_base_component_t *component, ebtl_mca_faults_t *faults);

/* True when the values are probabilities (drop below 1); else false after one
 * message naming the parameter ("btl esp: btl_esp_fault drop=1.5 is not ..."). */
bool ebtl_mca_faults_valid(const char *component_name, const ebtl_mca_faults_t *faults);

/* A fault layer for one of this process's sockets, or NULL when every
 * probability is 0 (or out of memory). Each socket gets its own seed:
 * seed * 1000003 + rank * per_rank + index (index < per_rank). max_len: the
 * largest datagram the socket receives. */
ebtl_fault_t *ebtl_mca_faults_create(const ebtl_mca_faults_t *faults, unsigned per_rank,
                                   unsigned index, size_t max_len);

/* False (with one message) when the running Open MPI is not the 4.1 series
 * these components were compiled for: the BTL ABI differs across series. */
bool ebtl_mca_version_ok(const char *component_name);

/* Counters as MPI_T performance variables <component>_<name> (class
 * counter, read-only, continuous, unsigned long long): count entries of
 * `stride` bytes from `table`, each starting with an ebtl_mca_counter_t;
 * read() gets the entry as pvar->ctx. Once per process. */
typedef struct ebtl_mca_counter {
    const char *name;
    const char *help;
} ebtl_mca_counter_t;
void ebtl_mca_counters_register_pvars(mca_base_component_t *component, const void *table,
                                     size_t count, size_t stride, mca_base_get_value_fn_t read);

#endif

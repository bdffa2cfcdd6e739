/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Counters as MPI_T performance variables and as lines at finalize. */
#include "ebtl_stats.h"

#include <opal/mca/base/mca_base_pvar.h>
#include <opal/util/output.h>
#include <opal/util/proc.h>

#include <stdio.h>

/* The component's table, for pvar_read (each .so has its own copy). */
static const ebtl_stats_t *registered;

static int pvar_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const ebtl_stats_t *s = registered;
    size_t i = (size_t) ((const char *) pvar->ctx - (const char *) s->table) / s->stride;
    uint64_t v[s->count];
    (void) obj;
    s->collect(v);
    *(unsigned long long *) value = (unsigned long long) v[i];
    return OPAL_SUCCESS;
}

void ebtl_stats_register_pvars(mca_base_component_t *component, const ebtl_stats_t *stats)
{
    if (registered != NULL) {
        return;
    }
    registered = stats;
    for (size_t i = 0; i < stats->count; i++) {
        const ebtl_counter_t *c = ebtl_stats_counter(stats, i);
        (void) mca_base_component_pvar_register(
            component, c->name, c->help, OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
            MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, pvar_read, NULL, NULL,
            (void *) c);
    }
}

void ebtl_stats_print(const char *component, const ebtl_stats_t *stats, const uint64_t *values,
                      size_t first, size_t n, const char *tail)
{
    char line[2048];
    size_t len = 0;
    line[0] = '\0';
    for (size_t i = first; i < first + n && len < sizeof(line); i++) {
        len += (size_t) snprintf(line + len, sizeof(line) - len, " %s=%llu",
                                 ebtl_stats_counter(stats, i)->name,
                                 (unsigned long long) values[i]);
    }
    opal_output(0, "btl %s stats rank %u:%s%s%s", component, (unsigned) OPAL_PROC_MY_NAME.vpid,
                line, tail ? " " : "", tail ? tail : "");
}

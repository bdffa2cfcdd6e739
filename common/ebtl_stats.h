/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Counters a tuner asks about, both ways a component shows them: as MPI_T
 * performance variables btl_<component>_<name> while the job runs, and as
 * "btl <component> stats rank N: name=value ..." lines at finalize. The
 * component names its counters in a table and collects their values.
 */
#ifndef EBTL_STATS_H
#define EBTL_STATS_H

#include <opal_config.h>
#include <opal/mca/mca.h>

#include <stddef.h>
#include <stdint.h>

/* A counter's name and help text: the first member of each table entry. */
typedef struct ebtl_counter {
    const char *name;
    const char *help;
} ebtl_counter_t;

typedef struct ebtl_stats {
    const void *table;     /* count entries of stride bytes, each starting with an ebtl_counter_t */
    size_t count, stride;
    /* Every counter's value now, in table order (0s when there is no module). */
    void (*collect)(uint64_t *values);
} ebtl_stats_t;

static inline const ebtl_counter_t *ebtl_stats_counter(const ebtl_stats_t *s, size_t i)
{
    return (const ebtl_counter_t *) ((const char *) s->table + i * s->stride);
}

/* Register every counter as an MPI_T performance variable (class counter,
 * read-only, continuous, unsigned long long), read through collect(). Once
 * per process; stats must outlive the process's use of MPI_T. */
void ebtl_stats_register_pvars(mca_base_component_t *component, const ebtl_stats_t *stats);

/* One line "btl <component> stats rank <rank>: name=value ..." with the
 * counters first .. first + n - 1 and their values (in table order), then
 * tail if not NULL. */
void ebtl_stats_print(const char *component, const ebtl_stats_t *stats, const uint64_t *values,
                      size_t first, size_t n, const char *tail);

#endif

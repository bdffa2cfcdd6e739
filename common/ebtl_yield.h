/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Yielding the CPU on a busy host. Ranks that share cores in a way Open MPI
 * cannot see (containers, network namespaces, other jobs; for those it sees
 * it sets mpi_yield_when_idle) busy-poll against each other, and the one
 * with work, often the receiver the others wait for, gets a slice of a
 * core. When more threads want to run than load_pct % of the host's CPUs
 * (/proc/loadavg's runnable count, sampled every 20 ms and averaged), a
 * progress pass that found nothing should give its core away. Every rank
 * judges by the host, not by its own wait for a CPU: one that kept its core
 * while the others yielded would take their share. Pure C, no Open MPI.
 */
#ifndef EBTL_YIELD_H
#define EBTL_YIELD_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ebtl_yield {
    int load_pct;            /* busy above this % of the CPUs runnable; 0: never */
    long cpus;               /* the host's CPUs online */
    unsigned runnable_x16;   /* runnable threads, averaged, times 16 */
    uint64_t next_ns;        /* the next sample */
    uint64_t yields;         /* passes told to yield */
} ebtl_yield_t;

void ebtl_yield_init(ebtl_yield_t *y, int load_pct);

/* The runnable count of /proc/loadavg's text ("0.61 1.64 1.88 3/79 4010"),
 * or -1 when the text is not that. */
int ebtl_yield_parse_loadavg(const char *text);

/* Fold one runnable count into the average. */
void ebtl_yield_sample(ebtl_yield_t *y, unsigned runnable);

/* More threads runnable than load_pct % of the CPUs. */
bool ebtl_yield_busy(const ebtl_yield_t *y);

/* After a progress pass that handled `handled` events, at now_ns: samples
 * the host when due; true (and counted) when the caller should
 * sched_yield(), outside its locks. */
bool ebtl_yield_due(ebtl_yield_t *y, uint64_t now_ns, int handled);

#endif

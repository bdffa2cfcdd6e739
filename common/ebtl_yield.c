/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
#include "ebtl_yield.h"

#include <stdio.h>
#include <unistd.h>

#define SAMPLE_EVERY_NS (20 * 1000 * 1000)

void ebtl_yield_init(ebtl_yield_t *y, int load_pct)
{
    *y = (ebtl_yield_t){.load_pct = load_pct, .cpus = sysconf(_SC_NPROCESSORS_ONLN)};
}

int ebtl_yield_parse_loadavg(const char *text)
{
    double l1, l5, l15;
    unsigned runnable, total;
    if (sscanf(text, "%lf %lf %lf %u/%u", &l1, &l5, &l15, &runnable, &total) != 5
        || runnable > total || runnable > 1000000u) {
        return -1;
    }
    return (int) runnable;
}

void ebtl_yield_sample(ebtl_yield_t *y, unsigned runnable)
{
    /* about 80 ms of memory at one sample per 20 ms */
    y->runnable_x16 = (3 * y->runnable_x16 + 16 * runnable) / 4;
}

bool ebtl_yield_busy(const ebtl_yield_t *y)
{
    return y->load_pct > 0 && y->cpus > 0
           && (uint64_t) y->runnable_x16 * 100 > (uint64_t) y->load_pct * 16 * (uint64_t) y->cpus;
}

static void sample_host(ebtl_yield_t *y)
{
    char text[128];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL) {
        return;
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    int runnable = ebtl_yield_parse_loadavg(text);
    if (runnable >= 0) {
        ebtl_yield_sample(y, (unsigned) runnable);
    }
}

bool ebtl_yield_due(ebtl_yield_t *y, uint64_t now_ns, int handled)
{
    if (y->load_pct == 0) {
        return false;
    }
    if (now_ns >= y->next_ns) {
        y->next_ns = now_ns + SAMPLE_EVERY_NS;
        sample_host(y);
    }
    if (handled != 0 || !ebtl_yield_busy(y)) {
        return false;
    }
    y->yields++;
    return true;
}

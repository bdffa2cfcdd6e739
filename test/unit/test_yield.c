/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* common/ebtl_yield: reading /proc/loadavg, the averaged runnable count,
 * and when an idle pass yields. */
#include "ebtl_yield.h"
#include "unit.h"

static void parse_loadavg(void)
{
    CHECK(ebtl_yield_parse_loadavg("0.61 1.64 1.88 3/79 4010\n") == 3);
    CHECK(ebtl_yield_parse_loadavg("12.00 9.50 4.25 17/1022 99") == 17);
    CHECK(ebtl_yield_parse_loadavg("") == -1);
    CHECK(ebtl_yield_parse_loadavg("0.61 1.64 1.88") == -1);
    CHECK(ebtl_yield_parse_loadavg("0.61 1.64 1.88 x/79 4010") == -1);
    CHECK(ebtl_yield_parse_loadavg("0.61 1.64 1.88 80/79 4010") == -1);   /* more runnable than all */
}

/* The host is busy above load_pct % of its CPUs runnable, on average. */
static void busy_by_average(void)
{
    ebtl_yield_t y;
    ebtl_yield_init(&y, 150);
    y.cpus = 2;   /* whatever this machine has: the rule is on 2 */
    for (int i = 0; i < 20; i++) {
        ebtl_yield_sample(&y, 2);   /* two ranks on two cores */
    }
    CHECK(!ebtl_yield_busy(&y));
    ebtl_yield_sample(&y, 5);       /* one sample of a short burst is not a busy host */
    CHECK(!ebtl_yield_busy(&y));
    for (int i = 0; i < 20; i++) {
        ebtl_yield_sample(&y, 8);   /* eight ranks on two cores */
    }
    CHECK(ebtl_yield_busy(&y));
    for (int i = 0; i < 20; i++) {
        ebtl_yield_sample(&y, 3);   /* 3 of 2 CPUs: exactly 150 %, not above */
    }
    CHECK(!ebtl_yield_busy(&y));
    y.load_pct = 0;                 /* never */
    for (int i = 0; i < 20; i++) {
        ebtl_yield_sample(&y, 100);
    }
    CHECK(!ebtl_yield_busy(&y));
}

/* Only a pass that handled nothing yields, only on a busy host, and each
 * is counted; load_pct 0 never does. */
static void due_only_when_idle_and_busy(void)
{
    ebtl_yield_t y;
    ebtl_yield_init(&y, 1);   /* 1 %: any host with this test running is busy */
    uint64_t now = 1000;
    CHECK(ebtl_yield_due(&y, now, 0));            /* the first pass samples /proc/loadavg */
    CHECK(y.runnable_x16 > 0);
    CHECK(!ebtl_yield_due(&y, now + 1, 5));       /* it had work */
    CHECK(ebtl_yield_due(&y, now + 2, 0));
    CHECK(y.yields == 2);
    ebtl_yield_init(&y, 0);
    CHECK(!ebtl_yield_due(&y, now, 0));
    CHECK(y.yields == 0 && y.runnable_x16 == 0);  /* off: not even sampled */
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("yield", parse_loadavg);
    RUN("yield", busy_by_average);
    RUN("yield", due_only_when_idle_and_busy);
    return UNIT_RESULT();
}

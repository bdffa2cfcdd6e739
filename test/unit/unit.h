/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Minimal unit-test support: each CASE prints one "PASS unit/<file>/<case>"
 * or "FAIL ..." line (the format contrib/check counts); main returns nonzero
 * when any case failed.
 *
 * Case names on the command line choose the cases (main calls
 * unit_init(argc, argv) first):
 *   test_x                       every case
 *   test_x CASE [CASE...]        only these: a case's function name (every
 *                                suite that runs it), SUITE/CASE, or the
 *                                result's own name unit/SUITE/CASE
 *   test_x --list                the cases' names (SUITE/CASE), running none
 * A name that matches no case makes the program exit 2 listing the cases
 * (from UNIT_RESULT(), so cases named correctly next to it have run).
 * Code a main runs between cases (setup) still runs when cases are skipped.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failed_cases;
static int unit_case_failed;
static int unit_cases_run; /* cases run so far */

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            printf("    %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
            unit_case_failed = 1;                                                \
        }                                                                        \
    } while (0)

#define CHECK_STR_CONTAINS(haystack, needle)                                     \
    do {                                                                         \
        if (strstr((haystack), (needle)) == NULL) {                              \
            printf("    %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__,      \
                   __LINE__, (haystack), (needle));                              \
            unit_case_failed = 1;                                                \
        }                                                                        \
    } while (0)

/* ---- case selection by name */
#define UNIT_MAX_NAMES 64
#define UNIT_MAX_CASES 256
static const char *unit_prog = "unit";
static const char *unit_names[UNIT_MAX_NAMES]; /* the names asked for */
static int unit_nnames;
static int unit_name_used[UNIT_MAX_NAMES];
static const char *unit_seen_suite[UNIT_MAX_CASES]; /* every case met, run or not */
static const char *unit_seen_case[UNIT_MAX_CASES];
static int unit_nseen;
static int unit_listing;

/* Reads the command line: case names, --list, --help. Exits 2 on an unknown
 * option. Programs with options of their own remove them first. */
static inline void unit_init(int argc, char **argv)
{
    if (argc > 0 && argv[0] != NULL) {
        const char *slash = strrchr(argv[0], '/');
        unit_prog = slash ? slash + 1 : argv[0];
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--list") == 0) {
            unit_listing = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: %s [--list] [CASE|SUITE/CASE|unit/SUITE/CASE]...\n"
                   "  no names: every case; --list: the case names\n",
                   unit_prog);
            exit(0);
        } else if (a[0] == '-') {
            fprintf(stderr, "%s: unknown option '%s' (usage: %s [--list] [CASE]...)\n",
                    unit_prog, a, unit_prog);
            exit(2);
        } else if (unit_nnames < UNIT_MAX_NAMES) {
            unit_names[unit_nnames++] = a;
        } else {
            fprintf(stderr, "%s: more than %d case names\n", unit_prog, UNIT_MAX_NAMES);
            exit(2);
        }
    }
}

/* Does NAME (as given on the command line) name case FN of SUITE? */
static inline int unit_name_matches(const char *name, const char *suite, const char *fn)
{
    size_t ls = strlen(suite);
    if (strncmp(name, "unit/", 5) == 0) {
        name += 5;
    }
    if (strcmp(name, fn) == 0) {
        return 1;
    }
    return strncmp(name, suite, ls) == 0 && name[ls] == '/' && strcmp(name + ls + 1, fn) == 0;
}

/* Records the case as known; true when it is to run. */
static inline int unit_want(const char *suite, const char *fn)
{
    int seen = 0;
    for (int i = 0; i < unit_nseen; i++) {
        if (strcmp(unit_seen_suite[i], suite) == 0 && strcmp(unit_seen_case[i], fn) == 0) {
            seen = 1;
        }
    }
    if (!seen && unit_nseen < UNIT_MAX_CASES) {
        unit_seen_suite[unit_nseen] = suite;
        unit_seen_case[unit_nseen++] = fn;
    }
    if (unit_listing) {
        if (!seen) {
            printf("%s/%s\n", suite, fn);
        }
        return 0;
    }
    if (unit_nnames == 0) {
        return 1;
    }
    int want = 0;
    for (int i = 0; i < unit_nnames; i++) {
        if (unit_name_matches(unit_names[i], suite, fn)) {
            unit_name_used[i] = 1;
            want = 1;
        }
    }
    return want;
}

/* 0 all ran cases passed, 1 a case failed, 2 a name matched no case. */
static inline int unit_result(void)
{
    int unknown = 0;
    if (unit_listing) {
        return 0;
    }
    fflush(stdout); /* the results before the complaint */
    for (int i = 0; i < unit_nnames; i++) {
        if (!unit_name_used[i]) {
            fprintf(stderr, "%s: no case named '%s'\n", unit_prog, unit_names[i]);
            unknown = 1;
        }
    }
    if (unknown) {
        fprintf(stderr, "%s: the cases are:\n", unit_prog);
        for (int i = 0; i < unit_nseen; i++) {
            fprintf(stderr, "  %s/%s\n", unit_seen_suite[i], unit_seen_case[i]);
        }
        return 2;
    }
    return unit_failed_cases ? 1 : 0;
}

#define RUN(suite, fn)                                                           \
    do {                                                                         \
        if (unit_want((suite), #fn)) {                                           \
            unit_case_failed = 0;                                                \
            unit_cases_run++;                                                    \
            fn();                                                                \
            printf("%s unit/%s/%s\n", unit_case_failed ? "FAIL" : "PASS", suite, #fn); \
            unit_failed_cases += unit_case_failed;                               \
        }                                                                        \
    } while (0)

#define UNIT_RESULT() unit_result()

#endif

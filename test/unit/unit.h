/*
 * Minimal unit-test support: each CASE prints one "PASS unit/<file>/<case>"
 * or "FAIL ..." line (the format contrib/check counts); main returns nonzero
 * when any case failed.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed_cases;
static int unit_case_failed;

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

#define RUN(suite, fn)                                                           \
    do {                                                                         \
        unit_case_failed = 0;                                                    \
        fn();                                                                    \
        printf("%s unit/%s/%s\n", unit_case_failed ? "FAIL" : "PASS", suite, #fn); \
        unit_failed_cases += unit_case_failed;                                   \
    } while (0)

#define UNIT_RESULT() (unit_failed_cases ? 1 : 0)

#endif

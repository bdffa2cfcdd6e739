/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* MCA parameter value parsing: sizes, keywords, ranges. */
#include "ebtl_params.h"

#include <ctype.h>
#include <stdio.h>
#include <strings.h>

int ebtl_param_parse_size(const char *text, uint64_t *bytes)
{
    if (text == NULL) {
        return -1;
    }
    while (isspace((unsigned char) *text)) {
        text++;
    }
    if (!isdigit((unsigned char) *text)) {
        return -1;
    }
    uint64_t v = 0;
    for (; isdigit((unsigned char) *text); text++) {
        unsigned d = (unsigned) (*text - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return -1;
        }
        v = v * 10 + d;
    }
    unsigned shift = 0;
    switch (tolower((unsigned char) *text)) {
    case 'k': shift = 10; text++; break;
    case 'm': shift = 20; text++; break;
    case 'g': shift = 30; text++; break;
    case 't': shift = 40; text++; break;
    default: break;
    }
    if (shift && (*text == 'b' || *text == 'B')) {
        text++; /* accept "64kB", "4MB" */
    } else if (shift && (*text == 'i') && (text[1] == 'B' || text[1] == 'b')) {
        text += 2; /* and "64KiB" */
    }
    while (isspace((unsigned char) *text)) {
        text++;
    }
    if (*text != '\0') {
        return -1;
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        return -1;
    }
    *bytes = v << shift;
    return 0;
}

int ebtl_param_keyword(const char *name, const char *value, const char *const choices[],
                      char *err, size_t errlen)
{
    for (int i = 0; value && choices[i]; i++) {
        if (strcasecmp(value, choices[i]) == 0) {
            return i;
        }
    }
    size_t used = (size_t) snprintf(err, errlen, "%s=\"%s\" is not one of:", name,
                                    value ? value : "");
    for (int i = 0; choices[i] && used < errlen; i++) {
        used += (size_t) snprintf(err + used, errlen - used, "%s %s", i ? "," : "", choices[i]);
    }
    return -1;
}

int ebtl_param_check_range(const char *name, long long value, long long min, long long max,
                          char *err, size_t errlen)
{
    if (value < min || value > max) {
        snprintf(err, errlen, "%s=%lld is out of range [%lld, %lld]", name, value, min, max);
        return -1;
    }
    return 0;
}

int ebtl_param_size(const char *name, const char *text, uint64_t min, uint64_t max,
                   uint64_t *bytes, char *err, size_t errlen)
{
    uint64_t v;
    if (ebtl_param_parse_size(text, &v) != 0) {
        snprintf(err, errlen, "%s=\"%s\" is not a size (use bytes or a k/m/g suffix, e.g. 4m)",
                 name, text ? text : "");
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "%s=\"%s\" is out of range [%llu, %llu] bytes", name, text,
                 (unsigned long long) min, (unsigned long long) max);
        return -1;
    }
    *bytes = v;
    return 0;
}

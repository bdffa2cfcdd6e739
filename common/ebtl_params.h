/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Parsing and checking of MCA parameter values shared by both components.
 * Pure C (no Open MPI headers) so the rules are unit-tested; the messages
 * name the parameter and say what is accepted.
 */
#ifndef EBTL_PARAMS_H
#define EBTL_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "64k", "4M", "1g" (binary multiples) into bytes.
 * Returns 0, or -1 on junk, a negative number or overflow. */
int ebtl_param_parse_size(const char *text, uint64_t *bytes);

/* Index of `value` in the NULL-terminated `choices` (case-insensitive),
 * or -1 with "NAME=VALUE is not one of: a, b, c" in err. */
int ebtl_param_keyword(const char *name, const char *value, const char *const choices[],
                      char *err, size_t errlen);

/* 0 when min <= value <= max, else -1 with "NAME=V is out of range [min, max]". */
int ebtl_param_check_range(const char *name, long long value, long long min, long long max,
                          char *err, size_t errlen);

/* Check a size parameter's text and range; store the bytes. */
int ebtl_param_size(const char *name, const char *text, uint64_t min, uint64_t max,
                   uint64_t *bytes, char *err, size_t errlen);

#endif

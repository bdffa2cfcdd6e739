/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of MCA parameter parsing (common/ebtl_params.c). */
#include <stdint.h>

#include "ebtl_params.h"
#include "unit.h"

static void sizes(void)
{
    uint64_t v = 0;
    CHECK(ebtl_param_parse_size("4096", &v) == 0 && v == 4096);
    CHECK(ebtl_param_parse_size("64k", &v) == 0 && v == 65536);
    CHECK(ebtl_param_parse_size("64K", &v) == 0 && v == 65536);
    CHECK(ebtl_param_parse_size("4m", &v) == 0 && v == 4u << 20);
    CHECK(ebtl_param_parse_size("4MB", &v) == 0 && v == 4u << 20);
    CHECK(ebtl_param_parse_size("2KiB", &v) == 0 && v == 2048);
    CHECK(ebtl_param_parse_size(" 1g ", &v) == 0 && v == 1u << 30);
    CHECK(ebtl_param_parse_size("0", &v) == 0 && v == 0);
}

static void bad_sizes(void)
{
    uint64_t v = 7;
    CHECK(ebtl_param_parse_size("", &v) == -1);
    CHECK(ebtl_param_parse_size("-1", &v) == -1);
    CHECK(ebtl_param_parse_size("4q", &v) == -1);
    CHECK(ebtl_param_parse_size("k", &v) == -1);
    CHECK(ebtl_param_parse_size("1.5m", &v) == -1);
    CHECK(ebtl_param_parse_size("99999999999999999999", &v) == -1);
    CHECK(ebtl_param_parse_size("17179869184g", &v) == -1); /* 2^34 GiB overflows */
    CHECK(ebtl_param_parse_size(NULL, &v) == -1);
    CHECK(v == 7);
}

static void size_with_range(void)
{
    uint64_t v;
    char err[256];
    CHECK(ebtl_param_size("btl_x_buf", "1m", 4096, 1u << 30, &v, err, sizeof(err)) == 0);
    CHECK(ebtl_param_size("btl_x_buf", "1k", 4096, 1u << 30, &v, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "btl_x_buf=\"1k\" is out of range");
    CHECK(ebtl_param_size("btl_x_buf", "lots", 0, 10, &v, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "is not a size");
}

static void keywords(void)
{
    static const char *const choices[] = {"udp", "ofi", "eth", NULL};
    char err[256];
    CHECK(ebtl_param_keyword("btl_esp_wire", "udp", choices, err, sizeof(err)) == 0);
    CHECK(ebtl_param_keyword("btl_esp_wire", "ETH", choices, err, sizeof(err)) == 2);
    CHECK(ebtl_param_keyword("btl_esp_wire", "tcp", choices, err, sizeof(err)) == -1);
    CHECK(strcmp(err, "btl_esp_wire=\"tcp\" is not one of: udp, ofi, eth") == 0);
    CHECK(ebtl_param_keyword("btl_esp_wire", NULL, choices, err, sizeof(err)) == -1);
    CHECK(ebtl_param_keyword("btl_esp_wire", "ud", choices, err, sizeof(err)) == -1);
}

static void ranges(void)
{
    char err[256];
    CHECK(ebtl_param_check_range("btl_x_n", 5, 1, 10, err, sizeof(err)) == 0);
    CHECK(ebtl_param_check_range("btl_x_n", 0, 1, 10, err, sizeof(err)) == -1);
    CHECK(strcmp(err, "btl_x_n=0 is out of range [1, 10]") == 0);
    CHECK(ebtl_param_check_range("btl_x_n", 11, 1, 10, err, sizeof(err)) == -1);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("params", sizes);
    RUN("params", bad_sizes);
    RUN("params", size_with_range);
    RUN("params", keywords);
    RUN("params", ranges);
    return UNIT_RESULT();
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of interface selection (common/ebtl_ifsel.c). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "ebtl_ifsel.h"
#include "unit.h"

static ebtl_if_t mk(const char *name, int family, const char *addr, unsigned prefixlen)
{
    ebtl_if_t e;
    memset(&e, 0, sizeof(e));
    snprintf(e.name, sizeof(e.name), "%s", name);
    e.family = family;
    inet_pton(family, addr, e.addr);
    e.prefixlen = prefixlen;
    return e;
}

/* A host with loopback, two NICs and an IPv6 address. */
static ebtl_if_t host[5];
static void setup(void)
{
    host[0] = mk("lo", AF_INET, "127.0.0.1", 8);
    host[1] = mk("eth0", AF_INET, "10.1.2.3", 24);
    host[2] = mk("eth1", AF_INET, "192.168.7.9", 16);
    host[3] = mk("eth1", AF_INET6, "fd00:1::5", 64);
    host[4] = mk("lo", AF_INET6, "::1", 128);
}

static int select_names(const char *inc, const char *exc, char *names, size_t len, char *err)
{
    ebtl_if_t *out;
    size_t n;
    names[0] = '\0';
    if (ebtl_if_select(host, 5, inc, exc, "btl_x", &out, &n, err, 512) != 0) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char b[96];
        strncat(names, ebtl_if_format(&out[i], b, sizeof(b)), len - strlen(names) - 1);
        strncat(names, ";", len - strlen(names) - 1);
    }
    free(out);
    return (int) n;
}

static void include_by_name(void)
{
    char names[512], err[512];
    CHECK(select_names("eth1", NULL, names, sizeof(names), err) == 2);
    CHECK(strcmp(names, "eth1 192.168.7.9/16;eth1 fd00:1::5/64;") == 0);
    CHECK(select_names(" lo , eth0 ", NULL, names, sizeof(names), err) == 3);
}

static void include_by_cidr(void)
{
    char names[512], err[512];
    CHECK(select_names("10.1.0.0/16", NULL, names, sizeof(names), err) == 1);
    CHECK(strcmp(names, "eth0 10.1.2.3/24;") == 0);
    CHECK(select_names("192.168.7.8/31", NULL, names, sizeof(names), err) == 1);
    CHECK(select_names("192.168.7.8/32", NULL, names, sizeof(names), err) == -1);
    CHECK(select_names("fd00::/8", NULL, names, sizeof(names), err) == 1);
    CHECK(select_names("0.0.0.0/0", NULL, names, sizeof(names), err) == 3);
    CHECK(select_names("10.1.2.3", NULL, names, sizeof(names), err) == 1);
}

static void exclude_default_loopback(void)
{
    char names[512], err[512];
    CHECK(select_names(NULL, "127.0.0.0/8,::1", names, sizeof(names), err) == 3);
    CHECK(strstr(names, "lo ") == NULL);
    CHECK(select_names("", "", names, sizeof(names), err) == 5);
}

static void both_lists_is_an_error(void)
{
    char names[512], err[512];
    CHECK(select_names("eth0", "lo", names, sizeof(names), err) == -1);
    CHECK_STR_CONTAINS(err, "btl_x_if_include");
    CHECK_STR_CONTAINS(err, "set only one");
}

static void nothing_left_names_what_exists(void)
{
    char names[512], err[512];
    CHECK(select_names("eth7", NULL, names, sizeof(names), err) == -1);
    CHECK_STR_CONTAINS(err, "btl_x_if_include=\"eth7\"");
    CHECK_STR_CONTAINS(err, "eth0 10.1.2.3/24");
    CHECK(select_names(NULL, "0.0.0.0/0,::/0", names, sizeof(names), err) == -1);
    CHECK_STR_CONTAINS(err, "btl_x_if_exclude");
}

static void bad_items_are_named(void)
{
    ebtl_if_rules_t r;
    char err[256];
    CHECK(ebtl_if_rules_parse("10.0.0.0/33", &r, err, sizeof(err)) == -1);
    CHECK_STR_CONTAINS(err, "10.0.0.0/33");
    CHECK(ebtl_if_rules_parse("10.0.0.300/8", &r, err, sizeof(err)) == -1);
    CHECK(ebtl_if_rules_parse("10.0.0.0/", &r, err, sizeof(err)) == -1);
    CHECK(ebtl_if_rules_parse("10.0.0.0/8x", &r, err, sizeof(err)) == -1);
    CHECK(ebtl_if_rules_parse("fd00::/129", &r, err, sizeof(err)) == -1);
    CHECK(ebtl_if_rules_parse("averyveryverylongifname", &r, err, sizeof(err)) == -1);
    CHECK(ebtl_if_rules_parse(",,eth0,,", &r, err, sizeof(err)) == 0 && r.count == 1);
    ebtl_if_rules_free(&r);
    CHECK(ebtl_if_rules_parse(NULL, &r, err, sizeof(err)) == 0 && r.count == 0);
}

static void enumerate_finds_loopback(void)
{
    ebtl_if_t *all;
    size_t n;
    char err[256];
    CHECK(ebtl_if_enumerate(&all, &n, err, sizeof(err)) == 0);
    int lo = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].loopback && all[i].family == AF_INET && all[i].addr[0] == 127) {
            lo++;
            CHECK(all[i].prefixlen == 8);
            CHECK(all[i].mtu > 0);
        }
    }
    CHECK(lo == 1);
    free(all);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    setup();
    RUN("ifsel", include_by_name);
    RUN("ifsel", include_by_cidr);
    RUN("ifsel", exclude_default_loopback);
    RUN("ifsel", both_lists_is_an_error);
    RUN("ifsel", nothing_left_names_what_exists);
    RUN("ifsel", bad_items_are_named);
    RUN("ifsel", enumerate_finds_loopback);
    return UNIT_RESULT();
}

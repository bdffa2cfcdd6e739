/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* NIC locality (common/ebtl_locality.c) on hand-written hwloc topologies:
 * topo/two-pkg.xml (net0 on package 0 = PU 0, net1 on package 1 = PU 1)
 * and topo/machine-nics.xml (both NICs on the machine's bus). */
#include <stdbool.h>

#include "ebtl_locality.h"
#include "unit.h"

#ifndef UNIT_SRCDIR
#define UNIT_SRCDIR "."
#endif

/* The topology in file, or NULL after a failed check. */
static hwloc_topology_t load(const char *file)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/test/unit/topo/%s", UNIT_SRCDIR, file);
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) {
        CHECK(0);
        return NULL;
    }
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_set_xml(t, path) != 0 || hwloc_topology_load(t) != 0) {
        printf("    cannot load %s\n", path);
        CHECK(0);
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}

/* Place names bound to the PUs in list ("0", "1", "0-1"; NULL: unknown). */
static bool place(hwloc_topology_t t, const char *list, const char *const *names, size_t n,
                  ebtl_nic_place_t *out, char *why)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    if (list != NULL) {
        hwloc_bitmap_list_sscanf(cpus, list);
    }
    bool r = ebtl_locality_place(t, list != NULL ? cpus : NULL, names, n, out, why, 128);
    hwloc_bitmap_free(cpus);
    return r;
}

static const char *const both[] = {"net0", "net1"};

static void bound_to_package_0(void)
{
    hwloc_topology_t t = load("two-pkg.xml");
    if (t == NULL) {
        return;
    }
    ebtl_nic_place_t p[2];
    char why[128];
    CHECK(place(t, "0", both, 2, p, why));
    CHECK(p[0] == EBTL_NIC_NEAR && p[1] == EBTL_NIC_FAR);
    CHECK_STR_CONTAINS(why, "1 near, 1 far");
    hwloc_topology_destroy(t);
}

static void bound_to_package_1(void)
{
    hwloc_topology_t t = load("two-pkg.xml");
    if (t == NULL) {
        return;
    }
    ebtl_nic_place_t p[2];
    char why[128];
    CHECK(place(t, "1", both, 2, p, why));
    CHECK(p[0] == EBTL_NIC_FAR && p[1] == EBTL_NIC_NEAR);
    hwloc_topology_destroy(t);
}

/* Bound to every CPU, or binding unknown: nothing to prefer. */
static void unbound_uses_all(void)
{
    hwloc_topology_t t = load("two-pkg.xml");
    if (t == NULL) {
        return;
    }
    ebtl_nic_place_t p[2];
    char why[128];
    CHECK(!place(t, "0-1", both, 2, p, why));
    CHECK_STR_CONTAINS(why, "not bound");
    CHECK(p[0] == EBTL_NIC_UNKNOWN && p[1] == EBTL_NIC_UNKNOWN);
    CHECK(!place(t, "0-63", both, 2, p, why));
    CHECK_STR_CONTAINS(why, "not bound");
    CHECK(!place(t, NULL, both, 2, p, why));
    CHECK_STR_CONTAINS(why, "not bound");
    CHECK(!place(t, "5", both, 2, p, why));
    CHECK_STR_CONTAINS(why, "outside");
    hwloc_topology_destroy(t);
}

/* Loopback and virtual interfaces have no device: unknown, not far. */
static void interfaces_without_device(void)
{
    hwloc_topology_t t = load("two-pkg.xml");
    if (t == NULL) {
        return;
    }
    const char *const names[] = {"lo", "net1", "veth7", "net0"};
    ebtl_nic_place_t p[4];
    char why[128];
    CHECK(place(t, "1", names, 4, p, why));
    CHECK(p[0] == EBTL_NIC_UNKNOWN && p[1] == EBTL_NIC_NEAR && p[2] == EBTL_NIC_UNKNOWN
          && p[3] == EBTL_NIC_FAR);
    const char *const virt[] = {"lo", "veth7"};
    CHECK(!place(t, "1", virt, 2, p, why));
    CHECK_STR_CONTAINS(why, "no network device");
    /* only far devices known: none is nearer than another we could use */
    const char *const far_only[] = {"lo", "net0"};
    CHECK(!place(t, "1", far_only, 2, p, why));
    CHECK(p[1] == EBTL_NIC_FAR);
    CHECK_STR_CONTAINS(why, "nearer");
    hwloc_topology_destroy(t);
}

/* Both NICs on the machine's bus: each is as near to every package. */
static void no_difference(void)
{
    hwloc_topology_t t = load("machine-nics.xml");
    if (t == NULL) {
        return;
    }
    ebtl_nic_place_t p[2];
    char why[128];
    CHECK(!place(t, "0", both, 2, p, why));
    CHECK(p[0] == EBTL_NIC_NEAR && p[1] == EBTL_NIC_NEAR);
    CHECK_STR_CONTAINS(why, "nearer");
    hwloc_topology_destroy(t);
}

static void where_names_the_package(void)
{
    hwloc_topology_t t = load("two-pkg.xml");
    if (t == NULL) {
        return;
    }
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    char buf[64];
    hwloc_bitmap_list_sscanf(cpus, "1");
    CHECK(strcmp(ebtl_locality_where(t, cpus, buf, sizeof(buf)), "package 1") == 0);
    hwloc_bitmap_list_sscanf(cpus, "0-1");
    CHECK(strcmp(ebtl_locality_where(t, cpus, buf, sizeof(buf)), "CPUs 0-1") == 0);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(t);
}

/* This process's binding reads as a non-empty set. */
static void my_cpus(void)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    CHECK(ebtl_locality_my_cpus(cpus) == 0);
    CHECK(!hwloc_bitmap_iszero(cpus));
    hwloc_bitmap_free(cpus);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("locality", bound_to_package_0);
    RUN("locality", bound_to_package_1);
    RUN("locality", unbound_uses_all);
    RUN("locality", interfaces_without_device);
    RUN("locality", no_difference);
    RUN("locality", where_names_the_package);
    RUN("locality", my_cpus);
    return UNIT_RESULT();
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* NIC locality from an hwloc topology (see ebtl_locality.h). */
#define _GNU_SOURCE
#include "ebtl_locality.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

const char *ebtl_nic_place_name(ebtl_nic_place_t place)
{
    switch (place) {
    case EBTL_NIC_NEAR:
        return "near";
    case EBTL_NIC_FAR:
        return "far";
    default:
        return "unknown";
    }
}

/* The network device named name, or NULL. */
static hwloc_obj_t find_nic(hwloc_topology_t topo, const char *name)
{
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_osdev(topo, o)) != NULL) {
        if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->name != NULL
            && strcmp(o->name, name) == 0) {
            return o;
        }
    }
    return NULL;
}

/* The CPUs a device is attached to: its first non-I/O ancestor's. In hwloc
 * 2 NUMA nodes are memory children, not ancestors, so the ancestor is a
 * package, a group or the machine (hwloc 1's walk up to a NUMA node finds
 * nothing here). */
static hwloc_const_cpuset_t nic_cpus(hwloc_topology_t topo, hwloc_obj_t dev)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, dev);
    return anc != NULL ? anc->cpuset : NULL;
}

bool ebtl_locality_place(hwloc_topology_t topo, hwloc_const_cpuset_t cpus, const char *const *names,
                         size_t n, ebtl_nic_place_t *place, char *why, size_t whylen)
{
    for (size_t i = 0; i < n; i++) {
        place[i] = EBTL_NIC_UNKNOWN;
    }
    hwloc_const_cpuset_t all = topo != NULL ? hwloc_topology_get_topology_cpuset(topo) : NULL;
    if (all == NULL) {
        snprintf(why, whylen, "no topology");
        return false;
    }
    if (cpus == NULL || hwloc_bitmap_isincluded(all, cpus)) {
        snprintf(why, whylen, "not bound");
        return false;
    }
    if (!hwloc_bitmap_intersects(all, cpus)) {
        snprintf(why, whylen, "bound outside the topology's CPUs");
        return false;
    }
    size_t near = 0, far = 0, devices = 0;
    for (size_t i = 0; i < n; i++) {
        hwloc_obj_t dev = find_nic(topo, names[i]);
        hwloc_const_cpuset_t at = dev != NULL ? nic_cpus(topo, dev) : NULL;
        if (at == NULL) {
            continue;
        }
        devices++;
        if (hwloc_bitmap_intersects(at, cpus)) {
            place[i] = EBTL_NIC_NEAR;
            near++;
        } else {
            place[i] = EBTL_NIC_FAR;
            far++;
        }
    }
    if (devices == 0) {
        snprintf(why, whylen, "no network device of these names in the topology");
        return false;
    }
    if (near == 0 || far == 0) {
        snprintf(why, whylen, "no interface is nearer than another");
        return false;
    }
    snprintf(why, whylen, "%zu near, %zu far", near, far);
    return true;
}

int ebtl_locality_my_cpus(hwloc_bitmap_t cpus)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    hwloc_bitmap_zero(cpus);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            hwloc_bitmap_set(cpus, (unsigned) c);
        }
    }
    return 0;
}

const char *ebtl_locality_where(hwloc_topology_t topo, hwloc_const_cpuset_t cpus, char *buf,
                                size_t len)
{
    int npkg = topo != NULL ? hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) : 0;
    for (int i = 0; i < npkg; i++) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned) i);
        if (npkg > 1 && hwloc_bitmap_isincluded(cpus, pkg->cpuset)) {
            snprintf(buf, len, "package %u", pkg->os_index);
            return buf;
        }
    }
    char list[64];
    hwloc_bitmap_list_snprintf(list, sizeof(list), cpus);
    snprintf(buf, len, "CPUs %s", list);
    return buf;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * NIC locality: which of a process's network interfaces are near the cores
 * it is bound to, from an hwloc topology (Open MPI's in a component, an XML
 * file in the unit test). A NIC is near when the CPUs of its closest
 * non-I/O ancestor (the package or NUMA node its PCI bus hangs off) overlap
 * the binding, far when they do not, unknown when the topology has no
 * network device of that name (loopback, veth, bonds). Pure C on hwloc, no
 * Open MPI headers.
 */
#ifndef EBTL_LOCALITY_H
#define EBTL_LOCALITY_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum ebtl_nic_place {
    EBTL_NIC_UNKNOWN = 0,
    EBTL_NIC_NEAR,
    EBTL_NIC_FAR
} ebtl_nic_place_t;

/* "near", "far", "unknown". */
const char *ebtl_nic_place_name(ebtl_nic_place_t place);

/*
 * Place each of the n interfaces names[i] relative to the binding `cpus`
 * (PUs by OS index; NULL: not known) in place[i]. Returns true when the
 * choice matters: the process is bound to part of the machine and at least
 * one interface is near and one far. Otherwise every place[i] is still
 * set (unknown when not bound), and `why` says in a few words why all
 * interfaces are equal ("not bound", "no network device in the topology",
 * "no interface is nearer than another"). `why` is set either way.
 */
bool ebtl_locality_place(hwloc_topology_t topo, hwloc_const_cpuset_t cpus, const char *const *names,
                         size_t n, ebtl_nic_place_t *place, char *why, size_t whylen);

/* The calling process's CPU binding (sched_getaffinity) into cpus.
 * Returns 0, or -1 when it cannot be read. */
int ebtl_locality_my_cpus(hwloc_bitmap_t cpus);

/* "package 1" / "NUMA node 0" / "PUs 0-3": where cpus lie in topo, for messages. */
const char *ebtl_locality_where(hwloc_topology_t topo, hwloc_const_cpuset_t cpus, char *buf,
                                size_t len);

#endif

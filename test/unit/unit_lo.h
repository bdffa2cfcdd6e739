/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The loopback interface as interface selection would give it (127.0.0.1/8),
 * for unit tests that open sockets or endpoints on it. */
#ifndef UNIT_LO_H
#define UNIT_LO_H

#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ebtl_ifsel.h"

static inline ebtl_if_t unit_lo_if(unsigned mtu)
{
    ebtl_if_t ifa;
    memset(&ifa, 0, sizeof(ifa));
    snprintf(ifa.name, sizeof(ifa.name), "lo");
    ifa.family = AF_INET;
    ifa.addr[0] = 127;
    ifa.addr[3] = 1;
    ifa.prefixlen = 8;
    ifa.ifindex = if_nametoindex("lo");
    ifa.mtu = mtu;
    ifa.loopback = true;
    return ifa;
}

#endif

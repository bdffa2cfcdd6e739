/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Modex address record: what a rank publishes about its local addresses so
 * that peers can reach it. Fixed layout, network byte order, versioned; the
 * decoder treats the bytes as untrusted. Layout in docs/wire-modex.md.
 */
#ifndef EBTL_MODEX_H
#define EBTL_MODEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebtl_ifsel.h"
#include "ebtl_route.h"

#define EBTL_MODEX_MAGIC 0x45535041u /* "ESPA" */
#define EBTL_MODEX_VERSION 3
#define EBTL_MODEX_MAX_ADDRS 16
/* Bytes of a link-level address a record may carry (an Ethernet MAC, a
 * libfabric endpoint name). */
#define EBTL_MODEX_LINK_MAX 32

enum ebtl_modex_kind { EBTL_MODEX_KIND_ESP = 1, EBTL_MODEX_KIND_SCTP = 2 };

/* What a record's link address is (esp's wires other than udp). */
enum ebtl_modex_link {
    EBTL_MODEX_LINK_NONE = 0,
    EBTL_MODEX_LINK_ETHER = 1,   /* 6-byte MAC of the interface, and the ethertype in link_arg */
    EBTL_MODEX_LINK_OFI = 2,     /* libfabric endpoint name (fi_getname) */
};

/* One reachable address of a rank (host byte order in memory). */
typedef struct ebtl_modex_addr {
    uint8_t family;          /* 4 or 6 */
    uint8_t prefixlen;       /* subnet of the interface, for reachability */
    uint16_t port;           /* UDP port the rank listens on */
    uint32_t mtu;            /* interface MTU */
    uint16_t net_id;         /* which local interface (index into the sender's list) */
    uint16_t port2;          /* a second port (esp: the priority channel), 0 if none */
    uint8_t addr[16];        /* network byte order; IPv4 in the first 4 */
    uint8_t link_kind;       /* enum ebtl_modex_link */
    uint8_t link_len;        /* bytes of link used, <= EBTL_MODEX_LINK_MAX */
    uint16_t link_arg;       /* ETHER: the ethertype */
    uint8_t link[EBTL_MODEX_LINK_MAX];
} ebtl_modex_addr_t;

/* On the wire. */
typedef struct ebtl_modex_wire_header {
    uint32_t magic;
    uint8_t version;
    uint8_t kind;
    uint16_t count;
    uint64_t epoch;          /* the publishing process's random instance number */
} ebtl_modex_wire_header_t;

typedef struct ebtl_modex_wire_addr {
    uint8_t family;
    uint8_t prefixlen;
    uint16_t port;
    uint32_t mtu;
    uint16_t net_id;
    uint16_t port2;
    uint8_t addr[16];
    uint8_t link_kind;
    uint8_t link_len;
    uint16_t link_arg;
    uint8_t link[EBTL_MODEX_LINK_MAX];
} ebtl_modex_wire_addr_t;

_Static_assert(sizeof(ebtl_modex_wire_header_t) == 16, "modex header is 16 bytes");
_Static_assert(sizeof(ebtl_modex_wire_addr_t) == 64, "modex address entry is 64 bytes");

/* Bytes needed for `count` addresses. */
size_t ebtl_modex_size(size_t count);

/* Encode into buf (at least ebtl_modex_size(count) bytes). Returns the length
 * written, or 0 when count is 0 or over EBTL_MODEX_MAX_ADDRS or buf is short. */
size_t ebtl_modex_encode(enum ebtl_modex_kind kind, uint64_t epoch, const ebtl_modex_addr_t *addrs,
                        size_t count, void *buf, size_t buflen);

/* Decode untrusted bytes. Returns the number of addresses (1..max) and the
 * epoch, or -1 when the record is malformed: wrong magic/version/kind, bad
 * length or family, no port and no link address, a link address of an
 * unknown kind or too long. */
int ebtl_modex_decode(enum ebtl_modex_kind kind, const void *buf, size_t buflen,
                     ebtl_modex_addr_t *addrs, size_t max, uint64_t *epoch);

/*
 * Which of a peer's published addresses to use, and from which of our
 * addresses: same family, both ports published, our subnet first, then
 * maybe routed; loopback only to loopback and only when the peer is on this
 * host. Returns the index into addrs with *nic set to the index into ifs,
 * or -1.
 */
int ebtl_modex_choose_path(const ebtl_if_t *ifs, size_t nifs, const ebtl_modex_addr_t *addrs,
                          int naddrs, bool same_host, size_t *nic);

/*
 * Every path to a peer, for a transport that uses them all at once: a pair
 * of one of our addresses and one of the peer's (same family, both ports
 * published).
 *  - Loopback: only loopback to loopback on this host, and then that path
 *    alone.
 *  - Same subnet first: for each of our addresses, the peer's address on
 *    its subnet.
 *  - Then routed pairs: each of our (non-loopback) addresses that shares no
 *    subnet with the peer gets a path to a peer address not used by another
 *    path when the route to it leaves by that address's interface (route:
 *    the lookup, ebtl_route_kernel in a component; NULL: none).
 *  - When neither gives a path, the one path ebtl_modex_choose_path picks
 *    (maybe routed).
 * Fills nic[i] (index into ifs) and addr[i] (index into addrs) for up to
 * max paths; returns how many (0: the peer is unreachable).
 */
int ebtl_modex_choose_paths(const ebtl_if_t *ifs, size_t nifs, const ebtl_modex_addr_t *addrs,
                            int naddrs, bool same_host, const ebtl_route_t *route, size_t *nic,
                            int *addr, int max);

/* The same with our addresses whose far[i] is set (NIC locality) taken
 * after all the others, so that they get a path only when the others
 * leave room or reach nothing; far NULL: in their order. Returns how many
 * paths (0: unreachable, or out of memory). */
int ebtl_modex_choose_paths_near_first(const ebtl_if_t *ifs, const bool *far, size_t nifs,
                                       const ebtl_modex_addr_t *addrs, int naddrs, bool same_host,
                                       const ebtl_route_t *route, size_t *nic, int *addr, int max);

/* Whether a can be sent to: both ports published (udp), or a link
 * address (esp's other wires). */
bool ebtl_modex_usable(const ebtl_modex_addr_t *a);

/* Whether the pair of our address ifa and the peer's a is on one link: the
 * same subnet, or loopback to loopback. A path that is not is routed. */
bool ebtl_modex_on_link(const ebtl_if_t *ifa, const ebtl_modex_addr_t *a);

#endif

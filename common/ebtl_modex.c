/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Modex address records: encode for publication, decode untrusted bytes. */
#include "ebtl_modex.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

size_t ebtl_modex_size(size_t count)
{
    return sizeof(ebtl_modex_wire_header_t) + count * sizeof(ebtl_modex_wire_addr_t);
}

static uint64_t hton64(uint64_t v)
{
    return ((uint64_t) htonl((uint32_t) v) << 32) | htonl((uint32_t) (v >> 32));
}

size_t ebtl_modex_encode(enum ebtl_modex_kind kind, uint64_t epoch, const ebtl_modex_addr_t *addrs,
                        size_t count, void *buf, size_t buflen)
{
    if (count == 0 || count > EBTL_MODEX_MAX_ADDRS || buflen < ebtl_modex_size(count)) {
        return 0;
    }
    ebtl_modex_wire_header_t h = {
        .magic = htonl(EBTL_MODEX_MAGIC),
        .version = EBTL_MODEX_VERSION,
        .kind = (uint8_t) kind,
        .count = htons((uint16_t) count),
        .epoch = hton64(epoch),
    };
    unsigned char *p = buf;
    memcpy(p, &h, sizeof(h));
    p += sizeof(h);
    for (size_t i = 0; i < count; i++) {
        ebtl_modex_wire_addr_t w = {
            .family = addrs[i].family,
            .prefixlen = addrs[i].prefixlen,
            .port = htons(addrs[i].port),
            .mtu = htonl(addrs[i].mtu),
            .net_id = htons(addrs[i].net_id),
            .port2 = htons(addrs[i].port2),
            .link_kind = addrs[i].link_kind,
            .link_len = addrs[i].link_len,
            .link_arg = htons(addrs[i].link_arg),
        };
        memcpy(w.addr, addrs[i].addr, sizeof(w.addr));
        memcpy(w.link, addrs[i].link, sizeof(w.link));
        memcpy(p, &w, sizeof(w));
        p += sizeof(w);
    }
    return ebtl_modex_size(count);
}

/* The unused bytes of a link address are zero: one record, one encoding. */
static bool zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

int ebtl_modex_decode(enum ebtl_modex_kind kind, const void *buf, size_t buflen,
                     ebtl_modex_addr_t *addrs, size_t max, uint64_t *epoch)
{
    ebtl_modex_wire_header_t h;
    if (buf == NULL || buflen < sizeof(h)) {
        return -1;
    }
    memcpy(&h, buf, sizeof(h));
    size_t count = ntohs(h.count);
    if (ntohl(h.magic) != EBTL_MODEX_MAGIC || h.version != EBTL_MODEX_VERSION || h.kind != kind
        || count == 0 || count > EBTL_MODEX_MAX_ADDRS || count > max
        || buflen != ebtl_modex_size(count)) {
        return -1;
    }
    const unsigned char *p = (const unsigned char *) buf + sizeof(h);
    for (size_t i = 0; i < count; i++, p += sizeof(ebtl_modex_wire_addr_t)) {
        ebtl_modex_wire_addr_t w;
        memcpy(&w, p, sizeof(w));
        unsigned maxlen = w.family == 4 ? 32 : 128;
        if ((w.family != 4 && w.family != 6) || w.prefixlen > maxlen
            || w.link_kind > EBTL_MODEX_LINK_OFI || w.link_len > EBTL_MODEX_LINK_MAX
            || (w.link_kind == EBTL_MODEX_LINK_NONE) != (w.link_len == 0)
            || (w.port == 0 && w.link_len == 0) || !zero(w.link + w.link_len,
                                                           EBTL_MODEX_LINK_MAX - w.link_len)) {
            return -1;
        }
        addrs[i] = (ebtl_modex_addr_t) {
            .family = w.family,
            .prefixlen = w.prefixlen,
            .port = ntohs(w.port),
            .mtu = ntohl(w.mtu),
            .net_id = ntohs(w.net_id),
            .port2 = ntohs(w.port2),
            .link_kind = w.link_kind,
            .link_len = w.link_len,
            .link_arg = ntohs(w.link_arg),
        };
        memcpy(addrs[i].addr, w.addr, sizeof(w.addr));
        memcpy(addrs[i].link, w.link, w.link_len);
    }
    *epoch = hton64(h.epoch);
    return (int) count;
}

bool ebtl_modex_usable(const ebtl_modex_addr_t *a)
{
    return (a->port != 0 && a->port2 != 0) || a->link_len != 0;
}

static bool same_prefix(const unsigned char *a, const unsigned char *b, unsigned bits)
{
    unsigned bytes = bits / 8, rest = bits % 8;
    if (memcmp(a, b, bytes) != 0) {
        return false;
    }
    return rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff00 >> rest)) == 0;
}

static bool is_loopback(const ebtl_modex_addr_t *a)
{
    static const unsigned char v6lo[16] = {[15] = 1};
    return a->family == 4 ? a->addr[0] == 127 : memcmp(a->addr, v6lo, 16) == 0;
}

/* How well our interface i reaches the peer's address j: 3 loopback on
 * this host, 2 same subnet, 1 maybe routed, 0 not at all. */
static int path_score(const ebtl_if_t *ifs, size_t i, const ebtl_modex_addr_t *addrs, int j,
                      bool same_host)
{
    int family = ifs[i].family == AF_INET ? 4 : 6;
    if (addrs[j].family != family || !ebtl_modex_usable(&addrs[j])) {
        return 0;
    }
    bool peer_lo = is_loopback(&addrs[j]);
    if (ifs[i].loopback || peer_lo) {
        return ifs[i].loopback && peer_lo && same_host ? 3 : 0;
    }
    return same_prefix(ifs[i].addr, addrs[j].addr, ifs[i].prefixlen) ? 2 : 1;
}

/* Does our address i share a subnet with a usable address of the peer's? */
static bool shares_subnet(const ebtl_if_t *ifs, size_t i, const ebtl_modex_addr_t *addrs,
                          int naddrs, bool same_host)
{
    for (int j = 0; j < naddrs; j++) {
        if (path_score(ifs, i, addrs, j, same_host) == 2) {
            return true;
        }
    }
    return false;
}

static bool addr_used(const int *addr, int n, int j)
{
    for (int k = 0; k < n; k++) {
        if (addr[k] == j) {
            return true;
        }
    }
    return false;
}

int ebtl_modex_choose_paths(const ebtl_if_t *ifs, size_t nifs, const ebtl_modex_addr_t *addrs,
                            int naddrs, bool same_host, const ebtl_route_t *route, size_t *nic,
                            int *addr, int max)
{
    size_t best_nic = 0;
    int best = ebtl_modex_choose_path(ifs, nifs, addrs, naddrs, same_host, &best_nic);
    if (best < 0 || max < 1) {
        return 0;
    }
    int score = path_score(ifs, best_nic, addrs, best, same_host);
    int n = 0;
    if (score == 3) {
        nic[0] = best_nic;   /* loopback: one path */
        addr[0] = best;
        return 1;
    }
    /* Same subnet. */
    for (size_t i = 0; score == 2 && i < nifs && n < max; i++) {
        for (int j = 0; j < naddrs; j++) {
            if (path_score(ifs, i, addrs, j, same_host) == 2) {
                nic[n] = i;
                addr[n] = j;
                n++;
                break;
            }
        }
    }
    /* Routed: the route to the peer's address leaves by our interface.
     * Each address is looked up once (the route does not depend on ours). */
    int oif[EBTL_MODEX_MAX_ADDRS];
    for (int j = 0; j < EBTL_MODEX_MAX_ADDRS; j++) {
        oif[j] = -2;   /* not asked yet */
    }
    for (size_t i = 0; route != NULL && route->oif != NULL && i < nifs && n < max; i++) {
        if (ifs[i].loopback || shares_subnet(ifs, i, addrs, naddrs, same_host)) {
            continue;
        }
        for (int j = 0; j < naddrs; j++) {
            if (path_score(ifs, i, addrs, j, same_host) != 1 || addr_used(addr, n, j)) {
                continue;
            }
            int out;
            if (j < EBTL_MODEX_MAX_ADDRS && oif[j] != -2) {
                out = oif[j];
            } else {
                out = route->oif(route->ctx, ifs[i].family, addrs[j].addr);
                if (j < EBTL_MODEX_MAX_ADDRS) {
                    oif[j] = out;
                }
            }
            if (out >= 0 && (unsigned) out == ifs[i].ifindex) {
                nic[n] = i;
                addr[n] = j;
                n++;
                break;
            }
        }
    }
    if (n == 0) {
        nic[0] = best_nic;   /* no subnet shared, nothing routed: maybe routed */
        addr[0] = best;
        n = 1;
    }
    return n;
}

int ebtl_modex_choose_paths_near_first(const ebtl_if_t *ifs, const bool *far, size_t nifs,
                                       const ebtl_modex_addr_t *addrs, int naddrs, bool same_host,
                                       const ebtl_route_t *route, size_t *nic, int *addr, int max)
{
    if (far == NULL || nifs == 0) {
        return ebtl_modex_choose_paths(ifs, nifs, addrs, naddrs, same_host, route, nic, addr, max);
    }
    ebtl_if_t *sorted = malloc(nifs * sizeof(*sorted));
    size_t *order = malloc(nifs * sizeof(*order));
    int n = 0;
    if (sorted != NULL && order != NULL) {
        size_t k = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < nifs; i++) {
                if (far[i] == (pass == 1)) {
                    order[k] = i;
                    sorted[k++] = ifs[i];
                }
            }
        }
        n = ebtl_modex_choose_paths(sorted, nifs, addrs, naddrs, same_host, route, nic, addr, max);
        for (int j = 0; j < n; j++) {
            nic[j] = order[nic[j]];
        }
    }
    free(sorted);
    free(order);
    return n;
}

bool ebtl_modex_on_link(const ebtl_if_t *ifa, const ebtl_modex_addr_t *a)
{
    int family = ifa->family == AF_INET ? 4 : 6;
    if (a->family != family) {
        return false;
    }
    if (ifa->loopback || is_loopback(a)) {
        return ifa->loopback && is_loopback(a);
    }
    return same_prefix(ifa->addr, a->addr, ifa->prefixlen);
}

int ebtl_modex_choose_path(const ebtl_if_t *ifs, size_t nifs, const ebtl_modex_addr_t *addrs,
                          int naddrs, bool same_host, size_t *nic)
{
    int best = -1, best_score = 0;
    for (size_t i = 0; i < nifs; i++) {
        for (int j = 0; j < naddrs; j++) {
            int score = path_score(ifs, i, addrs, j, same_host);
            if (score > best_score) {
                best_score = score;
                best = j;
                *nic = i;
            }
        }
    }
    return best;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of modex address records (common/ebtl_modex.c): round trip, and
 * every kind of malformed record is refused without reading out of bounds;
 * the choice of paths from them, with routes given by the test; and the
 * kernel's route lookup (common/ebtl_route.c). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ebtl_modex.h"
#include "ebtl_route.h"
#include "unit.h"

static uint64_t epoch;

static ebtl_modex_addr_t addr4(const char *a, uint16_t port)
{
    ebtl_modex_addr_t m;
    memset(&m, 0, sizeof(m));
    m.family = 4;
    m.prefixlen = 24;
    m.port = port;
    m.mtu = 9000;
    m.net_id = 1;
    inet_pton(AF_INET, a, m.addr);
    return m;
}

static void round_trip(void)
{
    ebtl_modex_addr_t in[2] = {addr4("10.1.2.3", 50000), addr4("10.2.2.3", 50001)};
    in[1].family = 6;
    in[1].prefixlen = 64;
    inet_pton(AF_INET6, "fd00::7", in[1].addr);
    unsigned char buf[512];
    size_t len = ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x0102030405060708ull, in, 2, buf, sizeof(buf));
    CHECK(len == ebtl_modex_size(2));
    CHECK(len == 16 + 2 * 64);
    ebtl_modex_addr_t out[EBTL_MODEX_MAX_ADDRS];
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_ESP, buf, len, out, EBTL_MODEX_MAX_ADDRS, &epoch) == 2);
    CHECK(memcmp(in, out, sizeof(in)) == 0);
    /* network byte order on the wire */
    CHECK(buf[0] == 0x45 && buf[1] == 0x53 && buf[2] == 0x50 && buf[3] == 0x41);
    CHECK(buf[16 + 2] == (50000 >> 8) && buf[16 + 3] == (50000 & 0xff));
    CHECK(epoch == 0x0102030405060708ull && buf[8] == 1 && buf[15] == 8);
}

static void encode_limits(void)
{
    ebtl_modex_addr_t in[EBTL_MODEX_MAX_ADDRS + 1];
    for (int i = 0; i <= EBTL_MODEX_MAX_ADDRS; i++) {
        in[i] = addr4("10.0.0.1", 1);
    }
    unsigned char buf[2048];
    CHECK(ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x0102030405060708ull, in, 0, buf, sizeof(buf)) == 0);
    CHECK(ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x0102030405060708ull, in, EBTL_MODEX_MAX_ADDRS + 1, buf, sizeof(buf)) == 0);
    CHECK(ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x0102030405060708ull, in, 2, buf, ebtl_modex_size(2) - 1) == 0);
    CHECK(ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x0102030405060708ull, in, EBTL_MODEX_MAX_ADDRS, buf, sizeof(buf)) > 0);
}

static void malformed_records_refused(void)
{
    ebtl_modex_addr_t in[1] = {addr4("10.1.2.3", 50000)};
    unsigned char good[128], bad[128];
    size_t len = ebtl_modex_encode(EBTL_MODEX_KIND_SCTP, 0x0102030405060708ull, in, 1, good, sizeof(good));
    ebtl_modex_addr_t out[EBTL_MODEX_MAX_ADDRS];
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, good, len, out, 16, &epoch) == 1);
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_ESP, good, len, out, 16, &epoch) == -1);   /* other component */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, good, len - 1, out, 16, &epoch) == -1); /* truncated */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, good, 4, out, 16, &epoch) == -1);
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, NULL, 0, out, 16, &epoch) == -1);
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, good, len, out, 0, &epoch) == -1);    /* no room */
    memcpy(bad, good, len);
    bad[0] ^= 1;                                                               /* magic */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[4] = 1;                                                                /* version 1: the old layout */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[7] = 2;                                                                /* count says 2 */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[16] = 5;                                                               /* family */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[17] = 33;                                                              /* prefix > 32 */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[18] = bad[19] = 0;                                                     /* port 0, no link address */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[16 + 28] = 3;                                                          /* link kind unknown */
    bad[16 + 29] = 6;
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[16 + 28] = EBTL_MODEX_LINK_ETHER;                                      /* link address too long */
    bad[16 + 29] = EBTL_MODEX_LINK_MAX + 1;
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[16 + 28] = EBTL_MODEX_LINK_ETHER;                                      /* a kind and no bytes */
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
    memcpy(bad, good, len);
    bad[16 + 28] = EBTL_MODEX_LINK_ETHER;                                      /* a byte after the MAC */
    bad[16 + 29] = 6;
    bad[16 + 32 + 6] = 1;
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_SCTP, bad, len, out, 16, &epoch) == -1);
}

/* A record with a link address (esp's eth and ofi wires) and no ports:
 * decoded whole, usable; a record with neither is not. */
static void link_addresses(void)
{
    ebtl_modex_addr_t in[2] = {addr4("10.1.2.3", 0), addr4("10.1.2.4", 7)};
    in[0].link_kind = EBTL_MODEX_LINK_ETHER;
    in[0].link_len = 6;
    in[0].link_arg = 0x88b5;
    memcpy(in[0].link, "\x02\x00\x5e\x10\x20\x30", 6);
    in[1].port2 = 8;
    in[1].link_kind = EBTL_MODEX_LINK_OFI;
    in[1].link_len = EBTL_MODEX_LINK_MAX;
    memset(in[1].link, 0xab, EBTL_MODEX_LINK_MAX);
    unsigned char buf[512];
    size_t len = ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 1, in, 2, buf, sizeof(buf));
    ebtl_modex_addr_t out[EBTL_MODEX_MAX_ADDRS];
    CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_ESP, buf, len, out, 16, &epoch) == 2);
    CHECK(memcmp(in, out, sizeof(in)) == 0);
    CHECK(ebtl_modex_usable(&out[0]) && ebtl_modex_usable(&out[1]));
    ebtl_modex_addr_t none = addr4("10.1.2.5", 9);
    CHECK(!ebtl_modex_usable(&none));   /* one port of two */
}

/* Every truncation and every single-byte change of a valid record either
 * decodes to sane values or is refused; none crashes (run under valgrind/ASan). */
static void every_mutation_is_safe(void)
{
    ebtl_modex_addr_t in[3] = {addr4("10.1.2.3", 1), addr4("10.1.2.4", 2), addr4("10.1.2.5", 3)};
    unsigned char good[256], buf[256];
    size_t len = ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x0102030405060708ull, in, 3, good, sizeof(good));
    ebtl_modex_addr_t out[EBTL_MODEX_MAX_ADDRS];
    for (size_t cut = 0; cut < len; cut++) {
        CHECK(ebtl_modex_decode(EBTL_MODEX_KIND_ESP, good, cut, out, 16, &epoch) == -1);
    }
    for (size_t i = 0; i < len; i++) {
        for (int b = 0; b < 256; b++) {
            memcpy(buf, good, len);
            buf[i] = (unsigned char) b;
            int n = ebtl_modex_decode(EBTL_MODEX_KIND_ESP, buf, len, out, 16, &epoch);
            CHECK(n == -1 || n == 3);
            for (int k = 0; k < n; k++) {
                CHECK(out[k].family == 4 || out[k].family == 6);
                CHECK(out[k].port != 0 || out[k].link_len != 0);
                CHECK(out[k].link_len <= EBTL_MODEX_LINK_MAX);
            }
        }
    }
}

static ebtl_if_t iface4(const char *a, unsigned prefixlen, bool loopback)
{
    ebtl_if_t i;
    memset(&i, 0, sizeof(i));
    i.family = AF_INET;
    i.prefixlen = prefixlen;
    i.loopback = loopback;
    inet_pton(AF_INET, a, i.addr);
    return i;
}

static ebtl_if_t iface4_on(const char *a, unsigned prefixlen, unsigned ifindex)
{
    ebtl_if_t i = iface4(a, prefixlen, false);
    i.ifindex = ifindex;
    return i;
}

/* The path rule both components use: loopback only to this host's peers,
 * our subnet before a routed guess, never an address without both ports. */
static void path_choice(void)
{
    ebtl_if_t ifs[3] = {iface4("127.0.0.1", 8, true), iface4("10.1.0.5", 16, false),
                       iface4("192.168.7.5", 24, false)};
    ebtl_modex_addr_t peer[3] = {addr4("127.0.0.1", 1000), addr4("172.16.0.9", 1001),
                                addr4("192.168.7.9", 1002)};
    for (int j = 0; j < 3; j++) {
        peer[j].port2 = (uint16_t) (2000 + j);
    }
    size_t nic = 99;
    CHECK(ebtl_modex_choose_path(ifs, 3, peer, 3, true, &nic) == 0 && nic == 0);
    nic = 99;
    CHECK(ebtl_modex_choose_path(ifs, 3, peer, 3, false, &nic) == 2 && nic == 2);
    peer[2].port2 = 0;   /* published without its second port: unusable */
    nic = 99;
    CHECK(ebtl_modex_choose_path(ifs, 3, peer, 3, false, &nic) == 1 && nic == 1);
    CHECK(ebtl_modex_choose_path(ifs, 1, peer, 3, false, &nic) == -1);   /* lo only, remote peer */
    peer[1].family = 6;
    CHECK(ebtl_modex_choose_path(ifs, 3, peer, 3, false, &nic) == -1);   /* no family in common */
}

/* ---- paths with routes: a table the test gives (peer address -> ifindex) */
typedef struct fake_routes {
    struct {
        const char *dst;
        int oif;
    } r[8];
    int n;
    int lookups;   /* how many times the choice asked */
} fake_routes_t;

static int fake_oif(void *ctx, int family, const void *addr)
{
    fake_routes_t *t = ctx;
    t->lookups++;
    char s[INET6_ADDRSTRLEN];
    if (inet_ntop(family, addr, s, sizeof(s)) == NULL) {
        return -1;
    }
    for (int i = 0; i < t->n; i++) {
        if (strcmp(t->r[i].dst, s) == 0) {
            return t->r[i].oif;
        }
    }
    return -1;
}

static ebtl_modex_addr_t peer4(const char *a, int k)
{
    ebtl_modex_addr_t m = addr4(a, (uint16_t) (1000 + k));
    m.port2 = (uint16_t) (2000 + k);
    return m;
}

/* Our 10.1.0.5 (ifindex 2) shares the peer's 10.1.0.0/24; our 10.2.0.5
 * (ifindex 3) shares nothing but the route to the peer's 10.9.0.9 leaves by
 * it: two paths, the subnet's first. */
static void paths_routed_beside_subnet(void)
{
    ebtl_if_t ifs[2] = {iface4_on("10.1.0.5", 24, 2), iface4_on("10.2.0.5", 24, 3)};
    ebtl_modex_addr_t peer[2] = {peer4("10.9.0.9", 0), peer4("10.1.0.9", 1)};
    fake_routes_t t = {{{"10.1.0.9", 2}, {"10.9.0.9", 3}}, 2, 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 2);
    CHECK(nic[0] == 0 && addr[0] == 1);   /* same subnet */
    CHECK(nic[1] == 1 && addr[1] == 0);   /* routed */
    CHECK(ebtl_modex_on_link(&ifs[0], &peer[1]) && !ebtl_modex_on_link(&ifs[1], &peer[0]));
    /* Without a lookup: today's rule, the subnet's path alone. */
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, NULL, nic, addr, 4) == 1);
    CHECK(nic[0] == 0 && addr[0] == 1);
    /* A routed address without its second port is no path. */
    peer[0].port2 = 0;
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 1);
    /* Nor one of another family. */
    peer[0] = peer4("10.9.0.9", 0);
    peer[0].family = 6;
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 1);
}

/* The route to the peer's other address leaves by the NIC that already has
 * the subnet's path: no second path (it would be the same NIC). */
static void paths_route_by_used_nic(void)
{
    ebtl_if_t ifs[2] = {iface4_on("10.1.0.5", 24, 2), iface4_on("10.2.0.5", 24, 3)};
    ebtl_modex_addr_t peer[2] = {peer4("10.1.0.9", 0), peer4("10.9.0.9", 1)};
    fake_routes_t t = {{{"10.1.0.9", 2}, {"10.9.0.9", 2}}, 2, 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 1);
    CHECK(nic[0] == 0 && addr[0] == 0);
}

/* No route anywhere: what the rule gave before routes counted. */
static void paths_no_route_unchanged(void)
{
    ebtl_if_t ifs[2] = {iface4_on("10.1.0.5", 24, 2), iface4_on("10.2.0.5", 24, 3)};
    ebtl_modex_addr_t peer[2] = {peer4("10.1.0.9", 0), peer4("10.9.0.9", 1)};
    fake_routes_t t = {.n = 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4], one;
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 1);
    CHECK(nic[0] == 0 && addr[0] == 0);
    /* No subnet shared at all: the one maybe-routed path choose_path picks. */
    peer[0] = peer4("10.8.0.9", 0);
    t.lookups = 0;
    int a = ebtl_modex_choose_path(ifs, 2, peer, 2, false, &one);
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 1);
    CHECK(a >= 0 && nic[0] == one && addr[0] == a);
    CHECK(t.lookups == 2);   /* each address asked once */
    /* No lookup at all: the same. */
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, NULL, nic, addr, 4) == 1);
    CHECK(nic[0] == one && addr[0] == a);
}

/* A peer on this host: loopback alone, routes not even asked. */
static void paths_loopback_unchanged(void)
{
    ebtl_if_t ifs[3] = {iface4_on("127.0.0.1", 8, 1), iface4_on("10.1.0.5", 24, 2),
                        iface4_on("10.2.0.5", 24, 3)};
    ifs[0].loopback = true;
    ebtl_modex_addr_t peer[3] = {peer4("127.0.0.1", 0), peer4("10.1.0.9", 1), peer4("10.9.0.9", 2)};
    fake_routes_t t = {{{"10.9.0.9", 3}, {"127.0.0.1", 1}}, 2, 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 3, true, &route, nic, addr, 4) == 1);
    CHECK(nic[0] == 0 && addr[0] == 0 && t.lookups == 0);
    /* A remote peer: never loopback, not even routed by lo. */
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 3, false, &route, nic, addr, 4) == 2);
    CHECK(nic[0] == 1 && addr[0] == 1 && nic[1] == 2 && addr[1] == 2);
}

/* max caps the subnet's paths and the routed ones alike, subnet first. */
static void paths_max_honoured(void)
{
    ebtl_if_t ifs[3] = {iface4_on("10.2.0.5", 24, 3), iface4_on("10.3.0.5", 24, 4),
                        iface4_on("10.1.0.5", 24, 2)};
    ebtl_modex_addr_t peer[3] = {peer4("10.1.0.9", 0), peer4("10.8.0.9", 1), peer4("10.9.0.9", 2)};
    fake_routes_t t = {{{"10.8.0.9", 3}, {"10.9.0.9", 4}}, 2, 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 3, false, &route, nic, addr, 4) == 3);
    CHECK(nic[0] == 2 && addr[0] == 0);
    CHECK(nic[1] == 0 && addr[1] == 1 && nic[2] == 1 && addr[2] == 2);
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 3, false, &route, nic, addr, 2) == 2);
    CHECK(nic[0] == 2 && nic[1] == 0);
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 3, false, &route, nic, addr, 1) == 1);
    CHECK(nic[0] == 2 && addr[0] == 0);
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 3, false, &route, nic, addr, 0) == 0);
}

/* NIC locality: our far addresses come after the near ones, whatever
 * their order; with room for one path only the near one gets it, and a
 * peer only a far address reaches still gets its path. */
static void paths_near_first(void)
{
    ebtl_if_t ifs[2] = {iface4_on("10.1.0.5", 24, 2), iface4_on("10.2.0.5", 24, 3)};
    ebtl_modex_addr_t peer[2] = {peer4("10.1.0.9", 0), peer4("10.2.0.9", 1)};
    bool far[2] = {true, false};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths_near_first(ifs, far, 2, peer, 2, false, NULL, nic, addr, 4) == 2);
    CHECK(nic[0] == 1 && addr[0] == 1 && nic[1] == 0 && addr[1] == 0);
    CHECK(ebtl_modex_choose_paths_near_first(ifs, far, 2, peer, 2, false, NULL, nic, addr, 1) == 1);
    CHECK(nic[0] == 1 && addr[0] == 1);
    CHECK(ebtl_modex_choose_paths_near_first(ifs, NULL, 2, peer, 2, false, NULL, nic, addr, 1) == 1);
    CHECK(nic[0] == 0 && addr[0] == 0);
    CHECK(ebtl_modex_choose_paths_near_first(ifs, far, 2, peer, 1, false, NULL, nic, addr, 4) == 1);
    CHECK(nic[0] == 0 && addr[0] == 0);
}

/* A peer address is the far end of one path: two addresses of ours the
 * route to it leaves by (one interface) make one path; and an address a
 * subnet's path uses is not routed to again. */
static void paths_address_used_once(void)
{
    ebtl_if_t ifs[3] = {iface4_on("10.1.0.5", 24, 2), iface4_on("10.2.0.5", 24, 3),
                        iface4_on("10.3.0.5", 24, 3)};
    ebtl_modex_addr_t peer[2] = {peer4("10.1.0.9", 0), peer4("10.9.0.9", 1)};
    fake_routes_t t = {{{"10.1.0.9", 3}, {"10.9.0.9", 3}}, 2, 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer, 2, false, &route, nic, addr, 4) == 2);
    CHECK(nic[0] == 0 && addr[0] == 0);
    CHECK(nic[1] == 1 && addr[1] == 1);
    CHECK(t.lookups <= 2);
    /* With a second routed address of the peer's, our third address has it. */
    ebtl_modex_addr_t peer3[3] = {peer[0], peer[1], peer4("10.7.0.9", 2)};
    t.r[2].dst = "10.7.0.9";
    t.r[2].oif = 3;
    t.n = 3;
    CHECK(ebtl_modex_choose_paths(ifs, 3, peer3, 3, false, &route, nic, addr, 4) == 3);
    CHECK(nic[2] == 2 && addr[2] == 2);
}

/* No subnet shared at all, two NICs each routed to an address of the
 * peer's: two paths (not the one maybe-routed guess). */
static void paths_only_routed(void)
{
    ebtl_if_t ifs[2] = {iface4_on("10.2.0.5", 24, 3), iface4_on("10.3.0.5", 24, 4)};
    ebtl_modex_addr_t peer[2] = {peer4("10.8.0.9", 0), peer4("10.9.0.9", 1)};
    fake_routes_t t = {{{"10.8.0.9", 4}, {"10.9.0.9", 3}}, 2, 0};
    ebtl_route_t route = {fake_oif, &t};
    size_t nic[4];
    int addr[4];
    CHECK(ebtl_modex_choose_paths(ifs, 2, peer, 2, false, &route, nic, addr, 4) == 2);
    CHECK(nic[0] == 0 && addr[0] == 1 && nic[1] == 1 && addr[1] == 0);
}

/* ---- the kernel's routes (no privileges needed) */
static int lookup4(const char *a)
{
    unsigned char b[4];
    inet_pton(AF_INET, a, b);
    return ebtl_route_oif(AF_INET, b);
}

static int lookup6(const char *a)
{
    unsigned char b[16];
    inet_pton(AF_INET6, a, b);
    return ebtl_route_oif(AF_INET6, b);
}

static void route_loopback(void)
{
    int lo = (int) if_nametoindex("lo");
    CHECK(lo > 0);
    CHECK(lookup4("127.0.0.1") == lo);
    CHECK(lookup4("127.0.0.2") == lo);
    FILE *f = fopen("/proc/sys/net/ipv6/conf/lo/disable_ipv6", "r");
    int off = 1;
    if (f != NULL) {
        if (fscanf(f, "%d", &off) != 1) {
            off = 1;
        }
        fclose(f);
    }
    if (off == 0) {
        CHECK(lookup6("::1") == lo);
    } else {
        printf("    note: IPv6 off on lo: ::1 not checked\n");
    }
    unsigned char b[16] = {0};
    CHECK(ebtl_route_oif(AF_UNIX, b) == -1);
    CHECK(ebtl_route_oif(AF_INET, NULL) == -1);
}

/* No route: -1. In this host's namespace only when it has no default route
 * (198.51.100.0/24 is documentation space, in no table); always in a fresh
 * network namespace of a child (nothing up, no route at all), when the
 * kernel lets us make one. */
static void route_unroutable(void)
{
    int here = lookup4("198.51.100.7");
    char name[IF_NAMESIZE];
    if (here == -1) {
        CHECK(lookup4("198.51.100.7") == -1);
    } else {
        CHECK(if_indextoname((unsigned) here, name) != NULL);
        printf("    note: this host routes 198.51.100.7 (by %s: a default route?): "
               "the check that no route gives -1 runs in a fresh namespace only\n",
               if_indextoname((unsigned) here, name) ? name : "?");
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
            _exit(3);
        }
        int bad = lookup4("198.51.100.7") != -1 || lookup4("10.0.0.1") != -1
                  || lookup6("2001:db8::7") != -1;
        _exit(bad ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        printf("    note: no network namespace could be made here: no-route check %s\n",
               here == -1 ? "done in this namespace only" : "skipped");
    } else {
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("modex", round_trip);
    RUN("modex", encode_limits);
    RUN("modex", malformed_records_refused);
    RUN("modex", link_addresses);
    RUN("modex", every_mutation_is_safe);
    RUN("modex", path_choice);
    RUN("modex", paths_routed_beside_subnet);
    RUN("modex", paths_route_by_used_nic);
    RUN("modex", paths_no_route_unchanged);
    RUN("modex", paths_loopback_unchanged);
    RUN("modex", paths_max_honoured);
    RUN("modex", paths_near_first);
    RUN("modex", paths_address_used_once);
    RUN("modex", paths_only_routed);
    RUN("route", route_loopback);
    RUN("route", route_unroutable);
    return UNIT_RESULT();
}

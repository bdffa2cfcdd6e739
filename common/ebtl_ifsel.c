/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Interface selection: include/exclude lists of names and CIDR prefixes. */
#include "ebtl_ifsel.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define EBTL_IF_ITEM_MAX 128

static size_t addr_len(int family)
{
    return family == AF_INET ? 4 : 16;
}

/* True when the first `bits` bits of a and b agree. */
static bool prefix_equal(const unsigned char *a, const unsigned char *b, unsigned bits)
{
    unsigned full = bits / 8, rest = bits % 8;
    if (memcmp(a, b, full) != 0) {
        return false;
    }
    if (rest == 0) {
        return true;
    }
    unsigned char mask = (unsigned char) (0xff << (8 - rest));
    return (a[full] & mask) == (b[full] & mask);
}

static int parse_prefixlen(const char *s, unsigned max, unsigned *out)
{
    if (*s == '\0') {
        return -1;
    }
    unsigned v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char) *s) || v > max) {
            return -1;
        }
        v = v * 10 + (unsigned) (*s - '0');
    }
    if (v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

/* One list item: "name", "a.b.c.d[/n]" or "v6addr[/n]". */
static int parse_item(const char *item, ebtl_if_rule_t *rule, char *err, size_t errlen)
{
    memset(rule, 0, sizeof(*rule));
    char addr[EBTL_IF_ITEM_MAX];
    const char *slash = strchr(item, '/');
    size_t alen = slash ? (size_t) (slash - item) : strlen(item);
    bool looks_v4 = isdigit((unsigned char) item[0]) && memchr(item, '.', alen);
    bool looks_v6 = memchr(item, ':', alen) != NULL;

    if (!looks_v4 && !looks_v6 && !slash) {
        if (strlen(item) >= IF_NAMESIZE) {
            snprintf(err, errlen, "'%s' is too long for an interface name", item);
            return -1;
        }
        strcpy(rule->name, item);
        return 0;
    }
    if (alen >= sizeof(addr)) {
        snprintf(err, errlen, "'%s' is not an interface name or CIDR prefix", item);
        return -1;
    }
    memcpy(addr, item, alen);
    addr[alen] = '\0';
    rule->is_cidr = true;
    rule->family = looks_v6 ? AF_INET6 : AF_INET;
    if (inet_pton(rule->family, addr, rule->addr) != 1) {
        snprintf(err, errlen, "'%s' is not an interface name or CIDR prefix "
                 "(expected e.g. eth0, 10.1.0.0/16 or fd00::/8)", item);
        return -1;
    }
    unsigned max = rule->family == AF_INET ? 32 : 128;
    rule->prefixlen = max;
    if (slash && parse_prefixlen(slash + 1, max, &rule->prefixlen) != 0) {
        snprintf(err, errlen, "'%s': prefix length must be 0..%u", item, max);
        return -1;
    }
    return 0;
}

int ebtl_if_rules_parse(const char *spec, ebtl_if_rules_t *out, char *err, size_t errlen)
{
    out->rules = NULL;
    out->count = 0;
    if (spec == NULL) {
        return 0;
    }
    size_t cap = 1;
    for (const char *p = spec; *p; p++) {
        cap += (*p == ',');
    }
    out->rules = calloc(cap, sizeof(*out->rules));
    if (out->rules == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t) (end - p) : strlen(p);
        /* trim blanks around the item */
        while (len > 0 && isspace((unsigned char) *p)) {
            p++, len--;
        }
        while (len > 0 && isspace((unsigned char) p[len - 1])) {
            len--;
        }
        if (len > 0) {
            char item[EBTL_IF_ITEM_MAX];
            if (len >= sizeof(item)) {
                snprintf(err, errlen, "list item '%.20s...' is too long", p);
                ebtl_if_rules_free(out);
                return -1;
            }
            memcpy(item, p, len);
            item[len] = '\0';
            if (parse_item(item, &out->rules[out->count], err, errlen) != 0) {
                ebtl_if_rules_free(out);
                return -1;
            }
            out->count++;
        }
        if (!end) {
            break;
        }
        p = end + 1;
    }
    return 0;
}

void ebtl_if_rules_free(ebtl_if_rules_t *rules)
{
    free(rules->rules);
    rules->rules = NULL;
    rules->count = 0;
}

bool ebtl_if_rules_match(const ebtl_if_rules_t *rules, const ebtl_if_t *ifa)
{
    for (size_t i = 0; i < rules->count; i++) {
        const ebtl_if_rule_t *r = &rules->rules[i];
        if (!r->is_cidr) {
            if (strcmp(r->name, ifa->name) == 0) {
                return true;
            }
        } else if (r->family == ifa->family && prefix_equal(r->addr, ifa->addr, r->prefixlen)) {
            return true;
        }
    }
    return false;
}

static unsigned mask_to_prefixlen(const struct sockaddr *mask, int family)
{
    const unsigned char *m = family == AF_INET
        ? (const unsigned char *) &((const struct sockaddr_in *) mask)->sin_addr
        : (const unsigned char *) &((const struct sockaddr_in6 *) mask)->sin6_addr;
    unsigned bits = 0;
    for (size_t i = 0; i < addr_len(family); i++) {
        for (unsigned char b = m[i]; b & 0x80; b = (unsigned char) (b << 1)) {
            bits++;
        }
    }
    return bits;
}

static unsigned interface_mtu(int fd, const char *name)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    return (fd >= 0 && ioctl(fd, SIOCGIFMTU, &ifr) == 0) ? (unsigned) ifr.ifr_mtu : 0;
}

int ebtl_if_enumerate(ebtl_if_t **out, size_t *count, char *err, size_t errlen)
{
    struct ifaddrs *list;
    *out = NULL;
    *count = 0;
    if (getifaddrs(&list) != 0) {
        snprintf(err, errlen, "getifaddrs failed: %s", strerror(errno));
        return -1;
    }
    size_t cap = 0;
    for (struct ifaddrs *i = list; i; i = i->ifa_next) {
        cap++;
    }
    ebtl_if_t *ifs = calloc(cap ? cap : 1, sizeof(*ifs));
    if (ifs == NULL) {
        freeifaddrs(list);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    size_t n = 0;
    for (struct ifaddrs *i = list; i; i = i->ifa_next) {
        if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP)) {
            continue;
        }
        int fam = i->ifa_addr->sa_family;
        if (fam != AF_INET && fam != AF_INET6) {
            continue;
        }
        ebtl_if_t *e = &ifs[n];
        memset(e, 0, sizeof(*e));
        snprintf(e->name, sizeof(e->name), "%s", i->ifa_name);
        e->family = fam;
        if (fam == AF_INET) {
            memcpy(e->addr, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, 4);
        } else {
            const struct in6_addr *a6 = &((struct sockaddr_in6 *) i->ifa_addr)->sin6_addr;
            if (IN6_IS_ADDR_LINKLOCAL(a6)) {
                continue; /* needs a scope id on every use; not worth it on a LAN */
            }
            memcpy(e->addr, a6, 16);
        }
        e->prefixlen = i->ifa_netmask ? mask_to_prefixlen(i->ifa_netmask, fam) : 0;
        e->ifindex = if_nametoindex(i->ifa_name);
        e->mtu = interface_mtu(fd, i->ifa_name);
        e->loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
        n++;
    }
    if (fd >= 0) {
        close(fd);
    }
    freeifaddrs(list);
    *out = ifs;
    *count = n;
    return 0;
}

const char *ebtl_if_format(const ebtl_if_t *ifa, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN];
    if (inet_ntop(ifa->family, ifa->addr, a, sizeof(a)) == NULL) {
        snprintf(a, sizeof(a), "?");
    }
    snprintf(buf, len, "%s %s/%u", ifa->name, a, ifa->prefixlen);
    return buf;
}

/* "lo 127.0.0.1/8, eth0 10.0.0.5/24" for the no-interface message. */
static void list_available(const ebtl_if_t *all, size_t count, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < len; i++) {
        char one[IF_NAMESIZE + INET6_ADDRSTRLEN + 8];
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                         ebtl_if_format(&all[i], one, sizeof(one)));
        if (w < 0) {
            break;
        }
        used += (size_t) w;
    }
    if (count == 0) {
        snprintf(buf, len, "none");
    }
}

int ebtl_if_select(const ebtl_if_t *all, size_t count, const char *include,
                  const char *exclude, const char *param_prefix,
                  ebtl_if_t **out, size_t *out_count, char *err, size_t errlen)
{
    bool have_include = include && *include;
    bool have_exclude = exclude && *exclude;
    ebtl_if_rules_t rules;
    char why[256];

    *out = NULL;
    *out_count = 0;
    if (have_include && have_exclude) {
        snprintf(err, errlen, "%s_if_include (\"%s\") and %s_if_exclude (\"%s\") are both set; "
                 "set only one of them", param_prefix, include, param_prefix, exclude);
        return -1;
    }
    const char *which = have_include ? "if_include" : "if_exclude";
    if (ebtl_if_rules_parse(have_include ? include : exclude, &rules, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s_%s: %s", param_prefix, which, why);
        return -1;
    }
    ebtl_if_t *sel = calloc(count ? count : 1, sizeof(*sel));
    if (sel == NULL) {
        ebtl_if_rules_free(&rules);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (ebtl_if_rules_match(&rules, &all[i]) == have_include) {
            sel[n++] = all[i];
        }
    }
    ebtl_if_rules_free(&rules);
    if (n == 0) {
        char avail[512];
        list_available(all, count, avail, sizeof(avail));
        snprintf(err, errlen, "no usable interface: %s_%s=\"%s\" leaves none of this host's "
                 "addresses (%s); set %s_if_include to an interface name or subnet of this host",
                 param_prefix, which, have_include ? include : (have_exclude ? exclude : ""),
                 avail, param_prefix);
        free(sel);
        return -1;
    }
    *out = sel;
    *out_count = n;
    return 0;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Interface selection shared by the esp and sctp components: which local
 * addresses a component may use, from an include or an exclude list of
 * interface names and CIDR prefixes ("lo,eth1", "10.1.0.0/16,fd00::/8").
 * Pure C, no Open MPI headers, so it is unit-tested without MPI.
 */
#ifndef EBTL_IFSEL_H
#define EBTL_IFSEL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

/* One address of one local interface. */
typedef struct ebtl_if {
    char name[IF_NAMESIZE];
    int family;                 /* AF_INET or AF_INET6 */
    unsigned char addr[16];     /* network byte order; IPv4 uses the first 4 */
    unsigned prefixlen;         /* of the interface's own subnet */
    unsigned ifindex;
    unsigned mtu;               /* 0 when unknown */
    bool loopback;
} ebtl_if_t;

/* One item of an include/exclude list: an interface name or a CIDR prefix. */
typedef struct ebtl_if_rule {
    bool is_cidr;
    char name[IF_NAMESIZE];
    int family;
    unsigned char addr[16];
    unsigned prefixlen;
} ebtl_if_rule_t;

typedef struct ebtl_if_rules {
    ebtl_if_rule_t *rules;
    size_t count;
} ebtl_if_rules_t;

/* Parse a comma-separated list. Returns 0, or -1 with a message in err
 * naming the offending item. An empty or NULL spec gives an empty list. */
int ebtl_if_rules_parse(const char *spec, ebtl_if_rules_t *out, char *err, size_t errlen);
void ebtl_if_rules_free(ebtl_if_rules_t *rules);
bool ebtl_if_rules_match(const ebtl_if_rules_t *rules, const ebtl_if_t *ifa);

/* All up IPv4 and IPv6 (not link-local) addresses of this host.
 * Returns 0 and a malloc'd array, or -1 with a message in err. */
int ebtl_if_enumerate(ebtl_if_t **out, size_t *count, char *err, size_t errlen);

/*
 * Keep the addresses of `all` that the lists allow. `param_prefix` names the
 * MCA parameters in messages (e.g. "btl_esp"). Setting both lists is an
 * error; so is a result with no address (the message lists what exists).
 * Returns 0 and a malloc'd array, or -1 with one clear message in err.
 */
int ebtl_if_select(const ebtl_if_t *all, size_t count, const char *include,
                  const char *exclude, const char *param_prefix,
                  ebtl_if_t **out, size_t *out_count, char *err, size_t errlen);

/* "eth0 10.1.2.3/24" into buf, for messages. */
const char *ebtl_if_format(const ebtl_if_t *ifa, char *buf, size_t len);

#endif

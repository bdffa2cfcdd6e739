/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the libfabric datagram layer (common/ebtl_ofi.c): endpoints
 * of the `udp` provider (or EBTL_TEST_OFI_PROVIDER's) on 127.0.0.1 in one
 * process. Exits 77 (skipped) when libfabric offers no FI_EP_DGRAM provider
 * of that name here. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ebtl_ofi.h"
#include "unit.h"
#include "unit_lo.h"

/* the provider under test: udp, or EBTL_TEST_OFI_PROVIDER (e.g. sockets) */
static const char *PROV = "udp";

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void sleep_us(long us)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};
    nanosleep(&ts, NULL);
}

static ebtl_ofi_ep_t *open_lo(const char *prov, unsigned mtu, size_t rx_depth)
{
    ebtl_if_t ifa = unit_lo_if(mtu);
    ebtl_ofi_ep_t *ep = NULL;
    char err[512] = "";
    int rc = ebtl_ofi_open(&ep, prov, &ifa, rx_depth, err, sizeof(err));
    if (rc != 0) {
        printf("    open %s on lo: %s\n", prov, err);
        return NULL;
    }
    return ep;
}

static void pattern(unsigned char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = (unsigned char) (i * 131 + seed * 7 + (i >> 8));
    }
}

/* Each endpoint's name into the other's AV. */
static bool connect_pair(ebtl_ofi_ep_t *a, ebtl_ofi_ep_t *b, uint64_t *a_to_b, uint64_t *b_to_a)
{
    unsigned char na[EBTL_OFI_NAME_MAX], nb[EBTL_OFI_NAME_MAX];
    size_t la = ebtl_ofi_name(a, na, sizeof(na));
    size_t lb = ebtl_ofi_name(b, nb, sizeof(nb));
    CHECK(la > 0 && la <= sizeof(na) && lb == la);
    if (la == 0 || lb == 0) {
        return false;
    }
    int r1 = ebtl_ofi_insert(a, nb, lb, a_to_b);
    int r2 = ebtl_ofi_insert(b, na, la, b_to_a);
    CHECK(r1 == 0 && r2 == 0);
    return r1 == 0 && r2 == 0;
}

/* Two endpoints on 127.0.0.1 with rx_depth receives each, each in the
 * other's address vector; false (nothing left open) when that fails. */
static bool open_pair(size_t rx_depth, ebtl_ofi_ep_t **a, ebtl_ofi_ep_t **b, uint64_t *a_to_b,
                      uint64_t *b_to_a)
{
    *a = open_lo(PROV, 65536, rx_depth);
    *b = open_lo(PROV, 65536, rx_depth);
    CHECK(*a != NULL && *b != NULL);
    if (*a == NULL || *b == NULL || !connect_pair(*a, *b, a_to_b, b_to_a)) {
        ebtl_ofi_close(*a);
        ebtl_ofi_close(*b);
        return false;
    }
    return true;
}

/* Poll until want datagrams arrived or timeout_ms passed; each is handed to
 * fn. Returns how many arrived. */
typedef void (*got_fn)(void *arg, const ebtl_ofi_msg_t *m);
static unsigned recv_wait(ebtl_ofi_ep_t *ep, unsigned want, int timeout_ms, got_fn fn, void *arg)
{
    unsigned n = 0;
    uint64_t deadline = now_ns() + (uint64_t) timeout_ms * 1000000u;
    ebtl_ofi_msg_t msgs[32];
    while (n < want) {
        int r = ebtl_ofi_recv(ep, msgs, 32);
        if (r < 0) {
            printf("    ebtl_ofi_recv: %d\n", r);
            break;
        }
        for (int i = 0; i < r; i++) {
            fn(arg, &msgs[i]);
        }
        n += (unsigned) r;
        if (r == 0) {
            if (now_ns() > deadline) {
                break;
            }
            sleep_us(50);
        }
    }
    return n;
}

/* ---- opening: what the provider reports */
static void open_udp(void)
{
    ebtl_ofi_ep_t *a = open_lo(PROV, 65536, 0);
    CHECK(a != NULL);
    if (a == NULL) {
        return;
    }
    const ebtl_ofi_attr_t *at = ebtl_ofi_attr(a);
    CHECK(strcmp(ebtl_ofi_provider(a), PROV) == 0);
    printf("    provider %s fabric %s domain %s: max_msg_size %zu msg_prefix_size %zu "
           "inject_size %zu mr_mode 0x%x mode 0x%llx addrlen %zu source %d tx/rx size %zu/%zu\n",
           at->provider, at->fabric, at->domain, at->max_msg_size, at->msg_prefix_size,
           at->inject_size, at->mr_mode, (unsigned long long) at->mode, at->addrlen,
           at->source, at->tx_size, at->rx_size);
    CHECK(at->rx_depth == 256 || at->rx_depth == at->rx_size);
    CHECK(at->addrlen == sizeof(struct sockaddr_in));
    /* bound to 127.0.0.1, on a port of its own */
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    CHECK(ebtl_ofi_name(a, NULL, 0) == sizeof(sin));
    CHECK(ebtl_ofi_name(a, &sin, 4) == sizeof(sin)); /* too short: length only */
    CHECK(ebtl_ofi_name(a, &sin, sizeof(sin)) == sizeof(sin));
    CHECK(sin.sin_family == AF_INET);
    CHECK(sin.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    CHECK(ntohs(sin.sin_port) != 0);
    /* udp: the provider's limit (1472) below loopback's MTU; MTU 1000 lowers it */
    size_t mp = ebtl_ofi_max_payload(a);
    CHECK(mp > 0 && mp <= at->max_msg_size && mp <= 65536 - 28);
    ebtl_ofi_ep_t *b = open_lo(PROV, 1000, 16);
    CHECK(b != NULL);
    if (b != NULL) {
        if (strcmp(PROV, "udp") == 0) {
            CHECK(ebtl_ofi_max_payload(b) == (at->max_msg_size < 972 ? at->max_msg_size : 972));
        }
        CHECK(ebtl_ofi_attr(b)->rx_depth == 16);
        struct sockaddr_in sb;
        CHECK(ebtl_ofi_name(b, &sb, sizeof(sb)) == sizeof(sb));
        CHECK(sb.sin_port != sin.sin_port);
    }
    ebtl_ofi_close(b);
    ebtl_ofi_close(a);
    ebtl_ofi_close(NULL); /* harmless */

    /* the best provider, unnamed: something opens */
    ebtl_if_t ifa = unit_lo_if(65536);
    char err[512] = "";
    ebtl_ofi_ep_t *c = NULL;
    CHECK(ebtl_ofi_open(&c, "", &ifa, 8, err, sizeof(err)) == 0);
    if (c != NULL) {
        printf("    best provider on lo: %s\n", ebtl_ofi_provider(c));
    } else {
        printf("    %s\n", err);
    }
    ebtl_ofi_close(c);
}

/* The other FI_EP_DGRAM providers this host has, opened for their figures
 * (informative: only that an open either works or says why). */
static void other_providers(void)
{
    char list[256];
    printf("    FI_EP_DGRAM providers: %s\n", ebtl_ofi_providers(list, sizeof(list)));
    CHECK(strstr(list, PROV) != NULL);
    ebtl_if_t ifa = unit_lo_if(65536);
    char *save = NULL;
    for (char *p = strtok_r(list, ", ", &save); p != NULL; p = strtok_r(NULL, ", ", &save)) {
        ebtl_ofi_ep_t *ep = NULL;
        char err[512] = "";
        int rc = ebtl_ofi_open(&ep, p, &ifa, 8, err, sizeof(err));
        if (rc != 0) {
            printf("    %s: %s\n", p, err);
            CHECK(strstr(err, p) != NULL);
            continue;
        }
        const ebtl_ofi_attr_t *at = ebtl_ofi_attr(ep);
        printf("    %s: max_msg_size %zu msg_prefix_size %zu inject_size %zu mr_mode 0x%x "
               "addrlen %zu source %d max_payload %zu\n",
               p, at->max_msg_size, at->msg_prefix_size, at->inject_size, at->mr_mode,
               at->addrlen, at->source, ebtl_ofi_max_payload(ep));
        ebtl_ofi_close(ep);
    }
}

static void bad_provider(void)
{
    ebtl_if_t ifa = unit_lo_if(65536);
    ebtl_ofi_ep_t *ep = (ebtl_ofi_ep_t *) 1;
    char err[512] = "";
    int rc = ebtl_ofi_open(&ep, "nosuchprov", &ifa, 8, err, sizeof(err));
    CHECK(rc < 0);
    CHECK(ep == NULL);
    printf("    %s\n", err);
    CHECK_STR_CONTAINS(err, "no FI_EP_DGRAM provider 'nosuchprov'");
    CHECK_STR_CONTAINS(err, "127.0.0.1");
    CHECK_STR_CONTAINS(err, PROV); /* the list of what exists */

    /* an address no interface has */
    ifa.addr[0] = 192;
    ifa.addr[1] = 0;
    ifa.addr[2] = 2;
    ifa.addr[3] = 254;
    snprintf(err, sizeof(err), "%s", "");
    rc = ebtl_ofi_open(&ep, PROV, &ifa, 8, err, sizeof(err));
    printf("    192.0.2.254: rc %d: %s\n", rc, rc ? err : "(opened)");
    if (rc == 0) {
        ebtl_ofi_close(ep);
    } else {
        CHECK_STR_CONTAINS(err, PROV);
        CHECK_STR_CONTAINS(err, "192.0.2.254");
    }
}

static void bad_name(void)
{
    ebtl_ofi_ep_t *a = open_lo(PROV, 65536, 8);
    CHECK(a != NULL);
    if (a == NULL) {
        return;
    }
    unsigned char name[EBTL_OFI_NAME_MAX];
    memset(name, 0, sizeof(name));
    size_t len = ebtl_ofi_name(a, name, sizeof(name));
    CHECK(len == sizeof(struct sockaddr_in));
    uint64_t addr = 12345;
    CHECK(ebtl_ofi_insert(a, name, len - 1, &addr) == -EINVAL);
    CHECK(ebtl_ofi_insert(a, name, len + 1, &addr) == -EINVAL);
    CHECK(ebtl_ofi_insert(a, name, 0, &addr) == -EINVAL);
    CHECK(ebtl_ofi_insert(a, NULL, len, &addr) == -EINVAL);
    CHECK(ebtl_ofi_insert(a, name, sizeof(struct sockaddr_in6), &addr) == -EINVAL);
    CHECK(addr == 12345);
    /* right length, wrong family */
    unsigned char bad[EBTL_OFI_NAME_MAX];
    memcpy(bad, name, len);
    ((struct sockaddr_in *) bad)->sin_family = AF_INET6;
    CHECK(ebtl_ofi_insert(a, bad, len, &addr) == -EINVAL);
    CHECK(addr == 12345);
    /* its own name is fine (twice: the same address, or a second entry) */
    uint64_t self1 = 0, self2 = 0;
    CHECK(ebtl_ofi_insert(a, name, len, &self1) == 0);
    CHECK(ebtl_ofi_insert(a, name, len, &self2) == 0);
    CHECK(self1 != EBTL_OFI_ADDR_NONE);
    ebtl_ofi_close(a);
}

/* ---- data: sizes up to max_payload both ways, every byte checked */
struct expect {
    unsigned char *want;
    size_t len;
    uint64_t from;
    bool source;
    unsigned ok, bad;
};

static void check_one(void *arg, const ebtl_ofi_msg_t *m)
{
    struct expect *x = arg;
    bool good = m->len == x->len && memcmp(m->buf, x->want, x->len) == 0;
    if (x->source) {
        good = good && m->from == x->from;
    } else {
        good = good && m->from == EBTL_OFI_ADDR_NONE;
    }
    if (good) {
        x->ok++;
    } else {
        x->bad++;
        printf("    got %zu bytes from %llx, wanted %zu from %llx\n", m->len,
               (unsigned long long) m->from, x->len, (unsigned long long) x->from);
    }
}

static void sizes_both_ways(void)
{
    ebtl_ofi_ep_t *a, *b;
    uint64_t ab = 0, ba = 0;
    if (!open_pair(64, &a, &b, &ab, &ba)) {
        return;
    }
    size_t mp = ebtl_ofi_max_payload(a);
    CHECK(mp == ebtl_ofi_max_payload(b));
    size_t sizes[] = {1, 7, 8, 64, 255, 256, 1000, mp / 2, mp - 1, mp};
    unsigned char *buf = malloc(mp), *head = malloc(mp);
    unsigned checked = 0;
    for (int dir = 0; dir < 2; dir++) {
        ebtl_ofi_ep_t *tx = dir ? b : a, *rx = dir ? a : b;
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            size_t len = sizes[i];
            pattern(buf, len, (unsigned) (i + 10 * dir));
            /* gathered from up to three pieces */
            size_t p1 = len / 3, p2 = len / 3;
            struct iovec v[3] = {
                {buf, p1}, {buf + p1, p2}, {buf + p1 + p2, len - p1 - p2}};
            memcpy(head, buf, len);
            int rc;
            uint64_t t0 = now_ns();
            while ((rc = ebtl_ofi_send(tx, dir ? ba : ab, v, 3)) == -EAGAIN &&
                   now_ns() - t0 < 1000000000u) {
                sleep_us(10);
            }
            CHECK(rc == 0);
            memset(buf, 0xee, len); /* the caller's buffers are free at once */
            struct expect x = {.want = head,
                               .len = len,
                               .from = dir ? ab : ba,
                               .source = ebtl_ofi_attr(rx)->source};
            unsigned n = recv_wait(rx, 1, 2000, check_one, &x);
            CHECK(n == 1 && x.ok == 1 && x.bad == 0);
            checked += x.ok;
        }
    }
    printf("    %u datagrams of 1..%zu bytes both ways byte-exact (sources %s)\n", checked, mp,
           ebtl_ofi_attr(a)->source ? "named" : "not given");
    /* above max_payload: refused */
    struct iovec big = {buf, mp + 1};
    CHECK(ebtl_ofi_send(a, ab, &big, 1) == -EMSGSIZE);
    const ebtl_ofi_stats_t *sa = ebtl_ofi_stats(a), *sb = ebtl_ofi_stats(b);
    CHECK(sa->tx_datagrams == 10 && sb->rx_datagrams == 10);
    CHECK(sb->tx_datagrams == 10 && sa->rx_datagrams == 10);
    CHECK(sa->rx_errors == 0 && sb->rx_errors == 0 && sa->tx_errors == 0);
    printf("    a: %llu sent (%llu injected), b: %llu sent (%llu injected)\n",
           (unsigned long long) sa->tx_datagrams, (unsigned long long) sa->tx_inject,
           (unsigned long long) sb->tx_datagrams, (unsigned long long) sb->tx_inject);
    /* nothing more waiting */
    ebtl_ofi_msg_t m[4];
    CHECK(ebtl_ofi_recv(b, m, 4) == 0);
    free(buf);
    free(head);
    ebtl_ofi_close(a);
    ebtl_ofi_close(b);
}

/* A sender b never inserted: the datagram arrives without a source (or
 * with one only if the provider names unknown senders, which it cannot). */
static void unknown_sender(void)
{
    ebtl_ofi_ep_t *a = open_lo(PROV, 65536, 8), *b = open_lo(PROV, 65536, 8);
    CHECK(a != NULL && b != NULL);
    if (a == NULL || b == NULL) {
        ebtl_ofi_close(a);
        ebtl_ofi_close(b);
        return;
    }
    unsigned char nb[EBTL_OFI_NAME_MAX];
    size_t lb = ebtl_ofi_name(b, nb, sizeof(nb));
    uint64_t ab;
    CHECK(ebtl_ofi_insert(a, nb, lb, &ab) == 0);
    unsigned char msg[20];
    pattern(msg, sizeof(msg), 3);
    struct iovec v = {msg, sizeof(msg)};
    CHECK(ebtl_ofi_send(a, ab, &v, 1) == 0);
    struct expect x = {.want = msg, .len = sizeof(msg), .from = EBTL_OFI_ADDR_NONE,
                       .source = true};
    CHECK(recv_wait(b, 1, 2000, check_one, &x) == 1);
    CHECK(x.ok == 1);
    CHECK(ebtl_ofi_stats(b)->rx_nosrc == 1);
    ebtl_ofi_close(a);
    ebtl_ofi_close(b);
}

/* udp: a datagram longer than any the layer takes (a plain socket sends it)
 * is dropped and counted, not delivered cut to the buffer's length (the
 * provider itself reports no truncation); an empty one is delivered. */
static void oversize_dropped(void)
{
    if (strcmp(PROV, "udp") != 0) {
        printf("    (udp provider only: plain sockets send to it)\n");
        return;
    }
    ebtl_ofi_ep_t *b = open_lo(PROV, 65536, 8);
    CHECK(b != NULL);
    if (b == NULL) {
        return;
    }
    struct sockaddr_in to;
    CHECK(ebtl_ofi_name(b, &to, sizeof(to)) == sizeof(to));
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(fd >= 0);
    size_t mp = ebtl_ofi_max_payload(b);
    static unsigned char big[4096], small[100];
    pattern(big, sizeof(big), 5);
    pattern(small, sizeof(small), 6);
    CHECK(mp + 1 < sizeof(big));
    size_t lens[] = {mp + 1, sizeof(big), 0, sizeof(small)};
    for (int i = 0; i < 4; i++) {
        const void *p = i == 3 ? small : big;
        CHECK(sendto(fd, p, lens[i], 0, (struct sockaddr *) &to, sizeof(to)) ==
              (ssize_t) lens[i]);
    }
    /* the empty one, then the 100 bytes */
    unsigned got = 0, ok = 0;
    uint64_t deadline = now_ns() + 2000000000u;
    ebtl_ofi_msg_t m[8];
    while (got < 2 && now_ns() < deadline) {
        int r = ebtl_ofi_recv(b, m, 8);
        for (int i = 0; i < r; i++, got++) {
            if (got == 0) {
                ok += m[i].len == 0;
            } else {
                ok += m[i].len == sizeof(small) && memcmp(m[i].buf, small, sizeof(small)) == 0;
            }
            CHECK(m[i].from == EBTL_OFI_ADDR_NONE); /* never inserted */
        }
        if (r == 0) {
            sleep_us(100);
        }
    }
    CHECK(got == 2 && ok == 2);
    CHECK(ebtl_ofi_recv(b, m, 8) == 0);
    const ebtl_ofi_stats_t *st = ebtl_ofi_stats(b);
    printf("    %u delivered, %llu dropped as truncated\n", got,
           (unsigned long long) st->rx_truncated);
    CHECK(st->rx_truncated == 2);
    CHECK(st->rx_datagrams == 2);
    close(fd);
    ebtl_ofi_close(b);
}

/* ---- 10,000 datagrams sent in one burst: each arrives intact, once, or is
 * counted as lost; the counters agree with what the test saw. */
#define BURST 10000u
struct burst {
    unsigned char *seen;
    size_t len;
    unsigned ok, bad, dup;
};

static void burst_one(void *arg, const ebtl_ofi_msg_t *m)
{
    struct burst *b = arg;
    uint32_t seq;
    if (m->len != b->len) {
        b->bad++;
        return;
    }
    memcpy(&seq, m->buf, sizeof(seq));
    if (seq >= BURST) {
        b->bad++;
        return;
    }
    unsigned char want[2048];
    pattern(want, b->len - 4, seq);
    if (memcmp((const unsigned char *) m->buf + 4, want, b->len - 4) != 0) {
        b->bad++;
        return;
    }
    if (b->seen[seq]) {
        b->dup++;
        return;
    }
    b->seen[seq] = 1;
    b->ok++;
}

static void burst_accounting(void)
{
    ebtl_ofi_ep_t *a, *b;
    uint64_t ab = 0, ba = 0;
    if (!open_pair(0, &a, &b, &ab, &ba)) {
        return;
    }
    struct burst bs = {.seen = calloc(BURST, 1), .len = 1000};
    if (bs.len > ebtl_ofi_max_payload(a)) {
        bs.len = ebtl_ofi_max_payload(a);
    }
    unsigned char body[2048];
    unsigned sent = 0, refused = 0;
    for (uint32_t seq = 0; seq < BURST; seq++) {
        pattern(body, bs.len - 4, seq);
        struct iovec v[2] = {{&seq, 4}, {body, bs.len - 4}};
        int rc = ebtl_ofi_send(a, ab, v, 2);
        if (rc == 0) {
            sent++;
        } else {
            CHECK(rc == -EAGAIN);
            refused++;
        }
    }
    unsigned got = recv_wait(b, sent, 300, burst_one, &bs);
    /* then whatever is still on its way */
    got += recv_wait(b, BURST, 100, burst_one, &bs);
    const ebtl_ofi_stats_t *sa = ebtl_ofi_stats(a), *sb = ebtl_ofi_stats(b);
    unsigned lost = sent - bs.ok;
    printf("    %u sent (%u refused -EAGAIN), %u arrived intact, %u lost, %u duplicated, "
           "%u corrupt; receiver counted %llu, errors %llu\n",
           sent, refused, bs.ok, lost, bs.dup, bs.bad, (unsigned long long) sb->rx_datagrams,
           (unsigned long long) sb->rx_errors);
    CHECK(sent + refused == BURST);
    CHECK(sa->tx_datagrams == sent && sa->tx_eagain == refused);
    CHECK(got == bs.ok + bs.dup + bs.bad);
    CHECK(sb->rx_datagrams == got);
    CHECK(sb->rx_bytes == (uint64_t) got * bs.len);
    CHECK(bs.bad == 0 && bs.dup == 0);
    CHECK(bs.ok + lost == sent);
    CHECK(bs.ok > 0);
    /* the receive ring recovered: one more datagram arrives */
    uint32_t seq = 0;
    pattern(body, bs.len - 4, 0);
    struct iovec v[2] = {{&seq, 4}, {body, bs.len - 4}};
    memset(bs.seen, 0, BURST);
    bs.ok = 0;
    CHECK(ebtl_ofi_send(a, ab, v, 2) == 0);
    CHECK(recv_wait(b, 1, 2000, burst_one, &bs) == 1 && bs.ok == 1);
    free(bs.seen);
    ebtl_ofi_close(a);
    ebtl_ofi_close(b);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    const char *env = getenv("EBTL_TEST_OFI_PROVIDER");
    if (env != NULL && env[0] != '\0') {
        PROV = env;
    }
    /* skip, not fail, where libfabric has no udp provider for FI_EP_DGRAM */
    char list[256];
    ebtl_ofi_providers(list, sizeof(list));
    bool have = false;
    char copy[256], *save = NULL;
    snprintf(copy, sizeof(copy), "%s", list);
    for (char *p = strtok_r(copy, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
        have = have || strcmp(p, PROV) == 0;
    }
    if (!have) {
        printf("SKIP unit/ofi (libfabric offers no FI_EP_DGRAM '%s' provider here; it has: %s)\n",
               PROV, list);
        return 77;
    }
    RUN("ofi", open_udp);
    RUN("ofi", other_providers);
    RUN("ofi", bad_provider);
    RUN("ofi", bad_name);
    RUN("ofi", sizes_both_ways);
    RUN("ofi", unknown_sender);
    RUN("ofi", oversize_dropped);
    RUN("ofi", burst_accounting);
    return UNIT_RESULT();
}

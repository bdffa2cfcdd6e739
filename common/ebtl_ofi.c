/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The libfabric datagram layer: an FI_EP_DGRAM endpoint with a send CQ, a
 * receive CQ and an address vector, and one allocation of bounce buffers
 * (rx_depth receive slots, then EBTL_OFI_TX_BUFS send slots, then one
 * inject slot), registered once when the provider wants FI_MR_LOCAL.
 * Every slot starts with the provider's message prefix (FI_MSG_PREFIX);
 * lengths given to and reported by the provider include it.
 *
 * Send: a datagram that fits the inject size goes by fi_inject (no
 * completion), others by fi_send from a free send slot; the send CQ is read
 * to recycle slots. Receive: the receive CQ is read (which is also what
 * progresses providers such as udp: one recvmsg per fi_cq_read); slots the
 * previous call returned are posted again first.
 *
 * Only calls of the FI_VERSION(1, 9) API that libfabric 2.x keeps: no wait
 * sets, no fi_trywait, CQs without wait objects (the caller polls).
 */
#include "ebtl_ofi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_eq.h>

#define EBTL_OFI_API FI_VERSION(1, 9)
#define SLOT_ALIGN 64u

_Static_assert(EBTL_OFI_ADDR_NONE == FI_ADDR_NOTAVAIL, "EBTL_OFI_ADDR_NONE is FI_ADDR_NOTAVAIL");
_Static_assert(sizeof(fi_addr_t) == sizeof(uint64_t), "fi_addr_t is 64 bits");

/* One bounce buffer; ctx is what the provider gets as the operation's
 * context (FI_CONTEXT / FI_CONTEXT2 give it to the provider to use). */
typedef struct ebtl_ofi_slot {
    struct fi_context2 ctx; /* first: the context pointer is the slot */
    unsigned char *buf;     /* prefix, then payload */
    unsigned index;
    bool is_rx;
} ebtl_ofi_slot_t;

struct ebtl_ofi_ep {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *txcq, *rxcq;
    struct fid_ep *ep;
    struct fid_mr *mr;
    void *desc;              /* fi_mr_desc, or NULL without FI_MR_LOCAL */
    bool cq_data;            /* CQs are FI_CQ_FORMAT_DATA (else MSG) */
    bool is_udp;             /* provider "udp": payload bound by the MTU */
    size_t prefix;           /* msg_prefix_size when FI_MSG_PREFIX, else 0 */
    size_t buf_payload;      /* payload bytes a datagram may have; each slot
                              * holds one more, which only a datagram the
                              * provider truncated fills (udp reports no
                              * FI_ETRUNC: it delivers the cut datagram) */
    size_t stride;           /* bytes of each slot */
    size_t max_payload;
    size_t inject_max;       /* payload bytes fi_inject takes (0: none) */
    unsigned char *mem;      /* every slot */
    size_t mem_len;
    ebtl_ofi_slot_t *slots;  /* rx_depth rx, then tx_bufs tx */
    unsigned rx_depth, tx_bufs;
    unsigned *tx_free;       /* stack of free tx slot indexes */
    unsigned tx_nfree;
    unsigned *repost;        /* rx slots to post again (lent out or refused) */
    unsigned nrepost;
    unsigned char *inject_buf; /* prefix + inject_max */
    ebtl_ofi_attr_t attr;
    ebtl_ofi_stats_t stats;
};

static const char *fi_err(int rc)
{
    return fi_strerror(rc < 0 ? -rc : rc);
}

const char *ebtl_ofi_providers(char *buf, size_t len)
{
    if (len == 0) {
        return buf;
    }
    buf[0] = '\0';
    struct fi_info *hints = fi_allocinfo(), *list = NULL;
    size_t used = 0;
    if (hints != NULL) {
        hints->ep_attr->type = FI_EP_DGRAM;
        hints->caps = FI_MSG;
        hints->mode = ~0ULL;
        hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                      FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_RAW |
                                      FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT;
        if (fi_getinfo(EBTL_OFI_API, NULL, NULL, 0, hints, &list) == 0) {
            for (struct fi_info *i = list; i != NULL; i = i->next) {
                const char *name = i->fabric_attr->prov_name;
                if (name == NULL) {
                    continue;
                }
                bool seen = false;
                for (struct fi_info *j = list; j != i; j = j->next) {
                    if (j->fabric_attr->prov_name != NULL &&
                        strcmp(j->fabric_attr->prov_name, name) == 0) {
                        seen = true;
                    }
                }
                if (!seen && used < len) {
                    int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
                    used += n > 0 ? (size_t) n : 0;
                }
            }
            fi_freeinfo(list);
        }
        fi_freeinfo(hints);
    }
    if (buf[0] == '\0') {
        snprintf(buf, len, "none");
    }
    return buf;
}

/* The hints: FI_MSG datagrams, the modes and memory registration modes this
 * layer honours, bound to iface when given. */
static struct fi_info *make_hints(const char *provider, const struct sockaddr *src,
                                  size_t srclen, bool want_source)
{
    struct fi_info *h = fi_allocinfo();
    if (h == NULL) {
        return NULL;
    }
    h->ep_attr->type = FI_EP_DGRAM;
    h->caps = FI_MSG | FI_SEND | FI_RECV | (want_source ? FI_SOURCE : 0);
    h->mode = FI_MSG_PREFIX | FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->av_type = FI_AV_UNSPEC;
    if (provider != NULL && provider[0] != '\0') {
        h->fabric_attr->prov_name = strdup(provider);
        if (h->fabric_attr->prov_name == NULL) {
            fi_freeinfo(h);
            return NULL;
        }
    }
    if (src != NULL) {
        h->src_addr = malloc(srclen);
        if (h->src_addr == NULL) {
            fi_freeinfo(h);
            return NULL;
        }
        memcpy(h->src_addr, src, srclen);
        h->src_addrlen = srclen;
        h->addr_format = src->sa_family == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
    }
    return h;
}

static const char *iface_str(const ebtl_if_t *iface, char *buf, size_t len)
{
    if (iface == NULL) {
        snprintf(buf, len, "any address");
        return buf;
    }
    char a[INET6_ADDRSTRLEN] = "?";
    inet_ntop(iface->family, iface->addr, a, sizeof(a));
    snprintf(buf, len, "%s%s%s (%s)", iface->family == AF_INET6 ? "[" : "", a,
             iface->family == AF_INET6 ? "]" : "", iface->name);
    return buf;
}

static int post_rx(ebtl_ofi_ep_t *e, unsigned i)
{
    ebtl_ofi_slot_t *s = &e->slots[i];
    ssize_t rc = fi_recv(e->ep, s->buf, e->prefix + e->buf_payload + 1, e->desc, FI_ADDR_UNSPEC,
                         &s->ctx);
    return (int) rc;
}

/* Read the send CQ: recycle the slots of completed sends. */
static void reap_tx(ebtl_ofi_ep_t *e)
{
    for (;;) {
        struct fi_cq_data_entry d[EBTL_OFI_CQ_BATCH];
        struct fi_cq_msg_entry m[EBTL_OFI_CQ_BATCH];
        void *entries = e->cq_data ? (void *) d : (void *) m;
        ssize_t n = fi_cq_read(e->txcq, entries, EBTL_OFI_CQ_BATCH);
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry ce;
            memset(&ce, 0, sizeof(ce));
            if (fi_cq_readerr(e->txcq, &ce, 0) <= 0) {
                return; /* nothing to read after all: try again next time */
            }
            e->stats.tx_errors++;
            if (ce.op_context != NULL) {
                ebtl_ofi_slot_t *s = (ebtl_ofi_slot_t *) ce.op_context;
                if (!s->is_rx && e->tx_nfree < e->tx_bufs) {
                    e->tx_free[e->tx_nfree++] = s->index;
                }
            }
            continue;
        }
        if (n <= 0) {
            return;
        }
        for (ssize_t k = 0; k < n; k++) {
            void *ctx = e->cq_data ? d[k].op_context : m[k].op_context;
            ebtl_ofi_slot_t *s = (ebtl_ofi_slot_t *) ctx;
            if (s != NULL && !s->is_rx && e->tx_nfree < e->tx_bufs) {
                e->tx_free[e->tx_nfree++] = s->index;
            }
        }
        if (n < EBTL_OFI_CQ_BATCH) {
            return;
        }
    }
}

static int open_cq(ebtl_ofi_ep_t *e, size_t size, struct fid_cq **cq)
{
    struct fi_cq_attr a;
    memset(&a, 0, sizeof(a));
    a.size = size;
    a.format = e->cq_data ? FI_CQ_FORMAT_DATA : FI_CQ_FORMAT_MSG;
    a.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(e->domain, &a, cq, NULL);
}

/* fi_getinfo for these hints; on failure err names the reason. */
static int get_info(const char *provider, const struct sockaddr *src, size_t srclen,
                    const char *where, struct fi_info **out, char *err, size_t errlen)
{
    int rc = -FI_ENODATA;
    const char *pname = provider != NULL && provider[0] != '\0' ? provider : NULL;
    /* FI_SOURCE first (receives name their sender), then without it */
    for (int pass = 0; pass < 2; pass++) {
        struct fi_info *h = make_hints(pname, src, srclen, pass == 0);
        if (h == NULL) {
            snprintf(err, errlen, "ofi: out of memory");
            return -ENOMEM;
        }
        *out = NULL;
        rc = fi_getinfo(EBTL_OFI_API, NULL, NULL, 0, h, out);
        fi_freeinfo(h);
        if (rc == 0 && *out != NULL) {
            return 0;
        }
        if (rc != -FI_ENODATA && rc != 0) {
            break;
        }
    }
    char provs[256];
    ebtl_ofi_providers(provs, sizeof(provs));
    if (rc == -FI_ENODATA || rc == 0) {
        if (pname != NULL) {
            snprintf(err, errlen,
                     "ofi: no FI_EP_DGRAM provider '%s' for %s (libfabric %u.%u); "
                     "FI_EP_DGRAM providers here: %s",
                     pname, where, FI_MAJOR(fi_version()), FI_MINOR(fi_version()), provs);
        } else {
            snprintf(err, errlen,
                     "ofi: no FI_EP_DGRAM provider for %s (libfabric %u.%u); "
                     "FI_EP_DGRAM providers here: %s",
                     where, FI_MAJOR(fi_version()), FI_MINOR(fi_version()), provs);
        }
        return -ENODEV;
    }
    snprintf(err, errlen, "ofi: fi_getinfo (provider %s, FI_EP_DGRAM, %s): %s",
             pname ? pname : "any", where, fi_err(rc));
    return rc;
}

int ebtl_ofi_open(ebtl_ofi_ep_t **out, const char *provider, const ebtl_if_t *iface,
                  size_t rx_depth, char *err, size_t errlen)
{
    char where[96];
    int rc;
    *out = NULL;
    iface_str(iface, where, sizeof(where));

    struct sockaddr_storage ss;
    size_t sslen = 0;
    memset(&ss, 0, sizeof(ss));
    if (iface != NULL) {
        if (iface->family == AF_INET) {
            struct sockaddr_in *sin = (struct sockaddr_in *) &ss;
            sin->sin_family = AF_INET;
            memcpy(&sin->sin_addr, iface->addr, 4);
            sslen = sizeof(*sin);
        } else if (iface->family == AF_INET6) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ss;
            sin6->sin6_family = AF_INET6;
            memcpy(&sin6->sin6_addr, iface->addr, 16);
            sslen = sizeof(*sin6);
        } else {
            snprintf(err, errlen, "ofi: %s: address family %d is neither IPv4 nor IPv6", where,
                     iface->family);
            return -EAFNOSUPPORT;
        }
    }

    ebtl_ofi_ep_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        snprintf(err, errlen, "ofi: out of memory");
        return -ENOMEM;
    }
    rc = get_info(provider, iface ? (struct sockaddr *) &ss : NULL, sslen, where, &e->info, err,
                  errlen);
    if (rc != 0) {
        free(e);
        return rc;
    }
    struct fi_info *fi = e->info;
    const char *pn = fi->fabric_attr->prov_name ? fi->fabric_attr->prov_name : "?";
    const char *step = "";

    /* what the provider reported */
    ebtl_ofi_attr_t *at = &e->attr;
    snprintf(at->provider, sizeof(at->provider), "%s", pn);
    snprintf(at->fabric, sizeof(at->fabric), "%s",
             fi->fabric_attr->name ? fi->fabric_attr->name : "");
    snprintf(at->domain, sizeof(at->domain), "%s",
             fi->domain_attr->name ? fi->domain_attr->name : "");
    at->addr_format = fi->addr_format;
    at->max_msg_size = fi->ep_attr->max_msg_size;
    at->msg_prefix_size = (fi->mode & FI_MSG_PREFIX) ? fi->ep_attr->msg_prefix_size : 0;
    at->inject_size = fi->tx_attr->inject_size;
    at->tx_size = fi->tx_attr->size;
    at->rx_size = fi->rx_attr->size;
    at->mr_mode = fi->domain_attr->mr_mode;
    at->mode = fi->mode;
    at->source = (fi->caps & FI_SOURCE) != 0;
    at->mr_local = (fi->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    e->is_udp = strcmp(pn, "udp") == 0;
    e->prefix = at->msg_prefix_size;

    /* sizes: payload, slots, counts */
    size_t maxp = fi->ep_attr->max_msg_size;
    if (maxp == 0 || maxp > EBTL_OFI_MAX_PAYLOAD) {
        maxp = EBTL_OFI_MAX_PAYLOAD;
    }
    e->buf_payload = maxp;
    if (e->is_udp && iface != NULL) {
        unsigned mtu = iface->mtu != 0 ? iface->mtu : iface->loopback ? 65536 : 1500;
        size_t hdr = iface->family == AF_INET6 ? 48 : 28;
        if (mtu > hdr && mtu - hdr < maxp) {
            maxp = mtu - hdr;
        }
    }
    e->max_payload = maxp;
    e->inject_max = at->inject_size < maxp ? at->inject_size : maxp;
    if (rx_depth == 0) {
        rx_depth = EBTL_OFI_RX_DEPTH_DEFAULT;
    }
    if (at->rx_size != 0 && rx_depth > at->rx_size) {
        rx_depth = at->rx_size;
    }
    e->rx_depth = (unsigned) rx_depth;
    e->tx_bufs = EBTL_OFI_TX_BUFS;
    if (at->tx_size != 0 && e->tx_bufs > at->tx_size) {
        e->tx_bufs = (unsigned) at->tx_size;
    }
    at->rx_depth = e->rx_depth;
    at->tx_bufs = e->tx_bufs;

    e->stride = (e->prefix + e->buf_payload + 1 + SLOT_ALIGN - 1) & ~(size_t) (SLOT_ALIGN - 1);
    size_t nslots = (size_t) e->rx_depth + e->tx_bufs;
    e->mem_len = e->stride * (nslots + 1); /* + the inject slot */
    if (posix_memalign((void **) &e->mem, 4096, e->mem_len) != 0) {
        e->mem = NULL;
        snprintf(err, errlen, "ofi (provider %s): out of memory for %zu bytes of buffers", pn,
                 e->mem_len);
        ebtl_ofi_close(e);
        return -ENOMEM;
    }
    memset(e->mem, 0, e->mem_len);
    e->slots = calloc(nslots, sizeof(*e->slots));
    e->tx_free = calloc(e->tx_bufs ? e->tx_bufs : 1, sizeof(unsigned));
    e->repost = calloc(e->rx_depth ? e->rx_depth : 1, sizeof(unsigned));
    if (e->slots == NULL || e->tx_free == NULL || e->repost == NULL) {
        snprintf(err, errlen, "ofi (provider %s): out of memory", pn);
        ebtl_ofi_close(e);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nslots; i++) {
        e->slots[i].buf = e->mem + i * e->stride;
        e->slots[i].index = (unsigned) i;
        e->slots[i].is_rx = i < e->rx_depth;
    }
    for (unsigned i = 0; i < e->tx_bufs; i++) {
        e->tx_free[e->tx_nfree++] = e->rx_depth + (e->tx_bufs - 1 - i);
    }
    e->inject_buf = e->mem + nslots * e->stride;

    /* fabric, domain, memory registration, AV, CQs, endpoint */
    step = "fi_fabric";
    rc = fi_fabric(fi->fabric_attr, &e->fabric, NULL);
    if (rc == 0) {
        step = "fi_domain";
        rc = fi_domain(e->fabric, fi, &e->domain, NULL);
    }
    if (rc == 0 && at->mr_local) {
        step = "fi_mr_reg (the bounce buffers)";
        rc = fi_mr_reg(e->domain, e->mem, e->mem_len, FI_SEND | FI_RECV, 0, 0, 0, &e->mr, NULL);
        if (rc == 0) {
            e->desc = fi_mr_desc(e->mr);
        }
    }
    if (rc == 0) {
        struct fi_av_attr aa;
        memset(&aa, 0, sizeof(aa));
        aa.type = fi->domain_attr->av_type != FI_AV_UNSPEC ? fi->domain_attr->av_type
                                                           : FI_AV_TABLE;
        aa.count = 1024; /* peers expected (providers with a fixed table) */
        step = "fi_av_open";
        rc = fi_av_open(e->domain, &aa, &e->av, NULL);
        if (rc == -FI_ENOSYS || rc == -FI_EINVAL) {
            aa.type = aa.type == FI_AV_TABLE ? FI_AV_MAP : FI_AV_TABLE;
            rc = fi_av_open(e->domain, &aa, &e->av, NULL);
        }
    }
    if (rc == 0) {
        step = "fi_cq_open (send)";
        rc = open_cq(e, e->tx_bufs + 16, &e->txcq);
        if (rc == -FI_ENOSYS || rc == -FI_EINVAL) {
            e->cq_data = true; /* FI_CQ_FORMAT_DATA then */
            rc = open_cq(e, e->tx_bufs + 16, &e->txcq);
        }
    }
    if (rc == 0) {
        step = "fi_cq_open (receive)";
        rc = open_cq(e, e->rx_depth + 16, &e->rxcq);
    }
    if (rc == 0) {
        step = "fi_endpoint";
        rc = fi_endpoint(e->domain, fi, &e->ep, NULL);
    }
    if (rc == 0) {
        step = "fi_ep_bind (AV)";
        rc = fi_ep_bind(e->ep, &e->av->fid, 0);
    }
    if (rc == 0) {
        step = "fi_ep_bind (send CQ)";
        rc = fi_ep_bind(e->ep, &e->txcq->fid, FI_TRANSMIT);
    }
    if (rc == 0) {
        step = "fi_ep_bind (receive CQ)";
        rc = fi_ep_bind(e->ep, &e->rxcq->fid, FI_RECV);
    }
    if (rc == 0) {
        step = "fi_enable";
        rc = fi_enable(e->ep);
    }
    if (rc == 0) {
        step = "fi_getname";
        unsigned char name[EBTL_OFI_NAME_MAX];
        size_t nl = sizeof(name);
        rc = fi_getname(&e->ep->fid, name, &nl);
        if (rc == 0) {
            at->addrlen = nl;
        } else if (rc == -FI_ETOOSMALL) {
            rc = -FI_EOVERFLOW;
        }
    }
    for (unsigned i = 0; rc == 0 && i < e->rx_depth; i++) {
        step = "fi_recv (posting the receive buffers)";
        rc = post_rx(e, i);
    }
    if (rc != 0) {
        snprintf(err, errlen, "ofi (provider %s, %s): %s: %s", pn, where, step, fi_err(rc));
        ebtl_ofi_close(e);
        return rc < 0 ? rc : -rc;
    }
    *out = e;
    return 0;
}

void ebtl_ofi_close(ebtl_ofi_ep_t *e)
{
    if (e == NULL) {
        return;
    }
    if (e->ep != NULL) {
        fi_close(&e->ep->fid);
    }
    if (e->rxcq != NULL) {
        fi_close(&e->rxcq->fid);
    }
    if (e->txcq != NULL) {
        fi_close(&e->txcq->fid);
    }
    if (e->av != NULL) {
        fi_close(&e->av->fid);
    }
    if (e->mr != NULL) {
        fi_close(&e->mr->fid);
    }
    if (e->domain != NULL) {
        fi_close(&e->domain->fid);
    }
    if (e->fabric != NULL) {
        fi_close(&e->fabric->fid);
    }
    if (e->info != NULL) {
        fi_freeinfo(e->info);
    }
    free(e->mem);
    free(e->slots);
    free(e->tx_free);
    free(e->repost);
    free(e);
}

size_t ebtl_ofi_name(ebtl_ofi_ep_t *e, void *buf, size_t len)
{
    unsigned char name[EBTL_OFI_NAME_MAX];
    size_t nl = sizeof(name);
    if (fi_getname(&e->ep->fid, name, &nl) != 0 || nl > sizeof(name)) {
        return 0;
    }
    if (buf != NULL && len >= nl) {
        memcpy(buf, name, nl);
    }
    return nl;
}

int ebtl_ofi_insert(ebtl_ofi_ep_t *e, const void *name, size_t len, uint64_t *addr)
{
    if (name == NULL || len == 0 || len != e->attr.addrlen) {
        return -EINVAL;
    }
    /* a socket address must be of the family its length says */
    sa_family_t fam;
    switch (e->attr.addr_format) {
    case FI_SOCKADDR_IN:
        memcpy(&fam, (const unsigned char *) name + offsetof(struct sockaddr, sa_family),
               sizeof(fam));
        if (len != sizeof(struct sockaddr_in) || fam != AF_INET) {
            return -EINVAL;
        }
        break;
    case FI_SOCKADDR_IN6:
        memcpy(&fam, (const unsigned char *) name + offsetof(struct sockaddr, sa_family),
               sizeof(fam));
        if (len != sizeof(struct sockaddr_in6) || fam != AF_INET6) {
            return -EINVAL;
        }
        break;
    case FI_SOCKADDR:
        memcpy(&fam, (const unsigned char *) name + offsetof(struct sockaddr, sa_family),
               sizeof(fam));
        if (!((fam == AF_INET && len == sizeof(struct sockaddr_in)) ||
              (fam == AF_INET6 && len == sizeof(struct sockaddr_in6)))) {
            return -EINVAL;
        }
        break;
    default:
        break;
    }
    /* the provider reads addrlen bytes: hand it an aligned copy */
    unsigned char copy[EBTL_OFI_NAME_MAX] __attribute__((aligned(8)));
    memcpy(copy, name, len);
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    int rc = fi_av_insert(e->av, copy, 1, &fa, 0, NULL);
    if (rc != 1 || fa == FI_ADDR_NOTAVAIL) {
        return rc < 0 ? rc : -EINVAL;
    }
    *addr = fa;
    return 0;
}

static size_t gather(unsigned char *dst, const struct iovec *iov, int iovcnt)
{
    size_t at = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len != 0) {
            memcpy(dst + at, iov[i].iov_base, iov[i].iov_len);
            at += iov[i].iov_len;
        }
    }
    return at;
}

int ebtl_ofi_send(ebtl_ofi_ep_t *e, uint64_t addr, const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    if (iovcnt < 0 || (iovcnt > 0 && iov == NULL)) {
        return -EINVAL;
    }
    for (int i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
    }
    if (len > e->max_payload) {
        return -EMSGSIZE;
    }
    ssize_t rc;
    if (len <= e->inject_max) {
        gather(e->inject_buf + e->prefix, iov, iovcnt);
        rc = fi_inject(e->ep, e->inject_buf, e->prefix + len, (fi_addr_t) addr);
        if (rc == -FI_EAGAIN) {
            reap_tx(e); /* progress once, then again */
            rc = fi_inject(e->ep, e->inject_buf, e->prefix + len, (fi_addr_t) addr);
        }
        if (rc == 0) {
            e->stats.tx_inject++;
        }
    } else {
        if (e->tx_nfree == 0) {
            reap_tx(e);
        }
        if (e->tx_nfree == 0) {
            e->stats.tx_eagain++;
            return -EAGAIN;
        }
        ebtl_ofi_slot_t *s = &e->slots[e->tx_free[--e->tx_nfree]];
        gather(s->buf + e->prefix, iov, iovcnt);
        rc = fi_send(e->ep, s->buf, e->prefix + len, e->desc, (fi_addr_t) addr, &s->ctx);
        if (rc == -FI_EAGAIN) {
            reap_tx(e);
            rc = fi_send(e->ep, s->buf, e->prefix + len, e->desc, (fi_addr_t) addr, &s->ctx);
        }
        if (rc != 0) {
            e->tx_free[e->tx_nfree++] = s->index;
        }
    }
    if (rc == -FI_EAGAIN) {
        e->stats.tx_eagain++;
        return -EAGAIN;
    }
    if (rc != 0) {
        e->stats.tx_errors++;
        return rc < 0 ? (int) rc : -EIO;
    }
    e->stats.tx_datagrams++;
    e->stats.tx_bytes += len;
    return 0;
}

/* Post again the receive slots lent out by the previous call (or refused). */
static void repost(ebtl_ofi_ep_t *e)
{
    unsigned kept = 0;
    for (unsigned k = 0; k < e->nrepost; k++) {
        if (post_rx(e, e->repost[k]) != 0) {
            e->stats.rx_repost_eagain++;
            e->repost[kept++] = e->repost[k];
        }
    }
    e->nrepost = kept;
}

static void lend(ebtl_ofi_ep_t *e, const ebtl_ofi_slot_t *s)
{
    if (s->is_rx && e->nrepost < e->rx_depth) {
        e->repost[e->nrepost++] = s->index;
    }
}

int ebtl_ofi_recv(ebtl_ofi_ep_t *e, ebtl_ofi_msg_t *out, unsigned max)
{
    if (e->nrepost != 0) {
        repost(e);
    }
    if (e->tx_nfree < e->tx_bufs) {
        reap_tx(e);
    }
    unsigned n = 0;
    while (n < max) {
        struct fi_cq_data_entry d[EBTL_OFI_CQ_BATCH];
        struct fi_cq_msg_entry m[EBTL_OFI_CQ_BATCH];
        fi_addr_t src[EBTL_OFI_CQ_BATCH];
        void *entries = e->cq_data ? (void *) d : (void *) m;
        size_t want = max - n < EBTL_OFI_CQ_BATCH ? max - n : EBTL_OFI_CQ_BATCH;
        ssize_t r = e->attr.source ? fi_cq_readfrom(e->rxcq, entries, want, src)
                                   : fi_cq_read(e->rxcq, entries, want);
        if (r == -FI_EAGAIN) {
            break;
        }
        if (r == -FI_EAVAIL) {
            struct fi_cq_err_entry ce;
            memset(&ce, 0, sizeof(ce));
            if (fi_cq_readerr(e->rxcq, &ce, 0) <= 0) {
                break; /* nothing to read after all: try again next call */
            }
            e->stats.rx_errors++;
            if (ce.err == FI_ETRUNC) {
                e->stats.rx_truncated++;
            }
            if (ce.op_context != NULL) {
                lend(e, (ebtl_ofi_slot_t *) ce.op_context);
            }
            continue;
        }
        if (r < 0) {
            return n > 0 ? (int) n : (int) r;
        }
        if (r == 0) {
            break;
        }
        for (ssize_t k = 0; k < r; k++) {
            void *ctx = e->cq_data ? d[k].op_context : m[k].op_context;
            size_t len = e->cq_data ? d[k].len : m[k].len;
            ebtl_ofi_slot_t *s = (ebtl_ofi_slot_t *) ctx;
            if (s == NULL || !s->is_rx) {
                continue;
            }
            lend(e, s);
            if (len < e->prefix) {
                e->stats.rx_runt++;
                continue;
            }
            len -= e->prefix;
            if (len > e->buf_payload) {
                e->stats.rx_truncated++; /* longer than any datagram may be: cut */
                continue;
            }
            out[n].buf = s->buf + e->prefix;
            out[n].len = len;
            out[n].from = e->attr.source ? (uint64_t) src[k] : EBTL_OFI_ADDR_NONE;
            if (out[n].from == EBTL_OFI_ADDR_NONE) {
                e->stats.rx_nosrc++;
            }
            e->stats.rx_datagrams++;
            e->stats.rx_bytes += len;
            n++;
        }
    }
    return (int) n;
}

size_t ebtl_ofi_max_payload(const ebtl_ofi_ep_t *e)
{
    return e->max_payload;
}

const char *ebtl_ofi_provider(const ebtl_ofi_ep_t *e)
{
    return e->attr.provider;
}

const ebtl_ofi_attr_t *ebtl_ofi_attr(const ebtl_ofi_ep_t *e)
{
    return &e->attr;
}

const ebtl_ofi_stats_t *ebtl_ofi_stats(const ebtl_ofi_ep_t *e)
{
    return &e->stats;
}

/* esp endpoints: per-peer state of the module, and the choice of path. */
#include "btl_esp_endpoint.h"

#include <string.h>

#include "btl_esp.h"

static void esp_endpoint_construct(mca_btl_esp_endpoint_t *ep)
{
    ep->module = NULL;
    ep->proc = NULL;
    ep->peer = 0;
    ep->nic = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_esp_endpoint_t, opal_list_item_t, esp_endpoint_construct, NULL);

/* Do the first `bits` bits of two addresses agree? */
static bool same_prefix(const unsigned char *a, const unsigned char *b, unsigned bits)
{
    unsigned bytes = bits / 8, rest = bits % 8;
    if (memcmp(a, b, bytes) != 0) {
        return false;
    }
    return rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff00 >> rest)) == 0;
}

int esp_endpoint_choose_path(const mca_btl_esp_module_t *m, const esp_modex_addr_t *addrs,
                             int naddrs, bool same_host, size_t *nic)
{
    int best = -1, best_score = 0;
    for (size_t i = 0; i < m->num_nics; i++) {
        const esp_if_t *me = &m->nics[i].iface;
        int family = me->family == AF_INET ? 4 : 6;
        for (int j = 0; j < naddrs; j++) {
            const esp_modex_addr_t *a = &addrs[j];
            if (a->family != family || a->port2 == 0) {
                continue;
            }
            bool peer_lo = family == 4 ? a->addr[0] == 127
                                       : memcmp(a->addr, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0;
            int score;
            if (me->loopback || peer_lo) {
                /* Loopback reaches only this host, and only loopback. */
                score = me->loopback && peer_lo && same_host ? 3 : 0;
            } else if (same_prefix(me->addr, a->addr, me->prefixlen)) {
                score = 2;   /* on our subnet */
            } else {
                score = 1;   /* maybe routed */
            }
            if (score > best_score) {
                best_score = score;
                best = j;
                *nic = i;
            }
        }
    }
    return best;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Registrations: the memory regions ob1 offers as PUT targets, and the
 * sources it PUTs from. A key names a slot and its generation, so a PUT
 * for a region already deregistered, or a key never given out, is
 * refused; every PUT is bounds-checked against its region before a byte
 * is written.
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"
#include "btl_esp_frag.h"

#include <string.h>

static int32_t slot_alloc(mca_btl_esp_module_t *m)
{
    if (m->reg_free < 0) {
        int32_t n = m->num_regs ? m->num_regs * 2 : 64;
        esp_reg_slot_t *regs = realloc(m->regs, (size_t) n * sizeof(*regs));
        if (regs == NULL) {
            return -1;
        }
        for (int32_t i = m->num_regs; i < n; i++) {
            regs[i] = (esp_reg_slot_t){0, 0, 0, i + 1 < n ? i + 1 : -1};
        }
        m->reg_free = m->num_regs;
        m->regs = regs;
        m->num_regs = n;
    }
    int32_t i = m->reg_free;
    m->reg_free = m->regs[i].next_free;
    m->regs[i].next_free = -1;
    return i;
}

/* ob1 asks REMOTE_READ for a whole message it will announce with an empty
 * rendezvous (the receiver then asks for all of it by PUT; esp has no GET).
 * Where the link is the limit that leaves the link idle for the round
 * trip: refused, ob1's rendezvous carries its first fragment and the
 * receiver asks for the rest by PUT. 256 KiB over 1 Gbit/s: 1261 µs
 * accepted, 1241 refused, tcp 1245-1249. Where the CPU is (loopback, a fast
 * link) the round trip is cheaper than the copy of that fragment: loopback
 * 256 KiB 59 µs accepted, 72 refused (docs/parameters.md, Limits). */
static bool refuse_peer_read(mca_btl_esp_module_t *m, const struct mca_btl_base_endpoint_t *ep)
{
    ESP_LOCK(m);
    bool bound = esp_proto_link_bound(m->proto, ep->peer);
    ESP_UNLOCK(m);
    return bound;
}

struct mca_btl_base_registration_handle_t *esp_reg_register(struct mca_btl_base_module_t *btl,
                                                            struct mca_btl_base_endpoint_t *ep,
                                                            void *base, size_t size,
                                                            uint32_t flags)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    if ((flags & MCA_BTL_REG_FLAG_REMOTE_READ) && ep != NULL && refuse_peer_read(m, ep)) {
        return NULL;
    }
    struct mca_btl_base_registration_handle_t *h = malloc(sizeof(*h));
    if (h == NULL) {
        return NULL;
    }
    ESP_LOCK(m);
    int32_t i = slot_alloc(m);
    if (i < 0) {
        ESP_UNLOCK(m);
        free(h);
        return NULL;
    }
    esp_reg_slot_t *s = &m->regs[i];
    s->base = (uint64_t) (uintptr_t) base;
    s->len = size;
    s->gen++;
    h->key = (uint64_t) s->gen << 32 | (uint32_t) i;
    h->base = s->base;
    h->len = size;
    ESP_UNLOCK(m);
    return h;
}

int esp_reg_deregister(struct mca_btl_base_module_t *btl,
                       struct mca_btl_base_registration_handle_t *h)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    ESP_LOCK(m);
    int32_t i = (int32_t) (uint32_t) h->key;
    if (i < m->num_regs && m->regs[i].next_free == -1 && m->regs[i].gen == (uint32_t) (h->key >> 32)) {
        m->regs[i].len = 0;
        m->regs[i].next_free = m->reg_free;
        m->reg_free = i;
    }
    ESP_UNLOCK(m);
    free(h);
    return OPAL_SUCCESS;
}

void *esp_reg_put_target(void *ctx, uint32_t peer, uint64_t key, uint64_t addr, size_t len)
{
    mca_btl_esp_module_t *m = ctx;
    (void) peer;
    uint32_t i = (uint32_t) key;
    if (i >= (uint32_t) m->num_regs) {
        return NULL;
    }
    const esp_reg_slot_t *s = &m->regs[i];
    if (s->next_free != -1 || s->gen != (uint32_t) (key >> 32) || addr < s->base
        || len > s->len || addr - s->base > s->len - len) {
        return NULL;
    }
    return (void *) (uintptr_t) addr;
}

void esp_reg_fini(mca_btl_esp_module_t *m)
{
    free(m->regs);
    m->regs = NULL;
    m->num_regs = 0;
    m->reg_free = -1;
}

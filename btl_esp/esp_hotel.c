/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The hotel: a hashed timer wheel of retransmit timers. */
#include "esp_hotel.h"

#include <stdlib.h>

int esp_hotel_init(esp_hotel_t *h, unsigned nslots, unsigned shift, uint64_t now)
{
    h->slots = malloc(sizeof(*h->slots) * nslots);
    if (h->slots == NULL) {
        return -1;
    }
    for (unsigned i = 0; i < nslots; i++) {
        h->slots[i].prev = h->slots[i].next = &h->slots[i];
    }
    h->mask = nslots - 1;
    h->shift = shift;
    h->cursor = now >> shift;
    h->guests = 0;
    return 0;
}

void esp_hotel_fini(esp_hotel_t *h)
{
    free(h->slots);
    h->slots = NULL;
}

void esp_hotel_checkin(esp_hotel_t *h, esp_room_t *r, uint64_t expiry)
{
    uint64_t tick = expiry >> h->shift;
    /* A time already examined goes in the next slot examined. */
    if (tick < h->cursor) {
        tick = h->cursor;
    }
    esp_room_t *head = &h->slots[tick & h->mask];
    r->expiry = expiry;
    r->next = head;
    r->prev = head->prev;
    head->prev->next = r;
    head->prev = r;
    h->guests++;
}

esp_room_t *esp_hotel_evict(esp_hotel_t *h, uint64_t now)
{
    esp_room_t *out = NULL;
    uint64_t last = now >> h->shift;
    if (h->guests == 0 || last < h->cursor) {
        if (last >= h->cursor) {
            h->cursor = last; /* nothing to look at: skip ahead */
        }
        return NULL;
    }
    /* One turn of the wheel at most: after that every slot was seen. */
    uint64_t end = last - h->cursor > h->mask ? h->cursor + h->mask : last;
    for (uint64_t t = h->cursor; t <= end; t++) {
        esp_room_t *head = &h->slots[t & h->mask];
        for (esp_room_t *r = head->next, *next; r != head; r = next) {
            next = r->next;
            if (r->expiry <= now) {
                r->prev->next = r->next;
                r->next->prev = r->prev;
                r->next = NULL;
                r->prev = out;
                out = r;
                h->guests--;
            }
        }
    }
    /* The current tick may still receive rooms expiring later in it. */
    h->cursor = last;
    return out;
}

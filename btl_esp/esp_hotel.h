/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The hotel: retransmit timers for in-flight segments. A room is embedded in
 * each segment; check-in when the segment is sent, check-out when it is
 * acknowledged, eviction when its time is up. A hashed timer wheel gives O(1)
 * check-in and check-out and a resolution of 2^shift ns (64 us by default),
 * driven by the caller's clock (progress), not by Open MPI's event loop.
 */
#ifndef ESP_HOTEL_H
#define ESP_HOTEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct esp_room {
    struct esp_room *prev, *next;  /* NULL when not checked in */
    uint64_t expiry;               /* ns */
} esp_room_t;

typedef struct esp_hotel {
    esp_room_t *slots;   /* circular lists with sentinel heads */
    unsigned mask;       /* slots - 1 */
    unsigned shift;      /* a tick is 2^shift ns */
    uint64_t cursor;     /* next tick to examine */
    size_t guests;
} esp_hotel_t;

/* nslots: a power of two. Returns 0, or -1 when out of memory. */
int esp_hotel_init(esp_hotel_t *h, unsigned nslots, unsigned shift, uint64_t now);
void esp_hotel_fini(esp_hotel_t *h);

static inline bool esp_room_occupied(const esp_room_t *r) { return r->next != NULL; }

/* Check a room in (it must not be checked in already) to expire at expiry. */
void esp_hotel_checkin(esp_hotel_t *h, esp_room_t *r, uint64_t expiry);

/* Check a room out; harmless when it is not checked in. */
static inline void esp_hotel_checkout(esp_hotel_t *h, esp_room_t *r)
{
    if (r->next != NULL) {
        r->prev->next = r->next;
        r->next->prev = r->prev;
        r->next = r->prev = NULL;
        h->guests--;
    }
}

/* Check out every room whose expiry is <= now and return them as a list
 * linked through `prev` (next is NULL: they are no longer checked in), in
 * no particular order. The caller may check rooms in again at once. */
esp_room_t *esp_hotel_evict(esp_hotel_t *h, uint64_t now);

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the hotel (btl_esp/esp_hotel.c), the timer wheel of
 * retransmit timers: check-in/out, eviction exactly once and at the first
 * call at or after the expiry, far-future expiries, 100k random rooms. */
#include <stdint.h>
#include <stdlib.h>

#include "esp_hotel.h"
#include "unit.h"

#define SHIFT 16                     /* 65.536 us ticks, as the engine uses */
#define SLOTS 1024
#define TICK (1ull << SHIFT)
#define TURN ((uint64_t) SLOTS * TICK) /* one turn of the wheel, ~67 ms */

static uint64_t rng = 42;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t list_len(esp_room_t *r)
{
    size_t n = 0;
    for (; r != NULL; r = r->prev) {
        CHECK(r->next == NULL);   /* no longer checked in */
        n++;
    }
    return n;
}

static void basics(void)
{
    esp_hotel_t h;
    CHECK(esp_hotel_init(&h, SLOTS, SHIFT, 1000) == 0);
    esp_room_t a, b, c, never;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&c, 0, sizeof(c));
    memset(&never, 0, sizeof(never));
    CHECK(esp_hotel_evict(&h, 5000) == NULL);

    esp_hotel_checkin(&h, &a, 100000);
    esp_hotel_checkin(&h, &b, 100001);
    esp_hotel_checkin(&h, &c, 100000);
    CHECK(h.guests == 3);
    CHECK(esp_room_occupied(&a) && esp_room_occupied(&b) && esp_room_occupied(&c));
    esp_hotel_checkout(&h, &c);
    CHECK(!esp_room_occupied(&c));
    CHECK(h.guests == 2);
    esp_hotel_checkout(&h, &c);          /* twice: harmless */
    esp_hotel_checkout(&h, &never);      /* never checked in: harmless */
    CHECK(h.guests == 2);

    CHECK(esp_hotel_evict(&h, 99999) == NULL);
    esp_room_t *r = esp_hotel_evict(&h, 100000);
    CHECK(r == &a);
    CHECK(r != NULL && r->prev == NULL && r->next == NULL);
    CHECK(h.guests == 1);
    CHECK(esp_hotel_evict(&h, 100000) == NULL);
    r = esp_hotel_evict(&h, 100001);
    CHECK(r == &b);
    CHECK(h.guests == 0);
    CHECK(esp_hotel_evict(&h, 200000) == NULL);

    /* An expiry already in the past goes out at the next eviction. */
    esp_hotel_checkin(&h, &a, 10);
    r = esp_hotel_evict(&h, 200000);
    CHECK(r == &a);
    /* Checked in again at once (as the engine does on a timeout). */
    esp_hotel_checkin(&h, &a, 300000);
    CHECK(esp_room_occupied(&a));
    CHECK(esp_hotel_evict(&h, 299999) == NULL);
    CHECK(esp_hotel_evict(&h, 300000) == &a);

    /* A checked-out room is never evicted. */
    esp_hotel_checkin(&h, &a, 400000);
    esp_hotel_checkin(&h, &b, 400000);
    esp_hotel_checkout(&h, &a);
    r = esp_hotel_evict(&h, 10000000);
    CHECK(r == &b && list_len(r) == 1);
    CHECK(h.guests == 0);
    esp_hotel_fini(&h);
}

/* Far-future expiries: several turns of the wheel ahead; evicted neither
 * early (when their slot comes round) nor late. */
static void far_future(void)
{
    esp_hotel_t h;
    CHECK(esp_hotel_init(&h, SLOTS, SHIFT, 0) == 0);
    enum { N = 8 };
    esp_room_t rooms[N];
    uint64_t exp[N] = {TURN + 5, 2 * TURN + TICK / 2, 10 * TURN + 3, 1000000000ull,
                       TURN - 1, 3 * TURN, 7 * TURN + 12345, 30ull * 1000000000ull};
    int evicted[N] = {0};
    uint64_t when[N] = {0};
    memset(rooms, 0, sizeof(rooms));
    for (int i = 0; i < N; i++) {
        esp_hotel_checkin(&h, &rooms[i], exp[i]);
    }
    uint64_t now = 0;
    /* Step through 2 s in 50 us steps, then jump. */
    while (now < 2000000000ull) {
        now += 50000;
        for (esp_room_t *r = esp_hotel_evict(&h, now); r != NULL; r = r->prev) {
            int i = (int) (r - rooms);
            evicted[i]++;
            when[i] = now;
        }
    }
    for (int i = 0; i < N; i++) {
        if (exp[i] <= now) {
            CHECK(evicted[i] == 1);
            CHECK(when[i] >= exp[i] && when[i] < exp[i] + 50000);
        } else {
            CHECK(evicted[i] == 0);
        }
    }
    /* A jump of many turns at once. */
    now = 40ull * 1000000000ull;
    esp_room_t *r = esp_hotel_evict(&h, now);
    CHECK(list_len(r) == 1 && r == &rooms[7]);
    CHECK(h.guests == 0);
    esp_hotel_fini(&h);
}

/* 100k rooms with random expiries over several turns; evictions at random
 * times (small steps, and now and then a jump longer than a turn); some
 * checked out early, some checked in again when evicted. Every room must
 * leave exactly once, at the first eviction call at or after its expiry. */
static void many_rooms(void)
{
    enum { N = 100000 };
    esp_hotel_t h;
    uint64_t start = 123456789;
    CHECK(esp_hotel_init(&h, SLOTS, SHIFT, start) == 0);
    esp_room_t *rooms = calloc(N, sizeof(*rooms));
    uint64_t *exp = calloc(N, sizeof(*exp));
    uint64_t *armed = calloc(N, sizeof(*armed));   /* clock when checked in */
    uint8_t *state = calloc(N, 1);   /* 0 in, 1 evicted, 2 checked out */
    unsigned bad_early = 0, bad_late = 0, bad_twice = 0;
    for (int i = 0; i < N; i++) {
        exp[i] = start + rnd() % (4 * TURN);
        armed[i] = start;
        esp_hotel_checkin(&h, &rooms[i], exp[i]);
    }
    CHECK(h.guests == N);
    size_t out = 0, rearmed = 0, checked_out = 0;
    uint64_t now = start, prev = start;
    while (h.guests > 0 && now < start + 100 * TURN) {
        prev = now;
        uint64_t step = rnd() % 1000 == 0 ? TURN + rnd() % TURN : rnd() % (2 * TICK);
        now += step;
        esp_room_t *list = esp_hotel_evict(&h, now);
        for (esp_room_t *r = list, *next; r != NULL; r = next) {
            next = r->prev;
            size_t i = (size_t) (r - rooms);
            if (state[i] != 0) {
                bad_twice++;
            }
            if (exp[i] > now) {
                bad_early++;
            }
            if (exp[i] <= prev && armed[i] < prev) {
                bad_late++;
            }
            state[i] = 1;
            out++;
            /* Some go back in at once with a new expiry, even one already due. */
            if (rnd() % 10 == 0) {
                r->prev = NULL;
                uint64_t later = rnd() % (2 * TURN);
                uint64_t early = rnd() % 4 == 0 ? 3 * TICK : 0;   /* sometimes already due */
                exp[i] = now + later - early;
                armed[i] = now;
                esp_hotel_checkin(&h, r, exp[i]);
                state[i] = 0;
                rearmed++;
            }
        }
        /* Random check-outs of rooms still in. */
        for (int k = 0; k < 3; k++) {
            size_t i = rnd() % N;
            if (state[i] == 0) {
                esp_hotel_checkout(&h, &rooms[i]);
                state[i] = 2;
                checked_out++;
            }
        }
    }
    CHECK(h.guests == 0);
    CHECK(bad_twice == 0);
    CHECK(bad_early == 0);
    CHECK(bad_late == 0);
    CHECK(out + checked_out == N + rearmed);
    for (int i = 0; i < N; i++) {
        CHECK(state[i] != 0);
        if (state[i] == 0) {
            break;
        }
    }
    printf("    %zu evictions, %zu re-armed, %zu checked out\n", out, rearmed, checked_out);
    free(rooms);
    free(exp);
    free(armed);
    free(state);
    esp_hotel_fini(&h);
}

/* Time standing still or going backwards does not evict early or lose rooms. */
static void clock_quirks(void)
{
    esp_hotel_t h;
    CHECK(esp_hotel_init(&h, SLOTS, SHIFT, 10 * TURN) == 0);
    esp_room_t a;
    memset(&a, 0, sizeof(a));
    esp_hotel_checkin(&h, &a, 10 * TURN + 3 * TICK + 7);
    CHECK(esp_hotel_evict(&h, 10 * TURN + 3 * TICK) == NULL);
    CHECK(esp_hotel_evict(&h, 10 * TURN) == NULL);          /* backwards */
    CHECK(esp_hotel_evict(&h, 10 * TURN + 3 * TICK + 6) == NULL);
    CHECK(esp_hotel_evict(&h, 10 * TURN + 3 * TICK + 7) == &a);
    CHECK(h.guests == 0);
    esp_hotel_fini(&h);
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("hotel", basics);
    RUN("hotel", far_future);
    RUN("hotel", many_rooms);
    RUN("hotel", clock_quirks);
    return UNIT_RESULT();
}

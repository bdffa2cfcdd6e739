/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The stream rule (btl_sctp_streams.h). */
#include "btl_sctp_streams.h"

/* A 64-bit mix (splitmix64's finaliser): neighbouring tags and contexts
 * land on unrelated streams. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void bsctp_stream_ranges(uint16_t n, uint16_t *env_first, uint16_t *env_count,
                        uint16_t *other_first, uint16_t *other_count)
{
    uint16_t usable = n > 1 ? (uint16_t) (n - 1) : 0;
    uint16_t m = (uint16_t) (usable / 2);
    if (usable == 1) {
        m = 1;   /* two streams: ob1 shares stream 1, stream 0 keeps the rest */
    }
    *env_first = 1;
    *env_count = m;
    *other_first = (uint16_t) (1 + (usable == 1 ? 0 : m));
    *other_count = (uint16_t) (usable == 1 ? 1 : usable - m);
}

uint16_t bsctp_stream_choose(bool map, uint16_t out_streams, uint8_t btl_tag, const void *data,
                            size_t len, enum bsctp_ob1_kind *kind)
{
    bsctp_ob1_info_t h;
    enum bsctp_ob1_kind k = bsctp_ob1_parse(btl_tag, data, len, &h);
    if (kind != NULL) {
        *kind = k;
    }
    if (!map || out_streams < 2 || k == BSCTP_OB1_NONE) {
        return 0;
    }
    uint16_t ef, ec, of, oc;
    bsctp_stream_ranges(out_streams, &ef, &ec, &of, &oc);
    if (k == BSCTP_OB1_ENVELOPE) {
        uint64_t key = (uint64_t) h.ctx << 32 | (uint32_t) h.tag;
        return (uint16_t) (ef + mix(key) % ec);
    }
    return (uint16_t) (of + mix(h.key ^ ((uint64_t) h.type << 56)) % oc);
}

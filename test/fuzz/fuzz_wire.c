/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * libFuzzer target for what esp's wires parse below esp itself (issue 19):
 *
 *  (a) eth: ebtl_eth_frame_check, the receive check of common/ebtl_eth.c,
 *      on arbitrary bytes as an RX ring slot (struct tpacket2_hdr, struct
 *      sockaddr_ll, the frame at tp_mac) with arbitrary status bits,
 *      ethertype and interface address. The slot is copied into a buffer of
 *      exactly its size, so ASan catches any read outside it. Checked: a
 *      frame returned has a non-empty payload inside the slot, with the
 *      Ethernet header before it, of the ethertype, from a unicast source
 *      other than the interface, snaplen == tp_len == payload + 14; a
 *      TP_STATUS_COPY frame is never returned; a verdict other than OK
 *      leaves offset and length 0. Every payload byte is read.
 *  (b) esp: esp_hdr_declared_len, by which the eth wire cuts the padding of
 *      short frames (btl_esp_wire_eth.c ring_read): it reads only the bytes
 *      it is given (each length from 0 to 40 and the whole input, each in a
 *      buffer of exactly that size), returns 0 below ESP_HDR_LEN and for a
 *      compact piece's type (no length field), at least ESP_HDR_LEN
 *      otherwise, does not depend on the bytes after the header; for a
 *      datagram that esp_hdr_parse accepts it returns its length (a compact
 *      piece: 0, and it is longer than a padded frame), and that datagram
 *      padded to Ethernet's 46-byte minimum payload is cut back to it by
 *      ring_read's rule.
 *
 * FUZZ_WIRE_DEBUG=1 prints each input's verdict (to see what a seed reaches).
 *
 * Input: byte 0 selects (bit 0 clear: eth, set: esp).
 *   eth: status (4 bytes, little-endian), ethertype (2, big-endian), the
 *        interface's MAC (6), then the slot's bytes (its size: the rest).
 *   esp: the datagram.
 */
#include <linux/if_packet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebtl_eth.h"
#include "esp_hdr.h"

#define ETH_MIN_PAYLOAD 46 /* as btl_esp_wire_eth.c */

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz_wire: check failed: %s: ", #cond);         \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            abort();                                                         \
        }                                                                    \
    } while (0)

static volatile uint8_t sink;
static int debug = -1; /* FUZZ_WIRE_DEBUG=1: one line per input */
static uint8_t copy[1 << 16];

/* the bytes in a buffer of exactly n bytes (1 when n is 0), ASan-bounded */
static uint8_t *exact(const uint8_t *data, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    CHECK(b != NULL, "out of memory");
    if (n > 0) {
        memcpy(b, data, n);
    }
    return b;
}

static void fuzz_eth(const uint8_t *data, size_t size)
{
    if (size < 12) {
        return;
    }
    uint32_t status = (uint32_t) data[0] | (uint32_t) data[1] << 8 | (uint32_t) data[2] << 16
                      | (uint32_t) data[3] << 24;
    uint16_t type = (uint16_t) (data[4] << 8 | data[5]);
    uint8_t mac[6];
    memcpy(mac, data + 6, 6);
    size_t slot_size = size - 12;
    uint8_t *slot = exact(data + 12, slot_size);
    size_t off = 77, len = 77;
    enum ebtl_eth_verdict v =
        ebtl_eth_frame_check(slot, slot_size, status, type, mac, &off, &len);
    if (debug) {
        static const char *const names[] = {"ok", "foreign", "own", "short", "truncated"};
        fprintf(stderr, "fuzz_wire: eth slot %zu bytes status %#x: %s, payload %zu+%zu\n",
                slot_size, (unsigned) status, (unsigned) v < 5 ? names[v] : "?", off, len);
    }
    CHECK(v >= EBTL_ETH_FRAME_OK && v <= EBTL_ETH_FRAME_TRUNCATED, "verdict %d", (int) v);
    if (status & TP_STATUS_COPY) {
        CHECK(v == EBTL_ETH_FRAME_TRUNCATED, "a TP_STATUS_COPY frame got verdict %d", (int) v);
    }
    if (v != EBTL_ETH_FRAME_OK) {
        CHECK(off == 0 && len == 0, "verdict %d with payload %zu+%zu", (int) v, off, len);
        free(slot);
        return;
    }
    CHECK(len > 0, "an empty payload returned");
    CHECK(off >= sizeof(struct tpacket2_hdr) + EBTL_ETH_HLEN && off <= slot_size
              && len <= slot_size - off,
          "payload %zu+%zu outside the %zu-byte slot", off, len, slot_size);
    struct tpacket2_hdr h;
    memcpy(&h, slot, sizeof(h));
    CHECK(h.tp_mac + (size_t) EBTL_ETH_HLEN == off, "payload at %zu, tp_mac %u", off,
          (unsigned) h.tp_mac);
    CHECK(h.tp_snaplen == h.tp_len && h.tp_len == len + EBTL_ETH_HLEN,
          "payload of %zu bytes, snaplen %u len %u", len, (unsigned) h.tp_snaplen,
          (unsigned) h.tp_len);
    const uint8_t *d = slot + off - EBTL_ETH_HLEN;
    CHECK((unsigned) (d[12] << 8 | d[13]) == type, "ethertype %02x%02x, not %04x", d[12], d[13],
          type);
    CHECK(!(d[6] & 1), "a multicast source returned");
    CHECK(memcmp(d + 6, mac, 6) != 0, "our own source address returned");
    memcpy(copy, slot + off, len < sizeof(copy) ? len : sizeof(copy));
    sink ^= (uint8_t) (copy[0] ^ slot[off + len - 1]);
    free(slot);
}

static void fuzz_esp_len(const uint8_t *data, size_t size)
{
    /* every short length and the whole input, each bounded by ASan */
    size_t first = 0;
    for (size_t n = 0; n <= size && n <= 40; n++) {
        uint8_t *b = exact(data, n);
        size_t dl = esp_hdr_declared_len(b, n);
        if (n < ESP_HDR_LEN || (n >= 2 && esp_type_compact(b[1]))) {
            CHECK(dl == 0, "%zu declared from %zu bytes", dl, n);
        } else {
            CHECK(dl >= ESP_HDR_LEN, "%zu declared from %zu bytes", dl, n);
            if (n == ESP_HDR_LEN) {
                first = dl;
            } else {
                CHECK(dl == first, "%zu declared from %zu bytes, %zu from the header alone", dl,
                      n, first);
            }
        }
        free(b);
    }
    uint8_t *b = exact(data, size);
    size_t dl = esp_hdr_declared_len(b, size);
    bool compact = size >= 2 && esp_type_compact(b[1]);
    CHECK(size < ESP_HDR_LEN || compact ? dl == 0 : dl == first, "%zu declared from %zu bytes", dl,
          size);
    esp_parsed_t p;
    enum esp_parse_result pr = esp_hdr_parse(b, size, &p);
    if (debug) {
        fprintf(stderr, "fuzz_wire: esp %zu bytes: declared %zu, parse %d\n", size, dl, (int) pr);
    }
    if (pr == ESP_PARSE_OK && compact) {
        CHECK(size > ETH_MIN_PAYLOAD, "a compact piece of %zu bytes parses", size);
    } else if (pr == ESP_PARSE_OK) {
        CHECK(dl == size, "a %zu-byte datagram that parses declares %zu", size, dl);
        if (size < ETH_MIN_PAYLOAD) {
            /* padded as a 60-byte frame carries it, then cut as ring_read does */
            uint8_t *pad = malloc(ETH_MIN_PAYLOAD);
            CHECK(pad != NULL, "out of memory");
            memcpy(pad, b, size);
            memset(pad + size, size & 1 ? 0xa5 : 0, ETH_MIN_PAYLOAD - size);
            size_t cut = esp_hdr_declared_len(pad, ETH_MIN_PAYLOAD);
            CHECK(cut != 0 && cut < ETH_MIN_PAYLOAD && cut == size,
                  "a %zu-byte datagram padded to %d declares %zu", size, ETH_MIN_PAYLOAD, cut);
            CHECK(esp_hdr_parse(pad, cut, &p) == ESP_PARSE_OK, "the cut datagram does not parse");
            free(pad);
        }
    }
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (debug < 0) {
        const char *e = getenv("FUZZ_WIRE_DEBUG");
        debug = e != NULL && *e == '1';
    }
    if (size == 0) {
        return 0;
    }
    if (data[0] & 1) {
        fuzz_esp_len(data + 1, size - 1);
    } else {
        fuzz_eth(data + 1, size - 1);
    }
    return 0;
}

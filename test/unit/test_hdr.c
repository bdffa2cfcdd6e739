/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Unit tests of the ESP wire format (btl_esp/esp_hdr.c): encode/parse round
 * trip of every type, every truncation and every kind of malformed header
 * refused, chunk and PUT bounds, and the CRC catching every single-bit flip. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "ebtl_crc32c.h"
#include "esp_hdr.h"
#include "unit.h"

#define MAXDG 2048

static uint64_t rng = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* What esp_proto_input checks of a datagram's integrity: it parses, its
 * head CRC matches, and so does its payload CRC when it has one. */
static bool crc_ok(const uint8_t *buf, size_t len)
{
    esp_parsed_t d;
    return esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK && esp_hdr_head_ok(buf, &d, 0)
           && esp_hdr_payload_ok(&d);
}

/* A valid datagram of `type` with random fields and `plen` payload bytes,
 * sealed (with the payload CRC when full). Returns its length; *hdr and
 * *ext get what was encoded. */
static size_t make_dgram_crc(uint8_t type, size_t plen, uint8_t *out, esp_hdr_t *hdr, void *ext,
                             bool full)
{
    esp_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.version = ESP_WIRE_VERSION;
    h.type = type;
    h.flags = (uint8_t) (rnd() & (ESP_F_TXS | ESP_F_TXF | ESP_F_RETX | ESP_F_ACKNOW));
    h.token = rnd() | 1;
    h.ack = (uint32_t) rnd();
    h.sack = (uint32_t) rnd();
    h.wnd = (uint16_t) rnd();
    union {
        esp_chunk_ext_t chunk;
        esp_put_ext_t put;
        esp_hello_t hello;
    } x;
    memset(&x, 0, sizeof(x));
    switch (type) {
    case ESP_T_HELLO:
    case ESP_T_HELLO_ACK:
        plen = 0;
        if (type == ESP_T_HELLO) {
            h.token = 0;
        }
        h.flags = 0;
        x.hello.job_key = rnd();
        x.hello.src_id = rnd();
        x.hello.src_epoch = rnd();
        x.hello.dst_epoch = rnd();
        x.hello.src_token = rnd() | 1;
        x.hello.isn = (uint32_t) rnd();
        x.hello.options = ESP_O_CRC;
        break;
    case ESP_T_FRAG:
        h.tag = (uint8_t) rnd();
        h.seq = (uint32_t) rnd();
        break;
    case ESP_T_CHUNK:
        h.tag = (uint8_t) rnd();
        h.seq = (uint32_t) rnd();
        if (plen == 0) {
            plen = 1;
        }
        x.chunk.frag_id = (uint32_t) rnd();
        x.chunk.offset = (uint32_t) (rnd() % 100000);
        x.chunk.frag_len = x.chunk.offset + (uint32_t) plen + (uint32_t) (rnd() % 1000);
        break;
    case ESP_T_PUT:
        h.seq = (uint32_t) rnd();
        if (plen == 0) {
            plen = 1;
        }
        x.put.key = rnd();
        x.put.addr = rnd() >> 1;
        break;
    case ESP_T_ACK:
        plen = 0;
        break;
    }
    h.len = (uint16_t) plen;
    uint8_t payload[MAXDG];
    for (size_t i = 0; i < plen; i++) {
        payload[i] = (uint8_t) rnd();
    }
    struct iovec pl = {payload, plen};
    size_t hl = esp_hdr_seal(out, esp_hdr_encode(&h, &x, out), &pl, 1, full);
    memcpy(out + hl, payload, plen);
    if (full && plen > ESP_HEAD_PAYLOAD) {
        h.flags |= ESP_F_CRC;
    }
    if (hdr != NULL) {
        *hdr = h;
    }
    if (ext != NULL) {
        memcpy(ext, &x, sizeof(x));
    }
    return hl + plen;
}

static size_t make_dgram(uint8_t type, size_t plen, uint8_t *out, esp_hdr_t *hdr, void *ext)
{
    return make_dgram_crc(type, plen, out, hdr, ext, true);
}

static const uint8_t all_types[] = {ESP_T_HELLO, ESP_T_HELLO_ACK, ESP_T_FRAG, ESP_T_CHUNK,
                                    ESP_T_PUT, ESP_T_ACK};

static void round_trip(void)
{
    for (size_t t = 0; t < sizeof(all_types); t++) {
        for (int rep = 0; rep < 50; rep++) {
            uint8_t buf[MAXDG];
            esp_hdr_t h;
            union {
                esp_chunk_ext_t chunk;
                esp_put_ext_t put;
                esp_hello_t hello;
            } x;
            size_t plen = rep == 0 ? 0 : (size_t) (rnd() % 1500);
            size_t len = make_dgram(all_types[t], plen, buf, &h, &x);
            esp_parsed_t d;
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK);
            CHECK(esp_hdr_head_ok(buf, &d, 0) && esp_hdr_payload_ok(&d));
            CHECK(d.h.version == ESP_WIRE_VERSION && d.h.type == h.type);
            CHECK(d.h.flags == h.flags && d.h.tag == h.tag && d.h.token == h.token);
            CHECK(d.h.seq == h.seq && d.h.ack == h.ack && d.h.sack == h.sack);
            CHECK(d.h.wnd == h.wnd && d.h.len == h.len);
            CHECK(d.payload_len == h.len);
            CHECK(d.payload == buf + len - h.len);
            CHECK(d.payload_len + esp_hdr_space(h.type)
                      + ((h.type == ESP_T_HELLO || h.type == ESP_T_HELLO_ACK) ? 48 : 0)
                      + (d.payload_len > ESP_HEAD_PAYLOAD ? ESP_CRC_EXT_LEN : 0)
                  == len);
            CHECK(((d.h.flags & ESP_F_CRC) != 0) == (d.payload_len > ESP_HEAD_PAYLOAD));
            switch (h.type) {
            case ESP_T_HELLO:
            case ESP_T_HELLO_ACK:
                CHECK(memcmp(&d.x.hello, &x.hello, sizeof(x.hello)) == 0);
                break;
            case ESP_T_CHUNK:
                CHECK(memcmp(&d.x.chunk, &x.chunk, sizeof(x.chunk)) == 0);
                break;
            case ESP_T_PUT:
                CHECK(memcmp(&d.x.put, &x.put, sizeof(x.put)) == 0);
                break;
            }
        }
    }
    /* Big-endian on the wire. */
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = ESP_T_FRAG, .tag = 7,
                   .token = 0x0102030405060708ull, .seq = 0x11223344, .ack = 0x55667788,
                   .sack = 0x99aabbcc, .wnd = 0xddee, .len = 0x0102};
    uint8_t b[64];
    CHECK(esp_hdr_encode(&h, NULL, b) == 32);
    CHECK(b[0] == ESP_WIRE_VERSION && b[1] == ESP_T_FRAG && b[3] == 7);
    CHECK(b[8] == 0x01 && b[15] == 0x08 && b[16] == 0x11 && b[19] == 0x44);
    CHECK(b[20] == 0x55 && b[24] == 0x99 && b[28] == 0xdd && b[30] == 0x01 && b[31] == 0x02);
    CHECK(b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] == 0);
    CHECK(strcmp(esp_seg_type_name(ESP_T_CHUNK), "CHUNK") == 0);
    CHECK(strcmp(esp_seg_type_name(99), "?") == 0);
}

static void truncation_rejected(void)
{
    for (size_t t = 0; t < sizeof(all_types); t++) {
        uint8_t buf[MAXDG];
        size_t len = make_dgram(all_types[t], 40, buf, NULL, NULL);
        esp_parsed_t d;
        CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK);
        for (size_t cut = 0; cut < len; cut++) {
            enum esp_parse_result r = esp_hdr_parse(buf, cut, &d);
            CHECK(r == ESP_PARSE_SHORT);
            if (r != ESP_PARSE_SHORT) {
                printf("    type %u cut %zu -> %d\n", all_types[t], cut, r);
                break;
            }
        }
        /* Malloc'd to the exact size: ASan sees any read past the end. */
        for (size_t cut = 0; cut <= len; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1);
            memcpy(copy, buf, cut);
            (void) crc_ok(copy, cut);
            free(copy);
        }
    }
}

static void length_mismatch_rejected(void)
{
    for (size_t t = 0; t < sizeof(all_types); t++) {
        uint8_t buf[MAXDG];
        size_t len = make_dgram(all_types[t], 40, buf, NULL, NULL);
        esp_parsed_t d;
        /* One byte more than the header says. */
        buf[len] = 0;
        CHECK(esp_hdr_parse(buf, len + 1, &d) == ESP_PARSE_MALFORMED);
        /* Length field one more / one less than the datagram. */
        uint16_t l = (uint16_t) (buf[30] << 8 | buf[31]);
        uint16_t m = (uint16_t) (l + 1);
        buf[30] = (uint8_t) (m >> 8);
        buf[31] = (uint8_t) m;
        CHECK(esp_hdr_parse(buf, len, &d) != ESP_PARSE_OK);
        if (l > 0) {
            m = (uint16_t) (l - 1);
            buf[30] = (uint8_t) (m >> 8);
            buf[31] = (uint8_t) m;
            CHECK(esp_hdr_parse(buf, len, &d) != ESP_PARSE_OK);
        }
        /* The length field at its maximum on a short datagram. */
        buf[30] = buf[31] = 0xff;
        CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_SHORT);
    }
}

static void unknown_fields_rejected(void)
{
    for (size_t t = 0; t < sizeof(all_types); t++) {
        uint8_t good[MAXDG], buf[MAXDG];
        size_t len = make_dgram(all_types[t], 10, good, NULL, NULL);
        esp_parsed_t d;
        for (int v = 0; v < 256; v++) {
            memcpy(buf, good, len);
            buf[0] = (uint8_t) v;
            CHECK(esp_hdr_parse(buf, len, &d) == (v == ESP_WIRE_VERSION ? ESP_PARSE_OK : ESP_PARSE_VERSION));
        }
        for (int ty = 0; ty < 256; ty++) {
            if (ty >= ESP_T_HELLO && ty <= ESP_T_MAX) {
                continue;
            }
            memcpy(buf, good, len);
            buf[1] = (uint8_t) ty;
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
        }
        for (int bit = 0; bit < 8; bit++) {
            if ((1 << bit) & ESP_F_KNOWN) {
                continue;
            }
            memcpy(buf, good, len);
            buf[2] |= (uint8_t) (1 << bit);
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
        }
        /* A tag on anything but FRAG/CHUNK; on a PUT, a slot number beyond
         * ESP_PUT_SLOTS. */
        if (all_types[t] != ESP_T_FRAG && all_types[t] != ESP_T_CHUNK) {
            memcpy(buf, good, len);
            buf[3] = all_types[t] == ESP_T_PUT ? ESP_PUT_SLOTS + 1 : 1;
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
        }
        if (all_types[t] == ESP_T_PUT) {
            const struct {
                uint8_t tag;
                bool ok;
            } slots[] = {{ESP_PUT_SLOTS, true}, {ESP_PUT_SLOTS | ESP_SLOT_GEN, true},
                         {1, true}, {ESP_SLOT_GEN, false}, {0x20 | 1, false}, {0x40 | 1, false}};
            for (unsigned k = 0; k < sizeof(slots) / sizeof(slots[0]); k++) {
                memcpy(buf, good, len);
                buf[3] = slots[k].tag;
                CHECK((esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK) == slots[k].ok);
            }
        }
        /* The ACK-only flags on anything else. */
        for (unsigned fl = ESP_F_DUP; all_types[t] != ESP_T_ACK && fl <= ESP_F_LOSS; fl <<= 1) {
            memcpy(buf, good, len);
            buf[2] |= (uint8_t) fl;
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
        }
    }
    /* Type-specific rules. */
    uint8_t buf[MAXDG];
    esp_parsed_t d;
    esp_hdr_t h;
    esp_hello_t hello;
    size_t len = make_dgram(ESP_T_HELLO, 0, buf, &h, &hello);
    h.token = 5;   /* a HELLO carries no token */
    esp_hdr_encode(&h, &hello, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    h.token = 0;
    hello.src_token = 0;   /* nor offers a zero one */
    esp_hdr_encode(&h, &hello, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    hello.src_token = 9;
    h.seq = 1;
    esp_hdr_encode(&h, &hello, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    h.seq = 0;
    h.len = 4;   /* payload after a HELLO body */
    esp_hdr_encode(&h, &hello, buf);
    CHECK(esp_hdr_parse(buf, len + 4, &d) == ESP_PARSE_MALFORMED);
    h.len = 0;
    esp_hdr_encode(&h, &hello, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK);

    esp_hdr_t a = {.version = ESP_WIRE_VERSION, .type = ESP_T_ACK, .token = 3, .ack = 5};
    esp_hdr_encode(&a, NULL, buf);
    CHECK(esp_hdr_parse(buf, 32, &d) == ESP_PARSE_OK);
    a.seq = 1;
    esp_hdr_encode(&a, NULL, buf);
    CHECK(esp_hdr_parse(buf, 32, &d) == ESP_PARSE_MALFORMED);
    a.seq = 0;
    a.len = 1;
    esp_hdr_encode(&a, NULL, buf);
    CHECK(esp_hdr_parse(buf, 33, &d) == ESP_PARSE_MALFORMED);
    a.len = 0;
    a.flags = ESP_F_LOSS;   /* the receiver's report of kernel drops */
    esp_hdr_encode(&a, NULL, buf);
    CHECK(esp_hdr_parse(buf, 32, &d) == ESP_PARSE_OK && (d.h.flags & ESP_F_LOSS));
}

static void chunk_bounds(void)
{
    uint8_t buf[MAXDG];
    esp_parsed_t d;
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = ESP_T_CHUNK, .token = 1, .seq = 1, .len = 100};
    struct {
        uint32_t off, flen;
        bool ok;
    } cases[] = {
        {0, 100, true},       {0, 99, false},          {1, 100, false},  {900, 1000, true},
        {901, 1000, false},   {1000, 1000, false},     {0, 0, false},    {UINT32_MAX - 50, UINT32_MAX, false},
        {UINT32_MAX - 100, UINT32_MAX, true}, {UINT32_MAX - 99, UINT32_MAX, false},           {UINT32_MAX, 100, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        esp_chunk_ext_t c = {7, cases[i].flen, cases[i].off, 0};
        size_t hl = esp_hdr_encode(&h, &c, buf);
        memset(buf + hl, 0xab, 100);
        enum esp_parse_result r = esp_hdr_parse(buf, hl + 100, &d);
        CHECK((r == ESP_PARSE_OK) == cases[i].ok);
        if ((r == ESP_PARSE_OK) != cases[i].ok) {
            printf("    case %zu: off %u frag_len %u -> %d\n", i, cases[i].off, cases[i].flen, r);
        }
    }
    /* Reserved must be 0, and an empty chunk is refused. */
    esp_chunk_ext_t c = {7, 1000, 0, 0};
    size_t hl = esp_hdr_encode(&h, &c, buf);
    buf[47] = 1;
    CHECK(esp_hdr_parse(buf, hl + 100, &d) == ESP_PARSE_MALFORMED);
    h.len = 0;
    hl = esp_hdr_encode(&h, &c, buf);
    CHECK(esp_hdr_parse(buf, hl, &d) == ESP_PARSE_MALFORMED);
}

static void put_bounds(void)
{
    uint8_t buf[MAXDG];
    esp_parsed_t d;
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = ESP_T_PUT, .token = 1, .seq = 1, .len = 100};
    struct {
        uint64_t addr;
        bool ok;
    } cases[] = {
        {0, true}, {UINT64_MAX - 100, true}, {UINT64_MAX - 99, false}, {UINT64_MAX, false},
        {1ull << 63, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        esp_put_ext_t x = {42, cases[i].addr};
        size_t hl = esp_hdr_encode(&h, &x, buf);
        memset(buf + hl, 0xcd, 100);
        enum esp_parse_result r = esp_hdr_parse(buf, hl + 100, &d);
        CHECK((r == ESP_PARSE_OK) == cases[i].ok);
        if (r == ESP_PARSE_OK) {
            CHECK(d.x.put.key == 42 && d.x.put.addr == cases[i].addr);
        }
    }
    h.len = 0;   /* an empty PUT */
    esp_put_ext_t x = {42, 0};
    size_t hl = esp_hdr_encode(&h, &x, buf);
    CHECK(esp_hdr_parse(buf, hl, &d) == ESP_PARSE_MALFORMED);
}

/* Every single-bit flip, and random 2-bit and up-to-8-bit flips, of a
 * datagram are caught: by the head CRC, the payload CRC, or by parsing
 * (a flag or length that no longer fits). Small datagrams are all head;
 * the large ones carry the payload CRC, and with full off only their head
 * is covered. */
static unsigned flips_missed(uint8_t *buf, size_t len, size_t from, size_t to)
{
    unsigned missed = 0;
    for (size_t bit = from * 8; bit < to * 8; bit++) {
        buf[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        missed += crc_ok(buf, len);
        buf[bit / 8] ^= (uint8_t) (1u << (bit % 8));
    }
    for (int rep = 0; rep < 2000; rep++) {
        size_t b1 = from * 8 + rnd() % ((to - from) * 8), b2 = from * 8 + rnd() % ((to - from) * 8);
        if (b1 == b2) {
            continue;
        }
        buf[b1 / 8] ^= (uint8_t) (1u << (b1 % 8));
        buf[b2 / 8] ^= (uint8_t) (1u << (b2 % 8));
        missed += crc_ok(buf, len);
        buf[b1 / 8] ^= (uint8_t) (1u << (b1 % 8));
        buf[b2 / 8] ^= (uint8_t) (1u << (b2 % 8));
    }
    /* one byte xored with 1..255, as the fault layer and a replay do */
    for (int rep = 0; rep < 2000; rep++) {
        size_t at = from + rnd() % (to - from);
        uint8_t x = (uint8_t) (1 + rnd() % 255);
        buf[at] ^= x;
        missed += crc_ok(buf, len);
        buf[at] ^= x;
    }
    return missed;
}

static void crc_detects_bit_flips(void)
{
    for (size_t t = 0; t < sizeof(all_types); t++) {
        for (int big = 0; big < 2; big++) {
            uint8_t buf[MAXDG];
            bool data = all_types[t] == ESP_T_FRAG || all_types[t] == ESP_T_CHUNK
                        || all_types[t] == ESP_T_PUT;
            if (big && !data) {
                continue;
            }
            size_t plen = big ? 1400 : all_types[t] == ESP_T_CHUNK || all_types[t] == ESP_T_PUT ? 52 : 68;
            size_t len = make_dgram(all_types[t], plen, buf, NULL, NULL);
            if (data && !big) {
                CHECK(len == 100);
            }
            CHECK(crc_ok(buf, len));
            CHECK(flips_missed(buf, len, 0, len) == 0);
            CHECK(crc_ok(buf, len));
            /* Truncation or extension is caught too. */
            CHECK(!crc_ok(buf, len - 1));
            CHECK(!crc_ok(buf, 7));
        }
    }
    /* Full checksums off: the head (header and the first ESP_HEAD_PAYLOAD
     * payload bytes) is still covered, and only that. */
    uint8_t buf[MAXDG];
    size_t len = make_dgram_crc(ESP_T_FRAG, 1400, buf, NULL, NULL, false);
    CHECK(len == ESP_HDR_LEN + 1400 && !(buf[2] & ESP_F_CRC));
    CHECK(crc_ok(buf, len));
    CHECK(flips_missed(buf, len, 0, ESP_HDR_LEN + ESP_HEAD_PAYLOAD) == 0);
    buf[ESP_HDR_LEN + ESP_HEAD_PAYLOAD] ^= 1;
    CHECK(crc_ok(buf, len));
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* Sealing over payload pieces equals sealing over the contiguous bytes; the
 * head CRC and the payload CRC cover what the wire format says. */
static void seal_gathers_pieces(void)
{
    enum { PLEN = 300 };
    uint8_t a[MAXDG], b[MAXDG], pl[PLEN];
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = ESP_T_FRAG, .token = 77, .seq = 5,
                   .len = PLEN};
    for (int i = 0; i < PLEN; i++) {
        pl[i] = (uint8_t) rnd();
    }
    struct iovec one = {pl, PLEN};
    struct iovec three[3] = {{pl, 1}, {pl + 1, 200}, {pl + 201, PLEN - 201}};
    size_t hl = esp_hdr_seal(a, esp_hdr_encode(&h, NULL, a), &one, 1, true);
    CHECK(hl == ESP_HDR_LEN + ESP_CRC_EXT_LEN);
    CHECK(esp_hdr_seal(b, esp_hdr_encode(&h, NULL, b), three, 3, true) == hl);
    CHECK(memcmp(a, b, hl) == 0);
    CHECK(a[2] & ESP_F_CRC);
    memcpy(a + hl, pl, PLEN);
    CHECK(crc_ok(a, hl + PLEN));
    /* The payload CRC: the bytes beyond the head; then 4 zero bytes. */
    CHECK(be32(a + ESP_HDR_LEN) == ebtl_crc32c(0, pl + ESP_HEAD_PAYLOAD, PLEN - ESP_HEAD_PAYLOAD));
    CHECK(be32(a + ESP_HDR_LEN + 4) == 0);
    /* The head CRC: header and CRC extension with the field zeroed, then
     * the first ESP_HEAD_PAYLOAD payload bytes. */
    uint8_t z[MAXDG];
    memcpy(z, a, hl + ESP_HEAD_PAYLOAD);
    z[4] = z[5] = z[6] = z[7] = 0;
    CHECK(be32(a + 4) == ebtl_crc32c(0, z, hl + ESP_HEAD_PAYLOAD));
    /* Sealing twice gives the same result (the old CRC is not covered). */
    esp_hdr_seal(a, ESP_HDR_LEN, &one, 1, true);
    CHECK(memcmp(a, b, hl) == 0);
    /* Not full, or a payload the head covers whole: no extension, no flag. */
    CHECK(esp_hdr_seal(a, esp_hdr_encode(&h, NULL, a), &one, 1, false) == ESP_HDR_LEN);
    CHECK(!(a[2] & ESP_F_CRC));
    h.len = ESP_HEAD_PAYLOAD;
    struct iovec head = {pl, ESP_HEAD_PAYLOAD};
    CHECK(esp_hdr_seal(a, esp_hdr_encode(&h, NULL, a), &head, 1, true) == ESP_HDR_LEN);
    CHECK(!(a[2] & ESP_F_CRC));
    memcpy(a + ESP_HDR_LEN, pl, ESP_HEAD_PAYLOAD);
    CHECK(crc_ok(a, ESP_HDR_LEN + ESP_HEAD_PAYLOAD));
    /* Flag CRC on a payload the head covers is refused. */
    a[2] |= ESP_F_CRC;
    esp_parsed_t d;
    CHECK(esp_hdr_parse(a, ESP_HDR_LEN + ESP_HEAD_PAYLOAD, &d) == ESP_PARSE_MALFORMED);
}

/* esp_hdr_payload_copy copies every byte, and tells a good payload from a
 * bad one, with and without the payload CRC. */
static void payload_copy(void)
{
    for (int full = 0; full < 2; full++) {
        for (size_t plen = 1; plen <= 1500; plen += plen < 140 ? 1 : 97) {
            uint8_t buf[MAXDG], dst[MAXDG + 2];
            size_t len = make_dgram_crc(ESP_T_PUT, plen, buf, NULL, NULL, full);
            esp_parsed_t d;
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK);
            memset(dst, 0xee, sizeof(dst));
            CHECK(esp_hdr_payload_copy(dst + 1, &d));
            CHECK(memcmp(dst + 1, d.payload, plen) == 0);
            CHECK(dst[0] == 0xee && dst[plen + 1] == 0xee);
            if (full && plen > ESP_HEAD_PAYLOAD) {
                buf[len - 1] ^= 0x10;   /* the last payload byte */
                CHECK(!esp_hdr_payload_copy(dst + 1, &d));
                CHECK(!esp_hdr_payload_ok(&d));
                CHECK(dst[plen] == buf[len - 1]);   /* copied all the same */
            }
        }
    }
}

/* A compact piece (CCHUNK or CPUT) sealed for the receiver whose token is tok. */
static size_t make_compact(uint8_t type, uint8_t slot, uint32_t offset, size_t plen, uint64_t tok,
                           bool full, uint8_t *out)
{
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = type, .tag = slot,
                   .flags = ESP_F_TXS | ESP_F_ACKNOW, .conn = (uint32_t) tok,
                   .seq = (uint32_t) rnd(), .offset = offset};
    uint8_t payload[2048];
    for (size_t i = 0; i < plen; i++) {
        payload[i] = (uint8_t) rnd();
    }
    struct iovec pl = {payload, plen};
    size_t hl = esp_hdr_encode(&h, NULL, out);
    esp_hdr_seal_compact(out, tok, &pl, 1, full);
    memcpy(out + hl, payload, plen);
    return hl + plen;
}

/* Compact pieces: 20 bytes of header, the payload the rest; every field
 * back as sent; the CRC depends on the receiver's token (not only on the
 * conn field that names it) and, with flag CRC, on every payload byte;
 * refused where the layout says no. */
static void compact_pieces(void)
{
    const uint64_t tok = 0x8123456700000005ull;
    uint8_t buf[2048];
    esp_parsed_t d;
    for (int full = 0; full <= 1; full++) {
        for (uint8_t type = ESP_T_CCHUNK; type <= ESP_T_CPUT; type++) {
            uint8_t slot = type == ESP_T_CPUT ? ESP_PUT_SLOTS : 0;
            size_t len = make_compact(type, slot, 0x01020304, 1452, tok, full, buf);
            CHECK(len == 1472 && esp_hdr_space(type) == ESP_COMPACT_LEN);
            CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK);
            CHECK(d.h.type == type && d.h.tag == slot && d.h.conn == 5 && d.h.offset == 0x01020304);
            CHECK(d.h.flags == ((full ? ESP_F_CRC : 0) | ESP_F_TXS | ESP_F_ACKNOW));
            CHECK(d.payload == buf + ESP_COMPACT_LEN && d.payload_len == 1452);
            CHECK(esp_hdr_declared_len(buf, len) == 0);   /* no length field: as it came */
            CHECK(esp_hdr_head_ok(buf, &d, tok) && esp_hdr_payload_ok(&d));
            /* another connection's token with the same low half: refused */
            CHECK(!esp_hdr_head_ok(buf, &d, tok ^ 1ull << 40));
            /* a flipped bit in the head, or (with flag CRC) anywhere */
            for (size_t bit = 0; bit < len * 8; bit += 7) {
                if (bit / 8 >= 4 && bit / 8 < 8) {
                    continue;   /* the crc field itself */
                }
                uint8_t copy[2048];
                memcpy(copy, buf, len);
                copy[bit / 8] ^= (uint8_t) (1u << bit % 8);
                esp_parsed_t e;
                bool covered = full || bit / 8 < ESP_COMPACT_LEN + ESP_HEAD_PAYLOAD;
                if (esp_hdr_parse(copy, len, &e) == ESP_PARSE_OK && covered) {
                    CHECK(!esp_hdr_head_ok(copy, &e, tok));
                }
            }
            uint8_t out[2048];
            CHECK(esp_hdr_payload_copy(out, &d) && memcmp(out, d.payload, d.payload_len) == 0);
        }
    }
    /* Refused: a payload the head covers whole (so never a padded frame),
     * a CCHUNK with a tag, a CPUT without a slot or beyond the last,
     * an ACK-only or unknown flag, a truncated header. */
    size_t len = make_compact(ESP_T_CCHUNK, 0, 0, ESP_HEAD_PAYLOAD, tok, false, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    len = make_compact(ESP_T_CCHUNK, 0, 0, ESP_HEAD_PAYLOAD + 1, tok, false, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK);
    len = make_compact(ESP_T_CCHUNK, 1, 0, 500, tok, false, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    len = make_compact(ESP_T_CPUT, 0, 0, 500, tok, false, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    len = make_compact(ESP_T_CPUT, ESP_PUT_SLOTS + 1, 0, 500, tok, false, buf);
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_MALFORMED);
    len = make_compact(ESP_T_CPUT, 1, 0, 500, tok, false, buf);
    for (unsigned fl = 1; fl < 0x100; fl <<= 1) {
        uint8_t copy[2048];
        memcpy(copy, buf, len);
        copy[2] |= (uint8_t) fl;
        bool known = (fl & ESP_F_COMPACT_KNOWN) != 0;
        CHECK((esp_hdr_parse(copy, len, &d) == ESP_PARSE_OK) == known);
    }
    CHECK(esp_hdr_parse(buf, ESP_COMPACT_LEN - 1, &d) == ESP_PARSE_SHORT);
    buf[0] = ESP_WIRE_VERSION + 1;
    CHECK(esp_hdr_parse(buf, len, &d) == ESP_PARSE_VERSION);
    CHECK(strcmp(esp_seg_type_name(ESP_T_CPUT), "CPUT") == 0);
}

static void seq_compare_wraps(void)
{
    CHECK(esp_seq_lt(0xffffffffu, 0));
    CHECK(esp_seq_gt(0, 0xffffffffu));
    CHECK(esp_seq_le(5, 5) && esp_seq_ge(5, 5) && !esp_seq_lt(5, 5) && !esp_seq_gt(5, 5));
    CHECK(esp_seq_lt(0xffffff00u, 0x10));
    CHECK(esp_seq_lt(10, 20) && !esp_seq_lt(20, 10));
}

int main(int argc, char **argv)
{
    unit_init(argc, argv);
    RUN("hdr", round_trip);
    RUN("hdr", truncation_rejected);
    RUN("hdr", length_mismatch_rejected);
    RUN("hdr", unknown_fields_rejected);
    RUN("hdr", chunk_bounds);
    RUN("hdr", put_bounds);
    RUN("hdr", crc_detects_bit_flips);
    RUN("hdr", seal_gathers_pieces);
    RUN("hdr", payload_copy);
    RUN("hdr", compact_pieces);
    RUN("hdr", seq_compare_wraps);
    return UNIT_RESULT();
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The ESP wire format: encoding, and parsing of untrusted datagrams. */
#include "esp_hdr.h"

#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

#include "ebtl_crc32c.h"

static inline uint16_t get16(const uint8_t *p) { return (uint16_t) (p[0] << 8 | p[1]); }
static inline uint64_t get64(const uint8_t *p) { return (uint64_t) esp_get32(p) << 32 | esp_get32(p + 4); }
static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t) (v >> 8); p[1] = (uint8_t) v; }
static inline void put64(uint8_t *p, uint64_t v) { esp_put32(p, (uint32_t) (v >> 32)); esp_put32(p + 4, (uint32_t) v); }

#define HELLO_LEN ((size_t) sizeof(esp_hello_t))

const char *esp_seg_type_name(unsigned type)
{
    static const char *const names[] = {"?",   "HELLO", "HELLO_ACK", "FRAG",
                                        "CHUNK", "PUT", "ACK",     "CCHUNK", "CPUT"};
    return type <= ESP_T_MAX ? names[type] : "?";
}

static void encode_common(const esp_hdr_t *h, uint8_t *o)
{
    o[0] = h->version;
    o[1] = h->type;
    o[2] = h->flags;
    o[3] = h->tag;
    esp_put32(o + 4, 0);
    put64(o + 8, h->token);
    esp_put32(o + 16, h->seq);
    esp_put32(o + 20, h->ack);
    esp_put32(o + 24, h->sack);
    put16(o + 28, h->wnd);
    put16(o + 30, h->len);
}

static size_t encode_compact(const esp_hdr_t *h, uint8_t *o)
{
    o[0] = h->version;
    o[1] = h->type;
    o[2] = h->flags;
    o[3] = h->tag;
    esp_put32(o + 4, 0);
    esp_put32(o + 8, h->conn);
    esp_put32(o + 12, h->seq);
    esp_put32(o + 16, h->offset);
    return ESP_COMPACT_LEN;
}

size_t esp_hdr_encode(const esp_hdr_t *h, const void *ext, void *out)
{
    uint8_t *o = out;
    if (esp_type_compact(h->type)) {
        return encode_compact(h, o);
    }
    encode_common(h, o);
    switch (h->type) {
    case ESP_T_CHUNK: {
        const esp_chunk_ext_t *c = ext;
        esp_put32(o + 32, c->frag_id);
        esp_put32(o + 36, c->frag_len);
        esp_put32(o + 40, c->offset);
        esp_put32(o + 44, 0);
        return ESP_HDR_LEN + ESP_EXT_LEN;
    }
    case ESP_T_PUT: {
        const esp_put_ext_t *p = ext;
        put64(o + 32, p->key);
        put64(o + 40, p->addr);
        return ESP_HDR_LEN + ESP_EXT_LEN;
    }
    case ESP_T_HELLO:
    case ESP_T_HELLO_ACK: {
        const esp_hello_t *m = ext;
        put64(o + 32, m->job_key);
        put64(o + 40, m->src_id);
        put64(o + 48, m->src_epoch);
        put64(o + 56, m->dst_epoch);
        put64(o + 64, m->src_token);
        esp_put32(o + 72, m->isn);
        esp_put32(o + 76, m->options);
        return ESP_HDR_LEN + HELLO_LEN;
    }
    default:
        return ESP_HDR_LEN;
    }
}

/* Continue crc over bytes [from, to) of the concatenated pieces. */
static uint32_t crc_iov_range(uint32_t crc, const struct iovec *v, int n, size_t from, size_t to)
{
    size_t at = 0;
    for (int i = 0; i < n && at < to; i++) {
        size_t l = v[i].iov_len;
        if (at + l > from) {
            size_t a = from > at ? from - at : 0;
            size_t b = to - at < l ? to - at : l;
            crc = ebtl_crc32c(crc, (const uint8_t *) v[i].iov_base + a, b - a);
        }
        at += l;
    }
    return crc;
}

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

size_t esp_hdr_seal(void *hdr, size_t hdr_len, const struct iovec *payload, int n, bool full)
{
    uint8_t *o = hdr;
    size_t plen = 0;
    for (int i = 0; i < n; i++) {
        plen += payload[i].iov_len;
    }
    o[2] &= (uint8_t) ~ESP_F_CRC;
    if (full && plen > ESP_HEAD_PAYLOAD) {
        o[2] |= ESP_F_CRC;
        esp_put32(o + hdr_len, crc_iov_range(0, payload, n, ESP_HEAD_PAYLOAD, plen));
        esp_put32(o + hdr_len + 4, 0);
        hdr_len += ESP_CRC_EXT_LEN;
    }
    esp_put32(o + 4, 0);
    uint32_t crc = ebtl_crc32c(0, o, hdr_len);
    crc = crc_iov_range(crc, payload, n, 0, min_sz(plen, ESP_HEAD_PAYLOAD));
    esp_put32(o + 4, crc);
    return hdr_len;
}

/* A compact piece's CRC begins with the high half of the receiver's token:
 * only a sender that knows it makes one the receiver takes. */
static uint32_t compact_seed(uint64_t token)
{
    uint8_t hi[4];
    esp_put32(hi, (uint32_t) (token >> 32));
    return ebtl_crc32c(0, hi, sizeof(hi));
}

void esp_hdr_seal_compact(void *hdr, uint64_t token, const struct iovec *payload, int n, bool full)
{
    uint8_t *o = hdr;
    size_t plen = 0;
    for (int i = 0; i < n; i++) {
        plen += payload[i].iov_len;
    }
    o[2] = (uint8_t) (full ? o[2] | ESP_F_CRC : o[2] & ~ESP_F_CRC);
    esp_put32(o + 4, 0);
    uint32_t crc = ebtl_crc32c(compact_seed(token), o, ESP_COMPACT_LEN);
    crc = crc_iov_range(crc, payload, n, 0, full ? plen : min_sz(plen, ESP_HEAD_PAYLOAD));
    esp_put32(o + 4, crc);
}

bool esp_hdr_head_ok(const void *buf, const esp_parsed_t *d, uint64_t token)
{
    const uint8_t *b = buf;
    static const uint8_t zero[4];
    if (esp_type_compact(d->h.type)) {
        size_t covered = d->h.flags & ESP_F_CRC ? d->payload_len
                                                : min_sz(d->payload_len, ESP_HEAD_PAYLOAD);
        uint32_t crc = ebtl_crc32c(compact_seed(token), b, 4);
        crc = ebtl_crc32c(crc, zero, 4);
        crc = ebtl_crc32c(crc, b + 8, ESP_COMPACT_LEN - 8 + covered);
        return crc == esp_get32(b + 4);
    }
    size_t head = (size_t) (d->payload - b) + min_sz(d->payload_len, ESP_HEAD_PAYLOAD);
    uint32_t crc = ebtl_crc32c(0, b, 4);
    crc = ebtl_crc32c(crc, zero, 4);
    crc = ebtl_crc32c(crc, b + 8, head - 8);
    return crc == esp_get32(b + 4);
}

bool esp_hdr_payload_ok(const esp_parsed_t *d)
{
    /* a compact piece's CRC, when it has one, covered the payload too */
    if (!(d->h.flags & ESP_F_CRC) || esp_type_compact(d->h.type)) {
        return true;
    }
    /* parse made sure payload_len > ESP_HEAD_PAYLOAD */
    return ebtl_crc32c(0, d->payload + ESP_HEAD_PAYLOAD, d->payload_len - ESP_HEAD_PAYLOAD)
           == d->payload_crc;
}

bool esp_hdr_payload_copy(void *dst, const esp_parsed_t *d)
{
    uint8_t *o = dst;
    if (!(d->h.flags & ESP_F_CRC) || esp_type_compact(d->h.type)) {
        if (d->payload_len > 0) {
            memcpy(o, d->payload, d->payload_len);
        }
        return true;
    }
    memcpy(o, d->payload, ESP_HEAD_PAYLOAD);
    return ebtl_crc32c_copy(0, o + ESP_HEAD_PAYLOAD, d->payload + ESP_HEAD_PAYLOAD,
                            d->payload_len - ESP_HEAD_PAYLOAD)
           == d->payload_crc;
}

/* Bytes between the header and the payload (or CRC extension) by type. */
static size_t body_len(uint8_t type)
{
    switch (type) {
    case ESP_T_HELLO:
    case ESP_T_HELLO_ACK: return HELLO_LEN;
    case ESP_T_CHUNK:
    case ESP_T_PUT: return ESP_EXT_LEN;
    default: return 0;
    }
}

size_t esp_hdr_declared_len(const void *buf, size_t len)
{
    const uint8_t *b = buf;
    if (len >= 2 && esp_type_compact(b[1])) {
        return 0;   /* no length field; never short enough to be padded: as it came */
    }
    if (len < ESP_HDR_LEN) {
        return 0;
    }
    size_t crcx = (b[2] & ESP_F_CRC) ? ESP_CRC_EXT_LEN : 0;
    return ESP_HDR_LEN + body_len(b[1]) + crcx + get16(b + 30);
}

/* A PUT's tag: 0 (no slot), or a slot number with its generation. */
static bool slot_ok(uint8_t tag)
{
    return tag == 0
           || ((tag & ~(ESP_SLOT_NUM | ESP_SLOT_GEN)) == 0 && (tag & ESP_SLOT_NUM) != 0
               && (tag & ESP_SLOT_NUM) <= ESP_PUT_SLOTS);
}

/* A compact piece: structure only (the slot and the offset are checked
 * against the connection's state by the receiver). */
static enum esp_parse_result parse_compact(const uint8_t *b, size_t len, esp_parsed_t *out)
{
    esp_hdr_t *h = &out->h;
    if (len < ESP_COMPACT_LEN) {
        return ESP_PARSE_SHORT;
    }
    h->version = b[0];
    h->type = b[1];
    h->flags = b[2];
    h->tag = b[3];
    h->crc = esp_get32(b + 4);
    h->token = 0;
    h->conn = esp_get32(b + 8);
    h->seq = esp_get32(b + 12);
    h->offset = esp_get32(b + 16);
    h->ack = h->sack = 0;
    h->wnd = 0;
    out->payload = b + ESP_COMPACT_LEN;
    out->payload_len = len - ESP_COMPACT_LEN;
    out->payload_crc = 0;
    out->x.chunk = (esp_chunk_ext_t){0, 0, h->offset, 0};
    h->len = out->payload_len <= UINT16_MAX ? (uint16_t) out->payload_len : 0;
    if ((h->flags & ~ESP_F_COMPACT_KNOWN) != 0 || out->payload_len <= ESP_HEAD_PAYLOAD
        || out->payload_len > UINT16_MAX
        || (h->type == ESP_T_CCHUNK ? h->tag != 0 : h->tag == 0 || !slot_ok(h->tag))) {
        return ESP_PARSE_MALFORMED;
    }
    return ESP_PARSE_OK;
}

enum esp_parse_result esp_hdr_parse(const void *buf, size_t len, esp_parsed_t *out)
{
    const uint8_t *b = buf;
    if (len >= 2 && b[0] == ESP_WIRE_VERSION && esp_type_compact(b[1])) {
        return parse_compact(b, len, out);
    }
    if (len < ESP_HDR_LEN) {
        return ESP_PARSE_SHORT;
    }
    esp_hdr_t *h = &out->h;
    h->version = b[0];
    h->type = b[1];
    h->flags = b[2];
    h->tag = b[3];
    h->crc = esp_get32(b + 4);
    h->token = get64(b + 8);
    h->seq = esp_get32(b + 16);
    h->ack = esp_get32(b + 20);
    h->sack = esp_get32(b + 24);
    h->wnd = get16(b + 28);
    h->len = get16(b + 30);
    h->conn = 0;
    h->offset = 0;
    if (h->version != ESP_WIRE_VERSION) {
        return ESP_PARSE_VERSION;
    }
    if (h->type < ESP_T_HELLO || h->type > ESP_T_ACK || (h->flags & ~ESP_F_KNOWN) != 0) {
        return ESP_PARSE_MALFORMED;
    }
    size_t body = body_len(h->type);
    /* the payload CRC only where the head CRC leaves payload bytes out */
    size_t crcx = 0;
    if (h->flags & ESP_F_CRC) {
        if (h->len <= ESP_HEAD_PAYLOAD) {
            return ESP_PARSE_MALFORMED;
        }
        crcx = ESP_CRC_EXT_LEN;
    }
    if (len < ESP_HDR_LEN + body + crcx) {
        return ESP_PARSE_SHORT;
    }
    if (ESP_HDR_LEN + body + crcx + h->len != len) {
        return len < ESP_HDR_LEN + body + crcx + h->len ? ESP_PARSE_SHORT : ESP_PARSE_MALFORMED;
    }
    const uint8_t *x = b + ESP_HDR_LEN;
    out->payload = x + body + crcx;
    out->payload_len = h->len;
    out->payload_crc = 0;
    if (crcx != 0) {
        out->payload_crc = esp_get32(x + body);
        if (esp_get32(x + body + 4) != 0) {
            return ESP_PARSE_MALFORMED;
        }
    }
    switch (h->type) {
    case ESP_T_HELLO:
    case ESP_T_HELLO_ACK:
        out->x.hello.job_key = get64(x);
        out->x.hello.src_id = get64(x + 8);
        out->x.hello.src_epoch = get64(x + 16);
        out->x.hello.dst_epoch = get64(x + 24);
        out->x.hello.src_token = get64(x + 32);
        out->x.hello.isn = esp_get32(x + 40);
        out->x.hello.options = esp_get32(x + 44);
        if (h->len != 0 || h->seq != 0 || out->x.hello.src_token == 0) {
            return ESP_PARSE_MALFORMED;
        }
        if (h->type == ESP_T_HELLO && h->token != 0) {
            return ESP_PARSE_MALFORMED;
        }
        break;
    case ESP_T_CHUNK:
        out->x.chunk.frag_id = esp_get32(x);
        out->x.chunk.frag_len = esp_get32(x + 4);
        out->x.chunk.offset = esp_get32(x + 8);
        out->x.chunk.reserved = esp_get32(x + 12);
        if (h->len == 0 || out->x.chunk.reserved != 0
            || out->x.chunk.offset > out->x.chunk.frag_len
            || h->len > out->x.chunk.frag_len - out->x.chunk.offset) {
            return ESP_PARSE_MALFORMED;
        }
        break;
    case ESP_T_PUT:
        out->x.put.key = get64(x);
        out->x.put.addr = get64(x + 8);
        if (h->len == 0 || out->x.put.addr > UINT64_MAX - h->len) {
            return ESP_PARSE_MALFORMED;
        }
        break;
    case ESP_T_ACK:
        if ((h->seq != 0 && !(h->flags & ESP_F_DUP)) || h->tag != 0
            || (h->flags & ESP_F_SACKB ? h->len == 0 || h->len % ESP_SACK_BLOCK_LEN != 0
                                              || h->len > ESP_SACK_BLOCKS_MAX * ESP_SACK_BLOCK_LEN
                                       : h->len != 0)) {
            return ESP_PARSE_MALFORMED;
        }
        break;
    default: /* FRAG */
        break;
    }
    /* tag: a FRAG's or CHUNK's BTL tag; a PUT's slot, when it defines one */
    if ((h->type == ESP_T_PUT ? !slot_ok(h->tag)
                              : h->type != ESP_T_FRAG && h->type != ESP_T_CHUNK && h->tag != 0)
        || (h->type != ESP_T_ACK && (h->flags & (ESP_F_DUP | ESP_F_SACKB | ESP_F_LOSS)))) {
        return ESP_PARSE_MALFORMED;
    }
    return ESP_PARSE_OK;
}

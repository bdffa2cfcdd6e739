/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * libFuzzer target for everything esp parses from the network:
 *
 *  (a) esp_hdr_parse and the CRC checks on the raw input; a datagram that
 *      parses must encode back to the same header bytes, and sealed again
 *      must pass the checks;
 *  (b) the input, cut into records, fed as datagrams into a real esp_proto_t
 *      engine ("B") that has an established connection with a second engine
 *      ("A"): a HELLO handshake and some traffic both ways are driven
 *      in-process for every input (deterministic: fixed seeds, ISNs, clock),
 *      and B has segments in flight toward A, so ACK/SACK processing, data
 *      receive, the hold ring, reassembly of CHUNKs and PUT writes are all
 *      reachable. Records can be raw bytes, raw bytes with the live
 *      connection token (and a valid CRC) patched in, or datagrams built from
 *      the input around the live token and sequence numbers; others advance
 *      the clock (timers, retransmissions, the peer timeout) or make B send;
 *  (c) ebtl_modex_decode of the raw input (both kinds); a record that decodes
 *      must encode back to the same bytes.
 *
 * Checked besides the sanitizers: every datagram B transmits parses, and
 * carries a valid CRC when checksums are on; B delivers no fragment larger
 * than ESP_MAX_FRAG; PUT writes stay inside the registered region (the
 * callback refuses others, as the BTL does); no message completes twice or
 * completes that was not sent; no leak (LeakSanitizer, at destroy).
 *
 * Input: byte 0 = options (bit 0: checksums on; bit 1: B sends data to A
 * before the records; bit 2: B answers an unknown HELLO sender), then
 * records, each starting with a selector byte (see run_records).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "ebtl_crc32c.h"
#include "esp_hdr.h"
#include "ebtl_modex.h"
#include "esp_proto.h"

#define JOB_KEY 0x4a4f424b45595f31ull
#define ID_A ((42ull << 32) | 0)
#define ID_B ((42ull << 32) | 1)
#define ID_C ((42ull << 32) | 2)
#define EPOCH_A 0xa11ce0000000000aull
#define EPOCH_B 0xb0b000000000000bull
#define EPOCH_C 0xc0c000000000000cull
#define ISN_A 0xfffffff0u   /* wraps during the setup traffic */
#define ISN_B 5000u
#define MAXDG 1472u         /* largest datagram either engine sends */
#define PUT_KEY 0x5055544b4559ull
#define PUT_BASE 0x10000ull
#define PUT_SIZE 65536u
#define NMSG 16
#define QMAX 256
#define MAX_FRAG (16u << 20)

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz_esp: check failed: %s: ", #cond);          \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            abort();                                                         \
        }                                                                    \
    } while (0)

typedef struct dgram {
    uint8_t *buf;
    size_t len;
    int to;          /* 0: A, 1: B */
} dgram_t;

typedef struct harness {
    esp_proto_t *eng[2];     /* A, B */
    bool checksum;
    bool accept_unknown;
    bool pumping;            /* queue datagrams for the other engine */
    dgram_t q[QMAX];
    unsigned qhead, qlen;
    uint64_t now;
    uint64_t live_token;     /* what A puts on datagrams to B */
    uint64_t a_token;        /* what B puts on datagrams to A (A's own token) */
    uint32_t b_rcv_nxt;      /* B's next expected sequence number */
    uint32_t b_snd_nxt;      /* past the last sequence number B sent */
    uint8_t region[PUT_SIZE];
    esp_msg_t msgs[NMSG];
    uint8_t msgbuf[NMSG][9000];
    bool sent[NMSG], done[NMSG];
    unsigned nmsg;
    unsigned failed;
    unsigned delivered, put_ok, put_refused;
    bool debug;              /* FUZZ_ESP_DEBUG=1: one line of figures per input */
    volatile uint8_t sink;
} harness_t;

static harness_t H;

/* ------------------------------------------------------------ callbacks */

static bool is_data(uint8_t type)
{
    return type == ESP_T_FRAG || type == ESP_T_CHUNK || type == ESP_T_PUT || esp_type_compact(type);
}

static size_t gather(const struct iovec *iov, int n, uint8_t *out, size_t cap)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        CHECK(len + iov[i].iov_len <= cap, "datagram of more than %zu bytes", cap);
        if (iov[i].iov_len > 0) {
            memcpy(out + len, iov[i].iov_base, iov[i].iov_len);
        }
        len += iov[i].iov_len;
    }
    return len;
}

/* The receiver's token on each engine's full datagrams to each peer: a
 * compact piece's CRC starts from it (a full datagram always came first). */
static uint64_t g_tok[3][3];

static void check_outgoing(int from, uint32_t peer, const uint8_t *buf, size_t len, bool checksum)
{
    esp_parsed_t d;
    enum esp_parse_result r = esp_hdr_parse(buf, len, &d);
    CHECK(r == ESP_PARSE_OK, "the engine sent a datagram that does not parse (%d), type %u len %zu",
          (int) r, len > 1 ? buf[1] : 0, len);
    uint64_t tok = peer < 3 && from < 3 ? g_tok[from][peer] : 0;
    if (esp_type_compact(d.h.type)) {
        CHECK(tok != 0 && d.h.conn == (uint32_t) tok,
              "a compact piece before any full datagram, or naming another connection");
    } else if (d.h.type != ESP_T_HELLO && peer < 3 && from < 3) {
        g_tok[from][peer] = d.h.token;
    }
    CHECK(esp_hdr_head_ok(buf, &d, tok) && esp_hdr_payload_ok(&d),
          "the engine sent a %s without a valid CRC", esp_seg_type_name(d.h.type));
    if (checksum && d.payload_len > ESP_HEAD_PAYLOAD) {
        CHECK(d.h.flags & ESP_F_CRC, "the engine sent a %s of %zu bytes without a payload CRC",
              esp_seg_type_name(d.h.type), d.payload_len);
    }
}

static void transmit(void *ctx, uint32_t peer, unsigned path, enum esp_channel ch,
                     const struct iovec *iov, int iovcnt)
{
    (void) path;
    (void) ch;
    int from = (int) (intptr_t) ctx;
    static uint8_t tmp[65536];
    size_t len = gather(iov, iovcnt, tmp, sizeof(tmp));
    CHECK(len <= MAXDG, "a %zu-byte datagram, above the %u the peer was given", len, MAXDG);
    check_outgoing(from, peer, tmp, len, H.checksum);
    esp_parsed_t d;
    (void) esp_hdr_parse(tmp, len, &d);
    if (from == 1 && peer == 0 && d.h.type != ESP_T_HELLO && !esp_type_compact(d.h.type)) {
        H.a_token = d.h.token;
    }
    if (from == 1 && is_data(d.h.type) && esp_seq_ge(d.h.seq, H.b_snd_nxt)) {
        H.b_snd_nxt = d.h.seq + 1;
    }
    if (!H.pumping || (from == 1 && peer != 0)) {
        return;   /* fuzzing: B's output goes nowhere */
    }
    if (H.qlen == QMAX) {
        return;   /* the wire is full: lost */
    }
    dgram_t *g = &H.q[(H.qhead + H.qlen++) % QMAX];
    g->buf = malloc(len ? len : 1);
    CHECK(g->buf != NULL, "out of memory");
    memcpy(g->buf, tmp, len);
    g->len = len;
    g->to = 1 - from;
}

static void deliver(void *ctx, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    (void) ctx;
    (void) peer;
    CHECK(len <= MAX_FRAG, "delivered a %zu-byte fragment", len);
    H.delivered++;
    /* read every byte (ASan checks the whole range is valid memory) */
    static uint8_t copy[MAX_FRAG];
    if (len > 0) {
        memcpy(copy, data, len);
        H.sink ^= (uint8_t) (copy[0] ^ copy[len - 1] ^ tag);
    }
}

static void *put_target(void *ctx, uint32_t peer, uint64_t key, uint64_t addr, size_t len)
{
    (void) ctx;
    (void) peer;
    if (key != PUT_KEY || addr < PUT_BASE || len > PUT_SIZE || addr - PUT_BASE > PUT_SIZE - len) {
        H.put_refused++;
        return NULL;
    }
    H.put_ok++;
    return H.region + (addr - PUT_BASE);
}

static void complete(void *ctx, esp_msg_t *msg)
{
    (void) ctx;
    CHECK(msg >= H.msgs && msg < H.msgs + NMSG, "completed a message never sent (%p)",
          (void *) msg);
    size_t i = (size_t) (msg - H.msgs);
    CHECK(H.sent[i], "completed message %zu that was not sent", i);
    CHECK(!H.done[i], "completed message %zu twice", i);
    H.done[i] = true;
}

static int unknown_peer(void *ctx, uint64_t id, uint32_t *peer)
{
    int me = (int) (intptr_t) ctx;
    if (me != 1 || !H.accept_unknown || id != ID_C) {
        return -1;
    }
    if (esp_proto_add_peer(H.eng[1], 2, ID_C, EPOCH_C, MAXDG) != 0) {
        return -1;
    }
    *peer = 2;
    return 0;
}

static void peer_failed(void *ctx, uint32_t peer, const char *why)
{
    (void) ctx;
    (void) peer;
    CHECK(why != NULL && why[0] != '\0', "peer_failed without a reason");
    H.failed++;
}

static const esp_proto_ops_t OPS = {
    .transmit = transmit,
    .deliver = deliver,
    .put_target = put_target,
    .complete = complete,
    .unknown_peer = unknown_peer,
    .peer_failed = peer_failed,
};

/* ----------------------------------------------------------- the setup */

/* Queue message i (len bytes: FRAG or CHUNKs; PUT when put) from engine e
 * to its peer. */
static void send_msg(int e, size_t len, bool put, uint64_t put_addr, uint8_t tag)
{
    if (H.nmsg == NMSG) {
        return;
    }
    unsigned i = H.nmsg++;
    esp_msg_t *m = &H.msgs[i];
    memset(m, 0, sizeof(*m));
    if (len > sizeof(H.msgbuf[i])) {
        len = sizeof(H.msgbuf[i]);
    }
    m->kind = put ? ESP_MSG_PUT : ESP_MSG_SEND;
    m->tag = put ? 0 : tag;
    /* two pieces: the gather path too */
    size_t half = len / 3;
    m->iov[0] = (struct iovec){H.msgbuf[i], half};
    m->iov[1] = (struct iovec){H.msgbuf[i] + half, len - half};
    m->iovcnt = 2;
    m->put_key = PUT_KEY;
    m->put_addr = put_addr;
    H.sent[i] = true;
    if (esp_proto_send(H.eng[e], e == 0 ? 1 : 0, m, H.now) != 0) {
        H.sent[i] = false;
    }
}

/* Deliver what is on the wire (and what it causes) until nothing is. */
static void pump(void)
{
    for (int rounds = 0; rounds < 10000 && H.qlen > 0; rounds++) {
        dgram_t g = H.q[H.qhead];
        H.qhead = (H.qhead + 1) % QMAX;
        H.qlen--;
        H.now += 3000;
        if (g.to == 1) {
            esp_parsed_t d;
            if (esp_hdr_parse(g.buf, g.len, &d) == ESP_PARSE_OK && d.h.type != ESP_T_HELLO) {
                if (d.h.type != ESP_T_HELLO_ACK && !esp_type_compact(d.h.type)) {
                    H.live_token = d.h.token;
                }
                if (is_data(d.h.type) && d.h.seq == H.b_rcv_nxt) {
                    H.b_rcv_nxt++;
                }
            }
        }
        esp_proto_input(H.eng[g.to], g.buf, g.len, H.now);
        free(g.buf);
        if (H.qlen == 0) {
            /* delayed ACKs */
            H.now += 200000;
            esp_proto_tick(H.eng[0], H.now);
            esp_proto_tick(H.eng[1], H.now);
        }
    }
}

static void drain(void)
{
    while (H.qlen > 0) {
        free(H.q[H.qhead].buf);
        H.qhead = (H.qhead + 1) % QMAX;
        H.qlen--;
    }
}

static void setup(uint8_t opts)
{
    memset(H.sent, 0, sizeof(H.sent));
    memset(H.done, 0, sizeof(H.done));
    H.nmsg = 0;
    H.failed = 0;
    H.qhead = H.qlen = 0;
    H.now = 1000000000ull;
    H.checksum = opts & 1;
    H.accept_unknown = (opts & 4) != 0;
    H.live_token = H.a_token = 0;
    memset(g_tok, 0, sizeof(g_tok));
    H.b_rcv_nxt = ISN_A;
    H.b_snd_nxt = ISN_B;

    for (int e = 0; e < 2; e++) {
        esp_proto_config_t cfg;
        esp_proto_config_default(&cfg);
        cfg.job_key = JOB_KEY;
        cfg.my_id = e == 0 ? ID_A : ID_B;
        cfg.my_epoch = e == 0 ? EPOCH_A : EPOCH_B;
        cfg.seed = 0x5eed0000u + (unsigned) e;
        cfg.isn = e == 0 ? ISN_A : ISN_B;
        cfg.checksum = H.checksum;
        cfg.window = 64;
        cfg.hold_budget = 256u << 10;
        H.eng[e] = esp_proto_create(&cfg, &OPS, (void *) (intptr_t) e, H.now);
        CHECK(H.eng[e] != NULL, "esp_proto_create failed");
    }
    CHECK(esp_proto_add_peer(H.eng[0], 1, ID_B, EPOCH_B, MAXDG) == 0, "add_peer A");
    CHECK(esp_proto_add_peer(H.eng[1], 0, ID_A, EPOCH_A, MAXDG) == 0, "add_peer B");

    /* the handshake, then A -> B: a FRAG, a 3-CHUNK fragment, a PUT; B -> A
     * a FRAG; everything delivered and acknowledged */
    H.pumping = true;
    send_msg(0, 200, false, 0, 65);
    pump();
    CHECK(H.live_token != 0, "no connection token seen after the handshake");
    send_msg(0, 4000, false, 0, 66);
    send_msg(0, 3000, true, PUT_BASE + 100, 0);
    send_msg(1, 100, false, 0, 67);
    pump();
    for (unsigned i = 0; i < H.nmsg; i++) {
        CHECK(H.done[i], "setup message %u not completed (handshake failed?)", i);
    }
    /* B -> A, not delivered: segments in flight for the fuzzed ACKs */
    H.pumping = false;
    if (opts & 2) {
        send_msg(1, 3000, false, 0, 68);
        send_msg(1, 500, false, 0, 69);
        send_msg(1, 2000, true, PUT_BASE, 0);
    }
}

static void teardown(void)
{
    drain();
    esp_proto_destroy(H.eng[0]);
    esp_proto_destroy(H.eng[1]);
    H.eng[0] = H.eng[1] = NULL;
}

/* -------------------------------------------------------------- records */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader_t;

static uint8_t rd8(reader_t *r)
{
    if (r->n == 0) {
        return 0;
    }
    r->n--;
    return *r->p++;
}
static uint16_t rd16(reader_t *r) { return (uint16_t) (rd8(r) | rd8(r) << 8); }
static uint32_t rd32(reader_t *r) { return (uint32_t) rd16(r) | (uint32_t) rd16(r) << 16; }
static uint64_t rd64(reader_t *r) { return (uint64_t) rd32(r) | (uint64_t) rd32(r) << 32; }

static void put64be(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t) (v >> (56 - 8 * i));
    }
}

static void put16be(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static size_t body_len(uint8_t type)
{
    if (type == ESP_T_HELLO || type == ESP_T_HELLO_ACK) {
        return sizeof(esp_hello_t);
    }
    return type == ESP_T_CHUNK || type == ESP_T_PUT ? ESP_EXT_LEN : 0;
}

static void feed(uint8_t *buf, size_t len)
{
    esp_proto_input(H.eng[1], buf, len, H.now);
}

/* A datagram built from the input around the live state. */
static size_t build(reader_t *r, uint8_t sel, uint8_t *out, size_t cap)
{
    static const uint8_t types[8] = {ESP_T_FRAG, ESP_T_CHUNK, ESP_T_PUT, ESP_T_ACK,
                                     ESP_T_FRAG, ESP_T_CHUNK, ESP_T_HELLO, ESP_T_HELLO_ACK};
    uint8_t t = rd8(r);
    esp_hdr_t h = {0};
    h.version = ESP_WIRE_VERSION;
    h.type = types[t & 7];
    h.flags = rd8(r) & ESP_F_KNOWN & ~ESP_F_CRC;
    h.token = H.live_token;
    /* sequence numbers near the live ones: a signed offset */
    int8_t so = (int8_t) rd8(r), ao = (int8_t) rd8(r);
    h.seq = H.b_rcv_nxt + (uint32_t) (int32_t) so;
    h.ack = ISN_B + (uint32_t) ((int32_t) ao & 63);
    if (t & 0x80) {
        h.ack = H.b_snd_nxt - (uint32_t) ((int32_t) ao & 7);
    }
    h.sack = (t & 0x40) ? rd32(r) : (uint32_t) rd8(r);
    h.wnd = rd16(r);
    size_t plen = rd16(r) % 1440;
    if (plen > r->n) {
        plen = r->n;
    }
    union {
        esp_chunk_ext_t chunk;
        esp_put_ext_t put;
        esp_hello_t hello;
    } x;
    memset(&x, 0, sizeof(x));
    switch (h.type) {
    case ESP_T_FRAG:
        h.tag = rd8(r);
        break;
    case ESP_T_CHUNK: {
        h.tag = rd8(r);
        uint8_t m = rd8(r);
        if (plen == 0) {
            plen = 1;
        }
        if (m & 1) { /* consistent pieces of a small fragment */
            x.chunk.frag_id = m >> 4;
            x.chunk.frag_len = (uint32_t) plen * (1 + ((m >> 1) & 3));
            x.chunk.offset = (uint32_t) plen * ((m >> 3) & 1);
            if (x.chunk.offset + plen > x.chunk.frag_len) {
                x.chunk.offset = 0;
            }
        } else {
            x.chunk.frag_id = rd32(r);
            x.chunk.frag_len = rd32(r);
            x.chunk.offset = rd32(r);
        }
        break;
    }
    case ESP_T_PUT: {
        uint8_t m = rd8(r);
        if (plen == 0) {
            plen = 1;
        }
        x.put.key = (m & 1) ? PUT_KEY : rd64(r);
        x.put.addr = (m & 2) ? PUT_BASE + rd16(r) : rd64(r);
        h.tag = (m & 4) ? (uint8_t) (1 + (m >> 3 & 15)) : 0;   /* defines a slot */
        break;
    }
    case ESP_T_ACK:
        h.seq = 0;
        plen = 0;
        break;
    default: { /* HELLO, HELLO_ACK */
        uint8_t m = rd8(r);
        plen = 0;
        h.seq = 0;
        h.ack = h.sack = 0;
        h.wnd = 0;
        h.token = h.type == ESP_T_HELLO ? 0 : (m & 0x20 ? rd64(r) : H.live_token);
        x.hello.job_key = (m & 1) ? rd64(r) : JOB_KEY;
        x.hello.src_id = (m & 2) ? ID_C : (m & 0x40) ? rd64(r) : ID_A;
        x.hello.src_epoch = (m & 2) ? EPOCH_C : (m & 4) ? rd64(r) : EPOCH_A;
        x.hello.dst_epoch = (m & 8) ? rd64(r) : EPOCH_B;
        /* A's real token (a HELLO repeated: B answers again), or another */
        x.hello.src_token = (m & 0x10) ? rd64(r) | 1 : H.a_token;
        x.hello.isn = rd32(r);
        x.hello.options = (m & 0x80) ? rd32(r) : (H.checksum ? 1u : 0u);
        break;
    }
    }
    if ((h.type == ESP_T_HELLO || h.type == ESP_T_HELLO_ACK) && x.hello.src_token == 0) {
        x.hello.src_token = 1;
    }
    /* t & 8: the compact piece of a CHUNK or PUT (a CCHUNK continuing the
     * fragment, a CPUT in a slot), its payload more than the head */
    bool compact = (t & 8) && (h.type == ESP_T_CHUNK || h.type == ESP_T_PUT);
    if (compact) {
        uint8_t m = rd8(r);
        h.type = h.type == ESP_T_CHUNK ? ESP_T_CCHUNK : ESP_T_CPUT;
        h.tag = h.type == ESP_T_CPUT ? (uint8_t) ((m & 0x80) ? rd8(r) : 1 + (m & 15)) : 0;
        h.offset = (m & 0x40) ? rd32(r)
                   : h.type == ESP_T_CCHUNK ? x.chunk.offset : (uint32_t) rd16(r);
        h.conn = (uint32_t) H.live_token;
        h.flags &= ESP_F_COMPACT_KNOWN;
        if (plen <= ESP_HEAD_PAYLOAD) {
            plen = ESP_HEAD_PAYLOAD + 1 + (m & 0x3f);
        }
    }
    size_t room = cap - ESP_HDR_LEN - sizeof(esp_hello_t) - ESP_CRC_EXT_LEN;
    if (plen > room) {
        plen = room;
    }
    h.len = (uint16_t) plen;
    static uint8_t payload[65536];
    for (size_t i = 0; i < plen; i++) {
        payload[i] = rd8(r);
    }
    /* sealed (the payload too when checksums are on), unless told not to */
    size_t hl = esp_hdr_encode(&h, &x, out);
    if (!(sel & 0x80)) {
        struct iovec pl = {payload, plen};
        if (compact) {
            esp_hdr_seal_compact(out, H.live_token, &pl, 1, H.checksum);
        } else {
            hl = esp_hdr_seal(out, hl, &pl, 1, H.checksum);
        }
    }
    memcpy(out + hl, payload, plen);
    return hl + plen;
}

/* Store the head CRC of a datagram that parses (a raw record's fix-up). */
static void seal_head(uint8_t *buf, size_t len)
{
    esp_parsed_t d;
    if (esp_hdr_parse(buf, len, &d) != ESP_PARSE_OK) {
        return;
    }
    if (esp_type_compact(d.h.type)) {
        struct iovec pl = {(void *) d.payload, d.payload_len};
        esp_hdr_seal_compact(buf, H.live_token, &pl, 1, (d.h.flags & ESP_F_CRC) != 0);
        return;
    }
    size_t head = (size_t) (d.payload - buf)
                  + (d.payload_len < ESP_HEAD_PAYLOAD ? d.payload_len : ESP_HEAD_PAYLOAD);
    memset(buf + 4, 0, 4);
    uint32_t crc = ebtl_crc32c(0, buf, head);
    buf[4] = (uint8_t) (crc >> 24);
    buf[5] = (uint8_t) (crc >> 16);
    buf[6] = (uint8_t) (crc >> 8);
    buf[7] = (uint8_t) crc;
}

/*
 * Records, each: selector byte s, then by s & 7:
 *   0  raw datagram: 2-byte length, bytes
 *   1  raw datagram with fixups: 2-byte length, bytes; then version := 1,
 *      token := live token (s & 0x10), length field := what the size says
 *      (s & 0x20), head CRC sealed (s & 0x40)
 *   2,3,4  a datagram built around the live state (build)
 *   5  time passes: 2 bytes x 2^(s >> 4 & 7) us, then esp_proto_tick
 *   6  B sends: a FRAG, a CHUNKed fragment, or a PUT, or a copied FRAG
 *   7  the same datagram again (the last one fed), as a duplicate
 */
static void run_records(reader_t *r)
{
    static uint8_t buf[65536 + 64], last[65536 + 64];
    size_t last_len = 0;
    for (unsigned k = 0; r->n > 0 && k < 512; k++) {
        uint8_t s = rd8(r);
        size_t len = 0;
        switch (s & 7) {
        case 0:
        case 1: {
            len = rd16(r);
            if (len > r->n) {
                len = r->n;
            }
            memcpy(buf, r->p, len);
            r->p += len;
            r->n -= len;
            if ((s & 7) == 1 && len >= ESP_HDR_LEN) {
                buf[0] = ESP_WIRE_VERSION;
                if ((s & 0x10) && esp_type_compact(buf[1])) {
                    put64be(buf + 8, (uint32_t) H.live_token | (uint64_t) rd32(r) << 32);
                } else if (s & 0x10) {
                    put64be(buf + 8, H.live_token);
                }
                if (s & 0x20) {
                    size_t hs = ESP_HDR_LEN + body_len(buf[1]);
                    if (len >= hs && len - hs <= 0xffff) {
                        put16be(buf + 30, (uint16_t) (len - hs));
                    }
                }
                if (s & 0x40) {
                    seal_head(buf, len);
                }
            }
            break;
        }
        case 2:
        case 3:
        case 4:
            len = build(r, s, buf, sizeof(buf));
            break;
        case 5: {
            uint64_t us = (uint64_t) rd16(r) << ((s >> 4) & 7);
            H.now += us * 1000;
            esp_proto_tick(H.eng[1], H.now);
            continue;
        }
        case 6: {
            uint8_t m = rd8(r);
            size_t n = (size_t) rd16(r) % 9000;
            if ((m & 3) == 3) {
                uint8_t tmp[64] = {0};
                struct iovec iov = {tmp, n % sizeof(tmp)};
                (void) esp_proto_send_copy(H.eng[1], 0, m, &iov, 1, H.now);
            } else {
                send_msg(1, n ? n : 1, (m & 3) == 2, PUT_BASE + (m >> 2), m);
            }
            continue;
        }
        default:
            if (last_len == 0) {
                continue;
            }
            memcpy(buf, last, last_len);
            len = last_len;
            break;
        }
        esp_parsed_t d;
        if (esp_hdr_parse(buf, len, &d) == ESP_PARSE_OK) {
            H.sink ^= (uint8_t) (esp_hdr_head_ok(buf, &d, 0) + esp_hdr_payload_ok(&d));
        }
        memcpy(last, buf, len);
        last_len = len;
        H.now += 1000;
        feed(buf, len);
    }
    /* timers after the records: delayed ACKs, retransmissions, then the
     * peer timeout */
    H.now += 5ull * 1000 * 1000;
    esp_proto_tick(H.eng[1], H.now);
    H.now += 200ull * 1000 * 1000;
    esp_proto_tick(H.eng[1], H.now);
}

/* ----------------------------------------------- (a) and (c): raw bytes */

/* A compact piece that parsed encodes back to its bytes, and sealed again
 * (with the token 0), checks. */
static void fuzz_compact(const uint8_t *data, size_t size, const esp_parsed_t *d)
{
    CHECK(d->payload_len > ESP_HEAD_PAYLOAD, "a compact piece with no more than the head");
    uint8_t out[ESP_COMPACT_LEN];
    size_t n = esp_hdr_encode(&d->h, &d->x, out);
    CHECK(n == ESP_COMPACT_LEN && (size_t) (d->payload - data) == n, "compact header length %zu", n);
    CHECK(memcmp(out, data, 4) == 0 && memcmp(out + 8, data + 8, n - 8) == 0,
          "%s header does not encode back to the bytes it was parsed from",
          esp_seg_type_name(d->h.type));
    static uint8_t again[65536 + 128];
    struct iovec pl = {(void *) d->payload, d->payload_len};
    esp_hdr_seal_compact(out, 0, &pl, 1, (d->h.flags & ESP_F_CRC) != 0);
    memcpy(again, out, n);
    memcpy(again + n, d->payload, d->payload_len);
    esp_parsed_t e;
    CHECK(esp_hdr_parse(again, size, &e) == ESP_PARSE_OK && esp_hdr_head_ok(again, &e, 0)
              && !esp_hdr_head_ok(again, &e, 1ull << 32),
          "a resealed %s does not check, or checks with another token",
          esp_seg_type_name(d->h.type));
}

static void fuzz_hdr(const uint8_t *data, size_t size)
{
    esp_parsed_t d;
    enum esp_parse_result r = esp_hdr_parse(data, size, &d);
    if (r != ESP_PARSE_OK) {
        return;
    }
    CHECK(d.payload_len == d.h.len && d.payload + d.payload_len == data + size,
          "payload outside the datagram");
    bool full = (d.h.flags & ESP_F_CRC) != 0;
    if (esp_type_compact(d.h.type)) {
        fuzz_compact(data, size, &d);
        return;
    }
    CHECK(!full || d.payload_len > ESP_HEAD_PAYLOAD, "a payload CRC on a payload the head covers");
    H.sink ^= (uint8_t) (esp_hdr_head_ok(data, &d, 0) + esp_hdr_payload_ok(&d));
    /* what parsed encodes back to the same header bytes (the crc field aside) */
    uint8_t out[ESP_HDR_LEN + sizeof(esp_hello_t) + ESP_CRC_EXT_LEN];
    size_t n = esp_hdr_encode(&d.h, &d.x, out);
    CHECK(n + (full ? ESP_CRC_EXT_LEN : 0) == (size_t) (d.payload - data),
          "encoded header length %zu", n);
    CHECK(memcmp(out, data, 4) == 0 && memcmp(out + 8, data + 8, n - 8) == 0,
          "%s header does not encode back to the bytes it was parsed from",
          esp_seg_type_name(d.h.type));
    /* and sealed the same way again, it passes both checks */
    static uint8_t again[65536 + 128];
    struct iovec pl = {(void *) d.payload, d.payload_len};
    size_t hl = esp_hdr_seal(out, n, &pl, 1, full);
    CHECK(hl == (size_t) (d.payload - data), "sealed header length %zu", hl);
    memcpy(again, out, hl);
    memcpy(again + hl, d.payload, d.payload_len);
    esp_parsed_t e;
    CHECK(esp_hdr_parse(again, size, &e) == ESP_PARSE_OK && esp_hdr_head_ok(again, &e, 0)
              && esp_hdr_payload_ok(&e),
          "a resealed %s does not check", esp_seg_type_name(d.h.type));
}

static void fuzz_modex(const uint8_t *data, size_t size)
{
    for (int kind = EBTL_MODEX_KIND_ESP; kind <= EBTL_MODEX_KIND_SCTP; kind++) {
        ebtl_modex_addr_t addrs[EBTL_MODEX_MAX_ADDRS];
        uint64_t epoch = 0;
        size_t max = size % 2 ? EBTL_MODEX_MAX_ADDRS : 3;
        int n = ebtl_modex_decode(kind, data, size, addrs, max, &epoch);
        if (n < 0) {
            continue;
        }
        CHECK(n >= 1 && (size_t) n <= max, "decoded %d addresses, max %zu", n, max);
        uint8_t out[ebtl_modex_size(EBTL_MODEX_MAX_ADDRS)];
        size_t len = ebtl_modex_encode(kind, epoch, addrs, (size_t) n, out, sizeof(out));
        CHECK(len == size && memcmp(out, data, size) == 0,
              "a modex record does not encode back to the bytes it was decoded from");
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    const char *e = getenv("FUZZ_ESP_DEBUG");
    H.debug = e != NULL && e[0] == '1';
    /* message bytes: a pattern, filled once (the engine only reads them) */
    for (size_t i = 0; i < NMSG; i++) {
        for (size_t k = 0; k < sizeof(H.msgbuf[i]); k++) {
            H.msgbuf[i][k] = (uint8_t) (k * 7 + i);
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_hdr(data, size);
    fuzz_modex(data, size);
    if (size == 0) {
        return 0;
    }
    setup(data[0]);
    unsigned d0 = H.delivered, p0 = H.put_ok, r0 = H.put_refused, f0 = H.failed;
    reader_t r = {data + 1, size - 1};
    run_records(&r);
    /* whatever happened, the engine reports sane per-peer figures */
    esp_peer_info_t info;
    esp_proto_peer_info(H.eng[1], 0, &info);
    const esp_proto_stats_t *st = esp_proto_stats(H.eng[1]);
    H.sink ^= (uint8_t) (st->segs_rx + info.state_bytes + esp_proto_idle(H.eng[1]));
    if (H.debug) {
        fprintf(stderr, "fuzz_esp: B delivered=%u put_ok=%u put_refused=%u failed=%u | segs_rx=%llu "
                "held=%llu dup=%llu ooo=%llu stray=%llu corrupt=%llu malformed=%llu "
                "retransmits=%llu fast=%llu timeouts=%llu acks_rx=%llu\n",
                H.delivered - d0, H.put_ok - p0, H.put_refused - r0, H.failed - f0,
                (unsigned long long) st->segs_rx, (unsigned long long) st->held,
                (unsigned long long) st->duplicates, (unsigned long long) st->out_of_window,
                (unsigned long long) st->stray, (unsigned long long) st->corrupt,
                (unsigned long long) st->malformed, (unsigned long long) st->retransmits,
                (unsigned long long) st->fast_retransmits, (unsigned long long) st->timeouts,
                (unsigned long long) st->acks_rx);
    }
    teardown();
    return 0;
}

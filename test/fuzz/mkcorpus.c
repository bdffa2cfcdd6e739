/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Writes the seed corpus of fuzz_esp into a directory (test/fuzz/run
 * --make-corpus): valid datagrams of every type (for the raw parsers),
 * valid modex records, and inputs in fuzz_esp's record format that drive
 * the engine through in-order and out-of-order FRAGs, a reassembled
 * CHUNKed fragment, PUTs, ACKs with SACK bits, a repeated HELLO, an
 * unknown peer's HELLO, timers and sends. With --wire, the seeds of
 * fuzz_wire (test/fuzz/corpus-wire): RX ring slots holding a valid frame of
 * the ethertype, VLAN-tagged ones (in the slot's tci, in the frame), one of
 * another ethertype, a short one, our own address, outgoing, another host's,
 * a multicast source, TP_STATUS_COPY, cut (snaplen < len), tp_mac and
 * tp_snaplen out of the slot; esp datagrams short and padded to Ethernet's
 * minimum. Deterministic: the same bytes every time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include "esp_hdr.h"
#include "ebtl_modex.h"

static const char *dir;

static void out(const char *name, const void *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* ------------------------------------------------- raw datagrams */

static size_t dgram(uint8_t type, uint8_t tag, uint32_t seq, const void *ext, size_t plen,
                    uint8_t *buf)
{
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = type, .tag = tag,
                   .token = 0x8000123400000000ull, .seq = seq, .ack = 77, .wnd = 0x100,
                   .len = (uint16_t) plen};
    if (type == ESP_T_HELLO) {
        h.token = 0;
    }
    uint8_t payload[2048];
    for (size_t i = 0; i < plen; i++) {
        payload[i] = (uint8_t) (i * 13 + 1);
    }
    struct iovec pl = {payload, plen};
    size_t hl = esp_hdr_seal(buf, esp_hdr_encode(&h, ext, buf), &pl, 1, true);
    memcpy(buf + hl, payload, plen);
    return hl + plen;
}

static size_t compact_dgram(uint8_t type, uint8_t slot, uint32_t seq, uint32_t offset,
                            size_t plen, uint8_t *buf)
{
    const uint64_t token = 0x8000123400000000ull;
    esp_hdr_t h = {.version = ESP_WIRE_VERSION, .type = type, .tag = slot,
                   .conn = (uint32_t) token, .seq = seq, .offset = offset};
    uint8_t payload[2048];
    for (size_t i = 0; i < plen; i++) {
        payload[i] = (uint8_t) (i * 13 + 1);
    }
    struct iovec pl = {payload, plen};
    size_t hl = esp_hdr_encode(&h, NULL, buf);
    esp_hdr_seal_compact(buf, token, &pl, 1, true);
    memcpy(buf + hl, payload, plen);
    return hl + plen;
}

static void raw_seeds(void)
{
    uint8_t buf[2048];
    esp_hello_t hello = {.job_key = 0x4a4f424b45595f31ull, .src_id = 42ull << 32,
                         .src_epoch = 0xa11ce0000000000aull, .dst_epoch = 0xb0b000000000000bull,
                         .src_token = 0x8000567800000001ull, .isn = 0xfffffff0u, .options = 1};
    out("raw-hello", buf, dgram(ESP_T_HELLO, 0, 0, &hello, 0, buf));
    out("raw-hello-ack", buf, dgram(ESP_T_HELLO_ACK, 0, 0, &hello, 0, buf));
    out("raw-frag", buf, dgram(ESP_T_FRAG, 65, 1000, NULL, 100, buf));
    esp_chunk_ext_t ch = {.frag_id = 3, .frag_len = 3000, .offset = 1400};
    out("raw-chunk", buf, dgram(ESP_T_CHUNK, 66, 1001, &ch, 1400, buf));
    esp_put_ext_t put = {.key = 0x5055544b4559ull, .addr = 0x10100};
    out("raw-put", buf, dgram(ESP_T_PUT, 0, 1002, &put, 600, buf));
    out("raw-ack", buf, dgram(ESP_T_ACK, 0, 0, NULL, 0, buf));
    out("raw-cchunk", buf, compact_dgram(ESP_T_CCHUNK, 0, 1003, 1400, 1400, buf));
    out("raw-cput", buf, compact_dgram(ESP_T_CPUT, 1, 1004, 600, 600, buf));

    ebtl_modex_addr_t a[2] = {
        {.family = 4, .prefixlen = 8, .port = 40000, .mtu = 65536, .net_id = 0, .port2 = 40001,
         .addr = {127, 0, 0, 1}},
        {.family = 6, .prefixlen = 64, .port = 40002, .mtu = 1500, .net_id = 1, .port2 = 0,
         .addr = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
         .link_kind = EBTL_MODEX_LINK_ETHER, .link_len = 6, .link_arg = 0x88b5,
         .link = {0x02, 0, 0x5e, 1, 2, 3}},
    };
    size_t n = ebtl_modex_encode(EBTL_MODEX_KIND_ESP, 0x1122334455667788ull, a, 2, buf, sizeof(buf));
    out("modex-esp", buf, n);
    n = ebtl_modex_encode(EBTL_MODEX_KIND_SCTP, 7, a, 1, buf, sizeof(buf));
    out("modex-sctp", buf, n);
}

/* --------------------------------------- fuzz_esp record inputs */

static uint8_t rec[8192];
static size_t rl;

static void b8(unsigned v) { rec[rl++] = (uint8_t) v; }
static void b16(unsigned v) { b8(v & 0xff); b8(v >> 8 & 0xff); }
static void b32(uint32_t v) { b16(v & 0xffff); b16(v >> 16); }
static void pay(size_t n) { for (size_t i = 0; i < n; i++) b8((unsigned) (i * 31 + 7)); }

/* build record: sel 2, t, flags, seq offset, ack offset, sack, wnd, plen */
static void build_hdr(unsigned t, unsigned flags, int so, int ao, uint32_t sack, unsigned plen)
{
    b8(2);
    b8(t);
    b8(flags);
    b8((unsigned) (so & 0xff));
    b8((unsigned) (ao & 0xff));
    if (t & 0x40) {
        b32(sack);
    } else {
        b8(sack & 0xff);
    }
    b16(0xffff);
    b16(plen);
}
static void frag(int so, unsigned plen, unsigned tag)
{
    build_hdr(0, ESP_F_ACKNOW, so, 0, 0, plen);
    b8(tag);
    pay(plen);
}
/* a consistent CHUNK: the fragment is (1 + mult) x plen long, piece `second` */
static void chunk(int so, unsigned plen, unsigned id, unsigned mult, int second)
{
    build_hdr(1, 0, so, 0, 0, plen);
    b8(66);
    b8(1u | (mult & 3) << 1 | (second ? 8u : 0u) | (id & 15) << 4);
    pay(plen);
}
static void put(int so, unsigned plen, unsigned off)
{
    build_hdr(2, 0, so, 0, 0, plen);
    b8(3);      /* the registered key, base + 16-bit offset */
    b16(off);
    pay(plen);
}
static void ack_all(uint32_t sack) { build_hdr(0x83 | (sack > 0xff ? 0x40 : 0), 0, 0, 0, sack, 0); }
static void ack_some(int n, uint32_t sack) { build_hdr(0x43, 0, 0, n, sack, 0); }
static void tick(unsigned units, unsigned shift) { b8(5 | (shift & 7) << 4); b16(units); }
static void send_b(unsigned m, unsigned len) { b8(6); b8(m); b16(len); }
static void again(void) { b8(7); }

static void start(unsigned opts) { rl = 0; b8(opts); }

static void record_seeds(void)
{
    start(0x03);
    frag(0, 100, 65);
    frag(1, 1200, 65);
    again();
    out("rec-frags", rec, rl);

    start(0x02);   /* checksums off */
    frag(2, 50, 65);
    frag(1, 50, 65);
    frag(0, 50, 65);
    again();
    out("rec-out-of-order", rec, rl);

    start(0x03);
    chunk(0, 1000, 5, 1, 0);
    chunk(1, 1000, 5, 1, 1);
    chunk(3, 700, 6, 1, 1);
    chunk(2, 700, 6, 1, 0);
    out("rec-chunks", rec, rl);

    /* compact pieces: a CCHUNK ending a CHUNK's fragment; CPUTs in the
     * slot a PUT defined, one ahead of it, one in an unknown slot */
    start(0x03);
    chunk(0, 1000, 5, 1, 0);
    build_hdr(1 | 8, 0, 1, 0, 0, 1000);
    b8(66);
    b8(1u | 1u << 1 | 8u | 5u << 4);
    b8(0);
    pay(1000);
    build_hdr(2 | 8, 0, 4, 0, 0, 600);   /* slot 1, before its definition */
    b8(3);
    b16(0);
    b8(0);
    b16(1600);
    pay(600);
    build_hdr(2, 0, 2, 0, 0, 1000);      /* the PUT defining slot 1 */
    b8(3 | 4);
    b16(0);
    pay(1000);
    build_hdr(2 | 8, 0, 3, 0, 0, 600);   /* a CPUT in it */
    b8(3);
    b16(0);
    b8(0);
    b16(1000);
    pay(600);
    build_hdr(2 | 8, 0, 5, 0, 0, 600);   /* a CPUT in slot 3, never defined */
    b8(3);
    b16(0);
    b8(2);
    b16(2000);
    pay(600);
    out("rec-compact", rec, rl);

    start(0x03);
    put(0, 1000, 0);
    put(2, 500, 60000);
    put(1, 300, 65535);   /* past the region: rejected */
    out("rec-puts", rec, rl);

    start(0x03);
    ack_some(1, 0);
    tick(500, 0);         /* a round trip later (not yet the RTO) ... */
    ack_some(1, 0x0e);    /* ... SACK above a hole: fast retransmit */
    tick(20, 4);
    ack_all(0);
    out("rec-acks", rec, rl);

    start(0x03);
    send_b(0, 5000);
    send_b(2, 3000);
    tick(500, 0);         /* a round trip later the receiver reports drops: */
    build_hdr(0x43, ESP_F_LOSS, 0, 1, 0, 0);   /* ... what it lacks goes again */
    tick(20, 4);
    ack_all(0);
    out("rec-loss-report", rec, rl);

    start(0x03);
    send_b(0, 5000);
    send_b(2, 3000);
    send_b(3, 40);
    tick(65535, 7);
    tick(65535, 7);
    tick(65535, 7);
    tick(65535, 7);       /* past the peer timeout */
    out("rec-timeout", rec, rl);

    start(0x07);
    b8(2); b8(6); b8(0); b8(0); b8(0); b8(0); b16(0); b16(0); b8(0); b32(1234);  /* HELLO again */
    b8(2); b8(6); b8(0); b8(0); b8(0); b8(0); b16(0); b16(0); b8(2); b32(99);    /* unknown peer C */
    b8(2); b8(7); b8(0); b8(0); b8(0); b8(0); b16(0); b16(0); b8(0); b32(1);     /* HELLO_ACK */
    frag(0, 10, 65);
    out("rec-hellos", rec, rl);

    /* a raw FRAG with the live token, length and CRC patched in */
    start(0x01);
    uint8_t buf[256];
    size_t n = dgram(ESP_T_FRAG, 65, 0, NULL, 64, buf);
    b8(1 | 0x10 | 0x20 | 0x40);
    b16((unsigned) n);
    memcpy(rec + rl, buf, n);
    rl += n;
    out("rec-raw-fixed", rec, rl);
}

/* ------------------------------------------- fuzz_wire inputs */

#define SLOT_SIZE 256u           /* a ring frame's bytes (a real one: 1584 at MTU 1500) */
#define SLOT_MAC 66u             /* where the kernel puts the frame: TPACKET_ALIGN(52 + 16) - 14 */
static const uint8_t our_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

/* selector 0, status, ethertype, MAC, then a slot holding an Ethernet frame
 * of plen payload bytes (an esp FRAG's start) from src */
static void eth_seed(const char *name, uint32_t status, uint16_t frame_type, const uint8_t *src,
                     unsigned pkttype, uint16_t vlan_tci, size_t plen, uint32_t tp_mac,
                     uint32_t snaplen_delta, uint32_t len_delta)
{
    uint8_t slot[SLOT_SIZE];
    memset(slot, 0, sizeof(slot));
    struct tpacket2_hdr h = {.tp_status = status, .tp_len = (uint32_t) (14 + plen) + len_delta,
                             .tp_snaplen = (uint32_t) (14 + plen) + snaplen_delta,
                             .tp_mac = (uint16_t) tp_mac, .tp_net = (uint16_t) (tp_mac + 14),
                             .tp_vlan_tci = vlan_tci};
    memcpy(slot, &h, sizeof(h));
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(0x88b5),
                              .sll_ifindex = 2, .sll_hatype = 1, .sll_pkttype = (uint8_t) pkttype,
                              .sll_halen = 6};
    memcpy(sll.sll_addr, src, 6);
    memcpy(slot + TPACKET_ALIGN(sizeof(struct tpacket2_hdr)), &sll, sizeof(sll));
    if (tp_mac + 14 + plen <= SLOT_SIZE) {
        uint8_t *d = slot + tp_mac;
        memcpy(d, our_mac, 6);
        memcpy(d + 6, src, 6);
        d[12] = (uint8_t) (frame_type >> 8);
        d[13] = (uint8_t) frame_type;
        uint8_t dg[2048];
        size_t n = dgram(ESP_T_FRAG, 65, 1000, NULL, plen > 32 ? plen - 32 : 0, dg);
        memcpy(d + 14, dg, plen < n ? plen : n);
    }
    rl = 0;
    b8(0);
    b32(status);
    b8(0x88);
    b8(0xb5);
    memcpy(rec + rl, our_mac, 6);
    rl += 6;
    memcpy(rec + rl, slot, sizeof(slot));
    rl += sizeof(slot);
    out(name, rec, rl);
}

static void wire_seeds(void)
{
    const uint32_t U = TP_STATUS_USER;
    eth_seed("eth-valid", U, 0x88b5, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-vlan-tci", U | TP_STATUS_VLAN_VALID, 0x88b5, peer_mac, PACKET_HOST, 0x0005, 132,
             SLOT_MAC, 0, 0);
    eth_seed("eth-vlan-tag", U, 0x8100, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-other-type", U, 0x0800, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-short", U, 0x88b5, peer_mac, PACKET_HOST, 0, 0, SLOT_MAC, 0, 0);
    eth_seed("eth-own-mac", U, 0x88b5, our_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-outgoing", U, 0x88b5, peer_mac, PACKET_OUTGOING, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-otherhost", U, 0x88b5, peer_mac, PACKET_OTHERHOST, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-mcast-src", U, 0x88b5, (const uint8_t[6]){0x03, 0, 0, 0, 0, 2}, PACKET_HOST, 0,
             132, SLOT_MAC, 0, 0);
    eth_seed("eth-copy", U | TP_STATUS_COPY, 0x88b5, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0, 0);
    eth_seed("eth-cut", U | TP_STATUS_LOSING, 0x88b5, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0,
             800);
    eth_seed("eth-mac-oob", U, 0x88b5, peer_mac, PACKET_HOST, 0, 132, SLOT_SIZE - 8, 0, 0);
    eth_seed("eth-mac-in-hdr", U, 0x88b5, peer_mac, PACKET_HOST, 0, 132, 8, 0, 0);
    eth_seed("eth-snaplen-oob", U, 0x88b5, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 0xffff0000u,
             0xffff0000u);
    eth_seed("eth-snaplen-long", U, 0x88b5, peer_mac, PACKET_HOST, 0, 132, SLOT_MAC, 40, 0);

    /* selector 1, then an esp datagram: short ones padded as a 60-byte frame */
    uint8_t buf[2048];
    size_t n;
    rl = 0;
    b8(1);
    n = dgram(ESP_T_ACK, 0, 0, NULL, 0, buf);
    memcpy(rec + rl, buf, n);
    out("esp-ack", rec, rl + n);
    memset(rec + rl + n, 0, 46 - n);
    out("esp-ack-padded", rec, rl + 46);
    n = dgram(ESP_T_FRAG, 65, 1000, NULL, 6, buf);
    memcpy(rec + rl, buf, n);
    out("esp-frag-6", rec, rl + n);
    memset(rec + rl + n, 0, 46 - n);
    out("esp-frag-6-padded", rec, rl + 46);
    n = dgram(ESP_T_FRAG, 65, 1000, NULL, 200, buf);
    memcpy(rec + rl, buf, n);
    out("esp-frag-200", rec, rl + n);
    esp_put_ext_t put = {.key = 0x5055544b4559ull, .addr = 0x10100};
    n = dgram(ESP_T_PUT, 0, 1002, &put, 300, buf);
    memcpy(rec + rl, buf, n);
    out("esp-put", rec, rl + n);
    out("esp-short", rec, rl + 20);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--wire") == 0) {
        dir = argv[2];
        wire_seeds();
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: mkcorpus DIR | mkcorpus --wire DIR\n");
        return 2;
    }
    dir = argv[1];
    raw_seeds();
    record_seeds();
    return 0;
}

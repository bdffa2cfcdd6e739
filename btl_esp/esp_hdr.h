/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The ESP wire format, version 2: every datagram starts with one 32-byte
 * header; FRAG/CHUNK/PUT carry an extension and payload, HELLO/HELLO_ACK a
 * fixed body. All fields big-endian. Documented in docs/wire-protocol.md.
 *
 * Integrity: the header's crc field always holds the CRC-32C of the
 * datagram's head (header, extension, CRC extension, and the first
 * ESP_HEAD_PAYLOAD payload bytes: every byte that steers the engine and
 * every header ob1 parses), checked before anything else. With flag CRC
 * an 8-byte CRC extension carries the CRC-32C of the rest of the payload,
 * checked before the bytes are used, or while they are copied into place.
 *
 * Compact pieces (types CCHUNK and CPUT, to a peer whose HELLO offered
 * ESP_O_COMPACT): the bulk of a CHUNKed fragment or of a PUT in a 20-byte
 * header instead of 56 (header, extension, CRC extension), so a 1500-byte
 * frame carries 1452 payload bytes (tcp's 1448). They carry no
 * acknowledgement, name the connection by the low half of the receiver's
 * token and put its high half into the CRC instead, and have one CRC over
 * the head, or over the whole datagram with flag CRC.
 *
 * esp_* files are the sans-I/O protocol: no Open MPI headers, no sockets,
 * no clock; the btl_esp_* files are the Open MPI glue around them.
 */
#ifndef ESP_HDR_H
#define ESP_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ESP_WIRE_VERSION 2

enum esp_seg_type {
    ESP_T_HELLO = 1,      /* open a connection: job key, epochs, token, ISN */
    ESP_T_HELLO_ACK = 2,  /* answer to HELLO, same body */
    ESP_T_FRAG = 3,       /* a whole BTL fragment, delivered to the tag's callback */
    ESP_T_CHUNK = 4,      /* a piece of a fragment too big for one datagram */
    ESP_T_PUT = 5,        /* emulated RDMA write: bytes for a registered region */
    ESP_T_ACK = 6,        /* header only: acknowledgement, window */
    ESP_T_CCHUNK = 7,     /* compact: the next piece of the fragment being reassembled */
    ESP_T_CPUT = 8,       /* compact: a piece of a PUT whose first piece defined a slot */
    ESP_T_MAX = 8
};

/* Header flags. */
#define ESP_F_CRC 0x01    /* a CRC extension: the payload beyond the head is checksummed */
#define ESP_F_TXS 0x02    /* first segment of a burst: the sender became active */
#define ESP_F_TXF 0x04    /* last segment of a burst: the sender has nothing queued */
#define ESP_F_RETX 0x08   /* a retransmission (not an RTT sample) */
#define ESP_F_ACKNOW 0x10 /* acknowledge at once (end of a window, a probe) */
#define ESP_F_DUP 0x20    /* ACK only: segment `seq` arrived again; resending it was not needed */
#define ESP_F_SACKB 0x40  /* ACK only: the payload is SACK blocks beyond the sack bits */
#define ESP_F_LOSS 0x80   /* ACK only, to a peer that offered ESP_O_LOSS: the receiver's
                             kernel dropped datagrams and it has drained what was kept;
                             what was sent a round trip ago and is not reported is lost */
#define ESP_F_KNOWN (ESP_F_CRC | ESP_F_TXS | ESP_F_TXF | ESP_F_RETX | ESP_F_ACKNOW | ESP_F_DUP \
                     | ESP_F_SACKB | ESP_F_LOSS)

/* SACK blocks (flag SACKB): up to this many [start, end) pairs of 32-bit
 * sequence numbers, received beyond ack + 1 + 32 (where reordering across
 * paths, or a long loss burst, puts what the sack bits cannot reach). */
#define ESP_SACK_BLOCKS_MAX 12
#define ESP_SACK_BLOCK_LEN 8
/* The longest ACK: header and blocks, 128 bytes (what a transport copies
 * of a datagram's first piece: ops.transmit). */
#define ESP_ACK_MAX_LEN (32 + ESP_SACK_BLOCKS_MAX * ESP_SACK_BLOCK_LEN)
_Static_assert(ESP_ACK_MAX_LEN <= 128, "an ACK fits the head CRC's reach and a transport's header copy");

/* Flags a compact piece may carry. */
#define ESP_F_COMPACT_KNOWN (ESP_F_CRC | ESP_F_TXS | ESP_F_TXF | ESP_F_RETX | ESP_F_ACKNOW)

/* Common header, every datagram but the compact pieces. */
typedef struct esp_hdr {
    uint8_t version;
    uint8_t type;
    uint8_t flags;
    uint8_t tag;        /* BTL tag of a FRAG/CHUNK, 0 otherwise */
    uint32_t crc;       /* CRC-32C of the head, computed with this field 0 */
    uint64_t token;     /* receiver's connection token; 0 in a HELLO */
    uint32_t seq;       /* FRAG/CHUNK/PUT: sequence number; ACK with ESP_F_DUP: the
                           duplicate's; else 0 */
    uint32_t ack;       /* every sequence number below this was received */
    uint32_t sack;      /* bit i: ack + 1 + i was received too */
    uint16_t wnd;       /* receive window granted beyond ack, in KiB (0xffff: more) */
    uint16_t len;       /* payload bytes after the header and its extension */
    uint32_t conn;      /* compact pieces: the receiver's token's low half */
    uint32_t offset;    /* compact pieces: where the payload goes */
} esp_hdr_t;
/* (the struct is wider than the 32 bytes on the wire: conn and offset
 * belong to the compact pieces) */

/* CHUNK extension: where this piece goes in its fragment. */
typedef struct esp_chunk_ext {
    uint32_t frag_id;   /* sender's number for the fragment */
    uint32_t frag_len;  /* whole fragment length */
    uint32_t offset;    /* of this piece's first byte */
    uint32_t reserved;  /* 0 */
} esp_chunk_ext_t;
_Static_assert(sizeof(esp_chunk_ext_t) == 16, "chunk extension is 16 bytes");

/* PUT extension: which registration, and the address of the first byte. */
typedef struct esp_put_ext {
    uint64_t key;       /* the receiver's registration key */
    uint64_t addr;      /* target address of this piece's first byte */
} esp_put_ext_t;
_Static_assert(sizeof(esp_put_ext_t) == 16, "put extension is 16 bytes");

/* HELLO / HELLO_ACK body. */
typedef struct esp_hello {
    uint64_t job_key;   /* same for every process of one job */
    uint64_t src_id;    /* sender's process identity (job id << 32 | rank) */
    uint64_t src_epoch; /* sender's instance number, published in the modex */
    uint64_t dst_epoch; /* the epoch the sender believes the receiver has */
    uint64_t src_token; /* token the receiver must put on datagrams to the sender */
    uint32_t isn;       /* sender's first data sequence number */
    uint32_t options;   /* ESP_O_* */
} esp_hello_t;
_Static_assert(sizeof(esp_hello_t) == 48, "hello body is 48 bytes");

#define ESP_O_CRC 0x1     /* the sender wants every payload byte checksummed */
#define ESP_O_LOSS 0x2    /* the sender understands ESP_F_LOSS on ACKs */
#define ESP_O_COMPACT 0x4 /* the sender accepts compact pieces (CCHUNK, CPUT) */

/*
 * Compact piece, 20 bytes (types CCHUNK and CPUT):
 *   0 version, 1 type, 2 flags (ESP_F_COMPACT_KNOWN), 3 slot (CPUT: the
 *   ESP_SLOT_* of its PUT; CCHUNK: 0), 4 crc, 8 conn (the low half of the
 *   receiver's token), 12 seq, 16 offset (CCHUNK: in the fragment; CPUT:
 *   from the slot's first byte). The payload is the rest of the datagram,
 *   more than ESP_HEAD_PAYLOAD bytes (so never padded by a wire). crc:
 *   CRC-32C of the high half of the receiver's token, then the header with
 *   crc 0, then the payload: all of it with flag CRC, else its first
 *   ESP_HEAD_PAYLOAD bytes.
 * A PUT's first piece, a full PUT whose `tag` names a slot (a number 1 ..
 * ESP_PUT_SLOTS and a generation bit), defines it: the receiver's key and
 * the address of offset 0 for the CPUTs after it, which follow at once. A
 * CPUT that arrives before its definition (the generation differs) waits
 * for it. Its sender uses the slot again, with the other generation, only
 * once the whole PUT is acknowledged.
 */
#define ESP_SLOT_NUM 0x1f     /* the slot number, 1 .. ESP_PUT_SLOTS (0: none) */
#define ESP_SLOT_GEN 0x80     /* the generation: flips at each use of the slot */
#define ESP_COMPACT_LEN ((size_t) 20)
#define ESP_PUT_SLOTS 16

#define ESP_HDR_LEN ((size_t) 32)   /* on the wire */
#define ESP_EXT_LEN ((size_t) 16)
/* Payload bytes the head CRC covers: more than ob1's largest header (an
 * RDMA request with esp's registration handle is under 100 bytes). */
#define ESP_HEAD_PAYLOAD ((size_t) 128)
/* CRC extension (flag CRC): the payload CRC, 4 zero bytes (the payload
 * stays 8-byte aligned). Datagrams are sized with room for it. */
#define ESP_CRC_EXT_LEN ((size_t) 8)
/* Header bytes in front of a segment's payload. */
static inline bool esp_type_compact(uint8_t type)
{
    return type == ESP_T_CCHUNK || type == ESP_T_CPUT;
}
/* Header bytes in front of a segment's payload (the CRC extension apart;
 * a compact piece's CRC is in its header). */
static inline size_t esp_hdr_space(uint8_t type)
{
    if (esp_type_compact(type)) {
        return ESP_COMPACT_LEN;
    }
    return ESP_HDR_LEN + ((type == ESP_T_CHUNK || type == ESP_T_PUT) ? ESP_EXT_LEN : 0);
}

/* A datagram parsed from untrusted bytes (host byte order). */
typedef struct esp_parsed {
    esp_hdr_t h;
    union {
        esp_chunk_ext_t chunk;
        esp_put_ext_t put;
        esp_hello_t hello;
    } x;
    const uint8_t *payload; /* into the datagram */
    size_t payload_len;
    uint32_t payload_crc;   /* flag CRC: CRC-32C of payload[ESP_HEAD_PAYLOAD..len) */
} esp_parsed_t;

enum esp_parse_result {
    ESP_PARSE_OK = 0,
    ESP_PARSE_SHORT,      /* shorter than its header or its length field says */
    ESP_PARSE_VERSION,    /* unknown version */
    ESP_PARSE_MALFORMED,  /* unknown type or flags, bad lengths or fields */
};

/*
 * Parse and check a datagram's structure: version, type, flags, lengths
 * (header + extension + CRC extension + len must equal the datagram size
 * exactly; flag CRC only with more than ESP_HEAD_PAYLOAD payload bytes),
 * HELLO body, chunk bounds (offset + len <= frag_len), PUT address overflow.
 * Does not check the CRCs (esp_hdr_head_ok, esp_hdr_payload_ok) or anything
 * needing state.
 */
enum esp_parse_result esp_hdr_parse(const void *buf, size_t len, esp_parsed_t *out);

/* The datagram size the header at buf (len bytes available) declares:
 * header, extension or body by type, CRC extension, payload; 0 when len
 * is too short to tell, and for a compact piece (it has no length field,
 * and is longer than any padded frame). Unchecked: esp_hdr_parse still
 * decides. For a wire that pads short datagrams (Ethernet's 60-byte
 * frames). */
size_t esp_hdr_declared_len(const void *buf, size_t len);

/* True when the crc field matches the head of a parsed datagram (buf is
 * the datagram esp_hdr_parse accepted as d). A compact piece's CRC starts
 * from the receiver's token, which the caller finds by d->h.conn: `token`;
 * ignored for the other types. */
bool esp_hdr_head_ok(const void *buf, const esp_parsed_t *d, uint64_t token);

/* Flag CRC: true when the payload beyond the head matches payload_crc. */
bool esp_hdr_payload_ok(const esp_parsed_t *d);

/* Copy d's payload to dst and check it against payload_crc in the same
 * pass (flag CRC), or just copy it. True when the bytes are good. */
bool esp_hdr_payload_copy(void *dst, const esp_parsed_t *d);

struct iovec;

/* Encode a header (+ extension or HELLO body) into out (at least
 * esp_hdr_space(type), or ESP_HDR_LEN + 48 for HELLO). Returns bytes written.
 * The crc field is written as 0; esp_hdr_seal fills it. */
size_t esp_hdr_encode(const esp_hdr_t *h, const void *ext, void *out);

/* Seal an encoded compact piece hdr[0..ESP_COMPACT_LEN) for the receiver
 * whose token is `token`: with full set, its CRC covers the whole payload
 * (sets ESP_F_CRC), else the head. */
void esp_hdr_seal_compact(void *hdr, uint64_t token, const struct iovec *payload, int n, bool full);

/* Seal an encoded header hdr[0..hdr_len): with full set and more than
 * ESP_HEAD_PAYLOAD payload bytes, append the CRC extension (hdr needs
 * ESP_CRC_EXT_LEN more bytes of room; sets ESP_F_CRC); then store the head
 * CRC. Returns the header's new length. */
size_t esp_hdr_seal(void *hdr, size_t hdr_len, const struct iovec *payload, int n, bool full);

/* Big-endian 32-bit fields. */
static inline uint32_t esp_get32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}
static inline void esp_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

/* Wrap-safe sequence comparisons. */
static inline bool esp_seq_lt(uint32_t a, uint32_t b) { return (int32_t) (a - b) < 0; }
static inline bool esp_seq_le(uint32_t a, uint32_t b) { return (int32_t) (a - b) <= 0; }
static inline bool esp_seq_gt(uint32_t a, uint32_t b) { return (int32_t) (a - b) > 0; }
static inline bool esp_seq_ge(uint32_t a, uint32_t b) { return (int32_t) (a - b) >= 0; }

const char *esp_seg_type_name(unsigned type);

#endif

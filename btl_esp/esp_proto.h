/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The ESP protocol engine, sans I/O: it is handed datagrams and the time,
 * and hands back datagrams to send (ops->transmit), fragments delivered in
 * order (ops->deliver), places for PUT bytes (ops->put_target) and finished
 * messages (ops->complete). No sockets, no clock, no Open MPI headers: the
 * unit tests drive it on a simulated network.
 *
 * Peers are small integers chosen by the caller (esp_proto_add_peer). A
 * connection to a peer is opened lazily on the first send with a HELLO
 * handshake that carries the job key and both epochs; every later datagram
 * carries the receiver's random connection token, so datagrams of another
 * job, an earlier run or a stranger are dropped and counted.
 *
 * Not thread-safe: the caller serialises every call on one engine.
 */
#ifndef ESP_PROTO_H
#define ESP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "esp_hdr.h"

typedef struct esp_proto esp_proto_t;

enum esp_channel { ESP_CH_DATA = 0, ESP_CH_PRIO = 1 };
enum esp_msg_kind { ESP_MSG_SEND = 0, ESP_MSG_PUT = 1 };

#define ESP_MSG_MAX_IOV 3

/*
 * An outgoing message: a BTL fragment (SEND) or an emulated RDMA write
 * (PUT). The caller owns it and its bytes until ops->complete: the engine
 * sends straight from iov and retransmits from it.
 */
typedef struct esp_msg {
    /* set by the caller */
    uint8_t kind;
    uint8_t tag;                       /* SEND: the BTL tag */
    int iovcnt;
    struct iovec iov[ESP_MSG_MAX_IOV];
    uint64_t put_key, put_addr;        /* PUT: target registration and address */
    bool prompt_ack;                   /* the caller waits for ops->complete: have the
                                          receiver acknowledge the last segment at once */
    void *user;
    /* engine state */
    struct esp_msg *next;              /* send queue */
    size_t len;                        /* sum of iov */
    size_t queued;                     /* bytes cut into segments so far */
    uint32_t segs_out;                 /* segments not yet acknowledged */
    uint32_t frag_id;
    uint8_t put_slot;                  /* PUT: the slot its first piece defined, with
                                          its generation (0: none) */
    bool released;                     /* the engine's own copy of a PUT already
                                          completed to its caller (put_release) */
} esp_msg_t;

typedef struct esp_proto_config {
    uint64_t job_key;          /* same in every process of the job */
    uint64_t my_id;            /* job id << 32 | rank */
    uint64_t my_epoch;         /* random per process, published in the modex */
    uint64_t seed;             /* tokens and initial sequence numbers */
    uint32_t window;           /* max segments in flight per peer (power of 2) */
    uint64_t ack_delay_ns;     /* standalone ACK at the latest after this */
    uint32_t ack_every;        /* ... or after this many segments */
    uint64_t rto_min_ns, rto_max_ns, rto_init_ns;
    uint64_t peer_timeout_ns;  /* no answer for this long: the peer has failed */
    uint32_t resend_per_pass;  /* retransmissions per esp_proto_tick at most */
    size_t rcv_budget;         /* bytes this side lets all senders have in flight, at most */
    uint64_t grant_delay_ns;   /* ... and no more than it drains in this long: the
                                  queueing delay senders may cause here */
    size_t initial_burst;      /* bytes a sender sends at the start of a burst */
    size_t hold_budget;        /* bytes of out-of-order data held per peer */
    size_t tiny;               /* payloads up to this go on the priority channel */
    bool checksum;             /* CRC-32C over every payload byte sent, required
                                  received (each datagram's head is checked
                                  always); the default of each peer:
                                  esp_proto_peer_checksum */
    uint64_t path_timeout_ns;  /* a path that delivered nothing for this long (at least;
                                  more when its round trip is long) while another
                                  delivered is dead */
    uint64_t path_probe_ns;    /* a dead path is probed this often */
    bool compact;              /* send the bulk of CHUNKed fragments and PUTs in
                                  compact pieces where the peer takes them */
    bool release;              /* a PUT completes once its last piece is sent, where
                                  the link is the limit: its unacknowledged bytes
                                  are copied for resending */
    bool pace;                 /* spread what the grant allows over the round trip
                                  instead of sending it at once (esp_send.c) */
    bool fair;                 /* split the grant among senders by what each
                                  delivered lately, not equally (esp_recv.c) */
    uint32_t isn;              /* tests: first sequence number (0: random) */
    bool no_loss_reports;      /* tests: behave as a peer without ESP_O_LOSS */
} esp_proto_config_t;

/* Defaults as documented in docs/parameters.md. */
void esp_proto_config_default(esp_proto_config_t *cfg);

/* What a datagram may be gathered from: header + up to 3 payload pieces. */
#define ESP_TX_MAX_IOV (1 + ESP_MSG_MAX_IOV)

typedef struct esp_proto_ops {
    /* Send one datagram to the peer by one of its paths (0 .. the number
     * given to esp_proto_set_paths - 1). iov[0] is the header, up to 128
     * bytes (copy it); the other pieces stay valid until the segment is
     * acknowledged. */
    void (*transmit)(void *ctx, uint32_t peer, unsigned path, enum esp_channel ch,
                     const struct iovec *iov, int iovcnt);
    /* A fragment, in order; the bytes are valid during the call only. */
    void (*deliver)(void *ctx, uint32_t peer, uint8_t tag, const void *data, size_t len);
    /* Where len PUT bytes for key/addr go: the engine copies them there
     * (checking their CRC in the same pass) at once. Return NULL when
     * [addr, addr + len) is not inside a region registered under key for
     * remote writes (the bytes are dropped and counted). */
    void *(*put_target)(void *ctx, uint32_t peer, uint64_t key, uint64_t addr, size_t len);
    /* Every byte of msg was acknowledged. */
    void (*complete)(void *ctx, esp_msg_t *msg);
    /* A HELLO from a process the engine has no peer for: return 0 and the
     * peer number after esp_proto_add_peer, or -1 to refuse it. May be NULL. */
    int (*unknown_peer)(void *ctx, uint64_t id, uint32_t *peer);
    /* The peer stopped answering or cannot talk to us; why says so. */
    void (*peer_failed)(void *ctx, uint32_t peer, const char *why);
} esp_proto_ops_t;

typedef struct esp_proto_stats {
    uint64_t segs_tx, segs_rx, bytes_tx, bytes_rx;
    uint64_t acks_tx, acks_rx;         /* standalone ACK datagrams */
    uint64_t retransmits, fast_retransmits, timeouts;
    uint64_t spurious_retransmits;     /* the receiver had it already: a duplicate report */
    uint64_t probes;                   /* the oldest, sacked, segment sent again: an ACK was lost */
    uint64_t duplicates;               /* data already received */
    uint64_t out_of_window;            /* too far ahead of the receive window */
    uint64_t stray;                    /* unknown token, job or epoch */
    uint64_t corrupt;                  /* head or payload CRC mismatch, or no payload CRC
                                          where required */
    uint64_t malformed;                /* failed parsing or sanity checks */
    uint64_t put_rejected;             /* PUT outside any registered region */
    uint64_t held, hold_dropped;       /* out-of-order data kept / dropped for lack of room */
    uint64_t window_stalls;            /* sends that waited for the window */
    uint64_t grant_stalls;             /* ... for the receiver's grant (it drains slower) */
    uint64_t random_losses;            /* losses taken as random (short queue): no cut */
    uint64_t connects, peers_failed;
    uint64_t path_down, path_up;       /* paths declared dead, and taken back */
    uint64_t failover_resent;          /* segments a dead path had out, sent again on another */
    uint64_t loss_reports_tx;          /* ACKs with ESP_F_LOSS sent: the kernel dropped here */
    uint64_t loss_report_resends;      /* segments sent again at a peer's ESP_F_LOSS */
    uint64_t compact_tx;               /* data segments sent as compact pieces */
    uint64_t put_released;             /* PUTs completed when sent, their tail copied */
    uint64_t pace_waits;               /* sends that waited for their pace (cfg.pace) */
} esp_proto_stats_t;

/* Most paths to one peer. */
#define ESP_MAX_PATHS 4

/* One path's figures (esp_proto_path_info). */
typedef struct esp_path_info {
    bool up;
    bool standby;                      /* a fallback (esp_proto_set_paths) */
    unsigned via;                      /* the caller's name for it (esp_proto_set_paths) */
    uint64_t srtt_ns, min_rtt_ns;
    size_t cwnd, flight;               /* its congestion window, bytes out on it */
    uint64_t segs_tx, bytes_tx;        /* segments and bytes sent on it, resends included */
    uint64_t segs_rx, bytes_rx;        /* data from the peer accepted after coming by it */
    uint64_t downs, ups;               /* times it was declared dead, and came back */
} esp_path_info_t;

/* Per-peer figures for the finalize report. */
typedef struct esp_peer_info {
    bool connected;
    uint64_t srtt_ns, min_rtt_ns, rto_ns;
    uint32_t in_flight;                /* segments */
    size_t cwnd, ssthresh, peer_wnd;   /* bytes */
    size_t state_bytes;                /* memory the engine holds for the peer */
} esp_peer_info_t;

esp_proto_t *esp_proto_create(const esp_proto_config_t *cfg, const esp_proto_ops_t *ops,
                              void *ctx, uint64_t now);
void esp_proto_destroy(esp_proto_t *p);

/*
 * Make peer number `peer` known: its identity and epoch (from the modex)
 * and the largest datagram payload that reaches it. Costs a few hundred
 * bytes until traffic starts. Returns 0, or -1 when out of memory.
 */
int esp_proto_add_peer(esp_proto_t *p, uint32_t peer, uint64_t id, uint64_t epoch,
                       size_t max_datagram);

/*
 * The paths to a peer: n (1 .. ESP_MAX_PATHS) ways its datagrams can go,
 * each named by the caller's number via[i] (which of its interfaces;
 * esp_proto_input_via reports arrivals by it). Segments are spread over
 * the paths that are up in proportion to what each delivers; a path that
 * stops delivering while another delivers is declared dead, its segments
 * are sent again on the others, and it is probed until it answers. A
 * path with standby[i] set (standby NULL: none) is a fallback: it carries
 * data only while no other path is up, and a segment that timed out on the
 * last live one (which is how a dead path shows when nothing else carries
 * data). Before this is called a peer has one path, via 0. Returns 0, or
 * -1 when the peer is unknown or n is out of range.
 */
int esp_proto_set_paths(esp_proto_t *p, uint32_t peer, unsigned n, const unsigned *via,
                        const bool *standby);

/* The caller could not send by path `path` to peer at all (the route or
 * the interface is gone): when another path is live, the path is dead now
 * (its data goes by the others, it is probed until it answers). */
void esp_proto_path_unreachable(esp_proto_t *p, uint32_t peer, unsigned path, uint64_t now);

/* Checksum every payload byte to and from one peer, or only each
 * datagram's head (before any traffic to it; the handshake turns it on when
 * the peer asks for it). Returns 0, or -1 when the peer is unknown or
 * already connecting. */
int esp_proto_peer_checksum(esp_proto_t *p, uint32_t peer, bool on);

/* Queue msg (kind, tag, iov, put_* and user set) for peer; sending starts
 * at once when the window allows. Returns 0, or -1 when the peer is
 * unknown or has failed. */
int esp_proto_send(esp_proto_t *p, uint32_t peer, esp_msg_t *msg, uint64_t now);

/* Bytes queued for peer and not yet cut into segments: what a caller that
 * completes sends before they are acknowledged should bound. */
size_t esp_proto_backlog(const esp_proto_t *p, uint32_t peer);

/* True while no path to peer (or an unknown peer) is measured faster than
 * a copy costs: a round trip there costs more than copying what it
 * saves. */
bool esp_proto_link_bound(const esp_proto_t *p, uint32_t peer);

/* Send a small fragment whose bytes are copied now (the caller may reuse
 * them at once). Returns 0, or -1 when it cannot go now (too big, window
 * full, not connected yet, or out of memory): use esp_proto_send. */
int esp_proto_send_copy(esp_proto_t *p, uint32_t peer, uint8_t tag, const struct iovec *iov,
                        int iovcnt, uint64_t now);

/* Largest payload esp_proto_send_copy takes. */
size_t esp_proto_copy_limit(const esp_proto_t *p);

/* A datagram arrived (bytes valid during the call) by the caller's
 * interface via; esp_proto_input is via 0. */
void esp_proto_input_via(esp_proto_t *p, unsigned via, const void *buf, size_t len,
                         uint64_t now);
void esp_proto_input(esp_proto_t *p, const void *buf, size_t len, uint64_t now);

/* A batch of datagrams was handed to esp_proto_input: send the ACKs they
 * earned now, one per peer (esp_proto_tick does too). */
void esp_proto_flush_acks(esp_proto_t *p, uint64_t now);
/* How long the receiving thread typically waits for a CPU between its
 * turns (0 on a core of its own; milliseconds where ranks share cores):
 * its grant also covers that, so that its senders keep the link busy while
 * it is off the CPU. */
void esp_proto_set_cpu_wait(esp_proto_t *p, uint64_t ns);

/* The kernel dropped datagrams meant for us (a full socket buffer while the
 * process was away) and the caller has since read everything it kept:
 * tell every peer that can hear it (ESP_F_LOSS), so that what it sent and
 * we never got is sent again now, not after its retransmission timeout. */
void esp_proto_rx_overflow(esp_proto_t *p, uint64_t now);

/* Timers: retransmissions, delayed ACKs, handshake retries, peer timeouts.
 * Call often (every progress pass). */
void esp_proto_tick(esp_proto_t *p, uint64_t now);

/* True when nothing is waiting for an acknowledgement or for the window. */
bool esp_proto_idle(const esp_proto_t *p);

const esp_proto_stats_t *esp_proto_stats(const esp_proto_t *p);
void esp_proto_peer_info(const esp_proto_t *p, uint32_t peer, esp_peer_info_t *info);
/* Number of paths to peer (0 when unknown); path i's figures. */
unsigned esp_proto_path_info(const esp_proto_t *p, uint32_t peer, unsigned i,
                             esp_path_info_t *info);

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Internals of the ESP protocol engine, shared by esp_proto.c (connections,
 * handshake, input dispatch, timers), esp_send.c (send window, segments,
 * acknowledgement processing, retransmission) and esp_recv.c (receive
 * window, in-order delivery, reassembly, PUT, ACK policy).
 */
#ifndef ESP_PROTO_INT_H
#define ESP_PROTO_INT_H

#include "esp_hotel.h"
#include "esp_proto.h"

/* Largest fragment the engine reassembles from CHUNKs (and so the largest
 * SEND message): bigger ones are refused at send time. */
#define ESP_MAX_FRAG (16u << 20)
/* Bytes esp_proto_send_copy copies into a segment at most. */
#define ESP_COPY_LIMIT 2048u
/* An ACK selectively acknowledges the segments ack+1 .. ack+ESP_SACK_BITS. */
#define ESP_SACK_BITS 32

typedef struct esp_conn esp_conn_t;

/* Append m to the list head .. tail (the send queue, the completions). */
static inline void esp_msg_append(esp_msg_t **head, esp_msg_t **tail, esp_msg_t *m)
{
    m->next = NULL;
    if (*tail != NULL) {
        (*tail)->next = m;
    } else {
        *head = m;
    }
    *tail = m;
}

/* One datagram's worth of a message, from send until acknowledged. */
typedef struct esp_seg {
    esp_room_t room;               /* the hotel: retransmit timer */
    struct esp_seg *rs_prev, *rs_next; /* resend queue (both NULL when not on it) */
    struct esp_seg *free_next;
    esp_msg_t *msg;                /* NULL for a copied segment */
    esp_conn_t *conn;
    uint32_t seq;
    uint32_t off, len;             /* range of msg (or of data[]) */
    uint8_t type, tag, flags;      /* ESP_T_*, BTL tag, ESP_F_TXS/TXF */
    uint8_t resent;                /* why it was last sent again: ESP_RESENT_* */
    bool sacked;
    bool alone;                    /* sent with nothing else in flight: its round trip
                                      is the path's least, not one behind a queue */
    uint8_t path;                  /* of its latest transmission; ESP_NO_PATH: not out on any */
    uint16_t xmits;
    uint64_t sent_ns;              /* the latest transmission */
    uint64_t first_sent_ns;        /* the first */
    union {
        esp_chunk_ext_t chunk;
        esp_put_ext_t put;
    } ext;                         /* a compact piece: its offset in ext.chunk.offset */
    bool copied;                   /* data[] holds the payload */
    uint8_t data[];                /* copied segments only */
} esp_seg_t;

enum {
    ESP_RESENT_NO = 0, ESP_RESENT_ORDER, ESP_RESENT_TIMEOUT, ESP_RESENT_PROBE, ESP_RESENT_FAILOVER,
    ESP_RESENT_REPORT,             /* the receiver reported its kernel dropped datagrams */
};

/* A resend, remembered until its duplicate report may come back. */
#define ESP_RESENT_LOG 64
typedef struct esp_resent {
    uint64_t at_ns;                /* when it was sent again */
    uint32_t seq;
    uint8_t why, path;
} esp_resent_t;

/* Out-of-order data kept until the gap before it fills. */
typedef struct esp_held {
    uint8_t type, tag;
    uint32_t len;
    esp_chunk_ext_t chunk;         /* a CCHUNK or CPUT: its offset only */
    uint32_t seq;                  /* a CPUT waiting for its slot */
    struct esp_held *next;         /* ... in the slot's list */
    uint8_t data[];
} esp_held_t;

/* Receive ring entry flags. */
#define ESP_R_HAVE 0x01  /* received (held, or a PUT already written) */
#define ESP_R_TXS 0x02
#define ESP_R_TXF 0x04

typedef struct esp_rslot {
    esp_held_t *held;
    uint8_t flags;
} esp_rslot_t;

/* A PUT slot as the receiver knows it: where the CPUTs naming it go. */
typedef struct esp_put_slot {
    bool defined;
    uint8_t gen;                   /* ESP_SLOT_GEN of its latest definition */
    uint32_t seq;                  /* of the PUT piece that defined it */
    uint64_t key, base;            /* the registration, the address of offset 0 */
    esp_held_t *waiting;           /* CPUTs of the next generation, come before it */
} esp_put_slot_t;

enum esp_conn_state { ESP_CLOSED = 0, ESP_HELLO_SENT, ESP_ESTABLISHED, ESP_FAILED };

#define ESP_NO_PATH 0xff

/*
 * One way to the peer (esp_proto_set_paths): its own congestion window,
 * round trip, loss by order (RACK) and liveness. The connection's sequence
 * space, receive window and retransmit timer span all of them.
 */
typedef struct esp_path {
    bool up;
    bool standby;                  /* a fallback: used only when no other path is up */
    unsigned via;                  /* the caller's name for it */
    size_t flight;                 /* bytes sent on it, not acknowledged or sacked */
    size_t cwnd, ssthresh;
    uint32_t recover;              /* no new loss event before una passes this */
    bool in_recovery;
    /* undoing a window cut that spurious retransmissions caused */
    size_t undo_cwnd, undo_ssthresh;
    uint32_t undo_una;             /* una at the cut */
    uint32_t undo_retrans;         /* retransmissions since, not yet reported duplicate */
    bool undo_valid;
    uint64_t srtt_ns, min_rtt_ns, last_rtt_ns;
    /* loss by order and time, per channel: the newest segment sent on this
     * path known delivered, by send time, and its round trip */
    uint64_t rack_sent_ns[2];
    uint32_t rack_seq[2];
    uint64_t rack_rtt_ns;
    /* liveness: the first send by it since the peer last answered by it
     * (0: none); when a datagram from the peer last came by it, and an
     * answer (esp_path_heard); when we last sent an ACK by it */
    uint64_t owe_since_ns, heard_ns, answered_ns, acked_ns;
    uint64_t dlv_ns;               /* a segment sent by it was last reported received */
    /* what it delivers: bytes/s, and the interval being measured */
    uint64_t rate_bps, rate_bytes, rate_from_ns;
    bool rate_idle;                /* it ran dry during the interval */
    bool rate_full;                /* its window was full during the interval */
    uint64_t probe_next_ns;        /* down: when to probe it next */
    bool probed;                   /* down: a probe went out since */
    uint64_t segs_tx, bytes_tx, downs, ups;
    uint64_t segs_rx, bytes_rx;    /* data from the peer accepted after coming by it */
} esp_path_t;

struct esp_conn {
    esp_proto_t *p;
    uint32_t peer;
    enum esp_conn_state state;
    uint64_t peer_id, peer_epoch;
    uint64_t local_token, peer_token;
    size_t max_payload;            /* largest datagram payload toward the peer */
    bool crc;                      /* checksum what we send, require it on what we get */
    bool peer_crc;                 /* the peer checksums what it sends */
    bool peer_loss;                /* the peer offered ESP_O_LOSS: it understands ESP_F_LOSS */
    bool compact;                  /* we send compact pieces: the peer offered ESP_O_COMPACT */

    /* handshake */
    uint64_t hello_next_ns, hello_since_ns;
    uint64_t hello_sent_ns;        /* our latest HELLO or HELLO_ACK went then */
    unsigned hello_tries;
    esp_conn_t *hs_next;           /* proto's list of connecting peers */
    bool on_hs_list;

    /* --- sending */
    esp_msg_t *sendq_head, *sendq_tail;  /* messages with bytes not yet cut */
    size_t sendq_bytes;            /* ... those bytes */
    uint32_t snd_isn;              /* our first sequence number (told in the HELLO) */
    uint32_t snd_una, snd_nxt;     /* oldest unacknowledged, next to assign */
    esp_seg_t **sring;             /* in-flight segments by seq & (scap - 1) */
    uint32_t scap;
    size_t flight;                 /* bytes sent, not acknowledged or sacked (all paths) */
    size_t peer_wnd;               /* bytes the receiver granted */
    esp_path_t *path;              /* npaths of them: &path0, or an array of its own */
    esp_path_t path0;
    unsigned npaths;
    unsigned rx_path;              /* the latest datagram from the peer came by it: ACKs go back so */
    unsigned hello_path;           /* the handshake's next try goes by it */
    bool bursting;                 /* sent TXS, TXF not yet */
    bool txs_acked;                /* the first ACK of this burst arrived */
    uint32_t txs_seq;
    uint32_t next_frag_id;
    uint32_t put_slots_busy;       /* bit s: slot s is a PUT's until it completes */
    uint32_t put_slots_gen;        /* bit s: the generation slot s had last */
    uint64_t srtt_ns, rttvar_ns, rto_ns, min_rtt_ns;
    uint64_t last_progress_ns;     /* last time una advanced, or the flight began */
    uint64_t rtt_peak_ns[2];       /* the largest round trip of this and the last period */
    uint64_t rtt_peak_at_ns;       /* ... the current one began then */
    uint64_t rto_raised_ns;        /* a spurious timeout last raised the peak then */
    unsigned reo_shift;            /* reordering allowance: min_rtt / 4 << reo_shift */
    uint32_t sack_high;            /* after the highest segment sacked (SACK bits or blocks) */
    /* The latest ACK's blocks stopped at their limit: what lies between the
     * SACK bits and its oldest block went unreported, neither received nor
     * missing (sack_unsure_to, after the bits' reach, when there is none). */
    uint32_t sack_unsure_to;
    struct esp_resent *resent_log; /* the latest ESP_RESENT_LOG resends (NULL before any) */
    uint32_t resent_next;
    bool tlp_out;                  /* a tail probe is out, no new data acknowledged since */
    uint32_t newest_tx;            /* seq of the latest transmission, new or again */
    bool window_stalled, grant_stalled;
    /* pacing (cfg.pace): bytes it may send now (negative: owed), as of
     * pace_ns; on the proto's list while new data waits for them */
    int64_t pace_tokens;
    uint64_t pace_ns;
    esp_conn_t *pace_next;
    bool on_pace_list;

    /* --- receiving */
    uint32_t rcv_nxt;              /* next in-order sequence number */
    esp_rslot_t *rring;            /* by seq & (rcap - 1) */
    uint32_t rcap;
    size_t held_bytes;
    uint32_t rx_ahead;             /* slots received beyond rcv_nxt */
    uint32_t rx_high;              /* after the highest sequence number received */
    bool rx_active;                /* the peer is in a burst (TXS seen, no TXF) */
    /* its fair share (cfg.fair): bytes it delivered this epoch, what it
     * fell short of the equal share (decayed; negative: ahead), and its
     * weight in the grant's split, ESP_FAIR_ONE + fair_adjust */
    uint64_t fair_bytes;
    int64_t fair_credit;
    int32_t fair_adjust;
    /* reassembly of the fragment being received in CHUNKs */
    uint8_t *asm_buf;
    size_t asm_cap, asm_len, asm_filled;
    uint32_t asm_frag_id;
    uint8_t asm_tag;
    esp_put_slot_t *put_slots;     /* [ESP_PUT_SLOTS + 1], from the first slot defined */
    /* acknowledgement owed to the peer */
    uint32_t unacked;              /* segments received since our last ACK */
    uint32_t ack_sent;             /* the ack value we last sent */
    uint64_t ack_due_ns;
    bool ack_pending;
    bool loss_owed;                /* our next standalone ACK carries ESP_F_LOSS */
    esp_conn_t *ack_next;          /* proto's list of peers owed a delayed ACK */
    bool on_ack_list;
};

struct esp_proto {
    esp_proto_config_t cfg;
    esp_proto_ops_t ops;
    void *ctx;
    uint64_t rng;
    esp_conn_t **conns;            /* by peer number */
    uint32_t nconns;
    esp_hotel_t hotel;
    esp_seg_t *resend_head, *resend_tail;
    esp_seg_t *free_segs, *free_copy_segs;
    esp_conn_t *ack_list;          /* peers owed a delayed ACK */
    esp_conn_t *hs_list;           /* peers in the handshake */
    esp_conn_t *pace_list;         /* peers whose new data waits for its pace */
    esp_msg_t *done_head, *done_tail; /* completions to report after an input */
    unsigned active_senders;       /* peers in a burst toward us */
    bool multipath;                /* some peer has several paths */
    uint64_t paths_next_ns;        /* ... whose liveness is looked at then */
    unsigned rx_via;               /* the interface the datagram being handled came by */
    /* what this side drains: bytes accepted in the current interval, and
     * the average rate (bytes/s) of the intervals before */
    uint64_t drain_bytes, drain_from_ns;
    uint64_t drain_rate;
    uint64_t cpu_wait_ns;          /* esp_proto_set_cpu_wait */
    uint64_t fair_from_ns;         /* the fair shares' epoch began then */
    unsigned depth;                /* nesting of input/tick (completions run at 0) */
    uint64_t now;                  /* latest time any entry point was given */
    esp_proto_stats_t stats;
};

/* esp_proto.c */
/* The engine's clock never goes back, whatever order callers read theirs
 * (a send inside a delivery may carry a newer time than the pass around it). */
static inline uint64_t esp_clock(esp_proto_t *p, uint64_t now)
{
    if (now > p->now) {
        p->now = now;
    }
    return p->now;
}
uint64_t esp_rand(esp_proto_t *p);
esp_conn_t *esp_conn_get(esp_proto_t *p, uint32_t peer);
void esp_conn_fail(esp_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void esp_flush_completions(esp_proto_t *p);

/* esp_send.c */
void esp_send_init(esp_conn_t *c);
void esp_send_init_paths(esp_conn_t *c);
void esp_send_fini(esp_conn_t *c);
void esp_push(esp_conn_t *c, uint64_t now);
/* No path to c is measured as faster than the CPU's copies (esp_send.c). */
bool esp_link_bound(const esp_conn_t *c);
/* Push the peers whose new data waited for its pace (cfg.pace). */
void esp_pace_timers(esp_proto_t *p, uint64_t now);
void esp_on_ack(esp_conn_t *c, const esp_parsed_t *d, uint64_t now);
void esp_on_timeout(esp_proto_t *p, esp_seg_t *s, uint64_t now);
void esp_resend_pass(esp_proto_t *p, uint64_t now);
void esp_seg_free(esp_proto_t *p, esp_seg_t *s);
void esp_transmit(esp_conn_t *c, unsigned path, esp_hdr_t *h, const void *ext,
                  const struct iovec *payload, int n, enum esp_channel ch);
void esp_paths_tick(esp_conn_t *c, uint64_t now);
void esp_path_refused(esp_conn_t *c, unsigned path, uint64_t now);
void esp_path_heard(esp_conn_t *c, unsigned path, bool answer, uint64_t now);

/* esp_recv.c */
void esp_recv_init(esp_conn_t *c);
void esp_recv_fini(esp_conn_t *c);
void esp_recv_data(esp_conn_t *c, const esp_parsed_t *d, uint64_t now);
void esp_fill_ack(esp_conn_t *c, esp_hdr_t *h);
void esp_send_ack(esp_conn_t *c);
void esp_recv_report_loss(esp_conn_t *c, uint64_t now);
void esp_send_dup(esp_conn_t *c, uint32_t seq);
void esp_ack_timers(esp_proto_t *p, uint64_t now);

#endif

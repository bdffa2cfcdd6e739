/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The sctp transport under the BTL, without Open MPI (unit-tested alone).
 * Organised by role, calls flowing one way (docs/architecture.md):
 *
 *   stack  btl_sctp_stack.[ch]   what the module drives: open, progress, close
 *   assoc  btl_sctp_assoc.[ch]   per peer: identification, messages out and in
 *   style  btl_sctp_style.h      the socket style, a table (one per file):
 *            btl_sctp_one2many.c   one socket for every association
 *            btl_sctp_one2one.c    a socket per association
 *   mode   btl_sctp_mode.h       how usrsctp runs, a table (one per file):
 *            btl_sctp_conn.c       no threads, AF_CONN over our UDP sockets
 *            btl_sctp_inet.c       its threads, UDP encapsulation on AF_INET
 *   core   btl_sctp_core.[ch]    this: the types every layer shares, the
 *                                links, socket options, packet sizing
 *
 * A layer calls the one below through the tables in the stack (st->style,
 * st->mode); nothing calls up by name. What a style reads goes up through
 * the hooks the association layer sets (bsctp_rx_hooks_t), and what the
 * transport delivers to the module through bsctp_stack_ops_t.
 *
 * A peer is a "link": its index names it everywhere. In conn mode the
 * AF_CONN address usrsctp knows it by encodes that index (and the stack
 * instance, so that a test can run two stacks in one process); in inet
 * mode it is the peer's IP address and SCTP port.
 */
#ifndef BTL_SCTP_CORE_H
#define BTL_SCTP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <usrsctp.h>

#include "ebtl_dgram.h"
#include "ebtl_ifsel.h"
#include "btl_sctp_paths.h"
#include "btl_sctp_rescue.h"
#include "btl_sctp_segs.h"
#include "btl_sctp_seq.h"
#include "btl_sctp_streams.h"

struct bsctp_mode;          /* btl_sctp_mode.h */
struct bsctp_style;         /* btl_sctp_style.h */
struct bsctp_style_state;   /* a style's own state (btl_sctp_one2one.c) */
struct bsctp_o2o_sock;      /* one-to-one: the socket of a link's association */
struct bsctp_conn_tx;       /* conn mode: the packets waiting for the end of a call */

/* What the layer above (the BTL, or a test) is told. */
typedef struct bsctp_stack_ops {
    /* A whole message from an identified peer; data is valid during the call. */
    void (*deliver)(void *ctx, void *peer_user, uint8_t tag, const void *data, size_t len);
    /* The association to a peer in use is gone (lost, aborted, restarted);
     * never_up: none could be made at all. */
    void (*peer_failed)(void *ctx, void *peer_user, uint32_t link, const char *why,
                        bool never_up);
    /* A link nobody added (a UDP source we did not know) identified itself
     * as jobid/vpid of our job family: return 0 and *peer_user to accept it. */
    int (*identify)(void *ctx, uint32_t link, const ebtl_sockaddr_t *from, uint32_t jobid,
                    uint32_t vpid, void **peer_user);
} bsctp_stack_ops_t;

/* The largest packet with a SACK a link keeps for the stall watch's kick. */
#define BSCTP_LAST_SACK_MAX 256

/* cfg.packet: BSCTP_SEG_PACKET_MAX where a frame carries at most a quarter of
 * it, else a frame's (btl_sctp_conn.c says why). */
#define BSCTP_PACKET_AUTO UINT32_MAX

typedef struct bsctp_stack_config {
    const struct bsctp_mode *mode;    /* bsctp_mode_conn or bsctp_mode_inet */
    const struct bsctp_style *style;  /* bsctp_style_one_to_many or bsctp_style_one_to_one */
    const ebtl_if_t *ifaces;     /* the local addresses */
    size_t num_ifaces;
    uint16_t sctp_port;          /* our SCTP port (conn mode; inet mode chooses its own) */
    size_t udp_rcvbuf, udp_sndbuf;
    size_t so_rcvbuf, so_sndbuf; /* the SCTP socket's buffers */
    size_t max_msg;              /* largest message we accept (header included) */
    uint32_t pmtu;               /* 0: the largest the addresses carry */
    uint32_t rto_min_ms, rto_max_ms, rto_init_ms;
    uint32_t peer_timeout_ms;    /* retransmissions to a silent peer before it is lost */
    uint16_t streams;
    uint32_t sack_delay_ms;
    uint32_t tail_probe_ms;      /* conn mode: a quiet link's unreported packets sent again
                                    after this long (btl_sctp_rescue.h); 0: off */
    uint32_t sack_freq;          /* packets that make a SACK go at once (1: every packet) */
    bool sack_immediately;       /* one-packet messages ask for an immediate SACK */
    uint32_t jobid, vpid;        /* who we are, for the identification message */
    uint64_t job_key;
    bool crc32c;                 /* SCTP's CRC32c on every packet (conn mode: computed and
                                    checked here; usrsctp's software one is always off) */
    bool stream_map;             /* spread ob1's fragments over streams (btl_sctp_streams.h) */
    uint32_t heartbeat_ms;       /* heartbeat interval; 0: off (and where the mode's stack
                                    cannot answer them while the process computes) */
    uint16_t path_max_retrans;   /* timeouts on one path before it fails; 0: the
                                    association's limit (a mode with one path) */
    bool cmt;                    /* inet: SCTP's concurrent multipath transfer */
    uint32_t max_burst;          /* packets one output pass may send (and, as usrsctp
                                    does it, what an idle association's window shrinks to
                                    above the data in flight); 0: the window alone */
    bool gso;                    /* conn mode: the packets of one call into usrsctp leave
                                    together, equal-sized runs as one UDP GSO send */
    bool gro;                    /* conn mode: read with UDP GRO (several packets a read) */
    bool trace_paths;            /* conn mode: print each path going down or up, and why */
    uint32_t packet;             /* conn mode: largest SCTP packet (0: a frame's; larger ones
                                    go in segments, btl_sctp_segs.h; BSCTP_PACKET_AUTO) */
    uint64_t test_drop_msg;      /* TESTING ONLY: the receiver drops the n-th fragment it
                                    reads (1: the first), as if usrsctp had lost it; 0: off */
    uint64_t test_drop_data;     /* TESTING ONLY, conn mode: the n-th packet of DATA usrsctp
                                    sends is lost (1: the first); 0: off */
    bool test_no_timers;         /* TESTING ONLY, conn mode: this stack's polls leave
                                    usrsctp's timers where they are (a lost timer) */
} bsctp_stack_config_t;

typedef struct bsctp_stack_stats {
    uint64_t tx_msgs, tx_bytes, tx_busy;        /* busy: send buffer full, retried later */
    uint64_t tx_split;                          /* messages usrsctp took only the start of:
                                                   the BTL kept their end (rest) */
    uint64_t rx_msgs, rx_bytes, rx_partial;     /* partial: pieces before MSG_EOR */
    uint64_t rx_unknown_src;                    /* datagrams from strangers over the limit */
    uint64_t rx_bad;                            /* malformed messages: dropped */
    uint64_t rx_badsum;                         /* packets failing the CRC32c: dropped */
    uint64_t rx_unidentified;                   /* data before identification */
    uint64_t assoc_rejected;                    /* aborted: another job or unknown peer */
    uint64_t assoc_up, assoc_lost;
    uint64_t assoc_unknown;                     /* changes of an association no link names */
    uint64_t out_errors;                        /* datagrams the kernel refused */
    uint64_t path_downs, path_ups;              /* a peer's paths declared down, back up */
    uint64_t probes_tx, probes_rx;              /* path probes sent, and answered */
    uint64_t seg_tx, seg_rx;                    /* packets sent in segments, put back together */
    uint64_t seg_shrinks;                       /* links back to packets of a frame (losses) */
    uint64_t sacks_withheld;                    /* SACKs that would keep usrsctp in fast
                                                   recovery (btl_sctp_paths.h) */
    uint64_t rx_held, rx_hold_expired;          /* DATA held for the packets before it; holds
                                                   that ended by time (a loss) */
    uint64_t stall_kicks;                       /* stalls the mode was asked to end (the
                                                   stall watch, btl_sctp_stack.c) */
    uint64_t rescues, rescued_pkts;             /* kicks that sent kept copies (mode conn:
                                                   btl_sctp_rescue.h), and the packets sent */
    uint64_t tail_probes, tail_probe_pkts;      /* tail probes (the same copies, early) and
                                                   the packets they sent */
    uint64_t rx_lost;                           /* peers failed over a lost message: a number
                                                   out of order, or an audit's claim missing */
    uint64_t audits_tx, audits_rx;              /* idle audits sent and read (btl_sctp_seq.h) */
    uint64_t audit_shorts;                      /* audits that found a stream short (noted;
                                                   lost if still short at the next) */
    uint64_t audit_pokes;                       /* receive-queue pokes after a short audit
                                                   that usrsctp answered (its notification read) */
    uint64_t resend_asks;                       /* RESENDs sent: streams asked for again */
    uint64_t resent_tx, resent_rx;              /* kept fragments sent again; such read */
    uint64_t rx_dups;                           /* fragments read twice (asked again), dropped */
    uint64_t test_dropped;                      /* fragments dropped by cfg.test_drop_msg,
                                                   packets by cfg.test_drop_data */
} bsctp_stack_stats_t;

/* One message being put together from the pieces usrsctp reads out. */
typedef struct bsctp_reasm {
    uint8_t *buf;
    size_t len, cap;
} bsctp_reasm_t;

/* One peer as usrsctp reaches it. */
typedef struct bsctp_link {
    ebtl_sockaddr_t udp;          /* its UDP address and port (paths[0]'s) */
    /* Mode conn: every pair (our socket, its address) that reaches it; the
     * mode picks one per packet (btl_sctp_paths.h). paths[0] is the first
     * known, with udp. */
    bsctp_path_t paths[BSCTP_MAX_PATHS];
    uint8_t num_paths;
    /* Several paths: the next TSN of the peer's DATA usrsctp expects, and
     * how many packets that ran ahead of it wait (btl_sctp_conn.c). */
    bool rx_sync;
    uint32_t rx_next;
    uint16_t rx_held;
    bsctp_recovery_t recovery;    /* usrsctp's fast recovery toward it, mirrored */
    /* Packets larger than a frame (cfg.packet): its retransmissions, and
     * whether it went back to packets of a frame (btl_sctp_segs.h). */
    bsctp_seg_loss_t seg_loss;
    bool lossy;                   /* decided: packets of a frame from now on */
    bool shrunk;                  /* done: usrsctp's path MTU lowered */
    uint16_t sctp_port;
    bool in_use;
    bool stranger;                /* created by its datagrams, not by us: not yet identified */
    uint32_t jobid, vpid;         /* who it must be (known links) */
    void *user;                   /* the layer above's endpoint */
    /* association state (btl_sctp_assoc.c) */
    uint32_t assoc_id;            /* 0: none seen yet */
    uint32_t aborted_id;          /* the association we aborted: its queued rest is dropped */
    bool ident_tx, ident_rx;      /* identification sent / received on it */
    bool failed;                  /* lost: no more sends */
    /* Pieces of messages before MSG_EOR, per inbound stream: usrsctp
     * interleaves the pieces of messages on different streams of one
     * association. reasm_streams (cfg.streams) entries, allocated on the
     * first piece. */
    struct bsctp_reasm *reasm;
    uint16_t reasm_streams;
    /* streams (btl_sctp_assoc.c, btl_sctp_streams.h) */
    uint16_t out_streams;         /* negotiated outbound streams; 0: not known yet (stream 0) */
    uint8_t *ident_sids;          /* bitmap: identification sent on stream i (i > 0) */
    bsctp_seq_t seq;              /* fragments' numbers per stream, both ways; the idle
                                     audit (btl_sctp_seq.h) */
    /* style one-to-one (btl_sctp_one2one.c) */
    struct bsctp_o2o_sock *o2o;   /* the socket of the association in use; NULL: none yet */
    bool o2o_await;               /* the peer closed ours for its own: wait for it */
    /* The end of a message usrsctp took only the start of (explicit EOR
     * lets it take any part that fits): it goes before anything else on
     * the link, on the same stream (btl_sctp_assoc.c). NULL: none. */
    uint8_t *rest;
    size_t rest_len, rest_off;
    uint16_t rest_sid;
    /* the stall watch (btl_sctp_stack.c): what usrsctp held unacknowledged
     * and queued when last looked at, and since when. */
    uint32_t watch_unacked, watch_queued;
    uint64_t watch_since_ns;
    bool watch_kicked;            /* the mode's kick was tried in this stall */
    /* mode conn: the last small packet with a SACK from it, for the kick;
     * copies of the DATA packets sent since it lost one, for the rescue */
    uint8_t last_sack[BSCTP_LAST_SACK_MAX];
    uint16_t last_sack_len;
    bsctp_rescue_t rescue;
} bsctp_link_t;

struct bsctp_stack;

/* What the association layer does with what a style reads off its
 * sockets (set at open; the fuzz target calls the same functions). */
typedef struct bsctp_rx_hooks {
    /* A message, or a piece of one (MSG_EOR in flags ends it), for a link
     * on an association and stream sid. Bytes are untrusted. */
    void (*message)(struct bsctp_stack *st, uint32_t link, uint32_t assoc_id, uint16_t sid,
                    int flags, const uint8_t *buf, size_t n);
    /* A notification (an association change names the association). */
    void (*notification)(struct bsctp_stack *st, int flags, const uint8_t *buf, size_t n);
    /* The link now uses another association (assoc_id): its
     * identification, reassembly and streams start over. */
    void (*new_association)(struct bsctp_stack *st, uint32_t link, uint32_t assoc_id);
    /* Send our identification on the link's association unless already
     * sent: 0, or -errno (-EAGAIN: try again later). */
    int (*identify)(struct bsctp_stack *st, uint32_t link);
} bsctp_rx_hooks_t;

typedef struct bsctp_stack {
    bsctp_stack_config_t cfg;
    const struct bsctp_mode *mode;     /* cfg.mode */
    const struct bsctp_style *style;   /* cfg.style */
    bsctp_stack_ops_t ops;
    void *ctx;
    bsctp_rx_hooks_t rx;
    struct socket *so;            /* the one-to-many socket (one-to-one: the listener) */
    int so_type;                  /* its type (the style's) */
    bool explicit_eor;            /* messages may go in pieces (the mode's takes_pieces) */
    struct bsctp_style_state *style_state;
    bsctp_link_t *links;
    uint32_t num_links, cap_links;
    uint32_t last_rx_link;        /* cache: messages come in runs from one peer */
    uint32_t strangers;
    uint8_t *rxbuf;               /* usrsctp_recvv target */
    size_t rxbuf_size;
    bool draining;                /* no nested receive loop from a delivery */
    bool so_readable;             /* one-to-many without usrsctp's threads: st->so has
                                     something to read (its upcall; btl_sctp_one2many.c) */
    uint64_t so_read_ns;          /* ... and when it was last read */
    bool closing;
    size_t sndbuf_limit;          /* the SCTP socket's send buffer as usrsctp took it */
    uint32_t rests;               /* links holding a message's end (bsctp_link_t.rest) */
    /* mode conn (btl_sctp_conn.c) */
    int instance;                 /* slot in the process's table of stacks; -1: none */
    ebtl_dgram_sock_t *socks;     /* one UDP socket per local address */
    size_t num_socks;
    struct bsctp_conn_tx *conn_tx;  /* packets queued until the mode's flush; NULL: sent at once */
    bsctp_nic_load_t *nic_load;   /* per socket: its queue and drain rate (several paths) */
    bool multipath;               /* some link has several paths */
    uint64_t paths_tick_ns;       /* the last look at the paths' timers */
    uint64_t input_datagrams;     /* datagrams handed to usrsctp so far */
    uint64_t polled_ns;           /* the clock at the last poll (bsctp_stack_poll) */
    uint64_t tail_check_ns;       /* conn mode: when the links were last looked at for
                                     tail probes */
    struct bsctp_seg_table *segs; /* packets being put together (cfg.packet); NULL: none yet */
    uint16_t seg_id;              /* the id of the next packet sent in segments */
    uint32_t frame_pmtu;          /* cfg.packet larger: a frame's path MTU (lossy links'); 0 */
    bool shrink_due;              /* a link turned lossy and its path MTU is not lowered yet */
    /* mode inet (btl_sctp_inet.c) */
    int inet_family;              /* the sockets' family (AF_INET6 with any IPv6 address) */
    /* the stall watch (btl_sctp_stack.c) */
    uint64_t watch_ns;            /* the last look */
    uint64_t watch_t3;            /* usrsctp's T3 expiries and retransmissions then */
    uint64_t audit_ns;            /* the idle audit's last tick (btl_sctp_seq.h) */
    uint64_t test_frags;          /* fragments read, for cfg.test_drop_msg */
    uint64_t test_data_pkts;      /* packets of DATA sent, for cfg.test_drop_data */
    bsctp_stack_stats_t stats;
    bsctp_streams_stats_t stream_stats;  /* btl_sctp_assoc.c: per stream, what was chosen */
} bsctp_stack_t;

/* ---- links ---- */

/* The link for a peer's UDP address, created when new (stranger: created
 * by its own datagrams or association, not added by the layer above).
 * Returns the index or -1 (out of memory). */
int bsctp_core_link(bsctp_stack_t *st, const ebtl_sockaddr_t *udp, size_t nic, uint16_t sctp_port,
                    bool stranger);
/* The layer above knows the link's peer, whose SCTP port (its listener's)
 * is sctp_port: a stranger link took the source port of the peer's first
 * INIT, which in style one-to-one is its connecting socket's (any), where
 * nothing listens; connects go to the published one from now on. */
void bsctp_core_link_known(bsctp_stack_t *st, uint32_t link, uint16_t sctp_port);
/* Add a path (our socket nic, the peer's address udp) to a link unless it
 * has it or is full: 0, or -1. */
int bsctp_core_add_path(bsctp_stack_t *st, uint32_t link, size_t nic, const ebtl_sockaddr_t *udp);
/* The link and path (*path) a datagram from udp on our socket nic came by,
 * or -1. */
int bsctp_core_link_of_source(bsctp_stack_t *st, size_t nic, const ebtl_sockaddr_t *udp,
                              int *path);
/* Free the table of links (each link's own state freed before). */
void bsctp_core_links_free(bsctp_stack_t *st);

/* ---- sockets ---- */

/* Set the socket options of the configuration on a usrsctp socket; 0, or
 * -1 with one message in err. */
int bsctp_core_set_options(bsctp_stack_t *st, struct socket *so, char *err, size_t errlen);

/* usrsctp's process-wide settings that every mode needs, once after
 * usrsctp_init or usrsctp_init_nothreads. */
void bsctp_core_sysctls(void);
/* A non-blocking usrsctp socket of family and the stack's type with the
 * options, or NULL with one message in err (errno kept). */
struct socket *bsctp_core_socket(bsctp_stack_t *st, int family, char *err, size_t errlen);
/* What one read off a socket returned besides the bytes. */
typedef struct bsctp_read {
    struct sockaddr_storage from;   /* the peer's address */
    socklen_t fromlen;
    struct sctp_rcvinfo rcv;        /* stream and association, when has_info */
    bool has_info;
    int flags;                      /* MSG_EOR, MSG_NOTIFICATION */
} bsctp_read_t;
/* One usrsctp_recvv off so into st->rxbuf (a message, a piece of one or a
 * notification): its length, or -1 when nothing waits (errno says why). */
long bsctp_core_recv(bsctp_stack_t *st, struct socket *so, bsctp_read_t *r);
/* The receive buffer: 0, or -1 with a message in err. */
int bsctp_core_alloc_rxbuf(bsctp_stack_t *st, char *err, size_t errlen);
void bsctp_core_free_rxbuf(bsctp_stack_t *st);

/* ---- packet sizing ---- */

/* Lower cfg.pmtu to limit (a 0 cfg.pmtu takes it), a multiple of 4. */
void bsctp_core_clamp_pmtu(bsctp_stack_t *st, uint32_t limit);
/* The largest message of at most len bytes that fills whole packets at the
 * path MTU (len itself when it fits one packet or no smaller size fills
 * whole ones). */
size_t bsctp_core_whole_packets(const bsctp_stack_t *st, size_t len);

#endif

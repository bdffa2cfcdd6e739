/*
 * The sctp transport under the BTL, without Open MPI (unit-tested alone):
 *   stack  (btl_sctp_stack.c)  usrsctp set up in conn mode (no threads,
 *          AF_CONN), the UDP sockets below it (common/ebtl_dgram), the one
 *          one-to-many SCTP socket and its options, input, timers.
 *   assoc  (btl_sctp_assoc.c)  per peer: the association, identification,
 *          sending one message per fragment, receiving and reassembling
 *          until MSG_EOR, notifications, abort.
 *   inet   (btl_sctp_inet.c)  usrsctp in inet mode instead: its own threads
 *          over UDP encapsulation on AF_INET/AF_INET6 (docs/sctp-inet.md).
 * A peer is a "link": its index names it everywhere. In conn mode the
 * AF_CONN address usrsctp knows it by encodes that index (and the stack
 * instance, so that a test can run two stacks in one process); in inet
 * mode it is the peer's IP address and SCTP port. assoc.c sees only the
 * addressing functions below, which each mode implements.
 */
#ifndef BTL_SCTP_STACK_H
#define BTL_SCTP_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ebtl_dgram.h"
#include "ebtl_ifsel.h"
#include "btl_sctp_streams.h"

struct socket;   /* usrsctp */
struct bsctp_o2o;        /* btl_sctp_one2one.h: one-to-one style's sockets */
struct bsctp_o2o_sock;
struct sctp_sndinfo;

/* What the layer above (the BTL, or a test) is told. */
typedef struct bsctp_stack_ops {
    /* A whole message from an identified peer; data is valid during the call. */
    void (*deliver)(void *ctx, void *peer_user, uint8_t tag, const void *data, size_t len);
    /* The association to a peer in use is gone (lost, aborted, restarted). */
    void (*peer_failed)(void *ctx, void *peer_user, uint32_t link, const char *why);
    /* A link nobody added (a UDP source we did not know) identified itself
     * as jobid/vpid of our job family: return 0 and *peer_user to accept it. */
    int (*identify)(void *ctx, uint32_t link, const ebtl_sockaddr_t *from, uint32_t jobid,
                    uint32_t vpid, void **peer_user);
} bsctp_stack_ops_t;

typedef struct bsctp_stack_config {
    const ebtl_if_t *ifaces;      /* one UDP socket per address */
    size_t num_ifaces;
    uint16_t sctp_port;          /* our SCTP port (AF_CONN ports are per stack) */
    size_t udp_rcvbuf, udp_sndbuf;
    size_t so_rcvbuf, so_sndbuf; /* the SCTP socket's buffers */
    size_t max_msg;              /* largest message we accept (header included) */
    uint32_t pmtu;               /* 0: the largest UDP payload of the interface */
    uint32_t rto_min_ms, rto_max_ms, rto_init_ms;
    uint32_t peer_timeout_ms;    /* retransmissions to a silent peer before it is lost */
    uint16_t streams;
    uint32_t sack_delay_ms;
    bool sack_immediately;       /* one-packet messages ask for an immediate SACK */
    uint32_t jobid, vpid;        /* who we are, for the identification message */
    uint64_t job_key;
    bool crc32c;                 /* SCTP's CRC32c on every packet, computed and checked
                                    here (usrsctp's software one is always off) */
    bool stream_map;             /* spread ob1's fragments over streams (btl_sctp_streams.h) */
    bool inet;                   /* inet mode (btl_sctp_inet.c): threaded usrsctp over UDP
                                    encapsulation; sctp_port is then chosen by the stack */
    uint32_t heartbeat_ms;       /* heartbeat interval; 0: heartbeats off */
    bool one_to_one;             /* a socket per peer (btl_sctp_one2one.c), not one for all */
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
    uint64_t out_errors;                        /* datagrams the kernel refused */
} bsctp_stack_stats_t;

/* One message being put together from the pieces usrsctp reads out. */
typedef struct bsctp_reasm {
    uint8_t *buf;
    size_t len, cap;
} bsctp_reasm_t;

/* One peer as usrsctp reaches it. */
typedef struct bsctp_link {
    ebtl_sockaddr_t udp;           /* its UDP address and port */
    size_t nic;                   /* which of our sockets reaches it */
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
    /* one-to-one style (btl_sctp_one2one.c) */
    struct bsctp_o2o_sock *o2o;    /* the socket of the association in use; NULL: none yet */
    bool o2o_await;               /* the peer closed ours for its own: wait for it */
    /* The end of a message usrsctp took only the start of (explicit EOR
     * lets it take any part that fits): it goes before anything else on
     * the link, on the same stream (btl_sctp_assoc.c). NULL: none. */
    uint8_t *rest;
    size_t rest_len, rest_off;
    uint16_t rest_sid;
    /* inet mode's stall watch (btl_sctp_inet.c): what usrsctp held
     * unacknowledged and queued when last looked at, and since when. */
    uint32_t watch_unacked, watch_queued;
    uint64_t watch_since_ns;
} bsctp_link_t;

typedef struct bsctp_stack {
    int instance;                 /* slot in the process's table of stacks */
    bsctp_stack_config_t cfg;
    bsctp_stack_ops_t ops;
    void *ctx;
    ebtl_dgram_sock_t *socks;
    size_t num_socks;
    struct socket *so;            /* the one-to-many SCTP socket (one-to-one: the listener) */
    struct bsctp_o2o *o2o;         /* one-to-one style: the per-peer sockets */
    int inet_family;              /* inet mode: the sockets' family (AF_INET6 with any
                                     IPv6 address) */
    bsctp_link_t *links;
    uint32_t num_links, cap_links;
    uint32_t last_rx_link;        /* cache: datagrams come in runs from one peer */
    uint32_t strangers;
    uint8_t *rxbuf;               /* usrsctp_recvv target */
    size_t rxbuf_size;
    bool draining;                /* no nested receive loop from a delivery */
    bool closing;
    size_t sndbuf_limit;          /* the SCTP socket's send buffer as usrsctp took it */
    uint32_t rests;               /* links holding a message's end (bsctp_link_t.rest) */
    uint64_t input_datagrams;     /* conn mode: datagrams handed to usrsctp so far */
    uint64_t polled_ns;           /* conn mode: the clock at the last bsctp_stack_poll */
    uint64_t watch_ns;            /* inet mode: the last stall watch */
    uint64_t watch_t3;            /* usrsctp's T3 expiries and retransmissions then */
    bsctp_stack_stats_t stats;
    bsctp_streams_stats_t stream_stats;  /* btl_sctp_assoc.c: per stream, what was chosen */
} bsctp_stack_t;

/* Start usrsctp (first stack in the process), open the UDP sockets and the
 * SCTP socket with its options. Returns 0, or -1 with one message in err. */
int bsctp_stack_open(bsctp_stack_t *st, const bsctp_stack_config_t *cfg,
                    const bsctp_stack_ops_t *ops, void *ctx, char *err, size_t errlen);
/* Shut associations down gracefully (bounded wait), close, and stop usrsctp
 * with the last stack. */
void bsctp_stack_close(bsctp_stack_t *st);
/* Send the ends of messages the links still hold (bsctp_link_t.rest; ob1
 * counted them sent) before a close: bounded wait, reading the SACKs that
 * make room. Conn mode only: inet mode sends messages whole. */
void bsctp_stack_flush_rests(bsctp_stack_t *st);

/* SCTP's CRC32c of a packet (RFC 9260 §6.8, Appendix B): over the whole
 * packet with its checksum field (bytes 8..11) taken as zero. The field
 * holds it least significant byte first. len >= 12. */
uint32_t bsctp_packet_crc32c(const uint8_t *pkt, size_t len);

/* The largest message of at most len bytes that fills whole packets at the
 * path MTU (len itself when it fits one packet or no smaller size fills
 * whole ones). */
size_t bsctp_stack_whole_packets(const bsctp_stack_t *st, size_t len);

/* Our UDP port on local address i (host order), for the modex. */
uint16_t bsctp_stack_udp_port(const bsctp_stack_t *st, size_t i);
/* How many local addresses we publish, and the MTU of address i. */
size_t bsctp_stack_num_addrs(const bsctp_stack_t *st);
unsigned bsctp_stack_addr_mtu(const bsctp_stack_t *st, size_t i);

/* The link for a peer's UDP address, created when new (stranger: created by
 * its own datagrams). Returns the index or -1 (out of memory). */
int bsctp_stack_link(bsctp_stack_t *st, const ebtl_sockaddr_t *udp, size_t nic, uint16_t sctp_port,
                    bool stranger);

/* One pass: read the UDP sockets into usrsctp, run its timers, deliver what
 * arrived. Returns the number of datagrams read. */
int bsctp_stack_poll(bsctp_stack_t *st);

/* ---- btl_sctp_assoc.c ---- */

/* Send one message (the 8-byte header already at data) to a link; the
 * association is made on first use. Returns 0 (usrsctp copied it), -EAGAIN
 * (send buffer full: retry after a poll), or another -errno (peer failed). */
int bsctp_assoc_send(bsctp_stack_t *st, uint32_t link, void *data, size_t len);

/* The stream a fragment will go on: ob1's bytes at ob1 (len of them,
 * under BTL tag tag) to link, by the rule of btl_sctp_streams.h with the
 * streams its association negotiated. Counted in stream_stats. */
uint16_t bsctp_assoc_stream(bsctp_stack_t *st, uint32_t link, uint8_t tag, const void *ob1,
                           size_t len);

/* bsctp_assoc_send on a chosen stream (bsctp_assoc_send chooses it itself).
 * The peer's identification goes first on every stream before its first
 * use, so data never overtakes it. */
int bsctp_assoc_send_on(bsctp_stack_t *st, uint32_t link, uint16_t sid, void *data, size_t len);
/* Whether a message may go in pieces (bsctp_assoc_sendv with iovcnt > 1):
 * conn mode only. In inet mode usrsctp's threads send while we add the
 * pieces, and one np 2 test run received a fragment's headers as a whole
 * message of their own, its payload as another; so inet sends messages
 * whole, without explicit EOR, as before. */
static inline bool bsctp_stack_takes_pieces(const bsctp_stack_t *st)
{
    return !st->cfg.inet;
}
/* The same for a message in pieces (each non-empty; only where
 * bsctp_stack_takes_pieces), sent as one SCTP message: the headers in one
 * buffer, the payload in place in another. All of it or none is taken (0
 * or -EAGAIN as above); the pieces are not used after the call. */
struct iovec;
int bsctp_assoc_sendv(bsctp_stack_t *st, uint32_t link, uint16_t sid, const struct iovec *iov,
                     int iovcnt);
/* Send the ends of messages usrsctp took only part of (after a poll has
 * made room); returns how many links still hold one. */
uint32_t bsctp_assoc_send_rests(bsctp_stack_t *st);

/* One usrsctp_recvv off so into st->rxbuf (a message, a piece of one or a
 * notification): its length, or -1 when nothing waits. *has_info: rcv
 * holds the message's receive information (stream, association). */
struct sctp_rcvinfo;
long bsctp_assoc_recv(bsctp_stack_t *st, struct socket *so, struct sockaddr_storage *from,
                     socklen_t *fromlen, struct sctp_rcvinfo *rcv, bool *has_info, int *flags);

/* Read every waiting message and notification off the socket. */
void bsctp_assoc_drain(bsctp_stack_t *st);
/* What the drain does with each (the fuzz target calls them directly):
 * a message or a piece of one (MSG_EOR in flags ends it) for a link on an
 * association and stream sid, and a notification. Bytes are untrusted. */
void bsctp_assoc_input(bsctp_stack_t *st, uint32_t index, uint32_t assoc_id, uint16_t sid,
                      int flags, const uint8_t *buf, size_t n);
void bsctp_assoc_notification(bsctp_stack_t *st, int flags, const uint8_t *buf, size_t n);

/* Abort a link's association (bad identification, a stranger we reject). */
void bsctp_assoc_abort(bsctp_stack_t *st, bsctp_link_t *l, const char *why);

/* Free per-link state (reassembly, streams, a message's kept end). */
void bsctp_assoc_link_fini(bsctp_stack_t *st, bsctp_link_t *l);

/* usrsctp's view of the link's association (state, peer window, queued
 * and unacknowledged data, the primary path's cwnd and RTO) as one line
 * of text for a hang report; "" when it has none. */
void bsctp_assoc_describe(bsctp_stack_t *st, uint32_t link, char *buf, size_t len);
/* The DATA chunks usrsctp has sent on the link's association and not had
 * acknowledged, and the bytes it holds to send; false without one. */
bool bsctp_assoc_outstanding(bsctp_stack_t *st, uint32_t link, uint32_t *unacked,
                            uint32_t *queued);
/* The peer of a link is lost for why: no more sends, the layer above is told. */
void bsctp_assoc_fail(bsctp_stack_t *st, uint32_t link, const char *why);

/* ---- addressing: what assoc.c knows of how usrsctp names a peer ---- */

/* The destination usrsctp_sendv takes for a link. */
void bsctp_stack_peer_sockaddr(const bsctp_stack_t *st, uint32_t link,
                              struct sockaddr_storage *ss, socklen_t *len);
/* Before a send that may start an association (inet: the peer's UDP
 * encapsulation port, so that the INIT reaches its stack). */
void bsctp_stack_prepare_send(bsctp_stack_t *st, uint32_t link);
/* The link a peer's address names, or -1. In inet mode an unknown peer
 * gets a stranger link when create is set (identified by its
 * identification message); in conn mode links come from datagrams. */
int bsctp_stack_link_of_sockaddr(bsctp_stack_t *st, const struct sockaddr *sa, socklen_t len,
                                bool create);

/* Send our identification on stream 0 of a link's association unless
 * already sent (one-to-one: confirms an association we adopted). */
int bsctp_assoc_ident(bsctp_stack_t *st, uint32_t link);

/* Set the socket options of the configuration on a usrsctp socket. */
int bsctp_stack_set_options(bsctp_stack_t *st, struct socket *so, char *err, size_t errlen);

/* ---- btl_sctp_one2one.c: the one-to-one style's hooks ---- */

int bsctp_o2o_init(bsctp_stack_t *st, char *err, size_t errlen);
/* usrsctp_sendv on the link's own socket (made here on first use);
 * -1 with errno EAGAIN until its association is up and ours to use. */
long bsctp_o2o_sendv(bsctp_stack_t *st, uint32_t link, const void *data, size_t len,
                    struct sctp_sndinfo *info);
/* A non-blocking socket with the stack's options, bound for a connect
 * to link (NULL with errno): AF_CONN in conn mode; in inet mode on our
 * addresses and a port of its own, with the link's encapsulation port. */
struct socket *bsctp_stack_o2o_socket(bsctp_stack_t *st, uint32_t link);
/* The link of an association accepted on so from the peer address from
 * (created for a stranger), or -1. */
int bsctp_stack_accepted_link(bsctp_stack_t *st, struct socket *so, const struct sockaddr *from,
                             socklen_t len);
/* Accept new associations and read the sockets marked readable. */
void bsctp_o2o_drain(bsctp_stack_t *st);
/* Abort the link's association (the rest it queued is dropped). */
void bsctp_o2o_abort(bsctp_stack_t *st, bsctp_link_t *l);
/* The socket of a link's association once it is up, else NULL. */
struct socket *bsctp_o2o_link_socket(const bsctp_link_t *l);
/* Close: shut every association down gracefully; bsctp_o2o_live counts
 * those not gone yet; bsctp_o2o_fini closes what remains and frees. */
void bsctp_o2o_shutdown(bsctp_stack_t *st);
size_t bsctp_o2o_live(const bsctp_stack_t *st);
void bsctp_o2o_fini(bsctp_stack_t *st);

/* The AF_CONN address of a link, and back (NULL / -1 if not ours). */
void *bsctp_stack_conn_addr(const bsctp_stack_t *st, uint32_t link);
bsctp_stack_t *bsctp_stack_from_conn_addr(const void *addr, uint32_t *link);

/* ---- btl_sctp_inet.c: inet mode, called by the stack functions ---- */
int bsctp_inet_open(bsctp_stack_t *st, char *err, size_t errlen);
/* The stall watch's decision for one link at now_ns (btl_sctp_inet.c):
 * have: usrsctp reported the association; unacked, queued: its
 * unacknowledged chunks and queued bytes; timers_ran: a T3 expiry or a
 * retransmission in the process since the last look. True once the link
 * has held the same unacknowledged data, untouched, for stall_ns. */
bool bsctp_inet_link_stalled(bsctp_link_t *l, uint64_t now_ns, bool have, uint32_t unacked,
                            uint32_t queued, bool timers_ran, uint64_t stall_ns);
void bsctp_inet_close(bsctp_stack_t *st);
int bsctp_inet_poll(bsctp_stack_t *st);
uint16_t bsctp_inet_udp_port(void);
void bsctp_inet_peer_sockaddr(const bsctp_stack_t *st, uint32_t link,
                             struct sockaddr_storage *ss, socklen_t *len);
void bsctp_inet_prepare_send(bsctp_stack_t *st, uint32_t link);
struct socket *bsctp_inet_o2o_socket(bsctp_stack_t *st, uint32_t link);
int bsctp_inet_accepted_link(bsctp_stack_t *st, struct socket *so, const struct sockaddr *from,
                            socklen_t len);
int bsctp_inet_link_of_sockaddr(bsctp_stack_t *st, const struct sockaddr *sa, socklen_t len,
                               bool create);

#endif

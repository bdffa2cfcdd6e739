/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * How usrsctp runs (btl_sctp_mode): an operation table, one per file.
 *   conn (btl_sctp_conn.c)  usrsctp without threads on AF_CONN: the BTL
 *        owns the UDP sockets (common/ebtl_dgram), feeds usrsctp what they
 *        read and advances its timers, all inside progress.
 *   inet (btl_sctp_inet.c)  usrsctp's own threads over UDP encapsulation
 *        on AF_INET/AF_INET6, every address bound: multihoming and CMT
 *        build on it (docs/sctp-inet.md).
 * The style (btl_sctp_style.h) and the stack (btl_sctp_stack.c) call a
 * mode only through this table (st->mode).
 */
#ifndef BTL_SCTP_MODE_H
#define BTL_SCTP_MODE_H

#include "btl_sctp_core.h"

typedef struct bsctp_mode {
    const char *name;        /* its btl_sctp_mode value */
    bool takes_pieces;       /* a message may go in pieces (explicit EOR): in inet mode
                                usrsctp's threads send while the pieces are added, and
                                one test run received a fragment's headers and its
                                payload as two messages */
    bool heartbeats;         /* the stack answers heartbeats while the process computes */
    bool threads;            /* usrsctp's threads run upcalls concurrently with us */
    bool room_from_input;    /* send-buffer room comes only from input a poll feeds */
    bool btl_sockets;        /* the UDP sockets are the BTL's (st->socks): the
                                test-only fault layer can sit on them */
    bool resends;            /* usrsctp's threads race our reads and once lost a message
                                in its receive queue: keep the last fragments sent, to
                                send again one the peer never read (btl_sctp_seq.h) */
    bool watch_stalls;       /* usrsctp may lose a retransmission timer: watch for it
                                (btl_sctp_stack.c) */

    /* Start usrsctp (with the process's first stack of this mode), the
     * UDP side, and st->so (type st->so_type) bound to every local
     * address: 0, or -1 with one message. port_is_identity: peers tell
     * our associations apart by our port (the style's). */
    int (*open)(bsctp_stack_t *st, bool port_is_identity, char *err, size_t errlen);
    /* After the style's shutdown: close st->so, stop usrsctp with the
     * last stack, close the UDP side. */
    void (*close)(bsctp_stack_t *st);
    /* One pass at st->polled_ns: feed usrsctp what arrived and run its
     * timers; returns the datagrams read (0 when usrsctp's threads do it). */
    int (*poll)(bsctp_stack_t *st);
    /* Closing: let usrsctp answer for a moment (the whole process's input). */
    void (*pump)(bsctp_stack_t *st);
    /* A pass found nothing; NULL: nothing to do. */
    void (*idle)(bsctp_stack_t *st);
    /* The stall watch (btl_sctp_stack.c) found usrsctp holding the link's
     * unacknowledged data with no timer running for it: make it look at
     * the association again. NULL: nothing to try. */
    void (*kick)(bsctp_stack_t *st, uint32_t link);
    /* Send the packets usrsctp emitted since the last flush (conn: held
     * until the call into usrsctp returns, to leave in batches); called
     * after every send and at the end of every poll. NULL: each packet
     * left when usrsctp emitted it. */
    void (*flush)(bsctp_stack_t *st);

    /* The local addresses we publish: how many, and each one's UDP port
     * (host order) and MTU. */
    size_t (*num_addrs)(const bsctp_stack_t *st);
    uint16_t (*udp_port)(const bsctp_stack_t *st, size_t i);
    unsigned (*addr_mtu)(const bsctp_stack_t *st, size_t i);

    /* The layer above added link (conn: usrsctp takes packets only for
     * registered addresses); NULL: nothing to do. */
    void (*link_added)(bsctp_stack_t *st, uint32_t link);
    /* The destination usrsctp takes for a link. */
    void (*peer_sockaddr)(const bsctp_stack_t *st, uint32_t link, struct sockaddr_storage *ss,
                          socklen_t *len);
    /* Before a send on so that may start an association to link (inet:
     * the peer's UDP encapsulation port, so that the INIT reaches its
     * stack); NULL: nothing to do. */
    void (*prepare_send)(bsctp_stack_t *st, struct socket *so, uint32_t link);
    /* The link a peer's address names, or -1. create: an unknown peer gets
     * a stranger link (inet; conn learns links from datagrams). */
    int (*link_of_sockaddr)(bsctp_stack_t *st, const struct sockaddr *sa, socklen_t len,
                            bool create);
    /* A non-blocking socket with the stack's options, ready to connect to
     * link on an association of its own (NULL with errno). */
    struct socket *(*socket_for_link)(bsctp_stack_t *st, uint32_t link);
    /* The link of an association accepted on so from the peer address
     * from (a stranger link when new), or -1. */
    int (*accepted_link)(bsctp_stack_t *st, struct socket *so, const struct sockaddr *from,
                         socklen_t len);
} bsctp_mode_t;

extern const bsctp_mode_t bsctp_mode_conn;
extern const bsctp_mode_t bsctp_mode_inet;

/* Mode conn computes SCTP's CRC32c itself (RFC 9260 §6.8, Appendix B):
 * over the whole packet with its checksum field (bytes 8..11) taken as
 * zero. The field holds it least significant byte first. len >= 12. */
uint32_t bsctp_packet_crc32c(const uint8_t *pkt, size_t len);

#endif

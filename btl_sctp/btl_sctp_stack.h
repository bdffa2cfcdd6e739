/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The sctp transport as the module drives it (btl_sctp_stack.c): one
 * usrsctp socket set with its links, opened in a mode and a style, polled
 * from progress, closed at finalize. The layers below and the order calls
 * flow in are described in btl_sctp_core.h.
 */
#ifndef BTL_SCTP_STACK_H
#define BTL_SCTP_STACK_H

#include "btl_sctp_assoc.h"

/* Start usrsctp (the first stack of its mode in the process), the mode's
 * sockets and the style's, with the options of cfg. Returns 0, or -1 with
 * one message in err. */
int bsctp_stack_open(bsctp_stack_t *st, const bsctp_stack_config_t *cfg,
                     const bsctp_stack_ops_t *ops, void *ctx, char *err, size_t errlen);
/* Send what the links still hold, shut the associations down gracefully
 * (bounded wait), close, and stop usrsctp with the last stack. */
void bsctp_stack_close(bsctp_stack_t *st);

/* One pass: feed usrsctp what arrived and run its timers (the mode), read
 * the sockets and deliver (the style, through the association layer),
 * watch for stalls where the mode needs it, and send the ends of messages
 * the links hold. Returns the datagrams read, or else the messages
 * delivered. */
int bsctp_stack_poll(bsctp_stack_t *st);

/* Send what the mode holds back until a call into usrsctp returns. */
static inline void bsctp_stack_flush(bsctp_stack_t *st)
{
    if (st->mode->flush != NULL) {
        st->mode->flush(st);
    }
}

/* The link for a peer's UDP address (nic: which local address reaches it;
 * sctp_port: its SCTP port), made known to the mode when new. Returns the
 * index, or -1 (out of memory). */
int bsctp_stack_link(bsctp_stack_t *st, const ebtl_sockaddr_t *udp, size_t nic, uint16_t sctp_port,
                     bool stranger);

/* The local addresses we publish: how many, each one's UDP port (host
 * order) and MTU. */
static inline size_t bsctp_stack_num_addrs(const bsctp_stack_t *st)
{
    return st->mode->num_addrs(st);
}
static inline uint16_t bsctp_stack_udp_port(const bsctp_stack_t *st, size_t i)
{
    return st->mode->udp_port(st, i);
}
static inline unsigned bsctp_stack_addr_mtu(const bsctp_stack_t *st, size_t i)
{
    return st->mode->addr_mtu(st, i);
}
/* Whether a message may go in pieces (bsctp_assoc_sendv with iovcnt > 1). */
static inline bool bsctp_stack_takes_pieces(const bsctp_stack_t *st)
{
    return st->mode->takes_pieces;
}
/* The largest message of at most len bytes that fills whole packets. */
static inline size_t bsctp_stack_whole_packets(const bsctp_stack_t *st, size_t len)
{
    return bsctp_core_whole_packets(st, len);
}

/* The stall watch's decision for one link at now_ns: have: usrsctp
 * reported the association; unacked, queued: its unacknowledged chunks and
 * queued bytes; timers_ran: a T3 expiry or a retransmission in the process
 * since the last look. True once the link has held the same
 * unacknowledged data, untouched, for stall_ns. */
bool bsctp_stack_link_stalled(bsctp_link_t *l, uint64_t now_ns, bool have, uint32_t unacked,
                              uint32_t queued, bool timers_ran, uint64_t stall_ns);

#endif

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Associations (btl_sctp_assoc.c): identification, one SCTP message per
 * fragment out, messages and notifications in, whatever the style and
 * mode (reached through st->style and st->mode only).
 */
#ifndef BTL_SCTP_ASSOC_H
#define BTL_SCTP_ASSOC_H

#include "btl_sctp_style.h"

struct iovec;

/* What a style hands up (st->rx): set by the stack at open. */
extern const bsctp_rx_hooks_t bsctp_assoc_rx;

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
/* The same for a message in pieces (each non-empty; more than one only
 * where st->mode->takes_pieces), sent as one SCTP message: the headers in
 * one buffer, the payload in place in another. All of it or none is taken
 * (0 or -EAGAIN as above); the pieces are not used after the call. */
int bsctp_assoc_sendv(bsctp_stack_t *st, uint32_t link, uint16_t sid, const struct iovec *iov,
                      int iovcnt);
/* Send the link's idle audit (btl_sctp_seq.h): its last fragment numbers
 * per stream, on stream 0. 0, -EAGAIN (nothing to audit, or not now), or
 * -errno. The caller checked the association holds nothing unacknowledged. */
int bsctp_assoc_audit(bsctp_stack_t *st, uint32_t link);
/* Send the ends of messages usrsctp took only part of (after a poll has
 * made room); returns how many links still hold one. */
uint32_t bsctp_assoc_send_rests(bsctp_stack_t *st);

/* What the receive side does with each message or piece, and each
 * notification (the hooks of bsctp_assoc_rx; the fuzz target calls them
 * directly). Bytes are untrusted. */
void bsctp_assoc_input(bsctp_stack_t *st, uint32_t index, uint32_t assoc_id, uint16_t sid,
                       int flags, const uint8_t *buf, size_t n);
void bsctp_assoc_notification(bsctp_stack_t *st, int flags, const uint8_t *buf, size_t n);

/* Send our identification on stream 0 of a link's association unless
 * already sent (one-to-one: confirms an association we adopted). */
int bsctp_assoc_ident(bsctp_stack_t *st, uint32_t link);

/* Abort a link's association (bad identification, a stranger we reject). */
void bsctp_assoc_abort(bsctp_stack_t *st, bsctp_link_t *l, const char *why);
/* The peer of a link is lost for why: no more sends, the layer above is told. */
void bsctp_assoc_fail(bsctp_stack_t *st, uint32_t link, const char *why);
/* Free per-link state (reassembly, streams, a message's kept end). */
void bsctp_assoc_link_fini(bsctp_stack_t *st, bsctp_link_t *l);

/* Links the mode found lossy (st->shrink_due) go back to packets of a
 * frame: usrsctp's path MTU of their association lowered to
 * st->frame_pmtu (btl_sctp_segs.h). Not from within usrsctp's calls. */
void bsctp_assoc_shrink_packets(bsctp_stack_t *st);

/* usrsctp's view of the link's association (state, peer window, queued
 * and unacknowledged data, the primary path's cwnd and RTO) as one line
 * of text for a hang report; "" when it has none. */
void bsctp_assoc_describe(bsctp_stack_t *st, uint32_t link, char *buf, size_t len);
/* The DATA chunks usrsctp has sent on the link's association and not had
 * acknowledged, and the bytes it holds to send; false without one. */
bool bsctp_assoc_outstanding(bsctp_stack_t *st, uint32_t link, uint32_t *unacked,
                             uint32_t *queued);

#endif

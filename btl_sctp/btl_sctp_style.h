/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The socket style (btl_sctp_style): an operation table, one per file.
 *   one-to-many (btl_sctp_one2many.c)  one SOCK_SEQPACKET socket for every
 *        association, dispatch by association id; one module for all peers.
 *   one-to-one (btl_sctp_one2one.c)  a SOCK_STREAM socket per association,
 *        made by a connect or accepted from the listener, and an election
 *        that keeps one association per pair; one module per interface,
 *        so that the BML stripes (docs/sctp-one-to-one.md).
 * The association layer (btl_sctp_assoc.c) and the stack (btl_sctp_stack.c)
 * call a style only through this table (st->style); a style calls the
 * mode through st->mode and hands what it reads to st->rx.
 */
#ifndef BTL_SCTP_STYLE_H
#define BTL_SCTP_STYLE_H

#include "btl_sctp_mode.h"

struct sctp_sndinfo;

typedef struct bsctp_style {
    const char *name;            /* its btl_sctp_style value */
    int socket_type;             /* of st->so */
    int backlog;                 /* st->so's listen backlog */
    bool module_per_interface;   /* a module (and stack) per interface: the BML stripes */
    bool port_is_identity;       /* peers tell our associations apart by our port: the
                                    SCTP port must be numbered as the UDP one (inet) */

    /* After st->so listens: 0, or -1 with one message in err. */
    int (*init)(bsctp_stack_t *st, char *err, size_t errlen);
    /* usrsctp_sendv of data to link: the bytes taken, or -1 with errno
     * (EAGAIN: not now, e.g. no association up yet). */
    long (*send)(bsctp_stack_t *st, uint32_t link, const void *data, size_t len,
                 struct sctp_sndinfo *info);
    /* The socket and association id to ask usrsctp about the link's
     * association; false when it has none yet. */
    bool (*assoc_socket)(const bsctp_stack_t *st, const bsctp_link_t *l, struct socket **so,
                         uint32_t *assoc_id);
    /* Abort the link's association (what it queued is dropped). */
    void (*abort)(bsctp_stack_t *st, bsctp_link_t *l);
    /* The link of an association no link names yet (the peer made it), or
     * -1; NULL: every association is named when made. */
    int (*link_of_assoc)(bsctp_stack_t *st, uint32_t assoc_id);
    /* Read every waiting message and notification into st->rx. */
    void (*drain)(bsctp_stack_t *st);

    /* Close, in this order: start a graceful shutdown of every association;
     * reap (read what the shutdowns bring; data is dropped) until none is
     * live or the time is up; fini (abort what is left, free). */
    void (*shutdown)(bsctp_stack_t *st);
    void (*reap)(bsctp_stack_t *st);
    size_t (*live)(const bsctp_stack_t *st);
    void (*fini)(bsctp_stack_t *st);

    /* The style's own counters as " name=value" text ("" if none). */
    void (*describe)(const bsctp_stack_t *st, char *buf, size_t len);
} bsctp_style_t;

extern const bsctp_style_t bsctp_style_one_to_many;
extern const bsctp_style_t bsctp_style_one_to_one;

#endif

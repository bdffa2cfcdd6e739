/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The one-to-one style (the table bsctp_style_one_to_one): a SOCK_STREAM
 * usrsctp socket per association, made by a non-blocking connect on the
 * first send to a link or accepted from the listener (st->so).
 *
 * Election, so that data between two processes flows on ONE association
 * and in order: the association the lower (jobid, vpid) made wins.
 *  - The lower side sends data on its own connection as soon as it is up.
 *  - The higher side sends only its identification on its own connection
 *    until the lower side confirms it by identifying itself on it (which it
 *    does when it adopted the accepted association, having none of its own,
 *    and read the connector's identification).
 *  - Whoever holds two associations with one peer keeps the winner and
 *    shuts the other down gracefully, reading (and dropping) until it is
 *    gone: it never carried data, only identifications.
 *  - A higher side whose unconfirmed connection the peer shut down waits
 *    for the peer's own (o2o_await) instead of connecting again.
 * So no message is ever sent on a losing association, and per-link state
 * in btl_sctp_assoc.c (identification, reassembly) sees one association.
 *
 * Sockets are read only when usrsctp's upcall (run on our thread inside
 * usrsctp_conninput / usrsctp_handle_timers in conn mode) marked them
 * readable; with usrsctp's threads (inet mode) every socket is read.
 */
#include "btl_sctp_style.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

#include "btl_sctp_hdr.h"

enum bsctp_o2o_state {
    BSCTP_O2O_CONNECTING,   /* connect sent, no COMM_UP yet */
    BSCTP_O2O_UP,           /* established */
    BSCTP_O2O_SHUTTING,     /* lost an election or closing: read and drop until gone */
    BSCTP_O2O_DEAD          /* gone: closed and freed by the next sweep */
};

typedef struct bsctp_o2o_sock {
    struct bsctp_o2o_sock *next_ready;
    bsctp_stack_t *st;
    struct socket *so;
    uint32_t link;         /* which link (peer) its association reaches */
    uint32_t id;           /* our association id for btl_sctp_assoc.c (usrsctp's
                              repeat across one-to-one sockets) */
    enum bsctp_o2o_state state;
    bool outbound;         /* we connected it */
    bool ready;            /* on the ready list */
    bool abort;            /* close with ABORT, not SHUTDOWN */
    bool shut_on_up;       /* lost an election while connecting */
    uint64_t shut_ns;      /* when it started shutting down */
} bsctp_o2o_sock_t;

typedef struct bsctp_o2o_stats {
    uint64_t upcalls;      /* readable marks from usrsctp */
    uint64_t connects, accepts;
    uint64_t elections;    /* second associations with a peer, shut down */
    uint64_t dropped;      /* messages read on an association not in use, dropped */
    uint64_t refused;      /* accepted associations naming no link of this stack */
} bsctp_o2o_stats_t;

/* The style's own state (st->style_state). */
typedef struct bsctp_style_state {
    bsctp_o2o_sock_t **socks;
    size_t num_socks, cap_socks;
    bsctp_o2o_sock_t *ready;   /* readable sockets, newest first */
    bool listen_ready;        /* the listener may have associations to accept */
    bool ident_owed;          /* an identification that confirms an association failed to go */
    uint32_t next_id;
    uint64_t wakeups_seen;    /* inet mode: the upcall counter at the last drain */
    bsctp_o2o_stats_t stats;
} bsctp_o2o_t;

/* How long a losing association may take to shut down before it is aborted. */
#define LOSER_LINGER_NS (10ull * 1000000000ull)
/* Our association ids start here (usrsctp's restart at 1 on each socket). */
#define FIRST_ID 0x40000001u

/* ------------------------------------------------------ socket table */

static void mark_ready(bsctp_o2o_sock_t *s)
{
    bsctp_o2o_t *o = s->st->style_state;
    if (!s->ready && o != NULL) {
        s->ready = true;
        s->next_ready = o->ready;
        o->ready = s;
    }
}

/* usrsctp calls this on our thread, inside usrsctp_conninput or
 * usrsctp_handle_timers (conn mode has no threads), whenever the socket's
 * state or buffers change: only note it; the drain reads later. */
static void on_upcall(struct socket *so, void *arg, int flags)
{
    bsctp_o2o_sock_t *s = arg;
    (void) so;
    (void) flags;
    s->st->style_state->stats.upcalls++;
    mark_ready(s);
}

/* Inet mode: usrsctp's own threads call the upcalls, concurrently with
 * progress, and possibly just after we freed a socket's record. So they
 * touch nothing of ours but this process-wide counter; a drain that sees
 * it moved reads every socket (and accepts). */
static _Atomic uint64_t inet_wakeups;

static void on_inet_upcall(struct socket *so, void *arg, int flags)
{
    (void) so;
    (void) arg;
    (void) flags;
    atomic_fetch_add_explicit(&inet_wakeups, 1, memory_order_release);
}

static void set_upcall(bsctp_stack_t *st, struct socket *so,
                       void (*fn)(struct socket *, void *, int), void *arg)
{
    (void) usrsctp_set_upcall(so, st->mode->threads ? on_inet_upcall : fn, arg);
}

static void on_listen_upcall(struct socket *so, void *arg, int flags)
{
    bsctp_stack_t *st = arg;
    (void) so;
    (void) flags;
    st->style_state->stats.upcalls++;
    st->style_state->listen_ready = true;
}

static bsctp_o2o_sock_t *sock_new(bsctp_stack_t *st, struct socket *so, uint32_t link, bool outbound)
{
    bsctp_o2o_t *o = st->style_state;
    if (o->num_socks == o->cap_socks) {
        size_t cap = o->cap_socks ? o->cap_socks * 2 : 16;
        bsctp_o2o_sock_t **n = realloc(o->socks, cap * sizeof(*n));
        if (n == NULL) {
            return NULL;
        }
        o->socks = n;
        o->cap_socks = cap;
    }
    bsctp_o2o_sock_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return NULL;
    }
    s->st = st;
    s->so = so;
    s->link = link;
    s->outbound = outbound;
    s->id = o->next_id++;
    if (o->next_id < FIRST_ID) {
        o->next_id = FIRST_ID;
    }
    s->state = outbound ? BSCTP_O2O_CONNECTING : BSCTP_O2O_UP;
    o->socks[o->num_socks++] = s;
    set_upcall(st, so, on_upcall, s);
    mark_ready(s);   /* an accepted socket may hold data already */
    return s;
}

static void unlink_ready(bsctp_o2o_t *o, bsctp_o2o_sock_t *s)
{
    for (bsctp_o2o_sock_t **p = &o->ready; *p != NULL; p = &(*p)->next_ready) {
        if (*p == s) {
            *p = s->next_ready;
            break;
        }
    }
    s->ready = false;
}

/* Stop a socket's upcalls before we forget it: in conn mode only. In inet
 * mode usrsctp's threads test the upcall flag and then call through the
 * pointer, so clearing it races with them: a np 8 run in inet one-to-one
 * died jumping to address 0 (no frame but the signal handler's). The inet
 * upcall touches nothing of ours and may run for ever. */
static void stop_upcalls(const bsctp_stack_t *st, struct socket *so)
{
    if (!st->mode->threads) {
        usrsctp_set_upcall(so, NULL, NULL);
    }
}

static void close_so(const bsctp_stack_t *st, struct socket *so, bool abort)
{
    stop_upcalls(st, so);
    if (abort) {
        struct linger lg = {1, 0};   /* ABORT instead of SHUTDOWN */
        (void) usrsctp_setsockopt(so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    usrsctp_close(so);
}

/* Close and free the sockets whose association is gone, and abort losers
 * that take too long. Only outside any read loop. */
static void sweep(bsctp_stack_t *st)
{
    bsctp_o2o_t *o = st->style_state;
    uint64_t now = ebtl_dgram_now_ns();
    size_t i = 0;
    while (i < o->num_socks) {
        bsctp_o2o_sock_t *s = o->socks[i];
        if (s->state == BSCTP_O2O_SHUTTING && now - s->shut_ns > LOSER_LINGER_NS) {
            s->state = BSCTP_O2O_DEAD;
            s->abort = true;
        }
        if (s->state != BSCTP_O2O_DEAD) {
            i++;
            continue;
        }
        if (s->link < st->num_links && st->links[s->link].o2o == s) {
            st->links[s->link].o2o = NULL;
        }
        unlink_ready(o, s);
        close_so(st, s->so, s->abort);
        free(s);
        o->socks[i] = o->socks[--o->num_socks];
    }
}

/* -------------------------------------------------------- election */

/* Is our (jobid, vpid) below the link's peer's? */
static bool we_are_lower(const bsctp_stack_t *st, const bsctp_link_t *l)
{
    return st->cfg.jobid != l->jobid ? st->cfg.jobid < l->jobid : st->cfg.vpid < l->vpid;
}

/* A connection of ours the peer has not confirmed: no data on it yet. */
static bool unconfirmed(const bsctp_stack_t *st, const bsctp_link_t *l, const bsctp_o2o_sock_t *s)
{
    return s->outbound && !we_are_lower(st, l) && !l->ident_rx;
}

/* Shut an association down gracefully; it is read (and dropped) until gone. */
static void shut(bsctp_o2o_sock_t *s)
{
    if (s->state == BSCTP_O2O_DEAD || s->state == BSCTP_O2O_SHUTTING) {
        return;
    }
    if (s->state == BSCTP_O2O_CONNECTING) {
        /* Not while connecting: an ABORT in COOKIE_WAIT was seen to take
         * the peer's other association with it. Shut down once up. */
        s->shut_on_up = true;
        return;
    }
    if (usrsctp_shutdown(s->so, SHUT_WR) != 0) {
        s->state = BSCTP_O2O_DEAD;   /* nothing to shut down gracefully */
        s->abort = true;
        return;
    }
    s->state = BSCTP_O2O_SHUTTING;
    s->shut_ns = ebtl_dgram_now_ns();
    mark_ready(s);
}

/* Make s the link's association: its identification and streams start over. */
static void link_use(bsctp_stack_t *st, bsctp_link_t *l, bsctp_o2o_sock_t *s)
{
    bsctp_o2o_sock_t *old = l->o2o;
    l->o2o = s;
    l->o2o_await = false;
    st->rx.new_association(st, s->link, s->id);
    if (old != NULL && old != s) {
        st->style_state->stats.elections++;
        shut(old);
    }
}

/* ------------------------------------------------------------ send */

static bsctp_o2o_sock_t *connect_link(bsctp_stack_t *st, uint32_t link)
{
    bsctp_link_t *l = &st->links[link];
    struct socket *so = st->mode->socket_for_link(st, link);
    if (so == NULL) {
        return NULL;
    }
    bsctp_o2o_sock_t *s = sock_new(st, so, link, true);
    if (s == NULL) {
        close_so(st, so, true);
        errno = ENOMEM;
        return NULL;
    }
    link_use(st, l, s);
    struct sockaddr_storage to;
    socklen_t tolen;
    st->mode->peer_sockaddr(st, link, &to, &tolen);
    if (usrsctp_connect(so, (struct sockaddr *) &to, tolen) != 0 && errno != EINPROGRESS) {
        int e = errno;
        s->state = BSCTP_O2O_DEAD;
        s->abort = true;
        l->o2o = NULL;
        l->assoc_id = 0;
        errno = e;
        return NULL;
    }
    st->style_state->stats.connects++;
    return s;
}

/* What usrsctp says of a one-to-one socket whose association is shutting
 * down, aborted, or freed. */
static bool association_gone(int e)
{
    return e == ECONNRESET || e == EPIPE || e == ENOTCONN || e == ENOENT;
}

static long o2o_send(bsctp_stack_t *st, uint32_t link, const void *data, size_t len,
                     struct sctp_sndinfo *info)
{
    bsctp_link_t *l = &st->links[link];
    bsctp_o2o_sock_t *s = l->o2o;
    if (s == NULL) {
        if (!l->o2o_await && !st->closing && connect_link(st, link) == NULL) {
            return -1;   /* errno from the socket calls */
        }
        errno = EAGAIN;   /* until the association is up */
        return -1;
    }
    const bsctp_wire_hdr_t *h = data;
    if (s->state != BSCTP_O2O_UP
        || (unconfirmed(st, l, s) && (len < sizeof(*h) || h->kind != BSCTP_WIRE_IDENT))) {
        errno = EAGAIN;
        return -1;
    }
    long r = (long) usrsctp_sendv(s->so, data, len, NULL, 0, info, sizeof(*info),
                                SCTP_SENDV_SNDINFO, 0);
    if (r < 0 && association_gone(errno)) {
        /* The association is going or gone (ENOENT: freed; in inet mode
         * usrsctp's threads get there before we read its notification):
         * the notification, read next, says whether that ends the job (a
         * loss) or not (an election). */
        mark_ready(s);
        errno = EAGAIN;
    }
    return r;
}

static void o2o_abort(bsctp_stack_t *st, bsctp_link_t *l)
{
    (void) st;
    bsctp_o2o_sock_t *s = l->o2o;
    if (s != NULL) {
        s->state = BSCTP_O2O_DEAD;   /* closed with ABORT by the next sweep */
        s->abort = true;
        l->o2o = NULL;
    }
}

/* The socket of a link's association once it is up (its id for usrsctp: 0). */
static bool o2o_assoc_socket(const bsctp_stack_t *st, const bsctp_link_t *l, struct socket **so,
                             uint32_t *assoc_id)
{
    const bsctp_o2o_sock_t *s = l->o2o;
    (void) st;
    *so = s != NULL && s->state == BSCTP_O2O_UP ? s->so : NULL;
    *assoc_id = 0;
    return *so != NULL;
}

/* ---------------------------------------------------------- receive */

/* Tell btl_sctp_assoc.c of a change of the link's association, under our id. */
static void forward_assoc_change(bsctp_stack_t *st, bsctp_o2o_sock_t *s, uint16_t state,
                                 uint16_t out_streams)
{
    struct sctp_assoc_change ac;
    memset(&ac, 0, sizeof(ac));
    ac.sac_type = SCTP_ASSOC_CHANGE;
    ac.sac_length = sizeof(ac);
    ac.sac_state = state;
    ac.sac_outbound_streams = out_streams;
    ac.sac_inbound_streams = out_streams;
    ac.sac_assoc_id = (sctp_assoc_t) s->id;
    st->rx.notification(st, MSG_EOR | MSG_NOTIFICATION, (const uint8_t *) &ac, sizeof(ac));
}

/* The socket's association ended (how: an SCTP_ASSOC_CHANGE state). */
static void sock_gone(bsctp_stack_t *st, bsctp_o2o_sock_t *s, uint16_t how)
{
    if (s->state == BSCTP_O2O_DEAD) {
        return;
    }
    bsctp_link_t *l = &st->links[s->link];
    if (l->o2o == s) {
        if (how != SCTP_CANT_STR_ASSOC && unconfirmed(st, l, s)) {
            /* The lower peer ended our unconfirmed connection: it made its
             * own, which wins; wait for it. Lost rather than shut down
             * (seen under ASan's slowness): connect again, and a peer
             * that is really gone fails that connect (SCTP_CANT_STR_ASSOC,
             * a failure in btl_sctp_assoc.c once ob1 knows the peer),
             * ending the job. */
            l->o2o = NULL;
            l->o2o_await = how == SCTP_SHUTDOWN_COMP;
            l->assoc_id = 0;
            l->ident_tx = false;
        } else {
            forward_assoc_change(st, s, how, 0);   /* a loss ends the job there */
            l->o2o = NULL;
        }
    }
    s->state = BSCTP_O2O_DEAD;
}

static void sock_notification(bsctp_stack_t *st, bsctp_o2o_sock_t *s, int flags, const uint8_t *buf,
                              size_t n)
{
    union sctp_notification nt;
    if (!(flags & MSG_EOR) || n < sizeof(nt.sn_header)) {
        st->stats.rx_bad++;
        return;
    }
    memset(&nt, 0, sizeof(nt));
    memcpy(&nt, buf, n < sizeof(nt) ? n : sizeof(nt));
    bool active = st->links[s->link].o2o == s;
    switch (nt.sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        if (n < sizeof(struct sctp_assoc_change)) {
            st->stats.rx_bad++;
            return;
        }
        switch (nt.sn_assoc_change.sac_state) {
        case SCTP_COMM_UP:
            if (s->state == BSCTP_O2O_CONNECTING) {
                s->state = BSCTP_O2O_UP;
                if (s->shut_on_up) {
                    shut(s);
                }
            }
            if (active) {
                forward_assoc_change(st, s, SCTP_COMM_UP, nt.sn_assoc_change.sac_outbound_streams);
            } else {
                st->stats.assoc_up++;
            }
            break;
        case SCTP_RESTART:
            if (active) {
                forward_assoc_change(st, s, SCTP_RESTART, 0);
            }
            break;
        case SCTP_COMM_LOST:
        case SCTP_CANT_STR_ASSOC:
        case SCTP_SHUTDOWN_COMP:
            sock_gone(st, s, nt.sn_assoc_change.sac_state);
            break;
        default:
            break;
        }
        break;
    case SCTP_PARTIAL_DELIVERY_EVENT:
        if (active && n >= sizeof(struct sctp_pdapi_event)) {
            nt.sn_pdapi_event.pdapi_assoc_id = (sctp_assoc_t) s->id;
            st->rx.notification(st, flags, (const uint8_t *) &nt, sizeof(nt.sn_pdapi_event));
        }
        break;
    case SCTP_SENDER_DRY_EVENT:
        /* the answer to the association layer's receive poke (it counts it) */
        st->rx.notification(st, flags, buf, n);
        break;
    default:
        break;   /* SCTP_SHUTDOWN_EVENT: the SHUTDOWN_COMP follows */
    }
}

/* Everything waiting on one socket. */
static void read_sock(bsctp_stack_t *st, bsctp_o2o_sock_t *s)
{
    while (s->state != BSCTP_O2O_DEAD) {
        bsctp_read_t r;
        long n = bsctp_core_recv(st, s->so, &r);
        if (n < 0) {
            if (s->state != BSCTP_O2O_CONNECTING && association_gone(errno)) {
                /* Gone and no notification left to say how: lost, so
                 * that no send waits for it for ever. */
                sock_gone(st, s, SCTP_COMM_LOST);
            }
            break;   /* EWOULDBLOCK: drained */
        }
        if (r.flags & MSG_NOTIFICATION) {
            sock_notification(st, s, r.flags, st->rxbuf, (size_t) n);
            continue;
        }
        if (n == 0) {
            sock_gone(st, s, SCTP_SHUTDOWN_COMP);   /* end of stream: shut down */
            break;
        }
        if (st->links[s->link].o2o != s || s->state != BSCTP_O2O_UP || st->closing) {
            st->style_state->stats.dropped++;   /* an election's loser, or finalize */
            continue;
        }
        if (!r.has_info) {
            st->stats.rx_bad++;
            continue;
        }
        st->rx.message(st, s->link, s->id, r.rcv.rcv_sid, r.flags, st->rxbuf, (size_t) n);
        bsctp_link_t *l = &st->links[s->link];
        if (l->o2o == s && l->ident_rx && !l->ident_tx) {
            /* An association the peer made and identified: answer with
             * ours, which confirms it to a higher peer waiting for it
             * (strangers hear nothing from us before that). */
            if (st->rx.identify(st, s->link) != 0) {
                st->style_state->ident_owed = true;   /* the peer waits: retry from the drain */
            }
        }
    }
}

/* An association a peer made. */
static void adopt_or_refuse(bsctp_stack_t *st, bsctp_o2o_sock_t *s)
{
    bsctp_link_t *l = &st->links[s->link];
    bsctp_o2o_sock_t *cur = l->o2o;
    bool known = !l->stranger || l->user != NULL;
    struct sctp_status status;
    socklen_t slen = sizeof(status);
    memset(&status, 0, sizeof(status));
    if (cur == NULL || (cur->outbound && known && !we_are_lower(st, l))) {
        link_use(st, l, s);
        if (usrsctp_getsockopt(s->so, IPPROTO_SCTP, SCTP_STATUS, &status, &slen) == 0) {
            l->out_streams = status.sstat_outstrms;   /* its COMM_UP repeats it */
        }
    } else {
        st->style_state->stats.elections++;
        shut(s);
    }
}

static void accept_all(bsctp_stack_t *st)
{
    bsctp_o2o_t *o = st->style_state;
    o->listen_ready = false;
    for (;;) {
        struct sockaddr_storage from;
        socklen_t fromlen = sizeof(from);
        memset(&from, 0, sizeof(from));
        struct socket *so = usrsctp_accept(st->so, (struct sockaddr *) &from, &fromlen);
        if (so == NULL) {
            break;   /* EWOULDBLOCK: none left */
        }
        /* conn: the link its datagrams came from; inet: its address and
         * UDP port (a stranger link until it identifies itself). */
        int link = st->mode->accepted_link(st, so, (struct sockaddr *) &from, fromlen);
        bsctp_o2o_sock_t *s = NULL;
        if (link < 0 || usrsctp_set_non_blocking(so, 1) != 0
            || (s = sock_new(st, so, (uint32_t) link, false)) == NULL) {
            o->stats.refused++;   /* reached us through another stack's address */
            close_so(st, so, true);
            continue;
        }
        o->stats.accepts++;
        /* Not all of the listener's settings reach the accepted socket
         * (its latency showed Nagle's wait): set them again. */
        char err[256];
        (void) bsctp_core_set_options(st, so, err, sizeof(err));
        adopt_or_refuse(st, s);
    }
}

static void o2o_drain(bsctp_stack_t *st)
{
    bsctp_o2o_t *o = st->style_state;
    if (o == NULL || st->draining) {
        return;
    }
    st->draining = true;
    if (st->mode->threads) {
        uint64_t w = atomic_load_explicit(&inet_wakeups, memory_order_acquire);
        if (w != o->wakeups_seen) {
            o->stats.upcalls += w - o->wakeups_seen;   /* the process's, all stacks */
            o->wakeups_seen = w;   /* a later upcall moves it again */
            o->listen_ready = true;
        }
        /* Every socket, upcall or not: a run at np 4 hung with a peer's
         * messages in usrsctp (its DATA chunks counted in) that no upcall
         * announced. An empty read is cheap beside the threads' latency. */
        for (size_t i = 0; i < o->num_socks; i++) {
            mark_ready(o->socks[i]);
        }
    }
    if (o->listen_ready && st->so != NULL && !st->closing) {
        accept_all(st);
    }
    bsctp_o2o_sock_t *s;
    while ((s = o->ready) != NULL) {
        o->ready = s->next_ready;
        s->ready = false;   /* an upcall while reading puts it back */
        s->next_ready = NULL;
        read_sock(st, s);
    }
    if (o->ident_owed) {
        o->ident_owed = false;
        for (size_t i = 0; i < o->num_socks; i++) {
            bsctp_link_t *l = &st->links[o->socks[i]->link];
            if (l->o2o == o->socks[i] && l->ident_rx && !l->ident_tx
                && st->rx.identify(st, o->socks[i]->link) != 0) {
                o->ident_owed = true;
            }
        }
    }
    sweep(st);
    st->draining = false;
}

/* ---------------------------------------------------- set-up, close */

static int o2o_init(bsctp_stack_t *st, char *err, size_t errlen)
{
    bsctp_o2o_t *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    o->next_id = FIRST_ID;
    o->listen_ready = true;
    st->style_state = o;
    if (usrsctp_set_upcall(st->so, st->mode->threads ? on_inet_upcall : on_listen_upcall, st) != 0) {
        snprintf(err, errlen, "usrsctp_set_upcall: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void o2o_shutdown(bsctp_stack_t *st)
{
    bsctp_o2o_t *o = st->style_state;
    if (st->so != NULL) {
        stop_upcalls(st, st->so);
    }
    for (size_t i = 0; o != NULL && i < o->num_socks; i++) {
        shut(o->socks[i]);
    }
}

/* Reading closes the sockets whose association is gone. */
static void o2o_reap(bsctp_stack_t *st)
{
    o2o_drain(st);
}

static size_t o2o_live(const bsctp_stack_t *st)
{
    const bsctp_o2o_t *o = st->style_state;
    return o != NULL ? o->num_socks : 0;
}

static void o2o_fini(bsctp_stack_t *st)
{
    bsctp_o2o_t *o = st->style_state;
    if (o == NULL) {
        return;
    }
    for (size_t i = 0; i < o->num_socks; i++) {
        close_so(st, o->socks[i]->so, true);   /* not gone within the close wait */
        free(o->socks[i]);
    }
    for (uint32_t i = 0; i < st->num_links; i++) {
        st->links[i].o2o = NULL;
    }
    free(o->socks);
    free(o);
    st->style_state = NULL;
}

static void o2o_describe(const bsctp_stack_t *st, char *buf, size_t len)
{
    const bsctp_o2o_t *o = st->style_state;
    buf[0] = '\0';
    if (o != NULL) {
        snprintf(buf, len, " connects=%llu accepts=%llu elections=%llu dropped=%llu upcalls=%llu",
                 (unsigned long long) o->stats.connects, (unsigned long long) o->stats.accepts,
                 (unsigned long long) o->stats.elections, (unsigned long long) o->stats.dropped,
                 (unsigned long long) o->stats.upcalls);
    }
}

const bsctp_style_t bsctp_style_one_to_one = {
    .name = "one-to-one",
    .socket_type = SOCK_STREAM,
    .backlog = 128,
    .module_per_interface = true,
    .port_is_identity = true,
    .init = o2o_init,
    .send = o2o_send,
    .assoc_socket = o2o_assoc_socket,
    .abort = o2o_abort,
    .link_of_assoc = NULL,
    .drain = o2o_drain,
    .shutdown = o2o_shutdown,
    .reap = o2o_reap,
    .live = o2o_live,
    .fini = o2o_fini,
    .describe = o2o_describe,
};

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The one-to-many style: one SOCK_SEQPACKET socket (st->so) for every
 * association. A send names its peer's address and makes the association
 * on first use; usrsctp_recvv returns the messages of every association
 * in turn, each with the peer's address and the association id, which
 * name its link (by id first: a multihomed peer's messages come from any
 * of its addresses).
 */
#include "btl_sctp_style.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

/* Reads at least this often without an upcall (o2m_drain). */
#define UNANNOUNCED_READ_NS 1000000u

/* What an ABORT or EOF carries: usrsctp_sendv refuses a NULL buffer
 * (EFAULT) even for no bytes. */
static const char no_data[1];

/* What usrsctp says when the association an id names is gone. */
static bool association_gone(int e)
{
    return e == ENOENT || e == ECONNRESET || e == EPIPE || e == ENOTCONN;
}

static long o2m_send(bsctp_stack_t *st, uint32_t link, const void *data, size_t len,
                     struct sctp_sndinfo *info)
{
    bsctp_link_t *l = &st->links[link];
    if (l->assoc_id != 0) {
        /* By its id, not the peer's address: an address usrsctp does not
         * find in the association (a multihomed peer's other one) makes it
         * start a second association with the data queued on it, silently
         * (seen in inet mode: HPCC hung with hundreds of messages sent and
         * never on the wire). */
        info->snd_assoc_id = (sctp_assoc_t) l->assoc_id;
        ssize_t n = usrsctp_sendv(st->so, data, len, NULL, 0, info, sizeof(*info),
                                  SCTP_SENDV_SNDINFO, 0);
        if (n < 0 && association_gone(errno)) {
            /* Its notification, read next, says whether the peer is lost
             * (the job ends) or the link starts a new association. */
            errno = EAGAIN;
        }
        return (long) n;
    }
    struct sockaddr_storage to;
    socklen_t tolen;
    st->mode->peer_sockaddr(st, link, &to, &tolen);
    if (l->assoc_id == 0 && st->mode->prepare_send != NULL) {
        st->mode->prepare_send(st, st->so, link);
    }
    (void) tolen;   /* usrsctp_sendv takes an address count, not a length */
    ssize_t n = usrsctp_sendv(st->so, data, len, (struct sockaddr *) &to, 1, info, sizeof(*info),
                              SCTP_SENDV_SNDINFO, 0);
    if (n >= 0 && l->assoc_id == 0) {
        /* The association the first send made: for notifications about it. */
        l->assoc_id = (uint32_t) usrsctp_getassocid(st->so, (struct sockaddr *) &to);
    }
    return (long) n;
}

static bool o2m_assoc_socket(const bsctp_stack_t *st, const bsctp_link_t *l, struct socket **so,
                             uint32_t *assoc_id)
{
    *so = st->so;
    *assoc_id = l->assoc_id;
    return st->so != NULL && l->assoc_id != 0;
}

static void o2m_abort(bsctp_stack_t *st, bsctp_link_t *l)
{
    if (l->assoc_id != 0 && st->so != NULL) {
        struct sctp_sndinfo info = {.snd_flags = SCTP_ABORT, .snd_assoc_id = l->assoc_id};
        (void) usrsctp_sendv(st->so, no_data, 0, NULL, 0, &info, sizeof(info), SCTP_SENDV_SNDINFO,
                             0);
    }
}

/* The length of a packed address of usrsctp's, 0 for a family it has none of. */
static socklen_t sockaddr_len(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET    ? sizeof(struct sockaddr_in)
           : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
           : sa->sa_family == AF_CONN  ? sizeof(struct sockaddr_conn)
                                       : 0;
}

/* An association the peer made: one of its addresses names the link (a
 * multihomed peer has several; packed, each as long as its family says);
 * none known: a stranger named by the first (inet; in conn mode every
 * peer's link comes from its datagrams). */
static int o2m_link_of_assoc(bsctp_stack_t *st, uint32_t assoc_id)
{
    if (st->so == NULL) {
        return -1;
    }
    struct sockaddr *addrs = NULL;
    int n = usrsctp_getpaddrs(st->so, (sctp_assoc_t) assoc_id, &addrs);
    int link = -1;
    const uint8_t *p = (const uint8_t *) addrs;
    for (int i = 0; i < n && addrs != NULL && link < 0; i++) {
        const struct sockaddr *sa = (const struct sockaddr *) p;
        socklen_t len = sockaddr_len(sa);
        if (len == 0) {
            break;
        }
        link = st->mode->link_of_sockaddr(st, sa, len, false);
        p += len;
    }
    if (link < 0 && n > 0 && addrs != NULL && addrs[0].sa_family != AF_CONN) {
        link = st->mode->link_of_sockaddr(st, addrs, sockaddr_len(addrs), true);
    }
    if (addrs != NULL) {
        usrsctp_freepaddrs(addrs);
    }
    return link;
}

/* The link of a message's association; a peer address names a link with
 * none yet (a stranger's first message in inet mode). */
static int link_of_message(bsctp_stack_t *st, uint32_t assoc_id, const struct sockaddr *from,
                           socklen_t fromlen)
{
    for (uint32_t i = 0; assoc_id != 0 && i < st->num_links; i++) {
        if (st->links[i].assoc_id == assoc_id) {
            return (int) i;
        }
    }
    int link = assoc_id != 0 ? o2m_link_of_assoc(st, assoc_id) : -1;
    return link >= 0 ? link : st->mode->link_of_sockaddr(st, from, fromlen, true);
}

/* Read what waits; data too unless closing (then only notifications count). */
static void read_all(bsctp_stack_t *st, bool data)
{
    for (;;) {
        bsctp_read_t r;
        long n = bsctp_core_recv(st, st->so, &r);
        if (n < 0) {
            break;   /* EWOULDBLOCK: drained */
        }
        if (r.flags & MSG_NOTIFICATION) {
            st->rx.notification(st, r.flags, st->rxbuf, (size_t) n);
            continue;
        }
        if (!data) {
            continue;   /* for a process that is finalizing: dropped */
        }
        int link = r.has_info ? link_of_message(st, (uint32_t) r.rcv.rcv_assoc_id,
                                                (struct sockaddr *) &r.from, r.fromlen)
                              : -1;
        if (link < 0) {
            st->stats.rx_bad++;
            continue;
        }
        st->rx.message(st, (uint32_t) link, (uint32_t) r.rcv.rcv_assoc_id, r.rcv.rcv_sid,
                       r.flags, st->rxbuf, (size_t) n);
    }
}

static void o2m_drain(bsctp_stack_t *st)
{
    if (st->draining || st->so == NULL) {
        return;
    }
    /* Without threads usrsctp's upcall says there is something: an empty
     * read (locks, the socket's queue) is most of an idle pass. But it
     * calls the upcall after input only: after its timers only on a
     * socket error (none in this style), never from our own calls (an
     * abort, a failed send). What those queue (an association lost after
     * its retransmissions, a send that failed) is read within a
     * millisecond. */
    if (!st->mode->threads && !st->so_readable
        && st->polled_ns - st->so_read_ns < UNANNOUNCED_READ_NS) {
        return;
    }
    st->so_readable = false;   /* an upcall while reading sets it again */
    st->so_read_ns = st->polled_ns;
    st->draining = true;
    read_all(st, true);
    st->draining = false;
}

/* Mode conn: usrsctp calls this on our thread, from usrsctp_conninput or
 * its timers, whenever st->so's buffers or state change. */
static void on_upcall(struct socket *so, void *arg, int flags)
{
    bsctp_stack_t *st = arg;
    (void) so;
    (void) flags;
    st->so_readable = true;
}

static int o2m_init(bsctp_stack_t *st, char *err, size_t errlen)
{
    st->so_readable = true;
    if (!st->mode->threads && usrsctp_set_upcall(st->so, on_upcall, st) != 0) {
        snprintf(err, errlen, "usrsctp_set_upcall: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Graceful: queued data goes out, then SHUTDOWN; the peers see a
 * shutdown, not a lost association. */
static void o2m_shutdown(bsctp_stack_t *st)
{
    for (uint32_t i = 0; st->so != NULL && i < st->num_links; i++) {
        if (st->links[i].assoc_id != 0) {
            struct sctp_sndinfo info = {.snd_flags = SCTP_EOF,
                                        .snd_assoc_id = st->links[i].assoc_id};
            (void) usrsctp_sendv(st->so, no_data, 0, NULL, 0, &info, sizeof(info),
                                 SCTP_SENDV_SNDINFO, 0);
        }
    }
}

/* The associations' ends arrive as notifications. */
static void o2m_reap(bsctp_stack_t *st)
{
    if (st->so != NULL) {
        read_all(st, false);
    }
}

static size_t o2m_live(const bsctp_stack_t *st)
{
    size_t n = 0;
    for (uint32_t i = 0; st->so != NULL && i < st->num_links; i++) {
        n += st->links[i].assoc_id != 0;
    }
    return n;
}

static void o2m_fini(bsctp_stack_t *st)
{
    /* The mode closes the socket: what is left goes with it. */
    if (st->so != NULL && !st->mode->threads) {
        (void) usrsctp_set_upcall(st->so, NULL, NULL);
    }
}

static void o2m_describe(const bsctp_stack_t *st, char *buf, size_t len)
{
    (void) st;
    if (len > 0) {
        buf[0] = '\0';
    }
}

const bsctp_style_t bsctp_style_one_to_many = {
    .name = "one-to-many",
    .socket_type = SOCK_SEQPACKET,
    .backlog = 1,
    .module_per_interface = false,
    .port_is_identity = false,
    .init = o2m_init,
    .send = o2m_send,
    .assoc_socket = o2m_assoc_socket,
    .abort = o2m_abort,
    .link_of_assoc = o2m_link_of_assoc,
    .drain = o2m_drain,
    .shutdown = o2m_shutdown,
    .reap = o2m_reap,
    .live = o2m_live,
    .fini = o2m_fini,
    .describe = o2m_describe,
};

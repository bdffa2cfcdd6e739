/*
 * The one-to-one socket style (btl_sctp_style one-to-one): a SOCK_STREAM
 * usrsctp socket per association, made by a non-blocking connect on the
 * first send to a link or accepted from the stack's listener. Sockets are
 * read only when usrsctp's upcall (run on our thread inside
 * usrsctp_conninput / usrsctp_handle_timers in conn mode) marked them
 * readable. Election (docs/sctp-one-to-one.md): data flows on ONE
 * association per pair, the one made by the lower (jobid, vpid); the other
 * carries at most identifications and is shut down gracefully.
 */
#ifndef BTL_SCTP_ONE2ONE_H
#define BTL_SCTP_ONE2ONE_H

#include "btl_sctp_stack.h"

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

typedef struct bsctp_o2o {
    bsctp_o2o_sock_t **socks;
    size_t num_socks, cap_socks;
    bsctp_o2o_sock_t *ready;   /* readable sockets, newest first */
    bool listen_ready;        /* the listener may have associations to accept */
    bool ident_owed;          /* an identification that confirms an association failed to go */
    uint32_t next_id;
    uint64_t wakeups_seen;    /* inet mode: the upcall counter at the last drain */
    bsctp_o2o_stats_t stats;
} bsctp_o2o_t;

#endif

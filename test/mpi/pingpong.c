/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * pingpong.c - paired ping-pong (0<->1, 2<->3, ...; with an odd np the last
 * rank only joins the barriers) over every power of two from 0 B to 16 MiB
 * plus odd sizes around the eager / rendezvous / pipeline limits, both
 * directions, several iterations, every byte checked both ways.
 *
 * Iteration 0 uses MPI_Send / MPI_Recv with an exact-size receive,
 * iteration 1 MPI_Ssend / MPI_Irecv with a receive buffer larger than the
 * message, iteration 2 MPI_Isend / MPI_Irecv posted before the peer sends.
 * Bytes after the message in the receive buffer must stay untouched.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 3
#define GUARD 64
#define GUARD_BYTE 0xa5

static const size_t odd_sizes[] = {
    3, 7, 1023, 1025, 4095, 4097, 8191, 8193, 12287, 12289,
    65535, 65536 - 56, 65536 - 57, 65537, 65536 + 56,
    131071, 131073, 262143, 262145, 1048575, 1048577, 3 * 1048576 + 7,
};

static size_t sizes[64];
static int nsizes;

static void build_sizes(void)
{
    sizes[nsizes++] = 0;
    for (size_t s = 1; s <= 16u << 20; s <<= 1)
        sizes[nsizes++] = s;
    for (size_t i = 0; i < sizeof odd_sizes / sizeof odd_sizes[0]; i++)
        sizes[nsizes++] = odd_sizes[i];
}

/* Receive `len` bytes from `peer` as message `idx` and check everything. */
static void recv_check(unsigned char *rbuf, size_t len, int peer, int tag,
                       uint64_t idx, int iter, MPI_Comm comm)
{
    MPI_Status st;
    MPI_Request rq;
    size_t count = len + (iter == 0 ? 0 : GUARD);

    memset(rbuf + len, GUARD_BYTE, GUARD);
    if (iter == 0) {
        MT_MPI(MPI_Recv(rbuf, (int)count, MPI_BYTE, peer, tag, comm, &st));
    } else {
        MT_MPI(MPI_Irecv(rbuf, (int)count, MPI_BYTE, peer, tag, comm, &rq));
        MT_MPI(MPI_Wait(&rq, &st));
    }
    mt_check_status(&st, peer, tag, len, "pingpong size %zu iter %d", len,
                    iter);
    mt_check(rbuf, len, peer, idx, 0, "pingpong recv size %zu iter %d from %d",
             len, iter, peer);
    mt_check_const(rbuf + len, GUARD, GUARD_BYTE,
                   "pingpong guard after %zu-byte message iter %d", len, iter);
}

static void send_msg(unsigned char *sbuf, size_t len, int peer, int tag,
                     int iter, MPI_Comm comm)
{
    if (mt_hang_skip())
        return;
    if (iter == 0) {
        MT_MPI(MPI_Send(sbuf, (int)len, MPI_BYTE, peer, tag, comm));
    } else if (iter == 1) {
        MT_MPI(MPI_Ssend(sbuf, (int)len, MPI_BYTE, peer, tag, comm));
    } else {
        MPI_Request rq;
        MT_MPI(MPI_Isend(sbuf, (int)len, MPI_BYTE, peer, tag, comm, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    unsigned char *sbuf, *rbuf;
    size_t maxlen = 0;
    double bytes = 0;
    int peer, first, iters;

    mt_init(&argc, &argv, "pingpong");
    build_sizes();
    iters = ITERS * mt_scale();
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > maxlen)
            maxlen = sizes[i];

    peer = mt_rank ^ 1;
    if (peer >= mt_size)
        peer = -1; /* odd np: last rank idles */
    first = (mt_rank & 1) == 0; /* even rank sends first */

    sbuf = mt_malloc(maxlen + GUARD);
    rbuf = mt_malloc(maxlen + GUARD);

    if (peer >= 0) {
        for (int si = 0; si < nsizes; si++) {
            size_t len = sizes[si];
            int tag = si;
            for (int it = 0; it < iters; it++) {
                int iter = it % ITERS; /* selects the send/receive mode */
                /* message index: unique per (size, iteration, direction) */
                uint64_t idx = ((uint64_t)si * (uint64_t)iters + (uint64_t)it) * 2;
                if (iter == 2) {
                    /* pre-post the receive of the reply before sending */
                    MPI_Request rq;
                    MPI_Status st;
                    memset(rbuf + len, GUARD_BYTE, GUARD);
                    if (first) {
                        MT_MPI(MPI_Irecv(rbuf, (int)(len + GUARD), MPI_BYTE,
                                         peer, tag, MPI_COMM_WORLD, &rq));
                        mt_fill(sbuf, len, mt_rank, idx, 0);
                        send_msg(sbuf, len, peer, tag, iter, MPI_COMM_WORLD);
                        MT_MPI(MPI_Wait(&rq, &st));
                        mt_check_status(&st, peer, tag, len,
                                        "pingpong reply size %zu", len);
                        mt_check(rbuf, len, peer, idx + 1, 0,
                                 "pingpong reply size %zu iter %d from %d",
                                 len, iter, peer);
                        mt_check_const(rbuf + len, GUARD, GUARD_BYTE,
                                       "pingpong guard after %zu-byte reply",
                                       len);
                    } else {
                        MT_MPI(MPI_Irecv(rbuf, (int)(len + GUARD), MPI_BYTE,
                                         peer, tag, MPI_COMM_WORLD, &rq));
                        MT_MPI(MPI_Wait(&rq, &st));
                        mt_check_status(&st, peer, tag, len,
                                        "pingpong size %zu", len);
                        mt_check(rbuf, len, peer, idx, 0,
                                 "pingpong recv size %zu iter %d from %d",
                                 len, iter, peer);
                        mt_check_const(rbuf + len, GUARD, GUARD_BYTE,
                                       "pingpong guard after %zu-byte message",
                                       len);
                        mt_fill(sbuf, len, mt_rank, idx + 1, 0);
                        send_msg(sbuf, len, peer, tag, iter, MPI_COMM_WORLD);
                    }
                } else if (first) {
                    mt_fill(sbuf, len, mt_rank, idx, 0);
                    send_msg(sbuf, len, peer, tag, iter, MPI_COMM_WORLD);
                    recv_check(rbuf, len, peer, tag, idx + 1, iter,
                               MPI_COMM_WORLD);
                } else {
                    recv_check(rbuf, len, peer, tag, idx, iter, MPI_COMM_WORLD);
                    mt_fill(sbuf, len, mt_rank, idx + 1, 0);
                    send_msg(sbuf, len, peer, tag, iter, MPI_COMM_WORLD);
                }
                bytes += (double)len;
            }
        }
    }

    free(sbuf);
    free(rbuf);
    {
        double mib = mt_total_mib(bytes);
        mt_finish("pairs=%d sizes=%d iters=%d checked=%.1fMiB", mt_size / 2,
                  nsizes, iters, mib);
    }
    return 0;
}

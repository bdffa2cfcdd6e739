/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * flood.c - many outstanding nonblocking messages both ways between each
 * rank and its ring neighbours (r-1, r+1) and its opposite rank (r+np/2).
 *
 * Per round and per peer WINDOW messages are in flight in each direction,
 * with mixed sizes (0 B .. 1 MiB, fixed-seed random, mostly small), four
 * different tags, receives posted before the sends on even rounds and
 * after them (unexpected messages) on odd rounds, some receive buffers
 * larger than the message.  Everything is completed with one MPI_Waitall
 * and every byte (plus guard bytes after each message) is checked.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 128
#define ROUNDS 6
#define NTAGS 4
#define GUARD 16
#define GUARD_BYTE 0x5a
#define MAXPEERS 4

/* Size of message i of round `round` from `src` to `dst`: same on both
 * sides.  Mostly small, some around the eager limit, a few large. */
static size_t msg_size(int src, int dst, int round, int i)
{
    uint64_t st = mt_hash3((uint64_t)src << 32 | (uint32_t)dst,
                           (uint64_t)round, (uint64_t)i);
    uint64_t r = mt_rand(&st) % 1000;

    if (i == 0)
        return 0;
    if (i == 1)
        return (size_t)1 << 20; /* always one of the maximum size */
    if (r < 100)
        return 0;
    if (r < 550)
        return (size_t)mt_range(&st, 1, 256);
    if (r < 800)
        return (size_t)mt_range(&st, 257, 16384);
    if (r < 930)
        return (size_t)mt_range(&st, 60000, 140000); /* eager/rndv edge */
    if (r < 985)
        return (size_t)mt_range(&st, 140001, 400000);
    return (size_t)mt_range(&st, 400001, 1 << 20);
}

static uint64_t msg_idx(int dst, int round, int i)
{
    return ((uint64_t)(uint32_t)dst << 40) | ((uint64_t)round << 20) |
           (uint64_t)i;
}

int main(int argc, char **argv)
{
    int peers[MAXPEERS], npeers = 0;
    unsigned char *sbuf[MAXPEERS][WINDOW], *rbuf[MAXPEERS][WINDOW];
    size_t rlen[MAXPEERS][WINDOW];
    MPI_Request reqs[2 * MAXPEERS * WINDOW];
    MPI_Status stats[2 * MAXPEERS * WINDOW];
    double bytes = 0;
    long nmsgs = 0;

    mt_init(&argc, &argv, "flood");
    /* MPITEST_HANG: rank 0 blocks in a receive nobody matches (skipping a
     * send here would shift the matching and fail instead of hanging) */
    mt_hang_point();

    /* distinct peers: right, left, opposite (never self unless np == 1) */
    {
        int cand[3] = {(mt_rank + 1) % mt_size,
                       (mt_rank - 1 + mt_size) % mt_size,
                       (mt_rank + mt_size / 2) % mt_size};
        for (int c = 0; c < 3; c++) {
            int dup = 0;
            if (cand[c] == mt_rank && mt_size > 1)
                continue;
            for (int p = 0; p < npeers; p++)
                if (peers[p] == cand[c])
                    dup = 1;
            if (!dup)
                peers[npeers++] = cand[c];
        }
    }
    /* Peer relation is symmetric: right<->left, opposite<->opposite (for
     * even np; for odd np r+np/2 and r-np/2 differ, so add both). */
    if (mt_size % 2 == 1 && mt_size > 2) {
        int other = (mt_rank - mt_size / 2 + mt_size) % mt_size;
        int dup = 0;
        for (int p = 0; p < npeers; p++)
            if (peers[p] == other)
                dup = 1;
        if (!dup && npeers < MAXPEERS)
            peers[npeers++] = other;
        else if (!dup)
            mt_fail(MT_EXIT_ERROR, "too many peers");
    }

    const int rounds = ROUNDS * mt_scale();

    for (int round = 0; round < rounds; round++) {
        int nreq = 0;
        int recv_first = (round % 2) == 0;

        /* allocate and fill */
        for (int p = 0; p < npeers; p++) {
            for (int i = 0; i < WINDOW; i++) {
                size_t sl = msg_size(mt_rank, peers[p], round, i);
                size_t rl = msg_size(peers[p], mt_rank, round, i);
                sbuf[p][i] = mt_malloc(sl);
                mt_fill(sbuf[p][i], sl, mt_rank, msg_idx(peers[p], round, i),
                        0);
                rlen[p][i] = rl;
                rbuf[p][i] = mt_malloc(rl + GUARD);
                memset(rbuf[p][i] + rl, GUARD_BYTE, GUARD);
            }
        }

        for (int phase = 0; phase < 2; phase++) {
            int do_recv = (phase == 0) == recv_first;
            if (!recv_first && phase == 1) {
                /* give the sends a head start so receives find them
                 * in the unexpected queue */
                MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            }
            for (int i = 0; i < WINDOW; i++) {
                for (int p = 0; p < npeers; p++) {
                    int tag = i % NTAGS;
                    if (do_recv) {
                        int extra = (i % 3 == 0) ? GUARD : 0;
                        MT_MPI(MPI_Irecv(rbuf[p][i], (int)(rlen[p][i] + extra),
                                         MPI_BYTE, peers[p], tag,
                                         MPI_COMM_WORLD, &reqs[nreq++]));
                    } else {
                        size_t sl = msg_size(mt_rank, peers[p], round, i);
                        MT_MPI(MPI_Isend(sbuf[p][i], (int)sl, MPI_BYTE,
                                         peers[p], tag, MPI_COMM_WORLD,
                                         &reqs[nreq++]));
                    }
                }
            }
        }
        MT_MPI(MPI_Waitall(nreq, reqs, stats));

        /* check: the receive requests are the first or second half */
        for (int p = 0; p < npeers; p++) {
            for (int i = 0; i < WINDOW; i++) {
                int ri = (recv_first ? 0 : npeers * WINDOW) + i * npeers + p;
                size_t rl = rlen[p][i];
                mt_check_status(&stats[ri], peers[p], i % NTAGS, rl,
                                "flood round %d msg %d from %d", round, i,
                                peers[p]);
                mt_check(rbuf[p][i], rl, peers[p], msg_idx(mt_rank, round, i),
                         0, "flood round %d msg %d from %d", round, i,
                         peers[p]);
                mt_check_const(rbuf[p][i] + rl, GUARD, GUARD_BYTE,
                               "flood guard after round %d msg %d from %d",
                               round, i, peers[p]);
                bytes += (double)rl;
                nmsgs++;
                free(rbuf[p][i]);
                free(sbuf[p][i]);
            }
        }
    }

    {
        double mib = mt_total_mib(bytes);
        long tm = mt_total_count(nmsgs);
        mt_finish("window=%d rounds=%d msgs=%ld checked=%.1fMiB", WINDOW,
                  rounds, tm, mib);
    }
    return 0;
}

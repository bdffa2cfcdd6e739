/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * threads.c - MPI_THREAD_MULTIPLE: NTHREADS threads per rank communicate
 * concurrently with the ring neighbours, each on its own dup'ed
 * communicator (tag = thread id) and at the same time on MPI_COMM_WORLD
 * (tag 100 + thread id), mixed sizes 0 B .. 1 MiB, windows of nonblocking
 * requests on even rounds and MPI_Sendrecv on odd rounds.  Every byte is
 * checked; a message delivered to the wrong thread fails the pattern.
 * Fails clearly if the library does not provide MPI_THREAD_MULTIPLE.
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define ROUNDS 8
#define WIN 8
#define GUARD 16
#define GUARD_BYTE 0x3c

static MPI_Comm tcomm[NTHREADS];
static int left, right;

typedef struct {
    int t;
    double bytes;
    long msgs;
} targ_t;

static size_t tsize(int src, int t, int kind, int round, int i)
{
    uint64_t st = mt_hash3((uint64_t)src << 8 | (uint64_t)t,
                           (uint64_t)kind << 16 | (uint64_t)round,
                           (uint64_t)i);
    uint64_t r = mt_rand(&st) % 100;

    if (r < 10)
        return 0;
    if (r < 55)
        return (size_t)mt_range(&st, 1, 2048);
    if (r < 80)
        return (size_t)mt_range(&st, 2049, 70000);
    if (r < 97)
        return (size_t)mt_range(&st, 70001, 400000);
    return (size_t)mt_range(&st, 400001, 1 << 20);
}

static uint64_t tidx(int t, int kind, int round, int i)
{
    return (uint64_t)kind << 40 | (uint64_t)t << 32 | (uint64_t)round << 16 |
           (uint64_t)i;
}

static void *worker(void *arg)
{
    targ_t *a = arg;
    int t = a->t;
    MPI_Comm comms[2] = {tcomm[t], MPI_COMM_WORLD};
    int tags[2] = {t, 100 + t};
    unsigned char *sb[2][WIN], *rb[2][WIN];
    MPI_Request rq[4 * WIN];
    MPI_Status rs[4 * WIN];

    const int rounds = ROUNDS * mt_scale();

    for (int round = 0; round < rounds; round++) {
        int nr = 0;
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < WIN; i++) {
                size_t sl = tsize(mt_rank, t, k, round, i);
                size_t rl = tsize(left, t, k, round, i);
                sb[k][i] = mt_malloc(sl);
                mt_fill(sb[k][i], sl, mt_rank, tidx(t, k, round, i), 0);
                rb[k][i] = mt_malloc(rl + GUARD);
                memset(rb[k][i] + rl, GUARD_BYTE, GUARD);
            }
        }
        if (round % 2 == 0) {
            /* window: all receives, then all sends, one Waitall */
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < WIN; i++)
                    MT_MPI(MPI_Irecv(rb[k][i],
                                     (int)(tsize(left, t, k, round, i) + GUARD),
                                     MPI_BYTE, left, tags[k], comms[k],
                                     &rq[nr++]));
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < WIN; i++) {
                    MT_MPI(MPI_Isend(sb[k][i],
                                     (int)tsize(mt_rank, t, k, round, i),
                                     MPI_BYTE, right, tags[k], comms[k],
                                     &rq[nr++]));
                }
            MT_MPI(MPI_Waitall(nr, rq, rs));
        } else {
            /* blocking exchanges, alternating communicators */
            for (int i = 0; i < WIN; i++)
                for (int k = 0; k < 2; k++)
                    MT_MPI(MPI_Sendrecv(sb[k][i],
                                        (int)tsize(mt_rank, t, k, round, i),
                                        MPI_BYTE, right, tags[k],
                                        rb[k][i],
                                        (int)tsize(left, t, k, round, i),
                                        MPI_BYTE, left, tags[k], comms[k],
                                        &rs[k * WIN + i]));
        }
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < WIN; i++) {
                size_t rl = tsize(left, t, k, round, i);
                mt_check_status(&rs[k * WIN + i], left, tags[k], rl,
                                "thread %d %s round %d msg %d", t,
                                k ? "world" : "dup", round, i);
                mt_check(rb[k][i], rl, left, tidx(t, k, round, i), 0,
                         "thread %d %s round %d msg %d from %d", t,
                         k ? "world" : "dup", round, i, left);
                mt_check_const(rb[k][i] + rl, GUARD, GUARD_BYTE,
                               "thread %d guard round %d msg %d", t, round, i);
                a->bytes += (double)rl;
                a->msgs++;
                free(rb[k][i]);
                free(sb[k][i]);
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    pthread_t th[NTHREADS];
    targ_t args[NTHREADS];
    double bytes = 0;
    long msgs = 0;

    provided = mt_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, "threads");
    if (provided < MPI_THREAD_MULTIPLE)
        mt_fail(MT_EXIT_ERROR, "MPI_THREAD_MULTIPLE not provided (provided=%d,"
                " required=%d)", provided, MPI_THREAD_MULTIPLE);

    mt_hang_point(); /* MPITEST_HANG: rank 0 blocks forever */
    left = (mt_rank - 1 + mt_size) % mt_size;
    right = (mt_rank + 1) % mt_size;
    for (int t = 0; t < NTHREADS; t++)
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));

    for (int t = 0; t < NTHREADS; t++) {
        args[t].t = t;
        args[t].bytes = 0;
        args[t].msgs = 0;
        if (pthread_create(&th[t], NULL, worker, &args[t]) != 0)
            mt_fail(MT_EXIT_ERROR, "pthread_create failed");
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        bytes += args[t].bytes;
        msgs += args[t].msgs;
    }
    for (int t = 0; t < NTHREADS; t++)
        MT_MPI(MPI_Comm_free(&tcomm[t]));

    double mib = mt_total_mib(bytes);
    long tm = mt_total_count(msgs);
    mt_finish("threads=%d msgs=%ld checked=%.1fMiB", NTHREADS, tm, mib);
    return 0;
}

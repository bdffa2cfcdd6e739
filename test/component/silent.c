/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * A rank that computes without calling MPI must not lose its peer: rank 0
 * posts 16 eager-size messages (64 KiB) and one of 4 MiB to rank 1, which
 * computes for SECONDS (default 5) before it receives them and checks every
 * byte. The sender's transport keeps data unacknowledged for that long (a
 * transport whose stack runs only in progress cannot answer). Prints
 * "silent: OK" on rank 0.
 *
 *   silent [SECONDS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMALL 16
#define SMALL_LEN (64 << 10)
#define BIG_LEN (4 << 20)

static unsigned char pattern(int msg, size_t i)
{
    return (unsigned char) (msg * 37 + i * 11 + (i >> 10));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, fail = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    size_t len[SMALL + 1];
    unsigned char *buf[SMALL + 1];
    MPI_Request req[SMALL + 1];
    for (int m = 0; m <= SMALL; m++) {
        len[m] = m < SMALL ? SMALL_LEN : BIG_LEN;
        buf[m] = malloc(len[m]);
        if (buf[m] == NULL) {
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (rank == 0) {
        for (int m = 0; m <= SMALL; m++) {
            for (size_t i = 0; i < len[m]; i++) {
                buf[m][i] = pattern(m, i);
            }
            MPI_Isend(buf[m], (int) len[m], MPI_BYTE, 1, m, MPI_COMM_WORLD, &req[m]);
        }
        MPI_Waitall(SMALL + 1, req, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        /* compute, no MPI call (a busy loop: sleeping would let a progress
         * thread run; none is asked for here) */
        volatile double x = 0;
        while (now() - t0 < seconds) {
            for (int k = 0; k < 100000; k++) {
                x += k * 1e-9;
            }
        }
        long bad = 0;
        for (int m = 0; m <= SMALL; m++) {
            MPI_Recv(buf[m], (int) len[m], MPI_BYTE, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < len[m]; i++) {
                bad += buf[m][i] != pattern(m, i);
            }
        }
        if (bad != 0) {
            printf("silent FAIL rank 1: %ld bytes wrong\n", bad);
            fail = 1;
        }
    }
    double took = now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !fail) {
        printf("silent: OK (rank 1 computed %.1f s; all done after %.1f s)\n", seconds, took);
    }
    for (int m = 0; m <= SMALL; m++) {
        free(buf[m]);
    }
    MPI_Finalize();
    return fail;
}

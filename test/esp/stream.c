/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Rank 0 streams messages (64 KiB, or the size given after the seconds) to
 * rank 1 for the seconds given, 16 in flight, and rank 1 checks every byte.
 * Each rank first prints "pid RANK PID", so test/esp/deadpeer can stop one
 * of them mid-stream. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH 16

static unsigned char pattern(long msg, size_t i)
{
    return (unsigned char) (msg * 131 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    size_t msg = argc > 2 ? (size_t) atol(argv[2]) : 64 * 1024;
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || msg == 0 || msg > (64u << 20)) {
        if (rank == 0) fprintf(stderr, "stream: needs exactly 2 ranks and 1 B .. 64 MiB messages\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("pid %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);

    unsigned char *buf = malloc((size_t) DEPTH * msg);
    MPI_Request req[DEPTH];
    long n = 0, done = 0;
    double end = MPI_Wtime() + seconds;
    if (rank == 0) {
        /* Messages go in rounds of DEPTH; a count of -1 ahead of each round
         * says whether it is the last one. */
        for (;;) {
            long more = MPI_Wtime() < end ? DEPTH : 0;
            MPI_Send(&more, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD);
            if (more == 0) break;
            for (int k = 0; k < DEPTH; k++, n++) {
                unsigned char *b = buf + (size_t) k * msg;
                for (size_t i = 0; i < msg; i++) b[i] = pattern(n, i);
                MPI_Isend(b, msg, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[k]);
            }
            MPI_Waitall(DEPTH, req, MPI_STATUSES_IGNORE);
        }
    } else {
        for (;;) {
            long more;
            MPI_Recv(&more, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (more == 0) break;
            for (int k = 0; k < DEPTH; k++) {
                MPI_Irecv(buf + (size_t) k * msg, msg, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[k]);
            }
            MPI_Waitall(DEPTH, req, MPI_STATUSES_IGNORE);
            for (int k = 0; k < DEPTH; k++, n++) {
                const unsigned char *b = buf + (size_t) k * msg;
                for (size_t i = 0; i < msg; i++) {
                    if (b[i] != pattern(n, i)) {
                        fprintf(stderr, "stream: MISMATCH in message %ld at byte %zu\n", n, i);
                        MPI_Abort(MPI_COMM_WORLD, 3);
                    }
                }
            }
        }
        done = n;
        printf("stream: %ld messages of %zu bytes ok\n", done, msg);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

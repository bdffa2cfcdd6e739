/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* A 2-rank job for the package test: rank 0 sends messages from 1 byte to
 * 1 MiB (eager, rendezvous, several fragments), rank 1 checks every byte and
 * sends each back, rank 0 checks the echo. Prints "check: ok" from rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(size_t i, int size, int round)
{
    return (unsigned char)(i * 131u + (unsigned)size * 7u + (unsigned)round * 29u + 1u);
}

static int bad_bytes(const unsigned char *buf, int size, int round)
{
    int bad = 0;
    for (int i = 0; i < size; i++)
        bad += buf[i] != pattern((size_t)i, size, round);
    return bad;
}

int main(int argc, char **argv)
{
    static const int sizes[] = { 1, 8, 1000, 4096, 65536, 300000, 1 << 20 };
    int rank, nranks, bad = 0;
    long moved = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0) fprintf(stderr, "check: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc(1 << 20);
    if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int round = 0; round < 3; round++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            int size = sizes[s];
            if (rank == 0) {
                for (int i = 0; i < size; i++) buf[i] = pattern((size_t)i, size, round);
                MPI_Send(buf, size, MPI_BYTE, 1, round, MPI_COMM_WORLD);
                for (int i = 0; i < size; i++) buf[i] = 0;
                MPI_Recv(buf, size, MPI_BYTE, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int i = 0; i < size; i++) buf[i] = 0;
                MPI_Recv(buf, size, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad += bad_bytes(buf, size, round);
                MPI_Send(buf, size, MPI_BYTE, 0, round, MPI_COMM_WORLD);
            }
            if (rank == 0) bad += bad_bytes(buf, size, round);
            moved += 2L * size;
        }
    }
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all) printf("check: WRONG DATA: %d bad bytes\n", all);
        else printf("check: ok, %ld bytes checked\n", moved);
    }
    free(buf);
    MPI_Finalize();
    return all ? 1 : 0;
}

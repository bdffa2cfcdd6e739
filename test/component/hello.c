/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Smallest MPI job: every rank sends its rank to rank 0, which checks them. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        for (int src = 1; src < size; src++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, src, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += (v != src);
        }
        printf(bad ? "hello: WRONG DATA\n" : "hello: %d ranks ok\n", size);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}

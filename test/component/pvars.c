/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * A BTL's counters are MPI_T performance variables: find a counter of sent
 * messages and one of received bytes (default btl_esp_segs_tx and
 * btl_esp_bytes_rx; argv[1] and argv[2] name others, e.g. btl_sctp_tx_msgs
 * btl_sctp_rx_bytes), read them around 100 ping-pongs of 1 KiB, and check
 * they grew by at least what was sent. Prints "pvars: OK" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "find_pvar.h"

static unsigned long long read_pvar(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(s, h, &v);
    return v;
}

int main(int argc, char **argv)
{
    int provided, rank, fail = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *names[2] = {argc > 2 ? argv[1] : "btl_esp_segs_tx",
                            argc > 2 ? argv[2] : "btl_esp_bytes_rx"};
    MPI_T_pvar_session session;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle h[2];
    for (int k = 0; k < 2; k++) {
        int idx = find_pvar(names[k]), count;
        if (idx < 0) {
            printf("pvars FAIL rank %d: no performance variable %s\n", rank, names[k]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_T_pvar_handle_alloc(session, idx, NULL, &h[k], &count);
    }
    unsigned long long before[2] = {read_pvar(session, h[0]), read_pvar(session, h[1])};
    char buf[1024];
    memset(buf, rank, sizeof(buf));
    for (int i = 0; i < 100; i++) {
        if (rank == 0) {
            MPI_Send(buf, sizeof(buf), MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, sizeof(buf), MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, sizeof(buf), MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, sizeof(buf), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    unsigned long long after[2] = {read_pvar(session, h[0]), read_pvar(session, h[1])};
    if (rank < 2 && (after[0] - before[0] < 100 || after[1] - before[1] < 100 * sizeof(buf))) {
        printf("pvars FAIL rank %d: %s grew %llu (want >= 100), %s %llu (want >= %zu)\n", rank,
               names[0], after[0] - before[0], names[1], after[1] - before[1], 100 * sizeof(buf));
        fail = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !fail) {
        printf("pvars: OK (rank 0: %s +%llu, %s +%llu)\n", names[0], after[0] - before[0],
               names[1], after[1] - before[1]);
    }
    for (int k = 0; k < 2; k++) {
        MPI_T_pvar_handle_free(session, &h[k]);
    }
    MPI_T_pvar_session_free(&session);
    /* MPI_T first: Open MPI 4.1.4 crashes in MPI_T_finalize after
     * MPI_Finalize, with any BTL (docs/known-issues.md). */
    MPI_T_finalize();
    MPI_Finalize();
    return fail;
}

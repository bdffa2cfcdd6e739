/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * esp's per-NIC MPI_T performance variables (one value per NIC of the
 * module): rank 0 streams COUNT messages of SIZE bytes to rank 1 (16 in
 * flight), which checks every byte; then the growth of rank 0's
 * btl_esp_nic_bytes_tx, summed over the NICs, must cover what was sent,
 * and so must rank 1's btl_esp_nic_bytes_rx; with MIN_PER_NIC, every NIC
 * must have carried at least that many bytes each way (several NICs in
 * use at once). btl_esp_nic_paths_dead must read 0 on every NIC, and
 * btl_esp_nic_kernel_drops must exist with a value per NIC.
 * Prints "nic_pvars: OK ..." on rank 0.
 *
 *   nic_pvars [COUNT [SIZE [MIN_PER_NIC]]]   (default 200 65536 0)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "find_pvar.h"

#define DEPTH 16
#define MAX_NICS 64

static unsigned char pattern(long msg, size_t i)
{
    return (unsigned char) (msg * 31 + i * 13 + (i >> 9));
}

int main(int argc, char **argv)
{
    int provided, rank, fail = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long count = argc > 1 ? atol(argv[1]) : 200;
    size_t size = argc > 2 ? (size_t) atol(argv[2]) : 65536;
    unsigned long long min_per_nic = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    if (count < 1 || size < 1 || size > (64u << 20)) {
        if (rank == 0) {
            printf("nic_pvars FAIL: bad arguments\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* nic_kernel_drops: only that it exists, one value per NIC */
    const char *names[4] = {"btl_esp_nic_bytes_tx", "btl_esp_nic_bytes_rx",
                            "btl_esp_nic_paths_dead", "btl_esp_nic_kernel_drops"};
    MPI_T_pvar_session session;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle h[4];
    int nics = 0;
    for (int k = 0; k < 4; k++) {
        int idx = find_pvar(names[k]), n = 0;
        if (idx < 0) {
            printf("nic_pvars FAIL rank %d: no performance variable %s\n", rank, names[k]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_T_pvar_handle_alloc(session, idx, NULL, &h[k], &n);
        if (n < 1 || n > MAX_NICS || (k > 0 && n != nics)) {
            printf("nic_pvars FAIL rank %d: %s has %d values (want 1..%d, one per NIC)\n", rank,
                   names[k], n, MAX_NICS);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        nics = n;
    }
    unsigned long long before[2][MAX_NICS], after[2][MAX_NICS], dead[MAX_NICS];
    for (int k = 0; k < 2; k++) {
        MPI_T_pvar_read(session, h[k], before[k]);
    }

    unsigned char *buf[DEPTH];
    MPI_Request req[DEPTH];
    for (int d = 0; d < DEPTH; d++) {
        buf[d] = malloc(size);
        req[d] = MPI_REQUEST_NULL;
    }
    long bad = 0;
    for (long msg = 0; msg < count; msg++) {
        int d = (int) (msg % DEPTH);
        if (rank == 0) {
            MPI_Wait(&req[d], MPI_STATUS_IGNORE);
            for (size_t i = 0; i < size; i++) {
                buf[d][i] = pattern(msg, i);
            }
            MPI_Isend(buf[d], (int) size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req[d]);
        } else if (rank == 1) {
            MPI_Recv(buf[d], (int) size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < size; i++) {
                bad += buf[d][i] != pattern(msg, i);
            }
        }
    }
    MPI_Waitall(DEPTH, req, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++) {
        MPI_T_pvar_read(session, h[k], after[k]);
    }
    MPI_T_pvar_read(session, h[2], dead);

    /* rank 0 looks at what it sent, rank 1 at what it received */
    int dir = rank == 0 ? 0 : 1;
    unsigned long long sum = 0, least = ~0ull, want = (unsigned long long) count * size;
    char per[MAX_NICS * 24] = "";
    size_t len = 0;
    int dead_now = 0;
    for (int i = 0; i < nics; i++) {
        unsigned long long g = after[dir][i] - before[dir][i];
        sum += g;
        least = g < least ? g : least;
        dead_now += dead[i] != 0;
        len += (size_t) snprintf(per + len, sizeof(per) - len, "%s%llu", i ? "," : "", g);
    }
    if (rank < 2) {
        if (bad != 0) {
            printf("nic_pvars FAIL rank %d: %ld bytes wrong\n", rank, bad);
            fail = 1;
        }
        if (sum < want || least < min_per_nic || dead_now != 0) {
            printf("nic_pvars FAIL rank %d: %s grew %s (sum %llu, want >= %llu; each >= %llu); "
                   "%d NICs with dead paths\n", rank, names[dir], per, sum, want, min_per_nic,
                   dead_now);
            fail = 1;
        }
    }
    char peer_per[sizeof(per)] = "";
    if (rank == 1) {
        MPI_Send(per, (int) sizeof(per), MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(peer_per, (int) sizeof(peer_per), MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !fail) {
        printf("nic_pvars: OK (%d NICs; %ld x %zu bytes; rank 0 nic_bytes_tx +%s; rank 1 "
               "nic_bytes_rx +%s)\n", nics, count, size, per, peer_per);
    }
    for (int k = 0; k < 4; k++) {
        MPI_T_pvar_handle_free(session, &h[k]);
    }
    MPI_T_pvar_session_free(&session);
    for (int d = 0; d < DEPTH; d++) {
        free(buf[d]);
    }
    /* MPI_T first: Open MPI 4.1.4 crashes in MPI_T_finalize after
     * MPI_Finalize, with any BTL (docs/known-issues.md). */
    MPI_T_finalize();
    MPI_Finalize();
    return fail;
}

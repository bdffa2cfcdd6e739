/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* ompi_dt_forward_seek.c - Open MPI 4.1.4 bug reproducer (docs/known-issues.md): minimal standalone reproducer: one derived datatype (vector of
 * 3 blocks of a padded struct {char; double; int[3]; short}, stride 2),
 * one MPI_Send / MPI_Recv of COUNT elements rank 0 -> rank 1, receive
 * compared against an expectation built with memcpy (no MPI datatype engine).
 *   dtrepro [count=8000] [iters=5] [kind=vs]
 * kind: vs = vector-of-struct, s = struct alone (resized 32), v = vector of
 * int blocks (4x3 stride 5 resized 80), vd = vector of 2 doubles stride 3 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

struct S1 { char c; double d; int i[3]; short s; };

int main(int argc, char **argv)
{
    int rank, size, count = argc > 1 ? atoi(argv[1]) : 8000;
    int iters = argc > 2 ? atoi(argv[2]) : 5;
    const char *kind = argc > 3 ? argv[3] : "vs";
    /* mode: tt typed->typed (default), tp typed->MPI_BYTE (receiver contiguous),
     * pt MPI_BYTE->typed (sender contiguous); packing/scattering by memcpy */
    const char *mode = argc > 4 ? argv[4] : "tt";
    MPI_Datatype s1, tmp, t;
    /* field list of one element: offset, length */
    size_t foff[16], flen[16]; int nf = 0; size_t extent;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int bl[4] = {1, 1, 3, 1};
    MPI_Aint dp[4] = {offsetof(struct S1, c), offsetof(struct S1, d),
                      offsetof(struct S1, i), offsetof(struct S1, s)};
    size_t ln[4] = {1, 8, 12, 2};
    MPI_Datatype ty[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
    MPI_Type_create_struct(4, bl, dp, ty, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(struct S1), &s1);
    MPI_Type_free(&tmp);

    if (!strcmp(kind, "vs")) {
        MPI_Type_vector(3, 1, 2, s1, &t);
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 4; k++) {
                foff[nf] = b * 2 * sizeof(struct S1) + dp[k]; flen[nf++] = ln[k];
            }
        extent = 5 * sizeof(struct S1);
    } else if (!strcmp(kind, "s")) {
        MPI_Type_dup(s1, &t);
        for (int k = 0; k < 4; k++) { foff[nf] = dp[k]; flen[nf++] = ln[k]; }
        extent = sizeof(struct S1);
    } else if (!strcmp(kind, "v")) {
        MPI_Type_vector(4, 3, 5, MPI_INT, &tmp);
        MPI_Type_create_resized(tmp, 0, 80, &t);
        MPI_Type_free(&tmp);
        for (int b = 0; b < 4; b++) { foff[nf] = b * 20; flen[nf++] = 12; }
        extent = 80;
    } else { /* vd */
        MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &tmp); /* 2 doubles, stride 3 */
        MPI_Type_create_resized(tmp, 0, 48, &t);
        MPI_Type_free(&tmp);
        foff[nf] = 0; flen[nf++] = 8; foff[nf] = 24; flen[nf++] = 8;
        extent = 48;
    }
    MPI_Type_commit(&t);
    {
        MPI_Aint lb, ext; int sz;
        MPI_Type_get_extent(t, &lb, &ext); MPI_Type_size(t, &sz);
        if (rank == 0) printf("mode %s kind %s count %d extent %ld size %d total %ld bytes\n",
                              mode, kind, count, (long)ext, sz, (long)sz * count);
        if ((size_t)ext != extent) { printf("extent mismatch\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    }
    size_t bytes = (size_t)count * extent;
    unsigned char *sb = malloc(bytes), *rb = malloc(bytes), *exp = malloc(bytes);
    int bad_total = 0;
    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < bytes; i++) { unsigned long long x = (i >> 3) * 0x9e3779b97f4a7c15ULL + it; x ^= x >> 31; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 29; sb[i] = (unsigned char)(x >> (8 * (i & 7))); }
        if (rank == 0) {
            if (!strcmp(mode, "pt")) {
                size_t k = 0; unsigned char *pk = malloc(bytes);
                for (int e = 0; e < count; e++)
                    for (int f = 0; f < nf; f++) { memcpy(pk + k, sb + e * extent + foff[f], flen[f]); k += flen[f]; }
                MPI_Send(pk, (int)k, MPI_BYTE, 1, it, MPI_COMM_WORLD);
                free(pk);
            } else
                MPI_Send(sb, count, t, 1, it, MPI_COMM_WORLD);
        } else if (rank == 1) {
            memset(rb, 0xEE, bytes);
            memcpy(exp, rb, bytes);
            for (int e = 0; e < count; e++)
                for (int f = 0; f < nf; f++)
                    memcpy(exp + e * extent + foff[f], sb + e * extent + foff[f], flen[f]);
            if (!strcmp(mode, "tp")) {
                unsigned char *pk = malloc(bytes); size_t k = 0, psz = 0;
                for (int f = 0; f < nf; f++) psz += flen[f];
                MPI_Recv(pk, (int)(psz * count), MPI_BYTE, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int e = 0; e < count; e++)
                    for (int f = 0; f < nf; f++) { memcpy(rb + e * extent + foff[f], pk + k, flen[f]); k += flen[f]; }
                free(pk);
            } else
                MPI_Recv(rb, count, t, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int nbad = 0;
            for (size_t i = 0; i < bytes; i++)
                if (rb[i] != exp[i]) {
                    if (nbad < 5)
                        printf("iter %d: MISMATCH at byte %zu (element %zu, offset-in-element %zu): expected 0x%02x got 0x%02x\n",
                               it, i, i / extent, i % extent, exp[i], rb[i]);
                    nbad++;
                }
            if (nbad && getenv("DIAG")) {
                size_t psz = 0; for (int f = 0; f < nf; f++) psz += flen[f];
                unsigned char *S = malloc(psz * count), *Rp = malloc(psz * count);
                size_t k = 0;
                for (int e = 0; e < count; e++)
                    for (int f = 0; f < nf; f++) {
                        memcpy(S + k, sb + e * extent + foff[f], flen[f]);
                        memcpy(Rp + k, rb + e * extent + foff[f], flen[f]); k += flen[f];
                    }
                size_t n = k; long run_start = -1;
                for (size_t i = 0; i <= n; i++) {
                    int ok = i < n && S[i] == Rp[i];
                    if (!ok && i < n && run_start < 0) run_start = i;
                    if ((ok || i == n) && run_start >= 0) {
                        /* find source of the bad run */
                        long src = -1;
                        for (size_t j = 0; j + 32 <= n; j++)
                            if (!memcmp(S + j, Rp + run_start, 32)) { src = j; break; }
                        printf("  packed bad run [%ld,%zu) len %zu; data there came from packed offset %ld (shift %ld)\n",
                               run_start, i, i - run_start, src, src - run_start);
                        run_start = -1;
                    }
                }
                free(S); free(Rp);
            }
            if (nbad) printf("iter %d: %d bad bytes\n", it, nbad);
            bad_total += nbad;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 1) printf("%s: %d bad bytes over %d iterations\n", bad_total ? "FAIL" : "OK", bad_total, iters);
    fflush(stdout);
    MPI_Type_free(&t); MPI_Type_free(&s1);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}

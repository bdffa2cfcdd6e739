/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * collectives.c - collectives checked against a local computation:
 *   MPI_Bcast      every root, 0 B .. 4 MiB (large sizes for two roots)
 *   MPI_Allreduce  SUM / MAX / MIN on int and double, counts 1 .. 262147,
 *                  also MPI_IN_PLACE; values chosen so double sums are exact
 *   MPI_Alltoall   0 B .. 256 KiB per pair
 *   MPI_Alltoallv  uneven counts including zeros, gaps between blocks in
 *                  both buffers; gaps in the receive buffer must stay
 *                  untouched
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double bytes_checked;
static long ops;

enum { K_BCAST = 1, K_A2A, K_A2AV };

static uint64_t cidx(int kind, int a, int b)
{
    return (uint64_t)kind << 48 | (uint64_t)(uint32_t)a << 24 | (uint32_t)b;
}

static void test_bcast(void)
{
    static const size_t sizes[] = {0, 1, 3, 100, 1024, 4097, 65535, 65537,
                                   200000, 1048576 + 5, 4u << 20};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    unsigned char *b = mt_malloc((4u << 20) + 64);

    for (int root = 0; root < mt_size; root++) {
        for (int s = 0; s < ns; s++) {
            size_t len = sizes[s];
            /* the big ones only for the first and the last root */
            if (len > 300000 && root != 0 && root != mt_size - 1)
                continue;
            if (mt_rank == root)
                mt_fill(b, len, root, cidx(K_BCAST, s, root), 0);
            else
                memset(b, 0, len);
            memset(b + len, 0x77, 64);
            MT_MPI(MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
            mt_check(b, len, root, cidx(K_BCAST, s, root), 0,
                     "bcast root %d size %zu", root, len);
            mt_check_const(b + len, 64, 0x77, "bcast guard root %d size %zu",
                           root, len);
            bytes_checked += (double)len;
            ops++;
        }
    }
    free(b);
}

/* contribution of rank r at index i for test k */
static int ival(int r, size_t i, int k)
{
    return (int)(mt_hash3((uint64_t)r, i, (uint64_t)k) % 2001) - 1000;
}
static double dval(int r, size_t i, int k)
{
    /* multiples of 1/4 with small magnitude: sums are exact in any order */
    return ((int)(mt_hash3((uint64_t)r + 7777, i, (uint64_t)k) % 8001) - 4000)
           * 0.25;
}

static void test_allreduce(void)
{
    static const int counts[] = {1, 7, 1000, 65536, 262147};
    const int nc = (int)(sizeof counts / sizeof counts[0]);
    const MPI_Op opl[3] = {MPI_SUM, MPI_MAX, MPI_MIN};
    const char *opn[3] = {"sum", "max", "min"};

    for (int c = 0; c < nc; c++) {
        size_t n = (size_t)counts[c];
        int *is = mt_malloc(n * sizeof(int)), *ir = mt_malloc(n * sizeof(int));
        double *ds = mt_malloc(n * sizeof(double));
        double *dr = mt_malloc(n * sizeof(double));
        for (int o = 0; o < 3; o++) {
            for (int inplace = 0; inplace < 2; inplace++) {
                int k = (c * 3 + o) * 2 + inplace;
                if (inplace && c != 2 && c != nc - 1)
                    continue;
                for (size_t i = 0; i < n; i++) {
                    is[i] = ival(mt_rank, i, k);
                    ds[i] = dval(mt_rank, i, k);
                }
                if (inplace) {
                    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, is, (int)n, MPI_INT,
                                         opl[o], MPI_COMM_WORLD));
                    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, ds, (int)n, MPI_DOUBLE,
                                         opl[o], MPI_COMM_WORLD));
                    memcpy(ir, is, n * sizeof(int));
                    memcpy(dr, ds, n * sizeof(double));
                } else {
                    MT_MPI(MPI_Allreduce(is, ir, (int)n, MPI_INT, opl[o],
                                         MPI_COMM_WORLD));
                    MT_MPI(MPI_Allreduce(ds, dr, (int)n, MPI_DOUBLE, opl[o],
                                         MPI_COMM_WORLD));
                }
                mt_maybe_corrupt(ir, n * sizeof(int));
                for (size_t i = 0; i < n; i++) {
                    long ei = ival(0, i, k);
                    double ed = dval(0, i, k);
                    for (int r = 1; r < mt_size; r++) {
                        long v = ival(r, i, k);
                        double w = dval(r, i, k);
                        if (o == 0) {
                            ei += v;
                            ed += w;
                        } else if (o == 1) {
                            ei = v > ei ? v : ei;
                            ed = w > ed ? w : ed;
                        } else {
                            ei = v < ei ? v : ei;
                            ed = w < ed ? w : ed;
                        }
                    }
                    if (ir[i] != ei)
                        mt_fail(MT_EXIT_MISMATCH, "MISMATCH in allreduce int "
                                "%s count %zu%s: element %zu expected %ld got "
                                "%d", opn[o], n, inplace ? " in-place" : "",
                                i, ei, ir[i]);
                    if (dr[i] != ed)
                        mt_fail(MT_EXIT_MISMATCH, "MISMATCH in allreduce double"
                                " %s count %zu%s: element %zu expected %.17g "
                                "got %.17g", opn[o], n,
                                inplace ? " in-place" : "", i, ed, dr[i]);
                }
                bytes_checked += (double)n * (sizeof(int) + sizeof(double));
                ops += 2;
            }
        }
        free(is);
        free(ir);
        free(ds);
        free(dr);
    }
}

static void test_alltoall(void)
{
    static const size_t per[] = {0, 1, 13, 4096, 65536 + 3, 262144};
    const int np = (int)(sizeof per / sizeof per[0]);
    size_t n = (size_t)mt_size;

    for (int p = 0; p < np; p++) {
        size_t len = per[p];
        unsigned char *sb = mt_malloc(len * n);
        unsigned char *rb = mt_malloc(len * n + 64);
        for (int d = 0; d < mt_size; d++)
            mt_fill(sb + (size_t)d * len, len, mt_rank, cidx(K_A2A, p, d), 0);
        memset(rb, 0, len * n);
        memset(rb + len * n, 0x66, 64);
        MT_MPI(MPI_Alltoall(sb, (int)len, MPI_BYTE, rb, (int)len, MPI_BYTE,
                            MPI_COMM_WORLD));
        for (int s = 0; s < mt_size; s++)
            mt_check(rb + (size_t)s * len, len, s, cidx(K_A2A, p, mt_rank), 0,
                     "alltoall %zu bytes per pair, block from %d", len, s);
        mt_check_const(rb + len * n, 64, 0x66, "alltoall guard (%zu per pair)",
                       len);
        bytes_checked += (double)(len * n);
        ops++;
        free(sb);
        free(rb);
    }
}

/* bytes rank s sends to rank d in round r of alltoallv */
static int a2av_count(int s, int d, int r)
{
    uint64_t st = mt_hash3((uint64_t)s, (uint64_t)d, (uint64_t)r + 99);
    uint64_t x = mt_rand(&st) % 100;

    if ((s * 7 + d * 3 + r) % 4 == 0 || x < 15)
        return 0;
    if (x < 60)
        return (int)mt_range(&st, 1, 300);
    if (x < 90)
        return (int)mt_range(&st, 301, 70000);
    return (int)mt_range(&st, 70001, 400000);
}

static void test_alltoallv(void)
{
    int n = mt_size;
    int *sc = mt_malloc(sizeof(int) * (size_t)n);
    int *sd = mt_malloc(sizeof(int) * (size_t)n);
    int *rc = mt_malloc(sizeof(int) * (size_t)n);
    int *rd = mt_malloc(sizeof(int) * (size_t)n);

    for (int r = 0; r < 4; r++) {
        size_t stot = 0, rtot = 0;
        unsigned char *sb, *rb, *saved;
        /* gaps: 5 + d bytes before each block; receive blocks in reverse
         * order of source to make displacements non-monotonic */
        for (int d = 0; d < n; d++) {
            sc[d] = a2av_count(mt_rank, d, r);
            stot += 5 + (size_t)d;
            sd[d] = (int)stot;
            stot += (size_t)sc[d];
        }
        for (int s = n - 1; s >= 0; s--) {
            rc[s] = a2av_count(s, mt_rank, r);
            rtot += 3 + (size_t)s % 4;
            rd[s] = (int)rtot;
            rtot += (size_t)rc[s];
        }
        rtot += 64;
        sb = mt_malloc(stot);
        rb = mt_malloc(rtot);
        saved = mt_malloc(rtot);
        memset(sb, 0xee, stot);
        for (int d = 0; d < n; d++)
            mt_fill(sb + sd[d], (size_t)sc[d], mt_rank, cidx(K_A2AV, r, d), 0);
        mt_fill(rb, rtot, -1 - mt_rank, cidx(K_A2AV, r, 0), 0);
        memcpy(saved, rb, rtot);
        MT_MPI(MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE,
                             MPI_COMM_WORLD));
        for (int s = 0; s < n; s++)
            mt_check(rb + rd[s], (size_t)rc[s], s, cidx(K_A2AV, r, mt_rank), 0,
                     "alltoallv round %d block from %d (%d bytes)", r, s,
                     rc[s]);
        /* gaps and guard untouched */
        {
            size_t pos = 0;
            for (int s = n - 1; s >= 0; s--) {
                for (; pos < (size_t)rd[s]; pos++)
                    if (rb[pos] != saved[pos])
                        mt_mismatch(pos, saved[pos], rb[pos],
                                    "alltoallv gap byte overwritten");
                pos = (size_t)rd[s] + (size_t)rc[s];
            }
            for (; pos < rtot; pos++)
                if (rb[pos] != saved[pos])
                    mt_mismatch(pos, saved[pos], rb[pos],
                                "alltoallv guard byte overwritten");
        }
        bytes_checked += (double)rtot;
        ops++;
        free(sb);
        free(rb);
        free(saved);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "collectives");

    mt_hang_point();
    for (int rep = 0; rep < mt_scale(); rep++) {
        test_bcast();
        test_allreduce();
        test_alltoall();
        test_alltoallv();
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    {
        double mib = mt_total_mib(bytes_checked);
        long to = mt_total_count(ops);
        mt_finish("ops=%ld checked=%.1fMiB", to / mt_size, mib);
    }
    return 0;
}

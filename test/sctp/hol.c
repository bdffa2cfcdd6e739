/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Head-of-line blocking across SCTP streams (docs/sctp-streams.md).
 * Two ranks, two communicators: rank 0 keeps HOL_BULK_DEPTH large messages
 * (HOL_BULK_BYTES each) in flight to rank 1 on comm "bulk" without pause,
 * and meanwhile times HOL_PINGS round trips of an 8-byte message on comm
 * "ping" (rank 1 echoes each at once). Prints the round trips' median,
 * p90, p99 and max in microseconds and the bulk rate; every bulk byte and
 * every echo is checked. Under loss, a lost bulk packet stalls the ping
 * only if they share an SCTP stream (btl_sctp_stream_map 0) - or if the
 * sender has no room or no congestion window for it (both are per
 * association, whatever the stream).
 *
 *   mpirun -np 2 ... hol      environment: HOL_PINGS (2000), HOL_BULK_BYTES
 *                             (262144), HOL_BULK_DEPTH (4), HOL_GAP_US (200:
 *                             pause between pings, so bulk fills the path)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_BULK 11
#define TAG_PING 22

static long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : def;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void fill(unsigned char *b, size_t n, uint64_t seq)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = seq * 0x9E3779B97F4A7C15ull + i;
        memcpy(b + i, &v, n - i < 8 ? n - i : 8);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) {
            fprintf(stderr, "hol: needs exactly 2 ranks\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long pings = env_long("HOL_PINGS", 2000);
    size_t bulk = (size_t) env_long("HOL_BULK_BYTES", 262144);
    int depth = (int) env_long("HOL_BULK_DEPTH", 4);
    long gap_us = env_long("HOL_GAP_US", 200);
    if (depth < 1 || depth > 64 || bulk < 8 || pings < 1) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm cbulk, cping;
    MPI_Comm_dup(MPI_COMM_WORLD, &cbulk);
    MPI_Comm_dup(MPI_COMM_WORLD, &cping);
    unsigned char *bufs = malloc(bulk * (size_t) depth);
    unsigned char *want = malloc(bulk);
    uint64_t *seqs = calloc((size_t) depth, sizeof(*seqs));
    MPI_Request breq[64];
    int errors = 0;
    uint64_t next_seq = 0;
    long bulk_done = 0;

    if (rank == 0) {
        double *rtt = malloc(sizeof(double) * (size_t) pings);
        for (int i = 0; i < depth; i++) {
            seqs[i] = next_seq++;
            fill(bufs + bulk * (size_t) i, bulk, seqs[i]);
            MPI_Isend(bufs + bulk * (size_t) i, (int) bulk, MPI_BYTE, 1, TAG_BULK, cbulk, &breq[i]);
        }
        double t_start = MPI_Wtime();
        for (long p = 0; p < pings; p++) {
            int64_t v = p, echo = -1;
            MPI_Request pr[2];
            double t0 = MPI_Wtime();
            MPI_Irecv(&echo, 1, MPI_INT64_T, 1, TAG_PING, cping, &pr[0]);
            MPI_Isend(&v, 1, MPI_INT64_T, 1, TAG_PING, cping, &pr[1]);
            int done = 0;
            while (!done) {
                MPI_Testall(2, pr, &done, MPI_STATUSES_IGNORE);
                int idx, flag;
                MPI_Testany(depth, breq, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED) {
                    bulk_done++;
                    seqs[idx] = next_seq++;
                    fill(bufs + bulk * (size_t) idx, bulk, seqs[idx]);
                    MPI_Isend(bufs + bulk * (size_t) idx, (int) bulk, MPI_BYTE, 1, TAG_BULK, cbulk,
                              &breq[idx]);
                }
            }
            rtt[p] = (MPI_Wtime() - t0) * 1e6;
            if (echo != v) {
                errors++;
            }
            double until = MPI_Wtime() + gap_us * 1e-6;
            while (MPI_Wtime() < until) {
                int idx, flag;
                MPI_Testany(depth, breq, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED) {
                    bulk_done++;
                    seqs[idx] = next_seq++;
                    fill(bufs + bulk * (size_t) idx, bulk, seqs[idx]);
                    MPI_Isend(bufs + bulk * (size_t) idx, (int) bulk, MPI_BYTE, 1, TAG_BULK, cbulk,
                              &breq[idx]);
                }
            }
        }
        int64_t stop = -1, total = (int64_t) next_seq;
        MPI_Send(&stop, 1, MPI_INT64_T, 1, TAG_PING, cping);
        MPI_Send(&total, 1, MPI_INT64_T, 1, TAG_PING, cping);
        MPI_Waitall(depth, breq, MPI_STATUSES_IGNORE);
        double secs = MPI_Wtime() - t_start;
        qsort(rtt, (size_t) pings, sizeof(double), cmp_double);
        int rerr = 0;
        MPI_Recv(&rerr, 1, MPI_INT, 1, TAG_PING, cping, MPI_STATUS_IGNORE);
        printf("hol: pings=%ld rtt_us median=%.0f p90=%.0f p99=%.0f max=%.0f | bulk %lld x %zu B "
               "= %.1f MB/s | errors=%d\n",
               pings, rtt[pings / 2], rtt[pings * 90 / 100], rtt[pings * 99 / 100],
               rtt[pings - 1], (long long) total, bulk, (double) total * bulk / secs / 1e6,
               errors + rerr);
        fflush(stdout);
        free(rtt);
        errors += rerr;
    } else {
        int64_t v;
        MPI_Request pr;
        MPI_Irecv(&v, 1, MPI_INT64_T, 0, TAG_PING, cping, &pr);
        for (int i = 0; i < depth; i++) {
            MPI_Irecv(bufs + bulk * (size_t) i, (int) bulk, MPI_BYTE, 0, TAG_BULK, cbulk, &breq[i]);
        }
        int64_t total = -1;
        uint64_t expect = 0, posted = (uint64_t) depth;
        int stopping = 0;
        for (;;) {
            int flag;
            MPI_Test(&pr, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                if (stopping) {
                    total = v;
                } else if (v == -1) {
                    stopping = 1;
                    MPI_Irecv(&v, 1, MPI_INT64_T, 0, TAG_PING, cping, &pr);
                } else {
                    MPI_Send(&v, 1, MPI_INT64_T, 0, TAG_PING, cping);
                    MPI_Irecv(&v, 1, MPI_INT64_T, 0, TAG_PING, cping, &pr);
                }
            }
            /* Bulk arrives in order on one communicator, tag and source:
             * the receives complete in the order they were posted. */
            int idx = (int) (expect % (uint64_t) depth);
            if (total >= 0 && expect >= (uint64_t) total) {
                break;
            }
            MPI_Test(&breq[idx], &flag, MPI_STATUS_IGNORE);
            if (flag) {
                fill(want, bulk, expect);
                if (memcmp(want, bufs + bulk * (size_t) idx, bulk) != 0) {
                    errors++;
                }
                expect++;
                if (total < 0 || posted < (uint64_t) total) {
                    posted++;
                    MPI_Irecv(bufs + bulk * (size_t) idx, (int) bulk, MPI_BYTE, 0, TAG_BULK, cbulk,
                              &breq[idx]);
                }
            }
        }
        /* Receives posted before the total was known, beyond it: cancelled. */
        for (int i = 0; i < depth; i++) {
            if (breq[i] != MPI_REQUEST_NULL) {
                MPI_Cancel(&breq[i]);
                MPI_Wait(&breq[i], MPI_STATUS_IGNORE);
            }
        }
        MPI_Send(&errors, 1, MPI_INT, 0, TAG_PING, cping);
    }
    (void) bulk_done;
    MPI_Comm_free(&cbulk);
    MPI_Comm_free(&cping);
    free(bufs);
    free(want);
    free(seqs);
    MPI_Finalize();
    return errors ? 1 : 0;
}

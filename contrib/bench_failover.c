/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * bench_failover.c - the ping-pong's bandwidth phase timed per message, for
 * links that go down and up during it (bench -g, driven by contrib/bench
 * --kill-link/--restore-link).
 *
 * As bench.c's windows(): rank 0 posts windows of W non-blocking sends to
 * rank 1, each window answered by a 4-byte reply. Differences:
 *   - the phase lasts -g seconds by the clock alone (no count limit), so a
 *     link event at a given second always falls inside it;
 *   - every message has a buffer of its own on both sides and carries the
 *     pattern of its number (msg_fill); rank 1 checks every byte as each
 *     message completes (msg_check), and rank 0 refills a send buffer for
 *     the next window as soon as its send completes (no burst of refills
 *     between windows, which would show as a gap);
 *   - rank 1 reads CLOCK_MONOTONIC each time MPI_Waitsome returns, so the
 *     longest time without a completed message is known to the message,
 *     not to the window (a window of 64 x 4 MiB lasts 2 s at 1 Gbit/s).
 *     It includes rank 1's own checks (about 1 ms per 4 MiB).
 *
 * Output (rank 0, stdout), per size:
 *   BWSTART <size> <t0>    t0 = CLOCK_MONOTONIC seconds at the start (after
 *                          a barrier), printed at once: the driver times its
 *                          link events from it (same machine, same clock)
 *   GAP <size> <seconds> <msgs> <max_gap_ms> <gap_from_s>
 *                          the phase's length on rank 1 (to its last
 *                          completion), messages received, the longest time
 *                          without a completion and when it began (from t0;
 *                          the phase's start counts as a completion)
 *   SPAN <size> <from_s> <to_s> <bytes> <max_gap_ms> <gap_from_s>
 *                          between two consecutive marks (-k; 0 and the
 *                          phase's end are marks too): the bytes completed,
 *                          and the longest gap that ended there (so the gap
 *                          a link event causes is not counted before it, and
 *                          the span before the first mark shows the gaps of
 *                          normal operation: ob1 interleaves the messages of
 *                          a window, so with big messages they complete in
 *                          bunches)
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_FO 30
#define TAG_FO_END 31
#define TAG_FO_ACK 32
#define FO_BYTES_MAX (1L << 30) /* per rank: W buffers of the size */

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Rank 1's figures, sent to rank 0 as doubles: the phase, then per span
 * ([0, marks[0]), [marks[0], marks[1]), ..., [marks[n-1], end)) bytes, the
 * longest gap ending in it and when that gap began (seconds from t0). */
enum { FO_END, FO_MSGS, FO_SPANS };
#define FO_SPAN_BYTES(s) (FO_SPANS + 3 * (s))
#define FO_SPAN_GAP(s) (FO_SPANS + 3 * (s) + 1)
#define FO_SPAN_FROM(s) (FO_SPANS + 3 * (s) + 2)

/* Rank 0: windows until tmax seconds have passed (checked before each
 * window; tmax 0: one window). Returns the windows sent. */
static long send_phase(char *buf, size_t size, int w, double tmax, MPI_Request *req, int *idx)
{
    uint64_t msg = 0;
    long n = 0;
    int ack = 0;
    for (int j = 0; j < w; j++)
        msg_fill(buf + (size_t) j * size, size, 0, (uint64_t) j);
    double t0 = MPI_Wtime();
    for (;;) {
        int last = MPI_Wtime() - t0 >= tmax;
        for (int j = 0; j < w; j++)
            MPI_Isend(buf + (size_t) j * size, (int) size, MPI_BYTE, 1,
                      last && j == w - 1 ? TAG_FO_END : TAG_FO, MPI_COMM_WORLD, &req[j]);
        for (int left = w; left > 0;) {
            int k = 0;
            MPI_Waitsome(w, req, &k, idx, MPI_STATUSES_IGNORE);
            for (int i = 0; i < k && !last; i++)
                msg_fill(buf + (size_t) idx[i] * size, size, 0, msg + (uint64_t) (w + idx[i]));
            left -= k;
        }
        MPI_Recv(&ack, 1, MPI_INT, 1, TAG_FO_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        msg += (uint64_t) w;
        n++;
        if (last)
            return n;
    }
}

/* Rank 1: receives and checks every message, stamps every completion;
 * fills res (zeroed by the caller). */
static void recv_phase(char *buf, size_t size, int w, const double *marks, int nmarks,
                       MPI_Request *req, int *idx, MPI_Status *st, double t0, double *res)
{
    uint64_t msg = 0;
    int ack = 0, last = 0;
    double prev = t0;
    while (!last) {
        /* one sender, one communicator: receive j gets message j of the window */
        for (int j = 0; j < w; j++)
            MPI_Irecv(buf + (size_t) j * size, (int) size, MPI_BYTE, 0, MPI_ANY_TAG,
                      MPI_COMM_WORLD, &req[j]);
        for (int left = w; left > 0;) {
            int k = 0;
            MPI_Waitsome(w, req, &k, idx, st);
            double now = mono();
            int span = 0;
            while (span < nmarks && now - t0 >= marks[span])
                span++;
            if (now - prev > res[FO_SPAN_GAP(span)]) {
                res[FO_SPAN_GAP(span)] = now - prev;
                res[FO_SPAN_FROM(span)] = prev - t0;
            }
            prev = now;
            for (int i = 0; i < k; i++) {
                int j = idx[i], tag = st[i].MPI_TAG;
                msg_check_count(&st[i], size, "bandwidth");
                if (tag != TAG_FO && !(tag == TAG_FO_END && j == w - 1))
                    die("bandwidth: a message with an unexpected tag");
                msg_check(buf + (size_t) j * size, size, 0, msg + (uint64_t) j, "bandwidth");
                last |= tag == TAG_FO_END;
            }
            res[FO_SPAN_BYTES(span)] += (double) size * k;
            res[FO_MSGS] += k;
            left -= k;
        }
        MPI_Send(&ack, 1, MPI_INT, 0, TAG_FO_ACK, MPI_COMM_WORLD);
        msg += (uint64_t) w;
    }
    res[FO_END] = prev - t0;
}

double failover_bandwidth(size_t size, int w, double seconds, const double *marks, int nmarks,
                          long *windows)
{
    if ((double) size * w > (double) FO_BYTES_MAX)
        die("bandwidth: -g needs a buffer per message in the window, over 1 GiB here: lower -w "
            "or the size");
    char *buf = NULL;
    long pg = sysconf(_SC_PAGESIZE);
    if (posix_memalign((void **) &buf, pg > 0 ? (size_t) pg : 4096, size * (size_t) w + 1))
        die("out of memory");
    memset(buf, 0, size * (size_t) w + 1);
    int nres = FO_SPANS + 3 * (nmarks + 1);
    MPI_Request *req = calloc((size_t) w, sizeof(*req));
    MPI_Status *st = calloc((size_t) w, sizeof(*st));
    int *idx = calloc((size_t) w, sizeof(*idx));
    double *res = calloc((size_t) nres, sizeof(*res));
    if (!req || !st || !idx || !res)
        die("out of memory");
    double bw = -1, t = 0;
    long n = 0;

    for (int phase = 0; phase < 2; phase++) { /* a warm-up window, then the measured phase */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = mono();
        if (rank == 0 && phase == 1) {
            printf("BWSTART %zu %.6f\n", size, t0);
            fflush(stdout);
        }
        t = MPI_Wtime();
        if (rank == 0) {
            n = send_phase(buf, size, w, phase ? seconds : 0, req, idx);
        } else if (rank == 1) {
            memset(res, 0, (size_t) nres * sizeof(*res));
            recv_phase(buf, size, w, marks, nmarks, req, idx, st, t0, res);
        }
        t = MPI_Wtime() - t;
    }
    if (rank == 1) {
        MPI_Send(res, nres, MPI_DOUBLE, 0, TAG_FO_ACK, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(res, nres, MPI_DOUBLE, 1, TAG_FO_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int worst = 0;
        for (int s = 1; s <= nmarks; s++)
            if (res[FO_SPAN_GAP(s)] > res[FO_SPAN_GAP(worst)])
                worst = s;
        printf("GAP %zu %.6f %.0f %.3f %.6f\n", size, res[FO_END], res[FO_MSGS],
               res[FO_SPAN_GAP(worst)] * 1e3, res[FO_SPAN_FROM(worst)]);
        double from = 0;
        for (int s = 0; s <= nmarks; s++) {
            double to = s < nmarks && marks[s] < res[FO_END] ? marks[s] : res[FO_END];
            printf("SPAN %zu %.6f %.6f %.0f %.3f %.6f\n", size, from, to, res[FO_SPAN_BYTES(s)],
                   res[FO_SPAN_GAP(s)] * 1e3, res[FO_SPAN_FROM(s)]);
            from = to;
        }
        fflush(stdout);
        bw = (double) size * w * (double) n / t / 1e6;
    }
    *windows = n;
    free(res);
    free(idx);
    free(st);
    free(req);
    free(buf);
    return bw;
}

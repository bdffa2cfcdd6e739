/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * bench.h - what contrib/bench.c (options, ping-pong),
 * contrib/bench_failover.c (its bandwidth phase timed per message) and
 * contrib/bench_patterns.c (incast, pairs, cg, overlap) share.
 */
#ifndef CONTRIB_BENCH_H
#define CONTRIB_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

extern int rank, nprocs;
extern int corrupt_once; /* -X: flip one received byte before the first check */

/* Reports msg on stderr with the rank and aborts the job (exit status 2). */
void die(const char *msg);

/* Message msg from rank src: a pattern of both and the offset
 * (bench_patterns.c). msg_check compares every byte and aborts the job
 * with DATA MISMATCH naming the message; msg_check_count the length. */
void msg_fill(void *buf, size_t size, int src, uint64_t msg);
void msg_check(void *buf, size_t size, int src, uint64_t msg, const char *what);
void msg_check_count(const MPI_Status *st, size_t size, const char *what);

typedef struct bench_opts {
    const long *sizes;  /* message sizes, bytes */
    int nsizes;
    int window;         /* messages in flight per sender (incast, pairs) */
    double seconds;     /* measured time per size (incast, pairs) */
    long iters;         /* iterations per size (cg) */
    double compute_us;  /* local compute per iteration (cg), per size (overlap) */
} bench_opts_t;

/* The bandwidth phase of one size timed per message for seconds (bench -g),
 * bytes counted between the marks (seconds from its start, increasing):
 * contrib/bench_failover.c. Returns MB/s (rank 0) and sets *windows. */
double failover_bandwidth(size_t size, int w, double seconds, const double *marks, int nmarks,
                          long *windows);

/* Each runs its pattern for every size and prints (rank 0) HOST, FLOW,
 * TOTAL, CG or OVERLAP lines (contrib/bench_patterns.c says which). */
void run_incast(const bench_opts_t *o);
void run_pairs(const bench_opts_t *o);
void run_cg(const bench_opts_t *o);
void run_overlap(const bench_opts_t *o);

#endif

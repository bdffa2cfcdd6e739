/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * bench.h - what contrib/bench.c (options, ping-pong) and
 * contrib/bench_patterns.c (incast, pairs, cg) share.
 */
#ifndef CONTRIB_BENCH_H
#define CONTRIB_BENCH_H

#include <stddef.h>

extern int rank, nprocs;
extern int corrupt_once; /* -X: flip one received byte before the first check */

/* Reports msg on stderr with the rank and aborts the job (exit status 2). */
void die(const char *msg);

typedef struct bench_opts {
    const long *sizes;  /* message sizes, bytes */
    int nsizes;
    int window;         /* messages in flight per sender (incast, pairs) */
    double seconds;     /* measured time per size (incast, pairs) */
    long iters;         /* iterations per size (cg) */
    double compute_us;  /* local compute per iteration (cg) */
} bench_opts_t;

/* Each runs its pattern for every size and prints (rank 0) HOST, FLOW,
 * TOTAL or CG lines (contrib/bench_patterns.c says which). */
void run_incast(const bench_opts_t *o);
void run_pairs(const bench_opts_t *o);
void run_cg(const bench_opts_t *o);

#endif

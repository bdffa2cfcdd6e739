/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * mpitest.h - shared helpers for the MPI data-integrity tests.
 *
 * Every received byte is checked against a deterministic pattern that
 * depends on (sender rank, message index, byte offset), so misplaced,
 * truncated, duplicated or reordered data is detected.
 *
 * Fault injection (for the runner's --selftest):
 *   MPITEST_CORRUPT=1   one rank (MPITEST_CORRUPT_RANK, default 1, or 0 when
 *                       np == 1) flips one byte of the first non-empty
 *                       received buffer it checks (after skipping
 *                       MPITEST_CORRUPT_SKIP non-empty ones, default 0);
 *                       the check must catch it.
 *   MPITEST_HANG=1      rank 0 skips one send (or blocks in a receive that
 *                       is never matched): the job deadlocks and the
 *                       runner's timeout must catch it.
 *
 * MPITEST_SCALE=N (default 1) multiplies the number of rounds / iterations
 * of every program (soak testing); see mt_scale().
 *
 * Include this header first in every test (it sets _POSIX_C_SOURCE).
 */
#ifndef MPITEST_H
#define MPITEST_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define MT_NORETURN _Noreturn
#define MT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Exit code used with MPI_Abort when a data check fails. */
#define MT_EXIT_MISMATCH 3
/* Exit code for other test failures (bad status, setup failure, ...). */
#define MT_EXIT_ERROR 2

/* Initialisation / finalisation.  `name` is the program name used in the
 * summary line.  mt_init_thread returns the provided thread level. */
void mt_init(int *argc, char ***argv, const char *name);
int mt_init_thread(int *argc, char ***argv, int required, const char *name);
/* Barrier on MPI_COMM_WORLD, then rank 0 prints
 *   "<name>: OK np=<n> <details> (<secs>s)"
 * and MPI_Finalize is called. */
void mt_finish(const char *fmt, ...) MT_PRINTF(1, 2);
/* Sums over all ranks, valid on rank 0 (for the summary line). */
double mt_total_mib(double bytes);
long mt_total_count(long count);

extern int mt_rank, mt_size;

/* MPITEST_SCALE (>= 1, default 1): multiplier for rounds / iterations. */
int mt_scale(void);

/* Hashing / deterministic random numbers. */
uint64_t mt_mix64(uint64_t x);
uint64_t mt_hash3(uint64_t a, uint64_t b, uint64_t c);
uint64_t mt_rand(uint64_t *state); /* splitmix64 step */
/* Uniform-ish value in [lo, hi] (inclusive). */
uint64_t mt_range(uint64_t *state, uint64_t lo, uint64_t hi);

/* Pattern: byte at logical offset `off` of message `idx` sent by `src`. */
unsigned char mt_pat_byte(int src, uint64_t idx, size_t off);
/* Fill buf[0..len) with the pattern for logical offsets off0..off0+len. */
void mt_fill(void *buf, size_t len, int src, uint64_t idx, size_t off0);
/* Check buf[0..len) against the pattern; on the first mismatch print
 * offset/expected/got and MPI_Abort(MT_EXIT_MISMATCH).  `fmt` describes
 * the buffer (evaluated only on failure).  May inject the self-test
 * corruption first. */
void mt_check(void *buf, size_t len, int src, uint64_t idx, size_t off0,
              const char *fmt, ...) MT_PRINTF(6, 7);
/* Check that buf[0..len) all equal `byte` (guards, gaps). */
void mt_check_const(void *buf, size_t len, unsigned char byte,
                    const char *fmt, ...) MT_PRINTF(4, 5);
/* Check a received status: source, tag (unless tag < 0) and byte count. */
void mt_check_status(const MPI_Status *st, int src, int tag, size_t bytes,
                     const char *fmt, ...) MT_PRINTF(5, 6);

/* Report a byte mismatch in the standard format and abort. */
MT_NORETURN void mt_mismatch(size_t off, unsigned expected, unsigned got,
                             const char *what);
/* Print "mpitest FAIL rank R: ..." and MPI_Abort(code). */
MT_NORETURN void mt_fail(int code, const char *fmt, ...) MT_PRINTF(2, 3);

/* Self-test fault injection. */
void mt_maybe_corrupt(void *buf, size_t len); /* called by mt_check */
int mt_hang_skip(void);  /* 1 exactly once on rank 0 if MPITEST_HANG=1 */
void mt_hang_point(void); /* rank 0 blocks forever once if MPITEST_HANG=1 */

/* Allocation that aborts on failure. */
void *mt_malloc(size_t len);

/* Call an MPI function and abort with a message if it fails. */
#define MT_MPI(call)                                                        \
    do {                                                                    \
        int mt_rc_ = (call);                                                \
        if (mt_rc_ != MPI_SUCCESS)                                          \
            mt_fail(MT_EXIT_ERROR, "%s:%d: %s returned %d", __FILE__,       \
                    __LINE__, #call, mt_rc_);                               \
    } while (0)

#endif /* MPITEST_H */

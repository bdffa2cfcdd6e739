/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Rank 0 streams messages to rank 1 for the seconds given, 16 in flight,
 * and rank 1 checks every byte (and every length). Each rank first prints
 * "pid RANK PID", so test/esp/deadpeer can stop one of them mid-stream.
 *
 *   stream [SECONDS [SIZE[,SIZE...]]]   message n has the (n mod count)-th
 *                                       size (default one size: 64 KiB)
 *
 * STREAM_COMPUTE=S in the environment: after the first round rank 1
 * computes for S seconds (a spin on the clock, no MPI call) with the next
 * round's messages on their way, as an application between exchanges. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 16
#define MAX_SIZES 16

/* Spin for s seconds without calling MPI. */
static void compute(double s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double) (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < s);
}

static unsigned char pattern(long msg, size_t i)
{
    return (unsigned char) (msg * 131 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    const char *list = argc > 2 ? argv[2] : "65536";
    size_t sizes[MAX_SIZES], nsizes = 0, max = 0;
    int bad = 0;
    for (const char *s = list; *s != '\0' && !bad;) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        bad = end == s || v == 0 || v > (64u << 20) || nsizes == MAX_SIZES
              || (*end != ',' && *end != '\0');
        if (!bad) {
            sizes[nsizes++] = v;
            max = v > max ? v : max;
            s = *end == ',' ? end + 1 : end;
        }
    }
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || bad || nsizes == 0) {
        if (rank == 0) fprintf(stderr, "stream: needs exactly 2 ranks and 1 B .. 64 MiB messages\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("pid %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);

    unsigned char *buf = malloc((size_t) DEPTH * max);
    MPI_Request req[DEPTH];
    MPI_Status st[DEPTH];
    long n = 0, done = 0;
    double end = MPI_Wtime() + seconds;
    if (rank == 0) {
        /* Messages go in rounds of DEPTH; a count of -1 ahead of each round
         * says whether it is the last one. */
        for (;;) {
            long more = MPI_Wtime() < end ? DEPTH : 0;
            MPI_Send(&more, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD);
            if (more == 0) break;
            for (int k = 0; k < DEPTH; k++, n++) {
                unsigned char *b = buf + (size_t) k * max;
                size_t len = sizes[n % nsizes];
                for (size_t i = 0; i < len; i++) b[i] = pattern(n, i);
                MPI_Isend(b, (int) len, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[k]);
            }
            MPI_Waitall(DEPTH, req, MPI_STATUSES_IGNORE);
        }
    } else {
        double compute_s = getenv("STREAM_COMPUTE") ? atof(getenv("STREAM_COMPUTE")) : 0;
        for (;;) {
            if (n == DEPTH && compute_s > 0) {
                compute(compute_s);
                printf("stream: rank 1 computed %.1f s without MPI calls\n", compute_s);
                fflush(stdout);
            }
            long more;
            MPI_Recv(&more, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (more == 0) break;
            for (int k = 0; k < DEPTH; k++) {
                MPI_Irecv(buf + (size_t) k * max, (int) max, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[k]);
            }
            MPI_Waitall(DEPTH, req, st);
            for (int k = 0; k < DEPTH; k++, n++) {
                const unsigned char *b = buf + (size_t) k * max;
                size_t len = sizes[n % nsizes];
                int got;
                MPI_Get_count(&st[k], MPI_BYTE, &got);
                if ((size_t) got != len) {
                    fprintf(stderr, "stream: message %ld has %d bytes, not %zu\n", n, got, len);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
                for (size_t i = 0; i < len; i++) {
                    if (b[i] != pattern(n, i)) {
                        fprintf(stderr, "stream: MISMATCH in message %ld at byte %zu\n", n, i);
                        MPI_Abort(MPI_COMM_WORLD, 3);
                    }
                }
            }
        }
        done = n;
        printf("stream: %ld messages of %s bytes ok\n", done, list);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * bench.c - OSU-style point-to-point benchmark between ranks 0 and 1.
 *
 * For every message size it measures
 *   latency   = half the round-trip time of a blocking ping-pong, averaged
 *               over all measured iterations (as osu_latency)
 *   bandwidth = rank 0 posts a window of W non-blocking sends, rank 1 a window
 *               of W non-blocking receives; after both complete rank 1 sends a
 *               4-byte reply; repeated; total bytes / total time (as osu_bw).
 *               MB/s with 1 MB = 1e6 B.
 *
 * Each measurement is preceded by unmeasured warm-up iterations (fewer for
 * big messages).  The measured phase is bounded by time as well as by count,
 * so one run stays short on a 10 GB/s loopback and on a lossy 1 Gbit/s
 * emulated link alike: it runs until it has lasted -t seconds (and done at
 * least a minimum count), or reached the maximum count for the size
 * (ping-pong: 10000 up to 8 KiB, 1000 above, as osu_latency; bandwidth: 1000
 * windows up to 8 KiB, 100 above).  A time-bounded mean, unlike a count fixed
 * from a quiet warm-up, still sees the rare long stalls of a lossy link.
 *
 * Rank 0 decides when to stop and tells rank 1 through the message tag of the
 * last ping (TAG_END) or of the last message of the last window (TAG_BW_END),
 * so nothing extra is sent.
 *
 * Output (rank 0, stdout, one line per size, flushed as soon as measured):
 *   RESULT <size_bytes> <latency_us> <bandwidth_MBps> <lat_iters> <bw_windows>
 *          <cpu0_ms_per_MB> <cpu1_ms_per_MB>
 * (-1 for a quantity not measured; the CPU columns: each rank's user + system
 * time, all its threads, during the timed bandwidth windows, per MB moved).  Lines starting with '#' are comments.
 * At the end the received data are compared with the sender's pattern.
 *
 * Usage: bench [-s 1,4,16,...] [-w window] [-t seconds_per_measurement]
 *              [-l] (latency only) [-b] (bandwidth only)
 *              [-g seconds [-k mark,...]] (bandwidth phase timed per message)
 *              [-p pingpong|incast|pairs|cg|overlap] [-n cg_iterations]
 *              [-c compute_us] (cg: per iteration; overlap: per size)
 *              [-X] (flip one received byte: the check must fail; patterns only)
 * -p selects another traffic pattern, in bench_patterns.c, which says what
 * each measures and prints.  -g replaces the bandwidth phase by one of that
 * many seconds, every message timed and checked, with bytes counted between
 * the -k marks (seconds): bench_failover.c, which says what it prints.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <errno.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define MAX_SIZES 64
#define MAX_MARKS 64
#define TAG_PING 1
#define TAG_END 2
#define TAG_BW 3
#define TAG_BW_END 4
#define TAG_CPU 6
#define TAG_ACK 5

int rank, nprocs;

void die(const char *msg)
{
    fprintf(stderr, "bench: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* Ping-pong phase.  Rank 0 runs at most max iterations, and stops earlier
 * once at least min are done and tmax seconds have passed (the clock is read
 * every 8 iterations, every one above 8 KiB).  Returns the iterations
 * done and sets *elapsed (rank 0).  Rank 1 echoes until TAG_END. */
/* This process's user + system time, every thread, in seconds. */
static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        return 0;
    }
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
           + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static long pingpong(char *sbuf, char *rbuf, size_t size, long min, long max, double tmax,
                     double *elapsed)
{
    double t0 = MPI_Wtime();
    long i = 0;

    if (rank == 0) {
        for (;;) {
            int last = i + 1 >= max ||
                       (i + 1 >= min && ((i & 7) == 7 || size > 8192) &&
                        MPI_Wtime() - t0 >= tmax);
            MPI_Send(sbuf, (int)size, MPI_CHAR, 1, last ? TAG_END : TAG_PING, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            i++;
            if (last)
                break;
        }
    } else if (rank == 1) {
        MPI_Status st;
        do {
            MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Send(sbuf, (int)size, MPI_CHAR, 0, TAG_PING, MPI_COMM_WORLD);
            i++;
        } while (st.MPI_TAG != TAG_END);
    }
    if (elapsed)
        *elapsed = MPI_Wtime() - t0;
    return i;
}

/* Bandwidth phase: windows of w messages from rank 0 to rank 1, each answered
 * by a 4-byte acknowledgement; same stopping rule as pingpong() (checked
 * before each window).  Returns the windows done, sets *elapsed (rank 0). */
static long windows(char *sbuf, char *rbuf, size_t size, int w, MPI_Request *req,
                    MPI_Status *st, long min, long max, double tmax, double *elapsed)
{
    int ack = 0;
    long n = 0;
    double t0 = MPI_Wtime();

    if (rank == 0) {
        for (;;) {
            int last = n + 1 >= max || (n + 1 >= min && MPI_Wtime() - t0 >= tmax);
            for (int j = 0; j < w; j++)
                MPI_Isend(sbuf, (int)size, MPI_CHAR, 1,
                          (last && j == w - 1) ? TAG_BW_END : TAG_BW, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            n++;
            if (last)
                break;
        }
    } else if (rank == 1) {
        int last;
        do {
            /* messages from one sender on one communicator do not overtake
             * each other: receive j gets message j of the window */
            for (int j = 0; j < w; j++)
                MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(w, req, st);
            last = st[w - 1].MPI_TAG == TAG_BW_END;
            MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
            n++;
        } while (!last);
    }
    if (elapsed)
        *elapsed = MPI_Wtime() - t0;
    return n;
}

static int parse_sizes(const char *arg, long *sizes)
{
    int n = 0;
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        long v = strtol(tok, &end, 10);
        if (errno || end == tok || v < 0 || v > (1L << 30) || n >= MAX_SIZES) {
            free(copy);
            return -1;
        }
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        if (*end != '\0' || v > (1L << 30)) {
            free(copy);
            return -1;
        }
        sizes[n++] = v;
    }
    free(copy);
    return n;
}

/* -k: increasing seconds, above 0 */
static int parse_marks(const char *arg, double *marks)
{
    int n = 0;
    const char *p = arg;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || n >= MAX_MARKS || !(v > 0 && v < 3600) ||
            (n > 0 && v <= marks[n - 1]))
            return -1;
        marks[n++] = v;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

int main(int argc, char **argv)
{
    long sizes[MAX_SIZES];
    double marks[MAX_MARKS];
    int nsizes = 0, nmarks = 0, window = 64, do_lat = 1, do_bw = 1, opt;
    double target = 0.2, compute_us = 0, gap_secs = 0;
    long iters = 2000;
    const char *pattern = "pingpong";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    while ((opt = getopt(argc, argv, "s:w:t:lbp:n:c:Xg:k:")) != -1) {
        switch (opt) {
        case 's':
            nsizes = parse_sizes(optarg, sizes);
            if (nsizes <= 0)
                die("bad -s size list (comma-separated byte counts, optional K/M suffix)");
            break;
        case 'w':
            window = atoi(optarg);
            if (window < 1 || window > 4096)
                die("bad -w window (1..4096)");
            break;
        case 't':
            target = atof(optarg);
            if (!(target > 0 && target < 3600))
                die("bad -t seconds");
            break;
        case 'l':
            do_bw = 0;
            break;
        case 'b':
            do_lat = 0;
            break;
        case 'p':
            pattern = optarg;
            break;
        case 'n':
            iters = atol(optarg);
            if (iters < 1 || iters > 100000000L)
                die("bad -n iterations (1..1e8)");
            break;
        case 'c':
            compute_us = atof(optarg);
            if (!(compute_us >= 0 && compute_us < 1e7))
                die("bad -c microseconds");
            break;
        case 'X':
            corrupt_once = 1;
            break;
        case 'g':
            gap_secs = atof(optarg);
            if (!(gap_secs > 0 && gap_secs < 3600))
                die("bad -g seconds");
            break;
        case 'k':
            nmarks = parse_marks(optarg, marks);
            if (nmarks <= 0)
                die("bad -k marks (increasing seconds, comma-separated, at most 64)");
            break;
        default:
            die("usage: bench [-s sizes] [-w window] [-t seconds] [-l|-b] [-g seconds [-k marks]] "
                "[-p pingpong|incast|pairs|cg|overlap] [-n iterations] [-c compute_us] [-X]");
        }
    }
    if (nmarks > 0 && gap_secs <= 0)
        die("-k needs -g");
    if (strcmp(pattern, "pingpong") != 0) {
        bench_opts_t o = {sizes, nsizes, window, target, iters, compute_us};
        if (nsizes == 0)
            die("the patterns need -s");
        if (nprocs < 2)
            die("needs at least 2 ranks");
        if (strcmp(pattern, "incast") == 0)
            run_incast(&o);
        else if (strcmp(pattern, "pairs") == 0)
            run_pairs(&o);
        else if (strcmp(pattern, "cg") == 0)
            run_cg(&o);
        else if (strcmp(pattern, "overlap") == 0)
            run_overlap(&o);
        else
            die("bad -p pattern (pingpong, incast, pairs, cg, overlap)");
        MPI_Finalize();
        return 0;
    }
    if (nsizes == 0) {
        for (long s = 1; s <= (4L << 20); s *= 4)
            sizes[nsizes++] = s;
    }
    if (nprocs < 2)
        die("needs at least 2 ranks (ranks beyond 1 stay idle)");

    size_t maxsize = 4;
    for (int i = 0; i < nsizes; i++)
        if ((size_t)sizes[i] > maxsize)
            maxsize = (size_t)sizes[i];

    long pg = sysconf(_SC_PAGESIZE);
    void *s = NULL, *r = NULL;
    if (posix_memalign(&s, pg > 0 ? (size_t)pg : 4096, maxsize) ||
        posix_memalign(&r, pg > 0 ? (size_t)pg : 4096, maxsize))
        die("out of memory");
    char *sbuf = s, *rbuf = r;
    memset(sbuf, 'a' + rank, maxsize);
    memset(rbuf, 0, maxsize);
    MPI_Request *req = calloc((size_t)window, sizeof(*req));
    MPI_Status *st = calloc((size_t)window, sizeof(*st));
    if (!req || !st)
        die("out of memory");

    if (rank == 0) {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        MPI_Get_processor_name(name, &len);
        printf("# bench: %d ranks, window %d, %.3f s per measurement, rank 0 on %s\n",
               nprocs, window, target, name);
        printf("# columns: RESULT size_bytes latency_us bandwidth_MBps lat_iters bw_windows\n");
        fflush(stdout);
    }

    /* Global warm-up, not measured: establish every connection (a BML that
     * stripes over several BTLs opens their connections lazily, and only
     * large messages use them all) and get both ranks spinning, so the first
     * size measured is not penalised. */
    MPI_Barrier(MPI_COMM_WORLD);
    pingpong(sbuf, rbuf, 1, 200, 200, 0, NULL);
    windows(sbuf, rbuf, maxsize, window < 8 ? window : 8, req, st, 1, 1, 0, NULL);
    pingpong(sbuf, rbuf, 1, 200, 200, 0, NULL);

    for (int i = 0; i < nsizes; i++) {
        size_t size = (size_t)sizes[i];
        int big = size > 8192;
        double lat_us = -1, bw = -1, t = 0;
        long lat_n = -1, bw_n = -1;

        if (do_lat) {
            long warm = size >= (1u << 20) ? 3 : big ? 10 : 100;
            MPI_Barrier(MPI_COMM_WORLD);
            pingpong(sbuf, rbuf, size, warm, warm, 0, NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            lat_n = pingpong(sbuf, rbuf, size, 10, big ? 1000 : 10000, target, &t);
            lat_us = t * 1e6 / (2.0 * (double)lat_n);
        }

        double cpu[2] = {-1, -1};
        if (do_bw && gap_secs > 0) {
            bw = failover_bandwidth(size, window, gap_secs, marks, nmarks, &bw_n);
        } else if (do_bw) {
            long warm = size >= (1u << 20) ? 1 : big ? 3 : 10;
            MPI_Barrier(MPI_COMM_WORLD);
            windows(sbuf, rbuf, size, window, req, st, warm, warm, 0, NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            double c0 = cpu_seconds();
            bw_n = windows(sbuf, rbuf, size, window, req, st, 2, big ? 100 : 1000, target, &t);
            double mine = (cpu_seconds() - c0) * 1e3 / ((double)size * window * bw_n / 1e6);
            if (rank == 1) {
                MPI_Send(&mine, 1, MPI_DOUBLE, 0, TAG_CPU, MPI_COMM_WORLD);
            } else if (rank == 0) {
                cpu[0] = mine;
                MPI_Recv(&cpu[1], 1, MPI_DOUBLE, 1, TAG_CPU, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            bw = (double)size * (double)window * (double)bw_n / t / 1e6;
        }

        if (rank == 0) {
            printf("RESULT %zu %.4f %.4f %ld %ld %.4f %.4f\n", size, lat_us, bw, lat_n, bw_n,
                   cpu[0], cpu[1]);
            fflush(stdout);
        }
    }

    /* Integrity: rank 1 last received rank 0's pattern ('a'), rank 0 last
     * received rank 1's ('b') in a ping-pong; a transport that delivers
     * garbage or nothing fails here. */
    if (rank <= 1) {
        size_t last = (size_t)sizes[nsizes - 1];
        char want = (char)('a' + (1 - rank));
        if (!do_lat && rank == 0)
            last = 0; /* rank 0 received only acknowledgements */
        for (size_t k = 0; k < last; k++)
            if (rbuf[k] != want)
                die("received data do not match the sender's pattern");
    }

    free(st);
    free(req);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * bench_patterns.c - the traffic patterns of contrib/bench beyond the
 * two-rank ping-pong (contrib/bench.c):
 *
 *   incast  ranks 1..N-1 each stream windows of W non-blocking sends to rank
 *           0, which keeps W receives posted per sender (Waitsome over all),
 *           checks each message as it completes and answers a complete
 *           window with a 4-byte go/stop reply (as osu_bw does per window);
 *           rank 0 says stop to each sender at its first window completed
 *           after -t seconds.
 *   pairs   rank i streams to rank i+N/2 (as osu_mbw_mr): windows of W sends,
 *           each message checked as it completes, each window answered by
 *           the receiver; every sender stops after -t seconds by its own
 *           clock (the last message's tag says so).
 *   cg      an iterative solver's step (conjugate gradient): rank r exchanges
 *           S bytes with rank r^1 in both directions at once (Irecv, Isend,
 *           Waitall), computes for -c µs (a spin, no MPI progress), then two
 *           8-byte MPI_Allreduce (sum of doubles); -n iterations.
 *   overlap communication hidden behind computation, 2 ranks: per size,
 *           rank 0 posts N Isends and rank 1 N Irecvs (all at once: N as
 *           many as fit in 64 MiB, at most 1024, at least 1), then each
 *           computes for -c µs (a spin on clock_gettime: pure local work, no
 *           MPI call at all, so no MPI progress unless the transport makes
 *           it on its own), then MPI_Waitall, timed. Separate phases post
 *           the same transfer and wait at once: their wall time, post to
 *           completion, is T0, the transfer without compute (the median of
 *           3 such phases, so one disturbed by another job does not count).
 *           Before all, one unmeasured transfer (connections up, buffers
 *           touched).
 *
 * Every message is filled with a pattern of its sender's rank, its number and
 * the offset (64-bit words: a start value from rank and number, then a
 * constant step), and the receiver compares every word; a mismatch aborts the
 * job naming the message and the first bad byte. The two sums are checked
 * exactly (integers below 2^53). -X flips one received byte before the first
 * check, to show that the check fails.
 *
 * Output (rank 0, stdout):
 *   HOST  <rank> <processor name>                       every rank, once
 *   FLOW  <pattern> <size> <src> <dst> <bytes> <msgs> <seconds> <window>
 *   TOTAL <pattern> <size> <bytes> <msgs> <seconds> <window>
 *   CG    <size> <iterations> <seconds>
 *   OVERLAP <size> <n> <rank> <t0> <post> <wait> <compute>   per size, ranks 0 and 1
 *         t0: the phases without compute, post to completion (median); then the phase
 *         with compute: post (time to post the N operations), wait (time
 *         inside MPI_Waitall after computing), compute (the spin's length);
 *         all in seconds
 * seconds: from a common start (after a barrier) to the flow's last window
 * (incast: rank 0's clock; pairs: the sender's); TOTAL's is the longest flow's.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 20
#define TAG_LAST 21
#define TAG_CTRL 22

#define STEP 0x9E3779B97F4A7C15ull
#define PAIRS_BYTES_MAX (64L << 20)   /* per rank: pairs' window shrinks above */
#define INCAST_BYTES_MAX (2L << 30)   /* rank 0's receive buffers */
#define CG_WARMUP 20
#define OVERLAP_BYTES_MAX (64L << 20) /* per size: N x size at most this */
#define OVERLAP_MSGS_MAX 1024
#define TAG_OVERLAP 23
#define OVERLAP_T0_PHASES 3           /* T0: their median */

int corrupt_once; /* -X: set by bench.c */

/* First word of message msg from rank src (splitmix64 of both). */
static uint64_t msg_seed(int src, uint64_t msg)
{
    uint64_t x = ((uint64_t) (unsigned) src << 44) ^ msg;
    x += STEP;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void msg_fill(void *buf, size_t size, int src, uint64_t msg)
{
    uint64_t *w = buf, v = msg_seed(src, msg);
    size_t n = size / 8;
    for (size_t k = 0; k < n; k++, v += STEP)
        w[k] = v;
    memcpy((char *) buf + 8 * n, &v, size % 8);
}

static unsigned char expected_byte(int src, uint64_t msg, size_t off)
{
    uint64_t v = msg_seed(src, msg) + (uint64_t) (off / 8) * STEP;
    unsigned char b[8];
    memcpy(b, &v, 8);
    return b[off % 8];
}

/* The report of a bad message: which, where, how much, and whether its start
 * is some other message (a misdelivery rather than damage). */
static void report_bad(const unsigned char *p, size_t size, int src, uint64_t msg, const char *what)
{
    size_t first = size, bad = 0;
    for (size_t i = 0; i < size; i++) {
        if (p[i] != expected_byte(src, msg, i)) {
            if (first == size)
                first = i;
            bad++;
        }
    }
    char other[128] = "";
    if (size >= 8) {
        uint64_t w0;
        memcpy(&w0, p, 8);
        for (int r = 0; r < nprocs && !other[0]; r++)
            for (uint64_t m = msg > 256 ? msg - 256 : 0; m < msg + 256; m++)
                if (msg_seed(r, m) == w0 && !(r == src && m == msg)) {
                    snprintf(other, sizeof(other), "; it starts as message %llu from rank %d",
                             (unsigned long long) m, r);
                    break;
                }
    }
    char line[512];
    snprintf(line, sizeof(line),
             "DATA MISMATCH in %s: message %llu from rank %d (%zu bytes): %zu bad bytes, the "
             "first at offset %zu: 0x%02x, expected 0x%02x%s",
             what, (unsigned long long) msg, src, size, bad, first,
             first < size ? p[first] : 0, first < size ? expected_byte(src, msg, first) : 0, other);
    die(line);
}

/* Every word compared (branch-free inside a block, so it runs near memory
 * speed); the report only when something differs. */
void msg_check(void *buf, size_t size, int src, uint64_t msg, const char *what)
{
    if (corrupt_once && size > 0) {
        corrupt_once = 0;
        ((unsigned char *) buf)[size / 2] ^= 0x40;
    }
    const uint64_t *w = buf;
    uint64_t v = msg_seed(src, msg), diff = 0;
    size_t n = size / 8;
    for (size_t k = 0; k < n; k++, v += STEP)
        diff |= w[k] ^ v;
    if (diff == 0 && size % 8)
        diff = memcmp((const char *) buf + 8 * n, &v, size % 8) != 0;
    if (diff)
        report_bad(buf, size, src, msg, what);
}

void msg_check_count(const MPI_Status *st, size_t size, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    if (n < 0 || (size_t) n != size) {
        char line[160];
        snprintf(line, sizeof(line), "%s: a message of %d bytes from rank %d, expected %zu", what,
                 n, st->MPI_SOURCE, size);
        die(line);
    }
}

static void *alloc_pages(size_t bytes)
{
    long pg = sysconf(_SC_PAGESIZE);
    void *p = NULL;
    if (posix_memalign(&p, pg > 0 ? (size_t) pg : 4096, bytes ? bytes : 1))
        die("out of memory");
    memset(p, 0, bytes);
    return p;
}

/* Every rank's processor name (its emulated host), so the driver can read a
 * host's counters for a rank. */
static void print_hosts(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(name, 0, sizeof(name));
    MPI_Get_processor_name(name, &len);
    char *all = rank == 0 ? malloc((size_t) nprocs * MPI_MAX_PROCESSOR_NAME) : NULL;
    if (rank == 0 && !all)
        die("out of memory");
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < nprocs; r++) {
            char *n = all + (size_t) r * MPI_MAX_PROCESSOR_NAME;
            n[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
            for (char *c = n; *c; c++)
                if (*c == ' ' || *c == '\t' || *c == '\n')
                    *c = '_';
            printf("HOST %d %s\n", r, n[0] ? n : "?");
        }
        fflush(stdout);
        free(all);
    }
}

/* ------------------------------------------------------------------ incast */

typedef struct incast_flow {
    uint64_t next_msg; /* number of the first message of the window posted */
    int pending;       /* receives of that window not yet complete */
    int done;
    double bytes, msgs, seconds;
} incast_flow_t;

/* One phase: every sender streams until rank 0 has seen tmax seconds pass
 * (tmax 0: one window each, the warm-up). Rank 0 fills flows[]. */
static void incast_phase(size_t size, int w, double tmax, char *rbuf, char *sbuf,
                         MPI_Request *req, int *idx, MPI_Status *st, incast_flow_t *flows)
{
    int senders = nprocs - 1;
    if (rank == 0) {
        int nreq = senders * w, active = senders;
        for (int s = 0; s < senders; s++) {
            memset(&flows[s], 0, sizeof(flows[s]));
            for (int j = 0; j < w; j++)
                MPI_Irecv(rbuf + ((size_t) s * w + j) * size, (int) size, MPI_BYTE, s + 1,
                          TAG_DATA, MPI_COMM_WORLD, &req[s * w + j]);
            flows[s].pending = w;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        while (active > 0) {
            int n = 0;
            MPI_Waitsome(nreq, req, &n, idx, st);
            if (n == MPI_UNDEFINED)
                die("incast: no receive left posted while senders are active");
            for (int i = 0; i < n; i++) {
                int s = idx[i] / w, j = idx[i] % w;
                /* messages from one sender match in order, so receive j of
                 * the window holds message next_msg + j; checked now, while
                 * the rest of the window arrives */
                msg_check_count(&st[i], size, "incast");
                msg_check(rbuf + (size_t) idx[i] * size, size, s + 1,
                          flows[s].next_msg + (uint64_t) j, "incast (rank 0)");
                if (--flows[s].pending > 0)
                    continue;
                flows[s].next_msg += (uint64_t) w;
                flows[s].bytes += (double) size * w;
                flows[s].msgs += w;
                double now = MPI_Wtime() - t0;
                int stop = now >= tmax;
                MPI_Send(&stop, 1, MPI_INT, s + 1, TAG_CTRL, MPI_COMM_WORLD);
                if (stop) {
                    flows[s].done = 1;
                    flows[s].seconds = now;
                    active--;
                    continue;
                }
                for (int j = 0; j < w; j++)
                    MPI_Irecv(rbuf + ((size_t) s * w + j) * size, (int) size, MPI_BYTE, s + 1,
                              TAG_DATA, MPI_COMM_WORLD, &req[s * w + j]);
                flows[s].pending = w;
            }
        }
    } else {
        uint64_t msg = 0;
        int stop = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        while (!stop) {
            for (int j = 0; j < w; j++) {
                msg_fill(sbuf + (size_t) j * size, size, rank, msg + (uint64_t) j);
                MPI_Isend(sbuf + (size_t) j * size, (int) size, MPI_BYTE, 0, TAG_DATA,
                          MPI_COMM_WORLD, &req[j]);
            }
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&stop, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            msg += (uint64_t) w;
        }
    }
}

void run_incast(const bench_opts_t *o)
{
    int w = o->window, senders = nprocs - 1;
    size_t maxsize = 1;
    for (int i = 0; i < o->nsizes; i++)
        if ((size_t) o->sizes[i] > maxsize)
            maxsize = (size_t) o->sizes[i];
    if ((double) maxsize * w * senders > (double) INCAST_BYTES_MAX)
        die("incast: rank 0 would need more than 2 GiB of receive buffers (senders x window x "
            "size): lower -w or the size");

    size_t nbuf = rank == 0 ? (size_t) senders * w : (size_t) w;
    char *buf = alloc_pages(nbuf * maxsize);
    MPI_Request *req = calloc(nbuf, sizeof(*req));
    MPI_Status *st = calloc(nbuf, sizeof(*st));
    int *idx = calloc(nbuf, sizeof(*idx));
    incast_flow_t *flows = calloc((size_t) senders, sizeof(*flows));
    if (!req || !st || !idx || !flows)
        die("out of memory");
    for (size_t i = 0; i < nbuf; i++)
        req[i] = MPI_REQUEST_NULL;

    print_hosts();
    if (rank == 0) {
        printf("# incast: ranks 1..%d stream to rank 0, window %d, %.3f s per size\n", senders, w,
               o->seconds);
        fflush(stdout);
    }
    for (int i = 0; i < o->nsizes; i++) {
        size_t size = (size_t) o->sizes[i];
        /* warm-up, not measured: connections up, every rank spinning */
        incast_phase(size, w, 0, buf, buf, req, idx, st, flows);
        incast_phase(size, w, o->seconds, buf, buf, req, idx, st, flows);
        if (rank == 0) {
            double bytes = 0, msgs = 0, secs = 0;
            for (int s = 0; s < senders; s++) {
                printf("FLOW incast %zu %d 0 %.0f %.0f %.6f %d\n", size, s + 1, flows[s].bytes,
                       flows[s].msgs, flows[s].seconds, w);
                bytes += flows[s].bytes;
                msgs += flows[s].msgs;
                if (flows[s].seconds > secs)
                    secs = flows[s].seconds;
            }
            printf("TOTAL incast %zu %.0f %.0f %.6f %d\n", size, bytes, msgs, secs, w);
            fflush(stdout);
        }
    }
    free(flows);
    free(idx);
    free(st);
    free(req);
    free(buf);
}

/* ------------------------------------------------------------------- pairs */

/* One phase of pair (rank, rank+N/2): the sender's bytes, messages, seconds
 * (zeros on a receiver). tmax 0: one window, the warm-up. */
static void pairs_phase(size_t size, int w, double tmax, char *buf, MPI_Request *req,
                        int *idx, MPI_Status *st, double out[3])
{
    int half = nprocs / 2, ack = 0;
    uint64_t msg = 0;
    out[0] = out[1] = out[2] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank < half) {
        int dst = rank + half, last;
        do {
            last = MPI_Wtime() - t0 >= tmax;
            for (int j = 0; j < w; j++) {
                msg_fill(buf + (size_t) j * size, size, rank, msg + (uint64_t) j);
                MPI_Isend(buf + (size_t) j * size, (int) size, MPI_BYTE, dst,
                          last && j == w - 1 ? TAG_LAST : TAG_DATA, MPI_COMM_WORLD, &req[j]);
            }
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, dst, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            msg += (uint64_t) w;
        } while (!last);
        out[0] = (double) msg * (double) size;
        out[1] = (double) msg;
        out[2] = MPI_Wtime() - t0;
    } else if (rank < 2 * half) {
        int src = rank - half, last = 0;
        while (!last) {
            for (int j = 0; j < w; j++)
                MPI_Irecv(buf + (size_t) j * size, (int) size, MPI_BYTE, src, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &req[j]);
            /* each message checked as it completes, while the rest arrive */
            for (int left = w; left > 0;) {
                int n = 0;
                MPI_Waitsome(w, req, &n, idx, st);
                if (n == MPI_UNDEFINED)
                    die("pairs: no receive left posted");
                for (int i = 0; i < n; i++) {
                    int j = idx[i], tag = st[i].MPI_TAG;
                    msg_check_count(&st[i], size, "pairs");
                    if (tag != TAG_DATA && !(tag == TAG_LAST && j == w - 1))
                        die("pairs: a message with an unexpected tag");
                    msg_check(buf + (size_t) j * size, size, src, msg + (uint64_t) j, "pairs");
                    last |= tag == TAG_LAST;
                }
                left -= n;
            }
            MPI_Send(&ack, 1, MPI_INT, src, TAG_CTRL, MPI_COMM_WORLD);
            msg += (uint64_t) w;
        }
    }
}

/* The window for a size: at most PAIRS_BYTES_MAX of messages in flight. */
static int pairs_window(int w, size_t size)
{
    long fit = size > 0 ? PAIRS_BYTES_MAX / (long) size : w;
    return fit < 1 ? 1 : fit < w ? (int) fit : w;
}

void run_pairs(const bench_opts_t *o)
{
    int half = nprocs / 2;
    size_t maxbytes = 1;
    if (nprocs % 2)
        die("pairs: needs an even number of ranks");
    for (int i = 0; i < o->nsizes; i++) {
        size_t s = (size_t) o->sizes[i], b = s * (size_t) pairs_window(o->window, s);
        if (b > maxbytes)
            maxbytes = b;
    }
    char *buf = alloc_pages(maxbytes);
    MPI_Request *req = calloc((size_t) o->window, sizeof(*req));
    MPI_Status *st = calloc((size_t) o->window, sizeof(*st));
    int *idx = calloc((size_t) o->window, sizeof(*idx));
    double *all = calloc((size_t) nprocs * 3, sizeof(*all));
    if (!req || !st || !idx || !all)
        die("out of memory");

    print_hosts();
    if (rank == 0) {
        printf("# pairs: rank i streams to rank i+%d, window %d, %.3f s per size\n", half,
               o->window, o->seconds);
        fflush(stdout);
    }
    for (int i = 0; i < o->nsizes; i++) {
        size_t size = (size_t) o->sizes[i];
        int w = pairs_window(o->window, size);
        double mine[3];
        pairs_phase(size, w, 0, buf, req, idx, st, mine);
        pairs_phase(size, w, o->seconds, buf, req, idx, st, mine);
        MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double bytes = 0, msgs = 0, secs = 0;
            for (int r = 0; r < half; r++) {
                const double *v = all + 3 * r;
                printf("FLOW pairs %zu %d %d %.0f %.0f %.6f %d\n", size, r, r + half, v[0], v[1],
                       v[2], w);
                bytes += v[0];
                msgs += v[1];
                if (v[2] > secs)
                    secs = v[2];
            }
            printf("TOTAL pairs %zu %.0f %.0f %.6f %d\n", size, bytes, msgs, secs, w);
            fflush(stdout);
        }
    }
    free(all);
    free(idx);
    free(st);
    free(req);
    free(buf);
}

/* ---------------------------------------------------------------------- cg */

static void allreduce_checked(double mine, double want, const char *what)
{
    double sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (sum != want) {
        char line[160];
        snprintf(line, sizeof(line), "DATA MISMATCH in cg: %s: MPI_Allreduce gave %.17g, expected %.17g",
                 what, sum, want);
        die(line);
    }
}

static void cg_iterations(size_t size, long iters, double compute_us, char *sbuf, char *rbuf)
{
    int partner = rank ^ 1;
    double ranksum = (double) nprocs * (nprocs + 1) / 2;
    MPI_Request req[2];
    MPI_Status st[2];
    for (long it = 0; it < iters; it++) {
        /* the halo exchange of q = A p */
        msg_fill(sbuf, size, rank, (uint64_t) it);
        MPI_Irecv(rbuf, (int) size, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(sbuf, (int) size, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, st);
        msg_check_count(&st[0], size, "cg");
        msg_check(rbuf, size, partner, (uint64_t) it, "cg");
        /* the local part of the product and the vector updates */
        if (compute_us > 0) {
            double until = MPI_Wtime() + compute_us * 1e-6;
            while (MPI_Wtime() < until)
                ;
        }
        /* p.q and r.r: values whose sums are exact */
        double a = (double) (rank + 1) * (double) (it + 1);
        allreduce_checked(a, (double) (it + 1) * ranksum, "first sum");
        allreduce_checked(a * 3, (double) (it + 1) * ranksum * 3, "second sum");
    }
}

void run_cg(const bench_opts_t *o)
{
    size_t maxsize = 1;
    if (nprocs % 2)
        die("cg: needs an even number of ranks (rank r exchanges with rank r^1)");
    for (int i = 0; i < o->nsizes; i++)
        if ((size_t) o->sizes[i] > maxsize)
            maxsize = (size_t) o->sizes[i];
    char *sbuf = alloc_pages(maxsize), *rbuf = alloc_pages(maxsize);

    print_hosts();
    if (rank == 0) {
        printf("# cg: %ld iterations per size, compute %.1f us per iteration\n", o->iters,
               o->compute_us);
        fflush(stdout);
    }
    for (int i = 0; i < o->nsizes; i++) {
        size_t size = (size_t) o->sizes[i];
        cg_iterations(size, CG_WARMUP, o->compute_us, sbuf, rbuf);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        cg_iterations(size, o->iters, o->compute_us, sbuf, rbuf);
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            printf("CG %zu %ld %.6f\n", size, o->iters, t);
            fflush(stdout);
        }
    }
    free(rbuf);
    free(sbuf);
}

/* ----------------------------------------------------------------- overlap */

/* The monotonic clock, seconds: read directly, not through MPI_Wtime, so
 * that the compute below makes no MPI call whatsoever. */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Pure local work for us microseconds: arithmetic on a local value and the
 * clock, no MPI call (no MPI_Test, no MPI_Wtime), so MPI makes progress only
 * if the transport has a thread of its own. Returns the seconds it lasted. */
static double overlap_compute(double us)
{
    static volatile uint64_t sink;
    uint64_t x = sink | 1;
    double t0 = mono_now(), until = t0 + us * 1e-6, t = t0;
    while (t < until) {
        for (int k = 0; k < 256; k++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        t = mono_now();
    }
    sink = x;
    return t - t0;
}

/* As many messages as fit in OVERLAP_BYTES_MAX, at most OVERLAP_MSGS_MAX,
 * at least 1. */
static int overlap_count(size_t size)
{
    long n = size > 0 ? OVERLAP_BYTES_MAX / (long) size : OVERLAP_MSGS_MAX;
    return n < 1 ? 1 : n > OVERLAP_MSGS_MAX ? OVERLAP_MSGS_MAX : (int) n;
}

/* One transfer of n messages of size bytes from rank 0 to rank 1, numbered
 * first..first+n-1: both post everything, compute for compute_us (0: none),
 * then wait. out: post, wait, compute seconds and the whole (post to
 * completion). The receiver checks every message afterwards (not timed). */
static void overlap_phase(size_t size, int n, uint64_t first, double compute_us, char *buf,
                          MPI_Request *req, MPI_Status *st, double out[4])
{
    if (rank == 0)
        for (int j = 0; j < n; j++)
            msg_fill(buf + (size_t) j * size, size, 0, first + (uint64_t) j);
    else
        memset(buf, 0, (size_t) n * size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = mono_now();
    for (int j = 0; j < n; j++) {
        if (rank == 0)
            MPI_Isend(buf + (size_t) j * size, (int) size, MPI_BYTE, 1, TAG_OVERLAP,
                      MPI_COMM_WORLD, &req[j]);
        else
            MPI_Irecv(buf + (size_t) j * size, (int) size, MPI_BYTE, 0, TAG_OVERLAP,
                      MPI_COMM_WORLD, &req[j]);
    }
    double t1 = mono_now();
    double comp = compute_us > 0 ? overlap_compute(compute_us) : 0;
    double t2 = mono_now();
    MPI_Waitall(n, req, st);
    double t3 = mono_now();
    out[0] = t1 - t0;
    out[1] = t3 - t2;
    out[2] = comp;
    out[3] = t3 - t0;
    if (rank == 1)
        for (int j = 0; j < n; j++) {
            /* messages from one sender match in order: receive j holds
             * message first + j */
            msg_check_count(&st[j], size, "overlap");
            msg_check(buf + (size_t) j * size, size, 0, first + (uint64_t) j, "overlap (rank 1)");
        }
}

void run_overlap(const bench_opts_t *o)
{
    size_t maxbytes = 1;
    int maxn = 1;
    if (nprocs != 2)
        die("overlap: needs exactly 2 ranks (rank 0 sends, rank 1 receives)");
    for (int i = 0; i < o->nsizes; i++) {
        size_t s = (size_t) o->sizes[i];
        int n = overlap_count(s);
        if (s * (size_t) n > maxbytes)
            maxbytes = s * (size_t) n;
        if (n > maxn)
            maxn = n;
    }
    char *buf = alloc_pages(maxbytes);
    MPI_Request *req = calloc((size_t) maxn, sizeof(*req));
    MPI_Status *st = calloc((size_t) maxn, sizeof(*st));
    if (!req || !st)
        die("out of memory");

    print_hosts();
    if (rank == 0) {
        printf("# overlap: rank 0 sends N messages to rank 1, all posted at once, then %.1f us "
               "of compute on both (no MPI call), then MPI_Waitall\n", o->compute_us);
        fflush(stdout);
    }
    uint64_t msg = 0;
    for (int i = 0; i < o->nsizes; i++) {
        size_t size = (size_t) o->sizes[i];
        int n = overlap_count(size);
        double warm[4], plain[4], comp[4], t0s[OVERLAP_T0_PHASES], mine[8], both[16];
        /* warm-up, not measured: connections up, every buffer touched */
        overlap_phase(size, n, msg, 0, buf, req, st, warm);
        msg += (uint64_t) n;
        /* T0: the transfer alone, waited for at once; the median of a few */
        for (int k = 0; k < OVERLAP_T0_PHASES; k++) {
            overlap_phase(size, n, msg, 0, buf, req, st, plain);
            msg += (uint64_t) n;
            int at = k;
            for (; at > 0 && t0s[at - 1] > plain[3]; at--)
                t0s[at] = t0s[at - 1];
            t0s[at] = plain[3];
        }
        /* the transfer behind the compute */
        overlap_phase(size, n, msg, o->compute_us, buf, req, st, comp);
        msg += (uint64_t) n;
        mine[0] = t0s[OVERLAP_T0_PHASES / 2];
        mine[1] = comp[0];
        mine[2] = comp[1];
        mine[3] = comp[2];
        MPI_Gather(mine, 4, MPI_DOUBLE, both, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int r = 0; r < 2; r++) {
                const double *v = both + 4 * r;
                printf("OVERLAP %zu %d %d %.6f %.6f %.6f %.6f\n", size, n, r, v[0], v[1], v[2],
                       v[3]);
            }
            fflush(stdout);
        }
    }
    free(st);
    free(req);
    free(buf);
}

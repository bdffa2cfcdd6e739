/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * ordering.c - MPI non-overtaking rule, checked with sequence numbers in
 * the payload and a full pattern check of every byte.
 *
 *  1. same (comm, source, tag): each rank streams NSEQ messages of mixed
 *     sizes (eager and rendezvous interleaved, some MPI_Issend) to its right
 *     neighbour; the receiver takes them (a) one at a time with blocking
 *     receives of a maximum-size buffer, (b) with all receives pre-posted.
 *  2. MPI_ANY_TAG from one source: tags vary per message, the receiver
 *     must still see send order and the right tag for each.
 *  3. MPI_ANY_SOURCE: every rank sends NANY messages to every other rank;
 *     each receiver uses MPI_ANY_SOURCE and checks per-source order.
 *  4. several communicators in flight at once (WORLD, 3 x MPI_Comm_dup, a
 *     rank-reversing split, a parity split), same tag on all: no cross-talk
 *     and per-communicator order.
 *
 * Payload header (16 bytes, every message is >= 16 bytes):
 *   u64 seq | u32 world source | u32 stream id   (little endian)
 * followed by the pattern for (source, stream << 32 | seq) at offset 16..
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR 16
#define NSEQ 160
#define NANYTAG 120
#define NANY 24
#define NCOMMSG 40
#define MAXMSG (1u << 20)
#define TAG 7

enum { S_SAME_BLOCK = 1, S_SAME_PRE, S_ANYTAG, S_ANYSRC, S_COMM0 = 16 };

static size_t seq_size(int stream, int src, int dst, int seq)
{
    uint64_t st = mt_hash3((uint64_t)stream << 32 | (uint32_t)src,
                           (uint64_t)dst, (uint64_t)seq);
    uint64_t r = mt_rand(&st) % 100;

    if (r < 45)
        return (size_t)mt_range(&st, HDR, 1024);
    if (r < 70)
        return (size_t)mt_range(&st, 1025, 65536 + 64);
    if (r < 90)
        return (size_t)mt_range(&st, 65536 - 64, 300000);
    return (size_t)mt_range(&st, 300001, MAXMSG);
}

static uint64_t pidx(int stream, int seq)
{
    return (uint64_t)stream << 32 | (uint32_t)seq;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static unsigned char *make_msg(int stream, int dst, int seq, size_t *len)
{
    size_t n = seq_size(stream, mt_rank, dst, seq);
    unsigned char *b = mt_malloc(n);

    put64(b, (uint64_t)seq);
    put32(b + 8, (uint32_t)mt_rank);
    put32(b + 12, (uint32_t)stream);
    mt_fill(b + HDR, n - HDR, mt_rank, pidx(stream, seq), HDR);
    *len = n;
    return b;
}

/* Check a received message against what `src` sent as `seq` of `stream`
 * (the receiver's rank is the destination). */
static void check_msg(unsigned char *b, const MPI_Status *st, int src,
                      int st_src, int tag, int stream, int seq,
                      const char *what)
{
    size_t n = seq_size(stream, src, mt_rank, seq);
    uint64_t gseq;
    uint32_t gsrc, gstream;

    if (n >= HDR)
        mt_maybe_corrupt(b, HDR);
    gseq = get64(b);
    gsrc = get32(b + 8);
    gstream = get32(b + 12);
    if (gseq != (uint64_t)seq || gsrc != (uint32_t)src ||
        gstream != (uint32_t)stream)
        mt_fail(MT_EXIT_MISMATCH,
                "ORDER/MISMATCH in %s: expected seq %d from %d stream %d, got "
                "seq %llu from %u stream %u", what, seq, src, stream,
                (unsigned long long)gseq, gsrc, gstream);
    mt_check_status(st, st_src, tag, n, "%s seq %d from %d", what, seq, src);
    mt_check(b + HDR, n - HDR, src, pidx(stream, seq), HDR,
             "%s seq %d from %d", what, seq, src);
}

static double bytes_checked;
static long msgs_checked;

/* Test 1: same (comm, source, tag) in send order. */
static void test_same_tag(int stream, int prepost)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    unsigned char *sb[NSEQ], *rb[NSEQ];
    MPI_Request sr[NSEQ], rr[NSEQ];
    MPI_Status rs[NSEQ];

    if (prepost) {
        for (int i = 0; i < NSEQ; i++) {
            size_t n = seq_size(stream, left, mt_rank, i);
            /* receive buffers deliberately larger than the message */
            rb[i] = mt_malloc(n + 256);
            MT_MPI(MPI_Irecv(rb[i], (int)(n + 256), MPI_BYTE, left, TAG,
                             MPI_COMM_WORLD, &rr[i]));
        }
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int i = 0; i < NSEQ; i++) {
        size_t n;
        sb[i] = make_msg(stream, right, i, &n);
        if (i % 7 == 3)
            MT_MPI(MPI_Issend(sb[i], (int)n, MPI_BYTE, right, TAG,
                              MPI_COMM_WORLD, &sr[i]));
        else
            MT_MPI(MPI_Isend(sb[i], (int)n, MPI_BYTE, right, TAG,
                             MPI_COMM_WORLD, &sr[i]));
    }
    if (prepost) {
        MT_MPI(MPI_Waitall(NSEQ, rr, rs));
        for (int i = 0; i < NSEQ; i++) {
            check_msg(rb[i], &rs[i], left, left, TAG, stream, i,
                      "same-tag prepost");
            bytes_checked += (double)seq_size(stream, left, mt_rank, i);
            msgs_checked++;
            free(rb[i]);
        }
    } else {
        unsigned char *b = mt_malloc(MAXMSG);
        for (int i = 0; i < NSEQ; i++) {
            MPI_Status st;
            MT_MPI(MPI_Recv(b, MAXMSG, MPI_BYTE, left, TAG, MPI_COMM_WORLD,
                            &st));
            check_msg(b, &st, left, left, TAG, stream, i, "same-tag blocking");
            bytes_checked += (double)seq_size(stream, left, mt_rank, i);
            msgs_checked++;
        }
        free(b);
    }
    MT_MPI(MPI_Waitall(NSEQ, sr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NSEQ; i++)
        free(sb[i]);
}

/* Test 2: MPI_ANY_TAG from one source sees send order. */
static void test_any_tag(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    unsigned char *sb[NANYTAG], *b = mt_malloc(MAXMSG);
    MPI_Request sr[NANYTAG];

    for (int i = 0; i < NANYTAG; i++) {
        size_t n;
        sb[i] = make_msg(S_ANYTAG, right, i, &n);
        MT_MPI(MPI_Isend(sb[i], (int)n, MPI_BYTE, right, (i * 5) % 11,
                         MPI_COMM_WORLD, &sr[i]));
    }
    for (int i = 0; i < NANYTAG; i++) {
        MPI_Status st;
        MT_MPI(MPI_Recv(b, MAXMSG, MPI_BYTE, left, MPI_ANY_TAG, MPI_COMM_WORLD,
                        &st));
        check_msg(b, &st, left, left, (i * 5) % 11, S_ANYTAG, i, "any-tag");
        bytes_checked += (double)seq_size(S_ANYTAG, left, mt_rank, i);
        msgs_checked++;
    }
    MT_MPI(MPI_Waitall(NANYTAG, sr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NANYTAG; i++)
        free(sb[i]);
    free(b);
}

/* Test 3: MPI_ANY_SOURCE keeps per-source order. */
static void test_any_source(void)
{
    int n = mt_size, total = (n - 1) * NANY, k = 0;
    unsigned char **sb = mt_malloc(sizeof(*sb) * (size_t)(total ? total : 1));
    MPI_Request *sr = mt_malloc(sizeof(*sr) * (size_t)(total ? total : 1));
    int *next = calloc((size_t)n, sizeof(int));
    unsigned char *b = mt_malloc(MAXMSG);

    if (!next)
        mt_fail(MT_EXIT_ERROR, "out of memory");
    /* interleave destinations so each source's stream is spread out */
    for (int i = 0; i < NANY; i++) {
        for (int d = 1; d < n; d++) {
            int dst = (mt_rank + d) % n;
            size_t len;
            sb[k] = make_msg(S_ANYSRC, dst, i, &len);
            MT_MPI(MPI_Isend(sb[k], (int)len, MPI_BYTE, dst, TAG,
                             MPI_COMM_WORLD, &sr[k]));
            k++;
        }
    }
    for (int m = 0; m < total; m++) {
        MPI_Status st;
        int src;
        MT_MPI(MPI_Recv(b, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, TAG,
                        MPI_COMM_WORLD, &st));
        src = st.MPI_SOURCE;
        if (src < 0 || src >= n || src == mt_rank || next[src] >= NANY)
            mt_fail(MT_EXIT_MISMATCH, "any-source: unexpected message from "
                    "source %d (got %d from it already)", src,
                    (src >= 0 && src < n) ? next[src] : -1);
        check_msg(b, &st, src, src, TAG, S_ANYSRC, next[src], "any-source");
        bytes_checked += (double)seq_size(S_ANYSRC, src, mt_rank, next[src]);
        msgs_checked++;
        next[src]++;
    }
    MT_MPI(MPI_Waitall(total, sr, MPI_STATUSES_IGNORE));
    for (k = 0; k < total; k++)
        free(sb[k]);
    free(sb);
    free(sr);
    free(next);
    free(b);
}

/* Test 4: several communicators at once, same tag, no cross-talk. */
#define NCOMM 6
/* Post the receives of every other communicator, from `first` down, from
 * each one's left neighbour; returns the new request count. */
static int post_comm_recvs(int first, MPI_Comm *comms, const int *crank, const int *csize,
                           int (*worldof)[2], unsigned char *(*rb)[NCOMMSG],
                           MPI_Request *rr, int nr)
{
    for (int c = first; c >= 0; c -= 2) {
        int left = (crank[c] - 1 + csize[c]) % csize[c];
        for (int i = 0; i < NCOMMSG; i++) {
            size_t n = seq_size(S_COMM0 + c, worldof[c][0], mt_rank, i);
            rb[c][i] = mt_malloc(n);
            MT_MPI(MPI_Irecv(rb[c][i], (int)n, MPI_BYTE, left, TAG, comms[c],
                             &rr[nr++]));
        }
    }
    return nr;
}

static void test_comms(void)
{
    MPI_Comm comms[NCOMM];
    int crank[NCOMM], csize[NCOMM];
    unsigned char *sb[NCOMM][NCOMMSG], *rb[NCOMM][NCOMMSG];
    MPI_Request sr[NCOMM * NCOMMSG], rr[NCOMM * NCOMMSG];
    MPI_Status rs[NCOMM * NCOMMSG];
    int worldof[NCOMM][2]; /* world ranks of left and right in comm c */
    MPI_Group wg;

    comms[0] = MPI_COMM_WORLD;
    for (int c = 1; c <= 3; c++)
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]));
    /* reversed rank order */
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &comms[4]));
    /* parity split (singleton communicators when np <= 2: self traffic) */
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &comms[5]));
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));

    for (int c = 0; c < NCOMM; c++) {
        MPI_Group g;
        int lr[2];
        MT_MPI(MPI_Comm_rank(comms[c], &crank[c]));
        MT_MPI(MPI_Comm_size(comms[c], &csize[c]));
        lr[0] = (crank[c] - 1 + csize[c]) % csize[c];
        lr[1] = (crank[c] + 1) % csize[c];
        MT_MPI(MPI_Comm_group(comms[c], &g));
        MT_MPI(MPI_Group_translate_ranks(g, 2, lr, wg, worldof[c]));
        MPI_Group_free(&g);
    }
    MPI_Group_free(&wg);

    /* pre-post receives for half of the communicators (in reverse order),
     * the rest after the sends */
    int nr = post_comm_recvs(NCOMM - 1, comms, crank, csize, worldof, rb, rr, 0);
    int ns = 0;
    for (int i = 0; i < NCOMMSG; i++) {
        for (int c = 0; c < NCOMM; c++) {
            int right = (crank[c] + 1) % csize[c];
            size_t n;
            sb[c][i] = make_msg(S_COMM0 + c, worldof[c][1], i, &n);
            MT_MPI(MPI_Isend(sb[c][i], (int)n, MPI_BYTE, right, TAG, comms[c],
                             &sr[ns++]));
        }
    }
    nr = post_comm_recvs(NCOMM - 2, comms, crank, csize, worldof, rb, rr, nr);
    MT_MPI(MPI_Waitall(nr, rr, rs));
    nr = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int c = pass ? NCOMM - 2 : NCOMM - 1; c >= 0; c -= 2) {
            int left = (crank[c] - 1 + csize[c]) % csize[c];
            for (int i = 0; i < NCOMMSG; i++) {
                char what[64];
                snprintf(what, sizeof what, "comm %d", c);
                check_msg(rb[c][i], &rs[nr++], worldof[c][0], left, TAG,
                          S_COMM0 + c, i, what);
                bytes_checked += (double)seq_size(S_COMM0 + c, worldof[c][0],
                                                  mt_rank, i);
                msgs_checked++;
                free(rb[c][i]);
            }
        }
    }
    MT_MPI(MPI_Waitall(ns, sr, MPI_STATUSES_IGNORE));
    for (int c = 0; c < NCOMM; c++)
        for (int i = 0; i < NCOMMSG; i++)
            free(sb[c][i]);
    for (int c = 1; c < NCOMM; c++)
        MT_MPI(MPI_Comm_free(&comms[c]));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "ordering");
    mt_hang_point(); /* MPITEST_HANG: rank 0 blocks forever */

    for (int rep = 0; rep < mt_scale(); rep++) {
        test_same_tag(S_SAME_BLOCK, 0);
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        test_same_tag(S_SAME_PRE, 1);
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        test_any_tag();
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        test_any_source();
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        test_comms();
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    {
        double mib = mt_total_mib(bytes_checked);
        long tm = mt_total_count(msgs_checked);
        mt_finish("msgs=%ld checked=%.1fMiB", tm, mib);
    }
    return 0;
}

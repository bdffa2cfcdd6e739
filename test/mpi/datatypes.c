/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * datatypes.c - non-contiguous datatypes between paired ranks (0<->1,
 * 2<->3, ...; odd np: last rank idles), both directions, three modes:
 *
 *   typed  -> typed   receive as the same type: every data byte must match
 *                     the sender's buffer at the same offset, every gap byte
 *                     of the receive buffer (and a guard after it) must be
 *                     untouched;
 *   typed  -> packed  receive as a contiguous buffer with a compatible type
 *                     signature: bytes must be the type map in order;
 *   packed -> typed   send contiguous, scatter into the non-contiguous type.
 *
 * Types: vector (resized, gap between elements), a large double vector
 * (rendezvous / pipelined), indexed with non-monotonic displacements, a C
 * struct with padding, a struct with large gaps and non-monotonic field
 * order, and a vector of structs (nested).  Each type also carries an
 * independent description (list of fields in type-map order) used to
 * compute the expected bytes without MPI's datatype engine.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64

typedef struct {
    size_t off;        /* byte displacement inside one element */
    MPI_Datatype base; /* predefined type */
    int n;             /* number of base elements */
    size_t len;        /* bytes: n * size of base */
} field_t;

typedef struct {
    const char *name;
    MPI_Datatype type;   /* the type under test (committed) */
    MPI_Datatype packed; /* same signature, contiguous (committed) */
    size_t extent;       /* extent of one element */
    size_t size;         /* data bytes per element */
    field_t *f;
    int nf;
    int counts[3];
} dtype_t;

static size_t base_size(MPI_Datatype t)
{
    int s;
    MT_MPI(MPI_Type_size(t, &s));
    return (size_t)s;
}

static void add_field(dtype_t *d, int *cap, size_t off, MPI_Datatype base,
                      int n)
{
    if (d->nf == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        d->f = realloc(d->f, sizeof(field_t) * (size_t)*cap);
        if (!d->f)
            mt_fail(MT_EXIT_ERROR, "out of memory");
    }
    d->f[d->nf].off = off;
    d->f[d->nf].base = base;
    d->f[d->nf].n = n;
    d->f[d->nf].len = base_size(base) * (size_t)n;
    d->nf++;
}

/* Build the packed (contiguous, same-signature) type from the field list
 * and verify size and extent of the type under test against it. */
static void finish_type(dtype_t *d, size_t extent)
{
    MPI_Aint lb, ext;
    int sz;
    int same = 1;

    d->size = 0;
    for (int i = 0; i < d->nf; i++) {
        d->size += base_size(d->f[i].base) * (size_t)d->f[i].n;
        if (d->f[i].base != d->f[0].base)
            same = 0;
    }
    if (same) {
        MT_MPI(MPI_Type_contiguous((int)(d->size / base_size(d->f[0].base)),
                                   d->f[0].base, &d->packed));
    } else {
        int *bl = mt_malloc(sizeof(int) * (size_t)d->nf);
        MPI_Aint *dp = mt_malloc(sizeof(MPI_Aint) * (size_t)d->nf);
        MPI_Datatype *ty = mt_malloc(sizeof(MPI_Datatype) * (size_t)d->nf);
        MPI_Datatype tmp;
        size_t off = 0;
        for (int i = 0; i < d->nf; i++) {
            bl[i] = d->f[i].n;
            dp[i] = (MPI_Aint)off;
            ty[i] = d->f[i].base;
            off += base_size(d->f[i].base) * (size_t)d->f[i].n;
        }
        MT_MPI(MPI_Type_create_struct(d->nf, bl, dp, ty, &tmp));
        /* no padding between packed elements */
        MT_MPI(MPI_Type_create_resized(tmp, 0, (MPI_Aint)d->size, &d->packed));
        MPI_Type_free(&tmp);
        free(bl);
        free(dp);
        free(ty);
    }
    MT_MPI(MPI_Type_commit(&d->packed));
    MT_MPI(MPI_Type_commit(&d->type));
    d->extent = extent;

    MT_MPI(MPI_Type_size(d->type, &sz));
    MT_MPI(MPI_Type_get_extent(d->type, &lb, &ext));
    if ((size_t)sz != d->size || lb != 0 || (size_t)ext != extent)
        mt_fail(MT_EXIT_ERROR, "type %s: MPI says size %d lb %ld extent %ld, "
                "description says size %zu lb 0 extent %zu", d->name, sz,
                (long)lb, (long)ext, d->size, extent);
    MT_MPI(MPI_Type_size(d->packed, &sz));
    MT_MPI(MPI_Type_get_extent(d->packed, &lb, &ext));
    if ((size_t)sz != d->size || (size_t)ext != d->size)
        mt_fail(MT_EXIT_ERROR, "type %s: packed type size %d extent %ld, "
                "expected %zu", d->name, sz, (long)ext, d->size);
}

struct S1 {
    char c;
    double d;
    int i[3];
    short s;
};

#define NTYPES 6
static dtype_t types[NTYPES];

static void build_types(void)
{
    dtype_t *d;
    int cap;
    MPI_Datatype tmp;

    /* 0: vector of 4 blocks of 3 ints, stride 5, resized to 80 bytes */
    d = &types[0];
    cap = 0;
    d->name = "vector";
    MT_MPI(MPI_Type_vector(4, 3, 5, MPI_INT, &tmp));
    MT_MPI(MPI_Type_create_resized(tmp, 0, 80, &d->type));
    MPI_Type_free(&tmp);
    for (int b = 0; b < 4; b++)
        add_field(d, &cap, (size_t)b * 5 * sizeof(int), MPI_INT, 3);
    d->counts[0] = 1, d->counts[1] = 5, d->counts[2] = 12000;
    finish_type(d, 80);

    /* 1: large vector of doubles: 32768 blocks of 2, stride 3 (512 KiB) */
    d = &types[1];
    cap = 0;
    d->name = "bigvector";
    MT_MPI(MPI_Type_vector(32768, 2, 3, MPI_DOUBLE, &d->type));
    for (int b = 0; b < 32768; b++)
        add_field(d, &cap, (size_t)b * 3 * sizeof(double), MPI_DOUBLE, 2);
    d->counts[0] = 1, d->counts[1] = 2, d->counts[2] = 3;
    finish_type(d, (size_t)(32767 * 3 + 2) * sizeof(double));

    /* 2: indexed shorts with non-monotonic displacements, resized */
    {
        static const int bl[9] = {1, 3, 2, 5, 1, 4, 2, 1, 6};
        static const int dp[9] = {0, 20, 2, 30, 8, 40, 14, 50, 60};
        d = &types[2];
        cap = 0;
        d->name = "indexed";
        MT_MPI(MPI_Type_indexed(9, bl, dp, MPI_SHORT, &tmp));
        MT_MPI(MPI_Type_create_resized(tmp, 0, 140, &d->type));
        MPI_Type_free(&tmp);
        for (int b = 0; b < 9; b++)
            add_field(d, &cap, (size_t)dp[b] * sizeof(short), MPI_SHORT,
                      bl[b]);
        d->counts[0] = 1, d->counts[1] = 7, d->counts[2] = 9000;
        finish_type(d, 140);
    }

    /* 3: C struct with padding (char, double, int[3], short) */
    {
        int bl[4] = {1, 1, 3, 1};
        MPI_Aint dp[4] = {offsetof(struct S1, c), offsetof(struct S1, d),
                          offsetof(struct S1, i), offsetof(struct S1, s)};
        MPI_Datatype ty[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
        d = &types[3];
        cap = 0;
        d->name = "struct";
        MT_MPI(MPI_Type_create_struct(4, bl, dp, ty, &tmp));
        MT_MPI(MPI_Type_create_resized(tmp, 0, sizeof(struct S1), &d->type));
        MPI_Type_free(&tmp);
        for (int k = 0; k < 4; k++)
            add_field(d, &cap, (size_t)dp[k], ty[k], bl[k]);
        d->counts[0] = 1, d->counts[1] = 3, d->counts[2] = 30000;
        finish_type(d, sizeof(struct S1));
    }

    /* 4: struct with big gaps and non-monotonic field order */
    {
        int bl[5] = {1, 2, 5, 1, 1};
        MPI_Aint dp[5] = {0, 12, 40, 48, 4};
        MPI_Datatype ty[5] = {MPI_INT, MPI_FLOAT, MPI_CHAR, MPI_DOUBLE,
                              MPI_SHORT};
        d = &types[4];
        cap = 0;
        d->name = "gapstruct";
        MT_MPI(MPI_Type_create_struct(5, bl, dp, ty, &tmp));
        MT_MPI(MPI_Type_create_resized(tmp, 0, 64, &d->type));
        MPI_Type_free(&tmp);
        for (int k = 0; k < 5; k++)
            add_field(d, &cap, (size_t)dp[k], ty[k], bl[k]);
        d->counts[0] = 1, d->counts[1] = 4, d->counts[2] = 20000;
        finish_type(d, 64);
    }

    /* 5: vector of structs (nested): 3 blocks of 1 struct S1, stride 2 */
    {
        MPI_Datatype s1 = types[3].type;
        d = &types[5];
        cap = 0;
        d->name = "vector-of-struct";
        MT_MPI(MPI_Type_vector(3, 1, 2, s1, &d->type));
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < types[3].nf; k++)
                add_field(d, &cap,
                          (size_t)b * 2 * sizeof(struct S1) + types[3].f[k].off,
                          types[3].f[k].base, types[3].f[k].n);
        d->counts[0] = 1, d->counts[1] = 2, d->counts[2] = 8000;
        finish_type(d, 5 * sizeof(struct S1));
    }
}

static double bytes_checked;

/* Check a typed receive buffer: data bytes = sender pattern at the same
 * offsets, everything else = the saved pre-receive contents. */
static void check_typed(unsigned char *rb, const unsigned char *saved,
                        unsigned char *mask, const dtype_t *d, int count,
                        int src, uint64_t idx, int packed_src,
                        const char *what)
{
    size_t total = (size_t)count * d->extent + GUARD;
    size_t k = 0; /* packed offset */

    memset(mask, 0, total);
    for (int e = 0; e < count; e++) {
        for (int f = 0; f < d->nf; f++) {
            size_t off = (size_t)e * d->extent + d->f[f].off;
            size_t len = d->f[f].len;
            mt_check(rb + off, len, src, idx, packed_src ? k : off,
                     "%s (element %d field %d at offset %zu)", what, e, f, off);
            memset(mask + off, 1, len);
            k += len;
        }
    }
    for (size_t i = 0; i < total; i++) {
        if (!mask[i] && rb[i] != saved[i]) {
            char w[300];
            snprintf(w, sizeof w, "%s: gap/guard byte overwritten "
                     "(buffer of %zu bytes, type %s count %d)", what, total,
                     d->name, count);
            mt_mismatch(i, saved[i], rb[i], w);
        }
    }
    bytes_checked += (double)total;
}

/* Check a packed receive buffer: byte k = sender pattern at the offset of
 * the k-th type-map byte; guard after it untouched. */
static void check_packed(unsigned char *rb, const dtype_t *d, int count,
                         int src, uint64_t idx, const char *what)
{
    size_t k = 0;

    for (int e = 0; e < count; e++) {
        for (int f = 0; f < d->nf; f++) {
            size_t off = (size_t)e * d->extent + d->f[f].off;
            size_t len = d->f[f].len;
            mt_check(rb + k, len, src, idx, off,
                     "%s (packed offset %zu = element %d field %d)", what, k,
                     e, f);
            k += len;
        }
    }
    mt_check_const(rb + k, GUARD, 0xc3, "%s: guard after packed data", what);
    bytes_checked += (double)k;
}

int main(int argc, char **argv)
{
    int peer, first;
    size_t maxbuf = 0;
    unsigned char *sb, *rb, *saved, *mask;
    int nruns = 0;

    mt_init(&argc, &argv, "datatypes");
    build_types();

    for (int t = 0; t < NTYPES; t++)
        for (int c = 0; c < 3; c++) {
            size_t b = (size_t)types[t].counts[c] * types[t].extent + GUARD;
            if (b > maxbuf)
                maxbuf = b;
        }
    sb = mt_malloc(maxbuf);
    rb = mt_malloc(maxbuf);
    saved = mt_malloc(maxbuf);
    mask = mt_malloc(maxbuf);

    peer = mt_rank ^ 1;
    if (peer >= mt_size)
        peer = -1;
    first = (mt_rank & 1) == 0;

    for (int rep = 0; rep < mt_scale(); rep++)
    for (int t = 0; t < NTYPES && peer >= 0; t++) {
        dtype_t *d = &types[t];
        for (int c = 0; c < 3; c++) {
            int count = d->counts[c];
            size_t tbytes = (size_t)count * d->extent; /* typed buffer */
            size_t pbytes = (size_t)count * d->size;   /* packed buffer */
            for (int mode = 0; mode < 3; mode++) {
                for (int dir = 0; dir < 2; dir++) {
                    int sender = (dir == 0) == first;
                    int src = sender ? mt_rank : peer;
                    uint64_t idx = (((uint64_t)t * 3 + (uint64_t)c) * 3 +
                                    (uint64_t)mode) * 2 + (uint64_t)dir;
                    int tag = (int)(idx & 0x7fff);
                    char what[128];
                    snprintf(what, sizeof what, "%s count %d mode %s dir %d",
                             d->name, count,
                             mode == 0 ? "typed->typed"
                             : mode == 1 ? "typed->packed" : "packed->typed",
                             dir);
                    if (sender) {
                        if (mode == 2) {
                            mt_fill(sb, pbytes, mt_rank, idx, 0);
                            if (!mt_hang_skip())
                                MT_MPI(MPI_Send(sb, count, d->packed, peer,
                                                tag, MPI_COMM_WORLD));
                        } else {
                            mt_fill(sb, tbytes, mt_rank, idx, 0);
                            if (!mt_hang_skip())
                                MT_MPI(MPI_Send(sb, count, d->type, peer, tag,
                                                MPI_COMM_WORLD));
                        }
                    } else {
                        MPI_Status st;
                        int got = -1;
                        if (mode == 1) {
                            memset(rb + pbytes, 0xc3, GUARD);
                            MT_MPI(MPI_Recv(rb, count, d->packed, peer, tag,
                                            MPI_COMM_WORLD, &st));
                            MT_MPI(MPI_Get_count(&st, d->packed, &got));
                        } else {
                            /* pre-fill with a different pattern, keep a copy */
                            mt_fill(rb, tbytes + GUARD, -1 - mt_rank, idx, 0);
                            memcpy(saved, rb, tbytes + GUARD);
                            MT_MPI(MPI_Recv(rb, count, d->type, peer, tag,
                                            MPI_COMM_WORLD, &st));
                            MT_MPI(MPI_Get_count(&st, d->type, &got));
                        }
                        if (got != count)
                            mt_fail(MT_EXIT_MISMATCH, "%s: MPI_Get_count says "
                                    "%d elements, expected %d", what, got,
                                    count);
                        mt_check_status(&st, peer, tag, pbytes, "%s", what);
                        if (mode == 1)
                            check_packed(rb, d, count, src, idx, what);
                        else
                            check_typed(rb, saved, mask, d, count, src, idx,
                                        mode == 2, what);
                    }
                    nruns++;
                }
            }
        }
    }

    free(sb);
    free(rb);
    free(saved);
    free(mask);
    for (int t = 0; t < NTYPES; t++) {
        MPI_Type_free(&types[t].type);
        MPI_Type_free(&types[t].packed);
        free(types[t].f);
    }
    {
        double mib = mt_total_mib(bytes_checked);
        mt_finish("types=%d transfers/pair=%d checked=%.1fMiB", NTYPES,
                  nruns, mib);
    }
    return 0;
}

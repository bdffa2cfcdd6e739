/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * asan_probe - run by test/esp/asan as a normal MPI job over esp,self (or
 * sctp,self with --component sctp) to prove what the sanitizer runs rely
 * on: after MPI_Init and one message each way, every rank prints the
 * component's .so and the ASan runtime it has mapped (/proc/self/maps):
 *   asan_probe rank R: esp=/path/mca_btl_esp.so asan=/path/libasan.so.8
 * ("none" when not mapped). With --overflow, rank 0 then writes one byte
 * past a malloc'd buffer through memset (an intercepted call), which the
 * preloaded runtime must report as a heap-buffer-overflow.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mapped(const char *needle, char *out, size_t len)
{
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");
    snprintf(out, len, "none");
    if (f == NULL) {
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *path = strchr(line, '/');
        if (path != NULL && strstr(path, needle) != NULL) {
            path[strcspn(path, "\n")] = '\0';
            snprintf(out, len, "%s", path);
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* traffic between neighbours, so the BTL is really used */
    int peer = rank ^ 1;
    if (peer < size) {
        MPI_Sendrecv(&rank, 1, MPI_INT, peer, 7, &x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (x != peer) {
            fprintf(stderr, "asan_probe rank %d: got %d from %d\n", rank, x, peer);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    const char *component = "esp";
    int overflow = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--overflow") == 0) {
            overflow = 1;
        } else if (strcmp(argv[i], "--component") == 0 && i + 1 < argc) {
            component = argv[++i];
        }
    }
    char so[256], btl[4096], asan[4096];
    snprintf(so, sizeof(so), "mca_btl_%s.so", component);
    mapped(so, btl, sizeof(btl));
    mapped("libasan.so", asan, sizeof(asan));
    printf("asan_probe rank %d: %s=%s asan=%s\n", rank, component, btl, asan);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (overflow && rank == 0) {
        volatile size_t n = 16;
        char *p = malloc(n);
        memset(p, 1, n + 1);   /* one byte too many */
        printf("asan_probe rank 0: overflow NOT detected (%d)\n", p[0]);
        fflush(stdout);
        free(p);
    }
    MPI_Finalize();
    return 0;
}

/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The index of the MPI_T performance variable named want, or -1. */
#ifndef FIND_PVAR_H
#define FIND_PVAR_H

#include <mpi.h>
#include <string.h>

static int find_pvar(const char *want)
{
    int n;
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nlen = sizeof(name), dlen = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro, &cont,
                            &atomic);
        if (strcmp(name, want) == 0) {
            return i;
        }
    }
    return -1;
}

#endif

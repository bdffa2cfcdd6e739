/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * usrsctp's malloc, calloc and free (btl_sctp_mem.c): the build renames
 * them in its copy of usrsctp's static library to these.
 */
#ifndef BTL_SCTP_MEM_H
#define BTL_SCTP_MEM_H

#include <netinet/in.h>
#include <stddef.h>

void *bsctp_mem_malloc(size_t n);
void *bsctp_mem_calloc(size_t count, size_t size);
void bsctp_mem_free(void *p);
/* After the last usrsctp_finish: give back the calling thread's cached
 * blocks, and stop flushing other threads' caches at their exit (their
 * blocks stay with them). */
void bsctp_mem_release(void);

extern const struct in6_addr bsctp_in6addr_any;

#endif

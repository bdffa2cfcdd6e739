/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * CRC-32C (Castagnoli), the checksum of every esp datagram: carry-less
 * multiplication where the CPU has VPCLMULQDQ and AVX-512, else the SSE4.2
 * instruction, else a table. Pure C; all
 * functions are thread-safe (tables are built once, on first use).
 */
#ifndef EBTL_CRC32C_H
#define EBTL_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Continue a CRC-32C over len more bytes: start with crc 0;
 * ebtl_crc32c(0, "123456789", 9) == 0xE3069283, and
 * ebtl_crc32c(ebtl_crc32c(0, a, n), b, m) equals the CRC of a followed by b.
 * buf may be NULL when len is 0 (the crc is then returned unchanged). */
uint32_t ebtl_crc32c(uint32_t crc, const void *buf, size_t len);

/* Copy len bytes from src to dst (they must not overlap) and continue the
 * CRC-32C over them, as ebtl_crc32c(crc, src, len), in one pass: each byte
 * is loaded once. dst and src may be NULL when len is 0. */
uint32_t ebtl_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* The CRC-32C of the concatenation of iov[0..n); entries of length 0 may
 * have a NULL base, and n <= 0 gives 0 (the CRC of nothing). */
uint32_t ebtl_crc32c_iov(const struct iovec *iov, int n);

/* "vpclmulqdq", "sse4.2" or "table": what ebtl_crc32c uses on this CPU. */
const char *ebtl_crc32c_impl(void);

#endif

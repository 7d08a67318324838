/* SPDX-License-Identifier: MIT */
/* crc32c.h - CRC-32C (Castagnoli), the checksum of every trace record. */
#ifndef DBTP_UTIL_CRC32C_H
#define DBTP_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/**
 * dbtp_crc32c() - continue a CRC-32C over @len bytes at @p.
 * Start with @crc = 0; feed the result back in to checksum in pieces.
 * dbtp_crc32c(0, "123456789", 9) == 0xe3069283.
 */
uint32_t dbtp_crc32c(uint32_t crc, const void *p, size_t len);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * u64map.h - a map from 64-bit keys (block addresses) to 64-bit values:
 * open addressing, power-of-two size, grown at half full.  Any key but
 * UINT64_MAX.  Zero-initialise to start empty.
 */
#ifndef DBTP_UTIL_U64MAP_H
#define DBTP_UTIL_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct dbtp_u64map {
	uint64_t *key; /* key + 1; 0 = empty */
	uint64_t *val;
	size_t n, used;
};

/** dbtp_u64map_slot() - the value of @key, made 0 if new; NULL on ENOMEM. */
uint64_t *dbtp_u64map_slot(struct dbtp_u64map *m, uint64_t key);

/** dbtp_u64map_find() - the value of @key, or NULL if absent. */
uint64_t *dbtp_u64map_find(const struct dbtp_u64map *m, uint64_t key);

void dbtp_u64map_free(struct dbtp_u64map *m);

#endif

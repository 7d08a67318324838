/* SPDX-License-Identifier: MIT */
/* dbtp/symbolize.h - name the code of a trace's blocks. */
#ifndef DBTP_SYMBOLIZE_H
#define DBTP_SYMBOLIZE_H

#include "dbtp/elf.h"
#include "dbtp/trace.h"

/**
 * struct dbtp_sym - where some guest code is.
 * @name: function name, or NULL when unknown (no file, no symbol).
 * @delta: bytes from the function's start.
 * @file: path of the mapped file, or NULL for anonymous memory.
 */
struct dbtp_sym {
	const char *name;
	uint64_t delta;
	const char *file;
};

/**
 * dbtp_symbolize() - symbolise the code at @delta bytes into block @b of
 * trace @t, loading symbol tables through @cache.  Returns 1 if a function
 * name was found, 0 if not (then @s->file may still be set).
 */
int dbtp_symbolize(dbtp_symcache *cache, const dbtp_trace *t,
		   const struct dbtp_block *b, uint64_t delta,
		   struct dbtp_sym *s);

/** dbtp_basename() - the part of @path after its last '/'. */
const char *dbtp_basename(const char *path);

#endif

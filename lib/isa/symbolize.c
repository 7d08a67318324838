/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "dbtp/symbolize.h"

int dbtp_symbolize(dbtp_symcache *cache, const dbtp_trace *t,
		   const struct dbtp_block *b, uint64_t delta,
		   struct dbtp_sym *s)
{
	const dbtp_symtab *st;

	s->name = NULL;
	s->delta = 0;
	s->file = b->file ? dbtp_trace_file(t, b->file) : NULL;
	if (!s->file || !cache)
		return 0;
	st = dbtp_symcache_get(cache, s->file);
	if (!st)
		return 0;
	s->name = dbtp_symtab_lookup(st, b->offset + delta, &s->delta);
	return s->name != NULL;
}

const char *dbtp_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "util/buf.h"

int dbtp_buf_reserve(struct dbtp_buf *b, size_t extra)
{
	size_t want = b->len + extra, cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (want <= b->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

void dbtp_buf_free(struct dbtp_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int dbtp_put_kv(struct dbtp_buf *b, const char *key, const char *val)
{
	size_t k = strlen(key), v = strlen(val);

	if (dbtp_buf_reserve(b, k + v + 20))
		return -1;
	dbtp_put_varint(b, k);
	dbtp_put_bytes(b, key, k);
	dbtp_put_varint(b, v);
	dbtp_put_bytes(b, val, v);
	return 0;
}

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

/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable byte buffer and LEB128 varints, the building blocks of
 * the trace encoding.  Writers never fail half-way: dbtp_buf_reserve() is the
 * only call that allocates and it reports failure once.
 */
#ifndef DBTP_UTIL_BUF_H
#define DBTP_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dbtp_buf {
	uint8_t *p;
	size_t len, cap;
};

/** dbtp_buf_reserve() - make room for @extra more bytes; 0 or -1 (ENOMEM). */
int dbtp_buf_reserve(struct dbtp_buf *b, size_t extra);
void dbtp_buf_free(struct dbtp_buf *b);
/* A key/value pair of the trace format: each string as its length, then
 * its bytes (room reserved here).  -1 out of memory. */
int dbtp_put_kv(struct dbtp_buf *b, const char *key, const char *val);

/* The put functions assume room was reserved (at most 10 bytes a varint). */
static inline void dbtp_put_u8(struct dbtp_buf *b, uint8_t v)
{
	b->p[b->len++] = v;
}

static inline void dbtp_put_varint(struct dbtp_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static inline void dbtp_put_bytes(struct dbtp_buf *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static inline uint64_t dbtp_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t dbtp_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/**
 * struct dbtp_cursor - bounded reader over a byte range.  Every get sets
 * @bad instead of reading past @end; callers check @bad once per unit.
 */
struct dbtp_cursor {
	const uint8_t *p, *start, *end;
	int bad;
};

static inline void dbtp_cursor_init(struct dbtp_cursor *c, const void *p,
				    size_t n)
{
	c->p = c->start = p;
	c->end = c->p + n;
	c->bad = 0;
}

static inline uint64_t dbtp_get_varint(struct dbtp_cursor *c)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (c->p >= c->end)
			break;
		byte = *c->p++;
		if (shift == 63 && byte > 1)
			break;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	c->bad = 1;
	c->p = c->end;
	return 0;
}

static inline const uint8_t *dbtp_get_bytes(struct dbtp_cursor *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		c->p = c->end;
		return NULL;
	}
	c->p += n;
	return p;
}

static inline int dbtp_cursor_done(const struct dbtp_cursor *c)
{
	return c->p >= c->end;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * bbvfile.c - SimPoint .bb basic block vector files: parse into a CSR
 * matrix, build one in memory, format lines.  See dbtp/bbvfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbtp/bbvfile.h"
#include "util/buf.h"

void dbtp_bbv_free(struct dbtp_bbv *bbv)
{
	free(bbv->start);
	free(bbv->ids);
	free(bbv->counts);
	memset(bbv, 0, sizeof(*bbv));
}

/* Make room for @extra more entries; 0 or -1. */
static int reserve_entries(struct dbtp_bbv *b, size_t extra)
{
	const size_t limit = SIZE_MAX / sizeof(uint64_t) / 2;
	size_t used = b->n ? b->start[b->n] : 0, cap = b->cap ? b->cap : 1024;
	uint32_t *ids;
	uint64_t *counts;

	if (extra <= b->cap - used)
		return 0;
	if (used > limit || extra > limit - used)
		return -1;
	while (cap - used < extra)
		cap *= 2;
	ids = realloc(b->ids, cap * sizeof(*ids));
	if (!ids)
		return -1;
	b->ids = ids;
	counts = realloc(b->counts, cap * sizeof(*counts));
	if (!counts)
		return -1;
	b->counts = counts;
	b->cap = cap;
	return 0;
}

/* Make room in @start for one more interval (n + 2 offsets); 0 or -1. */
static int reserve_row(struct dbtp_bbv *b)
{
	size_t cap = b->start_cap ? b->start_cap : 256;
	size_t *start;

	if (b->n + 2 <= b->start_cap)
		return 0;
	while (cap < b->n + 2) {
		if (cap > SIZE_MAX / sizeof(size_t) / 2)
			return -1;
		cap *= 2;
	}
	start = realloc(b->start, cap * sizeof(*start));
	if (!start)
		return -1;
	if (!b->start)
		start[0] = 0;
	b->start = start;
	b->start_cap = cap;
	return 0;
}

struct pair {
	uint32_t id;
	uint64_t count;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

enum row_status {
	ROW_OK,
	ROW_NOMEM,
	ROW_EMPTY,  /* no pairs */
	ROW_ZERO,   /* all counts 0 */
	ROW_REPEAT, /* *bad_id given twice */
};

/*
 * Turn the @m entries written after the last row into row n: sort them by
 * id if needed, reject repeats and all-zero rows.  On failure the entries
 * are dropped again and the matrix is as before.
 */
static enum row_status commit_row(struct dbtp_bbv *b, size_t m,
				  uint32_t *bad_id)
{
	size_t base = b->n ? b->start[b->n] : 0, i;
	uint32_t *ids;
	uint64_t *counts;
	int sorted = 1, nonzero = 0;

	if (!m) /* (and the arrays may not exist yet) */
		return ROW_EMPTY;
	ids = b->ids + base;
	counts = b->counts + base;
	for (i = 0; i < m; i++) {
		if (i && ids[i] <= ids[i - 1])
			sorted = 0;
		if (counts[i])
			nonzero = 1;
	}
	if (!sorted) {
		struct pair *p = malloc(m * sizeof(*p));

		if (!p)
			return ROW_NOMEM;
		for (i = 0; i < m; i++) {
			p[i].id = ids[i];
			p[i].count = counts[i];
		}
		qsort(p, m, sizeof(*p), pair_cmp);
		for (i = 0; i < m; i++) {
			ids[i] = p[i].id;
			counts[i] = p[i].count;
		}
		free(p);
		for (i = 1; i < m; i++) {
			if (ids[i] == ids[i - 1]) {
				*bad_id = ids[i];
				return ROW_REPEAT;
			}
		}
	}
	if (!nonzero)
		return ROW_ZERO;
	if (reserve_row(b))
		return ROW_NOMEM;
	if (ids[m - 1] > b->max_id)
		b->max_id = ids[m - 1];
	b->start[b->n + 1] = base + m;
	b->n++;
	return ROW_OK;
}

int dbtp_bbv_add(struct dbtp_bbv *bbv, const uint32_t *ids,
		 const uint64_t *counts, size_t n, dbtp_err *err)
{
	size_t base, i;
	uint32_t bad = 0;

	for (i = 0; i < n; i++)
		if (!ids[i])
			return dbtp_err_set(err, EINVAL, "bbv: block id 0");
	if (reserve_entries(bbv, n) || reserve_row(bbv))
		return dbtp_err_set(err, ENOMEM, "bbv: out of memory");
	base = bbv->n ? bbv->start[bbv->n] : 0;
	if (n) {
		memcpy(bbv->ids + base, ids, n * sizeof(*ids));
		memcpy(bbv->counts + base, counts, n * sizeof(*counts));
	}
	switch (commit_row(bbv, n, &bad)) {
	case ROW_OK:
		return 0;
	case ROW_NOMEM:
		return dbtp_err_set(err, ENOMEM, "bbv: out of memory");
	case ROW_EMPTY:
		return dbtp_err_set(err, EINVAL, "bbv: interval has no blocks");
	case ROW_ZERO:
		return dbtp_err_set(err, EINVAL,
				    "bbv: interval counts are all 0");
	case ROW_REPEAT:
		return dbtp_err_set(err, EINVAL, "bbv: block id %u given twice",
				    (unsigned)bad);
	}
	return -1;
}

/* ---- parser ---- */

struct parser {
	const char *name;
	const unsigned char *line, *p, *end; /* end: this line's '\n' or EOF */
	size_t lineno;
	dbtp_err *err;
};

static int perr(struct parser *ps, const char *what, const unsigned char *at)
{
	return dbtp_err_set(ps->err, EINVAL, "%s: line %zu: %s at column %zu",
			    ps->name, ps->lineno, what,
			    (size_t)(at - ps->line) + 1);
}

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void skip_blanks(struct parser *ps)
{
	while (ps->p < ps->end && is_blank(*ps->p))
		ps->p++;
}

/* Parse decimal digits at ps->p into *v, at most @max; 0, or -1 with @err. */
static int parse_num(struct parser *ps, uint64_t max, uint64_t *v,
		     const char *what_missing, const char *what_big)
{
	const unsigned char *at = ps->p;
	uint64_t x = 0;

	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return perr(ps, what_missing, at);
	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
		unsigned d = *ps->p - '0';

		if (x > (max - d) / 10)
			return perr(ps, what_big, at);
		x = x * 10 + d;
		ps->p++;
	}
	*v = x;
	return 0;
}

/* One interval line, ps->p just past its 'T'.  0 or -1. */
static int parse_interval(struct parser *ps, struct dbtp_bbv *b)
{
	size_t base = b->n ? b->start[b->n] : 0, m = 0;
	uint32_t bad = 0;

	for (;;) {
		uint64_t id, count;
		const unsigned char *at;

		skip_blanks(ps);
		if (ps->p >= ps->end)
			break;
		if (*ps->p != ':')
			return perr(ps, "expected ':ID:COUNT'", ps->p);
		ps->p++;
		at = ps->p;
		if (parse_num(ps, UINT32_MAX, &id, "expected a block id",
			      "block id above 4294967295"))
			return -1;
		if (!id)
			return perr(ps, "block id 0 (ids start at 1)", at);
		if (ps->p >= ps->end || *ps->p != ':')
			return perr(ps, "expected ':' after the block id",
				    ps->p);
		ps->p++;
		if (parse_num(ps, UINT64_MAX, &count, "expected a count",
			      "count above 18446744073709551615"))
			return -1;
		if (ps->p < ps->end && !is_blank(*ps->p) && *ps->p != ':')
			return perr(ps, "expected a blank after the count",
				    ps->p);
		if (reserve_entries(b, m + 1))
			return dbtp_err_set(ps->err, ENOMEM,
					    "%s: line %zu: out of memory",
					    ps->name, ps->lineno);
		b->ids[base + m] = (uint32_t)id;
		b->counts[base + m] = count;
		m++;
	}
	switch (commit_row(b, m, &bad)) {
	case ROW_OK:
		return 0;
	case ROW_NOMEM:
		return dbtp_err_set(ps->err, ENOMEM,
				    "%s: line %zu: out of memory", ps->name,
				    ps->lineno);
	case ROW_EMPTY:
		return dbtp_err_set(ps->err, EINVAL,
				    "%s: line %zu: interval has no blocks",
				    ps->name, ps->lineno);
	case ROW_ZERO:
		return dbtp_err_set(ps->err, EINVAL,
				    "%s: line %zu: interval counts are all 0",
				    ps->name, ps->lineno);
	case ROW_REPEAT:
		return dbtp_err_set(ps->err, EINVAL,
				    "%s: line %zu: block id %u given twice",
				    ps->name, ps->lineno, (unsigned)bad);
	}
	return -1;
}

/*
 * The line [@p, @end) (without its '\n'), number ps->lineno: blank and
 * comment lines are skipped, an interval line is appended to @out.  0 or
 * -1 with ps->err.
 */
static int parse_line(struct parser *ps, const unsigned char *p,
		      const unsigned char *end, struct dbtp_bbv *out)
{
	const unsigned char *c;

	ps->line = ps->p = p;
	ps->end = end;
	/* no NUL anywhere, no control byte outside comments */
	c = memchr(ps->line, 0, (size_t)(ps->end - ps->line));
	if (c)
		return perr(ps, "unexpected byte 0x00", c);
	skip_blanks(ps);
	if (ps->p >= ps->end || *ps->p == '#')
		return 0;
	for (c = ps->p; c < ps->end; c++)
		if (*c < 0x20 && !is_blank(*c))
			return dbtp_err_set(ps->err, EINVAL,
					    "%s: line %zu: unexpected byte "
					    "0x%02x at column %zu",
					    ps->name, ps->lineno, *c,
					    (size_t)(c - ps->line) + 1);
	if (*ps->p != 'T')
		return perr(ps, "expected 'T' (an interval line)", ps->p);
	ps->p++;
	return parse_interval(ps, out);
}

/* "NAME: line N: no intervals", N the line after the last. */
static int no_intervals(const char *name, size_t lineno, int ends_in_nl,
			dbtp_err *err)
{
	return dbtp_err_set(err, EINVAL, "%s: line %zu: no intervals", name,
			    lineno + ends_in_nl);
}

int dbtp_bbv_read_mem(const char *data, size_t len, const char *name,
		      struct dbtp_bbv *out, dbtp_err *err)
{
	const unsigned char *p = (const unsigned char *)data, *end = p + len;
	struct parser ps = {.name = name, .err = err};

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));

		ps.lineno++;
		if (parse_line(&ps, p, nl ? nl : end, out))
			goto fail;
		p = nl ? nl + 1 : end;
	}
	if (!out->n) {
		no_intervals(name, ps.lineno, len == 0 || data[len - 1] == '\n',
			     err);
		goto fail;
	}
	return 0;
fail:
	dbtp_bbv_free(out);
	return -1;
}

int dbtp_bbv_scan(const char *path,
		  int (*fn)(void *arg, const uint32_t *ids,
			    const uint64_t *counts, size_t n, dbtp_err *err),
		  void *arg, dbtp_err *err)
{
	struct parser ps = {.name = path, .err = err};
	struct dbtp_bbv row = {0};
	size_t len = 0, cap = 1 << 16, intervals = 0;
	unsigned char *buf = malloc(cap);
	int fd, eof = 0, ret = -1, last_nl = 1;

	if (!buf)
		return dbtp_err_set(err, ENOMEM, "%s: out of memory", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dbtp_err_set(err, errno, "%s: %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	while (!eof || len) {
		unsigned char *p, *end, *nl;

		if (!eof) {
			ssize_t r;

			if (len == cap) { /* a line longer than the buffer */
				unsigned char *q;

				if (cap > SIZE_MAX / 2 ||
				    !(q = realloc(buf, cap * 2))) {
					dbtp_err_set(err, ENOMEM,
						     "%s: line %zu: out of "
						     "memory",
						     path, ps.lineno + 1);
					goto out;
				}
				buf = q;
				cap *= 2;
			}
			r = read(fd, buf + len, cap - len);
			if (r < 0) {
				if (errno == EINTR)
					continue;
				dbtp_err_set(err, errno, "%s: %s", path,
					     strerror(errno));
				goto out;
			}
			if (r) {
				last_nl = buf[len + (size_t)r - 1] == '\n';
				len += (size_t)r;
			} else {
				eof = 1;
			}
		}
		p = buf; /* (after any realloc) */
		end = buf + len;
		/* whole lines; at the end of the file, the last one too */
		while (p < end &&
		       ((nl = memchr(p, '\n', (size_t)(end - p))) || eof)) {
			ps.lineno++;
			row.n = 0;
			if (parse_line(&ps, p, nl ? nl : end, &row))
				goto out;
			if (row.n) {
				intervals++;
				if (fn(arg, row.ids, row.counts, row.start[1],
				       err))
					goto out;
			}
			p = nl ? nl + 1 : end;
		}
		len -= (size_t)(p - buf);
		memmove(buf, p, len);
	}
	if (!intervals) {
		no_intervals(path, ps.lineno, last_nl, err);
		goto out;
	}
	ret = 0;
out:
	close(fd);
	free(buf);
	dbtp_bbv_free(&row);
	return ret;
}

static int add_row(void *arg, const uint32_t *ids, const uint64_t *counts,
		   size_t n, dbtp_err *err)
{
	return dbtp_bbv_add(arg, ids, counts, n, err);
}

int dbtp_bbv_read(const char *path, struct dbtp_bbv *out, dbtp_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!dbtp_bbv_scan(path, add_row, out, err))
		return 0;
	dbtp_bbv_free(out);
	return -1;
}

/* ---- writer ---- */

/* Append @v in decimal (room was reserved). */
static void put_dec(struct dbtp_buf *b, uint64_t v)
{
	char tmp[20];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i)
		b->p[b->len++] = (uint8_t)tmp[--i];
}

int dbtp_bbv_format_line(const uint32_t *ids, const uint64_t *counts, size_t n,
			 struct dbtp_buf *out)
{
	/* ':' + 10 digits + ':' + 20 digits + ' ' */
	const size_t per_pair = 33;
	size_t i;

	if (!n || n > (SIZE_MAX - 2) / per_pair)
		return -1;
	for (i = 0; i < n; i++)
		if (!ids[i] || (i && ids[i] <= ids[i - 1]))
			return -1;
	if (dbtp_buf_reserve(out, 2 + n * per_pair))
		return -1;
	dbtp_put_u8(out, 'T');
	for (i = 0; i < n; i++) {
		dbtp_put_u8(out, ':');
		put_dec(out, ids[i]);
		dbtp_put_u8(out, ':');
		put_dec(out, counts[i]);
		dbtp_put_u8(out, ' ');
	}
	dbtp_put_u8(out, '\n');
	return 0;
}

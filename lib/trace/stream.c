/* SPDX-License-Identifier: MIT */
/*
 * stream.c - the recorder's side of the plugin stream: copy whole records
 * from a pipe to the trace file, add the run's INFO and the final STATUS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/format.h"

static int read_full(int fd, void *p, size_t n, size_t *got)
{
	*got = 0;
	while (*got < n) {
		ssize_t r = read(fd, (uint8_t *)p + *got, n - *got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		p = (const uint8_t *)p + r;
		n -= (size_t)r;
	}
	return 0;
}

static int put_kvs(struct dbtp_buf *b, const char *const *kv, size_t nkv)
{
	for (size_t i = 0; i < nkv; i++)
		if (dbtp_put_kv(b, kv[2 * i], kv[2 * i + 1]))
			return -1;
	return 0;
}

/* The value of INFO key @key (@kl bytes) in the uncompressed payload @p,
 * @n bytes, as a string in @out (@cap bytes, cut to fit): 1, or 0 if the
 * payload has no such key. */
static int info_value(const uint8_t *p, size_t n, const char *key, size_t kl,
		      char *out, size_t cap)
{
	struct dbtp_cursor c;

	dbtp_cursor_init(&c, p, n);
	while (!dbtp_cursor_done(&c) && !c.bad) {
		uint64_t l = dbtp_get_varint(&c);
		const uint8_t *k = dbtp_get_bytes(&c, l);
		uint64_t vl = dbtp_get_varint(&c);
		const uint8_t *v = dbtp_get_bytes(&c, vl);

		if (!c.bad && l == kl && !memcmp(k, key, kl)) {
			if (vl >= cap)
				vl = cap - 1;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return 1;
		}
	}
	return 0;
}

int dbtp_stream_copy(int in, const char *in_name, int out, const char *out_name,
		     const char *const *kv, size_t nkv,
		     struct dbtp_copy_result *res, dbtp_err *err)
{
	struct dbtp_buf buf = {0}, info = {0};
	uint8_t magic[DBTP_MAGIC_LEN];
	uint64_t in_off = DBTP_MAGIC_LEN;
	size_t got;
	int r = -1;

	memset(res, 0, sizeof(*res));
	if (read_full(in, magic, sizeof(magic), &got))
		return dbtp_err_set(err, errno, "%s: read: %s", in_name,
				    strerror(errno));
	if (got == 0)
		return dbtp_err_set(err, EPIPE,
				    "%s: the plugin wrote nothing "
				    "(did QEMU load it?)",
				    in_name);
	if (got < sizeof(magic) || memcmp(magic, DBTP_MAGIC, sizeof(magic)))
		return dbtp_err_set(err, EINVAL,
				    "%s: not a dbtprof trace stream", in_name);
	if (write_full(out, magic, sizeof(magic)))
		return dbtp_err_set(err, errno, "%s: %s", out_name,
				    strerror(errno));
	res->bytes = sizeof(magic);
	for (;;) {
		struct dbtp_frame f;
		const char *why;

		if (dbtp_buf_reserve(&buf, DBTP_FRAME_LEN)) {
			dbtp_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
		if (read_full(in, buf.p, DBTP_FRAME_LEN, &got)) {
			dbtp_err_set(err, errno, "%s: read: %s", in_name,
				     strerror(errno));
			goto out;
		}
		if (got < DBTP_FRAME_LEN) {
			res->cut = got;
			break;
		}
		if (dbtp_frame_parse(buf.p, &f, &why)) {
			dbtp_err_set(err, EINVAL, "%s: offset %llu: %s",
				     in_name, (unsigned long long)in_off, why);
			goto out;
		}
		if (dbtp_buf_reserve(&buf, DBTP_FRAME_LEN + f.stored_len)) {
			dbtp_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
		if (read_full(in, buf.p + DBTP_FRAME_LEN, f.stored_len, &got)) {
			dbtp_err_set(err, errno, "%s: read: %s", in_name,
				     strerror(errno));
			goto out;
		}
		if (got < f.stored_len) {
			res->cut = DBTP_FRAME_LEN + got;
			break;
		}
		if (!dbtp_frame_crc_ok(buf.p, buf.p + DBTP_FRAME_LEN,
				       f.stored_len)) {
			dbtp_err_set(err, EINVAL,
				     "%s: offset %llu: checksum mismatch",
				     in_name, (unsigned long long)in_off);
			goto out;
		}
		in_off += DBTP_FRAME_LEN + f.stored_len;
		if (write_full(out, buf.p, DBTP_FRAME_LEN + f.stored_len)) {
			dbtp_err_set(err, errno, "%s: %s", out_name,
				     strerror(errno));
			goto out;
		}
		res->bytes += DBTP_FRAME_LEN + f.stored_len;
		res->records++;
		res->exec_last = 0;
		if (f.type == DBTP_REC_INFO && !(f.flags & DBTP_FLAG_ZSTD)) {
			const uint8_t *p = buf.p + DBTP_FRAME_LEN;
			char num[24];

			if (info_value(p, f.stored_len, "forks", 5, num,
				       sizeof(num)))
				res->forks = strtoull(num, NULL, 10);
			if (info_value(p, f.stored_len, "execve", 6,
				       res->exec_path, sizeof(res->exec_path)))
				res->exec_last = 1;
		}
		if (res->records == 1 && nkv) {
			info.len = 0;
			if (put_kvs(&info, kv, nkv)) {
				dbtp_err_set(err, ENOMEM, "out of memory");
				goto out;
			}
			buf.len = 0;
			if (dbtp_frame_put(&buf, DBTP_REC_INFO, info.p,
					   info.len, NULL, 0)) {
				dbtp_err_set(err, ENOMEM, "out of memory");
				goto out;
			}
			if (write_full(out, buf.p, buf.len)) {
				dbtp_err_set(err, errno, "%s: %s", out_name,
					     strerror(errno));
				goto out;
			}
			res->bytes += buf.len;
		}
		if (f.type == DBTP_REC_END) {
			res->saw_end = 1;
			break;
		}
	}
	r = 0;
out:
	dbtp_buf_free(&buf);
	dbtp_buf_free(&info);
	return r;
}

int dbtp_stream_status(int out, const char *out_name, int kind, int64_t value,
		       const char *const *kv, size_t nkv, dbtp_err *err)
{
	struct dbtp_buf pl = {0}, rec = {0};
	int r = 0;

	if (dbtp_buf_reserve(&pl, 24) ||
	    (dbtp_put_varint(&pl, (uint64_t)kind),
	     dbtp_put_varint(&pl, dbtp_zigzag(value)), put_kvs(&pl, kv, nkv)) ||
	    dbtp_frame_put(&rec, DBTP_REC_STATUS, pl.p, pl.len, NULL, 0))
		r = dbtp_err_set(err, ENOMEM, "out of memory");
	else if (write_full(out, rec.p, rec.len))
		r = dbtp_err_set(err, errno, "%s: %s", out_name,
				 strerror(errno));
	dbtp_buf_free(&pl);
	dbtp_buf_free(&rec);
	return r;
}

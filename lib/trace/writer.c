/* SPDX-License-Identifier: MIT */
/*
 * writer.c - build a trace from events given one at a time.  It produces
 * exactly what the plugin produces (same encoder, same records), in one
 * thread, so tests and converters can make traces without QEMU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "trace/format.h"

struct wthread {
	uint64_t *w;
	size_t n;
	int used, exited;
	struct dbtp_enc enc;
};

struct dbtp_writer {
	int fd;
	char *path;
	enum dbtp_arch arch;
	enum dbtp_mode mode;
	size_t chunk;
	ZSTD_CCtx *zctx;
	struct dbtp_buf out, tmp, pend_blocks;
	uint32_t nfiles, nblocks, pend_first, pend_count;
	uint16_t **ni_pages; /* instruction counts, dbtp_ninsns pages */
	uint32_t ni_npages;
	uint64_t *counts; /* by block, room for @counts_cap */
	size_t counts_cap;
	int cache;			/* DBTP_WRITER_CACHE */
	struct dbtp_cache_tally *tally; /* by block, if @cache */
	uint32_t ntally;		/* blocks tallied so far */
	size_t tally_cap;
	struct wthread *th;
	uint32_t nth;
	int failed;
};

/* The capacity, at least doubled from @cap (1,024 at first), that holds
 * @n elements: arrays grown one block at a time would be copied over and
 * over (a quadratic cost). */
static size_t grown(size_t cap, size_t n)
{
	size_t c = cap ? cap : 1024;

	while (c < n)
		c *= 2;
	return c;
}

static int werr(dbtp_writer *w, dbtp_err *err, int code, const char *what)
{
	w->failed = 1;
	return dbtp_err_set(err, code, "%s: %s", w->path, what);
}

static int flush_out(dbtp_writer *w, dbtp_err *err)
{
	const uint8_t *p = w->out.p;
	size_t len = w->out.len;

	while (len) {
		ssize_t r = write(w->fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return werr(w, err, errno, strerror(errno));
		p += r;
		len -= (size_t)r;
	}
	w->out.len = 0;
	return 0;
}

int dbtp_writer_open(dbtp_writer **out, const char *path, enum dbtp_arch arch,
		     int mode, uint32_t chunk_events, dbtp_err *err)
{
	dbtp_writer *w = calloc(1, sizeof(*w));
	uint64_t feat = 0;

	*out = NULL;
	if ((mode & DBTP_WRITER_CACHE) &&
	    (mode & ~DBTP_WRITER_CACHE) != DBTP_MODE_BLOCKS) {
		free(w);
		return dbtp_err_set(err, EINVAL,
				    "cache tallies need blocks mode");
	}
	if (!w || !(w->path = strdup(path)) || !(w->zctx = ZSTD_createCCtx())) {
		if (w)
			free(w->path);
		free(w);
		return dbtp_err_set(err, ENOMEM, "out of memory");
	}
	w->arch = arch;
	w->cache = (mode & DBTP_WRITER_CACHE) != 0;
	mode &= ~DBTP_WRITER_CACHE;
	w->mode = (enum dbtp_mode)mode;
	w->chunk = chunk_events ? chunk_events : 65536;
	if (w->chunk > DBTP_MAX_CHUNK_WORDS)
		w->chunk = DBTP_MAX_CHUNK_WORDS;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		dbtp_err_set(err, errno, "%s: %s", path, strerror(errno));
		ZSTD_freeCCtx(w->zctx);
		free(w->path);
		free(w);
		return -1;
	}
	if (mode != DBTP_MODE_COUNT)
		feat |= DBTP_FEAT_SYSCALL;
	if (mode == DBTP_MODE_MEM)
		feat |= DBTP_FEAT_MEM;
	if (w->cache)
		feat |= DBTP_FEAT_CACHE;
	if (dbtp_buf_reserve(&w->tmp, 64) ||
	    dbtp_buf_reserve(&w->out, DBTP_MAGIC_LEN))
		goto nomem;
	dbtp_put_varint(&w->tmp, DBTP_FORMAT_MAJOR);
	dbtp_put_varint(&w->tmp, DBTP_FORMAT_MINOR);
	dbtp_put_varint(&w->tmp, feat);
	dbtp_put_varint(&w->tmp, arch);
	dbtp_put_varint(&w->tmp, mode);
	dbtp_put_bytes(&w->out, DBTP_MAGIC, DBTP_MAGIC_LEN);
	if (dbtp_put_kv(&w->tmp, "producer", "libdbtp-writer") ||
	    dbtp_put_kv(&w->tmp, "target", dbtp_arch_name(arch)) ||
	    dbtp_frame_put(&w->out, DBTP_REC_HEADER, w->tmp.p, w->tmp.len, NULL,
			   0))
		goto nomem;
	*out = w;
	return 0;
nomem:
	dbtp_err_set(err, ENOMEM, "out of memory");
	close(w->fd);
	dbtp_buf_free(&w->tmp);
	dbtp_buf_free(&w->out);
	ZSTD_freeCCtx(w->zctx);
	free(w->path);
	free(w);
	return -1;
}

int dbtp_writer_info(dbtp_writer *w, const char *key, const char *val,
		     dbtp_err *err)
{
	w->tmp.len = 0;
	if (dbtp_put_kv(&w->tmp, key, val) ||
	    dbtp_frame_put(&w->out, DBTP_REC_INFO, w->tmp.p, w->tmp.len, NULL,
			   0))
		return werr(w, err, ENOMEM, "out of memory");
	return 0;
}

int dbtp_writer_file(dbtp_writer *w, const char *path, uint32_t *id,
		     dbtp_err *err)
{
	size_t len = strlen(path);

	w->tmp.len = 0;
	if (dbtp_buf_reserve(&w->tmp, len + 20))
		return werr(w, err, ENOMEM, "out of memory");
	*id = ++w->nfiles;
	dbtp_put_varint(&w->tmp, *id);
	dbtp_put_varint(&w->tmp, len);
	dbtp_put_bytes(&w->tmp, path, len);
	if (dbtp_frame_put(&w->out, DBTP_REC_FILE, w->tmp.p, w->tmp.len, NULL,
			   0))
		return werr(w, err, ENOMEM, "out of memory");
	return 0;
}

int dbtp_writer_block(dbtp_writer *w, uint64_t vaddr, uint32_t ninsns,
		      const uint8_t *sizes, const uint8_t *bytes, uint32_t file,
		      uint64_t offset, uint32_t *id, dbtp_err *err)
{
	size_t nbytes = 0;
	uint64_t *cn;

	if (file > w->nfiles || ninsns > 4096)
		return werr(w, err, EINVAL, "bad block (file or size)");
	for (uint32_t i = 0; i < ninsns; i++)
		nbytes += sizes[i];
	if ((w->nblocks >> DBTP_NI_SHIFT) >= w->ni_npages) {
		uint16_t **pg =
		    realloc(w->ni_pages, (w->ni_npages + 1) * sizeof(*pg));

		if (!pg)
			return werr(w, err, ENOMEM, "out of memory");
		w->ni_pages = pg;
		pg[w->ni_npages] = calloc(DBTP_NI_PAGE, sizeof(**pg));
		if (!pg[w->ni_npages])
			return werr(w, err, ENOMEM, "out of memory");
		w->ni_npages++;
	}
	if (w->nblocks >= w->counts_cap) {
		size_t cap = grown(w->counts_cap, (size_t)w->nblocks + 1);

		if (!(cn = realloc(w->counts, cap * sizeof(*cn))))
			return werr(w, err, ENOMEM, "out of memory");
		w->counts = cn;
		w->counts_cap = cap;
	}
	if (dbtp_buf_reserve(&w->pend_blocks, 40 + ninsns + nbytes))
		return werr(w, err, ENOMEM, "out of memory");
	if (!w->pend_count)
		w->pend_first = w->nblocks;
	dbtp_put_varint(&w->pend_blocks, vaddr);
	dbtp_put_varint(&w->pend_blocks, ninsns);
	dbtp_put_bytes(&w->pend_blocks, sizes, ninsns);
	dbtp_put_bytes(&w->pend_blocks, bytes, nbytes);
	dbtp_put_varint(&w->pend_blocks, file);
	dbtp_put_varint(&w->pend_blocks, file ? offset : vaddr);
	w->pend_count++;
	w->ni_pages[w->nblocks >> DBTP_NI_SHIFT]
		   [w->nblocks & (DBTP_NI_PAGE - 1)] = (uint16_t)ninsns;
	w->counts[w->nblocks] = 0;
	*id = w->nblocks++;
	return 0;
}

static int put_pending_blocks(dbtp_writer *w, dbtp_err *err)
{
	if (!w->pend_count)
		return 0;
	w->tmp.len = 0;
	if (dbtp_buf_reserve(&w->tmp, w->pend_blocks.len + 20))
		return werr(w, err, ENOMEM, "out of memory");
	dbtp_put_varint(&w->tmp, w->pend_first);
	dbtp_put_varint(&w->tmp, w->pend_count);
	dbtp_put_bytes(&w->tmp, w->pend_blocks.p, w->pend_blocks.len);
	if (dbtp_frame_put(&w->out, DBTP_REC_BLOCKS, w->tmp.p, w->tmp.len,
			   w->zctx, 1))
		return werr(w, err, ENOMEM, "out of memory");
	w->pend_blocks.len = 0;
	w->pend_count = 0;
	return 0;
}

static int flush_thread(dbtp_writer *w, uint32_t num, int exit_reason,
			dbtp_err *err)
{
	struct wthread *t = &w->th[num];

	if (put_pending_blocks(w, err))
		return -1;
	w->tmp.len = 0;
	if (dbtp_enc_chunk(&t->enc, num, 1000 + (uint64_t)num, t->w, t->n,
			   exit_reason,
			   (struct dbtp_ninsns){(uint16_t *const *)w->ni_pages},
			   &w->tmp) ||
	    dbtp_frame_put(&w->out, DBTP_REC_EVENTS, w->tmp.p, w->tmp.len,
			   w->zctx, 1))
		return werr(w, err, ENOMEM, "cannot encode a chunk");
	t->n = 0;
	return flush_out(w, err);
}

/* Room for @k more words in thread @num's buffer, flushing it if full. */
static uint64_t *room(dbtp_writer *w, uint32_t num, size_t k, dbtp_err *err)
{
	struct wthread *t;

	if (w->failed) {
		werr(w, err, EINVAL, "writer already failed");
		return NULL;
	}
	if (w->mode == DBTP_MODE_COUNT) {
		werr(w, err, EINVAL, "events given to a count-mode writer");
		return NULL;
	}
	if (num > 65535 || num > w->nth) {
		werr(w, err, EINVAL, "threads must be numbered in order");
		return NULL;
	}
	if (num == w->nth) {
		struct wthread *n = realloc(w->th, (w->nth + 1) * sizeof(*n));

		if (!n) {
			werr(w, err, ENOMEM, "out of memory");
			return NULL;
		}
		w->th = n;
		memset(&n[num], 0, sizeof(n[num]));
		n[num].w = malloc((w->chunk + 16) * sizeof(uint64_t));
		if (!n[num].w) {
			werr(w, err, ENOMEM, "out of memory");
			return NULL;
		}
		w->nth++;
	}
	t = &w->th[num];
	if (t->exited) {
		werr(w, err, EINVAL, "event after the thread's exit");
		return NULL;
	}
	if (t->n + k > w->chunk && flush_thread(w, num, -1, err))
		return NULL;
	t->used = 1;
	t->n += k;
	return t->w + t->n - k;
}

int dbtp_writer_exec(dbtp_writer *w, uint32_t thread, uint32_t block,
		     dbtp_err *err)
{
	uint64_t *p;

	if (block >= w->nblocks)
		return werr(w, err, EINVAL, "undeclared block");
	if (!(p = room(w, thread, 1, err)))
		return -1;
	p[0] = (uint64_t)block << 2 | DBTP_RAW_BLOCK;
	return 0;
}

int dbtp_writer_mem(dbtp_writer *w, uint32_t thread, uint64_t addr,
		    unsigned size_shift, unsigned flags, dbtp_err *err)
{
	uint64_t *p;

	if (size_shift > 6 ||
	    (flags & ~(unsigned)(DBTP_MEM_STORE | DBTP_MEM_SIGNED |
				 DBTP_MEM_BIG_ENDIAN)))
		return werr(w, err, EINVAL, "bad memory access info");
	if (w->mode != DBTP_MODE_MEM)
		return werr(w, err, EINVAL, "memory access outside mem mode");
	if (!(p = room(w, thread, 2, err)))
		return -1;
	p[0] = (uint64_t)(size_shift | flags) << 2 | DBTP_RAW_MEM;
	p[1] = addr;
	return 0;
}

int dbtp_writer_syscall(dbtp_writer *w, uint32_t thread, int64_t num,
			const uint64_t args[6], dbtp_err *err)
{
	uint64_t *p;

	if (num < 0)
		return werr(w, err, EINVAL, "negative syscall number");
	if (!(p = room(w, thread, 7, err)))
		return -1;
	p[0] = (uint64_t)num << 2 | DBTP_RAW_SYSCALL;
	memcpy(p + 1, args, 6 * sizeof(uint64_t));
	return 0;
}

int dbtp_writer_sysret(dbtp_writer *w, uint32_t thread, int64_t num,
		       int64_t ret, dbtp_err *err)
{
	uint64_t *p;

	if (num < 0)
		return werr(w, err, EINVAL, "negative syscall number");
	if (!(p = room(w, thread, 2, err)))
		return -1;
	p[0] = (uint64_t)num << 2 | DBTP_RAW_SYSRET;
	p[1] = (uint64_t)ret;
	return 0;
}

int dbtp_writer_thread_exit(dbtp_writer *w, uint32_t thread, dbtp_err *err)
{
	if (!room(w, thread, 0, err))
		return -1;
	if (flush_thread(w, thread, DBTP_EXIT_THREAD, err))
		return -1;
	w->th[thread].exited = 1;
	return 0;
}

int dbtp_writer_count(dbtp_writer *w, uint32_t block, uint64_t count,
		      dbtp_err *err)
{
	if (w->mode != DBTP_MODE_COUNT || block >= w->nblocks)
		return werr(w, err, EINVAL,
			    "count outside count mode or for "
			    "an undeclared block");
	w->counts[block] += count;
	return 0;
}

int dbtp_writer_cache(dbtp_writer *w, uint32_t block, uint64_t ops, uint64_t l1,
		      uint64_t l2, uint64_t unaligned, dbtp_err *err)
{
	struct dbtp_cache_tally *c;

	if (!w->cache || block >= w->nblocks)
		return werr(w, err, EINVAL,
			    "a cache tally without DBTP_WRITER_CACHE or for "
			    "an undeclared block");
	if (block >= w->ntally) {
		if (w->nblocks > w->tally_cap) {
			size_t cap = grown(w->tally_cap, w->nblocks);

			if (!(c = realloc(w->tally, cap * sizeof(*c))))
				return werr(w, err, ENOMEM, "out of memory");
			w->tally = c;
			w->tally_cap = cap;
		}
		memset(w->tally + w->ntally, 0,
		       (w->nblocks - w->ntally) * sizeof(*c));
		w->ntally = w->nblocks;
	}
	c = &w->tally[block];
	c->ops += ops;
	c->l1 += l1;
	c->l2 += l2;
	c->unaligned += unaligned;
	return 0;
}

static const struct dbtp_cache_tally *tally_of(void *ctx, uint32_t id)
{
	return &((dbtp_writer *)ctx)->tally[id];
}

int dbtp_writer_close(dbtp_writer *w, int64_t exit_code, dbtp_err *err)
{
	uint64_t total = 0;
	int r = w->failed ? -1 : 0;

	if (!r && put_pending_blocks(w, err))
		r = -1;
	for (uint32_t i = 0; !r && i < w->nth; i++)
		if (!w->th[i].exited &&
		    flush_thread(w, i, DBTP_EXIT_PROCESS, err))
			r = -1;
	for (uint32_t i = 0; i < w->nth; i++)
		total += w->th[i].enc.blocks;
	if (!r && w->mode == DBTP_MODE_COUNT) {
		w->tmp.len = 0;
		if (dbtp_buf_reserve(&w->tmp, 20 + (size_t)w->nblocks * 10)) {
			r = werr(w, err, ENOMEM, "out of memory");
		} else {
			dbtp_put_varint(&w->tmp, 0);
			dbtp_put_varint(&w->tmp, w->nblocks);
			for (uint32_t i = 0; i < w->nblocks; i++)
				dbtp_put_varint(&w->tmp, w->counts[i]);
			if (dbtp_frame_put(&w->out, DBTP_REC_COUNTS, w->tmp.p,
					   w->tmp.len, w->zctx, 1))
				r = werr(w, err, ENOMEM, "out of memory");
		}
	}
	if (!r && w->ntally &&
	    dbtp_cache_recs_put(&w->out, w->ntally, tally_of, w, w->zctx, 1))
		r = werr(w, err, ENOMEM, "out of memory");
	if (!r) {
		w->tmp.len = 0;
		if (dbtp_buf_reserve(&w->tmp, 80)) {
			r = werr(w, err, ENOMEM, "out of memory");
		} else {
			dbtp_put_varint(&w->tmp, DBTP_END_EXIT);
			dbtp_put_varint(&w->tmp, (uint64_t)exit_code);
			dbtp_put_varint(&w->tmp, w->nth);
			dbtp_put_varint(&w->tmp, total);
			dbtp_put_varint(&w->tmp, w->nblocks);
			dbtp_put_varint(&w->tmp, w->nfiles);
			if (dbtp_frame_put(&w->out, DBTP_REC_END, w->tmp.p,
					   w->tmp.len, NULL, 0))
				r = werr(w, err, ENOMEM, "out of memory");
		}
	}
	if (!r)
		r = flush_out(w, err);
	if (close(w->fd) && !r)
		r = werr(w, err, errno, strerror(errno));
	for (uint32_t i = 0; i < w->nth; i++) {
		free(w->th[i].w);
		dbtp_enc_free(&w->th[i].enc);
	}
	free(w->th);
	for (uint32_t i = 0; i < w->ni_npages; i++)
		free(w->ni_pages[i]);
	free(w->ni_pages);
	free(w->counts);
	free(w->tally);
	dbtp_buf_free(&w->out);
	dbtp_buf_free(&w->tmp);
	dbtp_buf_free(&w->pend_blocks);
	ZSTD_freeCCtx(w->zctx);
	free(w->path);
	free(w);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * test-trace.c - the trace format: CRC-32C and varints against known values,
 * writer -> reader round trips on randomised multi-threaded streams (every
 * event compared), count mode, and every single-byte corruption and every
 * truncation of a real trace rejected with an error naming the offset.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dbtp/trace.h"
#include "t.h"
#include "trace/format.h"
#include "util/crc32c.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_crc_varint(void)
{
	struct dbtp_buf b = {0};
	struct dbtp_cursor c;
	const uint64_t vals[] = {0,	    1,		127,
				 128,	    300,	16383,
				 16384,	    UINT32_MAX, (uint64_t)1 << 63,
				 UINT64_MAX};

	CHECK_EQ(dbtp_crc32c(0, "123456789", 9), 0xe3069283u);
	CHECK_EQ(dbtp_crc32c(dbtp_crc32c(0, "1234", 4), "56789", 5),
		 0xe3069283u);
	CHECK_EQ(dbtp_crc32c(0, "", 0), 0);
	for (size_t i = 0; i < sizeof(vals) / sizeof(*vals); i++) {
		b.len = 0;
		CHECK(!dbtp_buf_reserve(&b, 10));
		dbtp_put_varint(&b, vals[i]);
		dbtp_cursor_init(&c, b.p, b.len);
		CHECK_EQ(dbtp_get_varint(&c), vals[i]);
		CHECK(!c.bad && dbtp_cursor_done(&c));
		CHECK_EQ(dbtp_unzigzag(dbtp_zigzag((int64_t)vals[i])), vals[i]);
	}
	CHECK_EQ(b.len, 10); /* UINT64_MAX takes 10 bytes */
	/* Overlong and truncated varints are rejected. */
	{
		const uint8_t over[11] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0x7f, 0};
		const uint8_t cut[2] = {0x80, 0x80};

		dbtp_cursor_init(&c, over, sizeof(over));
		dbtp_get_varint(&c);
		CHECK(c.bad);
		dbtp_cursor_init(&c, cut, sizeof(cut));
		dbtp_get_varint(&c);
		CHECK(c.bad);
	}
	dbtp_buf_free(&b);
}

/* An expected event, as the writer was given it. */
struct exp {
	int type;
	uint32_t thread, block;
	uint64_t addr;
	unsigned size_shift, flags;
	int64_t sysno, ret;
	uint64_t args[6];
};

static void roundtrip(enum dbtp_mode mode, int nthreads, int nevents,
		      uint32_t chunk, const char *path)
{
	dbtp_writer *w;
	dbtp_trace *t;
	dbtp_err err = {0};
	struct exp *ex = calloc((size_t)nevents + 64, sizeof(*ex));
	size_t nex = 0, got = 0, *pos;
	uint32_t nblocks = 1 + (uint32_t)(rnd() % 300), file, id;
	uint64_t per_blocks[8] = {0}, per_insns[8] = {0};
	uint32_t *ninsns = calloc(nblocks, sizeof(*ninsns));
	uint32_t last[8] = {0};
	struct dbtp_event ev;
	int r, exited[8] = {0};

	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, mode, chunk, &err));
	CHECK(!dbtp_writer_info(w, "command", "test roundtrip", &err));
	CHECK(!dbtp_writer_file(w, "/bin/true", &file, &err));
	for (uint32_t i = 0; i < nblocks; i++) {
		uint8_t sizes[64], bytes[64 * 15];
		uint32_t n = 1 + (uint32_t)(rnd() % 20), nb = 0;

		for (uint32_t k = 0; k < n; k++) {
			sizes[k] = (uint8_t)(1 + rnd() % 15);
			for (uint32_t q = 0; q < sizes[k]; q++)
				bytes[nb++] = (uint8_t)rnd();
		}
		CHECK(!dbtp_writer_block(w, 0x400000 + i * 64ull, n, sizes,
					 bytes, i % 2 ? file : 0, i * 64ull,
					 &id, &err));
		CHECK_EQ(id, i);
		ninsns[i] = n;
	}
	for (int i = 0; i < nevents; i++) {
		uint32_t th = (uint32_t)(rnd() % (uint64_t)nthreads);
		struct exp *e = &ex[nex];
		uint64_t k = rnd() % 100;

		/* Threads appear in order; exited threads get no events. */
		for (uint32_t q = 0; q < th; q++)
			if (!per_blocks[q] && !exited[q])
				th = q;
		if (exited[th])
			continue;
		e->thread = th;
		if (mode == DBTP_MODE_COUNT) {
			e->type = DBTP_EV_COUNT;
			e->block = (uint32_t)(rnd() % nblocks);
			CHECK(!dbtp_writer_count(w, e->block, 1 + rnd() % 5,
						 &err));
			continue;
		}
		if (k < 60 || !per_blocks[th]) {
			/* Loops: mostly repeat a successor pattern. */
			e->type = DBTP_EV_BLOCK;
			e->block = rnd() % 4 ? (last[th] + 1) % nblocks
					     : (uint32_t)(rnd() % nblocks);
			last[th] = e->block;
			per_blocks[th]++;
			per_insns[th] += ninsns[e->block];
			CHECK(!dbtp_writer_exec(w, th, e->block, &err));
		} else if (k < 90 && mode == DBTP_MODE_MEM) {
			e->type = DBTP_EV_MEM;
			e->addr =
			    rnd() % 3 ? 0x7ffc0000 + (rnd() % 64) * 8 : rnd();
			e->size_shift = (unsigned)(rnd() % 5);
			e->flags = rnd() % 2 ? DBTP_MEM_STORE : 0;
			CHECK(!dbtp_writer_mem(w, th, e->addr, e->size_shift,
					       e->flags, &err));
		} else if (k < 95) {
			e->type = DBTP_EV_SYSCALL;
			e->sysno = (int64_t)(rnd() % 450);
			for (int a = 0; a < 6; a++)
				e->args[a] = rnd() >> (rnd() % 64);
			CHECK(!dbtp_writer_syscall(w, th, e->sysno, e->args,
						   &err));
		} else if (k < 99) {
			e->type = DBTP_EV_SYSRET;
			e->sysno = (int64_t)(rnd() % 450);
			e->ret = (int64_t)(rnd() % 200) - 100;
			CHECK(
			    !dbtp_writer_sysret(w, th, e->sysno, e->ret, &err));
		} else if (th) {
			e->type = DBTP_EV_THREAD_EXIT;
			exited[th] = 1;
			CHECK(!dbtp_writer_thread_exit(w, th, &err));
		} else {
			continue;
		}
		nex++;
	}
	CHECK(!dbtp_writer_close(w, 0, &err));

	/* Read back: per thread, the events must come in the given order. */
	CHECK(!dbtp_trace_open(&t, path, &err));
	pos = calloc((size_t)nthreads, sizeof(*pos));
	if (mode == DBTP_MODE_COUNT) {
		uint64_t total = 0;

		while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
			CHECK_EQ(ev.type, DBTP_EV_COUNT);
			total += ev.count;
		}
		CHECK_EQ(r, 0);
		CHECK(total >= (uint64_t)nevents);
		CHECK(dbtp_trace_info(t)->has_end);
		goto done;
	}
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		size_t *p = &pos[ev.thread];
		struct exp *e = NULL;

		if (ev.type == DBTP_EV_THREAD_START)
			continue;
		if (ev.type == DBTP_EV_THREAD_EXIT &&
		    dbtp_trace_thread(t, ev.thread)->end == DBTP_THREAD_ENDED)
			continue; /* closing flush, not a given event */
		while (*p < nex && ex[*p].thread != ev.thread)
			(*p)++;
		CHECK(*p < nex);
		if (*p >= nex)
			break;
		e = &ex[(*p)++];
		got++;
		CHECK_EQ(ev.type, e->type);
		if (ev.type != (enum dbtp_event_type)e->type)
			break;
		switch (e->type) {
		case DBTP_EV_BLOCK:
			CHECK_EQ(ev.block->id, e->block);
			break;
		case DBTP_EV_MEM:
			CHECK_EQ(ev.addr, e->addr);
			CHECK_EQ(ev.size, 1u << e->size_shift);
			CHECK_EQ(ev.mem_flags, e->flags);
			break;
		case DBTP_EV_SYSCALL:
			CHECK_EQ(ev.sysno, e->sysno);
			for (int a = 0; a < 6; a++)
				CHECK_EQ(ev.args[a], e->args[a]);
			break;
		case DBTP_EV_SYSRET:
			CHECK_EQ(ev.sysno, e->sysno);
			CHECK_EQ(ev.ret, e->ret);
			break;
		}
	}
	CHECK_EQ(r, 0);
	if (r)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK_EQ(got, nex);
	CHECK(dbtp_trace_info(t)->has_end);
	CHECK_STR(dbtp_trace_get(t, "command"), "test roundtrip");
	CHECK_STR(dbtp_trace_file(t, 1), "/bin/true");
	CHECK_EQ(dbtp_trace_nblocks(t), nblocks);
	for (uint32_t i = 0; i < dbtp_trace_nthreads(t); i++) {
		const struct dbtp_thread *th = dbtp_trace_thread(t, i);

		CHECK(th != NULL);
		if (!th)
			continue;
		CHECK_EQ(th->blocks, per_blocks[i]);
		CHECK_EQ(th->insns, per_insns[i]);
		CHECK_EQ(th->tid, 1000 + i);
		CHECK_EQ(th->end,
			 exited[i] ? DBTP_THREAD_EXITED : DBTP_THREAD_ENDED);
	}
done:
	dbtp_trace_close(t);
	free(pos);
	free(ex);
	free(ninsns);
}

/* Read a whole trace from memory; 0 if clean, -1 on error (in @err). */
static int read_mem(const char *name, const uint8_t *p, size_t len,
		    dbtp_err *err, int *has_end)
{
	dbtp_trace *t;
	struct dbtp_event ev;
	int r, fd = memfd_create("trace", 0);

	*has_end = 0;
	if (fd < 0 || (len && write(fd, p, len) != (ssize_t)len) ||
	    lseek(fd, 0, SEEK_SET)) {
		CHECK(0);
		return -1;
	}
	if (dbtp_trace_open_fd(&t, fd, name, err)) {
		close(fd);
		return -1;
	}
	while ((r = dbtp_trace_next(t, &ev, err)) > 0)
		;
	*has_end = dbtp_trace_info(t)->has_end;
	dbtp_trace_close(t);
	close(fd);
	return r;
}

/* Read a whole trace; 0 if clean, -1 on error (message in @err). */
static int read_all(const char *path, dbtp_err *err, int *has_end)
{
	dbtp_trace *t;
	struct dbtp_event ev;
	int r;

	*has_end = 0;
	if (dbtp_trace_open(&t, path, err))
		return -1;
	while ((r = dbtp_trace_next(t, &ev, err)) > 0)
		;
	*has_end = dbtp_trace_info(t)->has_end;
	dbtp_trace_close(t);
	return r;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* Record boundaries of a valid trace, to tell clean cuts from torn ones. */
static int is_boundary(const uint8_t *p, size_t len, size_t at)
{
	size_t o = DBTP_MAGIC_LEN;

	while (o < len) {
		struct dbtp_frame f;
		const char *why;

		if (o == at)
			return 1;
		if (dbtp_frame_parse(p + o, &f, &why))
			return 0;
		o += DBTP_FRAME_LEN + f.stored_len;
	}
	return o == at;
}

static void test_corruption(const char *good, const char *bad)
{
	size_t len, flips = 0, cuts = 0;
	uint8_t *p = slurp(good, &len);
	dbtp_err err;
	int has_end;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(!read_all(good, &err, &has_end) && has_end);
	/* Every single-byte change is caught (CRC-32C detects all of them). */
	for (size_t i = 0; i < len; i++) {
		uint8_t save = p[i];
		int r;

		p[i] ^= (uint8_t)(1u << (i % 8));
		err.msg[0] = 0;
		r = read_mem(bad, p, len, &err, &has_end);
		p[i] = save;
		if (r == 0) {
			fprintf(stderr, "  flip at %zu not detected\n", i);
			CHECK(0);
		} else {
			flips++;
			CHECK(strstr(err.msg, bad) != NULL);
		}
	}
	CHECK_EQ(flips, len);
	/* Every truncation: torn records are errors with the offset, cuts on
	 * a record boundary read cleanly but without the END record. */
	for (size_t n = 0; n < len; n++) {
		int r;

		r = read_mem(bad, p, n, &err, &has_end);
		CHECK(!has_end);
		if (n >= DBTP_MAGIC_LEN + 1 && is_boundary(p, len, n) &&
		    n > DBTP_MAGIC_LEN) {
			CHECK_EQ(r, 0);
		} else {
			CHECK_EQ(r, -1);
			CHECK(strstr(err.msg, bad) != NULL);
			cuts++;
		}
	}
	CHECK(cuts > len / 2);
	free(p);
}

/* Tally of block @i in test_cache(): none for every third block. */
static struct dbtp_cache_tally cache_tally(uint32_t i)
{
	struct dbtp_cache_tally c = {0};

	if (i % 3 == 1)
		return c;
	c.ops = 1 + i % 7 + (i == 5 ? (1ull << 40) : 0);
	c.l1 = i % 5;
	c.l2 = i % 5 / 2;
	c.unaligned = i % 2;
	return c;
}

/*
 * Blocks-mode traces with cache tallies (DBTP_WRITER_CACHE): the tallies
 * read back exactly, in order of block id, after every block event, in as
 * many CACHE records as DBTP_CACHE_REC_ENTRIES needs; bad tallies and
 * misuse are errors.  Leaves the good trace at @path.
 */
static void test_cache(const char *path, uint32_t nblocks)
{
	static const uint8_t sizes[1] = {1}, bytes[1] = {0x90};
	dbtp_writer *w;
	dbtp_trace *t;
	dbtp_err err = {0};
	struct dbtp_event ev;
	uint32_t id, next = 0, blocks = 0, tallies = 0, want = 0;
	int r, after = 0, has_end;

	CHECK(dbtp_writer_open(&w, path, DBTP_ARCH_X86_64,
			       DBTP_MODE_MEM | DBTP_WRITER_CACHE, 0, &err));
	/* more L2 than L1 misses, more unaligned accesses than operations */
	for (int k = 0; k < 2; k++) {
		CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64,
					DBTP_MODE_BLOCKS | DBTP_WRITER_CACHE, 0,
					&err));
		CHECK(!dbtp_writer_block(w, 0x400000, 1, sizes, bytes, 0, 0,
					 &id, &err));
		CHECK(!dbtp_writer_exec(w, 0, id, &err));
		CHECK(!dbtp_writer_cache(w, id, 2, 1, 1 + !k, 2 + k, &err));
		CHECK(!dbtp_writer_close(w, 0, &err));
		CHECK_EQ(read_all(path, &err, &has_end), -1);
		CHECK(strstr(err.msg, "bad entry in CACHE record") != NULL);
	}
	/* a blocks-mode writer takes no tallies */
	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	CHECK(
	    !dbtp_writer_block(w, 0x400000, 1, sizes, bytes, 0, 0, &id, &err));
	CHECK(dbtp_writer_cache(w, id, 1, 0, 0, 0, &err));
	dbtp_writer_close(w, 0, &err);
	/* nor for an undeclared block, and the writer fails */
	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64,
				DBTP_MODE_BLOCKS | DBTP_WRITER_CACHE, 0, &err));
	CHECK(dbtp_writer_cache(w, 0, 1, 0, 0, 0, &err));
	CHECK(dbtp_writer_close(w, 0, &err));
	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64,
				DBTP_MODE_BLOCKS | DBTP_WRITER_CACHE, 0, &err));
	for (uint32_t i = 0; i < nblocks; i++) {
		struct dbtp_cache_tally c = cache_tally(i);

		CHECK(!dbtp_writer_block(w, 0x400000 + i, 1, sizes, bytes, 0, 0,
					 &id, &err));
		CHECK(!dbtp_writer_exec(w, i % 3, id, &err));
		/* in two parts: tallies add up */
		CHECK(!dbtp_writer_cache(w, id, c.ops / 2, c.l1 / 2, c.l2 / 2,
					 0, &err));
		CHECK(!dbtp_writer_cache(w, id, c.ops - c.ops / 2,
					 c.l1 - c.l1 / 2, c.l2 - c.l2 / 2,
					 c.unaligned, &err));
		want += c.ops > 0;
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
	CHECK(!dbtp_trace_open(&t, path, &err));
	CHECK(dbtp_trace_info(t)->cache);
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		struct dbtp_cache_tally c;

		if (ev.type == DBTP_EV_BLOCK) {
			CHECK(!after);
			blocks++;
			continue;
		}
		if (ev.type != DBTP_EV_CACHE)
			continue;
		after = 1;
		while (next < nblocks && !cache_tally(next).ops)
			next++;
		CHECK(next < nblocks);
		if (next >= nblocks)
			break;
		c = cache_tally(next);
		CHECK_EQ(ev.block->id, next);
		CHECK_EQ(ev.count, c.ops);
		CHECK_EQ(ev.l1_misses, c.l1);
		CHECK_EQ(ev.l2_misses, c.l2);
		CHECK_EQ(ev.unaligned, c.unaligned);
		next++;
		tallies++;
	}
	CHECK_EQ(r, 0);
	CHECK(dbtp_trace_info(t)->has_end);
	CHECK_EQ(blocks, nblocks);
	CHECK_EQ(tallies, want);
	dbtp_trace_close(t);
}

int main(void)
{
	char dir[] = "/tmp/dbtp-test-XXXXXX", a[64], b[64];

	if (!mkdtemp(dir))
		return 1;
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	test_crc_varint();
	for (int round = 0; round < 30; round++) {
		enum dbtp_mode m = round % 3 == 0   ? DBTP_MODE_BLOCKS
				   : round % 3 == 1 ? DBTP_MODE_MEM
						    : DBTP_MODE_COUNT;

		roundtrip(m, 1 + round % 5, 2000 + (int)(rnd() % 30000),
			  64 + (uint32_t)(rnd() % 5000), a);
	}
	test_cache(a, DBTP_CACHE_REC_ENTRIES * 3 / 2 + 7);
	/* Small traces for the exhaustive corruption sweep. */
	test_cache(a, 40);
	test_corruption(a, b);
	roundtrip(DBTP_MODE_MEM, 2, 400, 100, a);
	test_corruption(a, b);
	unlink(a);
	unlink(b);
	rmdir(dir);
	return T_DONE();
}

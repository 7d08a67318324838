/* SPDX-License-Identifier: MIT */
/*
 * test-simpoint.c - .bb files (parse, errors, round trip) and the SimPoint
 * clustering on planted phases.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbtp/bbvfile.h"
#include "dbtp/simpoint.h"
#include "t.h"
#include "util/buf.h"

/* ---- a small deterministic generator for the synthetic data ---- */

static uint64_t rs = 88172645463325252ull;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static double rnd01(void)
{
	return (double)(rnd() >> 11) * 0x1p-53;
}

/* ---- parser ---- */

static const char *parse_err(const char *text, size_t len)
{
	static dbtp_err err;
	struct dbtp_bbv b;

	memset(&err, 0, sizeof(err));
	if (dbtp_bbv_read_mem(text, len, "x.bb", &b, &err) == 0) {
		dbtp_bbv_free(&b);
		return "(accepted)";
	}
	CHECK(b.n == 0 && !b.start && !b.ids);
	return err.msg;
}

#define PERR(lit) parse_err(lit, sizeof(lit) - 1)

static void test_parse_errors(void)
{
	CHECK_STR(PERR(""), "x.bb: line 1: no intervals");
	CHECK_STR(PERR("# only a comment\n\n"), "x.bb: line 3: no intervals");
	CHECK_STR(PERR("T:1:5 :0:3\n"),
		  "x.bb: line 1: block id 0 (ids start at 1) at column 8");
	CHECK_STR(PERR("# c\nT:1:5\nX:1:2\n"),
		  "x.bb: line 3: expected 'T' (an interval line) at column 1");
	CHECK_STR(PERR("T:1:18446744073709551616\n"),
		  "x.bb: line 1: count above 18446744073709551615 at column 5");
	CHECK_STR(PERR("T:4294967296:1\n"),
		  "x.bb: line 1: block id above 4294967295 at column 3");
	CHECK_STR(PERR("T:3:2 :1:1 :3:9\n"),
		  "x.bb: line 1: block id 3 given twice");
	CHECK_STR(PERR("T:1:2\0\n"),
		  "x.bb: line 1: unexpected byte 0x00 at column 6");
	CHECK_STR(PERR("T:1:2 \x01\n"),
		  "x.bb: line 1: unexpected byte 0x01 at column 7");
	CHECK_STR(PERR("T:1:x\n"),
		  "x.bb: line 1: expected a count at column 5");
	CHECK_STR(PERR("T:1;2\n"),
		  "x.bb: line 1: expected ':' after the block id at column 4");
	CHECK_STR(PERR("T:1:2 3:4\n"),
		  "x.bb: line 1: expected ':ID:COUNT' at column 7");
	CHECK_STR(PERR("T:1:2x\n"),
		  "x.bb: line 1: expected a blank after the count at column 6");
	CHECK_STR(PERR("T:1:2\nT\n"), "x.bb: line 2: interval has no blocks");
	CHECK_STR(PERR("T:1:0 :7:0\n"),
		  "x.bb: line 1: interval counts are all 0");
	CHECK_STR(PERR("T:1:-3\n"),
		  "x.bb: line 1: expected a count at column 5");
}

static void test_parse_ok(void)
{
	static const char text[] =
	    "\n# a comment\n  \t\n"
	    "T:2:3 :1:4\r\n"
	    "  T:4294967295:18446744073709551615 :7:0\n"
	    "T:5:1:6:2"; /* no blanks between pairs, no final newline */
	struct dbtp_bbv b;
	dbtp_err err = {0};

	CHECK(dbtp_bbv_read_mem(text, sizeof(text) - 1, "ok.bb", &b, &err) ==
	      0);
	CHECK_EQ(b.n, 3);
	if (b.n != 3)
		return;
	CHECK_EQ(b.start[0], 0);
	CHECK_EQ(b.start[1], 2);
	CHECK_EQ(b.start[2], 4);
	CHECK_EQ(b.start[3], 6);
	CHECK_EQ(b.ids[0], 1);
	CHECK_EQ(b.counts[0], 4);
	CHECK_EQ(b.ids[1], 2);
	CHECK_EQ(b.counts[1], 3);
	CHECK_EQ(b.ids[2], 7);
	CHECK_EQ(b.counts[2], 0);
	CHECK_EQ(b.ids[3], 4294967295u);
	CHECK_EQ(b.counts[3], UINT64_MAX);
	CHECK_EQ(b.ids[4], 5);
	CHECK_EQ(b.ids[5], 6);
	CHECK_EQ(b.counts[5], 2);
	CHECK_EQ(b.max_id, 4294967295u);
	dbtp_bbv_free(&b);
	CHECK(b.n == 0 && !b.ids);

	CHECK(dbtp_bbv_read("/nonexistent/x.bb", &b, &err) == -1);
	CHECK_STR(err.msg, "/nonexistent/x.bb: No such file or directory");
}

/* ---- writer and round trip ---- */

static void test_round_trip(void)
{
	struct dbtp_buf text = {0}, again = {0};
	struct dbtp_bbv b = {0}, r;
	dbtp_err err = {0};
	uint32_t ids[64];
	uint64_t counts[64];
	char path[] = "/tmp/test-simpoint-XXXXXX";
	int fd;

	/* the writer's exact text */
	ids[0] = 1, counts[0] = 48, ids[1] = 3, counts[1] = 24;
	CHECK(dbtp_bbv_format_line(ids, counts, 2, &text) == 0);
	CHECK(text.len == 14 && !memcmp(text.p, "T:1:48 :3:24 \n", 14));
	text.len = 0;
	ids[1] = 1;
	CHECK(dbtp_bbv_format_line(ids, counts, 2, &text) == -1);
	ids[0] = 0;
	CHECK(dbtp_bbv_format_line(ids, counts, 1, &text) == -1);
	CHECK(dbtp_bbv_format_line(ids, counts, 0, &text) == -1);
	CHECK_EQ(text.len, 0);

	for (int line = 0; line < 200; line++) {
		size_t m = 1 + rnd() % 64;
		uint32_t id = 0;

		for (size_t j = 0; j < m; j++) {
			id += 1 + (uint32_t)(rnd() % 1000);
			ids[j] = line == 7 && j == m - 1 ? UINT32_MAX : id;
			counts[j] = line == 9 ? UINT64_MAX - j : rnd() % 100000;
		}
		counts[0] |= 1;
		CHECK(dbtp_bbv_format_line(ids, counts, m, &text) == 0);
		CHECK(dbtp_bbv_add(&b, ids, counts, m, &err) == 0);
	}
	CHECK(dbtp_bbv_read_mem((char *)text.p, text.len, "rt", &r, &err) == 0);
	CHECK_EQ(r.n, b.n);
	CHECK_EQ(r.max_id, b.max_id);
	CHECK(r.n == b.n &&
	      !memcmp(r.start, b.start, (b.n + 1) * sizeof(size_t)));
	CHECK(!memcmp(r.ids, b.ids, b.start[b.n] * sizeof(uint32_t)));
	CHECK(!memcmp(r.counts, b.counts, b.start[b.n] * sizeof(uint64_t)));
	for (size_t i = 0; i < r.n; i++)
		CHECK(dbtp_bbv_format_line(
			  r.ids + r.start[i], r.counts + r.start[i],
			  r.start[i + 1] - r.start[i], &again) == 0);
	CHECK(again.len == text.len && !memcmp(again.p, text.p, text.len));
	dbtp_bbv_free(&r);

	/* and through a file */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, text.p, text.len) == (ssize_t)text.len);
		close(fd);
		CHECK(dbtp_bbv_read(path, &r, &err) == 0);
		CHECK(r.n == b.n &&
		      !memcmp(r.ids, b.ids, b.start[b.n] * sizeof(uint32_t)));
		dbtp_bbv_free(&r);
		unlink(path);
	}

	/* dbtp_bbv_add sorts, and refuses what the parser refuses */
	dbtp_bbv_free(&b);
	ids[0] = 9, ids[1] = 2, counts[0] = 5, counts[1] = 6;
	CHECK(dbtp_bbv_add(&b, ids, counts, 2, &err) == 0);
	CHECK(b.n == 1 && b.ids[0] == 2 && b.counts[0] == 6 && b.ids[1] == 9);
	ids[1] = 9;
	CHECK(dbtp_bbv_add(&b, ids, counts, 2, &err) == -1);
	CHECK_STR(err.msg, "bbv: block id 9 given twice");
	counts[0] = 0;
	CHECK(dbtp_bbv_add(&b, ids, counts, 1, &err) == -1);
	CHECK_STR(err.msg, "bbv: interval counts are all 0");
	CHECK_EQ(b.n, 1);
	dbtp_bbv_free(&b);
	dbtp_buf_free(&text);
	dbtp_buf_free(&again);
}

/* ---- planted phases ---- */

#define PHASE_BLOCKS 60
#define COMMON_BLOCKS 20

/*
 * Intervals of @np phases, @sizes[p] of phase p, in runs of random length
 * so the phases interleave in time.  Every phase runs COMMON_BLOCKS shared
 * blocks (ids 1..20) and PHASE_BLOCKS of its own, with a fixed profile per
 * phase; each interval scales each count by a random factor in
 * [1 - noise, 1 + noise].  Phase of interval i goes to phase[i].
 */
static void make_phases(struct dbtp_bbv *b, unsigned np, const size_t *sizes,
			double noise, unsigned *phase)
{
	double prof[8][COMMON_BLOCKS + PHASE_BLOCKS];
	size_t left[8], n = 0, i = 0;
	uint32_t ids[COMMON_BLOCKS + PHASE_BLOCKS];
	uint64_t counts[COMMON_BLOCKS + PHASE_BLOCKS];
	dbtp_err err;

	memset(b, 0, sizeof(*b));
	for (unsigned p = 0; p < np; p++) {
		for (unsigned j = 0; j < COMMON_BLOCKS + PHASE_BLOCKS; j++)
			prof[p][j] =
			    j < COMMON_BLOCKS ? 500 : 50 + 2000 * rnd01();
		left[p] = sizes[p];
		n += sizes[p];
	}
	while (i < n) {
		unsigned p = (unsigned)(rnd() % np);
		size_t run = 1 + rnd() % 12;

		for (; run && left[p] && i < n; run--, left[p]--, i++) {
			for (unsigned j = 0; j < COMMON_BLOCKS + PHASE_BLOCKS;
			     j++) {
				double f = 1 + noise * (2 * rnd01() - 1);

				ids[j] = j < COMMON_BLOCKS ? j + 1
							   : 1000 * (p + 1) + j;
				counts[j] = (uint64_t)(prof[p][j] * f + 0.5);
			}
			phase[i] = p;
			CHECK(dbtp_bbv_add(b, ids, counts,
					   COMMON_BLOCKS + PHASE_BLOCKS,
					   &err) == 0);
		}
	}
}

static void check_planted(unsigned np, const size_t *sizes,
			  enum dbtp_simpoint_init init, unsigned seeds,
			  unsigned threads)
{
	struct dbtp_simpoint_opts o;
	struct dbtp_simpoint_result r, r2;
	struct dbtp_bbv b;
	unsigned *phase, map[8];
	size_t n = 0;
	dbtp_err err = {0};

	for (unsigned p = 0; p < np; p++)
		n += sizes[p];
	phase = calloc(n, sizeof(*phase));
	make_phases(&b, np, sizes, 0.2, phase);
	dbtp_simpoint_default_opts(&o);
	o.init = init;
	if (seeds)
		o.num_init_seeds = seeds;
	o.threads = threads;
	CHECK(dbtp_simpoint_run(&b, &o, &r, &err) == 0);
	CHECK_EQ(r.k, np);
	CHECK_EQ(r.n, n);
	CHECK_EQ(r.nk, 30);
	CHECK_EQ(r.k_tried[r.chosen], r.k);
	if (r.k != np)
		goto out;
	/* labels are the phases renamed: cluster c is phase map[c] */
	for (unsigned c = 0; c < np; c++)
		map[c] = np;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = r.labels[i];

		CHECK(c < np);
		if (c >= np)
			continue;
		if (map[c] == np)
			map[c] = phase[i];
		CHECK_EQ(map[c], phase[i]);
	}
	for (unsigned c = 0; c < np; c++) {
		CHECK(map[c] < np);
		for (unsigned c2 = 0; c2 < c; c2++)
			CHECK(map[c] != map[c2]);
		if (map[c] >= np)
			continue;
		/* the point is in its phase; the weight is the phase share */
		CHECK(r.points[c] < n);
		if (r.points[c] < n)
			CHECK_EQ(phase[r.points[c]], map[c]);
		CHECK(r.weights[c] == (double)sizes[map[c]] / (double)n);
	}
	CHECK_EQ(r.labels[0], 0);

	/* same seed, same result, whatever the number of threads */
	o.threads = o.threads == 1 ? 3 : 1;
	CHECK(dbtp_simpoint_run(&b, &o, &r2, &err) == 0);
	CHECK(r2.k == r.k && r2.nk == r.nk);
	CHECK(!memcmp(r.labels, r2.labels, n * sizeof(*r.labels)));
	CHECK(!memcmp(r.dists, r2.dists, n * sizeof(*r.dists)));
	CHECK(!memcmp(r.points, r2.points, r.k * sizeof(*r.points)));
	CHECK(!memcmp(r.bic, r2.bic, r.nk * sizeof(*r.bic)));
	CHECK(r.distortion == r2.distortion);
	dbtp_simpoint_free_result(&r2);
out:
	dbtp_simpoint_free_result(&r);
	dbtp_bbv_free(&b);
	free(phase);
}

/*
 * SimPoint's defaults (random-sample starts, 5 of them) find the 3 phases;
 * for 5 phases of unequal sizes none of 5 random starts may land one
 * centre in each phase (about 1 dataset in 4 of this generator then gets
 * k = 6), so the sampled starts get 20 tries there.  Furthest-first starts
 * find well-separated phases from the first try.
 */
static void test_planted(void)
{
	static const size_t three[] = {150, 90, 60};
	static const size_t five[] = {200, 120, 80, 60, 40};

	check_planted(3, three, DBTP_SIMPOINT_INIT_SAMPLE, 0, 0);
	check_planted(3, three, DBTP_SIMPOINT_INIT_SAMPLE, 0, 1);
	check_planted(3, three, DBTP_SIMPOINT_INIT_FURTHEST, 0, 0);
	check_planted(5, five, DBTP_SIMPOINT_INIT_SAMPLE, 20, 0);
	check_planted(5, five, DBTP_SIMPOINT_INIT_FURTHEST, 0, 0);
}

static void test_one_phase(void)
{
	static const size_t one[] = {300};
	struct dbtp_simpoint_result r;
	struct dbtp_bbv b = {0};
	unsigned phase[300];
	uint32_t ids[3] = {1, 2, 3};
	uint64_t counts[3] = {10, 20, 30};
	dbtp_err err = {0};

	make_phases(&b, 1, one, 0.2, phase);
	CHECK(dbtp_simpoint_run(&b, NULL, &r, &err) == 0);
	CHECK_EQ(r.k, 1);
	CHECK(r.weights[0] == 1.0);
	dbtp_simpoint_free_result(&r);
	dbtp_bbv_free(&b);

	/* identical intervals: no variance at all */
	for (int i = 0; i < 50; i++)
		CHECK(dbtp_bbv_add(&b, ids, counts, 3, &err) == 0);
	CHECK(dbtp_simpoint_run(&b, NULL, &r, &err) == 0);
	CHECK_EQ(r.k, 1);
	CHECK_EQ(r.points[0], 0);
	CHECK(r.distortion < 1e-20);
	dbtp_simpoint_free_result(&r);

	/* a single interval */
	dbtp_bbv_free(&b);
	CHECK(dbtp_bbv_add(&b, ids, counts, 3, &err) == 0);
	CHECK(dbtp_simpoint_run(&b, NULL, &r, &err) == 0);
	CHECK(r.k == 1 && r.nk == 1 && r.points[0] == 0);
	dbtp_simpoint_free_result(&r);
	dbtp_bbv_free(&b);
}

/* Extreme ids and counts go through projection and clustering. */
static void test_extremes(void)
{
	struct dbtp_simpoint_result r;
	struct dbtp_bbv b = {0};
	uint32_t ids[3] = {1, 2, UINT32_MAX};
	uint64_t c[4][3] = {
	    {UINT64_MAX, UINT64_MAX, UINT64_MAX},
	    {1, 0, UINT64_MAX},
	    {0, 0, 1},
	    {UINT64_MAX, 1, 0},
	};
	dbtp_err err = {0};

	for (int i = 0; i < 40; i++)
		CHECK(dbtp_bbv_add(&b, ids, c[i % 4], 3, &err) == 0);
	CHECK(dbtp_simpoint_run(&b, NULL, &r, &err) == 0);
	/* rows 1 and 2 normalise to the same vector */
	CHECK_EQ(r.k, 3);
	CHECK(r.labels[1] == r.labels[2]);
	dbtp_simpoint_free_result(&r);
	dbtp_bbv_free(&b);
}

/* Two distinct vectors, k forced to 3: one cluster must stay empty. */
static void test_empty_cluster(void)
{
	struct dbtp_simpoint_opts o;
	struct dbtp_simpoint_result r;
	struct dbtp_buf sp = {0}, w = {0};
	struct dbtp_bbv b = {0};
	uint32_t ids[2] = {1, 2};
	uint64_t c1[2] = {10, 0}, c2[2] = {0, 10};
	dbtp_err err = {0};

	for (int i = 0; i < 6; i++)
		CHECK(dbtp_bbv_add(&b, ids, i % 3 ? c2 : c1, 2, &err) == 0);
	dbtp_simpoint_default_opts(&o);
	o.max_k = 3;
	o.k_step = 2; /* k = 1, 3 */
	o.bic_threshold = 1;
	CHECK(dbtp_simpoint_run(&b, &o, &r, &err) == 0);
	CHECK(r.nk == 2 && r.k_tried[0] == 1 && r.k_tried[1] == 3);
	CHECK_EQ(r.k, 3);
	if (r.k == 3) {
		CHECK(r.points[0] == 0 && r.points[1] == 1);
		CHECK(r.points[2] == DBTP_SIMPOINT_NONE && r.weights[2] == 0);
		CHECK(dbtp_simpoint_format(&r, &sp, &w, NULL) == 0);
		CHECK(sp.len == 8 && !memcmp(sp.p, "0 0\n1 1\n", 8));
		CHECK(w.len == 22 &&
		      !memcmp(w.p, "0.333333 0\n0.666667 1\n", 22));
	}
	dbtp_simpoint_free_result(&r);
	dbtp_bbv_free(&b);
	dbtp_buf_free(&sp);
	dbtp_buf_free(&w);
}

static void test_format(void)
{
	uint32_t labels[5] = {0, 0, 1, 0, 1};
	double dists[5] = {0.5, 0.25, 0, 1e-7, 2};
	size_t points[3] = {1, 2, DBTP_SIMPOINT_NONE};
	double weights[3] = {0.6, 0.4, 0};
	struct dbtp_simpoint_result r = {
	    .n = 5,
	    .k = 3,
	    .labels = labels,
	    .dists = dists,
	    .points = points,
	    .weights = weights,
	};
	struct dbtp_buf sp = {0}, w = {0}, l = {0};
	static const char want_l[] = "0 0.5\n0 0.25\n1 0\n0 1e-07\n1 2\n";

	CHECK(dbtp_simpoint_format(&r, &sp, &w, &l) == 0);
	CHECK(sp.len == 8 && !memcmp(sp.p, "1 0\n2 1\n", 8));
	CHECK(w.len == 12 && !memcmp(w.p, "0.6 0\n0.4 1\n", 12));
	CHECK(l.len == sizeof(want_l) - 1 &&
	      !memcmp(l.p, want_l, sizeof(want_l) - 1));
	CHECK(dbtp_simpoint_format(&r, NULL, NULL, NULL) == 0);
	dbtp_buf_free(&sp);
	dbtp_buf_free(&w);
	dbtp_buf_free(&l);
}

static void test_bad_opts(void)
{
	struct dbtp_simpoint_opts o;
	struct dbtp_simpoint_result r;
	struct dbtp_bbv b = {0};
	dbtp_err err = {0};

	dbtp_simpoint_default_opts(&o);
	CHECK(dbtp_simpoint_run(&b, &o, &r, &err) == -1);
	CHECK_STR(err.msg, "simpoint: no intervals to cluster");
	o.bic_threshold = 1.5;
	CHECK(dbtp_simpoint_run(&b, &o, &r, &err) == -1);
	CHECK_STR(err.msg, "simpoint: bic_threshold must be in [0, 1]");
}

/* 10,000 intervals over 50,000 random blocks: it must simply finish. */
static void test_big(void)
{
	struct dbtp_simpoint_result r;
	struct dbtp_bbv b = {0};
	uint32_t ids[40];
	uint64_t counts[40];
	dbtp_err err = {0};
	double total = 0;

	for (int i = 0; i < 10000; i++) {
		size_t m = 1 + rnd() % 40;

		for (size_t j = 0; j < m; j++) {
			ids[j] = 1 + (uint32_t)((rnd() % 50000 / 40) * 40 + j);
			counts[j] = 1 + rnd() % 10000;
		}
		CHECK(dbtp_bbv_add(&b, ids, counts, m, &err) == 0);
	}
	CHECK(dbtp_simpoint_run(&b, NULL, &r, &err) == 0);
	CHECK(r.k >= 1 && r.k <= 30 && r.nk == 30);
	for (unsigned c = 0; c < r.k; c++)
		total += r.weights[c];
	CHECK(total > 0.999999 && total < 1.000001);
	dbtp_simpoint_free_result(&r);
	dbtp_bbv_free(&b);
}

/* ---- streaming ---- */

/* Append @n bytes of @p to @b; 0 or -1. */
static int put(struct dbtp_buf *b, const void *p, size_t n)
{
	if (dbtp_buf_reserve(b, n))
		return -1;
	dbtp_put_bytes(b, p, n);
	return 0;
}

static int collect(void *arg, const uint32_t *ids, const uint64_t *counts,
		   size_t n, dbtp_err *err)
{
	return dbtp_bbv_add(arg, ids, counts, n, err);
}

/* Write @len bytes of @text to a temporary file; its path (static). */
static const char *tmpfile_of(const char *text, size_t len)
{
	static char path[] = "/tmp/dbtprof-test-bbv.XXXXXX";
	int fd;

	memcpy(path + sizeof(path) - 7, "XXXXXX", 6);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, len) == (ssize_t)len);
	close(fd);
	return path;
}

/* dbtp_bbv_scan() gives what dbtp_bbv_read_mem() gives (or its message). */
static void scan_same(const char *text, size_t len)
{
	const char *path = tmpfile_of(text, len);
	struct dbtp_bbv a = {0}, b;
	dbtp_err e1 = {0}, e2 = {0};
	int r1 = dbtp_bbv_scan(path, collect, &a, &e1),
	    r2 = dbtp_bbv_read_mem(text, len, path, &b, &e2);

	CHECK_EQ(r1, r2);
	if (!r1 && !r2) {
		CHECK_EQ(a.n, b.n);
		CHECK(!memcmp(a.start, b.start, (b.n + 1) * sizeof(size_t)));
		CHECK(!memcmp(a.ids, b.ids, b.start[b.n] * sizeof(uint32_t)));
		CHECK(!memcmp(a.counts, b.counts,
			      b.start[b.n] * sizeof(uint64_t)));
	} else {
		CHECK_STR(e1.msg, e2.msg);
	}
	unlink(path);
	dbtp_bbv_free(&a);
	dbtp_bbv_free(&b);
}

/*
 * The streaming reader against the in-memory one: ordinary files, no
 * final newline, CRLF, errors on a later line, an empty file; lines of
 * about 75 KiB and 300 KiB (longer than its 64 KiB buffer) and lines
 * whose ends fall on every side of a buffer boundary; a missing file.
 * Then dbtp_simpoint_run_file() against dbtp_simpoint_run() on the same
 * 2,000 intervals: identical results.
 */
static void test_scan(void)
{
	static const char *const texts[] = {"T:1:5 :2:3\nT:3:1\n",
					    "T:1:5 :2:3\nT:3:1",
					    "# c\r\nT:2:1 :1:4\r\n",
					    "T:1:5\nT:2:0\n",
					    "T:1:5\n\nT:1:2 :1:3\n",
					    "",
					    "\n\n",
					    "T:1:1\nX\n"};
	struct dbtp_buf big = {0};
	struct dbtp_bbv b = {0};
	struct dbtp_simpoint_result r1, r2;
	dbtp_err err = {0};
	const char *path;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		scan_same(texts[i], strlen(texts[i]));
	for (unsigned pairs = 5000; pairs <= 20000; pairs += 15000) {
		big.len = 0;
		for (int line = 0; line < 3; line++) {
			CHECK(!put(&big, "T", 1));
			for (unsigned j = 1; j <= pairs; j++) {
				char pair[48];
				int n = snprintf(pair, sizeof(pair), ":%u:%u ",
						 j * 7 + line, 1000000 + j);

				CHECK(!put(&big, pair, (size_t)n));
			}
			CHECK(!put(&big, "\n", 1));
		}
		scan_same((const char *)big.p, big.len);
	}
	/* short lines ending around the 65,536-byte boundary */
	for (unsigned shift = 0; shift < 24; shift++) {
		big.len = 0;
		while (big.len < 65536 - 40 + shift)
			CHECK(!put(&big, "T:1:2 :3:4\n", 11));
		scan_same((const char *)big.p, big.len);
	}
	dbtp_buf_free(&big);
	CHECK_EQ(dbtp_bbv_scan("/nonexistent/x.bb", collect, &b, &err), -1);
	CHECK_STR(err.msg, "/nonexistent/x.bb: No such file or directory");

	for (int i = 0; i < 2000; i++) {
		uint32_t ids[8];
		uint64_t counts[8];
		int phase = (i / 250) % 4;

		for (int j = 0; j < 8; j++) {
			ids[j] = (uint32_t)(1 + phase * 100 + j);
			counts[j] = 100 + rnd() % 20;
		}
		CHECK(dbtp_bbv_add(&b, ids, counts, 8, &err) == 0);
	}
	big.len = 0;
	for (size_t i = 0; i < b.n; i++)
		CHECK(dbtp_bbv_format_line(
			  b.ids + b.start[i], b.counts + b.start[i],
			  b.start[i + 1] - b.start[i], &big) == 0);
	path = tmpfile_of((const char *)big.p, big.len);
	CHECK(dbtp_simpoint_run(&b, NULL, &r1, &err) == 0);
	CHECK(dbtp_simpoint_run_file(path, NULL, &r2, &err) == 0);
	CHECK_EQ(r1.n, r2.n);
	CHECK_EQ(r1.k, r2.k);
	CHECK(!memcmp(r1.labels, r2.labels, r1.n * sizeof(*r1.labels)));
	CHECK(!memcmp(r1.points, r2.points, r1.k * sizeof(*r1.points)));
	CHECK(!memcmp(r1.weights, r2.weights, r1.k * sizeof(*r1.weights)));
	unlink(path);
	dbtp_simpoint_free_result(&r1);
	dbtp_simpoint_free_result(&r2);
	dbtp_bbv_free(&b);
	dbtp_buf_free(&big);
}

int main(void)
{
	test_parse_errors();
	test_parse_ok();
	test_round_trip();
	test_format();
	test_bad_opts();
	test_empty_cluster();
	test_extremes();
	test_one_phase();
	test_planted();
	test_big();
	test_scan();
	return T_DONE();
}

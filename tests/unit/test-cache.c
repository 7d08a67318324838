/* SPDX-License-Identifier: MIT */
/*
 * test-cache.c - the cache model: cold misses of a sequential walk, a
 * working set of exactly L1's size, LRU thrashing of one set, a small 2-way
 * hierarchy worked out by hand access by access (hits, misses, evictions,
 * write-backs, final contents), line-straddling accesses, geometry parsing,
 * a block's tally (dbtp_cache_tally(), its fast path against the whole
 * model), and intervals, MPKI and SimPoint estimates on a synthetic
 * trace, with the interval count checked against the bbv generator's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "dbtp/bbv.h"
#include "dbtp/cache.h"
#include "dbtp/trace.h"
#include "t.h"

static const struct dbtp_cache_geom def_l1 = {32 << 10, 8, 64};
static const struct dbtp_cache_geom def_l2 = {1 << 20, 16, 64};

#define CHECK_NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-12)

static dbtp_cache *new_cache(const struct dbtp_cache_geom *l1,
			     const struct dbtp_cache_geom *l2)
{
	dbtp_cache *c = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_cache_new(&c, l1, l2, &err));
	if (!c) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	return c;
}

/* 8-byte loads over 64 KiB: one miss per 64-byte line, i.e. per 8. */
static void test_sequential(void)
{
	dbtp_cache *c = new_cache(&def_l1, &def_l2);
	struct dbtp_cache_counts n = {0};

	for (uint64_t a = 0x10000; a < 0x10000 + (64 << 10); a += 8)
		dbtp_cache_access(c, a, 8, 0, &n);
	CHECK_EQ(n.ops, 8192);
	CHECK_EQ(n.accesses, 8192);
	CHECK_EQ(n.l1_misses, 1024);
	CHECK_EQ(n.l2_accesses, 1024);
	CHECK_EQ(n.l2_misses, 1024); /* cold */
	/* 64 KiB through a 32 KiB L1: the first half was evicted, clean. */
	CHECK_EQ(n.l1_evictions, 512);
	CHECK_EQ(n.l1_writebacks, 0);
	CHECK_EQ(n.l2_evictions, 0);
	CHECK_EQ(n.mem_writebacks, 0);
	dbtp_cache_free(c);
}

/* Exactly L1's 32 KiB, twice: the second pass hits every time. */
static void test_fits(void)
{
	dbtp_cache *c = new_cache(&def_l1, &def_l2);
	struct dbtp_cache_counts n = {0};

	for (int pass = 0; pass < 2; pass++) {
		memset(&n, 0, sizeof(n));
		for (uint64_t a = 0; a < (32 << 10); a += 64)
			dbtp_cache_access(c, 0x40000 + a, 8, pass, &n);
		CHECK_EQ(n.accesses, 512);
		CHECK_EQ(n.l1_misses, pass ? 0 : 512);
		CHECK_EQ(n.l1_evictions, 0);
	}
	/* Stores made every line dirty, at MRU order by address. */
	CHECK_EQ(dbtp_cache_probe(c, 1, 0x40000, NULL), DBTP_CACHE_DIRTY);
	CHECK_EQ(dbtp_cache_probe(c, 2, 0x40000, NULL), DBTP_CACHE_CLEAN);
	/* One more line: in set 0, evicts the LRU 0x40000, dirty. */
	memset(&n, 0, sizeof(n));
	dbtp_cache_access(c, 0x48000, 8, 0, &n);
	CHECK_EQ(n.l1_misses, 1);
	CHECK_EQ(n.l1_evictions, 1);
	CHECK_EQ(n.l1_writebacks, 1);
	CHECK_EQ(n.mem_writebacks, 0); /* L2 holds it: now dirty there */
	CHECK_EQ(dbtp_cache_probe(c, 1, 0x40000, NULL), DBTP_CACHE_ABSENT);
	CHECK_EQ(dbtp_cache_probe(c, 2, 0x40000, NULL), DBTP_CACHE_DIRTY);
	dbtp_cache_free(c);
}

/* ways + 1 lines of one set, cycled: LRU always evicts the next one. */
static void test_thrash(void)
{
	dbtp_cache *c = new_cache(&def_l1, &def_l2);
	struct dbtp_cache_counts n = {0};
	const uint64_t stride = 64 * 64; /* sets x line: same L1 set */

	for (int pass = 0; pass < 3; pass++) {
		memset(&n, 0, sizeof(n));
		for (uint64_t i = 0; i < 9; i++)
			dbtp_cache_access(c, i * stride, 8, 0, &n);
		CHECK_EQ(n.accesses, 9);
		CHECK_EQ(n.l1_misses, 9);
		CHECK_EQ(n.l1_evictions, pass ? 9 : 1);
		/* L2 (1024 sets) holds all nine lines after the first pass */
		CHECK_EQ(n.l2_misses, pass ? 0 : 9);
	}
	/* With 8 lines the second pass hits. */
	dbtp_cache_free(c);
	c = new_cache(&def_l1, &def_l2);
	for (int pass = 0; pass < 2; pass++) {
		memset(&n, 0, sizeof(n));
		for (uint64_t i = 0; i < 8; i++)
			dbtp_cache_access(c, i * stride, 8, 0, &n);
		CHECK_EQ(n.l1_misses, pass ? 0 : 8);
	}
	dbtp_cache_free(c);
}

/*
 * L1: 256 B, 2-way, 64 B lines: 2 sets (set = line & 1).  L2: 512 B, 2-way,
 * 64 B lines: 4 sets (set = line & 3).  Sets are listed MRU first, "d" =
 * dirty.  Expected counts are cumulative.
 */
static void test_by_hand(void)
{
	static const struct {
		uint64_t line, off;
		int store;
		/* l1 misses, l1 evictions, l1 write-backs, l2 misses,
		 * l2 evictions, memory write-backs */
		uint64_t m1, e1, w1, m2, e2, wm;
	} steps[] = {
	    /* L1 s0 [0]           L2 s0 [0] */
	    {0, 0, 0, 1, 0, 0, 1, 0, 0},
	    /* L1 s0 [2d 0]        L2 s2 [2] */
	    {2, 0, 1, 2, 0, 0, 2, 0, 0},
	    /* hit: L1 s0 [0 2d] */
	    {0, 8, 0, 2, 0, 0, 2, 0, 0},
	    /* L1 s0 [4 0], 2d written back; L2 s0 [4 0], s2 [2d] */
	    {4, 0, 0, 3, 1, 1, 3, 0, 0},
	    /* L1 s1 [1d]          L2 s1 [1] */
	    {1, 0, 1, 4, 1, 1, 4, 0, 0},
	    /* L1 s0 [8 4], 0 clean; L2 s0 [8 4], 0 evicted */
	    {8, 0, 0, 5, 2, 1, 5, 1, 0},
	    /* L1 s0 [6 8], 4 clean; L2 s2 [6 2d] */
	    {6, 0, 0, 6, 3, 1, 6, 1, 0},
	    /* L1 s0 [10 6]; L2 s2 [10 6], 2d goes to memory */
	    {10, 0, 0, 7, 4, 1, 7, 2, 1},
	    /* L1 s1 [3d 1d]       L2 s3 [3] */
	    {3, 0, 1, 8, 4, 1, 8, 2, 1},
	    /* L1 s1 [5d 3d], 1d into L2: s1 [5 1d] */
	    {5, 0, 1, 9, 5, 2, 9, 2, 1},
	    /* L1 s1 [9 5d], 3d into L2 s3 [3d]; L2 s1 [9 5], 1d out */
	    {9, 0, 0, 10, 6, 3, 10, 3, 2},
	    /* L1 s1 [13 9]; L2 s1 [13 9] evicts 5 clean; then 5d's
	     * write-back misses L2 and goes to memory */
	    {13, 0, 0, 11, 7, 4, 11, 4, 3},
	    /* L1 s0 [4 10], 6 clean; L2 hit: s0 [4 8] */
	    {4, 0, 0, 12, 8, 4, 11, 4, 3},
	    /* hit, makes it dirty: L1 s0 [4d 10] */
	    {4, 8, 1, 12, 8, 4, 11, 4, 3},
	};
	const struct dbtp_cache_geom l1 = {256, 2, 64}, l2 = {512, 2, 64};
	dbtp_cache *c = new_cache(&l1, &l2);
	struct dbtp_cache_counts n = {0};
	uint32_t pos = 99;

	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		dbtp_cache_access(c, steps[i].line * 64 + steps[i].off, 8,
				  steps[i].store, &n);
		CHECK_EQ(n.accesses, i + 1);
		CHECK_EQ(n.l1_misses, steps[i].m1);
		CHECK_EQ(n.l1_evictions, steps[i].e1);
		CHECK_EQ(n.l1_writebacks, steps[i].w1);
		CHECK_EQ(n.l2_accesses, steps[i].m1);
		CHECK_EQ(n.l2_misses, steps[i].m2);
		CHECK_EQ(n.l2_evictions, steps[i].e2);
		CHECK_EQ(n.mem_writebacks, steps[i].wm);
		if (t_failed) {
			fprintf(stderr, "  at step %zu\n", i + 1);
			break;
		}
	}
	CHECK_EQ(n.ops, 14);
	CHECK_EQ(n.stores, 5);
	/* Final contents. */
	CHECK_EQ(dbtp_cache_probe(c, 1, 4 * 64, &pos), DBTP_CACHE_DIRTY);
	CHECK_EQ(pos, 0);
	CHECK_EQ(dbtp_cache_probe(c, 1, 10 * 64 + 63, &pos), DBTP_CACHE_CLEAN);
	CHECK_EQ(pos, 1);
	CHECK_EQ(dbtp_cache_probe(c, 1, 13 * 64, &pos), DBTP_CACHE_CLEAN);
	CHECK_EQ(pos, 0);
	CHECK_EQ(dbtp_cache_probe(c, 1, 9 * 64, &pos), DBTP_CACHE_CLEAN);
	CHECK_EQ(pos, 1);
	CHECK_EQ(dbtp_cache_probe(c, 1, 6 * 64, NULL), DBTP_CACHE_ABSENT);
	CHECK_EQ(dbtp_cache_probe(c, 2, 4 * 64, &pos), DBTP_CACHE_CLEAN);
	CHECK_EQ(pos, 0);
	CHECK_EQ(dbtp_cache_probe(c, 2, 8 * 64, &pos), DBTP_CACHE_CLEAN);
	CHECK_EQ(pos, 1);
	CHECK_EQ(dbtp_cache_probe(c, 2, 13 * 64, NULL), DBTP_CACHE_CLEAN);
	CHECK_EQ(dbtp_cache_probe(c, 2, 9 * 64, NULL), DBTP_CACHE_CLEAN);
	CHECK_EQ(dbtp_cache_probe(c, 2, 10 * 64, NULL), DBTP_CACHE_CLEAN);
	CHECK_EQ(dbtp_cache_probe(c, 2, 6 * 64, NULL), DBTP_CACHE_CLEAN);
	CHECK_EQ(dbtp_cache_probe(c, 2, 3 * 64, NULL), DBTP_CACHE_DIRTY);
	CHECK_EQ(dbtp_cache_probe(c, 2, 2 * 64, NULL), DBTP_CACHE_ABSENT);
	CHECK_EQ(dbtp_cache_probe(c, 2, 5 * 64, NULL), DBTP_CACHE_ABSENT);
	CHECK_EQ(dbtp_cache_probe(c, 3, 0, NULL), DBTP_CACHE_ABSENT);
	dbtp_cache_free(c);
}

/* Accesses that straddle lines count once per line. */
static void test_straddle(void)
{
	dbtp_cache *c = new_cache(&def_l1, &def_l2);
	struct dbtp_cache_counts n = {0};
	const struct dbtp_cache_geom l1 = {1024, 2, 16}, l2 = {4096, 4, 64};

	dbtp_cache_access(c, 60, 8, 0, &n); /* lines 0 and 1 */
	CHECK_EQ(n.ops, 1);
	CHECK_EQ(n.accesses, 2);
	CHECK_EQ(n.l1_misses, 2);
	dbtp_cache_access(c, 62, 4, 1, &n); /* both hit, both dirty */
	CHECK_EQ(n.ops, 2);
	CHECK_EQ(n.accesses, 4);
	CHECK_EQ(n.l1_misses, 2);
	CHECK_EQ(dbtp_cache_probe(c, 1, 0, NULL), DBTP_CACHE_DIRTY);
	CHECK_EQ(dbtp_cache_probe(c, 1, 64, NULL), DBTP_CACHE_DIRTY);
	dbtp_cache_access(c, 64, 64, 0, &n); /* aligned: one line */
	dbtp_cache_access(c, 32, 64, 0, &n); /* lines 0 and 1 again */
	dbtp_cache_access(c, 56, 8, 0, &n);  /* ends at the boundary */
	dbtp_cache_access(c, 100, 0, 0, &n); /* size 0 counts as 1 */
	CHECK_EQ(n.ops, 6);
	CHECK_EQ(n.accesses, 9);
	CHECK_EQ(n.l1_misses, 2);
	/* The top of the address space wraps to line 0. */
	dbtp_cache_access(c, UINT64_MAX - 3, 8, 0, &n);
	CHECK_EQ(n.accesses, 11);
	CHECK_EQ(n.l1_misses, 3);
	CHECK_EQ(dbtp_cache_probe(c, 1, UINT64_MAX, NULL), DBTP_CACHE_CLEAN);
	dbtp_cache_free(c);

	/* 16-byte L1 lines under 64-byte L2 lines: a 32-byte access is two
	 * L1 lines, both in one L2 line (one L2 miss, then a hit). */
	c = new_cache(&l1, &l2);
	memset(&n, 0, sizeof(n));
	dbtp_cache_access(c, 0x100, 32, 0, &n);
	CHECK_EQ(n.accesses, 2);
	CHECK_EQ(n.l1_misses, 2);
	CHECK_EQ(n.l2_accesses, 2);
	CHECK_EQ(n.l2_misses, 1);
	dbtp_cache_free(c);
}

static void test_geometry(void)
{
	struct dbtp_cache_geom g;
	struct dbtp_cache_opts o;
	dbtp_cache *c = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_cache_geom_parse("32K,8,64", &g, &err));
	CHECK_EQ(g.size, 32768);
	CHECK_EQ(g.ways, 8);
	CHECK_EQ(g.line, 64);
	CHECK_EQ(dbtp_cache_geom_sets(&g), 64);
	CHECK(!dbtp_cache_geom_parse("1M,16,64", &g, &err));
	CHECK_EQ(g.size, 1 << 20);
	CHECK_EQ(dbtp_cache_geom_sets(&g), 1024);
	CHECK(!dbtp_cache_geom_parse("32KiB,8,64B", &g, &err));
	CHECK_EQ(g.size, 32768);
	CHECK(!dbtp_cache_geom_parse("4k,64,64", &g, &err)); /* fully assoc. */
	CHECK_EQ(dbtp_cache_geom_sets(&g), 1);
	CHECK(!dbtp_cache_geom_parse("2G,16,1K", &g, &err));
	CHECK_EQ(g.size, (uint64_t)2 << 30);
	CHECK_EQ(g.line, 1024);

	CHECK(dbtp_cache_geom_parse("32K,0,64", &g, &err));
	CHECK_STR(err.msg, "'32K,0,64': ways must be at least 1");
	CHECK(dbtp_cache_geom_parse("32K,8,48", &g, &err));
	CHECK_STR(err.msg, "'32K,8,48': line size 48 is not a power of two");
	CHECK(dbtp_cache_geom_parse("96K,8,64", &g, &err));
	CHECK_STR(err.msg, "'96K,8,64': 192 sets (98304 bytes / (8 ways x "
			   "64 bytes)) is not a power of two");
	CHECK(dbtp_cache_geom_parse("1000,8,64", &g, &err));
	CHECK_STR(err.msg, "'1000,8,64': 1000 bytes is not a whole number of "
			   "sets of 8 ways x 64 bytes");
	CHECK(dbtp_cache_geom_parse("32K,8,2", &g, &err));
	CHECK_STR(err.msg, "'32K,8,2': line size 2 is outside 4..1048576");
	CHECK(dbtp_cache_geom_parse("32K,8", &g, &err));
	CHECK_STR(err.msg, "'32K,8': expected SIZE,WAYS,LINE (e.g. 32K,8,64)");
	CHECK(dbtp_cache_geom_parse("32K,8,64,1", &g, &err));
	CHECK(dbtp_cache_geom_parse("", &g, &err));
	CHECK(dbtp_cache_geom_parse("-32K,8,64", &g, &err));
	CHECK(dbtp_cache_geom_parse("32X,8,64", &g, &err));
	CHECK(dbtp_cache_geom_parse("99999999999999999999,8,64", &g, &err));
	CHECK(dbtp_cache_geom_parse("32K,99999999999,64", &g, &err));

	/* L2 lines shorter than L1's are refused. */
	{
		const struct dbtp_cache_geom a = {1024, 2, 64},
					     b = {4096, 4, 32};

		CHECK(dbtp_cache_new(&c, &a, &b, &err));
		CHECK(c == NULL);
		CHECK_EQ(err.code, EINVAL);
		CHECK_STR(err.msg, "the L2 line (32 bytes) is shorter than "
				   "the L1 line (64 bytes)");
	}
	dbtp_cache_default_opts(&o);
	CHECK_EQ(o.l1.size, DBTP_CACHE_L1_SIZE);
	CHECK_EQ(o.l2.ways, DBTP_CACHE_L2_WAYS);
	CHECK_EQ(o.interval, 100000000);
	o.l1.ways = 0;
	{
		dbtp_cachesim *s = NULL;

		CHECK(dbtp_cachesim_new(&s, &o, &err));
		CHECK_STR(err.msg, "L1: ways must be at least 1");
	}
}

/*
 * The synthetic trace (interval 10 instructions; A = 3 instructions,
 * B = 10):
 *   T0: A ld 0x1000, st 0x1008 | A ld 0x1040 | B ld 0x2000  -> 16: cut
 *       A ld 0x1000 (hit) | A ld 0x3000                     -> 22: cut
 *       B ld 0x3008 (hit), st 8 bytes at 0x303c (straddles) -> 32: cut
 *       A ld 0x4000                                         -> partial
 *   T1: B ld 0x1000 (its own, cold hierarchy)               -> 10: cut
 */
static void write_trace(const char *path)
{
	static const uint8_t sizes[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	static const uint8_t nops[10] = {0x90, 0x90, 0x90, 0x90, 0x90,
					 0x90, 0x90, 0x90, 0x90, 0x90};
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	uint32_t a, b;
	int bad = 0;

	bad |= dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_MEM, 4,
				&err);
	if (bad) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	bad |= dbtp_writer_block(w, 0x401000, 3, sizes, nops, 0, 0x401000, &a,
				 &err);
	bad |= dbtp_writer_block(w, 0x402000, 10, sizes, nops, 0, 0x402000, &b,
				 &err);
	bad |= dbtp_writer_exec(w, 0, a, &err);
	bad |= dbtp_writer_mem(w, 0, 0x1000, 3, 0, &err);
	bad |= dbtp_writer_mem(w, 0, 0x1008, 3, DBTP_ACCESS_STORE, &err);
	bad |= dbtp_writer_exec(w, 1, b, &err); /* interleaved */
	bad |= dbtp_writer_mem(w, 1, 0x1000, 3, 0, &err);
	bad |= dbtp_writer_exec(w, 0, a, &err);
	bad |= dbtp_writer_mem(w, 0, 0x1040, 3, 0, &err);
	bad |= dbtp_writer_exec(w, 0, b, &err);
	bad |= dbtp_writer_mem(w, 0, 0x2000, 3, 0, &err);
	bad |= dbtp_writer_exec(w, 0, a, &err);
	bad |= dbtp_writer_mem(w, 0, 0x1000, 3, 0, &err);
	bad |= dbtp_writer_exec(w, 0, a, &err);
	bad |= dbtp_writer_mem(w, 0, 0x3000, 3, 0, &err);
	bad |= dbtp_writer_exec(w, 0, b, &err);
	bad |= dbtp_writer_mem(w, 0, 0x3008, 3, 0, &err);
	bad |= dbtp_writer_mem(w, 0, 0x303c, 3, DBTP_ACCESS_STORE, &err);
	bad |= dbtp_writer_exec(w, 0, a, &err);
	bad |= dbtp_writer_mem(w, 0, 0x4000, 3, 0, &err);
	bad |= dbtp_writer_thread_exit(w, 1, &err);
	bad |= dbtp_writer_thread_exit(w, 0, &err);
	bad |= dbtp_writer_close(w, 0, &err);
	if (bad) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

static dbtp_cachesim *simulate(const char *path, int drop)
{
	struct dbtp_cache_opts o;
	struct dbtp_event ev;
	dbtp_cachesim *s = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	int r;

	dbtp_cache_default_opts(&o);
	o.interval = 10;
	o.drop_partial = drop;
	CHECK(!dbtp_cachesim_new(&s, &o, &err));
	CHECK(!dbtp_trace_open(&t, path, &err));
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0)
		CHECK(!dbtp_cachesim_event(s, &ev, &err));
	CHECK_EQ(r, 0);
	CHECK(!dbtp_cachesim_finish(s, &err));
	CHECK(dbtp_cachesim_block(s, 0, 1, &err)); /* after the end */
	dbtp_trace_close(t);
	return s;
}

/* Intervals per thread from the bbv generator, for comparison. */
static void bbv_intervals(const char *path, int drop, uint64_t *n0,
			  uint64_t *n1)
{
	struct dbtp_bbv_opts o = {
	    .interval = 10, .split = 1, .drop_partial = drop};
	struct dbtp_event ev;
	dbtp_bbvgen *g = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_trace_open(&t, path, &err));
	CHECK(!dbtp_bbvgen_new(&g, &o, DBTP_ARCH_X86_64, &err));
	while (dbtp_trace_next(t, &ev, &err) > 0)
		if (ev.type == DBTP_EV_BLOCK)
			CHECK(!dbtp_bbvgen_block(g, ev.thread, ev.block, &err));
	CHECK(!dbtp_bbvgen_finish(g, t, &err));
	*n0 = dbtp_bbvgen_nintervals(g, 0);
	*n1 = dbtp_bbvgen_nintervals(g, 1);
	dbtp_bbvgen_free(g);
	dbtp_trace_close(t);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void test_intervals(const char *dir)
{
	char path[512], sp[512], wt[512], msg[1200];
	struct dbtp_cache_pick *picks = NULL;
	struct dbtp_cache_estimate est;
	const struct dbtp_cache_counts *c;
	struct dbtp_cache_counts all;
	struct dbtp_cache_metrics m;
	dbtp_cachesim *s;
	dbtp_err err = {0};
	uint64_t b0, b1;
	size_t n = 0;
	static const uint64_t insns[] = {16, 6, 10, 3}, blocks[] = {3, 2, 1, 1},
			      ops[] = {4, 2, 2, 1}, acc[] = {4, 2, 3, 1},
			      miss[] = {3, 1, 1, 1};

	snprintf(path, sizeof(path), "%s/syn.trace", dir);
	snprintf(sp, sizeof(sp), "%s/syn.simpoints", dir);
	snprintf(wt, sizeof(wt), "%s/syn.weights", dir);
	write_trace(path);

	s = simulate(path, 0);
	CHECK_EQ(dbtp_cachesim_nthreads(s), 2);
	CHECK_EQ(dbtp_cachesim_nintervals(s, 0), 4);
	CHECK_EQ(dbtp_cachesim_nintervals(s, 1), 1);
	bbv_intervals(path, 0, &b0, &b1);
	CHECK_EQ(b0, 4);
	CHECK_EQ(b1, 1);
	for (uint64_t k = 0; k < 4; k++) {
		c = dbtp_cachesim_interval(s, 0, k);
		CHECK(c != NULL);
		if (!c)
			continue;
		CHECK_EQ(c->insns, insns[k]);
		CHECK_EQ(c->blocks, blocks[k]);
		CHECK_EQ(c->ops, ops[k]);
		CHECK_EQ(c->accesses, acc[k]);
		CHECK_EQ(c->l1_misses, miss[k]);
		CHECK_EQ(c->l2_misses, miss[k]);
		dbtp_cache_metrics(c, &m);
		CHECK_NEAR(m.l1_miss_rate, (double)miss[k] / (double)acc[k]);
		CHECK_NEAR(m.l1_mpki,
			   1000.0 * (double)miss[k] / (double)insns[k]);
		CHECK_NEAR(m.l2_miss_rate, 1.0);
	}
	CHECK(dbtp_cachesim_interval(s, 0, 4) == NULL);
	c = dbtp_cachesim_interval(s, 0, 0);
	dbtp_cache_metrics(c, &m);
	CHECK_NEAR(m.l1_miss_rate, 0.75);
	CHECK_NEAR(m.l1_mpki, 187.5);
	c = dbtp_cachesim_interval(s, 0, 2);
	CHECK_EQ(c->stores, 1);
	c = dbtp_cachesim_thread_total(s, 0);
	CHECK_EQ(c->insns, 35);
	CHECK_EQ(c->blocks, 7);
	CHECK_EQ(c->ops, 9);
	CHECK_EQ(c->stores, 2);
	CHECK_EQ(c->accesses, 10);
	CHECK_EQ(c->l1_misses, 6);
	c = dbtp_cachesim_interval(s, 1, 0);
	CHECK_EQ(c->insns, 10);
	CHECK_EQ(c->l1_misses, 1); /* private hierarchies: T0 had 0x1000 */
	dbtp_cachesim_total(s, &all);
	CHECK_EQ(all.insns, 45);
	CHECK_EQ(all.accesses, 11);
	CHECK_EQ(all.l1_misses, 7);
	CHECK_EQ(all.l2_misses, 7);
	dbtp_cache_metrics(&all, &m);
	CHECK_NEAR(m.l1_mpki, 7000.0 / 45);
	CHECK_NEAR(m.l2_mpki, 7000.0 / 45);
	CHECK_NEAR(m.l1_miss_rate, 7.0 / 11);
	CHECK_NEAR(m.l2_miss_rate, 1.0);

	/* SimPoint estimate: 0.5 x interval 0 + 0.5 x interval 2. */
	write_text(sp, "# chosen points\n0 0\n\n2 1\r\n");
	write_text(wt, "0.5 0\n  0.5\t1  \n");
	CHECK(!dbtp_cache_read_picks(sp, wt, &picks, &n, &err));
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(picks[0].interval, 0);
		CHECK_EQ(picks[0].line, 2);
		CHECK_EQ(picks[1].interval, 2);
		CHECK_EQ(picks[1].cluster, 1);
		CHECK_NEAR(picks[1].weight, 0.5);
		CHECK(!dbtp_cache_estimate(s, 0, picks, n, sp, &est, &err));
		CHECK_NEAR(est.weight_sum, 1);
		CHECK_NEAR(est.est.l1_miss_rate, 0.5 * 0.75 + 0.5 / 3);
		CHECK_NEAR(est.est.l1_mpki, 0.5 * 187.5 + 0.5 * 100);
		CHECK_NEAR(est.est.l2_miss_rate, 1);
		CHECK_NEAR(est.full.l1_miss_rate, 0.6);
		CHECK_NEAR(est.full.l1_mpki, 6000.0 / 35);
		CHECK_NEAR(est.rel_err.l1_miss_rate,
			   (0.5 * 0.75 + 0.5 / 3) / 0.6 - 1);
		CHECK_NEAR(est.rel_err.l1_mpki, 143.75 / (6000.0 / 35) - 1);
		CHECK_NEAR(est.rel_err.l2_miss_rate, 0);
		/* Thread 1 has one interval only. */
		CHECK(dbtp_cache_estimate(s, 1, picks, n, "sp", &est, &err));
		CHECK_STR(err.msg, "sp: line 4: interval 2 is past the last "
				   "interval of thread 1 (1 intervals)");
	}
	free(picks);
	dbtp_cachesim_free(s);

	/* Dropping the partial interval: one fewer for thread 0, as bbv;
	 * the total still counts it. */
	s = simulate(path, 1);
	bbv_intervals(path, 1, &b0, &b1);
	CHECK_EQ(dbtp_cachesim_nintervals(s, 0), 3);
	CHECK_EQ(b0, 3);
	CHECK_EQ(dbtp_cachesim_nintervals(s, 1), 1);
	CHECK_EQ(b1, 1);
	CHECK_EQ(dbtp_cachesim_thread_total(s, 0)->insns, 35);
	CHECK_EQ(dbtp_cachesim_thread_total(s, 0)->l1_misses, 6);

	/* Malformed SimPoint files: one-line errors naming file and line. */
	{
		static const struct {
			const char *sp, *wt, *msg;
		} bad[] = {
		    {"0 0\n1\n", "1 0\n",
		     "S: line 2: expected \"INTERVAL "
		     "CLUSTER\""},
		    {"0 0 0\n", "1 0\n",
		     "S: line 1: expected \"INTERVAL "
		     "CLUSTER\""},
		    {"x 0\n", "1 0\n",
		     "S: line 1: interval 'x' is not a "
		     "whole number"},
		    {"-1 0\n", "1 0\n",
		     "S: line 1: interval '-1' is not a "
		     "whole number"},
		    {"0 4294967296\n", "1 0\n",
		     "S: line 1: cluster '4294967296' is not a whole "
		     "number"},
		    {"0 0\n1 0\n", "1 0\n",
		     "S: line 2: cluster 0 given "
		     "twice (first on line 1)"},
		    {"0 0\n", "1.5 0\n",
		     "W: line 1: weight '1.5' is not "
		     "a number in [0, 1]"},
		    {"0 0\n", "nan 0\n",
		     "W: line 1: weight 'nan' is not "
		     "a number in [0, 1]"},
		    {"0 0\n", "0.5x 0\n",
		     "W: line 1: weight '0.5x' is "
		     "not a number in [0, 1]"},
		    {"0 0\n", "0.5 0\n0.5 0\n",
		     "W: line 2: cluster 0 "
		     "given twice (first on "
		     "line 1)"},
		    {"0 0\n1 1\n", "1 0\n",
		     "S: line 2: cluster 1 has no "
		     "weight in W"},
		    {"0 0\n", "0.5 0\n0.5 7\n",
		     "W: line 2: cluster 7 is "
		     "not in S"},
		    {"\n# nothing\n", "1 0\n", "S: no simulation points"},
		    {"0 0\n", "", "W: no weights"},
		    {"0 0\n", "1 a\n",
		     "W: line 1: cluster 'a' is not a "
		     "whole number"},
		};
		char sfile[600], wfile[600];

		snprintf(sfile, sizeof(sfile), "%s/S", dir);
		snprintf(wfile, sizeof(wfile), "%s/W", dir);
		if (chdir(dir))
			CHECK(0);
		for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			write_text(sfile, bad[i].sp);
			write_text(wfile, bad[i].wt);
			picks = NULL;
			CHECK(
			    dbtp_cache_read_picks("S", "W", &picks, &n, &err));
			CHECK(picks == NULL);
			CHECK_STR(err.msg, bad[i].msg);
		}
		CHECK(dbtp_cache_read_picks("S", "no-such-file", &picks, &n,
					    &err));
		CHECK_STR(err.msg, "no-such-file: No such file or directory");
		/* Out of range. */
		write_text(sfile, "3 0\n");
		write_text(wfile, "1 0\n");
		CHECK(!dbtp_cache_read_picks("S", "W", &picks, &n, &err));
		CHECK(dbtp_cache_estimate(s, 0, picks, n, "S", &est, &err));
		snprintf(msg, sizeof(msg),
			 "S: line 1: interval 3 is past the "
			 "last interval of thread 0 (3 "
			 "intervals)");
		CHECK_STR(err.msg, msg);
		free(picks);
	}
	dbtp_cachesim_free(s);
	unlink(path);
	unlink(sp);
	unlink(wt);
}

/*
 * dbtp_cache_tally() against dbtp_cache_access() on a twin cache: 200,000
 * random accesses (sizes 1 to 64, a third stores, over a working set
 * that both hits the L1's most recent line and misses the L2) give the
 * same misses, the unaligned ones counted as the rule says, and the same
 * state after (the twins' write-backs and evictions when a walk over 4
 * MiB then flushes them).
 */
static void test_tally(void)
{
	static const uint32_t sizes[] = {1, 2, 4, 8, 16, 3, 64, 8, 4, 8};
	dbtp_cache *a = new_cache(&def_l1, &def_l2);
	dbtp_cache *b = new_cache(&def_l1, &def_l2);
	struct dbtp_cache_counts n = {0}, fa = {0}, fb = {0};
	struct dbtp_cache_tally t = {0};
	uint64_t x = 88172645463325252ull, addr = 0x10000, unal = 0;

	for (int i = 0; i < 200000; i++) {
		uint32_t size;
		int store;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = sizes[x % 10];
		store = (x >> 8) % 3 == 0;
		/* mostly near the last access, now and then anywhere in 8 MiB
		 */
		if ((x >> 16) % 8 == 0)
			addr = 0x10000 + (x >> 24) % (8u << 20);
		else
			addr += (x >> 24) % 24;
		unal += (size == 2 || size == 4 || size == 8) && addr % size;
		dbtp_cache_tally(a, addr, size, store, &t);
		dbtp_cache_access(b, addr, size, store, &n);
	}
	CHECK_EQ(t.ops, 200000);
	CHECK_EQ(t.l1, n.l1_misses);
	CHECK_EQ(t.l2, n.l2_misses);
	CHECK_EQ(t.unaligned, unal);
	CHECK(n.l1_misses > 1000 && n.l2_misses > 1000);
	CHECK(t.ops - n.l1_misses > 100000); /* the fast path taken */
	for (uint64_t w = 0; w < (4u << 20); w += 64) {
		dbtp_cache_access(a, (64u << 20) + w, 8, 0, &fa);
		dbtp_cache_access(b, (64u << 20) + w, 8, 0, &fb);
	}
	CHECK_EQ(fa.l1_writebacks, fb.l1_writebacks);
	CHECK_EQ(fa.mem_writebacks, fb.mem_writebacks);
	CHECK_EQ(fa.l2_evictions, fb.l2_evictions);
	CHECK(fa.mem_writebacks > 1000);
	dbtp_cache_free(a);
	dbtp_cache_free(b);
}

int main(void)
{
	char dir[] = "/tmp/dbtp-test-cache.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_sequential();
	test_fits();
	test_thrash();
	test_by_hand();
	test_straddle();
	test_tally();
	test_geometry();
	test_intervals(dir);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			CHECK(0);
	}
	return T_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test-gentest.c - dbtprof gentest's model and x86-64 rewriter: the least
 * squares fit; thread groups, their sizes alpha*T + beta and per-group
 * hotness theta*m + delta on synthetic profiles with known values (a main
 * thread, T workers, one I/O thread, at T = 1, 2 and 4); even and uneven
 * distributions; creation and join points, a*T + b, and the generated
 * program's at its --threads; rejected inputs; and a table of tricky
 * instructions (memory forms, rep strings, push/pop, call/ret, div, cpuid,
 * syscall, SSE, AVX, privileged ones) with their expected outcome, emitted
 * as a program that is compiled (warnings are errors) and run to show each
 * one executes safely.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbtp/gentest.h"
#include "dbtp/trace.h"
#include "t.h"

#define CHECK_NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-9)

static char dir[] = "/tmp/dbtp-gentest.XXXXXX";

static void test_fit(void)
{
	double x[] = {1, 2, 4}, y[] = {3, 5, 9}, a, b;
	double x1[] = {2, 2}, y1[] = {10, 14};

	dbtp_gt_fit(x, y, 3, 0, &a, &b);
	CHECK_EQ(a, 2);
	CHECK_EQ(b, 1);
	CHECK(a == 2 && b == 1);
	/* all x equal: through 0 gives the mean slope, else the mean */
	dbtp_gt_fit(x1, y1, 2, 1, &a, &b);
	CHECK(a == 6 && b == 0);
	dbtp_gt_fit(x1, y1, 2, 0, &a, &b);
	CHECK(a == 0 && b == 12);
	/* least squares, not interpolation: (0,0) (1,1) (2,1) */
	{
		double xs[] = {0, 1, 2}, ys[] = {0, 1, 1};

		dbtp_gt_fit(xs, ys, 3, 0, &a, &b);
		CHECK_NEAR(a, 0.5);
		CHECK_NEAR(b, 1.0 / 6);
	}
}

/* A one-instruction-ish block at @va: "dec ecx" padded with nops to be
 * unique per address. */
static uint32_t add_block(dbtp_writer *w, uint64_t va)
{
	static const uint8_t code[] = {0xff, 0xc9, 0x90};
	static const uint8_t sizes[] = {2, 1};
	dbtp_err err = {0};
	uint32_t id = 0;

	CHECK(!dbtp_writer_block(w, va, 2, sizes, code, 0, va, &id, &err));
	return id;
}

static void exec_n(dbtp_writer *w, uint32_t th, uint32_t b, uint64_t n)
{
	dbtp_err err = {0};

	for (uint64_t i = 0; i < n; i++)
		CHECK(!dbtp_writer_exec(w, th, b, &err));
}

static void clone_ret(dbtp_writer *w, uint32_t parent, uint32_t child)
{
	uint64_t args[6] = {0x50f00, 0, 0, 0, 0, 0};
	dbtp_err err = {0};

	CHECK(!dbtp_writer_syscall(w, parent, 56, args, &err));
	CHECK(!dbtp_writer_sysret(w, parent, 56, 1000 + child, &err));
}

/*
 * A program with thread parameter T: main runs A 100 times, creates T
 * workers after 25 and the I/O thread after 50; the workers share
 * 50 * T + 20 executions of W evenly (so theta = 50, delta = 20); the I/O
 * thread runs IO 30 times.
 */
static void write_profile(const char *path, unsigned T)
{
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	uint32_t a, wk, io;
	uint64_t total = 50 * T + 20;

	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	a = add_block(w, 0x401000);
	wk = add_block(w, 0x402000);
	io = add_block(w, 0x403000);
	exec_n(w, 0, a, 25);
	for (unsigned i = 1; i <= T; i++)
		clone_ret(w, 0, i);
	exec_n(w, 0, a, 25);
	clone_ret(w, 0, T + 1);
	for (unsigned i = 1; i <= T; i++)
		exec_n(w, i, wk, total * i / T - total * (i - 1) / T);
	exec_n(w, T + 1, io, 30);
	for (unsigned i = 1; i <= T + 1; i++)
		CHECK(!dbtp_writer_thread_exit(w, i, &err));
	exec_n(w, 0, a, 50);
	CHECK(!dbtp_writer_close(w, 0, &err));
}

/* Profile @path at thread parameter @T read into @m. */
static void add_profile(dbtp_gt_model *m, const char *path, double T)
{
	dbtp_trace *t = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_trace_open(&t, path, &err));
	CHECK(!dbtp_gt_model_add(m, t, path, T, &err));
	dbtp_trace_close(t);
}

static dbtp_gt_model *model_of(const char *const *paths, const double *T, int n)
{
	dbtp_gt_model *m = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_gt_model_new(&m, &err));
	for (int i = 0; i < n; i++)
		add_profile(m, paths[i], T[i]);
	CHECK(!dbtp_gt_model_finish(m, &err));
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	return m;
}

/* The model of three profiles that @write makes at T = 1, 2 and 4, in
 * DIR/PREFIX1.trace and so on. */
static dbtp_gt_model *model124(const char *prefix,
			       void (*write)(const char *, unsigned))
{
	char p[3][64];
	const char *paths[3] = {p[0], p[1], p[2]};
	double T[3] = {1, 2, 4};

	for (int i = 0; i < 3; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/%s%g.trace", dir, prefix,
			 T[i]);
		write(p[i], (unsigned)T[i]);
	}
	return model_of(paths, T, 3);
}

static const struct dbtp_gt_group *group_at(const dbtp_gt_model *m,
					    uint64_t vaddr)
{
	for (uint32_t g = 0; g < dbtp_gt_model_ngroups(m); g++) {
		const struct dbtp_gt_group *gr = dbtp_gt_model_group(m, g);

		if (gr->nhot == 1 &&
		    dbtp_gt_model_block(m, gr->hot[0].block)->vaddr == vaddr)
			return gr;
	}
	return NULL;
}

/* The model of write_profile() at T = 1, 2 and 4 (with at most
 * dbtp_gt_dense_max counters in arrays, the rest in maps). */
static void test_groups_with(void)
{
	const struct dbtp_gt_group *gm, *gw, *gi;
	dbtp_gt_model *m = model124("t", write_profile);
	uint64_t sum = 0;

	CHECK_EQ(dbtp_gt_model_nprofiles(m), 3);
	CHECK_EQ(dbtp_gt_model_nblocks(m), 3);
	CHECK_EQ(dbtp_gt_model_ngroups(m), 3);
	gm = group_at(m, 0x401000);
	gw = group_at(m, 0x402000);
	gi = group_at(m, 0x403000);
	CHECK(gm && gw && gi);
	if (!gm || !gw || !gi)
		goto out;
	CHECK(gm == dbtp_gt_model_group(m, 0));
	/* sizes: main 0*T + 1, workers 1*T + 0, I/O 0*T + 1 */
	CHECK(gm->alpha == 0 && gm->beta == 1);
	CHECK(gw->alpha == 1 && gw->beta == 0);
	CHECK(gi->alpha == 0 && gi->beta == 1);
	CHECK_EQ(gw->sizes[0], 1);
	CHECK_EQ(gw->sizes[1], 2);
	CHECK_EQ(gw->sizes[2], 4);
	CHECK_EQ(dbtp_gt_size(gw, 8), 8);
	CHECK_EQ(dbtp_gt_size(gm, 8), 1);
	/* hotness: W = 50 m + 20, A = 100 (one thread), IO = 30 */
	CHECK(gw->hot[0].theta == 50 && gw->hot[0].delta == 20);
	CHECK(gm->hot[0].theta == 100 && gm->hot[0].delta == 0);
	CHECK(gi->hot[0].theta == 30 && gi->hot[0].delta == 0);
	/* 8 workers: 420 split evenly 52 or 53, adding up exactly */
	CHECK(gw->even);
	for (uint64_t i = 0; i < 8; i++) {
		uint64_t c = dbtp_gt_count(gw, &gw->hot[0], 8, i);

		CHECK(c == 52 || c == 53);
		sum += c;
	}
	CHECK_EQ(sum, 420);
	/* activity: workers created by main at 25/100, I/O at 50/100 */
	CHECK_EQ(gw->parent, 0);
	CHECK_EQ(gi->parent, 0);
	CHECK_EQ(gm->parent, -1);
	CHECK_NEAR(gw->create_at, 0.25);
	CHECK_NEAR(gi->create_at, 0.5);
	CHECK(gw->join_at >= gw->create_at && gw->join_at <= 1);
	CHECK(gi->join_at >= gi->create_at && gi->join_at <= 1);
out:
	dbtp_gt_model_free(m);
}

/* Counted in arrays, in maps alone, and in both. */
static void test_groups(void)
{
	size_t d = dbtp_gt_dense_max;
	static const size_t caps[] = {0, 1, 4};

	test_groups_with();
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		dbtp_gt_dense_max = caps[i];
		test_groups_with();
	}
	dbtp_gt_dense_max = d;
}

/* One profile, two workers running W @c0 and @c1 times. */
static dbtp_gt_model *two_workers(uint64_t c0, uint64_t c1)
{
	char p[64];
	const char *paths[1] = {p};
	double T[1] = {2};
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	uint32_t a, wk;

	snprintf(p, sizeof(p), "%s/w.trace", dir);
	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	a = add_block(w, 0x401000);
	wk = add_block(w, 0x402000);
	exec_n(w, 0, a, 10);
	clone_ret(w, 0, 1);
	clone_ret(w, 0, 2);
	exec_n(w, 1, wk, c0);
	exec_n(w, 2, wk, c1);
	exec_n(w, 0, a, 10);
	CHECK(!dbtp_writer_close(w, 0, &err));
	return model_of(paths, T, 1);
}

static void test_distribution(void)
{
	dbtp_gt_model *m = two_workers(70, 30);
	const struct dbtp_gt_group *g = group_at(m, 0x402000);

	CHECK(g != NULL);
	if (g) {
		CHECK(!g->even);
		CHECK_EQ(g->nshares, 2);
		CHECK_NEAR(g->shares[0], 0.7);
		CHECK_NEAR(g->shares[1], 0.3);
		/* one profile: theta = 100 / 2, delta = 0 */
		CHECK(g->hot[0].theta == 50 && g->hot[0].delta == 0);
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 2, 0), 70);
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 2, 1), 30);
		/* four threads: 50 x 4 = 200 along the same curve, 35% 35%
		 * 15% 15% */
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 4, 0), 70);
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 4, 1), 70);
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 4, 2), 30);
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 4, 3), 30);
		CHECK_NEAR(g->create_at, 0.5);
	}
	dbtp_gt_model_free(m);
	/* within 10% of 1/m: even */
	m = two_workers(52, 48);
	g = group_at(m, 0x402000);
	CHECK(g && g->even);
	if (g) {
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 2, 0), 50);
		CHECK_EQ(dbtp_gt_count(g, &g->hot[0], 2, 1), 50);
	}
	dbtp_gt_model_free(m);
}

/* Thread @th's futex call @op for value @val, returned. */
static void futex(dbtp_writer *w, uint32_t th, uint64_t op, uint64_t val)
{
	uint64_t args[6] = {0x4c0000, op, val, 0, 0, 0};
	dbtp_err err = {0};

	CHECK(!dbtp_writer_syscall(w, th, 202, args, &err));
	CHECK(!dbtp_writer_sysret(w, th, 202, 0, &err));
}

/* A blocks-mode x86-64 trace at @path with main's block A (0x401000) in
 * *@a and the workers' W (0x402000) in *@wk, a chunk cut every @chunk
 * events (0: the default). */
static dbtp_writer *open_chunked(const char *path, uint32_t *a, uint32_t *wk,
				 uint32_t chunk)
{
	dbtp_writer *w = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS,
				chunk, &err));
	*a = add_block(w, 0x401000);
	*wk = add_block(w, 0x402000);
	return w;
}

static dbtp_writer *open_main_worker(const char *path, uint32_t *a,
				     uint32_t *wk)
{
	return open_chunked(path, a, wk, 0);
}

/* Main runs A 10 times, then T times: creates a worker (which runs W 20
 * times and exits), runs A twice, wakes a futex with the worker's tid for
 * its value (not a join), runs A 3 times, waits for the worker's tid as
 * pthread_join does (FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME) and runs A
 * 5 times.  The trace has each worker's exit before main's events, all in
 * main's one chunk. */
static void write_serial(const char *path, unsigned T)
{
	dbtp_err err = {0};
	uint32_t a, wk;
	dbtp_writer *w = open_main_worker(path, &a, &wk);

	exec_n(w, 0, a, 10);
	for (unsigned i = 1; i <= T; i++) {
		clone_ret(w, 0, i);
		exec_n(w, i, wk, 20);
		CHECK(!dbtp_writer_thread_exit(w, i, &err));
		exec_n(w, 0, a, 2);
		futex(w, 0, 1, 1000 + i);
		exec_n(w, 0, a, 3);
		futex(w, 0, 0x109, 1000 + i);
		exec_n(w, 0, a, 5);
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
}

/*
 * write_serial()'s workers, but each odd one (not the last) had ended
 * when main joined it: no wait, and its exit comes in the trace only
 * after main created the next one and ran A 3 times (as QEMU's wake of
 * the parent can come before the plugin hears of the end).
 */
static void write_serial_late(const char *path, unsigned T)
{
	dbtp_err err = {0};
	uint32_t a, wk, late = 0;
	/* a chunk an event: the trace in the order written */
	dbtp_writer *w = open_chunked(path, &a, &wk, 1);

	exec_n(w, 0, a, 10);
	for (unsigned i = 1; i <= T; i++) {
		clone_ret(w, 0, i);
		if (late) {
			exec_n(w, 0, a, 3);
			CHECK(!dbtp_writer_thread_exit(w, late, &err));
		}
		late = 0;
		exec_n(w, i, wk, 20);
		if (i % 2 && i < T) {
			exec_n(w, 0, a, 10);
			late = i;
			continue;
		}
		CHECK(!dbtp_writer_thread_exit(w, i, &err));
		exec_n(w, 0, a, 5);
		futex(w, 0, 0x109, 1000 + i);
		exec_n(w, 0, a, 5);
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
}

/*
 * T workers, none waited for; the first @alone of them end (in the trace
 * too: a chunk an event) before main creates the next, the others after
 * main created them all.
 */
static void write_unwaited(const char *path, unsigned T, unsigned alone)
{
	dbtp_err err = {0};
	uint32_t a, wk;
	dbtp_writer *w = open_chunked(path, &a, &wk, 1);

	exec_n(w, 0, a, 10);
	for (unsigned i = 1; i <= T; i++) {
		clone_ret(w, 0, i);
		exec_n(w, i, wk, 20);
		if (i <= alone)
			CHECK(!dbtp_writer_thread_exit(w, i, &err));
		exec_n(w, 0, a, 2);
	}
	exec_n(w, 0, a, 10);
	for (unsigned i = alone + 1; i <= T; i++)
		CHECK(!dbtp_writer_thread_exit(w, i, &err));
	exec_n(w, 0, a, 10);
	CHECK(!dbtp_writer_close(w, 0, &err));
}

/* write_serial()'s workers, each ended when main joined it, its end
 * before the next creation */
static void write_serial_nowait(const char *path, unsigned T)
{
	write_unwaited(path, T, T);
}

/* workers at once, the first of which happened to end before main made
 * the second */
static void write_first_alone(const char *path, unsigned T)
{
	write_unwaited(path, T, 1);
}

/* workers at once, all ending after main made them all */
static void write_burst_late(const char *path, unsigned T)
{
	write_unwaited(path, T, 0);
}

/*
 * Workers one after another: serial, from the first creation (main's
 * 10th block of 10 + 10 T: 1/2, 1/3, 1/5 at T = 1, 2, 4) to the last join
 * (its wait's return after its 10 T + 5th: 3/4, 5/6, 9/10), fitted in T.
 * Least squares over x = 1, 2, 4 (mean 7/3, sum of (x - 7/3)^2 = 42/9):
 * the creation's slope is the sum of (x - 7/3) y, -4/9, over 42/9 =
 * -2/21, its intercept the mean y, 31/90, less -2/21 * 7/3: 17/30; the
 * join's slope (2/9) / (42/9) = 1/21, its intercept 149/180 - 1/9 =
 * 43/60.  At T = 8 the creation, 17/30 - 16/21 < 0, is 0 and the join,
 * 43/60 + 8/21 > 1, is 1.  write_profile()'s workers run at once.
 */
static void test_serial(void)
{
	dbtp_gt_model *m = model124("s", write_serial);
	const struct dbtp_gt_group *g = group_at(m, 0x402000);
	double c, j;

	CHECK(g != NULL);
	if (g) {
		CHECK(g->alpha == 1 && g->beta == 0);
		CHECK(g->serial);
		CHECK_NEAR(g->create_t, -2.0 / 21);
		CHECK_NEAR(g->create_at, 17.0 / 30);
		CHECK_NEAR(g->join_t, 1.0 / 21);
		CHECK_NEAR(g->join_at, 43.0 / 60);
		dbtp_gt_group_points(g, 8, &c, &j);
		CHECK(c == 0 && j == 1);
		CHECK(!group_at(m, 0x401000)->serial);
	}
	dbtp_gt_model_free(m);
	m = model124("w", write_profile);
	g = group_at(m, 0x402000);
	CHECK(g && !g->serial);
	dbtp_gt_model_free(m);
	/* joins without a wait, shown late: still one after another */
	m = model124("sl", write_serial_late);
	g = group_at(m, 0x402000);
	CHECK(g && g->serial && g->alpha == 1 && g->beta == 0);
	dbtp_gt_model_free(m);
	/* and with no waits at all, their ends seen in order */
	m = model124("sn", write_serial_nowait);
	g = group_at(m, 0x402000);
	CHECK(g && g->serial && g->alpha == 1 && g->beta == 0);
	dbtp_gt_model_free(m);
	/* ends seen late pass only where some child was waited for in
	 * order: workers at once, the first of which happened to end
	 * before the second began, are not one after another */
	m = model124("fa", write_first_alone);
	g = group_at(m, 0x402000);
	CHECK(g && !g->serial && g->alpha == 1 && g->beta == 0);
	dbtp_gt_model_free(m);
	/* but workers of a burst, none waited for, are not */
	m = model124("bl", write_burst_late);
	g = group_at(m, 0x402000);
	CHECK(g && !g->serial && g->alpha == 1 && g->beta == 0);
	dbtp_gt_model_free(m);
}

/*
 * Points that move with T: main runs A 20 times, creates its T workers
 * (W 10 times each) after 2 + 2 @at of them and waits for each, as
 * pthread_join does, after 18 - @at: at 0.1 + 0.1 @at and 0.9 - 0.05 @at
 * of its run.  write_points() has @at = T.
 */
static void write_points_at(const char *path, unsigned T, unsigned at)
{
	dbtp_err err = {0};
	uint32_t a, wk;
	dbtp_writer *w = open_main_worker(path, &a, &wk);

	exec_n(w, 0, a, 2 + 2 * at);
	for (unsigned i = 1; i <= T; i++)
		clone_ret(w, 0, i);
	for (unsigned i = 1; i <= T; i++) {
		exec_n(w, i, wk, 10);
		CHECK(!dbtp_writer_thread_exit(w, i, &err));
	}
	exec_n(w, 0, a, 16 - 3 * at);
	for (unsigned i = 1; i <= T; i++)
		futex(w, 0, 0x109, 1000 + i);
	exec_n(w, 0, a, 2 + at);
	CHECK(!dbtp_writer_close(w, 0, &err));
}

static void write_points(const char *path, unsigned T)
{
	write_points_at(path, T, T);
}

/*
 * Creation and join points fitted in T.  At T = 1, 2, 4 the workers are
 * created at 4/20, 6/20, 10/20 and joined at 17/20, 16/20, 14/20 of
 * main's run: on the lines 0.1 + 0.1 T and 0.9 - 0.05 T exactly (the mean
 * over all workers, 2.8 / 7 = 0.4 at any T, is what they were before).
 * At T = 3 that is 0.4 and 0.75; at T = 8, 0.9 and 0.5, the join raised
 * to the creation; at T = 10 the creation, 1.1, is 1 and the join with
 * it.  One profile, or two at one T: slopes 0, the mean of the profiles'
 * means.
 */
static void test_points(void)
{
	dbtp_gt_model *m = model124("p", write_points);
	const struct dbtp_gt_group *g = group_at(m, 0x402000);
	struct dbtp_gt_group h = {0};
	char p[2][64];
	const char *paths[2] = {p[0], p[1]};
	double T[2] = {2, 2}, c, j;

	CHECK(g != NULL);
	if (g) {
		CHECK(g->alpha == 1 && g->beta == 0);
		CHECK(!g->serial);
		CHECK_EQ(g->parent, 0);
		CHECK_NEAR(g->create_t, 0.1);
		CHECK_NEAR(g->create_at, 0.1);
		CHECK_NEAR(g->join_t, -0.05);
		CHECK_NEAR(g->join_at, 0.9);
		dbtp_gt_group_points(g, 3, &c, &j);
		CHECK_NEAR(c, 0.4);
		CHECK_NEAR(j, 0.75);
		dbtp_gt_group_points(g, 8, &c, &j);
		CHECK_NEAR(c, 0.9);
		CHECK(j == c);
		dbtp_gt_group_points(g, 10, &c, &j);
		CHECK(c == 1 && j == 1);
	}
	/* the first thread's group: from its start to its end */
	g = dbtp_gt_model_group(m, 0);
	CHECK(g->create_at == 0 && g->create_t == 0);
	CHECK(g->join_at == 1 && g->join_t == 0);
	dbtp_gt_model_free(m);
	/* below 0: 0 (creation 0.5 - 0.1 T, join 0.2 + 0.1 T) */
	h.create_at = 0.5;
	h.create_t = -0.1;
	h.join_at = 0.2;
	h.join_t = 0.1;
	dbtp_gt_group_points(&h, 6, &c, &j);
	CHECK(c == 0);
	CHECK_NEAR(j, 0.8);
	/* one profile at T = 2: 6/20 and 16/20 */
	snprintf(p[0], sizeof(p[0]), "%s/p2a.trace", dir);
	write_points_at(p[0], 2, 2);
	m = model_of(paths, T, 1);
	g = group_at(m, 0x402000);
	CHECK(g != NULL);
	if (g) {
		CHECK(g->create_t == 0 && g->join_t == 0);
		CHECK_NEAR(g->create_at, 0.3);
		CHECK_NEAR(g->join_at, 0.8);
		dbtp_gt_group_points(g, 8, &c, &j);
		CHECK_NEAR(c, 0.3);
		CHECK_NEAR(j, 0.8);
	}
	dbtp_gt_model_free(m);
	/* two at T = 2, with T = 1's and T = 4's points: (4/20 + 10/20) / 2
	 * and (17/20 + 14/20) / 2 */
	snprintf(p[0], sizeof(p[0]), "%s/p2b.trace", dir);
	snprintf(p[1], sizeof(p[1]), "%s/p2c.trace", dir);
	write_points_at(p[0], 2, 1);
	write_points_at(p[1], 2, 4);
	m = model_of(paths, T, 2);
	g = group_at(m, 0x402000);
	CHECK(g != NULL);
	if (g) {
		CHECK(g->create_t == 0 && g->join_t == 0);
		CHECK_NEAR(g->create_at, 0.35);
		CHECK_NEAR(g->join_at, 0.775);
	}
	dbtp_gt_model_free(m);
}

static void test_rejects(void)
{
	char p[64];
	dbtp_writer *w = NULL;
	dbtp_gt_model *m = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	uint32_t id;
	static const uint8_t code[] = {0x90};
	static const uint8_t sizes[] = {1};

	snprintf(p, sizeof(p), "%s/c.trace", dir);
	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_X86_64, DBTP_MODE_COUNT, 0,
				&err));
	CHECK(!dbtp_writer_block(w, 0x1000, 1, sizes, code, 0, 0, &id, &err));
	CHECK(!dbtp_writer_count(w, id, 5, &err));
	CHECK(!dbtp_writer_close(w, 0, &err));
	CHECK(!dbtp_gt_model_new(&m, &err));
	CHECK(!dbtp_trace_open(&t, p, &err));
	CHECK(dbtp_gt_model_add(m, t, "c.trace", 1, &err) == -1);
	CHECK(strstr(err.msg, "count-mode") != NULL);
	dbtp_trace_close(t);
	/* no profile */
	CHECK(dbtp_gt_model_finish(m, &err) == -1);
	dbtp_gt_model_free(m);
	/* an architecture without a rewriter: one line */
	{
		dbtp_gt_rw *rw = NULL;

		CHECK(dbtp_gt_rw_open(&rw, DBTP_ARCH_UNKNOWN, &err) == -1);
		CHECK(rw == NULL);
		CHECK_STR(err.msg,
			  "gentest: rewriting unknown code is not supported");
		CHECK(!dbtp_gt_rw_open(&rw, DBTP_ARCH_AARCH64, &err));
		CHECK(rw != NULL);
		dbtp_gt_rw_close(rw);
	}
}

/* --- the tricky instruction table -------------------------------------- */

struct tricky {
	const char *name;
	uint8_t len;
	uint8_t bytes[15];
	int outcome;
	int avx;
};

static const struct tricky table[] = {
    {"mov rax, [rbx+rcx*8+0x10]", 5, {0x48, 0x8b, 0x44, 0xcb, 0x10}, 1, 0},
    {"mov [rsp+8], rdi", 5, {0x48, 0x89, 0x7c, 0x24, 0x08}, 1, 0},
    {"mov rax, [rip+0x1000]",
     7,
     {0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00},
     1,
     0},
    {"mov rax, fs:[0x28]",
     9,
     {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00},
     1,
     0},
    {"movabs rax, [0x1122334455667788]",
     10,
     {0x48, 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11},
     1,
     0},
    {"add qword ptr [rax], 1", 4, {0x48, 0x83, 0x00, 0x01}, 1, 0},
    {"lock xadd [rdi], eax", 4, {0xf0, 0x0f, 0xc1, 0x07}, 1, 0},
    {"mov r15, rax", 3, {0x49, 0x89, 0xc7}, 1, 0},
    {"mov rax, [r15+8]", 4, {0x49, 0x8b, 0x47, 0x08}, 1, 0},
    {"bt [rax], rcx", 4, {0x48, 0x0f, 0xa3, 0x08}, 1, 0},
    {"cmpxchg16b [rdi]", 4, {0x48, 0x0f, 0xc7, 0x0f}, 1, 0},
    {"mov [rbx+rsi*2+8], ch", 4, {0x88, 0x6c, 0x73, 0x08}, 1, 0},
    {"add ah, byte [rip+0x40]", 6, {0x02, 0x25, 0x40, 0x00, 0x00, 0x00}, 1, 0},
    {"lea rax, [rip+0x10]",
     7,
     {0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00},
     0,
     0},
    {"nop dword [rax+rax]", 5, {0x0f, 0x1f, 0x44, 0x00, 0x00}, 0, 0},
    {"rep movsb", 2, {0xf3, 0xa4}, 1, 0},
    {"rep stosq", 3, {0xf3, 0x48, 0xab}, 1, 0},
    {"repne scasb", 2, {0xf2, 0xae}, 1, 0},
    {"lodsb", 1, {0xac}, 1, 0},
    {"xlatb", 1, {0xd7}, 1, 0},
    {"push rax", 1, {0x50}, 0, 0},
    {"pop rbx", 1, {0x5b}, 0, 0},
    {"push qword [rax]", 2, {0xff, 0x30}, 1, 0},
    {"pop qword [rax]", 2, {0x8f, 0x00}, 1, 0},
    {"pushfq", 1, {0x9c}, 0, 0},
    {"popfq", 1, {0x9d}, 1, 0},
    {"pop rsp", 1, {0x5c}, 1, 0},
    {"mov rsp, rbp", 3, {0x48, 0x89, 0xec}, 1, 0},
    {"sub rsp, 0x28", 4, {0x48, 0x83, 0xec, 0x28}, 0, 0},
    {"enter 16, 0", 4, {0xc8, 0x10, 0x00, 0x00}, 0, 0},
    {"leave", 1, {0xc9}, 1, 0},
    {"call rel32", 5, {0xe8, 0x00, 0x01, 0x00, 0x00}, 1, 0},
    {"call rax", 2, {0xff, 0xd0}, 1, 0},
    {"call [rip+0x100]", 6, {0xff, 0x15, 0x00, 0x01, 0x00, 0x00}, 1, 0},
    {"ret", 1, {0xc3}, 1, 0},
    {"ret 8", 3, {0xc2, 0x08, 0x00}, 1, 0},
    {"jmp rax", 2, {0xff, 0xe0}, 1, 0},
    {"jmp [rax*8+0x1000]", 7, {0xff, 0x24, 0xc5, 0x00, 0x10, 0x00, 0x00}, 1, 0},
    {"jne self", 2, {0x75, 0xfe}, 1, 0},
    {"jmp rel32", 5, {0xe9, 0x00, 0x10, 0x00, 0x00}, 1, 0},
    {"loop self", 2, {0xe2, 0xfe}, 1, 0},
    {"jrcxz self", 2, {0xe3, 0xfe}, 1, 0},
    {"div rcx", 3, {0x48, 0xf7, 0xf1}, 1, 0},
    {"idiv dword [rax]", 2, {0xf7, 0x38}, 1, 0},
    {"div cl", 2, {0xf6, 0xf1}, 1, 0},
    {"idiv bx", 3, {0x66, 0xf7, 0xfb}, 1, 0},
    {"idiv rdx", 3, {0x48, 0xf7, 0xfa}, 1, 0},
    {"cpuid", 2, {0x0f, 0xa2}, 1, 0},
    {"syscall", 2, {0x0f, 0x05}, 1, 0},
    {"rdtsc", 2, {0x0f, 0x31}, 0, 0},
    {"std", 1, {0xfd}, 0, 0},
    {"movaps xmm0, [rax]", 3, {0x0f, 0x28, 0x00}, 1, 0},
    {"addps xmm1, xmm0", 3, {0x0f, 0x58, 0xc8}, 0, 0},
    {"divsd xmm0, xmm1", 4, {0xf2, 0x0f, 0x5e, 0xc1}, 0, 0},
    {"sqrtsd xmm0, [rsi]", 4, {0xf2, 0x0f, 0x51, 0x06}, 1, 0},
    /* Capstone 4 says "xmmword ptr" for these; the assembler wants the
     * scalar's size */
    {"comisd xmm0, [rax]", 4, {0x66, 0x0f, 0x2f, 0x00}, 1, 0},
    {"ucomisd xmm1, [rbx+8]", 5, {0x66, 0x0f, 0x2e, 0x4b, 0x08}, 1, 0},
    {"comiss xmm0, [rax]", 3, {0x0f, 0x2f, 0x00}, 1, 0},
    {"ucomiss xmm2, [rcx]", 3, {0x0f, 0x2e, 0x11}, 1, 0},
    {"ldmxcsr [rax]", 3, {0x0f, 0xae, 0x10}, 1, 0},
    {"fldcw [rax]", 2, {0xd9, 0x28}, 1, 0},
    {"fld tbyte [rax]", 2, {0xdb, 0x28}, 1, 0},
    {"fdiv st0, st1", 2, {0xd8, 0xf1}, 0, 0},
    {"fxsave [rax]", 3, {0x0f, 0xae, 0x00}, 1, 0},
    {"fxrstor [rax]", 3, {0x0f, 0xae, 0x08}, 1, 0},
    {"vmovaps ymm0, [rax]", 4, {0xc5, 0xfc, 0x28, 0x00}, 1, 1},
    {"vaddps ymm1, ymm0, ymm2", 4, {0xc5, 0xfc, 0x58, 0xca}, 0, 1},
    {"vmovdqu ymm3, [rsp+rax*2+0x44]",
     6,
     {0xc5, 0xfe, 0x6f, 0x5c, 0x44, 0x44},
     1,
     1},
    {"hlt", 1, {0xf4}, 2, 0},
    {"int3", 1, {0xcc}, 2, 0},
    {"ud2", 2, {0x0f, 0x0b}, 2, 0},
    {"in al, dx", 1, {0xec}, 2, 0},
    {"cli", 1, {0xfa}, 2, 0},
    {"mov ds, ax", 2, {0x8e, 0xd8}, 2, 0},
    {"wrmsr", 2, {0x0f, 0x30}, 2, 0},
    {"xsave [rdi]", 3, {0x0f, 0xae, 0x27}, 2, 0},
    {"int 0x80", 2, {0xcd, 0x80}, 2, 0},
};

#define NTRICKY (sizeof(table) / sizeof(*table))

/* Test @n's files in the test directory: trace @p, program @c, binary @x
 * (64 bytes each). */
static void names(const char *n, char *p, char *c, char *x)
{
	snprintf(p, 64, "%s/%s.trace", dir, n);
	snprintf(c, 64, "%s/%s.c", dir, n);
	snprintf(x, 64, "%s/%s", dir, n);
}

/* The program of @m with the default options, written to @path. */
static int emit_file(const dbtp_gt_model *m, const char *path,
		     struct dbtp_gt_summary *sum)
{
	struct dbtp_gt_emit_opts o = {0};
	dbtp_err err = {0};
	FILE *f = fopen(path, "w");
	int rc;

	CHECK(f != NULL);
	if (!f)
		return -1;
	rc = dbtp_gt_emit(m, &o, f, sum, &err);
	fclose(f);
	CHECK(!rc);
	return 0;
}

static int run(const char *cmd)
{
	int s = system(cmd);

	return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

/* Compile program @c to @x with -Werror, run it, and compare the counts
 * its plan gives (--counts, space-separated) with @counts: 0 if equal. */
static int build_and_count(const char *c, const char *x, const char *counts)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -pthread -Wall -Wextra -Werror %s -o %s && "
		 "%s --quiet && test \"$(%s --counts | cut -d' ' -f3 | "
		 "tr '\\n' ' ')\" = '%s'",
		 c, x, x, x, counts);
	return run(cmd);
}

static void test_tricky(void)
{
	char p[64], c[64], x[64], cmd[256];
	const char *paths[1] = {p};
	double T[1] = {1};
	int avx = __builtin_cpu_supports("avx");
	struct dbtp_gt_summary sum;
	dbtp_writer *w = NULL;
	dbtp_gt_model *m;
	dbtp_gt_rw *rw = NULL;
	dbtp_err err = {0};
	uint32_t id[NTRICKY];

	names("tricky", p, c, x);
	/* Outcomes, instruction by instruction. */
	CHECK(!dbtp_gt_rw_open(&rw, DBTP_ARCH_X86_64, &err));
	for (size_t i = 0; i < NTRICKY; i++) {
		struct dbtp_gt_rw_stats st;
		char *text = NULL;
		size_t len = 0;
		FILE *tf = open_memstream(&text, &len),
		     *sf = fopen("/dev/null", "w");

		CHECK(!dbtp_gt_rw_block(rw, (uint32_t)i, table[i].bytes,
					table[i].len, 1, NULL,
					0x401000 + 64 * i, tf, sf, &st, &err));
		fclose(tf);
		fclose(sf);
		if (st.n[table[i].outcome] != 1)
			fprintf(stderr, "%s: outcome %d %d %d\n%s",
				table[i].name, st.n[0], st.n[1], st.n[2], text);
		CHECK_EQ(st.n[table[i].outcome], 1);
		CHECK_EQ(st.uses_avx, table[i].avx);
		free(text);
	}
	/* A block whose last instruction the trace holds only in part: it
	 * alone is dropped, and a jmp keeps the block's end a block end. */
	{
		static const uint8_t code[] = {0x90, 0x48, 0x8b};
		static const uint8_t sizes[] = {1, 2};
		struct dbtp_gt_rw_stats st;
		char *text = NULL;
		size_t len = 0;
		FILE *tf = open_memstream(&text, &len);
		FILE *sf = fopen("/dev/null", "w");

		CHECK(!dbtp_gt_rw_block(rw, 999, code, 3, 2, sizes, 0x401000,
					tf, sf, &st, &err));
		CHECK_EQ(st.jumps_out, 1);
		CHECK(dbtp_gt_rw_block(rw, 998, code, 3, 2, NULL, 0x401000, tf,
				       sf, &st, &err) == -1);
		fclose(tf);
		fclose(sf);
		CHECK(
		    strstr(text, "# dropped: undecodable\n\tjmp .Lg999_2\n") !=
		    NULL);
		free(text);
	}
	/* Which instructions move the stack pointer (a sequence resets it
	 * after those only), how far at most, and exactly where to (upward
	 * positive; the ret is decomposed: a push, then the ret; popfq gets a
	 * pushfq first; leave's mov rsp, rbp a no-op), which writes become a
	 * reset to the private stack's middle, which slots above the start
	 * (or the middle, after a reset) pops read, and which slots above
	 * where it ends pushes and calls wrote and a `sub rsp` or `enter`'s
	 * frame left undefined: a base register of a memory operand, which
	 * becomes r15, does not move it. */
	{
		/* clang-format off */
		static const struct {
			uint8_t len, n, bytes[8];
			int moves;
			uint32_t bound;
			int exact, reset;
			int32_t net, peak, top;
			uint64_t reads, reads_top, def, undef;
		} sp[] = {
		    /* mov [rsp+8], rdi */
		    {5, 1, {0x48, 0x89, 0x7c, 0x24, 0x08}, 0, 0, 1, 0, 0, 0, 0,
		     0, 0, 0, 0},
		    /* lea rax, [rsp+8] */
		    {5, 1, {0x48, 0x8d, 0x44, 0x24, 0x08}, 0, 0, 1, 0, 0, 0, 0,
		     0, 0, 0, 0},
		    /* mov rax, rsp */
		    {3, 1, {0x48, 0x89, 0xe0}, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		    {1, 1, {0x50}, 1, 8, 1, 0, -8, 0, 0, 0, 0, 1, 0}, /* push rax */
		    {1, 1, {0x5b}, 1, 8, 1, 0, 8, 8, 0, 1, 0, 0, 0}, /* pop rbx */
		    {2, 1, {0x66, 0x5b}, 1, 8, 1, 0, 2, 2, 0, 1, 0, 0, 0}, /* pop bx */
		    {1, 1, {0x9c}, 1, 8, 1, 0, -8, 0, 0, 0, 0, 1, 0}, /* pushfq */
		    {1, 1, {0x9d}, 1, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0}, /* popfq */
		    /* sub rsp, 8 */
		    {4, 1, {0x48, 0x83, 0xec, 0x08}, 1, 64, 1, 0, -8, 0, 0, 0,
		     0, 0, 1},
		    /* call next */
		    {5, 1, {0xe8, 0, 0, 0, 0}, 1, 16, 1, 0, -8, 0, 0, 0, 0, 1, 0},
		    {1, 1, {0xc3}, 1, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0}, /* ret */
		    /* ret 16 */
		    {3, 1, {0xc2, 0x10, 0x00}, 1, 32, 1, 0, 16, 16, 0, 0, 0, 0,
		     0},
		    {1, 1, {0xc9}, 1, 64, 1, 0, 8, 8, 0, 1, 0, 0, 0}, /* leave */
		    /* enter 16, 0: rbp's slot written, the frame's not */
		    {4, 1, {0xc8, 0x10, 0x00, 0x00}, 1, 512, 1, 0, -24, 0, 0, 0,
		     0, 4, 3},
		    /* enter 16, 1: the nesting level's pushes not known */
		    {4, 1, {0xc8, 0x10, 0x00, 0x01}, 1, 512, 0, 0, 0, 0, 0, 0,
		     0, 0, 0},
		    /* and rsp, -16: a reset */
		    {4, 1, {0x48, 0x83, 0xe4, 0xf0}, 1, 64, 1, 1, 0, 0, 0, 0, 0,
		     0, 0},
		    {1, 1, {0x5c}, 1, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0}, /* pop rsp */
		    /* add rsp, 0x100: a reset */
		    {7, 1, {0x48, 0x81, 0xc4, 0x00, 0x01, 0x00, 0x00}, 1, 64, 1,
		     1, 0, 0, 0, 0, 0, 0, 0},
		    /* pop rbx; mov rsp, rbp; add rsp, 8; pop rax; pop rcx:
		     * 8 bytes up, reset, 24 up, slots 1 and 2 read */
		    {9, 5, {0x5b, 0x48, 0x89, 0xec, 0x48, 0x83, 0xc4, 0x08},
		     1, 152, 1, 1, 24, 8, 24, 1, 6, 0, 0},
		    /* push rax; sub rsp, 16: the pushed slot written, the
		     * two below it not */
		    {4, 2, {0x50, 0x48, 0x83, 0xec, 0x10}, 1, 72, 1, 0, -24, 0,
		     0, 0, 0, 4, 3},
		};
		/* clang-format on */

		for (size_t i = 0; i < sizeof(sp) / sizeof(*sp); i++) {
			struct dbtp_gt_rw_stats st;
			FILE *tf = fopen("/dev/null", "w");
			FILE *sf = fopen("/dev/null", "w");
			uint8_t code[16];

			memcpy(code, sp[i].bytes, 8);
			code[8] = 0x58; /* the last row's pop rax; pop rcx */
			code[9] = 0x59;
			CHECK(!dbtp_gt_rw_block(rw, 900 + (uint32_t)i, code,
						sp[i].len + (sp[i].n > 1),
						sp[i].n, NULL, 0x401000, tf, sf,
						&st, &err));
			fclose(tf);
			fclose(sf);
			CHECK_EQ(st.moves_sp, sp[i].moves);
			CHECK_EQ(st.sp_bound, sp[i].bound);
			CHECK_EQ(st.sp_exact, sp[i].exact);
			CHECK_EQ(st.sp_reads_far, 0);
			if (sp[i].exact) {
				CHECK_EQ(st.sp_reset, sp[i].reset);
				CHECK_EQ(st.sp_net, sp[i].net);
				CHECK_EQ(st.sp_peak, sp[i].peak);
				CHECK_EQ(st.sp_top, sp[i].top);
				CHECK_EQ(st.sp_reads, sp[i].reads);
				CHECK_EQ(st.sp_reads_top, sp[i].reads_top);
				CHECK_EQ(st.sp_def, sp[i].def);
				CHECK_EQ(st.sp_undef, sp[i].undef);
			}
			CHECK_EQ(st.jumps_out, 0);
		}
	}
	dbtp_gt_rw_close(rw);
	/* The whole table as one program, each block run 3 times. */
	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	for (size_t i = 0; i < NTRICKY; i++) {
		uint8_t sz[1] = {table[i].len};

		if (table[i].avx && !avx)
			continue;
		CHECK(!dbtp_writer_block(w, 0x401000 + 64 * i, 1, sz,
					 table[i].bytes, 0, 0, &id[i], &err));
		exec_n(w, 0, id[i], 3);
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
	m = model_of(paths, T, 1);
	if (emit_file(m, c, &sum))
		goto out;
	CHECK_EQ(sum.skipped, 0);
	dbtp_gt_summary_free(&sum);
	/* Every block ran 3 times, one copy each: one sequence, whose
	 * members without a branch at their end jump to the next one (one
	 * such line, "jmp gt_b<k>_body", in the generated C per member). */
	snprintf(cmd, sizeof(cmd),
		 "test $(grep -c 'with the rest of its sequence' %s) = 1 && "
		 "grep -q 'jmp gt_b[0-9]*_body' %s",
		 c, c);
	CHECK_EQ(run(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -pthread -Wall -Wextra -Werror %s -o %s", c, x);
	CHECK_EQ(run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s --quiet", x);
	CHECK_EQ(run(cmd), 0);
	/* scaled by 2: every count 3 -> 1 */
	snprintf(cmd, sizeof(cmd), "%s --quiet --scale 2", x);
	CHECK_EQ(run(cmd), 0);
out:
	dbtp_gt_model_free(m);
}

/*
 * A sequence with copies: A (64 x "inc ecx", no branch at its end: taken
 * to be ended by QEMU for its size, left open) and B (2 x "inc ecx",
 * short: jumps on), 8 x DBTP_GT_UNROLL_MIN executions each (eight copies
 * alone).  66 instructions a copy: two
 * copies (eight halved while half as many still hold DBTP_GT_SEQ_LEN =
 * 128 instructions: 8, 4, 2), so B jumps to A's second copy.
 */
static void test_sequence_copies(void)
{
	char p[64], c[64], x[64], cmd[512], want[32];
	const char *paths[1] = {p};
	double T[1] = {1};
	uint8_t code[128], sizes[64];
	struct dbtp_gt_summary sum;
	dbtp_writer *w = NULL;
	dbtp_gt_model *m;
	dbtp_err err = {0};
	uint32_t a, b;

	names("seq", p, c, x);
	for (int i = 0; i < 64; i++) {
		code[2 * i] = 0xff;
		code[2 * i + 1] = 0xc1;
		sizes[i] = 2;
	}
	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	CHECK(!dbtp_writer_block(w, 0x401000, 64, sizes, code, 0, 0, &a, &err));
	CHECK(!dbtp_writer_block(w, 0x402000, 2, sizes, code, 0, 0, &b, &err));
	for (int i = 0; i < 8 * DBTP_GT_UNROLL_MIN; i++) {
		exec_n(w, 0, a, 1);
		exec_n(w, 0, b, 1);
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
	m = model_of(paths, T, 1);
	if (emit_file(m, c, &sum))
		goto out;
	dbtp_gt_summary_free(&sum);
	snprintf(cmd, sizeof(cmd),
		 "grep -q 'gt_b1_c1:' %s && grep -q 'jmp gt_b0_c1' %s && "
		 "! grep -q 'gt_b0_c2\\|jmp gt_b1_' %s",
		 c, c, c);
	CHECK_EQ(run(cmd), 0);
	snprintf(want, sizeof(want), "%d %d ", 8 * DBTP_GT_UNROLL_MIN,
		 8 * DBTP_GT_UNROLL_MIN);
	CHECK_EQ(build_and_count(c, x, want), 0);
out:
	dbtp_gt_model_free(m);
}

/*
 * The generated program's creation and join slices at --threads 1, 3, 8
 * and 10 are dbtp_gt_group_points()'s points there (test_points():
 * 0.2 and 0.85, 0.4 and 0.75, 0.9 twice, 1 twice) in slices of 65,536,
 * rounded: 13107 55706, 26214 49152, 58982 58982, 65536 65536, for each
 * of the T workers.  The program's own gt_plan() runs in a main of the
 * test's that includes it.
 */
static void test_points_program(void)
{
	char c[64], x[64], hc[64], cmd[1024], want[512];
	static const double T[] = {1, 3, 8, 10};
	dbtp_gt_model *m = model124("q", write_points);
	const struct dbtp_gt_group *g = group_at(m, 0x402000);
	struct dbtp_gt_summary sum;
	size_t n = 0;
	FILE *f;

	CHECK(g != NULL);
	snprintf(c, sizeof(c), "%s/points.c", dir);
	snprintf(hc, sizeof(hc), "%s/points-plan.c", dir);
	snprintf(x, sizeof(x), "%s/points-plan", dir);
	if (!g || emit_file(m, c, &sum))
		goto out;
	dbtp_gt_summary_free(&sum);
	f = fopen(hc, "w");
	CHECK(f != NULL);
	if (!f)
		goto out;
	fprintf(f,
		"#define main gt_main\n#include \"%s\"\n#undef main\n"
		"int main(int argc, char **argv)\n{\n"
		"\tfor (int a = 1; a < argc; a++) {\n"
		"\t\tgt_plan(strtod(argv[a], NULL));\n"
		"\t\tfor (size_t c = 0; c < gt_nth; c++)\n"
		"\t\t\tif (gt_th[c].g)\n"
		"\t\t\t\tprintf(\"%%u %%u \", gt_th[c].create_b,\n"
		"\t\t\t\t       gt_th[c].join_b);\n"
		"\t}\n\treturn 0;\n}\n",
		c);
	fclose(f);
	for (size_t i = 0; i < sizeof(T) / sizeof(*T); i++) {
		double cp, jp;

		dbtp_gt_group_points(g, T[i], &cp, &jp);
		for (unsigned k = 0; k < (unsigned)T[i]; k++)
			n += (size_t)snprintf(
			    want + n, sizeof(want) - n, "%.0f %.0f ",
			    nearbyint(cp * 65536), nearbyint(jp * 65536));
	}
	CHECK(n < sizeof(want));
	CHECK(!strncmp(want, "13107 55706 26214 49152 ", 24));
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -pthread -Wall -Wextra -Werror %s -o %s && "
		 "test \"$(%s 1 3 8 10)\" = '%s'",
		 hc, x, x, want);
	CHECK_EQ(run(cmd), 0);
out:
	dbtp_gt_model_free(m);
}

/*
 * The model of a one-thread x86-64 profile of @n blocks, block i (at
 * 0x401000 + 16 i) @ninsns[i] instructions of @sizes[i] bytes from
 * @code[i], run @runs[i] times; written to @p.
 */
static dbtp_gt_model *x86_blocks(const char *p, uint32_t n,
				 const uint32_t *ninsns,
				 const uint8_t *const *sizes,
				 const uint8_t *const *code,
				 const uint64_t *runs)
{
	const char *paths[1] = {p};
	double T[1] = {1};
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	uint32_t id;

	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	for (uint32_t i = 0; i < n; i++) {
		CHECK(!dbtp_writer_block(w, 0x401000 + 16 * (uint64_t)i,
					 ninsns[i], sizes[i], code[i], 0, 0,
					 &id, &err));
		exec_n(w, 0, id, runs[i]);
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
	return model_of(paths, T, 1);
}

/*
 * The private stack is reset inside a sequence only when the stack-pointer
 * moves its members may make add up past DBTP_GT_SP_BUDGET: 600 blocks of
 * four `sub rsp, 64` each (64 bytes each at most, 256 a block) run in one
 * sequence, three times; resets before members 256 and 512 only, besides
 * the function's entry and the pass's end (a pass may move it further than
 * DBTP_GT_SP_CALL).
 */
static void test_stack_budget(void)
{
	char p[64], c[64], x[64], cmd[1024];
	static const uint8_t code[16] = {0x48, 0x83, 0xec, 0x40, 0x48, 0x83,
					 0xec, 0x40, 0x48, 0x83, 0xec, 0x40,
					 0x48, 0x83, 0xec, 0x40},
			     sizes[4] = {4, 4, 4, 4};
	const uint8_t *codes[600], *sz[600];
	uint32_t ninsns[600];
	uint64_t runs[600];
	struct dbtp_gt_summary sum;
	dbtp_gt_model *m;

	names("stack", p, c, x);
	for (int i = 0; i < 600; i++) {
		codes[i] = code;
		sz[i] = sizes;
		ninsns[i] = 4;
		runs[i] = 3;
	}
	m = x86_blocks(p, 600, ninsns, sz, codes, runs);
	if (emit_file(m, c, &sum))
		goto out;
	dbtp_gt_summary_free(&sum);
	snprintf(
	    cmd, sizeof(cmd),
	    "test $(grep -c 'lea rsp, \\[r15 + %d\\]' %s) = "
	    "$((3 + $(grep '\"gt_enter[a-z0-9_]*:' %s | grep -vc _p:))) && "
	    "grep -A1 'gt_b256_body:' %s | grep -q 'lea rsp' && "
	    "grep -A1 'gt_b512_body:' %s | grep -q 'lea rsp' && "
	    "cc -O2 -pthread -Wall -Wextra -Werror %s -o %s && "
	    "%s --quiet",
	    DBTP_GT_STACK_MID, c, c, c, c, c, x, x);
	CHECK_EQ(run(cmd), 0);
out:
	dbtp_gt_model_free(m);
}

/*
 * A pass resets the private stack only where it must, and writes what the
 * next pass pops above its start (memcheck holds what a reset took back
 * undefined): `push rax; pop rax` (5,000 runs: one copy) never takes the
 * stack pointer above where its pass starts, and 16 KiB over its 16 bytes
 * at most a pass is 1,024 passes a call, without a reset; `pop rax; push
 * rax` (3,000 runs) reads 8 bytes above it, so it is reset to 8 bytes
 * above the middle and one push goes back to it (at the function's entry
 * too); four `sub rsp, 64` (2,000 runs) may move it 256 bytes a pass, so
 * that fewer than DBTP_GT_SP_PASSES passes fit in 16 KiB: reset every
 * pass; `add rsp, 24; pop rbx; pop rbp; test rbp, rbp; jne` and `test
 * eax, eax; jne` (one sequence, 2,500 runs: the first jne stays, for
 * memcheck to check the popped value; the pass counter's `sub` and `jnz`
 * take the place of the last test and jne) end a pass 40 bytes up, where the
 * pops leave it: two pushes for the slots read, a `lea` past the 24
 * bytes skipped.  And a call whose callee is left out, `push rbx; sub
 * rsp, 8; call` then `add rsp, 8; pop rbx; test rbx, rbx; jne` and `test
 * eax, eax; jne` (one sequence, 4,000 runs): the second starts with
 * the return's pop, so that its pop reads what the push wrote (168
 * bytes of moves at most a pass: reset every pass).  The program runs
 * natively and under memcheck without an error.
 */
static void test_stack_resets(void)
{
	char p[64], c[64], x[64], cmd[2048];
	static const uint8_t c0[2] = {0x50, 0x58}, c1[2] = {0x58, 0x50},
			     c2[16] = {0x48, 0x83, 0xec, 0x40, 0x48, 0x83,
				       0xec, 0x40, 0x48, 0x83, 0xec, 0x40,
				       0x48, 0x83, 0xec, 0x40},
			     c3[11] = {0x48, 0x83, 0xc4, 0x18, 0x5b, 0x5d,
				       0x48, 0x85, 0xed, 0x75, 0x00},
			     c4[10] = {0x53, 0x48, 0x83, 0xec, 0x08,
				       0xe8, 0xf6, 0x0f, 0x00, 0x00},
			     c5[10] = {0x48, 0x83, 0xc4, 0x08, 0x5b,
				       0x48, 0x85, 0xdb, 0x75, 0x00},
			     c6[4] = {0x85, 0xc0, 0x75, 0x00}, s1[2] = {1, 1},
			     s4[4] = {4, 4, 4, 4}, s3[5] = {4, 1, 1, 3, 2},
			     s5[3] = {1, 4, 5}, s6[4] = {4, 1, 3, 2},
			     s2[2] = {2, 2};
	const uint8_t *code[8] = {c0, c1, c2, c3, c6, c4, c5, c6},
		      *sizes[8] = {s1, s1, s4, s3, s2, s5, s6, s2};
	static const uint32_t ninsns[8] = {2, 2, 4, 5, 2, 3, 4, 2};
	static const uint64_t runs[8] = {5000, 3000, 2000, 2500,
					 2500, 4000, 4000, 4000};
	struct dbtp_gt_summary sum;
	dbtp_gt_model *m;

	names("resets", p, c, x);
	m = x86_blocks(p, 8, ninsns, sizes, code, runs);
	if (emit_file(m, c, &sum))
		goto out;
	dbtp_gt_summary_free(&sum);
	snprintf(
	    cmd, sizeof(cmd),
	    "sed 's/^\t\"//; s/\\\\n\"$//' %s > %s.s && "
	    "test $(grep -c '^.tlea rsp, .r15 + %d.$' %s.s) = "
	    "$((2 + $(grep '^gt_enter[a-z0-9_]*:$' %s.s | grep -vc _p:))) && "
	    "test $(grep -A1 '^.tlea rsp, .r15 + %d.$' %s.s | "
	    "grep -c '^.tpush 0$') = 2 && "
	    "tr '\n' '|' < %s.s > %s.j && "
	    "grep -qF '%s|\\tpush 0|\\tpush 0|\\tlea rsp, [rsp - 24]|"
	    "' %s.j && "
	    "grep -qF 'lea rsp, [r15 + %d]|\\tpush 0|\\tpush 0|"
	    "\\tlea rsp, [rsp - 24]|\\tjmp gt_b3_body|' %s.j && "
	    "grep -qF 'gt_b6_body:|\\tlea rsp, [rsp + 8]|' %s.j && "
	    "grep -q '{gt_b0, 0, 0, 0, 5000, 0, 0, 0, 1024}' %s && "
	    "grep -q '{gt_b1, 1, 0, 0, 3000, 0, 0, 0, 0}' %s && "
	    "grep -q '{gt_b2, 2, 0, 0, 2000, 0, 0, 0, 0}' %s && "
	    "cc -O2 -pthread -Wall -Wextra -Werror %s -o %s && "
	    "%s --quiet && { ! command -v valgrind >/dev/null || "
	    "valgrind -q --error-exitcode=9 %s --quiet; }",
	    c, c, DBTP_GT_STACK_MID, c, c, DBTP_GT_STACK_MID + 8, c, c, c,
	    ".Lg64_0:|.Lg64_1:", c, DBTP_GT_STACK_MID + 40, c, c, c, c, c, c, x,
	    x, x);
	CHECK_EQ(run(cmd), 0);
out:
	dbtp_gt_model_free(m);
}

/*
 * Blocks that end in a direct branch close their loop: in the last copy
 * of a pass the pass counter's branch takes the block's place.  Five
 * blocks run alone (8 x DBTP_GT_UNROLL_MIN, 8, 16, 24 and 32 more times:
 * no common count model).  Where a move comes between the flags and the
 * branch: A (add eax, 1; mov edx, eax; jne) leaves rcx alone and is
 * short, so one copy counted by `loop`, its jne gone; B (inc ecx; mov
 * edx, ecx; jne) uses rcx: eight copies, the last one's jne replaced by
 * sub/jnz; C (20 x add eax, 1; mov edx, eax; jne) is too long for
 * `loop`'s 8-bit displacement: eight copies, sub/jnz.  Where the flags'
 * instruction is right before the branch, the counter's sub and jnz take
 * the place of the two, in one copy: D (add eax, 1; jne) in rcx, E (inc
 * ecx; jne) in another register.
 */
static void test_closing(void)
{
	char p[64], c[64], x[64], cmd[2048], want[64];
	const char *paths[1] = {p};
	double T[1] = {1};
	uint8_t a_code[] = {0x83, 0xc0, 0x01, 0x89, 0xc2, 0x75, 0x10};
	uint8_t b_code[] = {0xff, 0xc1, 0x89, 0xca, 0x75, 0x10};
	uint8_t d_code[] = {0x83, 0xc0, 0x01, 0x75, 0x10};
	uint8_t e_code[] = {0xff, 0xc1, 0x75, 0x10};
	uint8_t c_code[64], sizes[22],
	    a_sizes[] = {3, 2, 2}, b_sizes[] = {2, 2, 2}, d_sizes[] = {3, 2},
	    e_sizes[] = {2, 2};
	struct dbtp_gt_summary sum;
	dbtp_writer *w = NULL;
	dbtp_gt_model *m;
	dbtp_err err = {0};
	uint32_t id[5];
	size_t n;

	names("close", p, c, x);
	for (int i = 0; i < 20; i++) {
		memcpy(c_code + 3 * i, a_code, 3);
		sizes[i] = 3;
	}
	memcpy(c_code + 60, a_code + 3, 4);
	sizes[20] = sizes[21] = 2;
	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	CHECK(!dbtp_writer_block(w, 0x401000, 3, a_sizes, a_code, 0, 0, &id[0],
				 &err));
	CHECK(!dbtp_writer_block(w, 0x402000, 3, b_sizes, b_code, 0, 0, &id[1],
				 &err));
	CHECK(!dbtp_writer_block(w, 0x403000, 22, sizes, c_code, 0, 0, &id[2],
				 &err));
	CHECK(!dbtp_writer_block(w, 0x404000, 2, d_sizes, d_code, 0, 0, &id[3],
				 &err));
	CHECK(!dbtp_writer_block(w, 0x405000, 2, e_sizes, e_code, 0, 0, &id[4],
				 &err));
	for (int i = 0; i < 5; i++)
		exec_n(w, 0, id[i], 8 * DBTP_GT_UNROLL_MIN + 8 * (uint64_t)i);
	CHECK(!dbtp_writer_close(w, 0, &err));
	m = model_of(paths, T, 1);
	if (emit_file(m, c, &sum))
		goto out;
	dbtp_gt_summary_free(&sum);
	/* copy j of block k has labels .Lg<16k + j>_<i> */
	snprintf(
	    cmd, sizeof(cmd),
	    "test $(grep -c 'loop .Lgt0_top' %s) = 1 && "
	    "! grep -q 'gt_b0_c1\\|jne .Lg0_' %s && "
	    "test $(grep -c 'jne .Lg\\(1[6-9]\\|2[0-2]\\)_3' %s) = 7 && "
	    "! grep -q 'jne .Lg23_' %s && grep -q 'jnz gt_b1_body' %s && "
	    "test $(grep -c 'jne .Lg\\(3[2-8]\\)_22' %s) = 7 && "
	    "! grep -q 'jne .Lg39_' %s && grep -q 'jnz gt_b2_body' %s && "
	    "! grep -q 'loop .Lgt[1-4]_\\|gt_b[34]_c1\\|jne .Lg[46]' %s && "
	    "grep -A3 'Lg48_0:' %s | tr -d '\\n' | "
	    "grep -q 'Lg48_1:.*sub rcx, 1.*jnz .Lgt3_top' && "
	    "grep -A3 'Lg64_0:' %s | tr -d '\\n' | "
	    "grep -q 'Lg64_1:.*sub r[0-9a-z]*, 1.*jnz gt_b4_body'",
	    c, c, c, c, c, c, c, c, c, c, c);
	CHECK_EQ(run(cmd), 0);
	n = 0;
	for (int i = 0; i < 5; i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%d ",
				      8 * DBTP_GT_UNROLL_MIN + 8 * i);
	CHECK_EQ(build_and_count(c, x, want), 0);
out:
	dbtp_gt_model_free(m);
}

/*
 * Reads go to the block whose system call made them: in thread 0, A then
 * read() = 100, A then read() = 50, B then write() = 7, B then read() =
 * -EAGAIN; in thread 1, B then pread64() = 30 (another thread's A ran
 * last).  A read 150 bytes, B 30, the same again from a second profile.
 */
static void test_reads(void)
{
	char path[256];
	const char *paths[2] = {path, path};
	double T[2] = {1, 2};
	uint64_t args[6] = {0};
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	dbtp_gt_model *m;
	uint32_t a, b;
	uint64_t ra = 0, rb = 0;

	snprintf(path, sizeof(path), "%s/reads.trace", dir);
	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	a = add_block(w, 0x401000);
	b = add_block(w, 0x402000);
	exec_n(w, 0, a, 1);
	CHECK(!dbtp_writer_syscall(w, 0, 0, args, &err));
	CHECK(!dbtp_writer_sysret(w, 0, 0, 100, &err));
	exec_n(w, 0, a, 1);
	CHECK(!dbtp_writer_sysret(w, 0, 0, 50, &err));
	clone_ret(w, 0, 1);
	exec_n(w, 0, b, 1);
	CHECK(!dbtp_writer_sysret(w, 0, 1, 7, &err));
	exec_n(w, 0, b, 1);
	CHECK(!dbtp_writer_sysret(w, 0, 0, -11, &err));
	exec_n(w, 1, b, 1);
	exec_n(w, 0, a, 1);
	CHECK(!dbtp_writer_sysret(w, 1, 17, 30, &err));
	CHECK(!dbtp_writer_thread_exit(w, 1, &err));
	CHECK(!dbtp_writer_close(w, 0, &err));
	m = model_of(paths, T, 2);
	for (uint32_t i = 0; i < dbtp_gt_model_nblocks(m); i++) {
		const struct dbtp_gt_block *bl = dbtp_gt_model_block(m, i);

		if (bl->vaddr == 0x401000)
			ra = bl->read;
		if (bl->vaddr == 0x402000)
			rb = bl->read;
	}
	CHECK(ra == 300);
	CHECK(rb == 60);
	dbtp_gt_model_free(m);

	/* syscall as such a read; more than the read area holds is cut to
	 * it; 0: getpid */
	{
		static const struct {
			uint32_t bytes;
			const char *want;
		} rd[] = {
		    {875, "\tmov eax, 0\t# read\n"
			  "\tmov edi, dword ptr [r15 + 128]\n"
			  "\tlea rsi, [r15 + 655360]\n"
			  "\tmov edx, 875\n\t.byte 0x0f,0x05"},
		    {1u << 30, "\tmov edx, 131072\n"},
		    {0, "\tmov eax, 39\t# getpid\n\t.byte 0x0f,0x05"},
		};
		static const uint8_t sys[2] = {0x0f, 0x05};
		dbtp_gt_rw *rw = NULL;

		CHECK(!dbtp_gt_rw_open(&rw, DBTP_ARCH_X86_64, &err));
		for (size_t i = 0; rw && i < sizeof(rd) / sizeof(*rd); i++) {
			struct dbtp_gt_rw_stats st;
			char *text = NULL;
			size_t len = 0;
			FILE *tf = open_memstream(&text, &len),
			     *sf = fopen("/dev/null", "w");

			dbtp_gt_rw_read(rw, rd[i].bytes);
			CHECK(!dbtp_gt_rw_block(rw, 7, sys, 2, 1, NULL,
						0x401000, tf, sf, &st, &err));
			fclose(tf);
			fclose(sf);
			CHECK(strstr(text, rd[i].want) != NULL);
			if (!strstr(text, rd[i].want))
				fprintf(stderr, "read %u:\n%s", rd[i].bytes,
					text);
			/* rdx, rsi, rdi: written only for a read */
			CHECK_EQ(!!(st.regs & 0xc4), rd[i].bytes != 0);
			free(text);
		}
		dbtp_gt_rw_close(rw);
	}
}

/*
 * The jump cache: 0x401000 and 0x402003 share an entry ((pc ^ pc >> 12) &
 * 4095 = 0x401), 0x403000 has its own.  Thread 0 runs A A A B A C C,
 * thread 1 (its own cache) A: cold A 3, B 1, C 1; read twice (into one
 * model, and into two merged) twice that.
 */
static void test_cold(void)
{
	char path[256];
	const char *paths[2] = {path, path};
	double T[2] = {1, 2};
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	dbtp_gt_model *m[3] = {NULL, NULL, NULL};
	uint32_t a, b, c;

	snprintf(path, sizeof(path), "%s/cold.trace", dir);
	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
				&err));
	a = add_block(w, 0x401000);
	b = add_block(w, 0x402003);
	c = add_block(w, 0x403000);
	exec_n(w, 0, a, 3);
	exec_n(w, 0, b, 1);
	exec_n(w, 0, a, 1);
	clone_ret(w, 0, 1);
	exec_n(w, 1, a, 1);
	exec_n(w, 0, c, 2);
	CHECK(!dbtp_writer_thread_exit(w, 1, &err));
	CHECK(!dbtp_writer_close(w, 0, &err));
	m[0] = model_of(paths, T, 2);
	for (int k = 1; k < 3; k++) {
		CHECK(!dbtp_gt_model_new(&m[k], &err));
		add_profile(m[k], path, T[k - 1]);
	}
	CHECK(!dbtp_gt_model_merge(m[1], m[2], &err));
	CHECK(!dbtp_gt_model_finish(m[1], &err));
	for (int k = 0; k < 2; k++) {
		CHECK_EQ(dbtp_gt_model_nblocks(m[k]), 3);
		for (uint32_t i = 0; i < dbtp_gt_model_nblocks(m[k]); i++) {
			const struct dbtp_gt_block *bl =
			    dbtp_gt_model_block(m[k], i);

			CHECK_EQ(bl->cold, bl->vaddr == 0x401000 ? 6 : 2);
			CHECK_EQ(bl->count, bl->vaddr == 0x401000   ? 10
					    : bl->vaddr == 0x402003 ? 2
								    : 4);
		}
	}
	dbtp_gt_model_free(m[0]);
	dbtp_gt_model_free(m[1]);
	dbtp_gt_model_free(m[2]);
}

/* A one-instruction AArch64 block of @insn at @va. */
static uint32_t add_block_a64(dbtp_writer *w, uint64_t va, uint32_t insn)
{
	const uint8_t code[4] = {(uint8_t)insn, (uint8_t)(insn >> 8),
				 (uint8_t)(insn >> 16), (uint8_t)(insn >> 24)};
	static const uint8_t sizes[] = {4};
	dbtp_err err = {0};
	uint32_t id = 0;

	CHECK(!dbtp_writer_block(w, va, 1, sizes, code, 0, va, &id, &err));
	return id;
}

/*
 * AArch64's jump cache keys a block by its BTYPE too: D (br x2), B (b),
 * L (blr x2) and X (nop), each with its own entry, run D X B X L X X D X.
 * X is entered after br, b, blr, nop and br again: five BTYPEs in a row
 * that differ, five misses (an x86-64 model: one, test_cold()); D, B, L
 * miss once each (D's second entry, after a nop, is the first's BTYPE).
 */
static void test_cold_btype(void)
{
	char path[256];
	const char *paths[1] = {path};
	double T[1] = {1};
	dbtp_writer *w = NULL;
	dbtp_err err = {0};
	dbtp_gt_model *m;
	uint32_t d, b, l, x;

	snprintf(path, sizeof(path), "%s/btype.trace", dir);
	CHECK(!dbtp_writer_open(&w, path, DBTP_ARCH_AARCH64, DBTP_MODE_BLOCKS,
				0, &err));
	d = add_block_a64(w, 0x401000, 0xd61f0040);
	b = add_block_a64(w, 0x401010, 0x14000000);
	l = add_block_a64(w, 0x401020, 0xd63f0040);
	x = add_block_a64(w, 0x402000, 0xd503201f);
	exec_n(w, 0, d, 1);
	exec_n(w, 0, x, 1);
	exec_n(w, 0, b, 1);
	exec_n(w, 0, x, 1);
	exec_n(w, 0, l, 1);
	exec_n(w, 0, x, 2);
	exec_n(w, 0, d, 1);
	exec_n(w, 0, x, 1);
	CHECK(!dbtp_writer_close(w, 0, &err));
	m = model_of(paths, T, 1);
	CHECK_EQ(dbtp_gt_model_nblocks(m), 4);
	for (uint32_t i = 0; i < dbtp_gt_model_nblocks(m); i++) {
		const struct dbtp_gt_block *bl = dbtp_gt_model_block(m, i);

		CHECK_EQ(bl->cold, bl->vaddr == 0x402000 ? 5 : 1);
		CHECK_EQ(bl->count, bl->vaddr == 0x402000   ? 5
				    : bl->vaddr == 0x401000 ? 2
							    : 1);
	}
	dbtp_gt_model_free(m);
}

/* The predictor of a model's mispredictions: gshare unless set, before
 * the first profile; models merged agree (test_cold()'s trace). */
static void test_predictor(void)
{
	char path[256];
	dbtp_gt_model *m[2] = {NULL, NULL};
	dbtp_err err = {0};

	snprintf(path, sizeof(path), "%s/cold.trace", dir);
	for (int k = 0; k < 2; k++)
		CHECK(!dbtp_gt_model_new(&m[k], &err));
	CHECK_EQ(dbtp_gt_model_predictor(m[0]), DBTP_BPRED_GSHARE);
	CHECK(dbtp_gt_model_set_predictor(m[0], 3, &err) == -1);
	CHECK_STR(err.msg, "no branch predictor 3");
	CHECK(!dbtp_gt_model_set_predictor(m[1], DBTP_BPRED_TAGE, &err));
	CHECK_EQ(dbtp_gt_model_predictor(m[1]), DBTP_BPRED_TAGE);
	add_profile(m[0], path, 1);
	add_profile(m[1], path, 1);
	CHECK(dbtp_gt_model_set_predictor(m[0], DBTP_BPRED_TAGE, &err) == -1);
	CHECK_STR(err.msg, "the predictor is chosen before the first profile");
	CHECK(dbtp_gt_model_merge(m[0], m[1], &err) == -1);
	CHECK_STR(err.msg, "profiles read with two branch predictors");
	dbtp_gt_model_free(m[0]);
	dbtp_gt_model_free(m[1]);
}

/* --fp-exact: addsd and mulsd (a memory form) each follow ldmxcsr of the
 * default MXCSR, paddd (integer) does not; without it, nothing. */
static void test_fp_exact(void)
{
	/* addsd xmm0, xmm1; mulsd xmm0, [rdi]; paddd xmm0, xmm1 */
	static const uint8_t code[] = {0xf2, 0x0f, 0x58, 0xc1, 0xf2, 0x0f,
				       0x59, 0x07, 0x66, 0x0f, 0xfe, 0xc1};
	static const uint8_t sizes[] = {4, 4, 4};
	dbtp_gt_rw *rw = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_gt_rw_open(&rw, DBTP_ARCH_X86_64, &err));
	for (int on = 0; rw && on < 2; on++) {
		struct dbtp_gt_rw_stats st;
		char *text = NULL, want[64];
		size_t len = 0;
		FILE *tf = open_memstream(&text, &len),
		     *sf = fopen("/dev/null", "w");

		dbtp_gt_rw_fp_exact(rw, on);
		CHECK(!dbtp_gt_rw_block(rw, 7, code, sizeof(code), 3, sizes,
					0x401000, tf, sf, &st, &err));
		fclose(tf);
		fclose(sf);
		CHECK_EQ(st.fp, 2);
		for (int k = 0; k < 3; k++) {
			snprintf(want, sizeof(want),
				 ".Lg7_%d:\n\tldmxcsr dword ptr [r15 + %d]\n",
				 k, DBTP_GT_SLOT_MXCSR);
			CHECK_EQ(strstr(text, want) != NULL, on && k < 2);
		}
		CHECK_EQ(st.helpers, on ? 2u : 0u);
		free(text);
	}
	dbtp_gt_rw_close(rw);
}

/* The rewriter counts the memory operands whose address waits for a load
 * (struct dbtp_gt_rw_stats' chase): through arithmetic, not after the
 * register is written anew, and in a loop on itself from the pass
 * before. */
static void test_chase(void)
{
	static const struct {
		uint8_t bytes[16], n, sizes[3];
		uint32_t chase;
	} t[] = {
	    /* mov rax, [rdi]; mov rdx, [rax] */
	    {{0x48, 0x8b, 0x07, 0x48, 0x8b, 0x10}, 2, {3, 3}, 1},
	    /* mov rax, [rdi]; lea rdx, [rax + 8]; mov ecx, [rdx] */
	    {{0x48, 0x8b, 0x07, 0x48, 0x8d, 0x50, 0x08, 0x8b, 0x0a},
	     3,
	     {3, 4, 2},
	     1},
	    /* mov rax, [rdi]; mov eax, 5; mov ecx, [rax] */
	    {{0x48, 0x8b, 0x07, 0xb8, 0x05, 0, 0, 0, 0x8b, 0x08},
	     3,
	     {3, 5, 2},
	     0},
	    /* mov rax, [rdi]; xor eax, eax; mov ecx, [rax] */
	    {{0x48, 0x8b, 0x07, 0x31, 0xc0, 0x8b, 0x08}, 3, {3, 2, 2}, 0},
	    /* mov rcx, [rsi + 8]; add rsi, 64; mov rdx, [rsi] */
	    {{0x48, 0x8b, 0x4e, 0x08, 0x48, 0x83, 0xc6, 0x40, 0x48, 0x8b, 0x16},
	     3,
	     {4, 4, 3},
	     0},
	    /* pop rbx; mov rax, [rbx] */
	    {{0x5b, 0x48, 0x8b, 0x03}, 2, {1, 3}, 1},
	    /* mov rax, [rsp + 8]; mov rdx, [rax] */
	    {{0x48, 0x8b, 0x44, 0x24, 0x08, 0x48, 0x8b, 0x10}, 2, {5, 3}, 1},
	    /* .L: mov rsi, [rsi]; sub ebx, 1; jne .L (a loop on itself) */
	    {{0x48, 0x8b, 0x36, 0x83, 0xeb, 0x01, 0x75, 0xf8}, 3, {3, 3, 2}, 1},
	    /* the same, jne elsewhere */
	    {{0x48, 0x8b, 0x36, 0x83, 0xeb, 0x01, 0x75, 0x10}, 3, {3, 3, 2}, 0},
	};
	dbtp_gt_rw *rw = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_gt_rw_open(&rw, DBTP_ARCH_X86_64, &err));
	for (size_t i = 0; rw && i < sizeof(t) / sizeof(*t); i++) {
		struct dbtp_gt_rw_stats st;
		FILE *tf = fopen("/dev/null", "w"),
		     *sf = fopen("/dev/null", "w");
		uint32_t nbytes = 0;

		for (int k = 0; k < t[i].n; k++)
			nbytes += t[i].sizes[k];
		CHECK(!dbtp_gt_rw_block(rw, 3, t[i].bytes, nbytes, t[i].n,
					t[i].sizes, 0x401000, tf, sf, &st,
					&err));
		fclose(tf);
		fclose(sf);
		CHECK_EQ(st.chase, t[i].chase);
	}
	dbtp_gt_rw_close(rw);
}

static void test_loader(void)
{
	CHECK(dbtp_gt_is_loader("/lib64/ld-linux-x86-64.so.2"));
	CHECK(dbtp_gt_is_loader("/usr/lib/ld-linux-aarch64.so.1"));
	CHECK(dbtp_gt_is_loader("/lib/ld-musl-x86_64.so.1"));
	CHECK(dbtp_gt_is_loader("ld.so"));
	CHECK(!dbtp_gt_is_loader("/lib/x86_64-linux-gnu/libc.so.6"));
	CHECK(!dbtp_gt_is_loader("/usr/bin/ld"));
	CHECK(!dbtp_gt_is_loader("/opt/ld-linux/bin/prog"));
	CHECK(!dbtp_gt_is_loader(NULL));
}

static void test_vstats(void)
{
	double o[] = {10, 20, 30, 15}, g[] = {1, 2.2, 2.7, 1.5};
	double o2[] = {1, 2, 3}, g2[] = {3, 2, 1}, g3[] = {1, 1, 1};
	struct dbtp_gt_vstats v;
	dbtp_err err = {0};

	CHECK(!dbtp_gt_vstats(o, g, 4, &v, &err));
	CHECK_NEAR(v.ratio_orig[2], 3);
	CHECK_NEAR(v.ratio_gen[1], 2.2);
	CHECK_NEAR(v.error[0], 0);
	CHECK_NEAR(v.error[1], 0.1);
	CHECK_NEAR(v.error[2], 0.1);
	CHECK_NEAR(v.error[3], 0);
	CHECK_NEAR(v.mean_error, 0.2 / 3);
	CHECK_NEAR(v.spearman, 1);
	CHECK_NEAR(v.speedup, 75 / 7.4);
	dbtp_gt_vstats_free(&v);
	/* reversed order: -1; no spread: NAN */
	CHECK(!dbtp_gt_vstats(o2, g2, 3, &v, &err));
	CHECK_NEAR(v.spearman, -1);
	dbtp_gt_vstats_free(&v);
	CHECK(!dbtp_gt_vstats(o2, g3, 3, &v, &err));
	CHECK(isnan(v.spearman));
	CHECK_NEAR(v.mean_error, (0.5 + 2.0 / 3) / 2);
	dbtp_gt_vstats_free(&v);
	/* ties share their mean rank: ranks 1.5 1.5 3 against 1 2 3 */
	{
		double a[] = {1, 1, 2}, b[] = {1, 2, 3};

		CHECK(!dbtp_gt_vstats(a, b, 3, &v, &err));
		CHECK_NEAR(v.spearman, sqrt(3) / 2);
		dbtp_gt_vstats_free(&v);
	}
	CHECK(dbtp_gt_vstats(o, g, 0, &v, &err) == -1);
	g3[1] = 0;
	CHECK(dbtp_gt_vstats(o2, g3, 3, &v, &err) == -1);
	/* round by round: ratios 3 and 2 against 3.3 and 3; a time of 0
	 * counts as a microsecond */
	{
		double b0[] = {1, 2, 0}, b[] = {3, 4, 2e-6}, c0[] = {1, 1, 1},
		       c[] = {3.3, 3, 4};

		CHECK_NEAR(dbtp_gt_round_error(b, b0, c, c0, 0), 0.1);
		CHECK_NEAR(dbtp_gt_round_error(b, b0, c, c0, 1), 0.5);
		CHECK_NEAR(dbtp_gt_round_error(b, b0, c, c0, 2), 1);
	}
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_fit();
	test_groups();
	test_distribution();
	test_serial();
	test_points();
	test_rejects();
	test_tricky();
	test_sequence_copies();
	test_points_program();
	test_closing();
	test_stack_budget();
	test_stack_resets();
	test_loader();
	test_reads();
	test_cold();
	test_cold_btype();
	test_predictor();
	test_fp_exact();
	test_chase();
	test_vstats();
	snprintf(cmd, sizeof(cmd), "%s %s",
		 getenv("GT_KEEP") ? "true" : "rm -rf", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return T_DONE();
}

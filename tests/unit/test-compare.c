/* SPDX-License-Identifier: MIT */
/*
 * test-compare.c - dbtp_compare() on synthetic traces made with the writer:
 * a divergence planted at instruction 12,345 of thread 1 is found exactly
 * there, although B cuts the code into blocks differently, the two files
 * order their threads' chunks differently, and the divergence falls inside
 * a block; the same with a tiny queue limit (threads put off to later
 * passes); the syscalls before it, including histories that have to be read
 * again; a thread present in A only; the hints; identical traces.
 */
#include <stdlib.h>
#include <unistd.h>

#include "dbtp/compare.h"
#include "t.h"

#define NB 8		/* blocks of the synthetic program */
#define BASE 0x400000u	/* block i at BASE + i * 0x100 */
#define ZADDR 0x500000u /* where B goes at the divergence */
#define SPLIT 3		/* B cuts blocks of 6+ insns after 3 insns */
#define PLANT 12345	/* the divergence, in thread 1's instructions */

static uint32_t ninsns(int i)
{
	return 3 + (uint32_t)i;
}

static uint8_t isize(int i, uint32_t k)
{
	if (i == 5 && k == 1)
		return 2; /* cpuid */
	return (uint8_t)(1 + (i + (int)k) % 4);
}

static uint64_t ioff(int i, uint32_t k)
{
	uint64_t o = 0;

	for (uint32_t q = 0; q < k; q++)
		o += isize(i, q);
	return o;
}

struct gen {
	dbtp_writer *w;
	int b;			  /* writing trace B */
	uint32_t ids[NB][11][11]; /* + 1: block i, insns [start, start+n) */
	uint32_t z;
	dbtp_err err;
};

/* The block of instructions [start, start + n) of program block i. */
static uint32_t part(struct gen *g, int i, uint32_t start, uint32_t n)
{
	uint8_t sizes[16], bytes[64];
	uint32_t nb = 0, id;

	if (g->ids[i][start][n])
		return g->ids[i][start][n] - 1;
	for (uint32_t k = 0; k < n; k++) {
		sizes[k] = isize(i, start + k);
		for (uint32_t q = 0; q < sizes[k]; q++)
			bytes[nb + q] = 0x90;
		if (i == 5 && start + k == 1) {
			bytes[nb] = 0x0f;
			bytes[nb + 1] = 0xa2;
		}
		nb += sizes[k];
	}
	CHECK(!dbtp_writer_block(g->w, BASE + i * 0x100u + ioff(i, start), n,
				 sizes, bytes, 0, 0, &id, &g->err));
	g->ids[i][start][n] = id + 1;
	return id;
}

/* Execute the first @n instructions of program block i (all: n = ~0). */
static uint64_t run(struct gen *g, uint32_t th, int i, uint32_t n)
{
	uint32_t all = ninsns(i);
	uint64_t blocks = 0;

	if (n > all)
		n = all;
	if (!g->b || all < 6) {
		CHECK(!dbtp_writer_exec(g->w, th, part(g, i, 0, n), &g->err));
		return 1;
	}
	CHECK(!dbtp_writer_exec(g->w, th, part(g, i, 0, n < SPLIT ? n : SPLIT),
				&g->err));
	blocks++;
	if (n > SPLIT) {
		CHECK(!dbtp_writer_exec(g->w, th, part(g, i, SPLIT, n - SPLIT),
					&g->err));
		blocks++;
	}
	return blocks;
}

static void sys(struct gen *g, uint32_t th, int64_t nr, uint64_t a0,
		int64_t ret)
{
	uint64_t args[6] = {a0, 2, 3, 4, 5, 6};

	CHECK(!dbtp_writer_syscall(g->w, th, nr, args, &g->err));
	CHECK(!dbtp_writer_sysret(g->w, th, nr, ret, &g->err));
}

/* Thread 0: the cycle of blocks, a getpid every 11 blocks. */
static void thread0(struct gen *g, int from, int to)
{
	for (int n = from; n < to; n++) {
		run(g, 0, n % NB, ~0u);
		if (n % 11 == 10)
			sys(g, 0, 39, (uint64_t)n, 77);
	}
}

struct expect {
	uint64_t a_addr, a_block_index, b_block_index, sys_before;
	uint32_t a_insn_in_block;
};

/*
 * Thread 1: the cycle with a getpid every 7 blocks, up to the block holding
 * instruction PLANT; a read just before it returns 100 in A, 200 in B.  A
 * goes on with the cycle; B runs the block's instructions before PLANT,
 * then jumps to ZADDR.
 */
static void thread1(struct gen *g, struct expect *e)
{
	uint64_t insns = 0, blocks = 0, nsys = 0;
	int n = 0, i;

	for (;; n++) {
		i = n % NB;
		if (insns + ninsns(i) > PLANT)
			break;
		blocks += run(g, 1, i, ~0u);
		insns += ninsns(i);
		if (n % 7 == 6) {
			sys(g, 1, 39, (uint64_t)n, 4242);
			nsys++;
		}
	}
	sys(g, 1, 0, 3, g->b ? 200 : 100);
	nsys++;
	e->sys_before = nsys;
	e->a_insn_in_block = (uint32_t)(PLANT - insns);
	e->a_addr = BASE + i * 0x100u + ioff(i, e->a_insn_in_block);
	if (!g->b) {
		e->a_block_index = blocks;
		for (int k = 0; k < 1000; k++, n++) {
			run(g, 1, n % NB, ~0u);
			if (n % 7 == 6)
				sys(g, 1, 39, (uint64_t)n, 4242);
		}
		return;
	}
	if (PLANT > insns)
		blocks += run(g, 1, i, (uint32_t)(PLANT - insns));
	e->b_block_index = blocks;
	CHECK(!dbtp_writer_exec(g->w, 1, g->z, &g->err));
	for (int k = 0; k < 500; k++, n++) {
		run(g, 1, (n + 3) % NB, ~0u);
		if (n % 7 == 6)
			sys(g, 1, 1, (uint64_t)n, 1);
	}
}

static void make(const char *path, int b, struct expect *e)
{
	struct gen g = {.b = b};
	uint8_t zs[4] = {1, 1, 1, 1}, zb[4] = {0x90, 0x90, 0x90, 0xc3};

	CHECK(!dbtp_writer_open(&g.w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS,
				256, &g.err));
	CHECK(!dbtp_writer_info(g.w, "command", "synthetic", &g.err));
	CHECK(!dbtp_writer_info(g.w, "cpu", b ? "max" : "qemu64", &g.err));
	CHECK(!dbtp_writer_block(g.w, ZADDR, 4, zs, zb, 0, 0, &g.z, &g.err));
	if (!b) {
		/* A: thread 0 whole, then thread 1, then thread 2. */
		thread0(&g, 0, 3000);
		thread1(&g, e);
		for (int n = 0; n < 50; n++)
			run(&g, 2, n % NB, ~0u);
	} else {
		/* B: one block of thread 0 (numbers threads), thread 1
		 * whole, then the rest of thread 0: chunks in another order. */
		thread0(&g, 0, 1);
		thread1(&g, e);
		thread0(&g, 1, 3000);
	}
	CHECK(!dbtp_writer_close(g.w, 0, &g.err));
}

static void check_planted(const struct dbtp_cmp *c, const struct expect *e)
{
	const struct dbtp_cmp_thread *t1;
	const struct dbtp_cmp_point *a, *b;
	struct dbtp_cmp_hint h[DBTP_CMP_MAX_HINTS];
	unsigned nh;

	CHECK_EQ(c->nthreads, 3);
	CHECK_EQ(c->diverged, 2);
	if (c->nthreads != 3)
		return;
	/* Thread 0: same instructions, blocks cut differently. */
	CHECK(!c->threads[0].diverged);
	CHECK_EQ(c->threads[0].insns[0], c->threads[0].insns[1]);
	CHECK(c->threads[0].blocks[0] < c->threads[0].blocks[1]);
	/* Thread 1: exactly at the planted instruction. */
	t1 = &c->threads[1];
	a = &t1->at[0];
	b = &t1->at[1];
	CHECK(t1->diverged);
	CHECK_EQ(t1->insn, PLANT);
	CHECK(!a->ended && !b->ended);
	CHECK_EQ(a->addr, e[0].a_addr);
	CHECK_EQ(a->insn_in_block, e[0].a_insn_in_block);
	CHECK_EQ(a->block_index, e[0].a_block_index);
	CHECK_EQ(b->addr, ZADDR);
	CHECK_EQ(b->insn_in_block, 0);
	CHECK_EQ(b->block_index, e[1].b_block_index);
	CHECK(e[0].a_insn_in_block > 0); /* inside a block, as planted */
	/* The syscalls before it: the read last, 100 in A, 200 in B. */
	CHECK_EQ(a->sys_before, e[0].sys_before);
	CHECK_EQ(b->sys_before, e[1].sys_before);
	CHECK_EQ(a->nsys, 5);
	CHECK_EQ(b->nsys, 5);
	if (a->nsys == 5 && b->nsys == 5) {
		CHECK_EQ(a->sys[4].sysno, 0);
		CHECK_EQ(a->sys[4].ret, 100);
		CHECK_EQ(b->sys[4].ret, 200);
		CHECK_EQ(a->sys[4].index, e[0].sys_before - 1);
		CHECK_EQ(b->sys[3].sysno, 39);
		CHECK_EQ(b->sys[3].ret, 4242);
		CHECK_EQ(a->sys[3].args[0], b->sys[3].args[0]);
		CHECK(a->sys[4].insn <= PLANT);
	}
	/* The last common blocks end at the divergence. */
	CHECK(t1->ncommon >= 5);
	if (t1->ncommon) {
		const struct dbtp_cmp_common *l = &t1->common[t1->ncommon - 1];

		CHECK_EQ(l->insn + l->ninsns, PLANT);
	}
	/* Thread 2 ran in A only. */
	CHECK(c->threads[2].diverged);
	CHECK(c->threads[2].present[0] && !c->threads[2].present[1]);
	CHECK_EQ(c->threads[2].insn, 0);
	CHECK(c->threads[2].at[1].ended && !c->threads[2].at[0].ended);
	CHECK_EQ(c->threads[2].at[0].addr, BASE);
	/* Hints: the read's result, then the CPU (cpuid ran just before). */
	CHECK(dbtp_compare_first(c) == t1);
	nh = dbtp_compare_hints(c, NULL, h);
	CHECK(nh >= 2);
	if (nh >= 2) {
		CHECK_STR(h[0].cause, "syscall");
		CHECK(h[0].likely);
		CHECK(strstr(h[0].text, "read") && strstr(h[0].text, "100") &&
		      strstr(h[0].text, "200") && strstr(h[0].text, "I/O"));
		CHECK_STR(h[1].cause, "cpu");
		CHECK(strstr(h[1].text, "cpuid") && strstr(h[1].text, "IFUNC"));
	}
}

int main(void)
{
	char a[] = "/tmp/dbtp-test-compare-a.XXXXXX";
	char b[] = "/tmp/dbtp-test-compare-b.XXXXXX";
	struct expect e[2] = {{0}};
	struct dbtp_cmp *c;
	struct dbtp_cmp_opts o = {0};
	dbtp_err err = {0};
	int fa = mkstemp(a), fb = mkstemp(b);

	CHECK(fa >= 0 && fb >= 0);
	close(fa);
	close(fb);
	make(a, 0, &e[0]);
	make(b, 1, &e[1]);

	/* One pass: the queues absorb the different chunk orders. */
	CHECK(!dbtp_compare(&c, a, b, NULL, &err));
	if (c) {
		CHECK_EQ(c->passes, 1);
		check_planted(c, e);
		dbtp_compare_free(c);
	}

	/* A tiny queue limit: threads are put off to later passes and the
	 * syscall history is read again; the answer must not change. */
	o.max_queued = 64;
	CHECK(!dbtp_compare(&c, a, b, &o, &err));
	if (c) {
		CHECK(c->passes > 1);
		check_planted(c, e);
		dbtp_compare_free(c);
	}

	/* A trace against itself. */
	CHECK(!dbtp_compare(&c, a, a, &o, &err));
	if (c) {
		CHECK_EQ(c->diverged, 0);
		CHECK(!dbtp_compare_first(c));
		dbtp_compare_free(c);
	}

	/* Not a trace. */
	CHECK(dbtp_compare(&c, a, "/proc/self/status", NULL, &err) < 0);
	CHECK(strstr(err.msg, "not a") != NULL);
	CHECK(dbtp_compare(&c, a, "/dev/null", NULL, &err) < 0);
	CHECK(strstr(err.msg, "not a regular file") != NULL);

	unlink(a);
	unlink(b);
	return T_DONE();
}

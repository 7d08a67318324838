/* SPDX-License-Identifier: MIT */
/*
 * test-cycles.c - the pipeline model on hand-checked streams, with a
 * hand-made timing table (no LLVM): a dependent chain (n x latency + 3, as
 * llvm-mca counts), independent instructions bound by one port, by a group
 * of four and by the dispatch width, a store followed by a load of the same
 * or other bytes under each aliasing rule, mulq and vhaddps competing for
 * port 5, block cycles adding up to the total, defaults for unknown forms,
 * memory events that do not match, and threads; the branch predictor's
 * conditional, return-stack and indirect predictions and its penalty;
 * memory renaming; rep strings at the string bandwidth.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/cycles.h"
#include "t.h"

/* Resource columns of the hand-made CPU (llvm-mca's Skylake names). */
enum { DIV, FPDIV, P0, P1, P2, P3, P4, P5, P6, P7, NRES };
#define BIT(r) (1ull << (r))

static const uint8_t IMUL_RAX[] = {0x48, 0x0f, 0xaf, 0xc0}; /* imul rax,rax */
static const uint8_t IMUL_RCX[] = {0x48, 0x0f, 0xaf, 0xc9}; /* imul rcx,rcx */
static const uint8_t MOV_EAX[] = {0xb8, 1, 0, 0, 0};	    /* mov eax, 1 */
static const uint8_t MOV_ECX[] = {0xb9, 1, 0, 0, 0};	    /* mov ecx, 1 */
static const uint8_t MULQ[] = {0x48, 0xf7, 0xe3};	    /* mul rbx */
static const uint8_t VHADD1[] = {0xc5, 0xfb, 0x7c, 0xc8};   /* xmm1=h(xmm0) */
static const uint8_t VHADD2[] = {0xc5, 0xfb, 0x7c, 0xd0};   /* xmm2=h(xmm0) */
static const uint8_t STORE[] = {0x48, 0x89, 0x0f};	    /* mov [rdi],rcx */
static const uint8_t LOAD[] = {0x48, 0x8b, 0x06};	    /* mov rax,[rsi] */
static const uint8_t ADD[] = {0x48, 0x01, 0xd8};	    /* add rax, rbx */

struct enc {
	const uint8_t *b;
	unsigned n;
};
#define E(x)                                                                   \
	{                                                                      \
		x, sizeof(x)                                                   \
	}

static void cpu(struct dbtp_cpu_params *p, unsigned dispatch)
{
	static const char *const names[NRES] = {
	    "SKLDivider", "SKLFPDivider", "SKLPort0", "SKLPort1", "SKLPort2",
	    "SKLPort3",	  "SKLPort4",	  "SKLPort5", "SKLPort6", "SKLPort7"};

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "test");
	p->dispatch = dispatch;
	p->rob = 224;
	p->sched = 60;
	p->nres = NRES;
	for (int i = 0; i < NRES; i++)
		snprintf(p->res[i], sizeof(p->res[i]), "%s", names[i]);
	p->alu = BIT(P0) | BIT(P1) | BIT(P5) | BIT(P6);
}

static void set(dbtp_timing *t, const uint8_t *b, unsigned n, unsigned uops,
		unsigned lat, unsigned flags, int nuse, ...)
{
	struct dbtp_form_timing ft = {0};
	dbtp_err err = {0};
	va_list ap;

	ft.uops = (uint16_t)uops;
	ft.latency = (uint16_t)lat;
	ft.flags = (uint8_t)flags;
	ft.nuse = (uint8_t)nuse;
	va_start(ap, nuse);
	for (int i = 0; i < nuse; i++) {
		ft.use[i].mask = va_arg(ap, uint64_t);
		ft.use[i].cycles = (uint16_t)va_arg(ap, unsigned);
	}
	va_end(ap);
	CHECK(!dbtp_timing_set(t, b, n, &ft, &err));
}

static dbtp_timing *table(unsigned dispatch, uint64_t mov_ports)
{
	struct dbtp_cpu_params p;
	dbtp_timing *t = NULL;
	dbtp_err err = {0};

	cpu(&p, dispatch);
	CHECK(!dbtp_timing_new(&t, DBTP_ARCH_X86_64, &p, &err));
	if (!t) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	/* Skylake's figures from llvm-mca 14. */
	set(t, IMUL_RAX, 4, 1, 3, 0, 1, BIT(P1), 1u);
	set(t, IMUL_RCX, 4, 1, 3, 0, 1, BIT(P1), 1u);
	set(t, MOV_EAX, 5, 1, 1, 0, 1, mov_ports, 1u);
	set(t, MOV_ECX, 5, 1, 1, 0, 1, mov_ports, 1u);
	set(t, MULQ, 3, 2, 4, 0, 2, BIT(P1), 1u, BIT(P5), 1u);
	set(t, VHADD1, 4, 3, 6, 0, 2, BIT(P5), 2u, BIT(P0) | BIT(P1), 1u);
	set(t, VHADD2, 4, 3, 6, 0, 2, BIT(P5), 2u, BIT(P0) | BIT(P1), 1u);
	set(t, STORE, 3, 1, 1, DBTP_FORM_STORE, 1, BIT(P4), 1u);
	set(t, LOAD, 3, 1, 5, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	return t;
}

struct mem {
	uint64_t addr;
	int store;
	unsigned size; /* 0: 8 */
};

/* One execution of a block of @n instructions from @seq (cycled through
 * @nseq) with memory events @m, as block @id. */
static void exec(dbtp_cycles *c, uint32_t id, const struct enc *seq,
		 unsigned nseq, unsigned n, const struct mem *m, unsigned nm)
{
	static uint8_t bytes[8192], sizes[1024];
	struct dbtp_block b = {0};
	struct dbtp_event ev = {0};
	dbtp_err err = {0};
	uint32_t off = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct enc *e = &seq[i % nseq];

		memcpy(bytes + off, e->b, e->n);
		sizes[i] = (uint8_t)e->n;
		off += e->n;
	}
	b.id = id;
	b.ninsns = n;
	b.nbytes = off;
	b.vaddr = 0x401000 + 0x1000 * id;
	b.sizes = sizes;
	b.bytes = bytes;
	ev.type = DBTP_EV_BLOCK;
	ev.block = &b;
	CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
	for (unsigned i = 0; i < nm; i++) {
		struct dbtp_event me = {0};

		me.type = DBTP_EV_MEM;
		me.block = &b;
		me.addr = m[i].addr;
		me.size = m[i].size ? m[i].size : 8;
		me.mem_flags = m[i].store ? DBTP_ACCESS_STORE : 0;
		CHECK(!dbtp_cycles_event(c, NULL, &me, &err));
	}
	/* time it now (the model times a block when the next arrives) */
	CHECK(!dbtp_cycles_finish(c, &err));
}

static dbtp_cycles *model(dbtp_timing *t, enum dbtp_alias a)
{
	struct dbtp_cycles_opts o = {.alias = a};
	dbtp_cycles *c = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_cycles_new(&c, t, DBTP_ARCH_X86_64, &o, &err));
	if (!c) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	return c;
}

static uint64_t cycles_of(dbtp_timing *t, const struct enc *seq, unsigned nseq,
			  unsigned n)
{
	dbtp_cycles *c = model(t, DBTP_ALIAS_NONE);
	struct dbtp_cycles_counts tot;

	exec(c, 0, seq, nseq, n, NULL, 0);
	dbtp_cycles_total(c, &tot);
	CHECK_EQ(tot.insns, n);
	dbtp_cycles_free(c);
	return tot.cycles;
}

/* imul rax, rax x 100: each waits for the last, latency 3: issue at
 * 1 + 3i, the last executes at 301, retires at 302: 303 cycles, as
 * llvm-mca counts a chain (3 x 12 + 3 = 39 for 12). */
static void test_chain(void)
{
	dbtp_timing *t = table(6, BIT(P0));
	static const struct enc s[] = {E(IMUL_RAX)};
	dbtp_cycles *c;
	const struct dbtp_cycles_counts *k;

	CHECK_EQ(cycles_of(t, s, 1, 100), 303);
	CHECK_EQ(cycles_of(t, s, 1, 12), 39);
	/* The chain goes on from one block to the next, and the blocks'
	 * shares add up to the total. */
	c = model(t, DBTP_ALIAS_NONE);
	{
		struct dbtp_event ev = {0};
		struct dbtp_block b = {0};
		uint8_t bytes[400], sizes[100];
		dbtp_err err = {0};

		for (int i = 0; i < 100; i++) {
			memcpy(bytes + 4 * i, IMUL_RAX, 4);
			sizes[i] = 4;
		}
		b.ninsns = 100;
		b.nbytes = 400;
		b.sizes = sizes;
		b.bytes = bytes;
		b.vaddr = 0x1000;
		ev.type = DBTP_EV_BLOCK;
		ev.block = &b;
		CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
		CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
		CHECK(!dbtp_cycles_finish(c, &err));
	}
	k = dbtp_cycles_thread(c, 0);
	CHECK(k != NULL);
	CHECK_EQ(k->cycles, 603);
	CHECK_EQ(k->insns, 200);
	CHECK_EQ(k->blocks, 2);
	CHECK_EQ(k->res[P1], 200);
	CHECK_EQ(dbtp_cycles_nblocks(c), 1);
	CHECK_EQ(dbtp_cycles_block(c, 0)->execs, 2);
	CHECK_EQ(dbtp_cycles_block(c, 0)->cycles, 603);
	CHECK(k->stall[DBTP_STALL_REG] > 0);
	CHECK_EQ(k->stall[DBTP_STALL_PORT], 0);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
}

/* Independent moves: 100 on one port take 100 cycles (issue 1..100, the
 * last retires at 102: 103); on a group of four, 25 (28); with a dispatch
 * width of 2, dispatch is the bound: 50 cycles of dispatch, 53. */
static void test_bounds(void)
{
	static const struct enc s[] = {E(MOV_EAX), E(MOV_ECX)};
	dbtp_timing *t = table(6, BIT(P0));
	dbtp_cycles *c;
	const struct dbtp_cycles_counts *k;

	CHECK_EQ(cycles_of(t, s, 2, 100), 103);
	c = model(t, DBTP_ALIAS_NONE);
	exec(c, 0, s, 2, 100, NULL, 0);
	k = dbtp_cycles_thread(c, 0);
	CHECK_EQ(k->res[P0], 100);
	/* 100 on one port, 6 dispatched a cycle, 60 scheduler entries: the
	 * scheduler fills and holds dispatch */
	CHECK(k->stall[DBTP_STALL_SCHED] > 0);
	CHECK(k->stall[DBTP_STALL_PORT] > 0);
	CHECK_EQ(k->stall[DBTP_STALL_REG], 0);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);

	t = table(6, BIT(P0) | BIT(P1) | BIT(P5) | BIT(P6));
	CHECK_EQ(cycles_of(t, s, 2, 100), 28);
	c = model(t, DBTP_ALIAS_NONE);
	exec(c, 0, s, 2, 100, NULL, 0);
	k = dbtp_cycles_thread(c, 0);
	/* spread evenly over the group */
	CHECK_EQ(k->res[P0], 25);
	CHECK_EQ(k->res[P1], 25);
	CHECK_EQ(k->res[P5], 25);
	CHECK_EQ(k->res[P6], 25);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);

	t = table(2, BIT(P0) | BIT(P1) | BIT(P5) | BIT(P6));
	CHECK_EQ(cycles_of(t, s, 2, 100), 53);
	dbtp_timing_free(t);
}

/*
 * imul rcx, rcx (executes 1-3); mov [rdi], rcx (waits for rcx: 4, done
 * 5); mov rax, [rsi] (5 cycles).  If the load reads the stored bytes it
 * issues at 5, done 10, retires 11: 12 cycles; if not, it issues at 1 and
 * retires after the store: 8.
 */
static void test_alias(void)
{
	static const struct enc s[] = {E(IMUL_RCX), E(STORE), E(LOAD)};
	static const struct mem same[] = {{0x5000, 1, 0}, {0x5000, 0, 0}};
	static const struct mem other[] = {{0x5000, 1, 0}, {0x5040, 0, 0}};
	static const struct mem part[] = {{0x5000, 1, 0}, {0x5004, 0, 0}};
	dbtp_timing *t = table(6, BIT(P0));
	struct {
		enum dbtp_alias a;
		const struct mem *m;
		uint64_t cycles, deps;
	} cases[] = {
	    {DBTP_ALIAS_ADDR, same, 12, 1}, {DBTP_ALIAS_ADDR, other, 8, 0},
	    {DBTP_ALIAS_ADDR, part, 12, 1}, {DBTP_ALIAS_NONE, same, 8, 0},
	    {DBTP_ALIAS_ALL, other, 12, 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		dbtp_cycles *c = model(t, cases[i].a);
		const struct dbtp_cycles_counts *k;

		exec(c, 0, s, 3, 3, cases[i].m, 2);
		k = dbtp_cycles_thread(c, 0);
		CHECK_EQ(k->cycles, cases[i].cycles);
		CHECK_EQ(k->mem_deps, cases[i].deps);
		CHECK_EQ(k->loads, 1);
		CHECK_EQ(k->stores, 1);
		CHECK_EQ(k->mem_mismatch, 0);
		CHECK_EQ(k->stall[DBTP_STALL_MEM], cases[i].deps ? 4 : 0);
		dbtp_cycles_free(c);
	}
	/* No MEM events for a block with a store and a load: a mismatch,
	 * no ordering. */
	{
		dbtp_cycles *c = model(t, DBTP_ALIAS_ADDR);

		exec(c, 0, s, 3, 3, NULL, 0);
		CHECK_EQ(dbtp_cycles_thread(c, 0)->mem_mismatch, 1);
		CHECK_EQ(dbtp_cycles_thread(c, 0)->cycles, 8);
		dbtp_cycles_free(c);
	}
	dbtp_timing_free(t);
}

/*
 * mulq (port 1 + port 5, a chain through rax of latency 4) and vhaddps
 * (2 cycles of port 5): 100 mulq take 4 per instruction (403); 200
 * independent vhaddps 2 each on port 5; interleaved one mulq with two
 * vhaddps, port 5 needs 5 cycles per mulq and becomes the bound.
 */
static void test_port5(void)
{
	static const struct enc mul[] = {E(MULQ)};
	static const struct enc hadd[] = {E(VHADD1), E(VHADD2)};
	static const struct enc mix[] = {E(MULQ), E(VHADD1), E(VHADD2)};
	dbtp_timing *t = table(6, BIT(P0));
	uint64_t a, b, m;

	a = cycles_of(t, mul, 1, 100);
	b = cycles_of(t, hadd, 2, 200);
	m = cycles_of(t, mix, 3, 300);
	CHECK_EQ(a, 403);
	/* port 5 busy 400 cycles from cycle 1; the last executes 6 more */
	CHECK_EQ(b, 399 + 6 + 2);
	CHECK(m >= 500);
	CHECK(m <= 500 + 10);
	dbtp_timing_free(t);
}

/* A form missing from a hand-made table gets the defaults. */
static void test_defaults(void)
{
	static const struct enc s[] = {E(ADD)};
	dbtp_timing *t = table(6, BIT(P0));
	struct dbtp_timing_stats st;
	const struct dbtp_form_timing *ft;

	/* add rax, rbx x 10: a chain of latency 1: 10 + 3 */
	CHECK_EQ(cycles_of(t, s, 1, 10), 13);
	ft = dbtp_timing_get(t, ADD, sizeof(ADD));
	CHECK(ft != NULL);
	CHECK(ft && (ft->flags & DBTP_FORM_DEFAULT));
	CHECK(ft && ft->latency == 1 && ft->uops == 1 && ft->nuse == 1);
	CHECK(ft && ft->use[0].mask == (BIT(P0) | BIT(P1) | BIT(P5) | BIT(P6)));
	dbtp_timing_stats(t, &st);
	CHECK_EQ(st.forms, 10);
	CHECK_EQ(st.defaults, 1);
	CHECK_EQ(st.llvm_runs, 0);
	dbtp_timing_free(t);
}

/* Threads: one pipeline each, cycles add up; an ended thread keeps its
 * counts (its buffers are freed) and may even be fed again. */
static void test_threads(void)
{
	dbtp_timing *t = table(6, BIT(P0));
	dbtp_cycles *c = model(t, DBTP_ALIAS_NONE);
	struct dbtp_event ev = {0};
	struct dbtp_block b = {0};
	struct dbtp_cycles_counts tot;
	uint8_t bytes[40], sizes[10];
	dbtp_err err = {0};

	for (int i = 0; i < 10; i++) {
		memcpy(bytes + 4 * i, IMUL_RAX, 4);
		sizes[i] = 4;
	}
	b.ninsns = 10;
	b.nbytes = 40;
	b.sizes = sizes;
	b.bytes = bytes;
	b.vaddr = 0x1000;
	ev.block = &b;
	for (uint32_t th = 0; th < 2; th++) {
		ev.type = DBTP_EV_BLOCK;
		ev.thread = th;
		CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
	}
	ev.type = DBTP_EV_THREAD_EXIT;
	ev.thread = 0;
	CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
	CHECK_EQ(dbtp_cycles_thread(c, 0)->cycles, 33);
	CHECK_EQ(dbtp_cycles_thread(c, 0)->insns, 10);
	/* fed again after its end: a drained pipeline, the chain goes on */
	ev.type = DBTP_EV_BLOCK;
	CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
	CHECK(!dbtp_cycles_finish(c, &err));
	CHECK_EQ(dbtp_cycles_thread(c, 0)->insns, 20);
	CHECK(dbtp_cycles_thread(c, 0)->cycles >= 63);
	CHECK_EQ(dbtp_cycles_thread(c, 1)->cycles, 33);
	CHECK_EQ(dbtp_cycles_nthreads(c), 2);
	dbtp_cycles_total(c, &tot);
	CHECK_EQ(tot.cycles, dbtp_cycles_thread(c, 0)->cycles + 33);
	CHECK_EQ(tot.insns, 30);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
}

static void test_errors(void)
{
	struct dbtp_cpu_params p;
	dbtp_timing *t = NULL;
	dbtp_err err = {0};
	struct dbtp_timing_opts o = {.cpu = "no such cpu",
				     .arch = DBTP_ARCH_X86_64};

	cpu(&p, 0);
	CHECK(dbtp_timing_new(&t, DBTP_ARCH_X86_64, &p, &err) == -1);
	CHECK(strstr(err.msg, "dispatch width") != NULL);
	CHECK(dbtp_timing_open(&t, &o, &err) == -1);
	CHECK_STR(err.msg, "'no such cpu' is not a CPU name");
	o.cpu = "skylake";
	o.arch = DBTP_ARCH_UNKNOWN;
	CHECK(dbtp_timing_open(&t, &o, &err) == -1);
	CHECK_STR(err.msg, "no CPU models for architecture unknown");
	CHECK_STR(dbtp_stall_name(DBTP_STALL_MEM), "memory dependency");
}

/* --- branch prediction --------------------------------------------------- */

static const uint8_t JNE[] = {0x75, 0x00};	  /* jne .+2 */
static const uint8_t CALL[] = {0xe8, 0, 0, 0, 0}; /* call rel32 */
static const uint8_t RET[] = {0xc3};		  /* ret */
static const uint8_t JMP_RAX[] = {0xff, 0xe0};	  /* jmp rax */
static const uint8_t NOP[] = {0x90};		  /* nop */

/* A model with the branch predictor @kind (DBTP_BPRED_*) and a penalty of
 * @penalty. */
static dbtp_cycles *bp_model_of(dbtp_timing *t, unsigned penalty, int kind)
{
	struct dbtp_cycles_opts o = {.alias = DBTP_ALIAS_NONE,
				     .bpred = kind,
				     .mispredict_penalty = penalty};
	dbtp_cycles *c = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_cycles_new(&c, t, DBTP_ARCH_X86_64, &o, &err));
	if (!c) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	return c;
}

static dbtp_cycles *bp_model(dbtp_timing *t, unsigned penalty)
{
	return bp_model_of(t, penalty, DBTP_BPRED_GSHARE);
}

/* One execution of the one-instruction block @id = @code at @vaddr (the
 * model times it when the next block arrives, so its successor decides
 * the branch's outcome). */
static void one(dbtp_cycles *c, uint32_t id, uint64_t vaddr,
		const uint8_t *code, unsigned n)
{
	static uint8_t bytes[16], size;
	struct dbtp_block b = {0};
	struct dbtp_event ev = {0};
	dbtp_err err = {0};

	memcpy(bytes, code, n);
	size = (uint8_t)n;
	b.id = id;
	b.ninsns = 1;
	b.nbytes = n;
	b.vaddr = vaddr;
	b.sizes = &size;
	b.bytes = bytes;
	ev.type = DBTP_EV_BLOCK;
	ev.block = &b;
	CHECK(!dbtp_cycles_event(c, NULL, &ev, &err));
}

static struct dbtp_cycles_counts bp_total(dbtp_cycles *c)
{
	struct dbtp_cycles_counts tot;
	dbtp_err err = {0};

	CHECK(!dbtp_cycles_finish(c, &err));
	dbtp_cycles_total(c, &tot);
	return tot;
}

/*
 * A loop branch at 0x500000 (its low 14 bits 0, so its counter index is
 * the history) taken 20 times, then not taken.  gshare: outcome k (from
 * 0) sees history 2^k - 1 (k ones) up to k = 14, all ones after: the
 * first 15 each meet a fresh counter (weakly not taken: mispredicted),
 * the 16th the counter the 15th raised to weakly taken, which predicts
 * taken from then on; the exit meets it saturated: mispredicted.  16 of
 * 21.  The TAGE: its base counter (index 0) starts weakly not taken, so
 * the first outcome is mispredicted; the entry then taken in a tagged
 * table is indexed by the empty history, which the loop's ones never
 * fold back to, and the base, now taken, predicts the rest up to the
 * exit: 2 of 21.
 */
static void test_bp_loop(void)
{
	static const struct {
		int kind;
		uint64_t misses;
	} want[] = {{DBTP_BPRED_GSHARE, 16}, {DBTP_BPRED_TAGE, 2}};

	for (unsigned w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		dbtp_timing *t = table(4, BIT(P0));
		dbtp_cycles *c = bp_model_of(t, 10, want[w].kind);
		struct dbtp_cycles_counts k;

		for (int i = 0; i < 21; i++)
			one(c, 1, 0x500000, JNE, sizeof(JNE));
		/* fall-through: not taken */
		one(c, 2, 0x500002, NOP, sizeof(NOP));
		k = bp_total(c);
		CHECK_EQ(k.branches[DBTP_BPK_COND], 21);
		CHECK_EQ(k.mispredicts[DBTP_BPK_COND], want[w].misses);
		CHECK_EQ(k.branches[DBTP_BPK_INDIRECT] +
			     k.branches[DBTP_BPK_RETURN],
			 0);
		dbtp_cycles_free(c);
		dbtp_timing_free(t);
	}
}

/* Conditional mispredictions of @periods passes of a loop of 40 whose
 * exit branch is taken 39 times then not (the exit falls through to a
 * block without a branch). */
static uint64_t loop40_misses(int kind, int periods)
{
	dbtp_timing *t = table(4, BIT(P0));
	dbtp_cycles *c = bp_model_of(t, 10, kind);
	uint64_t m;

	for (int p = 0; p < periods; p++) {
		for (int i = 0; i < 40; i++)
			one(c, 1, 0x500000, JNE, sizeof(JNE));
		one(c, 2, 0x500002, NOP, sizeof(NOP));
	}
	m = bp_total(c).mispredicts[DBTP_BPK_COND];
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
	return m;
}

/* Mispredictions of periods 51 to 100 of @misses(kind, periods), from the
 * difference of two runs. */
static uint64_t late_misses(uint64_t (*misses)(int, int), int kind)
{
	return misses(kind, 100) - misses(kind, 50);
}

/*
 * A pattern beyond gshare's 14 outcomes of history: once learned, gshare
 * misses every exit (39 ones before it, as before 25 of the taken
 * outcomes), the TAGE none (its 65- and 129-outcome tables see the last
 * exit).  Passes 51 to 100, from the difference of two runs.
 */
static void test_bp_tage_history(void)
{
	CHECK_EQ(late_misses(loop40_misses, DBTP_BPRED_GSHARE), 50);
	CHECK_EQ(late_misses(loop40_misses, DBTP_BPRED_TAGE), 0);
}

/* A predictor the model does not have. */
static void test_bp_kind(void)
{
	dbtp_timing *t = table(4, BIT(P0));
	struct dbtp_cycles_opts o = {.bpred = 3};
	dbtp_cycles *c = NULL;
	dbtp_err err = {0};

	CHECK(dbtp_cycles_new(&c, t, DBTP_ARCH_X86_64, &o, &err) == -1);
	CHECK(c == NULL);
	CHECK_STR(err.msg, "cycle model: no branch predictor 3");
	dbtp_timing_free(t);
}

/*
 * The cost of one misprediction: jne (1 micro-op, latency 1, port 6) at
 * 0x600000 taken to a mov at 0x700000, penalty 10.  jne dispatches at 0,
 * issues at 1, has executed at 2, retires at 3; the front end resumes at
 * 2 + 10 = 12: the mov dispatches at 12, issues at 13, executes at 14,
 * retires at 15: 16 cycles, 12 of them with dispatch held.  Without the
 * predictor the mov dispatches with the jne at 0 and retires at 3: 4.
 * Not taken, the branch is predicted (weakly not taken): 4 cycles too.
 */
static void test_bp_penalty(void)
{
	dbtp_timing *t = table(4, BIT(P0));
	dbtp_cycles *c;
	struct dbtp_cycles_counts k;

	set(t, JNE, 2, 1, 1, 0, 1, BIT(P6), 1u);
	c = bp_model(t, 10);
	one(c, 1, 0x600000, JNE, sizeof(JNE));
	one(c, 2, 0x700000, MOV_EAX, sizeof(MOV_EAX));
	k = bp_total(c);
	CHECK_EQ(k.mispredicts[DBTP_BPK_COND], 1);
	CHECK_EQ(k.cycles, 16);
	CHECK_EQ(k.stall[DBTP_STALL_BRANCH], 12);
	CHECK_EQ(dbtp_cycles_mispredict_penalty(c), 10);
	dbtp_cycles_free(c);

	c = model(t, DBTP_ALIAS_NONE);
	one(c, 1, 0x600000, JNE, sizeof(JNE));
	one(c, 2, 0x700000, MOV_EAX, sizeof(MOV_EAX));
	k = bp_total(c);
	CHECK_EQ(k.cycles, 4);
	CHECK_EQ(k.branches[DBTP_BPK_COND], 0); /* predictor off */
	dbtp_cycles_free(c);

	c = bp_model(t, 10);
	one(c, 1, 0x600000, JNE, sizeof(JNE));
	one(c, 2, 0x600002, MOV_EAX, sizeof(MOV_EAX));
	k = bp_total(c);
	CHECK_EQ(k.mispredicts[DBTP_BPK_COND], 0);
	CHECK_EQ(k.cycles, 4);
	CHECK_EQ(k.stall[DBTP_STALL_BRANCH], 0);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
}

/*
 * Return stack overflow: 40 nested direct calls (call at A_i =
 * 0x800000 + 0x100 i, returning to A_i + 5), then a ret, then at each
 * A_i + 5 (i = 40 .. 1) a ret.  The stack keeps the last 32 return
 * addresses: the first 32 returns are predicted, the next 8 find it
 * empty; the last ret ends the stream, unpredicted.  Direct calls are not
 * counted: 40 returns, 8 mispredicted.
 */
static void test_bp_ras(void)
{
	dbtp_timing *t = table(4, BIT(P0));
	dbtp_cycles *c = bp_model(t, 10);
	struct dbtp_cycles_counts k;

	for (int i = 1; i <= 40; i++)
		one(c, (uint32_t)i, 0x800000 + 0x100 * (uint64_t)i, CALL,
		    sizeof(CALL));
	one(c, 100, 0x900000, RET, sizeof(RET));
	for (int i = 40; i >= 1; i--)
		one(c, 100 + (uint32_t)i, 0x800000 + 0x100 * (uint64_t)i + 5,
		    RET, sizeof(RET));
	k = bp_total(c);
	CHECK_EQ(k.branches[DBTP_BPK_RETURN], 40);
	CHECK_EQ(k.mispredicts[DBTP_BPK_RETURN], 8);
	CHECK_EQ(k.branches[DBTP_BPK_COND] + k.branches[DBTP_BPK_INDIRECT], 0);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
}

/*
 * An indirect jump at 0xa00000 (table index = low 12 bits = 0 ^ path).
 * One target always: only the first (cold) execution misses, 1 of 50.
 * Alternating T1 = 0xb00010 and T2 = 0xc00020 (low 12 bits 0x010,
 * 0x020), path = (path << 3 ^ target) & 0xfff: the jumps see paths 0,
 * 0x010, 0x0a0, 0x510, 0x8a0, then 0x510 and 0x8a0 alternately.  The
 * first five meet empty history entries and a last target that is the
 * other one (or none): mispredicted; from the sixth on, the entries
 * trained at paths 0x510 (-> T2) and 0x8a0 (-> T1) are right: 5 of 100,
 * where a last-target table alone would miss all 100.
 */
static void test_bp_indirect(void)
{
	dbtp_timing *t = table(4, BIT(P0));
	dbtp_cycles *c = bp_model(t, 10);
	struct dbtp_cycles_counts k;

	for (int i = 0; i < 50; i++) {
		one(c, 1, 0xa00000, JMP_RAX, sizeof(JMP_RAX));
		one(c, 2, 0xb00010, NOP, sizeof(NOP));
	}
	k = bp_total(c);
	CHECK_EQ(k.branches[DBTP_BPK_INDIRECT], 50);
	CHECK_EQ(k.mispredicts[DBTP_BPK_INDIRECT], 1);
	dbtp_cycles_free(c);

	c = bp_model(t, 10);
	for (int i = 0; i < 100; i++) {
		one(c, 1, 0xa00000, JMP_RAX, sizeof(JMP_RAX));
		one(c, i % 2 ? 3 : 2, i % 2 ? 0xc00020 : 0xb00010, NOP,
		    sizeof(NOP));
	}
	k = bp_total(c);
	CHECK_EQ(k.branches[DBTP_BPK_INDIRECT], 100);
	CHECK_EQ(k.mispredicts[DBTP_BPK_INDIRECT], 5);
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
}

/* Indirect mispredictions of @periods passes of AAAAAB AAAAAC through
 * one `jmp rax` (A, B, C blocks without a branch). */
static uint64_t dispatch_misses(int kind, int periods)
{
	static const uint64_t to[3] = {0xb00010, 0xc00020, 0xd00030};
	dbtp_timing *t = table(4, BIT(P0));
	dbtp_cycles *c = bp_model_of(t, 10, kind);
	uint64_t m;

	for (int i = 0; i < periods * 12; i++) {
		unsigned k = i % 12 == 5 ? 1 : i % 12 == 11 ? 2 : 0;

		one(c, 1, 0xa00000, JMP_RAX, sizeof(JMP_RAX));
		one(c, 2 + k, to[k], NOP, sizeof(NOP));
	}
	m = bp_total(c).mispredicts[DBTP_BPK_INDIRECT];
	dbtp_cycles_free(c);
	dbtp_timing_free(t);
	return m;
}

/*
 * A dispatch whose next target depends on the sixth last: the path
 * history of the default predictor holds four targets, so AAAA is
 * followed by A, B, A and C in turn and its entry misses all four each
 * period; the ITTAGE that comes with the TAGE (4 history bits a target,
 * tables of 32 bits and more) learns the whole period.  Periods 51 to
 * 100, from the difference of two runs.
 */
static void test_bp_ittage_history(void)
{
	CHECK_EQ(late_misses(dispatch_misses, DBTP_BPRED_GSHARE), 200);
	CHECK_EQ(late_misses(dispatch_misses, DBTP_BPRED_TAGE), 0);
}

/* Indirect mispredictions of periods 51 to 60 of a random sequence of
 * @period (at most 4,096) targets out of 16 through one `jmp rax`, with
 * the TAGE (bench/probes/dispatch.c's dispatch), from the difference of
 * two runs. */
static uint64_t random_dispatch_misses(unsigned period)
{
	uint8_t seq[4096];
	uint64_t x = 88172645463325252u, m[2];

	for (unsigned k = 0; k < period; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		seq[k] = (uint8_t)(x >> 60);
	}
	for (int r = 0; r < 2; r++) {
		dbtp_timing *t = table(4, BIT(P0));
		dbtp_cycles *c = bp_model_of(t, 10, DBTP_BPRED_TAGE);

		for (unsigned i = 0; i < (r ? 60 : 50) * period; i++) {
			one(c, 1, 0xa00000, JMP_RAX, sizeof(JMP_RAX));
			one(c, 2 + seq[i % period],
			    0xb00000 + 0x40 * seq[i % period], NOP,
			    sizeof(NOP));
		}
		m[r] = bp_total(c).mispredicts[DBTP_BPK_INDIRECT];
		dbtp_cycles_free(c);
		dbtp_timing_free(t);
	}
	return m[1] - m[0];
}

/*
 * The ITTAGE's capacity is a host's, as measured (bench/RESULTS.md,
 * "Whose predictor an interpreter's dispatch meets"): a dispatch to 16
 * targets that repeats a random sequence of 512 is learned, one of
 * 4,096 mostly missed (by 1,024-entry tables: 0.4%).
 */
static void test_bp_ittage_capacity(void)
{
	CHECK(random_dispatch_misses(512) < 512 * 10 / 100);
	CHECK(random_dispatch_misses(4096) > 4096 * 10 / 2);
}

/* The penalty of LLVM 14's models, recognised by their resource names. */
static void test_bp_penalties(void)
{
	static const struct {
		const char *res;
		unsigned penalty;
		int known;
	} cases[] = {{"SKLPort0", 14, 1}, {"SKXPort0", 14, 1},
		     {"ICXPort0", 14, 1}, {"Zn3ALU0", 13, 1},
		     {"A57UnitB", 14, 1}, {"ZnALU0", 14, 0}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dbtp_cpu_params p = {0};
		int known = -1;

		p.nres = 1;
		snprintf(p.res[0], sizeof(p.res[0]), "%s", cases[i].res);
		CHECK_EQ(dbtp_timing_mispredict_penalty(&p, &known),
			 cases[i].penalty);
		CHECK_EQ(known, cases[i].known);
	}
}

/* --- memory renaming ----------------------------------------------------- */

/*
 * imul rcx,rcx (port 1, latency 3); mov [rdi],rcx (port 4, latency 1);
 * a load of rax (latency 5, the CPU's load latency 5), all dispatched at
 * 0.  imul issues at 1, executes until 4, retires at 5; the store waits
 * for rcx: issues at 4, done at 5, retires at 6.
 *  - mov rax,[rdi] of the stored bytes, addresses ordered: it waits for
 *    the store (5), executes until 10, retires at 11: 12 cycles.
 *  - The same with renaming: it issues at 1 and has the value when the
 *    store's data was ready (4; a plain load adds nothing): retires at
 *    max(5, 6) = 6: 7 cycles, one load renamed, none ordered.  So does a
 *    4-byte load (mov eax,[rdi]) of the 8 stored bytes.
 *  - Renaming, but a load of other bytes: issues at 1, done at 6, retires
 *    at 7: 8 cycles, nothing renamed.
 *  - Not renamed, ordered as without renaming (12 cycles): the same bytes
 *    through another register (mov rax,[rsi]); through rdi after mov
 *    edi,1 wrote it (done at 2; the load still waits for the store); a
 *    load-op (add rax,[rdi], latency 6: done at 11, 13 cycles).
 *  - push rcx; pop rax: the push issues at 4 (rcx), done at 5, and rsp
 *    is ready at 5; the pop issues at 5 and, renamed, is done at 6
 *    (max(5 + 1, 4)): retires at 7, 8 cycles; 12 without renaming.  So
 *    does mov rax,[rsp] (the stack pointer's loads need not be written as
 *    its stores).  The popped rax is ready at 4, the push's issue, not
 *    when the pop is done: an imul rax,rax after it issues at 4, done at
 *    7, retires at 8: 9 cycles (without renaming the pop is done at 10,
 *    the imul at 13: 15).
 */
static const uint8_t LOAD_RDI[] = {0x48, 0x8b, 0x07}; /* mov rax,[rdi] */
static const uint8_t LOAD32[] = {0x8b, 0x07};	      /* mov eax,[rdi] */
static const uint8_t ADD_LOAD[] = {0x48, 0x03, 0x07}; /* add rax,[rdi] */
static const uint8_t MOV_EDI[] = {0xbf, 1, 0, 0, 0};  /* mov edi, 1 */
static const uint8_t PUSH_RCX[] = {0x51};
static const uint8_t POP_RAX[] = {0x58};
static const uint8_t LOAD_RSP[] = {0x48, 0x8b, 0x04, 0x24}; /* mov rax,[rsp] */

static void test_memren(void)
{
	static const struct enc st[] = {E(IMUL_RCX), E(STORE), E(LOAD_RDI)},
				st32[] = {E(IMUL_RCX), E(STORE), E(LOAD32)},
				rsi[] = {E(IMUL_RCX), E(STORE), E(LOAD)},
				moved[] = {E(IMUL_RCX), E(STORE), E(MOV_EDI),
					   E(LOAD_RDI)},
				loadop[] = {E(IMUL_RCX), E(STORE), E(ADD_LOAD)},
				pp[] = {E(IMUL_RCX), E(PUSH_RCX), E(POP_RAX)},
				prsp[] = {E(IMUL_RCX), E(PUSH_RCX),
					  E(LOAD_RSP)},
				ppi[] = {E(IMUL_RCX), E(PUSH_RCX), E(POP_RAX),
					 E(IMUL_RAX)};
	struct dbtp_cpu_params p;
	dbtp_timing *t = NULL;
	dbtp_err err = {0};
	static const struct {
		const struct enc *seq;
		unsigned n;
		int memren;
		uint64_t load_addr;
		unsigned load_size;
		uint64_t cycles, renamed, deps;
	} cases[] = {
	    {st, 3, 0, 0x1000, 8, 12, 0, 1},
	    {st, 3, 1, 0x1000, 8, 7, 1, 0},
	    {st32, 3, 1, 0x1000, 4, 7, 1, 0},
	    {st, 3, 1, 0x2000, 8, 8, 0, 0},
	    {rsi, 3, 1, 0x1000, 8, 12, 0, 1},
	    {moved, 4, 1, 0x1000, 8, 12, 0, 1},
	    {loadop, 3, 1, 0x1000, 8, 13, 0, 1},
	    {pp, 3, 0, 0x1000, 8, 12, 0, 1},
	    {ppi, 4, 0, 0x1000, 8, 15, 0, 1},
	    {ppi, 4, 1, 0x1000, 8, 9, 1, 0},
	    {pp, 3, 1, 0x1000, 8, 8, 1, 0},
	    {prsp, 3, 1, 0x1000, 8, 8, 1, 0},
	};

	cpu(&p, 6);
	p.load_latency = 5;
	CHECK(!dbtp_timing_new(&t, DBTP_ARCH_X86_64, &p, &err));
	set(t, IMUL_RCX, 4, 1, 3, 0, 1, BIT(P1), 1u);
	set(t, IMUL_RAX, 4, 1, 3, 0, 1, BIT(P1), 1u);
	set(t, STORE, 3, 1, 1, DBTP_FORM_STORE, 1, BIT(P4), 1u);
	set(t, PUSH_RCX, 1, 1, 1, DBTP_FORM_STORE, 1, BIT(P4), 1u);
	set(t, MOV_EDI, 5, 1, 1, 0, 1, BIT(P0) | BIT(P5), 1u);
	set(t, ADD_LOAD, 3, 1, 6, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	set(t, LOAD, 3, 1, 5, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	set(t, LOAD_RDI, 3, 1, 5, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	set(t, LOAD32, 2, 1, 5, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	set(t, POP_RAX, 1, 1, 5, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	set(t, LOAD_RSP, 4, 1, 5, DBTP_FORM_LOAD, 1, BIT(P2) | BIT(P3), 1u);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dbtp_cycles_opts o = {.alias = DBTP_ALIAS_ADDR,
					     .memren = cases[i].memren};
		const struct mem m[] = {
		    {0x1000, 1, 0},
		    {cases[i].load_addr, 0, cases[i].load_size}};
		struct dbtp_cycles_counts k;
		dbtp_cycles *c = NULL;

		CHECK(!dbtp_cycles_new(&c, t, DBTP_ARCH_X86_64, &o, &err));
		exec(c, 0, cases[i].seq, cases[i].n, cases[i].n, m, 2);
		dbtp_cycles_total(c, &k);
		CHECK_EQ(k.cycles, cases[i].cycles);
		CHECK_EQ(k.renamed, cases[i].renamed);
		CHECK_EQ(k.mem_deps, cases[i].deps);
		dbtp_cycles_free(c);
	}
	dbtp_timing_free(t);
}

/*
 * The stack engine (opts.front_end): six push rcx, all dispatched at 0,
 * two store ports.  Without it each push waits for the last one's rsp (an
 * add, ready the next cycle): issued at 1..6, the last done at 7, retired
 * at 8: 9 cycles.  With it rsp moves two pushes a cycle at once: issued
 * at 1, 1, 2, 2, 3, 3, the last done at 4, retired at 5: 6 cycles.
 */
static void test_stack_engine(void)
{
	static const struct enc push[] = {E(PUSH_RCX)};
	static const struct mem m[6] = {{0x1028, 1, 0}, {0x1020, 1, 0},
					{0x1018, 1, 0}, {0x1010, 1, 0},
					{0x1008, 1, 0}, {0x1000, 1, 0}};
	dbtp_timing *t = table(6, BIT(P0));

	set(t, PUSH_RCX, 1, 1, 1, DBTP_FORM_STORE, 1, BIT(P4) | BIT(P7), 1u);
	for (int fe = 0; fe < 2; fe++) {
		struct dbtp_cycles_opts o = {.alias = DBTP_ALIAS_ADDR,
					     .front_end = fe};
		struct dbtp_cycles_counts k;
		dbtp_cycles *c = NULL;
		dbtp_err err = {0};

		CHECK(!dbtp_cycles_new(&c, t, DBTP_ARCH_X86_64, &o, &err));
		exec(c, 0, push, 1, 6, m, 6);
		dbtp_cycles_total(c, &k);
		CHECK_EQ(k.cycles, fe ? 6 : 9);
		dbtp_cycles_free(c);
	}
	dbtp_timing_free(t);
}

/* --- rep strings --------------------------------------------------------- */

/*
 * QEMU runs a rep string one element per block execution.  101 passes of
 * rep movsb (the first, then 100 repeats at the same address): one element
 * in 32 bytes is timed, as a 1-cycle operation chained through rcx, rsi
 * and rdi -- the first and the passes at 32, 64 and 96 bytes: executed at
 * 2, 3, 4, 5, retired at 3..6: 7 cycles, 101 instructions, whatever LLVM
 * says of the instruction (here its 100 micro-ops and latency 100).  rep
 * stosq, 8 bytes an element: 1 + 25 timed, the last retired at 27: 29.
 */
static void test_rep(void)
{
	static const uint8_t MOVSB[] = {0xf3, 0xa4},
			     STOSQ[] = {0xf3, 0x48, 0xab};
	static const struct {
		const uint8_t *code;
		unsigned len;
		uint64_t cycles;
	} cases[] = {{MOVSB, sizeof(MOVSB), 7}, {STOSQ, sizeof(STOSQ), 29}};
	dbtp_timing *t = table(4, BIT(P0));

	set(t, MOVSB, sizeof(MOVSB), 100, 100, DBTP_FORM_LOAD | DBTP_FORM_STORE,
	    1, BIT(P0), 25u);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dbtp_cycles *c = model(t, DBTP_ALIAS_NONE);
		struct dbtp_cycles_counts k;

		for (int pass = 0; pass < 101; pass++)
			one(c, 1, 0x900000, cases[i].code, cases[i].len);
		k = bp_total(c);
		CHECK_EQ(k.insns, 101);
		CHECK_EQ(k.cycles, cases[i].cycles);
		dbtp_cycles_free(c);
	}
	dbtp_timing_free(t);
}

int main(void)
{
	test_chain();
	test_bounds();
	test_alias();
	test_port5();
	test_defaults();
	test_threads();
	test_errors();
	test_bp_loop();
	test_bp_tage_history();
	test_bp_ittage_history();
	test_bp_ittage_capacity();
	test_bp_kind();
	test_bp_penalty();
	test_bp_ras();
	test_bp_indirect();
	test_bp_penalties();
	test_memren();
	test_stack_engine();
	test_rep();
	return T_DONE();
}

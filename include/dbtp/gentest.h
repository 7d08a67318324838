/* SPDX-License-Identifier: MIT */
/*
 * dbtp/gentest.h - generated test programs for DBT performance regression
 * testing (doc/dbtprof-gentest.md).
 *
 * From one or more blocks-mode profiles of a program (recorded with
 * different thread counts), the model finds thread groups, how their sizes
 * grow with the thread parameter, how hot each block is per group, and when
 * each group's threads are created and joined; the rewriter turns each
 * block's instructions into assembly that runs safely outside the program;
 * the emitter writes one self-contained C file that executes the same
 * blocks with the same relative hotness and thread behaviour.
 *
 * The model (gentest/model.c):
 *  - Threads are grouped by the code they execute (Algorithm 1 of
 *    FADATest splits threads by the blocks only some execute), within a
 *    profile and across profiles alike.  So that rare blocks (the lazy
 *    binding the first caller of a library function runs, a slow path one
 *    worker took) do not split a group, blocks are weighted by hotness: a
 *    thread joins the group whose first member's execution overlaps most
 *    with its own -- the sum over the blocks both execute of the smaller
 *    of their shares of the thread's instructions -- if that is at least
 *    DBTP_GT_SIMILAR; else it starts a group.  A group's blocks are the
 *    union of its members'.
 *  - Group size = alpha * T + beta, T the profile's thread parameter, by
 *    least squares over the profiles; with one profile (or one T), alpha = 0
 *    and beta = the size seen.
 *  - Per group and block, the count summed over the group's threads =
 *    theta * m + delta, m the group's size, by least squares; with a single
 *    m, delta = 0 and theta = count / m.
 *  - Distribution inside a group: each thread's share of the group's
 *    instructions (in thread order, from the profile with the largest
 *    group); "even" when every share is within 10% of 1/m.
 *  - Thread activity: a group's threads are created by the threads of its
 *    parent group at a relative point of the parent's execution (block
 *    executions at clone / the parent's total), and joined where the
 *    parent's pthread_join returned (its futex wait for the child's tid);
 *    without such a wait, at the point the trace had shown of the parent
 *    when it shows the child's end (approximate: the trace interleaves
 *    threads by chunks, and a parent's events come when its buffer is
 *    full).  Each profile's mean points are fitted as a * T + b by least
 *    squares, as the sizes are.  A group whose threads one thread creates
 *    one after another, each after the last was joined, is serial: its
 *    threads run in turn.
 * Memory: the block table and one count per (thread, block) executed.
 */
#ifndef DBTP_GENTEST_H
#define DBTP_GENTEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dbtp/common.h"
#include "dbtp/cycles.h"
#include "dbtp/trace.h"

/** Overlap of instruction distributions at which threads share a group. */
#define DBTP_GT_SIMILAR 0.90

/** Share tolerance under which a group's distribution is even (10%). */
#define DBTP_GT_EVEN_TOL 0.10

/**
 * struct dbtp_gt_block - one distinct block of the profiles (merged by
 * address and code bytes).
 * @vaddr, @ninsns, @nbytes, @sizes, @bytes: as struct dbtp_block.
 * @count: executions over all profiles and threads.
 */
struct dbtp_gt_block {
	uint64_t vaddr;
	uint32_t ninsns, nbytes;
	uint8_t *sizes, *bytes;
	uint64_t count;
	uint64_t read; /* bytes its system call read (read family), over the
			  profiles, as the calls returned them */
	int loader;    /* in the dynamic loader (dbtp_gt_is_loader()) */
	/* its last instruction's control transfer (enum dbtp_branch), 1 in
	 * br_ind for an indirect call, its address and, for a direct branch,
	 * its target (else UINT64_MAX) */
	int br, br_ind;
	uint64_t br_pc, br_target;
	/* executions whose branch the profile's predictor missed
	 * (dbtp_gt_model_branches()), over the profiles */
	uint64_t mispredicted;
	/* an indirect jump's or call's distinct targets, the first
	 * DBTP_GT_TARGETS (ntg of them; NULL if none), over the profiles,
	 * and its last (tg_last) */
	uint64_t *tg;
	uint32_t ntg;
	uint64_t tg_last;
	/* executions whose direct branch (jump, call, taken conditional)
	 * went to another guest page than the block's first instruction's
	 * (DBTP_GT_PAGE_BITS), over the profiles: QEMU chains a translated
	 * block only to one on its own page and looks the others up */
	uint64_t crossed;
	/* executions of a block that ends in no control transfer (QEMU ended
	 * it before an instruction that leaves its page, or at its limit)
	 * whose next block starts on another page than its own: looked up
	 * too, the original's straight-line code running over a page
	 * boundary */
	uint64_t fell;
	/* executions whose address was not in its thread's jump cache as
	 * QEMU's linux-user keeps one per vCPU (DBTP_GT_JC_BITS entries,
	 * indexed by (pc ^ pc >> DBTP_GT_JC_BITS), the last block looked up
	 * in each), simulated at every execution as under `-d nochain`, over
	 * the profiles: how cold the DBT found the block when it came back
	 * to it */
	uint64_t cold;
	/* memory accesses that missed the L1 data cache, over the mem-mode
	 * profiles (or their tallies in blocks-mode ones with the plugin's
	 * cache tallies): each thread's accesses through its own 32 KiB, 8-way
	 * L1 of 64-byte lines (dbtp/cache.h's default geometry), and of
	 * those the misses of the 1 MiB L2 behind it */
	uint64_t l1_misses, l2_misses;
	/* accesses of 2, 4 or 8 bytes at an address that is not a multiple
	 * of their size, over the mem-mode profiles (Valgrind's memcheck
	 * checks each on its slow path) */
	uint64_t unaligned;
};

/** Page size, as bits, by which QEMU decides whether it may chain two
 * translated blocks directly (its linux-user page, x86-64 and AArch64). */
#define DBTP_GT_PAGE_BITS 12

/** Bits of the jump cache's index (struct dbtp_gt_block's cold): QEMU's
 * TB_JMP_CACHE_BITS. */
#define DBTP_GT_JC_BITS 12

/** Distinct targets counted per indirect branch (struct dbtp_gt_block). */
#define DBTP_GT_TARGETS 16

/**
 * dbtp_gt_is_loader() - whether @path (a mapped file's) is a dynamic
 * loader: its name starts with "ld-linux" or "ld-musl", or is "ld.so".
 * A dynamically linked generated program runs its own loader, so it skips
 * these blocks (it finds out at run time); a static one runs them.
 */
int dbtp_gt_is_loader(const char *path);

/**
 * struct dbtp_gt_hot - a block's hotness in a group.
 * @block: index into the model's blocks.
 * @theta, @delta: total count over the group's m threads = theta * m +
 *		   delta.
 */
struct dbtp_gt_hot {
	uint32_t block;
	double theta, delta;
};

/**
 * struct dbtp_gt_group - one thread group.
 * @alpha, @beta: size = alpha * T + beta.
 * @parent: the group whose threads create this one's, -1 for the group
 *	    of the first thread (whose first thread is the process's).
 * @create_at, @create_t: the creation point, a relative point of the
 *			  parent's execution (0..1, once clamped), =
 *			  @create_t * T + @create_at: least squares over
 *			  the profiles of each one's mean (a serial group:
 *			  the mean over its creators of their first
 *			  creation); with one profile (or one T),
 *			  @create_t = 0 and @create_at = the mean.  No
 *			  creator seen: 0 and 0.
 * @join_at, @join_t: the join point likewise (a serial group: the last
 *		      join); no creator seen: 1 and 0.
 *		      dbtp_gt_group_points() evaluates both at a T.
 * @serial: each parent thread runs its threads of the group one after
 *	    another, between the creation and join points in equal windows
 *	    (else all from the creation point to the join point).
 * @even: the distribution is even; else @shares (@nshares of them, adding
 *	  up to 1) are the threads' shares in order.
 * @hot: the blocks the group executes, @nhot of them.
 * @sizes: the size seen in each profile (@nprofiles entries).
 */
struct dbtp_gt_group {
	double alpha, beta;
	int32_t parent;
	double create_at, join_at;
	double create_t, join_t;
	int serial;
	int even;
	double *shares;
	uint32_t nshares;
	struct dbtp_gt_hot *hot;
	uint32_t nhot;
	uint32_t *sizes;
};

typedef struct dbtp_gt_model dbtp_gt_model;

/** dbtp_gt_model_new() - an empty model. */
int dbtp_gt_model_new(dbtp_gt_model **out, dbtp_err *err);

/**
 * dbtp_gt_model_set_predictor() - the conditional branch predictor that
 * counts the profiles' mispredictions (struct dbtp_gt_branches),
 * DBTP_BPRED_GSHARE (the default) or DBTP_BPRED_TAGE (dbtp/cycles.h);
 * before the first dbtp_gt_model_add().  Models merged must agree.
 */
int dbtp_gt_model_set_predictor(dbtp_gt_model *m, int kind, dbtp_err *err);
int dbtp_gt_model_predictor(const dbtp_gt_model *m);

/**
 * dbtp_gt_model_add() - read one blocks- or mem-mode profile to its end.
 * @t: an open trace.
 * @name: its name for messages.
 * @threads: the program's thread parameter in that run (> 0).
 * Fails on a count- or bbv-mode trace, an architecture differing from the
 * earlier profiles', a read error.
 */
int dbtp_gt_model_add(dbtp_gt_model *m, dbtp_trace *t, const char *name,
		      double threads, dbtp_err *err);

/**
 * dbtp_gt_profile_check() - what dbtp_gt_model_add() checks before it
 * reads: @threads > 0, a blocks- or mem-mode trace of a known
 * architecture, that of *@arch if @arch is not NULL.  Cheap: the header.
 */
int dbtp_gt_profile_check(const dbtp_trace *t, const char *name, double threads,
			  const enum dbtp_arch *arch, dbtp_err *err);

/* While a profile is read, each thread counts its blocks' executions in
 * an array, at most this many counters over the profile's threads
 * (default 64 Mi, 512 MiB); past that a thread counts the rest in a hash
 * map, which costs a probe an execution.  The same counts either way. */
extern size_t dbtp_gt_dense_max;

/**
 * dbtp_gt_model_merge() - move @src's profiles after @m's: the model that
 * dbtp_gt_model_add() of @m's profiles and then @src's, in order, would
 * have made (so profiles can be read into models of their own at once).
 * @src is left without profiles; free it.  Neither may be finished.
 * Fails on two architectures; after a failure free both.
 */
int dbtp_gt_model_merge(dbtp_gt_model *m, dbtp_gt_model *src, dbtp_err *err);

/** dbtp_gt_model_finish() - group, fit; no dbtp_gt_model_add() after. */
int dbtp_gt_model_finish(dbtp_gt_model *m, dbtp_err *err);

enum dbtp_arch dbtp_gt_model_arch(const dbtp_gt_model *m);
uint32_t dbtp_gt_model_nprofiles(const dbtp_gt_model *m);
double dbtp_gt_model_threads(const dbtp_gt_model *m, uint32_t profile);

/**
 * struct dbtp_gt_branches - a profile's branches by DBTP_BPK_* class
 * (conditional, indirect jumps and calls, returns), how many of them
 * dbtprof's branch predictor mispredicted (the one of `dbtprof cycles
 * --branch-predictor`, one per thread, doc/dbtprof-cycles.md), and the
 * profile's instructions.  The generated program's branches all land on
 * the next instruction: only those that dbtp_gt_emit_opts.mispredict
 * makes random mispredict.
 */
struct dbtp_gt_branches {
	uint64_t n[DBTP_BPK_N], miss[DBTP_BPK_N], insns;
};

void dbtp_gt_model_branches(const dbtp_gt_model *m, uint32_t profile,
			    struct dbtp_gt_branches *out);
/** Whether some profile was recorded with memory accesses (mem mode) or
 * the plugin's cache tallies (`record --cache`): then blocks have their
 * l1_misses, l2_misses and unaligned. */
int dbtp_gt_model_mem(const dbtp_gt_model *m);
/** Whether some profile's tallies are estimates (`record --cache-sample`). */
int dbtp_gt_model_sampled(const dbtp_gt_model *m);
uint32_t dbtp_gt_model_nblocks(const dbtp_gt_model *m);
const struct dbtp_gt_block *dbtp_gt_model_block(const dbtp_gt_model *m,
						uint32_t i);
uint32_t dbtp_gt_model_ngroups(const dbtp_gt_model *m);
const struct dbtp_gt_group *dbtp_gt_model_group(const dbtp_gt_model *m,
						uint32_t i);
void dbtp_gt_model_free(dbtp_gt_model *m);

/**
 * dbtp_gt_fit() - least squares y = a * x + b over @n points.
 * With one point or all x equal: a = mean(y) / x and b = 0 when @through0
 * is set (and x != 0), else a = 0 and b = mean(y).
 */
void dbtp_gt_fit(const double *x, const double *y, size_t n, int through0,
		 double *a, double *b);

/**
 * dbtp_gt_size() - a group's size at thread parameter @threads: alpha * T
 * + beta rounded to the nearest integer, at least 0.
 */
uint64_t dbtp_gt_size(const struct dbtp_gt_group *g, double threads);

/**
 * dbtp_gt_group_points() - a group's creation and join points at thread
 * parameter @threads: create_t * T + create_at and join_t * T + join_at,
 * each clamped to [0, 1], the join point at least the creation point (a
 * fit extrapolated past the profiles' T may cross them).  The generated
 * program computes them the same way.
 */
void dbtp_gt_group_points(const struct dbtp_gt_group *g, double threads,
			  double *create, double *join);

/**
 * dbtp_gt_count() - executions of hot block @h by thread @i of a group of
 * @m threads: the group's total round(theta * m + delta) (at least 0)
 * split by the distribution so the threads' counts add up to it exactly.
 */
uint64_t dbtp_gt_count(const struct dbtp_gt_group *g,
		       const struct dbtp_gt_hot *h, uint64_t m, uint64_t i);

/*
 * Rewriting: one block's instructions as assembly text that runs safely.
 */

/** Per-instruction outcome. */
enum {
	DBTP_GT_KEPT = 0,      /* the original bytes, as .byte */
	DBTP_GT_REWRITTEN = 1, /* same instruction, operands redirected, or
				  decomposed with helper instructions */
	DBTP_GT_DROPPED = 2,   /* cannot run in user mode or safely */
};

/**
 * struct dbtp_gt_rw_stats - a block's instructions by outcome.
 * @n: instructions kept, rewritten, dropped (index DBTP_GT_*).
 * @helpers: helper instructions added.
 * @uses_avx: the block uses AVX state (ymm/zmm), so vzeroupper on exit.
 * @uses_x87: the block uses the x87 stack (reset on exit).
 * @fp: floating-point arithmetic instructions (dbtp_gt_fp_insn()).
 * @regs: general-purpose registers the rewritten block reads or writes.
 *	  x86-64: bit i for register i in encoding order (0 rax .. 15 r15;
 *	  bit 4, rsp, whenever it touches the stack).  AArch64: bit i for xi
 *	  (or wi), 0..30; bit 31 for sp, whenever the block reads, writes or
 *	  addresses through it; x28 (the base) never: its uses are renamed
 *	  x27.  All bits when an instruction's registers are unknown.
 */
struct dbtp_gt_rw_stats {
	uint32_t n[3];
	uint32_t helpers;
	int uses_avx, uses_x87;
	uint32_t fp;
	uint32_t regs;
	int moves_sp; /* writes the stack pointer (push, call, sub rsp, ...) */
	/* how far from its value at the block's start the block can leave
	 * the stack pointer, either way (UINT32_MAX: not known) */
	uint32_t sp_bound;
	/* x86-64, where every move is known (sp_exact: pushes, pops, calls,
	 * returns, add/sub rsp kept, leave, the resets other writes become):
	 * where the block leaves the stack pointer and the highest it takes
	 * it before any reset (sp_net, sp_peak), in bytes from its start
	 * (upward positive).  After a reset (sp_reset) sp_net is from the
	 * private stack's middle (DBTP_GT_STACK_MID), as is sp_top, the
	 * highest it takes it after one. */
	int sp_exact, sp_reset;
	int32_t sp_net, sp_peak, sp_top;
	/* and the 8-byte slots above those two points that its pops read,
	 * bit i for bytes 8i..8i+7 (sp_reads from its start, sp_reads_top
	 * from the middle); sp_reads_far if one is not such a slot of the
	 * first 512 bytes */
	uint64_t sp_reads, sp_reads_top;
	int sp_reads_far;
	/* and the 8-byte slots at or above where it leaves the stack pointer
	 * (bit i for bytes 8i..8i+7 from there; from its last reset, if
	 * any) that it leaves undefined to memcheck, made by a `sub rsp` or
	 * `enter` and written by no push (the original writes such a frame
	 * through rsp-based operands, the program's go to the data area),
	 * and those its pushes and calls wrote (sp_undef, sp_def; both 0
	 * after a move by other than a multiple of 8) */
	uint64_t sp_undef, sp_def;
	int jumps_out; /* ends with a jump: its last instruction was dropped */
	uint32_t walkable; /* operands marked (dbtp_gt_rw_mark()) */
	/* x86-64: memory operands whose address waits for a load, in the
	 * block or, in a block that loops on itself, its pass before */
	uint32_t chase;
	/* x86-64: the indirect jump or call that ends it goes through
	 * register ind_reg (its own or its memory operand's index), which
	 * instruction ind_writer - 1 wrote all of last, by a move or
	 * arithmetic, and none since read; ind_writer 0 if not so */
	uint32_t ind_writer;
	int ind_reg;
	/* AArch64: names one of v8..v15, whose low halves d8..d15 a callee
	 * saves, or may (an instruction whose registers are not known) */
	int uses_v8_15;
};

/*
 * Layout of a thread's buffer, shared by the rewriter and the emitted
 * program.  The rewritten code addresses it through the reserved base
 * register (x86-64: r15, holding the buffer; AArch64: x28, holding the
 * data area, buffer + DBTP_GT_DATA, so that every load/store form reaches
 * its operands with an immediate offset).
 */
#define DBTP_GT_SLOT_RSP 0	 /* saved host stack pointer */
#define DBTP_GT_SLOT_COUNT 8	 /* iterations left */
#define DBTP_GT_SLOT_MXCSR 16	 /* 0x1f80: default MXCSR */
#define DBTP_GT_SLOT_FCW 24	 /* 0x037f: default x87 control word */
#define DBTP_GT_SLOT_DIV 32	 /* divisor 3, 64 bytes of it */
#define DBTP_GT_SLOT_ZERO 128	 /* descriptor of /dev/zero (or -1) */
#define DBTP_GT_SLOT_CURSOR 136	 /* --mispredict: random bytes' cursor */
#define DBTP_GT_SLOT_CHUNKS 144	 /* --mispredict: 256 passes to go, times */
#define DBTP_GT_SLOT_WALK 152	 /* the walk's line (emit.c, put_walks()) */
#define DBTP_GT_SLOT_RESERVE 160 /* start of the buffer's reservation */
#define DBTP_GT_SLOT_FAR 168	 /* the far walk's line (emit.c) */
#define DBTP_GT_SLOT_CHASE 176	 /* the far chain's line (emit.c) */
#define DBTP_GT_SLOT_FXSAVE 512	 /* a valid FXSAVE image, 512 bytes */
#define DBTP_GT_DATA 4096	 /* data area where operands land */
#define DBTP_GT_DATA_SIZE 32768	 /* offsets taken modulo this */
#define DBTP_GT_STACK_MID 327680 /* private stack pointer at entry */
#define DBTP_GT_READ 655360	 /* where reproduced reads land */
#define DBTP_GT_READ_SIZE 131072 /* at most this much a read */
#define DBTP_GT_RAND 786432	 /* random bytes for --mispredict */
#define DBTP_GT_RAND_SIZE 131072
#define DBTP_GT_WALK 917504 /* walk area (emit.c, put_walks()) */
#define DBTP_GT_WALK_SIZE 589824
#define DBTP_GT_RIDX 1507328 /* x86-64: random tables' indices */
#define DBTP_GT_RIDX_SIZE 131072
#define DBTP_GT_JUMPS 1638400	 /* tables of branch targets */
#define DBTP_GT_BUF_SIZE 1638400 /* whole buffer but the tables */
#define DBTP_GT_FAR 4194304	 /* far walk area, past the tables (emit.c) */
#define DBTP_GT_DATA_FILL 0x3f	 /* byte the data area holds */

/* --mispredict: a function with random branches counts its passes in the
 * low byte of its pass counter over a cursor (a multiple of 256 that
 * moves on every call and every 256 passes) that together index the
 * random bytes.  One that counts its passes in a table of targets
 * (put_branch_count()) runs at most this many a call (the driver splits
 * larger counts).  A conditional
 * branch the profile's predictor missed on less than DBTP_GT_MISS_MIN of
 * its executions stays predictable ... */
#define DBTP_GT_RAND_PASSES 255
#define DBTP_GT_MISS_MIN (1.0 / 64)
/* AArch64's random test is two instructions an execution (and two a pass)
 * where x86-64's is one: below this share it costs a DBT more than the
 * mispredictions it reproduces (bench/RESULTS.md, "An AArch64 guest:
 * misses, floating point, random branches, page crossings").  Its
 * indirect branches, whose lookups cost a DBT far more, take
 * DBTP_GT_MISS_MIN. */
#define DBTP_GT_MISS_MIN_A64 (1.0 / 8)
/* ... and one that ran fewer times than this (in a profile, on average),
 * whose misses are mostly a predictor's first meetings, too. */
#define DBTP_GT_MISS_RUNS 256
/* An indirect branch missed as often goes through a table of
 * DBTP_GT_JT_ENTRIES targets indexed by a random byte: its next
 * instruction, or (in a share of the entries that makes its target
 * change as often as it was missed) one of at most DBTP_GT_JT_PADS
 * entries into a run of nops before it, one fewer than the original's
 * targets.  A copy's table is
 * copied into the buffer at DBTP_GT_JUMPS; at most DBTP_GT_JT_MAX tables
 * (rooms of 2 KiB) a program. */
#define DBTP_GT_JT_ENTRIES 256
/* ... on x86-64, a random index of its own (0 to 63, at DBTP_GT_RIDX as
 * the random bytes are at DBTP_GT_RAND) indexes a table of this many,
 * four to a table's room: a program's tables stay few lines, where 256
 * entries made most of its L1 data misses (bench/RESULTS.md, "Where a
 * generated program's L1 misses come from"). */
#define DBTP_GT_JT_RAND_ENTRIES 64
#define DBTP_GT_JT_PADS 4
#define DBTP_GT_JT_MAX 1024

/* x86-64: stack-pointer moves let add up in a pass of a function before
 * the private stack is reset (sp_bound), well inside the room on either
 * side of DBTP_GT_STACK_MID. */
#define DBTP_GT_SP_BUDGET 65536

/* x86-64: a function whose passes move the stack pointer resets it every
 * pass, unless its passes never take it above where they start (so a pop
 * reads what the pass pushed, as in the original: Valgrind's memcheck
 * marks what lies above the stack pointer inaccessible) and
 * DBTP_GT_SP_PASSES or more passes fit in a call without it going further
 * than DBTP_GT_SP_CALL from where the call put it: then a call runs at
 * most that many passes (the driver splits larger counts) and no pass
 * resets it (the window stays in the L1 cache). */
#define DBTP_GT_SP_CALL 16384
#define DBTP_GT_SP_PASSES 256

/* x86-64: a function whose passes reset the stack pointer has what a
 * pass pops above the stack's middle, up to this many bytes, written by
 * pushes after the reset (and at every call's entry, for all functions),
 * so that it pops no value that memcheck holds undefined. */
#define DBTP_GT_SP_DEFINE 4096

/* AArch64: stack-pointer moves kept per block copy (the private stack is
 * reset when a block would move it further). */
#define DBTP_GT_A64_SP_BUDGET 8192

/* Copies of a block per loop pass: the loop's own instructions (3 and a
 * block boundary a pass) are spread over that many executions. */
#define DBTP_GT_UNROLL 8
#define DBTP_GT_MAX_UNROLL 16
/* A block gets as many copies, up to the unroll, as it runs
 * DBTP_GT_UNROLL_MIN times each in a profile (on average): copies cost
 * translation time, which cold blocks would not win back.  Valgrind
 * translates a guest byte in about the time it runs 200 superblocks, so a
 * copy of a 20-byte block pays off after some 4,000 executions
 * (bench/RESULTS.md). */
#define DBTP_GT_UNROLL_MIN 4096
/* A sequence of blocks (blocks with one count model, run one after another
 * in one loop) gets fewer copies than its members would alone: halved
 * while a pass of half as many still runs this many instructions. */
#define DBTP_GT_SEQ_LEN 128
/* A block of at least this many instructions whose last is no branch was
 * taken to be ended by QEMU for its size (sha256's unrolled rounds end
 * after 151 instructions, at QEMU's limit of TCG ops): a sequence leaves
 * it open, as QEMU ends the member at the same size.  A shorter one (a
 * page boundary, a repeated string instruction) gets a jump to the next
 * member. */
#define DBTP_GT_OPEN_MIN 64

typedef struct dbtp_gt_rw dbtp_gt_rw;

/** dbtp_gt_rw_open() - a rewriter for @arch (x86-64 or AArch64). */
int dbtp_gt_rw_open(dbtp_gt_rw **out, enum dbtp_arch arch, dbtp_err *err);

/**
 * dbtp_gt_rw_block() - write block @code (@nbytes at @vaddr, @ninsns
 * instructions) as GNU assembler lines (x86-64: Intel syntax) to @f; local
 * labels start with ".Lg@id_".  Jump slots go to the .data.rel.ro lines
 * written to @slots (x86-64 only).  Counts the outcome in *@st.  x86-64: an
 * instruction that does not decode is dropped alone when @sizes (the
 * @ninsns instruction lengths, may be NULL) says how long it is.  AArch64:
 * every instruction gets its outcome from its encoding.
 * Return: 0, or -1 when the code does not decode (AArch64: when an
 * instruction is not 4 bytes long).
 */
int dbtp_gt_rw_block(dbtp_gt_rw *rw, uint32_t id, const uint8_t *code,
		     uint32_t nbytes, uint32_t ninsns, const uint8_t *sizes,
		     uint64_t vaddr, FILE *f, FILE *slots,
		     struct dbtp_gt_rw_stats *st, dbtp_err *err);

/**
 * dbtp_gt_rw_read() - the system call of the blocks rewritten from now on
 * reads @bytes (at most DBTP_GT_READ_SIZE) from /dev/zero into the
 * buffer's read area, standing in for the profile's reads; 0 (the
 * default): getpid.
 */
void dbtp_gt_rw_read(dbtp_gt_rw *rw, uint32_t bytes);

/**
 * dbtp_gt_rw_mark() - with @on, the blocks rewritten from now on end the
 * line of every operand that may walk through the buffer's walk area with
 * DBTP_GT_WALK_MARK: x86-64, a data operand "[r15 + off]" of 1 to 8 bytes
 * (no alignment to keep), not stack- or segment-relative, of an
 * instruction that accesses it and is not locked; AArch64, a load or
 * store of 1 to 8 bytes (not a pair, not a prefetch) that addresses
 * [x28, #off]; st->walkable counts them.  The emitter makes some walk and
 * removes the marks.
 */
void dbtp_gt_rw_mark(dbtp_gt_rw *rw, int on);
#define DBTP_GT_WALK_MARK "\t#w"

/**
 * dbtp_gt_rw_fp_exact() - with @on, in the blocks rewritten from now on
 * every floating-point arithmetic instruction (dbtp_gt_fp_insn()) follows
 * a helper that clears the status flags (x86-64: ldmxcsr of the default
 * MXCSR; AArch64: msr fpsr, xzr), as they stay in a program whose
 * floating-point results are all exact (integer-valued data).  QEMU's
 * softfloat uses the host's FPU only once the inexact flag is set: such
 * a program's arithmetic takes its slower software path, while the
 * generated program's, on arbitrary data, would set the flag at once.
 */
void dbtp_gt_rw_fp_exact(dbtp_gt_rw *rw, int on);

void dbtp_gt_rw_close(dbtp_gt_rw *rw);

/**
 * dbtp_gt_fp_insn() - whether the instruction of mnemonic @mn (Capstone's)
 * is floating-point arithmetic QEMU computes with softfloat, which takes
 * the host's FPU only once the guest's inexact flag is set: AArch64 f*
 * (not fmov, fabs, fneg, fcsel), scvtf, ucvtf; x86-64 SSE/AVX add, sub,
 * mul, div, sqrt, min, max, round, hadd, hsub, dp and FMA of ss, sd, ps
 * or pd, and cvt*.
 */
int dbtp_gt_fp_insn(enum dbtp_arch arch, const char *mn);

/*
 * Emission: the C file.
 */

/**
 * struct dbtp_gt_emit_opts - what to emit.
 * @naive: the naive baseline instead: @naive_blocks blocks sampled at
 *	   random (weights uniform, seed @seed), one thread, each run so the
 *	   instruction total matches the profile's.
 * @source: text for the file's header comment (the command line).
 * @unroll: copies of each block per loop pass, a power of two up to
 *	    DBTP_GT_MAX_UNROLL (0: DBTP_GT_UNROLL).
 * @mispredict: not @naive: a block's conditional branch that the
 *		profile's predictor missed on at least DBTP_GT_MISS_MIN of
 *		its executions decides on random bytes, going its less
 *		likely way as often as it was missed; (x86-64) an indirect
 *		jump or call missed as often goes to random targets.
 * @cross_page: not @naive: a block's direct jump, call or (x86-64)
 *		conditional branch leaves the page in as many of its copies
 *		as the original's did of its executions (struct
 *		dbtp_gt_block's crossed).
 * @copy_min: a block gets a copy per this many executions in a profile,
 *	      up to @unroll (0: DBTP_GT_UNROLL_MIN).
 * @fp_exact: the original's floating-point results are exact
 *	      (dbtp_gt_rw_fp_exact()).
 */
struct dbtp_gt_emit_opts {
	int naive;
	int mispredict;
	int cross_page;
	int chains; /* a jump's or call's target run after it (plan_chains()) */
	int misses; /* reproduce the profiles' L1 misses (put_walks()) */
	int unaligned; /* and unaligned accesses (put_unaligned()) */
	int fp_exact;
	unsigned unroll;
	unsigned pad; /* bytes of int3 (AArch64: zeros) at the text's start */
	uint64_t copy_min;
	uint32_t naive_blocks;
	uint64_t seed;
	const char *source;
};

/**
 * struct dbtp_gt_summary - what the emitter kept.
 * @blocks: blocks emitted; @skipped: blocks left out (undecodable).
 * @dyn: dynamic instructions by outcome at the profiles' largest thread
 *	 parameter, weighted by the blocks' counts (index DBTP_GT_*).
 * @stat: per model block, its rewriting outcome (static counts), NULL
 *	  entries for skipped blocks; @emitted: 1 if the block is in the file.
 * @loader, @dyn_loader: of those, the dynamic loader's blocks, which run
 *	  only when the program is linked statically, and their dynamic
 *	  instructions (included in @dyn).
 */
struct dbtp_gt_summary {
	uint32_t blocks, skipped, loader;
	double dyn[3], dyn_loader;
	double read; /* bytes the emitted blocks read (as dyn) */
	/* blocks whose last branch goes either way at random (--mispredict),
	 * of them indirect, and per model block 1 if it is one */
	uint32_t mispredict, mispredict_ind;
	uint8_t *random;
	/* blocks whose branch leaves the page in some of their copies
	 * (@cross_page of struct dbtp_gt_emit_opts), and per model block 1
	 * if it is one */
	uint32_t cross_page;
	uint8_t *crossing;
	/* chains (@chains of struct dbtp_gt_emit_opts): how many, and at the
	 * largest thread parameter the block executions in them (each P's
	 * and its copy of X's) of all the emitted blocks' */
	uint32_t chains;
	double execs_chained, execs;
	/* blocks with operands that walk (@misses of struct
	 * dbtp_gt_emit_opts), per model block its walking operands an
	 * execution (over its copies), and the L1 misses at the largest
	 * thread parameter, the profiles' (from the blocks' l1_misses per
	 * execution) and the walks' (one each) */
	uint32_t walk_blocks;
	double *walks;
	double misses_orig, misses_walk;
	/* of those, the blocks whose walks go over the far area (x86-64:
	 * those whose misses missed the L2 as well, as many as make the
	 * profiles' L2 misses), per model block those of its walks an
	 * execution (over its copies; a chain's copy may walk where its
	 * block does not), and the L2 misses at the largest thread
	 * parameter, the profiles' and the far walks' */
	uint32_t far_blocks;
	double *far;
	double l2_orig, l2_walk;
	/* of the far functions' blocks, those of functions whose misses
	 * waited for loads before them (struct dbtp_gt_rw_stats' chase):
	 * their far walks wait for each other */
	uint32_t far_chase;
	/* the same for unaligned accesses (@unaligned of struct
	 * dbtp_gt_emit_opts): blocks with operands moved off their
	 * alignment, per model block such operands an execution, and the
	 * unaligned accesses, the profiles' and the program's */
	uint32_t unaligned_blocks;
	double *misaligned;
	double unaligned_orig, unaligned_made;
	/* floating-point arithmetic instructions (dbtp_gt_fp_insn()), as
	 * @dyn; 1 if each follows a reset of the status flags (@fp_exact of
	 * struct dbtp_gt_emit_opts) */
	double dyn_fp;
	int fp_exact;
	struct dbtp_gt_rw_stats *stat;
	uint8_t *emitted;
};

/** dbtp_gt_emit() - write the C program to @f; fills @sum (free it with
 * dbtp_gt_summary_free()). */
int dbtp_gt_emit(const dbtp_gt_model *m, const struct dbtp_gt_emit_opts *o,
		 FILE *f, struct dbtp_gt_summary *sum, dbtp_err *err);

void dbtp_gt_summary_free(struct dbtp_gt_summary *s);

/*
 * Validation: how well the generated program's times track the original's
 * across DBT configurations.
 */

/**
 * struct dbtp_gt_vstats - the comparison of @n configurations, the first
 * the baseline.
 * @ratio_orig, @ratio_gen: time under configuration i / time under the
 *			    baseline (malloc'ed, @n each).
 * @error: |ratio_gen - ratio_orig| / ratio_orig per configuration.
 * @mean_error: mean of @error over configurations 1..n-1 (0 if n < 2).
 * @spearman: Spearman rank correlation of the ratios over all n
 *	      configurations (ties get their mean rank; NAN if either side
 *	      has no spread).
 * @speedup: sum of the original's times / sum of the generated program's.
 */
struct dbtp_gt_vstats {
	double *ratio_orig, *ratio_gen, *error;
	double mean_error, spearman, speedup;
};

/** dbtp_gt_vstats() - compare times @orig and @gen (@n > 0 each, > 0). */
int dbtp_gt_vstats(const double *orig, const double *gen, size_t n,
		   struct dbtp_gt_vstats *out, dbtp_err *err);
void dbtp_gt_vstats_free(struct dbtp_gt_vstats *v);

/**
 * dbtp_gt_round_error() - a configuration's error in round @r alone: its
 * ratio to the baseline in that round, @orig[r] / @orig0[r] for the
 * original and @gen[r] / @gen0[r] for the generated program (each round
 * ran every configuration once), compared as dbtp_gt_vstats()'s @error.
 * Times <= 0 count as a microsecond (a clock too coarse for a run).
 */
double dbtp_gt_round_error(const double *orig, const double *orig0,
			   const double *gen, const double *gen0, unsigned r);

#endif

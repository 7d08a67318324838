/* SPDX-License-Identifier: MIT */
/*
 * dbtp/cycles.h - streaming cycle estimation of a recorded or live run
 * (doc/dbtprof-cycles.md).
 *
 * Two parts.  A timing table gives, per distinct instruction encoding (a
 * "form"), what LLVM's scheduling model of one CPU says about it: micro-ops,
 * latency, reciprocal throughput, may-load/may-store/side-effect flags and
 * the processor resources (ports, dividers) it occupies and for how many
 * cycles.  The table is derived by running llvm-mc (to turn the bytes into
 * LLVM's own assembly) and llvm-mca over every form seen, and is cached on
 * disk per LLVM version and CPU.
 *
 * A pipeline model then replays each thread's real instruction stream
 * through an out-of-order core: dispatch width, reorder buffer and
 * scheduler sizes from the CPU's model, renaming (true register
 * dependencies only), port selection, in-order retirement; memory ordering
 * decided by the real addresses of a mem-mode trace.  Its state is a ring
 * of the in-flight instructions and fixed-size tables: memory does not grow
 * with the length of the run.
 */
#ifndef DBTP_CYCLES_H
#define DBTP_CYCLES_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/common.h"
#include "dbtp/trace.h"

#define DBTP_TIMING_MAX_RES 64	   /* resource columns of a CPU model */
#define DBTP_TIMING_MAX_USES 8	   /* resource uses per form */
#define DBTP_TIMING_MAX_BYTES 16   /* bytes of one instruction */
#define DBTP_CYCLES_L2_PENALTY 10  /* default extra cycles, L1 miss */
#define DBTP_CYCLES_MEM_PENALTY 40 /* default extra cycles, L2 miss */
/* Branch predictor (lib/analysis/bpred.h has the rules), its
 * conditional predictor one of: */
#define DBTP_BPRED_GSHARE 1
#define DBTP_BPRED_TAGE 2
#define DBTP_BPRED_HIST_BITS 14 /* gshare: history bits, log2 counters */
#define DBTP_BPRED_BTB 4096	/* indirect-target table entries */
#define DBTP_BPRED_PATH_SHIFT 3 /* path history: bits per older target */
#define DBTP_BPRED_RAS 32	/* return address stack entries */
#define DBTP_TAGE_TABLES 6	/* TAGE: tagged tables (histories 5-129) */
#define DBTP_TAGE_BITS 12	/* log2 entries of a tagged table */
#define DBTP_TAGE_TAG_BITS 10	/* bits of a tag */
#define DBTP_TAGE_BASE_BITS 14	/* log2 two-bit counters of the base */
#define DBTP_TAGE_AGE_BITS 18	/* usefulness halved every 2^18 branches */
/* With the TAGE, indirect jumps and calls get an ITTAGE: */
#define DBTP_ITTAGE_TABLES 6	 /* tagged tables (histories 8-256 bits) */
#define DBTP_ITTAGE_BITS 8	 /* log2 entries of a tagged table */
#define DBTP_ITTAGE_TAG_BITS 12	 /* bits of a tag */
#define DBTP_ITTAGE_TARGET_BITS 4 /* history bits an indirect target adds */
/* Bytes a rep string moves per cycle (fast strings): QEMU runs one
 * element per block; one in this many bytes is timed, as a 1-cycle
 * operation chained through rcx, rsi and rdi. */
#define DBTP_CYCLES_STRING_BYTES 32
/* Front end (opts.front_end): cycles more, after the one every taken
 * branch costs, before the target of an indirect jump or call that
 * changed since its last execution dispatches (measured on a Zen 4 with
 * bench/frontend.c: 2.2 to 4.4), and the last targets kept per thread. */
#define DBTP_CYCLES_FE_INDIRECT 2
#define DBTP_CYCLES_FE_TARGETS 4096
/* Mispredict penalty when the CPU's LLVM model is not one we know. */
#define DBTP_CYCLES_MISPREDICT_PENALTY 14

/* struct dbtp_form_timing.flags */
#define DBTP_FORM_LOAD 0x01	    /* llvm-mca: MayLoad */
#define DBTP_FORM_STORE 0x02	    /* MayStore */
#define DBTP_FORM_SIDE_EFFECTS 0x04 /* HasSideEffects */
#define DBTP_FORM_DEFAULT 0x08	    /* LLVM could not time it: defaults */

/**
 * struct dbtp_res_use - a resource use: one of the resources in @mask
 * (bit i = resource column i) is held for @cycles cycles from issue.
 */
struct dbtp_res_use {
	uint64_t mask;
	uint16_t cycles;
};

/**
 * struct dbtp_form_timing - what the model says about one form.
 * @uops: micro-ops (dispatch slots and reorder-buffer entries).
 * @latency: cycles from issue until its results are available.
 * @rthroughput: llvm-mca's reciprocal throughput (informative).
 * @flags: DBTP_FORM_*.
 * @nuse: resource uses in @use.
 */
struct dbtp_form_timing {
	uint16_t uops, latency;
	float rthroughput;
	uint8_t flags, nuse;
	struct dbtp_res_use use[DBTP_TIMING_MAX_USES];
};

/**
 * struct dbtp_cpu_params - the machine.
 * @name: LLVM's CPU name (for "native", the host's).
 * @dispatch: dispatch width in micro-ops per cycle.
 * @rob: reorder buffer entries (micro-ops).
 * @sched: scheduler entries (instructions waiting to issue; the sum of the
 *         model's scheduler buffers).
 * @nres: resource columns; @res their names (llvm-mca's).
 * @alu: the resources of an integer add, used for forms LLVM cannot time.
 * @load_latency: latency of a plain integer load: a load-op instruction
 *         reads its non-address register operands this much (at most its
 *         latency - 1) after issue, as LLVM's ReadAdvance lets it.
 */
struct dbtp_cpu_params {
	char name[64];
	unsigned dispatch, rob, sched, nres;
	char res[DBTP_TIMING_MAX_RES][24];
	uint64_t alu;
	unsigned load_latency;
};

/**
 * struct dbtp_timing_opts - where the table comes from.
 * @cpu: CPU name; "native" is the host's CPU as LLVM names it.
 * @arch: the guest architecture (picks the target triple).
 * @cache_dir: directory of cached tables; NULL: $DBTPROF_CACHE_DIR, else
 *             $XDG_CACHE_HOME/dbtprof, else ~/.cache/dbtprof.
 * @no_cache: neither read nor write the cache.
 * @llvm: the LLVM whose models to use, as the suffix of its tools ("16":
 *             llvm-mc-16, llvm-mca-16); NULL: $DBTPROF_LLVM, else 14 when
 *             llvm-mca-14 is on PATH, else the newest llvm-mca-N there,
 *             else plain llvm-mc and llvm-mca.
 * @llvm_mc, @llvm_mca: the tools themselves, over @llvm; NULL: from it.
 */
struct dbtp_timing_opts {
	const char *cpu;
	enum dbtp_arch arch;
	const char *cache_dir;
	int no_cache;
	const char *llvm;
	const char *llvm_mc, *llvm_mca;
};

/**
 * struct dbtp_timing_stats - where the forms came from.
 * @forms: forms in the table.
 * @cached: of which read from the cache file.
 * @measured: of which timed by llvm-mca in this run.
 * @defaults: of which LLVM could not time (DBTP_FORM_DEFAULT).
 * @llvm_runs: llvm-mca invocations in this run.
 */
struct dbtp_timing_stats {
	uint64_t forms, cached, measured, defaults, llvm_runs;
};

typedef struct dbtp_timing dbtp_timing;

/**
 * dbtp_timing_open() - the table of @o->cpu: read from the cache, or the
 * CPU's parameters probed with llvm-mca.  Fails with a one-line message on
 * an unknown CPU, a CPU of another architecture, or missing LLVM tools.
 */
int dbtp_timing_open(dbtp_timing **out, const struct dbtp_timing_opts *o,
		     dbtp_err *err);

/**
 * dbtp_timing_new() - an empty table for hand-made CPU parameters, with no
 * LLVM behind it (tests, experiments): forms must be added with
 * dbtp_timing_set(); a missing one gets the defaults.
 */
int dbtp_timing_new(dbtp_timing **out, enum dbtp_arch arch,
		    const struct dbtp_cpu_params *p, dbtp_err *err);

/** dbtp_timing_set() - set the timing of the form @bytes[0..@len). */
int dbtp_timing_set(dbtp_timing *t, const uint8_t *bytes, unsigned len,
		    const struct dbtp_form_timing *ft, dbtp_err *err);

/** dbtp_timing_get() - the timing of a form, or NULL if not known yet. */
const struct dbtp_form_timing *
dbtp_timing_get(const dbtp_timing *t, const uint8_t *bytes, unsigned len);

/**
 * dbtp_timing_resolve() - time the forms among @n (@forms[i], @lens[i]
 * bytes) not yet in the table: one llvm-mc and one llvm-mca run for all of
 * them; the cache file is updated by dbtp_timing_flush().  A form LLVM
 * cannot disassemble or
 * time gets the defaults (latency 1, 1 micro-op, any of the integer-add
 * resources) and DBTP_FORM_DEFAULT.  A table made by dbtp_timing_new()
 * gives every missing form the defaults.
 */
int dbtp_timing_resolve(dbtp_timing *t, const uint8_t *const *forms,
			const uint8_t *lens, size_t n, dbtp_err *err);

/**
 * dbtp_timing_flush() - write the forms timed since the cache file was
 * last written (dbtp_timing_resolve() writes it itself only every 30
 * seconds: rewriting it per batch is quadratic for large programs).  Call
 * it when the analysis is done.  0, or -1 naming the file.
 */
int dbtp_timing_flush(dbtp_timing *t, dbtp_err *err);

/**
 * dbtp_timing_text() - LLVM's assembly text of a form (as llvm-mc printed
 * it and llvm-mca parsed it), or NULL if LLVM could not take the form.
 */
const char *dbtp_timing_text(const dbtp_timing *t, const uint8_t *bytes,
			     unsigned len);

const struct dbtp_cpu_params *dbtp_timing_cpu(const dbtp_timing *t);
void dbtp_timing_stats(const dbtp_timing *t, struct dbtp_timing_stats *s);
/**
 * dbtp_timing_mispredict_penalty() - the MispredictPenalty of the CPU's
 * LLVM 14 scheduling model, recognised by its resource names (Skylake,
 * Skylake-server, Ice Lake: 14; Zen 3: 13; Cortex-A57, also used for
 * neoverse-n1: 14), else DBTP_CYCLES_MISPREDICT_PENALTY.  Sets *@known.
 */
unsigned dbtp_timing_mispredict_penalty(const struct dbtp_cpu_params *p,
					int *known);
/** dbtp_timing_llvm_version() - "14.0.6", or "none" for a hand-made table. */
const char *dbtp_timing_llvm_version(const dbtp_timing *t);
/** dbtp_timing_cache_path() - the cache file, or NULL if none. */
const char *dbtp_timing_cache_path(const dbtp_timing *t);
void dbtp_timing_free(dbtp_timing *t);

/*
 * The pipeline.
 */

/** How loads are ordered after stores. */
enum dbtp_alias {
	DBTP_ALIAS_ADDR = 0, /* by the real addresses (mem-mode traces) */
	DBTP_ALIAS_NONE = 1, /* no load depends on a store */
	DBTP_ALIAS_ALL = 2,  /* every load waits for every older store */
};

/**
 * struct dbtp_cycles_insn - what happened to one instruction (for
 * timelines): cycles of dispatch, issue, execution done (results
 * available) and retirement.
 * @thread: thread number; @seq: the instruction's index in its thread's
 *          stream, from 0; @block, @insn: block id and index in it.
 */
struct dbtp_cycles_insn {
	uint32_t thread, block, insn;
	uint64_t seq;
	uint64_t dispatch, issue, executed, retire;
};

/**
 * struct dbtp_cycles_opts - what to model.
 * @alias: DBTP_ALIAS_*.
 * @from, @count: model only instructions @from .. @from + @count - 1 of
 *          each thread's stream (@count 0: all); the window starts on an
 *          empty pipeline at cycle 0, like llvm-mca on the same code.
 * @keep: if set, a region: only the instructions for which it returns
 *          nonzero are modelled, as one stream (called once per
 *          instruction of each block when the block is first met, with
 *          the instruction's index in the block and its address).
 * @on_insn: if set, called with @arg for each modelled instruction.
 * @mca_compat: do as llvm-mca 14 does where the model knowingly differs:
 *          a written-back address register (push/pop/call/ret's stack
 *          pointer) is ready after the instruction's whole latency, and a
 *          call takes 100 cycles to execute (its results do not wait).
 */
struct dbtp_cycles_opts {
	enum dbtp_alias alias;
	uint64_t from, count;
	int (*keep)(void *arg, const struct dbtp_block *b, uint32_t insn,
		    uint64_t vaddr);
	void (*on_insn)(void *arg, const struct dbtp_cycles_insn *i);
	void *arg;
	int mca_compat;
	/* Optional cache model (off unless @cache): each thread's loads and
	 * stores go through dbtp/cache.h's L1D + L2 (default geometry); a
	 * load missing L1 but hitting L2 takes @l2_penalty more cycles, one
	 * missing L2 @mem_penalty more. */
	int cache;
	unsigned l2_penalty, mem_penalty;
	/* Optional branch predictor (off if @bpred is 0, else
	 * DBTP_BPRED_GSHARE or DBTP_BPRED_TAGE for conditional branches):
	 * the branch ending each block is predicted against the block that
	 * really follows (bpred.h: gshare or TAGE, last-target tables,
	 * return stack); after a misprediction the next instruction
	 * dispatches no earlier than @mispredict_penalty cycles after the
	 * branch has executed (0: the CPU's,
	 * dbtp_timing_mispredict_penalty()). */
	int bpred;
	unsigned mispredict_penalty;
	/* Memory renaming (x86, off unless @memren), as AMD's Zen 2 and
	 * Zen 4 mirror memory operands: a load of 4 or 8 bytes of
	 * general-purpose data through [base + index + displacement] (not
	 * absolute or rip-relative) of exactly the bytes an older store of
	 * the same kind wrote takes its value when the store's data was
	 * ready (the store's issue), without waiting for the store or
	 * paying the load latency.  Needs a mem-mode trace. */
	int memren;
	/* A front end (off unless @front_end), which LLVM's models do not
	 * describe: the block after a taken branch dispatches no earlier
	 * than the cycle after the branch did (one taken branch a cycle),
	 * and after an indirect jump or call whose target is not the one it
	 * had the last time, DBTP_CYCLES_FE_INDIRECT cycles later still. */
	int front_end;
};

/* Kinds of predicted branches (struct dbtp_cycles_counts). */
enum {
	DBTP_BPK_COND,	   /* conditional branches */
	DBTP_BPK_INDIRECT, /* indirect jumps and calls */
	DBTP_BPK_RETURN,   /* returns */
	DBTP_BPK_N
};

/* Why issue or dispatch waited (struct dbtp_cycles_counts.stall). */
enum {
	DBTP_STALL_ROB,	     /* reorder buffer full (cycles) */
	DBTP_STALL_SCHED,    /* scheduler full (cycles) */
	DBTP_STALL_REG,	     /* waiting for a register operand */
	DBTP_STALL_MEM,	     /* a load waiting for an older store */
	DBTP_STALL_PORT,     /* ready, but its resources were busy */
	DBTP_STALL_BRANCH,   /* dispatch held after a mispredicted branch */
	DBTP_STALL_FRONTEND, /* dispatch held by the front end (front_end) */
	DBTP_STALL_N
};

/** dbtp_stall_name() - "reorder buffer full", ... */
const char *dbtp_stall_name(int stall);

/**
 * struct dbtp_cycles_counts - results of a thread (or the sum).
 * @insns, @uops: instructions and micro-ops retired.
 * @cycles: cycles from the first dispatch to the last retirement, like
 *          llvm-mca's Total Cycles.
 * @blocks: block executions.
 * @loads, @stores: memory operations seen (MEM events).
 * @mem_deps: loads ordered after an older store they overlap.
 * @mem_mismatch: blocks whose MEM events did not match the memory
 *          instructions found by the disassembler (see the doc).
 * @l1_misses, @l2_misses: loads that missed L1 / L2 (cache model only).
 * @stall: cycles per DBTP_STALL_*: for ROB, SCHED, BRANCH and FRONTEND, cycles
 *          dispatch was held; for the others, instruction-cycles spent waiting
 * to issue.
 * @res: busy cycles per resource column.
 */
struct dbtp_cycles_counts {
	uint64_t insns, uops, cycles, blocks;
	uint64_t loads, stores, mem_deps, mem_mismatch;
	uint64_t renamed; /* loads forwarded by renaming (opts.memren) */
	uint64_t l1_misses, l2_misses; /* loads, with the cache model */
	/* branch predictor only: predicted branches (conditional, indirect
	 * jumps and calls, returns; direct jumps and calls are not counted)
	 * and their mispredictions, per DBTP_BPK_* */
	uint64_t branches[DBTP_BPK_N], mispredicts[DBTP_BPK_N];
	uint64_t stall[DBTP_STALL_N];
	uint64_t res[DBTP_TIMING_MAX_RES];
};

/**
 * struct dbtp_cycles_block - per translation block, over the run.
 * @execs: executions.
 * @cycles: estimated cycles: the sum over its instructions of how far each
 *          moved the retirement frontier (adds up to the total).
 */
struct dbtp_cycles_block {
	uint64_t execs, cycles;
};

typedef struct dbtp_cycles dbtp_cycles;

/** dbtp_cycles_new() - a model using table @t (not owned). */
int dbtp_cycles_new(dbtp_cycles **out, dbtp_timing *t, enum dbtp_arch arch,
		    const struct dbtp_cycles_opts *o, dbtp_err *err);

/**
 * dbtp_cycles_event() - feed one trace event.  BLOCK starts a block (its
 * MEM events follow), MEM adds an access to it, THREAD_EXIT ends the
 * thread's stream; the others are ignored.  Blocks are timed one behind:
 * when the thread's next block (or its end) arrives.  New forms are timed
 * in batches: all blocks declared in @trace so far at once (@trace may be
 * NULL: then only the block at hand).
 */
int dbtp_cycles_event(dbtp_cycles *c, const dbtp_trace *trace,
		      const struct dbtp_event *ev, dbtp_err *err);

/**
 * dbtp_cycles_warm() - time every form of @trace's block table in one
 * batch (one llvm-mc and one llvm-mca run).  For a trace file: a first
 * pass with dbtp_trace_skip_events() reads the whole table quickly, and
 * the analysis then needs no LLVM run of its own, where a large program's
 * blocks, met chunk by chunk, would each bring their own.
 */
int dbtp_cycles_warm(dbtp_timing *t, const dbtp_trace *trace, dbtp_err *err);

/** dbtp_cycles_finish() - time every thread's last block. */
int dbtp_cycles_finish(dbtp_cycles *c, dbtp_err *err);

uint32_t dbtp_cycles_nthreads(const dbtp_cycles *c);
/** dbtp_cycles_thread() - counts of thread @num (NULL if never seen). */
const struct dbtp_cycles_counts *dbtp_cycles_thread(const dbtp_cycles *c,
						    uint32_t num);
/** dbtp_cycles_total() - the sum over threads (cycles too: one core). */
void dbtp_cycles_total(const dbtp_cycles *c, struct dbtp_cycles_counts *out);

/** dbtp_cycles_nblocks() - 1 + the highest block id timed. */
uint32_t dbtp_cycles_nblocks(const dbtp_cycles *c);
const struct dbtp_cycles_block *dbtp_cycles_block(const dbtp_cycles *c,
						  uint32_t id);

/**
 * dbtp_cycles_forms() - distinct forms in the blocks met so far, and how
 * many of them LLVM could not time (DBTP_FORM_DEFAULT).
 */
/** dbtp_cycles_mispredict_penalty() - the penalty in use (opts.bpred). */
unsigned dbtp_cycles_mispredict_penalty(const dbtp_cycles *c);

void dbtp_cycles_forms(const dbtp_cycles *c, uint64_t *forms,
		       uint64_t *untimed);

void dbtp_cycles_free(dbtp_cycles *c);

#endif

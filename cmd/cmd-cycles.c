/* SPDX-License-Identifier: MIT */
/*
 * cmd-cycles.c - dbtprof cycles: the cycle count of a whole run from an
 * out-of-order pipeline model fed with the run's real instruction stream
 * and memory addresses, timed by LLVM's scheduling models; from a trace or
 * live from a program run under QEMU.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/cycles.h"
#include "dbtp/disasm.h"
#include "dbtp/run.h"
#include "dbtp/symbolize.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof cycles [OPTIONS] TRACE\n"
    "       dbtprof cycles [OPTIONS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Estimate the cycles of a run: every executed instruction, in its real\n"
    "order, goes through an out-of-order pipeline model (dispatch width,\n"
    "reorder buffer and scheduler of the CPU, register renaming, port\n"
    "selection, in-order retirement) timed by LLVM's scheduling model of\n"
    "the CPU (llvm-mca); loads are ordered after older stores to the same\n"
    "bytes using the real addresses of a mem-mode trace.  Prints llvm-mca's\n"
    "summary (Instructions, Total Cycles, Total uOps, Dispatch Width, uOps\n"
    "Per Cycle, IPC), resource pressure, stalls and the hottest functions\n"
    "and blocks by estimated cycles.  With a PROGRAM, it is run under QEMU\n"
    "(mem mode) and analysed as it runs, without a trace file.\n"
    "\n"
    "Options:\n"
    "      --mcpu CPU       LLVM CPU model (default native: this host's);\n"
    "                       e.g. skylake, icelake-server, znver3 (x86-64),\n"
    "                       cortex-a57, neoverse-n1 (AArch64)\n"
    "      --llvm VERSION   the LLVM whose models and tools to use (16:\n"
    "                       llvm-mca-16); default $DBTPROF_LLVM, else 14\n"
    "                       if installed, else the newest installed\n"
    "      --alias MODE     how loads are ordered after stores: addr (by\n"
    "                       the recorded addresses; default), none (never),\n"
    "                       all (after every older store)\n"
    "  -n, --top N          hot functions and blocks to list (default 10)\n"
    "      --window FROM:COUNT  model only instructions FROM..FROM+COUNT-1\n"
    "                       of each thread (from 0), on an empty pipeline\n"
    "      --timeline FROM:COUNT  the same window, and an llvm-mca-style\n"
    "                       timeline of it (D dispatch, = waiting, e\n"
    "                       executing, E executed, - waiting to retire,\n"
    "                       R retired); COUNT at most 100000\n"
    "      --chrome-trace FILE  write the window's instructions as Chrome\n"
    "                       trace events (Perfetto, chrome://tracing)\n"
    "      --emit-asm FILE  write the window's instructions as llvm-mca input\n"
    "                       (LLVM's own text of each form, one region)\n"
    "      --llvm-mca-compat  do as llvm-mca 14 where the model differs on\n"
    "                       purpose: the stack pointer of push/pop/call/ret\n"
    "                       ready after the full latency, calls 100 cycles\n"
    "      --function NAME  also model the instructions of function NAME\n"
    "                       alone (a region; each region is modelled on\n"
    "                       its own and reported separately)\n"
    "      --range A-B      a region of guest addresses A <= x < B\n"
    "      --main           a region: the main program's own code (no\n"
    "                       dynamic loader or libraries); these three may\n"
    "                       be given several times, up to 64 regions\n"
    "      --cache-dir DIR  where timing tables are cached (default\n"
    "                       $DBTPROF_CACHE_DIR, $XDG_CACHE_HOME/dbtprof or\n"
    "                       ~/.cache/dbtprof)\n"
    "      --no-cache       neither read nor write the cached "
    "table\n" MODEL_HELP "      --json           everything as JSON\n"
    "Live runs also take: --cpu MODEL, --qemu PATH, --sysroot DIR,\n"
    "  --keep-env, -e VAR=VAL, --plugin PATH (see dbtprof record --help)\n"
    "  -h, --help           this text\n";

struct fn {
	const char *name, *file;
	uint64_t cycles, insns;
};

struct hotb {
	uint32_t id;
	uint64_t cycles;
};

/*
 * Start a live run with the guest's standard output on our standard error,
 * so that the report on standard output stays clean.
 */
static int start_quiet(struct dbtp_run *run, const struct dbtp_run_opts *ro,
		       char *const argv[], dbtp_err *err)
{
	int keep = dup(1), rc;

	if (keep < 0 || dup2(2, 1) < 0) {
		if (keep >= 0)
			close(keep);
		return dbtp_err_set(err, errno, "dup: %s", strerror(errno));
	}
	rc = dbtp_run_start(run, ro, argv, err);
	dup2(keep, 1);
	close(keep);
	return rc;
}

static int fn_desc(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->cycles != y->cycles)
		return x->cycles < y->cycles ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int hot_desc(const void *a, const void *b)
{
	const struct hotb *x = a, *y = b;

	if (x->cycles != y->cycles)
		return x->cycles < y->cycles ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

#define MAX_TIMELINE 100000 /* instructions kept for a timeline */
#define MAX_REGIONS 64

struct report;

/* A part of the program modelled on its own. */
struct region {
	int kind; /* 'f' function, 'r' address range, 'm' main binary */
	const char *arg;
	uint64_t lo, hi;
	struct report *r;
	dbtp_cycles *c;
};
#define MAX_COLUMNS 240 /* cycles a timeline row shows */

struct report {
	const char *path;
	int live;		     /* analysed live, not from a file */
	struct dbtp_cycles_insn *tl; /* the window's instructions */
	size_t ntl;
	int timeline;
	const char *chrome;
	const char *emit; /* --emit-asm file */
	FILE *emit_f;
	uint64_t emitted, emit_missing;
	struct region reg[MAX_REGIONS];
	int nreg;
	const char *main; /* the main program's path, if known */
	dbtp_trace *t;
	dbtp_timing *tm;
	dbtp_cycles *c;
	struct dbtp_cycles_opts o;
	struct fn *fns;
	size_t nfns;
	struct hotb *hot;
	uint32_t nhot;
	dbtp_symcache *sc;
	int top;
};

static const char *region_name(const struct region *g, char *buf, size_t n)
{
	if (g->kind == 'f')
		snprintf(buf, n, "function %s", g->arg);
	else if (g->kind == 'r')
		snprintf(buf, n, "range 0x%" PRIx64 "-0x%" PRIx64, g->lo,
			 g->hi);
	else
		snprintf(buf, n, "main binary");
	return buf;
}

static int collect(struct report *r)
{
	uint32_t nb = dbtp_cycles_nblocks(r->c);

	if (!r->sc)
		r->sc = dbtp_symcache_new();
	r->hot = calloc(nb ? nb : 1, sizeof(*r->hot));
	if (!r->sc || !r->hot)
		return -1;
	for (uint32_t id = 0; id < nb; id++) {
		const struct dbtp_cycles_block *cb =
		    dbtp_cycles_block(r->c, id);
		const struct dbtp_block *b = dbtp_trace_block(r->t, id);
		struct dbtp_sym sym;
		const char *name;
		size_t i;

		if (!cb || !cb->execs || !b)
			continue;
		r->hot[r->nhot].id = id;
		r->hot[r->nhot++].cycles = cb->cycles;
		dbtp_symbolize(r->sc, r->t, b, 0, &sym);
		name = sym.name ? sym.name : "?";
		for (i = 0; i < r->nfns; i++)
			if (r->fns[i].name == name &&
			    r->fns[i].file == sym.file)
				break;
		if (i == r->nfns) {
			struct fn *f =
			    realloc(r->fns, (r->nfns + 1) * sizeof(*f));

			if (!f)
				return -1;
			r->fns = f;
			f[i].name = name;
			f[i].file = sym.file;
			f[i].cycles = f[i].insns = 0;
			r->nfns++;
		}
		r->fns[i].cycles += cb->cycles;
		r->fns[i].insns += cb->execs * b->ninsns;
	}
	if (r->nfns)
		qsort(r->fns, r->nfns, sizeof(*r->fns), fn_desc);
	if (r->nhot)
		qsort(r->hot, r->nhot, sizeof(*r->hot), hot_desc);
	return 0;
}

static const char *alias_name(enum dbtp_alias a)
{
	return a == DBTP_ALIAS_NONE  ? "none"
	       : a == DBTP_ALIAS_ALL ? "all"
				     : "addr";
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void block_name(struct report *r, uint32_t id, char *buf, size_t n)
{
	const struct dbtp_block *b = dbtp_trace_block(r->t, id);
	struct dbtp_sym sym;

	dbtp_symbolize(r->sc, r->t, b, 0, &sym);
	if (sym.name)
		snprintf(buf, n, "%s+0x%" PRIx64, sym.name, sym.delta);
	else if (sym.file)
		snprintf(buf, n, "%s+0x%" PRIx64, dbtp_basename(sym.file),
			 b->offset);
	else
		snprintf(buf, n, "?");
}

static void print_text(struct report *r)
{
	const struct dbtp_cpu_params *cpu = dbtp_timing_cpu(r->tm);
	struct dbtp_timing_stats ts;
	struct dbtp_cycles_counts tot;
	char n1[32], n2[32], n3[32], n4[32], n5[32], n6[32], n7[32], n8[32];
	char nm[160];
	uint32_t nth = dbtp_cycles_nthreads(r->c);
	uint64_t forms, untimed;

	dbtp_cycles_total(r->c, &tot);
	dbtp_timing_stats(r->tm, &ts);
	printf("trace %s (%s), CPU %s (LLVM %s), loads after stores: %s\n\n",
	       r->path, dbtp_arch_name(dbtp_trace_info(r->t)->arch), cpu->name,
	       dbtp_timing_llvm_version(r->tm), alias_name(r->o.alias));
	printf("Instructions:      %" PRIu64 "\n", tot.insns);
	printf("Total Cycles:      %" PRIu64 "\n", tot.cycles);
	printf("Total uOps:        %" PRIu64 "\n\n", tot.uops);
	printf("Dispatch Width:    %u\n", cpu->dispatch);
	printf("uOps Per Cycle:    %.2f\n", ratio(tot.uops, tot.cycles));
	printf("IPC:               %.2f\n", ratio(tot.insns, tot.cycles));
	printf("Reorder buffer:    %u micro-ops; scheduler: %u entries\n",
	       cpu->rob, cpu->sched);
	if (nth > 1) {
		printf(
		    "\nThreads (cycles add up: one core runs them in turn):\n");
		for (uint32_t i = 0; i < nth; i++) {
			const struct dbtp_cycles_counts *c =
			    dbtp_cycles_thread(r->c, i);

			if (c)
				printf("  thread %u: %s instructions, %s "
				       "cycles, IPC %.2f\n",
				       i, fmt_u64(c->insns, n1),
				       fmt_u64(c->cycles, n2),
				       ratio(c->insns, c->cycles));
		}
	}
	printf("\nResource pressure (busy cycles, per 100 cycles):\n");
	for (unsigned i = 0; i < cpu->nres; i++)
		printf("  [%u] %-16s %16s %7.2f\n", i, cpu->res[i],
		       fmt_u64(tot.res[i], n1),
		       100 * ratio(tot.res[i], tot.cycles));
	printf("\nStalls:\n");
	printf("  dispatch held, reorder buffer full   %16s cycles\n",
	       fmt_u64(tot.stall[DBTP_STALL_ROB], n1));
	printf("  dispatch held, scheduler full        %16s cycles\n",
	       fmt_u64(tot.stall[DBTP_STALL_SCHED], n1));
	printf("  waiting for a register operand       %16s "
	       "instruction-cycles\n",
	       fmt_u64(tot.stall[DBTP_STALL_REG], n1));
	printf("  waiting for an older store           %16s "
	       "instruction-cycles\n",
	       fmt_u64(tot.stall[DBTP_STALL_MEM], n1));
	printf("  ready, resources busy                %16s "
	       "instruction-cycles\n",
	       fmt_u64(tot.stall[DBTP_STALL_PORT], n1));
	if (r->o.bpred)
		printf("  dispatch held, branch mispredicted   %16s cycles\n",
		       fmt_u64(tot.stall[DBTP_STALL_BRANCH], n1));
	if (r->o.front_end)
		printf("  dispatch held by the front end       %16s cycles\n",
		       fmt_u64(tot.stall[DBTP_STALL_FRONTEND], n1));
	printf("\nMemory: %s loads, %s stores, %s loads after an overlapping "
	       "older store\n",
	       fmt_u64(tot.loads, n1), fmt_u64(tot.stores, n2),
	       fmt_u64(tot.mem_deps, n3));
	if (r->o.cache)
		printf("Cache model: %s loads missed L1 (+%u cycles), %s "
		       "missed L2 too (+%u cycles)\n",
		       fmt_u64(tot.l1_misses, n1), r->o.l2_penalty,
		       fmt_u64(tot.l2_misses, n2), r->o.mem_penalty);
	if (r->o.memren)
		printf(
		    "Memory renaming: %s loads took a stored value at once\n",
		    fmt_u64(tot.renamed, n1));
	if (r->o.bpred) {
		uint64_t nb = 0, nm = 0;

		for (int k = 0; k < DBTP_BPK_N; k++) {
			nb += tot.branches[k];
			nm += tot.mispredicts[k];
		}
		printf("Branch predictor (%s): %s branches predicted, %s "
		       "mispredicted (%.2f%%; conditional %s of %s, indirect "
		       "%s of %s, returns %s of %s), +%u cycles each\n",
		       predictor_name(r->o.bpred), fmt_u64(nb, n1),
		       fmt_u64(nm, n2), 100 * ratio(nm, nb),
		       fmt_u64(tot.mispredicts[DBTP_BPK_COND], n3),
		       fmt_u64(tot.branches[DBTP_BPK_COND], n4),
		       fmt_u64(tot.mispredicts[DBTP_BPK_INDIRECT], n5),
		       fmt_u64(tot.branches[DBTP_BPK_INDIRECT], n6),
		       fmt_u64(tot.mispredicts[DBTP_BPK_RETURN], n7),
		       fmt_u64(tot.branches[DBTP_BPK_RETURN], n8),
		       dbtp_cycles_mispredict_penalty(r->c));
	}
	if (tot.mem_mismatch)
		printf("  %s block executions whose memory events did not "
		       "match their memory instructions\n",
		       fmt_u64(tot.mem_mismatch, n1));
	dbtp_cycles_forms(r->c, &forms, &untimed);
	printf("Instruction forms: %" PRIu64 " (%" PRIu64
	       " untimed: defaults); %" PRIu64 " timed by llvm-mca in this "
	       "run (%" PRIu64 " runs), the rest cached\n",
	       forms, untimed, ts.measured, ts.llvm_runs);
	for (int k = 0; k < r->nreg; k++) {
		struct dbtp_cycles_counts g;

		dbtp_cycles_total(r->reg[k].c, &g);
		printf("\nRegion %d: %s\n", k + 1,
		       region_name(&r->reg[k], nm, sizeof(nm)));
		printf("  Instructions: %" PRIu64 "  Total Cycles: %" PRIu64
		       "  Total uOps: %" PRIu64 "  uOps Per Cycle: %.2f  "
		       "IPC: %.2f\n",
		       g.insns, g.cycles, g.uops, ratio(g.uops, g.cycles),
		       ratio(g.insns, g.cycles));
	}
	printf("\nHottest functions by estimated cycles:\n");
	printf("  %16s %7s %16s  %s\n", "cycles", "%", "instructions",
	       "function");
	for (size_t i = 0; i < r->nfns && (int)i < r->top; i++)
		printf("  %16s %6.2f%% %16s  %s%s%s%s\n",
		       fmt_u64(r->fns[i].cycles, n1),
		       100 * ratio(r->fns[i].cycles, tot.cycles),
		       fmt_u64(r->fns[i].insns, n2), r->fns[i].name,
		       r->fns[i].file ? " (" : "",
		       r->fns[i].file ? dbtp_basename(r->fns[i].file) : "",
		       r->fns[i].file ? ")" : "");
	printf("\nHottest blocks by estimated cycles:\n");
	printf("  %16s %7s %14s %8s  %-18s %s\n", "cycles", "%", "executions",
	       "cyc/exec", "address", "where");
	for (uint32_t i = 0; i < r->nhot && (int)i < r->top; i++) {
		const struct dbtp_cycles_block *cb =
		    dbtp_cycles_block(r->c, r->hot[i].id);
		const struct dbtp_block *b =
		    dbtp_trace_block(r->t, r->hot[i].id);

		block_name(r, r->hot[i].id, nm, sizeof(nm));
		printf("  %16s %6.2f%% %14s %8.2f  0x%-16" PRIx64 " %s\n",
		       fmt_u64(cb->cycles, n1),
		       100 * ratio(cb->cycles, tot.cycles),
		       fmt_u64(cb->execs, n2), ratio(cb->cycles, cb->execs),
		       b->vaddr, nm);
	}
}

static void json_counts(struct json *j, const struct dbtp_cycles_counts *c,
			const struct dbtp_cpu_params *cpu)
{
	json_u64(j, "instructions", c->insns);
	json_u64(j, "total_cycles", c->cycles);
	json_u64(j, "total_uops", c->uops);
	json_double(j, "uops_per_cycle", ratio(c->uops, c->cycles));
	json_double(j, "ipc", ratio(c->insns, c->cycles));
	json_u64(j, "blocks", c->blocks);
	json_u64(j, "loads", c->loads);
	json_u64(j, "stores", c->stores);
	json_u64(j, "loads_after_store", c->mem_deps);
	json_u64(j, "renamed_loads", c->renamed);
	json_u64(j, "mem_mismatch_blocks", c->mem_mismatch);
	json_u64(j, "l1_load_misses", c->l1_misses);
	json_u64(j, "l2_load_misses", c->l2_misses);
	json_obj(j, "stalls");
	json_u64(j, "rob_full", c->stall[DBTP_STALL_ROB]);
	json_u64(j, "scheduler_full", c->stall[DBTP_STALL_SCHED]);
	json_u64(j, "register", c->stall[DBTP_STALL_REG]);
	json_u64(j, "memory", c->stall[DBTP_STALL_MEM]);
	json_u64(j, "resources", c->stall[DBTP_STALL_PORT]);
	json_u64(j, "branch_mispredict", c->stall[DBTP_STALL_BRANCH]);
	json_u64(j, "front_end", c->stall[DBTP_STALL_FRONTEND]);
	json_close_obj(j);
	json_branches(j, c->branches, c->mispredicts);
	json_obj(j, "resource_cycles");
	for (unsigned i = 0; i < cpu->nres; i++)
		json_u64(j, cpu->res[i], c->res[i]);
	json_close_obj(j);
}

static void print_json(struct report *r)
{
	const struct dbtp_cpu_params *cpu = dbtp_timing_cpu(r->tm);
	struct dbtp_timing_stats ts;
	struct dbtp_cycles_counts tot;
	uint32_t nth = dbtp_cycles_nthreads(r->c);
	uint64_t forms, untimed;
	struct json j;
	char nm[160];

	dbtp_cycles_total(r->c, &tot);
	dbtp_timing_stats(r->tm, &ts);
	json_begin(&j, stdout);
	json_str(&j, "trace", r->path);
	json_str(&j, "arch", dbtp_arch_name(dbtp_trace_info(r->t)->arch));
	json_str(&j, "cpu", cpu->name);
	json_str(&j, "llvm", dbtp_timing_llvm_version(r->tm));
	json_str(&j, "alias", alias_name(r->o.alias));
	json_bool(&j, "cache_model", r->o.cache);
	json_bool(&j, "branch_predictor", r->o.bpred);
	if (r->o.bpred)
		json_str(&j, "conditional_predictor",
			 predictor_name(r->o.bpred));
	else
		json_null(&j, "conditional_predictor");
	json_bool(&j, "memory_renaming", r->o.memren);
	json_bool(&j, "front_end", r->o.front_end);
	if (r->o.bpred)
		json_u64(&j, "mispredict_penalty",
			 dbtp_cycles_mispredict_penalty(r->c));
	else
		json_null(&j, "mispredict_penalty");
	json_u64(&j, "dispatch_width", cpu->dispatch);
	json_u64(&j, "rob_size", cpu->rob);
	json_u64(&j, "scheduler_size", cpu->sched);
	json_counts(&j, &tot, cpu);
	dbtp_cycles_forms(r->c, &forms, &untimed);
	json_obj(&j, "timing_table");
	json_u64(&j, "forms", forms);
	json_u64(&j, "untimed", untimed);
	json_u64(&j, "measured", ts.measured);
	json_u64(&j, "llvm_runs", ts.llvm_runs);
	json_u64(&j, "table_forms", ts.forms);
	if (dbtp_timing_cache_path(r->tm))
		json_str(&j, "cache", dbtp_timing_cache_path(r->tm));
	else
		json_null(&j, "cache");
	json_close_obj(&j);
	json_arr(&j, "threads");
	for (uint32_t i = 0; i < nth; i++) {
		const struct dbtp_cycles_counts *c =
		    dbtp_cycles_thread(r->c, i);

		if (!c)
			continue;
		json_obj(&j, NULL);
		json_u64(&j, "thread", i);
		json_counts(&j, c, cpu);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_arr(&j, "regions");
	for (int k = 0; k < r->nreg; k++) {
		struct dbtp_cycles_counts g;

		dbtp_cycles_total(r->reg[k].c, &g);
		json_obj(&j, NULL);
		json_str(&j, "region", region_name(&r->reg[k], nm, sizeof(nm)));
		json_counts(&j, &g, cpu);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_arr(&j, "functions");
	for (size_t i = 0; i < r->nfns && (int)i < r->top; i++) {
		json_obj(&j, NULL);
		json_str(&j, "name", r->fns[i].name);
		if (r->fns[i].file)
			json_str(&j, "file", r->fns[i].file);
		else
			json_null(&j, "file");
		json_u64(&j, "cycles", r->fns[i].cycles);
		json_u64(&j, "instructions", r->fns[i].insns);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_arr(&j, "blocks");
	for (uint32_t i = 0; i < r->nhot && (int)i < r->top; i++) {
		const struct dbtp_cycles_block *cb =
		    dbtp_cycles_block(r->c, r->hot[i].id);
		const struct dbtp_block *b =
		    dbtp_trace_block(r->t, r->hot[i].id);

		block_name(r, r->hot[i].id, nm, sizeof(nm));
		json_obj(&j, NULL);
		json_hex(&j, "address", b->vaddr);
		json_str(&j, "where", nm);
		json_u64(&j, "instructions", b->ninsns);
		json_u64(&j, "executions", cb->execs);
		json_u64(&j, "cycles", cb->cycles);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_end(&j);
}

static int keep(void *arg, const struct dbtp_block *b, uint32_t insn,
		uint64_t vaddr)
{
	struct region *g = arg;
	struct report *r = g->r;
	const char *file;
	struct dbtp_sym sym;

	(void)insn;
	switch (g->kind) {
	case 'r':
		return vaddr >= g->lo && vaddr < g->hi;
	case 'm':
		if (!r->main)
			r->main = dbtp_trace_get(r->t, "program");
		file = b->file ? dbtp_trace_file(r->t, b->file) : NULL;
		return file && r->main &&
		       (!strcmp(file, r->main) ||
			!strcmp(dbtp_basename(file), dbtp_basename(r->main)));
	default:
		dbtp_symbolize(r->sc, r->t, b, vaddr - b->vaddr, &sym);
		return sym.name && !strcmp(sym.name, g->arg);
	}
}

static void on_insn(void *arg, const struct dbtp_cycles_insn *i)
{
	struct report *r = arg;

	if (r->tl && r->ntl < MAX_TIMELINE)
		r->tl[r->ntl++] = *i;
	if (r->emit_f) {
		const struct dbtp_block *b = dbtp_trace_block(r->t, i->block);
		const char *text = NULL;
		uint32_t off = 0;

		for (uint32_t k = 0; b && k < i->insn; k++)
			off += b->sizes[k];
		if (b && i->insn < b->ninsns &&
		    off + b->sizes[i->insn] <= b->nbytes)
			text = dbtp_timing_text(r->tm, b->bytes + off,
						b->sizes[i->insn]);
		if (text) {
			fprintf(r->emit_f, "%s\n", text);
			r->emitted++;
		} else {
			r->emit_missing++;
		}
	}
}

/* The text of instruction @i (Intel syntax) in @buf. */
static const char *insn_text(struct report *r, dbtp_disasm *d,
			     const struct dbtp_cycles_insn *i, char *buf,
			     size_t n)
{
	const struct dbtp_block *b = dbtp_trace_block(r->t, i->block);
	uint32_t off = 0;

	snprintf(buf, n, "?");
	if (!b || !d || i->insn >= b->ninsns)
		return buf;
	for (uint32_t k = 0; k < i->insn; k++)
		off += b->sizes[k];
	if (off + b->sizes[i->insn] <= b->nbytes)
		dbtp_disasm_one(d, b->bytes + off, b->sizes[i->insn],
				b->vaddr + off, buf, n);
	return buf;
}

static void print_timeline(struct report *r, dbtp_disasm *d)
{
	uint64_t start = UINT64_MAX, end = 0;
	int cut = 0;
	char text[128];

	for (size_t k = 0; k < r->ntl; k++) {
		if (r->tl[k].dispatch < start)
			start = r->tl[k].dispatch;
		if (r->tl[k].retire > end)
			end = r->tl[k].retire;
	}
	if (!r->ntl)
		return;
	if (end - start >= MAX_COLUMNS) {
		end = start + MAX_COLUMNS - 1;
		cut = 1;
	}
	printf("\nTimeline view (cycles %" PRIu64 "..%" PRIu64
	       "; D dispatched, = waiting, e executing, E executed,\n"
	       "- waiting to retire, R retired):\n",
	       start, end);
	printf("%-18s", "Index");
	for (uint64_t c = start; c <= end; c++)
		putchar('0' + (int)(c % 10));
	putchar('\n');
	for (size_t k = 0; k < r->ntl; k++) {
		const struct dbtp_cycles_insn *i = &r->tl[k];
		char idx[32];

		if (i->thread)
			snprintf(idx, sizeof(idx), "[%u,%" PRIu64 "]",
				 i->thread, i->seq);
		else
			snprintf(idx, sizeof(idx), "[%" PRIu64 "]", i->seq);
		printf("%-18s", idx);
		for (uint64_t c = start; c <= end; c++) {
			char ch = (c - start) % 5 == 4 ? '.' : ' ';

			if (c == i->dispatch)
				ch = 'D';
			else if (c > i->dispatch && c < i->issue)
				ch = '=';
			else if (c >= i->issue && c < i->executed)
				ch = 'e';
			else if (c == i->executed && c < i->retire)
				ch = 'E';
			else if (c > i->executed && c < i->retire)
				ch = '-';
			else if (c == i->retire)
				ch = 'R';
			putchar(ch);
		}
		printf("   %s\n", insn_text(r, d, i, text, sizeof(text)));
	}
	if (cut)
		printf("(cut at %d cycles; --chrome-trace has the whole "
		       "window)\n",
		       MAX_COLUMNS);
	if (r->ntl == MAX_TIMELINE)
		printf("(the first %d instructions)\n", MAX_TIMELINE);
}

static void json_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
}

/* Chrome trace events: one complete event per instruction from dispatch
 * to retirement, on one of 64 lanes, 1 cycle = 1 us. */
static int write_chrome(struct report *r, dbtp_disasm *d)
{
	FILE *f = fopen(r->chrome, "w");
	char text[128];

	if (!f) {
		error("%s: %s", r->chrome, strerror(errno));
		return -1;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
	for (size_t k = 0; k < r->ntl; k++) {
		const struct dbtp_cycles_insn *i = &r->tl[k];

		fprintf(f, "%s{\"name\":\"", k ? ",\n" : "");
		json_escape(f, insn_text(r, d, i, text, sizeof(text)));
		fprintf(f,
			"\",\"ph\":\"X\",\"pid\":%u,\"tid\":%" PRIu64
			",\"ts\":%" PRIu64 ",\"dur\":%" PRIu64
			",\"args\":{\"seq\":%" PRIu64 ",\"dispatch\":%" PRIu64
			",\"issue\":%" PRIu64 ",\"executed\":%" PRIu64
			",\"retire\":%" PRIu64 "}}",
			i->thread, i->seq % 64, i->dispatch,
			i->retire - i->dispatch + 1, i->seq, i->dispatch,
			i->issue, i->executed, i->retire);
	}
	fputs("\n]}\n", f);
	if (fclose(f)) {
		error("%s: %s", r->chrome, strerror(errno));
		return -1;
	}
	return 0;
}

/* Feed the whole trace to the model. */
static int consume(struct report *r, const struct dbtp_timing_opts *to)
{
	const struct dbtp_trace_info *in = dbtp_trace_info(r->t);
	struct dbtp_timing_opts o = *to;
	struct dbtp_event ev;
	dbtp_err err = {0};
	uint64_t n = 0;
	char n1[32];
	int rc;

	if (in->mode != DBTP_MODE_MEM && in->mode != DBTP_MODE_BLOCKS) {
		error("%s: a %s-mode trace has no instruction stream; record "
		      "it with --mode mem",
		      r->path, dbtp_mode_name(in->mode));
		return -1;
	}
	if (in->mode == DBTP_MODE_BLOCKS && r->o.alias == DBTP_ALIAS_ADDR) {
		fprintf(stderr,
			"dbtprof: %s: a blocks-mode trace has no memory "
			"addresses; assuming no load depends on a store "
			"(--alias none); record with --mode mem for "
			"address-based ordering\n",
			r->path);
		r->o.alias = DBTP_ALIAS_NONE;
	}
	o.arch = in->arch;
	if (r->timeline || r->chrome) {
		r->tl = calloc(MAX_TIMELINE, sizeof(*r->tl));
		if (!r->tl) {
			error("out of memory");
			return -1;
		}
	}
	if (r->emit) {
		r->emit_f = fopen(r->emit, "w");
		if (!r->emit_f) {
			error("%s: %s", r->emit, strerror(errno));
			return -1;
		}
		fprintf(r->emit_f, "# LLVM-MCA-BEGIN window\n");
	}
	if (r->tl || r->emit_f) {
		r->o.on_insn = on_insn;
		r->o.arg = r;
	}
	if (dbtp_timing_open(&r->tm, &o, &err) ||
	    dbtp_cycles_new(&r->c, r->tm, in->arch, &r->o, &err)) {
		error("%s", err.msg);
		return -1;
	}
	if (model_warm(r->tm, r->live ? NULL : r->path))
		return -1;
	r->sc = dbtp_symcache_new();
	if (!r->sc) {
		error("out of memory");
		return -1;
	}
	for (int k = 0; k < r->nreg; k++) {
		struct dbtp_cycles_opts go = r->o;

		go.on_insn = NULL;
		go.keep = keep;
		go.arg = &r->reg[k];
		r->reg[k].r = r;
		if (dbtp_cycles_new(&r->reg[k].c, r->tm, in->arch, &go, &err)) {
			error("%s", err.msg);
			return -1;
		}
	}
	while ((rc = dbtp_trace_next(r->t, &ev, &err)) > 0) {
		if (dbtp_cycles_event(r->c, r->t, &ev, &err)) {
			rc = -1;
			break;
		}
		for (int k = 0; k < r->nreg && rc > 0; k++)
			if (dbtp_cycles_event(r->reg[k].c, r->t, &ev, &err))
				rc = -1;
		if (rc < 0)
			break;
		if (!(++n & 0xfffff))
			progress("cycles: %s events", fmt_u64(n, n1));
	}
	progress_done();
	model_flush(r->tm);
	if (rc < 0 || dbtp_cycles_finish(r->c, &err)) {
		error("%s", err.msg);
		return -1;
	}
	for (int k = 0; k < r->nreg; k++)
		if (dbtp_cycles_finish(r->reg[k].c, &err)) {
			error("%s", err.msg);
			return -1;
		}
	if (r->emit_f) {
		int bad;

		fprintf(r->emit_f, "# LLVM-MCA-END\n");
		bad = ferror(r->emit_f);
		if (fclose(r->emit_f) || bad) {
			r->emit_f = NULL;
			error("%s: %s", r->emit, strerror(errno));
			return -1;
		}
		r->emit_f = NULL;
		if (r->emit_missing)
			fprintf(stderr,
				"dbtprof: %s: %" PRIu64 " of %" PRIu64
				" instructions left out: LLVM cannot take "
				"them\n",
				r->emit, r->emit_missing,
				r->emit_missing + r->emitted);
	}
	return 0;
}

static int report(struct report *r, int json)
{
	dbtp_disasm *d = NULL;
	dbtp_err err = {0};

	if (collect(r)) {
		error("out of memory");
		return -1;
	}
	if (json)
		print_json(r);
	else
		print_text(r);
	if (r->timeline || r->chrome)
		dbtp_disasm_open(&d, dbtp_trace_info(r->t)->arch, &err);
	if (r->timeline && !json)
		print_timeline(r, d);
	if (r->chrome && write_chrome(r, d)) {
		dbtp_disasm_close(d);
		return -1;
	}
	dbtp_disasm_close(d);
	if (fflush(stdout) || ferror(stdout)) {
		error("writing the output: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_cycles(int argc, char **argv)
{
	enum {
		O_MCPU = 256,
		O_LLVM,
		O_ALIAS,
		O_CDIR,
		O_NOCACHE,
		O_JSON,
		O_WINDOW,
		O_TIMELINE,
		O_CHROME,
		O_FUNCTION,
		O_RANGE,
		O_MAIN,
		O_EMIT,
		O_COMPAT
	};
	static const struct option opts[] = {
	    {"mcpu", required_argument, NULL, O_MCPU},
	    {"llvm", required_argument, NULL, O_LLVM},
	    {"alias", required_argument, NULL, O_ALIAS},
	    {"top", required_argument, NULL, 'n'},
	    {"cache-dir", required_argument, NULL, O_CDIR},
	    {"no-cache", no_argument, NULL, O_NOCACHE},
	    {"json", no_argument, NULL, O_JSON},
	    MODEL_LONG_OPTIONS,
	    {"window", required_argument, NULL, O_WINDOW},
	    {"timeline", required_argument, NULL, O_TIMELINE},
	    {"chrome-trace", required_argument, NULL, O_CHROME},
	    {"function", required_argument, NULL, O_FUNCTION},
	    {"range", required_argument, NULL, O_RANGE},
	    {"main", no_argument, NULL, O_MAIN},
	    {"emit-asm", required_argument, NULL, O_EMIT},
	    {"llvm-mca-compat", no_argument, NULL, O_COMPAT},
	    {"qemu", required_argument, NULL, 'Q'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"sysroot", required_argument, NULL, 'L'},
	    {"keep-env", no_argument, NULL, 'K'},
	    {"env", required_argument, NULL, 'e'},
	    {"plugin", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_timing_opts to = {.cpu = "native"};
	struct dbtp_run_opts ro = {.zstd = -1, .flush_ms = -1, .mode = "mem"};
	struct report r = {.top = 10};
	dbtp_err err = {0};
	int c, json = 0, rc = 1, live, status = 0;
	char *end;
	long v;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:e:h", opts, NULL)) != -1) {
		switch (c) {
		case O_MCPU:
			to.cpu = optarg;
			break;
		case O_LLVM:
			to.llvm = optarg;
			break;
		case O_ALIAS:
			if (!strcmp(optarg, "addr"))
				r.o.alias = DBTP_ALIAS_ADDR;
			else if (!strcmp(optarg, "none"))
				r.o.alias = DBTP_ALIAS_NONE;
			else if (!strcmp(optarg, "all"))
				r.o.alias = DBTP_ALIAS_ALL;
			else {
				free((void *)ro.env);
				return usage_error("cycles",
						   "--alias is addr, none or "
						   "all");
			}
			break;
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 0 || v > 1000000) {
				free((void *)ro.env);
				return usage_error("cycles",
						   "--top wants a count, not "
						   "'%s'",
						   optarg);
			}
			r.top = (int)v;
			break;
		case O_CDIR:
			to.cache_dir = optarg;
			break;
		case O_NOCACHE:
			to.no_cache = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case O_WINDOW:
		case O_TIMELINE: {
			unsigned long long a, b;
			int used = 0;

			if (sscanf(optarg, "%llu:%llu%n", &a, &b, &used) != 2 ||
			    optarg[used] || !b || optarg[0] == '-' ||
			    strchr(optarg, '-') ||
			    (c == O_TIMELINE && b > MAX_TIMELINE)) {
				free((void *)ro.env);
				return usage_error(
				    "cycles",
				    "--%s wants FROM:COUNT, COUNT from 1%s, "
				    "not '%s'",
				    c == O_WINDOW ? "window" : "timeline",
				    c == O_TIMELINE ? " to 100000" : "",
				    optarg);
			}
			r.o.from = a;
			r.o.count = b;
			if (c == O_TIMELINE)
				r.timeline = 1;
			break;
		}
		case O_CHROME:
			r.chrome = optarg;
			break;
		case O_EMIT:
			r.emit = optarg;
			break;
		case O_COMPAT:
			r.o.mca_compat = 1;
			break;
		case O_FUNCTION:
		case O_RANGE:
		case O_MAIN: {
			struct region *g = &r.reg[r.nreg];

			if (r.nreg == MAX_REGIONS) {
				free((void *)ro.env);
				return usage_error("cycles",
						   "at most %d regions",
						   MAX_REGIONS);
			}
			memset(g, 0, sizeof(*g));
			g->kind = c == O_FUNCTION ? 'f'
				  : c == O_RANGE  ? 'r'
						  : 'm';
			g->arg = optarg;
			if (c == O_RANGE) {
				char *dash = strchr(optarg, '-');

				errno = 0;
				g->lo = strtoull(optarg, &end, 0);
				if (!dash || end != dash || errno)
					g->hi = 0;
				else
					g->hi = strtoull(dash + 1, &end, 0);
				if (!dash || *end || errno || g->hi <= g->lo ||
				    optarg[0] == '-') {
					free((void *)ro.env);
					return usage_error(
					    "cycles",
					    "--range wants START-END "
					    "addresses, START < END, not '%s'",
					    optarg);
				}
			}
			r.nreg++;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			free((void *)ro.env);
			return 0;
		default: {
			int k = model_option("cycles", c, optarg, argv, &r.o);

			if (!k)
				k = run_option("cycles", c, optarg, &ro);

			if (k > 0)
				break;
			free((void *)ro.env);
			if (k < 0)
				return EXIT_USAGE;
			return usage_error("cycles", "unknown option '%s'",
					   argv[optind - 1]);
		}
		}
	}
	model_defaults(&r.o);
	live = optind > 1 && !strcmp(argv[optind - 1], "--");
	if (optind >= argc || (!live && optind + 1 != argc)) {
		free((void *)ro.env);
		return usage_error("cycles", "give a TRACE, or -- PROGRAM");
	}
	if (r.emit && !r.o.count) {
		free((void *)ro.env);
		return usage_error("cycles", "--emit-asm needs --window or "
					     "--timeline");
	}
	if (r.chrome && !r.o.count) {
		free((void *)ro.env);
		return usage_error("cycles", "--chrome-trace needs --window or "
					     "--timeline");
	}
	if (r.chrome && r.o.count > MAX_TIMELINE) {
		free((void *)ro.env);
		return usage_error("cycles", "--chrome-trace takes a window of "
					     "at most 100000 instructions");
	}
	if (!live) {
		r.path = argv[optind];
		if (dbtp_trace_open(&r.t, r.path, &err)) {
			error("%s", err.msg);
			goto out;
		}
		if (consume(&r, &to))
			goto out;
		if (!dbtp_trace_info(r.t)->has_end)
			fprintf(stderr,
				"dbtprof: %s: no END record (recording cut "
				"short); results cover what was recorded\n",
				r.path);
		if (report(&r, json))
			goto out;
		rc = 0;
	} else {
		struct dbtp_run run;
		int failed;

		if (!ro.plugin)
			ro.plugin = plugin_path();
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		if (start_quiet(&run, &ro, argv + optind, &err)) {
			error("%s", err.msg);
			free((void *)ro.env);
			return EXIT_TOOL;
		}
		r.path = "(live)";
		r.live = 1;
		r.main = run.program;
		failed =
		    dbtp_trace_open_fd(&r.t, run.fd, "plugin stream", &err);
		if (failed)
			error("%s", err.msg);
		else
			failed = consume(&r, &to);
		if (failed)
			kill(run.pid, SIGKILL);
		if (dbtp_run_wait(&run, &status, &err)) {
			error("%s", err.msg);
			failed = 1;
		}
		if (!failed && !dbtp_trace_info(r.t)->has_end)
			fprintf(stderr, "dbtprof: the run ended without the "
					"plugin's END record; results cover "
					"what was recorded\n");
		if (!failed && report(&r, json))
			failed = 1;
		dbtp_run_free(&run);
		if (failed)
			rc = EXIT_TOOL;
		else if (WIFEXITED(status))
			rc = WEXITSTATUS(status);
		else
			rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
						 : EXIT_TOOL;
	}
out:
	if (r.emit_f)
		fclose(r.emit_f);
	for (int k = 0; k < r.nreg; k++)
		dbtp_cycles_free(r.reg[k].c);
	free(r.tl);
	free(r.fns);
	free(r.hot);
	dbtp_symcache_free(r.sc);
	dbtp_cycles_free(r.c);
	dbtp_timing_free(r.tm);
	dbtp_trace_close(r.t);
	free((void *)ro.env);
	return rc;
}

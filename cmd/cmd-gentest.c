/* SPDX-License-Identifier: MIT */
/*
 * cmd-gentest.c - dbtprof gentest: from blocks-mode profiles of a program,
 * a short C test program that runs the same blocks with the same relative
 * hotness and thread behaviour, for performance regression testing of
 * DBT systems.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/counter.h"
#include "dbtp/elf.h"
#include "dbtp/gentest.h"
#include "dbtp/run.h"
#include "dbtp/trace.h"
#include "util/file.h"
#include "util/words.h"

static const char usage_text[] =
    "usage: dbtprof gentest -o FILE.c [OPTIONS] TRACE[:T] [TRACE[:T] ...]\n"
    "       dbtprof gentest validate [OPTIONS] --original CMD --generated "
    "CMD\n"
    "\n"
    "Analyse blocks-mode profiles of one program (recorded with\n"
    "`dbtprof record --cache`, for its cache misses too, or plain\n"
    "`dbtprof record`; mem mode works as --cache does), ideally at\n"
    "several values T of the program's thread parameter, and write one\n"
    "self-contained C file that executes the same blocks, rewritten to\n"
    "run safely outside the program, with the same relative hotness and\n"
    "thread behaviour: threads grouped by the blocks they execute,\n"
    "group sizes alpha*T + beta, per-group block counts theta*m + delta\n"
    "(m the group's size), threads created and joined at their parent's\n"
    "relative execution points, a*T + b.  The blocks are x86-64 or\n"
    "AArch64 assembly, as the profiled program.  Build and run it with\n"
    "  cc -O2 -pthread FILE.c -o test && ./test --scale ETA --threads N\n"
    "(AArch64 on another host: aarch64-linux-gnu-gcc -static, then\n"
    "qemu-aarch64 ./test; ETA divides every count; --calibrate SECONDS\n"
    "finds ETA).  Linked dynamically, the program skips the profile's\n"
    "dynamic-loader blocks (its own loader runs instead); linked with\n"
    "-static, it runs them, and its own start-up, which ETA does not\n"
    "divide, costs least: link scaled-down tests statically.\n"
    "\n"
    "TRACE:T gives the thread parameter of that run (default 1; with\n"
    "several traces, give it for each, here or with --threads-arg).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE       the C file to write (required)\n"
    "      --threads-arg LIST  thread parameters of the traces in order,\n"
    "                          comma-separated (instead of TRACE:T)\n"
    "      --naive             the naive baseline: blocks sampled at\n"
    "                          random, one thread, the same instruction\n"
    "                          total\n"
    "      --blocks K          how many blocks --naive samples (default:\n"
    "                          as many as the profiles' blocks / 10, >= 1)\n"
    "      --seed N            --naive's random seed (default 1)\n"
    "      --unroll U          copies of each block per loop pass, a\n"
    "                          power of two up to 16 (default 8)\n"
    "      --no-mispredict     keep every branch predictable; by default\n"
    "                          a conditional branch that the profile's\n"
    "                          predictor missed on 1/64 or more of its\n"
    "                          runs (256 or more) goes either way at\n"
    "                          random, as often (a test of a random byte\n"
    "                          before it), and (x86-64) an indirect jump\n"
    "                          or call whose target changed as often\n"
    "                          goes to random targets (a table indexed\n"
    "                          by a random byte)\n"
    "      --branch-predictor P  the predictor that counts the profiles'\n"
    "                          mispredictions: gshare (the default) or\n"
    "                          tage, a TAGE and an ITTAGE for indirect\n"
    "                          targets, nearer a modern CPU's (fewer\n"
    "                          random branches where a longer history\n"
    "                          predicts them)\n"
    "      --no-cross-page     keep every branch on its page; by default\n"
    "                          a block's direct jump, call or (x86-64)\n"
    "                          conditional branch continues on another\n"
    "                          page in as many of its copies as the\n"
    "                          original's went to another page (QEMU\n"
    "                          chains a block only to one on its page and\n"
    "                          looks the others up)\n"
    "      --no-chains         run every block by its own entry; by\n"
    "                          default a block whose direct jump or call\n"
    "                          enters a block that runs at least as often\n"
    "                          (and in no sequence) is followed by a copy\n"
    "                          of that block, run as often as itself, the\n"
    "                          other block's own entry running the rest\n"
    "                          (Valgrind follows the jump into one\n"
    "                          superblock, as in the original; QEMU\n"
    "                          chains the two)\n"
    "      --no-misses         leave the L1 data cache misses out; by\n"
    "                          default (profiles recorded with --cache\n"
    "                          or -m mem) a block whose accesses missed\n"
    "                          a 32 KiB L1 (simulated per thread) gets as\n"
    "                          many operands an execution that walk a\n"
    "                          random chain of lines in the buffer, a\n"
    "                          line a pass, so that they miss too (on\n"
    "                          x86-64, blocks whose misses missed a\n"
    "                          1 MiB L2 as well, as many as make the\n"
    "                          profiles' L2 misses, walk an 8 MiB area)\n"
    "      --no-unaligned      leave unaligned accesses out; by default\n"
    "                          (x86-64, --cache or -m mem) a block whose\n"
    "                          accesses of 2 to 8 bytes were off their\n"
    "                          alignment gets as many operands an\n"
    "                          execution moved off theirs (memcheck pays\n"
    "                          for each)\n"
    "      --fp-exact          the original's floating-point results are\n"
    "                          exact (integer-valued data): every\n"
    "                          floating-point instruction follows a reset\n"
    "                          of the status flags, so that QEMU computes\n"
    "                          it in software as it did the original's\n"
    "                          (it uses the host's FPU only once the\n"
    "                          inexact flag is set)\n"
    "      --copy-min N        a block gets a copy, up to U, per N\n"
    "                          executions in a profile (default 4096:\n"
    "                          a copy costs a translation, which\n"
    "                          Valgrind pays dearly)\n"
    "      --pad N             N bytes of padding at the start of the\n"
    "                          program's text (int3; AArch64: zeros),\n"
    "                          moving every block: programs of the same\n"
    "                          profile at several paddings tell a DBT\n"
    "                          change apart from a layout's effect\n"
    "  -j, --jobs N            read up to N profiles at once (default:\n"
    "                          the CPUs it may run on); the same program\n"
    "                          whatever N, each reading needs its own\n"
    "                          memory\n"
    "      --json              the summary as JSON\n"
    "  -h, --help              this text\n"
    "\n"
    "dbtprof gentest validate --help: compare original and generated\n"
    "programs under DBT configurations.\n";

static const char validate_usage[] =
    "usage: dbtprof gentest validate [OPTIONS] --original 'PROG ARGS'\n"
    "                                --generated 'PROG ARGS'\n"
    "\n"
    "Time the original and the generated program under each DBT\n"
    "configuration (a command prefix; the first is the baseline), the\n"
    "median (or least) of --runs runs each (in rounds: one run of each\n"
    "program under each configuration in turn, so that other load on the\n"
    "machine, or a change in its speed, falls on all alike), by CPU\n"
    "time (user + system of the run and its threads), wall time, or a\n"
    "count of user-mode instructions or cycles (--measure), stdin,\n"
    "stdout and stderr on /dev/null, in the environment `dbtprof record`\n"
    "gives a guest (PATH, LC_ALL=C: the original then starts up as it\n"
    "did when profiled),\n"
    "and report for each configuration the time ratio to the baseline of\n"
    "both programs and the relative error between the ratios (and the\n"
    "lowest and highest of that error taken round by round, from each\n"
    "round's times alone: a spread wider than the error says the machine\n"
    "moved during the validation); then the\n"
    "mean error, the Spearman rank correlation of the ratios and the\n"
    "testing speedup (sum of the original's times / the generated's).\n"
    "Commands are split into words as a shell would ('...', \"...\" and\n"
    "\\ quote; nothing is expanded).  A run that fails (non-zero exit)\n"
    "ends the command.\n"
    "\n"
    "Options:\n"
    "      --original CMD     the original program and its arguments\n"
    "      --generated CMD    the generated program and its arguments\n"
    "      --fixed CMD        a run that costs what the generated program\n"
    "                         costs besides its blocks' work (itself\n"
    "                         with --cap 16: start-up, set-up and\n"
    "                         translation, which a scaled-down run does\n"
    "                         not scale), timed in every round after\n"
    "                         the two programs and taken off both\n"
    "                         programs' times before the ratios and\n"
    "                         errors (the speedup stays on whole times;\n"
    "                         a warning where it takes more than half\n"
    "                         the generated program's time)\n"
    "      --config NAME=PFX  a configuration (repeatable); default:\n"
    "                         qemu=qemu-x86_64, qemu-nochain=qemu-x86_64\n"
    "                         -d nochain, qemu-singlestep=qemu-x86_64\n"
    "                         -singlestep, vg-none=valgrind --tool=none,\n"
    "                         vg-iropt0=... --vex-iropt-level=0,\n"
    "                         vg-nochase=... --vex-guest-chase=no,\n"
    "                         vg-lackey=valgrind --tool=lackey,\n"
    "                         vg-memcheck=valgrind --tool=memcheck;\n"
    "                         when the generated program is an AArch64\n"
    "                         ELF file: the three qemu ones with\n"
    "                         qemu-aarch64; a bare NAME (--config\n"
    "                         vg-none) picks one of these defaults\n"
    "  -r, --runs N           runs per program and configuration (3)\n"
    "      --cpus LIST        run both programs on these CPUs only\n"
    "                         (e.g. 0 or 0,2-3): a multi-threaded\n"
    "                         program's times spread less when its\n"
    "                         threads cannot move between cores\n"
    "      --measure M        cpu: CPU time (default: steadier on a\n"
    "                         busy machine); wall: elapsed time;\n"
    "                         instructions, cycles: user-mode\n"
    "                         instructions or cycles of the run and\n"
    "                         all it starts, by the hardware counter\n"
    "                         (no noise from load for instructions);\n"
    "                         where the machine has no instruction\n"
    "                         counter, cachegrind counts them (some\n"
    "                         50x slower, and not under the Valgrind\n"
    "                         configurations)\n"
    "      --stat median|min  a configuration's time from its runs:\n"
    "                         the median (default) or the least; load\n"
    "                         only ever adds time\n"
    "      --keep-env         run everything in your environment\n"
    "                         instead (as `record --keep-env`)\n"
    "  -e, --env VAR=VALUE    set a variable of the runs' environment\n"
    "                         (repeatable)\n"
    "      --json             the results as JSON, every run's time\n"
    "                         included\n"
    "  -h, --help             this text\n";

static const char *const default_configs[] = {
    "qemu=qemu-x86_64",
    "qemu-nochain=qemu-x86_64 -d nochain",
    "qemu-singlestep=qemu-x86_64 -singlestep",
    "vg-none=valgrind --tool=none",
    "vg-iropt0=valgrind --tool=none --vex-iropt-level=0",
    "vg-nochase=valgrind --tool=none --vex-guest-chase=no",
    "vg-lackey=valgrind --tool=lackey",
    "vg-memcheck=valgrind --tool=memcheck",
};

static const char *const default_configs_a64[] = {
    "qemu=qemu-aarch64",
    "qemu-nochain=qemu-aarch64 -d nochain",
    "qemu-singlestep=qemu-aarch64 -singlestep",
};

#define NDEFAULT(a64)                                                          \
	((a64) ? sizeof(default_configs_a64) / sizeof(*default_configs_a64)    \
	       : sizeof(default_configs) / sizeof(*default_configs))

/* The default configuration NAME=PREFIX called @name, or NULL. */
static const char *default_config(const char *name, int a64)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < NDEFAULT(a64); i++) {
		const char *c =
		    a64 ? default_configs_a64[i] : default_configs[i];

		if (!strncmp(c, name, len) && c[len] == '=')
			return c;
	}
	return NULL;
}

static const char *outcome_name[3] = {"kept", "rewritten", "dropped"};

/* 0 if @s splits into words (at least one unless @empty), else 2 after a
 * usage message naming @opt. */
static int check_words(const char *opt, const char *s, int empty)
{
	dbtp_err err = {0};
	char **argv;
	int n;

	if (dbtp_words_split(s, &argv, &n, &err))
		return usage_error("gentest validate", "%s '%s': %s", opt, s,
				   err.msg);
	free(argv);
	if (!n && !empty)
		return usage_error("gentest validate", "%s: empty command",
				   opt);
	return 0;
}

/* Whether the program command @cmd starts with is an AArch64 ELF file. */
static int aarch64_program(const char *cmd)
{
	enum dbtp_arch arch;
	dbtp_err err = {0};
	char **argv;
	int dyn, n, a64;

	if (dbtp_words_split(cmd, &argv, &n, &err))
		return 0;
	a64 = n && !dbtp_elf_probe(argv[0], &arch, &dyn, NULL, 0, &err) &&
	      arch == DBTP_ARCH_AARCH64;
	free(argv);
	return a64;
}

static int parse_num(const char *s, double *v)
{
	char *e;

	errno = 0;
	*v = strtod(s, &e);
	return errno || e == s || *e || !(*v > 0) || !isfinite(*v) ? -1 : 0;
}

/* @s, a whole number (no sign), into *@v: 0, or -1 if it is none. */
static int parse_whole(const char *s, unsigned long long *v)
{
	char *e;

	errno = 0;
	*v = strtoull(s, &e, 10);
	return errno || e == s || *e || s[0] == '-' ? -1 : 0;
}

/* Profile @p's branches and mispredictions (dbtp_gt_model_branches()). */
static void print_branches(const dbtp_gt_model *m, uint32_t p)
{
	struct dbtp_gt_branches b;
	uint64_t miss = 0;
	char n1[32], n2[32];

	dbtp_gt_model_branches(m, p, &b);
	printf("  mispredicted branches (dbtprof's predictor, %s):",
	       predictor_name(dbtp_gt_model_predictor(m)));
	for (int k = 0; k < DBTP_BPK_N; k++) {
		printf("%s %s %s of %s", k ? "," : "", bpk_name[k],
		       fmt_u64(b.miss[k], n1), fmt_u64(b.n[k], n2));
		miss += b.miss[k];
	}
	printf("; %.2f per 1000 instructions\n",
	       b.insns ? 1000.0 * (double)miss / (double)b.insns : 0);
}

/* A group's creation or join point, @at + @t * T: "0.250" when it does
 * not change with T, else "0.100+0.05*T". */
static void print_point(double at, double t)
{
	printf("%.3f", at);
	if (t != 0)
		printf("%+.3g*T", t);
}

/* The share of the emitted blocks' executions in the profiles that missed
 * their threads' jump caches (struct dbtp_gt_block's cold). */
static double cold_share(const dbtp_gt_model *m,
			 const struct dbtp_gt_summary *s)
{
	double n = 0, cold = 0;

	for (uint32_t b = 0; b < dbtp_gt_model_nblocks(m); b++)
		if (s->emitted[b]) {
			n += (double)dbtp_gt_model_block(m, b)->count;
			cold += (double)dbtp_gt_model_block(m, b)->cold;
		}
	return n ? cold / n : 0;
}

/* The profiles' transitions to another page: by a direct branch
 * (struct dbtp_gt_block's crossed, @k 0) or falling (fell, @k 1). */
static uint64_t page_leaves(const dbtp_gt_model *m, int k)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < dbtp_gt_model_nblocks(m); b++)
		n += k ? dbtp_gt_model_block(m, b)->fell
		       : dbtp_gt_model_block(m, b)->crossed;
	return n;
}

static void print_text(const dbtp_gt_model *m, char **paths,
		       const struct dbtp_gt_summary *s, const char *out,
		       int naive)
{
	uint32_t nb = dbtp_gt_model_nblocks(m);
	double tot = s->dyn[0] + s->dyn[1] + s->dyn[2], tmax = 0;
	uint32_t st[3] = {0, 0, 0};
	char n1[32], n2[32];

	for (uint32_t p = 0; p < dbtp_gt_model_nprofiles(m); p++) {
		double t = dbtp_gt_model_threads(m, p);

		printf("profile %s: thread parameter %g\n", paths[p], t);
		print_branches(m, p);
		if (t > tmax)
			tmax = t;
	}
	for (uint32_t b = 0; b < nb; b++)
		if (s->emitted[b])
			for (int j = 0; j < 3; j++)
				st[j] += s->stat[b].n[j];
	printf("blocks: %u distinct, %u emitted, %u skipped (undecodable)\n",
	       nb, s->blocks, s->skipped);
	if (s->loader)
		printf(
		    "dynamic loader: %u blocks, %s instructions, run only if "
		    "the program is linked statically\n",
		    s->loader, fmt_u64((uint64_t)s->dyn_loader, n1));
	printf("static instructions: %u kept, %u rewritten, %u dropped\n",
	       st[0], st[1], st[2]);
	printf("dynamic instructions at T=%g: %s\n", naive ? 1 : tmax,
	       fmt_u64((uint64_t)tot, n1));
	for (int j = 0; j < 3; j++)
		printf("  %-10s %16s  %7.3f%%\n", outcome_name[j],
		       fmt_u64((uint64_t)s->dyn[j], n1),
		       tot ? 100 * s->dyn[j] / tot : 0);
	printf("bytes read from /dev/zero at T=%g: %s\n", naive ? 1 : tmax,
	       fmt_u64((uint64_t)s->read, n1));
	printf("blocks whose branch goes either way at random: %u (%u "
	       "indirect)\n",
	       s->mispredict, s->mispredict_ind);
	printf("blocks whose branch leaves the page: %u (the profiles' "
	       "transitions to another page: %s by a branch, %s falling)\n",
	       s->cross_page, fmt_u64(page_leaves(m, 0), n1),
	       fmt_u64(page_leaves(m, 1), n2));
	printf("chains (a jump or call, then a copy of its target): %u, "
	       "%.2f%% of block executions\n",
	       s->chains, s->execs ? 100 * s->execs_chained / s->execs : 0);
	printf("jump cache (each thread's, as QEMU's, every execution "
	       "looked up): %.2f%% of the profiles' block executions "
	       "missed\n",
	       100 * cold_share(m, s));
	printf("floating-point instructions at T=%g: %s%s\n", naive ? 1 : tmax,
	       fmt_u64((uint64_t)s->dyn_fp, n1),
	       s->fp_exact ? ", each after a reset of the status flags" : "");
	if (dbtp_gt_model_sampled(m))
		printf("cache tallies: estimated from sampled profiles "
		       "(record --cache-sample)\n");
	if (!dbtp_gt_model_mem(m))
		printf("L1 data cache misses: not reproduced (the profiles "
		       "have no memory accesses: record them with --cache)\n");
	else
		printf("L1 data cache misses at T=%g: %s of the profiles' "
		       "%s, by operands walking in %u blocks\n",
		       naive ? 1 : tmax, fmt_u64((uint64_t)s->misses_walk, n1),
		       fmt_u64((uint64_t)s->misses_orig, n2), s->walk_blocks);
	if (dbtp_gt_model_mem(m))
		printf("L2 misses at T=%g: %s of the profiles' %s, by walks "
		       "over the far area in %u of those blocks (%u waiting "
		       "for each other, as loads waited for loads)\n",
		       naive ? 1 : tmax, fmt_u64((uint64_t)s->l2_walk, n1),
		       fmt_u64((uint64_t)s->l2_orig, n2), s->far_blocks,
		       s->far_chase);
	if (dbtp_gt_model_mem(m))
		printf("unaligned accesses at T=%g: %s of the profiles' %s, "
		       "by operands moved off their alignment in %u blocks\n",
		       naive ? 1 : tmax,
		       fmt_u64((uint64_t)s->unaligned_made, n1),
		       fmt_u64((uint64_t)s->unaligned_orig, n2),
		       s->unaligned_blocks);
	if (!naive) {
		printf("groups: %u\n", dbtp_gt_model_ngroups(m));
		for (uint32_t i = 0; i < dbtp_gt_model_ngroups(m); i++) {
			const struct dbtp_gt_group *g =
			    dbtp_gt_model_group(m, i);

			printf("  group %u: size %g*T %+g, %u blocks, ", i,
			       g->alpha, g->beta, g->nhot);
			if (g->parent < 0) {
				printf("first thread's group");
			} else {
				printf("created by group %d %s", g->parent,
				       g->serial ? "from " : "at ");
				print_point(g->create_at, g->create_t);
				printf(", joined %s",
				       g->serial ? "one after another by "
						 : "at ");
				print_point(g->join_at, g->join_t);
			}
			printf(", %s\n", g->even ? "even" : "uneven");
		}
	}
	printf("wrote %s\n", out);
}

static void print_json(const dbtp_gt_model *m, char **paths,
		       const struct dbtp_gt_summary *s, const char *out,
		       int naive)
{
	uint32_t nb = dbtp_gt_model_nblocks(m);
	struct dbtp_gt_branches b;
	struct json j;

	json_begin(&j, stdout);
	json_str(&j, "output", out);
	json_bool(&j, "naive", naive);
	json_str(&j, "branch_predictor",
		 predictor_name(dbtp_gt_model_predictor(m)));
	json_arr(&j, "profiles");
	for (uint32_t p = 0; p < dbtp_gt_model_nprofiles(m); p++) {
		json_obj(&j, NULL);
		json_str(&j, "trace", paths[p]);
		json_double(&j, "threads", dbtp_gt_model_threads(m, p));
		dbtp_gt_model_branches(m, p, &b);
		json_u64(&j, "instructions", b.insns);
		json_branches(&j, b.n, b.miss);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_u64(&j, "blocks", nb);
	json_u64(&j, "emitted", s->blocks);
	json_u64(&j, "skipped", s->skipped);
	json_u64(&j, "loader_blocks", s->loader);
	json_u64(&j, "loader_instructions", (uint64_t)s->dyn_loader);
	json_u64(&j, "read_bytes", (uint64_t)s->read);
	json_u64(&j, "mispredict_blocks", s->mispredict);
	json_u64(&j, "mispredict_indirect_blocks", s->mispredict_ind);
	json_u64(&j, "cross_page_blocks", s->cross_page);
	json_u64(&j, "page_crossings", page_leaves(m, 0));
	json_u64(&j, "page_falls", page_leaves(m, 1));
	json_u64(&j, "chains", s->chains);
	json_u64(&j, "chained_executions", (uint64_t)s->execs_chained);
	json_double(&j, "jump_cache_missed", cold_share(m, s));
	json_u64(&j, "block_executions", (uint64_t)s->execs);
	json_u64(&j, "fp_instructions", (uint64_t)s->dyn_fp);
	json_bool(&j, "fp_exact", s->fp_exact);
	json_bool(&j, "memory_accesses", dbtp_gt_model_mem(m));
	json_bool(&j, "cache_sampled", dbtp_gt_model_sampled(m));
	json_u64(&j, "walk_blocks", s->walk_blocks);
	json_u64(&j, "l1_misses", (uint64_t)s->misses_orig);
	json_u64(&j, "l1_misses_walked", (uint64_t)s->misses_walk);
	json_u64(&j, "far_blocks", s->far_blocks);
	json_u64(&j, "far_chase_blocks", s->far_chase);
	json_u64(&j, "l2_misses", (uint64_t)s->l2_orig);
	json_u64(&j, "l2_misses_walked", (uint64_t)s->l2_walk);
	json_u64(&j, "unaligned_blocks", s->unaligned_blocks);
	json_u64(&j, "unaligned", (uint64_t)s->unaligned_orig);
	json_u64(&j, "unaligned_made", (uint64_t)s->unaligned_made);
	json_obj(&j, "dynamic");
	for (int k = 0; k < 3; k++)
		json_u64(&j, outcome_name[k], (uint64_t)s->dyn[k]);
	json_close_obj(&j);
	json_arr(&j, "groups");
	for (uint32_t i = 0; !naive && i < dbtp_gt_model_ngroups(m); i++) {
		const struct dbtp_gt_group *g = dbtp_gt_model_group(m, i);

		json_obj(&j, NULL);
		json_double(&j, "alpha", g->alpha);
		json_double(&j, "beta", g->beta);
		json_arr(&j, "sizes");
		for (uint32_t p = 0; p < dbtp_gt_model_nprofiles(m); p++)
			json_u64(&j, NULL, g->sizes[p]);
		json_close_arr(&j);
		json_i64(&j, "parent", g->parent);
		json_double(&j, "create_at", g->create_at);
		json_double(&j, "create_t", g->create_t);
		json_double(&j, "join_at", g->join_at);
		json_double(&j, "join_t", g->join_t);
		json_bool(&j, "serial", g->serial);
		json_bool(&j, "even", g->even);
		json_arr(&j, "blocks");
		for (uint32_t k = 0; k < g->nhot; k++) {
			const struct dbtp_gt_hot *h = &g->hot[k];

			json_obj(&j, NULL);
			json_hex(&j, "vaddr",
				 dbtp_gt_model_block(m, h->block)->vaddr);
			json_u64(&j, "id", h->block);
			json_double(&j, "theta", h->theta);
			json_double(&j, "delta", h->delta);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_arr(&j, "block_outcomes");
	for (uint32_t b = 0; b < nb; b++) {
		if (!s->emitted[b])
			continue;
		json_obj(&j, NULL);
		json_u64(&j, "id", b);
		json_hex(&j, "vaddr", dbtp_gt_model_block(m, b)->vaddr);
		for (int k = 0; k < 3; k++)
			json_u64(&j, outcome_name[k], s->stat[b].n[k]);
		json_u64(&j, "helpers", s->stat[b].helpers);
		json_u64(&j, "executions", dbtp_gt_model_block(m, b)->count);
		json_u64(&j, "mispredicted",
			 dbtp_gt_model_block(m, b)->mispredicted);
		json_bool(&j, "random", s->random[b]);
		json_u64(&j, "crossed", dbtp_gt_model_block(m, b)->crossed);
		json_u64(&j, "fell", dbtp_gt_model_block(m, b)->fell);
		json_u64(&j, "cold", dbtp_gt_model_block(m, b)->cold);
		json_bool(&j, "crosses", s->crossing[b]);
		json_u64(&j, "l1_misses", dbtp_gt_model_block(m, b)->l1_misses);
		json_u64(&j, "l2_misses", dbtp_gt_model_block(m, b)->l2_misses);
		json_double(&j, "walks", s->walks[b]);
		json_bool(&j, "far", s->far[b] > 0);
		json_u64(&j, "unaligned", dbtp_gt_model_block(m, b)->unaligned);
		json_double(&j, "misaligned", s->misaligned[b]);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_end(&j);
}

/*
 * "@pre @cmd" as words in @argv (free(*argv) and *@prog), @cmd's program
 * found in $PATH if it names no directory (*@prog, else NULL), as the
 * shell would: a DBT in front of it may not look there (QEMU's user mode
 * does not).  -1 after a message.
 */
static int command_words(const char *pre, const char *cmd, char ***argv,
			 char **prog)
{
	char *line, **pw = NULL;
	dbtp_err err = {0};
	int n, np = 0, rc;

	*prog = NULL;
	if (asprintf(&line, "%s %s", pre, cmd) < 0) {
		error("out of memory");
		return -1;
	}
	if (!dbtp_words_split(pre, &pw, &np, &err))
		free(pw);
	rc = dbtp_words_split(line, argv, &n, &err);
	if (!rc && np < n && (*prog = dbtp_which((*argv)[np])))
		(*argv)[np] = *prog;
	if (!rc && !n) {
		free(*argv);
		err.code = EINVAL;
		snprintf(err.msg, sizeof(err.msg), "empty command");
		rc = -1;
	}
	if (rc)
		error("validate: '%s': %s", line, err.msg);
	free(line);
	return rc;
}

/* What validate measures of a run. */
enum measure { M_CPU, M_WALL, M_INSTRUCTIONS, M_CYCLES };

static const char *const measure_name[] = {"cpu", "wall", "instructions",
					   "cycles"};

/*
 * How a run is measured: @what; for a count, by a hardware counter, or
 * with @cachegrind (instructions where the machine has no counter) into
 * files under @dir.
 */
struct meter {
	enum measure what;
	enum dbtp_counter_event ev;
	int cachegrind;
	char dir[64];
};

/* The sum of the instruction counts of the cachegrind files in @m's
 * directory (one a process), removed after reading; -1 after a message. */
static double cachegrind_count(const struct meter *m)
{
	DIR *d = opendir(m->dir);
	struct dirent *e;
	double sum = 0;
	int rc = 0, files = 0;

	if (!d) {
		error("%s: %s", m->dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char path[512], *buf = NULL;
		size_t len = 0;
		uint64_t ir;
		dbtp_err err = {0};

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", m->dir, e->d_name);
		if (dbtp_read_file(path, &buf, &len, &err) ||
		    dbtp_cachegrind_ir(buf, len, &ir, &err)) {
			error("validate: cachegrind's output %s: %s", e->d_name,
			      err.msg);
			rc = -1;
		} else {
			sum += (double)ir;
			files++;
		}
		free(buf);
		unlink(path);
	}
	closedir(d);
	if (!rc && !files) {
		error("validate: cachegrind wrote no output");
		rc = -1;
	}
	return rc ? -1 : sum;
}

/*
 * The measure of one run of @pre followed by @cmd (@m): CPU time (user +
 * system, its threads and waited-for children included), elapsed time,
 * or the user-mode instructions or cycles of it and what it starts; on
 * the CPUs of @pin if not NULL; -1 after a message.
 */
static double time_run(const char *pre, const char *cmd, const struct meter *m,
		       const cpu_set_t *pin, char *const *env)
{
	char **argv, *prog, *cg = NULL;
	const char *shown = pre, *how = "";
	struct timespec t0, t1;
	struct rusage ru;
	int st, fd, go[2] = {-1, -1}, cfd = -1;
	uint64_t count = 0;
	dbtp_err err = {0};
	pid_t pid;

	if (m->cachegrind) {
		if (asprintf(&cg,
			     "valgrind --tool=cachegrind --cache-sim=no "
			     "--trace-children=yes "
			     "--cachegrind-out-file=%s/cg.%%p %s",
			     m->dir, pre) < 0) {
			error("out of memory");
			return -1;
		}
		pre = cg;
		how = " under cachegrind";
	}
	if (command_words(pre, cmd, &argv, &prog)) {
		free(cg);
		return -1;
	}
	if (m->what >= M_INSTRUCTIONS && !m->cachegrind &&
	    pipe2(go, O_CLOEXEC)) {
		error("pipe: %s", strerror(errno));
		goto fail;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		error("fork: %s", strerror(errno));
		goto fail;
	}
	if (!pid) {
		char b;

		if (go[0] >= 0) { /* the counter first */
			close(go[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(126);
		}
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (pin && sched_setaffinity(0, sizeof(*pin), pin))
			_exit(126);
		execvpe(argv[0], argv, env);
		_exit(127);
	}
	free(argv);
	free(prog);
	argv = NULL, prog = NULL;
	if (go[0] >= 0) {
		close(go[0]);
		go[0] = -1;
		if (dbtp_counter_open(pid, m->ev, &cfd, &err)) {
			error("validate: %s", err.msg);
			close(go[1]);
			waitpid(pid, &st, 0);
			return -1;
		}
		if (write(go[1], "g", 1) != 1) {
			error("validate: starting the run: %s",
			      strerror(errno));
			close(go[1]);
			close(cfd);
			waitpid(pid, &st, 0);
			return -1;
		}
		close(go[1]);
	}
	if (wait4(pid, &st, 0, &ru) < 0) {
		error("wait4: %s", strerror(errno));
		if (cfd >= 0)
			close(cfd);
		free(cg);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (cfd >= 0) {
		int r = dbtp_counter_read(cfd, &count, &err);

		close(cfd);
		if (r) {
			error("validate: %s", err.msg);
			return -1;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		if (WIFEXITED(st))
			error("validate: '%s %s'%s exited with %d", shown, cmd,
			      how, WEXITSTATUS(st));
		else
			error("validate: '%s %s'%s died of signal %d", shown,
			      cmd, how, WTERMSIG(st));
		free(cg);
		return -1;
	}
	free(cg);
	if (m->cachegrind)
		return cachegrind_count(m);
	if (m->what >= M_INSTRUCTIONS)
		return (double)count;
	if (m->what == M_CPU)
		return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) /
			   1e6;
	return (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
fail:
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	free(argv);
	free(prog);
	free(cg);
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median, or with @min the least, of @n times, @t left unchanged. */
static double summary(const double *t, unsigned n, int min)
{
	double s[64];

	memcpy(s, t, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	if (min)
		return s[0];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * @runs rounds over the @n configurations @pre: in each, one run of @orig
 * and one of @gen under each configuration in turn, their times in
 * @a[i][round] and @b[i][round]; so that a change in the machine's load
 * or speed during the validation falls on every configuration alike, not
 * on the ones that ran then.  0 or -1 after a message.
 */
static int time_runs(const char *const *pre, unsigned n, const char *orig,
		     const char *gen, const char *fixed, unsigned runs,
		     const struct meter *m, const cpu_set_t *pin,
		     char *const *env, double (*a)[64], double (*b)[64],
		     double (*f)[64])
{
	for (unsigned r = 0; r < runs; r++)
		for (unsigned i = 0; i < n; i++) {
			progress("validate: round %u/%u, %s", r + 1, runs,
				 pre[i]);
			if ((a[i][r] = time_run(pre[i], orig, m, pin, env)) <
				0 ||
			    (b[i][r] = time_run(pre[i], gen, m, pin, env)) <
				0 ||
			    (fixed && (f[i][r] = time_run(pre[i], fixed, m, pin,
							  env)) < 0))
				return -1;
		}
	return 0;
}

/*
 * A count for @m: by a hardware counter where the machine has one, else
 * (instructions) by cachegrind, which cannot run Valgrind's own
 * configurations (@pre of @names, @n of them).  0 or -1 after a message.
 */
static int setup_meter(struct meter *m, char *const *names,
		       const char *const *pre, unsigned n)
{
	dbtp_err err = {0};
	const char *tmp = getenv("TMPDIR");
	char *vg;
	int fd;

	m->ev = m->what == M_CYCLES ? DBTP_COUNTER_CYCLES
				    : DBTP_COUNTER_INSTRUCTIONS;
	if (!dbtp_counter_open(0, m->ev, &fd, &err)) {
		close(fd);
		return 0;
	}
	if (m->what == M_CYCLES) {
		error("validate: --measure cycles: no cycle counter here "
		      "(%s)",
		      err.msg);
		return -1;
	}
	vg = dbtp_which("valgrind");
	if (!vg) {
		error("validate: --measure instructions: no instruction "
		      "counter here (%s), and no valgrind for cachegrind to "
		      "count them",
		      err.msg);
		return -1;
	}
	free(vg);
	for (unsigned i = 0; i < n; i++) {
		char **w = NULL;
		dbtp_err e2 = {0};
		int nw = 0, isvg;

		if (dbtp_words_split(pre[i], &w, &nw, &e2))
			continue;
		isvg =
		    nw > 0 &&
		    !strcmp(strrchr(w[0], '/') ? strrchr(w[0], '/') + 1 : w[0],
			    "valgrind");
		free(w);
		if (isvg) {
			error("validate: --measure instructions: no "
			      "instruction counter here (%s), and cachegrind, "
			      "which counts them in its place, cannot run the "
			      "Valgrind configuration %s",
			      err.msg, names[i]);
			return -1;
		}
	}
	/* a directory that needs no quoting in the command line */
	if (!tmp || !*tmp || strlen(tmp) >= 40 ||
	    tmp[strspn(tmp,
		       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		       "0123456789/._-+")])
		tmp = "/tmp";
	snprintf(m->dir, sizeof(m->dir), "%s/dbtprof-cg.XXXXXX", tmp);
	if (!mkdtemp(m->dir)) {
		error("validate: %s: %s", m->dir, strerror(errno));
		m->dir[0] = '\0';
		return -1;
	}
	m->cachegrind = 1;
	error("note: no instruction counter here (%s): cachegrind counts "
	      "them (runs some 50 times slower)",
	      err.msg);
	return 0;
}

/* Removes what setup_meter() made. */
static void meter_done(struct meter *m)
{
	DIR *d;
	struct dirent *e;

	if (!m->dir[0] || !(d = opendir(m->dir)))
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", m->dir,
				 e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(m->dir);
}

/* A spread of one program's runs that validate warns of (widest()). */
#define DBTP_GT_NOISY 0.10
/* A share of the generated program's time that its fixed part may take
 * before validate warns that the difference, its work, is as noisy as
 * both. */
#define DBTP_GT_FIXED_MOST 0.5

/*
 * The widest spread, (most - least) / least, of one program's @runs runs
 * under one of the @n configurations @names (@a the original's, @b the
 * generated program's, @f the fixed part's or NULL), of runs of 10 ms or
 * more; which in @what.
 */
static double widest(char *const *names, unsigned n, unsigned runs,
		     double (*a)[64], double (*b)[64], double (*f)[64],
		     int counts, char *what, size_t len)
{
	static const char *const prog[] = {"original", "generated", "fixed"};
	double w = 0;

	for (unsigned i = 0; i < n; i++)
		for (int p = 0; p < 3; p++) {
			double(*t)[64] = p == 0 ? a : p == 1 ? b : f;
			double lo = INFINITY, hi = 0;

			for (unsigned r = 0; t && r < runs; r++) {
				lo = t[i][r] < lo ? t[i][r] : lo;
				hi = t[i][r] > hi ? t[i][r] : hi;
			}
			if (t && lo >= (counts ? 1 : 0.01) &&
			    (hi - lo) / lo > w) {
				w = (hi - lo) / lo;
				snprintf(what, len,
					 "the %s program under %s: "
					 "%.*f-%.*f%s",
					 prog[p], names[i], counts ? 0 : 3, lo,
					 counts ? 0 : 3, hi,
					 counts ? "" : " s");
			}
		}
	return w;
}

/* A time, or (@counts) a count, exactly: a median of two may end in .5. */
static void json_measured(struct json *j, const char *key, double v, int counts)
{
	if (!counts) {
		json_double(j, key, v);
	} else if (v == (double)(uint64_t)v) {
		json_u64(j, key, (uint64_t)v);
	} else {
		json_key(j, key);
		fprintf(j->f, "%.1f", v);
	}
}

/* The times (counts) of every run, in the order they ran. */
static void json_runs(struct json *j, const char *key, const double *t,
		      unsigned n, int counts)
{
	json_arr(j, key);
	for (unsigned i = 0; i < n; i++)
		json_measured(j, NULL, t[i], counts);
	json_close_arr(j);
}

/* A CPU list, "0" or "0,2-3", into @set: 0, or -1 if malformed. */
static int parse_cpus(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s) {
		char *end;
		unsigned long a, b;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		a = b = strtoul(s, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -1;
			b = strtoul(end + 1, &end, 10);
		}
		if (errno || a > b || b >= CPU_SETSIZE)
			return -1;
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, set);
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return 0;
}

static int cmd_validate(int argc, char **argv)
{
	enum {
		O_ORIG = 256,
		O_GEN,
		O_CONFIG,
		O_JSON,
		O_MEASURE,
		O_CPUS,
		O_STAT,
		O_FIXED
	};
	static const struct option opts[] = {
	    {"original", required_argument, NULL, O_ORIG},
	    {"generated", required_argument, NULL, O_GEN},
	    {"fixed", required_argument, NULL, O_FIXED},
	    {"config", required_argument, NULL, O_CONFIG},
	    {"runs", required_argument, NULL, 'r'},
	    {"measure", required_argument, NULL, O_MEASURE},
	    {"cpus", required_argument, NULL, O_CPUS},
	    {"stat", required_argument, NULL, O_STAT},
	    {"json", no_argument, NULL, O_JSON},
	    {"keep-env", no_argument, NULL, 'K'},
	    {"env", required_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *extra[64];
	char **env = NULL;
	const char *orig = NULL, *gen = NULL, *fixed = NULL, *cfg[64],
		   *cpus = NULL;
	cpu_set_t pin, avail;
	char *names[64] = {0};
	const char *pre[64];
	double to[64], tg[64], tf[64], no[64], ng[64], spread, share = 0;
	char widest_at[128] = "";
	double(*ro)[64] = NULL, (*rg)[64] = NULL, (*rf)[64] = NULL,
	(*nro)[64] = NULL, (*nrg)[64] = NULL, (*eo)[64], (*eg)[64];
	struct dbtp_gt_vstats v = {0};
	dbtp_err err = {0};
	unsigned runs = 3, ncfg = 0, share_at = 0, nextra = 0;
	struct meter meter = {.what = M_CPU};
	int c, json = 0, rc = 1, min = 0, a64, counts, prec, width,
	       keep_env = 0;
	const char *unit;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+r:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'K':
			keep_env = 1;
			break;
		case 'e':
			if (env_arg("gentest validate", optarg))
				return EXIT_USAGE;
			if (nextra == 64)
				return usage_error("gentest validate",
						   "at most 64 --env");
			extra[nextra++] = optarg;
			break;
		case O_ORIG:
			orig = optarg;
			break;
		case O_GEN:
			gen = optarg;
			break;
		case O_FIXED:
			fixed = optarg;
			break;
		case O_CONFIG:
			if (ncfg == 64)
				return usage_error("gentest validate",
						   "at most 64 --config");
			if (!*optarg || optarg[0] == '=' ||
			    (strchr(optarg, '=') && !strchr(optarg, '=')[1]))
				return usage_error(
				    "gentest validate",
				    "--config wants NAME=COMMAND or the NAME "
				    "of a default, not '%s'",
				    optarg);
			cfg[ncfg++] = optarg;
			break;
		case 'r': {
			unsigned long long v;

			if (parse_whole(optarg, &v) || !v || v > 63)
				return usage_error("gentest validate",
						   "--runs wants 1 to 63, not "
						   "'%s'",
						   optarg);
			runs = (unsigned)v;
			break;
		}
		case O_JSON:
			json = 1;
			break;
		case O_MEASURE:
			for (meter.what = M_CPU;
			     meter.what <= M_CYCLES &&
			     strcmp(optarg, measure_name[meter.what]);
			     meter.what++)
				;
			if (meter.what > M_CYCLES)
				return usage_error("gentest validate",
						   "--measure is cpu, wall, "
						   "instructions or cycles, "
						   "not '%s'",
						   optarg);
			break;
		case O_STAT:
			if (strcmp(optarg, "median") && strcmp(optarg, "min"))
				return usage_error("gentest validate",
						   "--stat is median or min, "
						   "not '%s'",
						   optarg);
			min = !strcmp(optarg, "min");
			break;
		case O_CPUS:
			if (parse_cpus(optarg, &pin))
				return usage_error("gentest validate",
						   "--cpus wants a CPU list "
						   "such as 0 or 0,2-3, not "
						   "'%s'",
						   optarg);
			cpus = optarg;
			break;
		case 'h':
			fputs(validate_usage, stdout);
			return 0;
		default:
			return usage_error("gentest validate",
					   "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind != argc)
		return usage_error("gentest validate",
				   "unexpected argument '%s'", argv[optind]);
	if (!orig || !gen)
		return usage_error("gentest validate",
				   "give --original and --generated");
	if (cpus && !sched_getaffinity(0, sizeof(avail), &avail)) {
		CPU_AND(&avail, &avail, &pin);
		if (!CPU_COUNT(&avail))
			return usage_error("gentest validate",
					   "--cpus %s: none of them is "
					   "available here",
					   cpus);
	}
	if (check_words("--original", orig, 0) ||
	    check_words("--generated", gen, 0) ||
	    (fixed && check_words("--fixed", fixed, 0)))
		return 2;
	a64 = aarch64_program(gen);
	if (!ncfg)
		for (size_t i = 0; i < NDEFAULT(a64); i++)
			cfg[ncfg++] =
			    a64 ? default_configs_a64[i] : default_configs[i];
	for (unsigned i = 0; i < ncfg; i++) {
		const char *d =
		    strchr(cfg[i], '=') ? cfg[i] : default_config(cfg[i], a64);

		if (!d)
			return usage_error("gentest validate",
					   "--config %s: no default "
					   "configuration of that name for %s "
					   "programs",
					   cfg[i], a64 ? "AArch64" : "x86-64");
		cfg[i] = d;
		if (check_words("--config", strchr(d, '=') + 1, 1))
			return 2;
	}
	for (unsigned i = 0; i < ncfg; i++) {
		const char *eq = strchr(cfg[i], '=');

		names[i] = strndup(cfg[i], (size_t)(eq - cfg[i]));
		if (!names[i]) {
			error("out of memory");
			goto out;
		}
		pre[i] = eq + 1;
	}
	ro = calloc(ncfg, sizeof(*ro));
	rg = calloc(ncfg, sizeof(*rg));
	rf = calloc(ncfg, sizeof(*rf));
	nro = calloc(ncfg, sizeof(*nro));
	nrg = calloc(ncfg, sizeof(*nrg));
	if (!ro || !rg || !rf || !nro || !nrg) {
		error("out of memory");
		goto out;
	}
	counts = meter.what >= M_INSTRUCTIONS;
	prec = counts ? 0 : 3;
	width = counts ? 15 : 12;
	unit = counts ? "" : " s";
	if (counts && setup_meter(&meter, names, pre, ncfg))
		goto out;
	if (!(env = dbtp_run_env(keep_env, extra, nextra))) {
		error("out of memory");
		goto out;
	}
	if (time_runs(pre, ncfg, orig, gen, fixed, runs, &meter,
		      cpus ? &pin : NULL, env, ro, rg, rf))
		goto out;
	for (unsigned i = 0; i < ncfg; i++) {
		to[i] = summary(ro[i], runs, min);
		tg[i] = summary(rg[i], runs, min);
		tf[i] = fixed ? summary(rf[i], runs, min) : 0;
	}
	progress_done();
	spread = widest(names, ncfg, runs, ro, rg, fixed ? rf : NULL, counts,
			widest_at, sizeof(widest_at));
	if (spread > DBTP_GT_NOISY)
		error("warning: one program's runs spread by %.0f%% (%s): the "
		      "machine's noise may exceed the errors; more --runs, "
		      "--cpus or --stat min may help",
		      100 * spread, widest_at);
	for (unsigned i = 0; i < ncfg; i++) {
		/* a clock too coarse for a run: one microsecond */
		if (to[i] <= 0)
			to[i] = 1e-6;
		if (tg[i] <= 0)
			tg[i] = 1e-6;
	}
	/* where the fixed part takes the largest share */
	for (unsigned i = 0; fixed && i < ncfg; i++)
		if (tf[i] / tg[i] > share)
			share = tf[i] / tg[i], share_at = i;
	if (share > DBTP_GT_FIXED_MOST)
		error("warning: the fixed part is %.0f%% of the generated "
		      "program's time under %s: the program's work is the "
		      "difference, as noisy as both; at a smaller --scale it "
		      "is a larger share",
		      100 * share, names[share_at]);
	/* the ratios and errors from the times (less the fixed part) */
	eo = ro;
	eg = rg;
	for (unsigned i = 0; fixed && i < ncfg; i++) {
		no[i] = to[i] - tf[i];
		ng[i] = tg[i] - tf[i];
		if (!(no[i] > 0) || !(ng[i] > 0)) {
			error("validate: --fixed: under %s it takes %.*f%s, "
			      "not less than the %s program's %.*f%s",
			      names[i], prec, tf[i], unit,
			      no[i] > 0 ? "generated" : "original", prec,
			      no[i] > 0 ? tg[i] : to[i], unit);
			goto out;
		}
		for (unsigned r = 0; r < runs; r++) {
			nro[i][r] = ro[i][r] - rf[i][r];
			nrg[i][r] = rg[i][r] - rf[i][r];
		}
		eo = nro;
		eg = nrg;
	}
	if (dbtp_gt_vstats(fixed ? no : to, fixed ? ng : tg, ncfg, &v, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (fixed) { /* the testing speedup: whole times */
		double so = 0, sg = 0;

		for (unsigned i = 0; i < ncfg; i++) {
			so += to[i];
			sg += tg[i];
		}
		v.speedup = so / sg;
	}
	if (json) {
		struct json j;

		json_begin(&j, stdout);
		json_str(&j, "original", orig);
		json_str(&j, "generated", gen);
		json_u64(&j, "runs", runs);
		json_str(&j, "measure", measure_name[meter.what]);
		if (meter.what >= M_INSTRUCTIONS)
			json_str(&j, "counter",
				 meter.cachegrind ? "cachegrind" : "perf");
		else
			json_null(&j, "counter");
		json_str(&j, "stat", min ? "min" : "median");
		if (cpus)
			json_str(&j, "cpus", cpus);
		else
			json_null(&j, "cpus");
		if (fixed)
			json_str(&j, "fixed", fixed);
		else
			json_null(&j, "fixed");
		json_arr(&j, "configs");
		for (unsigned i = 0; i < ncfg; i++) {
			json_obj(&j, NULL);
			json_str(&j, "name", names[i]);
			json_str(&j, "command", pre[i]);
			json_measured(&j,
				      counts ? "original_count" : "original_s",
				      to[i], counts);
			json_measured(
			    &j, counts ? "generated_count" : "generated_s",
			    tg[i], counts);
			if (fixed)
				json_measured(
				    &j, counts ? "fixed_count" : "fixed_s",
				    tf[i], counts);
			json_double(&j, "original_ratio", v.ratio_orig[i]);
			json_double(&j, "generated_ratio", v.ratio_gen[i]);
			json_double(&j, "error", v.error[i]);
			json_runs(&j, "original_runs", ro[i], runs, counts);
			json_runs(&j, "generated_runs", rg[i], runs, counts);
			if (fixed)
				json_runs(&j, "fixed_runs", rf[i], runs,
					  counts);
			json_arr(&j, "round_errors");
			for (unsigned r = 0; r < runs; r++)
				json_double(&j, NULL,
					    dbtp_gt_round_error(
						eo[i], eo[0], eg[i], eg[0], r));
			json_close_arr(&j);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_double(&j, "max_spread", spread);
		json_double(&j, "mean_error", v.mean_error);
		if (isnan(v.spearman))
			json_null(&j, "spearman");
		else
			json_double(&j, "spearman", v.spearman);
		json_double(&j, "speedup", v.speedup);
		json_end(&j);
	} else {
		if (counts)
			printf("user-mode %s, counted by %s\n",
			       measure_name[meter.what],
			       meter.cachegrind ? "cachegrind"
						: "the hardware counter");
		if (fixed)
			printf("%s less the fixed part's (--fixed) in the "
			       "ratios and errors\n",
			       counts ? measure_name[meter.what] : "times");
		printf("%-16s %*s %8s %*s %8s %8s  %s%s%s\n", "configuration",
		       width, counts ? "original" : "original s", "ratio",
		       width, counts ? "generated" : "generated s", "ratio",
		       "error", "rounds' errors", fixed ? "  fixed" : "",
		       fixed ? unit : "");
		for (unsigned i = 0; i < ncfg; i++) {
			double lo = INFINITY, hi = 0;

			for (unsigned r = 0; r < runs; r++) {
				double e = dbtp_gt_round_error(eo[i], eo[0],
							       eg[i], eg[0], r);

				lo = e < lo ? e : lo;
				hi = e > hi ? e : hi;
			}
			printf("%-16s %*.*f %8.3f %*.*f %8.3f %7.2f%%  "
			       "%.2f-%.2f%%",
			       names[i], width, prec, to[i], v.ratio_orig[i],
			       width, prec, tg[i], v.ratio_gen[i],
			       100 * v.error[i], 100 * lo, 100 * hi);
			if (fixed)
				printf("  %.*f", prec, tf[i]);
			putchar('\n');
		}
		printf("mean ratio error: %.2f%%\n", 100 * v.mean_error);
		if (isnan(v.spearman))
			printf("rank correlation: - (no spread)\n");
		else
			printf("rank correlation: %.3f\n", v.spearman);
		printf("testing speedup: %.1fx\n", v.speedup);
	}
	if (fflush(stdout) || ferror(stdout)) {
		error("writing the output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	progress_done();
	meter_done(&meter);
	dbtp_run_env_free(env);
	dbtp_gt_vstats_free(&v);
	free(ro);
	free(rg);
	free(rf);
	free(nro);
	free(nrg);
	for (unsigned i = 0; i < ncfg; i++)
		free(names[i]);
	return rc;
}

/* One profile, read into a model of its own (read_profiles()). */
struct reading {
	const char *path;
	double threads;
	dbtp_trace *t;
	dbtp_gt_model *m;
	dbtp_err err;
	int rc;
};

struct readings {
	struct reading *r;
	int n, next; /* next under mu */
	int predictor;
	pthread_mutex_t mu;
};

static void *read_some(void *arg)
{
	struct readings *rs = arg;

	for (;;) {
		struct reading *r;

		pthread_mutex_lock(&rs->mu);
		r = rs->next < rs->n ? &rs->r[rs->next++] : NULL;
		pthread_mutex_unlock(&rs->mu);
		if (!r)
			return NULL;
		r->rc =
		    dbtp_gt_model_new(&r->m, &r->err) ||
		    dbtp_gt_model_set_predictor(r->m, rs->predictor, &r->err) ||
		    dbtp_gt_model_add(r->m, r->t, r->path, r->threads, &r->err);
	}
}

/* The CPUs this process may run on (1 if unknown). */
static int cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < 1)
		return 1;
	return CPU_COUNT(&set);
}

/*
 * Read the @n profiles @paths (thread parameters @tp), up to @jobs
 * (0: as many as CPUs) at once, each into a model of its own with branch
 * predictor @predictor (DBTP_BPRED_*), then merged
 * in order into *@out: the model reading them one after another makes.
 * Every trace is opened and checked first, so that a bad one fails at
 * once.
 */
static int read_profiles(dbtp_gt_model **out, char **paths, const double *tp,
			 int n, int jobs, int predictor, dbtp_err *err)
{
	struct readings rs = {calloc((size_t)n, sizeof(*rs.r)), n, 0, predictor,
			      PTHREAD_MUTEX_INITIALIZER};
	pthread_t *th = NULL;
	int started = 0, rc = -1;

	*out = NULL;
	if (!rs.r)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		rs.r[i].path = paths[i];
		rs.r[i].threads = tp[i];
		if (dbtp_trace_open(&rs.r[i].t, paths[i], err) ||
		    dbtp_gt_profile_check(
			rs.r[i].t, paths[i], tp[i],
			i ? &dbtp_trace_info(rs.r[0].t)->arch : NULL, err))
			goto out;
	}
	if (jobs <= 0)
		jobs = cpus_allowed();
	if (jobs > n)
		jobs = n;
	if (n > 1)
		progress("gentest: reading %d profiles, %d at once", n, jobs);
	else
		progress("gentest: reading %s", paths[0]);
	th = calloc((size_t)jobs, sizeof(*th));
	/* (a thread that cannot start leaves its share to the others) */
	for (; th && started < jobs - 1; started++)
		if (pthread_create(&th[started], NULL, read_some, &rs))
			break;
	read_some(&rs);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	progress_done();
	for (int i = 0; i < n; i++) {
		if (rs.r[i].rc) {
			*err = rs.r[i].err;
			goto out;
		}
		if (!dbtp_trace_info(rs.r[i].t)->has_end)
			fprintf(stderr,
				"dbtprof: %s: no END record (recording cut "
				"short); using what was recorded\n",
				paths[i]);
		if (i && dbtp_gt_model_merge(rs.r[0].m, rs.r[i].m, err))
			goto out;
	}
	*out = rs.r[0].m;
	rs.r[0].m = NULL;
	rc = 0;
out:
	for (int i = 0; i < n; i++) {
		dbtp_gt_model_free(rs.r[i].m);
		dbtp_trace_close(rs.r[i].t);
	}
	free(th);
	free(rs.r);
	return rc;
}

int cmd_gentest(int argc, char **argv)
{
	enum {
		O_TARG = 256,
		O_NAIVE,
		O_BLOCKS,
		O_SEED,
		O_JSON,
		O_UNROLL,
		O_COPY_MIN,
		O_PAD,
		O_MISPREDICT,
		O_NO_MISPREDICT,
		O_CROSS_PAGE,
		O_NO_CROSS_PAGE,
		O_CHAINS,
		O_NO_CHAINS,
		O_MISSES,
		O_NO_MISSES,
		O_UNALIGNED,
		O_NO_UNALIGNED,
		O_FP_EXACT,
		O_BPRED
	};
	static const struct option opts[] = {
	    {"jobs", required_argument, NULL, 'j'},
	    {"output", required_argument, NULL, 'o'},
	    {"threads-arg", required_argument, NULL, O_TARG},
	    {"naive", no_argument, NULL, O_NAIVE},
	    {"blocks", required_argument, NULL, O_BLOCKS},
	    {"seed", required_argument, NULL, O_SEED},
	    {"unroll", required_argument, NULL, O_UNROLL},
	    {"copy-min", required_argument, NULL, O_COPY_MIN},
	    {"pad", required_argument, NULL, O_PAD},
	    {"mispredict", no_argument, NULL, O_MISPREDICT},
	    {"no-mispredict", no_argument, NULL, O_NO_MISPREDICT},
	    {"cross-page", no_argument, NULL, O_CROSS_PAGE},
	    {"no-cross-page", no_argument, NULL, O_NO_CROSS_PAGE},
	    {"chains", no_argument, NULL, O_CHAINS},
	    {"no-chains", no_argument, NULL, O_NO_CHAINS},
	    {"misses", no_argument, NULL, O_MISSES},
	    {"no-misses", no_argument, NULL, O_NO_MISSES},
	    {"unaligned", no_argument, NULL, O_UNALIGNED},
	    {"no-unaligned", no_argument, NULL, O_NO_UNALIGNED},
	    {"fp-exact", no_argument, NULL, O_FP_EXACT},
	    {"branch-predictor", required_argument, NULL, O_BPRED},
	    {"json", no_argument, NULL, O_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_gt_emit_opts eo = {0};
	struct dbtp_gt_summary sum = {0};
	const char *out = NULL, *targ = NULL;
	const char *naive_opt = NULL; /* --blocks or --seed, given */
	dbtp_gt_model *m = NULL;
	dbtp_err err = {0};
	char **paths = NULL;
	double *tp = NULL;
	int c, json = 0, rc = 1, n, jobs = 0, bp = DBTP_BPRED_GSHARE;
	FILE *f = NULL;

	if (argc > 1 && !strcmp(argv[1], "validate"))
		return cmd_validate(argc - 1, argv + 1);
	eo.seed = 1;
	eo.mispredict = 1;
	eo.cross_page = 1;
	eo.chains = 1;
	eo.misses = 1;
	eo.unaligned = 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'j': {
			unsigned long long v;

			if (parse_whole(optarg, &v) || !v || v > 1024)
				return usage_error("gentest",
						   "--jobs wants a number from "
						   "1 to 1024, not '%s'",
						   optarg);
			jobs = (int)v;
			break;
		}
		case O_TARG:
			targ = optarg;
			break;
		case O_NAIVE:
			eo.naive = 1;
			break;
		case O_MISPREDICT:
		case O_NO_MISPREDICT:
			eo.mispredict = c == O_MISPREDICT;
			break;
		case O_CROSS_PAGE:
		case O_NO_CROSS_PAGE:
			eo.cross_page = c == O_CROSS_PAGE;
			break;
		case O_CHAINS:
		case O_NO_CHAINS:
			eo.chains = c == O_CHAINS;
			break;
		case O_MISSES:
		case O_NO_MISSES:
			eo.misses = c == O_MISSES;
			break;
		case O_UNALIGNED:
		case O_NO_UNALIGNED:
			eo.unaligned = c == O_UNALIGNED;
			break;
		case O_FP_EXACT:
			eo.fp_exact = 1;
			break;
		case O_BPRED:
			if ((bp = predictor(optarg)) < 0)
				return usage_error("gentest",
						   "--branch-predictor wants "
						   "gshare or tage, not '%s'",
						   optarg);
			break;
		case O_BLOCKS:
		case O_SEED:
		case O_COPY_MIN: {
			unsigned long long v;

			if (parse_whole(optarg, &v) || (c != O_SEED && !v) ||
			    (c == O_BLOCKS && v > UINT32_MAX))
				return usage_error(
				    "gentest",
				    "--%s wants a %s number, "
				    "not '%s'",
				    c == O_BLOCKS ? "blocks"
				    : c == O_SEED ? "seed"
						  : "copy-min",
				    c == O_SEED ? "whole" : "positive", optarg);
			if (c != O_COPY_MIN)
				naive_opt = c == O_BLOCKS ? "blocks" : "seed";
			if (c == O_BLOCKS)
				eo.naive_blocks = (uint32_t)v;
			else if (c == O_SEED)
				eo.seed = v;
			else
				eo.copy_min = v;
			break;
		}
		case O_PAD: {
			unsigned long long v;

			if (parse_whole(optarg, &v) || v > 1048576)
				return usage_error("gentest",
						   "--pad wants a number of "
						   "bytes up to 1048576, not "
						   "'%s'",
						   optarg);
			eo.pad = (unsigned)v;
			break;
		}
		case O_UNROLL: {
			unsigned long long v;

			if (parse_whole(optarg, &v) || !v ||
			    v > DBTP_GT_MAX_UNROLL || (v & (v - 1)))
				return usage_error("gentest",
						   "--unroll wants a power of "
						   "two from 1 to %d, not '%s'",
						   DBTP_GT_MAX_UNROLL, optarg);
			eo.unroll = (unsigned)v;
			break;
		}
		case O_JSON:
			json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("gentest", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (!out)
		return usage_error("gentest", "give the output file with -o");
	if (naive_opt && !eo.naive)
		return usage_error("gentest",
				   "--%s is for the naive baseline: give "
				   "--naive too",
				   naive_opt);
	n = argc - optind;
	if (n < 1)
		return usage_error("gentest", "give at least one TRACE");
	paths = calloc((size_t)n, sizeof(*paths));
	tp = calloc((size_t)n, sizeof(*tp));
	if (!paths || !tp) {
		error("out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		char *a = argv[optind + i], *colon = strrchr(a, ':');

		paths[i] = a;
		tp[i] = 0;
		if (colon && colon[1] && !parse_num(colon + 1, &tp[i])) {
			paths[i] = strndup(a, (size_t)(colon - a));
			if (!paths[i]) {
				error("out of memory");
				goto out;
			}
		} else {
			paths[i] = strdup(a);
			if (!paths[i]) {
				error("out of memory");
				goto out;
			}
		}
	}
	if (targ) {
		const char *p = targ;

		for (int i = 0; i < n; i++) {
			char num[64];
			size_t l = strcspn(p, ",");

			if (!l || l >= sizeof(num)) {
				rc = usage_error("gentest",
						 "--threads-arg wants %d "
						 "numbers > 0, comma-separated",
						 n);
				goto out;
			}
			memcpy(num, p, l);
			num[l] = 0;
			if (parse_num(num, &tp[i]) || (i + 1 < n && !p[l]) ||
			    (i + 1 == n && p[l])) {
				rc = usage_error("gentest",
						 "--threads-arg wants %d "
						 "numbers > 0, comma-separated",
						 n);
				goto out;
			}
			p += l + (p[l] ? 1 : 0);
		}
	}
	for (int i = 0; i < n; i++)
		if (!tp[i]) {
			if (n > 1) {
				rc = usage_error("gentest",
						 "give each trace's thread "
						 "parameter (TRACE:T or "
						 "--threads-arg)");
				goto out;
			}
			tp[i] = 1;
		}
	if (read_profiles(&m, paths, tp, n, jobs, bp, &err))
		goto fail;
	if (dbtp_gt_model_finish(m, &err))
		goto fail;
	if (eo.naive && !eo.naive_blocks) {
		eo.naive_blocks = dbtp_gt_model_nblocks(m) / 10;
		if (!eo.naive_blocks)
			eo.naive_blocks = 1;
	}
	eo.source = NULL;
	f = fopen(out, "w");
	if (!f) {
		error("%s: %s", out, strerror(errno));
		goto out;
	}
	if (dbtp_gt_emit(m, &eo, f, &sum, &err)) {
		fclose(f);
		f = NULL;
		goto fail;
	}
	if (fclose(f)) {
		f = NULL;
		error("%s: %s", out, strerror(errno));
		goto out;
	}
	f = NULL;
	if (json)
		print_json(m, paths, &sum, out, eo.naive);
	else
		print_text(m, paths, &sum, out, eo.naive);
	if (fflush(stdout) || ferror(stdout)) {
		error("writing the output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
fail:
	progress_done();
	error("%s", err.msg);
out:
	dbtp_gt_summary_free(&sum);
	dbtp_gt_model_free(m);
	if (paths)
		for (int i = 0; i < n; i++)
			free(paths[i]);
	free(paths);
	free(tp);
	return rc;
}

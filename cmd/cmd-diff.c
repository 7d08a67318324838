/* SPDX-License-Identifier: MIT */
/*
 * cmd-diff.c - dbtprof diff: the differential throughput of two versions of
 * a program, cycles(B) / cycles(A) from the cycle model, and the functions
 * that account for the change.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/cycles.h"
#include "dbtp/run.h"
#include "dbtp/symbolize.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof diff [OPTIONS] A.trace B.trace\n"
    "       dbtprof diff [OPTIONS] -- PROGRAM_A [ARGS...] ::: PROGRAM_B "
    "[ARGS...]\n"
    "\n"
    "Estimate the cycles of two runs with the model of `dbtprof cycles`\n"
    "(same CPU, same options) and report the differential throughput\n"
    "delta = cycles(B) / cycles(A), the instruction counts, and the\n"
    "functions (matched by name; code without a symbol by file name) whose\n"
    "estimated cycles changed most, with their share of the change.  With "
    "`--`, the two\n"
    "programs (separated by :::) are run under QEMU in mem mode one after\n"
    "the other and analysed live.\n"
    "\n"
    "Options:\n"
    "      --mcpu CPU       LLVM CPU model (default native)\n"
    "      --llvm VERSION   the LLVM to use (see cycles)\n"
    "      --alias MODE     addr (default), none or all (see cycles)\n"
    "  -n, --top N          functions to list (default 10)\n"
    "      --cache-dir DIR  timing-table cache directory\n"
    "      --no-cache       neither read nor write the cached "
    "table\n" MODEL_HELP "      --json           everything as JSON\n"
    "Live runs also take: --cpu MODEL, --qemu PATH, --sysroot DIR,\n"
    "  --keep-env, -e VAR=VAL, --plugin PATH (see dbtprof record --help)\n"
    "  -h, --help           this text\n";

struct fn {
	char *name, *file; /* file: base name, "" if none */
	uint64_t cycles[2], insns[2];
};

struct side {
	const char *label;
	struct dbtp_cycles_counts tot;
	char cpu[64], llvm[32];
};

struct diff {
	struct fn *fns;
	size_t nfns;
	struct side s[2];
	struct dbtp_timing_opts to;
	struct dbtp_cycles_opts o;
};

/* A function by name; unnamed code ("?") by the file it is in. */
static struct fn *find_fn(struct diff *d, const char *name, const char *file)
{
	int anon = !strcmp(name, "?");

	for (size_t i = 0; i < d->nfns; i++)
		if (!strcmp(d->fns[i].name, name) &&
		    (!anon || !strcmp(d->fns[i].file, file)))
			return &d->fns[i];
	{
		struct fn *f = realloc(d->fns, (d->nfns + 1) * sizeof(*f));

		if (!f)
			return NULL;
		d->fns = f;
		f = &d->fns[d->nfns];
		memset(f, 0, sizeof(*f));
		f->name = strdup(name);
		f->file = strdup(file);
		if (!f->name || !f->file) {
			free(f->name);
			free(f->file);
			return NULL;
		}
		d->nfns++;
		return f;
	}
}

/* Run the model over @t and add its functions to side @k. */
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

static int analyse(struct diff *d, int k, dbtp_trace *t, const char *name,
		   int live)
{
	const struct dbtp_trace_info *in = dbtp_trace_info(t);
	struct dbtp_timing_opts to = d->to;
	struct dbtp_cycles_opts o = d->o;
	dbtp_timing *tm = NULL;
	dbtp_cycles *c = NULL;
	dbtp_symcache *sc = NULL;
	struct dbtp_event ev;
	dbtp_err err = {0};
	uint64_t n = 0;
	char n1[32];
	int r, rc = -1;

	if (in->mode != DBTP_MODE_MEM && in->mode != DBTP_MODE_BLOCKS) {
		error("%s: a %s-mode trace has no instruction stream; record "
		      "it with --mode mem",
		      name, dbtp_mode_name(in->mode));
		return -1;
	}
	if (in->mode == DBTP_MODE_BLOCKS && o.alias == DBTP_ALIAS_ADDR) {
		fprintf(stderr,
			"dbtprof: %s: a blocks-mode trace has no memory "
			"addresses; assuming no load depends on a store\n",
			name);
		o.alias = DBTP_ALIAS_NONE;
	}
	to.arch = in->arch;
	if (dbtp_timing_open(&tm, &to, &err) ||
	    dbtp_cycles_new(&c, tm, in->arch, &o, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (model_warm(tm, live ? NULL : name))
		goto out;
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		if (dbtp_cycles_event(c, t, &ev, &err)) {
			r = -1;
			break;
		}
		if (!(++n & 0xfffff))
			progress("diff: %s: %s events", name, fmt_u64(n, n1));
	}
	progress_done();
	model_flush(tm);
	if (r < 0 || dbtp_cycles_finish(c, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (!in->has_end)
		fprintf(stderr,
			"dbtprof: %s: no END record (recording cut short); "
			"results cover what was recorded\n",
			name);
	dbtp_cycles_total(c, &d->s[k].tot);
	snprintf(d->s[k].cpu, sizeof(d->s[k].cpu), "%s",
		 dbtp_timing_cpu(tm)->name);
	snprintf(d->s[k].llvm, sizeof(d->s[k].llvm), "%s",
		 dbtp_timing_llvm_version(tm));
	sc = dbtp_symcache_new();
	if (!sc)
		goto nomem;
	for (uint32_t id = 0; id < dbtp_cycles_nblocks(c); id++) {
		const struct dbtp_cycles_block *cb = dbtp_cycles_block(c, id);
		const struct dbtp_block *b = dbtp_trace_block(t, id);
		struct dbtp_sym sym;
		struct fn *f;

		if (!cb || !cb->execs || !b)
			continue;
		dbtp_symbolize(sc, t, b, 0, &sym);
		f = find_fn(d, sym.name ? sym.name : "?",
			    sym.file ? dbtp_basename(sym.file) : "");
		if (!f)
			goto nomem;
		f->cycles[k] += cb->cycles;
		f->insns[k] += cb->execs * b->ninsns;
	}
	rc = 0;
	goto out;
nomem:
	error("out of memory");
out:
	dbtp_symcache_free(sc);
	dbtp_cycles_free(c);
	dbtp_timing_free(tm);
	return rc;
}

static int side_trace(struct diff *d, int k, const char *path)
{
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	int rc;

	if (dbtp_trace_open(&t, path, &err)) {
		error("%s", err.msg);
		return -1;
	}
	rc = analyse(d, k, t, path, 0);
	dbtp_trace_close(t);
	return rc;
}

/* Run @argv live; 0, or -1 (an error was printed). */
static int side_live(struct diff *d, int k, struct dbtp_run_opts *ro,
		     char **argv)
{
	struct dbtp_run run;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	int failed, status = 0;

	if (start_quiet(&run, ro, argv, &err)) {
		error("%s", err.msg);
		return -1;
	}
	failed = dbtp_trace_open_fd(&t, run.fd, argv[0], &err);
	if (failed)
		error("%s", err.msg);
	else
		failed = analyse(d, k, t, argv[0], 1);
	if (failed)
		kill(run.pid, SIGKILL);
	if (dbtp_run_wait(&run, &status, &err)) {
		error("%s", err.msg);
		failed = 1;
	}
	if (!failed && WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "dbtprof: %s exited with status %d\n", argv[0],
			WEXITSTATUS(status));
	if (!failed && WIFSIGNALED(status))
		fprintf(stderr, "dbtprof: %s was killed by signal %d\n",
			argv[0], WTERMSIG(status));
	dbtp_run_free(&run);
	dbtp_trace_close(t);
	return failed ? -1 : 0;
}

static int64_t delta_of(const struct fn *f)
{
	return (int64_t)f->cycles[1] - (int64_t)f->cycles[0];
}

static int by_change(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	int64_t dx = llabs(delta_of(x)), dy = llabs(delta_of(y));

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

static void print_text(struct diff *d, int top)
{
	const struct dbtp_cycles_counts *a = &d->s[0].tot, *b = &d->s[1].tot;
	int64_t change = (int64_t)b->cycles - (int64_t)a->cycles;
	char n1[32], n2[32];

	printf("CPU %s (LLVM %s)\n", d->s[0].cpu, d->s[0].llvm);
	for (int k = 0; k < 2; k++)
		printf("%c: %s\n   %s instructions, %s cycles, IPC %.3f\n",
		       'A' + k, d->s[k].label, fmt_u64(d->s[k].tot.insns, n1),
		       fmt_u64(d->s[k].tot.cycles, n2),
		       ratio(d->s[k].tot.insns, d->s[k].tot.cycles));
	printf("\ndelta = cycles(B) / cycles(A) = %.4f\n",
	       ratio(b->cycles, a->cycles));
	printf("instructions(B) / instructions(A) = %.4f\n",
	       ratio(b->insns, a->insns));
	printf("\nFunctions by change in estimated cycles (B - A):\n");
	printf("  %14s %8s %14s %14s  %s\n", "change", "share", "cycles A",
	       "cycles B", "function");
	for (size_t i = 0; i < d->nfns && (int)i < top; i++) {
		const struct fn *f = &d->fns[i];

		printf("  %+14" PRId64 " %7.1f%% %14s %14s  %s%s%s%s\n",
		       delta_of(f),
		       change ? 100.0 * (double)delta_of(f) / (double)change
			      : 0.0,
		       fmt_u64(f->cycles[0], n1), fmt_u64(f->cycles[1], n2),
		       f->name, f->file[0] ? " (" : "", f->file,
		       f->file[0] ? ")" : "");
	}
}

static void json_num(struct json *j, const char *key, double v)
{
	if (isfinite(v))
		json_double(j, key, v);
	else
		json_null(j, key);
}

static void print_json(struct diff *d, int top)
{
	const struct dbtp_cycles_counts *a = &d->s[0].tot, *b = &d->s[1].tot;
	int64_t change = (int64_t)b->cycles - (int64_t)a->cycles;
	struct json j;

	json_begin(&j, stdout);
	json_str(&j, "cpu", d->s[0].cpu);
	json_str(&j, "llvm", d->s[0].llvm);
	for (int k = 0; k < 2; k++) {
		json_obj(&j, k ? "b" : "a");
		json_str(&j, "input", d->s[k].label);
		json_u64(&j, "instructions", d->s[k].tot.insns);
		json_u64(&j, "total_cycles", d->s[k].tot.cycles);
		json_u64(&j, "total_uops", d->s[k].tot.uops);
		json_num(&j, "ipc",
			 ratio(d->s[k].tot.insns, d->s[k].tot.cycles));
		json_close_obj(&j);
	}
	json_num(&j, "delta", ratio(b->cycles, a->cycles));
	json_num(&j, "instructions_ratio", ratio(b->insns, a->insns));
	json_i64(&j, "cycle_change", change);
	json_arr(&j, "functions");
	for (size_t i = 0; i < d->nfns && (int)i < top; i++) {
		const struct fn *f = &d->fns[i];

		json_obj(&j, NULL);
		json_str(&j, "name", f->name);
		json_str(&j, "file", f->file);
		json_u64(&j, "cycles_a", f->cycles[0]);
		json_u64(&j, "cycles_b", f->cycles[1]);
		json_u64(&j, "instructions_a", f->insns[0]);
		json_u64(&j, "instructions_b", f->insns[1]);
		json_i64(&j, "change", delta_of(f));
		json_num(&j, "share",
			 change ? (double)delta_of(f) / (double)change : NAN);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_end(&j);
}

int cmd_diff(int argc, char **argv)
{
	enum {
		O_MCPU = 256,
		O_LLVM,
		O_ALIAS,
		O_CDIR,
		O_NOCACHE,
		O_JSON,
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
	    {"qemu", required_argument, NULL, 'Q'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"sysroot", required_argument, NULL, 'L'},
	    {"keep-env", no_argument, NULL, 'K'},
	    {"env", required_argument, NULL, 'e'},
	    {"plugin", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_run_opts ro = {.zstd = -1, .flush_ms = -1, .mode = "mem"};
	struct diff d = {.to = {.cpu = "native"}};
	int c, json = 0, rc = 1, top = 10, live;
	char *end;
	long v;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:e:h", opts, NULL)) != -1) {
		switch (c) {
		case O_MCPU:
			d.to.cpu = optarg;
			break;
		case O_LLVM:
			d.to.llvm = optarg;
			break;
		case O_ALIAS:
			if (!strcmp(optarg, "addr"))
				d.o.alias = DBTP_ALIAS_ADDR;
			else if (!strcmp(optarg, "none"))
				d.o.alias = DBTP_ALIAS_NONE;
			else if (!strcmp(optarg, "all"))
				d.o.alias = DBTP_ALIAS_ALL;
			else {
				free((void *)ro.env);
				return usage_error("diff", "--alias is addr, "
							   "none or all");
			}
			break;
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 0 || v > 1000000) {
				free((void *)ro.env);
				return usage_error(
				    "diff", "--top wants a count, not '%s'",
				    optarg);
			}
			top = (int)v;
			break;
		case O_CDIR:
			d.to.cache_dir = optarg;
			break;
		case O_NOCACHE:
			d.to.no_cache = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free((void *)ro.env);
			return 0;
		default: {
			int k = model_option("diff", c, optarg, argv, &d.o);

			if (!k)
				k = run_option("diff", c, optarg, &ro);

			if (k > 0)
				break;
			free((void *)ro.env);
			if (k < 0)
				return EXIT_USAGE;
			return usage_error("diff", "unknown option '%s'",
					   argv[optind - 1]);
		}
		}
	}
	model_defaults(&d.o);
	live = optind > 1 && !strcmp(argv[optind - 1], "--");
	if (!live) {
		if (optind + 2 != argc) {
			free((void *)ro.env);
			return usage_error("diff", "give A.trace and B.trace, "
						   "or -- PROGRAM_A ::: "
						   "PROGRAM_B");
		}
		d.s[0].label = argv[optind];
		d.s[1].label = argv[optind + 1];
		if (side_trace(&d, 0, argv[optind]) ||
		    side_trace(&d, 1, argv[optind + 1]))
			goto out;
	} else {
		int sep = -1;

		for (int i = optind; i < argc; i++)
			if (!strcmp(argv[i], ":::")) {
				sep = i;
				break;
			}
		if (sep <= optind || sep + 1 >= argc) {
			free((void *)ro.env);
			return usage_error("diff", "live: -- PROGRAM_A [ARGS] "
						   "::: PROGRAM_B [ARGS]");
		}
		argv[sep] = NULL;
		d.s[0].label = argv[optind];
		d.s[1].label = argv[sep + 1];
		if (!ro.plugin)
			ro.plugin = plugin_path();
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		if (side_live(&d, 0, &ro, argv + optind) ||
		    side_live(&d, 1, &ro, argv + sep + 1)) {
			rc = EXIT_TOOL;
			goto out;
		}
	}
	if (d.nfns)
		qsort(d.fns, d.nfns, sizeof(*d.fns), by_change);
	if (json)
		print_json(&d, top);
	else
		print_text(&d, top);
	if (fflush(stdout) || ferror(stdout)) {
		error("writing the output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < d.nfns; i++) {
		free(d.fns[i].name);
		free(d.fns[i].file);
	}
	free(d.fns);
	free((void *)ro.env);
	return rc;
}

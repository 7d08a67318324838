/* SPDX-License-Identifier: MIT */
/*
 * cmd-native-count.c - dbtprof native-count: a reference instruction count
 * that does not come from QEMU.  The program runs natively under ptrace
 * single-stepping (lib/native/step.c); optionally the dynamic basic blocks
 * it runs become basic block vectors in SimPoint's .bb format.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cmd.h"
#include "dbtp/cpuview.h"
#include "dbtp/native.h"
#include "dbtp/run.h"

static const char usage_text[] =
    "usage: dbtprof native-count [OPTIONS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Run PROGRAM (an x86-64 Linux ELF, or a #! script of one) natively on\n"
    "this x86-64 host under ptrace single-stepping and count every\n"
    "user-mode instruction it executes, per thread: a reference count that\n"
    "does not come from QEMU.  Expect roughly 60,000 instructions a\n"
    "second.\n"
    "\n"
    "The program gets the environment `dbtprof record` gives by default\n"
    "(PATH=/usr/local/bin:/usr/bin:/bin, LC_ALL=C, argv[0] = its base\n"
    "name, address randomisation off), so the counts are comparable.  Its\n"
    "stdio passes through; the report goes to stderr (or --report FILE)\n"
    "and dbtprof exits with the program's status (128+N if signal N ended\n"
    "it, 125 if dbtprof failed: program missing, not x86-64, ptrace not\n"
    "permitted).\n"
    "\n"
    "Options:\n"
    "      --json                 machine-readable report\n"
    "      --report FILE          write the report to FILE, not stderr\n"
    "      --interval N           basic block vectors: cut each thread's\n"
    "                             blocks into intervals of N instructions\n"
    "  -o, --output FILE          .bb file to write (with --interval); the\n"
    "                             block addresses go to FILE.map\n"
    "      --rep-per-iteration    count a rep string instruction once per\n"
    "                             iteration, as QEMU executes it (default)\n"
    "      --rep-per-instruction  count it once, as hardware counters and\n"
    "                             Valgrind do\n"
    "      --keep-env             pass your environment, not the fixed one\n"
    "  -e, --env VAR=VAL          set an environment variable (repeatable)\n"
    "      --match-qemu           run as `record --match-native` runs under\n"
    "                             QEMU 7.2: its GLIBC_TUNABLES, QEMU's CPU\n"
    "                             view (--cpu, default max), auxiliary vector\n"
    "                             and stack layout, order of mappings, rep\n"
    "                             instructions counted as QEMU executes them\n"
    "      --cpu MODEL            answer CPUID/XGETBV as qemu-x86_64 -cpu\n"
    "                             MODEL does (dbtprof cpu-view --cpu MODEL)\n"
    "      --qemu PATH            the emulator asked (default qemu-x86_64)\n"
    "      --argv0 NAME           the program's argv[0] (default: base name)\n"
    "      --aslr                 leave address randomisation on\n"
    "      --no-vdso              hide the vDSO from the program\n"
    "  -h, --help                 this text\n";

static pid_t child_pid = -1;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void on_start(void *ctx, pid_t pid)
{
	(void)ctx;
	child_pid = pid;
}

static void on_progress(void *ctx, uint64_t insns)
{
	char n[32];

	(void)ctx;
	progress("native-count: %s instructions", fmt_u64(insns, n));
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static void report_text(FILE *f, const struct dbtp_native_result *res,
			int rep_once, const char *bb, uint64_t interval,
			const dbtp_native_bbv *bbv)
{
	char n1[32], n2[32], n3[32];
	double rate = res->seconds > 0 ? (double)res->steps / res->seconds : 0;

	fprintf(f, "program       %s\n", res->program);
	fprintf(f, "instructions  %s\n", fmt_u64(res->insns, n1));
	fprintf(f, "steps         %s", fmt_u64(res->steps, n1));
	if (res->exit_insns)
		fprintf(f, " (+%" PRIu64 " exit syscall%s without a step stop)",
			res->exit_insns, res->exit_insns > 1 ? "s" : "");
	if (res->rep_folded)
		fprintf(f, " (-%s rep iterations)",
			fmt_u64(res->rep_folded, n2));
	if (res->rep_extra)
		fprintf(f, " (+%s rep re-executions as QEMU)",
			fmt_u64(res->rep_extra, n2));
	if (res->emulated)
		fprintf(f,
			" (+%" PRIu64
			" CPUID/XGETBV answered from the CPU view)",
			res->emulated);
	fputc('\n', f);
	fprintf(f, "rep counting  once per %s\n",
		rep_once ? "instruction" : "iteration");
	if (res->nthreads > 1)
		for (uint32_t i = 0; i < res->nthreads; i++)
			fprintf(f,
				"thread %-6" PRIu32 " %s instructions (tid %d, "
				"created by thread %" PRIu32 ")\n",
				i, fmt_u64(res->threads[i].insns, n1),
				(int)res->threads[i].tid,
				res->threads[i].parent);
	if (WIFEXITED(res->status))
		fprintf(f, "exit          status %d\n",
			WEXITSTATUS(res->status));
	else if (WIFSIGNALED(res->status))
		fprintf(f, "exit          signal %d (%s)\n",
			WTERMSIG(res->status),
			strsignal(WTERMSIG(res->status)));
	fprintf(f, "time          %.3f s\n", res->seconds);
	fprintf(f, "steps/s       %s\n", fmt_u64((uint64_t)rate, n1));
	if (bbv)
		fprintf(f,
			"bbv           %s: %s intervals of %s instructions, %s "
			"blocks (addresses in %s.map)\n",
			bb, fmt_u64(dbtp_native_bbv_nintervals(bbv), n1),
			fmt_u64(interval, n2),
			fmt_u64(dbtp_native_bbv_nblocks(bbv), n3), bb);
}

static void report_json(FILE *f, const struct dbtp_native_result *res,
			int rep_once, int ret, const char *bb,
			uint64_t interval, const dbtp_native_bbv *bbv)
{
	struct json j;
	double rate = res->seconds > 0 ? (double)res->steps / res->seconds : 0;

	json_begin(&j, f);
	json_str(&j, "program", res->program);
	json_str(&j, "argv0", res->argv0);
	json_u64(&j, "instructions", res->insns);
	json_u64(&j, "steps", res->steps);
	json_u64(&j, "exit_syscalls", res->exit_insns);
	json_u64(&j, "rep_iterations_folded", res->rep_folded);
	json_u64(&j, "cpuid_emulated", res->emulated);
	json_u64(&j, "rep_extra", res->rep_extra);
	json_str(&j, "rep_counting", rep_once ? "instruction" : "iteration");
	json_u64(&j, "signals", res->signals);
	if (WIFEXITED(res->status)) {
		json_str(&j, "ended", "exited");
		json_i64(&j, "exit_status", WEXITSTATUS(res->status));
	} else {
		json_str(&j, "ended", "signaled");
		json_i64(&j, "signal", WTERMSIG(res->status));
	}
	json_i64(&j, "status", ret);
	json_double(&j, "seconds", res->seconds);
	json_u64(&j, "steps_per_second", (uint64_t)rate);
	json_arr(&j, "threads");
	for (uint32_t i = 0; i < res->nthreads; i++) {
		json_obj(&j, NULL);
		json_u64(&j, "thread", i);
		json_i64(&j, "tid", res->threads[i].tid);
		json_u64(&j, "parent", res->threads[i].parent);
		json_u64(&j, "instructions", res->threads[i].insns);
		json_u64(&j, "steps", res->threads[i].steps);
		json_bool(&j, "exit_syscall_counted",
			  res->threads[i].exit_counted);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	if (bbv) {
		char map[4096];

		snprintf(map, sizeof(map), "%s.map", bb);
		json_obj(&j, "bbv");
		json_str(&j, "file", bb);
		json_str(&j, "map", map);
		json_u64(&j, "interval", interval);
		json_u64(&j, "intervals", dbtp_native_bbv_nintervals(bbv));
		json_u64(&j, "blocks", dbtp_native_bbv_nblocks(bbv));
		json_close_obj(&j);
	}
	json_end(&j);
}

int cmd_native_count(int argc, char **argv)
{
	enum {
		O_JSON = 256,
		O_REPORT,
		O_INTERVAL,
		O_REP_ITER,
		O_REP_INSN,
		O_KEEP_ENV,
		O_ARGV0,
		O_ASLR,
		O_NO_VDSO,
		O_MATCH,
		O_CPU,
		O_QEMU
	};
	static const struct option opts[] = {
	    {"json", no_argument, NULL, O_JSON},
	    {"report", required_argument, NULL, O_REPORT},
	    {"interval", required_argument, NULL, O_INTERVAL},
	    {"output", required_argument, NULL, 'o'},
	    {"rep-per-iteration", no_argument, NULL, O_REP_ITER},
	    {"rep-per-instruction", no_argument, NULL, O_REP_INSN},
	    {"keep-env", no_argument, NULL, O_KEEP_ENV},
	    {"argv0", required_argument, NULL, O_ARGV0},
	    {"aslr", no_argument, NULL, O_ASLR},
	    {"no-vdso", no_argument, NULL, O_NO_VDSO},
	    {"match-qemu", no_argument, NULL, O_MATCH},
	    {"cpu", required_argument, NULL, O_CPU},
	    {"qemu", required_argument, NULL, O_QEMU},
	    {"env", required_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_native_opts o = {0};
	static const char *envs[256];
	size_t nenv = 0;
	struct dbtp_native_result res;
	dbtp_native_bbv *bbv = NULL;
	dbtp_err err = {0};
	const char *bb = NULL, *report = NULL;
	char map[4096];
	FILE *bbf = NULL, *mapf = NULL, *rf = stderr;
	uint64_t interval = 0;
	int c, json = 0, ret;
	const char *cpu = NULL, *qemu = NULL;
	struct dbtp_cpu_view *view = NULL;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:ho:e:", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			json = 1;
			break;
		case O_REPORT:
			report = optarg;
			break;
		case O_INTERVAL:
			if (parse_u64(optarg, &interval) || !interval)
				return usage_error("native-count",
						   "--interval wants a number "
						   "> 0, not '%s'",
						   optarg);
			break;
		case 'o':
			bb = optarg;
			break;
		case O_REP_ITER:
			o.rep_per_instruction = 0;
			break;
		case O_REP_INSN:
			o.rep_per_instruction = 1;
			break;
		case O_KEEP_ENV:
			o.keep_env = 1;
			break;
		case O_ARGV0:
			o.argv0 = optarg;
			break;
		case O_ASLR:
			o.aslr = 1;
			break;
		case O_NO_VDSO:
			o.no_vdso = 1;
			break;
		case O_CPU:
			cpu = optarg;
			break;
		case O_QEMU:
			qemu = optarg;
			break;
		case O_MATCH:
			o.no_vdso = 1;
			o.rep_qemu = 1;
			o.qemu_mmap = 1;
			if (!cpu)
				cpu = "max";
			optarg = DBTP_MATCH_TUNABLES;
			/* fall through */
		case 'e':
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return usage_error("native-count",
						   "--env wants VAR=VALUE, not "
						   "'%s'",
						   optarg);
			if (nenv == sizeof(envs) / sizeof(*envs))
				return usage_error("native-count",
						   "too many --env");
			envs[nenv++] = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return usage_error("native-count", "'%s' needs a value",
					   argv[optind - 1]);
		default:
			if (optopt && optopt < 256 && optopt != '?')
				return usage_error("native-count",
						   "unknown option '-%c'",
						   optopt);
			return usage_error("native-count",
					   "unknown option '%s' (or it needs "
					   "a value)",
					   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("native-count", "no program to run");
	if (interval && !bb)
		return usage_error("native-count",
				   "--interval needs -o FILE for the vectors");
	if (bb && !interval)
		return usage_error("native-count",
				   "-o FILE writes basic block vectors: give "
				   "--interval N too");

	if (qemu && !cpu)
		return usage_error("native-count",
				   "--qemu needs --cpu or --match-qemu");

	/* QEMU's view of the CPU, shown to the program. */
	if (cpu) {
		view = malloc(sizeof(*view));
		if (!view) {
			error("out of memory");
			return EXIT_TOOL;
		}
		if (cpu_view_of(qemu, cpu, view, &err)) {
			error("%s", err.msg);
			free(view);
			return EXIT_TOOL;
		}
		o.cpu_view = view;
	}

	/* Create the outputs first: a bad path fails before anything runs. */
	if (report) {
		rf = fopen(report, "w");
		if (!rf) {
			error("cannot create %s: %s", report, strerror(errno));
			return EXIT_TOOL;
		}
	}
	if (bb) {
		snprintf(map, sizeof(map), "%s.map", bb);
		bbf = fopen(bb, "w");
		if (bbf)
			mapf = fopen(map, "w");
		if (!bbf || !mapf) {
			error("cannot create %s: %s", bbf ? map : bb,
			      strerror(errno));
			goto fail_files;
		}
		if (dbtp_native_bbv_new(&bbv, interval, &err)) {
			error("%s", err.msg);
			goto fail_files;
		}
		o.on_block = dbtp_native_bbv_block;
		o.ctx = bbv;
	}
	o.on_start = on_start;
	o.on_progress = on_progress;
	o.env = envs;
	o.nenv = nenv;

	signal(SIGINT, SIG_IGN); /* the terminal sends it to the program too */
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);
	if (dbtp_native_run(&res, &o, argv + optind, &err)) {
		progress_done();
		child_pid = -1;
		error("%s", err.msg);
		goto fail_files;
	}
	progress_done();
	child_pid = -1;
	if (WIFEXITED(res.status))
		ret = WEXITSTATUS(res.status);
	else
		ret = 128 + WTERMSIG(res.status);
	if (bbv) {
		int bad =
		    dbtp_native_bbv_write(bbv, bbf, mapf, res.maps, bb, &err);

		if (fclose(bbf) && !bad) {
			bad = 1;
			dbtp_err_set(&err, errno, "%s: %s", bb,
				     strerror(errno));
		}
		if (fclose(mapf) && !bad) {
			bad = 1;
			dbtp_err_set(&err, errno, "%s: %s", map,
				     strerror(errno));
		}
		bbf = mapf = NULL;
		if (bad) {
			error("%s", err.msg);
			ret = EXIT_TOOL;
		}
	}
	if (json)
		report_json(rf, &res, o.rep_per_instruction, ret, bb, interval,
			    bbv);
	else
		report_text(rf, &res, o.rep_per_instruction, bb, interval, bbv);
	if (rf != stderr && fclose(rf)) {
		error("%s: %s", report, strerror(errno));
		ret = EXIT_TOOL;
	}
	dbtp_native_result_free(&res);
	dbtp_native_bbv_free(bbv);
	free(view);
	return ret;

fail_files:
	if (bbf)
		fclose(bbf);
	if (mapf)
		fclose(mapf);
	if (bb) { /* only what we created: not /dev/null or a pipe */
		struct stat st;

		if (!stat(bb, &st) && S_ISREG(st.st_mode))
			remove(bb);
		if (!stat(map, &st) && S_ISREG(st.st_mode))
			remove(map);
	}
	if (rf != stderr)
		fclose(rf);
	dbtp_native_bbv_free(bbv);
	free(view);
	return EXIT_TOOL;
}

/* SPDX-License-Identifier: MIT */
/*
 * cmd-record.c - dbtprof record: run a program under QEMU with the plugin
 * and write its trace.  The guest's stdio and exit status pass through.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/run.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof record [OPTIONS] -o FILE -- PROGRAM [ARGS...]\n"
    "\n"
    "Run PROGRAM (an x86-64 or AArch64 Linux ELF, or a #! script of one)\n"
    "under qemu-x86_64 or qemu-aarch64 with the dbtprof plugin and write\n"
    "its trace to FILE.  Processes the guest starts (fork) and programs it\n"
    "runs by execve are not recorded; record warns of them.\n"
    "\n"
    "The guest's stdin/stdout/stderr pass through and dbtprof exits with\n"
    "the guest's status (128+N if a signal N ended it, 125 if dbtprof\n"
    "itself failed).\n"
    "\n"
    "The run is made reproducible by default: a fixed minimal environment\n"
    "(PATH, LC_ALL=C), argv[0] = the program's base name, a fixed CPU\n"
    "model, QEMU's random seed 1 and host address randomisation off.  All\n"
    "of it is stored in the trace.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE   trace file to write (required)\n"
    "  -m, --mode MODE     count  - per-block counts, inline (cheapest)\n"
    "                      blocks - every executed block per thread, and\n"
    "                               syscalls (default)\n"
    "                      mem    - blocks plus every load and store\n"
    "                      bbv    - per-thread interval vectors counted in\n"
    "                               QEMU (for dbtprof bbv; see --interval)\n"
    "      --cache         blocks mode: also run the loads and stores through\n"
    "                      each thread's L1 and L2 data-cache model in the\n"
    "                      plugin and keep per block their misses and\n"
    "                      unaligned accesses (what gentest takes from a\n"
    "                      mem-mode profile), not the accesses\n"
    "      --cache-sample N\n"
    "                      --cache, cheaper: record the accesses in one\n"
    "                      phase in N only (each thread's phases of\n"
    "                      --cache-phase of its block executions; its\n"
    "                      first tallied whole) and scale the other phases'\n"
    "                      tallies by each block's executions over those\n"
    "                      tallied; estimates (default 1: every access)\n"
    "      --cache-phase B\n"
    "                      block executions a phase (default 10000000)\n"
    "      --interval N    bbv mode: instructions per interval (100000000)\n"
    "      --rep MODE      bbv mode: per-iteration or per-instruction\n"
    "      --qemu PATH     emulator to use (default from the ELF header)\n"
    "      --cpu MODEL     QEMU -cpu model (default qemu64 / max)\n"
    "      --sysroot DIR   QEMU -L for dynamic AArch64 programs\n"
    "                      (default /usr/aarch64-linux-gnu)\n"
    "      --argv0 NAME    the guest's argv[0] (default: base name)\n"
    "      --keep-env      pass your environment instead of the fixed one\n"
    "  -e, --env VAR=VAL   set a guest environment variable (repeatable)\n"
    "      --match-native  x86-64: make the run pick the code a native run\n"
    "                      does (`native-count --match-qemu`): -cpu max\n"
    "                      (unless --cpu) and GLIBC_TUNABLES masking the\n"
    "                      host features QEMU lacks and rseq\n"
    "                      (doc/dbtprof-record.md)\n"
    "      --seed N        QEMU random seed (default 1)\n"
    "      --aslr          leave host address randomisation on\n"
    "      --chunk WORDS   events per thread chunk (default 65536)\n"
    "      --zstd LEVEL    chunk compression level, 0 = none (default 1)\n"
    "      --flush MS      write what threads have recorded whenever the\n"
    "                      plugin's writer has been idle this long, so a\n"
    "                      killed guest loses at most that much and live\n"
    "                      readers keep up; 0 = full chunks only (default 20)\n"
    "      --plugin PATH   plugin to load (default: next to dbtprof)\n"
    "  -q, --quiet         no summary line on stderr\n"
    "  -h, --help          this text\n";

static pid_t child_pid = -1;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static const char *mode_arg(const char *m)
{
	if (!strcmp(m, "count") || !strcmp(m, "blocks") || !strcmp(m, "mem") ||
	    !strcmp(m, "bbv"))
		return m;
	return NULL;
}

static char *join_argv(char **v, char sep)
{
	size_t len = 1;
	char *s, *p;

	for (size_t i = 0; v[i]; i++)
		len += strlen(v[i]) + 1;
	s = p = malloc(len);
	if (!s)
		return NULL;
	*p = 0;
	for (size_t i = 0; v[i]; i++) {
		size_t n = strlen(v[i]);

		memcpy(p, v[i], n);
		p += n;
		*p++ = sep;
	}
	if (p > s)
		p--;
	*p = 0;
	return s;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"mode", required_argument, NULL, 'm'},
	    {"qemu", required_argument, NULL, 'Q'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"sysroot", required_argument, NULL, 'L'},
	    {"argv0", required_argument, NULL, '0'},
	    {"keep-env", no_argument, NULL, 'K'},
	    {"env", required_argument, NULL, 'e'},
	    {"match-native", no_argument, NULL, 'M'},
	    {"seed", required_argument, NULL, 'S'},
	    {"aslr", no_argument, NULL, 'A'},
	    {"chunk", required_argument, NULL, 'c'},
	    {"zstd", required_argument, NULL, 'z'},
	    {"flush", required_argument, NULL, 'F'},
	    {"interval", required_argument, NULL, 'I'},
	    {"cache", no_argument, NULL, 'X'},
	    {"cache-sample", required_argument, NULL, 'N'},
	    {"cache-phase", required_argument, NULL, 'B'},
	    {"rep", required_argument, NULL, 'R'},
	    {"plugin", required_argument, NULL, 'P'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_run_opts o = {.zstd = -1, .flush_ms = -1};
	unsigned long long interval = 100000000;
	int rep_insn = 0;
	char pargs[96];
	struct dbtp_run run;
	struct dbtp_copy_result res;
	const char *out = NULL;
	char *cmdline = NULL, *qcmd = NULL, *envs = NULL, cwd[PATH_MAX];
	char execd[PATH_MAX] = "";
	dbtp_err err = {0}, cerr = {0};
	int c, fd, status = 0, quiet = 0, copy_failed, ret, cache = 0;
	unsigned long long sample = 1, phase = 10000000;
	char *end;
	struct stat st;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:m:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'm':
			o.mode = mode_arg(optarg);
			if (!o.mode)
				return usage_error("record",
						   "unknown mode '%s' (count, "
						   "blocks or mem)",
						   optarg);
			break;
		case '0':
			o.argv0 = optarg;
			break;
		case 'S':
			errno = 0;
			o.seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg || !o.seed)
				return usage_error("record",
						   "--seed wants a positive "
						   "number, not '%s'",
						   optarg);
			break;
		case 'A':
			o.aslr = 1;
			break;
		case 'c': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || v < 64 || v > (1ul << 24))
				return usage_error(
				    "record", "--chunk wants 64..16777216");
			o.chunk = (unsigned)v;
			break;
		}
		case 'z': {
			long v = strtol(optarg, &end, 10);

			if (*end || !*optarg || v < 0 || v > 19)
				return usage_error(
				    "record", "--zstd wants a level 0..19");
			o.zstd = (int)v;
			break;
		}
		case 'F': {
			long v = strtol(optarg, &end, 10);

			if (*end || !*optarg || v < 0 || v > 60000)
				return usage_error("record",
						   "--flush wants 0..60000 ms");
			o.flush_ms = (int)v;
			break;
		}
		case 'I':
			errno = 0;
			interval = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || !interval ||
			    *optarg == '-')
				return usage_error("record", "bad --interval");
			break;
		case 'R':
			if (strcmp(optarg, "per-iteration") &&
			    strcmp(optarg, "per-instruction"))
				return usage_error("record",
						   "--rep is per-iteration or "
						   "per-instruction");
			rep_insn = !strcmp(optarg, "per-instruction");
			break;
		case 'X':
			cache = 1;
			break;
		case 'N':
		case 'B': {
			unsigned long long *x = c == 'N' ? &sample : &phase;

			errno = 0;
			*x = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' ||
			    !*x || *x > (c == 'N' ? 1000000ull : 1ull << 40))
				return usage_error(
				    "record", "bad %s '%s' (1..%s)",
				    c == 'N' ? "--cache-sample"
					     : "--cache-phase",
				    optarg, c == 'N' ? "1000000" : "2^40");
			cache = 1;
			break;
		}
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free((void *)o.env);
			return 0;
		default: {
			int r = run_option("record", c, optarg, &o);

			if (r > 0)
				break;
			free((void *)o.env);
			if (r < 0)
				return EXIT_USAGE;
			return usage_error("record", "unknown option '%s'",
					   argv[optind - 1]);
		}
		}
	}
	if (!out) {
		free((void *)o.env);
		return usage_error("record", "no output file (-o FILE)");
	}
	if (optind >= argc) {
		free((void *)o.env);
		return usage_error("record", "no program to run");
	}
	if (!o.plugin)
		o.plugin = plugin_path();
	if (!o.mode)
		o.mode = "blocks";
	if (!strcmp(o.mode, "bbv")) {
		snprintf(pargs, sizeof(pargs), "interval=%llu,rep=%s", interval,
			 rep_insn ? "insn" : "iter");
		o.plugin_args = pargs;
	}
	if (cache && strcmp(o.mode, "blocks")) {
		free((void *)o.env);
		return usage_error("record",
				   "--cache goes with -m blocks (so do "
				   "--cache-sample and --cache-phase)");
	}
	if (cache && sample == 1)
		o.plugin_args = "cache=on";
	else if (cache) {
		snprintf(pargs, sizeof(pargs),
			 "cache=on,cache_sample=%llu,cache_phase=%llu", sample,
			 phase);
		o.plugin_args = pargs;
	}

	/* Create the output first: a bad path fails before anything runs. */
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot create %s: %s", out, strerror(errno));
		free((void *)o.env);
		return EXIT_TOOL;
	}
	signal(SIGINT, SIG_IGN); /* the terminal sends it to QEMU too */
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (dbtp_run_start(&run, &o, argv + optind, &err)) {
		error("%s", err.msg);
		close(fd);
		unlink(out);
		free((void *)o.env);
		return EXIT_TOOL;
	}
	child_pid = run.pid;
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);

	cmdline = join_argv(argv + optind, ' ');
	qcmd = join_argv(run.qemu_argv, ' ');
	envs = join_argv(run.envp, '\n');
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "?");
	{
		char seed[32], mode_s[16];
		const char *kv[] = {
		    "command",
		    cmdline ? cmdline : "",
		    "program",
		    run.program,
		    "qemu",
		    run.qemu,
		    "qemu_version",
		    run.qemu_version,
		    "qemu_command",
		    qcmd ? qcmd : "",
		    "cpu",
		    run.cpu,
		    "seed",
		    seed,
		    "mode",
		    mode_s,
		    "env_digest",
		    run.env_digest,
		    "env",
		    o.keep_env ? "(caller's, not stored)" : (envs ? envs : ""),
		    "cwd",
		    cwd,
		    "recorder",
		    "dbtprof record",
		};

		snprintf(seed, sizeof(seed), "%" PRIu64, o.seed ? o.seed : 1);
		snprintf(mode_s, sizeof(mode_s), "%s", o.mode);
		copy_failed =
		    dbtp_stream_copy(run.fd, "plugin stream", fd, out, kv,
				     sizeof(kv) / sizeof(*kv) / 2, &res, &cerr);
	}
	if (copy_failed) {
		/* Disk full or a broken stream: stop the guest, keep what is
		 * whole so the trace still reads up to there. */
		kill(run.pid, SIGKILL);
		if (S_ISREG((fstat(fd, &st), st.st_mode)))
			if (ftruncate(fd, (off_t)res.bytes)) {
				/* the error below says it all */
			}
	}
	/* The plugin's stream closes on an execve: QEMU's process is then the
	 * new program, running natively, the one behind /proc/PID/exe unless
	 * it has ended already; then the one the guest named, which the
	 * plugin's last record gives (resolved as readlink would have it,
	 * where it still resolves from here). */
	if (!res.saw_end && !copy_failed) {
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)run.pid);
		n = readlink(link, execd, sizeof(execd) - 1);
		execd[n > 0 ? n : 0] = '\0';
		if (!strcmp(execd, run.qemu))
			execd[0] = '\0';
		if (!*execd && res.exec_last &&
		    !(*res.exec_path && realpath(res.exec_path, execd)))
			snprintf(execd, sizeof(execd), "%s",
				 *res.exec_path ? res.exec_path
						: "(a program)");
	}
	close(run.fd);
	run.fd = -1;
	if (dbtp_run_wait(&run, &status, &err)) {
		error("%s", err.msg);
		status = -1;
	}
	child_pid = -1;
	if (!copy_failed) {
		char cut[32], endnote[64];
		const char *kv[] = {"plugin_end", endnote, "cut_bytes",
				    cut,	  "exec",  execd};
		int kind = DBTP_STATUS_UNKNOWN;
		int64_t value = 0;

		if (status >= 0 && WIFEXITED(status)) {
			kind = DBTP_STATUS_EXITED;
			value = WEXITSTATUS(status);
		} else if (status >= 0 && WIFSIGNALED(status)) {
			kind = DBTP_STATUS_SIGNALED;
			value = WTERMSIG(status);
		}
		snprintf(cut, sizeof(cut), "%" PRIu64, res.cut);
		snprintf(endnote, sizeof(endnote), "%s",
			 res.saw_end ? "yes" : "no");
		if (dbtp_stream_status(fd, out, kind, value, kv, *execd ? 3 : 2,
				       &cerr))
			copy_failed = 1;
	}
	if (close(fd) && !copy_failed) {
		snprintf(cerr.msg, sizeof(cerr.msg), "%s: %s", out,
			 strerror(errno));
		copy_failed = 1;
	}
	if (copy_failed)
		error("%s (trace kept up to its last whole record, %" PRIu64
		      " bytes)",
		      cerr.msg, res.bytes);
	else if (!quiet)
		fprintf(stderr,
			"dbtprof: recorded %s into %s (%.1f MB, %" PRIu64
			" records%s)\n",
			argv[optind], out, (double)res.bytes / 1e6, res.records,
			res.saw_end ? "" : ", no END record: run cut short");
	if (*execd)
		fprintf(stderr,
			"dbtprof: warning: the guest called execve: %s ran "
			"natively from there, outside QEMU, and is not in "
			"the trace\n",
			execd);
	if (res.forks)
		fprintf(stderr,
			"dbtprof: warning: the guest started %" PRIu64
			" process%s (fork, vfork or clone), not in the "
			"trace: it holds the guest's own process only\n",
			res.forks, res.forks > 1 ? "es" : "");
	free(cmdline);
	free(qcmd);
	free(envs);
	free((void *)o.env);
	dbtp_run_free(&run);
	if (copy_failed)
		return EXIT_TOOL;
	if (status < 0)
		return EXIT_TOOL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	ret = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : EXIT_TOOL;
	return ret;
}

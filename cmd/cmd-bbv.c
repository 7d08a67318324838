/* SPDX-License-Identifier: MIT */
/*
 * cmd-bbv.c - dbtprof bbv: basic block vectors in SimPoint's .bb format,
 * from a recorded trace or live from a program run under QEMU (the plugin's
 * stream is read through a pipe: the same code, hence the same files).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/bbv.h"
#include "dbtp/run.h"
#include "dbtp/symbolize.h"
#include "dbtp/trace.h"
#include "util/buf.h"

static const char usage_text[] =
    "usage: dbtprof bbv [OPTIONS] -o OUT.bb TRACE\n"
    "       dbtprof bbv [OPTIONS] -o OUT.bb -- PROGRAM [ARGS...]\n"
    "\n"
    "Write basic block vectors in SimPoint 3.2's .bb format: one line per\n"
    "interval, \"T:id:count :id:count ...\", ids from 1 in order of first\n"
    "appearance, count = instructions executed in that basic block during\n"
    "the interval.  Intervals are cut at block boundaries once N\n"
    "instructions have passed; the overshoot is carried forward (interval k\n"
    "ends at the first block boundary at or after (k+1)*N).  Each thread\n"
    "gets its own file: thread 0 OUT.bb, thread k OUT.bb.tK; OUT.bb.map lists\n"
    "each id's address, instructions, function+offset and file.\n"
    "\n"
    "With a PROGRAM it is run under QEMU like `dbtprof record` (same fixed\n"
    "environment) and its exit status is returned; the plugin counts the\n"
    "intervals itself (record mode bbv), the fast path.  A TRACE may come\n"
    "from record mode blocks, mem or bbv (same --interval and --rep).\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT     .bb file to write (required)\n"
    "  -i, --interval N     instructions per interval (default 100000000)\n"
    "      --rep MODE       x86 rep string instructions: per-iteration (as\n"
    "                       QEMU runs them; default) or per-instruction (as\n"
    "                       hardware counters and Valgrind count them)\n"
    "      --no-split       keep QEMU's translation blocks instead of\n"
    "                       splitting them into basic blocks\n"
    "      --partial MODE   keep (default) or drop each thread's last,\n"
    "                       shorter interval\n"
    "  -q, --quiet          no summary on stderr\n"
    "Live runs also take: --cpu MODEL, --qemu PATH, --sysroot DIR,\n"
    "  --keep-env, -e VAR=VAL, --match-native, --plugin PATH (see dbtprof\n"
    "  record --help)\n"
    "  -h, --help           this text\n";

static int write_outputs(dbtp_bbvgen *g, const dbtp_trace *t, const char *out,
			 int quiet)
{
	struct dbtp_buf b = {0};
	dbtp_err err = {0};
	dbtp_symcache *cache = dbtp_symcache_new();
	char path[4096], n1[32];
	int rc = -1;

	for (uint32_t th = 0; th < dbtp_bbvgen_nthreads(g); th++) {
		b.len = 0;
		if (dbtp_bbvgen_format(g, th, &b, &err)) {
			error("%s", err.msg);
			goto out;
		}
		if (th)
			snprintf(path, sizeof(path), "%s.t%u", out, th);
		else
			snprintf(path, sizeof(path), "%s", out);
		if (write_file(path, b.p, b.len))
			goto out;
		if (!quiet)
			fprintf(stderr,
				"dbtprof: %s: thread %u, %" PRIu64
				" intervals, %s instructions\n",
				path, th, dbtp_bbvgen_nintervals(g, th),
				fmt_u64(dbtp_bbvgen_insns(g, th), n1));
	}
	b.len = 0;
	for (uint32_t id = 1; id <= dbtp_bbvgen_nbbs(g); id++) {
		uint64_t addr, off;
		uint32_t ninsns, tb;
		struct dbtp_sym sym;
		char line[1024];
		int n;

		const struct dbtp_block *blk;
		char foff[24] = "-";

		dbtp_bbvgen_bb(g, id, &addr, &ninsns, &tb, &off);
		blk = dbtp_trace_block(t, tb);
		dbtp_symbolize(cache, t, blk, off, &sym);
		if (blk->file)
			snprintf(foff, sizeof(foff), "0x%" PRIx64,
				 blk->offset + off);
		n = snprintf(line, sizeof(line), "%u 0x%" PRIx64 " %u ", id,
			     addr, ninsns);
		if (sym.name)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      "%s+0x%" PRIx64 " ", sym.name, sym.delta);
		else
			n += snprintf(line + n, sizeof(line) - (size_t)n, "- ");
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s %s\n",
			      sym.file ? sym.file : "-", foff);
		if (n < 0 || dbtp_buf_reserve(&b, (size_t)n + 1)) {
			error("out of memory");
			goto out;
		}
		memcpy(b.p + b.len, line, (size_t)n);
		b.len += (size_t)n;
	}
	snprintf(path, sizeof(path), "%s.map", out);
	if (write_file(path, b.p, b.len))
		goto out;
	rc = 0;
out:
	dbtp_symcache_free(cache);
	dbtp_buf_free(&b);
	return rc;
}

/* Feed every block of @t to the generator. */
static int consume(dbtp_trace *t, dbtp_bbvgen **g,
		   const struct dbtp_bbv_opts *o)
{
	struct dbtp_event ev;
	dbtp_err err = {0};
	uint64_t n = 0;
	char n1[32];
	int r;

	if (dbtp_bbvgen_new(g, o, dbtp_trace_info(t)->arch, &err)) {
		error("%s", err.msg);
		return -1;
	}
	{
		const struct dbtp_trace_info *in = dbtp_trace_info(t);

		if (in->mode == DBTP_MODE_COUNT) {
			error("a count-mode trace has no block order; record "
			      "with "
			      "--mode blocks");
			return -1;
		}
		if (in->mode == DBTP_MODE_BBV &&
		    (in->interval != o->interval ||
		     in->rep_per_instruction != o->rep_per_instruction)) {
			error("this bbv-mode trace was counted in intervals of "
			      "%" PRIu64 " with rep %s; give those options",
			      in->interval,
			      in->rep_per_instruction ? "per-instruction"
						      : "per-iteration");
			return -1;
		}
		while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
			if (ev.type == DBTP_EV_INTERVAL) {
				if (dbtp_bbvgen_interval(
					*g, ev.thread, ev.ivl_ids, ev.ivl_execs,
					ev.nivl, ev.ivl_last, t, &err)) {
					r = -1;
					break;
				}
				continue;
			}
			if (ev.type != DBTP_EV_BLOCK)
				continue;
			if (dbtp_bbvgen_block(*g, ev.thread, ev.block, &err)) {
				r = -1;
				break;
			}
			if (!(++n & 0xfffff))
				progress("bbv: %s blocks", fmt_u64(n, n1));
		}
	}
	progress_done();
	if (r < 0 || dbtp_bbvgen_finish(*g, t, &err)) {
		error("%s", err.msg);
		return -1;
	}
	return 0;
}

int cmd_bbv(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"interval", required_argument, NULL, 'i'},
	    {"rep", required_argument, NULL, 'R'},
	    {"no-split", no_argument, NULL, 'N'},
	    {"partial", required_argument, NULL, 'p'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"qemu", required_argument, NULL, 'Q'},
	    {"sysroot", required_argument, NULL, 'L'},
	    {"keep-env", no_argument, NULL, 'K'},
	    {"env", required_argument, NULL, 'e'},
	    {"match-native", no_argument, NULL, 'M'},
	    {"plugin", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_bbv_opts o = {.split = 1, .interval = 100000000};
	struct dbtp_run_opts ro = {.zstd = -1, .flush_ms = -1, .mode = "bbv"};
	char pargs[96];
	const char *out = NULL;
	dbtp_bbvgen *g = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	int c, quiet = 0, rc = 1, live, status = 0;
	char *end;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:i:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'i':
			errno = 0;
			o.interval = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || !o.interval ||
			    optarg[0] == '-')
				return usage_error(
				    "bbv",
				    "--interval wants a positive "
				    "count, not '%s'",
				    optarg);
			break;
		case 'R':
			if (!strcmp(optarg, "per-instruction"))
				o.rep_per_instruction = 1;
			else if (!strcmp(optarg, "per-iteration"))
				o.rep_per_instruction = 0;
			else
				return usage_error("bbv",
						   "--rep is per-iteration or "
						   "per-instruction");
			break;
		case 'N':
			o.split = 0;
			break;
		case 'p':
			if (!strcmp(optarg, "drop"))
				o.drop_partial = 1;
			else if (!strcmp(optarg, "keep"))
				o.drop_partial = 0;
			else
				return usage_error("bbv",
						   "--partial is keep or drop");
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free((void *)ro.env);
			return 0;
		default: {
			int r = run_option("bbv", c, optarg, &ro);

			if (r > 0)
				break;
			free((void *)ro.env);
			if (r < 0)
				return EXIT_USAGE;
			return usage_error("bbv", "unknown option '%s'",
					   argv[optind - 1]);
		}
		}
	}
	live = optind > 1 && !strcmp(argv[optind - 1], "--");
	if (!out || optind >= argc || (!live && optind + 1 != argc)) {
		free((void *)ro.env);
		return usage_error("bbv", "give -o OUT.bb and a TRACE, or -- "
					  "PROGRAM");
	}
	if (!live) {
		if (dbtp_trace_open(&t, argv[optind], &err)) {
			error("%s", err.msg);
			goto out;
		}
		if (consume(t, &g, &o) || write_outputs(g, t, out, quiet))
			goto out;
		rc = 0;
		goto out;
	} else {
		struct dbtp_run run;
		int failed;

		if (!ro.plugin)
			ro.plugin = plugin_path();
		/* The fast path: the plugin counts intervals itself. */
		if (!o.interval)
			o.interval = 100000000;
		snprintf(pargs, sizeof(pargs), "interval=%" PRIu64 ",rep=%s",
			 o.interval, o.rep_per_instruction ? "insn" : "iter");
		ro.plugin_args = pargs;
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		if (dbtp_run_start(&run, &ro, argv + optind, &err)) {
			error("%s", err.msg);
			free((void *)ro.env);
			return EXIT_TOOL;
		}
		failed = dbtp_trace_open_fd(&t, run.fd, "plugin stream", &err);
		if (failed)
			error("%s", err.msg);
		else
			failed = consume(t, &g, &o);
		if (failed)
			kill(run.pid, SIGKILL);
		if (dbtp_run_wait(&run, &status, &err)) {
			error("%s", err.msg);
			failed = 1;
		}
		if (!failed && !dbtp_trace_info(t)->has_end)
			fprintf(stderr,
				"dbtprof: the run ended without the "
				"plugin's END record; vectors cover what "
				"was recorded\n");
		if (!failed && write_outputs(g, t, out, quiet))
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
	dbtp_bbvgen_free(g);
	dbtp_trace_close(t);
	free((void *)ro.env);
	return rc;
}

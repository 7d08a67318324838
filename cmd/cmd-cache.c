/* SPDX-License-Identifier: MIT */
/*
 * cmd-cache.c - dbtprof cache: an L1D + L2 set-associative LRU cache model
 * over a mem-mode trace, per interval (the intervals of dbtprof bbv) and in
 * total, and the estimate SimPoint's simulation points give of it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbtp/cache.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof cache [OPTIONS] TRACE\n"
    "\n"
    "Run the memory accesses of a mem-mode trace (\"-\" reads standard\n"
    "input) through an L1 data cache and an L2: set-associative, true LRU,\n"
    "write-allocate, write-back, non-inclusive (L2 accessed only on an L1\n"
    "miss), one private hierarchy per thread.  An access straddling lines\n"
    "counts once per line it touches.  Reports, per interval (cut as by\n"
    "`dbtprof bbv`: interval i here is line i of its .bb file) and in\n"
    "total, accesses, misses, miss rates (misses / accesses of the level)\n"
    "and MPKI (misses per 1000 instructions); with SimPoint's output, the\n"
    "estimate sum(weight x metric of the simulation point) and its error\n"
    "against the whole run.\n"
    "\n"
    "Options:\n"
    "      --l1 SIZE,WAYS,LINE  L1D geometry (default 32K,8,64)\n"
    "      --l2 SIZE,WAYS,LINE  L2 geometry (default 1M,16,64); SIZE and\n"
    "                           LINE in bytes, K/M/G suffixes accepted;\n"
    "                           sets = SIZE/(WAYS*LINE), a power of two\n"
    "  -i, --interval N         instructions per interval (default 100000000)\n"
    "      --partial MODE       keep (default) or drop each thread's last,\n"
    "                           shorter interval (totals include it)\n"
    "      --simpoints FILE     SimPoint's simulation points (\"INTERVAL\n"
    "                           CLUSTER\" lines, intervals from 0)\n"
    "      --weights FILE       their weights (\"WEIGHT CLUSTER\" lines)\n"
    "  -t, --thread N           the thread the points are of (default 0)\n"
    "      --csv                intervals and totals as CSV\n"
    "      --json               everything as JSON\n"
    "  -h, --help               this text\n";

static const char *fmt_size(uint64_t v, char *buf)
{
	if (v >= (1ull << 30) && !(v & ((1ull << 30) - 1)))
		sprintf(buf, "%" PRIu64 " GiB", v >> 30);
	else if (v >= (1ull << 20) && !(v & ((1ull << 20) - 1)))
		sprintf(buf, "%" PRIu64 " MiB", v >> 20);
	else if (v >= (1ull << 10) && !(v & ((1ull << 10) - 1)))
		sprintf(buf, "%" PRIu64 " KiB", v >> 10);
	else
		sprintf(buf, "%" PRIu64 " B", v);
	return buf;
}

/* --- text ---------------------------------------------------------------- */

static void text_geom(const char *name, const struct dbtp_cache_geom *g)
{
	char b[32];

	printf("%-4s %s, %u-way, %u B lines, %" PRIu64 " sets\n", name,
	       fmt_size(g->size, b), g->ways, g->line, dbtp_cache_geom_sets(g));
}

static void text_row(const char *th, const char *ivl,
		     const struct dbtp_cache_counts *c)
{
	struct dbtp_cache_metrics m;
	char n1[32], n2[32];

	dbtp_cache_metrics(c, &m);
	printf("%6s %8s %16s %14s %9.3f%% %9.3f %9.3f%% %9.3f\n", th, ivl,
	       fmt_u64(c->insns, n1), fmt_u64(c->accesses, n2),
	       100 * m.l1_miss_rate, m.l1_mpki, 100 * m.l2_miss_rate,
	       m.l2_mpki);
}

static void text_total(const char *title, const struct dbtp_cache_counts *c)
{
	struct dbtp_cache_metrics m;
	char n1[32], n2[32], n3[32];

	dbtp_cache_metrics(c, &m);
	printf("\n%s\n", title);
	printf("  instructions        %16s\n", fmt_u64(c->insns, n1));
	printf("  memory operations   %16s  (%s loads, %s stores)\n",
	       fmt_u64(c->ops, n1), fmt_u64(c->ops - c->stores, n2),
	       fmt_u64(c->stores, n3));
	printf("  L1 accesses         %16s\n", fmt_u64(c->accesses, n1));
	printf("  L1 misses           %16s  miss rate %.3f%%, MPKI %.3f\n",
	       fmt_u64(c->l1_misses, n1), 100 * m.l1_miss_rate, m.l1_mpki);
	printf("  L1 write-backs      %16s  (of %s evictions)\n",
	       fmt_u64(c->l1_writebacks, n1), fmt_u64(c->l1_evictions, n2));
	printf("  L2 accesses         %16s\n", fmt_u64(c->l2_accesses, n1));
	printf("  L2 misses           %16s  miss rate %.3f%%, MPKI %.3f\n",
	       fmt_u64(c->l2_misses, n1), 100 * m.l2_miss_rate, m.l2_mpki);
	printf("  L2 evictions        %16s\n", fmt_u64(c->l2_evictions, n1));
	printf("  memory write-backs  %16s\n", fmt_u64(c->mem_writebacks, n1));
}

static void text_rel(const char *name, double est, double full, double rel,
		     int pct)
{
	double k = pct ? 100 : 1;

	printf("  %-14s %12.4f%s %12.4f%s", name, k * est, pct ? "%" : " ",
	       k * full, pct ? "%" : " ");
	if (isnan(rel))
		printf(" %14s\n", "-");
	else
		printf(" %+13.2f%%\n", 100 * rel);
}

static void print_text(const char *path, const dbtp_trace *t,
		       const dbtp_cachesim *s, const struct dbtp_cache_opts *o,
		       const struct dbtp_cache_estimate *est,
		       const struct dbtp_cache_pick *picks, size_t npicks,
		       uint32_t est_thread)
{
	struct dbtp_cache_counts all;
	uint32_t nth = dbtp_cachesim_nthreads(s);
	char n1[32], th[16], iv[32];

	printf("trace %s (%s)\n", path,
	       dbtp_arch_name(dbtp_trace_info(t)->arch));
	text_geom("L1D", &o->l1);
	text_geom("L2", &o->l2);
	printf("true LRU, write-allocate, write-back, non-inclusive; "
	       "private per thread\n");
	printf("intervals of %s instructions, last partial interval %s\n\n",
	       fmt_u64(o->interval, n1), o->drop_partial ? "dropped" : "kept");
	printf("%6s %8s %16s %14s %10s %9s %10s %9s\n", "thread", "interval",
	       "instructions", "accesses", "L1 miss", "L1 MPKI", "L2 miss",
	       "L2 MPKI");
	for (uint32_t i = 0; i < nth; i++) {
		snprintf(th, sizeof(th), "%u", i);
		for (uint64_t k = 0; k < dbtp_cachesim_nintervals(s, i); k++) {
			snprintf(iv, sizeof(iv), "%" PRIu64, k);
			text_row(th, iv, dbtp_cachesim_interval(s, i, k));
		}
	}
	if (nth > 1)
		for (uint32_t i = 0; i < nth; i++) {
			char title[48];

			snprintf(title, sizeof(title), "thread %u", i);
			text_total(title, dbtp_cachesim_thread_total(s, i));
		}
	dbtp_cachesim_total(s, &all);
	text_total(nth > 1 ? "total (all threads)" : "total", &all);
	if (!est)
		return;
	printf("\nSimPoint estimate of thread %u: %zu points, weights sum "
	       "%.6g\n",
	       est_thread, npicks, est->weight_sum);
	for (size_t i = 0; i < npicks; i++)
		printf("  cluster %u: interval %" PRIu64 ", weight %.6g\n",
		       picks[i].cluster, picks[i].interval, picks[i].weight);
	printf("  %-14s %13s %13s %14s\n", "", "estimate", "full run",
	       "relative error");
	text_rel("L1 miss rate", est->est.l1_miss_rate, est->full.l1_miss_rate,
		 est->rel_err.l1_miss_rate, 1);
	text_rel("L1 MPKI", est->est.l1_mpki, est->full.l1_mpki,
		 est->rel_err.l1_mpki, 0);
	text_rel("L2 miss rate", est->est.l2_miss_rate, est->full.l2_miss_rate,
		 est->rel_err.l2_miss_rate, 1);
	text_rel("L2 MPKI", est->est.l2_mpki, est->full.l2_mpki,
		 est->rel_err.l2_mpki, 0);
}

/* --- CSV ----------------------------------------------------------------- */

static void csv_row(const char *th, const char *ivl,
		    const struct dbtp_cache_counts *c)
{
	struct dbtp_cache_metrics m;

	dbtp_cache_metrics(c, &m);
	printf("%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%.6f,%.6f,%" PRIu64 ",%" PRIu64 "\n",
	       th, ivl, c->insns, c->blocks, c->ops, c->stores, c->accesses,
	       c->l1_misses, m.l1_miss_rate, m.l1_mpki, c->l1_evictions,
	       c->l1_writebacks, c->l2_accesses, c->l2_misses, m.l2_miss_rate,
	       m.l2_mpki, c->l2_evictions, c->mem_writebacks);
}

static void print_csv(const dbtp_cachesim *s)
{
	struct dbtp_cache_counts all;
	uint32_t nth = dbtp_cachesim_nthreads(s);
	char th[16], iv[32];

	printf("thread,interval,instructions,blocks,memory_ops,stores,"
	       "l1_accesses,l1_misses,l1_miss_rate,l1_mpki,l1_evictions,"
	       "l1_writebacks,l2_accesses,l2_misses,l2_miss_rate,l2_mpki,"
	       "l2_evictions,mem_writebacks\n");
	for (uint32_t i = 0; i < nth; i++) {
		snprintf(th, sizeof(th), "%u", i);
		for (uint64_t k = 0; k < dbtp_cachesim_nintervals(s, i); k++) {
			snprintf(iv, sizeof(iv), "%" PRIu64, k);
			csv_row(th, iv, dbtp_cachesim_interval(s, i, k));
		}
	}
	for (uint32_t i = 0; i < nth; i++) {
		snprintf(th, sizeof(th), "%u", i);
		csv_row(th, "total", dbtp_cachesim_thread_total(s, i));
	}
	dbtp_cachesim_total(s, &all);
	csv_row("all", "total", &all);
}

/* --- JSON ---------------------------------------------------------------- */

static void json_geom(struct json *j, const char *key,
		      const struct dbtp_cache_geom *g)
{
	json_obj(j, key);
	json_u64(j, "size", g->size);
	json_u64(j, "ways", g->ways);
	json_u64(j, "line", g->line);
	json_u64(j, "sets", dbtp_cache_geom_sets(g));
	json_close_obj(j);
}

static void json_counts(struct json *j, const struct dbtp_cache_counts *c)
{
	struct dbtp_cache_metrics m;

	dbtp_cache_metrics(c, &m);
	json_u64(j, "instructions", c->insns);
	json_u64(j, "blocks", c->blocks);
	json_u64(j, "memory_ops", c->ops);
	json_u64(j, "stores", c->stores);
	json_u64(j, "l1_accesses", c->accesses);
	json_u64(j, "l1_misses", c->l1_misses);
	json_double(j, "l1_miss_rate", m.l1_miss_rate);
	json_double(j, "l1_mpki", m.l1_mpki);
	json_u64(j, "l1_evictions", c->l1_evictions);
	json_u64(j, "l1_writebacks", c->l1_writebacks);
	json_u64(j, "l2_accesses", c->l2_accesses);
	json_u64(j, "l2_misses", c->l2_misses);
	json_double(j, "l2_miss_rate", m.l2_miss_rate);
	json_double(j, "l2_mpki", m.l2_mpki);
	json_u64(j, "l2_evictions", c->l2_evictions);
	json_u64(j, "mem_writebacks", c->mem_writebacks);
}

static void json_num(struct json *j, const char *key, double v)
{
	if (isfinite(v))
		json_double(j, key, v);
	else
		json_null(j, key);
}

static void json_rel(struct json *j, const char *key, double est, double full,
		     double rel)
{
	json_obj(j, key);
	json_num(j, "estimate", est);
	json_num(j, "full", full);
	json_num(j, "relative_error", rel);
	json_close_obj(j);
}

static void print_json(const char *path, const dbtp_trace *t,
		       const dbtp_cachesim *s, const struct dbtp_cache_opts *o,
		       const struct dbtp_cache_estimate *est,
		       const struct dbtp_cache_pick *picks, size_t npicks,
		       uint32_t est_thread, const char *spath,
		       const char *wpath)
{
	struct dbtp_cache_counts all;
	uint32_t nth = dbtp_cachesim_nthreads(s);
	struct json j;

	json_begin(&j, stdout);
	json_str(&j, "trace", path);
	json_str(&j, "arch", dbtp_arch_name(dbtp_trace_info(t)->arch));
	json_geom(&j, "l1", &o->l1);
	json_geom(&j, "l2", &o->l2);
	json_u64(&j, "interval", o->interval);
	json_str(&j, "partial", o->drop_partial ? "drop" : "keep");
	json_arr(&j, "threads");
	for (uint32_t i = 0; i < nth; i++) {
		json_obj(&j, NULL);
		json_u64(&j, "thread", i);
		json_arr(&j, "intervals");
		for (uint64_t k = 0; k < dbtp_cachesim_nintervals(s, i); k++) {
			json_obj(&j, NULL);
			json_u64(&j, "interval", k);
			json_counts(&j, dbtp_cachesim_interval(s, i, k));
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_obj(&j, "total");
		json_counts(&j, dbtp_cachesim_thread_total(s, i));
		json_close_obj(&j);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	dbtp_cachesim_total(s, &all);
	json_obj(&j, "total");
	json_counts(&j, &all);
	json_close_obj(&j);
	if (est) {
		json_obj(&j, "estimate");
		json_u64(&j, "thread", est_thread);
		json_str(&j, "simpoints", spath);
		json_str(&j, "weights", wpath);
		json_double(&j, "weight_sum", est->weight_sum);
		json_arr(&j, "points");
		for (size_t i = 0; i < npicks; i++) {
			json_obj(&j, NULL);
			json_u64(&j, "cluster", picks[i].cluster);
			json_u64(&j, "interval", picks[i].interval);
			json_double(&j, "weight", picks[i].weight);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_rel(&j, "l1_miss_rate", est->est.l1_miss_rate,
			 est->full.l1_miss_rate, est->rel_err.l1_miss_rate);
		json_rel(&j, "l1_mpki", est->est.l1_mpki, est->full.l1_mpki,
			 est->rel_err.l1_mpki);
		json_rel(&j, "l2_miss_rate", est->est.l2_miss_rate,
			 est->full.l2_miss_rate, est->rel_err.l2_miss_rate);
		json_rel(&j, "l2_mpki", est->est.l2_mpki, est->full.l2_mpki,
			 est->rel_err.l2_mpki);
		json_close_obj(&j);
	}
	json_end(&j);
}

/* --- the command -----------------------------------------------------------
 */

static int simulate(dbtp_trace *t, const char *path, dbtp_cachesim *s)
{
	struct dbtp_event ev;
	dbtp_err err = {0};
	uint64_t n = 0;
	char n1[32];
	int r;

	if (dbtp_trace_info(t)->cache) {
		error(
		    "%s: a blocks-mode trace with cache tallies (record "
		    "--cache) has per-block totals only (dbtprof stats, dump); "
		    "for intervals record it with --mode mem",
		    path);
		return -1;
	}
	if (dbtp_trace_info(t)->mode != DBTP_MODE_MEM) {
		error("%s: a %s-mode trace has no memory accesses; record it "
		      "with --mode mem",
		      path, dbtp_mode_name(dbtp_trace_info(t)->mode));
		return -1;
	}
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		if (dbtp_cachesim_event(s, &ev, &err)) {
			r = -1;
			break;
		}
		if (!(++n & 0xfffff))
			progress("cache: %s events", fmt_u64(n, n1));
	}
	progress_done();
	if (r < 0 || dbtp_cachesim_finish(s, &err)) {
		error("%s", err.msg);
		return -1;
	}
	if (!dbtp_trace_info(t)->has_end)
		fprintf(stderr,
			"dbtprof: %s: no END record (recording cut "
			"short); results cover what was recorded\n",
			path);
	return 0;
}

int cmd_cache(int argc, char **argv)
{
	enum { O_L1 = 256, O_L2, O_PARTIAL, O_SP, O_WT, O_CSV, O_JSON };
	static const struct option opts[] = {
	    {"l1", required_argument, NULL, O_L1},
	    {"l2", required_argument, NULL, O_L2},
	    {"interval", required_argument, NULL, 'i'},
	    {"partial", required_argument, NULL, O_PARTIAL},
	    {"simpoints", required_argument, NULL, O_SP},
	    {"weights", required_argument, NULL, O_WT},
	    {"thread", required_argument, NULL, 't'},
	    {"csv", no_argument, NULL, O_CSV},
	    {"json", no_argument, NULL, O_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_cache_opts o;
	struct dbtp_cache_estimate est;
	struct dbtp_cache_pick *picks = NULL;
	const char *spath = NULL, *wpath = NULL, *path;
	dbtp_cachesim *s = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	size_t npicks = 0;
	uint64_t v;
	uint32_t est_thread = 0;
	int c, csv = 0, json = 0, rc = 1;
	char *end;

	dbtp_cache_default_opts(&o);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+i:t:h", opts, NULL)) != -1) {
		switch (c) {
		case O_L1:
		case O_L2:
			if (dbtp_cache_geom_parse(
				optarg, c == O_L1 ? &o.l1 : &o.l2, &err))
				return usage_error("cache", "--%s %s",
						   c == O_L1 ? "l1" : "l2",
						   err.msg);
			break;
		case 'i':
		case 't':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' ||
			    (c == 'i' && !v) || (c == 't' && v > UINT32_MAX))
				return usage_error(
				    "cache",
				    "%s wants a %s count, not "
				    "'%s'",
				    c == 'i' ? "--interval" : "--thread",
				    c == 'i' ? "positive" : "thread", optarg);
			if (c == 'i')
				o.interval = v;
			else
				est_thread = (uint32_t)v;
			break;
		case O_PARTIAL:
			if (!strcmp(optarg, "drop"))
				o.drop_partial = 1;
			else if (!strcmp(optarg, "keep"))
				o.drop_partial = 0;
			else
				return usage_error("cache",
						   "--partial is keep or drop");
			break;
		case O_SP:
			spath = optarg;
			break;
		case O_WT:
			wpath = optarg;
			break;
		case O_CSV:
			csv = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("cache", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return usage_error("cache", "give one TRACE");
	if (csv && json)
		return usage_error("cache", "--csv or --json, not both");
	if (!spath != !wpath)
		return usage_error("cache",
				   "--simpoints and --weights go together");
	if (csv && spath)
		return usage_error("cache", "the CSV has no place for the "
					    "SimPoint estimate; use --json");
	if (dbtp_cachesim_new(&s, &o, &err)) {
		if (err.code == EINVAL)
			return usage_error("cache", "%s", err.msg);
		error("%s", err.msg);
		return 1;
	}
	path = argv[optind];
	if (spath &&
	    dbtp_cache_read_picks(spath, wpath, &picks, &npicks, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (dbtp_trace_open(&t, path, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (simulate(t, path, s))
		goto out;
	if (spath && dbtp_cache_estimate(s, est_thread, picks, npicks, spath,
					 &est, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (spath && fabs(est.weight_sum - 1) > 1e-3)
		fprintf(stderr,
			"dbtprof: %s: the weights add up to %.6g, "
			"not 1\n",
			wpath, est.weight_sum);
	if (csv)
		print_csv(s);
	else if (json)
		print_json(path, t, s, &o, spath ? &est : NULL, picks, npicks,
			   est_thread, spath, wpath);
	else
		print_text(path, t, s, &o, spath ? &est : NULL, picks, npicks,
			   est_thread);
	if (fflush(stdout) || ferror(stdout)) {
		error("writing the output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(picks);
	dbtp_cachesim_free(s);
	dbtp_trace_close(t);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * cmd-simpoint.c - dbtprof simpoint: SimPoint 3.2's phase clustering of a
 * .bb file into simulation points and weights (lib/analysis/simpoint.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/bbvfile.h"
#include "dbtp/simpoint.h"
#include "util/buf.h"

static const char usage_text[] =
    "usage: dbtprof simpoint [OPTIONS] -i IN.bb -o PREFIX\n"
    "\n"
    "Cluster the intervals of a basic block vector file (SimPoint's .bb\n"
    "format, e.g. from dbtprof bbv) the way SimPoint 3.2 does: normalise\n"
    "each vector, project it to D random dimensions, run k-means from\n"
    "several random starts for k = 1..K, score each k with the BIC and\n"
    "take the smallest k whose score reaches the threshold between the\n"
    "worst and best; the interval nearest each centroid is the simulation\n"
    "point and the cluster's share of intervals its weight.\n"
    "\n"
    "Writes PREFIX.simpoints (\"INTERVAL CLUSTER\", intervals from 0),\n"
    "PREFIX.weights (\"WEIGHT CLUSTER\") and PREFIX.labels (\"CLUSTER\n"
    "DISTANCE\" per interval), in SimPoint's formats.\n"
    "\n"
    "Options (defaults are SimPoint 3.2's):\n"
    "  -i, --input FILE       .bb file (required)\n"
    "  -o, --output PREFIX    output prefix (required)\n"
    "  -k, --maxk K           largest k tried (default 30)\n"
    "      --kstep S          try k = 1, 1+S, 1+2S, ... (default 1)\n"
    "      --dim D            projected dimensions (default 15)\n"
    "      --seeds N          k-means starts per k (default 5)\n"
    "      --iters N          k-means iterations at most (default 100)\n"
    "      --bic-threshold T  fraction of the BIC range (default 0.9)\n"
    "      --init samp|ff     random intervals (default) or furthest-first\n"
    "      --seed N           k-means random seed (default 493575226)\n"
    "      --seed-proj N      projection seed (default 2042712918)\n"
    "      --json             summary as JSON on stdout\n"
    "  -h, --help             this text\n";

static int write_buf(const char *prefix, const char *ext,
		     const struct dbtp_buf *b)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%s", prefix, ext);
	return write_file(path, b->p, b->len);
}

static int num_arg(const char *opt, const char *s, unsigned long long lo,
		   unsigned long long hi, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || !*s || *s == '-' || *v < lo || *v > hi) {
		usage_error("simpoint", "%s wants %llu..%llu, not '%s'", opt,
			    lo, hi, s);
		return -1;
	}
	return 0;
}

int cmd_simpoint(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"output", required_argument, NULL, 'o'},
	    {"maxk", required_argument, NULL, 'k'},
	    {"kstep", required_argument, NULL, 'S'},
	    {"dim", required_argument, NULL, 'D'},
	    {"seeds", required_argument, NULL, 'N'},
	    {"iters", required_argument, NULL, 'I'},
	    {"bic-threshold", required_argument, NULL, 'B'},
	    {"init", required_argument, NULL, 'z'},
	    {"seed", required_argument, NULL, 's'},
	    {"seed-proj", required_argument, NULL, 'p'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_simpoint_opts o;
	struct dbtp_simpoint_result res;
	struct dbtp_buf sp = {0}, w = {0}, lab = {0};
	const char *in = NULL, *out = NULL;
	unsigned long long v;
	dbtp_err err = {0};
	int c, json = 0, rc = 1;
	char *end;

	dbtp_simpoint_default_opts(&o);
	memset(&res, 0, sizeof(res));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'k':
			if (num_arg("--maxk", optarg, 1, 10000, &v))
				return EXIT_USAGE;
			o.max_k = (unsigned)v;
			break;
		case 'S':
			if (num_arg("--kstep", optarg, 1, 10000, &v))
				return EXIT_USAGE;
			o.k_step = (unsigned)v;
			break;
		case 'D':
			if (num_arg("--dim", optarg, 1, 1000, &v))
				return EXIT_USAGE;
			o.dim = (unsigned)v;
			break;
		case 'N':
			if (num_arg("--seeds", optarg, 1, 1000, &v))
				return EXIT_USAGE;
			o.num_init_seeds = (unsigned)v;
			break;
		case 'I':
			if (num_arg("--iters", optarg, 1, 100000, &v))
				return EXIT_USAGE;
			o.max_iters = (unsigned)v;
			break;
		case 'B':
			o.bic_threshold = strtod(optarg, &end);
			if (*end || !*optarg || !(o.bic_threshold >= 0) ||
			    o.bic_threshold > 1)
				return usage_error(
				    "simpoint", "--bic-threshold wants 0..1");
			break;
		case 'z':
			if (!strcmp(optarg, "samp"))
				o.init = DBTP_SIMPOINT_INIT_SAMPLE;
			else if (!strcmp(optarg, "ff"))
				o.init = DBTP_SIMPOINT_INIT_FURTHEST;
			else
				return usage_error("simpoint",
						   "--init is samp or ff");
			break;
		case 's':
			if (num_arg("--seed", optarg, 0, UINT64_MAX, &v))
				return EXIT_USAGE;
			o.seed_km = v;
			break;
		case 'p':
			if (num_arg("--seed-proj", optarg, 0, UINT64_MAX, &v))
				return EXIT_USAGE;
			o.seed_proj = v;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("simpoint", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (!in || !out || optind != argc)
		return usage_error("simpoint", "give -i IN.bb and -o PREFIX");
	if (dbtp_simpoint_run_file(in, &o, &res, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (dbtp_simpoint_format(&res, &sp, &w, &lab)) {
		error("out of memory");
		goto out;
	}
	if (write_buf(out, "simpoints", &sp) || write_buf(out, "weights", &w) ||
	    write_buf(out, "labels", &lab))
		goto out;
	if (json) {
		struct json j;

		json_begin(&j, stdout);
		json_str(&j, "input", in);
		json_u64(&j, "intervals", res.n);
		json_u64(&j, "k", res.k);
		json_double(&j, "distortion", res.distortion);
		json_arr(&j, "bic");
		for (unsigned i = 0; i < res.nk; i++) {
			json_obj(&j, NULL);
			json_u64(&j, "k", res.k_tried[i]);
			json_double(&j, "bic", res.bic[i]);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_arr(&j, "points");
		for (unsigned i = 0; i < res.k; i++) {
			if (res.points[i] == DBTP_SIMPOINT_NONE)
				continue;
			json_obj(&j, NULL);
			json_u64(&j, "cluster", i);
			json_u64(&j, "interval", res.points[i]);
			json_double(&j, "weight", res.weights[i]);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_end(&j);
	} else {
		printf("%s: %zu intervals, k = %u (BIC threshold %.2f over k = "
		       "%u..%u)\n",
		       in, res.n, res.k, o.bic_threshold,
		       res.nk ? res.k_tried[0] : 0,
		       res.nk ? res.k_tried[res.nk - 1] : 0);
		printf("  %-8s %-10s %s\n", "cluster", "interval", "weight");
		for (unsigned i = 0; i < res.k; i++)
			if (res.points[i] != DBTP_SIMPOINT_NONE)
				printf("  %-8u %-10zu %.6f\n", i, res.points[i],
				       res.weights[i]);
		printf("wrote %s.simpoints, %s.weights, %s.labels\n", out, out,
		       out);
	}
	rc = 0;
out:
	dbtp_simpoint_free_result(&res);
	dbtp_buf_free(&sp);
	dbtp_buf_free(&w);
	dbtp_buf_free(&lab);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * cmd-locate.c - dbtprof locate: where SimPoint's simulation points start,
 * by instruction count and by marker (a block address and how many times
 * that block had run), and a check that a second recording reaches each
 * marker at the same instruction count.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbtp/bbv.h"
#include "dbtp/symbolize.h"
#include "dbtp/trace.h"
#include "util/u64map.h"

static const char usage_text[] =
    "usage: dbtprof locate [OPTIONS] -s FILE.simpoints TRACE\n"
    "       dbtprof locate --check FILE.markers TRACE\n"
    "\n"
    "For each simulation point (interval numbers from SimPoint's .simpoints\n"
    "file), find where its interval starts in one thread of TRACE, cutting\n"
    "intervals exactly as `dbtprof bbv` does, and print a marker line:\n"
    "  INTERVAL CLUSTER INSTRUCTIONS ADDRESS ORDINAL FUNCTION+OFFSET\n"
    "INSTRUCTIONS executed before the interval's first block, which starts\n"
    "at ADDRESS and is the ORDINAL-th execution of code at that address.\n"
    "A simulator or a later run can stop at the marker without counting.\n"
    "\n"
    "--check reads such a file and a second recording and says, for each\n"
    "marker, whether its ORDINAL-th execution of ADDRESS comes after the\n"
    "same number of instructions (exit 0 if all do, 1 if not).\n"
    "\n"
    "Options:\n"
    "  -s, --simpoints FILE  SimPoint .simpoints file (\"INTERVAL CLUSTER\")\n"
    "  -i, --interval N      interval length used for the .bb (default\n"
    "                        100000000)\n"
    "  -t, --thread N        thread (default 0)\n"
    "      --rep MODE        per-iteration (default) or per-instruction, as\n"
    "                        given to dbtprof bbv\n"
    "  -o, --output FILE     write the markers there instead of stdout\n"
    "      --check FILE      check the markers in FILE against TRACE\n"
    "  -h, --help            this text\n";

struct marker {
	uint64_t interval, cluster, insns, addr, ordinal;
	int found;
	uint64_t got_insns;
};

static int read_lines(const char *path, struct marker **out, size_t *n,
		      int markers)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t ln = 0;

	*out = NULL;
	*n = 0;
	if (!f) {
		error("%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct marker m = {0}, *p;
		unsigned long long a, b, c = 0, d = 0, e = 0;
		int k;

		ln++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
			continue;
		k = markers ? sscanf(line, "%llu %llu %llu %llx %llu", &a, &b,
				     &c, &d, &e)
			    : sscanf(line, "%llu %llu", &a, &b);
		if (k != (markers ? 5 : 2)) {
			error("%s: line %zu: expected %s", path, ln,
			      markers ? "INTERVAL CLUSTER INSTRUCTIONS ADDRESS "
					"ORDINAL"
				      : "INTERVAL CLUSTER");
			fclose(f);
			free(*out);
			return -1;
		}
		m.interval = a;
		m.cluster = b;
		m.insns = c;
		m.addr = d;
		m.ordinal = e;
		p = realloc(*out, (*n + 1) * sizeof(*p));
		if (!p) {
			error("out of memory");
			fclose(f);
			free(*out);
			return -1;
		}
		*out = p;
		p[(*n)++] = m;
	}
	fclose(f);
	return 0;
}

static int cmp_interval(const void *a, const void *b)
{
	const struct marker *x = a, *y = b;

	return x->interval < y->interval ? -1 : x->interval > y->interval;
}

int cmd_locate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"simpoints", required_argument, NULL, 's'},
	    {"interval", required_argument, NULL, 'i'},
	    {"thread", required_argument, NULL, 't'},
	    {"rep", required_argument, NULL, 'R'},
	    {"output", required_argument, NULL, 'o'},
	    {"check", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *sp = NULL, *check = NULL, *outp = NULL;
	uint64_t interval = 100000000, insns = 0, end, ivl = 0;
	unsigned long thread = 0;
	int c, rep = 0, r, rc = 1;
	struct marker *m = NULL;
	size_t nm = 0, next = 0;
	struct dbtp_u64map cnt = {0}; /* executions by block address */
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	struct dbtp_event ev;
	const struct dbtp_block *prev = NULL;
	int at_start = 1; /* the next block starts interval ivl */
	FILE *out = stdout;
	char *e;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:i:t:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sp = optarg;
			break;
		case 'i':
			errno = 0;
			interval = strtoull(optarg, &e, 10);
			if (errno || *e || !*optarg || !interval ||
			    *optarg == '-')
				return usage_error("locate", "bad --interval");
			break;
		case 't':
			thread = strtoul(optarg, &e, 10);
			if (*e || !*optarg)
				return usage_error("locate", "bad --thread");
			break;
		case 'R':
			if (strcmp(optarg, "per-iteration") &&
			    strcmp(optarg, "per-instruction"))
				return usage_error("locate", "bad --rep");
			rep = !strcmp(optarg, "per-instruction");
			break;
		case 'o':
			outp = optarg;
			break;
		case 'c':
			check = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("locate", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc || (!sp == !check))
		return usage_error("locate",
				   "give -s FILE.simpoints or --check "
				   "FILE.markers, and one TRACE");
	if (read_lines(check ? check : sp, &m, &nm, check != NULL))
		return 1;
	if (!check)
		qsort(m, nm, sizeof(*m), cmp_interval);
	if (dbtp_trace_open(&t, argv[optind], &err)) {
		error("%s", err.msg);
		goto out;
	}
	end = interval;
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		uint64_t *k;
		uint32_t n;

		if (ev.type != DBTP_EV_BLOCK || ev.thread != thread)
			continue;
		n = dbtp_bbv_block_insns(prev, ev.block,
					 dbtp_trace_info(t)->arch, rep);
		prev = ev.block;
		k = dbtp_u64map_slot(&cnt, ev.block->vaddr);
		if (!k) {
			error("out of memory");
			goto out;
		}
		++*k;
		if (check) {
			for (size_t i = 0; i < nm; i++)
				if (!m[i].found &&
				    m[i].addr == ev.block->vaddr &&
				    m[i].ordinal == *k) {
					m[i].found = 1;
					m[i].got_insns = insns;
				}
		} else if (n && at_start) {
			/* The first counted block of interval ivl. */
			while (next < nm && m[next].interval < ivl)
				next++;
			for (; next < nm && m[next].interval == ivl; next++) {
				m[next].found = 1;
				m[next].insns = insns;
				m[next].addr = ev.block->vaddr;
				m[next].ordinal = *k;
			}
			at_start = 0;
		}
		insns += n;
		if (n && dbtp_interval_cut(&end, insns, interval)) {
			ivl++;
			at_start = 1;
		}
	}
	if (r < 0) {
		error("%s", err.msg);
		goto out;
	}
	if (check) {
		size_t bad = 0;

		for (size_t i = 0; i < nm; i++) {
			if (m[i].found && m[i].got_insns == m[i].insns) {
				printf("ok    interval %" PRIu64 " at %" PRIu64
				       " instructions (0x%" PRIx64 " #%" PRIu64
				       ")\n",
				       m[i].interval, m[i].insns, m[i].addr,
				       m[i].ordinal);
				continue;
			}
			bad++;
			if (m[i].found)
				printf("MOVED interval %" PRIu64 ": 0x%" PRIx64
				       " #%" PRIu64 " comes after %" PRIu64
				       " instructions, not %" PRIu64
				       " (%+" PRId64 ")\n",
				       m[i].interval, m[i].addr, m[i].ordinal,
				       m[i].got_insns, m[i].insns,
				       (int64_t)(m[i].got_insns - m[i].insns));
			else
				printf("GONE  interval %" PRIu64 ": 0x%" PRIx64
				       " does not run %" PRIu64 " times\n",
				       m[i].interval, m[i].addr, m[i].ordinal);
		}
		printf("%zu of %zu markers where they should be\n", nm - bad,
		       nm);
		rc = bad ? 1 : 0;
		goto out;
	}
	if (outp && !(out = fopen(outp, "w"))) {
		error("cannot create %s: %s", outp, strerror(errno));
		goto out;
	}
	{
		dbtp_symcache *cache = dbtp_symcache_new();

		fprintf(out,
			"# interval cluster instructions address ordinal "
			"function+offset (interval %" PRIu64 ", thread %lu)\n",
			interval, thread);
		for (size_t i = 0; i < nm; i++) {
			struct dbtp_sym s = {0};
			const struct dbtp_block *b = NULL;

			if (!m[i].found) {
				error("%s: interval %" PRIu64
				      " is past the end of "
				      "thread %lu (%" PRIu64 " intervals)",
				      sp, m[i].interval, thread,
				      ivl + !at_start);
				dbtp_symcache_free(cache);
				goto out;
			}
			for (uint32_t id = 0; id < dbtp_trace_nblocks(t); id++)
				if (dbtp_trace_block(t, id)->vaddr ==
				    m[i].addr) {
					b = dbtp_trace_block(t, id);
					break;
				}
			if (b)
				dbtp_symbolize(cache, t, b, 0, &s);
			fprintf(out,
				"%" PRIu64 " %" PRIu64 " %" PRIu64 " 0x%" PRIx64
				" %" PRIu64 " %s+0x%" PRIx64 "\n",
				m[i].interval, m[i].cluster, m[i].insns,
				m[i].addr, m[i].ordinal, s.name ? s.name : "?",
				s.delta);
		}
		dbtp_symcache_free(cache);
	}
	rc = 0;
out:
	if (out && out != stdout && fclose(out) && !rc) {
		error("%s: %s", outp, strerror(errno));
		rc = 1;
	}
	dbtp_trace_close(t);
	dbtp_u64map_free(&cnt);
	free(m);
	return rc;
}

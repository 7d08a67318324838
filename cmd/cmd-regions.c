/* SPDX-License-Identifier: MIT */
/*
 * cmd-regions.c - dbtprof regions: simulate DBT region formation techniques
 * (NET, MRET2, LEI, Trace Trees, NETPlus, LEF) over a recorded execution and
 * report the standard metrics, per technique, in one pass.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "dbtp/elf.h"
#include "dbtp/regions.h"
#include "dbtp/symbolize.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof regions [OPTIONS] TRACE\n"
    "\n"
    "Replay a blocks- or mem-mode trace through simulated DBT region\n"
    "formation techniques, as a translator would profile, record and run\n"
    "regions, and report per technique: regions, dynamic coverage, the\n"
    "70/80/90% cover sets, completion ratio, code duplication, dynamic and\n"
    "static region size, region transitions, side exits and counters.\n"
    "Translation blocks are split into basic blocks at every address some\n"
    "block starts at.  TRACE is read twice (block table, then events), so it\n"
    "must be a file.  doc/dbtprof-regions.md defines every rule and metric.\n"
    "\n"
    "Options:\n"
    "  -t, --technique LIST  comma-separated: net, mret2, lei, tt, netplus,\n"
    "                        lef, or all (the default)\n"
    "      --threshold N     hot threshold of every technique; or\n"
    "                        TECH=N[,TECH=N...] (defaults: net 50, mret2 50\n"
    "                        = two passes of 25, lei 35, tt 50, netplus 50,\n"
    "                        lef 50)\n"
    "      --max-insns N     longest recorded path, instructions (1024)\n"
    "      --lei-buffer N    LEI history buffer, blocks (1024)\n"
    "      --tt-max-insns N  largest trace tree, instructions (4096)\n"
    "      --tt-inner N      inner-loop back edges a tree recording may\n"
    "                        take before it is abandoned (2)\n"
    "      --netplus-depth N NETPlus path search depth, blocks (10)\n"
    "      --lef-depth N     LEF merge search depth, regions (10)\n"
    "      --segment[=KIND]  also simulate every technique with segments a\n"
    "                        region never crosses; KIND: file (each mapped\n"
    "                        file, the default), main (main executable vs\n"
    "                        the rest) or ranges A-B[,C-D...] (hex)\n"
    "      --csv             the table as CSV\n"
    "      --json            everything as JSON\n"
    "      --regions FILE    per-region table (all techniques) to FILE\n"
    "      --dot DIR         region graphs, DIR/TECH.dot (Graphviz)\n"
    "      --svg FILE        a chart comparing the techniques\n"
    "  -h, --help            this text\n";

struct opts {
	struct dbtp_regions_opts ro;
	uint64_t (*ranges)[2];
	int csv, json;
	const char *regions_path, *dot_dir, *svg_path;
};

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || !*s || *s == '-' || !x || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int parse_techniques(const char *arg, unsigned *set)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	*set = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int t = dbtp_technique_from_name(tok);

		if (!strcmp(tok, "all"))
			*set |= (1u << DBTP_TECH_COUNT) - 1;
		else if (t < 0)
			return -1;
		else
			*set |= 1u << t;
	}
	return *set ? 0 : -1;
}

static int parse_thresholds(const char *arg, struct dbtp_region_params *p)
{
	char buf[256], *save = NULL, *tok;
	uint32_t v;

	if (!parse_u32(arg, &v)) {
		for (int i = 0; i < DBTP_TECH_COUNT; i++)
			p->threshold[i] = v;
		return 0;
	}
	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int t;

		if (!eq)
			return -1;
		*eq = '\0';
		t = dbtp_technique_from_name(tok);
		if (t < 0 || parse_u32(eq + 1, &v))
			return -1;
		p->threshold[t] = v;
	}
	return 0;
}

static int parse_segment(const char *arg, struct opts *o)
{
	const char *s;
	uint32_t n = 1;

	if (!arg || !strcmp(arg, "file")) {
		o->ro.segmenting = DBTP_SEG_FILE;
		return 0;
	}
	if (!strcmp(arg, "main")) {
		o->ro.segmenting = DBTP_SEG_MAIN;
		return 0;
	}
	for (s = arg; *s; s++)
		n += *s == ',';
	o->ranges = calloc(n, sizeof(*o->ranges));
	if (!o->ranges)
		return -1;
	s = arg;
	for (uint32_t i = 0; i < n; i++) {
		char *end;

		errno = 0;
		o->ranges[i][0] = strtoull(s, &end, 16);
		if (errno || end == s || *end != '-')
			return -1;
		s = end + 1;
		o->ranges[i][1] = strtoull(s, &end, 16);
		if (errno || end == s || (*end && *end != ',') ||
		    o->ranges[i][1] <= o->ranges[i][0])
			return -1;
		s = end + (*end == ',');
	}
	o->ro.segmenting = DBTP_SEG_RANGES;
	o->ro.ranges = (const uint64_t(*)[2])o->ranges;
	o->ro.nranges = n;
	return 0;
}

/* --- simulation ---------------------------------------------------------- */

static int run(const char *path, const struct opts *o, dbtp_trace **tp,
	       dbtp_regions **rp)
{
	dbtp_trace *t = NULL, *t2 = NULL;
	struct dbtp_event ev;
	dbtp_err err = {0};
	uint64_t nev = 0;
	int r;

	if (!strcmp(path, "-")) {
		error("regions reads its trace twice: give a file, not '-'");
		return -1;
	}
	if (dbtp_trace_open(&t, path, &err))
		goto fail;
	if (dbtp_trace_info(t)->mode != DBTP_MODE_BLOCKS &&
	    dbtp_trace_info(t)->mode != DBTP_MODE_MEM) {
		error("%s: a %s-mode trace has no block stream; record with "
		      "-m blocks (or mem)",
		      path, dbtp_mode_name(dbtp_trace_info(t)->mode));
		dbtp_trace_close(t);
		return -1;
	}
	dbtp_trace_skip_events(t);
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0)
		;
	if (r < 0)
		goto fail;
	if (dbtp_regions_new(rp, t, &o->ro, &err))
		goto fail;
	if (dbtp_trace_open(&t2, path, &err))
		goto fail;
	while ((r = dbtp_trace_next(t2, &ev, &err)) > 0) {
		if (ev.type == DBTP_EV_BLOCK) {
			if (dbtp_regions_block(*rp, ev.thread, ev.block->id,
					       &err))
				goto fail;
			if (!(++nev & 0xfffff))
				progress("regions: %s blocks",
					 fmt_u64(nev, (char[32]){0}));
		} else if (ev.type == DBTP_EV_THREAD_EXIT) {
			dbtp_regions_thread_exit(*rp, ev.thread);
		}
	}
	progress_done();
	if (r < 0)
		goto fail;
	if (dbtp_trace_nblocks(t2) != dbtp_trace_nblocks(t)) {
		error("%s: the file changed between its two readings", path);
		goto out;
	}
	if (dbtp_regions_finish(*rp, &err))
		goto fail;
	if (!dbtp_trace_info(t2)->has_end)
		fprintf(stderr,
			"dbtprof: %s: no END record (recording cut "
			"short); results cover what was recorded\n",
			path);
	dbtp_trace_close(t2);
	*tp = t;
	return 0;
fail:
	progress_done();
	error("%s", err.msg);
out:
	dbtp_trace_close(t);
	dbtp_trace_close(t2);
	dbtp_regions_free(*rp);
	*rp = NULL;
	return -1;
}

/* --- reports ------------------------------------------------------------- */

static const char *row_name(const struct dbtp_region_metrics *m, char *buf)
{
	sprintf(buf, "%s%s", dbtp_technique_name(m->technique),
		m->segmented ? "+seg" : "");
	return buf;
}

static const char *pct(double v, char *buf)
{
	if (isnan(v))
		return "-";
	sprintf(buf, "%.2f", 100 * v);
	return buf;
}

static const char *num(double v, char *buf)
{
	if (isnan(v))
		return "-";
	sprintf(buf, "%.2f", v);
	return buf;
}

static const char *fmt6(double v, char *buf)
{
	sprintf(buf, "%.6f", v);
	return buf;
}

static const char *cover(const struct dbtp_cover *c, char *buf)
{
	if (!c->defined)
		return "-";
	sprintf(buf, "%u", c->regions);
	return buf;
}

static void print_text(const char *path, const dbtp_regions *r)
{
	const struct dbtp_region_metrics *m0 = dbtp_regions_metrics(r, 0);
	char b[12][32];

	printf("trace: %s\ninstructions: %s\n\n", path,
	       fmt_u64(m0->insns, b[0]));
	printf("%-12s %8s %8s %5s %5s %5s %8s %6s %8s %8s %12s %12s %9s\n",
	       "technique", "regions", "cover%", "c70", "c80", "c90", "compl%",
	       "dup", "dynsize", "statsize", "transitions", "side-exits",
	       "counters");
	for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++) {
		const struct dbtp_region_metrics *m =
		    dbtp_regions_metrics(r, s);

		printf("%-12s %8u %8s %5s %5s %5s %8s %6s %8s %8s %12s %12s "
		       "%9" PRIu64 "\n",
		       row_name(m, b[0]), m->regions, pct(m->coverage, b[1]),
		       cover(&m->cover[0], b[2]), cover(&m->cover[1], b[3]),
		       cover(&m->cover[2], b[4]), pct(m->completion, b[5]),
		       num(m->duplication, b[6]), num(m->dyn_size, b[7]),
		       num(m->static_size, b[8]), fmt_u64(m->transitions, b[9]),
		       fmt_u64(m->side_exits, b[10]), m->counters);
	}
}

static void print_csv(const dbtp_regions *r)
{
	char b[4][32];

	printf("technique,segmented,instructions,region_instructions,regions,"
	       "coverage,cover70_regions,cover70_static,cover80_regions,"
	       "cover80_static,cover90_regions,cover90_static,entries,"
	       "completions,completion,static_instructions,"
	       "distinct_instructions,duplication,dynamic_size,static_size,"
	       "transitions,side_exits,counters,recordings,abandoned\n");
	for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++) {
		const struct dbtp_region_metrics *m =
		    dbtp_regions_metrics(r, s);

		printf("%s,%d,%" PRIu64 ",%" PRIu64 ",%u,%.6f",
		       dbtp_technique_name(m->technique), m->segmented,
		       m->insns, m->region_insns, m->regions,
		       isnan(m->coverage) ? 0 : m->coverage);
		for (int c = 0; c < 3; c++)
			if (m->cover[c].defined)
				printf(",%u,%" PRIu64, m->cover[c].regions,
				       m->cover[c].static_insns);
			else
				printf(",,");
		sprintf(b[0], "%.6f", m->completion);
		sprintf(b[1], "%.6f", m->duplication);
		sprintf(b[2], "%.6f", m->dyn_size);
		sprintf(b[3], "%.6f", m->static_size);
		printf(",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64
		       ",%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 "\n",
		       m->entries, m->completions,
		       isnan(m->completion) ? "" : b[0], m->static_insns,
		       m->distinct_insns, isnan(m->duplication) ? "" : b[1],
		       isnan(m->dyn_size) ? "" : b[2],
		       isnan(m->static_size) ? "" : b[3], m->transitions,
		       m->side_exits, m->counters, m->recordings, m->aborted);
	}
}

static void json_ratio(struct json *j, const char *key, double v)
{
	if (isnan(v))
		json_null(j, key);
	else
		json_double(j, key, v);
}

static void print_json(const char *path, const dbtp_regions *r,
		       const struct opts *o)
{
	const struct dbtp_region_params *p = &o->ro.params;
	static const char *const segs[] = {"none", "file", "main", "ranges"};
	struct json j;

	json_begin(&j, stdout);
	json_str(&j, "trace", path);
	json_obj(&j, "parameters");
	json_obj(&j, "threshold");
	for (int i = 0; i < DBTP_TECH_COUNT; i++)
		json_u64(&j, dbtp_technique_name(i), p->threshold[i]);
	json_close_obj(&j);
	json_u64(&j, "max_insns", p->max_insns);
	json_u64(&j, "lei_buffer", p->lei_buffer);
	json_u64(&j, "tt_max_insns", p->tt_max_insns);
	json_u64(&j, "tt_inner", p->tt_inner);
	json_u64(&j, "netplus_depth", p->netplus_depth);
	json_u64(&j, "lef_depth", p->lef_depth);
	json_str(&j, "segment", segs[o->ro.segmenting]);
	json_close_obj(&j);
	json_arr(&j, "techniques");
	for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++) {
		const struct dbtp_region_metrics *m =
		    dbtp_regions_metrics(r, s);

		json_obj(&j, NULL);
		json_str(&j, "technique", dbtp_technique_name(m->technique));
		json_bool(&j, "segmented", m->segmented);
		json_u64(&j, "instructions", m->insns);
		json_u64(&j, "region_instructions", m->region_insns);
		json_u64(&j, "regions", m->regions);
		json_ratio(&j, "coverage", m->coverage);
		json_arr(&j, "cover_sets");
		for (int c = 0; c < 3; c++) {
			json_obj(&j, NULL);
			json_u64(&j, "percent", m->cover[c].pct);
			if (m->cover[c].defined) {
				json_u64(&j, "regions", m->cover[c].regions);
				json_u64(&j, "static_instructions",
					 m->cover[c].static_insns);
			} else {
				json_null(&j, "regions");
				json_null(&j, "static_instructions");
			}
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_u64(&j, "entries", m->entries);
		json_u64(&j, "completions", m->completions);
		json_ratio(&j, "completion", m->completion);
		json_u64(&j, "static_instructions", m->static_insns);
		json_u64(&j, "distinct_instructions", m->distinct_insns);
		json_ratio(&j, "duplication", m->duplication);
		json_ratio(&j, "dynamic_size", m->dyn_size);
		json_ratio(&j, "static_size", m->static_size);
		json_u64(&j, "transitions", m->transitions);
		json_u64(&j, "side_exits", m->side_exits);
		json_u64(&j, "counters", m->counters);
		json_u64(&j, "recordings", m->recordings);
		json_u64(&j, "abandoned", m->aborted);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_end(&j);
}

static const char *symbol(dbtp_symcache *sc, const dbtp_trace *t,
			  const struct dbtp_region_info *ri, char *buf,
			  size_t n)
{
	struct dbtp_sym sym;

	if (dbtp_symbolize(sc, t, dbtp_trace_block(t, ri->tb), ri->tb_offset,
			   &sym))
		snprintf(buf, n, "%s+0x%" PRIx64, sym.name, sym.delta);
	else if (sym.file)
		snprintf(buf, n, "%s", dbtp_basename(sym.file));
	else
		snprintf(buf, n, "?");
	return buf;
}

static int write_regions(const char *file, const dbtp_trace *t,
			 const dbtp_regions *r, int csv)
{
	FILE *f = fopen(file, "w");
	dbtp_symcache *sc = dbtp_symcache_new();
	char name[32], sym[256], c[32];
	int rc;

	if (!f || !sc) {
		error("%s: %s", file, strerror(errno ? errno : ENOMEM));
		if (f)
			fclose(f);
		dbtp_symcache_free(sc);
		return -1;
	}
	if (csv)
		fprintf(f, "technique,rank,entry,symbol,nodes,static_insns,"
			   "entries,insns,completions,completion,side_exits\n");
	else
		fprintf(f, "%-12s %6s %18s %-40s %6s %8s %12s %16s %8s %12s\n",
			"technique", "rank", "entry", "symbol", "nodes",
			"static", "entries", "instructions", "compl%",
			"side-exits");
	for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++) {
		const struct dbtp_region_metrics *m =
		    dbtp_regions_metrics(r, s);
		struct dbtp_region_info ri;

		row_name(m, name);
		for (uint32_t i = 0; !dbtp_regions_region(r, s, i, &ri); i++) {
			double cr = ri.entries && m->technique != DBTP_TECH_TT
					? (double)ri.completions / ri.entries
					: NAN;

			symbol(sc, t, &ri, sym, sizeof(sym));
			if (csv)
				fprintf(f,
					"%s,%u,0x%" PRIx64 ",\"%s\",%u,%" PRIu64
					",%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%s,%" PRIu64 "\n",
					name, i + 1, ri.entry, sym, ri.nodes,
					ri.static_insns, ri.entries, ri.insns,
					ri.completions,
					isnan(cr) ? "" : fmt6(cr, c),
					ri.side_exits);
			else
				fprintf(f,
					"%-12s %6u %#18" PRIx64 " %-40s %6u "
					"%8" PRIu64 " %12" PRIu64 " %16" PRIu64
					" %8s %12" PRIu64 "\n",
					name, i + 1, ri.entry, sym, ri.nodes,
					ri.static_insns, ri.entries, ri.insns,
					pct(cr, c), ri.side_exits);
		}
	}
	rc = fclose(f);
	dbtp_symcache_free(sc);
	if (rc) {
		error("%s: %s", file, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_dot(const char *dir, dbtp_regions *r)
{
	char path[4096], name[32];

	if (mkdir(dir, 0777) && errno != EEXIST) {
		error("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++) {
		const struct dbtp_region_metrics *m =
		    dbtp_regions_metrics(r, s);
		struct dbtp_region_info ri;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.dot", dir,
			 row_name(m, name));
		f = fopen(path, "w");
		if (!f) {
			error("%s: %s", path, strerror(errno));
			return -1;
		}
		fprintf(f,
			"digraph \"%s\" {\n  node [shape=box, "
			"fontname=monospace];\n",
			name);
		for (uint32_t i = 0; !dbtp_regions_region(r, s, i, &ri); i++) {
			struct dbtp_region_node nd;

			fprintf(f,
				"  subgraph cluster_%u {\n    label=\"region "
				"%u: entry %#" PRIx64 ", %" PRIu64
				" instructions executed\";\n",
				i, i + 1, ri.entry, ri.insns);
			for (uint32_t k = 0;
			     !dbtp_regions_node(r, s, i, k, &nd); k++) {
				fprintf(f,
					"    r%u_%u [label=\"%#" PRIx64
					"\\n%u insns\"%s];\n",
					i, k, nd.addr, nd.ninsns,
					nd.entry   ? ", style=bold"
					: nd.final ? ", peripheries=2"
						   : "");
				for (uint32_t e = 0; e < nd.nsucc; e++)
					fprintf(f, "    r%u_%u -> r%u_%u;\n", i,
						k, i, nd.succ[e]);
			}
			fprintf(f, "  }\n");
		}
		fprintf(f, "}\n");
		if (fclose(f)) {
			error("%s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* An SVG of horizontal bar panels, one per metric, a bar per row. */
static int write_svg(const char *file, const dbtp_regions *r)
{
	static const char *const titles[] = {
	    "dynamic coverage (%)", "completion ratio (%)",
	    "code duplication (x)", "regions",
	    "region transitions",   "side exits"};
	enum { NPANEL = 6, W = 720, LABEL = 120, BAR = 16 };
	uint32_t n = dbtp_regions_nsims(r);
	unsigned ph = 28 + n * (BAR + 4), y = 10;
	FILE *f = fopen(file, "w");
	char name[32];

	if (!f) {
		error("%s: %s", file, strerror(errno));
		return -1;
	}
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, 20 + NPANEL * ph);
	for (int p = 0; p < NPANEL; p++) {
		double v[2 * DBTP_TECH_COUNT], max = 0;

		for (uint32_t s = 0; s < n; s++) {
			const struct dbtp_region_metrics *m =
			    dbtp_regions_metrics(r, s);
			double x = p == 0   ? 100 * m->coverage
				   : p == 1 ? 100 * m->completion
				   : p == 2 ? m->duplication
				   : p == 3 ? m->regions
				   : p == 4 ? (double)m->transitions
					    : (double)m->side_exits;

			v[s] = x;
			if (!isnan(x) && x > max)
				max = x;
		}
		fprintf(f,
			"<text x=\"10\" y=\"%u\" font-weight=\"bold\">%s"
			"</text>\n",
			y + 14, titles[p]);
		y += 24;
		for (uint32_t s = 0; s < n; s++) {
			double w = isnan(v[s]) || max <= 0
				       ? 0
				       : v[s] / max * (W - LABEL - 110);

			fprintf(
			    f,
			    "<text x=\"10\" y=\"%u\">%s</text>\n"
			    "<rect x=\"%d\" y=\"%u\" width=\"%.1f\" "
			    "height=\"%d\" fill=\"%s\"/>\n"
			    "<text x=\"%.1f\" y=\"%u\">",
			    y + 12, row_name(dbtp_regions_metrics(r, s), name),
			    LABEL, y, w, BAR,
			    dbtp_regions_metrics(r, s)->segmented ? "#d08c3c"
								  : "#3c78b4",
			    LABEL + w + 6, y + 12);
			if (isnan(v[s]))
				fprintf(f, "n/a");
			else
				fprintf(f, p >= 3 ? "%.0f" : "%.2f", v[s]);
			fprintf(f, "</text>\n");
			y += BAR + 4;
		}
	}
	fprintf(f, "</svg>\n");
	if (fclose(f)) {
		error("%s: %s", file, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_regions(int argc, char **argv)
{
	enum {
		O_THR = 256,
		O_MAX,
		O_LEIBUF,
		O_TTMAX,
		O_TTIN,
		O_NPD,
		O_LEFD,
		O_SEG,
		O_CSV,
		O_JSON,
		O_REG,
		O_DOT,
		O_SVG,
	};
	static const struct option lopts[] = {
	    {"technique", required_argument, NULL, 't'},
	    {"threshold", required_argument, NULL, O_THR},
	    {"max-insns", required_argument, NULL, O_MAX},
	    {"lei-buffer", required_argument, NULL, O_LEIBUF},
	    {"tt-max-insns", required_argument, NULL, O_TTMAX},
	    {"tt-inner", required_argument, NULL, O_TTIN},
	    {"netplus-depth", required_argument, NULL, O_NPD},
	    {"lef-depth", required_argument, NULL, O_LEFD},
	    {"segment", optional_argument, NULL, O_SEG},
	    {"csv", no_argument, NULL, O_CSV},
	    {"json", no_argument, NULL, O_JSON},
	    {"regions", required_argument, NULL, O_REG},
	    {"dot", required_argument, NULL, O_DOT},
	    {"svg", required_argument, NULL, O_SVG},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct opts o;
	struct dbtp_region_params *p = &o.ro.params;
	dbtp_regions *r = NULL;
	dbtp_trace *t = NULL;
	int c, rc = 1;

	memset(&o, 0, sizeof(o));
	dbtp_region_params_default(p);
	o.ro.techniques = (1u << DBTP_TECH_COUNT) - 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+t:h", lopts, NULL)) != -1) {
		uint32_t *lim = c == O_MAX	? &p->max_insns
				: c == O_LEIBUF ? &p->lei_buffer
				: c == O_TTMAX	? &p->tt_max_insns
				: c == O_TTIN	? &p->tt_inner
				: c == O_NPD	? &p->netplus_depth
				: c == O_LEFD	? &p->lef_depth
						: NULL;

		if (lim) {
			if (c == O_TTIN && !strcmp(optarg, "0"))
				*lim = 0;
			else if (parse_u32(optarg, lim) ||
				 (c == O_LEIBUF && *lim > (1u << 24)))
				goto bad_value;
			continue;
		}
		switch (c) {
		case 't':
			if (parse_techniques(optarg, &o.ro.techniques))
				return usage_error(
				    "regions",
				    "--technique: '%s' is not a list of net, "
				    "mret2, lei, tt, netplus, lef, all",
				    optarg);
			break;
		case O_THR:
			if (parse_thresholds(optarg, p))
				goto bad_value;
			break;
		case O_SEG:
			if (parse_segment(optarg, &o)) {
				free(o.ranges);
				return usage_error(
				    "regions",
				    "--segment is file, main, or hex ranges "
				    "A-B[,C-D...], not '%s'",
				    optarg);
			}
			break;
		case O_CSV:
			o.csv = 1;
			break;
		case O_JSON:
			o.json = 1;
			break;
		case O_REG:
			o.regions_path = optarg;
			break;
		case O_DOT:
			o.dot_dir = optarg;
			break;
		case O_SVG:
			o.svg_path = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("regions", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc) {
		free(o.ranges);
		return usage_error("regions", "give one TRACE");
	}
	if (o.csv && o.json) {
		free(o.ranges);
		return usage_error("regions", "--csv or --json, not both");
	}
	if (run(argv[optind], &o, &t, &r))
		goto out;
	if (o.csv)
		print_csv(r);
	else if (o.json)
		print_json(argv[optind], r, &o);
	else
		print_text(argv[optind], r);
	if (o.regions_path && write_regions(o.regions_path, t, r, o.csv))
		goto out;
	if (o.dot_dir && write_dot(o.dot_dir, r))
		goto out;
	if (o.svg_path && write_svg(o.svg_path, r))
		goto out;
	if (fflush(stdout) || ferror(stdout)) {
		error("writing the output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	dbtp_regions_free(r);
	dbtp_trace_close(t);
	free(o.ranges);
	return rc;
bad_value:
	free(o.ranges);
	return usage_error("regions", "%s wants a positive count, not '%s'",
			   argv[optind - 1], optarg);
}

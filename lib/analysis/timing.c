/* SPDX-License-Identifier: MIT */
/*
 * timing.c - the timing table: per instruction form, what LLVM's scheduling
 * model says, obtained by running llvm-mc and llvm-mca and cached on disk.
 *
 * How a form is timed (doc/dbtprof-cycles.md has the long version):
 *  1. llvm-mc --disassemble turns the form's bytes into LLVM's assembly
 *     text, all forms in one run; if the instruction count does not come
 *     out one per form, the batch is split in halves until it does, and a
 *     form that alone does not give exactly one instruction is not timed.
 *  2. llvm-mca runs once over a file with one LLVM-MCA-BEGIN/END region per
 *     form, 12 iterations each, with the instruction-info and
 *     resource-pressure views.  If it fails, the batch is split in halves
 *     likewise.  Instruction info gives micro-ops, latency, reciprocal
 *     throughput and the MayLoad/MayStore/HasSideEffects flags; the region's
 *     resource pressure gives the resources: a column with a whole number k
 *     of cycles per iteration is a use of that resource for k cycles;
 *     columns with the same fractional pressure v form a group (llvm-mca
 *     spreads a micro-op over its group's members in turn) used
 *     round(n x v) times for a cycle.
 *  3. A form left untimed gets the defaults: latency 1, 1 micro-op, one
 *     cycle of any resource an integer add uses; flagged DBTP_FORM_DEFAULT.
 *     So does a form llvm-mca gives LLVM's "no data" latency of 100 with
 *     one micro-op (endbr64, fxsave on Skylake, ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/timing.h"
#include "dbtp/run.h"

extern char **environ;

#define ITERATIONS 12 /* a multiple of every group size: 1, 2, 3, 4, 6 */
#define FILE_MAGIC "dbtprof-timing 2"
/* a cache file's largest reorder buffer, scheduler and dispatch width */
#define MAX_WINDOW 65536

struct form {
	uint8_t bytes[DBTP_TIMING_MAX_BYTES];
	uint8_t len, cached;
	struct dbtp_form_timing ft;
	char *text; /* LLVM's assembly text, NULL if none */
};

struct dbtp_timing {
	enum dbtp_arch arch;
	struct dbtp_cpu_params cpu;
	int llvm; /* backed by LLVM tools */
	char version[32], triple[40];
	char *mc, *mca, *cache;
	struct form *f;
	size_t n, cap;
	uint32_t *hash; /* index + 1; 0 = empty */
	size_t hsize;
	struct dbtp_timing_stats st;
	int dirty; /* forms timed since the cache file was written */
	struct timespec saved; /* when it was last written (or opened) */
};

/* How often a long run saves what it has timed so far (seconds). */
#define CACHE_SAVE_SECONDS 30

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "timing table: out of memory");
}

static uint64_t fnv(const uint8_t *p, unsigned n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (unsigned i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ n;
}

int64_t timing_index(const dbtp_timing *t, const uint8_t *bytes, unsigned len)
{
	size_t m = t->hsize - 1, i;

	if (!t->hsize)
		return -1;
	for (i = fnv(bytes, len) & m; t->hash[i]; i = (i + 1) & m) {
		const struct form *f = &t->f[t->hash[i] - 1];

		if (f->len == len && !memcmp(f->bytes, bytes, len))
			return t->hash[i] - 1;
	}
	return -1;
}

const struct dbtp_form_timing *timing_at(const dbtp_timing *t, uint32_t idx)
{
	return &t->f[idx].ft;
}

const struct dbtp_form_timing *
dbtp_timing_get(const dbtp_timing *t, const uint8_t *bytes, unsigned len)
{
	int64_t i = timing_index(t, bytes, len);

	return i < 0 ? NULL : &t->f[i].ft;
}

void timing_default(const dbtp_timing *t, struct dbtp_form_timing *ft)
{
	memset(ft, 0, sizeof(*ft));
	ft->uops = 1;
	ft->latency = 1;
	ft->rthroughput = 1;
	ft->flags = DBTP_FORM_DEFAULT;
	if (t->cpu.alu) {
		ft->nuse = 1;
		ft->use[0].mask = t->cpu.alu;
		ft->use[0].cycles = 1;
	}
}

static int rehash(dbtp_timing *t, size_t size, dbtp_err *err)
{
	uint32_t *h = calloc(size, sizeof(*h));

	if (!h)
		return nomem(err);
	free(t->hash);
	t->hash = h;
	t->hsize = size;
	for (size_t k = 0; k < t->n; k++) {
		size_t i = fnv(t->f[k].bytes, t->f[k].len) & (size - 1);

		while (h[i])
			i = (i + 1) & (size - 1);
		h[i] = (uint32_t)k + 1;
	}
	return 0;
}

/* Add or replace a form; its index in *@idx. */
static int put(dbtp_timing *t, const uint8_t *bytes, unsigned len,
	       const struct dbtp_form_timing *ft, int cached, dbtp_err *err)
{
	int64_t i;

	if (!len || len > DBTP_TIMING_MAX_BYTES)
		return dbtp_err_set(err, EINVAL,
				    "timing table: a form of %u bytes", len);
	i = timing_index(t, bytes, len);
	if (i >= 0) {
		t->f[i].ft = *ft;
		return 0;
	}
	if ((t->n + 1) * 2 > t->hsize &&
	    rehash(t, t->hsize ? t->hsize * 2 : 1024, err))
		return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct form *f = realloc(t->f, cap * sizeof(*f));

		if (!f)
			return nomem(err);
		t->f = f;
		t->cap = cap;
	}
	memset(&t->f[t->n], 0, sizeof(t->f[t->n]));
	memcpy(t->f[t->n].bytes, bytes, len);
	t->f[t->n].len = (uint8_t)len;
	t->f[t->n].cached = (uint8_t)cached;
	t->f[t->n].ft = *ft;
	{
		size_t m = t->hsize - 1, k = fnv(bytes, len) & m;

		while (t->hash[k])
			k = (k + 1) & m;
		t->hash[k] = (uint32_t)t->n + 1;
	}
	t->n++;
	t->st.forms++;
	if (cached)
		t->st.cached++;
	if (ft->flags & DBTP_FORM_DEFAULT)
		t->st.defaults++;
	return 0;
}

int dbtp_timing_set(dbtp_timing *t, const uint8_t *bytes, unsigned len,
		    const struct dbtp_form_timing *ft, dbtp_err *err)
{
	return put(t, bytes, len, ft, 0, err);
}

/* --- running the tools --------------------------------------------------- */

/*
 * Run @argv with stdin from @in (or /dev/null), stdout to @out and stderr
 * to @errf.  *@status receives the wait status.
 */
static int run_tool(char *const argv[], const char *in, const char *out,
		    const char *errf, int *status, dbtp_err *err)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null",
					 O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, errf,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return dbtp_err_set(err, rc,
				    "cannot run %s: %s (Debian's llvm-N "
				    "packages have it; make deps installs "
				    "llvm-14)",
				    argv[0], strerror(rc));
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return dbtp_err_set(err, errno, "waitpid: %s",
					    strerror(errno));
	if (WIFEXITED(*status) && WEXITSTATUS(*status) == 127)
		return dbtp_err_set(err, ENOENT,
				    "cannot run %s (Debian's llvm-N packages "
				    "have it; make deps installs llvm-14)",
				    argv[0]);
	return 0;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *q = realloc(p, cap ? cap * 2 : 131072);

			if (!q) {
				free(p);
				fclose(f);
				return NULL;
			}
			p = q;
			cap = cap ? cap * 2 : 131072;
		}
		r = fread(p + n, 1, cap - n - 1, f);
		n += r;
	} while (r);
	fclose(f);
	p[n] = 0;
	return p;
}

struct work {
	char dir[64];
	char in[96], out[96], errf[96];
};

static int work_open(struct work *w, dbtp_err *err)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(w->dir, sizeof(w->dir), "%.40s/dbtprof-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(w->dir))
		return dbtp_err_set(err, errno, "mkdtemp %s: %s", w->dir,
				    strerror(errno));
	snprintf(w->in, sizeof(w->in), "%s/in", w->dir);
	snprintf(w->out, sizeof(w->out), "%s/out", w->dir);
	snprintf(w->errf, sizeof(w->errf), "%s/err", w->dir);
	return 0;
}

static void work_close(struct work *w)
{
	unlink(w->in);
	unlink(w->out);
	unlink(w->errf);
	rmdir(w->dir);
}

/* The first line of the file @path, or "" (in @buf). */
static const char *first_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)n, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	return buf;
}

/* --- parsing llvm-mca's text views --------------------------------------- */

struct region {
	int ok;
	unsigned dispatch;
	struct dbtp_form_timing ft;
	double pressure[DBTP_TIMING_MAX_RES];
	unsigned nres;
	char res[DBTP_TIMING_MAX_RES][24];
};

/* Add a group use: @n members of @mask share @total pressure. */
static void group_use(struct dbtp_form_timing *ft, uint64_t mask, double total)
{
	long k = lround(total);

	if (k < 1)
		k = 1;
	while (k-- > 0 && ft->nuse < DBTP_TIMING_MAX_USES) {
		ft->use[ft->nuse].mask = mask;
		ft->use[ft->nuse].cycles = 1;
		ft->nuse++;
	}
}

/*
 * The resource uses of one instruction from its pressure row @v and the
 * column names @names: whole cycles on a column are a use of it; the
 * fractional rest is grouped, first the units of one resource (columns of
 * the same name, as llvm-mca lists [14.0], [14.1], ...), then columns of
 * equal pressure.
 */
static void decompose(const double *v, char (*names)[24], unsigned nres,
		      struct dbtp_form_timing *ft)
{
	double frac[DBTP_TIMING_MAX_RES];
	int done[DBTP_TIMING_MAX_RES] = {0};

	ft->nuse = 0;
	for (unsigned i = 0; i < nres; i++) {
		double whole = floor(v[i] + 0.02);

		frac[i] = v[i] - whole;
		if (frac[i] < 0.02)
			frac[i] = 0;
		if (whole >= 1 && ft->nuse < DBTP_TIMING_MAX_USES) {
			ft->use[ft->nuse].mask = 1ull << i;
			ft->use[ft->nuse].cycles =
			    (uint16_t)(whole > 65535 ? 65535 : whole);
			ft->nuse++;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < nres; i++) {
			uint64_t mask = 0;
			double total = 0;
			unsigned n = 0;

			if (!frac[i] || done[i])
				continue;
			for (unsigned j = i; j < nres; j++) {
				if (done[j] || !frac[j])
					continue;
				if (pass == 0 ? strcmp(names[j], names[i])
					      : fabs(frac[j] - frac[i]) >= 0.02)
					continue;
				mask |= 1ull << j;
				total += frac[j];
				n++;
			}
			if (pass == 0 && n < 2)
				continue;
			for (unsigned j = i; j < nres; j++)
				if (mask >> j & 1)
					done[j] = 1;
			group_use(ft, mask, total);
		}
	}
}

/*
 * Parse llvm-mca's output into @r[0..@n): regions appear in order, each
 * with "[k] Code Region - NAME" (llvm-mca prints it when there are several
 * regions).
 */
static int parse_mca(char *text, struct region *r, size_t n)
{
	struct region *cur = NULL;
	char *line, *save = NULL;
	int state = 0; /* 1 info header seen, 2 resources, 3 pressure hdr */
	int col4 = -1, col5 = -1, col6 = -1;
	size_t k = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "] Code Region - ")) {
			if (k >= n)
				return -1;
			cur = &r[k++];
			memset(cur, 0, sizeof(*cur));
			state = 0;
			continue;
		}
		if (!cur)
			continue;
		if (!strncmp(line, "Dispatch Width:", 15)) {
			cur->dispatch = (unsigned)strtoul(line + 15, NULL, 10);
		} else if (!strncmp(line, "[1]    [2]    [3]    [4]", 24) &&
			   strstr(line, "Instructions:")) {
			char *p4 = strstr(line, "[4]"),
			     *p5 = strstr(line, "[5]"),
			     *p6 = strstr(line, "[6]");

			col4 = (int)(p4 - line) + 1;
			col5 = p5 ? (int)(p5 - line) + 1 : -1;
			col6 = p6 ? (int)(p6 - line) + 1 : -1;
			state = 1;
		} else if (state == 1) {
			int len = (int)strlen(line);
			char *end;

			cur->ft.uops = (uint16_t)strtoul(line, &end, 10);
			cur->ft.latency = (uint16_t)strtoul(end, &end, 10);
			cur->ft.rthroughput = (float)strtod(end, &end);
			cur->ft.flags = 0;
			if (col4 < len && line[col4] == '*')
				cur->ft.flags |= DBTP_FORM_LOAD;
			if (col5 > 0 && col5 < len && line[col5] == '*')
				cur->ft.flags |= DBTP_FORM_STORE;
			if (col6 > 0 && col6 < len && line[col6] == 'U')
				cur->ft.flags |= DBTP_FORM_SIDE_EFFECTS;
			cur->ok = 1;
			state = 0;
		} else if (!strcmp(line, "Resources:")) {
			cur->nres = 0;
			state = 2;
		} else if (state == 2 && line[0] == '[') {
			char *dash = strstr(line, "- ");

			if (dash && cur->nres < DBTP_TIMING_MAX_RES) {
				snprintf(cur->res[cur->nres], 24, "%s",
					 dash + 2);
				cur->nres++;
			}
		} else if (!strcmp(line, "Resource pressure by instruction:")) {
			state = 3;
		} else if (state == 3 && line[0] == '[') {
			state = 4;
		} else if (state == 4) {
			char *p = line, *end;

			for (unsigned i = 0; i < cur->nres; i++) {
				while (*p == ' ')
					p++;
				if (*p == '-') {
					cur->pressure[i] = 0;
					p++;
				} else {
					cur->pressure[i] = strtod(p, &end);
					if (end == p)
						return -1;
					p = end;
				}
			}
			decompose(cur->pressure, cur->res, cur->nres, &cur->ft);
			state = 0;
		}
	}
	return k == n ? 0 : -1;
}

/* --- llvm-mc: bytes to assembly ------------------------------------------- */

/* Text lines of llvm-mc's disassembly that are instructions. */
static size_t split_insns(char *text, char **lines, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		while (*l == ' ' || *l == '\t')
			l++;
		if (!*l || *l == '.' || *l == '#' || *l == ';' || *l == '/')
			continue;
		if (n < max)
			lines[n] = l;
		n++;
	}
	return n;
}

/*
 * Disassemble forms @idx[0..@n) into @asm_out[i] (malloc'ed, NULL if the
 * form is not one instruction for LLVM).
 */
static int disassemble(dbtp_timing *t, struct work *w,
		       const uint8_t *const *forms, const uint8_t *lens,
		       const size_t *idx, size_t n, char **asm_out,
		       dbtp_err *err)
{
	char *argv[] = {t->mc, "--disassemble", NULL, NULL};
	char triple[64];
	char **lines = NULL;
	char *text = NULL;
	FILE *f;
	int status;
	size_t got;

	if (!n)
		return 0;
	snprintf(triple, sizeof(triple), "-triple=%s", t->triple);
	argv[2] = triple;
	f = fopen(w->in, "w");
	if (!f)
		return dbtp_err_set(err, errno, "%s: %s", w->in,
				    strerror(errno));
	for (size_t i = 0; i < n; i++) {
		for (unsigned b = 0; b < lens[idx[i]]; b++)
			fprintf(f, "0x%02x ", forms[idx[i]][b]);
		fputc('\n', f);
	}
	if (fclose(f))
		return dbtp_err_set(err, errno, "%s: %s", w->in,
				    strerror(errno));
	if (run_tool(argv, w->in, w->out, w->errf, &status, err))
		return -1;
	text = read_text(w->out);
	lines = calloc(n, sizeof(*lines));
	if (!text || !lines) {
		free(text);
		free(lines);
		return nomem(err);
	}
	got = split_insns(text, lines, n);
	/* A warning means LLVM skipped or split bytes somewhere. */
	{
		char *e = read_text(w->errf);
		int warned = e && (strstr(e, "warning") || strstr(e, "error"));

		free(e);
		if (warned)
			got = n + 1;
	}
	if (got == n && WIFEXITED(status)) {
		for (size_t i = 0; i < n; i++) {
			asm_out[i] = strdup(lines[i]);
			if (!asm_out[i]) {
				free(text);
				free(lines);
				return nomem(err);
			}
		}
		free(text);
		free(lines);
		return 0;
	}
	free(text);
	free(lines);
	if (n == 1)
		return 0; /* not one instruction for LLVM: defaults */
	if (disassemble(t, w, forms, lens, idx, n / 2, asm_out, err))
		return -1;
	return disassemble(t, w, forms, lens, idx + n / 2, n - n / 2,
			   asm_out + n / 2, err);
}

/* --- llvm-mca: timing -------------------------------------------------- */

static int run_mca(dbtp_timing *t, struct work *w, char *const *text, size_t n,
		   const char *cpu, int stats, struct region *r, int *status,
		   dbtp_err *err)
{
	char triple[64], mcpu[96], iters[32];
	char *argv[12];
	char *out;
	FILE *f;
	int a = 0, rc;

	snprintf(triple, sizeof(triple), "-mtriple=%s", t->triple);
	snprintf(mcpu, sizeof(mcpu), "-mcpu=%s", cpu);
	snprintf(iters, sizeof(iters), "-iterations=%d", ITERATIONS);
	argv[a++] = t->mca;
	argv[a++] = triple;
	argv[a++] = mcpu;
	argv[a++] = iters;
	argv[a++] = "-instruction-info";
	argv[a++] = "-resource-pressure";
	if (stats) {
		argv[a++] = "-retire-stats";
		argv[a++] = "-scheduler-stats";
	}
	argv[a++] = w->in;
	argv[a] = NULL;
	f = fopen(w->in, "w");
	if (!f)
		return dbtp_err_set(err, errno, "%s: %s", w->in,
				    strerror(errno));
	for (size_t i = 0; i < n; i++)
		fprintf(f, "# LLVM-MCA-BEGIN f%zu\n%s\n# LLVM-MCA-END\n", i,
			text[i]);
	if (fclose(f))
		return dbtp_err_set(err, errno, "%s: %s", w->in,
				    strerror(errno));
	if (run_tool(argv, NULL, w->out, w->errf, status, err))
		return -1;
	t->st.llvm_runs++;
	{
		char line[256];

		first_line(w->errf, line, sizeof(line));
		if (strstr(line, "not a recognized processor"))
			return dbtp_err_set(err, EINVAL,
					    "CPU '%s' is not one LLVM %s knows "
					    "for %s",
					    cpu, t->version,
					    dbtp_arch_name(t->arch));
	}
	if (!WIFEXITED(*status) || WEXITSTATUS(*status)) {
		*status = -1;
		return 0;
	}
	out = read_text(w->out);
	if (!out)
		return nomem(err);
	rc = parse_mca(out, r, n);
	free(out);
	*status = rc ? -1 : 0;
	return 0;
}

/* Time @n assembly lines into @r; bisect on failure (r[i].ok = 0). */
static int time_batch(dbtp_timing *t, struct work *w, char *const *text,
		      size_t n, struct region *r, dbtp_err *err)
{
	int status;

	if (!n)
		return 0;
	if (run_mca(t, w, text, n, t->cpu.name, 0, r, &status, err))
		return -1;
	if (!status)
		return 0;
	if (n == 1) {
		r[0].ok = 0;
		return 0;
	}
	if (time_batch(t, w, text, n / 2, r, err))
		return -1;
	return time_batch(t, w, text + n / 2, n - n / 2, r + n / 2, err);
}

/* --- the cache file --------------------------------------------------------
 */

static int parse_hex(const char *s, uint8_t *b, unsigned *len)
{
	unsigned n = 0;

	while (s[0] && s[1] && s[0] != ' ') {
		unsigned v;

		if (n >= DBTP_TIMING_MAX_BYTES || sscanf(s, "%2x", &v) != 1)
			return -1;
		b[n++] = (uint8_t)v;
		s += 2;
	}
	*len = n;
	return n ? 0 : -1;
}

/* Read the cache file if there is one; a malformed one is ignored. */
static void cache_read(dbtp_timing *t)
{
	FILE *f = fopen(t->cache, "r");
	char line[1024];
	struct dbtp_cpu_params p;
	int ok = 0;

	if (!f)
		return;
	memset(&p, 0, sizeof(p));
	if (!fgets(line, sizeof(line), f) || strncmp(line, FILE_MAGIC, 16))
		goto out;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "cpu ", 4)) {
			snprintf(p.name, sizeof(p.name), "%.60s", line + 4);
		} else if (!strncmp(line, "params ", 7)) {
			unsigned long alu;

			/* (sizes no machine has, as a damaged file may hold,
			 * would be allocated) */
			if (sscanf(line + 7, "%u %u %u %u %lx %u", &p.dispatch,
				   &p.rob, &p.sched, &p.nres, &alu,
				   &p.load_latency) != 6 ||
			    p.nres > DBTP_TIMING_MAX_RES || !p.rob ||
			    p.rob > MAX_WINDOW || !p.sched ||
			    p.sched > MAX_WINDOW || p.dispatch > MAX_WINDOW)
				goto out;
			p.alu = alu;
		} else if (!strncmp(line, "res ", 4)) {
			unsigned i;
			char name[24];

			if (sscanf(line + 4, "%u %23s", &i, name) != 2 ||
			    i >= p.nres)
				goto out;
			snprintf(p.res[i], sizeof(p.res[i]), "%s", name);
			ok = 1;
		} else if (!strncmp(line, "f ", 2)) {
			struct dbtp_form_timing ft;
			uint8_t b[DBTP_TIMING_MAX_BYTES];
			unsigned len, uops, lat, flags, nuse;
			char *s = line + 2;
			int used;

			memset(&ft, 0, sizeof(ft));
			if (parse_hex(s, b, &len))
				goto out;
			s = strchr(s, ' ');
			if (!s ||
			    sscanf(s, "%u %u %f %x %u%n", &uops, &lat,
				   &ft.rthroughput, &flags, &nuse,
				   &used) != 5 ||
			    nuse > DBTP_TIMING_MAX_USES)
				goto out;
			s += used;
			ft.uops = (uint16_t)uops;
			ft.latency = (uint16_t)lat;
			ft.flags = (uint8_t)flags;
			ft.nuse = (uint8_t)nuse;
			for (unsigned i = 0; i < nuse; i++) {
				unsigned long m;
				unsigned c;

				if (sscanf(s, " %lx:%u%n", &m, &c, &used) != 2)
					goto out;
				s += used;
				ft.use[i].mask = m;
				ft.use[i].cycles = (uint16_t)c;
			}
			if (put(t, b, len, &ft, 1, NULL))
				goto out;
			s = strstr(s, " | ");
			if (s) {
				int64_t k = timing_index(t, b, len);

				if (k >= 0 && !t->f[k].text)
					t->f[k].text = strdup(s + 3);
			}
		}
	}
	if (ok && p.dispatch && !strcmp(p.name, t->cpu.name))
		t->cpu = p;
out:
	fclose(f);
}

static int mkdirs(const char *path)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

/* Write the whole table to the cache file (atomically: temp + rename). */
static int cache_write(dbtp_timing *t, dbtp_err *err)
{
	char tmp[1100], dir[1024];
	const struct dbtp_cpu_params *p = &t->cpu;
	char *slash;
	FILE *f;

	if (!t->cache)
		return 0;
	snprintf(dir, sizeof(dir), "%s", t->cache);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		if (mkdirs(dir))
			return dbtp_err_set(err, errno, "%s: %s", dir,
					    strerror(errno));
	}
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", t->cache, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return dbtp_err_set(err, errno, "%s: %s", tmp, strerror(errno));
	fprintf(f,
		"%s\nllvm %s\ntriple %s\ncpu %s\nparams %u %u %u %u %lx %u\n",
		FILE_MAGIC, t->version, t->triple, p->name, p->dispatch, p->rob,
		p->sched, p->nres, (unsigned long)p->alu, p->load_latency);
	for (unsigned i = 0; i < p->nres; i++)
		fprintf(f, "res %u %s\n", i, p->res[i]);
	for (size_t i = 0; i < t->n; i++) {
		const struct form *fm = &t->f[i];

		fputs("f ", f);
		for (unsigned b = 0; b < fm->len; b++)
			fprintf(f, "%02x", fm->bytes[b]);
		fprintf(f, " %u %u %.2f %x %u", fm->ft.uops, fm->ft.latency,
			fm->ft.rthroughput, fm->ft.flags, fm->ft.nuse);
		for (unsigned u = 0; u < fm->ft.nuse; u++)
			fprintf(f, " %lx:%u", (unsigned long)fm->ft.use[u].mask,
				fm->ft.use[u].cycles);
		if (fm->text)
			fprintf(f, " | %s", fm->text);
		fputc('\n', f);
	}
	if (fclose(f) || rename(tmp, t->cache)) {
		int e = errno;

		unlink(tmp);
		return dbtp_err_set(err, e, "%s: %s", t->cache, strerror(e));
	}
	return 0;
}

/* --- opening ---------------------------------------------------------------
 */

static const char *probe_insn(enum dbtp_arch arch, int load)
{
	if (load)
		return arch == DBTP_ARCH_AARCH64 ? "ldr\tx0, [x1]"
						 : "movq\t(%rax), %rbx";
	return arch == DBTP_ARCH_AARCH64 ? "add\tx0, x0, x1"
					 : "addq\t%rbx, %rax";
}

/* The CPU's parameters: llvm-mca's statistics views over an integer add. */
static int probe(dbtp_timing *t, dbtp_err *err)
{
	char *text[2] = {(char *)probe_insn(t->arch, 0),
			 (char *)probe_insn(t->arch, 1)};
	struct region r[2];
	struct work w;
	char *out = NULL, *p;
	int status, rc = -1;

	if (work_open(&w, err))
		return -1;
	if (run_mca(t, &w, text, 2, t->cpu.name, 1, r, &status, err))
		goto done;
	if (status || !r[0].ok || !r[1].ok) {
		char line[256];

		dbtp_err_set(err, EINVAL, "%s -mcpu=%s failed: %s", t->mca,
			     t->cpu.name,
			     first_line(w.errf, line, sizeof(line)));
		goto done;
	}
	t->cpu.dispatch = r[0].dispatch;
	t->cpu.load_latency = r[1].ft.latency;
	t->cpu.nres = r[0].nres;
	memcpy(t->cpu.res, r[0].res, sizeof(t->cpu.res));
	for (unsigned u = 0; u < r[0].ft.nuse; u++)
		t->cpu.alu |= r[0].ft.use[u].mask;
	out = read_text(w.out);
	if (!out) {
		nomem(err);
		goto done;
	}
	p = strstr(out, "Total ROB Entries:");
	t->cpu.rob = p ? (unsigned)strtoul(p + 18, NULL, 10) : 0;
	/* Scheduler buffers: the [4] column of the queue usage table, in the
	 * first region. */
	p = strstr(out, "Scheduler's queue usage:");
	if (p) {
		char *end = strstr(p, "\n\n\n");
		char *l = strstr(p, " [1]");

		l = l ? strchr(l, '\n') : NULL;
		while (l && (!end || l < end)) {
			char name[64];
			unsigned a, b, c;

			l++;
			if (sscanf(l, "%63s %u %u %u", name, &a, &b, &c) == 4)
				t->cpu.sched += c;
			l = strchr(l, '\n');
		}
	}
	if (!t->cpu.rob)
		t->cpu.rob = 192;
	if (!t->cpu.sched)
		t->cpu.sched = t->cpu.rob / 2; /* in-order-ish models */
	if (!t->cpu.dispatch)
		t->cpu.dispatch = 4;
	rc = 0;
done:
	free(out);
	work_close(&w);
	return rc;
}

static int host_cpu(dbtp_timing *t, char *name, size_t n, dbtp_err *err)
{
	char *argv[] = {t->mca, "--version", NULL};
	struct work w;
	char *out, *p;
	int status;

	if (work_open(&w, err))
		return -1;
	if (run_tool(argv, NULL, w.out, w.errf, &status, err)) {
		work_close(&w);
		return -1;
	}
	out = read_text(w.out);
	work_close(&w);
	if (out) {
		p = strstr(out, "LLVM version ");
		if (p)
			sscanf(p + 13, "%31s", t->version);
		p = strstr(out, "Host CPU: ");
		if (p && name)
			sscanf(p + 10, "%63s", name);
	}
	free(out);
	if (!t->version[0] || (name && !name[0]))
		return dbtp_err_set(err, EINVAL,
				    "%s --version: no version or host CPU",
				    t->mca);
	(void)n;
	return 0;
}

static int host_arch_of(const char *cpu)
{
	/* LLVM names AArch64 cores cortex-*, neoverse-*, apple-*, ...;
	 * x86 ones anything else. */
	if (!strncmp(cpu, "cortex-", 7) || !strncmp(cpu, "neoverse", 8) ||
	    !strncmp(cpu, "apple-", 6) || !strncmp(cpu, "thunderx", 8) ||
	    !strncmp(cpu, "a64fx", 5) || !strncmp(cpu, "exynos", 6) ||
	    !strncmp(cpu, "falkor", 6) || !strncmp(cpu, "kryo", 4) ||
	    !strncmp(cpu, "tsv110", 6) || !strncmp(cpu, "carmel", 6))
		return DBTP_ARCH_AARCH64;
	return DBTP_ARCH_X86_64;
}

static char *cache_file(const struct dbtp_timing_opts *o, dbtp_timing *t)
{
	const char *dir = o->cache_dir, *env;
	char buf[1024];

	if (!dir && (env = getenv("DBTPROF_CACHE_DIR")) && *env)
		dir = env;
	if (dir)
		snprintf(buf, sizeof(buf), "%s", dir);
	else if ((env = getenv("XDG_CACHE_HOME")) && *env)
		snprintf(buf, sizeof(buf), "%s/dbtprof", env);
	else if ((env = getenv("HOME")) && *env)
		snprintf(buf, sizeof(buf), "%s/.cache/dbtprof", env);
	else
		return NULL;
	{
		size_t l = strlen(buf);

		snprintf(buf + l, sizeof(buf) - l, "/llvm-%s-%s-%s.timing",
			 t->version, t->triple, t->cpu.name);
	}
	return strdup(buf);
}

static int valid_cpu_name(const char *s)
{
	if (!*s || strlen(s) > 60)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

/* Is @name an executable file in a directory of $PATH? */
static int on_path(const char *name)
{
	char *path = dbtp_find_in_path(name);

	free(path);
	return path != NULL;
}

/*
 * The suffix of the LLVM tools into @buf: @want, else $DBTPROF_LLVM, else
 * "-14" when llvm-mca-14 is installed (the version the tests and results
 * use), else the newest llvm-mca-N on PATH, else "" (plain llvm-mca).
 */
static int llvm_suffix(const char *want, char *buf, size_t n, dbtp_err *err)
{
	const char *env = getenv("DBTPROF_LLVM");
	char name[32];
	int v;

	if (!want && env && *env)
		want = env;
	if (want) {
		size_t l = strspn(want, "0123456789");

		if (!l || l > 3 || want[l])
			return dbtp_err_set(err, EINVAL,
					    "'%.40s' is not an LLVM version "
					    "(a number such as 14 or 16)",
					    want);
		snprintf(buf, n, "-%s", want);
		return 0;
	}
	if (on_path("llvm-mca-14")) {
		snprintf(buf, n, "-14");
		return 0;
	}
	for (v = 99; v >= 10; v--) {
		snprintf(name, sizeof(name), "llvm-mca-%d", v);
		if (on_path(name)) {
			snprintf(buf, n, "-%d", v);
			return 0;
		}
	}
	buf[0] = 0;
	return 0;
}

int dbtp_timing_open(dbtp_timing **out, const struct dbtp_timing_opts *o,
		     dbtp_err *err)
{
	dbtp_timing *t;
	const char *cpu = o->cpu ? o->cpu : "native";
	char host[64] = "", sfx[8], mc[24], mca[24];

	*out = NULL;
	if (o->arch != DBTP_ARCH_X86_64 && o->arch != DBTP_ARCH_AARCH64)
		return dbtp_err_set(err, EINVAL,
				    "no CPU models for architecture %s",
				    dbtp_arch_name(o->arch));
	if (!valid_cpu_name(cpu))
		return dbtp_err_set(err, EINVAL, "'%.60s' is not a CPU name",
				    cpu);
	if (llvm_suffix(o->llvm, sfx, sizeof(sfx), err))
		return -1;
	snprintf(mc, sizeof(mc), "llvm-mc%s", sfx);
	snprintf(mca, sizeof(mca), "llvm-mca%s", sfx);
	t = calloc(1, sizeof(*t));
	if (!t)
		return nomem(err);
	t->arch = o->arch;
	t->llvm = 1;
	snprintf(t->triple, sizeof(t->triple), "%s",
		 o->arch == DBTP_ARCH_AARCH64 ? "aarch64-unknown-linux-gnu"
					      : "x86_64-unknown-linux-gnu");
	t->mc = strdup(o->llvm_mc ? o->llvm_mc : mc);
	t->mca = strdup(o->llvm_mca ? o->llvm_mca : mca);
	if (!t->mc || !t->mca) {
		dbtp_timing_free(t);
		return nomem(err);
	}
	if (host_cpu(t, !strcmp(cpu, "native") ? host : NULL, sizeof(host),
		     err)) {
		dbtp_timing_free(t);
		return -1;
	}
	if (!strcmp(cpu, "native")) {
		if ((int)host_arch_of(host) != (int)o->arch) {
			dbtp_err_set(err, EINVAL,
				     "'native' is this host's CPU (%s), not an "
				     "%s CPU; name one with --mcpu",
				     host, dbtp_arch_name(o->arch));
			dbtp_timing_free(t);
			return -1;
		}
		cpu = host;
	}
	snprintf(t->cpu.name, sizeof(t->cpu.name), "%s", cpu);
	if (!o->no_cache)
		t->cache = cache_file(o, t);
	if (t->cache)
		cache_read(t);
	if (!t->cpu.dispatch) {
		if (probe(t, err)) {
			dbtp_timing_free(t);
			return -1;
		}
		t->dirty = 1; /* the machine parameters, for the cache */
	}
	clock_gettime(CLOCK_MONOTONIC, &t->saved);
	*out = t;
	return 0;
}

int dbtp_timing_new(dbtp_timing **out, enum dbtp_arch arch,
		    const struct dbtp_cpu_params *p, dbtp_err *err)
{
	dbtp_timing *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return nomem(err);
	if (!p->dispatch || !p->rob || !p->sched ||
	    p->nres > DBTP_TIMING_MAX_RES) {
		free(t);
		return dbtp_err_set(err, EINVAL,
				    "CPU parameters: dispatch width, ROB and "
				    "scheduler sizes must be positive");
	}
	t->arch = arch;
	t->cpu = *p;
	snprintf(t->version, sizeof(t->version), "none");
	*out = t;
	return 0;
}

int dbtp_timing_resolve(dbtp_timing *t, const uint8_t *const *forms,
			const uint8_t *lens, size_t n, dbtp_err *err)
{
	size_t *idx = NULL, m = 0;
	char **text = NULL, **ok_text = NULL;
	struct region *r = NULL;
	size_t *ok_idx = NULL, nok = 0;
	struct work w;
	int rc = -1, have_work = 0;
	struct dbtp_form_timing def;

	timing_default(t, &def);
	idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!idx)
		return nomem(err);
	/* The distinct forms not in the table yet. */
	for (size_t i = 0; i < n; i++) {
		if (timing_index(t, forms[i], lens[i]) >= 0)
			continue;
		if (!t->llvm) {
			if (put(t, forms[i], lens[i], &def, 0, err))
				goto out;
			continue;
		}
		/* placeholder so duplicates in @forms are dropped */
		if (put(t, forms[i], lens[i], &def, 0, err))
			goto out;
		t->st.defaults--;
		idx[m++] = i;
	}
	if (!m) {
		rc = 0;
		goto out;
	}
	text = calloc(m, sizeof(*text));
	ok_text = calloc(m, sizeof(*ok_text));
	ok_idx = calloc(m, sizeof(*ok_idx));
	r = calloc(m, sizeof(*r));
	if (!text || !ok_text || !ok_idx || !r) {
		nomem(err);
		goto out;
	}
	if (work_open(&w, err))
		goto out;
	have_work = 1;
	if (disassemble(t, &w, forms, lens, idx, m, text, err))
		goto out;
	for (size_t i = 0; i < m; i++)
		if (text[i]) {
			ok_text[nok] = text[i];
			ok_idx[nok++] = i;
		}
	if (time_batch(t, &w, ok_text, nok, r, err))
		goto out;
	for (size_t k = 0; k < nok; k++) {
		size_t i = idx[ok_idx[k]];
		int64_t f = timing_index(t, forms[i], lens[i]);

		if (f < 0 || !r[k].ok)
			continue;
		if (!t->f[f].text)
			t->f[f].text = strdup(ok_text[k]);
		/* LLVM's default for instructions its model has no data on
		 * (MCSchedModel::DefaultHighLatency): left untimed. */
		if (r[k].ft.latency == 100 && r[k].ft.uops <= 1)
			continue;
		t->f[f].ft = r[k].ft;
		t->st.measured++;
	}
	for (size_t k = 0; k < m; k++) {
		size_t i = idx[k];
		int64_t f = timing_index(t, forms[i], lens[i]);

		if (f >= 0 && (t->f[f].ft.flags & DBTP_FORM_DEFAULT))
			t->st.defaults++;
	}
	/* Rewriting the whole file for each batch would be quadratic in a
	 * large program's forms: written by dbtp_timing_flush(), and here
	 * only every CACHE_SAVE_SECONDS, so a run cut short keeps most. */
	t->dirty = 1;
	{
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		rc = now.tv_sec - t->saved.tv_sec >= CACHE_SAVE_SECONDS
			 ? dbtp_timing_flush(t, err)
			 : 0;
	}
out:
	if (have_work)
		work_close(&w);
	if (text)
		for (size_t i = 0; i < m; i++)
			free(text[i]);
	free(text);
	free(ok_text);
	free(ok_idx);
	free(r);
	free(idx);
	return rc;
}

int dbtp_timing_flush(dbtp_timing *t, dbtp_err *err)
{
	if (!t->dirty)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t->saved);
	t->dirty = 0;
	return cache_write(t, err);
}

const char *dbtp_timing_text(const dbtp_timing *t, const uint8_t *bytes,
			     unsigned len)
{
	int64_t i = timing_index(t, bytes, len);

	return i < 0 ? NULL : t->f[i].text;
}

const struct dbtp_cpu_params *dbtp_timing_cpu(const dbtp_timing *t)
{
	return &t->cpu;
}

void dbtp_timing_stats(const dbtp_timing *t, struct dbtp_timing_stats *s)
{
	*s = t->st;
}

unsigned dbtp_timing_mispredict_penalty(const struct dbtp_cpu_params *p,
					int *known)
{
	/* MispredictPenalty of LLVM 14's models, by their resource prefix */
	static const struct {
		const char *prefix;
		unsigned penalty;
	} m[] = {
	    {"SKL", 14}, {"SKX", 14}, {"ICX", 14}, {"Zn3", 13}, {"A57", 14}};

	for (unsigned r = 0; r < p->nres; r++)
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			if (!strncmp(p->res[r], m[i].prefix,
				     strlen(m[i].prefix))) {
				if (known)
					*known = 1;
				return m[i].penalty;
			}
	if (known)
		*known = 0;
	return DBTP_CYCLES_MISPREDICT_PENALTY;
}

const char *dbtp_timing_llvm_version(const dbtp_timing *t)
{
	return t->version;
}

const char *dbtp_timing_cache_path(const dbtp_timing *t)
{
	return t->cache;
}

void dbtp_timing_free(dbtp_timing *t)
{
	if (!t)
		return;
	free(t->mc);
	free(t->mca);
	free(t->cache);
	for (size_t i = 0; i < t->n; i++)
		free(t->f[i].text);
	free(t->f);
	free(t->hash);
	free(t);
}

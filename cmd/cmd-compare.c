/* SPDX-License-Identifier: MIT */
/*
 * cmd-compare.c - dbtprof compare: where two recordings of the same program
 * part ways, and a best-effort guess at why.  The comparison itself is
 * lib/analysis/compare.c; this file presents it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbtp/bbvfile.h"
#include "dbtp/compare.h"
#include "dbtp/symbolize.h"
#include "dbtp/syscalls.h"
#include "dbtp/trace.h"

int cmd_compare(int argc, char **argv);

/* Exit codes, as cmp(1) and diff(1). */
#define CMP_SAME 0
#define CMP_DIFFER 1
#define CMP_ERROR 2

static const char usage_text[] =
    "usage: dbtprof compare [OPTIONS] A B\n"
    "\n"
    "Compare two traces (blocks or mem mode) of the same program, e.g.\n"
    "recorded with different CPU models or environments, thread by thread\n"
    "(threads matched by number).  The executed instruction addresses are\n"
    "compared, so code that QEMU cut into blocks differently compares\n"
    "equal.  Prints the threads' instructions and block executions in A\n"
    "and B, where each thread's streams first part (instruction index,\n"
    "addresses with their functions, the syscalls and common blocks just\n"
    "before), and a best-effort hint at the cause.\n"
    "\n"
    "A and B may also be two basic block vector files (SimPoint .bb, from\n"
    "dbtprof bbv or dbtprof native-count): then the intervals are compared,\n"
    "blocks matched by address through each file's .map when both have\n"
    "one (by id otherwise), and the first interval that differs is shown\n"
    "with the blocks that differ most.\n"
    "\n"
    "Options:\n"
    "      --json         the same as JSON\n"
    "  -C, --context N    syscalls and common blocks shown (default 5)\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit status: 0 identical instruction streams, 1 they differ, 2 error.\n";

static const char *const setup_keys[] = {
    "command",	  "program", "cpu",  "qemu_version",
    "env_digest", "cwd",     "seed", "mode",
};

struct where {
	struct dbtp_sym sym;
	uint64_t file_off;
	int named;
};

static void locate(dbtp_symcache *cache, const dbtp_trace *t, uint32_t block,
		   uint64_t addr, struct where *w)
{
	const struct dbtp_block *b = dbtp_trace_block(t, block);

	w->named = dbtp_symbolize(cache, t, b, addr - b->vaddr, &w->sym);
	w->file_off = b->offset + (addr - b->vaddr);
}

static void where_text(const struct where *w, char *buf, size_t n)
{
	if (w->named)
		snprintf(buf, n, "%s+0x%" PRIx64 " (%s)", w->sym.name,
			 w->sym.delta, dbtp_basename(w->sym.file));
	else if (w->sym.file)
		snprintf(buf, n, "%s+0x%" PRIx64, dbtp_basename(w->sym.file),
			 w->file_off);
	else
		snprintf(buf, n, "(anonymous)");
}

static void where_json(struct json *j, const struct where *w)
{
	json_str(j, "function", w->named ? w->sym.name : NULL);
	if (w->named)
		json_u64(j, "function_offset", w->sym.delta);
	else
		json_null(j, "function_offset");
	json_str(j, "file", w->sym.file);
	json_hex(j, "file_offset", w->file_off);
}

static const char *signed_delta(uint64_t a, uint64_t b, char *buf)
{
	char n[32];

	if (a == b)
		return strcpy(buf, "0");
	sprintf(buf, "%c%s", b > a ? '+' : '-',
		fmt_u64(b > a ? b - a : a - b, n));
	return buf;
}

static int64_t delta_i64(uint64_t a, uint64_t b)
{
	return b >= a ? (int64_t)(b - a) : -(int64_t)(a - b);
}

static void ret_text(int64_t v, char *buf, size_t n)
{
	if (v >= -4096 && v < (int64_t)1 << 32)
		snprintf(buf, n, "%" PRId64, v);
	else
		snprintf(buf, n, "0x%" PRIx64, (uint64_t)v);
}

static void print_syscall(enum dbtp_arch arch, const struct dbtp_cmp_syscall *s)
{
	const char *name = dbtp_syscall_name(arch, s->sysno);
	char r[32];
	char n[32];

	printf("      #%-5" PRIu64 " at insn %-12s %" PRId64 " %s(", s->index,
	       fmt_u64(s->insn, n), s->sysno, name ? name : "?");
	for (int i = 0; i < 6; i++)
		printf("%s0x%" PRIx64, i ? ", " : "", s->args[i]);
	if (s->returned) {
		ret_text(s->ret, r, sizeof(r));
		printf(") = %s\n", r);
	} else {
		printf(")\n");
	}
}

static int same_syscalls(const struct dbtp_cmp_point *a,
			 const struct dbtp_cmp_point *b)
{
	if (a->nsys != b->nsys || a->sys_before != b->sys_before)
		return 0;
	for (unsigned i = 0; i < a->nsys; i++) {
		const struct dbtp_cmp_syscall *x = &a->sys[i], *y = &b->sys[i];

		if (x->sysno != y->sysno || x->returned != y->returned ||
		    (x->returned && x->ret != y->ret) ||
		    memcmp(x->args, y->args, sizeof(x->args)))
			return 0;
	}
	return 1;
}

static void print_divergence(const struct dbtp_cmp *c,
			     const struct dbtp_cmp_thread *th,
			     dbtp_symcache *cache, unsigned context)
{
	enum dbtp_arch arch = dbtp_trace_info(c->t[0])->arch;
	unsigned first;
	char n1[32], n2[32], n3[32], text[400];

	printf("\nthread %u: the streams part at instruction %s", th->num,
	       fmt_u64(th->insn, n1));
	if (!th->at[0].ended && !th->at[1].ended)
		printf(" (block %s in A, %s in B)",
		       fmt_u64(th->at[0].block_index, n2),
		       fmt_u64(th->at[1].block_index, n3));
	printf("\n");
	for (int s = 0; s < 2; s++) {
		const struct dbtp_cmp_point *pt = &th->at[s];
		struct where w;

		if (pt->ended && !th->present[s]) {
			printf("  %c  (no thread %u in %c)\n", "AB"[s],
			       th -> num, "AB"[s]);
			continue;
		}
		if (pt->ended) {
			printf("  %c  (the thread's stream ends here%s)\n",
			       "AB"[s],
			       dbtp_trace_info(c->t[s])
				   -> has_end ? ""
					      : "; the trace was cut short");
			continue;
		}
		locate(cache, c->t[s], pt->block, pt->addr, &w);
		where_text(&w, text, sizeof(text));
		printf("  %c  0x%-14" PRIx64 " %-44s insn %u of the %u-insn "
		       "block at 0x%" PRIx64 "\n",
		       "AB"[s], pt -> addr, text, pt -> insn_in_block,
		       dbtp_trace_block(c->t[s], pt->block) -> ninsns,
		       dbtp_trace_block(c->t[s], pt->block) -> vaddr);
	}
	if (th->ncommon && context) {
		first = th->ncommon > context ? th->ncommon - context : 0;
		printf("  last common blocks:\n");
		for (unsigned i = first; i < th->ncommon; i++) {
			const struct dbtp_cmp_common *e = &th->common[i];
			const struct dbtp_block *b =
			    dbtp_trace_block(c->t[0], e->block);
			struct where w;

			locate(cache, c->t[0], e->block, b->vaddr, &w);
			where_text(&w, text, sizeof(text));
			printf("      at insn %-12s 0x%-14" PRIx64
			       " %2u insns  %s\n",
			       fmt_u64(e->insn, n1), b->vaddr, e->ninsns, text);
		}
	}
	if (!context)
		return;
	if (same_syscalls(&th->at[0], &th->at[1])) {
		if (!th->at[0].nsys) {
			printf("  no syscalls before it\n");
			return;
		}
		printf("  last syscalls before it, the same in A and B "
		       "(%s made):\n",
		       fmt_u64(th->at[0].sys_before, n1));
		for (unsigned i = 0; i < th->at[0].nsys; i++)
			print_syscall(arch, &th->at[0].sys[i]);
		return;
	}
	for (int s = 0; s < 2; s++) {
		const struct dbtp_cmp_point *pt = &th->at[s];

		printf("  last syscalls before it in %c (%s made):%s\n",
		       "AB"[s], fmt_u64(pt->sys_before, n1),
		       pt -> nsys ? "" : " none");
		for (unsigned i = 0; i < pt->nsys; i++)
			print_syscall(arch, &pt->sys[i]);
	}
}

static void json_point(struct json *j, const struct dbtp_cmp *c, int s,
		       const struct dbtp_cmp_point *pt, dbtp_symcache *cache,
		       unsigned context)
{
	enum dbtp_arch arch = dbtp_trace_info(c->t[0])->arch;

	json_obj(j, s ? "b" : "a");
	json_bool(j, "ended", pt->ended);
	if (!pt->ended) {
		const struct dbtp_block *b =
		    dbtp_trace_block(c->t[s], pt->block);
		struct where w;

		locate(cache, c->t[s], pt->block, pt->addr, &w);
		json_hex(j, "address", pt->addr);
		json_u64(j, "block_index", pt->block_index);
		json_hex(j, "block_address", b->vaddr);
		json_u64(j, "block_instructions", b->ninsns);
		json_u64(j, "instruction_in_block", pt->insn_in_block);
		where_json(j, &w);
	}
	json_u64(j, "syscalls_before", pt->sys_before);
	json_arr(j, "syscalls");
	for (unsigned i = pt->nsys > context ? pt->nsys - context : 0;
	     i < pt->nsys; i++) {
		const struct dbtp_cmp_syscall *sc = &pt->sys[i];

		json_obj(j, NULL);
		json_u64(j, "index", sc->index);
		json_u64(j, "at_instruction", sc->insn);
		json_i64(j, "number", sc->sysno);
		json_str(j, "name", dbtp_syscall_name(arch, sc->sysno));
		json_arr(j, "args");
		for (int k = 0; k < 6; k++)
			json_hex(j, NULL, sc->args[k]);
		json_close_arr(j);
		if (sc->returned)
			json_i64(j, "return", sc->ret);
		else
			json_null(j, "return");
		json_close_obj(j);
	}
	json_close_arr(j);
	json_close_obj(j);
}

static void print_json(const struct dbtp_cmp *c, const char *const path[2],
		       dbtp_symcache *cache, const struct dbtp_cmp_hint *h,
		       unsigned nh, int same_blocks, unsigned context)
{
	struct json j;
	uint64_t tot[2][2] = {{0}};

	json_begin(&j, stdout);
	json_str(&j, "a", path[0]);
	json_str(&j, "b", path[1]);
	json_bool(&j, "identical", !c->diverged);
	json_bool(&j, "same_blocks", same_blocks);
	json_u64(&j, "passes", c->passes);
	json_arr(&j, "setup_differences");
	for (size_t i = 0; i < sizeof(setup_keys) / sizeof(*setup_keys); i++) {
		const char *a = dbtp_trace_get(c->t[0], setup_keys[i]);
		const char *b = dbtp_trace_get(c->t[1], setup_keys[i]);

		if ((!a && !b) || (a && b && !strcmp(a, b)))
			continue;
		json_obj(&j, NULL);
		json_str(&j, "key", setup_keys[i]);
		json_str(&j, "a", a);
		json_str(&j, "b", b);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_arr(&j, "threads");
	for (uint32_t i = 0; i < c->nthreads; i++) {
		const struct dbtp_cmp_thread *th = &c->threads[i];

		json_obj(&j, NULL);
		json_u64(&j, "thread", th->num);
		for (int s = 0; s < 2; s++) {
			json_obj(&j, s ? "b" : "a");
			json_bool(&j, "present", th->present[s]);
			json_u64(&j, "instructions", th->insns[s]);
			json_u64(&j, "block_executions", th->blocks[s]);
			json_u64(&j, "syscalls", th->syscalls[s]);
			json_close_obj(&j);
			tot[s][0] += th->insns[s];
			tot[s][1] += th->blocks[s];
		}
		json_i64(&j, "instructions_delta",
			 delta_i64(th->insns[0], th->insns[1]));
		json_i64(&j, "block_executions_delta",
			 delta_i64(th->blocks[0], th->blocks[1]));
		json_bool(&j, "identical", !th->diverged);
		if (!th->diverged) {
			json_null(&j, "divergence");
			json_close_obj(&j);
			continue;
		}
		json_obj(&j, "divergence");
		json_u64(&j, "instruction", th->insn);
		json_point(&j, c, 0, &th->at[0], cache, context);
		json_point(&j, c, 1, &th->at[1], cache, context);
		json_arr(&j, "common_blocks");
		for (unsigned k = th->ncommon > context ? th->ncommon - context
							: 0;
		     k < th->ncommon; k++) {
			const struct dbtp_cmp_common *e = &th->common[k];
			const struct dbtp_block *b =
			    dbtp_trace_block(c->t[0], e->block);
			struct where w;

			locate(cache, c->t[0], e->block, b->vaddr, &w);
			json_obj(&j, NULL);
			json_u64(&j, "at_instruction", e->insn);
			json_hex(&j, "address", b->vaddr);
			json_u64(&j, "instructions", e->ninsns);
			where_json(&j, &w);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_close_obj(&j);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_obj(&j, "total");
	json_u64(&j, "a_instructions", tot[0][0]);
	json_u64(&j, "b_instructions", tot[1][0]);
	json_i64(&j, "instructions_delta", delta_i64(tot[0][0], tot[1][0]));
	json_u64(&j, "a_block_executions", tot[0][1]);
	json_u64(&j, "b_block_executions", tot[1][1]);
	json_i64(&j, "block_executions_delta", delta_i64(tot[0][1], tot[1][1]));
	json_close_obj(&j);
	json_arr(&j, "hints");
	for (unsigned i = 0; i < nh; i++) {
		json_obj(&j, NULL);
		json_str(&j, "cause", h[i].cause);
		json_str(&j, "confidence", h[i].likely ? "likely" : "possibly");
		json_str(&j, "text", h[i].text);
		json_close_obj(&j);
	}
	json_close_arr(&j);
	json_end(&j);
}

static void print_text(const struct dbtp_cmp *c, const char *const path[2],
		       dbtp_symcache *cache, const struct dbtp_cmp_hint *h,
		       unsigned nh, int same_blocks, unsigned context)
{
	uint64_t tot[2][2] = {{0}};
	char n1[32], n2[32], n3[32], n4[32], n5[32], n6[32];
	int setup = 0;

	for (int s = 0; s < 2; s++) {
		const char *cmd = dbtp_trace_get(c->t[s], "command");
		const char *cpu = dbtp_trace_get(c->t[s], "cpu");

		printf("%c  %s: %s (%s%s%s)%s\n", "AB"[s], path[s],
		       cmd ? cmd : "?",
		       dbtp_arch_name(dbtp_trace_info(c->t[s])->arch),
		       cpu ? ", -cpu " : "", cpu ? cpu : "",
		       dbtp_trace_info(c->t[s])->has_end
			   ? ""
			   : "  [cut short: no END record]");
	}
	for (size_t i = 0; i < sizeof(setup_keys) / sizeof(*setup_keys); i++) {
		const char *a = dbtp_trace_get(c->t[0], setup_keys[i]);
		const char *b = dbtp_trace_get(c->t[1], setup_keys[i]);

		if ((!a && !b) || (a && b && !strcmp(a, b)))
			continue;
		if (!setup++)
			printf("recorded differently:\n");
		printf("  %-13s A: %s\n  %-13s B: %s\n", setup_keys[i],
		       a ? a : "(not recorded)", "", b ? b : "(not recorded)");
	}
	printf("\n%-7s %16s %16s %14s %14s %14s %12s\n", "thread",
	       "instructions A", "instructions B", "delta", "blocks A",
	       "blocks B", "delta");
	for (uint32_t i = 0; i < c->nthreads; i++) {
		const struct dbtp_cmp_thread *th = &c->threads[i];

		printf("%-7u %16s %16s %14s %14s %14s %12s\n", th->num,
		       th->present[0] ? fmt_u64(th->insns[0], n1) : "-",
		       th->present[1] ? fmt_u64(th->insns[1], n2) : "-",
		       signed_delta(th->insns[0], th->insns[1], n3),
		       th->present[0] ? fmt_u64(th->blocks[0], n4) : "-",
		       th->present[1] ? fmt_u64(th->blocks[1], n5) : "-",
		       signed_delta(th->blocks[0], th->blocks[1], n6));
		for (int s = 0; s < 2; s++) {
			tot[s][0] += th->insns[s];
			tot[s][1] += th->blocks[s];
		}
	}
	if (c->nthreads > 1)
		printf("%-7s %16s %16s %14s %14s %14s %12s\n", "total",
		       fmt_u64(tot[0][0], n1), fmt_u64(tot[1][0], n2),
		       signed_delta(tot[0][0], tot[1][0], n3),
		       fmt_u64(tot[0][1], n4), fmt_u64(tot[1][1], n5),
		       signed_delta(tot[0][1], tot[1][1], n6));
	if (!c->diverged) {
		printf("\n%s\n", same_blocks
				     ? "identical block streams"
				     : "identical instruction streams (QEMU "
				       "cut them into blocks differently)");
		return;
	}
	for (uint32_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].diverged)
			print_divergence(c, &c->threads[i], cache, context);
	if (!nh) {
		printf("\nhint: none (no rule of the best-effort hints "
		       "matched)\n");
		return;
	}
	printf("\nhint (best effort, from simple rules; not proof), for "
	       "thread %u:\n",
	       dbtp_compare_first(c)->num);
	for (unsigned i = 0; i < nh; i++)
		printf("  %s: %s\n", h[i].likely ? "likely" : "possibly",
		       h[i].text);
}

/* --- basic block vector files ------------------------------------------ */

struct kc {
	uint64_t key, count;
};

static int kc_cmp(const void *a, const void *b)
{
	const struct kc *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Mapped files named by the .map files of both sides, for keys. */
struct files {
	char **name;
	uint32_t n;
};

#define ANON_KEY (1ull << 63) /* | address: a block in no file */
#define FILE_SHIFT 40	      /* file index + 1 above a 40-bit offset */

static uint64_t file_key(struct files *fs, const char *name, uint64_t off)
{
	uint32_t i = 0;
	char **nn;

	while (i < fs->n && strcmp(fs->name[i], name))
		i++;
	if (i == fs->n) {
		nn = realloc(fs->name, (fs->n + 1) * sizeof(*nn));
		if (!nn)
			return 0;
		fs->name = nn;
		if (!(fs->name[fs->n] = strdup(name)))
			return 0;
		fs->n++;
	}
	if (off >> FILE_SHIFT || i + 1 >= 1u << 22)
		return 0;
	return (uint64_t)(i + 1) << FILE_SHIFT | off;
}

/*
 * From PATH.map ("id address instructions function file offset" lines, or
 * "id address"): id -> address in *@addr, and id -> a key naming the block
 * by mapped file and offset in *@fkey (ANON_KEY | address outside files),
 * NULL unless every line has them.  Both NULL if there is no usable map.
 */
static void read_map(const char *path, uint32_t max_id, struct files *fs,
		     uint64_t **addr, uint64_t **fkey)
{
	char mp[4096], line[2048], file[2048], offs[64];
	FILE *f;

	*addr = *fkey = NULL;
	snprintf(mp, sizeof(mp), "%s.map", path);
	f = fopen(mp, "r");
	if (!f)
		return;
	*addr = calloc((size_t)max_id + 1, sizeof(**addr));
	*fkey = calloc((size_t)max_id + 1, sizeof(**fkey));
	while (*addr && fgets(line, sizeof(line), f)) {
		unsigned long long id, a, off;

		if (sscanf(line, "%llu %llx", &id, &a) != 2 || id < 1 ||
		    id > max_id)
			continue;
		(*addr)[id] = a;
		if (*fkey && sscanf(line, "%*u %*s %*s %*s %2047s %63s", file,
				    offs) == 2) {
			if (!strcmp(file, "-"))
				(*fkey)[id] = ANON_KEY | a;
			else if (sscanf(offs, "%llx", &off) == 1)
				(*fkey)[id] = file_key(fs, file, off);
		}
	}
	fclose(f);
	for (uint32_t id = 1; *addr && id <= max_id; id++) {
		if (!(*addr)[id]) { /* incomplete map: compare by id */
			free(*addr);
			*addr = NULL;
		}
		if (*fkey && !(*fkey)[id]) {
			free(*fkey);
			*fkey = NULL;
		}
	}
	if (!*addr) {
		free(*fkey);
		*fkey = NULL;
	}
}

/* Print a block key as the mode that made it. */
static void key_text(const struct files *fs, int by, uint64_t key, char *buf,
		     size_t n)
{
	if (by == 2 && key & ANON_KEY)
		snprintf(buf, n, "0x%" PRIx64, (uint64_t)(key & ~ANON_KEY));
	else if (by == 2)
		snprintf(buf, n, "%s+0x%" PRIx64,
			 dbtp_basename(fs->name[(key >> FILE_SHIFT) - 1]),
			 (uint64_t)(key & ((1ull << FILE_SHIFT) - 1)));
	else if (by == 1)
		snprintf(buf, n, "0x%" PRIx64, key);
	else
		snprintf(buf, n, "id %" PRIu64, key);
}

/* Interval @i of @v as (key, count) sorted by key, merged per key. */
static size_t interval_kc(const struct dbtp_bbv *v, const uint64_t *map,
			  size_t i, struct kc *out)
{
	size_t n = 0;

	for (size_t e = v->start[i]; e < v->start[i + 1]; e++) {
		out[n].key = map ? map[v->ids[e]] : v->ids[e];
		out[n++].count = v->counts[e];
	}
	qsort(out, n, sizeof(*out), kc_cmp);
	for (size_t r = 0, w = 0; r < n; r++) {
		if (w && out[w - 1].key == out[r].key) {
			out[w - 1].count += out[r].count;
			continue;
		}
		out[w++] = out[r];
		if (r + 1 == n)
			n = w;
	}
	return n;
}

struct kdiff {
	uint64_t key, a, b;
};

static int kdiff_cmp(const void *x, const void *y)
{
	const struct kdiff *p = x, *q = y;
	uint64_t dp = p->a > p->b ? p->a - p->b : p->b - p->a;
	uint64_t dq = q->a > q->b ? q->a - q->b : q->b - q->a;

	if (dp != dq)
		return dp < dq ? 1 : -1;
	return p->key < q->key ? -1 : p->key > q->key;
}

static uint64_t bbv_total(const struct dbtp_bbv *v)
{
	uint64_t t = 0;

	for (size_t e = 0; v->n && e < v->start[v->n]; e++)
		t += v->counts[e];
	return t;
}

static int compare_bbv(const char *pa, const char *pb, int json)
{
	static const char *const by_name[] = {"id", "address", "file offset"};
	struct dbtp_bbv v[2];
	uint64_t *map[2] = {NULL, NULL}, *fmap[2] = {NULL, NULL};
	struct files fs = {0};
	char kt[2][2048];
	struct kc *ka = NULL, *kb = NULL;
	struct kdiff *d = NULL;
	size_t nd = 0, first = SIZE_MAX, width = 1;
	uint64_t ia = 0, ib = 0;
	dbtp_err err = {0};
	int rc = CMP_ERROR, by;

	memset(v, 0, sizeof(v));
	if (dbtp_bbv_read(pa, &v[0], &err) || dbtp_bbv_read(pb, &v[1], &err)) {
		error("compare: %s", err.msg);
		goto out;
	}
	read_map(pa, v[0].max_id, &fs, &map[0], &fmap[0]);
	read_map(pb, v[1].max_id, &fs, &map[1], &fmap[1]);
	/* Same code at other addresses (native vs QEMU) still matches by
	 * file and offset; else by address; else by id. */
	by = fmap[0] && fmap[1] ? 2 : map[0] && map[1] ? 1 : 0;
	for (int k = 0; k < 2; k++) {
		uint64_t *keep = by == 2 ? fmap[k] : by == 1 ? map[k] : NULL;

		if (keep != map[k])
			free(map[k]);
		if (keep != fmap[k])
			free(fmap[k]);
		map[k] = keep;
		fmap[k] = NULL;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < v[k].n; i++)
			if (v[k].start[i + 1] - v[k].start[i] > width)
				width = v[k].start[i + 1] - v[k].start[i];
	ka = malloc(width * sizeof(*ka));
	kb = malloc(width * sizeof(*kb));
	d = malloc(2 * width * sizeof(*d));
	if (!ka || !kb || !d) {
		error("compare: out of memory");
		goto out;
	}
	for (size_t i = 0; i < v[0].n && i < v[1].n && first == SIZE_MAX; i++) {
		size_t na = interval_kc(&v[0], map[0], i, ka);
		size_t nb = interval_kc(&v[1], map[1], i, kb);
		size_t x = 0, y = 0;

		nd = 0;
		while (x < na || y < nb) {
			struct kdiff e = {0};

			if (y >= nb || (x < na && ka[x].key < kb[y].key)) {
				e.key = ka[x].key;
				e.a = ka[x++].count;
			} else if (x >= na || kb[y].key < ka[x].key) {
				e.key = kb[y].key;
				e.b = kb[y++].count;
			} else {
				e.key = ka[x].key;
				e.a = ka[x++].count;
				e.b = kb[y++].count;
			}
			if (e.a != e.b)
				d[nd++] = e;
		}
		if (nd) {
			first = i;
			for (size_t q = 0; q < na; q++)
				ia += ka[q].count;
			for (size_t q = 0; q < nb; q++)
				ib += kb[q].count;
			qsort(d, nd, sizeof(*d), kdiff_cmp);
		}
	}
	if (first == SIZE_MAX && v[0].n != v[1].n)
		first = v[0].n < v[1].n ? v[0].n : v[1].n;
	if (json) {
		struct json j;

		json_begin(&j, stdout);
		json_str(&j, "a", pa);
		json_str(&j, "b", pb);
		json_str(&j, "kind", "bbv");
		json_str(&j, "matched_by", by_name[by]);
		json_u64(&j, "intervals_a", v[0].n);
		json_u64(&j, "intervals_b", v[1].n);
		json_u64(&j, "instructions_a", bbv_total(&v[0]));
		json_u64(&j, "instructions_b", bbv_total(&v[1]));
		json_bool(&j, "identical", first == SIZE_MAX);
		if (first != SIZE_MAX) {
			json_u64(&j, "first_different_interval", first);
			json_arr(&j, "differences");
			for (size_t q = 0; q < nd && q < 10; q++) {
				json_obj(&j, NULL);
				key_text(&fs, by, d[q].key, kt[0],
					 sizeof(kt[0]));
				if (by == 2)
					json_str(&j, "block", kt[0]);
				else if (by == 1)
					json_hex(&j, "address", d[q].key);
				else
					json_u64(&j, "id", d[q].key);
				json_u64(&j, "a", d[q].a);
				json_u64(&j, "b", d[q].b);
				json_close_obj(&j);
			}
			json_close_arr(&j);
		}
		json_end(&j);
	} else {
		char n1[32], n2[32];

		printf("A %s: %zu intervals, %s instructions\n", pa, v[0].n,
		       fmt_u64(bbv_total(&v[0]), n1));
		printf("B %s: %zu intervals, %s instructions (%+" PRId64 ")\n",
		       pb, v[1].n, fmt_u64(bbv_total(&v[1]), n2),
		       (int64_t)(bbv_total(&v[1]) - bbv_total(&v[0])));
		printf("blocks matched by %s\n",
		       by == 2	 ? "file and offset (.map files)"
		       : by == 1 ? "address (.map files)"
				 : "id (no .map files)");
		if (first == SIZE_MAX) {
			printf("identical vectors\n");
		} else if (!nd) {
			printf("the first %zu intervals agree; one file has "
			       "more\n",
			       first);
		} else {
			printf("first difference in interval %zu (%s vs %s "
			       "instructions):\n",
			       first, fmt_u64(ia, n1), fmt_u64(ib, n2));
			for (size_t q = 0; q < nd && q < 10; q++) {
				key_text(&fs, by, d[q].key, kt[1],
					 sizeof(kt[1]));
				printf("  %-16s", kt[1]);
				printf(" A %12" PRIu64 "  B %12" PRIu64 "\n",
				       d[q].a, d[q].b);
			}
		}
	}
	rc = first == SIZE_MAX ? CMP_SAME : CMP_DIFFER;
out:
	free(ka);
	free(kb);
	free(d);
	free(map[0]);
	free(map[1]);
	for (uint32_t k = 0; k < fs.n; k++)
		free(fs.name[k]);
	free(fs.name);
	dbtp_bbv_free(&v[0]);
	dbtp_bbv_free(&v[1]);
	return rc;
}

/* A trace starts with the format's magic; anything else is taken for a
 * .bb file. */
static int is_trace(const char *path)
{
	char m[8] = {0};
	FILE *f = fopen(path, "rb");
	int r;

	if (!f)
		return 1; /* let the trace reader report it */
	r = fread(m, 1, sizeof(m), f) == sizeof(m) &&
	    !memcmp(m, "DBTPTRC\n", 8);
	fclose(f);
	return r;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"context", required_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct dbtp_cmp_opts o = {0};
	struct dbtp_cmp_hint h[DBTP_CMP_MAX_HINTS];
	struct dbtp_cmp *c;
	dbtp_symcache *cache;
	dbtp_err err = {0};
	const char *path[2];
	int ch, json = 0, same_blocks = 1;
	long context = 5;
	unsigned nh;
	char *end;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'C':
			context = strtol(optarg, &end, 10);
			if (*end || !*optarg || context < 0 || context > 10000)
				return usage_error("compare",
						   "--context wants a count "
						   "up to 10000, not '%s'",
						   optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CMP_SAME;
		default:
			return usage_error("compare", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 2 != argc)
		return usage_error("compare", "give two trace files, A and B");
	path[0] = argv[optind];
	path[1] = argv[optind + 1];
	if (!is_trace(path[0]) && !is_trace(path[1]))
		return compare_bbv(path[0], path[1], json);
	/* The library keeps at least one of each, for the hints. */
	o.context = context ? (unsigned)context : 1;
	if (dbtp_compare(&c, path[0], path[1], &o, &err)) {
		error("compare: %s", err.msg);
		return CMP_ERROR;
	}
	cache = dbtp_symcache_new();
	if (!cache) {
		dbtp_compare_free(c);
		error("compare: out of memory");
		return CMP_ERROR;
	}
	for (uint32_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].blocks[0] != c->threads[i].blocks[1])
			same_blocks = 0;
	nh = dbtp_compare_hints(c, cache, h);
	if (json)
		print_json(c, path, cache, h, nh, same_blocks,
			   (unsigned)context);
	else
		print_text(c, path, cache, h, nh, same_blocks,
			   (unsigned)context);
	ch = c->diverged ? CMP_DIFFER : CMP_SAME;
	dbtp_symcache_free(cache);
	dbtp_compare_free(c);
	if (fflush(stdout) || ferror(stdout)) {
		error("compare: cannot write the output");
		return CMP_ERROR;
	}
	return ch;
}

/* SPDX-License-Identifier: MIT */
/*
 * cycles-loops.c - the hot blocks of a trace run as loops through the
 * cycle model, for the comparison with llvm-mca in bench/cycles.sh.
 *
 *   cycles-loops TRACE CPU K ITERATIONS OUTDIR
 *
 * Takes the K most executed blocks (by instructions executed) whose forms
 * LLVM all has text for, writes each as OUTDIR/block-ID.s (llvm-mca input:
 * LLVM's text of each instruction), feeds the block ITERATIONS times in a
 * row through the model (no memory ordering, as llvm-mca) and prints
 * "ID ADDRESS NINSNS CYCLES CYCLES_COMPAT" per block: the model's total
 * cycles for the ITERATIONS executions, by default and with
 * --llvm-mca-compat's conventions.  Built and run by bench/cycles.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/cycles.h"
#include "dbtp/trace.h"

struct hot {
	uint32_t id;
	uint64_t insns;
};

static int by_insns(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

static uint64_t loop_cycles(dbtp_timing *tm, enum dbtp_arch arch,
			    const struct dbtp_block *b, int iters, int compat)
{
	struct dbtp_cycles_opts o = {.alias = DBTP_ALIAS_NONE,
				     .mca_compat = compat};
	struct dbtp_cycles_counts tot;
	struct dbtp_event ev = {0};
	dbtp_cycles *c = NULL;
	dbtp_err err = {0};

	if (dbtp_cycles_new(&c, tm, arch, &o, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	ev.type = DBTP_EV_BLOCK;
	ev.block = b;
	for (int i = 0; i < iters; i++)
		if (dbtp_cycles_event(c, NULL, &ev, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
	dbtp_cycles_finish(c, &err);
	dbtp_cycles_total(c, &tot);
	dbtp_cycles_free(c);
	return tot.cycles;
}

int main(int argc, char **argv)
{
	struct dbtp_timing_opts to = {0};
	struct dbtp_event ev;
	dbtp_timing *tm = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	uint64_t *execs = NULL;
	struct hot *hot;
	uint32_t nb, n = 0, k, shown = 0;
	int iters, r;

	if (argc != 6) {
		fprintf(stderr, "usage: cycles-loops TRACE CPU K ITERATIONS "
				"OUTDIR\n");
		return 2;
	}
	k = (uint32_t)atoi(argv[3]);
	iters = atoi(argv[4]);
	if (dbtp_trace_open(&t, argv[1], &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		if (ev.type != DBTP_EV_BLOCK)
			continue;
		nb = dbtp_trace_nblocks(t);
		execs = realloc(execs, nb * sizeof(*execs));
		if (!execs)
			return 1;
		for (uint32_t i = n; i < nb; i++)
			execs[i] = 0;
		n = nb;
		execs[ev.block->id]++;
	}
	if (r < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	hot = calloc(n ? n : 1, sizeof(*hot));
	for (uint32_t i = 0; i < n; i++) {
		hot[i].id = i;
		hot[i].insns = execs[i] * dbtp_trace_block(t, i)->ninsns;
	}
	qsort(hot, n, sizeof(*hot), by_insns);
	to.cpu = argv[2];
	to.arch = dbtp_trace_info(t)->arch;
	if (dbtp_timing_open(&tm, &to, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	for (uint32_t h = 0; h < n && shown < k; h++) {
		const struct dbtp_block *b = dbtp_trace_block(t, hot[h].id);
		const uint8_t *forms[1024];
		uint8_t lens[1024];
		char path[512];
		uint32_t off = 0, i;
		FILE *f;

		if (b->ninsns > 1024 || !hot[h].insns)
			continue;
		for (i = 0; i < b->ninsns; i++) {
			forms[i] = b->bytes + off;
			lens[i] = b->sizes[i];
			off += b->sizes[i];
		}
		if (dbtp_timing_resolve(tm, forms, lens, b->ninsns, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		for (i = 0; i < b->ninsns; i++)
			if (!dbtp_timing_text(tm, forms[i], lens[i]))
				break;
		if (i < b->ninsns)
			continue; /* LLVM cannot take all of it */
		snprintf(path, sizeof(path), "%s/block-%u.s", argv[5], b->id);
		f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 1;
		}
		for (i = 0; i < b->ninsns; i++)
			fprintf(f, "%s\n",
				dbtp_timing_text(tm, forms[i], lens[i]));
		fclose(f);
		printf(
		    "%u 0x%llx %u %llu %llu\n", b->id,
		    (unsigned long long)b->vaddr, b->ninsns,
		    (unsigned long long)loop_cycles(tm, to.arch, b, iters, 0),
		    (unsigned long long)loop_cycles(tm, to.arch, b, iters, 1));
		shown++;
	}
	free(hot);
	free(execs);
	dbtp_timing_free(tm);
	dbtp_trace_close(t);
	return 0;
}

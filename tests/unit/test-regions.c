/* SPDX-License-Identifier: MIT */
/*
 * test-regions.c - the region formation simulator on hand-made block
 * streams, every metric of every technique worked out by hand (the
 * derivations are in the comments; "iteration i" counts from 1).
 *
 * Code is x86-64: 90 = nop, 75 00 = jnz (conditional), eb 00 = jmp,
 * e8 .. = call, c3 = ret.  Only the kind of a block's last instruction and
 * the block addresses matter to the simulator (branch targets are taken
 * from the stream), so the displacements are left 0.
 *
 * Counters: wherever the stream's last block X is reached by leaving a
 * region, X is an exit target and gets a counter too (for trace trees, the
 * counter of that exit); the counts below include it.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "dbtp/regions.h"
#include "dbtp/trace.h"
#include "t.h"

struct tb {
	char name;
	uint64_t addr;
	const char *insns[8]; /* hex, one instruction each */
};

static char tmpl[] = "/tmp/dbtp-regions-XXXXXX";

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* Write a blocks-mode trace of thread 0 executing @seq (block names). */
static void write_trace(const char *path, const struct tb *tbs, int ntb,
			const char *seq)
{
	dbtp_writer *w;
	dbtp_err err;
	uint32_t ids[64];

	if (dbtp_writer_open(&w, path, DBTP_ARCH_X86_64, DBTP_MODE_BLOCKS, 0,
			     &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	for (int i = 0; i < ntb; i++) {
		uint8_t sizes[8], bytes[64];
		uint32_t n = 0, nb = 0;

		for (; tbs[i].insns[n]; n++) {
			const char *h = tbs[i].insns[n];

			sizes[n] = (uint8_t)(strlen(h) / 2);
			for (size_t k = 0; h[k]; k += 2)
				bytes[nb++] = (uint8_t)(hexval(h[k]) << 4 |
							hexval(h[k + 1]));
		}
		if (dbtp_writer_block(w, tbs[i].addr, n, sizes, bytes, 0,
				      tbs[i].addr, &ids[i], &err)) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
	}
	for (const char *p = seq; *p; p++) {
		int i = 0;

		while (i < ntb && tbs[i].name != *p)
			i++;
		if (i == ntb || dbtp_writer_exec(w, 0, ids[i], &err)) {
			fprintf(stderr, "bad stream at '%c'\n", *p);
			exit(1);
		}
	}
	if (dbtp_writer_thread_exit(w, 0, &err) ||
	    dbtp_writer_close(w, 0, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

/* Run every technique over @path: two passes as `dbtprof regions` does. */
static dbtp_regions *simulate(const char *path, uint32_t threshold,
			      const struct dbtp_regions_opts *extra)
{
	struct dbtp_regions_opts o = {0};
	struct dbtp_event ev;
	dbtp_regions *r = NULL;
	dbtp_trace *t, *t2;
	dbtp_err err;
	int rc;

	if (extra)
		o = *extra;
	else
		o.techniques = (1u << DBTP_TECH_COUNT) - 1;
	dbtp_region_params_default(&o.params);
	for (int i = 0; i < DBTP_TECH_COUNT && threshold; i++)
		o.params.threshold[i] = threshold;
	if (extra && extra->params.max_insns)
		o.params = extra->params;
	if (dbtp_trace_open(&t, path, &err))
		goto fail;
	dbtp_trace_skip_events(t);
	while ((rc = dbtp_trace_next(t, &ev, &err)) > 0)
		;
	if (rc < 0 || dbtp_regions_new(&r, t, &o, &err) ||
	    dbtp_trace_open(&t2, path, &err))
		goto fail;
	while ((rc = dbtp_trace_next(t2, &ev, &err)) > 0)
		if (ev.type == DBTP_EV_BLOCK &&
		    dbtp_regions_block(r, ev.thread, ev.block->id, &err))
			goto fail;
	if (rc < 0 || dbtp_regions_finish(r, &err))
		goto fail;
	dbtp_trace_close(t);
	dbtp_trace_close(t2);
	return r;
fail:
	fprintf(stderr, "%s\n", err.msg);
	exit(1);
}

static const struct dbtp_region_metrics *find(const dbtp_regions *r,
					      enum dbtp_technique tech, int seg)
{
	for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++) {
		const struct dbtp_region_metrics *m =
		    dbtp_regions_metrics(r, s);

		if (m->technique == tech && m->segmented == seg)
			return m;
	}
	return NULL;
}

/* Expected metrics; cover sets as regions (0 = undefined) and static. */
struct expect {
	uint64_t insns, region_insns;
	uint32_t regions;
	uint64_t static_insns, distinct, entries, completions, side_exits,
	    transitions, counters, recordings, aborted;
	uint32_t c70, c80, c90;
	uint64_t s70, s80, s90;
};

static void check(const dbtp_regions *r, enum dbtp_technique tech, int seg,
		  const struct expect *e, int line)
{
	const struct dbtp_region_metrics *m = find(r, tech, seg);
	const uint32_t cr[3] = {e->c70, e->c80, e->c90};
	const uint64_t cs[3] = {e->s70, e->s80, e->s90};
	int before = t_failed;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(m->insns, e->insns);
	CHECK_EQ(m->region_insns, e->region_insns);
	CHECK_EQ(m->regions, e->regions);
	CHECK_EQ(m->static_insns, e->static_insns);
	CHECK_EQ(m->distinct_insns, e->distinct);
	CHECK_EQ(m->entries, e->entries);
	CHECK_EQ(m->completions, e->completions);
	CHECK_EQ(m->side_exits, e->side_exits);
	CHECK_EQ(m->transitions, e->transitions);
	CHECK_EQ(m->counters, e->counters);
	CHECK_EQ(m->recordings, e->recordings);
	CHECK_EQ(m->aborted, e->aborted);
	for (int c = 0; c < 3; c++) {
		CHECK_EQ(m->cover[c].defined, cr[c] != 0);
		CHECK_EQ(m->cover[c].regions, cr[c]);
		CHECK_EQ(m->cover[c].static_insns, cs[c]);
	}
	/* the ratios follow from the counts */
	CHECK(fabs(m->coverage - (double)e->region_insns / e->insns) < 1e-12);
	if (tech == DBTP_TECH_TT || !e->entries)
		CHECK(isnan(m->completion));
	else
		CHECK(fabs(m->completion -
			   (double)e->completions / e->entries) < 1e-12);
	CHECK(fabs(m->duplication - (double)e->static_insns / e->distinct) <
	      1e-12);
	CHECK(fabs(m->dyn_size - (double)e->region_insns / e->entries) < 1e-12);
	CHECK(fabs(m->static_size - (double)e->static_insns / e->regions) <
	      1e-12);
	if (t_failed != before)
		fprintf(stderr, "  ^ %s%s, expectations at line %d\n",
			dbtp_technique_name(tech), seg ? "+seg" : "", line);
}

#define CHECK_M(r, tech, seg, ...)                                             \
	check(r, tech, seg, &(struct expect){__VA_ARGS__}, __LINE__)

static char seq[4096];

static const char *repeat(const char *pre, const char *odd, const char *even,
			  int n, const char *post)
{
	strcpy(seq, pre);
	for (int i = 1; i <= n; i++)
		strcat(seq, i % 2 ? odd : even);
	strcat(seq, post);
	return seq;
}

/*
 * 1. A single loop: A, L x 20, X.  L = nop nop jnz (3 instructions), its
 * back edge L->L is backward.  Total 2 + 60 + 2 = 64 instructions.
 * Threshold 4.  NET counts L on each backward arrival (execution k has
 * count k-1): hot at k=5, records [L], stops at k=6 (backward) and enters
 * the new region there.  k=6..20: 15 entries, each iteration a completion
 * (the tail's exit re-enters the region; the last goes to X): 45
 * instructions in regions, 45/64 = 70.3% (70% cover: 1 region).
 * MRET2 (passes of 2): pass 1 at k=3 ([L], stops at k=4, counted again
 * from there), pass 2 at k=5, common prefix [L] formed at k=6: as NET with
 * two recordings.  LEI: A->L is a taken branch (remembered), every L->L
 * closes a cycle: counts 1.. at k=2.., hot at k=5 where the buffered
 * iteration [L] becomes a region entered at once: 16 entries, 48
 * instructions.  TT: anchor L hot at k=5, the recording returns to the
 * anchor at k=6: as NET.  NETPlus: L has no other successor yet: as NET.
 * LEF: no call or return: as NET.
 */
static void single_loop(const char *path)
{
	static const struct tb tbs[] = {
	    {'A', 0x1000, {"90", "eb00"}},
	    {'L', 0x1010, {"90", "90", "7500"}},
	    {'X', 0x1014, {"90", "90"}},
	};
	dbtp_regions *r;

	write_trace(path, tbs, 3, repeat("A", "L", "L", 20, "X"));
	r = simulate(path, 4, NULL);
	CHECK_M(r, DBTP_TECH_NET, 0, .insns = 64, .region_insns = 45,
		.regions = 1, .static_insns = 3, .distinct = 3, .entries = 15,
		.completions = 15, .counters = 2, .recordings = 1, .c70 = 1,
		.s70 = 3);
	CHECK_M(r, DBTP_TECH_MRET2, 0, .insns = 64, .region_insns = 45,
		.regions = 1, .static_insns = 3, .distinct = 3, .entries = 15,
		.completions = 15, .counters = 2, .recordings = 2, .c70 = 1,
		.s70 = 3);
	CHECK_M(r, DBTP_TECH_LEI, 0, .insns = 64, .region_insns = 48,
		.regions = 1, .static_insns = 3, .distinct = 3, .entries = 16,
		.completions = 16, .counters = 2, .recordings = 1, .c70 = 1,
		.s70 = 3);
	for (int t = DBTP_TECH_TT; t <= DBTP_TECH_LEF; t++)
		CHECK_M(r, t, 0, .insns = 64, .region_insns = 45, .regions = 1,
			.static_insns = 3, .distinct = 3, .entries = 15,
			.completions = 15, .counters = 2, .recordings = 1,
			.c70 = 1, .s70 = 3);
	dbtp_regions_free(r);
}

/*
 * 2. If-else in a loop: A, then 20 iterations of H (nop; jnz -> E) and
 * either T (nop; jmp J) then J (odd iterations) or E falling into J
 * (even).  The translation block at E runs on into J (4 instructions) and
 * is split at J, which T's jump makes a leader.  6 instructions an
 * iteration, 124 in all.  Threshold 4.
 *
 * NET: H hot at i=5 (odd): R1 = [H,T,J], entered from i=6.  Even i: side
 * exit at H, E counted as an exit target (i=6,8,10,12): R2 = [E,J]
 * recorded at i=12, stopped by the back edge at i=13.  Then every even
 * iteration goes R1 -> R2 -> R1 (transitions at i=14..20 even and i=15..19
 * odd: 4 + 3).  R1: 15 entries (i=6..20), 8 side exits (even i), 7
 * completions, 7 x 6 + 8 x 2 = 58 instructions; R2: 4 entries and
 * completions, 16 instructions.  Static 6 + 4 over 8 distinct.  MRET2
 * (passes of 2) records [H,T,J] at i=3 and i=5 and [E,J] at i=8 and i=12:
 * the same regions at the same points, 4 recordings.  LEF: as NET.
 *
 * LEI: only the back edge closes cycles (T's jump to J and H's to E are
 * forward): H counts from i=2, hot at i=5: the buffered iteration i=4
 * gives R1 = [H,E,J], entered at once.  Odd i: side exit at H, T counted
 * as an exit target (i=5,7,9,11) and recorded as in NET: R2 = [T,J] at
 * i=11.  R1: 16 entries, 8 side exits, 8 completions, 8 x 6 + 8 x 2 = 64;
 * R2: 4 entries, 16.  Counters H, T (and X).
 *
 * TT: anchor H hot at i=5, the recording [H,T,J] returns to H at i=6.
 * The side exit H->E is counted per exit (i=6,8,10,12) and at the 4th its
 * path [E,J] back to the anchor is recorded and hung from H.  From i=13 all
 * in the tree.  15 entries, side exits at i=6..12 even (4), 11
 * completions; instructions 4 x 2 (i=6..12 even: H only) + 3 x 6 (i=7, 9,
 * 11) + 8 x 6 (i=13..20) = 74.
 *
 * NETPlus: NET's R1 = [H,T,J] at i=6, then the search from H's other
 * successor E finds E->J->H (depth 2): the path hangs from H.  Every
 * iteration from i=6 completes: 15 entries, 90 instructions.
 */
static void if_else(const char *path)
{
	static const struct tb tbs[] = {
	    {'A', 0x1000, {"90", "eb00"}},
	    {'H', 0x1010, {"90", "7500"}},
	    {'T', 0x1013, {"90", "eb00"}},
	    {'E', 0x1016, {"90", "90", "90", "7500"}},
	    {'J', 0x1018, {"90", "7500"}},
	    {'X', 0x101b, {"90", "90"}},
	};
	dbtp_regions *r;

	write_trace(path, tbs, 6, repeat("A", "HTJ", "HE", 20, "X"));
	r = simulate(path, 4, NULL);
	CHECK_M(r, DBTP_TECH_NET, 0, .insns = 124, .region_insns = 74,
		.regions = 2, .static_insns = 10, .distinct = 8, .entries = 19,
		.completions = 11, .side_exits = 8, .transitions = 7,
		.counters = 3, .recordings = 2);
	CHECK_M(r, DBTP_TECH_MRET2, 0, .insns = 124, .region_insns = 74,
		.regions = 2, .static_insns = 10, .distinct = 8, .entries = 19,
		.completions = 11, .side_exits = 8, .transitions = 7,
		.counters = 3, .recordings = 4);
	CHECK_M(r, DBTP_TECH_LEF, 0, .insns = 124, .region_insns = 74,
		.regions = 2, .static_insns = 10, .distinct = 8, .entries = 19,
		.completions = 11, .side_exits = 8, .transitions = 7,
		.counters = 3, .recordings = 2);
	CHECK_M(r, DBTP_TECH_LEI, 0, .insns = 124, .region_insns = 80,
		.regions = 2, .static_insns = 10, .distinct = 8, .entries = 20,
		.completions = 12, .side_exits = 8, .transitions = 8,
		.counters = 3, .recordings = 2);
	CHECK_M(r, DBTP_TECH_TT, 0, .insns = 124, .region_insns = 74,
		.regions = 1, .static_insns = 10, .distinct = 8, .entries = 15,
		.completions = 11, .side_exits = 4, .counters = 3,
		.recordings = 2);
	CHECK_M(r, DBTP_TECH_NETPLUS, 0, .insns = 124, .region_insns = 90,
		.regions = 1, .static_insns = 10, .distinct = 8, .entries = 15,
		.completions = 15, .counters = 2, .recordings = 1, .c70 = 1,
		.s70 = 10);
	dbtp_regions_free(r);

	/*
	 * MRET2 with threshold 6 (passes of 3): H's first pass at i=4 takes
	 * the else path [H,E,J], the second at i=7 the then path [H,T,J]:
	 * their common prefix R1 = [H], entered from i=8.  Leaving H is then
	 * always a final exit; E and T are exit targets: passes at i=12/18
	 * give R2 = [E,J], at i=13/19 R3 = [T,J].  R1: 13 entries (i=8..20),
	 * 26 instructions; R2 entered once (i=20), 4 instructions; R3 formed
	 * at i=20 and never entered.  One transition (R1 -> R2 at i=20).
	 */
	r = simulate(path, 6, NULL);
	CHECK_M(r, DBTP_TECH_MRET2, 0, .insns = 124, .region_insns = 30,
		.regions = 3, .static_insns = 10, .distinct = 8, .entries = 14,
		.completions = 14, .transitions = 1, .counters = 4,
		.recordings = 6);
	dbtp_regions_free(r);
}

/*
 * 3. A call and return in a loop: A, 20 x (H: nop; call F | F: nop nop ret
 * | C: nop; jnz H), X.  7 instructions an iteration, 144 in all.
 * Threshold 4.  NET, MRET2, TT, NETPlus: one region [H,F,C] through the
 * call, formed at i=6 (MRET2 with two recordings): 15 entries, 105
 * instructions.  LEI: only the back edge C->H closes cycles; H reaches 4
 * at i=5: [H,F,C] from the buffer, 16 entries, 112 instructions.
 *
 * LEF also counts call targets and ends recordings before a call and after
 * a return.  F hot at i=4: R_F = [F] (entered by a call, ends in a return,
 * nothing leads to it yet: pending).  H hot at i=5: R_H = [H] (stops at
 * the call).  C is an exit target from i=5, hot at i=8: R_C = [C].  From
 * then on R_H -> R_F -> R_C -> R_H; the call and return transitions do not
 * link regions for merging and C -> H is not into a returning region, so
 * nothing merges.  R_F: 16 entries (i=5..20), 48 instructions; R_H: 15
 * (i=6..20), 30; R_C: 12 (i=9..20), 24.  Transitions: R_H->R_F 15,
 * R_F->R_C 12, R_C->R_H 11.  70% of 144 needs all three regions.
 *
 * With segments by address range (F outside [0x1000,0x1100)) NET may not
 * record across the call: R1 = [H] at i=6; F becomes an exit target, hot
 * at i=9: R2 = [F]; C then an exit target, hot at i=13: R3 = [C].  R1: 15
 * entries (i=6..20), R2: 11 (i=10..20), R3: 7 (i=14..20); transitions
 * R1->R2 11, R2->R3 7, R3->R1 6.
 */
static void call_ret(const char *path)
{
	static const struct tb tbs[] = {
	    {'A', 0x1000, {"90", "eb00"}},
	    {'H', 0x1010, {"90", "e800000000"}},
	    {'F', 0x1100, {"90", "90", "c3"}},
	    {'C', 0x1016, {"90", "7500"}},
	    {'X', 0x1019, {"90", "90"}},
	};
	static const uint64_t ranges[1][2] = {{0x1000, 0x1100}};
	struct dbtp_regions_opts o = {0};
	dbtp_regions *r;

	write_trace(path, tbs, 5, repeat("A", "HFC", "HFC", 20, "X"));
	r = simulate(path, 4, NULL);
	for (int t = 0; t < DBTP_TECH_COUNT; t++)
		if (t != DBTP_TECH_LEI && t != DBTP_TECH_LEF)
			CHECK_M(r, t, 0, .insns = 144, .region_insns = 105,
				.regions = 1, .static_insns = 7, .distinct = 7,
				.entries = 15, .completions = 15, .counters = 2,
				.recordings = t == DBTP_TECH_MRET2 ? 2 : 1,
				.c70 = 1, .s70 = 7);
	CHECK_M(r, DBTP_TECH_LEI, 0, .insns = 144, .region_insns = 112,
		.regions = 1, .static_insns = 7, .distinct = 7, .entries = 16,
		.completions = 16, .counters = 2, .recordings = 1, .c70 = 1,
		.s70 = 7);
	CHECK_M(r, DBTP_TECH_LEF, 0, .insns = 144, .region_insns = 102,
		.regions = 3, .static_insns = 7, .distinct = 7, .entries = 43,
		.completions = 43, .transitions = 38, .counters = 4,
		.recordings = 3, .c70 = 3, .s70 = 7);
	dbtp_regions_free(r);

	o.techniques = 1u << DBTP_TECH_NET;
	o.segmenting = DBTP_SEG_RANGES;
	o.ranges = ranges;
	o.nranges = 1;
	r = simulate(path, 4, &o);
	CHECK_EQ(dbtp_regions_nsims(r), 2);
	CHECK_M(r, DBTP_TECH_NET, 0, .insns = 144, .region_insns = 105,
		.regions = 1, .static_insns = 7, .distinct = 7, .entries = 15,
		.completions = 15, .counters = 2, .recordings = 1, .c70 = 1,
		.s70 = 7);
	CHECK_M(r, DBTP_TECH_NET, 1, .insns = 144, .region_insns = 77,
		.regions = 3, .static_insns = 7, .distinct = 7, .entries = 33,
		.completions = 33, .transitions = 24, .counters = 4,
		.recordings = 3);
	dbtp_regions_free(r);
}

/*
 * 4. Nested loops: A, 10 x (O: nop; jmp I | I x 5: nop; jnz I | P: nop;
 * jnz O), X.  14 instructions an outer iteration, 144 in all.  Threshold
 * 4.
 *
 * NET (and LEF, no calls): I hot at its 5th execution in j=1, which is the
 * inner loop's last: R1 = [I,P], stopped by P->O.  Each inner back edge is
 * then a side exit at I and an entry (5 entries, 4 side exits, 1
 * completion an outer iteration, j=2..10).  O, counted from j=2, is hot at
 * j=5: R2 = [O] (stops at R1's entry), entered j=6..10.  R1 108
 * instructions (75%: the 70% cover), R2 10 (81.9%: the 80% cover).
 *
 * MRET2 (passes of 2): I's passes give [I] and [I,P]: R1 = [I].  O's
 * passes at j=3 and j=5, P's (an exit target) at j=3 and j=5: R2 = [O],
 * R3 = [P], all entered from j=6.  Every exit is final: 55 entries and
 * completions, 14 transitions.
 *
 * LEI: I closes cycles in j=1, hot at its 5th execution: R1 = [I] entered
 * at once.  P is an exit target, hot in j=4: R2 = [P].  O's cycles count
 * from j=3 (the formation in j=1 cut the buffer), 3 by j=5, and as an exit
 * target at j=6 it reaches 4: R3 = [O].
 *
 * TT: anchor I hot at its 5th execution, the recording follows P and O
 * (one inner-loop back edge, within the limit of 2) back to I: a tree
 * [I,P,O].  Each inner back edge is a side exit and an entry; O->I
 * completes; in j=10, P->X is a side exit.  One exit counter (P->X).
 *
 * NETPlus: NET's [I,P] plus the path P->O->I found by the search: 124
 * instructions in the region, every outer iteration completes at O.
 */
static void nested(const char *path)
{
	static const struct tb tbs[] = {
	    {'A', 0x1000, {"90", "eb00"}}, {'O', 0x1010, {"90", "eb00"}},
	    {'I', 0x1020, {"90", "7500"}}, {'P', 0x1023, {"90", "7500"}},
	    {'X', 0x1026, {"90", "90"}},
	};
	dbtp_regions *r;

	write_trace(path, tbs, 5, repeat("A", "OIIIIIP", "OIIIIIP", 10, "X"));
	r = simulate(path, 4, NULL);
	CHECK_M(r, DBTP_TECH_NET, 0, .insns = 144, .region_insns = 118,
		.regions = 2, .static_insns = 6, .distinct = 6, .entries = 50,
		.completions = 14, .side_exits = 36, .transitions = 10,
		.counters = 3, .recordings = 2, .c70 = 1, .s70 = 4, .c80 = 2,
		.s80 = 6);
	CHECK_M(r, DBTP_TECH_LEF, 0, .insns = 144, .region_insns = 118,
		.regions = 2, .static_insns = 6, .distinct = 6, .entries = 50,
		.completions = 14, .side_exits = 36, .transitions = 10,
		.counters = 3, .recordings = 2, .c70 = 1, .s70 = 4, .c80 = 2,
		.s80 = 6);
	CHECK_M(r, DBTP_TECH_MRET2, 0, .insns = 144, .region_insns = 110,
		.regions = 3, .static_insns = 6, .distinct = 6, .entries = 55,
		.completions = 55, .transitions = 14, .counters = 4,
		.recordings = 6, .c70 = 3, .s70 = 6);
	CHECK_M(r, DBTP_TECH_LEI, 0, .insns = 144, .region_insns = 112,
		.regions = 3, .static_insns = 6, .distinct = 6, .entries = 56,
		.completions = 56, .transitions = 14, .counters = 4,
		.recordings = 3, .c70 = 2, .s70 = 4);
	CHECK_M(r, DBTP_TECH_TT, 0, .insns = 144, .region_insns = 124,
		.regions = 1, .static_insns = 6, .distinct = 6, .entries = 45,
		.completions = 8, .side_exits = 37, .counters = 2,
		.recordings = 1, .c70 = 1, .s70 = 6, .c80 = 1, .s80 = 6);
	CHECK_M(r, DBTP_TECH_NETPLUS, 0, .insns = 144, .region_insns = 124,
		.regions = 1, .static_insns = 6, .distinct = 6, .entries = 45,
		.completions = 9, .side_exits = 36, .counters = 3,
		.recordings = 1, .c70 = 1, .s70 = 6, .c80 = 1, .s80 = 6);
	dbtp_regions_free(r);
}

/*
 * 5. LEF's merge: a loop (H: nop; call G | C: nop; jnz H) calling G
 * (G: nop; jmp L | L x 3: nop; jnz L | R: nop; ret).  14 instructions an
 * iteration, 10 iterations, 144 in all.  Threshold 4.
 * L hot in j=2: R_L = [L,R] ends in a return, nothing leads to it: pending.
 * G (call target) hot at j=4: R_G = [G], a function entry.  H hot at j=5:
 * R_H = [H].  In j=5, G -> L is the first transition into R_L: the retry
 * walks back from R_L to R_G and merges them (G's node gets an edge to L).
 * C, an exit target from j=3, is hot at j=6: R_C = [C].
 * Merged region: 25 entries (3 in each of j=3, 4, 5 for L, 1 for G in j=5,
 * 3 a time in j=6..10), 16 side exits (L's back edges), 9 completions, 76
 * instructions.  R_H 5 entries (j=6..10), R_C 4 (j=7..10).  Transitions:
 * R_G->R_L once, R_H->M in j=6..10, M->R_C in j=7..10, R_C->R_H at the
 * starts of j=8..10: 13.
 */
static void lef_merge(const char *path)
{
	static const struct tb tbs[] = {
	    {'A', 0x1000, {"90", "eb00"}}, {'H', 0x1010, {"90", "e800000000"}},
	    {'C', 0x1016, {"90", "7500"}}, {'X', 0x1019, {"90", "90"}},
	    {'G', 0x1100, {"90", "eb00"}}, {'L', 0x1110, {"90", "7500"}},
	    {'R', 0x1113, {"90", "c3"}},
	};
	struct dbtp_regions_opts o = {.techniques = 1u << DBTP_TECH_LEF};
	dbtp_regions *r;

	write_trace(path, tbs, 7, repeat("A", "HGLLLRC", "HGLLLRC", 10, "X"));
	r = simulate(path, 4, &o);
	CHECK_M(r, DBTP_TECH_LEF, 0, .insns = 144, .region_insns = 94,
		.regions = 3, .static_insns = 10, .distinct = 10, .entries = 34,
		.completions = 18, .side_exits = 16, .transitions = 13,
		.counters = 5, .recordings = 4);
	dbtp_regions_free(r);
}

int main(void)
{
	int fd = mkstemp(tmpl);

	if (fd < 0)
		return 1;
	close(fd);
	single_loop(tmpl);
	if_else(tmpl);
	call_ret(tmpl);
	nested(tmpl);
	lef_merge(tmpl);
	unlink(tmpl);
	return T_DONE();
}

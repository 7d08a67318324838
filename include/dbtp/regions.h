/* SPDX-License-Identifier: MIT */
/*
 * dbtp/regions.h - simulate DBT region formation over a recorded execution.
 *
 * The trace's translation blocks are split into basic blocks at every
 * address some block starts at (every instruction boundary that is ever
 * entered), so a region is a graph of basic blocks whatever QEMU's block
 * boundaries were.  Each simulated technique keeps a code cache of regions,
 * an "interpreter" state for code outside them, its profiling counters and
 * per-thread recording state, and replays the block stream exactly as a DBT
 * would: entries, internal transitions, side and final exits, transitions
 * between regions.  Several techniques (and each one with and without
 * segmentation) are simulated in one pass.  Memory is bounded by the
 * program's static code, never by the length of the run.
 *
 * doc/dbtprof-regions.md defines every technique, parameter and metric.
 */
#ifndef DBTP_REGIONS_H
#define DBTP_REGIONS_H

#include <stdint.h>

#include "dbtp/common.h"
#include "dbtp/trace.h"

enum dbtp_technique {
	DBTP_TECH_NET = 0,
	DBTP_TECH_MRET2 = 1,
	DBTP_TECH_LEI = 2,
	DBTP_TECH_TT = 3,
	DBTP_TECH_NETPLUS = 4,
	DBTP_TECH_LEF = 5,
	DBTP_TECH_COUNT = 6,
};

/** dbtp_technique_name() - "net", "mret2", "lei", "tt", "netplus", "lef". */
const char *dbtp_technique_name(enum dbtp_technique t);

/** dbtp_technique_from_name() - inverse; -1 if unknown. */
int dbtp_technique_from_name(const char *name);

/**
 * struct dbtp_region_params - the techniques' parameters (see the doc for
 * their sources).  dbtp_region_params_default() fills the defaults.
 * @threshold: hot threshold per technique (NET 50, MRET2 50 = two passes
 *             of 25, LEI 35, TT 50, NETPlus 50, LEF 50); 0 takes the default.
 * @max_insns: longest recorded path, in instructions (1024).
 * @lei_buffer: LEI history buffer, in blocks (1024).
 * @tt_max_insns: largest trace tree, in static instructions (4096).
 * @tt_inner: inner-loop back edges a tree recording may take (2).
 * @netplus_depth: NETPlus search depth, in blocks (10).
 * @lef_depth: LEF merge search depth, in regions (10).
 */
struct dbtp_region_params {
	uint32_t threshold[DBTP_TECH_COUNT];
	uint32_t max_insns, lei_buffer, tt_max_insns, tt_inner;
	uint32_t netplus_depth, lef_depth;
};

void dbtp_region_params_default(struct dbtp_region_params *p);

/** How code is classified into segments for --segment. */
enum dbtp_segmenting {
	DBTP_SEG_NONE = 0,   /* one segment */
	DBTP_SEG_FILE = 1,   /* each mapped file; anonymous memory apart */
	DBTP_SEG_MAIN = 2,   /* the main executable vs everything else */
	DBTP_SEG_RANGES = 3, /* the given address ranges, the rest apart */
};

/**
 * struct dbtp_regions_opts - what to simulate.
 * @techniques: bit (1 << DBTP_TECH_*) per technique.
 * @segmenting: with DBTP_SEG_NONE only unsegmented simulations run; with
 *              any other, each technique runs twice, without and with
 *              segments (a region never mixes two segments).
 * @ranges, @nranges: [start, end) pairs for DBTP_SEG_RANGES.
 * @main_file: path of the main executable for DBTP_SEG_MAIN (the trace's
 *             "program" key when NULL).
 */
struct dbtp_regions_opts {
	unsigned techniques;
	struct dbtp_region_params params;
	enum dbtp_segmenting segmenting;
	const uint64_t (*ranges)[2];
	uint32_t nranges;
	const char *main_file;
};

typedef struct dbtp_regions dbtp_regions;

/**
 * dbtp_regions_new() - prepare the simulations for trace @t, whose block
 * table must be complete (read it with a first pass under
 * dbtp_trace_skip_events()).  Blocks are then fed from a second reader.
 */
int dbtp_regions_new(dbtp_regions **out, const dbtp_trace *t,
		     const struct dbtp_regions_opts *o, dbtp_err *err);

/** dbtp_regions_block() - thread @thread executed translation block @id. */
int dbtp_regions_block(dbtp_regions *r, uint32_t thread, uint32_t id,
		       dbtp_err *err);

/** dbtp_regions_thread_exit() - thread @thread ended (its recording is
 * abandoned). */
void dbtp_regions_thread_exit(dbtp_regions *r, uint32_t thread);

/**
 * dbtp_regions_finish() - end every thread and compute the metrics.
 * No dbtp_regions_block() may follow.
 */
int dbtp_regions_finish(dbtp_regions *r, dbtp_err *err);

/** struct dbtp_cover - a cover set: fewest regions reaching @pct percent
 * of all executed instructions.  @defined is 0 when coverage is lower. */
struct dbtp_cover {
	unsigned pct;
	int defined;
	uint32_t regions;
	uint64_t static_insns;
};

/**
 * struct dbtp_region_metrics - one simulation's results (doc has the
 * formulas).  Ratios are NaN where undefined (no entries, no regions;
 * completion of trace trees).
 */
struct dbtp_region_metrics {
	enum dbtp_technique technique;
	int segmented;
	uint64_t insns, region_insns; /* executed: all, inside regions */
	uint32_t regions;	      /* in the code cache at the end */
	uint64_t static_insns, distinct_insns;
	uint64_t entries, completions, side_exits, transitions;
	uint64_t recordings, aborted, counters;
	double coverage, completion, duplication, dyn_size, static_size;
	struct dbtp_cover cover[3]; /* 70, 80, 90 % */
};

uint32_t dbtp_regions_nsims(const dbtp_regions *r);
const struct dbtp_region_metrics *dbtp_regions_metrics(const dbtp_regions *r,
						       uint32_t sim);

/**
 * struct dbtp_region_info - one region of a simulation's code cache, for
 * the per-region table.  @tb, @tb_offset: a translation block holding the
 * entry and the byte offset in it, for symbolising.
 */
struct dbtp_region_info {
	uint32_t id;
	uint64_t entry;
	uint32_t tb;
	uint64_t tb_offset;
	uint32_t nodes;
	uint64_t static_insns, entries, insns, completions, side_exits;
};

/** Regions of simulation @sim at the end, hottest (most instructions)
 * first; @i from 0 to metrics->regions - 1. */
int dbtp_regions_region(const dbtp_regions *r, uint32_t sim, uint32_t i,
			struct dbtp_region_info *info);

/**
 * struct dbtp_region_node - a node (basic block) of a region's graph.
 * @addr, @ninsns: the basic block.  @final: a recorded path ends here.
 * @entry: control may enter the region here.  @nsucc successors, as node
 * indexes within the region, in @succ.
 */
struct dbtp_region_node {
	uint64_t addr;
	uint32_t ninsns;
	int final, entry;
	uint32_t nsucc;
	const uint32_t *succ;
};

/** dbtp_regions_node() - node @k (0 = an entry) of the @i-th region of
 * dbtp_regions_region(); valid until the next call. */
int dbtp_regions_node(dbtp_regions *r, uint32_t sim, uint32_t i, uint32_t k,
		      struct dbtp_region_node *node);

void dbtp_regions_free(dbtp_regions *r);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * dbtp/bbv.h - basic block vectors (SimPoint's .bb format) from a trace.
 *
 * Feed every executed block of every thread in order (per thread); the
 * generator cuts each thread's stream into intervals of N instructions at
 * block boundaries, carrying the overshoot forward (interval k ends at the
 * first block boundary at or after (k+1)*N instructions of that thread),
 * then, at the end, maps QEMU's translation blocks to basic blocks and
 * formats the vectors.
 */
#ifndef DBTP_BBV_H
#define DBTP_BBV_H

#include <stdint.h>

#include "dbtp/common.h"
#include "dbtp/trace.h"

struct dbtp_buf;

/**
 * struct dbtp_bbv_opts - how to count.
 * @interval: instructions per interval (0: SimPoint's usual 100,000,000).
 * @rep_per_instruction: count an x86 rep-prefixed string instruction once
 *            per execution (hardware counters, Valgrind) instead of once per
 *            iteration (what QEMU executes; the default).
 * @split: split translation blocks into basic blocks at every address some
 *            other block starts at (a block entered mid-way becomes two), so
 *            ids mean the same as in other tools (default on).
 * @drop_partial: leave out each thread's last, shorter interval.
 */
struct dbtp_bbv_opts {
	uint64_t interval;
	int rep_per_instruction;
	int split;
	int drop_partial;
};

typedef struct dbtp_bbvgen dbtp_bbvgen;

int dbtp_bbvgen_new(dbtp_bbvgen **out, const struct dbtp_bbv_opts *o,
		    enum dbtp_arch arch, dbtp_err *err);

/** dbtp_bbvgen_block() - thread @thread executed block @b. */
int dbtp_bbvgen_block(dbtp_bbvgen *g, uint32_t thread,
		      const struct dbtp_block *b, dbtp_err *err);

/**
 * dbtp_bbvgen_interval() - a whole interval counted elsewhere (the plugin's
 * bbv mode): @n translation blocks @ids (in order of first execution) ran
 * @execs times.  @last marks the thread's last, possibly short, interval
 * (left out with @drop_partial).  Do not mix with dbtp_bbvgen_block() for
 * one thread.
 */
int dbtp_bbvgen_interval(dbtp_bbvgen *g, uint32_t thread, const uint32_t *ids,
			 const uint64_t *execs, uint32_t n, int last,
			 const dbtp_trace *t, dbtp_err *err);

/**
 * dbtp_bbvgen_finish() - close the last intervals and number the basic
 * blocks, using the complete block table of @t.  Ids run from 1 in order of
 * first appearance: thread 0's intervals first, then thread 1's, ...
 */
int dbtp_bbvgen_finish(dbtp_bbvgen *g, const dbtp_trace *t, dbtp_err *err);

uint32_t dbtp_bbvgen_nthreads(const dbtp_bbvgen *g);
uint64_t dbtp_bbvgen_nintervals(const dbtp_bbvgen *g, uint32_t thread);
/** Instructions counted for @thread (after the rep convention). */
uint64_t dbtp_bbvgen_insns(const dbtp_bbvgen *g, uint32_t thread);
uint32_t dbtp_bbvgen_nbbs(const dbtp_bbvgen *g);

/**
 * dbtp_bbvgen_format() - append thread @thread's .bb text to @out: one line
 * per interval, "T:id:count :id:count ... " with ids ascending and count =
 * instructions executed in that basic block during the interval.
 */
int dbtp_bbvgen_format(const dbtp_bbvgen *g, uint32_t thread,
		       struct dbtp_buf *out, dbtp_err *err);

/**
 * dbtp_bbvgen_bb() - basic block @id (1..): guest address, instructions,
 * and a translation block it lies in with the offset into it (for
 * symbolising).
 */
int dbtp_bbvgen_bb(const dbtp_bbvgen *g, uint32_t id, uint64_t *addr,
		   uint32_t *ninsns, uint32_t *tb, uint64_t *tb_offset);

void dbtp_bbvgen_free(dbtp_bbvgen *g);

/**
 * dbtp_bbv_block_insns() - instructions block @b counts for, executed right
 * after @prev (NULL at a thread's start) by a guest of @arch: b->ninsns, or
 * 0 for a rep string instruction's repeat pass when @rep_per_instruction.
 * Every command that cuts intervals uses this, so their intervals agree.
 */
uint32_t dbtp_bbv_block_insns(const struct dbtp_block *prev,
			      const struct dbtp_block *b, enum dbtp_arch arch,
			      int rep_per_instruction);

/**
 * dbtp_interval_cut() - the interval rule, in one place: a block has just
 * brought a thread to @insns instructions.  Return 1 if that closes the
 * interval ending at *@end (the block counts wholly in it), moving *@end on
 * by whole intervals past @insns so that the overshoot is carried forward
 * and no interval is empty; else 0.
 */
static inline int dbtp_interval_cut(uint64_t *end, uint64_t insns,
				    uint64_t interval)
{
	if (insns < *end)
		return 0;
	while (*end <= insns)
		*end += interval;
	return 1;
}

/** dbtp_x86_is_rep_string() - @code starts with a rep-prefixed string op. */
int dbtp_x86_is_rep_string(const uint8_t *code, size_t len);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * bpred.h - the cycle model's branch predictor (doc/dbtprof-cycles.md,
 * "Branch prediction"): one per modelled thread.
 *
 *  - Conditional branches: gshare.  2^DBTP_BPRED_HIST_BITS two-bit
 *    counters, indexed by the branch address (divided by 4 on AArch64)
 *    XOR the global history of the last DBTP_BPRED_HIST_BITS conditional
 *    outcomes (newest in bit 0); counters start weakly not-taken (1),
 *    predict taken at 2 or 3.
 *  - Indirect jumps and calls: a direct-mapped, fully tagged table of
 *    DBTP_BPRED_BTB last targets, indexed like the counters but without
 *    the history; a missing entry is a misprediction.
 *  - Returns: a DBTP_BPRED_RAS-entry return address stack; calls push
 *    (the oldest entry is overwritten when full), returns pop; an empty
 *    stack or another address is a misprediction.
 *  - Direct jumps and calls are always predicted right.
 */
#ifndef DBTP_ANALYSIS_BPRED_H
#define DBTP_ANALYSIS_BPRED_H

#include <stdint.h>

typedef struct bpred bpred;

/** bpred_new() - a predictor; @shift: address bits dropped (AArch64: 2). */
bpred *bpred_new(unsigned shift);
void bpred_free(bpred *b);

/** bpred_cond() - predict and train; 1 if @taken was mispredicted. */
int bpred_cond(bpred *b, uint64_t pc, int taken);

/** bpred_indirect() - predict and train; 1 if @target was mispredicted. */
int bpred_indirect(bpred *b, uint64_t pc, uint64_t target);

/** bpred_call() - push the return address @ret. */
void bpred_call(bpred *b, uint64_t ret);

/** bpred_ret() - pop; 1 if the return to @target was mispredicted. */
int bpred_ret(bpred *b, uint64_t target);

/**
 * bpred_branch() - predict and train the branch of kind @br (enum
 * dbtp_branch) at @pc, an indirect call if @ind, ending a block that falls
 * through to @end, when the next block starts at @next.  Returns the
 * DBTP_BPK_* class it counts in, with *@miss 1 if it was mispredicted, or
 * -1 for what is always predicted right (direct jumps and calls, system
 * calls, no branch).
 */
int bpred_branch(bpred *b, int br, int ind, uint64_t pc, uint64_t end,
		 uint64_t next, int *miss);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * bpred.h - the cycle model's branch predictor (doc/dbtprof-cycles.md,
 * "Branch prediction"): one per modelled thread.
 *
 *  - Conditional branches, DBTP_BPRED_GSHARE: gshare.
 *    2^DBTP_BPRED_HIST_BITS two-bit counters, indexed by the branch
 *    address (divided by 4 on AArch64) XOR the global history of the last
 *    DBTP_BPRED_HIST_BITS conditional outcomes (newest in bit 0); counters
 *    start weakly not-taken (1), predict taken at 2 or 3.
 *  - Conditional branches, DBTP_BPRED_TAGE: a TAGE (tagged geometric
 *    history lengths), bpred.c has its rules.
 *  - Indirect jumps and calls, DBTP_BPRED_GSHARE: two direct-mapped,
 *    fully tagged tables of DBTP_BPRED_BTB last targets, one indexed by
 *    the address XOR a path history of the last targets (each shifted in
 *    by DBTP_BPRED_PATH_SHIFT bits), which predicts when its entry is the
 *    branch's, the other by the address alone; a missing entry is a
 *    misprediction.
 *  - Indirect jumps and calls, DBTP_BPRED_TAGE: an ITTAGE over the
 *    second of those tables, bpred.c has its rules.
 *  - Returns: a DBTP_BPRED_RAS-entry return address stack; calls push
 *    (the oldest entry is overwritten when full), returns pop; an empty
 *    stack or another address is a misprediction.
 *  - Direct jumps and calls are always predicted right.
 */
#ifndef DBTP_ANALYSIS_BPRED_H
#define DBTP_ANALYSIS_BPRED_H

#include <stdint.h>

#include "dbtp/cycles.h"
#include "dbtp/disasm.h"

typedef struct bpred bpred;

/* The predictor's state, in the open for the functions inline below (a
 * profile's reading predicts every branch of it). */
#define BPRED_PHT (1u << DBTP_BPRED_HIST_BITS)

struct bpred_btb {
	uint64_t pc, target; /* pc 0: empty (pc + 1 is stored) */
};

struct tage;

struct bpred {
	unsigned shift;
	struct tage *tage; /* DBTP_BPRED_TAGE (and its ITTAGE), else NULL */
	uint32_t hist, path;
	uint8_t pht[BPRED_PHT];
	struct bpred_btb btb[DBTP_BPRED_BTB];
	struct bpred_btb ittb[DBTP_BPRED_BTB]; /* by address and path history */
	uint64_t ras[DBTP_BPRED_RAS];
	unsigned top, depth;
};

/** bpred_kind_valid() - whether @kind is DBTP_BPRED_GSHARE or _TAGE. */
static inline int bpred_kind_valid(int kind)
{
	return kind == DBTP_BPRED_GSHARE || kind == DBTP_BPRED_TAGE;
}

/**
 * bpred_new() - a predictor; @shift: address bits dropped (AArch64: 2),
 * @kind: DBTP_BPRED_GSHARE or DBTP_BPRED_TAGE for conditional branches.
 */
bpred *bpred_new(unsigned shift, int kind);
void bpred_free(bpred *b);

/** tage_cond() - bpred_cond() of a TAGE, @a the address less its shift. */
int tage_cond(struct tage *t, uint64_t a, int taken);

/**
 * tage_indirect() - bpred_indirect() of the TAGE's ITTAGE, @base the
 * last-target entry of @pc, @a the address less its @shift.
 */
int tage_indirect(struct tage *t, struct bpred_btb *base, uint64_t pc,
		  uint64_t a, uint64_t target, unsigned shift);

/** bpred_cond() - predict and train; 1 if @taken was mispredicted. */
static inline int bpred_cond(bpred *b, uint64_t pc, int taken)
{
	uint32_t i;
	uint8_t *ctr;
	int miss;

	if (b->tage)
		return tage_cond(b->tage, pc >> b->shift, taken);
	i = (uint32_t)((pc >> b->shift) ^ b->hist) & (BPRED_PHT - 1);
	ctr = &b->pht[i];
	miss = (*ctr >= 2) != !!taken;
	if (taken && *ctr < 3)
		(*ctr)++;
	else if (!taken && *ctr > 0)
		(*ctr)--;
	b->hist = ((b->hist << 1) | !!taken) & (BPRED_PHT - 1);
	return miss;
}

/** bpred_indirect() - predict and train; 1 if @target was mispredicted. */
static inline int bpred_indirect(bpred *b, uint64_t pc, uint64_t target)
{
	uint64_t a = pc >> b->shift;
	struct bpred_btb *e = &b->btb[a % DBTP_BPRED_BTB],
			 *h = &b->ittb[(a ^ b->path) % DBTP_BPRED_BTB];
	int miss;

	if (b->tage)
		return tage_indirect(b->tage, e, pc, a, target, b->shift);
	if (h->pc == pc + 1)
		miss = h->target != target;
	else
		miss = e->pc != pc + 1 || e->target != target;
	h->pc = e->pc = pc + 1;
	h->target = e->target = target;
	b->path = ((b->path << DBTP_BPRED_PATH_SHIFT) ^ (target >> b->shift)) &
		  (DBTP_BPRED_BTB - 1);
	return miss;
}

/** bpred_call() - push the return address @ret. */
static inline void bpred_call(bpred *b, uint64_t ret)
{
	b->top = (b->top + 1) % DBTP_BPRED_RAS;
	b->ras[b->top] = ret;
	if (b->depth < DBTP_BPRED_RAS)
		b->depth++;
}

/** bpred_ret() - pop; 1 if the return to @target was mispredicted. */
static inline int bpred_ret(bpred *b, uint64_t target)
{
	uint64_t pred;

	if (!b->depth)
		return 1;
	pred = b->ras[b->top];
	b->top = (b->top + DBTP_BPRED_RAS - 1) % DBTP_BPRED_RAS;
	b->depth--;
	return pred != target;
}

/**
 * bpred_branch() - predict and train the branch of kind @br (enum
 * dbtp_branch) at @pc, an indirect call if @ind, ending a block that falls
 * through to @end, when the next block starts at @next.  Returns the
 * DBTP_BPK_* class it counts in, with *@miss 1 if it was mispredicted, or
 * -1 for what is always predicted right (direct jumps and calls, system
 * calls, no branch).
 */
static inline int bpred_branch(bpred *b, int br, int ind, uint64_t pc,
			       uint64_t end, uint64_t next, int *miss)
{
	switch (br) {
	case DBTP_BR_COND:
		*miss = bpred_cond(b, pc, next != end);
		return DBTP_BPK_COND;
	case DBTP_BR_IND:
		*miss = bpred_indirect(b, pc, next);
		return DBTP_BPK_INDIRECT;
	case DBTP_BR_CALL:
		bpred_call(b, end);
		if (!ind)
			return -1;
		*miss = bpred_indirect(b, pc, next);
		return DBTP_BPK_INDIRECT;
	case DBTP_BR_RET:
		*miss = bpred_ret(b, next);
		return DBTP_BPK_RETURN;
	default:
		return -1;
	}
}

#endif

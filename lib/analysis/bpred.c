/* SPDX-License-Identifier: MIT */
/* bpred.c - gshare, a last-target table and a return stack (bpred.h). */
#include <stdlib.h>

#include "analysis/bpred.h"
#include "dbtp/cycles.h"
#include "dbtp/disasm.h"

#define PHT (1u << DBTP_BPRED_HIST_BITS)

struct btb {
	uint64_t pc, target; /* pc 0: empty (pc + 1 is stored) */
};

struct bpred {
	unsigned shift;
	uint32_t hist, path;
	uint8_t pht[PHT];
	struct btb btb[DBTP_BPRED_BTB];
	struct btb ittb[DBTP_BPRED_BTB]; /* by address and path history */
	uint64_t ras[DBTP_BPRED_RAS];
	unsigned top, depth;
};

bpred *bpred_new(unsigned shift)
{
	bpred *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->shift = shift;
	for (unsigned i = 0; i < PHT; i++)
		b->pht[i] = 1; /* weakly not taken */
	return b;
}

void bpred_free(bpred *b)
{
	free(b);
}

int bpred_cond(bpred *b, uint64_t pc, int taken)
{
	uint32_t i = (uint32_t)((pc >> b->shift) ^ b->hist) & (PHT - 1);
	uint8_t *ctr = &b->pht[i];
	int miss = (*ctr >= 2) != !!taken;

	if (taken && *ctr < 3)
		(*ctr)++;
	else if (!taken && *ctr > 0)
		(*ctr)--;
	b->hist = ((b->hist << 1) | !!taken) & (PHT - 1);
	return miss;
}

int bpred_indirect(bpred *b, uint64_t pc, uint64_t target)
{
	uint64_t a = pc >> b->shift;
	struct btb *e = &b->btb[a % DBTP_BPRED_BTB],
		   *h = &b->ittb[(a ^ b->path) % DBTP_BPRED_BTB];
	int miss;

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

void bpred_call(bpred *b, uint64_t ret)
{
	b->top = (b->top + 1) % DBTP_BPRED_RAS;
	b->ras[b->top] = ret;
	if (b->depth < DBTP_BPRED_RAS)
		b->depth++;
}

int bpred_ret(bpred *b, uint64_t target)
{
	uint64_t pred;

	if (!b->depth)
		return 1;
	pred = b->ras[b->top];
	b->top = (b->top + DBTP_BPRED_RAS - 1) % DBTP_BPRED_RAS;
	b->depth--;
	return pred != target;
}

int bpred_branch(bpred *b, int br, int ind, uint64_t pc, uint64_t end,
		 uint64_t next, int *miss)
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

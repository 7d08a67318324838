/* SPDX-License-Identifier: MIT */
/* bpred.c - a predictor made and freed; its workings are inline (bpred.h). */
#include <stdlib.h>

#include "analysis/bpred.h"

bpred *bpred_new(unsigned shift)
{
	bpred *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->shift = shift;
	for (unsigned i = 0; i < BPRED_PHT; i++)
		b->pht[i] = 1; /* weakly not taken */
	return b;
}

void bpred_free(bpred *b)
{
	free(b);
}

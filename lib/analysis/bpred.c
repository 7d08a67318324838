/* SPDX-License-Identifier: MIT */
/*
 * bpred.c - a predictor made and freed (gshare's, the indirect tables' and
 * the return stack's workings are inline in bpred.h), and the TAGE.
 *
 * The TAGE (Seznec and Michaud's tagged geometric history lengths, in a
 * small form): a base of 2^DBTP_TAGE_BASE_BITS two-bit counters indexed by
 * the address, and DBTP_TAGE_TABLES tables of 2^DBTP_TAGE_BITS entries,
 * table t indexed and tagged by the address and the last tage_hist[t]
 * conditional outcomes (folded), each entry a DBTP_TAGE_TAG_BITS tag, a
 * 3-bit counter (taken at 4 or more) and a 2-bit usefulness.
 *  - The provider is the hit of the longest history, the alternative the
 *    next longest hit or the base.  The provider predicts, unless its
 *    entry is new (a weak counter, usefulness 0) and a 4-bit counter of
 *    how often the alternative was right for such entries is not
 *    negative.
 *  - The provider's counter (the base's if no table hit) learns the
 *    outcome; its usefulness grows when it was right and the alternative
 *    wrong, and shrinks in the opposite case.
 *  - A misprediction by a provider below the longest table takes one
 *    entry of usefulness 0 in a longer table (the first, or the second
 *    when a pseudo-random bit says so), its counter weakly the outcome;
 *    if every longer table's entry is useful, each loses one.
 *  - Every 2^DBTP_TAGE_AGE_BITS conditional branches all usefulness is
 *    halved, so that entries once useful can be taken again.
 * The pseudo-random bits come from a fixed-seed generator: the same
 * outcomes give the same predictions on every run.
 */
#include <stdlib.h>

#include "analysis/bpred.h"

#define NT DBTP_TAGE_TABLES
#define IW DBTP_TAGE_BITS     /* index bits */
#define TW DBTP_TAGE_TAG_BITS /* tag bits */
#define HIST_RING 256	      /* outcomes kept: above the longest history */

/* The history lengths: geometric, 5 to 129. */
static const unsigned tage_hist[NT] = {5, 9, 17, 33, 65, 129};

struct tage_entry {
	uint16_t tag; /* bit 15 set: an entry never taken (0) matches none */
	uint8_t ctr, u;
};

/* The folded histories of table k: its last tage_hist[k] outcomes XORed
 * into IW bits (fi, for the index), TW and TW - 1 (ft, ft2, for the tag),
 * the outcome a ago at bit a % width. */
struct tage {
	uint8_t base[1u << DBTP_TAGE_BASE_BITS];
	struct tage_entry t[NT][1u << IW];
	uint32_t fi[NT], ft[NT], ft2[NT];
	uint8_t hist[HIST_RING]; /* hist[(head + a) % HIST_RING]: a ago */
	unsigned head;
	int use_alt; /* -8..7 */
	uint32_t rng;
	uint64_t n;
};

/* @v, of @w bits, aged by one: each outcome a bit up, the top one to 0. */
static inline uint32_t rot1(uint32_t v, unsigned w)
{
	return ((v << 1) | (v >> (w - 1))) & ((1u << w) - 1);
}

/* Take outcome @in into the history and the folds, and the one now
 * tage_hist[k] old out of table k's. */
static void tage_push(struct tage *t, unsigned in)
{
	t->head = (t->head + HIST_RING - 1) % HIST_RING;
	t->hist[t->head] = (uint8_t)in;
#pragma GCC unroll 8
	for (unsigned k = 0; k < NT; k++) {
		unsigned h = tage_hist[k],
			 out = t->hist[(t->head + h) % HIST_RING];

		t->fi[k] = rot1(t->fi[k], IW) ^ in ^ (out << h % IW);
		t->ft[k] = rot1(t->ft[k], TW) ^ in ^ (out << h % TW);
		t->ft2[k] =
		    rot1(t->ft2[k], TW - 1) ^ in ^ (out << h % (TW - 1));
	}
}

static int sat(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static unsigned next_random(struct tage *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 17;
	t->rng ^= t->rng << 5;
	return t->rng;
}

int tage_cond(struct tage *t, uint64_t a, int taken)
{
	uint32_t ix[NT];
	uint16_t tg[NT];
	unsigned hits = 0;
	int prov = -1, alt = -1, pred, alt_pred, prov_pred = 0, fresh;
	uint8_t *b = &t->base[a & ((1u << DBTP_TAGE_BASE_BITS) - 1)];
	struct tage_entry *e = NULL;

	taken = !!taken;
#pragma GCC unroll 8
	for (unsigned k = 0; k < NT; k++) {
		ix[k] = (uint32_t)(a ^ (a >> (IW - k)) ^ t->fi[k]) &
			((1u << IW) - 1);
		tg[k] = (uint16_t)(((a ^ t->ft[k] ^ (t->ft2[k] << 1)) &
				    ((1u << TW) - 1)) |
				   0x8000);
		hits |= (unsigned)(t->t[k][ix[k]].tag == tg[k]) << k;
	}
	if (hits) {
		prov = 31 - __builtin_clz(hits);
		hits &= ~(1u << prov);
		alt = hits ? 31 - __builtin_clz(hits) : -1;
	}
	alt_pred = alt >= 0 ? t->t[alt][ix[alt]].ctr >= 4 : *b >= 2;
	pred = alt_pred;
	if (prov >= 0) {
		e = &t->t[prov][ix[prov]];
		prov_pred = e->ctr >= 4;
		fresh = (e->ctr == 3 || e->ctr == 4) && !e->u;
		pred = fresh && t->use_alt >= 0 ? alt_pred : prov_pred;
		if (fresh && prov_pred != alt_pred)
			t->use_alt = sat(
			    t->use_alt + (alt_pred == taken ? 1 : -1), -8, 7);
	}

	/* a new entry above the provider on a misprediction */
	if (pred != taken && prov < NT - 1) {
		int first = -1, second = -1;

		for (int k = prov + 1; k < NT && second < 0; k++)
			if (!t->t[k][ix[k]].u) {
				if (first < 0)
					first = k;
				else
					second = k;
			}
		if (second >= 0 && (next_random(t) & 1))
			first = second;
		if (first >= 0) {
			struct tage_entry *n = &t->t[first][ix[first]];

			n->tag = tg[first];
			n->ctr = taken ? 4 : 3;
			n->u = 0;
		} else
			for (int k = prov + 1; k < NT; k++)
				t->t[k][ix[k]].u--;
	}

	if (e) {
		e->ctr = (uint8_t)sat(e->ctr + (taken ? 1 : -1), 0, 7);
		if (prov_pred != alt_pred)
			e->u = (uint8_t)sat(
			    e->u + (prov_pred == taken ? 1 : -1), 0, 3);
	} else
		*b = (uint8_t)sat(*b + (taken ? 1 : -1), 0, 3);

	if (!(++t->n & ((1u << DBTP_TAGE_AGE_BITS) - 1)))
		for (int k = 0; k < NT; k++)
			for (uint32_t i = 0; i < 1u << IW; i++)
				t->t[k][i].u >>= 1;
	tage_push(t, (unsigned)taken);
	return pred != taken;
}

bpred *bpred_new(unsigned shift, int kind)
{
	bpred *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->shift = shift;
	for (unsigned i = 0; i < BPRED_PHT; i++)
		b->pht[i] = 1; /* weakly not taken */
	if (kind == DBTP_BPRED_TAGE) {
		struct tage *t = calloc(1, sizeof(*t));

		if (!t) {
			free(b);
			return NULL;
		}
		for (unsigned i = 0; i < 1u << DBTP_TAGE_BASE_BITS; i++)
			t->base[i] = 1;
		t->rng = 0x2545f491u;
		b->tage = t;
	}
	return b;
}

void bpred_free(bpred *b)
{
	if (b)
		free(b->tage);
	free(b);
}

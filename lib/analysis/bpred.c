/* SPDX-License-Identifier: MIT */
/*
 * bpred.c - a predictor made and freed (gshare's, the indirect tables' and
 * the return stack's workings are inline in bpred.h), the TAGE and the
 * ITTAGE.
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
 *
 * The ITTAGE (Seznec's indirect-target TAGE, in a small form), for
 * indirect jumps and calls along with the TAGE: the last-target table of
 * bpred.h as its base, and DBTP_ITTAGE_TABLES tables of 2^DBTP_ITTAGE_BITS
 * entries, table t indexed and tagged as the TAGE's by the address and the
 * last ittage_hist[t] bits of a history to which each conditional branch
 * adds its outcome and each indirect jump or call DBTP_ITTAGE_TARGET_BITS
 * bits of its target; each entry a DBTP_ITTAGE_TAG_BITS tag, a target, a
 * 2-bit confidence and a 2-bit usefulness.
 *  - The provider, the longest hit, predicts its target, unless its
 *    confidence is 0 and there is an alternative (the next longest hit,
 *    or the base's entry for this address): then the alternative does.
 *  - The provider's confidence grows when its target was right; when
 *    wrong it shrinks, or at 0 the entry takes the target.  Its
 *    usefulness grows when it was right and the alternative wrong, and
 *    shrinks in the opposite case.
 *  - A misprediction takes an entry above the provider as the TAGE does,
 *    with the target and confidence 0; usefulness is halved every
 *    2^DBTP_TAGE_AGE_BITS indirect branches; the base always keeps the
 *    last target.
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

/* The ITTAGE's tables and histories (its rules at the head of this file). */
#define IT_NT DBTP_ITTAGE_TABLES
#define IIW DBTP_ITTAGE_BITS
#define ITW DBTP_ITTAGE_TAG_BITS
#define IT_RING 512 /* history bits kept: above the longest history */

static const unsigned ittage_hist[IT_NT] = {8, 16, 32, 64, 128, 256};

struct ittage_entry {
	uint64_t target;
	uint16_t tag;	/* as the TAGE's */
	uint8_t ctr, u; /* confidence 0-3, usefulness 0-3 */
};

struct ittage {
	struct ittage_entry t[IT_NT][1u << IIW];
	uint32_t fi[IT_NT], ft[IT_NT], ft2[IT_NT];
	uint8_t hist[IT_RING];
	unsigned head;
	uint32_t rng;
	uint64_t n;
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
	struct ittage it; /* for indirect jumps and calls */
};

/* @v, of @w bits, rotated up by @r (below @w): each outcome @r older. */
static inline uint32_t rotw(uint32_t v, unsigned r, unsigned w)
{
	return r ? ((v << r) | (v >> (w - r))) & ((1u << w) - 1) : v;
}

/* Take the @nb outcomes @in (bit j the one j ago, after them) into the
 * @ring outcomes of @hist (the newest at *@head) and into the folds of @n
 * tables, @iw index and @tw tag bits wide, and the ones now len[k] to
 * len[k] + @nb - 1 old out of table k's.  Inline, so that each
 * predictor's widths are known when compiling. */
static inline __attribute__((always_inline)) void
hist_push(uint8_t *hist, unsigned ring, unsigned *head, uint32_t *fi,
	  uint32_t *ft, uint32_t *ft2, const unsigned *len, unsigned n,
	  unsigned iw, unsigned tw, unsigned in, unsigned nb)
{
	*head = (*head + ring - nb) % ring;
#pragma GCC unroll 8
	for (unsigned j = 0; j < nb; j++)
		hist[(*head + j) % ring] = (uint8_t)(in >> j & 1);
#pragma GCC unroll 8
	for (unsigned k = 0; k < n; k++) {
		unsigned h = len[k], out = 0;

#pragma GCC unroll 8
		for (unsigned j = 0; j < nb; j++)
			out |= (unsigned)hist[(*head + h + j) % ring] << j;
		fi[k] = rotw(fi[k], nb, iw) ^ in ^ rotw(out, h % iw, iw);
		ft[k] = rotw(ft[k], nb, tw) ^ in ^ rotw(out, h % tw, tw);
		ft2[k] = rotw(ft2[k], nb, tw - 1) ^ in ^
			 rotw(out, h % (tw - 1), tw - 1);
	}
}

static void tage_push(struct tage *t, unsigned in)
{
	hist_push(t->hist, HIST_RING, &t->head, t->fi, t->ft, t->ft2, tage_hist,
		  NT, IW, TW, in, 1);
}

static void ittage_push(struct ittage *t, unsigned in)
{
	hist_push(t->hist, IT_RING, &t->head, t->fi, t->ft, t->ft2, ittage_hist,
		  IT_NT, IIW, ITW, in, 1);
}

static int sat(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static unsigned next_random(uint32_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 17;
	*rng ^= *rng << 5;
	return *rng;
}

/* Table k's index and tag of address @a under its folds. */
static inline uint32_t tbl_index(uint64_t a, unsigned k, uint32_t fi,
				 unsigned iw)
{
	return (uint32_t)(a ^ (a >> (iw - k)) ^ fi) & ((1u << iw) - 1);
}

static inline uint16_t tbl_tag(uint64_t a, uint32_t ft, uint32_t ft2,
			       unsigned tw)
{
	return (uint16_t)(((a ^ ft ^ (ft2 << 1)) & ((1u << tw) - 1)) | 0x8000);
}

/* The tables of the longest and next longest history among those whose
 * entry matched (bit k of @hits: table k), -1 where there are none. */
static inline void provider(unsigned hits, int *prov, int *alt)
{
	*prov = *alt = -1;
	if (hits) {
		*prov = 31 - __builtin_clz(hits);
		hits &= ~(1u << *prov);
		*alt = hits ? 31 - __builtin_clz(hits) : -1;
	}
}

/* After a misprediction by table @prov (-1: the base), the table above it
 * (of @n, their entries' usefulness @u[k]) to take an entry in: the first
 * entry of usefulness 0, or the second when a pseudo-random bit says so;
 * -1 if every one is useful. */
static int alloc_table(const uint8_t *u, int prov, int n, uint32_t *rng)
{
	int first = -1, second = -1;

	for (int k = prov + 1; k < n && second < 0; k++)
		if (!u[k]) {
			if (first < 0)
				first = k;
			else
				second = k;
		}
	if (second >= 0 && (next_random(rng) & 1))
		first = second;
	return first;
}

int tage_cond(struct tage *t, uint64_t a, int taken)
{
	uint32_t ix[NT];
	uint16_t tg[NT];
	unsigned hits = 0;
	int prov, alt, pred, alt_pred, prov_pred = 0, fresh;
	uint8_t *b = &t->base[a & ((1u << DBTP_TAGE_BASE_BITS) - 1)];
	struct tage_entry *e = NULL;

	taken = !!taken;
#pragma GCC unroll 8
	for (unsigned k = 0; k < NT; k++) {
		ix[k] = tbl_index(a, k, t->fi[k], IW);
		tg[k] = tbl_tag(a, t->ft[k], t->ft2[k], TW);
		hits |= (unsigned)(t->t[k][ix[k]].tag == tg[k]) << k;
	}
	provider(hits, &prov, &alt);
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
		uint8_t u[NT];
		int k;

		for (k = prov + 1; k < NT; k++)
			u[k] = t->t[k][ix[k]].u;
		k = alloc_table(u, prov, NT, &t->rng);
		if (k >= 0) {
			struct tage_entry *n = &t->t[k][ix[k]];

			n->tag = tg[k];
			n->ctr = taken ? 4 : 3;
			n->u = 0;
		} else
			for (k = prov + 1; k < NT; k++)
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
	ittage_push(&t->it, (unsigned)taken);
	return pred != taken;
}

int tage_indirect(struct tage *tage, struct bpred_btb *base, uint64_t pc,
		  uint64_t a, uint64_t target, unsigned shift)
{
	struct ittage *t = &tage->it;
	uint32_t ix[IT_NT];
	uint16_t tg[IT_NT];
	unsigned hits = 0;
	int prov, alt, miss, prov_ok = 0, alt_ok;
	int alt_known = base->pc == pc + 1;
	uint64_t alt_pred = base->target, h;
	struct ittage_entry *e = NULL;

#pragma GCC unroll 8
	for (unsigned k = 0; k < IT_NT; k++) {
		ix[k] = tbl_index(a, k, t->fi[k], IIW);
		tg[k] = tbl_tag(a, t->ft[k], t->ft2[k], ITW);
		hits |= (unsigned)(t->t[k][ix[k]].tag == tg[k]) << k;
	}
	provider(hits, &prov, &alt);
	if (alt >= 0) {
		alt_known = 1;
		alt_pred = t->t[alt][ix[alt]].target;
	}
	alt_ok = alt_known && alt_pred == target;
	miss = !alt_ok;
	if (prov >= 0) {
		e = &t->t[prov][ix[prov]];
		prov_ok = e->target == target;
		if (e->ctr || !alt_known)
			miss = !prov_ok;
	}

	if (miss && prov < IT_NT - 1) {
		uint8_t u[IT_NT];
		int k;

		for (k = prov + 1; k < IT_NT; k++)
			u[k] = t->t[k][ix[k]].u;
		k = alloc_table(u, prov, IT_NT, &t->rng);
		if (k >= 0) {
			struct ittage_entry *n = &t->t[k][ix[k]];

			n->target = target;
			n->tag = tg[k];
			n->ctr = 0;
			n->u = 0;
		} else
			for (k = prov + 1; k < IT_NT; k++)
				t->t[k][ix[k]].u--;
	}

	if (e) {
		if (prov_ok != alt_ok)
			e->u = (uint8_t)sat(e->u + (prov_ok ? 1 : -1), 0, 3);
		if (prov_ok)
			e->ctr = (uint8_t)sat(e->ctr + 1, 0, 3);
		else if (e->ctr)
			e->ctr--;
		else
			e->target = target;
	}
	base->pc = pc + 1;
	base->target = target;

	if (!(++t->n & ((1u << DBTP_TAGE_AGE_BITS) - 1)))
		for (int k = 0; k < IT_NT; k++)
			for (uint32_t i = 0; i < 1u << IIW; i++)
				t->t[k][i].u >>= 1;
	h = target >> shift;
	h ^= h >> DBTP_ITTAGE_TARGET_BITS ^ h >> (2 * DBTP_ITTAGE_TARGET_BITS);
	hist_push(t->hist, IT_RING, &t->head, t->fi, t->ft, t->ft2, ittage_hist,
		  IT_NT, IIW, ITW,
		  (unsigned)h & ((1u << DBTP_ITTAGE_TARGET_BITS) - 1),
		  DBTP_ITTAGE_TARGET_BITS);
	return miss;
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
		t->rng = t->it.rng = 0x2545f491u;
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

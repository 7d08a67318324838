/* SPDX-License-Identifier: MIT */
/*
 * pred.c - the predictor state the chunk encoder and decoder keep in step:
 * the last successor of every block id and the last address and stride of
 * every memory-access slot (block id, access index) within one chunk.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/format.h"

void dbtp_pred_reset(struct dbtp_pred *p)
{
	p->gen++;
	if (p->gen == 0) { /* wrapped: forget everything for real */
		for (size_t i = 0; i < p->cap; i++)
			p->succ[i].gen = 0;
		for (size_t i = 0; i < p->nslots; i++)
			p->slots[i].gen = 0;
		p->gen = 1;
	}
	p->used = 0;
	p->last_addr = 0;
}

int dbtp_pred_grow(struct dbtp_pred *p, uint32_t id)
{
	size_t cap = p->cap ? p->cap : 1024;
	struct dbtp_succ *s;

	while (cap <= id)
		cap *= 2;
	s = realloc(p->succ, cap * sizeof(*s));
	if (!s)
		return -1;
	memset(s + p->cap, 0, (cap - p->cap) * sizeof(*s));
	p->succ = s;
	p->cap = cap;
	return 0;
}

static size_t slot_hash(uint64_t key, size_t mask)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key >> 32) & mask;
}

static int slots_grow(struct dbtp_pred *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 1024;
	struct dbtp_slot *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < p->nslots; i++) {
		struct dbtp_slot *o = &p->slots[i];
		size_t h;

		if (o->gen != p->gen)
			continue;
		h = slot_hash(o->key, n - 1);
		while (s[h].gen == p->gen)
			h = (h + 1) & (n - 1);
		s[h] = *o;
	}
	free(p->slots);
	p->slots = s;
	p->nslots = n;
	return 0;
}

struct dbtp_slot *dbtp_pred_slot(struct dbtp_pred *p, uint64_t key, int *fresh)
{
	size_t h, mask;

	if ((p->used + 1) * 2 > p->nslots && slots_grow(p))
		return NULL;
	mask = p->nslots - 1;
	for (h = slot_hash(key, mask);; h = (h + 1) & mask) {
		struct dbtp_slot *s = &p->slots[h];

		if (s->gen != p->gen) {
			s->gen = p->gen;
			s->key = key;
			s->last = 0;
			s->stride = 0;
			p->used++;
			*fresh = 1;
			return s;
		}
		if (s->key == key) {
			*fresh = 0;
			return s;
		}
	}
}

void dbtp_pred_free(struct dbtp_pred *p)
{
	free(p->succ);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

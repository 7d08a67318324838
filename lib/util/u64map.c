/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "util/u64map.h"

static size_t hash(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

static uint64_t *probe(const struct dbtp_u64map *m, uint64_t key, int *found)
{
	size_t h = hash(key + 1, m->n - 1);

	while (m->key[h] && m->key[h] != key + 1)
		h = (h + 1) & (m->n - 1);
	*found = m->key[h] != 0;
	return &m->key[h];
}

uint64_t *dbtp_u64map_find(const struct dbtp_u64map *m, uint64_t key)
{
	uint64_t *k;
	int found;

	if (!m->n)
		return NULL;
	k = probe(m, key, &found);
	return found ? &m->val[k - m->key] : NULL;
}

uint64_t *dbtp_u64map_slot(struct dbtp_u64map *m, uint64_t key)
{
	uint64_t *k;
	int found;

	if ((m->used + 1) * 2 > m->n) {
		struct dbtp_u64map g = {0};

		g.n = m->n ? m->n * 2 : 1024;
		g.key = calloc(g.n, sizeof(*g.key));
		g.val = calloc(g.n, sizeof(*g.val));
		if (!g.key || !g.val) {
			free(g.key);
			free(g.val);
			return NULL;
		}
		for (size_t i = 0; i < m->n; i++)
			if (m->key[i]) {
				k = probe(&g, m->key[i] - 1, &found);
				*k = m->key[i];
				g.val[k - g.key] = m->val[i];
				g.used++;
			}
		dbtp_u64map_free(m);
		*m = g;
	}
	k = probe(m, key, &found);
	if (!found) {
		*k = key + 1;
		m->val[k - m->key] = 0;
		m->used++;
	}
	return &m->val[k - m->key];
}

void dbtp_u64map_free(struct dbtp_u64map *m)
{
	free(m->key);
	free(m->val);
	m->key = m->val = NULL;
	m->n = m->used = 0;
}

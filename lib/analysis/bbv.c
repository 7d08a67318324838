/* SPDX-License-Identifier: MIT */
/*
 * bbv.c - basic block vectors from a block stream.
 *
 * While streaming, each thread's interval is a sparse vector of translation
 * block (TB) executions; closed intervals are kept as (TB, executions)
 * lists, the size of the .bb output itself.  At the end the complete block
 * table tells where basic blocks start (every TB start address is a leader;
 * a TB containing another's start splits there), ids are given in order of
 * first appearance, and each TB execution adds executions x instructions to
 * each basic block it covers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/bbv.h"
#include "dbtp/bbvfile.h"
#include "util/buf.h"
#include "util/u64map.h"

struct bthread {
	uint64_t *execs; /* current interval, by TB id */
	uint32_t *touched;
	size_t ntouched, cap;
	/* instructions so far, as QEMU counts them (a phantom page-crossing
	 * instruction included: the plugin cuts live intervals by that
	 * count, and both paths must cut alike); end of this interval */
	uint64_t insns, end;
	const struct dbtp_block *prev;
	/* closed intervals: entries [ivl[i], ivl[i+1]) of tb/cnt */
	uint32_t *tb;
	uint64_t *cnt;
	size_t n, ncap, cntcap;
	size_t *ivl;
	size_t nivl, ivlcap;
};

struct piece {		 /* a basic block's part of a TB */
	uint32_t bb;	 /* basic block index (0-based) */
	uint32_t ninsns; /* instructions of this piece */
};

struct bb {
	uint64_t addr;
	uint32_t ninsns, tb;
	uint64_t tb_offset;
};

struct dbtp_bbvgen {
	struct dbtp_bbv_opts o;
	enum dbtp_arch arch;
	struct bthread *th;
	uint32_t nth;
	/* after finish */
	uint32_t *piece_first, *piece_count; /* by TB id */
	struct piece *pieces;
	size_t npieces;
	struct bb *bbs;
	uint32_t nbbs;
	uint32_t *bb_id; /* bb index -> id (1..) by first appearance */
	uint32_t *bb_of; /* id -> bb index */
	uint32_t nids;
	int finished;
};

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "out of memory");
}

#define GROW(p, cap, need)                                                     \
	({                                                                     \
		int r_ = 0;                                                    \
		if ((need) > (cap)) {                                          \
			size_t c_ = (cap) ? (cap) : 16;                        \
			void *n_;                                              \
			while (c_ < (need))                                    \
				c_ *= 2;                                       \
			n_ = realloc((p), c_ * sizeof(*(p)));                  \
			if (n_) {                                              \
				(p) = n_;                                      \
				(cap) = c_;                                    \
			} else {                                               \
				r_ = -1;                                       \
			}                                                      \
		}                                                              \
		r_;                                                            \
	})

int dbtp_bbvgen_new(dbtp_bbvgen **out, const struct dbtp_bbv_opts *o,
		    enum dbtp_arch arch, dbtp_err *err)
{
	dbtp_bbvgen *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return nomem(err);
	g->o = *o;
	if (!g->o.interval)
		g->o.interval = 100000000;
	g->arch = arch;
	*out = g;
	return 0;
}

static struct bthread *thread(dbtp_bbvgen *g, uint32_t num, dbtp_err *err)
{
	if (num >= g->nth) {
		struct bthread *t = realloc(g->th, (num + 1) * sizeof(*t));

		if (!t) {
			nomem(err);
			return NULL;
		}
		memset(t + g->nth, 0, (num + 1 - g->nth) * sizeof(*t));
		for (uint32_t i = g->nth; i <= num; i++)
			t[i].end = g->o.interval;
		g->th = t;
		g->nth = num + 1;
	}
	return &g->th[num];
}

/* Room for one more closed interval of @n entries in @t's storage. */
static int interval_room(struct bthread *t, size_t n, dbtp_err *err)
{
	if (GROW(t->tb, t->ncap, t->n + n) ||
	    GROW(t->cnt, t->cntcap, t->n + n) ||
	    GROW(t->ivl, t->ivlcap, t->nivl + 2))
		return nomem(err);
	if (!t->nivl)
		t->ivl[t->nivl++] = 0;
	return 0;
}

static int close_interval(struct bthread *t, dbtp_err *err)
{
	if (interval_room(t, t->ntouched, err))
		return -1;
	for (size_t i = 0; i < t->ntouched; i++) {
		uint32_t id = t->touched[i];

		t->tb[t->n] = id;
		t->cnt[t->n++] = t->execs[id];
		t->execs[id] = 0;
	}
	t->ntouched = 0;
	t->ivl[t->nivl++] = t->n;
	return 0;
}

int dbtp_bbvgen_block(dbtp_bbvgen *g, uint32_t num, const struct dbtp_block *b,
		      dbtp_err *err)
{
	struct bthread *t = thread(g, num, err);
	const struct dbtp_block *prev;
	uint32_t ninsns = b->ninsns;

	if (!t)
		return -1;
	prev = t->prev;
	t->prev = b;
	ninsns =
	    dbtp_bbv_block_insns(prev, b, g->arch, g->o.rep_per_instruction);
	if (!ninsns && b->ninsns)
		return 0;
	if (b->id >= t->cap) {
		size_t old = t->cap, cap = old ? old : 1024;
		uint64_t *e;

		while (cap <= b->id)
			cap *= 2;
		e = realloc(t->execs, cap * sizeof(*e));
		if (!e)
			return nomem(err);
		memset(e + old, 0, (cap - old) * sizeof(*e));
		t->execs = e;
		t->cap = cap;
		if (!(t->touched =
			  realloc(t->touched, cap * sizeof(*t->touched))))
			return nomem(err);
	}
	if (!t->execs[b->id]++)
		t->touched[t->ntouched++] = b->id;
	t->insns += ninsns + b->phantom;
	if (dbtp_interval_cut(&t->end, t->insns, g->o.interval) &&
	    close_interval(t, err))
		return -1;
	return 0;
}

int dbtp_bbvgen_interval(dbtp_bbvgen *g, uint32_t num, const uint32_t *ids,
			 const uint64_t *execs, uint32_t n, int last,
			 const dbtp_trace *tr, dbtp_err *err)
{
	struct bthread *t = thread(g, num, err);

	if (!t)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct dbtp_block *b = dbtp_trace_block(tr, ids[i]);

		t->insns += execs[i] * (b->ninsns + b->phantom);
	}
	/* An empty last record only marks the thread's end (its final block
	 * closed an interval): no interval, as in the block-stream path. */
	if (!n || (last && g->o.drop_partial))
		return 0;
	if (interval_room(t, n, err))
		return -1;
	memcpy(t->tb + t->n, ids, n * sizeof(*ids));
	memcpy(t->cnt + t->n, execs, n * sizeof(*execs));
	t->n += n;
	t->ivl[t->nivl++] = t->n;
	return 0;
}

/* --- numbering basic blocks -------------------------------------------- */

static size_t hash64(uint64_t x, size_t mask)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & mask;
}

/* Map of (addr, ninsns) -> bb index. */
struct bbmap {
	uint64_t *key; /* addr + 1, 0 = empty */
	uint32_t *len, *val;
	size_t n, used;
};

static int64_t bbmap_get(dbtp_bbvgen *g, struct bbmap *m, uint64_t addr,
			 uint32_t ninsns, uint32_t tb, uint64_t off)
{
	size_t h;

	if ((m->used + 1) * 2 > m->n) {
		struct bbmap t = {0};

		t.n = m->n ? m->n * 2 : 1024;
		t.key = calloc(t.n, sizeof(*t.key));
		t.len = calloc(t.n, sizeof(*t.len));
		t.val = calloc(t.n, sizeof(*t.val));
		if (!t.key || !t.len || !t.val) {
			free(t.key);
			free(t.len);
			free(t.val);
			return -1;
		}
		for (size_t i = 0; i < m->n; i++) {
			if (!m->key[i])
				continue;
			h = hash64(m->key[i] ^ m->len[i], t.n - 1);
			while (t.key[h])
				h = (h + 1) & (t.n - 1);
			t.key[h] = m->key[i];
			t.len[h] = m->len[i];
			t.val[h] = m->val[i];
			t.used++;
		}
		free(m->key);
		free(m->len);
		free(m->val);
		*m = t;
	}
	for (h = hash64((addr + 1) ^ ninsns, m->n - 1); m->key[h];
	     h = (h + 1) & (m->n - 1))
		if (m->key[h] == addr + 1 && m->len[h] == ninsns)
			return m->val[h];
	{
		struct bb *b;
		size_t cap = g->nbbs;

		b = realloc(g->bbs, (cap + 1) * sizeof(*b));
		if (!b)
			return -1;
		g->bbs = b;
		b[g->nbbs].addr = addr;
		b[g->nbbs].ninsns = ninsns;
		b[g->nbbs].tb = tb;
		b[g->nbbs].tb_offset = off;
	}
	m->key[h] = addr + 1;
	m->len[h] = ninsns;
	m->val[h] = g->nbbs;
	m->used++;
	return g->nbbs++;
}

int dbtp_bbvgen_finish(dbtp_bbvgen *g, const dbtp_trace *t, dbtp_err *err)
{
	uint32_t ntb = dbtp_trace_nblocks(t), next_id = 1;
	struct dbtp_u64map leaders = {0};
	struct bbmap map = {0};
	int r = -1;

	if (g->finished)
		return 0;
	for (uint32_t i = 0; i < g->nth; i++)
		if (g->th[i].ntouched && !g->o.drop_partial &&
		    close_interval(&g->th[i], err))
			return -1;
	g->piece_first = calloc(ntb + 1, sizeof(*g->piece_first));
	g->piece_count = calloc(ntb + 1, sizeof(*g->piece_count));
	if (!g->piece_first || !g->piece_count)
		goto oom;
	for (uint32_t id = 0; g->o.split && id < ntb; id++)
		if (!dbtp_u64map_slot(&leaders, dbtp_trace_block(t, id)->vaddr))
			goto oom;
	for (uint32_t id = 0; id < ntb; id++) {
		const struct dbtp_block *b = dbtp_trace_block(t, id);
		uint64_t addr = b->vaddr, start = b->vaddr, off = 0, soff = 0;
		uint32_t n = 0;

		g->piece_first[id] = (uint32_t)g->npieces;
		for (uint32_t k = 0; k <= b->ninsns; k++) {
			int cut =
			    k == b->ninsns ||
			    (k > 0 && dbtp_u64map_find(&leaders, addr) != NULL);

			if (cut && n) {
				int64_t bb =
				    bbmap_get(g, &map, start, n, id, soff);
				struct piece *p;

				if (bb < 0)
					goto oom;
				p = realloc(g->pieces,
					    (g->npieces + 1) * sizeof(*p));
				if (!p)
					goto oom;
				g->pieces = p;
				p[g->npieces].bb = (uint32_t)bb;
				p[g->npieces].ninsns = n;
				g->npieces++;
				g->piece_count[id]++;
				start = addr;
				soff = off;
				n = 0;
			}
			if (k < b->ninsns) {
				addr += b->sizes[k];
				off += b->sizes[k];
				n++;
			}
		}
	}
	/* Ids by first appearance: threads in order, intervals in order. */
	g->bb_id = calloc(g->nbbs + 1, sizeof(*g->bb_id));
	if (!g->bb_id)
		goto oom;
	for (uint32_t i = 0; i < g->nth; i++) {
		struct bthread *th = &g->th[i];

		for (size_t e = 0; e < th->n; e++) {
			uint32_t tb = th->tb[e];

			for (uint32_t p = 0; p < g->piece_count[tb]; p++) {
				uint32_t bb =
				    g->pieces[g->piece_first[tb] + p].bb;

				if (!g->bb_id[bb])
					g->bb_id[bb] = next_id++;
			}
		}
	}
	g->nids = next_id - 1;
	g->bb_of = calloc(next_id, sizeof(*g->bb_of));
	if (!g->bb_of)
		goto oom;
	for (uint32_t i = 0; i < g->nbbs; i++)
		if (g->bb_id[i])
			g->bb_of[g->bb_id[i]] = i;
	g->finished = 1;
	r = 0;
	goto out;
oom:
	nomem(err);
out:
	dbtp_u64map_free(&leaders);
	free(map.key);
	free(map.len);
	free(map.val);
	return r;
}

uint32_t dbtp_bbvgen_nthreads(const dbtp_bbvgen *g)
{
	return g->nth;
}

uint64_t dbtp_bbvgen_nintervals(const dbtp_bbvgen *g, uint32_t thread)
{
	if (thread >= g->nth || !g->th[thread].nivl)
		return 0;
	return g->th[thread].nivl - 1;
}

uint64_t dbtp_bbvgen_insns(const dbtp_bbvgen *g, uint32_t thread)
{
	return thread < g->nth ? g->th[thread].insns : 0;
}

uint32_t dbtp_bbvgen_nbbs(const dbtp_bbvgen *g)
{
	return g->nids;
}

int dbtp_bbvgen_bb(const dbtp_bbvgen *g, uint32_t id, uint64_t *addr,
		   uint32_t *ninsns, uint32_t *tb, uint64_t *tb_offset)
{
	const struct bb *b;

	if (!g->finished || id < 1 || id > g->nids)
		return -1;
	b = &g->bbs[g->bb_of[id]];
	*addr = b->addr;
	*ninsns = b->ninsns;
	*tb = b->tb;
	*tb_offset = b->tb_offset;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int dbtp_bbvgen_format(const dbtp_bbvgen *g, uint32_t thread,
		       struct dbtp_buf *out, dbtp_err *err)
{
	const struct bthread *th;
	uint64_t *acc = NULL, *cnt = NULL;
	uint32_t *ids = NULL;
	size_t nids;
	int r = -1;

	if (!g->finished || thread >= g->nth)
		return dbtp_err_set(err, EINVAL, "no such thread in the BBV");
	th = &g->th[thread];
	acc = calloc(g->nbbs + 2, sizeof(*acc));
	cnt = calloc(g->nbbs + 2, sizeof(*cnt));
	ids = calloc(g->nbbs + 2, sizeof(*ids));
	if (!acc || !cnt || !ids)
		goto oom;
	for (size_t i = 0; i + 1 < th->nivl; i++) {
		nids = 0;
		for (size_t e = th->ivl[i]; e < th->ivl[i + 1]; e++) {
			uint32_t tb = th->tb[e];

			for (uint32_t p = 0; p < g->piece_count[tb]; p++) {
				const struct piece *pc =
				    &g->pieces[g->piece_first[tb] + p];
				uint32_t id = g->bb_id[pc->bb];

				if (!acc[id])
					ids[nids++] = id;
				acc[id] += th->cnt[e] * pc->ninsns;
			}
		}
		qsort(ids, nids, sizeof(*ids), cmp_u32);
		for (size_t k = 0; k < nids; k++) {
			cnt[k] = acc[ids[k]];
			acc[ids[k]] = 0;
		}
		if (dbtp_bbv_format_line(ids, cnt, nids, out))
			goto oom;
	}
	r = 0;
	goto out;
oom:
	nomem(err);
out:
	free(acc);
	free(cnt);
	free(ids);
	return r;
}

void dbtp_bbvgen_free(dbtp_bbvgen *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; i < g->nth; i++) {
		free(g->th[i].execs);
		free(g->th[i].touched);
		free(g->th[i].tb);
		free(g->th[i].cnt);
		free(g->th[i].ivl);
	}
	free(g->th);
	free(g->piece_first);
	free(g->piece_count);
	free(g->pieces);
	free(g->bbs);
	free(g->bb_id);
	free(g->bb_of);
	free(g);
}

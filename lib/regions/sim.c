/* SPDX-License-Identifier: MIT */
/*
 * sim.c - one region formation technique over the basic-block stream.
 *
 * The code cache is an automaton: a region is a graph of nodes (basic
 * blocks; a block may appear at several nodes), entered only at its entry
 * nodes.  A thread is either inside a region at a node or in the
 * "interpreter".  In a region, a block that is a successor of the current
 * node moves the thread along an internal edge; any other block is an exit
 * (final if the node ends a recorded path, else a side exit) and is then
 * treated as in the interpreter: it may enter a region at an entry node, or
 * it is profiled and may start or extend a recording.  doc/dbtprof-regions.md
 * states each technique's rules; the code follows it section by section.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/disasm.h"
#include "regions/internal.h"
#include "util/u64map.h"

enum { REC_NONE, REC_PATH, REC_TREE };

struct node {
	uint32_t bb, region;
	uint32_t edge; /* first internal out-edge, NONE if none */
	uint8_t final, entry;
};

struct nedge {
	uint32_t to, next;
};

struct region {
	uint32_t head; /* first entry node */
	uint32_t first, nnodes;
	uint32_t merged_into; /* NONE while in the code cache */
	uint32_t seg;
	uint32_t pred; /* LEF: first predecessor edge */
	uint8_t by_call;
	uint64_t static_insns, entries, completions, side_exits, insns;
};

struct rthread {
	uint32_t cur; /* node, or NONE in the interpreter */
	int rec;      /* REC_* */
	uint32_t head, attach;
	int head_call;
	uint32_t *buf;
	size_t n, cap;
	uint64_t insns;
	uint32_t inner;
	/* LEI history: the last lei_buffer interpreted blocks, NONE where a
	 * region was entered */
	uint32_t *ring;
	uint64_t pos, cut;
};

struct rsim {
	const struct rcode *c;
	const struct rcfg *g;
	enum dbtp_technique tech;
	int seg;
	struct dbtp_region_params p;
	uint32_t hot;
	struct node *nodes;
	uint32_t nnodes, cap_nodes;
	struct nedge *edges;
	uint32_t nedges, cap_edges;
	struct region *reg;
	uint32_t nreg, cap_reg;
	uint32_t *entry;	     /* per bb: entry node or NONE */
	uint32_t *counter;	     /* per bb */
	uint8_t *counted;	     /* per bb: 1 once it had a counter */
	uint8_t *busy;		     /* per bb: a thread records from it */
	struct dbtp_u64map exit_ctr; /* TT: node << 32 | bb -> count */
	/* MRET2: per bb the first pass's path in pool, NONE if none */
	uint32_t *first_path, *pool;
	size_t npool, cap_pool;
	/* LEI: per bb the ring position (+1) of its last taken arrival, and
	 * the thread whose ring that is */
	uint64_t *last_pos;
	uint32_t *last_th;
	/* LEF: region predecessor edges (node -> region), deduplicated */
	struct pedge {
		uint32_t from, to, next;
	} * pe;
	uint32_t npe, cap_pe;
	struct dbtp_u64map pe_seen;
	/* LEF: regions ending in a return not merged yet */
	uint32_t *pending;
	uint32_t npending, cap_pending;
	/* searches (NETPlus, LEF) */
	uint32_t *mark, *parent, *queue, stamp;
	struct rthread *th;
	uint32_t nth;
	uint64_t insns, transitions, recordings, aborted, counters;
	/* after rsim_finish() */
	uint32_t *order; /* alive regions, hottest first */
	uint32_t nalive;
	uint32_t *scratch, *local;
	uint32_t *rfirst, *rnodes; /* per alive region: its nodes, head first */
};

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "regions: out of memory");
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	void *np;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? 2 * (size_t)*cap : 256;
	while (nc < need)
		nc *= 2;
	if (nc > UINT32_MAX - 1)
		return -1;
	np = realloc(*p, nc * size);
	if (!np)
		return -1;
	*p = np;
	*cap = (uint32_t)nc;
	return 0;
}

static const struct rbb *bbof(const struct rsim *s, uint32_t bb)
{
	return &s->c->bb[bb];
}

/* --- code cache ---------------------------------------------------------- */

static uint32_t add_node(struct rsim *s, uint32_t bb, uint32_t region)
{
	struct node *n;

	if (grow((void **)&s->nodes, &s->cap_nodes, s->nnodes + 1,
		 sizeof(*s->nodes)))
		return NONE;
	n = &s->nodes[s->nnodes];
	n->bb = bb;
	n->region = region;
	n->edge = NONE;
	n->final = n->entry = 0;
	s->reg[region].nnodes++;
	s->reg[region].static_insns += bbof(s, bb)->ninsns;
	return s->nnodes++;
}

static int add_edge(struct rsim *s, uint32_t from, uint32_t to)
{
	for (uint32_t e = s->nodes[from].edge; e != NONE; e = s->edges[e].next)
		if (s->edges[e].to == to)
			return 0;
	if (grow((void **)&s->edges, &s->cap_edges, s->nedges + 1,
		 sizeof(*s->edges)))
		return -1;
	s->edges[s->nedges].to = to;
	s->edges[s->nedges].next = s->nodes[from].edge;
	s->nodes[from].edge = s->nedges++;
	return 0;
}

static uint32_t new_region(struct rsim *s, int by_call)
{
	struct region *r;

	if (grow((void **)&s->reg, &s->cap_reg, s->nreg + 1, sizeof(*s->reg)))
		return NONE;
	r = &s->reg[s->nreg];
	memset(r, 0, sizeof(*r));
	r->head = NONE;
	r->first = s->nnodes;
	r->merged_into = NONE;
	r->pred = NONE;
	r->by_call = (uint8_t)by_call;
	return s->nreg++;
}

/* Hang @n blocks @path from node @from (NONE: they start a new region
 * @region, the first becoming its entry); the last node ends a path. */
static int add_path(struct rsim *s, uint32_t region, uint32_t from,
		    const uint32_t *path, size_t n)
{
	uint32_t prev = from;

	for (size_t i = 0; i < n; i++) {
		uint32_t k = add_node(s, path[i], region);

		if (k == NONE)
			return -1;
		if (prev == NONE) {
			s->nodes[k].entry = 1;
			s->entry[path[i]] = k;
			s->reg[region].head = k;
			s->reg[region].seg = bbof(s, path[i])->seg;
		} else if (add_edge(s, prev, k)) {
			return -1;
		}
		prev = k;
	}
	s->nodes[prev].final = 1;
	return 0;
}

static struct rthread *thread(struct rsim *s, uint32_t th)
{
	if (th >= s->nth) {
		uint32_t n = th + 1 > 2 * s->nth ? th + 1 : 2 * s->nth;
		struct rthread *t = realloc(s->th, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + s->nth, 0, (n - s->nth) * sizeof(*t));
		for (uint32_t i = s->nth; i < n; i++)
			t[i].cur = NONE;
		s->th = t;
		s->nth = n;
	}
	return &s->th[th];
}

/* --- recording ----------------------------------------------------------- */

static int push(struct rthread *t, uint32_t bb, uint32_t ninsns)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		uint32_t *b = realloc(t->buf, cap * sizeof(*b));

		if (!b)
			return -1;
		t->buf = b;
		t->cap = cap;
	}
	t->buf[t->n++] = bb;
	t->insns += ninsns;
	return 0;
}

static int start(struct rsim *s, struct rthread *t, int kind, uint32_t bb,
		 uint32_t attach, unsigned how)
{
	t->rec = kind;
	t->head = kind == REC_TREE && attach != NONE
		      ? s->nodes[s->reg[s->nodes[attach].region].head].bb
		      : bb;
	t->attach = attach;
	t->head_call = (how & TR_CALL) != 0;
	t->n = 0;
	t->insns = 0;
	t->inner = 0;
	if (kind == REC_PATH)
		s->busy[bb] = 1;
	s->recordings++;
	return push(t, bb, bbof(s, bb)->ninsns);
}

static void abandon(struct rsim *s, struct rthread *t)
{
	if (t->rec == REC_PATH)
		s->busy[t->head] = 0;
	t->rec = REC_NONE;
	s->aborted++;
}

/* NETPlus: a path of at most depth blocks from @from's successor @x back
 * to @head over the observed control flow, avoiding other regions' entries
 * and (segmented) other segments.  Returns its length in s->scratch, 0 if
 * none. */
static uint32_t search_back(struct rsim *s, uint32_t x, uint32_t head)
{
	uint32_t qh = 0, qt = 0, depth_end, depth = 1, seg = bbof(s, head)->seg;

	if (++s->stamp == 0) {
		memset(s->mark, 0, s->c->nbb * sizeof(*s->mark));
		s->stamp = 1;
	}
	s->mark[x] = s->stamp;
	s->parent[x] = NONE;
	s->queue[qt++] = x;
	depth_end = qt;
	while (qh < qt) {
		uint32_t y = s->queue[qh++];

		for (uint32_t e = s->g->first[y]; e != NONE;
		     e = s->g->e[e].next) {
			uint32_t z = s->g->e[e].to;

			if (z == head) { /* found: unwind into scratch */
				uint32_t n = 0;

				for (uint32_t v = y; v != NONE;
				     v = s->parent[v])
					n++;
				for (uint32_t v = y, i = n; v != NONE;
				     v = s->parent[v])
					s->scratch[--i] = v;
				return n;
			}
			if (depth >= s->p.netplus_depth ||
			    s->mark[z] == s->stamp || s->entry[z] != NONE ||
			    (s->seg && bbof(s, z)->seg != seg))
				continue;
			s->mark[z] = s->stamp;
			s->parent[z] = y;
			s->queue[qt++] = z;
		}
		if (qh == depth_end) {
			depth++;
			depth_end = qt;
		}
	}
	return 0;
}

static int netplus_extend(struct rsim *s, uint32_t r)
{
	uint32_t first = s->reg[r].first, last = first + s->reg[r].nnodes;
	uint32_t head = s->nodes[s->reg[r].head].bb;

	for (uint32_t k = first; k < last; k++) {
		uint32_t next = k + 1 < last ? s->nodes[k + 1].bb : head;

		for (uint32_t e = s->g->first[s->nodes[k].bb]; e != NONE;
		     e = s->g->e[e].next) {
			uint32_t x = s->g->e[e].to, n;

			if (x == next || x == head || s->entry[x] != NONE ||
			    (s->seg && bbof(s, x)->seg != bbof(s, head)->seg))
				continue;
			n = search_back(s, x, head);
			if (n && add_path(s, r, k, s->scratch, n))
				return -1;
		}
	}
	return 0;
}

static uint32_t alive(const struct rsim *s, uint32_t r)
{
	while (s->reg[r].merged_into != NONE)
		r = s->reg[r].merged_into;
	return r;
}

/* LEF: @r ends in a return.  Merge the regions leading to it (backwards
 * over observed region transitions, breadth-first, at most lef_depth steps
 * and not past a region entered by a call) if they reach a function entry.
 * Returns 1 if it merged, 0 if not (yet), -1 when out of memory. */
static int lef_merge(struct rsim *s, uint32_t r)
{
	uint32_t qh = 0, qt = 0, found = s->reg[r].by_call, keep;

	if (++s->stamp == 0) {
		memset(s->mark, 0, s->c->nbb * sizeof(*s->mark));
		s->stamp = 1;
	}
	/* queue[] and mark[] hold regions here: each has an entry block of
	 * its own, so there are at most nbb of them; parent[i] is queue[i]'s
	 * depth */
	s->queue[qt++] = r;
	s->parent[0] = 0;
	s->mark[r] = s->stamp;
	while (qh < qt) {
		uint32_t x = s->queue[qh], d = s->parent[qh];

		qh++;
		if ((x != r && s->reg[x].by_call) || d >= s->p.lef_depth)
			continue;
		for (uint32_t e = s->reg[x].pred; e != NONE;
		     e = s->pe[e].next) {
			uint32_t y = alive(s, s->nodes[s->pe[e].from].region);

			if (s->mark[y] == s->stamp || qt >= s->c->nbb ||
			    (s->seg && s->reg[y].seg != s->reg[r].seg))
				continue;
			s->mark[y] = s->stamp;
			s->parent[qt] = d + 1;
			s->queue[qt++] = y;
			found |= s->reg[y].by_call;
		}
	}
	if (!found || qt < 2)
		return 0;
	keep = s->queue[0];
	for (uint32_t i = 1; i < qt; i++)
		if (s->queue[i] < keep)
			keep = s->queue[i];
	for (uint32_t i = 0; i < qt; i++) {
		uint32_t x = s->queue[i];
		struct region *k = &s->reg[keep], *m = &s->reg[x];

		if (x == keep)
			continue;
		for (uint32_t n = 0; n < s->nnodes; n++)
			if (s->nodes[n].region == x)
				s->nodes[n].region = keep;
		k->nnodes += m->nnodes;
		k->static_insns += m->static_insns;
		k->entries += m->entries;
		k->completions += m->completions;
		k->side_exits += m->side_exits;
		k->insns += m->insns;
		k->by_call |= m->by_call;
		m->merged_into = keep;
	}
	/* Transitions between members become internal edges. */
	for (uint32_t i = 0; i < qt; i++) {
		uint32_t x = s->queue[i];

		for (uint32_t e = s->reg[x].pred; e != NONE;
		     e = s->pe[e].next) {
			uint32_t from = s->pe[e].from;

			if (s->nodes[from].region == keep &&
			    add_edge(s, from, s->pe[e].to))
				return -1;
		}
	}
	/* The survivor inherits every member's predecessor list. */
	for (uint32_t i = 0; i < qt; i++) {
		uint32_t x = s->queue[i], e, last = NONE;

		if (x == keep)
			continue;
		for (e = s->reg[x].pred; e != NONE; e = s->pe[e].next)
			last = e;
		if (last != NONE) {
			s->pe[last].next = s->reg[keep].pred;
			s->reg[keep].pred = s->reg[x].pred;
			s->reg[x].pred = NONE;
		}
	}
	return 1;
}

/* LEF: the region transition graph grew; retry the pending merges. */
static int lef_retry(struct rsim *s)
{
	for (uint32_t i = 0; i < s->npending;) {
		uint32_t r = s->pending[i];
		int m = s->reg[r].merged_into != NONE ? 1 : lef_merge(s, r);

		if (m < 0)
			return -1;
		if (m)
			s->pending[i] = s->pending[--s->npending];
		else
			i++;
	}
	return 0;
}

/* A NET-style recording ended: form its region (MRET2: its first pass). */
static int end_path(struct rsim *s, struct rthread *t)
{
	uint32_t head = t->head, r;
	size_t n = t->n;

	s->busy[head] = 0;
	t->rec = REC_NONE;
	if (s->entry[head] != NONE) { /* another thread formed it */
		s->aborted++;
		return 0;
	}
	if (s->tech == DBTP_TECH_MRET2) {
		uint32_t fp = s->first_path[head];
		size_t l = 0;

		if (fp == NONE) { /* first pass: keep it, count again */
			if (s->npool + n + 1 > s->cap_pool) {
				size_t cap = 2 * (s->npool + n + 1);
				uint32_t *p =
				    realloc(s->pool, cap * sizeof(*p));

				if (!p)
					return -1;
				s->pool = p;
				s->cap_pool = cap;
			}
			s->first_path[head] = (uint32_t)s->npool;
			s->pool[s->npool++] = (uint32_t)n;
			memcpy(s->pool + s->npool, t->buf, n * sizeof(*t->buf));
			s->npool += n;
			return 0;
		}
		while (l < n && l < s->pool[fp] &&
		       s->pool[fp + 1 + l] == t->buf[l])
			l++;
		s->first_path[head] = NONE;
		n = l; /* >= 1: both start at the head */
	}
	r = new_region(s, t->head_call);
	if (r == NONE || add_path(s, r, NONE, t->buf, n))
		return -1;
	if (s->tech == DBTP_TECH_NETPLUS && netplus_extend(s, r))
		return -1;
	if (s->tech == DBTP_TECH_LEF &&
	    bbof(s, t->buf[n - 1])->kind == DBTP_BR_RET) {
		int m = lef_merge(s, r);

		if (m < 0 || (!m && grow((void **)&s->pending, &s->cap_pending,
					 s->npending + 1, sizeof(*s->pending))))
			return -1;
		if (!m)
			s->pending[s->npending++] = r;
	}
	return 0;
}

static int end_tree(struct rsim *s, struct rthread *t)
{
	uint32_t r;

	t->rec = REC_NONE;
	if (t->attach != NONE) {
		r = s->nodes[t->attach].region;
		return add_path(s, r, t->attach, t->buf, t->n);
	}
	if (s->entry[t->head] != NONE) {
		s->aborted++;
		return 0;
	}
	r = new_region(s, t->head_call);
	return r == NONE ? -1 : add_path(s, r, NONE, t->buf, t->n);
}

/* Thread @t records; @bb comes next.  Returns 1 if it joined the
 * recording, 0 if the recording ended (or was abandoned) before it. */
static int record(struct rsim *s, struct rthread *t, uint32_t bb, unsigned how)
{
	const struct rbb *b = bbof(s, bb);
	int seg_change = s->seg && b->seg != bbof(s, t->head)->seg;

	if (t->rec == REC_TREE) {
		uint64_t tree =
		    t->attach == NONE
			? 0
			: s->reg[s->nodes[t->attach].region].static_insns;

		if (bb == t->head)
			return end_tree(s, t) ? -1 : 0;
		if (((how & TR_BACKWARD) && ++t->inner > s->p.tt_inner) ||
		    seg_change ||
		    tree + t->insns + b->ninsns > s->p.tt_max_insns) {
			abandon(s, t);
			return 0;
		}
		return push(t, bb, b->ninsns) ? -1 : 1;
	}
	if ((how & TR_BACKWARD) || s->entry[bb] != NONE || bb == t->head ||
	    t->insns + b->ninsns > s->p.max_insns || seg_change ||
	    (s->tech == DBTP_TECH_LEF &&
	     ((how & TR_CALL) ||
	      bbof(s, t->buf[t->n - 1])->kind == DBTP_BR_RET)))
		return end_path(s, t) ? -1 : 0;
	return push(t, bb, b->ninsns) ? -1 : 1;
}

/* --- profiling ----------------------------------------------------------- */

static uint32_t bump(struct rsim *s, uint32_t bb)
{
	if (!s->counted[bb]) {
		s->counted[bb] = 1;
		s->counters++;
	}
	return ++s->counter[bb];
}

static void ring_push(struct rsim *s, struct rthread *t, uint32_t v)
{
	t->ring[t->pos % s->p.lei_buffer] = v;
	t->pos++;
}

/* LEI: a cycle closed at @bb, last seen at ring position @from.  Form a
 * region from the buffered iteration, up to a region entry, the size
 * limit or (segmented) a segment change. */
static int lei_form(struct rsim *s, struct rthread *t, uint32_t bb,
		    uint64_t from)
{
	uint32_t r, seg = bbof(s, bb)->seg;
	size_t n = 0;
	uint64_t insns = 0;

	for (uint64_t i = from; i < t->pos; i++) {
		uint32_t x = t->ring[i % s->p.lei_buffer];

		if (x == NONE || (n && s->entry[x] != NONE) ||
		    (n && insns + bbof(s, x)->ninsns > s->p.max_insns) ||
		    (s->seg && bbof(s, x)->seg != seg))
			break;
		insns += bbof(s, x)->ninsns;
		s->scratch[n++] = x;
	}
	t->cut = t->pos;
	s->recordings++;
	r = new_region(s, 0);
	return r == NONE ? -1 : add_path(s, r, NONE, s->scratch, n);
}

/* Thread @t arrives at @bb in the interpreter (after leaving node @from,
 * or NONE).  Returns 1 if a region with entry @bb was formed. */
static int profile(struct rsim *s, struct rthread *t, uint32_t bb, unsigned how,
		   uint32_t from)
{
	uint32_t c;

	switch (s->tech) {
	case DBTP_TECH_LEI:
		if (from != NONE) { /* exit target: as in NET */
			if (!s->busy[bb] && bump(s, bb) >= s->hot) {
				s->counter[bb] = 0;
				return start(s, t, REC_PATH, bb, NONE, how);
			}
		} else if (how & TR_TAKEN) {
			uint64_t lp = s->last_pos[bb];
			uint32_t lt = s->last_th[bb];

			s->last_pos[bb] = t->pos + 1;
			s->last_th[bb] = (uint32_t)(t - s->th);
			if ((how & TR_BACKWARD) && lp &&
			    lt == (uint32_t)(t - s->th) && lp - 1 >= t->cut &&
			    t->pos - (lp - 1) <= s->p.lei_buffer &&
			    bump(s, bb) >= s->hot) {
				s->counter[bb] = 0;
				return lei_form(s, t, bb, lp - 1) ? -1 : 1;
			}
		}
		return 0;
	case DBTP_TECH_TT:
		if (from != NONE) {
			uint64_t *v = dbtp_u64map_slot(
			    &s->exit_ctr, (uint64_t)from << 32 | bb);

			if (!v)
				return -1;
			if (!*v) { /* *v is the count + 1 once created */
				s->counters++;
				*v = 1;
			}
			if (++*v - 1 >= s->hot) {
				*v = 1;
				return start(s, t, REC_TREE, bb, from, how);
			}
		} else if ((how & TR_BACKWARD) && bump(s, bb) >= s->hot) {
			s->counter[bb] = 0;
			return start(s, t, REC_TREE, bb, NONE, how);
		}
		return 0;
	default:
		if (!(how & TR_BACKWARD) && from == NONE &&
		    !(s->tech == DBTP_TECH_LEF && (how & TR_CALL)))
			return 0;
		if (s->busy[bb])
			return 0;
		c = bump(s, bb);
		if (c < s->hot)
			return 0;
		s->counter[bb] = 0;
		return start(s, t, REC_PATH, bb, NONE, how);
	}
}

/* --- the automaton ------------------------------------------------------- */

static int enter(struct rsim *s, struct rthread *t, uint32_t bb, unsigned how,
		 uint32_t from)
{
	uint32_t k = s->entry[bb], r;

	if (k == NONE)
		return 0;
	r = s->nodes[k].region;
	if (from != NONE && s->nodes[from].region != r) {
		s->transitions++;
		if (s->tech == DBTP_TECH_LEF && !(how & (TR_CALL | TR_RET))) {
			uint64_t *v = dbtp_u64map_slot(
			    &s->pe_seen, (uint64_t)from << 32 | k);

			if (!v)
				return -1;
			if (!*v) {
				*v = 1;
				if (grow((void **)&s->pe, &s->cap_pe,
					 s->npe + 1, sizeof(*s->pe)))
					return -1;
				s->pe[s->npe].from = from;
				s->pe[s->npe].to = k;
				s->pe[s->npe].next = s->reg[r].pred;
				s->reg[r].pred = s->npe++;
				if (lef_retry(s))
					return -1;
				r = s->nodes[k].region; /* may have merged */
			}
		}
	}
	s->reg[r].entries++;
	s->reg[r].insns += bbof(s, bb)->ninsns;
	t->cur = k;
	if (s->tech == DBTP_TECH_LEI)
		ring_push(s, t, NONE);
	return 1;
}

int rsim_step(struct rsim *s, uint32_t th, uint32_t bb, unsigned how,
	      dbtp_err *err)
{
	struct rthread *t = thread(s, th);
	uint32_t from = NONE;
	int r;

	if (!t || (s->tech == DBTP_TECH_LEI && !t->ring &&
		   !(t->ring = malloc(s->p.lei_buffer * sizeof(*t->ring)))))
		return nomem(err);
	s->insns += bbof(s, bb)->ninsns;
	if (t->cur != NONE) {
		const struct node *n = &s->nodes[t->cur];
		struct region *rg;

		for (uint32_t e = n->edge; e != NONE; e = s->edges[e].next) {
			uint32_t to = s->edges[e].to;

			if (s->nodes[to].bb == bb) {
				t->cur = to;
				s->reg[s->nodes[to].region].insns +=
				    bbof(s, bb)->ninsns;
				return 0;
			}
		}
		rg = &s->reg[n->region];
		if (n->final)
			rg->completions++;
		else
			rg->side_exits++;
		from = t->cur;
		t->cur = NONE;
	}
	if (t->rec) {
		r = record(s, t, bb, how);
		if (r < 0)
			return nomem(err);
		if (r > 0) {
			if (s->tech == DBTP_TECH_LEI)
				ring_push(s, t, bb);
			return 0;
		}
	}
	r = enter(s, t, bb, how, from);
	if (r)
		return r < 0 ? nomem(err) : 0;
	r = profile(s, t, bb, how, from);
	if (r < 0)
		return nomem(err);
	if (r > 0 && !t->rec && enter(s, t, bb, how, NONE) < 0)
		return nomem(err);
	if (s->tech == DBTP_TECH_LEI && t->cur == NONE)
		ring_push(s, t, bb);
	return 0;
}

void rsim_thread_exit(struct rsim *s, uint32_t th)
{
	struct rthread *t = th < s->nth ? &s->th[th] : NULL;

	if (!t)
		return;
	if (t->rec)
		abandon(s, t);
	t->cur = NONE;
}

/* --- results ------------------------------------------------------------- */

int rsim_new(struct rsim **out, const struct rcode *c, const struct rcfg *g,
	     enum dbtp_technique tech, int segmented,
	     const struct dbtp_region_params *p, dbtp_err *err)
{
	struct rsim *s = calloc(1, sizeof(*s));
	size_t nbb = c->nbb ? c->nbb : 1;

	*out = NULL;
	if (!s)
		return nomem(err);
	s->c = c;
	s->g = g;
	s->tech = tech;
	s->seg = segmented;
	s->p = *p;
	s->hot = p->threshold[tech];
	if (tech == DBTP_TECH_MRET2) /* two passes of half the threshold */
		s->hot = (s->hot + 1) / 2;
	s->entry = malloc(nbb * sizeof(*s->entry));
	s->counter = calloc(nbb, sizeof(*s->counter));
	s->counted = calloc(nbb, 1);
	s->busy = calloc(nbb, 1);
	s->first_path = malloc(nbb * sizeof(*s->first_path));
	s->last_pos = calloc(nbb, sizeof(*s->last_pos));
	s->last_th = calloc(nbb, sizeof(*s->last_th));
	s->mark = calloc(nbb, sizeof(*s->mark));
	s->parent = malloc(nbb * sizeof(*s->parent));
	s->queue = malloc(nbb * sizeof(*s->queue));
	/* a LEI path or a NETPlus search: at most lei_buffer or nbb blocks */
	s->scratch = malloc((nbb + p->lei_buffer) * sizeof(*s->scratch));
	if (!s->entry || !s->counter || !s->counted || !s->busy ||
	    !s->first_path || !s->last_pos || !s->last_th || !s->mark ||
	    !s->parent || !s->queue || !s->scratch) {
		rsim_free(s);
		return nomem(err);
	}
	memset(s->entry, 0xff, nbb * sizeof(*s->entry));
	memset(s->first_path, 0xff, nbb * sizeof(*s->first_path));
	*out = s;
	return 0;
}

static const struct rsim *sort_sim;

static int by_heat(const void *a, const void *b)
{
	const struct region *x = &sort_sim->reg[*(const uint32_t *)a];
	const struct region *y = &sort_sim->reg[*(const uint32_t *)b];

	if (x->insns != y->insns)
		return x->insns > y->insns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Each alive region's nodes, the head first, numbered locally. */
static int list_nodes(struct rsim *s)
{
	uint32_t *ai = malloc((s->nreg ? s->nreg : 1) * sizeof(*ai));
	uint32_t *fill = calloc((size_t)s->nalive + 1, sizeof(*fill));

	s->rfirst = calloc((size_t)s->nalive + 1, sizeof(*s->rfirst));
	s->rnodes = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*s->rnodes));
	if (!ai || !fill || !s->rfirst || !s->rnodes) {
		free(ai);
		free(fill);
		return -1;
	}
	for (uint32_t i = 0; i < s->nalive; i++)
		ai[s->order[i]] = i;
	for (uint32_t x = 0; x < s->nnodes; x++)
		s->rfirst[ai[s->nodes[x].region] + 1]++;
	for (uint32_t i = 0; i < s->nalive; i++) {
		uint32_t h = s->reg[s->order[i]].head;

		s->rfirst[i + 1] += s->rfirst[i];
		s->local[h] = 0;
		s->rnodes[s->rfirst[i]] = h;
		fill[i] = 1;
	}
	for (uint32_t x = 0; x < s->nnodes; x++) {
		uint32_t i = ai[s->nodes[x].region];

		if (x == s->reg[s->order[i]].head)
			continue;
		s->local[x] = fill[i];
		s->rnodes[s->rfirst[i] + fill[i]++] = x;
	}
	free(fill);
	free(ai);
	return 0;
}

int rsim_finish(struct rsim *s, struct dbtp_region_metrics *m, dbtp_err *err)
{
	static const unsigned pcts[3] = {70, 80, 90};
	uint64_t acc = 0;
	uint32_t k = 0;

	for (uint32_t i = 0; i < s->nth; i++)
		rsim_thread_exit(s, i);
	memset(m, 0, sizeof(*m));
	m->technique = s->tech;
	m->segmented = s->seg;
	m->insns = s->insns;
	s->order = malloc((s->nreg ? s->nreg : 1) * sizeof(*s->order));
	s->local = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*s->local));
	if (!s->order || !s->local)
		return nomem(err);
	for (uint32_t r = 0; r < s->nreg; r++) {
		const struct region *x = &s->reg[r];

		if (x->merged_into != NONE)
			continue;
		s->order[s->nalive++] = r;
		m->region_insns += x->insns;
		m->static_insns += x->static_insns;
		m->entries += x->entries;
		m->completions += x->completions;
		m->side_exits += x->side_exits;
	}
	m->regions = s->nalive;
	memset(s->counted, 0, s->c->nbb);
	for (uint32_t n = 0; n < s->nnodes; n++)
		if (!s->counted[s->nodes[n].bb]) {
			s->counted[s->nodes[n].bb] = 1;
			m->distinct_insns += bbof(s, s->nodes[n].bb)->ninsns;
		}
	m->transitions = s->transitions;
	m->recordings = s->recordings;
	m->aborted = s->aborted;
	m->counters = s->counters;
	m->coverage = m->insns ? (double)m->region_insns / m->insns : NAN;
	m->completion = m->entries && s->tech != DBTP_TECH_TT
			    ? (double)m->completions / m->entries
			    : NAN;
	m->duplication = m->distinct_insns
			     ? (double)m->static_insns / m->distinct_insns
			     : NAN;
	m->dyn_size = m->entries ? (double)m->region_insns / m->entries : NAN;
	m->static_size =
	    m->regions ? (double)m->static_insns / m->regions : NAN;
	sort_sim = s;
	qsort(s->order, s->nalive, sizeof(*s->order), by_heat);
	sort_sim = NULL;
	if (list_nodes(s))
		return nomem(err);
	for (int c = 0; c < 3; c++) {
		struct dbtp_cover *cv = &m->cover[c];

		cv->pct = pcts[c];
		/* acc * 100 >= pct * insns, in integers */
		while (k < s->nalive &&
		       acc * 100 < (uint64_t)cv->pct * m->insns) {
			acc += s->reg[s->order[k]].insns;
			k++;
		}
		cv->defined =
		    m->insns && acc * 100 >= (uint64_t)cv->pct * m->insns;
		if (cv->defined) {
			cv->regions = k;
			for (uint32_t i = 0; i < k; i++)
				cv->static_insns +=
				    s->reg[s->order[i]].static_insns;
		}
	}
	return 0;
}

int rsim_region(const struct rsim *s, uint32_t i, struct dbtp_region_info *info)
{
	const struct region *r;
	const struct rbb *b;

	if (i >= s->nalive)
		return -1;
	r = &s->reg[s->order[i]];
	b = bbof(s, s->nodes[r->head].bb);
	info->id = s->order[i];
	info->entry = b->addr;
	info->tb = b->tb;
	info->tb_offset = b->tb_offset;
	info->nodes = r->nnodes;
	info->static_insns = r->static_insns;
	info->entries = r->entries;
	info->insns = r->insns;
	info->completions = r->completions;
	info->side_exits = r->side_exits;
	return 0;
}

int rsim_node(struct rsim *s, uint32_t i, uint32_t k,
	      struct dbtp_region_node *out)
{
	uint32_t ns = 0, node;

	if (i >= s->nalive || k >= s->rfirst[i + 1] - s->rfirst[i])
		return -1;
	node = s->rnodes[s->rfirst[i] + k];
	for (uint32_t e = s->nodes[node].edge; e != NONE; e = s->edges[e].next)
		s->scratch[ns++] = s->local[s->edges[e].to];
	out->addr = bbof(s, s->nodes[node].bb)->addr;
	out->ninsns = bbof(s, s->nodes[node].bb)->ninsns;
	out->final = s->nodes[node].final;
	out->entry = s->nodes[node].entry;
	out->nsucc = ns;
	out->succ = s->scratch;
	return 0;
}

void rsim_free(struct rsim *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->edges);
	free(s->reg);
	free(s->entry);
	free(s->counter);
	free(s->counted);
	free(s->busy);
	dbtp_u64map_free(&s->exit_ctr);
	dbtp_u64map_free(&s->pe_seen);
	free(s->first_path);
	free(s->pool);
	free(s->last_pos);
	free(s->last_th);
	free(s->pe);
	free(s->pending);
	free(s->mark);
	free(s->parent);
	free(s->queue);
	free(s->scratch);
	for (uint32_t i = 0; i < s->nth; i++) {
		free(s->th[i].buf);
		free(s->th[i].ring);
	}
	free(s->th);
	free(s->order);
	free(s->local);
	free(s->rfirst);
	free(s->rnodes);
	free(s);
}

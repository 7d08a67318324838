/* SPDX-License-Identifier: MIT */
/*
 * regions.c - the region simulator's driver: expands each executed
 * translation block into its basic blocks, classifies how control reached
 * each one, keeps the observed control-flow graph, and steps every
 * simulation (technique x segmented or not) in one pass.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/disasm.h"
#include "regions/internal.h"
#include "util/u64map.h"

static const char *const names[DBTP_TECH_COUNT] = {
    "net", "mret2", "lei", "tt", "netplus", "lef",
};

const char *dbtp_technique_name(enum dbtp_technique t)
{
	return (unsigned)t < DBTP_TECH_COUNT ? names[t] : "unknown";
}

int dbtp_technique_from_name(const char *name)
{
	for (int i = 0; i < DBTP_TECH_COUNT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

void dbtp_region_params_default(struct dbtp_region_params *p)
{
	memset(p, 0, sizeof(*p));
	p->threshold[DBTP_TECH_NET] = 50;
	p->threshold[DBTP_TECH_MRET2] = 50;
	p->threshold[DBTP_TECH_LEI] = 35;
	p->threshold[DBTP_TECH_TT] = 50;
	p->threshold[DBTP_TECH_NETPLUS] = 50;
	p->threshold[DBTP_TECH_LEF] = 50;
	p->max_insns = 1024;
	p->lei_buffer = 1024;
	p->tt_max_insns = 4096;
	p->tt_inner = 2;
	p->netplus_depth = 10;
	p->lef_depth = 10;
}

#define MAX_SIMS (2 * DBTP_TECH_COUNT)

struct dbtp_regions {
	struct rcode code;
	struct rcfg cfg;
	struct dbtp_u64map cfg_seen;
	int need_cfg, finished;
	struct rsim *sim[MAX_SIMS];
	struct dbtp_region_metrics m[MAX_SIMS];
	uint32_t nsims;
	uint32_t *prev; /* per thread: last basic block, NONE at the start */
	uint32_t nth;
};

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "regions: out of memory");
}

int dbtp_regions_new(dbtp_regions **out, const dbtp_trace *t,
		     const struct dbtp_regions_opts *o, dbtp_err *err)
{
	struct dbtp_region_params p = o->params;
	struct dbtp_region_params def;
	dbtp_regions *r;

	*out = NULL;
	dbtp_region_params_default(&def);
	for (int i = 0; i < DBTP_TECH_COUNT; i++)
		if (!p.threshold[i])
			p.threshold[i] = def.threshold[i];
	if (!p.max_insns || !p.lei_buffer || !p.tt_max_insns ||
	    !p.netplus_depth || !p.lef_depth)
		return dbtp_err_set(err, EINVAL,
				    "regions: limits must be positive");
	if (!(o->techniques & ((1u << DBTP_TECH_COUNT) - 1)))
		return dbtp_err_set(err, EINVAL, "regions: no technique");
	r = calloc(1, sizeof(*r));
	if (!r)
		return nomem(err);
	if (rcode_build(&r->code, t, o, err)) {
		free(r);
		return -1;
	}
	r->need_cfg = (o->techniques >> DBTP_TECH_NETPLUS) & 1;
	if (r->need_cfg) {
		r->cfg.first = malloc((r->code.nbb ? r->code.nbb : 1) *
				      sizeof(*r->cfg.first));
		if (!r->cfg.first)
			goto oom;
		memset(r->cfg.first, 0xff, r->code.nbb * sizeof(*r->cfg.first));
	}
	for (int seg = 0; seg <= (o->segmenting != DBTP_SEG_NONE); seg++)
		for (int i = 0; i < DBTP_TECH_COUNT; i++) {
			if (!((o->techniques >> i) & 1))
				continue;
			if (rsim_new(&r->sim[r->nsims], &r->code, &r->cfg,
				     (enum dbtp_technique)i, seg, &p, err)) {
				dbtp_regions_free(r);
				return -1;
			}
			r->nsims++;
		}
	*out = r;
	return 0;
oom:
	dbtp_regions_free(r);
	return nomem(err);
}

static unsigned how_reached(const struct rbb *p, const struct rbb *u)
{
	unsigned how = 0;

	if (!p)
		return TR_START;
	if (u->addr != p->addr + p->nbytes)
		how |= TR_TAKEN;
	if (p->kind == DBTP_BR_RET)
		how |= TR_RET;
	else if (p->kind == DBTP_BR_CALL && (how & TR_TAKEN))
		how |= TR_CALL;
	else if ((how & TR_TAKEN) && u->addr <= p->last)
		how |= TR_BACKWARD;
	return how;
}

static int cfg_add(dbtp_regions *r, uint32_t from, uint32_t to)
{
	struct rcfg *g = &r->cfg;
	uint64_t *seen;

	if (g->first[from] != NONE && g->e[g->first[from]].to == to)
		return 0;
	seen = dbtp_u64map_slot(&r->cfg_seen, (uint64_t)from << 32 | to);
	if (!seen)
		return -1;
	if (*seen)
		return 0;
	*seen = 1;
	if (g->ne == g->cap) {
		uint32_t cap = g->cap ? 2 * g->cap : 1024;
		struct redge *e = realloc(g->e, (size_t)cap * sizeof(*e));

		if (!e)
			return -1;
		g->e = e;
		g->cap = cap;
	}
	g->e[g->ne].to = to;
	g->e[g->ne].next = g->first[from];
	g->first[from] = g->ne++;
	return 0;
}

int dbtp_regions_block(dbtp_regions *r, uint32_t thread, uint32_t id,
		       dbtp_err *err)
{
	const struct rcode *c = &r->code;

	if (r->finished)
		return dbtp_err_set(err, EINVAL, "regions: already finished");
	if (id >= c->ntb)
		return dbtp_err_set(err, EINVAL,
				    "regions: block %u not in the block table "
				    "(%u blocks)",
				    id, c->ntb);
	if (thread >= r->nth) {
		uint32_t n = thread + 1 > 2 * r->nth ? thread + 1 : 2 * r->nth;
		uint32_t *p = realloc(r->prev, (size_t)n * sizeof(*p));

		if (!p)
			return nomem(err);
		for (uint32_t i = r->nth; i < n; i++)
			p[i] = NONE;
		r->prev = p;
		r->nth = n;
	}
	for (uint32_t k = c->tb_first[id]; k < c->tb_first[id + 1]; k++) {
		uint32_t bb = c->tb_bbs[k], prev = r->prev[thread];
		unsigned how =
		    how_reached(prev == NONE ? NULL : &c->bb[prev], &c->bb[bb]);

		if (r->need_cfg && prev != NONE && cfg_add(r, prev, bb))
			return nomem(err);
		for (uint32_t s = 0; s < r->nsims; s++)
			if (rsim_step(r->sim[s], thread, bb, how, err))
				return -1;
		r->prev[thread] = bb;
	}
	return 0;
}

void dbtp_regions_thread_exit(dbtp_regions *r, uint32_t thread)
{
	for (uint32_t s = 0; s < r->nsims; s++)
		rsim_thread_exit(r->sim[s], thread);
	if (thread < r->nth)
		r->prev[thread] = NONE;
}

int dbtp_regions_finish(dbtp_regions *r, dbtp_err *err)
{
	if (r->finished)
		return 0;
	for (uint32_t s = 0; s < r->nsims; s++)
		if (rsim_finish(r->sim[s], &r->m[s], err))
			return -1;
	r->finished = 1;
	return 0;
}

uint32_t dbtp_regions_nsims(const dbtp_regions *r)
{
	return r->nsims;
}

const struct dbtp_region_metrics *dbtp_regions_metrics(const dbtp_regions *r,
						       uint32_t sim)
{
	return r->finished && sim < r->nsims ? &r->m[sim] : NULL;
}

int dbtp_regions_region(const dbtp_regions *r, uint32_t sim, uint32_t i,
			struct dbtp_region_info *info)
{
	if (!r->finished || sim >= r->nsims)
		return -1;
	return rsim_region(r->sim[sim], i, info);
}

int dbtp_regions_node(dbtp_regions *r, uint32_t sim, uint32_t i, uint32_t k,
		      struct dbtp_region_node *node)
{
	if (!r->finished || sim >= r->nsims)
		return -1;
	return rsim_node(r->sim[sim], i, k, node);
}

void dbtp_regions_free(dbtp_regions *r)
{
	if (!r)
		return;
	for (uint32_t s = 0; s < r->nsims; s++)
		rsim_free(r->sim[s]);
	rcode_free(&r->code);
	free(r->cfg.first);
	free(r->cfg.e);
	dbtp_u64map_free(&r->cfg_seen);
	free(r->prev);
	free(r);
}

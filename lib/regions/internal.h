/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the region simulator's files share: the basic-block
 * code model (code.c), the observed control-flow graph, and one technique's
 * simulation (sim.c) driven by regions.c.
 */
#ifndef DBTP_REGIONS_INTERNAL_H
#define DBTP_REGIONS_INTERNAL_H

#include <stdint.h>

#include "dbtp/regions.h"

#define NONE UINT32_MAX

/* A basic block: a piece of a translation block between leaders. */
struct rbb {
	uint64_t addr, last; /* first and last instruction's address */
	uint32_t ninsns, nbytes;
	uint32_t tb, tb_offset; /* a translation block holding it */
	uint32_t seg;		/* segment (0 when unsegmented) */
	uint8_t kind;		/* enum dbtp_branch of its last instruction,
				   DBTP_BR_NONE where a leader split it */
};

struct rcode {
	struct rbb *bb;
	uint32_t nbb, cap_bb, ntb;
	uint32_t *tb_first; /* ntb + 1: TB i is tb_bbs[tb_first[i]..[i+1]) */
	uint32_t *tb_bbs;
};

int rcode_build(struct rcode *c, const dbtp_trace *t,
		const struct dbtp_regions_opts *o, dbtp_err *err);
void rcode_free(struct rcode *c);

/* How control reached a block from the thread's previous one. */
enum {
	TR_START = 1,	 /* the thread's first block */
	TR_TAKEN = 2,	 /* not the fall-through successor */
	TR_BACKWARD = 4, /* taken, to an address <= the branch, not by a call
			    or a return */
	TR_CALL = 8,	 /* by a call */
	TR_RET = 16,	 /* by a return */
};

/* Observed control flow, edge lists per basic block (for NETPlus). */
struct rcfg {
	uint32_t *first; /* per bb, first edge or NONE */
	struct redge {
		uint32_t to, next;
	} * e;
	uint32_t ne, cap;
};

struct rsim;

int rsim_new(struct rsim **out, const struct rcode *c, const struct rcfg *g,
	     enum dbtp_technique tech, int segmented,
	     const struct dbtp_region_params *p, dbtp_err *err);
/* Thread @th executed basic block @bb, reached as @how (TR_*). */
int rsim_step(struct rsim *s, uint32_t th, uint32_t bb, unsigned how,
	      dbtp_err *err);
void rsim_thread_exit(struct rsim *s, uint32_t th);
int rsim_finish(struct rsim *s, struct dbtp_region_metrics *m, dbtp_err *err);
/* After rsim_finish(): the regions, hottest first. */
int rsim_region(const struct rsim *s, uint32_t i,
		struct dbtp_region_info *info);
int rsim_node(struct rsim *s, uint32_t i, uint32_t k,
	      struct dbtp_region_node *node);
void rsim_free(struct rsim *s);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * code.c - the region simulator's code model: the trace's translation
 * blocks split into basic blocks at every address a block starts at, each
 * with the kind of its last instruction and its segment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/disasm.h"
#include "regions/internal.h"
#include "util/u64map.h"

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "regions: out of memory");
}

static uint32_t segment_of(const struct dbtp_regions_opts *o,
			   const dbtp_trace *t, const struct dbtp_block *b,
			   uint64_t addr, uint32_t main_file)
{
	switch (o->segmenting) {
	case DBTP_SEG_FILE:
		return b->file;
	case DBTP_SEG_MAIN:
		return main_file && b->file == main_file;
	case DBTP_SEG_RANGES:
		for (uint32_t i = 0; i < o->nranges; i++)
			if (addr >= o->ranges[i][0] && addr < o->ranges[i][1])
				return i + 1;
		return 0;
	case DBTP_SEG_NONE:
		break;
	}
	(void)t;
	return 0;
}

/* The FILE id of the main executable, 0 if it ran no code of its own. */
static uint32_t find_main(const struct dbtp_regions_opts *o,
			  const dbtp_trace *t)
{
	const char *main =
	    o->main_file ? o->main_file : dbtp_trace_get(t, "program");

	for (uint32_t i = 1; main && i <= dbtp_trace_nfiles(t); i++)
		if (!strcmp(dbtp_trace_file(t, i), main))
			return i;
	return 0;
}

/* Basic block (@addr, @n instructions): its index, created if new. */
static int64_t bb_get(struct rcode *c, struct dbtp_u64map *map, uint32_t **next,
		      const struct dbtp_block *b, uint64_t addr, uint32_t n,
		      uint32_t off, uint64_t last)
{
	uint64_t *slot = dbtp_u64map_slot(map, addr);
	uint32_t i;

	if (!slot)
		return -1;
	/* *slot is index + 1 of the first block at @addr; others chain. */
	for (i = (uint32_t)*slot; i; i = (*next)[i - 1])
		if (c->bb[i - 1].ninsns == n)
			return i - 1;
	if (c->nbb == c->cap_bb) {
		size_t cap = c->cap_bb ? 2 * (size_t)c->cap_bb : 64;
		struct rbb *nb = realloc(c->bb, cap * sizeof(*nb));
		uint32_t *nn = realloc(*next, cap * sizeof(*nn));

		if (nb)
			c->bb = nb;
		if (nn)
			*next = nn;
		if (!nb || !nn)
			return -1;
		c->cap_bb = (uint32_t)cap;
	}
	i = c->nbb++;
	memset(&c->bb[i], 0, sizeof(c->bb[i]));
	c->bb[i].addr = addr;
	c->bb[i].last = last;
	c->bb[i].ninsns = n;
	c->bb[i].tb = b->id;
	c->bb[i].tb_offset = off;
	c->bb[i].kind = DBTP_BR_NONE;
	(*next)[i] = (uint32_t)*slot;
	*slot = i + 1;
	return i;
}

int rcode_build(struct rcode *c, const dbtp_trace *t,
		const struct dbtp_regions_opts *o, dbtp_err *err)
{
	const struct dbtp_trace_info *info = dbtp_trace_info(t);
	struct dbtp_u64map leaders = {0}, map = {0};
	uint32_t *next = NULL, main_file = find_main(o, t);
	size_t nout = 0, cap = 0;
	dbtp_disasm *d = NULL;
	int r = -1;

	memset(c, 0, sizeof(*c));
	c->ntb = dbtp_trace_nblocks(t);
	if (dbtp_disasm_open(&d, info->arch, err))
		return -1;
	c->tb_first = calloc((size_t)c->ntb + 1, sizeof(*c->tb_first));
	if (!c->tb_first)
		goto oom;
	for (uint32_t id = 0; id < c->ntb; id++)
		if (!dbtp_u64map_slot(&leaders, dbtp_trace_block(t, id)->vaddr))
			goto oom;
	for (uint32_t id = 0; id < c->ntb; id++) {
		const struct dbtp_block *b = dbtp_trace_block(t, id);
		uint64_t addr = b->vaddr, start = b->vaddr, prev = b->vaddr;
		uint32_t n = 0, off = 0, soff = 0;

		c->tb_first[id] = (uint32_t)nout;
		for (uint32_t k = 0; k <= b->ninsns; k++) {
			int cut = k == b->ninsns ||
				  (k > 0 && dbtp_u64map_find(&leaders, addr));

			if (cut && n) {
				int64_t bb = bb_get(c, &map, &next, b, start, n,
						    soff, prev);
				struct rbb *x;

				if (bb < 0)
					goto oom;
				x = &c->bb[bb];
				x->nbytes = off - soff;
				x->seg = segment_of(o, t, b, start, main_file);
				if (k == b->ninsns) {
					int kind = dbtp_disasm_branch(
					    d, b->bytes + off - b->sizes[k - 1],
					    b->sizes[k - 1], prev);

					if (kind > 0)
						x->kind = (uint8_t)kind;
				}
				if (nout == cap) {
					uint32_t *nb;

					cap = cap ? 2 * cap : 1024;
					nb = realloc(c->tb_bbs,
						     cap * sizeof(*nb));
					if (!nb)
						goto oom;
					c->tb_bbs = nb;
				}
				c->tb_bbs[nout++] = (uint32_t)bb;
				start = addr;
				soff = off;
				n = 0;
			}
			if (k < b->ninsns) {
				prev = addr;
				addr += b->sizes[k];
				off += b->sizes[k];
				n++;
			}
		}
	}
	c->tb_first[c->ntb] = (uint32_t)nout;
	r = 0;
	goto out;
oom:
	nomem(err);
	rcode_free(c);
out:
	dbtp_disasm_close(d);
	dbtp_u64map_free(&leaders);
	dbtp_u64map_free(&map);
	free(next);
	return r;
}

void rcode_free(struct rcode *c)
{
	free(c->bb);
	free(c->tb_first);
	free(c->tb_bbs);
	memset(c, 0, sizeof(*c));
}

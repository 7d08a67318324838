/* SPDX-License-Identifier: MIT */
/*
 * encode.c - one thread's raw event words to an EVENTS chunk payload.
 *
 * Blocks: a block that is its predecessor's last successor in this chunk is
 * "predicted" and costs nothing but a count in a RUN op; any other block is a
 * BLOCK op with its id.  Memory accesses: the address is coded as the
 * difference from last address + last stride of the same slot (block id,
 * access index), so strided loops code as zeros.  zstd then squeezes the ops.
 */
#include "trace/format.h"

#define MAX_OP 80 /* bytes one op can take: a syscall, 7 varints + kind */

static int put_run(struct dbtp_buf *out, uint64_t *run)
{
	if (!*run)
		return 0;
	if (dbtp_buf_reserve(out, 10))
		return -1;
	dbtp_put_varint(out, *run << 3 | DBTP_OP_RUN);
	*run = 0;
	return 0;
}

static uint64_t slot_key(uint32_t block, uint32_t idx)
{
	return (uint64_t)block << 16 | (idx > 0xffff ? 0xffff : idx);
}

int dbtp_enc_chunk(struct dbtp_enc *e, uint32_t thread, uint64_t tid,
		   const uint64_t *w, size_t n, int exit_reason,
		   struct dbtp_ninsns ninsns, struct dbtp_buf *out)
{
	struct dbtp_pred *p = &e->pred;
	uint64_t run = 0, nblocks = 0, nmem = 0, nsys = 0;
	uint32_t prev = DBTP_NO_SUCC, idx = 0;

	dbtp_pred_reset(p);
	if (dbtp_buf_reserve(out, 40))
		return -1;
	dbtp_put_varint(out, thread);
	dbtp_put_varint(out, e->chunks);
	dbtp_put_varint(out, tid);
	dbtp_put_varint(out, e->blocks);
	for (size_t i = 0; i < n; i++) {
		uint64_t word = w[i], val = word >> 2;

		switch (word & 3) {
		case DBTP_RAW_BLOCK: {
			uint32_t id = (uint32_t)val;

			if (val >= DBTP_NO_SUCC)
				return -1;
			if (prev < p->cap && p->succ[prev].gen == p->gen &&
			    p->succ[prev].id == id) {
				run++;
			} else {
				if (out->cap - out->len < 32 &&
				    dbtp_buf_reserve(out, 32))
					return -1;
				if (run) {
					dbtp_put_varint(out,
							run << 3 | DBTP_OP_RUN);
					run = 0;
				}
				dbtp_put_varint(out, (uint64_t)id << 3 |
							 DBTP_OP_BLOCK);
				if (prev != DBTP_NO_SUCC &&
				    dbtp_pred_set_succ(p, prev, id))
					return -1;
			}
			prev = id;
			idx = 0;
			nblocks++;
			e->insns += dbtp_ninsns_get(ninsns, id);
			break;
		}
		case DBTP_RAW_MEM: {
			struct dbtp_slot *s;
			uint64_t addr, guess;
			int fresh;

			if (i + 1 >= n || put_run(out, &run) ||
			    dbtp_buf_reserve(out, MAX_OP))
				return -1;
			addr = w[++i];
			s = dbtp_pred_slot(p, slot_key(prev, idx++), &fresh);
			if (!s)
				return -1;
			guess = fresh ? p->last_addr
				      : s->last + (uint64_t)s->stride;
			dbtp_put_varint(out, val << 3 | DBTP_OP_MEM);
			dbtp_put_varint(out,
					dbtp_zigzag((int64_t)(addr - guess)));
			s->stride = fresh ? 0 : (int64_t)(addr - s->last);
			s->last = addr;
			p->last_addr = addr;
			nmem++;
			break;
		}
		case DBTP_RAW_SYSCALL:
			if (i + 6 >= n || put_run(out, &run) ||
			    dbtp_buf_reserve(out, MAX_OP))
				return -1;
			dbtp_put_varint(out, val << 3 | DBTP_OP_SYSCALL);
			for (int a = 0; a < 6; a++)
				dbtp_put_varint(out, w[++i]);
			nsys++;
			break;
		case DBTP_RAW_SYSRET:
			if (i + 1 >= n || put_run(out, &run) ||
			    dbtp_buf_reserve(out, MAX_OP))
				return -1;
			dbtp_put_varint(out, val << 3 | DBTP_OP_SYSRET);
			dbtp_put_varint(out, dbtp_zigzag((int64_t)w[++i]));
			break;
		}
	}
	e->blocks += nblocks;
	e->mems += nmem;
	e->syscalls += nsys;
	e->chunks++;
	if (put_run(out, &run) || dbtp_buf_reserve(out, 2 * MAX_OP))
		return -1;
	if (exit_reason >= 0) {
		dbtp_put_varint(out, (uint64_t)exit_reason << 3 | DBTP_OP_EXIT);
		dbtp_put_varint(out, e->blocks);
		dbtp_put_varint(out, e->insns);
		dbtp_put_varint(out, e->mems);
	}
	dbtp_put_varint(out, nblocks << 3 | DBTP_OP_END);
	dbtp_put_varint(out, nmem);
	dbtp_put_varint(out, nsys);
	return 0;
}

void dbtp_enc_free(struct dbtp_enc *e)
{
	dbtp_pred_free(&e->pred);
}

static const struct dbtp_cache_tally *
tally(const struct dbtp_cache_tally *(*get)(void *, uint32_t), void *ctx,
      uint32_t id)
{
	const struct dbtp_cache_tally *c = get(ctx, id);

	return c && c->ops ? c : NULL;
}

int dbtp_cache_recs_put(struct dbtp_buf *out, uint32_t nblocks,
			const struct dbtp_cache_tally *(*get)(void *, uint32_t),
			void *ctx, void *zctx, int level)
{
	struct dbtp_buf p = {0};
	uint32_t id = 0;
	int r = 0;

	while (!r && id < nblocks) {
		uint32_t end = id, prev = 0;
		uint64_t n = 0;

		for (; end < nblocks && n < DBTP_CACHE_REC_ENTRIES; end++)
			n += tally(get, ctx, end) != NULL;
		if (!n)
			break;
		p.len = 0;
		if (dbtp_buf_reserve(&p, 10 + n * 50)) {
			r = -1;
			break;
		}
		dbtp_put_varint(&p, n);
		for (n = 0; id < end; id++) {
			const struct dbtp_cache_tally *c = tally(get, ctx, id);

			if (!c)
				continue;
			dbtp_put_varint(&p, n++ ? id - prev - 1 : id);
			dbtp_put_varint(&p, c->ops);
			dbtp_put_varint(&p, c->l1);
			dbtp_put_varint(&p, c->l2);
			dbtp_put_varint(&p, c->unaligned);
			prev = id;
		}
		r = dbtp_frame_put(out, DBTP_REC_CACHE, p.p, p.len, zctx,
				   level);
	}
	dbtp_buf_free(&p);
	return r;
}

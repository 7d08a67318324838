/* SPDX-License-Identifier: MIT */
/*
 * model.c - the analysis of dbtprof gentest: thread groups, their sizes as
 * a function of the thread parameter, per-group block hotness, the
 * distribution inside a group and thread activity (dbtp/gentest.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bpred.h"
#include "dbtp/cache.h"
#include "dbtp/disasm.h"
#include "dbtp/gentest.h"
#include "util/u64map.h"

struct pthread_rec {
	int32_t parent;
	uint64_t created_blocks, join_blocks, blocks, insns;
	int joined;		   /* join_blocks was set at the thread's end */
	int join_exact;		   /* ... from the parent's pthread_join */
	uint64_t wait_tid;	   /* the thread waits on a futex for this */
	int64_t last;		   /* model block last run + 1, or 0 */
	struct dbtp_u64map counts; /* model block -> executions */
	/* while the profile is read: executions of model blocks below
	 * ndense, added to counts at its end (cheaper than a probe of the
	 * map an execution) */
	uint64_t *dense;
	uint32_t ndense;
	uint32_t group;
	uint32_t *sig; /* sorted blocks executed */
	double *w;     /* their shares of the thread's instructions */
	uint32_t nsig;
	bpred *bp;	/* while the profile is read */
	uint64_t *jc;	/* its jump cache (struct dbtp_gt_block's cold),
			   while the profile is read */
	dbtp_cache *l1; /* mem-mode profiles, while read */
};

struct profile {
	double threads;
	struct pthread_rec *th;
	uint32_t nth;
	struct dbtp_gt_branches br;
};

struct dbtp_gt_model {
	enum dbtp_arch arch;
	struct profile *prof;
	uint32_t nprof;
	struct dbtp_gt_block *blk;
	uint32_t nblk, capblk;
	struct dbtp_u64map index; /* hash -> block + 1 */
	dbtp_disasm *dis;	  /* classifies the blocks' last instructions */
	struct dbtp_gt_group *grp;
	uint32_t ngrp;
	int finished;
	int mem;       /* some profile had memory accesses */
	int sampled;   /* some profile's tallies are estimates (cache_sample) */
	int predictor; /* DBTP_BPRED_GSHARE or DBTP_BPRED_TAGE */
	/* after finish, blocks are sorted by address and bytes: */
	uint32_t *old2new, *new2old;
};

int dbtp_gt_model_new(dbtp_gt_model **out, dbtp_err *err)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	(*out)->predictor = DBTP_BPRED_GSHARE;
	return 0;
}

int dbtp_gt_model_set_predictor(dbtp_gt_model *m, int kind, dbtp_err *err)
{
	if (!bpred_kind_valid(kind))
		return dbtp_err_set(err, EINVAL, "no branch predictor %d",
				    kind);
	if (m->nprof)
		return dbtp_err_set(err, EINVAL,
				    "the predictor is chosen before the "
				    "first profile");
	m->predictor = kind;
	return 0;
}

int dbtp_gt_model_predictor(const dbtp_gt_model *m)
{
	return m->predictor;
}

static uint64_t block_hash(const struct dbtp_block *b)
{
	uint64_t h = 0xcbf29ce484222325ull ^ b->vaddr;

	for (uint32_t i = 0; i < b->nbytes; i++)
		h = (h ^ b->bytes[i]) * 0x100000001b3ull;
	h ^= b->nbytes;
	return h == UINT64_MAX ? 0 : h;
}

int dbtp_gt_is_loader(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && (!strncmp(base, "ld-linux", 8) ||
			!strncmp(base, "ld-musl", 7) || !strcmp(base, "ld.so"));
}

/*
 * The model's block at @vaddr with code @bytes (@nbytes, @ninsns
 * instructions, hash @h): its index, or -1 with *@slot the index's empty
 * slot for it, -2 out of memory.
 */
static int64_t find_block(dbtp_gt_model *m, uint64_t h, uint64_t vaddr,
			  uint32_t nbytes, uint32_t ninsns,
			  const uint8_t *bytes, uint64_t **slot)
{
	for (;; h = h + 1 == UINT64_MAX ? 0 : h + 1) {
		const struct dbtp_gt_block *nb;

		*slot = dbtp_u64map_slot(&m->index, h);
		if (!*slot)
			return -2;
		if (!**slot)
			return -1;
		nb = &m->blk[**slot - 1];
		if (nb->vaddr == vaddr && nb->nbytes == nbytes &&
		    nb->ninsns == ninsns && !memcmp(nb->bytes, bytes, nbytes))
			return (int64_t)(**slot - 1);
	}
}

/* Room for one more block at m->blk[m->nblk]; -1 out of memory. */
static int grow_blocks(dbtp_gt_model *m)
{
	struct dbtp_gt_block *nb;
	uint32_t cap = m->capblk ? 2 * m->capblk : 256;

	if (m->nblk < m->capblk)
		return 0;
	nb = realloc(m->blk, cap * sizeof(*nb));
	if (!nb)
		return -1;
	m->blk = nb;
	m->capblk = cap;
	return 0;
}

/* The model's index of trace block @b, added if new; -1 on ENOMEM. */
static int64_t intern(dbtp_gt_model *m, const dbtp_trace *t,
		      const struct dbtp_block *b)
{
	uint64_t *slot;
	int64_t i = find_block(m, block_hash(b), b->vaddr, b->nbytes, b->ninsns,
			       b->bytes, &slot);
	struct dbtp_gt_block *nb;

	if (i != -1)
		return i < 0 ? -1 : i;
	if (grow_blocks(m))
		return -1;
	nb = &m->blk[m->nblk];
	memset(nb, 0, sizeof(*nb));
	nb->vaddr = b->vaddr;
	nb->loader = b->file && dbtp_gt_is_loader(dbtp_trace_file(t, b->file));
	nb->ninsns = b->ninsns;
	nb->nbytes = b->nbytes;
	nb->sizes = malloc(b->ninsns ? b->ninsns : 1);
	nb->bytes = malloc(b->nbytes ? b->nbytes : 1);
	if (!nb->sizes || !nb->bytes) {
		free(nb->sizes);
		free(nb->bytes);
		return -1;
	}
	memcpy(nb->sizes, b->sizes, b->ninsns);
	memcpy(nb->bytes, b->bytes, b->nbytes);
	if (b->ninsns && b->sizes[b->ninsns - 1] <= b->nbytes) {
		uint32_t last = b->sizes[b->ninsns - 1];

		nb->br_pc = b->vaddr + b->nbytes - last;
		nb->br = dbtp_disasm_target(m->dis, b->bytes + b->nbytes - last,
					    last, nb->br_pc, &nb->br_target);
		nb->br_ind =
		    nb->br == DBTP_BR_CALL && nb->br_target == UINT64_MAX;
		if (nb->br < 0)
			nb->br = DBTP_BR_NONE;
	}
	*slot = ++m->nblk;
	return (int64_t)(m->nblk - 1);
}

static int grow_threads(struct profile *p, uint32_t n)
{
	struct pthread_rec *th;

	if (n <= p->nth)
		return 0;
	th = realloc(p->th, n * sizeof(*th));
	if (!th)
		return -1;
	memset(th + p->nth, 0, (n - p->nth) * sizeof(*th));
	for (uint32_t i = p->nth; i < n; i++)
		th[i].parent = -1;
	p->th = th;
	p->nth = n;
	return 0;
}

/* Free what profile @p's threads keep only while it is read: their
 * predictors, caches and array counts. */
static void free_reading(struct profile *p)
{
	for (uint32_t i = 0; i < p->nth; i++) {
		bpred_free(p->th[i].bp);
		p->th[i].bp = NULL;
		free(p->th[i].jc);
		p->th[i].jc = NULL;
		dbtp_cache_free(p->th[i].l1);
		p->th[i].l1 = NULL;
		free(p->th[i].dense);
		p->th[i].dense = NULL;
		p->th[i].ndense = 0;
	}
}

size_t dbtp_gt_dense_max = (size_t)64 << 20;

/*
 * Count an execution of model block @b (of @nblk) by thread @tr, the
 * profile's dense counts taking *@dense of dbtp_gt_dense_max.  -1 out of
 * memory.
 */
static int count_exec(struct pthread_rec *tr, uint32_t b, uint32_t nblk,
		      size_t *dense)
{
	uint64_t *c;

	if (b < tr->ndense) {
		tr->dense[b]++;
		return 0;
	}
	if (*dense - tr->ndense + nblk <= dbtp_gt_dense_max) {
		uint32_t n = nblk > 2 * tr->ndense ? nblk : 2 * tr->ndense;

		if (*dense - tr->ndense + n > dbtp_gt_dense_max)
			n = nblk;
		c = realloc(tr->dense, n * sizeof(*c));
		if (c) {
			memset(c + tr->ndense, 0,
			       (n - tr->ndense) * sizeof(*c));
			*dense += n - tr->ndense;
			tr->dense = c;
			tr->ndense = n;
			tr->dense[b]++;
			return 0;
		}
	}
	if (!(c = dbtp_u64map_slot(&tr->counts, b)))
		return -1;
	++*c;
	return 0;
}

/* Move thread @tr's dense counts into its map; -1 out of memory. */
static int flush_counts(struct pthread_rec *tr)
{
	for (uint32_t b = 0; b < tr->ndense; b++) {
		uint64_t *c;

		if (!tr->dense[b])
			continue;
		if (!(c = dbtp_u64map_slot(&tr->counts, b)))
			return -1;
		*c += tr->dense[b];
	}
	return 0;
}

/* Note @target among indirect branch @b's first DBTP_GT_TARGETS (the
 * one before noted already; none is 0). */
static inline int count_target(struct dbtp_gt_block *b, uint64_t target)
{
	uint32_t i;

	if (b->tg_last == target)
		return 0;
	b->tg_last = target;
	if (!b->tg && !(b->tg = calloc(DBTP_GT_TARGETS, sizeof(*b->tg))))
		return -1;
	for (i = 0; i < b->ntg && b->tg[i] != target; i++)
		;
	if (i == b->ntg && i < DBTP_GT_TARGETS)
		b->tg[b->ntg++] = target;
	return 0;
}

/*
 * Predict the branch ending block @last (model block + 1, 0: none yet) of
 * thread @tr of @p, now followed by a block at @next.
 */
static int predict(dbtp_gt_model *m, struct profile *p, struct pthread_rec *tr,
		   int64_t last, uint64_t next)
{
	struct dbtp_gt_block *b;
	int miss = 0, k;

	if (!last)
		return 0;
	if (!tr->bp &&
	    !(tr->bp = bpred_new(m->arch == DBTP_ARCH_AARCH64 ? 2 : 0,
				 m->predictor)))
		return -1;
	b = &m->blk[last - 1];
	k = bpred_branch(tr->bp, b->br, b->br_ind, b->br_pc,
			 b->vaddr + b->nbytes, next, &miss);
	if (k >= 0) {
		p->br.n[k]++;
		p->br.miss[k] += (uint64_t)miss;
		b->mispredicted += (uint64_t)miss;
	}
	if (next >> DBTP_GT_PAGE_BITS != b->vaddr >> DBTP_GT_PAGE_BITS) {
		if ((b->br == DBTP_BR_CALL && !b->br_ind) ||
		    b->br == DBTP_BR_JUMP || b->br == DBTP_BR_COND)
			b->crossed++;
		else if (b->br == DBTP_BR_NONE)
			b->fell++;
	}
	return b->br == DBTP_BR_IND || b->br_ind ? count_target(b, next) : 0;
}

/*
 * Look model block @k at @pc up in thread @tr's jump cache: a miss counts
 * it cold and takes the entry.  On AArch64 an entry holds a translation
 * for one BTYPE (QEMU keeps it in a block's flags where the CPU has BTI,
 * as its default `-cpu max` does): 1 after `br`, 2 after `blr`, else 0,
 * so a block entered now by an indirect branch, now by another, misses at
 * every change (the key: @pc, 4-aligned, with the BTYPE in its low bits).
 * -1 out of memory.
 */
static int jc_lookup(dbtp_gt_model *m, struct pthread_rec *tr, uint32_t k,
		     uint64_t pc)
{
	const struct dbtp_gt_block *pb =
	    tr->last ? &m->blk[tr->last - 1] : NULL;
	uint64_t *e, key = pc;

	if (pb && m->arch == DBTP_ARCH_AARCH64)
		key |= pb->br == DBTP_BR_IND		      ? 1
		       : pb->br == DBTP_BR_CALL && pb->br_ind ? 2
							      : 0;

	if (!tr->jc &&
	    !(tr->jc = calloc((size_t)1 << DBTP_GT_JC_BITS, sizeof(*tr->jc))))
		return -1;
	e = &tr->jc[(pc ^ pc >> DBTP_GT_JC_BITS) &
		    ((1u << DBTP_GT_JC_BITS) - 1)];
	if (*e != key + 1) {
		*e = key + 1;
		m->blk[k].cold++;
	}
	return 0;
}

/* Whether system call @nr of @arch reads into memory: read, pread64,
 * readv, preadv, preadv2. */
static int reads(enum dbtp_arch arch, int64_t nr)
{
	if (arch == DBTP_ARCH_AARCH64)
		return nr == 63 || nr == 67 || nr == 65 || nr == 69 ||
		       nr == 286;
	return nr == 0 || nr == 17 || nr == 19 || nr == 295 || nr == 327;
}

/*
 * pthread_join's wait, futex(&pd->tid, FUTEX_WAIT or FUTEX_WAIT_BITSET,
 * tid): the thread that waits for the value of a child's tid joins that
 * child when the call returns.  The child's exit event comes in its own
 * chunk, which the plugin writes when the child ends, not where its parent
 * then was: this puts the join where the parent's own events put it.
 */
static int join_wait(dbtp_trace *t, struct profile *p,
		     const struct dbtp_event *ev)
{
	int futex = dbtp_trace_info(t)->arch == DBTP_ARCH_AARCH64 ? 98 : 202;
	uint64_t tid;

	if (ev->sysno != futex || grow_threads(p, ev->thread + 1))
		return ev->sysno != futex ? 0 : -1;
	if (ev->type == DBTP_EV_SYSCALL) {
		uint64_t op = ev->args[1] & 127;

		p->th[ev->thread].wait_tid =
		    op == 0 || op == 9 ? (uint32_t)ev->args[2] : 0;
		return 0;
	}
	tid = p->th[ev->thread].wait_tid;
	p->th[ev->thread].wait_tid = 0;
	for (uint32_t c = 1; tid && c < dbtp_trace_nthreads(t); c++) {
		const struct dbtp_thread *ct = dbtp_trace_thread(t, c);

		if (!ct || ct->tid != tid || ct->parent != (int32_t)ev->thread)
			continue;
		if (grow_threads(p, c + 1))
			return -1;
		p->th[c].join_blocks = dbtp_trace_thread(t, ev->thread)->blocks;
		p->th[c].joined = p->th[c].join_exact = 1;
		break;
	}
	return 0;
}

/* Tally @t of a block's memory operations, added to block @b. */
static void add_tally(struct dbtp_gt_block *b, const struct dbtp_cache_tally *t)
{
	b->l1_misses += t->l1;
	b->l2_misses += t->l2;
	b->unaligned += t->unaligned;
}

/*
 * Memory access @ev of thread @tr through the thread's own L1 data cache
 * (dbtp/cache.h's default geometry, created at its first access) and the
 * L2 behind it, tallied for the thread's current block.
 */
static int l1_access(dbtp_gt_model *m, struct pthread_rec *tr,
		     const struct dbtp_event *ev, dbtp_err *err)
{
	struct dbtp_cache_tally t = {0};

	if (!tr->l1 && dbtp_cache_new_default(&tr->l1, err))
		return -1;
	dbtp_cache_tally(tr->l1, ev->addr, ev->size,
			 ev->mem_flags & DBTP_ACCESS_STORE, &t);
	add_tally(&m->blk[tr->last - 1], &t);
	return 0;
}

int dbtp_gt_profile_check(const dbtp_trace *t, const char *name, double threads,
			  const enum dbtp_arch *arch, dbtp_err *err)
{
	const struct dbtp_trace_info *info = dbtp_trace_info(t);

	if (!(threads > 0) || !isfinite(threads))
		return dbtp_err_set(
		    err, EINVAL, "%s: the thread parameter must be > 0", name);
	if (info->mode != DBTP_MODE_BLOCKS && info->mode != DBTP_MODE_MEM)
		return dbtp_err_set(err, EINVAL,
				    "%s: a %s-mode trace has no per-thread "
				    "block streams; record it with --mode "
				    "blocks",
				    name, dbtp_mode_name(info->mode));
	if (arch && info->arch != *arch)
		return dbtp_err_set(
		    err, EINVAL, "%s: an %s trace among %s ones", name,
		    dbtp_arch_name(info->arch), dbtp_arch_name(*arch));
	if (info->arch != DBTP_ARCH_X86_64 && info->arch != DBTP_ARCH_AARCH64)
		return dbtp_err_set(err, EINVAL, "%s: unknown architecture",
				    name);
	return 0;
}

int dbtp_gt_model_add(dbtp_gt_model *m, dbtp_trace *t, const char *name,
		      double threads, dbtp_err *err)
{
	const struct dbtp_trace_info *info = dbtp_trace_info(t);
	struct dbtp_event ev;
	struct profile *p;
	int64_t *map = NULL; /* trace block id -> model block + 1 */
	size_t dense = 0;    /* count_exec() */
	uint32_t nmap = 0;
	int r;

	if (m->finished)
		return dbtp_err_set(err, EINVAL, "model already finished");
	if (dbtp_gt_profile_check(t, name, threads, m->nprof ? &m->arch : NULL,
				  err))
		return -1;
	p = realloc(m->prof, (m->nprof + 1) * sizeof(*p));
	if (!p)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	m->prof = p;
	p = &m->prof[m->nprof++];
	memset(p, 0, sizeof(*p));
	p->threads = threads;
	m->arch = info->arch;
	m->mem |= info->mode == DBTP_MODE_MEM || info->cache;
	m->sampled |= info->cache && dbtp_trace_get(t, "cache_sample");
	if (!m->dis && dbtp_disasm_open(&m->dis, m->arch, err))
		return -1;
	while ((r = dbtp_trace_next(t, &ev, err)) > 0) {
		if (ev.type == DBTP_EV_BLOCK) {
			const struct dbtp_block *b = ev.block;
			struct pthread_rec *tr;
			int64_t k;

			if (b->id >= nmap) {
				uint32_t n =
				    b->id + 1 > 2 * nmap ? b->id + 1 : 2 * nmap;
				int64_t *nm = realloc(map, n * sizeof(*nm));

				if (!nm)
					goto nomem;
				memset(nm + nmap, 0, (n - nmap) * sizeof(*nm));
				map = nm;
				nmap = n;
			}
			if (!(k = map[b->id])) {
				int64_t i = intern(m, t, b);

				if (i < 0)
					goto nomem;
				k = map[b->id] = i + 1;
			}
			if (ev.thread >= p->nth &&
			    grow_threads(p, ev.thread + 1))
				goto nomem;
			tr = &p->th[ev.thread];
			if (predict(m, p, tr, tr->last, b->vaddr) ||
			    jc_lookup(m, tr, (uint32_t)(k - 1), b->vaddr) ||
			    count_exec(tr, (uint32_t)(k - 1), m->nblk, &dense))
				goto nomem;
			m->blk[k - 1].count++;
			tr->last = k;
			continue;
		}
		if (ev.type == DBTP_EV_THREAD_EXIT) {
			const struct dbtp_thread *ct =
			    dbtp_trace_thread(t, ev.thread);

			if (grow_threads(p, ev.thread + 1))
				goto nomem;
			/* Joined where the parent's wait says (join_wait());
			 * else where the trace has shown the parent so far:
			 * the plugin cuts the other threads' chunks before
			 * it writes a thread's last.  A parent whose clone
			 * has not returned in the trace yet was still in it:
			 * at its creation (0, below). */
			if (p->th[ev.thread].join_exact)
				continue;
			p->th[ev.thread].join_blocks =
			    ct && ct->parent >= 0
				? dbtp_trace_thread(t, (uint32_t)ct->parent)
				      ->blocks
				: 0;
			p->th[ev.thread].joined = 1;
			continue;
		}
		if ((ev.type == DBTP_EV_SYSCALL || ev.type == DBTP_EV_SYSRET) &&
		    join_wait(t, p, &ev))
			goto nomem;
		/* a read's bytes go to the block whose system call made it */
		if (ev.type == DBTP_EV_SYSRET && ev.ret > 0 &&
		    ev.thread < p->nth && p->th[ev.thread].last &&
		    reads(info->arch, ev.sysno)) {
			m->blk[p->th[ev.thread].last - 1].read +=
			    (uint64_t)ev.ret;
			continue;
		}
		if (ev.type == DBTP_EV_MEM && ev.thread < p->nth &&
		    p->th[ev.thread].last) {
			if (l1_access(m, &p->th[ev.thread], &ev, err))
				goto fail;
			continue;
		}
		/* the plugin's tallies, as l1_access() counts */
		if (ev.type == DBTP_EV_CACHE && ev.block->id < nmap &&
		    map[ev.block->id]) {
			struct dbtp_cache_tally t = {
			    ev.count, ev.l1_misses, ev.l2_misses, ev.unaligned};

			add_tally(&m->blk[map[ev.block->id] - 1], &t);
			continue;
		}
	}
	free(map);
	for (uint32_t i = 0; r >= 0 && i < p->nth; i++)
		if (flush_counts(&p->th[i]))
			r = dbtp_err_set(err, ENOMEM, "out of memory");
	free_reading(p);
	if (r < 0)
		return -1;
	if (grow_threads(p, dbtp_trace_nthreads(t)))
		return dbtp_err_set(err, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < dbtp_trace_nthreads(t); i++) {
		const struct dbtp_thread *th = dbtp_trace_thread(t, i);
		struct pthread_rec *tr = &p->th[i];

		tr->parent = i ? th->parent : -1;
		tr->created_blocks = th->created_blocks;
		tr->blocks = th->blocks;
		tr->insns = th->insns;
		p->br.insns += th->insns;
	}
	for (uint32_t i = 0; i < p->nth; i++) {
		struct pthread_rec *tr = &p->th[i];

		if (tr->parent >= (int32_t)p->nth)
			tr->parent = -1;
		if (tr->parent >= 0) {
			uint64_t pb = p->th[tr->parent].blocks;

			if (!tr->joined || tr->join_blocks > pb)
				tr->join_blocks = pb;
			if (tr->join_blocks < tr->created_blocks)
				tr->join_blocks = tr->created_blocks;
		}
	}
	if (!p->nth || !p->th[0].blocks)
		return dbtp_err_set(err, EINVAL, "%s: no block executions",
				    name);
	return 0;
nomem:
	dbtp_err_set(err, ENOMEM, "out of memory");
fail:
	free(map);
	free_reading(p);
	return -1;
}

/* Block @b of another model, interned in @m: its index, or -1 out of
 * memory.  A new one is moved (@b's pointers taken); one @m had gets
 * @b's counts added. */
static int64_t merge_block(dbtp_gt_model *m, struct dbtp_gt_block *b)
{
	struct dbtp_block key = {
	    .vaddr = b->vaddr, .nbytes = b->nbytes, .bytes = b->bytes};
	uint64_t *slot;
	int64_t i = find_block(m, block_hash(&key), b->vaddr, b->nbytes,
			       b->ninsns, b->bytes, &slot);

	if (i >= 0) {
		struct dbtp_gt_block *nb = &m->blk[i];

		nb->count += b->count;
		nb->read += b->read;
		nb->mispredicted += b->mispredicted;
		nb->crossed += b->crossed;
		nb->fell += b->fell;
		nb->cold += b->cold;
		nb->l1_misses += b->l1_misses;
		nb->l2_misses += b->l2_misses;
		nb->unaligned += b->unaligned;
		/* its targets after ours, as one reading would */
		for (uint32_t k = 0; k < b->ntg; k++)
			if (count_target(nb, b->tg[k]))
				return -1;
		return i;
	}
	if (i == -2 || grow_blocks(m))
		return -1;
	m->blk[m->nblk] = *b;
	b->sizes = b->bytes = NULL;
	b->tg = NULL;
	*slot = ++m->nblk;
	return (int64_t)(m->nblk - 1);
}

int dbtp_gt_model_merge(dbtp_gt_model *m, dbtp_gt_model *src, dbtp_err *err)
{
	uint32_t *map;
	struct profile *p;

	if (m->finished || src->finished)
		return dbtp_err_set(err, EINVAL, "model already finished");
	if (m->nprof && src->nprof && m->arch != src->arch)
		return dbtp_err_set(
		    err, EINVAL, "profiles of two architectures, %s and %s",
		    dbtp_arch_name(m->arch), dbtp_arch_name(src->arch));
	if (m->predictor != src->predictor)
		return dbtp_err_set(err, EINVAL,
				    "profiles read with two branch predictors");
	map = malloc((src->nblk ? src->nblk : 1) * sizeof(*map));
	p = realloc(m->prof, (m->nprof + src->nprof) * sizeof(*p));
	if (p)
		m->prof = p;
	if (!map || !p)
		goto nomem;
	for (uint32_t i = 0; i < src->nblk; i++) {
		int64_t k = merge_block(m, &src->blk[i]);

		if (k < 0)
			goto nomem;
		map[i] = (uint32_t)k;
	}
	/* each thread's counts under @m's block numbers */
	for (uint32_t q = 0; q < src->nprof; q++)
		for (uint32_t i = 0; i < src->prof[q].nth; i++) {
			struct pthread_rec *tr = &src->prof[q].th[i];
			struct dbtp_u64map c = {0};

			for (size_t j = 0; j < tr->counts.n; j++) {
				uint64_t *v;

				if (!tr->counts.key[j])
					continue;
				v = dbtp_u64map_slot(
				    &c, map[tr->counts.key[j] - 1]);
				if (!v) {
					dbtp_u64map_free(&c);
					goto nomem;
				}
				*v = tr->counts.val[j];
			}
			dbtp_u64map_free(&tr->counts);
			tr->counts = c;
			tr->last = 0;
		}
	if (src->nprof)
		m->arch = src->arch;
	memcpy(m->prof + m->nprof, src->prof, src->nprof * sizeof(*p));
	m->nprof += src->nprof;
	free(src->prof);
	src->prof = NULL;
	src->nprof = 0;
	m->mem |= src->mem;
	m->sampled |= src->sampled;
	free(map);
	return 0;
nomem:
	free(map);
	return dbtp_err_set(err, ENOMEM, "out of memory");
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int thread_sig(const dbtp_gt_model *m, struct pthread_rec *tr)
{
	const struct dbtp_u64map *c = &tr->counts;
	uint32_t n = 0;
	double tot = 0;

	tr->sig = malloc((c->used ? c->used : 1) * sizeof(*tr->sig));
	tr->w = malloc((c->used ? c->used : 1) * sizeof(*tr->w));
	if (!tr->sig || !tr->w)
		return -1;
	for (size_t i = 0; i < c->n; i++)
		if (c->key[i] && c->val[i])
			tr->sig[n++] = m->old2new[c->key[i] - 1];
	qsort(tr->sig, n, sizeof(*tr->sig), cmp_u32);
	tr->nsig = n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t *v = dbtp_u64map_find(c, m->new2old[tr->sig[i]]);

		tr->w[i] = (double)*v * m->blk[tr->sig[i]].ninsns;
		tot += tr->w[i];
	}
	for (uint32_t i = 0; i < n; i++)
		tr->w[i] = tot > 0 ? tr->w[i] / tot : 0;
	return 0;
}

void dbtp_gt_fit(const double *x, const double *y, size_t n, int through0,
		 double *a, double *b)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, d;

	for (size_t i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += x[i] * x[i];
		sxy += x[i] * y[i];
	}
	d = n * sxx - sx * sx;
	if (n < 2 || fabs(d) <= 1e-12 * (n * sxx + 1)) {
		double my = n ? sy / n : 0, mx = n ? sx / n : 0;

		if (through0 && mx != 0) {
			*a = my / mx;
			*b = 0;
		} else {
			*a = 0;
			*b = my;
		}
		return;
	}
	*a = (n * sxy - sx * sy) / d;
	*b = (sy - *a * sx) / n;
	/* Exact inputs give exact integers: drop rounding noise. */
	if (fabs(*a - nearbyint(*a)) < 1e-9 * fmax(1, fabs(*a)))
		*a = nearbyint(*a);
	if (fabs(*b - nearbyint(*b)) < 1e-9 * fmax(1, fabs(*a) + fabs(*b)))
		*b = nearbyint(*b);
}

/* How much two threads' executions overlap: the sum over the blocks both
 * execute of the smaller of their instruction shares (1: the same
 * distribution, 0: disjoint code). */
static double overlap(const struct pthread_rec *a, const struct pthread_rec *b)
{
	uint32_t i = 0, j = 0;
	double s = 0;

	while (i < a->nsig && j < b->nsig) {
		if (a->sig[i] == b->sig[j]) {
			s += a->w[i] < b->w[j] ? a->w[i] : b->w[j];
			i++;
			j++;
		} else if (a->sig[i] < b->sig[j]) {
			i++;
		} else {
			j++;
		}
	}
	return s;
}

/* The group of thread @tr: the group whose first member's execution
 * overlaps most with its own, if by at least DBTP_GT_SIMILAR, else a new
 * one; -1 on ENOMEM. */
static int64_t find_group(dbtp_gt_model *m, const struct pthread_rec ***reps,
			  const struct pthread_rec *tr)
{
	const struct pthread_rec **r;
	struct dbtp_gt_group *g;
	double best = 0;
	int64_t bi = -1;

	for (uint32_t i = 0; i < m->ngrp; i++) {
		double o = overlap((*reps)[i], tr);

		if (o > best) {
			best = o;
			bi = i;
		}
	}
	if (bi >= 0 && best >= DBTP_GT_SIMILAR)
		return bi;
	g = realloc(m->grp, (m->ngrp + 1) * sizeof(*g));
	if (!g)
		return -1;
	m->grp = g;
	r = realloc(*reps, (m->ngrp + 1) * sizeof(*r));
	if (!r)
		return -1;
	*reps = r;
	g = &m->grp[m->ngrp];
	memset(g, 0, sizeof(*g));
	g->parent = -1;
	g->sizes = calloc(m->nprof, sizeof(*g->sizes));
	if (!g->sizes)
		return -1;
	r[m->ngrp] = tr;
	return m->ngrp++;
}

/* The union of group @gi's members' block sets, sorted, in *@out. */
static int group_union(const dbtp_gt_model *m, uint32_t gi, uint32_t **out,
		       uint32_t *n)
{
	size_t tot = 0, k = 0;
	uint32_t *u;

	for (uint32_t p = 0; p < m->nprof; p++)
		for (uint32_t i = 0; i < m->prof[p].nth; i++)
			if (m->prof[p].th[i].group == gi)
				tot += m->prof[p].th[i].nsig;
	u = malloc((tot ? tot : 1) * sizeof(*u));
	if (!u)
		return -1;
	for (uint32_t p = 0; p < m->nprof; p++)
		for (uint32_t i = 0; i < m->prof[p].nth; i++)
			if (m->prof[p].th[i].group == gi) {
				memcpy(u + k, m->prof[p].th[i].sig,
				       m->prof[p].th[i].nsig * sizeof(*u));
				k += m->prof[p].th[i].nsig;
			}
	qsort(u, tot, sizeof(*u), cmp_u32);
	k = 0;
	for (size_t i = 0; i < tot; i++)
		if (!k || u[k - 1] != u[i])
			u[k++] = u[i];
	*out = u;
	*n = (uint32_t)k;
	return 0;
}

/* Sum over group @gi's threads of profile @p of block @b's executions. */
static uint64_t group_count(const struct profile *p, const uint32_t *new2old,
			    uint32_t gi, uint32_t b)
{
	uint64_t s = 0, *c;

	for (uint32_t i = 0; i < p->nth; i++)
		if (p->th[i].group == gi &&
		    (c = dbtp_u64map_find(&p->th[i].counts, new2old[b])))
			s += *c;
	return s;
}

/* A thread's life in its parent's blocks. */
struct span {
	int32_t parent;
	uint64_t created, joined;
	int exact; /* joined where the parent waited in pthread_join */
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return (x->joined > y->joined) - (x->joined < y->joined);
}

/*
 * Group @gi's threads run one after another (pigz's writer, one a file):
 * in some profile one thread creates two or more of them, and in every
 * profile each is created after the one its creator made before it was
 * joined (strictly: a parent that ran no block between two creations may
 * have started both).  A join is where the parent waited for the child;
 * a child that had ended when its parent joined it (no wait) has its end
 * as the trace shows it, which can come late (QEMU wakes the parent
 * before the plugin hears of the end): such a join after the next
 * creation is let pass if some child of the group was waited for before
 * its next sibling's creation (pigz's writers), not otherwise (workers
 * at once that ended unwaited for).  At least one pair must be seen in
 * order.  Then, for each of the *@np profiles with such creators, @x
 * holds its thread parameter and @c and @j the mean relative points, over
 * its creators, of the first creation and the last join (each array room
 * for m->nprof).  0: not serial, 1: serial, -1: out of memory.
 */
static int serial_group(const dbtp_gt_model *m, uint32_t gi, double *x,
			double *c, double *j, uint32_t *np)
{
	/* pairs of children: [exact][in order], the one before joined by a
	 * wait (or not), before the next creation (or not) */
	uint32_t pairs[2][2] = {{0, 0}, {0, 0}};

	*np = 0;
	for (uint32_t p = 0; p < m->nprof; p++) {
		const struct profile *pr = &m->prof[p];
		struct span *v = malloc((pr->nth ? pr->nth : 1) * sizeof(*v));
		uint32_t n = 0, first = 0, ncreators = 0;
		double cs = 0, js = 0;

		if (!v)
			return -1;
		for (uint32_t i = 1; i < pr->nth; i++)
			if (pr->th[i].group == gi && pr->th[i].parent >= 0 &&
			    pr->th[pr->th[i].parent].blocks)
				v[n++] = (struct span){pr->th[i].parent,
						       pr->th[i].created_blocks,
						       pr->th[i].join_blocks,
						       pr->th[i].join_exact};
		qsort(v, n, sizeof(*v), cmp_span);
		/* v[first]: the creator's first child; v[i - 1] the one
		 * before */
		for (uint32_t i = 0; i <= n; i++) {
			if (i < n && i && v[i].parent == v[first].parent) {
				pairs[v[i - 1].exact]
				     [v[i].created > v[i - 1].joined]++;
				continue;
			}
			if (i) {
				double pb =
				    (double)pr->th[v[first].parent].blocks;

				cs += (double)v[first].created / pb;
				js += (double)v[i - 1].joined / pb;
				ncreators++;
			}
			first = i;
		}
		free(v);
		if (ncreators) {
			x[*np] = pr->threads;
			c[*np] = cs / ncreators;
			j[*np] = js / ncreators;
			++*np;
		}
	}
	/* no wait after the next creation; ends seen after it only where
	 * a wait came before one; one pair in order at least */
	return !pairs[1][0] && (!pairs[0][0] || pairs[1][1]) &&
	       pairs[0][1] + pairs[1][1];
}

/*
 * Group @g's creation and join points as linear functions of T, fitted
 * over the @n profiles (thread parameters @x) whose mean points were @c
 * and @j: a program whose parent creates its workers later as T grows
 * keeps that at another T.  None: created at the parent's start, joined
 * at its end.
 */
static void fit_points(struct dbtp_gt_group *g, const double *x,
		       const double *c, const double *j, uint32_t n)
{
	if (!n) {
		g->create_at = g->create_t = g->join_t = 0;
		g->join_at = 1;
		return;
	}
	dbtp_gt_fit(x, c, n, 0, &g->create_t, &g->create_at);
	dbtp_gt_fit(x, j, n, 0, &g->join_t, &g->join_at);
}

static int fit_group(dbtp_gt_model *m, uint32_t gi, const uint32_t *sig,
		     uint32_t nsig)
{
	struct dbtp_gt_group *g = &m->grp[gi];
	double *x = calloc(m->nprof + 1, sizeof(double));
	double *y = calloc(m->nprof + 1, sizeof(double));
	double *yj = calloc(m->nprof + 1, sizeof(double));
	uint32_t n = 0, big = 0, pvote = UINT32_MAX;
	uint32_t *votes = calloc(m->ngrp, sizeof(*votes));

	if (!x || !y || !yj || !votes)
		goto nomem;
	for (uint32_t p = 0; p < m->nprof; p++) {
		x[p] = m->prof[p].threads;
		y[p] = g->sizes[p];
		if (g->sizes[p] > g->sizes[big])
			big = p;
	}
	dbtp_gt_fit(x, y, m->nprof, 0, &g->alpha, &g->beta);
	g->hot = calloc(nsig ? nsig : 1, sizeof(*g->hot));
	if (!g->hot)
		goto nomem;
	g->nhot = nsig;
	for (uint32_t k = 0; k < nsig; k++) {
		n = 0;
		for (uint32_t p = 0; p < m->nprof; p++) {
			if (!g->sizes[p])
				continue;
			x[n] = g->sizes[p];
			y[n++] = (double)group_count(&m->prof[p], m->new2old,
						     gi, sig[k]);
		}
		g->hot[k].block = sig[k];
		dbtp_gt_fit(x, y, n, 1, &g->hot[k].theta, &g->hot[k].delta);
	}
	/* Distribution, from the profile with the largest group. */
	{
		const struct profile *p = &m->prof[big];
		uint64_t tot = 0;
		uint32_t j = 0, sz = g->sizes[big];

		g->shares = calloc(sz ? sz : 1, sizeof(*g->shares));
		if (!g->shares)
			goto nomem;
		g->nshares = sz;
		for (uint32_t i = 0; i < p->nth; i++)
			if (p->th[i].group == gi)
				tot += p->th[i].insns;
		g->even = 1;
		for (uint32_t i = 0; i < p->nth && j < sz; i++) {
			if (p->th[i].group != gi)
				continue;
			g->shares[j] =
			    tot ? (double)p->th[i].insns / tot : 1.0 / sz;
			if (fabs(g->shares[j] * sz - 1) > DBTP_GT_EVEN_TOL)
				g->even = 0;
			j++;
		}
	}
	/* Thread activity: parent group by vote; each profile's mean
	 * relative points, fitted in T. */
	n = 0;
	for (uint32_t p = 0; p < m->nprof; p++) {
		const struct profile *pr = &m->prof[p];
		double csum = 0, jsum = 0;
		uint32_t nc = 0;

		for (uint32_t i = 1; i < pr->nth; i++) {
			const struct pthread_rec *tr = &pr->th[i];
			const struct pthread_rec *pt;

			if (tr->group != gi || tr->parent < 0)
				continue;
			pt = &pr->th[tr->parent];
			if (pt->group >= m->ngrp)
				continue;
			votes[pt->group]++;
			if (pt->blocks) {
				csum += (double)tr->created_blocks / pt->blocks;
				jsum += (double)tr->join_blocks / pt->blocks;
				nc++;
			}
		}
		if (nc) {
			x[n] = pr->threads;
			y[n] = csum / nc;
			yj[n++] = jsum / nc;
		}
	}
	fit_points(g, x, y, yj, n);
	for (uint32_t k = 0; k < m->ngrp; k++)
		if (votes[k] &&
		    (pvote == UINT32_MAX || votes[k] > votes[pvote]))
			pvote = k;
	g->parent = pvote == UINT32_MAX ? -1 : (int32_t)pvote;
	switch (serial_group(m, gi, x, y, yj, &n)) {
	case -1:
		goto nomem;
	case 1:
		g->serial = 1;
		fit_points(g, x, y, yj, n);
	}
	free(x);
	free(y);
	free(yj);
	free(votes);
	return 0;
nomem:
	free(x);
	free(y);
	free(yj);
	free(votes);
	return -1;
}

static const dbtp_gt_model *sort_model;

static int cmp_block(const void *a, const void *b)
{
	const struct dbtp_gt_block *x = &sort_model->blk[*(const uint32_t *)a];
	const struct dbtp_gt_block *y = &sort_model->blk[*(const uint32_t *)b];

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->nbytes != y->nbytes)
		return x->nbytes < y->nbytes ? -1 : 1;
	return memcmp(x->bytes, y->bytes, x->nbytes);
}

/* Order the blocks by address (then code) so the output does not depend
 * on how the trace interleaved threads. */
static int sort_blocks(dbtp_gt_model *m)
{
	struct dbtp_gt_block *nb;
	uint32_t n = m->nblk;

	m->new2old = malloc((n ? n : 1) * sizeof(uint32_t));
	m->old2new = malloc((n ? n : 1) * sizeof(uint32_t));
	nb = malloc((n ? n : 1) * sizeof(*nb));
	if (!m->new2old || !m->old2new || !nb) {
		free(nb);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		m->new2old[i] = i;
	sort_model = m;
	qsort(m->new2old, n, sizeof(uint32_t), cmp_block);
	sort_model = NULL;
	for (uint32_t i = 0; i < n; i++) {
		m->old2new[m->new2old[i]] = i;
		nb[i] = m->blk[m->new2old[i]];
	}
	free(m->blk);
	m->blk = nb;
	m->capblk = n;
	return 0;
}

int dbtp_gt_model_finish(dbtp_gt_model *m, dbtp_err *err)
{
	const struct pthread_rec **reps = NULL;
	int rc = -1;

	if (m->finished)
		return 0;
	if (!m->nprof)
		return dbtp_err_set(err, EINVAL, "no profile");
	m->finished = 1;
	if (sort_blocks(m))
		goto nomem;
	/* Group 0 is the first thread's group of the first profile. */
	for (uint32_t p = 0; p < m->nprof; p++) {
		struct profile *pr = &m->prof[p];

		for (uint32_t i = 0; i < pr->nth; i++) {
			int64_t g;

			if (thread_sig(m, &pr->th[i]))
				goto nomem;
			if (!pr->th[i].nsig) {
				pr->th[i].group = UINT32_MAX;
				continue;
			}
			g = find_group(m, &reps, &pr->th[i]);
			if (g < 0)
				goto nomem;
			pr->th[i].group = (uint32_t)g;
			m->grp[g].sizes[p]++;
		}
	}
	for (uint32_t g = 0; g < m->ngrp; g++) {
		uint32_t *u, nu;
		int r;

		if (group_union(m, g, &u, &nu))
			goto nomem;
		r = fit_group(m, g, u, nu);
		free(u);
		if (r)
			goto nomem;
	}
	/* Parents: no self-parents or cycles; a group without one hangs off
	 * the first thread's group (created at its start, joined at its
	 * end). */
	for (uint32_t g = 1; g < m->ngrp; g++) {
		struct dbtp_gt_group *gr = &m->grp[g];
		int32_t q = gr->parent;
		uint32_t steps = 0;

		while (q > 0 && (uint32_t)q != g && steps++ <= m->ngrp)
			q = m->grp[q].parent;
		if (gr->parent < 0 || q == (int32_t)g || steps > m->ngrp) {
			gr->parent = 0;
			if (q == (int32_t)g || steps > m->ngrp) {
				gr->create_at = gr->create_t = 0;
				gr->join_at = 1;
				gr->join_t = 0;
				gr->serial = 0;
			}
		}
	}
	if (m->ngrp)
		m->grp[0].parent = -1;
	rc = 0;
	goto out;
nomem:
	rc = dbtp_err_set(err, ENOMEM, "out of memory");
out:
	free(reps);
	return rc;
}

enum dbtp_arch dbtp_gt_model_arch(const dbtp_gt_model *m)
{
	return m->arch;
}

uint32_t dbtp_gt_model_nprofiles(const dbtp_gt_model *m)
{
	return m->nprof;
}

double dbtp_gt_model_threads(const dbtp_gt_model *m, uint32_t profile)
{
	return profile < m->nprof ? m->prof[profile].threads : 0;
}

void dbtp_gt_model_branches(const dbtp_gt_model *m, uint32_t profile,
			    struct dbtp_gt_branches *out)
{
	*out = m->prof[profile].br;
}

int dbtp_gt_model_mem(const dbtp_gt_model *m)
{
	return m->mem;
}

int dbtp_gt_model_sampled(const dbtp_gt_model *m)
{
	return m->sampled;
}

uint32_t dbtp_gt_model_nblocks(const dbtp_gt_model *m)
{
	return m->nblk;
}

const struct dbtp_gt_block *dbtp_gt_model_block(const dbtp_gt_model *m,
						uint32_t i)
{
	return i < m->nblk ? &m->blk[i] : NULL;
}

uint32_t dbtp_gt_model_ngroups(const dbtp_gt_model *m)
{
	return m->ngrp;
}

const struct dbtp_gt_group *dbtp_gt_model_group(const dbtp_gt_model *m,
						uint32_t i)
{
	return i < m->ngrp ? &m->grp[i] : NULL;
}

void dbtp_gt_model_free(dbtp_gt_model *m)
{
	if (!m)
		return;
	for (uint32_t p = 0; p < m->nprof; p++) {
		for (uint32_t i = 0; i < m->prof[p].nth; i++) {
			dbtp_u64map_free(&m->prof[p].th[i].counts);
			free(m->prof[p].th[i].sig);
			free(m->prof[p].th[i].w);
		}
		free(m->prof[p].th);
	}
	free(m->prof);
	for (uint32_t i = 0; i < m->nblk; i++) {
		free(m->blk[i].sizes);
		free(m->blk[i].bytes);
		free(m->blk[i].tg);
	}
	free(m->blk);
	for (uint32_t g = 0; g < m->ngrp; g++) {
		free(m->grp[g].shares);
		free(m->grp[g].hot);
		free(m->grp[g].sizes);
	}
	free(m->grp);
	dbtp_u64map_free(&m->index);
	dbtp_disasm_close(m->dis);
	free(m->old2new);
	free(m->new2old);
	free(m);
}

/* Nearest integer, ties to even, the way the generated program computes
 * it (no libm there). */
static double rnd(double x)
{
	if (x >= 4503599627370496.0 || x <= -4503599627370496.0)
		return x;
	if (x >= 0)
		return (x + 4503599627370496.0) - 4503599627370496.0;
	return -((-x + 4503599627370496.0) - 4503599627370496.0);
}

uint64_t dbtp_gt_size(const struct dbtp_gt_group *g, double threads)
{
	double s = rnd(g->alpha * threads + g->beta);

	return s > 0 ? (uint64_t)s : 0;
}

/* @x within [0, 1] (0 if not a number). */
static double unit(double x)
{
	return x > 1 ? 1 : x > 0 ? x : 0;
}

void dbtp_gt_group_points(const struct dbtp_gt_group *g, double threads,
			  double *create, double *join)
{
	double c = unit(g->create_t * threads + g->create_at);
	double j = unit(g->join_t * threads + g->join_at);

	*create = c;
	*join = j > c ? j : c;
}

/* Cumulative share of the first @x (0..1) of the group's threads. */
static double cum_share(const struct dbtp_gt_group *g, double x)
{
	double pos = x * g->nshares, c = 0;
	uint32_t i;

	if (x >= 1)
		return 1;
	for (i = 0; i + 1 <= pos && i < g->nshares; i++)
		c += g->shares[i];
	if (i < g->nshares)
		c += (pos - i) * g->shares[i];
	return c;
}

uint64_t dbtp_gt_count(const struct dbtp_gt_group *g,
		       const struct dbtp_gt_hot *h, uint64_t m, uint64_t i)
{
	double t = rnd(h->theta * (double)m + h->delta);
	uint64_t tot = t > 0 ? (uint64_t)t : 0;

	if (!m || i >= m)
		return 0;
	if (g->even || !g->nshares)
		return (uint64_t)((unsigned __int128)tot * (i + 1) / m -
				  (unsigned __int128)tot * i / m);
	return (uint64_t)(rnd(tot * cum_share(g, (double)(i + 1) / m)) -
			  rnd(tot * cum_share(g, (double)i / m)));
}

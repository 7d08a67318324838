/* SPDX-License-Identifier: MIT */
/*
 * compare.c - the first divergence of two traces' instruction streams, per
 * thread, in bounded memory (see dbtp/compare.h for the approach), and
 * rule-based hints at its cause.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dbtp/compare.h"
#include "dbtp/symbolize.h"
#include "dbtp/syscalls.h"

#define DEFAULT_CONTEXT 5
#define DEFAULT_MAX_QUEUED ((uint64_t)1 << 22)
#define SYS_EXTRA 32	   /* syscalls kept beyond the context, per side */
#define COMMON_MIN 16	   /* common blocks kept (the hints look at them) */
#define QUEUE_KEEP 4096	   /* an empty queue keeps this much capacity */
#define UNKNOWN UINT64_MAX /* dbtp_cmp_point.sys_before: history fell short */

enum { T_NEW, T_ACTIVE, T_SKIP, T_DONE, T_DEFERRED };

struct sysring {
	struct dbtp_cmp_syscall *e;
	unsigned cap, len, head; /* head: the oldest */
	uint64_t n;		 /* pushed in all */
};

/* One trace's view of one thread during a pass. */
struct side {
	uint32_t *q; /* ring of block ids read but not compared; its
		      * capacity is a power of two */
	size_t qcap, qhead, qlen;
	uint32_t k, off; /* of the head block: instructions, bytes matched */
	uint64_t popped; /* blocks compared */
	uint64_t insns;	 /* instructions of the blocks read */
	int ended;
	struct sysring sys;
};

struct tstate {
	int state;
	struct side s[2];
	uint64_t matched;		/* instructions common to both */
	struct dbtp_cmp_common *common; /* ring, A's block ids */
	unsigned ccap, clen, chead;
};

struct ctx {
	struct dbtp_cmp *c;
	const char *path[2];
	unsigned context;
	uint64_t limit;
	uint8_t *deferred; /* per thread number */
	size_t ndeferred;
	uint32_t *eq; /* A block id -> B block id + 1 known to be alike */
	size_t neq;
	dbtp_err *err;
};

struct pass {
	struct ctx *x;
	unsigned num;
	dbtp_trace *t[2];
	struct tstate *th;
	uint32_t nth;
	uint64_t queued[2];
	unsigned active;
	int eof[2];
};

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "out of memory");
}

static void sys_push(struct sysring *r, const struct dbtp_cmp_syscall *s)
{
	if (!r->cap)
		return;
	if (r->len == r->cap) {
		r->e[r->head] = *s;
		r->head = (r->head + 1) % r->cap;
	} else {
		r->e[(r->head + r->len) % r->cap] = *s;
		r->len++;
	}
	r->n++;
}

static struct dbtp_cmp_syscall *sys_at(struct sysring *r, unsigned i)
{
	return &r->e[(r->head + i) % r->cap];
}

/* The SYSRET of the newest call. */
static void sys_ret(struct sysring *r, int64_t sysno, int64_t ret)
{
	struct dbtp_cmp_syscall *s;

	if (!r->len)
		return;
	s = sys_at(r, r->len - 1);
	if (s->sysno == sysno && !s->returned) {
		s->ret = ret;
		s->returned = 1;
	}
}

static struct dbtp_cmp_thread *slot(struct dbtp_cmp *c, uint32_t num,
				    dbtp_err *err)
{
	if (num >= c->nthreads) {
		struct dbtp_cmp_thread *n;

		n = realloc(c->threads, ((size_t)num + 1) * sizeof(*n));
		if (!n) {
			nomem(err);
			return NULL;
		}
		memset(n + c->nthreads, 0,
		       ((size_t)num + 1 - c->nthreads) * sizeof(*n));
		for (uint32_t i = c->nthreads; i <= num; i++)
			n[i].num = i;
		c->threads = n;
		c->nthreads = num + 1;
	}
	return &c->threads[num];
}

static void side_free(struct side *s)
{
	free(s->q);
	free(s->sys.e);
	memset(s, 0, sizeof(*s));
}

static void retire(struct pass *p, struct tstate *ts, int state)
{
	for (int s = 0; s < 2; s++) {
		p->queued[s] -= ts->s[s].qlen;
		side_free(&ts->s[s]);
	}
	free(ts->common);
	ts->common = NULL;
	ts->clen = ts->ccap = ts->chead = 0;
	ts->state = state;
	p->active--;
}

static int activate(struct pass *p, struct tstate *ts)
{
	unsigned cap = p->x->context + SYS_EXTRA;

	memset(ts, 0, sizeof(*ts));
	ts->state = T_ACTIVE;
	ts->ccap = p->x->context > COMMON_MIN ? p->x->context : COMMON_MIN;
	ts->common = calloc(ts->ccap, sizeof(*ts->common));
	if (!ts->common)
		return nomem(p->x->err);
	for (int s = 0; s < 2; s++) {
		ts->s[s].ended = p->eof[s];
		ts->s[s].sys.cap = cap;
		ts->s[s].sys.e = calloc(cap, sizeof(struct dbtp_cmp_syscall));
		if (!ts->s[s].sys.e)
			return nomem(p->x->err);
	}
	p->active++;
	return 0;
}

static struct tstate *tget(struct pass *p, uint32_t num)
{
	if (num >= p->nth) {
		uint32_t n = p->nth ? p->nth : 8;
		struct tstate *t;

		while (n <= num)
			n *= 2;
		t = realloc(p->th, (size_t)n * sizeof(*t));
		if (!t) {
			nomem(p->x->err);
			return NULL;
		}
		memset(t + p->nth, 0, (size_t)(n - p->nth) * sizeof(*t));
		p->th = t;
		p->nth = n;
	}
	return &p->th[num];
}

static int q_push(struct pass *p, struct side *s, uint32_t id)
{
	if (s->qlen == s->qcap) {
		size_t n = s->qcap ? s->qcap * 2 : 64;
		uint32_t *q = malloc(n * sizeof(*q));

		if (!q)
			return nomem(p->x->err);
		for (size_t i = 0; i < s->qlen; i++)
			q[i] = s->q[(s->qhead + i) & (s->qcap - 1)];
		free(s->q);
		s->q = q;
		s->qcap = n;
		s->qhead = 0;
	}
	s->q[(s->qhead + s->qlen) & (s->qcap - 1)] = id;
	s->qlen++;
	return 0;
}

static void q_pop(struct pass *p, struct tstate *ts, int side)
{
	struct side *s = &ts->s[side];

	s->qhead = (s->qhead + 1) & (s->qcap - 1);
	s->qlen--;
	s->k = s->off = 0;
	s->popped++;
	p->queued[side]--;
	if (!s->qlen && s->qcap > QUEUE_KEEP) {
		free(s->q);
		s->q = NULL;
		s->qcap = s->qhead = 0;
	}
}

static const struct dbtp_block *q_head(struct pass *p, int side,
				       const struct side *s)
{
	return dbtp_trace_block(p->t[side], s->q[s->qhead]);
}

static void common_push(struct tstate *ts, uint32_t id, uint64_t insn)
{
	struct dbtp_cmp_common *e;

	if (ts->clen == ts->ccap) {
		e = &ts->common[ts->chead];
		if (++ts->chead == ts->ccap)
			ts->chead = 0;
	} else {
		unsigned i = ts->chead + ts->clen++;

		e = &ts->common[i < ts->ccap ? i : i - ts->ccap];
	}
	e->block = id;
	e->insn = insn;
	e->ninsns = 0;
}

/* Blocks of A and B with the same instruction addresses. */
static int alike(struct ctx *x, const struct dbtp_block *a,
		 const struct dbtp_block *b, uint32_t nblocks_a)
{
	if (a->vaddr != b->vaddr || a->ninsns != b->ninsns)
		return 0;
	if (a->id < x->neq && x->eq[a->id] == b->id + 1)
		return 1;
	/* The last instruction's size moves no address of this block. */
	if (a->ninsns > 1 && memcmp(a->sizes, b->sizes, a->ninsns - 1))
		return 0;
	if (a->id >= x->neq) {
		size_t n = x->neq ? x->neq : 1024;
		uint32_t *e;

		while (n <= a->id)
			n *= 2;
		if (n < nblocks_a)
			n = nblocks_a;
		e = realloc(x->eq, n * sizeof(*e));
		if (!e)
			return 1; /* no cache, still alike */
		memset(e + x->neq, 0, (n - x->neq) * sizeof(*e));
		x->eq = e;
		x->neq = n;
	}
	x->eq[a->id] = b->id + 1;
	return 1;
}

/* Fill one side of a divergence at instruction @d. */
static int point_fill(struct pass *p, int side, struct side *s, uint64_t d,
		      struct dbtp_cmp_point *pt)
{
	struct sysring *r = &s->sys;
	unsigned after = 0, avail, need;
	uint64_t before;

	memset(pt, 0, sizeof(*pt));
	if (!s->qlen) {
		pt->ended = 1;
	} else {
		const struct dbtp_block *b = q_head(p, side, s);

		pt->addr = b->vaddr + s->off;
		pt->block = b->id;
		pt->insn_in_block = s->k;
		pt->block_index = s->popped;
	}
	/* Calls made after the divergence are the newest ones. */
	while (after < r->len && sys_at(r, r->len - 1 - after)->insn > d)
		after++;
	avail = r->len - after;
	if (after == r->len && r->n > r->len) {
		pt->sys_before = UNKNOWN;
		return 0;
	}
	before = r->n - after;
	need = before < p->x->context ? (unsigned)before : p->x->context;
	if (avail < need) {
		pt->sys_before = UNKNOWN;
		return 0;
	}
	pt->sys_before = before;
	if (!need)
		return 0;
	pt->sys = calloc(need, sizeof(*pt->sys));
	if (!pt->sys)
		return nomem(p->x->err);
	for (unsigned i = 0; i < need; i++)
		pt->sys[i] = *sys_at(r, avail - need + i);
	pt->nsys = need;
	return 0;
}

static int diverge(struct pass *p, struct tstate *ts, uint32_t num)
{
	struct dbtp_cmp_thread *r = slot(p->x->c, num, p->x->err);
	uint64_t d = ts->matched;

	if (!r)
		return -1;
	r->diverged = 1;
	r->insn = d;
	r->pass = p->num;
	p->x->c->diverged++;
	for (int s = 0; s < 2; s++)
		if (point_fill(p, s, &ts->s[s], d, &r->at[s]))
			return -1;
	if (ts->clen) {
		r->common = calloc(ts->clen, sizeof(*r->common));
		if (!r->common)
			return nomem(p->x->err);
		for (unsigned i = 0; i < ts->clen; i++) {
			struct dbtp_cmp_common *e =
			    &ts->common[(ts->chead + i) % ts->ccap];
			const struct dbtp_block *b =
			    dbtp_trace_block(p->t[0], e->block);
			uint64_t n = d - e->insn;

			e->ninsns = n < b->ninsns ? (uint32_t)n : b->ninsns;
			r->common[i] = *e;
		}
		r->ncommon = ts->clen;
	}
	retire(p, ts, T_DONE);
	return 0;
}

/* Compare what both sides have of thread @num; settle it if possible. */
static int match(struct pass *p, struct tstate *ts, uint32_t num)
{
	struct side *a = &ts->s[0], *b = &ts->s[1];
	uint32_t nba = dbtp_trace_nblocks(p->t[0]);

	while (a->qlen && b->qlen) {
		const struct dbtp_block *x = q_head(p, 0, a);
		const struct dbtp_block *y = q_head(p, 1, b);

		if (!a->k && !b->k && alike(p->x, x, y, nba)) {
			common_push(ts, x->id, ts->matched);
			ts->matched += x->ninsns;
			q_pop(p, ts, 0);
			q_pop(p, ts, 1);
			continue;
		}
		/* Cut into blocks differently, or different: instructions. */
		while (a->k < x->ninsns && b->k < y->ninsns) {
			if (x->vaddr + a->off != y->vaddr + b->off)
				return diverge(p, ts, num);
			if (!a->k)
				common_push(ts, x->id, ts->matched);
			a->off += x->sizes[a->k++];
			b->off += y->sizes[b->k++];
			ts->matched++;
		}
		if (a->k == x->ninsns)
			q_pop(p, ts, 0);
		if (b->k == y->ninsns)
			q_pop(p, ts, 1);
	}
	if ((a->ended && !a->qlen && b->qlen) ||
	    (b->ended && !b->qlen && a->qlen))
		return diverge(p, ts, num);
	if (a->ended && b->ended) {
		struct dbtp_cmp_thread *r = slot(p->x->c, num, p->x->err);

		if (!r)
			return -1;
		r->pass = p->num;
		retire(p, ts, T_DONE);
	}
	return 0;
}

/* Too much queued: put the thread with the longest queue off. */
static int put_off(struct pass *p)
{
	uint32_t best = 0;
	size_t most = 0;

	for (uint32_t i = 0; i < p->nth; i++) {
		struct tstate *ts = &p->th[i];
		size_t n;

		if (ts->state != T_ACTIVE)
			continue;
		n = ts->s[0].qlen + ts->s[1].qlen;
		if (n > most) {
			most = n;
			best = i;
		}
	}
	if (!most)
		return 0;
	if (best >= p->x->ndeferred) {
		size_t n = p->x->ndeferred ? p->x->ndeferred : 64;
		uint8_t *d;

		while (n <= best)
			n *= 2;
		d = realloc(p->x->deferred, n);
		if (!d)
			return nomem(p->x->err);
		memset(d + p->x->ndeferred, 0, n - p->x->ndeferred);
		p->x->deferred = d;
		p->x->ndeferred = n;
	}
	p->x->deferred[best] = 1;
	retire(p, &p->th[best], T_DEFERRED);
	return 0;
}

static int open_one(dbtp_trace **t, const char *path, dbtp_err *err)
{
	struct stat st;

	if (stat(path, &st))
		return dbtp_err_set(err, errno, "%s: %s", path,
				    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return dbtp_err_set(err, EINVAL,
				    "%s: not a regular file (compare may read "
				    "a trace more than once)",
				    path);
	if (dbtp_trace_open(t, path, err)) {
		if (strstr(err->msg, "bad magic"))
			dbtp_err_set(err, EINVAL,
				     "%s: not a trace (compare reads dbtprof "
				     "traces in blocks or mem mode)",
				     path);
		return -1;
	}
	if (dbtp_trace_info(*t)->mode == DBTP_MODE_COUNT) {
		dbtp_err_set(err, EINVAL,
			     "%s: a count-mode trace has no block order; "
			     "record with -m blocks or -m mem",
			     path);
		dbtp_trace_close(*t);
		*t = NULL;
		return -1;
	}
	return 0;
}

static int event(struct pass *p, int side, const struct dbtp_event *ev)
{
	struct tstate *ts;
	struct side *s;

	switch (ev->type) {
	case DBTP_EV_BLOCK:
	case DBTP_EV_SYSCALL:
	case DBTP_EV_SYSRET:
	case DBTP_EV_THREAD_EXIT:
		break;
	default:
		return 0;
	}
	ts = tget(p, ev->thread);
	if (!ts)
		return -1;
	if (ts->state == T_NEW) {
		if (p->num > 1)
			ts->state = T_SKIP;
		else if (activate(p, ts))
			return -1;
	}
	if (ts->state != T_ACTIVE)
		return 0;
	s = &ts->s[side];
	switch (ev->type) {
	case DBTP_EV_BLOCK:
		if (q_push(p, s, ev->block->id))
			return -1;
		s->insns += ev->block->ninsns;
		p->queued[side]++;
		if (match(p, ts, ev->thread))
			return -1;
		if (p->queued[0] + p->queued[1] > p->x->limit && p->active > 1)
			return put_off(p);
		return 0;
	case DBTP_EV_SYSCALL: {
		struct dbtp_cmp_syscall sc = {0};

		sc.sysno = ev->sysno;
		memcpy(sc.args, ev->args, sizeof(sc.args));
		sc.insn = s->insns;
		sc.index = s->sys.n;
		sys_push(&s->sys, &sc);
		return 0;
	}
	case DBTP_EV_SYSRET:
		sys_ret(&s->sys, ev->sysno, ev->ret);
		return 0;
	default: /* THREAD_EXIT */
		s->ended = 1;
		return match(p, ts, ev->thread);
	}
}

/*
 * One pass over both traces.  Pass 1 compares every thread as it appears
 * and reads both traces to their end; later passes compare the threads put
 * off so far and stop when those are settled.
 */
static int run_pass(struct ctx *x, unsigned num)
{
	struct pass p = {.x = x, .num = num};
	struct dbtp_event ev;
	int rc = -1, turn = 1;

	for (int s = 0; s < 2; s++) {
		if (num == 1) {
			p.t[s] = x->c->t[s];
		} else if (open_one(&p.t[s], x->path[s], x->err)) {
			goto out;
		}
	}
	if (num > 1) {
		/* Put-off threads of the earlier passes, all at once. */
		for (uint32_t i = 0; i < x->ndeferred; i++) {
			struct tstate *ts;

			if (!x->deferred[i])
				continue;
			x->deferred[i] = 0;
			ts = tget(&p, i);
			if (!ts || activate(&p, ts))
				goto out;
		}
	}
	while (!p.eof[0] || !p.eof[1]) {
		int side, r;

		if (num > 1 && !p.active)
			break;
		if (p.eof[0])
			side = 1;
		else if (p.eof[1])
			side = 0;
		else if (p.queued[0] != p.queued[1])
			side =
			    p.queued[0] > p.queued[1]; /* read the one behind */
		else
			side = turn ^= 1;
		r = dbtp_trace_next(p.t[side], &ev, x->err);
		if (r < 0)
			goto out;
		if (r > 0) {
			if (event(&p, side, &ev))
				goto out;
			continue;
		}
		p.eof[side] = 1;
		for (uint32_t i = 0; i < p.nth; i++) {
			if (p.th[i].state != T_ACTIVE)
				continue;
			p.th[i].s[side].ended = 1;
			if (match(&p, &p.th[i], i))
				goto out;
		}
	}
	rc = 0;
out:
	for (uint32_t i = 0; i < p.nth; i++)
		if (p.th[i].state == T_ACTIVE)
			retire(&p, &p.th[i], T_DONE);
	free(p.th);
	if (num > 1)
		for (int s = 0; s < 2; s++)
			dbtp_trace_close(p.t[s]);
	return rc;
}

/* Syscall histories that a trace far ahead pushed out: read them again. */
struct want {
	uint64_t d, insns, n;
	struct sysring r;
	int on, done;
};

static int refill_side(struct ctx *x, int side)
{
	struct dbtp_cmp *c = x->c;
	struct want *w;
	dbtp_trace *t = NULL;
	struct dbtp_event ev;
	unsigned left = 0;
	int r = 0, rc = -1;

	w = calloc(c->nthreads ? c->nthreads : 1, sizeof(*w));
	if (!w)
		return nomem(x->err);
	for (uint32_t i = 0; i < c->nthreads; i++) {
		if (!c->threads[i].diverged ||
		    c->threads[i].at[side].sys_before != UNKNOWN)
			continue;
		w[i].on = 1;
		w[i].d = c->threads[i].insn;
		w[i].r.cap = x->context;
		if (x->context) {
			w[i].r.e = calloc(x->context, sizeof(*w[i].r.e));
			if (!w[i].r.e) {
				nomem(x->err);
				goto out;
			}
		}
		left++;
	}
	if (!left) {
		rc = 0;
		goto out;
	}
	if (open_one(&t, x->path[side], x->err))
		goto out;
	while (left && (r = dbtp_trace_next(t, &ev, x->err)) > 0) {
		struct want *wi;

		if (ev.type != DBTP_EV_BLOCK && ev.type != DBTP_EV_SYSCALL &&
		    ev.type != DBTP_EV_SYSRET)
			continue;
		if (ev.thread >= c->nthreads)
			continue;
		wi = &w[ev.thread];
		if (!wi->on || wi->done)
			continue;
		if (ev.type == DBTP_EV_BLOCK) {
			wi->insns += ev.block->ninsns;
			if (wi->insns > wi->d) {
				wi->done = 1;
				left--;
			}
		} else if (ev.type == DBTP_EV_SYSCALL) {
			struct dbtp_cmp_syscall sc = {0};

			sc.sysno = ev.sysno;
			memcpy(sc.args, ev.args, sizeof(sc.args));
			sc.insn = wi->insns;
			sc.index = wi->n++;
			sys_push(&wi->r, &sc);
		} else {
			sys_ret(&wi->r, ev.sysno, ev.ret);
		}
	}
	if (r < 0)
		goto out;
	for (uint32_t i = 0; i < c->nthreads; i++) {
		struct dbtp_cmp_point *pt = &c->threads[i].at[side];

		if (!w[i].on)
			continue;
		pt->sys_before = w[i].n;
		pt->nsys = w[i].r.len;
		if (!pt->nsys)
			continue;
		pt->sys = calloc(pt->nsys, sizeof(*pt->sys));
		if (!pt->sys) {
			nomem(x->err);
			goto out;
		}
		for (unsigned k = 0; k < pt->nsys; k++)
			pt->sys[k] = *sys_at(&w[i].r, k);
	}
	rc = 0;
out:
	for (uint32_t i = 0; i < c->nthreads; i++)
		free(w[i].r.e);
	free(w);
	dbtp_trace_close(t);
	return rc;
}

static int any_deferred(const struct ctx *x)
{
	for (size_t i = 0; i < x->ndeferred; i++)
		if (x->deferred[i])
			return 1;
	return 0;
}

int dbtp_compare(struct dbtp_cmp **out, const char *a, const char *b,
		 const struct dbtp_cmp_opts *opts, dbtp_err *err)
{
	struct ctx x = {0};
	struct dbtp_cmp *c = calloc(1, sizeof(*c));
	enum dbtp_arch aa, ab;
	uint32_t n;

	*out = NULL;
	if (!c)
		return nomem(err);
	x.c = c;
	x.path[0] = a;
	x.path[1] = b;
	x.context = opts && opts->context ? opts->context : DEFAULT_CONTEXT;
	x.limit =
	    opts && opts->max_queued ? opts->max_queued : DEFAULT_MAX_QUEUED;
	x.err = err;
	c->context = x.context;
	if (open_one(&c->t[0], a, err) || open_one(&c->t[1], b, err))
		goto fail;
	aa = dbtp_trace_info(c->t[0])->arch;
	ab = dbtp_trace_info(c->t[1])->arch;
	if (aa != ab) {
		dbtp_err_set(err, EINVAL,
			     "%s records an %s guest, %s an %s one: nothing "
			     "to compare",
			     a, dbtp_arch_name(aa), b, dbtp_arch_name(ab));
		goto fail;
	}
	for (c->passes = 1;; c->passes++) {
		if (run_pass(&x, c->passes))
			goto fail;
		if (!any_deferred(&x))
			break;
	}
	for (int s = 0; s < 2; s++)
		if (refill_side(&x, s))
			goto fail;
	/* Totals, from the traces read whole in pass 1. */
	n = dbtp_trace_nthreads(c->t[0]);
	if (dbtp_trace_nthreads(c->t[1]) > n)
		n = dbtp_trace_nthreads(c->t[1]);
	if (n && !slot(c, n - 1, err))
		goto fail;
	for (uint32_t i = 0; i < c->nthreads; i++) {
		struct dbtp_cmp_thread *r = &c->threads[i];

		for (int s = 0; s < 2; s++) {
			const struct dbtp_thread *th =
			    dbtp_trace_thread(c->t[s], i);

			r->present[s] = th != NULL;
			if (!th)
				continue;
			r->insns[s] = th->insns;
			r->blocks[s] = th->blocks;
			r->syscalls[s] = th->syscalls;
		}
	}
	free(x.deferred);
	free(x.eq);
	*out = c;
	return 0;
fail:
	free(x.deferred);
	free(x.eq);
	dbtp_compare_free(c);
	return -1;
}

void dbtp_compare_free(struct dbtp_cmp *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nthreads; i++) {
		free(c->threads[i].at[0].sys);
		free(c->threads[i].at[1].sys);
		free(c->threads[i].common);
	}
	free(c->threads);
	dbtp_trace_close(c->t[0]);
	dbtp_trace_close(c->t[1]);
	free(c);
}

const struct dbtp_cmp_thread *dbtp_compare_first(const struct dbtp_cmp *c)
{
	for (uint32_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].diverged)
			return &c->threads[i];
	return NULL;
}

/*
 * Hints.  Each rule states a fact it checked and what usually follows from
 * it; "likely" only when the fact bears on the divergence itself.
 */

struct hints {
	const struct dbtp_cmp *c;
	const struct dbtp_cmp_thread *th;
	struct dbtp_cmp_hint *h;
	unsigned n;
};

static int has(const struct hints *hs, const char *cause)
{
	for (unsigned i = 0; i < hs->n; i++)
		if (!strcmp(hs->h[i].cause, cause))
			return 1;
	return 0;
}

static void add(struct hints *hs, const char *cause, int likely,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void add(struct hints *hs, const char *cause, int likely,
		const char *fmt, ...)
{
	struct dbtp_cmp_hint *h;
	va_list ap;

	if (hs->n == DBTP_CMP_MAX_HINTS || has(hs, cause))
		return;
	h = &hs->h[hs->n++];
	h->cause = cause;
	h->likely = likely;
	va_start(ap, fmt);
	vsnprintf(h->text, sizeof(h->text), fmt, ap);
	va_end(ap);
}

static const char *info(const struct hints *hs, int side, const char *key)
{
	return dbtp_trace_get(hs->c->t[side], key);
}

/* Both traces say, and they say different things. */
static int differs(const struct hints *hs, const char *key)
{
	const char *a = info(hs, 0, key), *b = info(hs, 1, key);

	return a && b && strcmp(a, b);
}

static int env_stored(const char *e)
{
	return e && strcmp(e, "(caller's, not stored)");
}

static int env_differs(const struct hints *hs)
{
	const char *a = info(hs, 0, "env"), *b = info(hs, 1, "env");

	if (env_stored(a) && env_stored(b))
		return strcmp(a, b) != 0;
	return differs(hs, "env_digest");
}

/* Is variable @name (length @n) in newline-separated @env; its line. */
static const char *env_find(const char *env, const char *name, size_t n)
{
	for (const char *p = env; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len > n && !strncmp(p, name, n) && p[n] == '=')
			return p;
		p = e ? e + 1 : p + len;
	}
	return NULL;
}

static size_t line_len(const char *p)
{
	const char *e = strchr(p, '\n');

	return e ? (size_t)(e - p) : strlen(p);
}

/* "B adds FOO=bar; A has X=1, B X=2" into @buf. */
static void env_diff(const struct hints *hs, char *buf, size_t size)
{
	const char *env[2] = {info(hs, 0, "env"), info(hs, 1, "env")};
	size_t k = 0;
	unsigned shown = 0, more = 0;

	buf[0] = 0;
	if (!env_stored(env[0]) || !env_stored(env[1])) {
		snprintf(buf, size, "environment digests %s and %s",
			 info(hs, 0, "env_digest") ? info(hs, 0, "env_digest")
						   : "?",
			 info(hs, 1, "env_digest") ? info(hs, 1, "env_digest")
						   : "?");
		return;
	}
	for (int s = 0; s < 2; s++) {
		for (const char *p = env[s]; *p;) {
			size_t len = line_len(p);
			const char *eq = memchr(p, '=', len);
			size_t nl = eq ? (size_t)(eq - p) : len;
			const char *o = env_find(env[!s], p, nl);
			int w = 0;

			if (!o && shown < 3)
				w = snprintf(buf + k, size - k,
					     "%s%s adds %.*s", k ? "; " : "",
					     s ? "B" : "A", (int)len, p);
			else if (o && s == 0 &&
				 (line_len(o) != len || strncmp(o, p, len)) &&
				 shown < 3)
				w = snprintf(buf + k, size - k,
					     "%s%.*s in A, %.*s in B",
					     k ? "; " : "", (int)len, p,
					     (int)line_len(o), o);
			else if (!o || (s == 0 && (line_len(o) != len ||
						   strncmp(o, p, len))))
				more++;
			if (w > 0) {
				shown++;
				k += (size_t)w;
				if (k >= size)
					return;
			}
			p += len;
			if (*p)
				p++;
		}
	}
	if (more && k < size)
		snprintf(buf + k, size - k, "; %u more", more);
	if (!buf[0])
		snprintf(buf, size, "the order of the variables");
}

static const char *sys_kind(const char *name)
{
	static const struct {
		const char *kind, *names;
	} kinds[] = {
	    {"random bytes", " getrandom "},
	    {"time", " clock_gettime gettimeofday time clock_getres "
		     "times "},
	    {"I/O", " read pread64 readv preadv preadv2 recvfrom recvmsg "
		    " recvmmsg write pwrite64 writev poll ppoll select "
		    "pselect6 epoll_wait epoll_pwait ioctl "},
	    {"working directory", " getcwd chdir fchdir "},
	    {"system identity (uname)", " uname sysinfo "},
	    {"file system", " open openat openat2 stat fstat lstat "
			    "newfstatat statx access faccessat faccessat2 "
			    "readlink readlinkat getdents64 lseek "},
	    {"thread timing", " futex sched_yield nanosleep "
			      "clock_nanosleep "},
	    {"memory layout", " mmap brk mremap "},
	};
	char key[64];

	if (!name || strlen(name) > sizeof(key) - 3)
		return NULL;
	snprintf(key, sizeof(key), " %s ", name);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
		if (strstr(kinds[i].names, key))
			return kinds[i].kind;
	return NULL;
}

/* Calls that return thread or process ids, which differ on every run. */
static int run_specific(const char *name)
{
	static const char *const ids[] = {
	    "clone",  "clone3", "fork",	   "vfork",
	    "getpid", "gettid", "getppid", "set_tid_address",
	};

	for (size_t i = 0; name && i < sizeof(ids) / sizeof(*ids); i++)
		if (!strcmp(name, ids[i]))
			return 1;
	return 0;
}

static void fmt_ret(int64_t v, char *buf, size_t n)
{
	if (v >= -4096 && v < (int64_t)1 << 32)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "0x%llx", (unsigned long long)v);
}

static void rule_syscalls(struct hints *hs)
{
	const struct dbtp_cmp_point *a = &hs->th->at[0], *b = &hs->th->at[1];
	enum dbtp_arch arch = dbtp_trace_info(hs->c->t[0])->arch;
	unsigned n = a->nsys < b->nsys ? a->nsys : b->nsys;

	if (a->sys_before != b->sys_before || a->sys_before == UNKNOWN)
		return;
	for (unsigned i = 1; i <= n; i++) {
		const struct dbtp_cmp_syscall *x = &a->sys[a->nsys - i];
		const struct dbtp_cmp_syscall *y = &b->sys[b->nsys - i];
		const char *name = dbtp_syscall_name(arch, x->sysno);
		const char *kind;
		char ra[32], rb[32], nth[40];

		if (x->sysno != y->sysno)
			return; /* a difference in data already */
		if (!x->returned || !y->returned || x->ret == y->ret ||
		    run_specific(name))
			continue;
		kind = sys_kind(name);
		fmt_ret(x->ret, ra, sizeof(ra));
		fmt_ret(y->ret, rb, sizeof(rb));
		if (i == 1)
			snprintf(nth, sizeof(nth), "the last syscall");
		else
			snprintf(nth, sizeof(nth), "syscall %u from the end",
				 i);
		add(hs, "syscall", 1,
		    "%s (%lld), %s before the divergence, returned %s in A "
		    "but %s in B%s%s%s",
		    name ? name : "a syscall", (long long)x->sysno, nth, ra, rb,
		    kind ? " (" : "", kind ? kind : "", kind ? ")" : "");
		return;
	}
}

/* The CPU identifies itself: x86 cpuid, AArch64 mrs of an ID register. */
static int reads_cpu_id(enum dbtp_arch arch, const uint8_t *p, unsigned len)
{
	if (arch == DBTP_ARCH_X86_64) {
		unsigned i = 0;

		while (i < len && (p[i] == 0x66 || p[i] == 0xf2 ||
				   p[i] == 0xf3 || (p[i] & 0xf0) == 0x40))
			i++;
		return i + 1 < len && p[i] == 0x0f && p[i + 1] == 0xa2;
	}
	if (arch == DBTP_ARCH_AARCH64 && len == 4) {
		uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

		return (w & 0xfffff000u) == 0xd5380000u;
	}
	return 0;
}

/* Blocks back from the divergence to the last CPU-id read, or -1. */
static int cpu_id_back(const struct hints *hs)
{
	const struct dbtp_cmp_thread *th = hs->th;
	enum dbtp_arch arch = dbtp_trace_info(hs->c->t[0])->arch;

	for (unsigned i = th->ncommon; i-- > 0;) {
		const struct dbtp_block *b =
		    dbtp_trace_block(hs->c->t[0], th->common[i].block);
		size_t off = 0;

		for (uint32_t k = 0; k < th->common[i].ninsns; k++) {
			if (reads_cpu_id(arch, b->bytes + off, b->sizes[k]))
				return (int)(th->ncommon - 1 - i);
			off += b->sizes[k];
		}
	}
	return -1;
}

static int ifunc_name(const char *n)
{
	static const char *const pats[] = {
	    "ifunc",  "cpu_features", "cpuid",	"_avx",	   "_sse",
	    "_evex",  "_erms",	      "_ssse3", "_sve",	   "_simd",
	    "_asimd", "_mops",	      "hwcap",	"tunable",
	};

	for (size_t i = 0; n && i < sizeof(pats) / sizeof(*pats); i++)
		if (strstr(n, pats[i]))
			return 1;
	return 0;
}

static const char *cpu_text(const struct hints *hs, char *buf, size_t n)
{
	if (differs(hs, "cpu"))
		snprintf(buf, n,
			 "the CPU models differ (A: -cpu %s, B: -cpu %s)",
			 info(hs, 0, "cpu"), info(hs, 1, "cpu"));
	else
		snprintf(buf, n, "the QEMU versions differ (A: %s, B: %s)",
			 info(hs, 0, "qemu_version"),
			 info(hs, 1, "qemu_version"));
	return buf;
}

static void rule_cpu(struct hints *hs, dbtp_symcache *cache)
{
	const char *names[2] = {NULL, NULL};
	char why[320];
	int back, cpu = differs(hs, "cpu") || differs(hs, "qemu_version");

	for (int s = 0; s < 2; s++) {
		const struct dbtp_cmp_point *pt = &hs->th->at[s];
		struct dbtp_sym sym;

		if (pt->ended)
			continue;
		if (dbtp_symbolize(
			cache, hs->c->t[s],
			dbtp_trace_block(hs->c->t[s], pt->block),
			pt->addr -
			    dbtp_trace_block(hs->c->t[s], pt->block)->vaddr,
			&sym))
			names[s] = sym.name;
	}
	back = cpu_id_back(hs);
	if (back >= 0 && cpu) {
		add(hs, "cpu", 1,
		    "%s ran %d block%s before the divergence and %s: the "
		    "CPU features differ, and glibc selects different "
		    "string/memory routines (IFUNC) from them",
		    dbtp_trace_info(hs->c->t[0])->arch == DBTP_ARCH_X86_64
			? "cpuid"
			: "a read of a CPU ID register",
		    back, back == 1 ? "" : "s", cpu_text(hs, why, sizeof(why)));
		return;
	}
	if (ifunc_name(names[0]) || ifunc_name(names[1])) {
		add(hs, "cpu", 1,
		    "the divergence is in CPU-feature dispatch (%s in A, %s in "
		    "B): IFUNC selection of string/memory routines%s%s",
		    names[0] ? names[0] : "?", names[1] ? names[1] : "?",
		    cpu ? "; " : "", cpu ? cpu_text(hs, why, sizeof(why)) : "");
	}
}

static void rule_startup(struct hints *hs)
{
	const struct dbtp_cmp_thread *th = hs->th;
	char buf[300];

	if (th->num != 0 || th->at[0].sys_before || th->at[1].sys_before)
		return;
	if (env_differs(hs)) {
		env_diff(hs, buf, sizeof(buf));
		add(hs, "environment", 1,
		    "the environments differ (%s) and the streams part before "
		    "the first syscall, when only the initial stack "
		    "(arguments, environment, auxiliary vector) and the CPU "
		    "can differ: startup code walks envp to find the "
		    "auxiliary vector, and the environment's size moves "
		    "every stack address",
		    buf);
		return;
	}
	if (differs(hs, "cpu")) {
		add(hs, "cpu", 1,
		    "the streams part before the first syscall and the CPU "
		    "models differ (A: -cpu %s, B: -cpu %s): CPU features "
		    "(cpuid, AT_HWCAP) decide, e.g. glibc's IFUNC selection",
		    info(hs, 0, "cpu"), info(hs, 1, "cpu"));
		return;
	}
	if (differs(hs, "seed")) {
		add(hs, "seed", 0,
		    "the streams part before the first syscall and the QEMU "
		    "seeds differ (%s, %s): the AT_RANDOM bytes of the "
		    "auxiliary vector differ",
		    info(hs, 0, "seed"), info(hs, 1, "seed"));
		return;
	}
	add(hs, "initial-stack", 0,
	    "the streams part before the first syscall, when only the "
	    "initial stack (arguments, environment, auxiliary vector, stack "
	    "address) and the CPU can differ");
}

/* Several threads ran by then: their interleaving differs by run. */
static void rule_threads(struct hints *hs)
{
	const struct dbtp_cmp_thread *th = hs->th;
	enum dbtp_arch arch = dbtp_trace_info(hs->c->t[0])->arch;
	int concurrent = th->num > 0, sync = 0;

	for (int s = 0; s < 2 && !concurrent; s++) {
		for (uint32_t i = 0; i < dbtp_trace_nthreads(hs->c->t[s]);
		     i++) {
			const struct dbtp_thread *o =
			    dbtp_trace_thread(hs->c->t[s], i);

			if (o && o->parent == (int32_t)th->num &&
			    o->created_insns <= th->insn)
				concurrent = 1;
		}
	}
	if (!concurrent)
		return;
	for (unsigned i = 0; i < th->at[0].nsys; i++) {
		const char *n = dbtp_syscall_name(arch, th->at[0].sys[i].sysno);

		if (n && (!strcmp(n, "futex") || !strcmp(n, "sched_yield")))
			sync = 1;
	}
	add(hs, "threads", sync,
	    "thread %u parts while other threads run%s: how threads "
	    "interleave differs from run to run (lock and futex waits, "
	    "spinning), and thread numbers follow the order threads "
	    "first run",
	    th->num, sync ? ", shortly after a futex wait or yield" : "");
}

static void rule_env_code(struct hints *hs, dbtp_symcache *cache)
{
	char buf[300];

	if (!env_differs(hs))
		return;
	for (int s = 0; s < 2; s++) {
		const struct dbtp_cmp_point *pt = &hs->th->at[s];
		const struct dbtp_block *b;
		struct dbtp_sym sym;

		if (pt->ended)
			continue;
		b = dbtp_trace_block(hs->c->t[s], pt->block);
		if (!dbtp_symbolize(cache, hs->c->t[s], b, pt->addr - b->vaddr,
				    &sym) ||
		    !strstr(sym.name, "env"))
			continue;
		env_diff(hs, buf, sizeof(buf));
		add(hs, "environment", 1,
		    "the divergence is in %s and the environments differ (%s)",
		    sym.name, buf);
		return;
	}
}

/* The last call before the divergence returns data that varies by run. */
static void rule_last_data(struct hints *hs)
{
	const struct dbtp_cmp_point *a = &hs->th->at[0];
	enum dbtp_arch arch = dbtp_trace_info(hs->c->t[0])->arch;
	const char *name, *kind;

	if (!a->nsys || hs->th->at[1].sys_before != a->sys_before)
		return;
	name = dbtp_syscall_name(arch, a->sys[a->nsys - 1].sysno);
	kind = sys_kind(name);
	if (!kind)
		return;
	if (!strcmp(kind, "random bytes"))
		add(hs, "random", 0,
		    "the last syscall before the divergence is getrandom: "
		    "the random bytes it returns differ from run to run");
	else if (!strcmp(kind, "time"))
		add(hs, "time", 0,
		    "the last syscall before the divergence is %s: the time "
		    "it returns differs from run to run",
		    name);
}

static void rule_setup(struct hints *hs)
{
	char buf[300];

	if (differs(hs, "cpu"))
		add(hs, "cpu", 0,
		    "the CPU models differ (A: -cpu %s, B: -cpu %s): glibc "
		    "selects different string/memory routines (IFUNC) by CPU "
		    "features",
		    info(hs, 0, "cpu"), info(hs, 1, "cpu"));
	if (env_differs(hs)) {
		env_diff(hs, buf, sizeof(buf));
		add(hs, "environment", 0,
		    "the environments differ (%s): the program may read them, "
		    "and they move stack addresses",
		    buf);
	}
	if (differs(hs, "cwd"))
		add(hs, "cwd", 0,
		    "the working directories differ (A: %s, B: %s)",
		    info(hs, 0, "cwd"), info(hs, 1, "cwd"));
	if (differs(hs, "qemu_version"))
		add(hs, "qemu", 0,
		    "the QEMU versions differ (A: %s, B: %s): emulated CPU "
		    "features and syscall emulation may differ",
		    info(hs, 0, "qemu_version"), info(hs, 1, "qemu_version"));
	if (differs(hs, "seed"))
		add(hs, "seed", 0,
		    "the QEMU seeds differ (%s, %s): AT_RANDOM differs",
		    info(hs, 0, "seed"), info(hs, 1, "seed"));
}

unsigned dbtp_compare_hints(const struct dbtp_cmp *c, dbtp_symcache *cache,
			    struct dbtp_cmp_hint *h)
{
	struct hints hs = {.c = c, .th = dbtp_compare_first(c), .h = h};
	int likely = 0;

	if (!hs.th)
		return 0;
	if (differs(&hs, "command") || differs(&hs, "program"))
		add(&hs, "command", 1, "the commands differ (A: %s, B: %s)",
		    info(&hs, 0, "command"), info(&hs, 1, "command"));
	rule_syscalls(&hs);
	rule_cpu(&hs, cache);
	if (!has(&hs, "command"))
		rule_startup(&hs);
	rule_threads(&hs);
	rule_env_code(&hs, cache);
	for (unsigned i = 0; i < hs.n; i++)
		likely |= h[i].likely;
	if (!likely) {
		rule_last_data(&hs);
		rule_setup(&hs);
	}
	return hs.n;
}

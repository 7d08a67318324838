/* SPDX-License-Identifier: MIT */
/*
 * cache.c - a two-level set-associative LRU cache model over a trace's
 * memory accesses (see dbtp/cache.h and doc/dbtprof-cache.md).
 *
 * A level is one flat array of 64-bit entries, @ways per set, each set kept
 * in recency order: entry 0 is the most recently used, entry @ways-1 the
 * least.  An entry is (line address << 1 | dirty), or EMPTY.  A hit moves
 * the entry to the front, a miss drops the last entry (the LRU line, or an
 * empty slot: empty slots always sit at the back) and puts the new line in
 * front.  Line addresses are at most 2^62 - 1 (lines are at least 4 bytes),
 * so EMPTY >> 1 never equals one and lookups need no valid bit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/bbv.h"
#include "dbtp/cache.h"
#include "util/file.h"

#define EMPTY UINT64_MAX

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "out of memory");
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

/* --- geometry ---------------------------------------------------------- */

uint64_t dbtp_cache_geom_sets(const struct dbtp_cache_geom *g)
{
	if (!g->ways || !g->line)
		return 0;
	return g->size / ((uint64_t)g->ways * g->line);
}

int dbtp_cache_geom_check(const struct dbtp_cache_geom *g, dbtp_err *err)
{
	uint64_t set_bytes = (uint64_t)g->ways * g->line;
	uint64_t sets;

	if (!g->ways)
		return dbtp_err_set(err, EINVAL, "ways must be at least 1");
	if (g->ways > DBTP_CACHE_MAX_WAYS)
		return dbtp_err_set(err, EINVAL, "%u ways: at most %u allowed",
				    g->ways, DBTP_CACHE_MAX_WAYS);
	if (!is_pow2(g->line))
		return dbtp_err_set(
		    err, EINVAL, "line size %u is not a power of two", g->line);
	if (g->line < DBTP_CACHE_MIN_LINE || g->line > DBTP_CACHE_MAX_LINE)
		return dbtp_err_set(err, EINVAL,
				    "line size %u is outside %u..%u", g->line,
				    DBTP_CACHE_MIN_LINE, DBTP_CACHE_MAX_LINE);
	if (!g->size || g->size > DBTP_CACHE_MAX_SIZE)
		return dbtp_err_set(err, EINVAL,
				    "size %llu is outside 1..%llu bytes",
				    (unsigned long long)g->size,
				    (unsigned long long)DBTP_CACHE_MAX_SIZE);
	if (g->size % set_bytes)
		return dbtp_err_set(err, EINVAL,
				    "%llu bytes is not a whole number of sets "
				    "of %u ways x %u bytes",
				    (unsigned long long)g->size, g->ways,
				    g->line);
	sets = g->size / set_bytes;
	if (!is_pow2(sets))
		return dbtp_err_set(err, EINVAL,
				    "%llu sets (%llu bytes / (%u ways x %u "
				    "bytes)) is not a power of two",
				    (unsigned long long)sets,
				    (unsigned long long)g->size, g->ways,
				    g->line);
	return 0;
}

/* A number with an optional K/M/G suffix (x1024^n), "i" and "B" allowed
 * after it: 32K, 32KiB, 1M, 64, 64B.  Sets *@end past what it used. */
static int parse_num(const char *s, uint64_t *v, int suffix, const char **end)
{
	uint64_t n = 0;
	unsigned shift = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (suffix) {
		switch (*p) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			break;
		}
		if (shift) {
			p++;
			if (*p == 'i')
				p++;
		}
		if (*p == 'B' || *p == 'b')
			p++;
		if (n > (UINT64_MAX >> shift))
			return -1;
		n <<= shift;
	}
	*v = n;
	*end = p;
	return 0;
}

int dbtp_cache_geom_parse(const char *s, struct dbtp_cache_geom *g,
			  dbtp_err *err)
{
	uint64_t size, ways, line;
	const char *p = s;
	dbtp_err e;

	if (parse_num(p, &size, 1, &p) || *p++ != ',')
		goto bad;
	if (parse_num(p, &ways, 0, &p) || *p++ != ',')
		goto bad;
	if (parse_num(p, &line, 1, &p) || *p)
		goto bad;
	if (ways > DBTP_CACHE_MAX_WAYS)
		return dbtp_err_set(err, EINVAL, "'%s': at most %u ways", s,
				    DBTP_CACHE_MAX_WAYS);
	if (line > DBTP_CACHE_MAX_LINE)
		return dbtp_err_set(err, EINVAL,
				    "'%s': lines of at most %u bytes", s,
				    DBTP_CACHE_MAX_LINE);
	g->size = size;
	g->ways = (uint32_t)ways;
	g->line = (uint32_t)line;
	if (dbtp_cache_geom_check(g, &e))
		return dbtp_err_set(err, EINVAL, "'%s': %s", s, e.msg);
	return 0;
bad:
	return dbtp_err_set(err, EINVAL,
			    "'%s': expected SIZE,WAYS,LINE (e.g. 32K,8,64)", s);
}

/* --- counts ------------------------------------------------------------- */

void dbtp_cache_counts_add(struct dbtp_cache_counts *a,
			   const struct dbtp_cache_counts *b)
{
	a->insns += b->insns;
	a->blocks += b->blocks;
	a->ops += b->ops;
	a->stores += b->stores;
	a->accesses += b->accesses;
	a->l1_misses += b->l1_misses;
	a->l1_evictions += b->l1_evictions;
	a->l1_writebacks += b->l1_writebacks;
	a->l2_accesses += b->l2_accesses;
	a->l2_misses += b->l2_misses;
	a->l2_evictions += b->l2_evictions;
	a->mem_writebacks += b->mem_writebacks;
}

static double ratio(uint64_t a, uint64_t b, double scale)
{
	return b ? (double)a * scale / (double)b : 0.0;
}

void dbtp_cache_metrics(const struct dbtp_cache_counts *c,
			struct dbtp_cache_metrics *m)
{
	m->l1_miss_rate = ratio(c->l1_misses, c->accesses, 1.0);
	m->l1_mpki = ratio(c->l1_misses, c->insns, 1000.0);
	m->l2_miss_rate = ratio(c->l2_misses, c->l2_accesses, 1.0);
	m->l2_mpki = ratio(c->l2_misses, c->insns, 1000.0);
}

/* --- one hierarchy ------------------------------------------------------ */

struct level {
	uint64_t *tags; /* sets x ways entries, each set MRU first */
	uint64_t set_mask;
	uint32_t ways;
	unsigned shift; /* log2 of the line size */
};

struct dbtp_cache {
	struct level l1, l2;
	unsigned rel;	    /* l2.shift - l1.shift */
	uint64_t line_mask; /* L1 line addresses wrap here */
};

static int level_init(struct level *lv, const struct dbtp_cache_geom *g,
		      dbtp_err *err)
{
	uint64_t sets = dbtp_cache_geom_sets(g), n = sets * g->ways;

	if (n > SIZE_MAX / sizeof(*lv->tags))
		return nomem(err);
	lv->tags = malloc((size_t)n * sizeof(*lv->tags));
	if (!lv->tags)
		return nomem(err);
	memset(lv->tags, 0xff, (size_t)n * sizeof(*lv->tags));
	lv->set_mask = sets - 1;
	lv->ways = g->ways;
	lv->shift = log2u(g->line);
	return 0;
}

static int check_pair(const struct dbtp_cache_geom *l1,
		      const struct dbtp_cache_geom *l2, dbtp_err *err)
{
	dbtp_err e;

	if (dbtp_cache_geom_check(l1, &e))
		return dbtp_err_set(err, EINVAL, "L1: %s", e.msg);
	if (dbtp_cache_geom_check(l2, &e))
		return dbtp_err_set(err, EINVAL, "L2: %s", e.msg);
	if (l2->line < l1->line)
		return dbtp_err_set(err, EINVAL,
				    "the L2 line (%u bytes) is shorter than "
				    "the L1 line (%u bytes)",
				    l2->line, l1->line);
	return 0;
}

int dbtp_cache_new(dbtp_cache **out, const struct dbtp_cache_geom *l1,
		   const struct dbtp_cache_geom *l2, dbtp_err *err)
{
	dbtp_cache *c;

	*out = NULL;
	if (check_pair(l1, l2, err))
		return -1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return nomem(err);
	if (level_init(&c->l1, l1, err) || level_init(&c->l2, l2, err)) {
		dbtp_cache_free(c);
		return -1;
	}
	c->rel = c->l2.shift - c->l1.shift;
	c->line_mask = UINT64_MAX >> c->l1.shift;
	*out = c;
	return 0;
}

int dbtp_cache_new_default(dbtp_cache **out, dbtp_err *err)
{
	static const struct dbtp_cache_geom l1 = {
	    DBTP_CACHE_L1_SIZE, DBTP_CACHE_L1_WAYS, DBTP_CACHE_L1_LINE};
	static const struct dbtp_cache_geom l2 = {
	    DBTP_CACHE_L2_SIZE, DBTP_CACHE_L2_WAYS, DBTP_CACHE_L2_LINE};

	return dbtp_cache_new(out, &l1, &l2, err);
}

void dbtp_cache_free(dbtp_cache *c)
{
	if (!c)
		return;
	free(c->l1.tags);
	free(c->l2.tags);
	free(c);
}

/*
 * Access line @line of @lv: 1 on a hit (now MRU, dirty if @dirty), 0 on a
 * miss (filled as MRU; the entry it displaced, maybe EMPTY, in *@victim).
 */
static inline int level_access(struct level *lv, uint64_t line, uint64_t dirty,
			       uint64_t *victim)
{
	uint64_t *set = lv->tags + (line & lv->set_mask) * lv->ways;
	uint64_t e = set[0];
	uint32_t i, hit, w = lv->ways;

	if ((e >> 1) == line) {
		set[0] = e | dirty;
		return 1;
	}
	/* A line is in a set at most once: a search without early exit
	 * has no branch to mispredict. */
	hit = w;
	for (i = 1; i < w; i++)
		hit = (set[i] >> 1) == line ? i : hit;
	if (hit < w) {
		e = set[hit];
		memmove(set + 1, set, hit * sizeof(*set));
		set[0] = e | dirty;
		return 1;
	}
	*victim = set[w - 1];
	memmove(set + 1, set, (w - 1) * sizeof(*set));
	set[0] = line << 1 | dirty;
	return 0;
}

/* Mark @line dirty in @lv if present, without touching the LRU order. */
static int level_mark_dirty(struct level *lv, uint64_t line)
{
	uint64_t *set = lv->tags + (line & lv->set_mask) * lv->ways;

	for (uint32_t i = 0; i < lv->ways; i++) {
		if ((set[i] >> 1) == line) {
			set[i] |= 1;
			return 1;
		}
	}
	return 0;
}

void dbtp_cache_access(dbtp_cache *c, uint64_t addr, uint32_t size, int store,
		       struct dbtp_cache_counts *cnt)
{
	unsigned s1 = c->l1.shift;
	uint64_t line = addr >> s1, st = store ? 1 : 0;
	uint64_t nlines;

	if (!size)
		size = 1;
	/* lines touched, computed without overflowing at the top */
	nlines = (((addr & ((1ull << s1) - 1)) + size - 1) >> s1) + 1;
	cnt->ops++;
	cnt->stores += st;
	cnt->accesses += nlines;
	for (; nlines; nlines--, line = (line + 1) & c->line_mask) {
		uint64_t v1, v2;

		if (level_access(&c->l1, line, st, &v1))
			continue;
		cnt->l1_misses++;
		/* Fill from L2 (a read whatever the access). */
		cnt->l2_accesses++;
		if (!level_access(&c->l2, line >> c->rel, 0, &v2)) {
			cnt->l2_misses++;
			if (v2 != EMPTY) {
				cnt->l2_evictions++;
				if (v2 & 1)
					cnt->mem_writebacks++;
			}
		}
		if (v1 == EMPTY)
			continue;
		cnt->l1_evictions++;
		if (!(v1 & 1))
			continue;
		cnt->l1_writebacks++;
		if (!level_mark_dirty(&c->l2, (v1 >> 1) >> c->rel))
			cnt->mem_writebacks++;
	}
}

void dbtp_cache_tally(dbtp_cache *c, uint64_t addr, uint32_t size, int store,
		      struct dbtp_cache_tally *t)
{
	unsigned s1 = c->l1.shift;
	uint64_t line = addr >> s1;
	uint64_t *set = c->l1.tags + (line & c->l1.set_mask) * c->l1.ways;

	t->ops++;
	t->unaligned +=
	    (size == 2 || size == 4 || size == 8) && (addr & (size - 1)) != 0;
	/* Most accesses touch one line, their set's most recent: a hit that
	 * changes nothing but the dirty bit (level_access()'s first case). */
	if ((addr & ((1ull << s1) - 1)) + (size ? size : 1) <= (1ull << s1) &&
	    (set[0] >> 1) == line) {
		set[0] |= store ? 1 : 0;
	} else {
		struct dbtp_cache_counts n = {0};

		dbtp_cache_access(c, addr, size, store, &n);
		t->l1 += n.l1_misses;
		t->l2 += n.l2_misses;
	}
}

int dbtp_cache_probe(const dbtp_cache *c, int level, uint64_t addr,
		     uint32_t *lru_pos)
{
	const struct level *lv = level == 1 ? &c->l1 : &c->l2;
	uint64_t line = addr >> lv->shift;
	const uint64_t *set;

	if (level != 1 && level != 2)
		return DBTP_CACHE_ABSENT;
	set = lv->tags + (line & lv->set_mask) * lv->ways;
	for (uint32_t i = 0; i < lv->ways; i++) {
		if ((set[i] >> 1) != line)
			continue;
		if (lru_pos)
			*lru_pos = i;
		return set[i] & 1 ? DBTP_CACHE_DIRTY : DBTP_CACHE_CLEAN;
	}
	return DBTP_CACHE_ABSENT;
}

/* --- a trace: threads and intervals ------------------------------------- */

struct cthread {
	dbtp_cache *c; /* allocated at the thread's first access */
	struct dbtp_cache_counts cur, total;
	uint64_t insns, end; /* instructions so far; end of this interval */
	int full;	     /* this interval reached its end: close it at
			      * the next block (its accesses follow it) */
	struct dbtp_cache_counts *ivl;
	size_t n, cap;
};

struct dbtp_cachesim {
	struct dbtp_cache_opts o;
	struct cthread *th;
	uint32_t nth;
	int finished;
};

void dbtp_cache_default_opts(struct dbtp_cache_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->l1.size = DBTP_CACHE_L1_SIZE;
	o->l1.ways = DBTP_CACHE_L1_WAYS;
	o->l1.line = DBTP_CACHE_L1_LINE;
	o->l2.size = DBTP_CACHE_L2_SIZE;
	o->l2.ways = DBTP_CACHE_L2_WAYS;
	o->l2.line = DBTP_CACHE_L2_LINE;
	o->interval = 100000000;
}

int dbtp_cachesim_new(dbtp_cachesim **out, const struct dbtp_cache_opts *o,
		      dbtp_err *err)
{
	dbtp_cachesim *s;

	*out = NULL;
	if (check_pair(&o->l1, &o->l2, err))
		return -1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return nomem(err);
	s->o = *o;
	if (!s->o.interval)
		s->o.interval = 100000000;
	*out = s;
	return 0;
}

static struct cthread *grow_threads(dbtp_cachesim *s, uint32_t num,
				    dbtp_err *err)
{
	struct cthread *t;

	if (s->finished) {
		dbtp_err_set(err, EINVAL, "cache model: event after the end");
		return NULL;
	}
	if (num == UINT32_MAX) {
		nomem(err);
		return NULL;
	}
	t = realloc(s->th, ((size_t)num + 1) * sizeof(*t));
	if (!t) {
		nomem(err);
		return NULL;
	}
	memset(t + s->nth, 0, (num + 1 - s->nth) * sizeof(*t));
	for (uint32_t i = s->nth; i <= num; i++)
		t[i].end = s->o.interval;
	s->th = t;
	s->nth = num + 1;
	return &t[num];
}

static inline struct cthread *thread(dbtp_cachesim *s, uint32_t num,
				     dbtp_err *err)
{
	if (num < s->nth && !s->finished)
		return &s->th[num];
	return grow_threads(s, num, err);
}

static int close_interval(struct cthread *t, dbtp_err *err)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct dbtp_cache_counts *n = realloc(t->ivl, cap * sizeof(*n));

		if (!n)
			return nomem(err);
		t->ivl = n;
		t->cap = cap;
	}
	t->ivl[t->n++] = t->cur;
	dbtp_cache_counts_add(&t->total, &t->cur);
	memset(&t->cur, 0, sizeof(t->cur));
	t->full = 0;
	return 0;
}

int dbtp_cachesim_block(dbtp_cachesim *s, uint32_t num, uint32_t ninsns,
			dbtp_err *err)
{
	struct cthread *t = thread(s, num, err);

	if (!t)
		return -1;
	if (t->full && close_interval(t, err))
		return -1;
	t->cur.insns += ninsns;
	t->cur.blocks++;
	t->insns += ninsns;
	if (dbtp_interval_cut(&t->end, t->insns, s->o.interval))
		t->full = 1;
	return 0;
}

int dbtp_cachesim_mem(dbtp_cachesim *s, uint32_t num, uint64_t addr,
		      uint32_t size, int store, dbtp_err *err)
{
	struct cthread *t = thread(s, num, err);

	if (!t)
		return -1;
	if (!t->c && dbtp_cache_new(&t->c, &s->o.l1, &s->o.l2, err))
		return -1;
	dbtp_cache_access(t->c, addr, size, store, &t->cur);
	return 0;
}

int dbtp_cachesim_event(dbtp_cachesim *s, const struct dbtp_event *ev,
			dbtp_err *err)
{
	switch (ev->type) {
	case DBTP_EV_BLOCK:
		return dbtp_cachesim_block(s, ev->thread, ev->block->ninsns,
					   err);
	case DBTP_EV_MEM:
		return dbtp_cachesim_mem(s, ev->thread, ev->addr, ev->size,
					 ev->mem_flags & DBTP_ACCESS_STORE,
					 err);
	default:
		return 0;
	}
}

int dbtp_cachesim_finish(dbtp_cachesim *s, dbtp_err *err)
{
	if (s->finished)
		return 0;
	for (uint32_t i = 0; i < s->nth; i++) {
		struct cthread *t = &s->th[i];

		/* As bbv: an interval with blocks is written if full, or if
		 * partial and kept. */
		if (t->cur.blocks && (t->full || !s->o.drop_partial)) {
			if (close_interval(t, err))
				return -1;
		} else {
			dbtp_cache_counts_add(&t->total, &t->cur);
			memset(&t->cur, 0, sizeof(t->cur));
		}
		dbtp_cache_free(t->c);
		t->c = NULL;
	}
	s->finished = 1;
	return 0;
}

uint32_t dbtp_cachesim_nthreads(const dbtp_cachesim *s)
{
	return s->nth;
}

uint64_t dbtp_cachesim_nintervals(const dbtp_cachesim *s, uint32_t thread)
{
	return thread < s->nth ? s->th[thread].n : 0;
}

const struct dbtp_cache_counts *
dbtp_cachesim_interval(const dbtp_cachesim *s, uint32_t thread, uint64_t k)
{
	if (thread >= s->nth || k >= s->th[thread].n)
		return NULL;
	return &s->th[thread].ivl[k];
}

const struct dbtp_cache_counts *
dbtp_cachesim_thread_total(const dbtp_cachesim *s, uint32_t thread)
{
	return thread < s->nth ? &s->th[thread].total : NULL;
}

void dbtp_cachesim_total(const dbtp_cachesim *s, struct dbtp_cache_counts *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < s->nth; i++)
		dbtp_cache_counts_add(out, &s->th[i].total);
}

void dbtp_cachesim_free(dbtp_cachesim *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nth; i++) {
		dbtp_cache_free(s->th[i].c);
		free(s->th[i].ivl);
	}
	free(s->th);
	free(s);
}

/* --- SimPoint's files ---------------------------------------------------- */

struct entry {	      /* one parsed line */
	uint64_t num; /* interval, or unused */
	double weight;
	uint32_t cluster;
	unsigned line;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int parse_u64(const char *s, uint64_t *v)
{
	const char *end;

	return parse_num(s, v, 0, &end) || *end ? -1 : 0;
}

/*
 * Parse @path: lines of "A CLUSTER"; A is an interval number (@weights 0)
 * or a weight (@weights 1).
 */
static int parse_file(const char *path, int weights, struct entry **out,
		      size_t *nout, dbtp_err *err)
{
	struct entry *v = NULL;
	size_t n = 0, cap = 0, len = 0;
	char *text = NULL, *p, *eol;
	unsigned lineno = 0;

	if (dbtp_read_file(path, &text, &len, err))
		return -1;
	for (p = text; p < text + len; p = eol + 1) {
		char *tok[3];
		int ntok = 0;
		uint64_t cl;
		struct entry e = {0};

		eol = memchr(p, '\n', (size_t)(text + len - p));
		if (!eol)
			eol = text + len;
		*eol = 0;
		lineno++;
		if (memchr(p, 0, (size_t)(eol - p))) {
			dbtp_err_set(err, EINVAL, "%s: line %u: not text", path,
				     lineno);
			goto fail;
		}
		for (char *q = p; *q && ntok < 3;) {
			while (is_blank(*q))
				q++;
			if (!*q)
				break;
			tok[ntok++] = q;
			while (*q && !is_blank(*q))
				q++;
			if (*q)
				*q++ = 0;
		}
		if (!ntok || tok[0][0] == '#')
			continue;
		if (ntok != 2) {
			dbtp_err_set(
			    err, EINVAL, "%s: line %u: expected \"%s CLUSTER\"",
			    path, lineno, weights ? "WEIGHT" : "INTERVAL");
			goto fail;
		}
		if (weights) {
			char *end;

			errno = 0;
			e.weight = strtod(tok[0], &end);
			if (*end || errno || !isfinite(e.weight) ||
			    e.weight < 0 || e.weight > 1) {
				dbtp_err_set(err, EINVAL,
					     "%s: line %u: weight '%.40s' is "
					     "not a number in [0, 1]",
					     path, lineno, tok[0]);
				goto fail;
			}
		} else if (parse_u64(tok[0], &e.num)) {
			dbtp_err_set(err, EINVAL,
				     "%s: line %u: interval '%.40s' is not a "
				     "whole number",
				     path, lineno, tok[0]);
			goto fail;
		}
		if (parse_u64(tok[1], &cl) || cl > UINT32_MAX) {
			dbtp_err_set(err, EINVAL,
				     "%s: line %u: cluster '%.40s' is not a "
				     "whole number",
				     path, lineno, tok[1]);
			goto fail;
		}
		e.cluster = (uint32_t)cl;
		e.line = lineno;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct entry *q = realloc(v, c * sizeof(*q));

			if (!q) {
				nomem(err);
				goto fail;
			}
			v = q;
			cap = c;
		}
		v[n++] = e;
	}
	if (!n) {
		dbtp_err_set(err, EINVAL, "%s: no %s", path,
			     weights ? "weights" : "simulation points");
		goto fail;
	}
	free(text);
	*out = v;
	*nout = n;
	return 0;
fail:
	free(text);
	free(v);
	return -1;
}

static int by_cluster(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->cluster != y->cluster)
		return x->cluster < y->cluster ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sort by cluster; a cluster given twice is an error. */
static int sort_unique(struct entry *v, size_t n, const char *path,
		       dbtp_err *err)
{
	qsort(v, n, sizeof(*v), by_cluster);
	for (size_t i = 1; i < n; i++)
		if (v[i].cluster == v[i - 1].cluster)
			return dbtp_err_set(err, EINVAL,
					    "%s: line %u: cluster %u given "
					    "twice (first on line %u)",
					    path, v[i].line, v[i].cluster,
					    v[i - 1].line);
	return 0;
}

static const struct entry *find_cluster(const struct entry *v, size_t n,
					uint32_t cluster)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].cluster < cluster)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].cluster == cluster ? &v[lo] : NULL;
}

static int by_line(const void *a, const void *b)
{
	const struct dbtp_cache_pick *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

int dbtp_cache_read_picks(const char *simpoints, const char *weights,
			  struct dbtp_cache_pick **out, size_t *nout,
			  dbtp_err *err)
{
	struct entry *sp = NULL, *wt = NULL;
	struct dbtp_cache_pick *picks = NULL;
	size_t nsp = 0, nwt = 0;
	int rc = -1;

	*out = NULL;
	*nout = 0;
	if (parse_file(simpoints, 0, &sp, &nsp, err) ||
	    parse_file(weights, 1, &wt, &nwt, err) ||
	    sort_unique(sp, nsp, simpoints, err) ||
	    sort_unique(wt, nwt, weights, err))
		goto out;
	for (size_t i = 0; i < nwt; i++) {
		if (!find_cluster(sp, nsp, wt[i].cluster)) {
			dbtp_err_set(
			    err, EINVAL, "%s: line %u: cluster %u is not in %s",
			    weights, wt[i].line, wt[i].cluster, simpoints);
			goto out;
		}
	}
	picks = calloc(nsp, sizeof(*picks));
	if (!picks) {
		nomem(err);
		goto out;
	}
	for (size_t i = 0; i < nsp; i++) {
		const struct entry *w = find_cluster(wt, nwt, sp[i].cluster);

		if (!w) {
			dbtp_err_set(err, EINVAL,
				     "%s: line %u: cluster %u has no weight "
				     "in %s",
				     simpoints, sp[i].line, sp[i].cluster,
				     weights);
			goto out;
		}
		picks[i].interval = sp[i].num;
		picks[i].cluster = sp[i].cluster;
		picks[i].weight = w->weight;
		picks[i].line = sp[i].line;
	}
	qsort(picks, nsp, sizeof(*picks), by_line);
	*out = picks;
	*nout = nsp;
	picks = NULL;
	rc = 0;
out:
	free(picks);
	free(sp);
	free(wt);
	return rc;
}

static double rel(double est, double full)
{
	return full != 0 ? (est - full) / full : NAN;
}

int dbtp_cache_estimate(const dbtp_cachesim *s, uint32_t thread,
			const struct dbtp_cache_pick *picks, size_t n,
			const char *name, struct dbtp_cache_estimate *out,
			dbtp_err *err)
{
	uint64_t nivl = dbtp_cachesim_nintervals(s, thread);
	const struct dbtp_cache_counts *tot;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		struct dbtp_cache_metrics m;

		if (picks[i].interval >= nivl)
			return dbtp_err_set(
			    err, EINVAL,
			    "%s: line %u: interval %llu is "
			    "past the last interval of thread "
			    "%u (%llu intervals)",
			    name, picks[i].line,
			    (unsigned long long)picks[i].interval, thread,
			    (unsigned long long)nivl);
		dbtp_cache_metrics(&s->th[thread].ivl[picks[i].interval], &m);
		out->est.l1_miss_rate += picks[i].weight * m.l1_miss_rate;
		out->est.l1_mpki += picks[i].weight * m.l1_mpki;
		out->est.l2_miss_rate += picks[i].weight * m.l2_miss_rate;
		out->est.l2_mpki += picks[i].weight * m.l2_mpki;
		out->weight_sum += picks[i].weight;
	}
	tot = dbtp_cachesim_thread_total(s, thread);
	if (tot)
		dbtp_cache_metrics(tot, &out->full);
	out->rel_err.l1_miss_rate =
	    rel(out->est.l1_miss_rate, out->full.l1_miss_rate);
	out->rel_err.l1_mpki = rel(out->est.l1_mpki, out->full.l1_mpki);
	out->rel_err.l2_miss_rate =
	    rel(out->est.l2_miss_rate, out->full.l2_miss_rate);
	out->rel_err.l2_mpki = rel(out->est.l2_mpki, out->full.l2_mpki);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * simpoint.c - SimPoint 3.2's choice of simulation points: random
 * projection, k-means over a range of k, BIC-threshold choice of k.  See
 * dbtp/simpoint.h and doc/dbtprof-simpoint.md.
 *
 * k-means is Lloyd's algorithm (SimPoint's KMeans::runKMeans) with the
 * triangle inequality ruling out most distance computations, after Hamerly
 * ("Making k-means even faster", SDM 2010) and Elkan ("Using the triangle
 * inequality to accelerate k-means", ICML 2003).  Each interval keeps an
 * upper bound u on the distance to its centre a and a lower bound l on the
 * distance to any other; when centres move by p, u grows by a's p and l
 * shrinks by the largest other p.  An interval whose u is at most l, or at
 * most half the distance from a to the nearest other centre, keeps a with
 * no distance computed.  For the others the other centres are visited by
 * increasing distance from a, stopping once |a - j| - u reaches the best
 * distance found (no farther centre can be nearer), and skipping those
 * whose own lower bound reaches it (Elkan's bounds, one per interval and
 * centre, kept while n x max_k of them fit in 32 MiB).  Cluster sums follow
 * the intervals that move.  The result is Lloyd's, up to rounding.
 *
 * The (k, start) runs are independent jobs spread over worker threads; each
 * writes its own slots and the best start per k is picked afterwards in a
 * fixed order, so the result does not depend on the number of threads.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbtp/bbvfile.h"
#include "dbtp/simpoint.h"
#include "util/buf.h"

void dbtp_simpoint_default_opts(struct dbtp_simpoint_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_k = DBTP_SIMPOINT_DEF_MAX_K;
	o->k_step = 1;
	o->dim = DBTP_SIMPOINT_DEF_DIM;
	o->num_init_seeds = DBTP_SIMPOINT_DEF_INIT_SEEDS;
	o->max_iters = DBTP_SIMPOINT_DEF_ITERS;
	o->bic_threshold = DBTP_SIMPOINT_DEF_BIC_THRESHOLD;
	o->init = DBTP_SIMPOINT_INIT_SAMPLE;
	o->seed_km = DBTP_SIMPOINT_DEF_SEED_KM;
	o->seed_proj = DBTP_SIMPOINT_DEF_SEED_PROJ;
	o->threads = 0;
}

void dbtp_simpoint_free_result(struct dbtp_simpoint_result *r)
{
	free(r->labels);
	free(r->dists);
	free(r->points);
	free(r->weights);
	free(r->k_tried);
	free(r->bic);
	memset(r, 0, sizeof(*r));
}

/* ---- random numbers ---- */

/* SplitMix64's output function: a bijective 64-bit mixer. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix64(r->s);
}

/* Uniform in [0, n), n >= 1, without modulo bias. */
static size_t rng_below(struct rng *r, size_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;

	do
		v = rng_next(r);
	while (v >= lim);
	return (size_t)(v % n);
}

/* ---- projection ---- */

void dbtp_simpoint_project_one(const uint32_t *ids, const uint64_t *counts,
			       size_t m, unsigned dim, uint64_t seed_proj,
			       double *out)
{
	uint64_t smix = mix64(seed_proj);
	double sum = 0;
	size_t i;
	unsigned d;

	for (d = 0; d < dim; d++)
		out[d] = 0;
	for (i = 0; i < m; i++)
		sum += (double)counts[i];
	if (sum <= 0)
		return;
	for (i = 0; i < m; i++) {
		double v = (double)counts[i] / sum;
		uint64_t key = (uint64_t)ids[i] << 32;

		if (!counts[i])
			continue;
		/* R[id][d]: mix64(mix64(seed) ^ (id << 32 | d)) to [-1, 1) */
		for (d = 0; d < dim; d++) {
			uint64_t z = mix64(smix ^ (key | d));

			out[d] += v * ((double)(z >> 11) * 0x1p-52 - 1.0);
		}
	}
}

/* ---- k-means ---- */

/*
 * A worker keeps Elkan's n x k lower bounds while they fit in this many
 * doubles (32 MiB); beyond, Hamerly's two bounds per interval only.
 */
#define ELKAN_MAX_BOUNDS ((size_t)1 << 22)

/* a centre and its distance from another one */
struct gap {
	double dist;
	uint32_t j;
};

/* One k-means worker's state; k <= kmax. */
struct km {
	const double *x; /* [n * d] */
	size_t n;
	unsigned d, k, kmax;
	double *c;   /* [kmax * d] centres */
	double *sum; /* [kmax * d] sum of each cluster's intervals */
	double *nc;  /* [kmax * d] next centres */
	size_t *cnt; /* [kmax] cluster sizes */
	uint32_t *a; /* [n] assignment */
	double *u;   /* [n] upper bound: distance to own centre */
	double *l;   /* [n] lower bound: distance to any other */
	/*
	 * [n * k] or NULL: lb[i * k + j] - drift[j] bounds the distance of
	 * interval i to centre j from below.  Storing the bound plus the
	 * centre's total movement so far saves updating n x k bounds after
	 * every move.
	 */
	double *lb;
	double *drift;	  /* [kmax] how far each centre moved in all */
	double *p;	  /* [kmax] how far it moved last time */
	double *cc;	  /* [kmax * kmax] distances between centres */
	double *s;	  /* [kmax] half the distance to the nearest other */
	uint32_t *ord;	  /* [kmax * kmax] other centres, nearest first */
	struct gap *gaps; /* [kmax] */
	size_t *scratch;  /* [n] */
	double *d2;	  /* [n] */
};

static void km_free(struct km *km)
{
	free(km->c);
	free(km->sum);
	free(km->nc);
	free(km->cnt);
	free(km->a);
	free(km->u);
	free(km->l);
	free(km->lb);
	free(km->drift);
	free(km->p);
	free(km->cc);
	free(km->s);
	free(km->ord);
	free(km->gaps);
	free(km->scratch);
	free(km->d2);
	memset(km, 0, sizeof(*km));
}

static int km_alloc(struct km *km, const double *x, size_t n, unsigned d,
		    unsigned kmax)
{
	size_t kd = (size_t)kmax * d;

	memset(km, 0, sizeof(*km));
	km->x = x;
	km->n = n;
	km->d = d;
	km->kmax = kmax;
	km->c = malloc(kd * sizeof(double));
	km->sum = malloc(kd * sizeof(double));
	km->nc = malloc(kd * sizeof(double));
	km->cnt = malloc(kmax * sizeof(size_t));
	km->a = malloc(n * sizeof(uint32_t));
	km->u = malloc(n * sizeof(double));
	km->l = malloc(n * sizeof(double));
	km->drift = malloc(kmax * sizeof(double));
	km->p = malloc(kmax * sizeof(double));
	km->cc = malloc((size_t)kmax * kmax * sizeof(double));
	km->s = malloc(kmax * sizeof(double));
	km->ord = malloc((size_t)kmax * kmax * sizeof(uint32_t));
	km->gaps = malloc(kmax * sizeof(*km->gaps));
	km->scratch = malloc(n * sizeof(size_t));
	km->d2 = malloc(n * sizeof(double));
	if (!km->c || !km->sum || !km->nc || !km->cnt || !km->a || !km->u ||
	    !km->l || !km->drift || !km->p || !km->cc || !km->s || !km->ord ||
	    !km->gaps || !km->scratch || !km->d2) {
		km_free(km);
		return -1;
	}
	if (kmax > 1 && n <= ELKAN_MAX_BOUNDS / kmax)
		km->lb = malloc(n * kmax * sizeof(double)); /* optional */
	return 0;
}

static double dist2(const double *a, const double *b, unsigned d)
{
	double s = 0;

	for (unsigned i = 0; i < d; i++) {
		double t = a[i] - b[i];

		s += t * t;
	}
	return s;
}

/*
 * Nearest and second nearest centre of @xi (ties: the lower index), as
 * squared distances.  The scan of a centre stops once it is no nearer than
 * the second nearest so far (partial distance search).
 */
static uint32_t nearest2(const struct km *km, const double *xi, double *d1,
			 double *d2)
{
	double b1 = HUGE_VAL, b2 = HUGE_VAL;
	uint32_t j1 = 0;
	unsigned d = km->d;

	for (unsigned j = 0; j < km->k; j++) {
		const double *cj = km->c + (size_t)j * d;
		double s = 0;
		unsigned i;

		for (i = 0; i < d && s < b2; i++) {
			double t = xi[i] - cj[i];

			s += t * t;
		}
		if (i < d)
			continue;
		if (s < b1) {
			b2 = b1;
			b1 = s;
			j1 = j;
		} else if (s < b2) {
			b2 = s;
		}
	}
	*d1 = b1;
	*d2 = b2;
	return j1;
}

/* Starting centres, into km->c. */
static void km_init(struct km *km, enum dbtp_simpoint_init how, uint64_t seed)
{
	struct rng r = {mix64(seed)};
	size_t n = km->n, i, *idx = km->scratch;
	unsigned d = km->d, k = km->k, j;

	if (how == DBTP_SIMPOINT_INIT_FURTHEST) {
		double *md = km->d2;
		size_t pick = rng_below(&r, n);

		for (j = 0; j < k; j++) {
			const double *cj = km->c + (size_t)j * d;
			double far = -1;

			memcpy(km->c + (size_t)j * d, km->x + pick * d,
			       d * sizeof(double));
			if (j + 1 == k)
				break;
			for (i = 0; i < n; i++) {
				double t = dist2(km->x + i * d, cj, d);

				if (!j || t < md[i])
					md[i] = t;
				if (md[i] > far) {
					far = md[i];
					pick = i;
				}
			}
		}
		return;
	}
	/* k distinct intervals: a partial Fisher-Yates shuffle */
	for (i = 0; i < n; i++)
		idx[i] = i;
	for (j = 0; j < k; j++) {
		size_t t = j + rng_below(&r, n - j), v = idx[t];

		idx[t] = idx[j];
		idx[j] = v;
		memcpy(km->c + (size_t)j * d, km->x + v * d,
		       d * sizeof(double));
	}
}

/* Assign every interval from scratch; sets a, u, l (and lb). */
static void km_assign_all(struct km *km)
{
	unsigned d = km->d, k = km->k;

	for (unsigned j = 0; j < k; j++)
		km->drift[j] = 0;
	for (size_t i = 0; i < km->n; i++) {
		const double *xi = km->x + i * d;
		double b1 = HUGE_VAL, b2 = HUGE_VAL, *lb;
		uint32_t a = 0;

		if (!km->lb || k == 1) {
			a = nearest2(km, xi, &b1, &b2);
			b1 = sqrt(b1);
			b2 = sqrt(b2); /* HUGE_VAL when k == 1 */
		} else {
			lb = km->lb + i * k;
			for (unsigned j = 0; j < k; j++) {
				double t =
				    sqrt(dist2(xi, km->c + (size_t)j * d, d));

				lb[j] = t;
				if (t < b1) {
					b2 = b1;
					b1 = t;
					a = j;
				} else if (t < b2) {
					b2 = t;
				}
			}
		}
		km->a[i] = a;
		km->u[i] = b1;
		km->l[i] = b2;
	}
	memset(km->sum, 0, (size_t)k * d * sizeof(double));
	memset(km->cnt, 0, k * sizeof(size_t));
	for (size_t i = 0; i < km->n; i++) {
		double *sa = km->sum + (size_t)km->a[i] * d;
		const double *xi = km->x + i * d;

		for (unsigned t = 0; t < d; t++)
			sa[t] += xi[t];
		km->cnt[km->a[i]]++;
	}
}

/* Move interval @i from cluster @from to cluster @to in the sums. */
static void km_move(struct km *km, size_t i, uint32_t from, uint32_t to)
{
	const double *xi = km->x + i * km->d;
	double *sf = km->sum + (size_t)from * km->d;
	double *st = km->sum + (size_t)to * km->d;

	for (unsigned t = 0; t < km->d; t++) {
		sf[t] -= xi[t];
		st[t] += xi[t];
	}
	km->cnt[from]--;
	km->cnt[to]++;
}

static int gap_cmp(const void *x, const void *y)
{
	const struct gap *a = x, *b = y;

	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	return (a->j > b->j) - (a->j < b->j);
}

/* cc, s and ord from the current centres. */
static void km_centre_gaps(struct km *km)
{
	unsigned d = km->d, k = km->k;

	for (unsigned j = 0; j < k; j++) {
		km->cc[(size_t)j * k + j] = 0;
		for (unsigned o = j + 1; o < k; o++) {
			double t = sqrt(dist2(km->c + (size_t)j * d,
					      km->c + (size_t)o * d, d));

			km->cc[(size_t)j * k + o] = km->cc[(size_t)o * k + j] =
			    t;
		}
	}
	for (unsigned j = 0; j < k; j++) {
		const double *cj = km->cc + (size_t)j * k;
		uint32_t *ord = km->ord + (size_t)j * k;
		unsigned m = 0;

		for (unsigned o = 0; o < k; o++) {
			if (o != j) {
				km->gaps[m].dist = cj[o];
				km->gaps[m++].j = o;
			}
		}
		qsort(km->gaps, m, sizeof(*km->gaps), gap_cmp);
		for (unsigned r = 0; r < m; r++)
			ord[r] = km->gaps[r].j;
		km->s[j] = 0.5 * km->gaps[0].dist;
	}
}

/*
 * An assignment step.  An interval keeps its centre a without any distance
 * computed when its upper bound u is at most its lower bound l to all other
 * centres, or at most half the distance from a to the nearest other centre
 * (Hamerly).  Otherwise, with u made exact, the other centres are visited
 * by increasing distance from a: centre j cannot be nearer than
 * |a - j| - u, so the visit stops once that reaches the best distance found;
 * and with Elkan's bounds, a visited centre whose lower bound reaches it is
 * not measured either.  The new l is the least of what was measured or
 * bounded, and |a - j| - u for the first centre not visited.
 */
static void km_assign(struct km *km)
{
	unsigned d = km->d, k = km->k;

	if (k == 1)
		return;
	km_centre_gaps(km);
	for (size_t i = 0; i < km->n; i++) {
		const double *xi = km->x + i * d;
		uint32_t a0 = km->a[i], a = a0;
		const uint32_t *ord = km->ord + (size_t)a0 * k;
		const double *cc0 = km->cc + (size_t)a0 * k;
		double *lb = km->lb ? km->lb + i * k : NULL;
		double m = km->s[a0], u0, u, lo = HUGE_VAL;
		unsigned r;

		if (km->l[i] > m)
			m = km->l[i];
		if (km->u[i] <= m)
			continue;
		u0 = u = sqrt(dist2(xi, km->c + (size_t)a0 * d, d));
		km->u[i] = u;
		if (u <= m)
			continue;
		for (r = 0; r < k - 1; r++) {
			uint32_t j = ord[r];
			double dj;

			if (cc0[j] - u0 >= u)
				break;
			if (lb) {
				dj = lb[j] - km->drift[j];
				if (dj >= u) {
					if (dj < lo)
						lo = dj;
					continue;
				}
			}
			dj = sqrt(dist2(xi, km->c + (size_t)j * d, d));
			if (lb)
				lb[j] = dj + km->drift[j];
			if (dj < u) {
				if (lb)
					lb[a] = u + km->drift[a];
				if (u < lo)
					lo = u;
				a = j;
				u = dj;
			} else if (dj < lo) {
				lo = dj;
			}
		}
		if (r < k - 1 && cc0[ord[r]] - u0 < lo)
			lo = cc0[ord[r]] - u0;
		if (a != a0)
			km_move(km, i, a0, a);
		km->a[i] = a;
		km->u[i] = u;
		km->l[i] = lo;
	}
}

/*
 * Move each centre to the mean of its intervals (from the sums kept up to
 * date by the assignment steps).  A centre left with no
 * interval moves to the interval furthest from its own (new) centre, which
 * then joins it at the next assignment; if every interval sits on its
 * centre, it stays put.  Updates the bounds.  Returns whether any centre
 * moved.
 */
static int km_update(struct km *km)
{
	unsigned d = km->d, k = km->k, j, jmax = 0, empty = 0;
	double pmax = 0, pmax2 = 0;
	size_t i;

	for (j = 0; j < k; j++) {
		const double *s = km->sum + (size_t)j * d;
		double *c = km->nc + (size_t)j * d;

		if (!km->cnt[j]) {
			memcpy(c, km->c + (size_t)j * d, d * sizeof(double));
			empty++;
			continue;
		}
		for (unsigned t = 0; t < d; t++)
			c[t] = s[t] / (double)km->cnt[j];
	}
	if (empty) {
		double *e = km->d2;

		for (i = 0; i < km->n; i++)
			e[i] = dist2(km->x + i * d,
				     km->nc + (size_t)km->a[i] * d, d);
		for (j = 0; j < k; j++) {
			size_t far = 0;

			if (km->cnt[j])
				continue;
			for (i = 1; i < km->n; i++)
				if (e[i] > e[far])
					far = i;
			if (e[far] <= 0)
				break;
			memcpy(km->nc + (size_t)j * d, km->x + far * d,
			       d * sizeof(double));
			e[far] = 0; /* not again */
		}
	}
	for (j = 0; j < k; j++) {
		double pj = sqrt(
		    dist2(km->c + (size_t)j * d, km->nc + (size_t)j * d, d));

		km->p[j] = pj;
		km->drift[j] += pj;
		if (pj > pmax) {
			pmax2 = pmax;
			pmax = pj;
			jmax = j;
		} else if (pj > pmax2) {
			pmax2 = pj;
		}
	}
	if (pmax == 0)
		return 0;
	memcpy(km->c, km->nc, (size_t)k * d * sizeof(double));
	for (i = 0; i < km->n; i++) {
		km->u[i] += km->p[km->a[i]];
		km->l[i] -= km->a[i] == jmax ? pmax2 : pmax;
	}
	return 1;
}

/*
 * Label every interval with its nearest centre (exactly, ties: the lower
 * index) into km->a, km->d2 (squared distance) and km->cnt, as SimPoint's
 * findLabelsAndDists.  Returns the distortion.
 */
static double km_label(struct km *km)
{
	double total = 0;

	memset(km->cnt, 0, km->k * sizeof(size_t));
	for (size_t i = 0; i < km->n; i++) {
		double d1, d2;

		km->a[i] = nearest2(km, km->x + i * km->d, &d1, &d2);
		km->d2[i] = d1;
		km->cnt[km->a[i]]++;
		total += d1;
	}
	return total;
}

/*
 * SimPoint's BIC (KMeans::bicScore) for unit weights: the log-likelihood of
 * the data under a mixture of k spherical Gaussians sharing one variance
 * (Pelleg and Moore's X-means), less the BIC penalty:
 *
 *	sigma^2 = distortion / (n d)
 *	L       = sum_j n_j log(n_j / n) - n d / 2 log(2 pi sigma^2) - n d / 2
 *	BIC     = L - ((k - 1) + k d + 1) / 2 log n
 *
 * sigma^2 is floored (see @var_floor) so that identical intervals do not
 * make it 0 (SimPoint would take log 0).
 */
static double bic_score(const struct km *km, double distortion,
			double var_floor)
{
	double n = (double)km->n, d = km->d, k = km->k;
	double sigma2 = distortion / (n * d), L = 0;

	if (!(sigma2 > var_floor))
		sigma2 = var_floor;
	for (unsigned j = 0; j < km->k; j++)
		if (km->cnt[j])
			L += (double)km->cnt[j] * log((double)km->cnt[j] / n);
	L -= n * d / 2 * log(2 * 3.14159265358979323846 * sigma2) + n * d / 2;
	return L - ((k - 1) + k * d + 1) / 2 * log(n);
}

/* One k-means run from one start; leaves the centres in km->c. */
static double km_run(struct km *km, unsigned k,
		     const struct dbtp_simpoint_opts *o, uint64_t seed,
		     double var_floor)
{
	unsigned lim = o->max_iters ? o->max_iters : UINT32_MAX;

	km->k = k;
	km_init(km, o->init, seed);
	km_assign_all(km);
	for (unsigned it = 0; it < lim; it++) {
		if (it)
			km_assign(km);
		if (!km_update(km))
			break;
	}
	return bic_score(km, km_label(km), var_floor);
}

/* ---- the search over k, shared by the worker threads ---- */

struct search {
	const double *x;
	size_t n;
	unsigned dim, kmax, nk, seeds;
	const struct dbtp_simpoint_opts *opts;
	const unsigned *k_tried;
	const size_t *coff; /* [nk] where k_tried[i]'s centres start */
	double var_floor;
	double *bic;	  /* [nk * seeds] */
	double *centres;  /* seeds * sum(k_tried) * dim */
	atomic_uint next; /* next job */
	atomic_uint done; /* jobs finished */
};

/*
 * Run jobs until none is left.  Job j is start j % seeds of the j / seeds-th
 * largest k: the big ones first, to even out the threads' loads.
 */
static void search_work(struct search *sr, struct km *km)
{
	unsigned njobs = sr->nk * sr->seeds, j;

	while ((j = atomic_fetch_add(&sr->next, 1)) < njobs) {
		unsigned ki = sr->nk - 1 - j / sr->seeds, t = j % sr->seeds;
		unsigned k = sr->k_tried[ki];
		/* SimPoint adds 1 to -seedkm for every start */
		uint64_t seed =
		    sr->opts->seed_km + (uint64_t)ki * sr->seeds + t;
		size_t at =
		    (sr->coff[ki] * sr->seeds + (size_t)t * k) * sr->dim;

		sr->bic[(size_t)ki * sr->seeds + t] =
		    km_run(km, k, sr->opts, seed, sr->var_floor);
		memcpy(sr->centres + at, km->c,
		       (size_t)k * sr->dim * sizeof(double));
		atomic_fetch_add(&sr->done, 1);
	}
}

static void *search_thread(void *arg)
{
	struct search *sr = arg;
	struct km km;

	if (km_alloc(&km, sr->x, sr->n, sr->dim, sr->kmax))
		return NULL; /* the other threads do the work */
	search_work(sr, &km);
	km_free(&km);
	return NULL;
}

static unsigned thread_count(const struct dbtp_simpoint_opts *o, unsigned njobs)
{
	long cpus = o->threads;

	if (!cpus) {
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (cpus > DBTP_SIMPOINT_MAX_AUTO_THREADS)
			cpus = DBTP_SIMPOINT_MAX_AUTO_THREADS;
	}
	if (cpus < 1)
		cpus = 1;
	if (cpus > DBTP_SIMPOINT_MAX_THREADS)
		cpus = DBTP_SIMPOINT_MAX_THREADS;
	if ((unsigned long)cpus > njobs)
		cpus = njobs;
	return (unsigned)cpus;
}

static int bad_opts(const struct dbtp_simpoint_opts *o, dbtp_err *err)
{
	if (!o->max_k || !o->k_step || !o->num_init_seeds)
		return dbtp_err_set(err, EINVAL,
				    "simpoint: max_k, k_step and "
				    "num_init_seeds must be at least 1");
	if (!(o->bic_threshold >= 0 && o->bic_threshold <= 1))
		return dbtp_err_set(
		    err, EINVAL, "simpoint: bic_threshold must be in [0, 1]");
	if (o->init != DBTP_SIMPOINT_INIT_SAMPLE &&
	    o->init != DBTP_SIMPOINT_INIT_FURTHEST)
		return dbtp_err_set(err, EINVAL,
				    "simpoint: unknown k-means initialisation");
	return 0;
}

/* Fill res's per-interval and per-cluster arrays from the labelled km. */
static int finish(struct km *km, struct dbtp_simpoint_result *res)
{
	unsigned k = km->k, j, next = 0;
	uint32_t *map = calloc(k, sizeof(*map));
	size_t i;

	res->labels = malloc(km->n * sizeof(*res->labels));
	res->dists = malloc(km->n * sizeof(*res->dists));
	res->points = malloc(k * sizeof(*res->points));
	res->weights = malloc(k * sizeof(*res->weights));
	if (!map || !res->labels || !res->dists || !res->points ||
	    !res->weights) {
		free(map);
		return -1;
	}
	/* number clusters by their first interval; empty ones last */
	for (j = 0; j < k; j++)
		map[j] = UINT32_MAX;
	for (i = 0; i < km->n; i++)
		if (map[km->a[i]] == UINT32_MAX)
			map[km->a[i]] = next++;
	for (j = 0; j < k; j++)
		if (map[j] == UINT32_MAX)
			map[j] = next++;
	res->k = k;
	res->distortion = 0;
	for (j = 0; j < k; j++) {
		res->points[map[j]] = DBTP_SIMPOINT_NONE;
		res->weights[map[j]] = (double)km->cnt[j] / (double)km->n;
	}
	for (i = 0; i < km->n; i++) {
		uint32_t c = map[km->a[i]];
		size_t *pt = &res->points[c];

		res->labels[i] = c;
		res->dists[i] = sqrt(km->d2[i]);
		res->distortion += km->d2[i];
		if (*pt == DBTP_SIMPOINT_NONE || km->d2[i] < km->d2[*pt])
			*pt = i;
	}
	free(map);
	return 0;
}

int dbtp_simpoint_cluster(const double *x, size_t n, unsigned dim,
			  const struct dbtp_simpoint_opts *opts,
			  struct dbtp_simpoint_result *res, dbtp_err *err)
{
	struct search sr = {.x = x, .n = n, .dim = dim, .opts = opts};
	pthread_t tids[DBTP_SIMPOINT_MAX_THREADS];
	unsigned kmax, nk, ki, t, nthreads, started = 0;
	size_t ctotal = 0, i, *coff = NULL;
	const double *chosen_c = NULL;
	double bmin, bmax, thr;
	struct km km = {0};
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (bad_opts(opts, err))
		return -1;
	if (!n || !dim)
		return dbtp_err_set(err, EINVAL,
				    "simpoint: no intervals to cluster");
	kmax = opts->max_k;
	if ((size_t)kmax > n)
		kmax = (unsigned)n;
	nk = (kmax - 1) / opts->k_step + 1;
	kmax = 1 + (nk - 1) * opts->k_step;
	sr.kmax = kmax;
	sr.nk = nk;
	sr.seeds = opts->num_init_seeds;
	if (n > SIZE_MAX / sizeof(double) / dim)
		goto nomem;
	if ((size_t)nk * sr.seeds > UINT32_MAX / 2)
		return dbtp_err_set(err, EINVAL,
				    "simpoint: too many k-means runs");
	res->n = n;
	res->nk = nk;
	res->k_tried = malloc(nk * sizeof(*res->k_tried));
	res->bic = malloc(nk * sizeof(*res->bic));
	coff = malloc(nk * sizeof(*coff));
	if (!res->k_tried || !res->bic || !coff)
		goto nomem;
	for (ki = 0; ki < nk; ki++) {
		res->k_tried[ki] = 1 + ki * opts->k_step;
		coff[ki] = ctotal;
		ctotal += res->k_tried[ki];
	}
	sr.k_tried = res->k_tried;
	sr.coff = coff;
	sr.bic = malloc((size_t)nk * sr.seeds * sizeof(double));
	sr.centres = malloc(ctotal * sr.seeds * dim * sizeof(double));
	if (!sr.bic || !sr.centres || km_alloc(&km, x, n, dim, kmax))
		goto nomem;

	/* variance floor: 1e-20 of the data's mean squared coordinate */
	for (i = 0; i < n * dim; i++)
		sr.var_floor += x[i] * x[i];
	sr.var_floor = sr.var_floor / ((double)n * dim) * 1e-20;
	if (sr.var_floor < DBL_MIN)
		sr.var_floor = DBL_MIN;

	atomic_init(&sr.next, 0);
	atomic_init(&sr.done, 0);
	nthreads = thread_count(opts, nk * sr.seeds);
	for (t = 1; t < nthreads; t++)
		if (!pthread_create(&tids[started], NULL, search_thread, &sr))
			started++;
	search_work(&sr, &km);
	for (t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	if (atomic_load(&sr.done) != nk * sr.seeds)
		goto nomem;

	/* per k, the start with the best BIC (the first on a tie) */
	for (ki = 0; ki < nk; ki++) {
		const double *b = sr.bic + (size_t)ki * sr.seeds;
		unsigned best = 0;

		for (t = 1; t < sr.seeds; t++)
			if (b[t] > b[best])
				best = t;
		res->bic[ki] = b[best];
		coff[ki] =
		    (coff[ki] * sr.seeds + (size_t)best * res->k_tried[ki]) *
		    dim;
	}

	/* the smallest k whose BIC reaches min + threshold * (max - min) */
	bmin = bmax = res->bic[0];
	for (ki = 1; ki < nk; ki++) {
		if (res->bic[ki] < bmin)
			bmin = res->bic[ki];
		if (res->bic[ki] > bmax)
			bmax = res->bic[ki];
	}
	thr = bmin + opts->bic_threshold * (bmax - bmin);
	if (thr > bmax) /* rounding */
		thr = bmax;
	for (ki = 0; res->bic[ki] < thr; ki++)
		;
	res->chosen = ki;
	chosen_c = sr.centres + coff[ki];
	km.k = res->k_tried[ki];
	memcpy(km.c, chosen_c, (size_t)km.k * dim * sizeof(double));
	km_label(&km);
	if (finish(&km, res))
		goto nomem;
	ret = 0;
	goto out;
nomem:
	dbtp_err_set(err, ENOMEM, "simpoint: out of memory");
	dbtp_simpoint_free_result(res);
out:
	km_free(&km);
	free(coff);
	free(sr.bic);
	free(sr.centres);
	return ret;
}

/*
 * The options to run with: @opts, or the defaults in *@def; NULL after
 * an error in @err.  Zeroes *@res.
 */
static const struct dbtp_simpoint_opts *
run_opts(const struct dbtp_simpoint_opts *opts, struct dbtp_simpoint_opts *def,
	 struct dbtp_simpoint_result *res, dbtp_err *err)
{
	memset(res, 0, sizeof(*res));
	if (!opts) {
		dbtp_simpoint_default_opts(def);
		opts = def;
	}
	if (bad_opts(opts, err))
		return NULL;
	if (!opts->dim) {
		dbtp_err_set(err, EINVAL, "simpoint: dim must be at least 1");
		return NULL;
	}
	return opts;
}

int dbtp_simpoint_run(const struct dbtp_bbv *bbv,
		      const struct dbtp_simpoint_opts *opts,
		      struct dbtp_simpoint_result *res, dbtp_err *err)
{
	struct dbtp_simpoint_opts def;
	double *x;
	size_t i;
	int ret;

	if (!(opts = run_opts(opts, &def, res, err)))
		return -1;
	if (!bbv->n)
		return dbtp_err_set(err, EINVAL,
				    "simpoint: no intervals to cluster");
	if (bbv->n > SIZE_MAX / sizeof(double) / opts->dim)
		return dbtp_err_set(err, ENOMEM, "simpoint: out of memory");
	x = malloc(bbv->n * opts->dim * sizeof(double));
	if (!x)
		return dbtp_err_set(err, ENOMEM, "simpoint: out of memory");
	for (i = 0; i < bbv->n; i++) {
		size_t s = bbv->start[i], m = bbv->start[i + 1] - s, j;

		for (j = 0; j < m && !bbv->counts[s + j]; j++)
			;
		if (j == m) {
			free(x);
			return dbtp_err_set(
			    err, EINVAL, "simpoint: interval %zu is empty", i);
		}
		dbtp_simpoint_project_one(bbv->ids + s, bbv->counts + s, m,
					  opts->dim, opts->seed_proj,
					  x + i * opts->dim);
	}
	ret = dbtp_simpoint_cluster(x, bbv->n, opts->dim, opts, res, err);
	free(x);
	return ret;
}

struct proj {
	double *x;
	size_t n, cap;
	unsigned dim;
	uint64_t seed;
};

static int proj_add(void *arg, const uint32_t *ids, const uint64_t *counts,
		    size_t m, dbtp_err *err)
{
	struct proj *p = arg;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;
		double *x;

		if (cap > SIZE_MAX / sizeof(double) / p->dim ||
		    !(x = realloc(p->x, cap * p->dim * sizeof(double))))
			return dbtp_err_set(err, ENOMEM,
					    "simpoint: out of memory");
		p->x = x;
		p->cap = cap;
	}
	dbtp_simpoint_project_one(ids, counts, m, p->dim, p->seed,
				  p->x + p->n * p->dim);
	p->n++;
	return 0;
}

int dbtp_simpoint_run_file(const char *path,
			   const struct dbtp_simpoint_opts *opts,
			   struct dbtp_simpoint_result *res, dbtp_err *err)
{
	struct dbtp_simpoint_opts def;
	struct proj p = {0};
	int ret;

	if (!(opts = run_opts(opts, &def, res, err)))
		return -1;
	p.dim = opts->dim;
	p.seed = opts->seed_proj;
	ret = dbtp_bbv_scan(path, proj_add, &p, err);
	if (!ret)
		ret = dbtp_simpoint_cluster(p.x, p.n, p.dim, opts, res, err);
	free(p.x);
	return ret;
}

/* ---- output ---- */

/* Append printf-formatted text to @b; 0 or -1. */
static int bprintf(struct dbtp_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bprintf(struct dbtp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (dbtp_buf_reserve(b, 64))
		return -1;
	va_start(ap, fmt);
	len = vsnprintf((char *)b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (len < 0)
		return -1;
	if ((size_t)len >= b->cap - b->len) {
		if (dbtp_buf_reserve(b, (size_t)len + 1))
			return -1;
		va_start(ap, fmt);
		vsnprintf((char *)b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)len;
	return 0;
}

int dbtp_simpoint_format(const struct dbtp_simpoint_result *r,
			 struct dbtp_buf *simpoints, struct dbtp_buf *weights,
			 struct dbtp_buf *labels)
{
	double total = 0;
	unsigned j;
	size_t i;

	for (j = 0; j < r->k; j++)
		if (r->points[j] != DBTP_SIMPOINT_NONE)
			total += r->weights[j];
	for (j = 0; j < r->k; j++) {
		if (r->points[j] == DBTP_SIMPOINT_NONE)
			continue;
		if (simpoints &&
		    bprintf(simpoints, "%zu %u\n", r->points[j], j))
			return -1;
		if (weights &&
		    bprintf(weights, "%g %u\n", r->weights[j] / total, j))
			return -1;
	}
	for (i = 0; labels && i < r->n; i++)
		if (bprintf(labels, "%u %g\n", (unsigned)r->labels[i],
			    r->dists[i]))
			return -1;
	return 0;
}

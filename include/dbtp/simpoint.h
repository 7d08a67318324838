/* SPDX-License-Identifier: MIT */
/*
 * dbtp/simpoint.h - choose simulation points from basic block vectors, by
 * the method of SimPoint 3.2 (Sherwood, Perelman, Hamerly, Calder, ASPLOS
 * 2002; Hamerly, Perelman, Lau, Calder, "SimPoint 3.0: Faster and More
 * Flexible Program Phase Analysis", JILP 7, 2005).
 *
 * 1. Each interval's vector is divided by its sum (fixed-length intervals:
 *    every interval weighs the same).
 * 2. It is projected to @dim dimensions by a random matrix with entries
 *    uniform in [-1, 1).  The entry for (block id, dimension) is a hash of
 *    (seed, id, dimension), computed when needed and never stored: memory is
 *    n x dim doubles whatever the number of distinct blocks, and projecting
 *    costs one pass over the sparse entries.
 * 3. For each k tried, k-means runs from num_init_seeds random starts and
 *    the start with the best BIC is kept (as SimPoint does).
 * 4. The chosen k is the smallest whose BIC is at least
 *    min + bic_threshold * (max - min) over the k tried.
 * 5. Each cluster's simulation point is the interval nearest its centroid;
 *    its weight is the cluster's share of the intervals.
 *
 * doc/dbtprof-simpoint.md gives the details: defaults and their sources, the
 * BIC formula, where this differs from SimPoint 3.2's program.
 */
#ifndef DBTP_SIMPOINT_H
#define DBTP_SIMPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/common.h"

struct dbtp_bbv;
struct dbtp_buf;

/** enum dbtp_simpoint_init - how k-means picks its k starting centres. */
enum dbtp_simpoint_init {
	/* k distinct intervals at random (SimPoint's "-initkm samp") */
	DBTP_SIMPOINT_INIT_SAMPLE = 0,
	/* one at random, then repeatedly the interval furthest from every
	 * centre chosen so far ("-initkm ff") */
	DBTP_SIMPOINT_INIT_FURTHEST = 1,
};

/*
 * SimPoint 3.2's defaults (analysiscode/SimpointOptions.cpp, and the option
 * listing in its README.txt): -dim 15, -numInitSeeds 5, -iters 100,
 * -bicThreshold 0.9, -seedkm 493575226, -seedproj 2042712918.  -maxK has
 * no default there (see struct dbtp_simpoint_opts).
 */
#define DBTP_SIMPOINT_DEF_MAX_K 30
#define DBTP_SIMPOINT_DEF_DIM 15
#define DBTP_SIMPOINT_DEF_INIT_SEEDS 5
#define DBTP_SIMPOINT_DEF_ITERS 100
#define DBTP_SIMPOINT_DEF_BIC_THRESHOLD 0.9
#define DBTP_SIMPOINT_DEF_SEED_KM 493575226u
#define DBTP_SIMPOINT_DEF_SEED_PROJ 2042712918u

/**
 * struct dbtp_simpoint_opts - clustering parameters.
 * @max_k: largest k tried.  SimPoint has no default ("-maxK ... must be
 *	specified when using search"); 30 is the value all the examples of its
 *	README.txt use.  Clamped to the number of intervals.
 * @k_step: k = 1, 1 + k_step, 1 + 2 k_step, ... <= max_k are tried (1: every
 *	k, like SimPoint's "-k 1:maxK").  SimPoint's default "-k search"
 *	binary search is not implemented.
 * @dim: projected dimensions (SimPoint "-dim", default 15).
 * @num_init_seeds: k-means starts per k (SimPoint "-numInitSeeds", 5).
 * @max_iters: k-means iteration limit (SimPoint "-iters", 100); 0 means no
 *	limit (SimPoint's "-iters off").
 * @bic_threshold: in [0, 1] (SimPoint "-bicThreshold", 0.9).
 * @init: starting centres (SimPoint "-initkm", default "samp").
 * @seed_km: seed of the k-means starts (SimPoint "-seedkm", 493575226).  The
 *	j-th start for the i-th k tried (both from 0) uses seed_km +
 *	i * num_init_seeds + j, as SimPoint increments its seed per start.
 * @seed_proj: seed of the projection (SimPoint "-seedproj", 2042712918).
 * @threads: worker threads for the k-means runs; 0 (the default): one per
 *	online CPU, at most DBTP_SIMPOINT_MAX_AUTO_THREADS.  The result does
 *	not depend on it.  Not a SimPoint option.
 */
struct dbtp_simpoint_opts {
	unsigned max_k;
	unsigned k_step;
	unsigned dim;
	unsigned num_init_seeds;
	unsigned max_iters;
	double bic_threshold;
	enum dbtp_simpoint_init init;
	uint64_t seed_km;
	uint64_t seed_proj;
	unsigned threads;
};

#define DBTP_SIMPOINT_MAX_AUTO_THREADS 16
#define DBTP_SIMPOINT_MAX_THREADS 64

/** dbtp_simpoint_default_opts() - fill @o with the defaults above. */
void dbtp_simpoint_default_opts(struct dbtp_simpoint_opts *o);

/* points[] value of a cluster left empty */
#define DBTP_SIMPOINT_NONE SIZE_MAX

/**
 * struct dbtp_simpoint_result - the clustering chosen, and the search.
 * @n: number of intervals.
 * @k: the k chosen.  Clusters are numbered 0..k-1 in the order of their
 *	first interval, so interval 0 is in cluster 0; clusters left empty
 *	(rare: when fewer than k intervals differ, or when the iteration
 *	limit stops k-means early) come last.
 * @labels: [n] cluster of each interval.
 * @dists: [n] Euclidean distance of each interval to its cluster's centroid,
 *	in the projected space.
 * @points: [k] simulation point of each cluster: the index (from 0) of its
 *	interval nearest the centroid, the first one on a tie;
 *	DBTP_SIMPOINT_NONE for an empty cluster.
 * @weights: [k] cluster size / n (0 for an empty cluster).
 * @distortion: sum over intervals of the squared distance to the centroid.
 * @nk: number of k values tried.
 * @k_tried: [nk] the k values tried, increasing.
 * @bic: [nk] BIC of the best clustering found for each of them.
 * @chosen: index of @k in @k_tried.
 */
struct dbtp_simpoint_result {
	size_t n;
	unsigned k;
	uint32_t *labels;
	double *dists;
	size_t *points;
	double *weights;
	double distortion;
	unsigned nk;
	unsigned *k_tried;
	double *bic;
	unsigned chosen;
};

/**
 * dbtp_simpoint_project_one() - project one sparse interval.
 * @ids: block ids (any order; 0 is not a valid id but is accepted).
 * @counts: their counts, not all 0.
 * @m: number of entries.
 * @dim: projected dimensions.
 * @seed_proj: projection seed.
 * @out: [dim] receives sum_i (counts[i] / sum(counts)) * R(ids[i], d).
 *
 * Lets a caller project intervals as they are produced, holding n x dim
 * doubles instead of the sparse vectors.  The same (@seed_proj, @dim) give
 * the same matrix as dbtp_simpoint_run() uses.
 */
void dbtp_simpoint_project_one(const uint32_t *ids, const uint64_t *counts,
			       size_t m, unsigned dim, uint64_t seed_proj,
			       double *out);

/**
 * dbtp_simpoint_cluster() - run the k search on projected intervals.
 * @x: [n * dim] row-major projected intervals.
 * @n: number of intervals, >= 1.
 * @dim: their dimension, >= 1.
 * @opts: parameters (@dim and @seed_proj are not used here).
 * @res: receives the result; zeroed first; release with
 *	dbtp_simpoint_free_result().
 * @err: filled on failure.
 *
 * Return: 0, or -1 (EINVAL: bad options or no interval; ENOMEM).
 */
int dbtp_simpoint_cluster(const double *x, size_t n, unsigned dim,
			  const struct dbtp_simpoint_opts *opts,
			  struct dbtp_simpoint_result *res, dbtp_err *err);

/**
 * dbtp_simpoint_run() - normalise, project and cluster @bbv's intervals.
 * @bbv: the intervals (see dbtp/bbvfile.h).
 * @opts: parameters, or NULL for the defaults.
 * @res: receives the result (zeroed first).
 * @err: filled on failure.
 *
 * Memory, on top of @bbv: n x dim doubles for the projection, and per
 * worker thread about n x (max_k + 5) doubles (n x 5 when n x max_k is
 * above 2^22), whatever the number of distinct blocks.  Deterministic: the
 * same input and options give the same result.  Return: 0 or -1.
 */
int dbtp_simpoint_run(const struct dbtp_bbv *bbv,
		      const struct dbtp_simpoint_opts *opts,
		      struct dbtp_simpoint_result *res, dbtp_err *err);

/**
 * dbtp_simpoint_run_file() - dbtp_simpoint_run() on the .bb file @path,
 * read with dbtp_bbv_scan(): each interval is projected as it is read, so
 * memory is the n x dim projected doubles and the clustering's, never the
 * sparse vectors.  The same file gives the same result as loading it and
 * calling dbtp_simpoint_run().  Return: 0 or -1 (the reader's messages).
 */
int dbtp_simpoint_run_file(const char *path,
			   const struct dbtp_simpoint_opts *opts,
			   struct dbtp_simpoint_result *res, dbtp_err *err);

/** dbtp_simpoint_free_result() - release @r's arrays and zero it. */
void dbtp_simpoint_free_result(struct dbtp_simpoint_result *r);

/**
 * dbtp_simpoint_format() - SimPoint's output files, appended to buffers.
 * @r: a result.
 * @simpoints: if not NULL, gets SimPoint's -saveSimpoints text: one line
 *	"INTERVAL CLUSTER" per non-empty cluster, by increasing cluster.
 * @weights: if not NULL, gets -saveSimpointWeights: "WEIGHT CLUSTER" per
 *	non-empty cluster, same order, the weight printed like C++'s default
 *	ostream (%g, 6 significant digits).
 * @labels: if not NULL, gets -saveLabels: "CLUSTER DISTANCE" per interval,
 *	in interval order, the distance printed the same way.
 *
 * Return: 0, or -1 when memory ran out (the buffers may then hold part).
 */
int dbtp_simpoint_format(const struct dbtp_simpoint_result *r,
			 struct dbtp_buf *simpoints, struct dbtp_buf *weights,
			 struct dbtp_buf *labels);

#endif

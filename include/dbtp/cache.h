/* SPDX-License-Identifier: MIT */
/*
 * dbtp/cache.h - a two-level set-associative cache model over the memory
 * accesses of a mem-mode trace, per interval and in total
 * (doc/dbtprof-cache.md).
 *
 * The model: an L1 data cache and an L2, each set-associative with true LRU
 * replacement; write-allocate, write-back (a store miss fills the line like
 * a load, then marks it dirty; a dirty line evicted is written back).  The
 * hierarchy is non-inclusive: L2 is accessed only on an L1 miss (to fill the
 * L1 line), and nothing is invalidated in L1 when L2 evicts.  A dirty line
 * evicted from L1 is written into L2: if L2 holds the line it becomes dirty
 * there (its LRU position unchanged, not counted as an L2 access); if not,
 * the write goes to memory.  An access that straddles L1 line boundaries
 * touches each line it covers and counts as one access per line.
 *
 * Every thread has a private hierarchy (its own L1 and L2): results do not
 * depend on how the trace interleaves threads' chunks.
 *
 * Intervals are cut exactly as dbtp/bbv.h cuts them (thread by thread,
 * interval k ends at the first block boundary at or after (k+1)*N of that
 * thread's instructions), so interval i here is line i of the thread's .bb
 * file.  Memory accesses count in the interval of the block they happen in.
 */
#ifndef DBTP_CACHE_H
#define DBTP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/common.h"
#include "dbtp/trace.h"

/* Default geometry: a typical L1D and a private L2 of current x86 cores. */
#define DBTP_CACHE_L1_SIZE (32u << 10) /* 32 KiB */
#define DBTP_CACHE_L1_WAYS 8u
#define DBTP_CACHE_L1_LINE 64u
#define DBTP_CACHE_L2_SIZE (1u << 20) /* 1 MiB */
#define DBTP_CACHE_L2_WAYS 16u
#define DBTP_CACHE_L2_LINE 64u

/* Limits of a geometry accepted by dbtp_cache_geom_check(). */
#define DBTP_CACHE_MIN_LINE 4u
#define DBTP_CACHE_MAX_LINE (1u << 20)
#define DBTP_CACHE_MAX_WAYS (1u << 16)
#define DBTP_CACHE_MAX_SIZE ((uint64_t)1 << 36) /* 64 GiB */

/**
 * struct dbtp_cache_geom - one cache level.
 * @size: capacity in bytes.
 * @ways: associativity (lines per set), >= 1.
 * @line: line size in bytes, a power of two.
 *
 * The number of sets, @size / (@ways * @line), must be a whole power of two.
 */
struct dbtp_cache_geom {
	uint64_t size;
	uint32_t ways;
	uint32_t line;
};

/**
 * dbtp_cache_geom_sets() - number of sets of a checked geometry.
 * @g: the geometry.
 *
 * Return: @g->size / (@g->ways * @g->line).
 */
uint64_t dbtp_cache_geom_sets(const struct dbtp_cache_geom *g);

/**
 * dbtp_cache_geom_check() - is @g a geometry the model can simulate?
 * @g: the geometry.
 * @err: filled with the reason when not.
 *
 * Checks ways in 1..DBTP_CACHE_MAX_WAYS, line a power of two in
 * DBTP_CACHE_MIN_LINE..DBTP_CACHE_MAX_LINE, size at most DBTP_CACHE_MAX_SIZE
 * and a whole, power-of-two number of sets.
 *
 * Return: 0, or -1 (EINVAL).
 */
int dbtp_cache_geom_check(const struct dbtp_cache_geom *g, dbtp_err *err);

/**
 * dbtp_cache_geom_parse() - parse "SIZE,WAYS,LINE" and check it.
 * @s: the text; SIZE and LINE in bytes with an optional K, M or G suffix
 *     (powers of 1024, either case, "KiB" style accepted), WAYS a number.
 * @g: receives the geometry.
 * @err: filled on failure.
 *
 * Return: 0, or -1 (EINVAL) with a one-line reason.
 */
int dbtp_cache_geom_parse(const char *s, struct dbtp_cache_geom *g,
			  dbtp_err *err);

/**
 * struct dbtp_cache_counts - what happened in an interval (or a run).
 * @insns: instructions executed (sum of the blocks' instruction counts).
 * @blocks: block executions.
 * @ops: memory operations (MEM events).
 * @stores: of which stores.
 * @accesses: L1 accesses: one per L1 line each operation touches.
 * @l1_misses: L1 accesses that missed.
 * @l1_evictions: valid lines L1 evicted to make room.
 * @l1_writebacks: of which dirty (written back into L2 or memory).
 * @l2_accesses: L2 accesses (one per L1 miss).
 * @l2_misses: L2 accesses that missed.
 * @l2_evictions: valid lines L2 evicted to make room.
 * @mem_writebacks: lines written to memory: dirty L2 evictions plus L1
 *	write-backs whose line L2 no longer held.
 */
struct dbtp_cache_counts {
	uint64_t insns, blocks;
	uint64_t ops, stores;
	uint64_t accesses, l1_misses, l1_evictions, l1_writebacks;
	uint64_t l2_accesses, l2_misses, l2_evictions;
	uint64_t mem_writebacks;
};

/** dbtp_cache_counts_add() - add @b's counts to @a. */
void dbtp_cache_counts_add(struct dbtp_cache_counts *a,
			   const struct dbtp_cache_counts *b);

/**
 * struct dbtp_cache_metrics - rates derived from counts.
 * @l1_miss_rate: l1_misses / accesses.
 * @l1_mpki: l1_misses * 1000 / insns.
 * @l2_miss_rate: l2_misses / l2_accesses (the local miss rate).
 * @l2_mpki: l2_misses * 1000 / insns.
 *
 * A ratio with a zero denominator is 0.
 */
struct dbtp_cache_metrics {
	double l1_miss_rate, l1_mpki, l2_miss_rate, l2_mpki;
};

/** dbtp_cache_metrics() - the metrics of @c in *@m. */
void dbtp_cache_metrics(const struct dbtp_cache_counts *c,
			struct dbtp_cache_metrics *m);

/*
 * One hierarchy (L1 + L2), for direct use.
 */
typedef struct dbtp_cache dbtp_cache;

/**
 * dbtp_cache_new() - an empty (all lines invalid) L1 + L2 hierarchy.
 * @out: receives it.
 * @l1: L1 geometry.
 * @l2: L2 geometry; its line must not be shorter than @l1's.
 * @err: filled on failure.
 *
 * Memory: 8 bytes per line of each level.
 *
 * Return: 0, or -1 (EINVAL: bad geometry; ENOMEM).
 */
int dbtp_cache_new(dbtp_cache **out, const struct dbtp_cache_geom *l1,
		   const struct dbtp_cache_geom *l2, dbtp_err *err);

/**
 * dbtp_cache_access() - simulate one memory operation.
 * @c: the hierarchy.
 * @addr: first byte (addresses wrap at 2^64).
 * @size: bytes (0 is taken as 1).
 * @store: nonzero for a store.
 * @cnt: counts to add to (@ops, @stores and the cache counts; not
 *	@insns or @blocks).
 */
void dbtp_cache_access(dbtp_cache *c, uint64_t addr, uint32_t size, int store,
		       struct dbtp_cache_counts *cnt);

/* dbtp_cache_probe() results */
#define DBTP_CACHE_ABSENT 0
#define DBTP_CACHE_CLEAN 1
#define DBTP_CACHE_DIRTY 2

/**
 * dbtp_cache_probe() - is the line holding @addr in a level?  No side
 * effect.
 * @c: the hierarchy.
 * @level: 1 or 2.
 * @addr: any byte of the line.
 * @lru_pos: if not NULL, receives the line's position in its set when
 *	present: 0 = most recently used .. ways-1 = least.
 *
 * Return: DBTP_CACHE_ABSENT, DBTP_CACHE_CLEAN or DBTP_CACHE_DIRTY.
 */
int dbtp_cache_probe(const dbtp_cache *c, int level, uint64_t addr,
		     uint32_t *lru_pos);

void dbtp_cache_free(dbtp_cache *c);

/**
 * struct dbtp_cache_tally - what gentest keeps of a block's memory
 * operations (its model of a mem-mode profile, the plugin's `cache=on`):
 * @ops operations, @l1 and @l2 misses, @unaligned operations of 2, 4 or 8
 * bytes at an address that is not a multiple of their size.
 */
struct dbtp_cache_tally {
	uint64_t ops, l1, l2, unaligned;
};

/**
 * dbtp_cache_new_default() - dbtp_cache_new() of the default geometry
 * (DBTP_CACHE_L1_*, DBTP_CACHE_L2_*).
 */
int dbtp_cache_new_default(dbtp_cache **out, dbtp_err *err);

/**
 * dbtp_cache_tally() - dbtp_cache_access() of one operation, added to
 * tally @t.
 */
void dbtp_cache_tally(dbtp_cache *c, uint64_t addr, uint32_t size, int store,
		      struct dbtp_cache_tally *t);

/*
 * The simulation of a trace: a private hierarchy per thread, intervals.
 */

/**
 * struct dbtp_cache_opts - what to simulate.
 * @l1: L1 data cache geometry.
 * @l2: L2 geometry.
 * @interval: instructions per interval (0: 100,000,000 as dbtp_bbv_opts).
 * @drop_partial: leave out each thread's last, shorter interval (its
 *	accesses still count in the thread's total).
 */
struct dbtp_cache_opts {
	struct dbtp_cache_geom l1, l2;
	uint64_t interval;
	int drop_partial;
};

/** dbtp_cache_default_opts() - the default geometry, interval and keep. */
void dbtp_cache_default_opts(struct dbtp_cache_opts *o);

typedef struct dbtp_cachesim dbtp_cachesim;

/** dbtp_cachesim_new() - a simulation; -1 on bad geometry or no memory. */
int dbtp_cachesim_new(dbtp_cachesim **out, const struct dbtp_cache_opts *o,
		      dbtp_err *err);

/**
 * dbtp_cachesim_block() - thread @thread executed a block of @ninsns
 * instructions; its memory accesses follow.
 */
int dbtp_cachesim_block(dbtp_cachesim *s, uint32_t thread, uint32_t ninsns,
			dbtp_err *err);

/** dbtp_cachesim_mem() - thread @thread accessed @size bytes at @addr. */
int dbtp_cachesim_mem(dbtp_cachesim *s, uint32_t thread, uint64_t addr,
		      uint32_t size, int store, dbtp_err *err);

/**
 * dbtp_cachesim_event() - feed one trace event: BLOCK and MEM count, the
 * others are ignored.
 */
int dbtp_cachesim_event(dbtp_cachesim *s, const struct dbtp_event *ev,
			dbtp_err *err);

/**
 * dbtp_cachesim_finish() - close each thread's last interval (or drop it if
 * partial and asked to).  Feeding events afterwards is an error.
 */
int dbtp_cachesim_finish(dbtp_cachesim *s, dbtp_err *err);

/** dbtp_cachesim_nthreads() - 1 + the highest thread number fed. */
uint32_t dbtp_cachesim_nthreads(const dbtp_cachesim *s);

/** dbtp_cachesim_nintervals() - closed intervals of @thread. */
uint64_t dbtp_cachesim_nintervals(const dbtp_cachesim *s, uint32_t thread);

/** dbtp_cachesim_interval() - counts of interval @k of @thread, or NULL. */
const struct dbtp_cache_counts *
dbtp_cachesim_interval(const dbtp_cachesim *s, uint32_t thread, uint64_t k);

/**
 * dbtp_cachesim_thread_total() - counts of @thread's whole run (including
 * a dropped partial interval), or NULL.  Final after finish.
 */
const struct dbtp_cache_counts *
dbtp_cachesim_thread_total(const dbtp_cachesim *s, uint32_t thread);

/** dbtp_cachesim_total() - the sum over all threads in *@out. */
void dbtp_cachesim_total(const dbtp_cachesim *s, struct dbtp_cache_counts *out);

void dbtp_cachesim_free(dbtp_cachesim *s);

/*
 * Estimates from SimPoint's simulation points.
 */

/**
 * struct dbtp_cache_pick - one simulation point.
 * @interval: interval index, from 0 (SimPoint's .simpoints first column).
 * @cluster: its cluster.
 * @weight: the cluster's weight (.weights first column).
 * @line: line of the .simpoints file it came from (for messages).
 */
struct dbtp_cache_pick {
	uint64_t interval;
	uint32_t cluster;
	double weight;
	unsigned line;
};

/**
 * dbtp_cache_read_picks() - read SimPoint's -saveSimpoints and
 * -saveSimpointWeights files.
 * @simpoints: path of the file of "INTERVAL CLUSTER" lines.
 * @weights: path of the file of "WEIGHT CLUSTER" lines.
 * @out: receives a malloc'ed array, in the order of @simpoints (free()).
 * @n: receives its length (>= 1).
 * @err: filled on failure: "FILE: line N: ..." for a malformed line, a
 *	cluster given twice, a weight not a finite number in [0, 1]; also a
 *	cluster of one file missing from the other, an empty file.
 *
 * Blank lines and lines starting with '#' are skipped; fields are separated
 * by blanks.
 *
 * Return: 0 or -1.
 */
int dbtp_cache_read_picks(const char *simpoints, const char *weights,
			  struct dbtp_cache_pick **out, size_t *n,
			  dbtp_err *err);

/**
 * struct dbtp_cache_estimate - SimPoint estimate against the whole run.
 * @est: sum over picks of weight x the metric of the picked interval.
 * @full: the metric of the thread's whole run.
 * @rel_err: (est - full) / full per metric; NAN when full is 0.
 * @weight_sum: sum of the weights used (SimPoint's add up to 1).
 */
struct dbtp_cache_estimate {
	struct dbtp_cache_metrics est, full, rel_err;
	double weight_sum;
};

/**
 * dbtp_cache_estimate() - estimate @thread's metrics from simulation points.
 * @s: a finished simulation.
 * @thread: the thread whose intervals SimPoint clustered (its .bb file).
 * @picks: the points, @n of them.
 * @name: name of the .simpoints file, for messages.
 * @out: receives the estimate.
 * @err: "NAME: line N: interval I is past the last interval ..." when a
 *	point is out of range.
 *
 * Return: 0 or -1.
 */
int dbtp_cache_estimate(const dbtp_cachesim *s, uint32_t thread,
			const struct dbtp_cache_pick *picks, size_t n,
			const char *name, struct dbtp_cache_estimate *out,
			dbtp_err *err);

#endif

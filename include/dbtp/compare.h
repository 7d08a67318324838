/* SPDX-License-Identifier: MIT */
/*
 * dbtp/compare.h - where two recordings of the same program part ways.
 *
 * Two traces (blocks or mem mode) are compared thread by thread, threads
 * matched by number.  What is compared is each thread's stream of executed
 * *instruction addresses*: every block expands to its instructions (vaddr
 * plus the sizes of the ones before), so the same code cut into translation
 * blocks differently by two QEMU runs compares equal.  The first index where
 * the two streams differ, or where one of them ends first, is the thread's
 * divergence.
 *
 * Memory stays bounded, whatever the traces' length: the traces are read in
 * lockstep, one event at a time, and a thread's blocks are queued only
 * while one trace is ahead of the other on that thread (chunks of different
 * threads interleave differently in the two files).  When the queued blocks
 * of all threads exceed a limit, the thread with the longest queue is
 * dropped from the pass and compared in a later pass that re-reads both
 * files, skipping the other threads' events.  A pass never drops its last
 * thread, so every pass settles at least one thread.  One more read (of a
 * trace's beginning only, up to the divergence) recovers syscalls that a
 * trace far ahead pushed out of its bounded history.  The files must
 * therefore be re-readable (regular files, not pipes).
 */
#ifndef DBTP_COMPARE_H
#define DBTP_COMPARE_H

#include <stdint.h>

#include "dbtp/elf.h"
#include "dbtp/trace.h"

/**
 * struct dbtp_cmp_opts - knobs of dbtp_compare().
 * @context: syscalls and common blocks kept before a divergence (0 = 5).
 * @max_queued: blocks held in queues over all threads of a pass before a
 *              thread is put off to a later pass (0 = 4194304).
 */
struct dbtp_cmp_opts {
	unsigned context;
	uint64_t max_queued;
};

/**
 * struct dbtp_cmp_syscall - a syscall of the thread before its divergence.
 * @insn: the thread's instructions up to and including the block that made
 *        the call.
 * @index: the thread's syscalls before this one.
 * @returned: a SYSRET was seen (@ret is valid).
 */
struct dbtp_cmp_syscall {
	int64_t sysno, ret;
	uint64_t args[6];
	uint64_t insn, index;
	int returned;
};

/**
 * struct dbtp_cmp_point - one trace's side of a divergence.
 * @ended: the thread's stream ends here (no instruction; the fields below
 *         up to @block_index are then unused).
 * @addr: address of the first instruction that differs.
 * @block: id (in this trace) of the block holding it.
 * @insn_in_block: its index within the block.
 * @block_index: the thread's block executions before that block.
 * @sys: the last syscalls before the divergence, oldest first (@nsys of them,
 *       at most the context).
 * @sys_before: all syscalls the thread made before the divergence.
 */
struct dbtp_cmp_point {
	int ended;
	uint64_t addr;
	uint32_t block, insn_in_block;
	uint64_t block_index;
	struct dbtp_cmp_syscall *sys;
	unsigned nsys;
	uint64_t sys_before;
};

/**
 * struct dbtp_cmp_common - a block executed identically by both traces
 * shortly before the divergence.
 * @block: its id in trace A.
 * @insn: the thread's instruction index of its first instruction.
 * @ninsns: how many of its instructions are common (all, except maybe in
 *          the block that holds the divergence).
 */
struct dbtp_cmp_common {
	uint32_t block;
	uint32_t ninsns;
	uint64_t insn;
};

/**
 * struct dbtp_cmp_thread - the comparison of thread @num.
 * @present: the thread ran in trace A ([0]) and in trace B ([1]).
 * @insns, @blocks, @syscalls: the thread's totals in A and B.
 * @diverged: the instruction streams differ; then:
 * @insn: index of the first instruction that differs (= instructions the
 *        two streams have in common).
 * @at: where, in A and in B.
 * @common: the last common blocks before it, oldest first (@ncommon).
 * @pass: the pass (from 1) that compared this thread.
 */
struct dbtp_cmp_thread {
	uint32_t num;
	int present[2];
	uint64_t insns[2], blocks[2], syscalls[2];
	int diverged;
	uint64_t insn;
	struct dbtp_cmp_point at[2];
	struct dbtp_cmp_common *common;
	unsigned ncommon;
	unsigned pass;
};

/**
 * struct dbtp_cmp - the result.
 * @t: traces A and B, read to their end: INFO keys, block table (for the
 *     block ids above), files and thread totals stay available.
 * @threads: one per thread number present in either trace (@nthreads).
 * @diverged: threads that diverged.
 * @passes: reads of the traces it took (1 when no thread was put off).
 */
struct dbtp_cmp {
	dbtp_trace *t[2];
	struct dbtp_cmp_thread *threads;
	uint32_t nthreads, diverged;
	unsigned passes, context;
};

/**
 * dbtp_compare() - compare traces @a and @b (paths of regular files).
 * Fails on unreadable or malformed traces, count-mode traces and traces of
 * different architectures.
 * Return: 0 with *@out set (free with dbtp_compare_free()), -1 on error.
 */
int dbtp_compare(struct dbtp_cmp **out, const char *a, const char *b,
		 const struct dbtp_cmp_opts *opts, dbtp_err *err);

void dbtp_compare_free(struct dbtp_cmp *c);

/**
 * dbtp_compare_first() - the divergence to explain: thread 0's if it
 * diverged, else the lowest-numbered diverged thread; NULL if none.
 */
const struct dbtp_cmp_thread *dbtp_compare_first(const struct dbtp_cmp *c);

/**
 * struct dbtp_cmp_hint - a guess at why the traces part, from simple rules.
 * @cause: "command", "syscall", "cpu", "environment", "initial-stack",
 *         "threads", "random", "time", "qemu", "cwd" or "seed".
 * @likely: 1 when the evidence points at it, 0 for a mere possibility.
 * @text: one sentence.
 */
struct dbtp_cmp_hint {
	const char *cause;
	int likely;
	char text[480];
};

#define DBTP_CMP_MAX_HINTS 4

/**
 * dbtp_compare_hints() - best-effort hints for the first divergence
 * (dbtp_compare_first()), most telling first, using @cache (may be NULL) to
 * name code.  Never more than DBTP_CMP_MAX_HINTS.
 * Return: how many were written to @h; 0 means no hint.
 */
unsigned dbtp_compare_hints(const struct dbtp_cmp *c, dbtp_symcache *cache,
			    struct dbtp_cmp_hint *h);

#endif

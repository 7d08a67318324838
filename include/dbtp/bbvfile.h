/* SPDX-License-Identifier: MIT */
/*
 * dbtp/bbvfile.h - basic block vectors in SimPoint's .bb text format.
 *
 * A .bb file has one line per interval of execution:
 *
 *	T:ID:COUNT :ID:COUNT ... :ID:COUNT
 *
 * ID names a basic block (numbered from 1) and COUNT is the number of
 * instructions the block contributed to the interval (executions times the
 * block's size).  Blocks that did not run are left out, so each line is a
 * sparse vector.  The reader also accepts blank lines and lines starting with
 * '#', leading and trailing blanks, CRLF line ends and ids in any order
 * (they are sorted on load); it rejects everything else with a one-line
 * message "NAME: line N: what".
 */
#ifndef DBTP_BBVFILE_H
#define DBTP_BBVFILE_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/common.h"

struct dbtp_buf;

/**
 * struct dbtp_bbv - all intervals of a .bb file, as a compressed sparse
 * row (CSR) matrix.
 * @n: number of intervals (rows).
 * @start: @n + 1 offsets into @ids and @counts; interval i has the
 *	@start[i + 1] - @start[i] entries from @start[i] on, and @start[@n] is
 *	the total number of entries.  May be NULL when @n is 0.
 * @ids: block ids, >= 1, strictly increasing within each interval.
 * @counts: the matching counts.
 * @max_id: the largest block id seen (0 when empty): the dimension of the
 *	dense vectors the rows stand for.
 * @cap: room in @ids and @counts (entries); @start_cap: room in @start.
 *
 * The two value arrays are kept apart (12 bytes an entry, no padding) so
 * that a consumer streaming over one row touches only what it reads.  A
 * zeroed struct is a valid empty matrix; fill one with dbtp_bbv_read(),
 * dbtp_bbv_read_mem() or dbtp_bbv_add() and release it with dbtp_bbv_free().
 */
struct dbtp_bbv {
	size_t n;
	size_t *start;
	uint32_t *ids;
	uint64_t *counts;
	uint32_t max_id;
	size_t cap, start_cap;
};

/**
 * dbtp_bbv_read() - load a .bb file.
 * @path: file to read.
 * @out: receives the intervals; zeroed first, left empty on failure.
 * @err: filled on failure.
 *
 * Return: 0, or -1 with "PATH: reason" (cannot open/read) or
 * "PATH: line N: what" (bad content) in @err.
 */
int dbtp_bbv_read(const char *path, struct dbtp_bbv *out, dbtp_err *err);

/**
 * dbtp_bbv_read_mem() - parse .bb text from memory.
 * @data: the text (need not be NUL-terminated; may contain any bytes).
 * @len: its length.
 * @name: what error messages call the input.
 * @out: receives the intervals; zeroed first, left empty on failure.
 * @err: filled on failure.
 *
 * Rejected, with the 1-based line number: a line that is not blank, not a
 * comment and does not start with "T"; a malformed ":ID:COUNT" pair; id 0;
 * an id above 2^32-1 or a count above 2^64-1; an id given twice in one
 * line; an interval with no pairs or whose counts are all 0 (it cannot be
 * normalised); a NUL byte anywhere, another control byte (but tab and CR)
 * in an interval line.  Input with no interval at all
 * is rejected as "line N: no intervals", N being the line after the last.
 *
 * Return: 0 or -1.
 */
int dbtp_bbv_read_mem(const char *data, size_t len, const char *name,
		      struct dbtp_bbv *out, dbtp_err *err);

/**
 * dbtp_bbv_scan() - read a .bb file one interval at a time, holding only
 * the longest line and one interval in memory: @fn is called with each
 * interval's ids (increasing) and counts, @n pairs, in file order; it
 * returns 0, or -1 with @err set to stop the scan.  The same rules and
 * messages as dbtp_bbv_read_mem(); an error stops the scan at its line
 * (the intervals before it have been handed out).
 *
 * Return: 0, or -1 with @err.
 */
int dbtp_bbv_scan(const char *path,
		  int (*fn)(void *arg, const uint32_t *ids,
			    const uint64_t *counts, size_t n, dbtp_err *err),
		  void *arg, dbtp_err *err);

/**
 * dbtp_bbv_add() - append one interval to @bbv.
 * @bbv: the matrix (zeroed or filled before).
 * @ids: block ids, >= 1, in any order, no repeats.
 * @counts: their counts, not all 0.
 * @n: number of pairs, >= 1.
 * @err: filled on failure.
 *
 * Builds a matrix in memory (for instance from a trace) without going
 * through text.  Return: 0, or -1 (EINVAL for a bad interval, ENOMEM) with
 * @bbv unchanged.
 */
int dbtp_bbv_add(struct dbtp_bbv *bbv, const uint32_t *ids,
		 const uint64_t *counts, size_t n, dbtp_err *err);

/** dbtp_bbv_free() - release @bbv's arrays and zero it. */
void dbtp_bbv_free(struct dbtp_bbv *bbv);

/**
 * dbtp_bbv_format_line() - append the .bb text of one interval to @out.
 * @ids: block ids, strictly increasing, >= 1.
 * @counts: their counts.
 * @n: number of pairs, >= 1.
 * @out: buffer the line is appended to (with its '\n').
 *
 * The line looks like SimPoint's own sample input: "T" and then
 * ":ID:COUNT " for each pair (every pair followed by one blank), then '\n'.
 * Return: 0, or -1 if the ids are not increasing or 0, @n is 0 (nothing is
 * appended then) or memory ran out.
 */
int dbtp_bbv_format_line(const uint32_t *ids, const uint64_t *counts, size_t n,
			 struct dbtp_buf *out);

#endif

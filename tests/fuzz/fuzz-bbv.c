/* SPDX-License-Identifier: MIT */
/*
 * fuzz-bbv.c - libFuzzer harness for lib/analysis/bbvfile.c: parse arbitrary
 * bytes as a .bb file; what parses must satisfy the CSR invariants and
 * format back to text that parses to the same matrix; what does not must
 * leave one line of error and an empty matrix.  The streaming reader,
 * dbtp_bbv_scan(), must hand out exactly the same intervals, or fail with
 * the same message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dbtp/bbvfile.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		__builtin_trap();
}

/* The invariants dbtp/bbvfile.h promises. */
static void check_matrix(const struct dbtp_bbv *b)
{
	uint32_t max_id = 0;

	check(b->n > 0 && b->start[0] == 0);
	for (size_t i = 0; i < b->n; i++) {
		size_t s = b->start[i], e = b->start[i + 1];
		int nonzero = 0;

		check(e > s);
		for (size_t j = s; j < e; j++) {
			check(b->ids[j] >= 1);
			check(j == s || b->ids[j] > b->ids[j - 1]);
			nonzero |= b->counts[j] != 0;
			if (b->ids[j] > max_id)
				max_id = b->ids[j];
		}
		check(nonzero);
	}
	check(max_id == b->max_id);
}

static int collect(void *arg, const uint32_t *ids, const uint64_t *counts,
		   size_t n, dbtp_err *err)
{
	return dbtp_bbv_add(arg, ids, counts, n, err);
}

/* Scan @data through a file; its intervals in *@out (0) or -1 and @err. */
static int scan(const uint8_t *data, size_t size, struct dbtp_bbv *out,
		dbtp_err *err)
{
	char path[64];
	int fd = memfd_create("fuzz", 0), ret;

	memset(out, 0, sizeof(*out));
	check(fd >= 0);
	check(size == 0 || write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = dbtp_bbv_scan(path, collect, out, err);
	close(fd);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dbtp_bbv s;
	dbtp_err serr;
	int sret;
	struct dbtp_bbv b, r;
	struct dbtp_buf text = {0};
	dbtp_err err;
	char *copy;

	/* an exact-size heap copy so ASan sees any overread */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	sret = scan(data, size, &s, &serr);
	if (dbtp_bbv_read_mem(copy, size, "fuzz", &b, &err)) {
		const char *a = strchr(err.msg, ':'),
			   *z = strchr(serr.msg, ':');

		check(err.msg[0] != 0 && !strchr(err.msg, '\n'));
		check(b.n == 0 && !b.start && !b.ids && !b.counts);
		/* the same message, but for the name (no out-of-memory here) */
		check(sret == -1 && a && z && !strcmp(a, z));
		dbtp_bbv_free(&s);
		free(copy);
		return 0;
	}
	check(sret == 0 && s.n == b.n && s.max_id == b.max_id);
	check(!memcmp(s.start, b.start, (b.n + 1) * sizeof(size_t)));
	check(!memcmp(s.ids, b.ids, b.start[b.n] * sizeof(uint32_t)));
	check(!memcmp(s.counts, b.counts, b.start[b.n] * sizeof(uint64_t)));
	dbtp_bbv_free(&s);
	/* the matrix must not point into the input */
	memset(copy, 0xa5, size);
	check_matrix(&b);

	/* round trip through the writer */
	for (size_t i = 0; i < b.n; i++)
		check(dbtp_bbv_format_line(
			  b.ids + b.start[i], b.counts + b.start[i],
			  b.start[i + 1] - b.start[i], &text) == 0);
	check(dbtp_bbv_read_mem((const char *)text.p, text.len, "again", &r,
				&err) == 0);
	check(r.n == b.n && r.max_id == b.max_id);
	check(!memcmp(r.start, b.start, (b.n + 1) * sizeof(size_t)));
	check(!memcmp(r.ids, b.ids, b.start[b.n] * sizeof(uint32_t)));
	check(!memcmp(r.counts, b.counts, b.start[b.n] * sizeof(uint64_t)));
	dbtp_bbv_free(&r);

	dbtp_bbv_free(&b);
	dbtp_buf_free(&text);
	free(copy);
	return 0;
}

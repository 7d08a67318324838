/* SPDX-License-Identifier: MIT */
/*
 * t.h - the unit tests' tiny harness.  Each test binary returns 0 when every
 * check passed; a failing check prints "FAIL file:line: expr" and the binary
 * returns 1 at the end.
 */
#ifndef DBTP_T_H
#define DBTP_T_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int t_failed, t_checks;

#define CHECK(cond)                                                            \
	do {                                                                   \
		t_checks++;                                                    \
		if (!(cond)) {                                                 \
			t_failed++;                                            \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #cond);                              \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);               \
		t_checks++;                                                    \
		if (a_ != b_) {                                                \
			t_failed++;                                            \
			fprintf(stderr,                                        \
				"FAIL %s:%d: %s == %s (%" PRIu64               \
				" != %" PRIu64 ")\n",                          \
				__FILE__, __LINE__, #a, #b, a_, b_);           \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		t_checks++;                                                    \
		if (!a_ || !b_ || strcmp(a_, b_)) {                            \
			t_failed++;                                            \
			fprintf(stderr, "FAIL %s:%d: \"%s\" != \"%s\"\n",      \
				__FILE__, __LINE__, a_ ? a_ : "(null)",        \
				b_ ? b_ : "(null)");                           \
		}                                                              \
	} while (0)

#define T_DONE()                                                               \
	(fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, t_checks,     \
		 t_failed),                                                    \
	 t_failed ? 1 : 0)

#endif

/* SPDX-License-Identifier: MIT */
/*
 * dbtp/common.h - types shared by every libdbtp module.
 *
 * The library never prints and never exits: every fallible call returns 0 on
 * success or -1 on failure and fills a dbtp_err with a one-line message that
 * the caller (cmd/) prints.
 */
#ifndef DBTP_COMMON_H
#define DBTP_COMMON_H

#include <stddef.h>
#include <stdint.h>

/**
 * enum dbtp_arch - guest architectures the project understands.
 * The values are stored in trace files; never renumber them.
 */
enum dbtp_arch {
	DBTP_ARCH_UNKNOWN = 0,
	DBTP_ARCH_X86_64 = 1,
	DBTP_ARCH_AARCH64 = 2,
};

/**
 * struct dbtp_err - error report of a failed library call.
 * @code: errno-style code when one applies, else 0.
 * @msg: one line, no trailing newline, e.g. "run.trace: offset 4096: bad CRC".
 */
typedef struct dbtp_err {
	int code;
	char msg[512];
} dbtp_err;

/**
 * dbtp_err_set() - fill @err (may be NULL) and return -1.
 */
int dbtp_err_set(dbtp_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** dbtp_arch_name() - "x86_64", "aarch64" or "unknown". */
const char *dbtp_arch_name(enum dbtp_arch arch);

/** dbtp_arch_from_name() - inverse of dbtp_arch_name(); UNKNOWN if no match. */
enum dbtp_arch dbtp_arch_from_name(const char *name);

#endif

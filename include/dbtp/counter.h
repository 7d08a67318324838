/* SPDX-License-Identifier: MIT */
/*
 * dbtp/counter.h - count a hardware event (retired instructions or
 * cycles, user mode) over a process and every thread and process it
 * starts, where the machine has counters (perf_event_open); and read the
 * instruction count cachegrind writes, which stands in for the counter
 * where it has none.
 */
#ifndef DBTP_COUNTER_H
#define DBTP_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dbtp/common.h"

enum dbtp_counter_event {
	DBTP_COUNTER_INSTRUCTIONS,
	DBTP_COUNTER_CYCLES,
};

/*
 * A counter of @ev in user mode over @pid (0: this process) and what it
 * starts from now on, counting from @pid's next execve; its descriptor in
 * @fd.  0, or -1 with @err set (no such counter here: ENOENT, EOPNOTSUPP
 * or ENODEV; not allowed: EACCES or EPERM).
 */
int dbtp_counter_open(pid_t pid, enum dbtp_counter_event ev, int *fd,
		      dbtp_err *err);

/* The count of the counter @fd (closed by the caller).  0 or -1. */
int dbtp_counter_read(int fd, uint64_t *count, dbtp_err *err);

/*
 * The total of the first event (Ir, instructions executed) in the
 * cachegrind output @buf of @n bytes: its "summary:" line.  0, or -1 with
 * @err set if there is none or it is malformed.
 */
int dbtp_cachegrind_ir(const char *buf, size_t n, uint64_t *ir, dbtp_err *err);

#endif

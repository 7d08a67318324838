/* SPDX-License-Identifier: MIT */
/*
 * counter.c - hardware event counters over a process tree
 * (perf_event_open), and cachegrind's instruction count in their place
 * (dbtp/counter.h).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dbtp/counter.h"

int dbtp_counter_open(pid_t pid, enum dbtp_counter_event ev, int *fd,
		      dbtp_err *err)
{
	struct perf_event_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = ev == DBTP_COUNTER_CYCLES ? PERF_COUNT_HW_CPU_CYCLES
					     : PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	r = syscall(SYS_perf_event_open, &a, pid, -1, -1,
		    (unsigned long)PERF_FLAG_FD_CLOEXEC);
	if (r < 0)
		return dbtp_err_set(err, errno, "perf_event_open (%s): %s",
				    ev == DBTP_COUNTER_CYCLES ? "cycles"
							      : "instructions",
				    strerror(errno));
	*fd = (int)r;
	return 0;
}

int dbtp_counter_read(int fd, uint64_t *count, dbtp_err *err)
{
	ssize_t n = read(fd, count, sizeof(*count));

	if (n != (ssize_t)sizeof(*count))
		return dbtp_err_set(err, n < 0 ? errno : EIO,
				    "reading the counter: %s",
				    n < 0 ? strerror(errno) : "short read");
	return 0;
}

/* The line of @buf (@n bytes) that begins with @key, NULL if none; its
 * length in @len. */
static const char *line_of(const char *buf, size_t n, const char *key,
			   size_t *len)
{
	size_t k = strlen(key);

	for (size_t i = 0; i < n;) {
		const char *nl = memchr(buf + i, '\n', n - i);
		size_t l = nl ? (size_t)(nl - buf) - i : n - i;

		if (l >= k && !memcmp(buf + i, key, k)) {
			*len = l;
			return buf + i;
		}
		i += l + 1;
	}
	return NULL;
}

int dbtp_cachegrind_ir(const char *buf, size_t n, uint64_t *ir, dbtp_err *err)
{
	const char *l;
	size_t len, i;
	uint64_t v = 0;

	l = line_of(buf, n, "events:", &len);
	for (i = 7; l && i < len && l[i] == ' '; i++)
		;
	if (!l || len - i < 2 || memcmp(l + i, "Ir", 2) ||
	    (len - i > 2 && l[i + 2] != ' '))
		return dbtp_err_set(err, EINVAL,
				    "no instruction count (an 'events: Ir' "
				    "line)");
	l = line_of(buf, n, "summary:", &len);
	for (i = 8; l && i < len && l[i] == ' '; i++)
		;
	if (!l || i == len || l[i] < '0' || l[i] > '9')
		return dbtp_err_set(err, EINVAL, "no 'summary:' line");
	for (; i < len && l[i] >= '0' && l[i] <= '9'; i++) {
		if (v > (UINT64_MAX - (uint64_t)(l[i] - '0')) / 10)
			return dbtp_err_set(err, ERANGE,
					    "'summary:': the count overflows");
		v = v * 10 + (uint64_t)(l[i] - '0');
	}
	if (i < len && l[i] != ' ')
		return dbtp_err_set(err, EINVAL, "'summary:': not a count");
	*ir = v;
	return 0;
}

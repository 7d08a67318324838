/* SPDX-License-Identifier: MIT */
/*
 * fuzz-gentest.c - libFuzzer harness for gentest's model: whatever threads,
 * blocks, system calls (clone, futex waits and wakes) and exits a trace
 * holds, reading it as a profile and fitting the model must end cleanly or
 * in an error: never a crash, a leak or an endless loop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <unistd.h>

#include "dbtp/gentest.h"
#include "dbtp/trace.h"
#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_input_fd(data, size);
	dbtp_gt_model *m = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err;

	if (fd < 0)
		return 0;
	if (dbtp_trace_open_fd(&t, fd, "fuzz", &err) ||
	    dbtp_gt_model_new(&m, &err))
		goto out;
	if (!dbtp_gt_model_add(m, t, "fuzz", 2, &err))
		dbtp_gt_model_finish(m, &err);
out:
	dbtp_gt_model_free(m);
	if (t)
		dbtp_trace_close(t);
	close(fd);
	return 0;
}

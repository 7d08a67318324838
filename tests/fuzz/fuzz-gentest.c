/* SPDX-License-Identifier: MIT */
/*
 * fuzz-gentest.c - libFuzzer harness for gentest's model: whatever threads,
 * blocks, system calls (clone, futex waits and wakes) and exits a trace
 * holds, reading it as a profile and fitting the model must end cleanly or
 * in an error: never a crash, a leak or an endless loop.  The profile is
 * read twice, each into a model of its own, both merged into an empty one
 * (new blocks, then blocks it has).
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
	dbtp_gt_model *m = NULL, *part[2] = {NULL, NULL};
	dbtp_err err;
	int ok = fd >= 0 && !dbtp_gt_model_new(&m, &err);

	for (int i = 0; ok && i < 2; i++) {
		dbtp_trace *t = NULL;

		ok = lseek(fd, 0, SEEK_SET) == 0 &&
		     !dbtp_trace_open_fd(&t, fd, "fuzz", &err) &&
		     !dbtp_gt_model_new(&part[i], &err) &&
		     !dbtp_gt_model_add(part[i], t, "fuzz", i + 1, &err) &&
		     !dbtp_gt_model_merge(m, part[i], &err);
		if (t)
			dbtp_trace_close(t);
	}
	if (ok)
		dbtp_gt_model_finish(m, &err);
	dbtp_gt_model_free(m);
	dbtp_gt_model_free(part[0]);
	dbtp_gt_model_free(part[1]);
	if (fd >= 0)
		close(fd);
	return 0;
}

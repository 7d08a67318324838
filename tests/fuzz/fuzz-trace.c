/* SPDX-License-Identifier: MIT */
/*
 * fuzz-trace.c - libFuzzer harness for the trace reader: any bytes must end
 * in a clean end or an error, never a crash, a leak or an endless loop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <unistd.h>

#include "dbtp/trace.h"
#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_input_fd(data, size);
	dbtp_trace *t;
	dbtp_err err;
	struct dbtp_event ev;
	uint64_t n = 0;

	if (fd < 0)
		return 0;
	if (dbtp_trace_open_fd(&t, fd, "fuzz", &err))
		goto out;
	while (dbtp_trace_next(t, &ev, &err) > 0) {
		/* Touch what an analysis would touch. */
		if (ev.block)
			n += ev.block->ninsns + ev.block->bytes[0] * 0u;
	}
	for (uint32_t i = 0; i < dbtp_trace_nthreads(t); i++)
		if (dbtp_trace_thread(t, i))
			n += dbtp_trace_thread(t, i)->blocks;
	dbtp_trace_close(t);
out:
	close(fd);
	return (int)(n & 0);
}

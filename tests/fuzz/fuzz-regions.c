/* SPDX-License-Identifier: MIT */
/*
 * fuzz-regions.c - libFuzzer harness for the region simulator: whatever
 * block table and stream a trace holds (any code bytes, any order), the
 * two-pass read and every technique, with and without segments, must end
 * cleanly or in an error: never a crash, a leak or an endless loop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <unistd.h>

#include "dbtp/regions.h"
#include "dbtp/trace.h"
#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dbtp_regions_opts o = {0};
	int fd = fuzz_input_fd(data, size);
	dbtp_trace *t = NULL, *t2 = NULL;
	dbtp_regions *r = NULL;
	struct dbtp_event ev;
	dbtp_err err;
	int rc;

	if (fd < 0)
		return 0;
	if (dbtp_trace_open_fd(&t, fd, "fuzz", &err))
		goto out;
	dbtp_trace_skip_events(t);
	while ((rc = dbtp_trace_next(t, &ev, &err)) > 0)
		;
	o.techniques = (1u << DBTP_TECH_COUNT) - 1;
	o.segmenting = DBTP_SEG_FILE;
	dbtp_region_params_default(&o.params);
	/* small limits reach the size and buffer edges quickly */
	o.params.threshold[DBTP_TECH_NET] = 2;
	o.params.threshold[DBTP_TECH_LEI] = 2;
	o.params.lei_buffer = 8;
	o.params.max_insns = 16;
	if (rc < 0 || dbtp_regions_new(&r, t, &o, &err))
		goto out;
	lseek(fd, 0, SEEK_SET);
	if (dbtp_trace_open_fd(&t2, fd, "fuzz", &err))
		goto out;
	while (dbtp_trace_next(t2, &ev, &err) > 0) {
		if (ev.type == DBTP_EV_BLOCK &&
		    (ev.block->id >= dbtp_trace_nblocks(t) ||
		     dbtp_regions_block(r, ev.thread, ev.block->id, &err)))
			break;
		if (ev.type == DBTP_EV_THREAD_EXIT)
			dbtp_regions_thread_exit(r, ev.thread);
	}
	if (!dbtp_regions_finish(r, &err)) {
		struct dbtp_region_info ri;
		struct dbtp_region_node nd;

		for (uint32_t s = 0; s < dbtp_regions_nsims(r); s++)
			for (uint32_t i = 0; !dbtp_regions_region(r, s, i, &ri);
			     i++)
				for (uint32_t k = 0;
				     !dbtp_regions_node(r, s, i, k, &nd); k++)
					;
	}
out:
	dbtp_regions_free(r);
	dbtp_trace_close(t);
	dbtp_trace_close(t2);
	close(fd);
	return 0;
}

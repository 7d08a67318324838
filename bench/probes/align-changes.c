/*
 * align-changes TRACE: a mem-mode trace's loads and stores of 2, 4 and 8
 * bytes, operand by operand (a block and the access's place in it): how
 * many are off their alignment, how often an operand's alignment differs
 * from its previous execution by the same thread, and how many of the
 * unaligned ones come from operands that are always off and from ones
 * whose alignment varies.  bench/RESULTS.md, "Random alignments, tried".
 * Build against the library:
 *   cc -O2 -Iinclude bench/probes/align-changes.c build/libdbtp.a \
 *      -lzstd -lcapstone -lpthread -lm -o align-changes
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dbtp/trace.h"

#define MAXOP 64	  /* accesses of a block looked at */
#define MAXBLK (1u << 20) /* blocks looked at */
#define MAXTHR 1024	  /* threads told apart */

struct op {
	uint64_t n, off, changes;
	int last;
};

static uint32_t place[MAXTHR];

int main(int argc, char **argv)
{
	struct op *ops;
	dbtp_trace *t;
	dbtp_err err;
	struct dbtp_event ev;
	uint64_t n = 0, off = 0, changes = 0, always = 0, varying = 0,
		 vexec = 0;
	int r;

	if (argc != 2) {
		fputs("usage: align-changes TRACE\n", stderr);
		return 2;
	}
	ops = calloc((size_t)MAXBLK * MAXOP, sizeof(*ops));
	if (!ops || dbtp_trace_open(&t, argv[1], &err)) {
		fprintf(stderr, "align-changes: cannot open %s\n", argv[1]);
		return 1;
	}
	while ((r = dbtp_trace_next(t, &ev, &err)) == 1) {
		uint32_t th = ev.thread % MAXTHR, i;
		struct op *o;
		int u;

		if (ev.type == DBTP_EV_BLOCK)
			place[th] = 0;
		if (ev.type != DBTP_EV_MEM)
			continue;
		i = place[th]++;
		if (i >= MAXOP || ev.block->id >= MAXBLK ||
		    (ev.size != 2 && ev.size != 4 && ev.size != 8))
			continue;
		o = &ops[(size_t)ev.block->id * MAXOP + i];
		u = ev.addr % ev.size != 0;
		o->changes += o->n && u != o->last;
		o->last = u;
		o->n++;
		o->off += (uint64_t)u;
	}
	dbtp_trace_close(t);
	if (r < 0) {
		fprintf(stderr, "align-changes: %s\n", argv[1]);
		return 1;
	}
	for (size_t k = 0; k < (size_t)MAXBLK * MAXOP; k++) {
		const struct op *o = &ops[k];

		n += o->n;
		off += o->off;
		changes += o->changes;
		if (o->off && o->off == o->n) {
			always += o->off;
		} else if (o->off) {
			varying += o->off;
			vexec += o->n;
		}
	}
	printf("accesses %" PRIu64 ", unaligned %" PRIu64 ", changes %" PRIu64
	       "; unaligned from operands always off %" PRIu64
	       ", from operands that vary %" PRIu64 " (of their %" PRIu64
	       " executions)\n",
	       n, off, changes, always, varying, vexec);
	free(ops);
	return 0;
}

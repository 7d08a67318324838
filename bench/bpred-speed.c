/* SPDX-License-Identifier: MIT */
/*
 * bench/bpred-speed.c - CPU time a conditional branch costs the branch
 * predictor (lib/analysis/bpred.c) on a synthetic stream: 4,096 addresses,
 * outcomes a period-40 loop pattern XOR pseudo-random bits.
 *
 *   cc -O2 -D_GNU_SOURCE -Iinclude -Ilib bench/bpred-speed.c \
 *      lib/analysis/bpred.c -o bpred-speed
 *   ./bpred-speed KIND N      KIND 1 gshare, 2 TAGE; N branches
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "analysis/bpred.h"

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static uint64_t pcs[4096];
	unsigned x = 1;
	long n, miss = 0;
	int kind;
	bpred *b;
	double t0;

	if (argc != 3)
		return fprintf(stderr, "usage: bpred-speed KIND N\n"), 2;
	kind = atoi(argv[1]);
	n = atol(argv[2]);
	if (!(b = bpred_new(0, kind)))
		return 1;
	for (int i = 0; i < 4096; i++) {
		x = x * 1103515245 + 12345;
		pcs[i] = 0x400000 + (x >> 8) % 200000;
	}
	t0 = cpu_now();
	for (long i = 0; i < n; i++) {
		uint64_t pc = pcs[(i * 7) & 4095];

		x = x * 1103515245 + 12345;
		miss += bpred_cond(
		    b, pc, ((i % 40) != 39) ^ ((x >> 28) == 0) ^ (int)(pc & 1));
	}
	printf("kind %d: %.2f ns a branch, %ld mispredicted of %ld\n", kind,
	       (cpu_now() - t0) / (double)n * 1e9, miss, n);
	bpred_free(b);
	return 0;
}

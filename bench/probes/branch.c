/* branch N PERIOD: N executions of one conditional branch whose
 * directions are read in order from an array of 1 Mi entries that
 * repeats a random sequence of PERIOD directions (PERIOD 1048576: no
 * repeat).  The same loads and instructions at every PERIOD; only how
 * well a predictor that keeps the last outcomes can tell the next one
 * changes (bench/RESULTS.md, "Whose predictor a data-dependent branch
 * meets"), as bench/probes/dispatch.c for an indirect jump. */
#include <stdio.h>
#include <stdlib.h>

#define LEN (1u << 20)

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	unsigned period = argc > 2 ? (unsigned)atol(argv[2]) : LEN;
	unsigned char *seq = malloc(LEN);
	unsigned long acc = 1, x = 88172645463325252ul;

	if (!seq || period == 0 || period > LEN) {
		fprintf(stderr, "usage: branch N PERIOD (1..%u)\n", LEN);
		return 2;
	}
	for (unsigned k = 0; k < LEN; k++) {
		if (k < period) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			seq[k] = (unsigned char)(x >> 63);
		} else {
			seq[k] = seq[k - period];
		}
	}
	for (long i = 0; i < n; i++) {
		/* the empty asm keeps each arm a branch of its own, not a
		 * conditional move */
		if (seq[i & (LEN - 1)]) {
			__asm__ volatile("" : "+r"(acc));
			acc += 3;
		} else {
			acc ^= acc << 1;
		}
	}
	printf("%lu\n", acc);
	free(seq);
	return 0;
}

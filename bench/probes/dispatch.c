/* dispatch N PERIOD: an interpreter's central dispatch, N executions of
 * one indirect jump (computed goto) to one of 16 handlers, the handler
 * numbers read in order from an array of 1 Mi entries that repeats a
 * random sequence of PERIOD entries (PERIOD 1048576: no repeat).  The
 * same loads and handlers at every PERIOD; only how well a predictor
 * that keeps the last targets can tell the next one changes: what the
 * host charges each DBT for an interpreter's dispatch (bench/RESULTS.md,
 * "Whose predictor an interpreter's dispatch meets"). */
#include <stdio.h>
#include <stdlib.h>

#define LEN (1u << 20)

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	unsigned period = argc > 2 ? (unsigned)atol(argv[2]) : LEN;
	static const void *handler[16] = {
	    &&h0, &&h1, &&h2,  &&h3,  &&h4,  &&h5,  &&h6,  &&h7,
	    &&h8, &&h9, &&h10, &&h11, &&h12, &&h13, &&h14, &&h15};
	unsigned char *seq = malloc(LEN);
	unsigned long acc = 1, x = 88172645463325252ul;
	long i = 0;

	if (!seq || period == 0 || period > LEN) {
		fprintf(stderr, "usage: dispatch N PERIOD (1..%u)\n", LEN);
		return 2;
	}
	for (unsigned k = 0; k < LEN; k++) {
		if (k < period) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			seq[k] = (unsigned char)(x >> 60);
		} else {
			seq[k] = seq[k - period];
		}
	}
#define NEXT                                                                   \
	if (++i >= n)                                                          \
		goto done;                                                     \
	goto *handler[seq[i & (LEN - 1)]]
	goto *handler[seq[0]];
h0:
	acc += 1;
	NEXT;
h1:
	acc ^= acc << 1;
	NEXT;
h2:
	acc += 3;
	NEXT;
h3:
	acc ^= acc >> 3;
	NEXT;
h4:
	acc += 5;
	NEXT;
h5:
	acc ^= acc << 5;
	NEXT;
h6:
	acc += 7;
	NEXT;
h7:
	acc ^= acc >> 7;
	NEXT;
h8:
	acc += 9;
	NEXT;
h9:
	acc ^= acc << 9;
	NEXT;
h10:
	acc += 11;
	NEXT;
h11:
	acc ^= acc >> 11;
	NEXT;
h12:
	acc += 13;
	NEXT;
h13:
	acc ^= acc << 13;
	NEXT;
h14:
	acc += 15;
	NEXT;
h15:
	acc ^= acc >> 15;
	NEXT;
done:
	printf("%lu\n", acc);
	free(seq);
	return 0;
}

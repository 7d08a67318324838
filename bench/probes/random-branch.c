/*
 * random-branch MODE REPS: REPS passes over 65,535 random bytes, each
 * testing one bit: MODE n, no branch; j, a `jne` to the next instruction
 * (the generated programs' random branch: it goes either way at random
 * and lands in the same place); d, a `jne` over an add (a branch of the
 * original's kind).  Under a DBT, j - n and d - n are what a host
 * misprediction costs there.  bench/RESULTS.md, "Random alignments,
 * tried".
 *   gcc -O2 -masm=intel bench/probes/random-branch.c -o random-branch
 *   qemu-x86_64 ./random-branch j 600
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned char *r = malloc(65536);
	unsigned long x = 88172645463325252ull, acc = 0;
	long reps;

	if (argc != 3 || !r)
		return 2;
	reps = atol(argv[2]);
	for (int i = 0; i < 65536; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		r[i] = (unsigned char)(x >> 56);
	}
	for (long k = 0; k < reps; k++) {
		long n = 65535;

		if (argv[1][0] == 'j')
			__asm__ volatile("1:\n\ttest byte ptr [%1 + %2], 1\n"
					 "\tjne 2f\n2:\n\tadd %0, 1\n"
					 "\tsub %2, 1\n\tjnz 1b\n"
					 : "+r"(acc), "+r"(r), "+r"(n)
					 :
					 : "cc", "memory");
		else if (argv[1][0] == 'd')
			__asm__ volatile("1:\n\ttest byte ptr [%1 + %2], 1\n"
					 "\tjne 2f\n\tadd %0, 1\n2:\n"
					 "\tsub %2, 1\n\tjnz 1b\n"
					 : "+r"(acc), "+r"(r), "+r"(n)
					 :
					 : "cc", "memory");
		else
			__asm__ volatile("1:\n\ttest byte ptr [%1 + %2], 1\n"
					 "\tadd %0, 1\n\tsub %2, 1\n\tjnz 1b\n"
					 : "+r"(acc), "+r"(r), "+r"(n)
					 :
					 : "cc", "memory");
	}
	printf("%lu\n", acc);
	free(r);
	return 0;
}

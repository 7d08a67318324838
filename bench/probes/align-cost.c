/*
 * align-cost MODE N: N rounds of two 2-byte loads at pseudo-random places
 * of a 16 KiB buffer, one of them off its alignment a round on average:
 * MODE r, each at a random byte (its alignment changes at random), f,
 * the first always even and the second always odd (the same count,
 * predictable), a, both even (none off).  Under memcheck, r - f is what
 * changing alignments cost its checks, f - a what the unaligned accesses
 * do.  bench/RESULTS.md, "Random alignments, tried".
 *   gcc -O2 bench/probes/align-cost.c -o align-cost
 *   valgrind -q --tool=memcheck ./align-cost r 20000000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	unsigned char *b = malloc(16384 + 64);
	unsigned s = 0, x = 12345;
	unsigned long m, o2;
	long n;

	if (argc != 3 || !b || !strchr("rfa", argv[1][0]))
		return 2;
	n = atol(argv[2]);
	m = argv[1][0] == 'r' ? 16383 : 16382;
	o2 = argv[1][0] == 'f';
	memset(b, 1, 16384 + 64);
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		s += *(volatile unsigned short *)(b + ((x >> 8) & m));
		s += *(volatile unsigned short *)(b + ((x >> 17) & m) + o2);
	}
	printf("%u\n", s);
	free(b);
	return 0;
}

/* spread N STRIDE ROUNDS: 4-byte loads of N lines STRIDE bytes apart,
 * ROUNDS times: with STRIDE 64 they share one 64 KiB chunk, with 65600
 * each has its own, the memory and cache behaviour otherwise alike
 * (bench/RESULTS.md, "What memcheck pays more for in sqlite"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n, stride, rounds;
	unsigned s = 0;
	char *buf;

	if (argc < 4)
		return 2;
	n = atol(argv[1]);
	stride = atol(argv[2]);
	rounds = atol(argv[3]);
	buf = malloc((size_t)(n * stride + 64));
	if (!buf)
		return 1;
	memset(buf, 1, (size_t)(n * stride + 64));
	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < n; i++)
			s += *(volatile unsigned *)(buf + i * stride);
	printf("%u\n", s);
	return 0;
}

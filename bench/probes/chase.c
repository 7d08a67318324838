/* chase BYTES LOADS: a pointer chase of LOADS loads over the 64-byte lines
 * of BYTES bytes, linked in one cycle of random order: each load waits
 * for the one before, misses where BYTES exceeds a cache, and crosses
 * pages at random (bench/RESULTS.md, "The stall the far walks did not
 * make"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	size_t bytes, lines, off = 0, sum = 0;
	uint32_t *perm;
	uint64_t x = 88172645463325252ull;
	long loads;
	char *a;

	if (argc < 3)
		return 2;
	bytes = strtoul(argv[1], NULL, 0);
	loads = atol(argv[2]);
	lines = bytes / 64;
	a = aligned_alloc(64, lines * 64);
	perm = malloc(lines * sizeof(*perm));
	if (!lines || !a || !perm)
		return 1;
	for (size_t i = 0; i < lines; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) { /* xorshift, Fisher-Yates */
		size_t j;
		uint32_t t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		*(size_t *)(a + (size_t)perm[i] * 64) =
		    (size_t)perm[(i + 1) % lines] * 64;
	free(perm);
	for (long i = 0; i < loads; i++) {
		off = *(size_t *)(a + off);
		sum += off;
	}
	printf("%zu\n", sum);
	return 0;
}

/* malloc-pairs N SIZE: N malloc/free pairs over 64 live blocks of SIZE to
 * SIZE+56 bytes, each written once: what a DBT or Valgrind tool charges
 * an allocation (bench/RESULTS.md, "What memcheck pays more for in
 * sqlite").  Run with N = 0 for the start-up alone. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	size_t sz = argc > 2 ? (size_t)atol(argv[2]) : 64;
	void *keep[64] = {0};

	for (long i = 0; i < n; i++) {
		free(keep[i & 63]);
		keep[i & 63] = malloc(sz + (size_t)(i & 7) * 8);
		*(char *)keep[i & 63] = 1;
	}
	printf("%p\n", keep[0]);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * memcheck-libc.c - what memcheck's own malloc, free and memcpy (it
 * replaces the C library's) cost against a loop that calls none: the
 * part of an original's time under memcheck that a generated program,
 * which runs the profiled C library's instructions instead, does not
 * pay (bench/RESULTS.md, "The driver's set-up").
 *
 *   gcc -O2 -o memcheck-libc bench/memcheck-libc.c
 *   /usr/bin/time valgrind -q ./memcheck-libc MODE N
 *
 * MODE 0: the loop alone; 1: a memcpy of 4 to 63 bytes a pass; 3: a
 * malloc and free pair a pass.  N passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char src[4096], dst[4096];

int main(int argc, char **argv)
{
	void *(*volatile copy)(void *, const void *, size_t) = memcpy;
	int mode = argc > 1 ? atoi(argv[1]) : 0;
	long n = argc > 2 ? atol(argv[2]) : 638000, acc = 0;
	unsigned s = 1;

	for (long i = 0; i < n; i++) {
		size_t k, o;

		s = s * 1103515245u + 12345u;
		k = 4 + (s >> 16) % 60;
		o = (s >> 8) % 2048;
		if (mode == 1) {
			copy(dst + o, src + o, k);
		} else if (mode == 3) {
			void *p = malloc(k * 8);

			acc += (long)(p != NULL);
			free(p);
		} else {
			acc += (long)k;
		}
	}
	printf("%ld %d\n", acc, dst[5]);
	return 0;
}

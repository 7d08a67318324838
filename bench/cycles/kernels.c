/* SPDX-License-Identifier: MIT */
/*
 * kernels.c - a CPU-bound C program for the differential-throughput
 * experiment of bench/cycles.sh, built at -O0, -O1, -O2 and -O3: matrix
 * multiply, insertion sort, a sieve and a string hash, REPEAT times (the
 * first argument, default 1).  Prints one checksum.
 */
#include <stdio.h>
#include <stdlib.h>

#define N 64
#define M 2000
#define S 100000

static double a[N][N], b[N][N], c[N][N];
static int v[M];
static char sieve[S];

static unsigned round_once(unsigned seed)
{
	unsigned h = 2166136261u;

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (double)((seed + i * 7 + j) % 13);
			b[i][j] = (double)((seed + i + j * 3) % 11);
		}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;

			for (int k = 0; k < N; k++)
				s += a[i][k] * b[k][j];
			c[i][j] = s;
		}
	for (int i = 0; i < M; i++)
		v[i] = (int)((seed * 1103515245u + (unsigned)i * 12345u) >> 8);
	for (int i = 1; i < M; i++) {
		int x = v[i], j = i - 1;

		while (j >= 0 && v[j] > x) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
	for (int i = 0; i < S; i++)
		sieve[i] = 1;
	for (int i = 2; i * i < S; i++)
		if (sieve[i])
			for (int j = i * i; j < S; j += i)
				sieve[j] = 0;
	for (int i = 0; i < S; i++)
		h = (h ^ (unsigned)sieve[i]) * 16777619u;
	h ^= (unsigned)c[N / 2][N / 3] + (unsigned)v[M / 2];
	return h;
}

int main(int argc, char **argv)
{
	int rep = argc > 1 ? atoi(argv[1]) : 1;
	unsigned h = 0;

	for (int r = 0; r < rep; r++)
		h ^= round_once(h + (unsigned)r);
	printf("%u\n", h);
	return 0;
}

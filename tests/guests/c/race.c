/* race: four threads run one loop block at the same time.
 *
 * main creates workers 0..3 (threads 1..4); each waits on a barrier that
 * main passes last, then runs marker(RACE_N) and returns; main joins them.
 * The TB at race_marker ([dec; jnz] on x86-64, [subs; b.ne] on AArch64) runs
 * exactly 4 * (RACE_N - 1) times, most of them in two or more threads at
 * once: counters that are not each thread's own lose some (count mode's
 * shared inline counters did, on two CPUs).  See tests/guests/EXPECTED.md. */
#include <pthread.h>
#include <stdint.h>

#define NWORKERS 4
#define RACE_N 1000000UL

static pthread_barrier_t go;

#define MARKER_NAME "race_marker"
#include "marker.h"

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	marker(RACE_N);
	return NULL;
}

int main(void)
{
	pthread_t t[NWORKERS];

	if (pthread_barrier_init(&go, NULL, NWORKERS + 1) != 0)
		return 1;
	for (int k = 0; k < NWORKERS; k++)
		if (pthread_create(&t[k], NULL, worker, NULL) != 0)
			return 1;
	pthread_barrier_wait(&go);
	for (int k = 0; k < NWORKERS; k++)
		if (pthread_join(t[k], NULL) != 0)
			return 1;
	return 0;
}

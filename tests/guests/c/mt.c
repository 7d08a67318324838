/* mt: pthreads guest with exactly known per-thread marker work.
 *
 * main (thread 0) runs marker(50000), then creates workers 0, 1, 2 in that
 * order (threads 1, 2, 3) and joins them.  Worker k runs marker((k + 1) *
 * 100000).  Prints nothing, exits 0.
 *
 * Every worker then waits on a barrier that main passes only after it has
 * created all three, so all four threads are alive at once: QEMU gives a new
 * vCPU the highest live cpu_index + 1, and without the barrier a worker that
 * finished before the next pthread_create would hand its index on.  With it
 * the vCPU indices are 0, 1, 2, 3 in creation order on every run.
 *
 * marker() (marker.h) is one inline-asm counted loop whose head, the global
 * label mt_marker, starts a TB executed exactly n - 1 times per call.
 * See tests/guests/EXPECTED.md. */
#include <pthread.h>
#include <stdint.h>

#define NWORKERS 3

static pthread_barrier_t all_created;

#define MARKER_NAME "mt_marker"
#include "marker.h"

static void *worker(void *arg)
{
	unsigned long k = (unsigned long)(uintptr_t)arg;
	marker((k + 1) * 100000UL);
	pthread_barrier_wait(&all_created);
	return NULL;
}

int main(void)
{
	pthread_t t[NWORKERS];
	if (pthread_barrier_init(&all_created, NULL, NWORKERS + 1) != 0)
		return 1;
	marker(50000UL);
	for (unsigned long k = 0; k < NWORKERS; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)(uintptr_t)k) !=
		    0)
			return 1;
	pthread_barrier_wait(&all_created);
	for (unsigned long k = 0; k < NWORKERS; k++)
		if (pthread_join(t[k], NULL) != 0)
			return 1;
	return 0;
}

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
 * marker() is one inline-asm counted loop.  The global label mt_marker is the
 * loop head, placed after a first instruction so it is never the function
 * entry: the TB that starts at mt_marker is [dec; jnz] (x86-64) or
 * [subs; b.ne] (AArch64) and is executed exactly n - 1 times per call (the
 * first iteration belongs to the TB that enters marker()).
 * See tests/guests/EXPECTED.md. */
#include <pthread.h>
#include <stdint.h>

#define NWORKERS 3

static pthread_barrier_t all_created;

__attribute__((noinline, noclone)) static void marker(unsigned long n)
{
	unsigned long c;
#if defined(__x86_64__)
	__asm__ volatile("mov %1, %0\n\t"
			 ".globl mt_marker\n"
			 "mt_marker:\n"
			 "1:\tdec %0\n\t"
			 "jnz 1b"
			 : "=&r"(c)
			 : "r"(n)
			 : "cc", "memory");
#elif defined(__aarch64__)
	__asm__ volatile("mov %0, %1\n\t"
			 ".globl mt_marker\n"
			 "mt_marker:\n"
			 "1:\tsubs %0, %0, #1\n\t"
			 "b.ne 1b"
			 : "=&r"(c)
			 : "r"(n)
			 : "cc", "memory");
#else
#error "mt.c: unsupported architecture"
#endif
}

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

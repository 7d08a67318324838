/* lateend: a worker that ends while main runs on without waiting for it.
 *
 * main creates one worker, which counts down a loop of 20,000 and returns;
 * main meanwhile polls pthread_tryjoin_np(), which makes no system call
 * while the worker lives (it reads the worker's tid, which the kernel, or
 * QEMU, clears only after the worker's exit system call), then makes one
 * getpid system call and exits 0.  A trace must show the worker's end
 * before that getpid: the recorder cuts every other thread's events at a
 * thread's exit system call, and main cannot pass its poll before then
 * (tests/e2e/modes.sh).  Prints nothing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *worker(void *arg)
{
	volatile unsigned long n = 20000;

	(void)arg;
	while (n)
		n--;
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	while (pthread_tryjoin_np(t, NULL) != 0)
		;
	return syscall(SYS_getpid) > 0 ? 0 : 1;
}

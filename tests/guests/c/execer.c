/* execer: works, calls execve on a program that does not exist (which
 * fails), works on, then executes argv[2] with the arguments after it.
 * With argv[1] "thread" a thread works and ends first; with "blocked" it
 * works and then waits, in read(), for the execve to end it. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static void *work(void *n)
{
	volatile unsigned long s = 0;

	for (unsigned long i = 0; i < (unsigned long)n; i++)
		s += i;
	return NULL;
}

static int ready[2], never[2];

static void *blocked(void *arg)
{
	char c = 0;

	work(arg);
	if (write(ready[1], &c, 1) != 1 || read(never[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c;

	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "thread") &&
	    (pthread_create(&t, NULL, work, (void *)1000) ||
	     pthread_join(t, NULL)))
		return 3;
	if (!strcmp(argv[1], "blocked") &&
	    (pipe(ready) || pipe(never) ||
	     pthread_create(&t, NULL, blocked, (void *)1000) ||
	     read(ready[0], &c, 1) != 1))
		return 3;
	work((void *)3000);
	execv("/no/such/program", argv);
	work((void *)2000);
	execv(argv[2], argv + 2);
	return 1;
}

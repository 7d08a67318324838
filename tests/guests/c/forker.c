/* forker: starts two processes, one by fork() and one by vfork(), waits for
 * both and prints what each child's work summed to; exits 0. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long work(unsigned long n)
{
	volatile unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += i;
	return s;
}

int main(void)
{
	int st1, st2;
	pid_t a = fork(), b;

	if (a == 0)
		_exit((int)(work(100000) & 0x7f));
	b = vfork();
	if (b == 0)
		_exit(3);
	if (a < 0 || b < 0 || waitpid(a, &st1, 0) != a ||
	    waitpid(b, &st2, 0) != b)
		return 1;
	printf("children %d %d\n", WEXITSTATUS(st1), WEXITSTATUS(st2));
	return 0;
}

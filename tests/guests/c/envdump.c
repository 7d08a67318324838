/* envdump: prints argv[0], whether a vDSO is mapped (AT_SYSINFO_EHDR), and
 * its environment, one variable a line; exits 0.  Used to check that
 * matched native and QEMU runs see the same process state. */
#include <stdio.h>
#include <sys/auxv.h>

extern char **environ;

int main(int argc, char **argv)
{
	(void)argc;
	printf("argv0=%s\n", argv[0]);
	printf("vdso=%s\n", getauxval(AT_SYSINFO_EHDR) ? "yes" : "no");
	for (char **e = environ; *e; e++)
		printf("%s\n", *e);
	return 0;
}

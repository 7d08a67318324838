/* cpuview: prints what the program learns about its CPU and initial stack
 * before its own code runs: CPUID leaves 0, 1, 7 and 0x80000001, XCR0,
 * the auxiliary vector's types in order with AT_HWCAP, and where argv[],
 * argv[0], the AT_PLATFORM string and the AT_RANDOM bytes lie (low 12 bits),
 * and whether the program, loader and libc lie upward in that order.
 * Used to check that a native run shown QEMU's CPU view sees what the
 * program sees under QEMU. */
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>

extern char **environ;

#ifdef __x86_64__
static void cpuid(uint32_t leaf, uint32_t sub)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid"
			 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(leaf), "c"(sub));
	printf("cpuid %x.%x %08x %08x %08x %08x\n", leaf, sub, a, b, c, d);
}
#endif

int main(int argc, char **argv)
{
	char **e = environ;
	uint64_t *av;

	(void)argc;
#ifdef __x86_64__
	uint32_t lo, hi;

	cpuid(0, 0);
	cpuid(1, 0);
	cpuid(7, 0);
	cpuid(0x80000001, 0);
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	printf("xcr0 %x\n", lo);
#endif
	while (*e)
		e++;
	printf("auxv");
	for (av = (uint64_t *)(e + 1); av[0]; av += 2) {
		printf(" %lu", (unsigned long)av[0]);
		if (av[0] == 16)
			printf("=%lx", (unsigned long)av[1]);
		if (av[0] == 15 || av[0] == 25)
			printf("@%03lx", (unsigned long)(av[1] & 0xfff));
	}
	printf("\nargv @%03lx argv0 @%03lx\n", (unsigned long)argv & 0xfff,
	       (unsigned long)argv[0] & 0xfff);
	/* QEMU maps the program, then the loader, then libc upward. */
	printf("program < loader < libc: %d\n",
	       (uintptr_t)&main < getauxval(AT_BASE) &&
		   getauxval(AT_BASE) < (uintptr_t)stdout);
	return 0;
}

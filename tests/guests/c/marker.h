/* marker.h: marker(n), one inline-asm counted loop.  The global label
 * MARKER_NAME (a string, defined before this is included) is the loop
 * head, placed after a first instruction so it is never the function
 * entry: the TB that starts there is [dec; jnz] (x86-64) or [subs; b.ne]
 * (AArch64) and runs exactly n - 1 times a call (the first iteration
 * belongs to the TB that enters marker()). */
__attribute__((noinline, noclone)) static void marker(unsigned long n)
{
	unsigned long c;
#if defined(__x86_64__)
	__asm__ volatile("mov %1, %0\n\t"
			 ".globl " MARKER_NAME "\n" MARKER_NAME ":\n"
			 "1:\tdec %0\n\t"
			 "jnz 1b"
			 : "=&r"(c)
			 : "r"(n)
			 : "cc", "memory");
#elif defined(__aarch64__)
	__asm__ volatile("mov %0, %1\n\t"
			 ".globl " MARKER_NAME "\n" MARKER_NAME ":\n"
			 "1:\tsubs %0, %0, #1\n\t"
			 "b.ne 1b"
			 : "=&r"(c)
			 : "r"(n)
			 : "cc", "memory");
#else
#error "marker.h: unsupported architecture"
#endif
}

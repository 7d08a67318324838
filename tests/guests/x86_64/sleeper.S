/* sleeper: N = 1000 loop iterations, then nanosleep(30 s), then exit(0).
 * Killed during the sleep, its trace must still hold every block it ran:
 * [_start..jnz] once, [1b..jnz] 999 times, [mov..syscall] once = 1001
 * block executions, 3 + 2*999 + 5 = 2006 instructions, and the nanosleep
 * syscall (35). */
	.set N, 1000
	.data
ts:	.quad 30, 0
	.text
	.globl _start
_start:
	mov $N, %ecx
1:	dec %ecx
	jnz 1b
	mov $35, %eax
	lea ts(%rip), %rdi
	xor %esi, %esi
	nop
	syscall
	mov $60, %eax
	xor %edi, %edi
	syscall

/* rep: one `rep movsb` of N = 100 bytes and one `rep stosq` of 8 quads,
 * then exit(0).  Hardware and Valgrind's exp-bbv count each rep instruction once:
 * 4 + 1 + 3 + 1 + 3 = 12 instructions.  QEMU executes a rep instruction
 * once per iteration plus a last pass that finds the count exhausted:
 * 4 + 101 + 3 + 9 + 3 = 120 instructions (Valgrind lackey agrees). */
	.set N, 100
	.bss
src:	.skip N
dst:	.skip N
	.align 8
q:	.skip 64
	.text
	.globl _start
_start:
	lea src(%rip), %rsi
	lea dst(%rip), %rdi
	mov $N, %ecx
	cld
	rep movsb
	lea q(%rip), %rdi
	mov $8, %ecx
	xor %eax, %eax
	rep stosq
	mov $60, %eax
	xor %edi, %edi
	syscall

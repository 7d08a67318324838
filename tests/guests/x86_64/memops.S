/* memops: N iterations, each one 8-byte load and one 8-byte store 16 bytes
 * apart, walking a buffer upwards.  Loads N, stores N, all 8 bytes; the
 * k-th load reads buf + 16k, the k-th store writes buf + 16k + 8. */
	.set N, 1000
	.bss
	.align 4096
buf:	.skip 16 * N
	.text
	.globl _start
_start:
	lea buf(%rip), %rsi
	mov $N, %ecx
1:	mov (%rsi), %rax
	mov %rax, 8(%rsi)
	add $16, %rsi
	dec %ecx
	jnz 1b
	mov $60, %eax
	xor %edi, %edi
	syscall

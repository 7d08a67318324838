/* memops: N iterations, each one 8-byte load and one 8-byte store 16 bytes
 * apart, walking a buffer upwards (see the x86-64 version). */
	.set N, 1000
	.bss
	.align 12
buf:	.skip 16 * N
	.text
	.globl _start
_start:
	adrp x1, buf
	add x1, x1, :lo12:buf
	mov x2, #N
1:	ldr x0, [x1]
	str x0, [x1, #8]
	add x1, x1, #16
	subs x2, x2, #1
	b.ne 1b
	mov x0, #0
	mov x8, #93
	svc #0

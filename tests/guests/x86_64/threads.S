/* threads: three threads without libc.
 *   main: loop A (N0 = 10000), clone thread 1, loop B (N1 = 20000),
 *         clone thread 2, loop C (N2 = 30000), exit(0)   (exit, not exit_group)
 *   thread 1: loop (M1 = 40000), exit(0)
 *   thread 2: loop (M2 = 50000), exit(0)
 * The process ends when the last thread exits; status 0.
 * Each clone returns twice into the TB [test %rax; jz childK], which both
 * parent and child execute once.  See tests/guests/EXPECTED.md. */
#define CLONE_FLAGS 0x50f00     /* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */

        .text
        .p2align 12
        .globl _start
_start:
        mov     $10000, %ecx            /* loop A */
1:      dec     %ecx
        jnz     1b
        mov     $56, %eax               /* clone(flags, stack1_top, 0, 0, 0) */
        mov     $CLONE_FLAGS, %edi
        lea     stack1_top(%rip), %rsi
        xor     %edx, %edx
        xor     %r10d, %r10d
        xor     %r8d, %r8d
        syscall
        test    %rax, %rax
        jz      child1
        mov     $20000, %ecx            /* loop B */
2:      dec     %ecx
        jnz     2b
        mov     $56, %eax               /* clone(flags, stack2_top, 0, 0, 0) */
        mov     $CLONE_FLAGS, %edi
        lea     stack2_top(%rip), %rsi
        xor     %edx, %edx
        xor     %r10d, %r10d
        xor     %r8d, %r8d
        syscall
        test    %rax, %rax
        jz      child2
        mov     $30000, %ecx            /* loop C */
3:      dec     %ecx
        jnz     3b
        mov     $60, %eax               /* exit(0): this thread only */
        xor     %edi, %edi
        syscall

child1:
        mov     $40000, %ecx
4:      dec     %ecx
        jnz     4b
        mov     $60, %eax
        xor     %edi, %edi
        syscall

child2:
        mov     $50000, %ecx
5:      dec     %ecx
        jnz     5b
        mov     $60, %eax
        xor     %edi, %edi
        syscall

        .bss
        .p2align 12
stack1: .skip   16384
stack1_top:
stack2: .skip   16384
stack2_top:

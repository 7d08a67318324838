/* threads_reuse: like threads, but main waits for thread 1 to exit before it
 * creates thread 2, so QEMU hands thread 2 the vCPU index thread 1 had
 * (cpu_index = highest live index + 1).  Deterministic counts:
 *   main: loop A (N0 = 10000), clone thread 1 (with PARENT_SETTID and
 *         CHILD_CLEARTID on tid1), futex(&tid1, FUTEX_WAIT, tid) (returns 0 or
 *         -EAGAIN; straight-line either way), loop B (N1 = 20000), clone
 *         thread 2, loop C (N2 = 30000), exit(0)
 *   thread 1: loop (M1 = 40000), exit(0)
 *   thread 2: loop (M2 = 50000), exit(0)
 * See tests/guests/EXPECTED.md. */
#define CLONE_FLAGS  0x50f00    /* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */
#define CLONE_FLAGS1 0x350f00   /* ... |PARENT_SETTID|CHILD_CLEARTID */

        .text
        .p2align 12
        .globl _start
_start:
        mov     $10000, %ecx            /* loop A */
1:      dec     %ecx
        jnz     1b
        mov     $56, %eax               /* clone(flags1, stack1_top, &tid1, &tid1, 0) */
        mov     $CLONE_FLAGS1, %edi
        lea     stack1_top(%rip), %rsi
        lea     tid1(%rip), %rdx
        lea     tid1(%rip), %r10
        xor     %r8d, %r8d
        syscall
        test    %rax, %rax
        jz      child1
        mov     %eax, %edx              /* futex(&tid1, FUTEX_WAIT, tid, NULL) */
        mov     $202, %eax
        lea     tid1(%rip), %rdi
        xor     %esi, %esi
        xor     %r10d, %r10d
        syscall
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
tid1:   .skip   16              /* tid of thread 1; cleared at its exit */
stack1: .skip   16384
stack1_top:
stack2: .skip   16384
stack2_top:

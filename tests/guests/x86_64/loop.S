/* loop: one counted loop of N = 10000 iterations, then exit(0).
 * TBs: [_start..jnz] 3 insns x1, [1:..jnz] 2 insns x(N-1), [mov..syscall] 3 insns x1.
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     $10000, %rcx
1:      dec     %rcx
        jnz     1b
        mov     $60, %eax               /* exit */
        xor     %edi, %edi
        syscall

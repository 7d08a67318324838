/* execs: a loop of N = 1000 iterations, an execve of a program that does
 * not exist (it fails), the loop again, then execve("/bin/true"), which
 * replaces the process (exit(1) if it fails too).
 * TBs: [_start..jnz] 3 insns x1, [1:..jnz] 2 x999, [lea..syscall] 5 x1,
 * [mov..jnz] 3 x1, [2:..jnz] 2 x999, [lea..syscall] 5 x1: 4,012
 * instructions in 2,002 block executions up to the second execve. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     $1000, %rcx
1:      dec     %rcx
        jnz     1b
        lea     nosuch(%rip), %rdi
        lea     argv(%rip), %rsi
        xor     %edx, %edx
        mov     $59, %eax               /* execve */
        syscall
        mov     $1000, %rcx
2:      dec     %rcx
        jnz     2b
        lea     prog(%rip), %rdi
        lea     argv(%rip), %rsi
        xor     %edx, %edx
        mov     $59, %eax
        syscall
        mov     $60, %eax               /* exit */
        mov     $1, %edi
        syscall

        .data
nosuch: .asciz  "/no/such/program"
prog:   .asciz  "/bin/true"
        .p2align 3
argv:   .quad   prog, 0

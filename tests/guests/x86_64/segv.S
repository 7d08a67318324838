/* segv: loop of N = 1000 iterations, then a load from address 0 -> SIGSEGV.
 * The faulting TB is [xor; mov (%rax),%rdi; mov; syscall] (4 insns); only
 * the xor completes.  The loaded value feeds exit()'s status so that no
 * optimiser (valgrind's VEX drops dead loads) can remove the load.
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     $1000, %ecx
1:      dec     %ecx
        jnz     1b
        xor     %eax, %eax
        mov     (%rax), %rdi            /* faults */
        mov     $60, %eax               /* exit(*(long *)0): never reached */
        syscall

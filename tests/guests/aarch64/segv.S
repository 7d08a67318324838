/* segv: loop of N = 1000 iterations, then a load from address 0 -> SIGSEGV.
 * The faulting TB is [mov x0; ldr x0; mov x8; svc] (4 insns); only the first
 * mov completes.  The loaded value feeds exit()'s status (never reached).
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     x9, #1000
1:      subs    x9, x9, #1
        b.ne    1b
        mov     x0, #0
        ldr     x0, [x0]                /* faults */
        mov     x8, #93                 /* exit(*(long *)0): never reached */
        svc     #0

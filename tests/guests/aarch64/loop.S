/* loop: one counted loop of N = 10000 iterations, then exit(0) (x0 is 0
 * when the loop ends).
 * TBs: [_start..b.ne] 3 insns x1, [1:..b.ne] 2 insns x(N-1), [mov x8; svc] 2 x1.
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     x0, #10000
1:      subs    x0, x0, #1
        b.ne    1b
        mov     x8, #93                 /* exit */
        svc     #0

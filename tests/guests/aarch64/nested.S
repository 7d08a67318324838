/* nested: outer loop O = 20, inner loop I = 50; each inner iteration calls
 * func (bl/ret) and then takes one side of an if/else chosen by the parity
 * of the inner counter (alternates every iteration).  exit(7).
 * See tests/guests/EXPECTED.md for the TB list and counts. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     x19, #20                /* outer counter */
        mov     x21, #0                 /* accumulator */
outer:
        mov     x20, #50                /* inner counter */
inner:
        bl      func
        tst     x20, #1
        b.eq    even
        add     x21, x21, #3            /* odd: then-branch */
        b       join
even:
        sub     x21, x21, #1            /* even: else-branch */
join:
        subs    x20, x20, #1
        b.ne    inner
        subs    x19, x19, #1
        b.ne    outer
        mov     x0, #7                  /* exit(7) */
        mov     x8, #93
        svc     #0

func:
        add     x22, x22, x20
        ret

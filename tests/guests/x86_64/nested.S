/* nested: outer loop O = 20, inner loop I = 50; each inner iteration calls
 * func and then takes one side of an if/else chosen by the parity of the
 * inner counter (alternates every iteration).  exit(7).
 * See tests/guests/EXPECTED.md for the TB list and counts. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     $20, %r12d              /* outer counter */
        xor     %r14d, %r14d            /* accumulator */
outer:
        mov     $50, %r13d              /* inner counter */
inner:
        call    func
        test    $1, %r13d
        jz      even
        add     $3, %r14                /* odd: then-branch */
        jmp     join
even:
        sub     $1, %r14                /* even: else-branch */
join:
        dec     %r13d
        jnz     inner
        dec     %r12d
        jnz     outer
        mov     $60, %eax               /* exit(7) */
        mov     $7, %edi
        syscall

func:
        add     %r13, %r15
        ret

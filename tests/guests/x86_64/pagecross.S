/* pagecross: a loop of N = 1000 iterations whose second instruction
 * straddles a page boundary, then exit(0): 2 + 4N + 3 = 4005 instructions.
 * QEMU 7.2 ends the TB [inc] before the straddling add, which gets a TB
 * of its own, but its plugin interface also lists the add, cut at the page
 * end, as the last instruction of [inc]: dbtprof's trace reader drops that
 * copy (it never runs there), so the count stays 4005, not 5005. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     $1000, %ecx
        jmp     1f
        .org    0xffd, 0xcc
1:      inc     %eax                    /* 0xffd, 2 bytes */
        add     $1, %ebx                /* 0xfff, 3 bytes: crosses */
        dec     %ecx
        jnz     1b
        mov     $60, %eax               /* exit */
        xor     %edi, %edi
        syscall

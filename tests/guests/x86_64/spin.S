/* spin: loops forever (one 2-instruction TB).  Used by the SIGKILL test. */
        .text
        .p2align 12
        .globl _start
_start:
        xor     %eax, %eax
1:      inc     %rax
        jmp     1b

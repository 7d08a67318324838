/* syscalls: write(1, "hello\n", 6) = 6; getpid(); close(-1) = -EBADF (-9);
 * exit_group(3).  Four TBs, each ending in a syscall.
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     $1, %eax                /* write */
        mov     $1, %edi
        lea     msg(%rip), %rsi
        mov     $6, %edx
        syscall
        mov     $39, %eax               /* getpid */
        syscall
        mov     $3, %eax                /* close */
        mov     $-1, %edi
        syscall
        mov     $231, %eax              /* exit_group */
        mov     $3, %edi
        syscall

        .section .rodata
msg:    .ascii  "hello\n"

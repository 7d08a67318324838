/* syscalls: write(1, "hello\n", 6) = 6; getpid(); close(-1) = -EBADF (-9);
 * exit_group(3).  Four TBs, each ending in svc.
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     x0, #1                  /* write */
        adrp    x1, msg
        add     x1, x1, :lo12:msg
        mov     x2, #6
        mov     x8, #64
        svc     #0
        mov     x8, #172                /* getpid */
        svc     #0
        mov     x0, #-1                 /* close */
        mov     x8, #57
        svc     #0
        mov     x0, #3                  /* exit_group */
        mov     x8, #94
        svc     #0

        .section .rodata
msg:    .ascii  "hello\n"

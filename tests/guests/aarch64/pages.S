/* pages: 20000 rounds of a call (bl) and a jump (b) to another page and a
 * conditional branch back, then exit(0): blocks that leave their page,
 * which QEMU does not chain. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     w2, #20000
1:      bl      far_fn
        tst     w2, #1
        b       2f
        .p2align 12
2:      subs    w2, w2, #1
        b.ne    1b
        mov     x0, #0
        mov     x8, #93                 /* exit */
        svc     #0
        .p2align 12
far_fn: add     x0, x2, #1
        ret

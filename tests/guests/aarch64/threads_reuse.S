/* threads_reuse: like threads, but main waits for thread 1 to exit before it
 * creates thread 2, so QEMU hands thread 2 the vCPU index thread 1 had
 * (cpu_index = highest live index + 1).  Deterministic counts:
 *   main: loop A (N0 = 10000), clone thread 1 (with PARENT_SETTID and
 *         CHILD_CLEARTID on tid1), futex(&tid1, FUTEX_WAIT, tid) (returns 0 or
 *         -EAGAIN; straight-line either way), loop B (N1 = 20000), clone
 *         thread 2, loop C (N2 = 30000), exit(0)
 *   thread 1: loop (M1 = 40000), exit(0)
 *   thread 2: loop (M2 = 50000), exit(0)
 * See tests/guests/EXPECTED.md. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     x9, #10000              /* loop A */
1:      subs    x9, x9, #1
        b.ne    1b
        movz    x0, #0x0f00             /* clone(0x350f00, stack1_top, &tid1, 0, &tid1) */
        movk    x0, #0x35, lsl #16      /* ...|PARENT_SETTID|CHILD_CLEARTID */
        adrp    x1, stack1_top
        add     x1, x1, :lo12:stack1_top
        adrp    x2, tid1
        add     x2, x2, :lo12:tid1
        mov     x3, #0
        mov     x4, x2
        mov     x8, #220
        svc     #0
        cbz     x0, child1
        mov     w2, w0                  /* futex(&tid1, FUTEX_WAIT, tid, NULL) */
        adrp    x0, tid1
        add     x0, x0, :lo12:tid1
        mov     x1, #0
        mov     x3, #0
        mov     x8, #98
        svc     #0
        mov     x9, #20000              /* loop B */
2:      subs    x9, x9, #1
        b.ne    2b
        movz    x0, #0x0f00             /* clone(0x50f00, stack2_top, 0, 0, 0) */
        movk    x0, #0x5, lsl #16
        adrp    x1, stack2_top
        add     x1, x1, :lo12:stack2_top
        mov     x2, #0
        mov     x3, #0
        mov     x4, #0
        mov     x8, #220
        svc     #0
        cbz     x0, child2
        mov     x9, #30000              /* loop C */
3:      subs    x9, x9, #1
        b.ne    3b
        mov     x0, #0                  /* exit(0): this thread only */
        mov     x8, #93
        svc     #0

child1:
        mov     x9, #40000
4:      subs    x9, x9, #1
        b.ne    4b
        mov     x0, #0
        mov     x8, #93
        svc     #0

child2:
        mov     x9, #50000
5:      subs    x9, x9, #1
        b.ne    5b
        mov     x0, #0
        mov     x8, #93
        svc     #0

        .bss
        .p2align 12
tid1:   .skip   16              /* tid of thread 1; cleared at its exit */
stack1: .skip   16384
stack1_top:
stack2: .skip   16384
stack2_top:

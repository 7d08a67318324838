/* random: 20000 rounds of an LCG (x3 = x3 * 1103515245 + 3039) with two
 * branches on its bits, taken about 1/4 (two bits both clear) and 1/8 (the
 * top byte below 32) of the rounds, then exit(0): branches a predictor
 * misses often, which gentest makes go either way at random. */
        .text
        .p2align 12
        .globl _start
_start:
        mov     w2, #20000
        mov     w3, #1
        movz    w4, #0x4e6d
        movk    w4, #0x41c6, lsl #16
1:      mul     w3, w3, w4
        add     w3, w3, #3039
        tst     w3, #0x30000
        b.eq    2f
        add     w5, w5, #1
2:      ubfx    w6, w3, #24, #8
        cmp     w6, #32
        b.lo    3f
        add     w7, w7, #1
3:      subs    w2, w2, #1
        b.ne    1b
        mov     x0, #0
        mov     x8, #93                 /* exit */
        svc     #0

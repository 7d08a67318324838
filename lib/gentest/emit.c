/* SPDX-License-Identifier: MIT */
/*
 * emit.c - the generated test program: one self-contained C file with the
 * rewritten blocks as top-level assembly and a driver that runs each
 * group's threads (dbtp/gentest.h, doc/dbtprof-gentest.md).
 *
 * Block k becomes gt_b<k>(buf, n): save the callee-saved registers, point
 * r15 at the thread's buffer and rsp at its private stack, jump to
 * gt_b<k>_body, run the body n times (a pass counter, and where needed a
 * stack pointer reset (sp_passes()), between iterations; where the block ends
 * in a direct branch, the counter's branch replaces it: cut_last()), restore.
 * gt_b<k>_body is where each iteration enters, so a DBT's block counter at that
 * address counts the iterations exactly.  Blocks with the same count model in a
 * group run as one sequence in one such function (plan_sequences()).  For an
 * AArch64 guest the same function comes from emit-a64.c (x28 for r15);
 * the driver's C is the same for both.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/disasm.h"
#include "dbtp/gentest.h"
#include "gentest/rewrite.h"
#include "util/u64map.h"

/* The second text section of page crossings (put_cross()): switching to
 * it, and the page boundary it starts and ends on (emit_shared_x86(),
 * dbtp_gt_emit()). */
#define GT_FAR_PUSH "\t.pushsection .text.gt_far,\"ax\",@progbits\n"
#define GT_FAR_POP "\t.popsection\n"
#define GT_FAR_ALIGN GT_FAR_PUSH "\t.p2align 12\n" GT_FAR_POP

/* The largest loop (a function's copies and tail, at most so many bytes)
 * kept on one page (dbtp_gt_emit_copies()): QEMU chains a block only to
 * one on its own page and looks up any other, so a loop the original ran on
 * one page must not straddle two; the padding that avoids it costs less
 * than the loop's size, never run.  A larger loop starts a page, so that
 * it runs over as few page boundaries as it can. */
#define GT_FIT_MAX 2048

/* What an x86-64 instruction line that is not a kept encoding assembles
 * to, on average (rewritten instructions, their r15-based operands: 5.0
 * bytes in sha256sum's largest function), and a pass's tail: estimates of
 * where a pass's text runs over page boundaries (put_cross()). */
#define GT_LINE_BYTES 6
#define GT_TAIL_BYTES 24
/* A pass's tail at most: x86-64's 16 instructions and a stack-pointer
 * reset (emit_function()), AArch64's 12 (emit-a64.c) */
#define GT_TAIL_MAX (16 * 15 + 128)

/* A pass's stack-pointer reset (sp_reset_text()): a `lea`, and pushes
 * and `lea rsp` for 64 slots at most. */
#define GT_SP_TEXT 1280

/* The driver.  Its count arithmetic is dbtp_gt_size() and
 * dbtp_gt_count(), written again in the generated program's C. */
static const char driver[] =
    "#ifndef GT_SLICES\n"
    "#define GT_SLICES 65536\n"
    "#endif\n"
    "#ifndef GT_MIN_CALL\n"
    "#define GT_MIN_CALL 256\n"
    "#endif\n"
    "\n"
    "static double gt_rnd(double x) /* nearest, ties to even */\n"
    "{\n"
    "\tif (x >= 4503599627370496.0 || x <= -4503599627370496.0)\n"
    "\t\treturn x;\n"
    "\tif (x >= 0)\n"
    "\t\treturn (x + 4503599627370496.0) - 4503599627370496.0;\n"
    "\treturn -((-x + 4503599627370496.0) - 4503599627370496.0);\n"
    "}\n"
    "\n"
    "static uint64_t gt_size(const struct gt_group *g, double t)\n"
    "{\n"
    "\tdouble s = gt_rnd(g->alpha * t + g->beta);\n"
    "\n"
    "\treturn s > 0 ? (uint64_t)s : 0;\n"
    "}\n"
    "\n"
    "static double gt_cum(const struct gt_group *g, double x)\n"
    "{\n"
    "\tdouble pos = x * g->nshares, c = 0;\n"
    "\tunsigned i;\n"
    "\n"
    "\tif (x >= 1)\n"
    "\t\treturn 1;\n"
    "\tfor (i = 0; i + 1 <= pos && i < g->nshares; i++)\n"
    "\t\tc += g->shares[i];\n"
    "\tif (i < g->nshares)\n"
    "\t\tc += (pos - i) * g->shares[i];\n"
    "\treturn c;\n"
    "}\n"
    "\n"
    "/* Started by a dynamic loader, which stands in for the profile's. */\n"
    "static int gt_dynamic;\n"
    "\n"
    "static uint64_t gt_count(const struct gt_group *g, const struct gt_hot "
    "*h,\n"
    "\t\t\t uint64_t m, uint64_t i)\n"
    "{\n"
    "\tdouble t = gt_rnd(h->theta * (double)m + h->delta);\n"
    "\tuint64_t tot = t > 0 ? (uint64_t)t : 0;\n"
    "\n"
    "\tif (!m || i >= m || (h->loader && gt_dynamic))\n"
    "\t\treturn 0;\n"
    "\tif (g->even || !g->nshares)\n"
    "\t\treturn (uint64_t)((unsigned __int128)tot * (i + 1) / m -\n"
    "\t\t\t\t  (unsigned __int128)tot * i / m);\n"
    "\treturn (uint64_t)(gt_rnd(tot * gt_cum(g, (double)(i + 1) / m)) -\n"
    "\t\t\t  gt_rnd(tot * gt_cum(g, (double)i / m)));\n"
    "}\n"
    "\n"
    "struct gt_thread {\n"
    "\tunsigned g;\n"
    "\tuint64_t i;\n"
    "\tlong creator;\n"
    "\tunsigned create_b, join_b;\n"
    "\tpthread_t pt;\n"
    "\tunsigned char *buf;\n"
    "};\n"
    "\n"
    "static struct gt_thread *gt_th;\n"
    "static size_t gt_nth;\n"
    "static uint64_t gt_m[GT_NGROUPS];\n"
    "static double gt_eta = 1;\n"
    "static uint64_t gt_cap = UINT64_MAX; /* --cap */\n"
    "static unsigned char *gt_only; /* --only: blocks picked (NULL: all) */\n"
    "\n"
    "/* Entry @h runs one of the blocks --only picked (a sequence's members\n"
    " * run together). */\n"
    "static int gt_picked(const struct gt_hot *h)\n"
    "{\n"
    "\tif (!gt_only || gt_only[h->block])\n"
    "\t\treturn 1;\n"
    "\tfor (unsigned i = 0; i < h->nalso; i++)\n"
    "\t\tif (gt_only[h->also[i]])\n"
    "\t\t\treturn 1;\n"
    "\treturn 0;\n"
    "}\n"
    "\n"
    "/* Thread @t's count of entry @h; none if --only left it out. */\n"
    "static uint64_t gt_count_of(const struct gt_thread *t,\n"
    "\t\t\t    const struct gt_hot *h)\n"
    "{\n"
    "\treturn gt_picked(h) ? gt_count(&gt_groups[t->g], h, gt_m[t->g], t->i)\n"
    "\t\t\t     : 0;\n"
    "}\n"
    "\n"
    "/* The passes of a count @c at scale @eta: divided, rounded down, at\n"
    " * most gt_cap. */\n"
    "static uint64_t gt_scaled(uint64_t c, double eta)\n"
    "{\n"
    "\tuint64_t n = (uint64_t)((double)c / eta);\n"
    "\n"
    "\treturn n < gt_cap ? n : gt_cap;\n"
    "}\n"
    "\n"
    "/* Thread @t's passes of entry @h at scale @eta. */\n"
    "static uint64_t gt_passes(const struct gt_thread *t,\n"
    "\t\t\t  const struct gt_hot *h, double eta)\n"
    "{\n"
    "\treturn gt_scaled(gt_count_of(t, h), eta);\n"
    "}\n"
    "\n"
    "/* The buffer sits alone in the middle of a reserved 8 MiB, far from\n"
    " * any stack: a DBT that follows stack-pointer moves (valgrind) sees\n"
    " * the switch to the private stack as a stack switch; whole pages\n"
    " * (GT_BUF_SIZE a multiple of two pages, so its start is one;\n"
    " * AArch64: 128 KiB aligned, so that the random bytes' pointer goes\n"
    " * back into its window by clearing a bit). */\n"
    "static uint64_t gt_lcg = 1;\n"
    "#if GT_JT_COUNT\n"
    "/* the tables of branch targets, copied into the buffer */\n"
    "extern const unsigned char gt_jt[];\n"
    "#endif\n"
    "\n"
    "/* The set-up's fills and copies go 64 bytes a pass through an empty\n"
    " * asm, so that the compiler does not make them memset or memcpy: a\n"
    " * C library's rep stosb or rep movsb runs a byte a translated block\n"
    " * under QEMU and valgrind (a return to QEMU's main loop a byte under\n"
    " * -d nochain), which the original does not pay. */\n"
    "static void gt_fill(void *dst, const void *src, unsigned char c, size_t n)\n"
    "{\n"
    "\tunsigned char *d = dst;\n"
    "\tconst unsigned char *s = src;\n"
    "\tsize_t i = 0;\n"
    "\n"
    "\tfor (; i + 64 <= n; i += 64) {\n"
    "\t\tif (s)\n"
    "\t\t\tmemcpy(d + i, s + i, 64);\n"
    "\t\telse\n"
    "\t\t\tmemset(d + i, c, 64);\n"
    "\t\t__asm__ volatile(\"\" : : \"r\"(d + i) : \"memory\");\n"
    "\t}\n"
    "\tfor (; i < n; i++)\n"
    "\t\td[i] = s ? s[i] : c;\n"
    "}\n"
    "\n"
    "static unsigned char *gt_buffer(int far)\n"
    "{\n"
    "\tunsigned char *r = mmap(NULL, GT_RESERVE, PROT_NONE,\n"
    "\t\t\t\tMAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);\n"
    "\tunsigned char *b = r + (GT_RESERVE_BUF - GT_BUF_SIZE) / 2;\n"
    "\tuint64_t v;\n"
    "\n"
    "#if GT_A64\n"
    "\tb = (unsigned char *)((uintptr_t)b & ~(uintptr_t)0x1ffff);\n"
    "#endif\n"
    "\n"
    "\tif (r == MAP_FAILED ||\n"
    "\t    mprotect(b, GT_BUF_SIZE, PROT_READ | PROT_WRITE)) {\n"
    "\t\tfputs(\"out of memory\\n\", stderr);\n"
    "\t\texit(1);\n"
    "\t}\n"
    "\tgt_fill(b, NULL, 0, GT_DATA);\n"
    "\tgt_fill(b + GT_DATA, NULL, GT_DATA_FILL, GT_BUF_SIZE - GT_DATA);\n"
    "\tv = (uint64_t)(uintptr_t)r;\n"
    "\tmemcpy(b + GT_SLOT_RESERVE, &v, 8);\n"
    "\t/* eight bytes a pass (a loop's pass is a block to a DBT), and as\n"
    "\t * many indices into tables of random targets (x86-64) */\n"
    "\tfor (unsigned i = 0; GT_RANDOM && i < GT_RAND_SIZE; i += 8) {\n"
    "#pragma GCC unroll 8\n"
    "\t\tfor (unsigned j = 0; j < 8; j++) {\n"
    "\t\t\tgt_lcg = gt_lcg * 6364136223846793005ull +\n"
    "\t\t\t\t 1442695040888963407ull;\n"
    "\t\t\tb[GT_RAND + i + j] = (unsigned char)(gt_lcg >> 56);\n"
    "\t\t\tif (!GT_A64)\n"
    "\t\t\t\tb[GT_RIDX + i + j] = (unsigned char)(gt_lcg >> 50 & 63);\n"
    "\t\t}\n"
    "\t\t__asm__ volatile(\"\" : : \"r\"(b + i) : \"memory\");\n"
    "\t}\n"
    "#if GT_A64\n"
    "\tv = (uint64_t)(uintptr_t)(b + GT_RAND);\n"
    "\tmemcpy(b + GT_SLOT_CURSOR, &v, 8);\n"
    "#endif\n"
    "#if GT_JT_COUNT\n"
    "\tgt_fill(b + GT_JUMPS, gt_jt, 0, (size_t)GT_JT_COUNT * GT_JT_BYTES);\n"
    "#endif\n"
    "#if GT_WALKS\n"
    "\t/* the walk's 1024 lines in one cycle of random order, each\n"
    "\t * holding the next one's offset at GT_WALK_NEXT (GT_A64:\n"
    "\t * chunks of GT_WALK_STEP bytes, holding the next one's address\n"
    "\t * in the 8 bytes that end there) */\n"
    "\t{\n"
    "\t\tstatic unsigned short ord[1024];\n"
    "\n"
    "\t\tfor (unsigned i = 0; i < 1024; i++)\n"
    "\t\t\tord[i] = (unsigned short)i;\n"
    "\t\tfor (unsigned i = 1023; i > 0; i--) {\n"
    "\t\t\tunsigned j = (unsigned)((gt_lcg = gt_lcg *\n"
    "\t\t\t\t6364136223846793005ull + 1442695040888963407ull)\n"
    "\t\t\t\t>> 33) % (i + 1);\n"
    "\t\t\tunsigned short x = ord[i];\n"
    "\n"
    "\t\t\tord[i] = ord[j];\n"
    "\t\t\tord[j] = x;\n"
    "\t\t}\n"
    "\t\tfor (unsigned i = 0; i < 1024; i++) {\n"
    "#if GT_A64\n"
    "\t\t\tunsigned char *nx = b + GT_WALK + GT_WALK_STEP *\n"
    "\t\t\t\t\t\t\t   ord[(i + 1) % 1024];\n"
    "\n"
    "\t\t\tmemcpy(b + GT_WALK_NEXT - 4 + GT_WALK_STEP * ord[i], &nx,\n"
    "\t\t\t       8);\n"
    "#else\n"
    "\t\t\tuint32_t nx = 64u * ord[(i + 1) % 1024];\n"
    "\n"
    "\t\t\tmemcpy(b + GT_WALK_NEXT + 64u * ord[i], &nx, 4);\n"
    "#endif\n"
    "\t\t}\n"
    "#if GT_A64\n"
    "\t\tv = (uint64_t)(uintptr_t)(b + GT_WALK);\n"
    "\t\tmemcpy(b + GT_SLOT_WALK, &v, 8);\n"
    "#endif\n"
    "\t}\n"
    "#endif\n"
    "#if GT_FAR_WALKS\n"
    "\t/* the far walk's area (emit.c), in a thread that walks it: zeros,\n"
    "\t * not filled (a far walk costs its misses, not 8 MiB of stores a\n"
    "\t * thread), each page written once so that it is one of its own;\n"
    "\t * at the end of the first line of each 64 KiB an undefined byte\n"
    "\t * (one of malloc's), so that memcheck keeps a map of shadow bits\n"
    "\t * for each, as for a heap */\n"
    "\tif (far) {\n"
    "\t\tvolatile unsigned char *u = malloc(1);\n"
    "\t\tunsigned char *f = b + GT_FAR;\n"
    "\n"
    "\t\tif (!u || mprotect(f, GT_FAR_ALL, PROT_READ | PROT_WRITE)) {\n"
    "\t\t\tfputs(\"out of memory\\n\", stderr);\n"
    "\t\t\texit(1);\n"
    "\t\t}\n"
    "\t\tfor (uint32_t c = 0; c < GT_FAR_ALL; c += 4096)\n"
    "\t\t\tf[c + 63] = c % 65536 ? 0 : *u;\n"
    "\t\tfree((void *)u);\n"
    "#if GT_FAR_CHAIN\n"
    "\t\t/* for the functions whose misses waited for each other: the\n"
    "\t\t * lines in one cycle, each holding the next one's offset at\n"
    "\t\t * GT_WALK_NEXT (i -> 40501 i + 12345 modulo their number, a\n"
    "\t\t * power of two: one cycle through all; emit.c) */\n"
    "\t\tfor (uint32_t i = 0; i < GT_FAR_LINES; i++) {\n"
    "\t\t\tuint32_t nx = 64u * ((40501u * i + 12345u) &\n"
    "\t\t\t\t\t  (GT_FAR_LINES - 1));\n"
    "\n"
    "\t\t\tmemcpy(f + GT_FAR_BYTES + 64u * i + GT_WALK_NEXT - GT_WALK,\n"
    "\t\t\t       &nx, 4);\n"
    "\t\t}\n"
    "#endif\n"
    "\t}\n"
    "#else\n"
    "\t(void)far;\n"
    "#endif\n"
    "\tv = 0x1f80;\n"
    "\tmemcpy(b + GT_SLOT_MXCSR, &v, 8);\n"
    "\tv = 0x037f;\n"
    "\tmemcpy(b + GT_SLOT_FCW, &v, 8);\n"
    "\tv = 3;\n"
    "\tmemcpy(b + GT_SLOT_DIV, &v, 8);\n"
    "\tv = (uint64_t)(int64_t)open(\"/dev/zero\", O_RDONLY | O_CLOEXEC);\n"
    "\tmemcpy(b + GT_SLOT_ZERO, &v, 8);\n"
    "\tGT_FXSAVE(b + GT_SLOT_FXSAVE);\n"
    "\treturn b;\n"
    "}\n"
    "\n"
    "#define GT_NONE 0xffffffffu\n"
    "\n"
    "/* The executions a call of a block brings at least: GT_MIN_CALL, or\n"
    " * its share of a slice at scale 1 (@n1 its executions there), so that\n"
    " * a scaled run makes fewer calls of the sizes a run at scale 1 makes\n"
    " * and the calls' cost shrinks with the blocks'. */\n"
    "static uint64_t gt_call_size(uint64_t n1)\n"
    "{\n"
    "\treturn n1 / GT_SLICES > GT_MIN_CALL ? n1 / GT_SLICES : GT_MIN_CALL;\n"
    "}\n"
    "\n"
    "/* The slice in which a block run @n times in all, @done of them so\n"
    " * far, in calls of @size, is next due: the first whose share of @n is\n"
    " * @size past @done, or the last. */\n"
    "static unsigned gt_slice(uint64_t n, uint64_t done, uint64_t size)\n"
    "{\n"
    "\tunsigned __int128 q;\n"
    "\n"
    "\tif (done + size >= n)\n"
    "\t\treturn GT_SLICES - 1;\n"
    "\t/* (in 64 bits where they fit: no call of a 128-bit division) */\n"
    "\tif (n <= UINT64_MAX / (GT_SLICES + 1))\n"
    "\t\tq = ((done + size) * GT_SLICES + n - 1) / n;\n"
    "\telse\n"
    "\t\tq = ((unsigned __int128)(done + size) * GT_SLICES + n - 1) / n;\n"
    "\treturn (unsigned)q - 1;\n"
    "}\n"
    "\n"
    "/* A block's schedule in a thread, in one cache line: a call costs\n"
    " * the driver one line, not five (four arrays, the table of blocks). */\n"
    "struct gt_sched {\n"
    "\tuint64_t n, done, size; /* runs in all, so far, a call at least */\n"
    "\tuint64_t chunk;\n"
    "\tvoid (*fn)(void *buf, uint64_t n);\n"
    "\tunsigned next; /* the next block due in the same slice */\n"
    "} __attribute__((aligned(64)));\n"
    "\n"
    "/* Block @k is due in slice @s. */\n"
    "static void gt_due(unsigned *head, struct gt_sched *b, unsigned k,\n"
    "\t\t   unsigned s)\n"
    "{\n"
    "\tb[k].next = head[s];\n"
    "\thead[s] = k;\n"
    "}\n"
    "\n"
    "/* At most b->chunk runs a call (0: any): a function that ends in a\n"
    " * return or indirect branch counts its passes in a table of 256\n"
    " * targets. */\n"
    "static void gt_call(const struct gt_sched *b, void *buf, uint64_t n)\n"
    "{\n"
    "\tfor (; b->chunk && n > b->chunk; n -= b->chunk)\n"
    "\t\tb->fn(buf, b->chunk);\n"
    "\tif (n)\n"
    "\t\tb->fn(buf, n);\n"
    "}\n"
    "\n"
    "/* a page of its own: its loop, which calls the functions, must not\n"
    " * run over a page boundary, which QEMU would look up every call */\n"
    "static void *gt_run(void *arg) __attribute__((aligned(4096)));\n"
    "\n"
    "/* Thread @self joins its children due at slice @b that it created\n"
    " * before, creates those due, then joins those created and due at @b;\n"
    " * the next slice where it has some, or GT_SLICES + 1. */\n"
    "static unsigned gt_children(size_t self, unsigned b)\n"
    "{\n"
    "\tunsigned e = GT_SLICES + 1;\n"
    "\n"
    "\tfor (int step = 0; step < 3; step++)\n"
    "\t\tfor (size_t c = 0; c < gt_nth; c++) {\n"
    "\t\t\tstruct gt_thread *t = &gt_th[c];\n"
    "\t\t\tint join = step != 1;\n"
    "\t\t\tunsigned at = join ? t->join_b : t->create_b;\n"
    "\n"
    "\t\t\tif (t->creator != (long)self)\n"
    "\t\t\t\tcontinue;\n"
    "\t\t\tif (at > b && at < e)\n"
    "\t\t\t\te = at;\n"
    "\t\t\tif (at != b || (join && (t->create_b == b) != (step == 2)))\n"
    "\t\t\t\tcontinue;\n"
    "\t\t\tif (join)\n"
    "\t\t\t\tpthread_join(t->pt, NULL);\n"
    "\t\t\telse if (pthread_create(&t->pt, NULL, gt_run, t)) {\n"
    "\t\t\t\tfputs(\"pthread_create failed\\n\", stderr);\n"
    "\t\t\t\texit(1);\n"
    "\t\t\t}\n"
    "\t\t}\n"
    "\treturn e;\n"
    "}\n"
    "\n"
    "static void *gt_run(void *arg)\n"
    "{\n"
    "\tstruct gt_thread *t = arg;\n"
    "\tconst struct gt_group *g = &gt_groups[t->g];\n"
    "\tsize_t self = (size_t)(t - gt_th);\n"
    "\n"
    "\tstruct gt_sched *b = aligned_alloc(\n"
    "\t\t64, (g->nhot + 1) * sizeof(struct gt_sched));\n"
    "\tunsigned *head = malloc(GT_SLICES * sizeof(unsigned));\n"
    "\tint64_t fd;\n"
    "\tint far = 0;\n"
    "\n"
    "\tif (!b || !head) {\n"
    "\t\tfputs(\"out of memory\\n\", stderr);\n"
    "\t\texit(1);\n"
    "\t}\n"
    "\t/* Blocks run at least their call size are spread over the\n"
    "\t * slices, a call in the slice that brings them that many\n"
    "\t * executions or more past their last (the rest in the last);\n"
    "\t * others run in one call, in slice k mod GT_SLICES.  Each slice\n"
    "\t * lists the blocks due in it. */\n"
    "\tgt_fill(head, NULL, 0xff, GT_SLICES * sizeof(unsigned)); /* GT_NONE */\n"
    "\tfor (unsigned k = g->nhot; k-- > 0;) {\n"
    "\t\tuint64_t c = gt_count_of(t, &g->hot[k]);\n"
    "\n"
    "\t\tb[k].n = gt_scaled(c, gt_eta);\n"
    "\t\tb[k].done = 0;\n"
    "\t\tb[k].size = gt_call_size(gt_scaled(c, 1));\n"
    "\t\tb[k].chunk = g->hot[k].chunk;\n"
    "\t\tb[k].fn = g->hot[k].fn;\n"
    "\t\tif (b[k].n)\n"
    "\t\t\tgt_due(head, b, k,\n"
    "\t\t\t       b[k].n >= b[k].size\n"
    "\t\t\t\t       ? gt_slice(b[k].n, 0, b[k].size)\n"
    "\t\t\t\t       : k % GT_SLICES);\n"
    "\t\tfar |= b[k].n && g->hot[k].far;\n"
    "\t}\n"
    "\tt->buf = gt_buffer(far);\n"
    "\tfor (unsigned s = 0, e = 0; s <= GT_SLICES; s++) {\n"
    "\t\tif (s == e) /* children to create or join */\n"
    "\t\t\te = gt_children(self, s);\n"
    "\t\tif (s == GT_SLICES)\n"
    "\t\t\tbreak;\n"
    "\t\tfor (unsigned k = head[s], nk; k != GT_NONE; k = nk) {\n"
    "\t\t\tstruct gt_sched *c = &b[k];\n"
    "\t\t\tuint64_t z = c->n < c->size\n"
    "\t\t\t\t\t ? c->n\n"
    "\t\t\t\t\t : (uint64_t)((unsigned __int128)c->n *\n"
    "\t\t\t\t\t\t      (s + 1) / GT_SLICES);\n"
    "\n"
    "\t\t\tnk = c->next;\n"
    "\t\t\tgt_call(c, t->buf, z - c->done);\n"
    "\t\t\tc->done = z;\n"
    "\t\t\tif (z < c->n)\n"
    "\t\t\t\tgt_due(head, b, k, gt_slice(c->n, z, c->size));\n"
    "\t\t}\n"
    "\t}\n"
    "\tfree(b);\n"
    "\tfree(head);\n"
    "\tmemcpy(&fd, t->buf + GT_SLOT_ZERO, 8);\n"
    "\tif (fd >= 0)\n"
    "\t\tclose((int)fd);\n"
    "\tmemcpy(&fd, t->buf + GT_SLOT_RESERVE, 8);\n"
    "\tmunmap((void *)(uintptr_t)fd, GT_RESERVE);\n"
    "\treturn NULL;\n"
    "}\n"
    "\n"
    "static unsigned gt_boundary(double x)\n"
    "{\n"
    "\tdouble b = gt_rnd(x * GT_SLICES);\n"
    "\n"
    "\treturn b <= 0 ? 0 : b >= GT_SLICES ? GT_SLICES : (unsigned)b;\n"
    "}\n"
    "\n"
    "static double gt_unit(double x) /* within [0, 1] */\n"
    "{\n"
    "\treturn x > 1 ? 1 : x > 0 ? x : 0;\n"
    "}\n"
    "\n"
    "/* Where thread @i of group @g, whose parent group has @mp threads, is\n"
    " * created and joined at thread parameter @T: the group's points there\n"
    " * (as dbtp_gt_group_points()), a serial group's threads sharing its\n"
    " * span, each creator's in turn. */\n"
    "static void gt_window(unsigned g, uint64_t i, uint64_t mp, double T,\n"
    "\t\t      unsigned *cb, unsigned *jb)\n"
    "{\n"
    "\tconst struct gt_group *gr = &gt_groups[g];\n"
    "\tdouble c = gt_unit(gr->create_t * T + gr->create_at);\n"
    "\tdouble j = gt_unit(gr->join_t * T + gr->join_at), w;\n"
    "\n"
    "\tj = j > c ? j : c;\n"
    "\tif (gr->serial) {\n"
    "\t\tmp = mp ? mp : 1;\n"
    "\t\tw = (j - c) / (double)((gt_m[g] - i % mp + mp - 1) / mp);\n"
    "\t\tj = c + w * (double)(i / mp + 1);\n"
    "\t\tc += w * (double)(i / mp);\n"
    "\t}\n"
    "\t*cb = gt_boundary(c);\n"
    "\t*jb = gt_boundary(j);\n"
    "}\n"
    "\n"
    "/* The threads at thread parameter T: group 0's first is main's. */\n"
    "static void gt_plan(double T)\n"
    "{\n"
    "\tsize_t n = 0;\n"
    "\tsize_t first[GT_NGROUPS];\n"
    "\n"
    "\tfor (unsigned g = 0; g < GT_NGROUPS; g++) {\n"
    "\t\tgt_m[g] = gt_size(&gt_groups[g], T);\n"
    "\t\tif (!g && !gt_m[g])\n"
    "\t\t\tgt_m[g] = 1;\n"
    "\t\tfirst[g] = n;\n"
    "\t\tn += gt_m[g];\n"
    "\t}\n"
    "\tfree(gt_th);\n"
    "\tgt_th = calloc(n, sizeof(*gt_th));\n"
    "\tif (!gt_th) {\n"
    "\t\tfputs(\"out of memory\\n\", stderr);\n"
    "\t\texit(1);\n"
    "\t}\n"
    "\tgt_nth = n;\n"
    "\tfor (unsigned g = 0; g < GT_NGROUPS; g++)\n"
    "\t\tfor (uint64_t i = 0; i < gt_m[g]; i++) {\n"
    "\t\t\tstruct gt_thread *t = &gt_th[first[g] + i];\n"
    "\t\t\tint p = gt_groups[g].parent;\n"
    "\n"
    "\t\t\tt->g = g;\n"
    "\t\t\tt->i = i;\n"
    "\t\t\tgt_window(g, i, p >= 0 ? gt_m[p] : 0, T, &t->create_b,\n"
    "\t\t\t\t  &t->join_b);\n"
    "\t\t\tif (t->join_b < t->create_b)\n"
    "\t\t\t\tt->join_b = t->create_b;\n"
    "\t\t\tif (!g && !i)\n"
    "\t\t\t\tt->creator = -1;\n"
    "\t\t\telse if (p < 0 || !gt_m[p])\n"
    "\t\t\t\tt->creator = 0;\n"
    "\t\t\telse\n"
    "\t\t\t\tt->creator = (long)(first[p] + i % gt_m[p]);\n"
    "\t\t}\n"
    "}\n"
    "\n"
    "/* Block b runs in entry h: its own, or one of a sequence's. */\n"
    "static int gt_has(const struct gt_hot *h, unsigned b)\n"
    "{\n"
    "\tif (h->block == b)\n"
    "\t\treturn 1;\n"
    "\tfor (unsigned i = 0; i < h->nalso; i++)\n"
    "\t\tif (h->also[i] == b)\n"
    "\t\t\treturn 1;\n"
    "\treturn 0;\n"
    "}\n"
    "\n"
    "static double gt_now(void)\n"
    "{\n"
    "\tstruct timespec ts;\n"
    "\n"
    "\tclock_gettime(CLOCK_MONOTONIC, &ts);\n"
    "\treturn ts.tv_sec + ts.tv_nsec / 1e9;\n"
    "}\n"
    "\n"
    "static double gt_time(double eta)\n"
    "{\n"
    "\tdouble t0 = gt_now();\n"
    "\n"
    "\tgt_eta = eta;\n"
    "\tgt_run(&gt_th[0]);\n"
    "\treturn gt_now() - t0;\n"
    "}\n"
    "\n"
    "static void gt_usage(FILE *f)\n"
    "{\n"
    "\tfprintf(f, \"usage: %s [--scale ETA] [--threads N] [--calibrate "
    "SECONDS]\\n\"\n"
    "\t\t   \"          [--cap N] [--only K[-L][,...]] [--counts] "
    "[--quiet]\\n\",\n"
    "\t\tGT_NAME);\n"
    "}\n"
    "\n"
    "/* --only @s: blocks K (as gt_bK) and ranges K-L, comma-separated,\n"
    " * added to those picked so far; 0 if it is not such a list. */\n"
    "static int gt_pick(const char *s)\n"
    "{\n"
    "\tif (!gt_only)\n"
    "\t\tgt_only = calloc(GT_NBLOCKS ? GT_NBLOCKS : 1, 1);\n"
    "\tif (!gt_only || !s || !*s)\n"
    "\t\treturn 0;\n"
    "\tfor (;;) {\n"
    "\t\tchar *e;\n"
    "\t\tunsigned long lo, hi;\n"
    "\n"
    "\t\tif (*s < '0' || *s > '9')\n"
    "\t\t\treturn 0;\n"
    "\t\tlo = hi = strtoul(s, &e, 10);\n"
    "\t\tif (*e == '-') {\n"
    "\t\t\tif (e[1] < '0' || e[1] > '9')\n"
    "\t\t\t\treturn 0;\n"
    "\t\t\thi = strtoul(e + 1, &e, 10);\n"
    "\t\t}\n"
    "\t\tfor (unsigned b = 0; b < GT_NBLOCKS; b++)\n"
    "\t\t\tif (gt_block_id[b] >= lo && gt_block_id[b] <= hi)\n"
    "\t\t\t\tgt_only[b] = 1;\n"
    "\t\tif (!*e)\n"
    "\t\t\treturn 1;\n"
    "\t\tif (*e != ',')\n"
    "\t\t\treturn 0;\n"
    "\t\ts = e + 1;\n"
    "\t}\n"
    "}\n"
    "\n"
    "static double gt_num(const char *opt, const char *s, double min)\n"
    "{\n"
    "\tchar *e;\n"
    "\tdouble v = s ? strtod(s, &e) : 0;\n"
    "\n"
    "\tif (!s || *e || !*s || !(v >= min) || v > 1e18) {\n"
    "\t\tfprintf(stderr, \"%s wants a number >= %g\\n\", opt, min);\n"
    "\t\tgt_usage(stderr);\n"
    "\t\texit(2);\n"
    "\t}\n"
    "\treturn v;\n"
    "}\n"
    "\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "\tdouble T = GT_THREADS, eta = 1, cal = 0, secs;\n"
    "\tint counts = 0, quiet = 0;\n"
    "\tuint64_t execs = 0;\n"
    "\n"
    "\tfor (int a = 1; a < argc; a++) {\n"
    "\t\tif (!strcmp(argv[a], \"--scale\"))\n"
    "\t\t\teta = gt_num(\"--scale\", argv[++a < argc ? a : 0], 1);\n"
    "\t\telse if (!strcmp(argv[a], \"--threads\"))\n"
    "\t\t\tT = gt_num(\"--threads\", argv[++a < argc ? a : 0], 0);\n"
    "\t\telse if (!strcmp(argv[a], \"--calibrate\"))\n"
    "\t\t\tcal = gt_num(\"--calibrate\", argv[++a < argc ? a : 0], "
    "0.001);\n"
    "\t\telse if (!strcmp(argv[a], \"--cap\"))\n"
    "\t\t\tgt_cap = (uint64_t)gt_num(\"--cap\", argv[++a < argc ? a : 0],\n"
    "\t\t\t\t\t\t0);\n"
    "\t\telse if (!strcmp(argv[a], \"--only\")) {\n"
    "\t\t\tif (!gt_pick(++a < argc ? argv[a] : NULL)) {\n"
    "\t\t\t\tfprintf(stderr, \"--only wants blocks K and ranges \"\n"
    "\t\t\t\t\t\t\"K-L, comma-separated\\n\");\n"
    "\t\t\t\tgt_usage(stderr);\n"
    "\t\t\t\treturn 2;\n"
    "\t\t\t}\n"
    "\t\t} else if (!strcmp(argv[a], \"--counts\"))\n"
    "\t\t\tcounts = 1;\n"
    "\t\telse if (!strcmp(argv[a], \"--quiet\"))\n"
    "\t\t\tquiet = 1;\n"
    "\t\telse if (!strcmp(argv[a], \"--help\")) {\n"
    "\t\t\tgt_usage(stdout);\n"
    "\t\t\treturn 0;\n"
    "\t\t} else {\n"
    "\t\t\tfprintf(stderr, \"unknown option '%s'\\n\", argv[a]);\n"
    "\t\t\tgt_usage(stderr);\n"
    "\t\t\treturn 2;\n"
    "\t\t}\n"
    "\t}\n"
    "\tgt_dynamic = getauxval(AT_BASE) != 0;\n"
    "\tgt_plan(T);\n"
    "\tfor (size_t c = 0; c < gt_nth; c++) {\n"
    "\t\tconst struct gt_group *g = &gt_groups[gt_th[c].g];\n"
    "\n"
    "\t\tfor (unsigned k = 0; k < g->nhot; k++)\n"
    "\t\t\texecs += (1 + g->hot[k].nalso) *\n"
    "\t\t\t\t gt_passes(&gt_th[c], &g->hot[k], eta);\n"
    "\t}\n"
    "\tif (counts) {\n"
    "\t\t/* block, its address in the profile, executions in total */\n"
    "\t\tfor (unsigned b = 0; b < GT_NBLOCKS; b++) {\n"
    "\t\t\tuint64_t n = 0;\n"
    "\n"
    "\t\t\tfor (size_t c = 0; c < gt_nth; c++) {\n"
    "\t\t\t\tconst struct gt_group *g = &gt_groups[gt_th[c].g];\n"
    "\n"
    "\t\t\t\tfor (unsigned k = 0; k < g->nhot; k++)\n"
    "\t\t\t\t\tif (gt_has(&g->hot[k], b))\n"
    "\t\t\t\t\t\tn += gt_passes(&gt_th[c],\n"
    "\t\t\t\t\t\t\t\t &g->hot[k], eta);\n"
    "\t\t\t}\n"
    "\t\t\tprintf(\"gt_b%u_body 0x%llx %llu\\n\", gt_block_id[b],\n"
    "\t\t\t       (unsigned long long)gt_block_vaddr[b],\n"
    "\t\t\t       (unsigned long long)n);\n"
    "\t\t}\n"
    "\t\treturn 0;\n"
    "\t}\n"
    "\tif (cal > 0) {\n"
    "\t\tdouble e = execs > 100000 ? execs / 100000.0 : 1, t;\n"
    "\n"
    "\t\tfor (;;) {\n"
    "\t\t\tt = gt_time(e);\n"
    "\t\t\tif (t >= 0.05 || e <= 1)\n"
    "\t\t\t\tbreak;\n"
    "\t\t\te = e / 10 > 1 ? e / 10 : 1;\n"
    "\t\t}\n"
    "\t\teta = t > 0 ? e * t / cal : e;\n"
    "\t\tif (eta < 1)\n"
    "\t\t\teta = 1;\n"
    "\t\tprintf(\"calibrated: --scale %.6g\\n\", eta);\n"
    "\t\tfflush(stdout);\n"
    "\t}\n"
    "\tsecs = gt_time(eta);\n"
    "\tif (!quiet)\n"
    "\t\tprintf(\"%zu threads, %llu block executions, scale %.6g, "
    "%.3f s\\n\",\n"
    "\t\t       gt_nth, (unsigned long long)execs, eta, secs);\n"
    "\treturn 0;\n"
    "}\n";

/*
 * Rows: the emitter's per-block arrays have a row per model block and,
 * after them, row nb + X for the second copy of block X that a chain runs
 * after its jump or call (plan_chains()).  The model block of row @k.
 */
static const struct dbtp_gt_block *blk(const dbtp_gt_model *m, uint32_t k)
{
	uint32_t nb = dbtp_gt_model_nblocks(m);

	return dbtp_gt_model_block(m, k < nb ? k : k - nb);
}

/*
 * Sequences (plan_sequences()): @seq_head[b] is the first member of b's
 * sequence, @seq_next[b] the next member (UINT32_MAX: none).
 */

/* Block @b runs in another block's sequence, not by an entry of its own. */
static int seq_member(const uint32_t *seq_head, uint32_t b)
{
	return seq_head[b] != UINT32_MAX && seq_head[b] != b;
}

/* The last member of head @b's sequence (@b itself if alone). */
static uint32_t seq_last(const uint32_t *seq_next, uint32_t b)
{
	while (seq_next[b] != UINT32_MAX)
		b = seq_next[b];
	return b;
}

/* Members of head @b's sequence after @b. */
static uint32_t seq_rest(const uint32_t *seq_next, uint32_t b)
{
	uint32_t n = 0;

	for (uint32_t m = seq_next[b]; m != UINT32_MAX; m = seq_next[m])
		n++;
	return n;
}

struct walk_area; /* where a function walks (below) */

/* A block's rewritten copies, before they are written out. */
struct rewritten {
	char *body[DBTP_GT_MAX_UNROLL], *slots;
	unsigned u;    /* copies */
	unsigned done; /* copies rewritten */
	int ok;	       /* rewritten (else skipped or not wanted) */
	int last;      /* its last instruction's enum dbtp_branch */
	int loop;      /* that is a direct branch back to its start */
	/* --mispredict: "test" or "cmp" of a random byte and its immediate,
	 * put before the last branch (plan_random()); or NULL */
	const char *rnd_op;
	int rnd_imm;
	/* --mispredict: entries of its indirect branch's table that go
	 * elsewhere than the next instruction, over how many pads
	 * (plan_random()); or 0 */
	unsigned rnd_ind, rnd_pads;
	/* a head whose function counts its passes in the target of its
	 * last member's return or indirect branch (plan_copies()) */
	int branch_count;
	/* L1 misses an execution to reproduce with walking operands
	 * (put_walks()), or 0 */
	double walk;
	/* a head whose function walks far (plan_far()): the far area or
	 * the chain's, else NULL */
	const struct walk_area *far;
	/* chains (plan_chains()): in block P's row the block X it runs
	 * before a copy of X, in X's row P; else UINT32_MAX */
	uint32_t chain_to, chain_from;
};

/* The tables of branch targets the driver copies into the buffer: each
 * function's after this, in order (put_table()). */
#define GT_JT_HEAD                                                             \
	"\t.pushsection .data.rel.ro.gt_jt,\"aw\"\n"                           \
	"\t.p2align 3\n\t.globl gt_jt\n\t.hidden gt_jt\n"                      \
	"gt_jt:\n\t.popsection\n"

/*
 * The groups' tables.  A sequence runs by its first member's entry, which
 * lists the others.  A chain's block X runs its count less its P's
 * (@sub, plan_chains()).
 */
static void emit_group_tables(FILE *f, const dbtp_gt_model *m,
			      const struct dbtp_gt_group *g, uint32_t ng,
			      const struct rewritten *rd,
			      const uint8_t *emitted, const uint32_t *slot_of,
			      const uint32_t *seq_head,
			      const uint32_t *seq_next, const uint64_t *chunk,
			      const double *sub)
{
	for (uint32_t i = 0; i < ng; i++) {
		for (uint32_t k = 0; k < g[i].nhot; k++) {
			uint32_t b = g[i].hot[k].block, n = 0;

			if (!emitted[b] || seq_head[b] != b)
				continue;
			fprintf(f, "static const unsigned gt_also%u_%u[] = {",
				i, b);
			for (uint32_t m = seq_next[b]; m != UINT32_MAX;
			     m = seq_next[m])
				fprintf(f, "%s%u", n++ ? ", " : "", slot_of[m]);
			fprintf(f, "};\n");
		}
		fprintf(f, "static const struct gt_hot gt_hot%u[] = {\n", i);
		for (uint32_t k = 0; k < g[i].nhot; k++) {
			uint32_t b = g[i].hot[k].block, n;

			if (!emitted[b] || seq_member(seq_head, b))
				continue;
			n = seq_rest(seq_next, b);
			fprintf(f, "\t{gt_b%u, %u, %d, %d, %.17g, %.17g, ", b,
				slot_of[b], blk(m, b)->loader,
				rd[b].far != NULL,
				g[i].hot[k].theta - sub[2 * b],
				g[i].hot[k].delta - sub[2 * b + 1]);
			if (n)
				fprintf(f, "gt_also%u_%u, %u, ", i, b, n);
			else
				fprintf(f, "0, 0, ");
			fprintf(f, "%" PRIu64 "},\n", chunk[b]);
		}
		fprintf(f, "\t{0, 0, 0, 0, 0, 0, 0, 0, 0},\n};\n");
		fprintf(f, "static const double gt_shares%u[] = {", i);
		for (uint32_t k = 0; k < g[i].nshares; k++)
			fprintf(f, "%s%.17g", k ? ", " : "", g[i].shares[k]);
		fprintf(f, "%s};\n", g[i].nshares ? "" : "0");
	}
	fprintf(f,
		"\nstatic const struct gt_group gt_groups[GT_NGROUPS] = {\n");
	for (uint32_t i = 0; i < ng; i++) {
		uint32_t n = 0;

		for (uint32_t k = 0; k < g[i].nhot; k++) {
			uint32_t b = g[i].hot[k].block;

			n += emitted[b] && !seq_member(seq_head, b);
		}
		fprintf(f,
			"\t{%.17g, %.17g, %d, %.17g, %.17g, %.17g, %.17g, %d, "
			"%d, gt_shares%u, %u, gt_hot%u, %u},\n",
			g[i].alpha, g[i].beta, g[i].parent, g[i].create_at,
			g[i].join_at, g[i].create_t, g[i].join_t, g[i].serial,
			g[i].even, i, g[i].nshares, i, n);
	}
	fprintf(f, "};\n\n");
}

/* How many bytes the assembly from @p to @e assembles to: on AArch64
 * (@a64) 4 an instruction line (a mnemonic's or an encoding's, .inst);
 * on x86-64 @line a line that is not a label, comment or directive, and
 * a `.byte` line (one instruction's encoding, kept as it was) its bytes
 * where @exact, else @line. */
static unsigned asm_bytes(const char *p, const char *e, int a64, unsigned line,
			  int exact)
{
	unsigned n = 0;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);

		if (a64)
			n += len > 1 && p[0] == '\t' && p[1] != '/' &&
				     (p[1] != '.' ||
				      !strncmp(p + 1, ".inst ", 6))
				 ? 4
				 : 0;
		else if (len && p[len - 1] != ':' && p[0] != '#' &&
			 !(p[0] == '\t' && (p[1] == '#' || p[1] == '.')))
			n += line;
		else if (!strncmp(p, "\t.byte ", 7) && !exact)
			n += line;
		else if (!strncmp(p, "\t.byte ", 7))
			for (const char *c = p + 6; c < p + len && *c != '#';
			     c++)
				n += *c == ' ' || *c == ',';
		p += len + (nl != NULL);
	}
	return n;
}

/* At most how many bytes the assembly @text assembles to: 15 (x86-64's
 * longest instruction) a line that is not a label, comment or directive
 * (.byte lines hold one instruction). */
static unsigned text_bytes(const char *text)
{
	return asm_bytes(text, text + strlen(text), 0, 15, 0);
}

/* The instruction lines of AArch64 assembly @text (4 bytes each): a
 * mnemonic's or an encoding's (.inst), not another directive's. */
static uint32_t text_lines(const char *text)
{
	return asm_bytes(text, text + strlen(text), 1, 0, 0) / 4;
}

/*
 * x86-64's `loop` (decrement rcx, branch if not zero) can count passes of
 * @bytes of code that leaves rcx alone: one instruction, the one it
 * replaces at a closing block's end, so that a pass runs exactly the
 * original's instructions.  Its displacement is 8 bits: the pass (and a
 * stack-pointer reset before the tail) must fit in 128 bytes.  (Where the
 * closing branch read the flags of the instruction before it, the
 * counter's `sub` and `jnz` take the place of the two instead,
 * cut_compare(), in rcx or another register, with no limit of reach.)
 */
static int loop_fits(int a64, uint32_t regs, unsigned bytes)
{
	return !a64 && !(regs & 1u << 1) && bytes + 8 + 2 <= 128;
}

/*
 * L1 misses.  A walking operand addresses [r15 + W + off]: W, a register
 * of the function's own, moves a pass to another of 1024 lines (64 KiB),
 * the one whose offset the line holds (at DBTP_GT_WALK_NEXT; the driver
 * links them in one cycle of random order, GT_WALKS): so that a line was
 * last touched 1024 passes before, by then evicted from any L1 of 32 KiB,
 * no prefetcher sees a stream to follow, and the misses wait for each
 * other as the original's pointer chasing did (a line a pass downwards,
 * tried first, cost nothing natively: pigz's program ran as fast as
 * without walks; so did 409 lines further, the misses overlapping).  It
 * misses every pass, and hits in L2 as the original's misses did
 * (bench/RESULTS.md).  Each of a function's walking operands has a stream
 * of its own (DBTP_GT_WALK_STREAMS, then shared): a window of the walk
 * area that holds W's range (64 KiB, in lines), the first's the line W's
 * next comes from.  An operand
 * keeps its offset modulo 32 (its alignment) in its line, below the next
 * line's offset, which nothing writes.  Every function takes the walk up
 * where the last call left it (DBTP_GT_SLOT_WALK; a stub per copy at the
 * entry): calls shorter than the cycle, each from a place of its own,
 * would go over lines other calls had just touched.
 *
 * AArch64 (emit-a64.c) reaches its operands with an unsigned immediate of
 * at most 4095 bytes (byte accesses), too short for streams 72 KiB apart:
 * there W holds the address of one of 1024 chunks of DBTP_GT_A64_CHUNK
 * bytes (512 KiB; the 8 bytes that end at DBTP_GT_WALK_NEXT + 4 hold the
 * next chunk's address), and a function's operands walk in its lines,
 * DBTP_GT_A64_LINE apart, [W + line + off % 32]: a chunk is touched once
 * a cycle, as x86's lines.
 */
#define DBTP_GT_WALK_STREAMS 8
#define DBTP_GT_A64_LINE 64
#define DBTP_GT_A64_CHUNK (DBTP_GT_WALK_STREAMS * DBTP_GT_A64_LINE)
_Static_assert(1024 * DBTP_GT_A64_CHUNK <= DBTP_GT_WALK_SIZE,
	       "the AArch64 walk's chunks fit the walk area");
#define DBTP_GT_WALK_STREAM (DBTP_GT_WALK_SIZE / DBTP_GT_WALK_STREAMS)
_Static_assert(DBTP_GT_WALK_STREAM >= 65536 + 128,
	       "a stream holds W's range and a line");

/*
 * L2 misses.  The functions whose members' misses missed the L2 as well
 * (plan_far()) walk over the far area instead: W steps a pass by
 * DBTP_GT_FAR_STEP bytes (4,099 lines, odd: round all 131,072 lines of
 * DBTP_GT_FAR_SIZE, 8 MiB, before a line comes back; its place kept in the
 * far slot), so that a line was last touched 131,072 far passes before and
 * misses an L2 of 1 MiB (the model's) or 2 MiB, and its shadow bits in
 * memcheck, a quarter of its size, miss too.  No line holds the next one:
 * these misses do not wait for each other, and a stride of 256 KiB is not
 * one a prefetcher follows.  A function whose misses waited for loads
 * before them, as a pointer chase's do (at least half of its L2 misses in
 * members with a memory operand whose address a load gave: struct
 * dbtp_gt_rw_stats' chase), walks a chain instead (far_chain): the lines
 * of an area of its own, past the far area, that the driver links in one
 * cycle (line i to 40501 i + 12345 modulo their number, which no
 * prefetcher follows and which crosses pages at random), W's next line
 * read from the line, so that each miss waits for the one before (xz's
 * full input: the original runs 6.1 s natively, its program without chains
 * 3.2; bench/RESULTS.md).  The original's misses were in its heap, whose
 * every 64 KiB memcheck keeps a map of shadow bits of its own for
 * (malloc'ed, undefined, then written): the driver leaves an undefined
 * byte at the end of each 64 KiB's first line, where no operand reaches
 * (an operand stays below DBTP_GT_WALK_NEXT), for the same maps.  The area
 * holds zeros, written to once a page and not filled (filling 12 MiB in
 * each of pigz's nine threads cost its program 0.3 s under plain QEMU, 0.7
 * s with nochain): no walking operand is a divisor (the rewriter gives
 * every division its own) or a branch target.  Streams are 129 lines
 * apart, each on another page.
 */
#define DBTP_GT_FAR_SIZE (8 << 20)
#define DBTP_GT_FAR_STEP (4099 * 64)
#define DBTP_GT_FAR_STREAM (129 * 64)
/* A thread's far area costs a page fault a page when it is made: a group
 * whose threads would walk it fewer than 32 times a page each (over the
 * profiles) walks near (far_by_group()). */
#define DBTP_GT_FAR_MIN (32.0 * DBTP_GT_FAR_SIZE / 4096)
#define DBTP_GT_FAR_BYTES                                                      \
	(DBTP_GT_FAR_SIZE + (DBTP_GT_WALK_STREAMS - 1) * DBTP_GT_FAR_STREAM)
_Static_assert(DBTP_GT_FAR >=
		   DBTP_GT_JUMPS + DBTP_GT_JT_MAX * DBTP_GT_JT_ENTRIES * 8,
	       "the far area lies past the tables of targets");

/* Where a function's walk goes: the area (offset in the buffer), the mask
 * that keeps W in it, the slot that holds W between calls, the distance
 * between streams. */
struct walk_area {
	int base;
	unsigned mask;
	int slot;
	unsigned stream;
	unsigned step; /* W's step a pass, 0: the line's next */
};

static const struct walk_area near_area = {
    DBTP_GT_WALK, 65536 - 64, DBTP_GT_SLOT_WALK, DBTP_GT_WALK_STREAM, 0};
static const struct walk_area far_area = {DBTP_GT_FAR, DBTP_GT_FAR_SIZE - 64,
					  DBTP_GT_SLOT_FAR, DBTP_GT_FAR_STREAM,
					  DBTP_GT_FAR_STEP};
static const struct walk_area far_chain = {
    DBTP_GT_FAR + DBTP_GT_FAR_BYTES, DBTP_GT_FAR_SIZE - 64, DBTP_GT_SLOT_CHASE,
    DBTP_GT_FAR_STREAM, 0};

/* The general-purpose registers a function may count passes or index
 * tables in, in the order they are taken: number, 64-, 8- and 32-bit
 * name. */
struct gpr {
	int n;
	const char *name[3];
};

static const struct gpr pref[] = {
    {13, {"r13", "r13b", "r13d"}}, {12, {"r12", "r12b", "r12d"}},
    {3, {"rbx", "bl", "ebx"}},	   {11, {"r11", "r11b", "r11d"}},
    {10, {"r10", "r10b", "r10d"}}, {9, {"r9", "r9b", "r9d"}},
    {8, {"r8", "r8b", "r8d"}},	   {5, {"rbp", "bpl", "ebp"}},
    {6, {"rsi", "sil", "esi"}},	   {7, {"rdi", "dil", "edi"}},
    {14, {"r14", "r14b", "r14d"}}, {2, {"rdx", "dl", "edx"}}};
#define NPREF ((int)(sizeof(pref) / sizeof(*pref)))

/* The first register of the table that @regs leaves alone, or NULL. */
static const struct gpr *free_gpr(uint32_t regs)
{
	for (size_t i = 0; i < sizeof(pref) / sizeof(*pref); i++)
		if (!(regs & (1u << pref[i].n)))
			return &pref[i];
	return NULL;
}

/*
 * The first of r8..r14 in the table that @regs has (so neither a pass
 * counter nor a scratch register, which are free ones) and that @line (of
 * @len bytes, NULL: any) does not name (every name of these starts with
 * its 64-bit one, and no instruction uses them implicitly), or NULL: a
 * function without a free register walks through one of its own, loaded
 * before each walking operand (put_walks()).
 */
static const struct gpr *spill_gpr(uint32_t regs, const char *line, size_t len)
{
	for (size_t i = 0; i < sizeof(pref) / sizeof(*pref); i++) {
		const char *name = pref[i].name[0];

		if (pref[i].n >= 8 && regs & (1u << pref[i].n) &&
		    (!line || !memmem(line, len, name, strlen(name))))
			return &pref[i];
	}
	return NULL;
}

/* A register the block leaves alone for the pass counter, or NULL; its
 * low byte if @byte. */
static const char *counter_reg(uint32_t regs, int byte)
{
	const struct gpr *g = free_gpr(regs);

	return g ? g->name[byte] : NULL;
}

/* The pass counter of a function of @u copies, @bytes a pass, using
 * @regs: rcx with `loop` (*@lp) where a pass fits it, else counter_reg()'s
 * register, else NULL (the buffer).  With random branches (@rnd) never
 * `loop`, and the register's low byte; nor with page crossings (@far),
 * which put the pass out of its reach. */
static const char *pass_counter(unsigned u, uint32_t regs, unsigned bytes,
				int rnd, int far, int *lp)
{
	*lp = !rnd && !far && u == 1 && loop_fits(0, regs, bytes);
	return *lp ? "rcx" : counter_reg(regs, rnd);
}

/* The next switch of page crossings' section (put_cross()) in @p: into
 * it where @far is 0, back out of it where 1; NULL if none. */
static const char *next_switch(const char *p, int far)
{
	return strstr(p, far ? GT_FAR_POP : GT_FAR_PUSH);
}

/* The bytes, at most, of the piece of a pass in page crossings' section
 * that starts at @p in copy @j of the @u copies @body: up to the switch
 * back or, with none, the copies' end and what follows them there (on
 * x86-64 the @tail, on AArch64 a branch to it). */
static unsigned far_piece(char *const *body, unsigned u, unsigned j,
			  const char *p, int a64, unsigned tail)
{
	unsigned n = 0;

	for (;;) {
		const char *s = next_switch(p, 1);

		if (s)
			return n + asm_bytes(p, s, a64, 15, 1);
		n += asm_bytes(p, p + strlen(p), a64, 15, 1);
		if (++j == u)
			return n + (a64 ? 4 : tail);
		p = body[j];
	}
}

/* Padding (never run) that keeps the next @n bytes on one page where they
 * fit GT_FIT_MAX, else starts them on one: on as few pages as they can
 * be. */
static void fit_page(FILE *f, unsigned n)
{
	if (n > GT_FIT_MAX)
		fputs("\t.p2align 12\n", f);
	else if (n)
		fprintf(f, "\t.balign 4096, , %u\n", n - 1);
}

void dbtp_gt_emit_copies(FILE *f, uint32_t id, unsigned u, char *const *body,
			 int a64, unsigned tail)
{
	unsigned text = 0; /* the loop's bytes in .text */
	const char *p, *s;
	int far = 0;

	for (unsigned j = 0; j < u; j++) {
		for (p = body[j]; (s = next_switch(p, far)); far = !far) {
			if (!far)
				text += asm_bytes(p, s, a64, 15, 1);
			p = s + strlen(far ? GT_FAR_POP : GT_FAR_PUSH);
		}
		if (!far)
			text += asm_bytes(p, p + strlen(p), a64, 15, 1);
	}
	fit_page(f, !far || a64 ? text + tail : text);
	far = 0;
	for (unsigned j = 0; j < u; j++) {
		if (j)
			fprintf(f, "\t.globl gt_b%u_c%u\ngt_b%u_c%u:\n", id, j,
				id, j);
		else /* (.Lgt<id>_top: x86-64's `loop` reaches it) */
			fprintf(f, ".Lgt%u_top:\ngt_b%u_body:\n", id, id);
		for (p = body[j]; (s = next_switch(p, far)); far = !far) {
			s += strlen(far ? GT_FAR_POP : GT_FAR_PUSH);
			fwrite(p, 1, (size_t)(s - p), f);
			if (!far)
				fit_page(f,
					 far_piece(body, u, j, s, a64, tail));
			p = s;
		}
		fputs(p, f);
	}
}

void dbtp_gt_emit_table(FILE *f, uint32_t id, unsigned u, const char *slots)
{
	for (unsigned j = 0; j < u; j++)
		if (j)
			fprintf(f, "\t.quad gt_b%u_c%u\n", id, j);
		else
			fprintf(f, "\t.quad gt_b%u_body\n", id);
	fprintf(f, "%s\t.popsection\n", slots);
}

/*
 * x86-64: the moves of a block (@k, its sp_* fields) after those of *@a,
 * which then holds both's (and the sum of their sp_bound): how a pass's
 * are put together from its members' (sequence_text(), pass_moves()).
 */
static void sp_then(struct dbtp_gt_rw_stats *a,
		    const struct dbtp_gt_rw_stats *k)
{
	int32_t *hi = a->sp_reset ? &a->sp_top : &a->sp_peak;

	a->sp_bound = a->sp_bound > UINT32_MAX - k->sp_bound
			  ? UINT32_MAX
			  : a->sp_bound + k->sp_bound;
	a->sp_exact &= k->sp_exact;
	a->sp_reads_far |= k->sp_reads_far;
	for (uint64_t r = k->sp_reads; r; r &= r - 1)
		dbtp_gt_sp_read(a, a->sp_net + 8 * __builtin_ctzll(r), 8);
	a->sp_reads_top |= k->sp_reads_top;
	if (a->sp_net + k->sp_peak > *hi)
		*hi = a->sp_net + k->sp_peak;
	if (!k->sp_reset) {
		a->sp_net += k->sp_net;
		return;
	}
	if (k->sp_top > a->sp_top)
		a->sp_top = k->sp_top;
	a->sp_reset = 1;
	a->sp_net = k->sp_net;
}

/* The moves of a pass of single block @k's function: its @u copies. */
static void pass_moves(struct dbtp_gt_rw_stats *p,
		       const struct dbtp_gt_rw_stats *k, unsigned u)
{
	p->sp_exact = 1;
	p->sp_reset = 0;
	p->sp_net = p->sp_peak = p->sp_top = 0;
	p->sp_bound = 0;
	p->sp_reads = p->sp_reads_top = 0;
	p->sp_reads_far = 0;
	for (unsigned j = 0; j < u; j++)
		sp_then(p, k);
}

/*
 * x86-64: how many bytes above the private stack's middle a pass that
 * starts there (moves @p) may pop, rounded up to 8; 0 if none or not
 * known, or more than DBTP_GT_SP_DEFINE.
 */
static int32_t sp_popped(const struct dbtp_gt_rw_stats *p)
{
	int32_t hi = p->sp_peak;

	if (p->sp_reset && p->sp_top > hi)
		hi = p->sp_top;
	hi = (hi + 7) & ~7;
	return p->sp_exact && hi <= DBTP_GT_SP_DEFINE ? hi : 0;
}

/*
 * The text of a pass's stack-pointer reset (moves @p) where the pass has
 * taken it @at bytes from where it started (or, after a reset in the
 * pass, from the middle), into @buf (GT_SP_TEXT bytes): back to the
 * middle, with the slots the next pass pops above it written by pushes
 * (memcheck marks what a pop leaves inaccessible and what a reset takes
 * back undefined; the original's pops read what its pushes wrote) and
 * those it does not read passed by a `lea rsp`.  A pass that ends at its
 * highest point gets only those, which take the stack pointer back where
 * the pass started.  @at INT32_MIN: always the `lea` (a call's entry,
 * emit_function()).
 */
static void sp_reset_text(char *buf, const struct dbtp_gt_rw_stats *p,
			  int32_t at)
{
	int32_t r = sp_popped(p);
	uint64_t reads = p->sp_reads | p->sp_reads_top;
	size_t n = 0;
	int skip = 0;

	if (at != r || !r)
		n = (size_t)snprintf(buf, GT_SP_TEXT, "\tlea rsp, [r15 + %d]\n",
				     DBTP_GT_STACK_MID + r);
	if (r > 512 || p->sp_reads_far) {
		if (r)
			snprintf(buf + n, GT_SP_TEXT - n,
				 "\t.rept %d\n\tpush 0\n\t.endr\n", r / 8);
		return;
	}
	for (int i = r / 8 - 1; i >= -1; i--) {
		if (i >= 0 && !(reads >> i & 1)) {
			skip++;
			continue;
		}
		if (skip)
			n += (size_t)snprintf(buf + n, GT_SP_TEXT - n,
					      "\tlea rsp, [rsp - %d]\n",
					      8 * skip);
		skip = 0;
		if (i >= 0)
			n += (size_t)snprintf(buf + n, GT_SP_TEXT - n,
					      "\tpush 0\n");
	}
}

/* The name of emit_shared_x86()'s entry gt_enter[_r][_<reg>], in @buf:
 * with random branches if @r, setting register @g to the passes too. */
static const char *entry_name(char *buf, int r, const struct gpr *g)
{
	sprintf(buf, "gt_enter%s%s%s", r ? "_r" : "", g ? "_" : "",
		g ? g->name[0] : "");
	return buf;
}

/* emit_shared_x86()'s entry: with random branches if @r, setting register
 * @g (if not NULL) to the passes too. */
static void emit_entry_x86(FILE *f, int r, const struct gpr *g)
{
	char name[32];

	fprintf(f,
		"\t.p2align 4\n"
		"%s:\n"
		"\tpush rbx\n\tpush rbp\n\tpush r12\n\tpush r13\n"
		"\tpush r14\n\tpush r15\n"
		"\tmov r15, rdi\n"
		"\tmov [r15 + %d], rsp\n"
		"\tlea r11, [r9 - 1]\n"
		"\tmov eax, esi\n"
		"\tneg eax\n"
		"\tand eax, r11d\n"
		"\tadd r11, rsi\n"
		"\tbsf ecx, r9d\n"
		"\tshr r11, cl\n"
		"\tmov rcx, r11\n",
		entry_name(name, r, g), DBTP_GT_SLOT_RSP);
	/* the random bytes' cursor over the first window's passes (1 to
	 * 256) and how many more times 256 passes follow (emit_function()),
	 * moved on by an odd number of 256-byte windows a call */
	if (r)
		fprintf(f,
			"\tlea r10, [r11 - 1]\n"
			"\tmov rcx, r10\n"
			"\tshr r10, 8\n"
			"\tmov [r15 + %d], r10\n"
			"\tmovzx ecx, cl\n"
			"\tadd ecx, 1\n"
			"\tmov rdx, [r15 + %d]\n"
			"\tadd rcx, rdx\n"
			"\tadd edx, %d\n"
			"\tand edx, %d\n"
			"\tmov [r15 + %d], rdx\n",
			DBTP_GT_SLOT_CHUNKS, DBTP_GT_SLOT_CURSOR, 97 * 256,
			255 * 256, DBTP_GT_SLOT_CURSOR);
	fprintf(f,
		"\tmov [r15 + %d], rcx\n"
		"\tmov rax, [r8 + rax * 8]\n",
		DBTP_GT_SLOT_COUNT);
	if (g)
		fprintf(f, "\tmov %s, rcx\n", g->name[0]);
	fprintf(f, "\tlea rsp, [r15 + %d]\n\tjmp rax\n", DBTP_GT_STACK_MID);
}

/*
 * What every x86-64 block function shares, translated once rather than
 * once a function (a DBT pays for every guest instruction it translates;
 * Valgrind about as much as for running 200 of its superblocks): the
 * entry, reached with rdi = buffer, rsi = n, r8 = the function's table of
 * copies, r9 = copies u, saves the callee-saved registers and the stack
 * pointer, points r15 at the buffer and rsp at the private stack, and
 * enters Duff's-device style at copy (-n mod u) with the passes,
 * ceil(n / u), in rcx and in the buffer; gt_enter_<reg>, one for each
 * register a function may count in (counter_reg(), pref[]), in that one
 * too; the exits, one for each of AVX and x87 state to reset, return to
 * the caller with the direction flag clear.  MXCSR
 * keeps its sticky flags across calls, as the original's did (QEMU's
 * softfloat takes the host FPU's path only once inexact is set); its
 * control bits stay the default, which every write of it in the blocks
 * loads (ldmxcsr, fxrstor).  Functions reach both through pointers:
 * a DBT that follows direct jumps into the code after them (Valgrind's
 * chasing) would translate them again for every function; only the
 * entries functions use are translated.  With @rnd, a second set,
 * gt_enter_r[_<reg>], for functions with random branches
 * (put_random()): its counters start at the cursor plus the first
 * window's passes (1 to 256), and the times 256 more passes follow go to
 * DBTP_GT_SLOT_CHUNKS (emit_function()).
 * With @far, the start of page crossings' section (put_cross()).
 */
static void emit_shared_x86(FILE *f, int rnd, int far)
{
	static const char *const pops = "\tpop r15\n\tpop r14\n\tpop r13\n"
					"\tpop r12\n\tpop rbp\n\tpop rbx\n"
					"\tret\n";

	for (int r = 0; r <= rnd; r++)
		for (int v = -1; v < NPREF; v++)
			emit_entry_x86(f, r, v < 0 ? NULL : &pref[v]);
	for (int v = 0; v < 4; v++)
		fprintf(f,
			"gt_exit%d:\n"
			"\tmov rsp, [r15 + %d]\n"
			"\tcld\n"
			"%s%s"
			"%s",
			v, DBTP_GT_SLOT_RSP, v & 1 ? "\tvzeroupper\n" : "",
			v & 2 ? "\tfninit\n" : "", pops);
	fputs("\t.pushsection .data.rel.ro,\"aw\"\n\t.p2align 3\n", f);
	for (int r = 0; r <= rnd; r++)
		for (int v = -1; v < NPREF; v++) {
			char name[32];

			entry_name(name, r, v < 0 ? NULL : &pref[v]);
			fprintf(f, "%s_p:\n\t.quad %s\n", name, name);
		}
	fprintf(f,
		"gt_exit_p:\n\t.quad gt_exit0, gt_exit1, gt_exit2, gt_exit3\n"
		"\t.popsection\n"
		"%s",
		GT_JT_HEAD);
	/* with @far, page crossings' section starts a page (and ends one,
	 * dbtp_gt_emit()): none of .text's pages is one of its */
	if (far)
		fputs(GT_FAR_ALIGN, f);
}

/* The label of copy @j of row @k (of @nb model blocks): where a DBT's
 * block counter counts its executions; a chain's copy of block X (row
 * nb + X) is gt_b<X>_v<j>. */
static void put_label(FILE *t, uint32_t nb, uint32_t k, unsigned j, int def)
{
	char name[48];

	if (k >= nb)
		snprintf(name, sizeof(name), "gt_b%u_v%u", k - nb, j);
	else if (j)
		snprintf(name, sizeof(name), "gt_b%u_c%u", k, j);
	else
		snprintf(name, sizeof(name), "gt_b%u_body", k);
	if (def)
		fprintf(t, "\t.globl %s\n%s:\n", name, name);
	else
		fputs(name, t);
}

/* What follows label .Lg<id>_<i>: (instruction i of rewritten copy @id) in
 * @text, or NULL if it is not there or nothing follows it (the branch
 * there was cut, cut_last()). */
static char *after_label(char *text, uint32_t id, uint32_t i)
{
	char label[48], *at;

	snprintf(label, sizeof(label), ".Lg%u_%u:\n", id, i);
	at = strstr(text, label);
	if (!at || !at[strlen(label)])
		return NULL;
	return at + strlen(label);
}

/*
 * Whether the operands @op (up to @end) of a flag-setting arithmetic or
 * logic instruction (fold_at()) write a general-purpose register other
 * than the stack pointer: the first operand names no memory, and no
 * operand names the stack pointer (whose moves the pass's stack-pointer
 * bookkeeping counts).
 */
static int writes_plain_reg(const char *op, const char *end)
{
	static const char *const sp[] = {"rsp", "esp", " sp", NULL};
	const char *first = memchr(op, ',', (size_t)(end - op));

	if (!first) /* inc, dec, neg: the one operand */
		first = end;
	if (memchr(op, '[', (size_t)(first - op)))
		return 0;
	for (int k = 0; sp[k]; k++)
		if (memmem(op, (size_t)(end - op), sp[k], strlen(sp[k])))
			return 0;
	return 1;
}

/*
 * x86-64: whether the instruction text @op (up to @end) sets flags and
 * nothing else that matters: `cmp` or `test`, or arithmetic or logic
 * whose other result is a register (writes_plain_reg()).
 */
static int x86_flag_setter(const char *op, const char *end)
{
	static const char *const mn[] = {
	    "cmp ", "test ", "sub ", "add ", "and ", "or ", "xor ",
	    "inc ", "dec ",  "neg ", "sbb ", "adc ", NULL};

	for (int k = 0; mn[k]; k++)
		if (!strncmp(op, mn[k], strlen(mn[k])))
			return k < 2 ||
			       writes_plain_reg(op + strlen(mn[k]) - 1, end);
	return 0;
}

/* AArch64: whether the instruction text @op sets flags and nothing else:
 * `cmp`, `cmn` or `tst`. */
static int a64_flag_setter(const char *op)
{
	static const char *const mn[] = {"cmp ", "cmn ", "tst ", NULL};

	for (int k = 0; mn[k]; k++)
		if (!strncmp(op, mn[k], strlen(mn[k])))
			return 1;
	return 0;
}

/* AArch64: block @bl ends in a b.cond, whose condition reads the flags
 * (not cbz, cbnz, tbz, tbnz). */
static int a64_ends_bcond(const struct dbtp_gt_block *bl)
{
	const uint8_t *p;
	uint32_t insn;

	if (bl->nbytes < 4 || !bl->bytes)
		return 0;
	p = bl->bytes + bl->nbytes - 4;
	insn = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
	return (insn & 0xff000010u) == 0x54000000u;
}

/* The one line after label .Lg<id>_<i>: of copy @id in @text when label
 * .Lg<id>_<i + 1>: follows it: its start, *@end its newline; else NULL. */
static char *line_at(char *text, uint32_t id, uint32_t i, char **end)
{
	char next[48], *at = after_label(text, id, i);

	snprintf(next, sizeof(next), ".Lg%u_%u:\n", id, i + 1);
	if (!at || !(*end = strchr(at, '\n')) ||
	    strncmp(*end + 1, next, strlen(next)))
		return NULL;
	return at;
}

/*
 * The instruction's text in line [@at, @end) if it works on registers
 * alone: kept as it was, after its comment sign (x86-64 `#`, AArch64
 * `//`; *@kept 1), or (x86-64) rewritten with r15 renamed (`cmp ebx,
 * r14d`; *@kept 0); else NULL.
 */
static char *reg_insn(char *at, const char *end, int a64, int *kept)
{
	char *op;

	*kept = !strncmp(at, a64 ? "\t.inst " : "\t.byte ", 7);
	if (*kept) {
		if (!(op = memchr(at, a64 ? '/' : '#', (size_t)(end - at))) ||
		    memchr(op, '[', (size_t)(end - op)) ||
		    memchr(op, '(', (size_t)(end - op))) /* "(was ...)" */
			return NULL;
		return op + (a64 ? 3 : 2);
	}
	if (a64 || memchr(at, '[', (size_t)(end - at)) ||
	    memchr(at, '#', (size_t)(end - at)))
		return NULL;
	return at + 1;
}

/*
 * The instruction before a conditional branch that ends rewritten copy
 * @id of an @n-instruction block, if it sets the flags the branch reads
 * from registers alone (x86-64, x86_flag_setter(): `cmp`, `test`, or
 * arithmetic on a register; AArch64, a64_flag_setter(): `cmp`, `cmn`,
 * `tst`, kept): 1 if kept, 2 if rewritten (r15 renamed); else 0.  *@at,
 * *@end: its line.
 */
static int flags_before(char *body, uint32_t id, uint32_t n, int a64, char **at,
			char **end)
{
	char *op;
	int kept;

	if (n < 2 || !(*at = line_at(body, id, n - 2, end)) ||
	    !(op = reg_insn(*at, *end, a64, &kept)) ||
	    !(a64 ? a64_flag_setter(op) : x86_flag_setter(op, *end)))
		return 0;
	return kept ? 1 : 2;
}

/*
 * Where the closing branch of copy @id (cut: cut_last()) read the flags
 * of the instruction right before it (flags_before()), that one cut too,
 * so that the pass counter's decrement and branch take the place of the
 * two (the register it wrote keeps what it held, as where a random test
 * takes its place, fold_at()): a pass then runs the original's
 * instructions and conditional branches; Valgrind without IR
 * optimisation evaluates each of those in a helper call, `loop` in
 * none.  flags_before()'s value.
 */
static int cut_compare(char *body, uint32_t id, uint32_t n, int a64)
{
	char *at, *end;
	int c = flags_before(body, id, n, a64, &at, &end);

	if (c && !end[1 + strcspn(end + 1, "\n") + 1])
		memmove(at, end + 1, strlen(end + 1) + 1);
	else
		c = 0;
	return c;
}

/*
 * Block @id's function: @u copies of @body (copy j's labels made unique by
 * the rewriter; its entry is gt_b<id>_body for copy 0, gt_b<id>_c<j>
 * after) between the shared entry and exit (emit_shared_x86()), so that
 * exactly n copies run; every pass ends at the tail that resets the stack
 * pointer if @reset, moves the walk to its next line of area @wa
 * (through @wg, or @ws from the area's slot: put_walks()) and counts
 * passes down: with `loop` where one pass fits it (loop_fits()), else in
 * a register the block does not use, else in the buffer; in a register,
 * its `sub` in place of the instruction whose flags the closing branch
 * read (with rcx too, rather than `loop`), where there is one
 * (cut_compare() on copy @cid, of @cn instructions, 0 if it does not end
 * in a conditional branch; its value returned).
 */
static int emit_function(FILE *f, uint32_t id, unsigned u, char *const *body,
			 const char *slots, const struct dbtp_gt_rw_stats *st,
			 int rnd, int bc, int far, const struct gpr *wg,
			 const struct gpr *ws, const struct walk_area *wa,
			 int reset, uint32_t cid, uint32_t cn)
{
	int lp, cut;
	/* (a walk kept in its slot: 4 instructions, at most 32 bytes, more
	 * in the tail) */
	const char *cr = pass_counter(
	    u, st->regs, text_bytes(body[0]) + (ws ? 32 : 0), rnd, far, &lp);
	const char *c32 = counter_reg(st->regs, 2); /* with @rnd */
	const struct gpr *wr = wg ? wg : ws;	    /* the walk's register */
	/* the register the entry sets to the passes (gt_enter_<reg>): the
	 * counter's, or the branch's that counts (put_branch_count()) */
	const struct gpr *eg = bc || (cr && !lp) ? free_gpr(st->regs) : NULL;
	char cnt[32], sp[GT_SP_TEXT], entry[32];
	int def, stub;

	cut = !bc && cr && cn ? cut_compare(body[u - 1], cid, cn, 0) : 0;
	if (cr)
		snprintf(cnt, sizeof(cnt), "%s", cr);
	else
		snprintf(cnt, sizeof(cnt), "qword ptr [r15 + %d]",
			 DBTP_GT_SLOT_COUNT);
	fprintf(f,
		"\t.p2align 4\n"
		"\t.globl gt_b%u, gt_b%u_body\n"
		"\t.type gt_b%u, @function\n"
		"gt_b%u:\n"
		"\tlea r8, [rip + .Lgt%u_tab]\n"
		"\tmov r9d, %u\n"
		"\tjmp qword ptr [rip + %s_p]\n",
		id, id, id, id, id, u, entry_name(entry, rnd, eg));
	if (reset && !bc)
		sp_reset_text(sp, st, st->sp_net);
	/* the tail: at most 16 instructions and the reset */
	dbtp_gt_emit_copies(f, id, u, body, 0,
			    bc ? 0 : 16 * 15 + (reset ? text_bytes(sp) : 0));
	if (bc) {
		fprintf(f, ".Lgt%u_exit:\n", id);
	} else {
		if (reset)
			fputs(sp, f);
		if (ws) /* the walk's line, kept in its slot */
			fprintf(f, "\tmov %s, dword ptr [r15 + %d]\n",
				wr->name[2], wa->slot);
		if (wr && wa->step) /* the next line (put_walks()) */
			fprintf(f, "\tadd %s, %u\n\tand %s, %u\n", wr->name[2],
				wa->step, wr->name[2], wa->mask);
		else if (wr)
			fprintf(f,
				"\tmov %s, dword ptr [r15 + %s + %d]\n"
				"\tand %s, %u\n",
				wr->name[2], wr->name[0],
				wa->base + DBTP_GT_WALK_NEXT, wr->name[2],
				wa->mask);
		if (ws)
			fprintf(f, "\tmov dword ptr [r15 + %d], %s\n", wa->slot,
				wr->name[2]);
		if (lp && cut)
			fprintf(f, "\tsub rcx, 1\n\tjnz .Lgt%u_top\n", id);
		else if (lp)
			fprintf(f, "\tloop .Lgt%u_top\n", id);
		else if (rnd)
			fprintf(f,
				"\tlea %s, [%s - 1]\n\ttest %s, %s\n"
				"\tjnz gt_b%u_body\n",
				c32, counter_reg(st->regs, 0), cnt, cnt, id);
		else
			fprintf(f, "\tsub %s, 1\n\tjnz gt_b%u_body\n", cnt, id);
		/* random branches (the passes left in the counter's low
		 * byte, 1..256, lea of the whole register: Valgrind stalls
		 * reloading a register it stored a byte of): 256 passes more
		 * over the next window of random bytes, as often as the entry
		 * says */
		if (rnd) {
			fprintf(f,
				"\tsub qword ptr [r15 + %d], 1\n"
				"\tjb .Lgt%u_done\n"
				"\tadd %s, %d\n"
				"\tand %s, %d\n"
				"\tadd %s, 256\n",
				DBTP_GT_SLOT_CHUNKS, id, c32, 97 * 256, c32,
				255 * 256, c32);
			fprintf(f, "\tjmp gt_b%u_body\n.Lgt%u_done:\n", id, id);
		}
	}
	/* with walks, the walk goes on where the last call left it: the
	 * exit keeps its place, and the entry goes to copy j through a stub
	 * that takes it up */
	if (wg)
		fprintf(f, "\tmov dword ptr [r15 + %d], %s\n", wa->slot,
			wg->name[2]);
	fprintf(f, "\tjmp qword ptr [rip + gt_exit_p + %d]\n%s",
		8 * ((st->uses_avx ? 1 : 0) | (st->uses_x87 ? 2 : 0)),
		far % 2 ? GT_FAR_POP : "");
	/* and the first pass's pops above the stack's middle written */
	def = reset && sp_popped(st);
	stub = wg || def;
	if (def)
		sp_reset_text(sp, st, INT32_MIN);
	for (unsigned j = 0; stub && j < u; j++) {
		fprintf(f, ".Lgt%u_w%u:\n%s", id, j, def ? sp : "");
		if (wg)
			fprintf(f, "\tmov %s, dword ptr [r15 + %d]\n",
				wg->name[2], wa->slot);
		fputs("\tjmp ", f);
		put_label(f, UINT32_MAX, id, j, 0);
		fputc('\n', f);
	}
	fprintf(f,
		"\t.size gt_b%u, .-gt_b%u\n"
		"\t.pushsection .data.rel.ro,\"aw\"\n\t.p2align 3\n"
		".Lgt%u_tab:\n",
		id, id, id);
	if (!stub) {
		dbtp_gt_emit_table(f, id, u, slots);
		return cut;
	}
	for (unsigned j = 0; j < u; j++)
		fprintf(f, "\t.quad .Lgt%u_w%u\n", id, j);
	fprintf(f, "%s\t.popsection\n", slots);
	return cut;
}

/* One assembly line as a C string literal. */
static void put_asm_line(FILE *f, const char *s, size_t n)
{
	fputs("\t\"", f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			fputc('\\', f);
		if (s[i] == '\t')
			fputs("\\t", f);
		else
			fputc(s[i], f);
	}
	fputs("\\n\"\n", f);
}

static void put_asm(FILE *f, const char *text)
{
	const char *p = text, *e;

	while (*p) {
		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		put_asm_line(f, p, (size_t)(e - p));
		p = *e ? e + 1 : e;
	}
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* The naive baseline's one group: @k blocks at random, instructions
 * matching the profiles' per-profile average. */
static int naive_group(const dbtp_gt_model *m,
		       const struct dbtp_gt_emit_opts *o,
		       struct dbtp_gt_group *g, dbtp_err *err)
{
	uint32_t nb = dbtp_gt_model_nblocks(m), k = o->naive_blocks;
	uint64_t seed = o->seed ? o->seed : 1;
	double insns = 0;
	uint8_t *taken;

	memset(g, 0, sizeof(*g));
	if (!k || k > nb)
		k = nb;
	taken = calloc(nb ? nb : 1, 1);
	g->hot = calloc(k ? k : 1, sizeof(*g->hot));
	if (!taken || !g->hot) {
		free(taken);
		free(g->hot);
		return dbtp_err_set(err, ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < nb; i++)
		insns += (double)blk(m, i)->count * blk(m, i)->ninsns;
	insns /= dbtp_gt_model_nprofiles(m);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t b;

		do
			b = (uint32_t)(xorshift(&seed) % nb);
		while (taken[b]);
		taken[b] = 1;
		g->hot[i].block = b;
		g->hot[i].theta = nearbyint(insns / k / blk(m, b)->ninsns);
	}
	g->nhot = k;
	g->alpha = 0;
	g->beta = 1;
	g->parent = -1;
	g->join_at = 1;
	g->even = 1;
	free(taken);
	return 0;
}

void dbtp_gt_summary_free(struct dbtp_gt_summary *s)
{
	free(s->stat);
	free(s->emitted);
	free(s->random);
	free(s->crossing);
	free(s->walks);
	free(s->far);
	free(s->misaligned);
	memset(s, 0, sizeof(*s));
}

static void free_texts(char **body, char *slots)
{
	for (unsigned j = 0; j < DBTP_GT_MAX_UNROLL; j++)
		free(body[j]);
	free(slots);
}

/*
 * Sequences: the blocks of a group with the same count model (theta,
 * delta) in it, in no other group, all in the dynamic loader or none,
 * run one after another in one function,
 * in address order, entered and left once a pass instead of once a block:
 * one translation per block, as in the original program, where a function
 * per block made four or five.  Only blocks that could be rewritten take
 * part; with @pre the plan is made before the copies are chosen, after,
 * only blocks with the same number of copies share a sequence.  A chain's
 * copy of X (plan_chains(): row nb + X) follows P in P's sequence, or P
 * alone and it make one.  Rows 2 * @nb in @seq_head and @seq_next.
 */
static int plan_sequences(const dbtp_gt_model *m, const struct dbtp_gt_group *g,
			  uint32_t ng, const struct rewritten *rd, int pre,
			  uint32_t *seq_head, uint32_t *seq_next, dbtp_err *err)
{
	uint32_t nb = dbtp_gt_model_nblocks(m), n1 = nb ? nb : 1;
	uint8_t *groups = calloc(n1, 1);
	uint32_t *tail = malloc(n1 * sizeof(*tail));
	/* theta, delta, copies, in the loader */
	double *key = malloc(4 * n1 * sizeof(*key));

	if (!groups || !tail || !key) {
		free(groups);
		free(tail);
		free(key);
		return dbtp_err_set(err, ENOMEM, "out of memory");
	}
	for (uint32_t b = 0; b < 2 * nb; b++)
		seq_head[b] = seq_next[b] = UINT32_MAX;
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t k = 0; k < g[i].nhot; k++)
			if (groups[g[i].hot[k].block] < 2)
				groups[g[i].hot[k].block]++;
	for (uint32_t i = 0; i < ng; i++) {
		uint32_t n = 0; /* sequences of this group */

		for (uint32_t k = 0; k < g[i].nhot; k++) {
			const struct dbtp_gt_hot *h = &g[i].hot[k];
			double u = pre ? 0 : rd[h->block].u,
			       ld = blk(m, h->block)->loader;
			uint32_t c;

			if (!rd[h->block].ok || rd[h->block].loop ||
			    groups[h->block] != 1 ||
			    rd[h->block].chain_from != UINT32_MAX)
				continue;
			for (c = 0; c < n; c++)
				if (key[4 * c] == h->theta &&
				    key[4 * c + 1] == h->delta &&
				    key[4 * c + 2] == u && key[4 * c + 3] == ld)
					break;
			if (c == n) {
				key[4 * n] = h->theta;
				key[4 * n + 1] = h->delta;
				key[4 * n + 2] = u;
				key[4 * n + 3] = ld;
				n++;
				seq_head[h->block] = h->block;
			} else {
				seq_head[h->block] = seq_head[tail[c]];
				seq_next[tail[c]] = h->block;
			}
			tail[c] = h->block;
		}
		for (uint32_t c = 0; c < n; c++)
			if (seq_head[tail[c]] == tail[c])
				seq_head[tail[c]] = UINT32_MAX; /* alone */
	}
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t v = nb + rd[b].chain_to;

		if (rd[b].chain_to == UINT32_MAX)
			continue;
		if (seq_head[b] == UINT32_MAX)
			seq_head[b] = b;
		seq_head[v] = seq_head[b];
		seq_next[v] = seq_next[b];
		seq_next[b] = v;
	}
	free(groups);
	free(tail);
	free(key);
	return 0;
}

/* A block P that may start a chain, and its count (plan_chains()). */
struct chain_cand {
	uint64_t count;
	uint32_t b;
};

/* Hotter first, then by block. */
static int by_count(const void *x, const void *y)
{
	const struct chain_cand *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/*
 * Chains: a block P whose last instruction is a direct jump or call to a
 * block X runs with a second copy of X right after it (row nb + X),
 * where the jump or call lands: in P's sequence before the next member,
 * or in a function of the two; X's own entry runs the rest of X's count
 * (@sub[2X], @sub[2X + 1]: P's theta and delta, taken off X's).  The DBTs
 * then see the original's pair: QEMU two translated blocks with a direct
 * jump between them, Valgrind one superblock, as it follows a direct jump
 * or call into its target, where X alone made a superblock a pass
 * (bench/RESULTS.md).  P and X rewritten, neither a self-loop, both in
 * one group and no other, both in the dynamic loader or neither; X in no
 * sequence (@seq_head, planned without chains: taking a member out costs
 * more passes and entries than the chain saves); X's count model at
 * least P's at every thread count (theta and theta + delta at least
 * P's); P running at least @min times in the profiles.  X goes with the
 * hottest such P; a block is in one chain at most, as P or as X.
 */
static int plan_chains(const dbtp_gt_model *m, const struct dbtp_gt_group *g,
		       uint32_t ng, struct rewritten *rd,
		       const uint32_t *seq_head, uint64_t min, double *sub,
		       dbtp_err *err)
{
	uint32_t nb = dbtp_gt_model_nblocks(m), n1 = nb ? nb : 1, nc = 0;
	uint32_t *grp = malloc(n1 * sizeof(*grp)); /* group + 1, UINT32_MAX:
						      several */
	const struct dbtp_gt_hot **hot = malloc(n1 * sizeof(*hot));
	struct chain_cand *c = malloc(n1 * sizeof(*c));
	struct dbtp_u64map at = {0}; /* address -> block + 1 */
	int rc = -1;

	if (!grp || !hot || !c)
		goto out;
	memset(grp, 0, n1 * sizeof(*grp));
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t k = 0; k < g[i].nhot; k++) {
			uint32_t b = g[i].hot[k].block;

			grp[b] = grp[b] ? UINT32_MAX : i + 1;
			hot[b] = &g[i].hot[k];
		}
	for (uint32_t b = 0; b < nb; b++) {
		const struct dbtp_gt_block *bl = blk(m, b);
		uint64_t *x;

		if (!rd[b].ok || rd[b].loop || !grp[b] || grp[b] == UINT32_MAX)
			continue;
		if (!(x = dbtp_u64map_slot(&at, bl->vaddr)))
			goto out;
		if (!*x || blk(m, (uint32_t)(*x - 1))->count < bl->count)
			*x = b + 1;
		if ((bl->br == DBTP_BR_JUMP ||
		     (bl->br == DBTP_BR_CALL && !bl->br_ind)) &&
		    bl->br_target != UINT64_MAX && bl->count >= min)
			c[nc++] = (struct chain_cand){bl->count, b};
	}
	qsort(c, nc, sizeof(*c), by_count);
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t p = c[i].b, x;
		const uint64_t *to =
		    dbtp_u64map_find(&at, blk(m, p)->br_target);
		const struct dbtp_gt_hot *hp = hot[p], *hx;

		if (!to || rd[p].chain_from != UINT32_MAX)
			continue;
		x = (uint32_t)(*to - 1);
		hx = hot[x];
		if (x == p || grp[x] != grp[p] || seq_head[x] != UINT32_MAX ||
		    blk(m, x)->loader != blk(m, p)->loader ||
		    rd[x].chain_to != UINT32_MAX ||
		    rd[x].chain_from != UINT32_MAX || hx->theta < hp->theta ||
		    hx->theta + hx->delta < hp->theta + hp->delta)
			continue;
		rd[p].chain_to = x;
		rd[x].chain_from = p;
		sub[2 * x] = hp->theta;
		sub[2 * x + 1] = hp->delta;
	}
	rc = 0;
out:
	free(grp);
	free(hot);
	free(c);
	dbtp_u64map_free(&at);
	return rc ? dbtp_err_set(err, ENOMEM, "out of memory") : 0;
}

/* Block @b's last instruction (as the model classified it): its rd->last,
 * and rd->loop if it is a direct conditional branch back to the block's
 * start (the original loops in one translated block). */
static void last_branch(const dbtp_gt_model *m, uint32_t b,
			struct rewritten *rd)
{
	const struct dbtp_gt_block *bl = blk(m, b);

	rd->last = bl->br;
	rd->loop = bl->br == DBTP_BR_COND && bl->br_target == bl->vaddr;
}

/* The mask of the k low bits of a random byte, all clear with probability
 * 2^-k nearest to @p (k = 1 ... 7). */
static int low_bits(double p)
{
	long k = lround(-log2(p));

	return (1 << (k < 1 ? 1 : k > 7 ? 7 : k)) - 1;
}

/*
 * plan_random() for AArch64's b.cond @mn (not cbz, tbz, which test a
 * register of the block's): the byte loaded into a free register, then
 * for Z (eq, ne; gt, le, since tst clears N and V) tst of its k low bits;
 * for C (hs, lo) and N != V (lt, ge, the byte zero-extended) cmp with
 * round(256p); for hi, ls cmp with one less; mi, pl, vs, vc: none.
 */
static void plan_random_a64(const char *mn, double p, struct rewritten *rd)
{
	static const char *const z[] = {"b.eq", "b.ne", "b.gt", "b.le", NULL};
	static const char *const c[] = {"b.hs", "b.lo", "b.cs", "b.cc",
					"b.lt", "b.ge", NULL};
	long imm = lround(256 * p);

	imm = imm < 1 ? 1 : imm > 128 ? 128 : imm;
	for (int i = 0; z[i]; i++)
		if (!strcmp(mn, z[i])) {
			rd->rnd_op = "tst";
			rd->rnd_imm = low_bits(p);
			return;
		}
	for (int i = 0; c[i]; i++)
		if (!strcmp(mn, c[i])) {
			rd->rnd_op = "cmp";
			rd->rnd_imm = (int)imm;
			return;
		}
	if (!strcmp(mn, "b.hi") || !strcmp(mn, "b.ls")) {
		rd->rnd_op = "cmp";
		rd->rnd_imm = (int)imm - 1;
	}
}

/*
 * --mispredict: the instruction that makes block @b's conditional branch
 * decide on a random byte (uniform, DBTP_GT_RAND), by the flags its
 * condition reads, so that it goes the less likely way with probability p,
 * the share of the block's executions the profile's predictor missed (at
 * most 1/2).  ZF (e, ne; a, be, g, le, since test clears CF, OF and, with
 * bit 7 clear, SF): test of the k low bits, p = 2^-k.  CF (b, ae) and SF
 * != OF (l, ge): cmp with an unsigned or signed immediate, p = imm / 256.
 * SF and PF (s, ns, p, np): test of one bit, p = 1/2, where p >= 1/4.  OF,
 * rcx-tests and loops: none.  AArch64: plan_random_a64(), from
 * DBTP_GT_MISS_MIN_A64.  An indirect jump or call of two or more
 * targets that the profile's predictor missed on a share p of its
 * executions (>= 1/64): the share of its table's entries (put_indirect())
 * that lead elsewhere than the next instruction with which its target
 * changes as often (random targets: any predictor misses as often).
 */
static void plan_random(const dbtp_gt_model *m, uint32_t b, dbtp_disasm *dis,
			double scale, struct rewritten *rd)
{
	static const char *const zf[] = {"je", "jne", "ja", "jbe",
					 "jg", "jle", NULL};
	const struct dbtp_gt_block *bl = blk(m, b);
	int a64 = dbtp_gt_model_arch(m) == DBTP_ARCH_AARCH64;
	int ind =
	    rd->last == DBTP_BR_IND || (rd->last == DBTP_BR_CALL && bl->br_ind);
	char text[96];
	uint32_t at;
	double p;

	rd->rnd_op = NULL;
	rd->rnd_ind = 0;
	if ((rd->last != DBTP_BR_COND && !ind) || !bl->ninsns ||
	    bl->count / dbtp_gt_model_nprofiles(m) < DBTP_GT_MISS_RUNS)
		return;
	p = (double)bl->mispredicted / (double)bl->count;
	if (p < (a64 && !ind ? DBTP_GT_MISS_MIN_A64 : DBTP_GT_MISS_MIN))
		return;
	if (ind) {
		/* n pads, one fewer than its targets, at most
		 * DBTP_GT_JT_PADS; two successive targets differ with
		 * probability q = 1 - (1 - s)^2 - s^2 / n for a share s of
		 * the entries over the pads, solved for s, q at most 3/4 and
		 * n / (n + 1) */
		unsigned n = bl->ntg < 2		 ? 0
			     : bl->ntg > DBTP_GT_JT_PADS ? DBTP_GT_JT_PADS
							 : bl->ntg - 1;
		double a, q = p < 0.75 ? p : 0.75;
		long e;

		if (!n)
			return;
		a = 1 + 1.0 / n;
		if (q > n / (n + 1.0))
			q = n / (n + 1.0);
		e = lround(
		    (a64 ? DBTP_GT_JT_ENTRIES : DBTP_GT_JT_RAND_ENTRIES) *
		    (1 - sqrt(1 - a * q)) / a);
		rd->rnd_ind = e < 1 ? 1 : (unsigned)e;
		rd->rnd_pads = n < rd->rnd_ind ? n : rd->rnd_ind;
		return;
	}
	p *= scale;
	if (p > 0.5)
		p = 0.5;
	at = bl->nbytes - bl->sizes[bl->ninsns - 1];
	if (!dbtp_disasm_one(dis, bl->bytes + at, bl->nbytes - at,
			     bl->vaddr + at, text, sizeof(text)))
		return;
	text[strcspn(text, " ")] = '\0';
	if (a64) {
		plan_random_a64(text, p, rd);
		return;
	}
	for (int i = 0; zf[i]; i++)
		if (!strcmp(text, zf[i])) {
			rd->rnd_op = "test";
			rd->rnd_imm = low_bits(p);
			return;
		}
	if (!strcmp(text, "jb") || !strcmp(text, "jae") ||
	    !strcmp(text, "jl") || !strcmp(text, "jge")) {
		long imm = lround(256 * p);

		rd->rnd_op = "cmp";
		rd->rnd_imm = (int)(imm < 1 ? 1 : imm > 128 ? 128 : imm);
		if (text[1] == 'l' || text[1] == 'g')
			rd->rnd_imm -= 128;
	} else if (p >= 0.25 && (!strcmp(text, "js") || !strcmp(text, "jns") ||
				 !strcmp(text, "jp") || !strcmp(text, "jnp"))) {
		rd->rnd_op = "test";
		rd->rnd_imm = text[strlen(text) - 1] == 's' ? 0x80 : 1;
	}
}

/* Replace the @ol bytes at offset @at of *@text with @line; -1 out of
 * memory. */
static int splice(char **text, size_t at, size_t ol, const char *line)
{
	size_t len = strlen(*text), ll = strlen(line);
	char *t = malloc(len - ol + ll + 1);

	if (!t)
		return -1;
	memcpy(t, *text, at);
	memcpy(t + at, line, ll);
	memcpy(t + at + ll, *text + at + ol, len - at - ol + 1);
	free(*text);
	*text = t;
	return 0;
}

/*
 * Put @line after label .Lg<id>_<i>: (instruction i of rewritten copy
 * @id) in *@text in place of @old, which must follow it ("": nothing),
 * unless nothing follows the label (the branch there was cut,
 * cut_last()).  1 if put, 0 if not, -1 out of memory.
 */
static int put_at(char **text, uint32_t id, uint32_t i, const char *old,
		  const char *line)
{
	char *at = after_label(*text, id, i);
	size_t ol = strlen(old);

	if (!at || strncmp(at, old, ol))
		return 0;
	return splice(text, (size_t)(at - *text), ol, line) ? -1 : 1;
}

/* Where copy @id's random bytes start: DBTP_GT_RAND less one (the pass
 * counter is at least 1) at an offset of its own, the counter's range
 * (cursor + passes) inside DBTP_GT_RAND_SIZE. */
static unsigned rand_at(uint32_t id)
{
	return DBTP_GT_RAND - 1 +
	       ((id * 2654435761u) >> 16) % (DBTP_GT_RAND_SIZE - 65536);
}

/* x86-64: where copy @id's random indices (0 to DBTP_GT_JT_RAND_ENTRIES
 * - 1) start, as rand_at() for the bytes. */
static unsigned ridx_at(uint32_t id)
{
	return rand_at(id) - DBTP_GT_RAND + DBTP_GT_RIDX;
}
_Static_assert(DBTP_GT_RIDX_SIZE == DBTP_GT_RAND_SIZE &&
		   DBTP_GT_RIDX + DBTP_GT_RIDX_SIZE <= DBTP_GT_JUMPS &&
		   DBTP_GT_JT_RAND_ENTRIES == 64 &&
		   4 * DBTP_GT_JT_RAND_ENTRIES == DBTP_GT_JT_ENTRIES,
	       "random indices (the driver's fill), four tables a room");

/* AArch64: the offset from the random bytes' pointer at which copy @id
 * reads them (put_random()). */
static unsigned rand_a64(uint32_t id)
{
	return ((id * 2654435761u) >> 16) % DBTP_GT_A64_RAND;
}
_Static_assert(DBTP_GT_RAND % 131072 == 0 && DBTP_GT_RAND_SIZE == 131072,
	       "the AArch64 random bytes' window (emit-a64.c)");

_Static_assert(DBTP_GT_JT_PADS < 8,
	       "pads within 8 aligned bytes (put_indirect())");

/* Where table @t of branch targets sits in the buffer. */
static unsigned jt_at(uint32_t t)
{
	return DBTP_GT_JUMPS + t * 8 * DBTP_GT_JT_ENTRIES;
}

/* x86-64: where the @q-th random table of a function whose tables start
 * at table @t0 sits, four to a table's room. */
static uint32_t rand_table(uint32_t t0, unsigned q)
{
	return jt_at(t0) + q * 8 * DBTP_GT_JT_RAND_ENTRIES;
}

/* The rewriter's line for copy @id's instruction @i, a branch (@op: jmp,
 * call, or ret's push) through its slot, in @buf. */
static void slot_line(char *buf, size_t n, const char *op, uint32_t id,
		      uint32_t i)
{
	snprintf(buf, n, "\t%s qword ptr [rip + .Lgs%u_%u]\n", op, id, i);
}

/* A table of @n branch targets to @jt: entry i < @k label @first[i %
 * @nfirst], the others label @rest. */
static void put_table(FILE *jt, unsigned n, char (*first)[32], unsigned nfirst,
		      unsigned k, const char *rest)
{
	for (unsigned i = 0; i < n; i++)
		fprintf(jt, "%s%s%s", i % 4 ? ", " : "\t.quad ",
			i < k ? first[i % nfirst] : rest,
			i % 4 == 3 ? "\n" : "");
}

/*
 * The @n pads of copy @id's table to @f, after the branch: gt_t<id>_<i>
 * (named in @pad) i + 1 nops before the next instruction, all from a
 * multiple of 2^@align bytes.  The pads and the next instruction on one
 * page: QEMU ends a block before an instruction on another page than the
 * block's first, so a pad before a page boundary would start two blocks
 * (the fill after the branch never runs).
 */
static void put_pads(FILE *f, uint32_t id, unsigned n, int align,
		     char (*pad)[32])
{
	if (n)
		fprintf(f, "\t.p2align %d\n", align);
	for (unsigned i = n; i-- > 0;) {
		snprintf(pad[i], sizeof(pad[i]), "gt_t%u_%u", id, i);
		fprintf(f, "%s:\n\tnop\n", pad[i]);
	}
}

/*
 * x86-64: copy @id of block @k's indirect jump or call (@call), its last
 * instruction, through a table of DBTP_GT_JT_RAND_ENTRIES targets in the
 * buffer (at offset @at) indexed by a random index in register
 * @idx (64-bit name), which @load ("": an instruction before) loads,
 * addressed with the pass counter: rd->rnd_ind entries lead into a run of
 * rd->rnd_pads one-byte nops put after the branch (gt_t<id>_<i>, i + 1
 * nops before the next instruction), the others to the next instruction
 * itself: every target starts the one block that runs the next
 * instruction, as the original's targets did.  The table's text, whose
 * addresses the driver copies into the buffer, goes to @jt.  1 if put, 0
 * if not, -1 out of memory.
 */
static int put_indirect(const struct rewritten *rd, uint32_t id, uint32_t n,
			int call, const char *load, const char *idx,
			uint32_t at, FILE *jt, char **text)
{
	unsigned pads = rd->rnd_pads;
	char old[64], pad[DBTP_GT_JT_PADS][32], next[32], *line = NULL;
	size_t len;
	FILE *f = open_memstream(&line, &len);
	int r;

	if (!f)
		return -1;
	slot_line(old, sizeof(old), call ? "call" : "jmp", id, n - 1);
	snprintf(next, sizeof(next), ".Lg%u_%u", id, n);
	fprintf(f, "%s\t%s qword ptr [r15 + %s * 8 + %u]\n", load,
		call ? "call" : "jmp", idx, at);
	put_pads(f, id, pads, 3, pad);
	fclose(f);
	r = put_at(text, id, n - 1, old, line);
	free(line);
	if (r > 0)
		put_table(jt, DBTP_GT_JT_RAND_ENTRIES, pad, pads, rd->rnd_ind,
			  next);
	return r;
}

/* Text @s..@e names a part of x86-64 register @g (dbtp_gt_x86_gpr()). */
static int names_gpr(const char *s, const char *e, int g)
{
	for (int w = 0; w < 5; w++) {
		const char *n = dbtp_gt_x86_gpr(g, w), *at = s;
		size_t l = strlen(n);

		while (l && (at = memmem(at, (size_t)(e - at), n, l)) != NULL) {
			if ((at == s || !isalnum((unsigned char)at[-1])) &&
			    (at + l == e || !isalnum((unsigned char)at[l])))
				return 1;
			at += l;
		}
	}
	return 0;
}

/*
 * x86-64: copy @id's indirect jump or call (@call) through the table at
 * @at with no helper, where the rewriter found that the register it goes
 * through (@g: its own, or its memory operand's index) was last written,
 * all of it, by instruction @w and read by none since (dbtp_gt_rw_stats'
 * ind_reg, ind_writer): that instruction loads the random index into @g
 * instead, at the copy's offset from pass counter @cr, and the branch goes
 * through the entry @g indexes (put_indirect()).  Only where the copy has
 * that instruction in one line, and the lines up to the branch name no
 * part of @g and mark no operand to walk (whose register a function
 * without a free one takes from its own).  @dry: only tell, with *@kept
 * whether that instruction was kept.  1 if put, 0 if not, -1 out of
 * memory.
 */
static int fold_table(const struct rewritten *rd, uint32_t id, uint32_t n,
		      uint32_t w, int g, int call, const char *cr, uint32_t at,
		      FILE *jt, char **text, int dry, int *kept)
{
	char old[64], next[48], line[192], *a = after_label(*text, id, w);
	const char *e, *br, *was, *we;
	int r;

	slot_line(old, sizeof(old), call ? "call" : "jmp", id, n - 1);
	snprintf(next, sizeof(next), ".Lg%u_%u:\n", id, w + 1);
	if (w + 1 >= n || !a || !(e = strchr(a, '\n')) ||
	    strncmp(e + 1, next, strlen(next)) || !strncmp(a, "\t#", 2) ||
	    !(br = after_label(*text, id, n - 1)) ||
	    strncmp(br, old, strlen(old)) || names_gpr(e, br, g) ||
	    memmem(e, (size_t)(br - e), DBTP_GT_WALK_MARK,
		   strlen(DBTP_GT_WALK_MARK)))
		return 0;
	*kept = !strncmp(a, "\t.byte ", 7);
	if (dry)
		return 1;
	/* what it was: a kept line's text after its comment sign, a
	 * rewritten one's own */
	was = *kept ? memchr(a, '#', (size_t)(e - a)) : a + 1;
	if (!was)
		return 0;
	was += *kept ? 2 : 0;
	we = was + strcspn(was, "\t\n");
	snprintf(line, sizeof(line),
		 "\tmovzx %s, byte ptr [r15 + %s + %u]\t# was %.*s\n",
		 dbtp_gt_x86_gpr(g, 1), cr, ridx_at(id), (int)(we - was), was);
	r = put_indirect(rd, id, n, call, "", dbtp_gt_x86_gpr(g, 0), at, jt,
			 text);
	if (r <= 0)
		return r;
	a = after_label(*text, id, w);
	e = strchr(a, '\n');
	return splice(text, (size_t)(a - *text), (size_t)(e + 1 - a), line) ? -1
									    : 1;
}

/*
 * AArch64: copy @id's br or blr, its instruction @n - 1 and last (the
 * rewriter's "adr xN, <next>" then the branch through xN), through table @t
 * as put_indirect() does: register @lr loads a random byte from pointer
 * @pr, at the copy's own offset (rand_a64()), and xN the entry it indexes
 * from register @jr, which holds table @t0's address (emit-a64.c), or
 * (@jr -1) from x28, which points at the data area, DBTP_GT_DATA into the
 * buffer; the pads are 4-byte nops, the pads and the next instruction in
 * one aligned 32 bytes.  1 if put, 0 if not, -1 out of memory.
 */
static int put_indirect_a64(const struct rewritten *rd, uint32_t id, uint32_t n,
			    int lr, int pr, int jr, uint32_t t0, uint32_t t,
			    FILE *jt, char **text)
{
	unsigned pads = rd->rnd_pads, off = jt_at(t) - DBTP_GT_DATA;
	char adr[48], pad[DBTP_GT_JT_PADS][32], next[32], *at, *br, *end,
	    *line = NULL;
	size_t len;
	FILE *f;
	int xn, r;

	at = after_label(*text, id, n - 1);
	snprintf(next, sizeof(next), ".Lg%u_%u", id, n);
	if (!at || sscanf(at, "\tadr x%d, ", &xn) != 1)
		return 0;
	snprintf(adr, sizeof(adr), "\tadr x%d, %s\n", xn, next);
	if (strncmp(at, adr, strlen(adr)))
		return 0;
	br = at + strlen(adr);
	if (!(end = strchr(br, '\n')))
		return 0;
	if (!(f = open_memstream(&line, &len)))
		return -1;
	fprintf(f, "\tldrb w%d, [x%d, #%u]\n", lr, pr, rand_a64(id));
	if (jr >= 0)
		fprintf(f, "\tadd x%d, x%d, x%d, lsl #3\n", xn, jr, lr);
	else
		fprintf(f,
			"\tadd x%d, x28, #%u, lsl #12\n"
			"\tadd x%d, x%d, x%d, lsl #3\n",
			xn, off >> 12, xn, xn, lr);
	fprintf(f, "\tldr x%d, [x%d, #%u]\n%.*s\n", xn, xn,
		jr >= 0 ? (t - t0) * 8 * DBTP_GT_JT_ENTRIES : off & 4095,
		(int)(end - br), br);
	put_pads(f, id, pads, 5, pad);
	fclose(f);
	r = splice(text, (size_t)(at - *text), (size_t)(end + 1 - at), line);
	free(line);
	if (r)
		return -1;
	put_table(jt, DBTP_GT_JT_ENTRIES, pad, pads, rd->rnd_ind, next);
	return 1;
}
_Static_assert((DBTP_GT_JUMPS - DBTP_GT_DATA +
		DBTP_GT_JT_MAX * 8 * DBTP_GT_JT_ENTRIES) >>
		       12 < 4096 &&
		   8 * DBTP_GT_JT_ENTRIES <= 4096 &&
		   (DBTP_GT_JUMPS - DBTP_GT_DATA) % (8 * DBTP_GT_JT_ENTRIES) ==
		       0 &&
		   (DBTP_GT_JT_PADS + 1) * 4 <= 32,
	       "AArch64 tables in reach of add and ldr (put_indirect_a64())");
/* AArch64: tables in reach of ldr's offset from a register holding the
 * first's address */
#define DBTP_GT_A64_JT_NEAR 16
_Static_assert((DBTP_GT_A64_JT_NEAR - 1) * 8 * DBTP_GT_JT_ENTRIES <= 32760,
	       "ldr's unsigned offset (put_indirect_a64())");

/* AArch64 instructions that compute a register by arithmetic alone */
static const char *const a64_alu[] = {
    "add",  "sub",  "orr",   "eor",   "and",   "bic",  "orn",  "eon", "mov",
    "movz", "movn", "movk",  "adr",   "adrp",  "lsl",  "lsr",  "asr", "ror",
    "ubfx", "sbfx", "ubfiz", "sbfiz", "sxtw",  "madd", "msub", "mul", "neg",
    "mvn",  "csel", "csinc", "csinv", "csneg", NULL};

/* Whether the text from @s to @e names register @r as w<r> or x<r>. */
static int names_reg(const char *s, const char *e, int r)
{
	for (const char *p = s; p + 1 < e; p++) {
		char *end;

		if ((*p != 'w' && *p != 'x') ||
		    (p > s &&
		     (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
		    !isdigit((unsigned char)p[1]))
			continue;
		if (strtol(p + 1, &end, 10) == r && end <= e &&
		    !isalnum((unsigned char)*end))
			return 1;
	}
	return 0;
}

/*
 * AArch64 line @s (up to its newline @e): its instruction's text in [*t,
 * *te) (a .inst's comment up to the original's, a helper's whole line),
 * and the original's in [*w, *we) (the same if kept).  2 if a .inst (the
 * rewriter's encoding of an original instruction), 1 if another
 * instruction, 0 if a label, -1 if anything else.
 */
static int a64_line(const char *s, const char *e, const char **t,
		    const char **te, const char **w, const char **we)
{
	const char *c, *was;

	if (s[0] != '\t')
		return s[0] == '.' || s[0] == 'g' ? 0 : -1;
	if (strncmp(s, "\t.inst 0x", 9)) {
		if (s[1] == '.')
			return -1;
		*t = *w = s + 1;
		*te = *we = e;
		return 1;
	}
	if (!(c = memmem(s, (size_t)(e - s), "\t// ", 4)))
		return -1;
	*t = *w = c + 4;
	*te = *we = e;
	if ((was = memmem(*t, (size_t)(e - *t), " (was ", 6))) {
		*te = was;
		*w = was + 6;
		*we = memchr(*w, ')', (size_t)(e - *w));
		if (!*we)
			return -1;
	} else if ((c = memmem(*t, (size_t)(e - *t), DBTP_GT_WALK_MARK,
			       strlen(DBTP_GT_WALK_MARK)))) {
		*te = *we = c;
	}
	return 2;
}

/* Whether instruction text @t writes w<r> or x<r> first: mnemonic one of
 * @mn, its first operand that register. */
static int writes_first(const char *t, const char *const *mn, int r)
{
	char m[16], c;
	int d, len = 0;

	if (sscanf(t, "%15s %c%d%n", m, &c, &d, &len) != 3 || d != r ||
	    (c != 'w' && c != 'x') || t[len] != ',')
		return 0;
	for (; *mn; mn++)
		if (!strcmp(m, *mn))
			return 1;
	return 0;
}

/* Whether line @s (to @e) ends with DBTP_GT_WALK_MARK: walkable. */
static int has_mark(const char *s, const char *e)
{
	return memmem(s, (size_t)(e - s), DBTP_GT_WALK_MARK,
		      strlen(DBTP_GT_WALK_MARK)) != NULL;
}

/*
 * AArch64: where copy @id's br or blr (its instruction @n - 1) takes its
 * register xN from, if the instruction before it is kept and computes xN
 * alone, by arithmetic (no memory, no flags): a switch's `add xN, xB, wI,
 * sxtb #2`, say.  That one's line in *@text at @*w (@*wl bytes) and the
 * branch's own set-up at @*at: "adr xN, <next>" (@*adr 1) or a table's
 * entry (put_indirect_a64(), @*adr 0).  0 if none.
 */
static int target_writer(char *text, uint32_t id, uint32_t n, char **w,
			 size_t *wl, char **at, int *adr)
{
	const char *t, *te, *o, *oe;
	char *e, *br;
	int xn = -1;

	if (n < 2 || !(*w = after_label(text, id, n - 2)) ||
	    !(*at = after_label(text, id, n - 1)))
		return 0;
	*adr = !strncmp(*at, "\tadr x", 6);
	/* the branch: the set-up's last line */
	for (br = *at;
	     br && strncmp(br, "\tbr x", 5) && strncmp(br, "\tblr x", 6);
	     br = strchr(br, '\n') ? strchr(br, '\n') + 1 : NULL)
		if (!strncmp(br, ".L", 2))
			return 0;
	if (!br || sscanf(br, "\t%*s x%d", &xn) != 1)
		return 0;
	/* the writer: a kept .inst, "<mn> xN, ..." by arithmetic alone */
	if (!(e = strchr(*w, '\n')) || a64_line(*w, e, &t, &te, &o, &oe) != 2 ||
	    o != t || memchr(t, '[', (size_t)(te - t)) ||
	    !writes_first(t, a64_alu, xn) || t[strcspn(t, " ") + 1] != 'x')
		return 0;
	*wl = (size_t)(e + 1 - *w);
	return 1;
}

/*
 * AArch64: in every copy of block @k (@u of them in @body), fold the
 * instruction that computes its br's or blr's register (target_writer())
 * into the branch's set-up: the `adr` takes its place (its text after
 * the adr's), or a table's entry overwrites the register it computed.
 * The block then runs one helper fewer and that instruction rewritten one
 * for one; only where every copy has it.  1 if folded, 0 if not, -1 out
 * of memory.
 */
static int fold_target_a64(char **body, unsigned u, uint32_t k,
			   const struct dbtp_gt_block *bl,
			   struct dbtp_gt_rw_stats *stat)
{
	char *w, *at, *c, line[320], was[256];
	size_t wl;
	int adr;

	for (unsigned j = 0; j < u; j++)
		if (!target_writer(body[j], k * DBTP_GT_MAX_UNROLL + j,
				   bl->ninsns, &w, &wl, &at, &adr))
			return 0;
	for (unsigned j = 0; j < u; j++) {
		size_t wo, al = 0;

		target_writer(body[j], k * DBTP_GT_MAX_UNROLL + j, bl->ninsns,
			      &w, &wl, &at, &adr);
		wo = (size_t)(w - body[j]);
		c = strstr(w, "\t// ") + 4;
		snprintf(was, sizeof(was), "%.*s", (int)(w + wl - 1 - c), c);
		if (adr) { /* "\tadr xN, <next>\n" moves up */
			al = (size_t)(strchr(at, '\n') + 1 - at);
			snprintf(line, sizeof(line), "%.*s\t// was %s\n",
				 (int)(al - 1), at, was);
		} else {
			snprintf(line, sizeof(line),
				 "\t// %s: the table's entry below\n", was);
		}
		/* the adr after the writer first: the writer stays at wo */
		if ((adr && splice(&body[j], (size_t)(at - body[j]), al, "")) ||
		    splice(&body[j], wo, wl, line))
			return -1;
	}
	stat->n[DBTP_GT_KEPT]--;
	stat->n[DBTP_GT_REWRITTEN]++;
	stat->helpers--;
	return 1;
}

/* A copy's switch through a table (table_parts_a64()). */
struct a64_fold {
	/* where its lines are: the load, the base, the add, the set-up */
	size_t at[4], len[4];
	int n, b, i;	    /* registers xN, xB and the index */
	int l_kept, b_kept; /* the load's and the base's lines kept */
	int l_mark;	    /* the load's operand walkable */
	char was[3][128];   /* the original's load, base and add */
};

/*
 * AArch64: the parts of copy @id (of @n instructions) that a switch's
 * table of random targets can take the places of: its br or blr xN after
 * the rewriter's `adr xN, <next>`, xN computed right before by a kept
 * `add xN, xB, wI` (xI, extended or shifted), the last line before that
 * to name the index register a load into it and the last to name xB an
 * arithmetic write of it (gcc's switch: `ldrb w2, [x21, w2, uxtw]`, `adr
 * x4, ...`, `add x2, x4, w2, sxtb #2`, `br x2`).  1 if found, in @p.
 */
static int table_parts_a64(char *text, uint32_t id, uint32_t n,
			   struct a64_fold *p)
{
	static const char *const load[] = {
	    "ldrb",  "ldrh", "ldr",    "ldrsb",	 "ldrsh",  "ldrsw", "ldurb",
	    "ldurh", "ldur", "ldursb", "ldursh", "ldursw", NULL};
	const char *a, *s, *e, *from, *t, *te, *w, *we;
	char want[64], c;
	int xn, len = 0, fl = 0, fb = 0;

	memset(p, 0, sizeof(*p));
	if (n < 3 || !(a = after_label(text, id, n - 2)) ||
	    !(s = after_label(text, id, n - 1)) ||
	    sscanf(s, "\tadr x%d, ", &p->n) != 1)
		return 0;
	snprintf(want, sizeof(want), "\tadr x%d, .Lg%u_%u\n", p->n, id, n);
	if (strncmp(s, want, strlen(want)) ||
	    sscanf(s + strlen(want), "\t%*[bl]r x%d", &xn) != 1 || xn != p->n ||
	    !(e = strchr(s + strlen(want), '\n')))
		return 0;
	p->at[3] = (size_t)(s - text);
	p->len[3] = (size_t)(e + 1 - s);
	/* the add, kept */
	if (!(e = strchr(a, '\n')) || a64_line(a, e, &t, &te, &w, &we) != 2 ||
	    w != t ||
	    sscanf(t, "add x%d, x%d, %c%d%n", &xn, &p->b, &c, &p->i, &len) !=
		4 ||
	    xn != p->n || (c != 'w' && c != 'x') || p->b == p->i ||
	    (t[len] != ',' && t + len != te))
		return 0;
	p->at[2] = (size_t)(a - text);
	p->len[2] = (size_t)(e + 1 - a);
	snprintf(p->was[2], sizeof(p->was[2]), "%.*s", (int)(te - t), t);
	/* back from the add to the copy's first instruction */
	snprintf(want, sizeof(want), ".Lg%u_0:\n", id);
	if (!(from = strstr(text, want)) || from > a)
		return 0;
	for (e = a - 1; e > from && !(fl && fb); e = s - 1) {
		int ni, nb, k, kind;

		for (s = e; s > text && s[-1] != '\n'; s--)
			;
		if ((kind = a64_line(s, e, &t, &te, &w, &we)) <= 0) {
			if (kind < 0)
				return 0;
			continue;
		}
		ni = names_reg(t, te, p->i);
		nb = names_reg(t, te, p->b);
		if (ni && !fl) { /* the index: loaded */
			if ((nb && !fb) || kind != 2 ||
			    !writes_first(t, load, p->i))
				return 0;
			k = 0;
			fl = 1;
			p->l_kept = w == t;
			p->l_mark = has_mark(s, e);
		} else if (nb && !fb) { /* the base: computed */
			if (kind != 2 || memchr(t, '[', (size_t)(te - t)) ||
			    !writes_first(t, a64_alu, p->b))
				return 0;
			k = 1;
			fb = 1;
			p->b_kept = w == t;
		} else {
			continue;
		}
		p->at[k] = (size_t)(s - text);
		p->len[k] = (size_t)(e + 1 - s);
		snprintf(p->was[k], sizeof(p->was[k]), "%.*s", (int)(we - w),
			 w);
	}
	return fl && fb;
}

/*
 * AArch64: copy @id's switch (table_parts_a64()) through a table of
 * random targets with no helper: the index's load loads the random byte
 * (as put_indirect_a64()'s own load did), the base's line points xB at the
 * copy's table, which starts a page of the buffer (the next even table
 * number, *@njt; an odd one left empty), and the add loads the entry, `ldr
 * xN, [xB, xI, lsl #3]`; the branch and the pads follow as in
 * put_indirect_a64().  1 if put, 0 if not, -1 out of memory.
 */
static int put_switch_a64(const struct rewritten *rd, uint32_t id, uint32_t n,
			  int pr, uint32_t *njt, FILE *jt, char **text)
{
	struct a64_fold p;
	char line[4][256], pad[DBTP_GT_JT_PADS][32], next[32], *setup = NULL;
	const char *br;
	size_t len;
	unsigned order[4] = {3, 2, 0, 1};
	FILE *f;

	if (!table_parts_a64(*text, id, n, &p))
		return 0;
	if (*njt % 2) {
		fprintf(jt, "\t.zero %d\n", 8 * DBTP_GT_JT_ENTRIES);
		(*njt)++;
	}
	snprintf(next, sizeof(next), ".Lg%u_%u", id, n);
	snprintf(line[0], sizeof(line[0]),
		 "\tldrb w%d, [x%d, #%u]\t// was %s\n", p.i, pr, rand_a64(id),
		 p.was[0]);
	snprintf(line[1], sizeof(line[1]),
		 "\tadd x%d, x28, #%u, lsl #12\t// was %s\n", p.b,
		 (jt_at(*njt) - DBTP_GT_DATA) >> 12, p.was[1]);
	snprintf(line[2], sizeof(line[2]),
		 "\tldr x%d, [x%d, x%d, lsl #3]\t// was %s\n", p.n, p.b, p.i,
		 p.was[2]);
	if (!(f = open_memstream(&setup, &len)))
		return -1;
	br = strchr(*text + p.at[3], '\n') + 1;
	fprintf(f, "%.*s", (int)(*text + p.at[3] + p.len[3] - br), br);
	put_pads(f, id, rd->rnd_pads, 5, pad);
	fclose(f);
	if (p.at[0] < p.at[1]) { /* from the end, so that offsets hold */
		order[2] = 1;
		order[3] = 0;
	}
	for (unsigned i = 0; i < 4; i++)
		if (splice(text, p.at[order[i]], p.len[order[i]],
			   order[i] == 3 ? setup : line[order[i]])) {
			free(setup);
			return -1;
		}
	free(setup);
	put_table(jt, DBTP_GT_JT_ENTRIES, pad, rd->rnd_pads, rd->rnd_ind, next);
	return 1;
}
_Static_assert((DBTP_GT_JUMPS - DBTP_GT_DATA) % 4096 == 0 &&
		   2 * 8 * DBTP_GT_JT_ENTRIES == 4096,
	       "an even table starts a page (put_switch_a64())");

/*
 * Whether every copy of block @k (@u in @body) is a switch that
 * put_switch_a64() can put through a table with no helper, the copies
 * alike; the first's parts in @p.
 */
static int switch_a64(char *const *body, unsigned u, uint32_t k, uint32_t n,
		      struct a64_fold *p)
{
	struct a64_fold q;

	for (unsigned j = 0; j < u; j++)
		if (!table_parts_a64(body[j], k * DBTP_GT_MAX_UNROLL + j, n,
				     j ? &q : p) ||
		    (j && (q.l_kept != p->l_kept || q.b_kept != p->b_kept ||
			   q.l_mark != p->l_mark)))
			return 0;
	return u > 0;
}

/* A switch put through a table (put_switch_a64(), @sw its parts) or
 * counting passes (put_branch_count_a64(), @add 0: its add kept) in its
 * block's counts @s: the adr gone, the load, the base and the add
 * rewritten. */
static void switch_stats(struct dbtp_gt_rw_stats *s, const struct a64_fold *sw,
			 uint32_t add)
{
	uint32_t f = add + (uint32_t)sw->l_kept + (uint32_t)sw->b_kept;

	s->n[DBTP_GT_KEPT] -= f;
	s->n[DBTP_GT_REWRITTEN] += f;
	s->helpers--;
	s->walkable -= (uint32_t)sw->l_mark;
}

/* The shift of switch @sw's add, if it scales by at most 4 and a byte
 * at that scale reaches past @lines instruction lines (the exit of a
 * function of them: put_branch_count_a64()); else -1. */
static int switch_reach(const struct a64_fold *sw, uint32_t lines)
{
	char ext[8] = "";
	int sh = 0;
	uint32_t lim;
	/* the add's index operand: "wI[, <extend|lsl> #sh]" */
	const char *x = strchr(sw->was[2], ',');

	x = x ? strchr(x + 1, ',') : NULL;
	x = x ? strchr(x + 1, ',') : NULL;
	if (x && sscanf(x, ", %7[a-z] #%d", ext, &sh) < 1)
		return -1;
	lim = strcmp(ext, "sxtb") ? 255 : 127;
	return sh >= 0 && sh <= 2 && 4 * (lines + 1) <= lim << sh ? sh : -1;
}

/*
 * AArch64: put_branch_count()'s counterpart, for function @b of one copy
 * (@body) whose last member @last ends in a switch (table_parts_a64(),
 * @sw its parts): the switch counts the passes.  Its load reads the next
 * of the function's pass bytes through the pass counter, which the entry
 * points just past the pass count's byte (`ldrb wI, [xC, #-1]!`; 0s, the
 * last the exit's distance from the start over the add's scale:
 * emit-a64.c), its base is the function's start (`adr xB,
 * gt_b<b>_body`), and its add, kept, computes the start or, at the last
 * pass, the exit: the original's instructions, one load among them, in
 * one translated block a pass, with no tail.  Only where the add scales
 * by at most 4 and the exit is in reach of a byte at that scale (the
 * function's lines counted, 4 bytes each).  The scale's shift in
 * *@shift; the counts in @sum.  1 if put, 0 if not, -1 out of memory.
 */
static int put_branch_count_a64(const dbtp_gt_model *m, uint32_t b,
				uint32_t last, char **body,
				const struct dbtp_gt_rw_stats *st, int *shift,
				struct dbtp_gt_summary *sum)
{
	uint32_t n = blk(m, last)->ninsns;
	int cr = dbtp_gt_a64_reg(st->regs, 0), sh;
	char line[2][256], *at;
	struct a64_fold sw;

	if (cr < 0 || !switch_a64(body, 1, last, n, &sw) ||
	    (sh = switch_reach(&sw, text_lines(body[0]))) < 0)
		return 0;
	snprintf(line[0], sizeof(line[0]),
		 "\tldrb w%d, [x%d, #-1]!\t// was %s\n", sw.i, cr, sw.was[0]);
	snprintf(line[1], sizeof(line[1]),
		 "\tadr x%d, gt_b%u_body\t// was %s\n", sw.b, b, sw.was[1]);
	/* from the end, so that offsets hold: the adr before the branch
	 * goes, the add stays, then the load and the base */
	at = strchr(body[0] + sw.at[3], '\n') + 1;
	if (splice(&body[0], sw.at[3], (size_t)(at - body[0]) - sw.at[3], ""))
		return -1;
	for (int k = sw.at[0] > sw.at[1] ? 0 : 1, i = 0; i < 2; i++, k ^= 1)
		if (splice(&body[0], sw.at[k], sw.len[k], line[k]))
			return -1;
	switch_stats(&sum->stat[last], &sw, 0);
	*shift = sh;
	return 1;
}

/* An AArch64 pre- or post-indexed access: the rewriter's offset form on
 * x28 and the add or sub of its step to the base register after it
 * (fold_writebacks_a64()). */
struct a64_wb {
	size_t at, len; /* its two lines */
	unsigned need;	/* the alignment its access needs */
	long imm;	/* the step */
	int pre;	/* pre-indexed */
	int marked;	/* walkable */
	char now[96];	/* the access up to its address's "[" */
	char was[96];	/* the original */
};

/* The bytes an access of mnemonic @mn moves to or from register @r
 * (b, h, w, s, x, d, q), both of a pair's. */
static unsigned access_bytes(const char *mn, char r)
{
	size_t n = strlen(mn);
	unsigned el = 4;

	if (!strcmp(mn, "ldrsw") || !strcmp(mn, "ldpsw"))
		return mn[2] == 'p' ? 8 : 4;
	if (mn[n - 1] == 'b' || mn[n - 1] == 'h') /* ldrb, ldrsh ... */
		return mn[n - 1] == 'b' ? 1 : 2;
	if (r == 'b' || r == 'h')
		el = r == 'b' ? 1 : 2;
	else if (r == 'x' || r == 'd')
		el = 8;
	else if (r == 'q')
		el = 16;
	return mn[n - 1] == 'p' ? 2 * el : el;
}

/*
 * The access that starts at @s (its line up to @e) if it is a pre- or
 * post-indexed load or store of registers (not of sp, no SIMD structure)
 * followed by its base register's update.  1 if so, in @wb.
 */
static int writeback_at(const char *text, const char *s, const char *e,
			struct a64_wb *wb)
{
	static const char *const mns[] = {
	    "ldr",   "str",   "ldrb", "strb", "ldrh",  "strh", "ldrsb",
	    "ldrsh", "ldrsw", "ldp",  "stp",  "ldpsw", NULL};
	const char *t, *te, *w, *we, *br, *h, *he;
	char mn[16], reg, want[64];
	int n, len = 0, ok = 0;
	long imm;

	if (a64_line(s, e, &t, &te, &w, &we) != 2 || w == t ||
	    sscanf(t, "%15s %c%n", mn, &reg, &len) != 2)
		return 0;
	for (int i = 0; mns[i]; i++)
		ok |= !strcmp(mn, mns[i]);
	/* the original's address: [xN, #imm]! or [xN], #imm */
	if (!ok || !(br = memchr(w, '[', (size_t)(we - w))) ||
	    sscanf(br, "[x%d%n", &n, &len) != 1 || names_reg(w, br, n))
		return 0;
	wb->pre = we[-1] == '!';
	if (wb->pre ? sscanf(br + len, ", #%li]!", &imm) != 1
		    : sscanf(br + len, "], #%li", &imm) != 1)
		return 0;
	/* the base register's update, the next line */
	h = e + 1;
	he = strchr(h, '\n');
	snprintf(want, sizeof(want), "\t%s x%d, x%d, #%ld",
		 imm < 0 ? "sub" : "add", n, n, imm < 0 ? -imm : imm);
	if (!imm || !he || (size_t)(he - h) != strlen(want) ||
	    strncmp(h, want, strlen(want)) ||
	    !(br = memchr(t, '[', (size_t)(te - t))) ||
	    strncmp(br, "[x28", 4) || br - t >= (long)sizeof(wb->now) ||
	    we - w >= (long)sizeof(wb->was))
		return 0;
	wb->at = (size_t)(s - text);
	wb->len = (size_t)(he + 1 - s);
	wb->need = access_bytes(mn, reg) > 16 ? 16 : access_bytes(mn, reg);
	wb->imm = imm;
	wb->marked = has_mark(s, e);
	snprintf(wb->now, sizeof(wb->now), "%.*s", (int)(br - t), t);
	snprintf(wb->was, sizeof(wb->was), "%.*s", (int)(we - w), w);
	return 1;
}

/* How far a pass's folded writebacks may move their register from the
 * middle of the data area, and still address it. */
#define DBTP_GT_A64_WB_SPAN (DBTP_GT_DATA_SIZE / 2 - 64)

/* AArch64: a pass's pre- and post-indexed accesses by the alignment
 * class a (0..4) that they may fold in (fold_writebacks_a64()): how
 * many, how far their steps take the base in all and in sum. */
struct wb_plan {
	unsigned count[5];
	long span[5], drift[5];
};

/* The accesses of copy @text to @p. */
static void wb_add(const char *text, struct wb_plan *p)
{
	struct a64_wb wb;

	for (const char *s = text, *e; (e = strchr(s, '\n')); s = e + 1)
		if (writeback_at(text, s, e, &wb))
			for (int a = 0; a < 5; a++)
				if (wb.need <= 1u << a &&
				    wb.imm % (1 << a) == 0) {
					p->count[a]++;
					p->span[a] += labs(wb.imm);
					p->drift[a] += wb.imm;
				}
}

/* The class of @p that folds the most accesses, or -1. */
static int wb_best(const struct wb_plan *p)
{
	int best = -1;

	for (int a = 0; a < 5; a++)
		if (p->count[a] && p->span[a] <= DBTP_GT_A64_WB_SPAN &&
		    (best < 0 || p->count[a] >= p->count[best]))
			best = a;
	return best;
}

/* The passes a call in which class @a's base, pointed at the middle of
 * the data area at the entry and drifting by the pass's steps, still
 * addresses it; UINT32_MAX if the steps add up to none. */
static uint32_t wb_passes(const struct wb_plan *p, int a)
{
	unsigned long d = (unsigned long)labs(p->drift[a]);

	if (!d)
		return UINT32_MAX;
	d = (unsigned long)(DBTP_GT_A64_WB_SPAN - p->span[a]) / d + 1;
	return d < UINT32_MAX ? (uint32_t)d : UINT32_MAX;
}

/*
 * AArch64: the pre- and post-indexed accesses of a function's @u copies
 * in @body (function registers @st) address a free register of its own,
 * the writebacks' base (dbtp_gt_a64_reg(), the sixth), which the entry
 * points at the middle of the data area: `str w0, [x24], #4` instead of
 * `str w0, [x28]` and `add x19, x19, #4`, one for one.  Those whose steps
 * are multiples of one alignment that each of them needs, the largest
 * such set, so that every access stays aligned; no more than
 * DBTP_GT_A64_WB_SPAN of steps a pass.  The base drifts by the pass's
 * steps from pass to pass, within the data area for *@passes a call
 * (wb_passes()); where that is fewer than DBTP_GT_SP_PASSES, the tail
 * points it back every pass (emit-a64.c), and where it is fewer than
 * @least, none folds.  The register, or -1 if none folds; -2 out of
 * memory.  Notes the helpers gone in @sum.
 */
static int fold_writebacks_a64(char **body, unsigned u,
			       const struct dbtp_gt_rw_stats *st,
			       uint32_t least, uint32_t *passes,
			       struct dbtp_gt_summary *sum)
{
	int sr = dbtp_gt_a64_reg(st->regs, 5), best;
	struct wb_plan wp = {{0}, {0}, {0}};
	struct a64_wb wb;

	if (sr < 0)
		return -1;
	for (unsigned j = 0; j < u; j++)
		wb_add(body[j], &wp);
	if ((best = wb_best(&wp)) < 0 ||
	    (*passes = wb_passes(&wp, best)) < least)
		return -1;
	for (unsigned j = 0; j < u; j++) {
		uint32_t id = 0;

		for (size_t at = 0; body[j][at];) {
			char *s = body[j] + at, *e = strchr(s, '\n'), line[256];

			if (!e)
				break;
			sscanf(s, ".Lg%" SCNu32 "_", &id);
			if (!writeback_at(body[j], s, e, &wb) ||
			    wb.need > 1u << best || wb.imm % (1 << best)) {
				at = (size_t)(e + 1 - body[j]);
				continue;
			}
			if (wb.pre)
				snprintf(line, sizeof(line),
					 "\t%s[x%d, #%ld]!\t// was %s\n",
					 wb.now, sr, wb.imm, wb.was);
			else
				snprintf(line, sizeof(line),
					 "\t%s[x%d], #%ld\t// was %s\n", wb.now,
					 sr, wb.imm, wb.was);
			if (splice(&body[j], at, wb.len, line))
				return -2;
			at += strlen(line);
			if (j == 0) { /* the block's copies fold alike */
				sum->stat[id / DBTP_GT_MAX_UNROLL].helpers--;
				sum->stat[id / DBTP_GT_MAX_UNROLL].walkable -=
				    (uint32_t)wb.marked;
			}
		}
	}
	return sr;
}
_Static_assert(DBTP_GT_DATA_SIZE / 2 == 4 << 12,
	       "the writebacks' base: add xS, x28, #4, lsl #12 (emit-a64.c)");

/* The L1 misses an execution below which a member's random test may take
 * the place of a compare whose operand was marked to walk (fold_at())
 * though its other operands could not walk them all: those walks would
 * be a few in a thousand passes. */
#define GT_FOLD_WALK 0.01

/*
 * --mispredict: put the random test @line (plan_random()) in place of
 * instruction @i of copy @id in *@text, the one before its branch, if
 * that one sets the flags, from registers and kept as it was (x86-64
 * `cmp`, `test`; AArch64 `cmp`, `cmn`, `tst`) or (x86-64) rewritten,
 * from registers (r15 renamed) or the data area, its operand marked to
 * walk only if @marked: the test sets the flags the branch reads, which
 * that one would have set for nothing, reading memory where it did.  So
 * also (x86-64) for an arithmetic or logic one whose other result is a
 * register of the block's (`dec r9d`, `sub r8, qword ptr [r15 + 4112]`):
 * the generated program's registers hold no address, count or value
 * that its safety rests on (the rewriting's), so the register may keep
 * what it held.  Not where the branch was cut (cut_last()).  1 if put in
 * place of a kept one, 2 of a rewritten one, 3 of a marked one, 0 if
 * not, -1 out of memory.
 */
static int fold_at(char **text, uint32_t id, uint32_t i, const char *line,
		   int a64, int marked)
{
	size_t ml = strlen(DBTP_GT_WALK_MARK);
	char *at, *nl, *end, *op, *c;
	int kept, mark = 0, ok;

	/* one line, then the branch's label with the branch after it */
	if (!(at = line_at(*text, id, i, &nl)) ||
	    !nl[1 + strcspn(nl + 1, "\n") + 1])
		return 0;
	end = nl + 1;
	/* the original encoding, with its text after the comment; or the
	 * rewritten instruction, on registers or on the data area (marked
	 * only if @marked) */
	if (!(op = reg_insn(at, end, a64, &kept))) {
		if (kept || a64 ||
		    !memmem(at, (size_t)(end - at), "[r15 + ", 7))
			return 0;
		c = memchr(at, '#', (size_t)(end - at));
		mark = c && c - 1 + ml + 1 == end &&
		       !strncmp(c - 1, DBTP_GT_WALK_MARK, ml);
		if (c && (!mark || !marked))
			return 0;
		op = at + 1;
	}
	ok = a64 ? a64_flag_setter(op) : x86_flag_setter(op, end);
	if (!ok)
		return 0;
	if (splice(text, (size_t)(at - *text), (size_t)(end - at), line))
		return -1;
	return kept ? 1 : 2 + mark;
}

static unsigned misalignable(const char *text);

/* The unaligned accesses an execution that block @bl's copies make in a
 * function of @u copies (put_unaligned()): its profiled ones, or 0 where
 * they would round to none in a pass. */
static double unaligned_to_make(const struct dbtp_gt_block *bl, unsigned u)
{
	double x = bl->count ? (double)bl->unaligned / bl->count : 0;

	return x * u >= 0.5 ? x : 0;
}

/*
 * --mispredict: put each member's random test (plan_random()) before its
 * last branch in every copy of function @b's @body that still has it,
 * addressing the random bytes with the pass counter (cursor + passes
 * left, DBTP_GT_SLOT_CURSOR), at an offset of its own for every member
 * and copy (rand_at()); an indirect branch so planned goes through a table
 * (put_indirect()), written to @jt, *@njt tables so far.  Such a function
 * counts in a register (counter_reg()), never with `loop` or in the
 * buffer: none there, no tests; tables need a second one.  AArch64 has
 * no memory operand to test: a free register points at the random bytes
 * (moved on a byte a pass, emit-a64.c) and another loads the byte, at an
 * offset below DBTP_GT_A64_RAND of its own, before the test or the
 * table's entry (put_indirect_a64(); *@jreg the register that the
 * function's entry points at its first table, or -1).  Notes the blocks
 * in @sum (count_blocks()); 1 if it put any, -1 out of memory.
 */
static int put_random(const dbtp_gt_model *m, const struct rewritten *rd,
		      const uint32_t *seq_next, uint32_t b, char **body,
		      const struct dbtp_gt_rw_stats *st, FILE *jt,
		      uint32_t *njt, int *jreg, struct dbtp_gt_summary *sum)
{
	int a64 = dbtp_gt_model_arch(m) == DBTP_ARCH_AARCH64;
	const struct gpr *cg = a64 ? NULL : free_gpr(st->regs);
	const struct gpr *sg = cg ? free_gpr(st->regs | 1u << cg->n) : NULL;
	/* AArch64: the random bytes' pointer, the register they load, and
	 * the one that holds the function's first table if all are in reach
	 * of it */
	int pr = a64 ? dbtp_gt_a64_reg(st->regs, 1) : -1,
	    lr = a64 ? dbtp_gt_a64_reg(st->regs, 2) : -1,
	    jr = a64 ? dbtp_gt_a64_reg(st->regs, 3) : -1;
	unsigned u = rd[b].u, tables = 0, q = 0; /* q: x86-64 tables put */
	uint32_t t0 = *njt;
	struct a64_fold sw;
	int rnd = 0;

	*jreg = -1;
	if (a64 ? lr < 0 : !cg)
		return 0;
	/* (a switch's table takes up to two table numbers, put_switch_a64()) */
	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k])
		tables +=
		    rd[k].rnd_ind
			? u * (1 + (a64 && switch_a64(body, u, k,
						      blk(m, k)->ninsns, &sw)))
			: 0;
	if (tables > DBTP_GT_A64_JT_NEAR)
		jr = -1;
	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
		const struct dbtp_gt_block *bl = blk(m, k);
		int swk = a64 && rd[k].rnd_ind &&
			  switch_a64(body, u, k, bl->ninsns, &sw);
		const struct dbtp_gt_rw_stats *bs = &sum->stat[k];
		int call = rd[k].last == DBTP_BR_CALL, fkept = 0;
		/* x86-64: the table in the place of the instruction that
		 * writes the branch's register (decided on the first copy) */
		int fx =
		    !a64 && rd[k].rnd_ind && bs->ind_writer &&
		    fold_table(&rd[k], k * DBTP_GT_MAX_UNROLL, bl->ninsns,
			       bs->ind_writer - 1, bs->ind_reg, call,
			       cg->name[0], 0, NULL, &body[0], 1, &fkept) > 0;
		/* a compare marked to walk: its misses walked by the
		 * block's other operands, or few; and its operands that can
		 * make unaligned accesses (put_unaligned()) one more than the
		 * block's an execution, or none to make */
		double ux = unaligned_to_make(bl, u);
		int marked = (!ux || ux + 1 <= misalignable(rd[k].body[0])) &&
			     (rd[k].walk < GT_FOLD_WALK ||
			      rd[k].walk + 1 <= bs->walkable);
		int any = 0, folded = 0, mfold = 0, mmark = 0,
		    ind = rd[k].rnd_ind && (a64 || sg || fx) &&
			  (a64 ? *njt + (1 + swk) * u : t0 + (q + u + 3) / 4) <=
			      DBTP_GT_JT_MAX;

		for (unsigned j = 0; (rd[k].rnd_op || ind) && j < u; j++) {
			uint32_t id = k * DBTP_GT_MAX_UNROLL + j;
			char line[96];
			int r;

			if (ind && swk) {
				r = put_switch_a64(&rd[k], id, bl->ninsns, pr,
						   njt, jt, &body[j]);
				*njt += r > 0;
			} else if (ind && fx) {
				int kept;

				r = fold_table(
				    &rd[k], id, bl->ninsns, bs->ind_writer - 1,
				    bs->ind_reg, call, cg->name[0],
				    rand_table(t0, q), jt, &body[j], 0, &kept);
				q += r > 0;
			} else if (ind && a64) {
				r = put_indirect_a64(&rd[k], id, bl->ninsns, lr,
						     pr, jr, t0, *njt, jt,
						     &body[j]);
				*njt += r > 0;
				if (r > 0)
					*jreg = jr;
			} else if (ind) {
				snprintf(line, sizeof(line),
					 "\tmovzx %s, byte ptr [r15 + %s + "
					 "%u]\n",
					 sg->name[2], cg->name[0], ridx_at(id));
				r = put_indirect(&rd[k], id, bl->ninsns, call,
						 line, sg->name[0],
						 rand_table(t0, q), jt,
						 &body[j]);
				q += r > 0;
			} else {
				if (a64)
					snprintf(line, sizeof(line),
						 "\tldrb w%d, [x%d, #%u]\n"
						 "\t%s w%d, #%d\n",
						 lr, pr, rand_a64(id),
						 rd[k].rnd_op, lr,
						 rd[k].rnd_imm);
				else
					snprintf(line, sizeof(line),
						 "\t%s byte ptr [r15 + %s + "
						 "%u], %d\n",
						 rd[k].rnd_op, cg->name[0],
						 rand_at(id), rd[k].rnd_imm);
				r = 0;
				if (bl->ninsns >= 2)
					r = fold_at(&body[j], id,
						    bl->ninsns - 2, line, a64,
						    marked);
				folded |= r == 1;
				mfold |= r >= 2;
				mmark |= r == 3;
				if (!r)
					r = put_at(&body[j], id, bl->ninsns - 1,
						   "", line);
			}
			if (r < 0)
				return -1;
			any |= r > 0;
		}
		/* 2: indirect (count_blocks()); a folded test takes the place
		 * of a kept instruction; AArch64: two helpers, or three or
		 * four for a table (put_indirect_a64(), its adr the
		 * rewriter's) less one */
		sum->random[k] = (uint8_t)(any ? 1 + ind : 0);
		if (any && swk) {
			switch_stats(&sum->stat[k], &sw, 1);
		} else if (any && fx) { /* no helper; the writer rewritten */
			folded = fkept;
		} else {
			sum->stat[k].helpers +=
			    (uint32_t)any * (a64 ? 2 + (ind && jr < 0) : 1) -
			    (uint32_t)(folded + mfold);
			sum->stat[k].walkable -= (uint32_t)mmark;
		}
		sum->stat[k].n[DBTP_GT_KEPT] -= (uint32_t)folded;
		sum->stat[k].n[DBTP_GT_REWRITTEN] += (uint32_t)folded;
		rnd |= any;
	}
	/* x86-64: the last room's other tables left empty */
	if (q % 4)
		fprintf(jt, "\t.zero %d\n",
			(4 - q % 4) * 8 * DBTP_GT_JT_RAND_ENTRIES);
	*njt += (q + 3) / 4;
	return rnd;
}

/*
 * x86-64: how many passes of a function fit in a call without a
 * stack-pointer reset, given a pass's moves @p (pass_moves(),
 * sequence_text()): DBTP_GT_SP_CALL over how far a pass can move it
 * (sp_bound); UINT32_MAX if it cannot move it, 0 if a pass may take it
 * above where the pass started (or its moves are not known).
 */
static uint32_t sp_passes(const struct dbtp_gt_rw_stats *p)
{
	if (!p->sp_exact || p->sp_reset || p->sp_peak > 0 || p->sp_net > 0)
		return 0;
	return p->sp_bound ? DBTP_GT_SP_CALL / p->sp_bound : UINT32_MAX;
}

/*
 * x86-64: the resets inside a pass of @u copies in @body (the rewriter's
 * for a large stack move, sequence_text()'s) followed by pushes of the
 * @r bytes above the middle its pops may reach (sp_popped()), as a pass's
 * reset is (sp_reset_text()): a call or ret in between made memcheck
 * take the red zone below it as undefined, the slots the pushes of the
 * last reset wrote among them.  0 or -1 (out of memory).
 */
static int define_resets(char **body, unsigned u, int32_t r)
{
	char reset[48], line[GT_SP_TEXT];
	struct dbtp_gt_rw_stats p = {
	    .sp_exact = 1, .sp_peak = r, .sp_reads_far = 1};

	if (!r)
		return 0;
	snprintf(reset, sizeof(reset), "\tlea rsp, [r15 + %d]",
		 DBTP_GT_STACK_MID);
	sp_reset_text(line, &p, INT32_MIN);
	for (unsigned j = 0; j < u; j++) {
		size_t at = 0;
		char *e;

		while ((e = strstr(body[j] + at, reset)) != NULL) {
			size_t ll, pos = (size_t)(e - body[j]);

			e = strchr(e, '\n');
			ll = e ? (size_t)(e + 1 - body[j]) - pos
			       : strlen(body[j] + pos);
			if (splice(&body[j], pos, ll, line))
				return -1;
			at = pos + strlen(line);
		}
	}
	return 0;
}

/* Block @b ends in a return or an indirect jump or call. */
static int ends_indirect(const dbtp_gt_model *m, const struct rewritten *r,
			 uint32_t b)
{
	return r->last == DBTP_BR_RET || r->last == DBTP_BR_IND ||
	       (r->last == DBTP_BR_CALL && blk(m, b)->br_ind);
}

/*
 * A function whose last member ends in a return or an indirect branch
 * (plan_copies(): one copy, no random branch, a register to count in)
 * counts its passes in where that branch goes: it takes its target from
 * table @t (DBTP_GT_JUMPS) indexed by the passes left, counted down with
 * `lea` just before it, entry 0 the exit (.Lgt<b>_exit), the others the
 * block's start.  So a pass is one translated block, as the original's
 * execution, with no counter's own block after it; at most 255 passes a
 * call (the driver splits larger counts).  The stack pointer is reset
 * right before the branch.  The table's text goes to @jt.  1 if done, 0
 * if not (the branch is not where expected), -1 out of memory.
 */
static int put_branch_count(const dbtp_gt_model *m, const struct rewritten *r,
			    uint32_t b, uint32_t last, char **body,
			    const struct dbtp_gt_rw_stats *st, int reset,
			    uint32_t t, FILE *jt)
{
	uint32_t id = last * DBTP_GT_MAX_UNROLL, n = blk(m, last)->ninsns;
	const char *cr = counter_reg(st->regs, 0),
		   *op = r->last == DBTP_BR_RET	   ? "push"
			 : r->last == DBTP_BR_CALL ? "call"
						   : "jmp";
	char old[64], line[160 + GT_SP_TEXT], ex[1][32], start[32];
	char sp[GT_SP_TEXT] = "";
	int k;

	slot_line(old, sizeof(old), op, id, n - 1);
	/* a call's push comes after the reset: never pushes alone */
	if (reset)
		sp_reset_text(sp, st,
			      r->last == DBTP_BR_CALL ? INT32_MIN : st->sp_net);
	snprintf(line, sizeof(line),
		 "\tlea %s, [%s - 1]\n%s\t%s qword ptr [r15 + %s * 8 + %u]\n",
		 cr, cr, sp, op, cr, jt_at(t));
	k = put_at(body, id, n - 1, old, line);
	if (k > 0) {
		snprintf(ex[0], sizeof(ex[0]), ".Lgt%u_exit", b);
		snprintf(start, sizeof(start), "gt_b%u_body", b);
		put_table(jt, DBTP_GT_JT_ENTRIES, ex, 1, 1, start);
	}
	return k;
}

static int closes(const struct rewritten *r);

/* The share of block @bl's executions that crossed to another page. */
static double cross_share(const struct dbtp_gt_block *bl)
{
	return bl->count ? (double)bl->crossed / (double)bl->count : 0;
}

/* Block @bl ends in a branch put_cross() can send to the other section. */
static int movable(const struct dbtp_gt_block *bl, int a64)
{
	return bl->br == DBTP_BR_JUMP ||
	       (bl->br == DBTP_BR_CALL && !bl->br_ind) ||
	       (!a64 && bl->br == DBTP_BR_COND);
}

/* Where the copy (@id, of @ninsns instructions) in @text can switch
 * sections after its last instruction (put_cross()): the offset of the
 * label after it, with what to put before the switch in @ins (a jump
 * after a conditional branch); -1 if it cannot. */
static long cross_point(const char *text, uint32_t id, uint32_t ninsns, int a64,
			char *ins, size_t insz)
{
	char label[48], tail[48];
	const char *at, *line;
	size_t tl;

	/* the last instruction's line, right before the label of the next:
	 * "\t<mnemonic> <that label>" */
	snprintf(label, sizeof(label), ".Lg%u_%u:\n", id, ninsns);
	tl = (size_t)snprintf(tail, sizeof(tail), " .Lg%u_%u\n", id, ninsns);
	at = strstr(text, label);
	if (!at || at == text || at[-1] != '\n')
		return -1;
	for (line = at - 1; line > text && line[-1] != '\n'; line--)
		;
	ins[0] = '\0';
	if (a64) { /* "\tb[l] <that label>\t// was ..." */
		const char *to = !strncmp(line, "\tb ", 3)    ? line + 3
				 : !strncmp(line, "\tbl ", 4) ? line + 4
							      : NULL;

		if (!to || strncmp(to, tail + 1, tl - 2) || to[tl - 2] != '\t')
			return -1;
	} else if ((size_t)(at - line) <= tl + 1 || *line != '\t' ||
		   strncmp(at - tl, tail, tl)) {
		return -1;
	} else if (line[1] == 'j' && strncmp(line, "\tjmp ", 5) &&
		   strncmp(line, "\tjrcxz", 7) && strncmp(line, "\tjecxz", 7) &&
		   strncmp(line, "\tjcxz", 6)) {
		snprintf(ins, insz, "\tjmp%s", tail);
	} else if (strncmp(line, "\tjmp ", 5) && strncmp(line, "\tcall ", 6)) {
		return -1;
	}
	return at - text;
}

/*
 * Page crossings: QEMU chains a translated block directly only to one on
 * the guest page it starts on; a branch to another page looks its target
 * up (a helper call, a hash of the address, a cache of blocks), as the
 * original did for every direct jump, call or taken branch to another page
 * (struct dbtp_gt_block's crossed).  Copies of such blocks, spread evenly,
 * continue after their last instruction, a direct jump or
 * call to the next instruction, in the other of two text sections, .text
 * and .text.gt_far (GT_FAR_PUSH), which lie pages apart
 * (emit_shared_x86()): the branch then
 * leaves the page and costs QEMU what the original's did, while Valgrind,
 * which chains and follows jumps anywhere, and the program's instructions
 * stay as they were.  A conditional branch (a jcc; not loop or jrcxz,
 * which reach 127 bytes) is followed by a jump to the same place, so that
 * it leaves the page either way.  AArch64: b and bl only (b.cond and cbz
 * reach 1 MiB, tbz 32 KiB, which a large program's .text outgrows; the
 * function's tail, emit-a64.c, stays in .text).  Nothing falls through to the
 * code after such a branch, so the section can change there.  Puts the switches
 * in function @b's @body, in the order the text runs (copies, then members);
 * returns how many (odd: the function ends in .text.gt_far), -1 out of memory.
 * Notes the blocks that cross in @sum.
 *
 * How many: a pass also leaves its page by itself, wherever its text runs
 * over a page boundary and, then, at the branch that closes it (none
 * where it fits GT_FIT_MAX, else the page boundaries in its estimated
 * size from a page's start, and the closing branch's if that is more than
 * a page); the original's straight-line code did so too (struct
 * dbtp_gt_block's fell), where no branch can be put.  And a pass that
 * switches comes back to .text by its closing branch, so it switches an
 * even number of times.  Of the two even numbers around the original's
 * crossings a pass (branches' and falls') less the pass's own, the one
 * that leaves less in *@owed (the crossings the functions so far owe, a
 * pass's difference times their passes, which this one's is added to);
 * spread over the copies that crossed in proportion to their shares and,
 * where those are too few, over the movable branches' copies that did not
 * (not the last copy's closing branch, which cannot be moved).
 */
static int put_cross(const dbtp_gt_model *m, const struct rewritten *rd,
		     const uint32_t *seq_next, uint32_t b, char **body,
		     double *owed, struct dbtp_gt_summary *sum)
{
	unsigned u = rd[b].u, bound = 0, ncand = 0;
	int n = 0, a64 = dbtp_gt_model_arch(m) == DBTP_ARCH_AARCH64;
	uint32_t last = seq_last(seq_next, b);
	double size = GT_TAIL_BYTES, own, want = 0, can = 0, spare = 0, g;
	double passes = (double)blk(m, b)->count / u, w_all = 0, c = 0, t, lo;
	char ins[112];

	for (unsigned j = 0; j < u; j++) {
		size += asm_bytes(body[j], body[j] + strlen(body[j]), a64,
				  GT_LINE_BYTES, 1);
		bound +=
		    asm_bytes(body[j], body[j] + strlen(body[j]), a64, 15, 1);
	}
	/* (a pass that fits GT_FIT_MAX, its tail included, is kept on one
	 * page, as is each of its pieces, a larger one starts a page:
	 * dbtp_gt_emit_copies()) */
	own = bound + GT_TAIL_MAX <= GT_FIT_MAX
		  ? 0
		  : floor(size / 4096) + (size > 4096);
	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
		const struct dbtp_gt_block *bl = blk(m, k);
		double x = cross_share(bl);
		unsigned cp = k == last && closes(&rd[k]) ? u - 1 : u;

		if (bl->count)
			want += u * (double)(bl->crossed + bl->fell) /
				(double)bl->count;
		can += cp * x;
		spare += movable(bl, a64) ? cp * (1 - x) : 0;
	}
	/* an even number of switches t (the pass comes back to .text), of
	 * the two around want - own the one that leaves less owed */
	t = want - own;
	lo = t > 0 ? 2 * floor(t / 2) : 0;
	t = t <= 0 || fabs(*owed + (t - lo) * passes) <=
			  fabs(*owed + (t - lo - 2) * passes)
		? lo
		: lo + 2;
	/* the blocks that crossed, then the other movable ones */
	g = t > can && spare > 0 ? fmin(1, (t - can) / spare) : 0;
	for (int pick = 0; pick < 2; pick++)
		for (unsigned j = 0; j < u; j++)
			for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
				const struct dbtp_gt_block *bl = blk(m, k);
				uint32_t id = k * DBTP_GT_MAX_UNROLL + j;
				double x = cross_share(bl);
				double w =
				    x + (movable(bl, a64) ? g * (1 - x) : 0);
				long at;

				if (w <= 0 || (at = cross_point(
						   body[j], id, bl->ninsns, a64,
						   ins, sizeof(ins))) < 0)
					continue;
				if (!pick) {
					w_all += w;
					ncand++;
					continue;
				}
				if (t < ncand &&
				    floor((c + w) * t / w_all + 0.5) ==
					floor(c * t / w_all + 0.5)) {
					c += w;
					continue;
				}
				c += w;
				strcat(ins, n % 2 ? GT_FAR_POP : GT_FAR_PUSH);
				if (splice(&body[j], (size_t)at, 0, ins))
					return -1;
				n++;
				sum->crossing[k] = 1;
			}
	*owed += (want - own - (n + n % 2)) * passes;
	return n;
}

/* Remove every DBTP_GT_WALK_MARK from @text. */
static void strip_marks(char *text)
{
	size_t ml = strlen(DBTP_GT_WALK_MARK);
	char *w = text;

	for (const char *r = text; *r;) {
		if (!strncmp(r, DBTP_GT_WALK_MARK, ml)) {
			r += ml;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

/* Where copy @id (rewritten block of @ninsns instructions) is in @text:
 * from its first instruction's label to its end, in *@from and *@to; -1
 * if it is not there. */
static int copy_range(const char *text, uint32_t id, uint32_t ninsns,
		      size_t *from, size_t *to)
{
	char label[48];
	const char *at;

	snprintf(label, sizeof(label), ".Lg%u_0:\n", id);
	if (!(at = strstr(text, label)))
		return -1;
	*from = (size_t)(at - text);
	snprintf(label, sizeof(label), ".Lg%u_%u:\n", id, ninsns);
	at = strstr(text + *from, label);
	*to = at ? (size_t)(at - text) : strlen(text);
	return 0;
}

/*
 * Make @n of the marked operands of copy @id (rewritten block of @ninsns
 * instructions) in *@text walk through register @w (x86-64's name; on
 * AArch64 @xr, its number; x86-64 with neither: one of the registers
 * @spill that the operand's line leaves alone, loaded from the area's
 * slot just before) over area @wa (x86-64), starting at the @first
 * (modulo their number @total); *@stream counts the function's walking
 * operands.  How many walk, -1 out of memory.
 */
static int walk_copy(char **text, uint32_t id, uint32_t ninsns, unsigned first,
		     unsigned n, unsigned total, const char *w, int xr,
		     uint32_t spill, const struct walk_area *wa,
		     unsigned *stream)
{
	char line[64];
	size_t ml = strlen(DBTP_GT_WALK_MARK), from, to;
	unsigned e = 0;
	int done = 0;

	if (copy_range(*text, id, ninsns, &from, &to))
		return 0;
	while (from < to && n) {
		char *mk = strstr(*text + from, DBTP_GT_WALK_MARK), *op, *end;
		const struct gpr *g;
		unsigned long off;
		size_t ol, ls;

		if (!mk || (size_t)(mk - *text) >= to)
			break;
		from = (size_t)(mk - *text) + ml;
		if ((e++ + total - first % total) % total >= n)
			continue;
		for (op = mk; op > *text && op[-1] != '\n'; op--)
			;
		/* AArch64: the load or store's word, [x28, #off] */
		if (!strncmp(op, "\t.inst 0x", 9)) {
			uint32_t word = (uint32_t)strtoul(op + 7, NULL, 16);

			snprintf(line, sizeof(line), "0x%08x",
				 dbtp_gt_a64_walk(word, (unsigned)xr,
						  (*stream)++ %
						      DBTP_GT_WALK_STREAMS *
						      DBTP_GT_A64_LINE));
			memcpy(op + 7, line, 10);
			done++;
			continue;
		}
		/* x86-64: the operand, "[r15 + off]", on the mark's line */
		ls = (size_t)(op - *text);
		op = strstr(op, "[r15 + ");
		g = w ? NULL
		      : spill_gpr(spill, *text + ls, (size_t)(mk - *text) - ls);
		if (!op || op > mk || (!w && !g))
			continue;
		off = strtoul(op + 7, &end, 10);
		if (*end != ']')
			continue;
		ol = (size_t)(end + 1 - op);
		snprintf(line, sizeof(line), "[r15 + %s + %lu]",
			 w ? w : g->name[0],
			 (unsigned long)wa->base +
			     (*stream)++ % DBTP_GT_WALK_STREAMS * wa->stream +
			     off % 32);
		if (splice(text, (size_t)(op - *text), ol, line))
			return -1;
		from += strlen(line) - ol;
		to += strlen(line) - ol;
		done++;
		if (w)
			continue;
		snprintf(line, sizeof(line), "\tmov %s, dword ptr [r15 + %d]\n",
			 g->name[2], wa->slot);
		if (splice(text, ls, 0, line))
			return -1;
		from += strlen(line);
		to += strlen(line);
	}
	return done;
}

/*
 * x86-64: the operand on the line of mark @mk in @text, `qword`, `dword`
 * or `word ptr [r15 + off]`: its size (0 if none of those) and where its
 * offset starts (*@off).
 */
static unsigned marked_operand(const char *text, const char *mk,
			       const char **off)
{
	static const struct {
		const char *kw;
		unsigned size;
	} sizes[] = {{"qword ptr [r15 + ", 8},
		     {"dword ptr [r15 + ", 4},
		     {"word ptr [r15 + ", 2}};
	const char *ln = mk, *op;

	while (ln > text && ln[-1] != '\n')
		ln--;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		op = memmem(ln, (size_t)(mk - ln), sizes[i].kw,
			    strlen(sizes[i].kw));
		if (op) {
			*off = op + strlen(sizes[i].kw);
			return sizes[i].size;
		}
	}
	return 0;
}

/*
 * x86-64: move @n of the marked operands of 2 to 8 bytes of copy @id
 * (rewritten block of @ninsns instructions) in *@text off their alignment
 * by half their size (a `qword ptr [r15 + off]` to off + 4), starting at
 * the @first of its @total such operands (modulo @total), the other way
 * where that would cross a 64-byte line (the program's accesses split no
 * line; xz's original split 2.9 M).
 * How many moved, -1 out of memory.
 */
static int misalign_copy(char **text, uint32_t id, uint32_t ninsns,
			 unsigned first, unsigned n, unsigned total)
{
	char line[32];
	size_t ml = strlen(DBTP_GT_WALK_MARK), from, to, ol;
	unsigned e = 0;
	int done = 0;

	if (copy_range(*text, id, ninsns, &from, &to))
		return 0;
	while (from < to && n) {
		char *mk = strstr(*text + from, DBTP_GT_WALK_MARK), *end;
		const char *op;
		unsigned long off;
		unsigned size;

		if (!mk || (size_t)(mk - *text) >= to)
			break;
		from = (size_t)(mk - *text) + ml;
		size = marked_operand(*text, mk, &op);
		if (!size || (e++ + total - first % total) % total >= n)
			continue;
		off = strtoul(op, &end, 10);
		if (*end != ']' || off % size)
			continue;
		if (off % 64 + size + size / 2 > 64)
			off -= size / 2;
		else
			off += size / 2;
		snprintf(line, sizeof(line), "%lu", off);
		ol = (size_t)(end - op);
		if (splice(text, (size_t)(op - *text), ol, line))
			return -1;
		to += strlen(line) - ol;
		done++;
	}
	return done;
}

/* Marked operands of 2 to 8 bytes in @text (misalign_copy()). */
static unsigned misalignable(const char *text)
{
	unsigned n = 0;
	const char *op;

	for (const char *mk = strstr(text, DBTP_GT_WALK_MARK); mk;
	     mk = strstr(mk + 1, DBTP_GT_WALK_MARK))
		n += marked_operand(text, mk, &op) > 0;
	return n;
}

/*
 * How many of a member's @x an execution copy @j of a pass gets, the
 * members before it in the pass making @before an execution and the
 * whole pass @per a copy: the running sum over the pass rounded, so that
 * each copy's share is within one of its own and the pass's add up to
 * its rate rounded once (put_walks(), put_unaligned()).
 */
static unsigned copy_share(double x, double before, double per, unsigned j)
{
	double at = j * per + before;

	return (unsigned)(floor(at + x + 0.5) - floor(at + 0.5));
}

/*
 * x86-64: the profiles' unaligned accesses (dbtp_gt_block's unaligned)
 * in head @b's function: a member that made x of them an execution gets
 * as many of its marked operands of 2 to 8 bytes, spread over its copies
 * as walks are (put_walks()), moved off their alignment
 * (misalign_copy()): Valgrind's memcheck checks such an access on its
 * slow path, several times the cost of an aligned one, where QEMU and
 * the other tools pay nothing more.  How many operands moved, -1 out of
 * memory.
 */
static int put_unaligned(const dbtp_gt_model *m, const struct rewritten *rd,
			 const uint32_t *seq_next, uint32_t b, char **body,
			 struct dbtp_gt_summary *sum)
{
	unsigned u = rd[b].u;
	int all = 0;

	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
		const struct dbtp_gt_block *bl = blk(m, k);
		unsigned total = misalignable(rd[k].body[0]);
		double x = unaligned_to_make(bl, u);
		int done = 0;

		if (!total || !x)
			continue;
		if (x > total)
			x = total;
		for (unsigned j = 0, lo = 0; j < u; j++) {
			unsigned n = copy_share(x, 0, x, j);
			int r = n ? misalign_copy(&body[j],
						  k * DBTP_GT_MAX_UNROLL + j,
						  bl->ninsns, lo, n, total)
				  : 0;

			if (r < 0)
				return -1;
			done += r;
			lo += n;
		}
		sum->misaligned[k] = (double)done / u;
		all += done;
	}
	return all;
}

/* The walk register of head @b's function of registers @regs: one no
 * member uses besides the pass counter and the scratch register of random
 * indirect targets (put_random()), or NULL. */
static const struct gpr *walk_reg(const struct rewritten *rd,
				  const uint32_t *seq_next, uint32_t b,
				  uint32_t regs)
{
	const struct gpr *g = free_gpr(regs);

	if (!g)
		return NULL;
	regs |= 1u << g->n;
	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k])
		if (rd[k].rnd_ind) {
			g = free_gpr(regs);
			if (!g)
				return NULL;
			regs |= 1u << g->n;
			break;
		}
	return free_gpr(regs);
}

/* Member @k's misses an execution that its walkable operands (@stat) can
 * take. */
static double walk_rate(const struct rewritten *rd,
			const struct dbtp_gt_rw_stats *stat, uint32_t k)
{
	unsigned total = stat[k].walkable;

	return rd[k].walk < total ? rd[k].walk : total;
}

/* Block @b's L1 (or, @l2, L2) misses an execution (its profiles'). */
static double miss_rate(const dbtp_gt_model *m, uint32_t b, int l2)
{
	const struct dbtp_gt_block *bl = blk(m, b);

	return bl->count ? (double)(l2 ? bl->l2_misses : bl->l1_misses) /
			       (double)bl->count
			 : 0;
}

/* Executions of row @k over the profiles: a chain's copy of X runs its
 * P's, X's own row the rest (plan_chains()). */
static double row_count(const dbtp_gt_model *m, const struct rewritten *rd,
			uint32_t k)
{
	uint32_t nb = dbtp_gt_model_nblocks(m), x = k < nb ? k : k - nb;
	uint32_t p = rd[x].chain_from;
	double cx = (double)blk(m, x)->count, cp;

	if (p == UINT32_MAX)
		return cx;
	cp = (double)blk(m, p)->count;
	cp = cp < cx ? cp : cx;
	return k < nb ? cx - cp : cp;
}

/* A function's walks, the profiles' L1 misses that walk and of them L2
 * misses (plan_far()). */
struct far_cand {
	uint32_t b;
	double l1, l2, chase; /* chase: l2's in members whose loads wait */
};

static int by_l2_share(const void *x, const void *y)
{
	const struct far_cand *a = x, *c = y;
	double l = a->l2 * c->l1, r = c->l2 * a->l1;

	return l > r ? -1 : l < r ? 1 : a->b < c->b ? -1 : a->b > c->b;
}

/* The head of block @b's function. */
static uint32_t head_of(const uint32_t *seq_head, uint32_t b)
{
	return seq_member(seq_head, b) ? seq_head[b] : b;
}

/* Group @g's walks by functions marked far, over the profiles; *@any:
 * whether it runs one. */
static double group_far_walks(const struct dbtp_gt_group *g, uint32_t np,
			      const struct rewritten *rd,
			      const uint32_t *seq_head,
			      const struct dbtp_gt_rw_stats *stat, int *any)
{
	double w = 0;

	*any = 0;
	for (uint32_t k = 0; k < g->nhot; k++) {
		const struct dbtp_gt_hot *h = &g->hot[k];
		double c = 0;

		if (!rd[head_of(seq_head, h->block)].far)
			continue;
		*any = 1;
		for (uint32_t p = 0; p < np; p++) {
			/* the group's count (gt_count()) */
			double t = h->theta * g->sizes[p] + h->delta;

			c += t > 0 ? t : 0;
		}
		w += c * walk_rate(rd, stat, h->block);
	}
	return w;
}

/*
 * Each thread that runs a function marked far makes the far area: a
 * group whose far walks, over the profiles, are fewer than
 * DBTP_GT_FAR_MIN a thread loses its far functions, until every group
 * left with some has enough (plan_far()).
 */
static void far_by_group(const dbtp_gt_model *m, struct rewritten *rd,
			 const uint32_t *seq_head,
			 const struct dbtp_gt_rw_stats *stat)
{
	uint32_t np = dbtp_gt_model_nprofiles(m), ng = dbtp_gt_model_ngroups(m);

	for (int changed = 1; changed;) {
		changed = 0;
		for (uint32_t i = 0; i < ng; i++) {
			const struct dbtp_gt_group *g;
			double w, threads = 0;
			int any;

			g = dbtp_gt_model_group(m, i);
			w = group_far_walks(g, np, rd, seq_head, stat, &any);
			for (uint32_t p = 0; p < np; p++)
				threads += g->sizes[p];
			if (!any || w >= DBTP_GT_FAR_MIN * threads)
				continue;
			for (uint32_t k = 0; k < g->nhot; k++)
				rd[head_of(seq_head, g->hot[k].block)].far =
				    NULL;
			changed = 1;
		}
	}
}

/*
 * Which functions walk over the far area (x86-64): those whose members'
 * walking misses had the largest shares of L2 misses, taken in that order
 * while their walks together stay within the profiles' L2 misses of all
 * walking blocks (half a function's over at most), so that the program's
 * L2 misses are the original's in number, if not block by block (a
 * function has one walk register); but not in a group whose threads
 * would walk it fewer than DBTP_GT_FAR_MIN times each (far_by_group()).
 * Marks rd[head].far.  -1 out of memory.
 */
static int plan_far(const dbtp_gt_model *m, struct rewritten *rd,
		    const uint32_t *seq_head, const uint32_t *seq_next,
		    const struct dbtp_gt_rw_stats *stat, uint32_t nb)
{
	struct far_cand *c = malloc((nb ? nb : 1) * sizeof(*c));
	double want = 0, got = 0;
	uint32_t n = 0, nfar = 0;

	if (!c)
		return -1;
	for (uint32_t b = 0; b < nb; b++) {
		struct far_cand f = {b, 0, 0, 0};

		if (!rd[b].ok || seq_member(seq_head, b))
			continue;
		for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
			double x = walk_rate(rd, stat, k),
			       y = miss_rate(m, k, 1),
			       cnt = row_count(m, rd, k);

			f.l1 += cnt * x;
			f.l2 += cnt * (y < x ? y : x);
			f.chase += stat[k].chase ? cnt * (y < x ? y : x) : 0;
		}
		want += f.l2;
		if (f.l2 > 0)
			c[n++] = f;
	}
	qsort(c, n, sizeof(*c), by_l2_share);
	while (nfar < n && got + c[nfar].l1 / 2 <= want)
		got += c[nfar++].l1;
	for (uint32_t i = 0; i < nfar; i++)
		rd[c[i].b].far =
		    2 * c[i].chase >= c[i].l2 ? &far_chain : &far_area;
	far_by_group(m, rd, seq_head, stat);
	free(c);
	return 0;
}

/*
 * The walking operands of head @b's function in register @w (or
 * AArch64's @xr, if not -1; x86-64 with neither, @spill: walk_copy()).
 * Member k misses rd[k].walk an execution: the walks of a pass, copy by
 * copy and member by member, are the running sum of those rounded, so
 * that the function's misses a pass are its members' together, rounded
 * once, and a member that misses once in many executions walks in some
 * copies, in turn over its marked operands.  Notes the walks in @sum.
 * How many walk, -1 out of memory.
 */
static int put_walks(const dbtp_gt_model *m, const struct rewritten *rd,
		     const uint32_t *seq_next, uint32_t b, char **body,
		     const char *w, int xr, uint32_t spill,
		     const struct walk_area *wa,
		     const struct dbtp_gt_rw_stats *stat,
		     struct dbtp_gt_summary *sum)
{
	unsigned u = rd[b].u, stream = 0;
	double per = 0, before = 0; /* a copy's misses; before member k */
	int all = 0;

	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k])
		per += walk_rate(rd, stat, k);
	for (uint32_t k = b; (w || xr >= 0 || spill) && k != UINT32_MAX;
	     k = seq_next[k]) {
		unsigned total = stat[k].walkable, lo = 0;
		int done = 0;
		double x = walk_rate(rd, stat, k);

		for (unsigned j = 0; x > 0 && j < u; j++) {
			unsigned n = copy_share(x, before, per, j);
			int r =
			    n ? walk_copy(&body[j], k * DBTP_GT_MAX_UNROLL + j,
					  blk(m, k)->ninsns, lo, n, total, w,
					  xr, spill, wa, &stream)
			      : 0;

			if (r < 0)
				return -1;
			done += r;
			lo += n;
		}
		before += x;
		sum->walks[k] = (double)done / u;
		sum->far[k] = wa != &near_area ? sum->walks[k] : 0;
		sum->far_chase += wa == &far_chain && done > 0;
		all += done;
	}
	return all;
}

/* The block ends in a direct branch: in the last copy of a pass the pass
 * counter's branch takes its place (cut_last()). */
static int closes(const struct rewritten *r)
{
	return r->last == DBTP_BR_COND || r->last == DBTP_BR_JUMP;
}

/* Block @b ends in a conditional branch that reads the flags (AArch64:
 * a b.cond), which the pass counter's decrement (`sub`, `subs`) can set
 * in place of the instruction before it where that one sets them
 * (cut_compare()). */
static int reads_flags(const dbtp_gt_model *m, const struct rewritten *rd,
		       uint32_t b)
{
	return rd[b].last == DBTP_BR_COND &&
	       (dbtp_gt_model_arch(m) != DBTP_ARCH_AARCH64 ||
		a64_ends_bcond(blk(m, b)));
}

/* Block @b ends in a conditional branch whose flags the pass counter's
 * decrement can set in place of the instruction before it. */
static int counter_takes(const dbtp_gt_model *m, struct rewritten *rd,
			 uint32_t b)
{
	char *at, *end;

	return reads_flags(m, rd, b) &&
	       flags_before(
		   rd[b].body[0], b * DBTP_GT_MAX_UNROLL, blk(m, b)->ninsns,
		   dbtp_gt_model_arch(m) == DBTP_ARCH_AARCH64, &at, &end);
}

/* The function's pass counter can be a register of its own, not one of
 * @regs (the AArch64 tail's, emit-a64.c; x86-64 counter_reg()). */
static int counter_free(int a64, uint32_t regs)
{
	return a64 ? dbtp_gt_a64_reg(regs, 0) >= 0
		   : counter_reg(regs, 0) != NULL;
}

/*
 * A closing block's body without its last instruction, the branch: the
 * function's loop tail (count down, branch back) takes its place, so that
 * the tail runs in the block's translation, not in one of its own a pass.
 * A self-loop then runs one translated block a pass, as in the original.
 */
static void cut_last(char *body, uint32_t id, uint32_t ninsns)
{
	char label[48];
	char *at;

	snprintf(label, sizeof(label), ".Lg%u_%u:\n", id, ninsns - 1);
	at = strstr(body, label);
	if (at)
		at[strlen(label)] = '\0';
}

/* A function that misses @x times a pass of one copy walks with @u
 * copies (put_walks() rounds x * u). */
static int walks_in(double x, unsigned u)
{
	return x * u >= 0.5;
}

/* Copies a block gets by its count: as many, up to @umax, as it runs
 * @min times each in a profile (on average). */
static unsigned block_copies(const dbtp_gt_model *m, uint32_t b, unsigned umax,
			     uint64_t min)
{
	uint64_t per = blk(m, b)->count / dbtp_gt_model_nprofiles(m);
	unsigned u = umax;

	while (u > 1 && per / u < min)
		u >>= 1;
	return u;
}

/* The fewest copies, a power of two up to @u, over which a function
 * that misses @x times a copy (its members together) walks at least once
 * a pass (put_walks()), so that a miss in a few executions is not
 * rounded away. */
static unsigned walk_copies(double x, unsigned u)
{
	unsigned c = 1;

	while (c < u && x > 0 && x * c < 1)
		c *= 2;
	return c;
}

/*
 * Copies, at most @u, of a closing function with random branches (the
 * last member @last's in every copy but the last, whose branch the pass
 * counter's replaces; the other members' in all): none to spread a tail
 * over, the last copy's branch in the block's own translation, so only as
 * many as the last member's random test needs: one if it has none, else
 * four, or eight where its probability, raised to make up for the last
 * copy (u / (u - 1) times), would pass 1/2 with fewer (plan_random()
 * again).  Copies cost translations, and lookups in QEMU's jump cache;
 * fewer cost a pass counter's instructions more often (two copies made
 * pigz's program 17% cheaper under memcheck than four, its original
 * between them: bench/RESULTS.md).
 */
static unsigned random_copies(const dbtp_gt_model *m, struct rewritten *rd,
			      dbtp_disasm *dis, uint32_t last, unsigned u,
			      unsigned least)
{
	const struct dbtp_gt_block *bl = blk(m, last);
	double p = (double)bl->mispredicted / (double)bl->count;
	unsigned need = least > 4 ? least : 4;

	if (!rd[last].rnd_op)
		return least;
	while (need < u && p * need / (need - 1) > 0.5)
		need *= 2;
	if (need > u)
		need = u;
	plan_random(m, last, dis, (double)need / (need - 1), &rd[last]);
	return need;
}

/*
 * The copies of every block: its own (block_copies()) if it runs alone; a
 * sequence's members share the fewest of theirs, halved while a pass of
 * half as many would still run DBTP_GT_SEQ_LEN instructions.  A function
 * that closes (its last member ends in a direct branch) and can count its
 * passes with `loop` or, in a free register, with a `sub` (`subs`) in
 * place of the instruction whose flags the closing branch reads
 * (counter_takes()), no member having a random branch (plan_random()),
 * gets one copy: it then runs the original's instructions and translated
 * blocks exactly, with no copies to dilute a counter's instructions in.
 * A closing one with random branches gets the copies random_copies()
 * says (@dis).  One that ends in a return or indirect branch and has no
 * random branch counts in that branch's target (put_branch_count()), in
 * one copy; on AArch64 only a switch (put_branch_count_a64()) where the
 * tail has nothing else to do.  An x86-64 self-loop
 * (rd->loop) starts from one copy, unless it misses less than every
 * other execution (its walks spread over copies: put_walks()); an
 * AArch64 one, which has no `loop` to count its passes with, gets copies
 * as any block (a pass counter's two instructions every few passes
 * rather than one more every pass) unless its counter takes the place
 * of a compare.  On AArch64 only where the tail has nothing else to do
 * every pass (a stack-pointer reset, the writebacks' base where it
 * would leave the data area within a few passes: emit-a64.c):
 * spread over copies, that costs less than the compare's place saves.
 * rd[].body[0] and @stat are copy 0's.
 */
static int plan_copies(const dbtp_gt_model *m, const struct dbtp_gt_group *g,
		       uint32_t ng, struct rewritten *rd,
		       const struct dbtp_gt_rw_stats *stat, unsigned umax,
		       uint64_t min, int naive, dbtp_disasm *dis,
		       uint32_t *seq_head, uint32_t *seq_next, dbtp_err *err)
{
	uint32_t nb = dbtp_gt_model_nblocks(m);
	int a64 = dbtp_gt_model_arch(m) == DBTP_ARCH_AARCH64;

	for (uint32_t b = 0; b < 2 * nb; b++) /* rows */
		rd[b].u =
		    rd[b].loop && !a64 &&
			    !(walks_in(rd[b].walk, umax) && rd[b].walk < 0.5)
			? 1
			: block_copies(m, b, umax, min);
	if (naive)
		return 0;
	if (plan_sequences(m, g, ng, rd, 1, seq_head, seq_next, err))
		return -1;
	for (uint32_t b = 0; b < nb; b++) { /* heads */
		uint64_t len = 0;
		uint32_t regs = 0, last = b;
		unsigned u = umax, bytes = 0;
		double wx = 0; /* misses a copy */
		struct a64_fold sw;
		struct wb_plan wp = {{0}, {0}, {0}};
		int wb;
		/* a pass's instruction lines, fewer than its text's will be
		 * (a sequence's jumps, resets): counted twice over */
		uint32_t lines = 0;
		/* tail: AArch64, the tail has more to do than count */
		int rnd = 0, walk, tail = 0;

		if (!rd[b].ok || seq_member(seq_head, b))
			continue;
		for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
			len += blk(m, k)->ninsns;
			if (rd[k].u < u)
				u = rd[k].u;
			regs |= stat[k].regs;
			/* and a stack-pointer reset and a jump after it, at
			 * most, and a return's pop after a call: as
			 * text_bytes() counts them in the sequence */
			bytes += text_bytes(rd[k].body[0]) + 2 * 15 +
				 (blk(m, k)->br == DBTP_BR_CALL ? 5 : 0);
			rnd |= rd[k].rnd_op != NULL || rd[k].rnd_ind;
			tail |= a64 && stat[k].moves_sp;
			if (a64) {
				wb_add(rd[k].body[0], &wp);
				lines += text_lines(rd[k].body[0]);
			}
			wx += rd[k].walk;
			last = k;
		}
		/* and the writebacks' base, pointed back every pass where it
		 * would leave the data area in few (fold_writebacks_a64()) */
		if (a64 && (wb = wb_best(&wp)) >= 0 &&
		    wb_passes(&wp, wb) < DBTP_GT_SP_PASSES)
			tail = 1;
		walk = walks_in(wx, umax);
		while (seq_head[b] == b && u > 1 &&
		       (u / 2) * len >= DBTP_GT_SEQ_LEN)
			u >>= 1;
		/* random branches count in a byte register, not with loop */
		if (closes(&rd[last]) && !rnd && !walk &&
		    (loop_fits(a64, regs, bytes) ||
		     (counter_takes(m, rd, last) && counter_free(a64, regs) &&
		      !tail)))
			u = 1;
		if (closes(&rd[last]) && rnd && u > 1)
			u = random_copies(m, rd, dis, last, u,
					  walk ? walk_copies(wx, u) : 1);
		rd[b].branch_count =
		    !rnd && !walk && counter_free(a64, regs) &&
		    ends_indirect(m, &rd[last], last) &&
		    (!a64 || (!tail &&
			      switch_a64(rd[last].body, 1, last,
					 blk(m, last)->ninsns, &sw) &&
			      switch_reach(&sw, 2 * lines + 8) >= 0));
		if (rd[b].branch_count)
			u = 1;
		for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k])
			rd[k].u = u;
	}
	return 0;
}

/* Block @bl ends in a call that went to @to in the profiles. */
static int calls(const struct dbtp_gt_block *bl, uint64_t to)
{
	if (!bl->br_ind)
		return bl->br_target == to;
	for (uint32_t i = 0; i < bl->ntg; i++)
		if (bl->tg[i] == to)
			return 1;
	return 0;
}

/*
 * x86-64: which members of a pass of head @b's sequence (@u copies, in
 * pass order) start with the return's pop, `lea rsp, [rsp + 8]`, that
 * the program's call, landing on the next instruction, does not make: a
 * member after a call whose callee the sequence leaves out (the member is
 * none of the call's profiled targets) where the pass, before it next
 * resets the stack pointer, takes it more than 8 bytes above where the
 * call left it (worked out backwards, from the highest point each member
 * on takes it).  Without the pop, pops after read 8 bytes off the
 * original's, in a frame a `sub rsp` made, where no push wrote.  Not a
 * copy's first member: a call's first pass may start there.  NULL if out
 * of memory.
 */
static uint8_t *return_pops(const dbtp_gt_model *m,
			    const struct dbtp_gt_rw_stats *stat,
			    const uint32_t *seq_next, uint32_t b, unsigned u)
{
	size_t n = 0;
	uint32_t *mem;
	uint8_t *pop;
	int64_t hi = 0; /* from the next member on, from its start */

	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k])
		n++;
	mem = malloc(n * sizeof(*mem));
	pop = calloc(n * u, 1);
	if (!mem || !pop) {
		free(mem);
		free(pop);
		return NULL;
	}
	n = 0;
	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k])
		mem[n++] = k;
	for (size_t i = n * u; i-- > 0;) {
		const struct dbtp_gt_rw_stats *s = &stat[mem[i % n]];
		const struct dbtp_gt_block *bl = blk(m, mem[i % n]);
		uint64_t next = blk(m, mem[(i + 1) % n])->vaddr;

		if (bl->br == DBTP_BR_CALL && (i + 1) % n && hi > 8 &&
		    !calls(bl, next)) {
			pop[i + 1] = 1;
			hi += 8;
		}
		if (s->sp_reset || s->sp_net + hi < s->sp_peak)
			hi = s->sp_peak;
		else
			hi += s->sp_net;
	}
	free(mem);
	return pop;
}

/*
 * x86-64: before member @k of a pass whose members' moves are all known,
 * with @*undef the slots above the stack pointer that memcheck holds
 * undefined (a `sub rsp` of an earlier member made them, no push wrote
 * them: a sequence runs in address order, so one function's epilogue may
 * pop another's frame), pushes writing those the member pops, into @t:
 * up past the highest, a `push 0` for each slot down to where the member
 * starts.  Then *@undef after it.
 */
static void sp_define(FILE *t, const struct dbtp_gt_rw_stats *k,
		      uint64_t *undef)
{
	uint64_t need = k->sp_reads & *undef;

	if (need) {
		int top = 63 - __builtin_clzll(need);

		fprintf(t,
			"\tlea rsp, [rsp + %d]\n\t.rept %d\n\tpush 0\n"
			"\t.endr\n",
			8 * (top + 1), top + 1);
		*undef &= top == 63 ? 0 : ~0ull << (top + 1);
	}
	if (k->sp_reads_far)
		*undef = 0;
	else if (k->sp_reset)
		*undef = k->sp_undef;
	else
		*undef = (dbtp_gt_slots_moved(*undef, k->sp_net) & ~k->sp_def) |
			 k->sp_undef;
}

/*
 * The copies of head @b's sequence, text[j] for copy j of rd[b].u: each
 * member's copy under its own label (put_label()); the stack pointer reset
 * at the start of the member after one that moves it; a jump to the next
 * member (or the next copy's first) where a short member does not end its
 * translation block by itself (its last instruction is no branch), so
 * that every member's label starts a block for a DBT's counters.  A long
 * one is left open (DBTP_GT_OPEN_MIN), and one whose dropped last
 * instruction the rewriter replaced by a jump needs none.  On x86-64, a
 * member after a call whose callee the sequence leaves out may start with
 * the return's pop that the program's call, landing on the next
 * instruction, does not make (return_pops()), where every member's moves
 * are known.  *@st gets the
 * members' union and a pass's stack-pointer moves (sp_then()), *@slots
 * their slots.
 */
static int sequence_text(const dbtp_gt_model *m, const struct rewritten *rd,
			 const struct dbtp_gt_rw_stats *stat,
			 const uint32_t *seq_next, uint32_t b, int a64,
			 char **text, char **slots, struct dbtp_gt_rw_stats *st)
{
	static const struct dbtp_gt_rw_stats reset = {.sp_exact = 1,
						      .sp_reset = 1},
					     popped = {.sp_exact = 1,
						       .sp_net = 8,
						       .sp_peak = 8,
						       .sp_bound = 8};
	uint32_t drift = 0;
	uint64_t undef = 0; /* sp_define() */
	unsigned u = rd[b].u;
	int exact = !a64; /* the members' moves known */
	size_t len, i = 0;
	uint8_t *pop = NULL;
	FILE *s = open_memstream(slots, &len);

	if (!s)
		return -1;
	memset(st, 0, sizeof(*st));
	st->sp_exact = 1;
	for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
		exact &= stat[k].sp_exact;
		fputs(rd[k].slots, s);
		st->regs |= stat[k].regs;
		st->uses_avx |= stat[k].uses_avx;
		st->uses_v8_15 |= stat[k].uses_v8_15;
		st->uses_x87 |= stat[k].uses_x87;
		st->moves_sp |= stat[k].moves_sp;
	}
	fclose(s);
	if (exact && !(pop = return_pops(m, stat, seq_next, b, u)))
		return -1;
	for (unsigned j = 0; j < u; j++) {
		FILE *t = open_memstream(&text[j], &len);

		if (!t) {
			free(pop);
			return -1;
		}
		for (uint32_t k = b; k != UINT32_MAX; k = seq_next[k]) {
			uint32_t next = seq_next[k];
			unsigned nj = j;

			if (k != b)
				put_label(t, dbtp_gt_model_nblocks(m), k, j, 1);
			if (pop && pop[i++]) {
				fputs("\tlea rsp, [rsp + 8]\n", t);
				sp_then(st, &popped);
				drift += 8;
				undef >>= 1;
			}
			if (drift > DBTP_GT_SP_BUDGET - stat[k].sp_bound ||
			    (drift && stat[k].sp_bound > DBTP_GT_SP_BUDGET)) {
				fprintf(t,
					a64 ? "\tadd sp, x28, #%d\n"
					    : "\tlea rsp, [r15 + %d]\n",
					a64 ? DBTP_GT_STACK_MID - DBTP_GT_DATA
					    : DBTP_GT_STACK_MID);
				drift = 0;
				undef = 0;
				sp_then(st, &reset);
			}
			drift = drift > UINT32_MAX - stat[k].sp_bound
				    ? UINT32_MAX
				    : drift + stat[k].sp_bound;
			sp_then(st, &stat[k]);
			if (exact)
				sp_define(t, &stat[k], &undef);
			fputs(rd[k].body[j], t);
			if (next == UINT32_MAX && j + 1 < u) {
				next = b;
				nj = j + 1;
			}
			if (next == UINT32_MAX)
				break;
			if (stat[k].jumps_out || rd[k].last > DBTP_BR_NONE ||
			    blk(m, k)->ninsns >= DBTP_GT_OPEN_MIN)
				continue;
			fputs(a64 ? "\tb " : "\tjmp ", t);
			put_label(t, dbtp_gt_model_nblocks(m), next, nj, 0);
			fputc('\n', t);
		}
		fclose(t);
	}
	free(pop);
	return 0;
}

/* Bytes block @bl's system call reads an execution: the profiles' reads
 * there over its executions, rounded, at most DBTP_GT_READ_SIZE. */
static uint32_t read_per_exec(const struct dbtp_gt_block *bl)
{
	uint64_t n = bl->count ? (bl->read + bl->count / 2) / bl->count : 0;

	return n < DBTP_GT_READ_SIZE ? (uint32_t)n : DBTP_GT_READ_SIZE;
}

/*
 * Rewrite block @b's copies from r->done up to r->u: copy j's text in
 * r->body[j], their slots after r->slots; copy 0's statistics in *@st0.
 * 1 if the block cannot be rewritten, -1 out of memory.
 */
static int rewrite_copies(dbtp_gt_rw *rw, const dbtp_gt_model *m, uint32_t b,
			  struct rewritten *r, struct dbtp_gt_rw_stats *st0)
{
	const struct dbtp_gt_block *bl = blk(m, b);
	char *more = NULL, *all;
	size_t len, blen, had = r->slots ? strlen(r->slots) : 0;
	FILE *sf = open_memstream(&more, &len);
	int bad = 0;

	if (!sf)
		return -1;
	dbtp_gt_rw_read(rw, read_per_exec(bl));
	for (; r->done < r->u && !bad; r->done++) {
		unsigned j = r->done;
		FILE *bf = open_memstream(&r->body[j], &blen);
		struct dbtp_gt_rw_stats st;

		if (!bf) {
			fclose(sf);
			free(more);
			return -1;
		}
		bad = dbtp_gt_rw_block(rw, b * DBTP_GT_MAX_UNROLL + j,
				       bl->bytes, bl->nbytes, bl->ninsns,
				       bl->sizes, bl->vaddr, bf, sf, &st, NULL);
		fclose(bf);
		if (!j && st0)
			*st0 = st;
	}
	fclose(sf);
	all = realloc(r->slots, had + len + 1);
	if (!all) {
		free(more);
		return -1;
	}
	memcpy(all + had, more, len + 1);
	free(more);
	r->slots = all;
	return bad;
}

/*
 * The chains (plan_chains()) and, for each, row nb + X: X's plan, its
 * copy 0 rewritten (a chain whose copy fails is left out).
 */
static int chain_rows(dbtp_gt_rw *rw, const dbtp_gt_model *m,
		      const struct dbtp_gt_group *g, uint32_t ng,
		      struct rewritten *rd, struct dbtp_gt_summary *sum,
		      uint64_t min, double *sub, dbtp_err *err)
{
	uint32_t nb = dbtp_gt_model_nblocks(m);
	/* the sequences without chains */
	uint32_t *head = malloc((2 * (size_t)nb + 1) * sizeof(*head)),
		 *next = malloc((2 * (size_t)nb + 1) * sizeof(*next));
	int rc = !head || !next
		     ? dbtp_err_set(err, ENOMEM, "out of memory")
		     : plan_sequences(m, g, ng, rd, 1, head, next, err) ||
			   plan_chains(m, g, ng, rd, head, min, sub, err);

	free(head);
	free(next);
	if (rc)
		return -1;
	for (uint32_t p = 0; p < nb; p++) {
		uint32_t x = rd[p].chain_to;
		struct rewritten *v;
		int bad;

		if (x == UINT32_MAX)
			continue;
		v = &rd[nb + x];
		*v = rd[x];
		memset(v->body, 0, sizeof(v->body));
		v->slots = NULL;
		v->done = 0;
		v->u = 1;
		v->chain_to = v->chain_from = UINT32_MAX;
		bad = rewrite_copies(rw, m, nb + x, v, &sum->stat[nb + x]);
		if (bad < 0)
			return dbtp_err_set(err, ENOMEM, "out of memory");
		if (bad) {
			v->ok = 0;
			rd[p].chain_to = rd[x].chain_from = UINT32_MAX;
			sub[2 * x] = sub[2 * x + 1] = 0;
		}
	}
	return 0;
}

/*
 * After the copies: a chain one of whose rows failed goes, with its block
 * P, whose plan was the chain's (counted in @sum as left out instead of
 * the failed row), and X then runs its own count.
 */
static void unchain_failed(struct rewritten *rd, uint32_t nb, double *sub,
			   struct dbtp_gt_summary *sum)
{
	for (uint32_t p = 0; p < nb; p++) {
		uint32_t x = rd[p].chain_to;

		if (x == UINT32_MAX || (rd[p].ok && rd[x].ok && rd[nb + x].ok))
			continue;
		sum->skipped += rd[p].ok && rd[x].ok;
		rd[p].ok = rd[nb + x].ok = 0;
		rd[p].chain_to = rd[x].chain_from = UINT32_MAX;
		sub[2 * x] = sub[2 * x + 1] = 0;
	}
}

/*
 * The summary's rows of the chains' copies folded into their blocks' (a
 * copy runs P's count, its block the rest), and then the blocks counted
 * by what their rows say (put_random(), put_cross(), put_walks(),
 * put_unaligned()).
 */
static void count_blocks(const dbtp_gt_model *m, const struct rewritten *rd,
			 struct dbtp_gt_summary *sum)
{
	uint32_t nb = dbtp_gt_model_nblocks(m);

	for (uint32_t x = 0; x < nb; x++) {
		uint32_t v = nb + x;
		double cv, cx, w;

		if (rd[x].chain_from == UINT32_MAX)
			continue;
		cv = row_count(m, rd, v);
		cx = cv + row_count(m, rd, x);
		w = cx > 0 ? cv / cx : 0.5;
		if (!sum->random[x])
			sum->random[x] = sum->random[v];
		sum->crossing[x] |= sum->crossing[v];
		sum->far[x] = (1 - w) * sum->far[x] + w * sum->far[v];
		sum->walks[x] = (1 - w) * sum->walks[x] + w * sum->walks[v];
		sum->misaligned[x] =
		    (1 - w) * sum->misaligned[x] + w * sum->misaligned[v];
	}
	for (uint32_t b = 0; b < nb; b++) {
		sum->mispredict += sum->random[b] > 0;
		sum->mispredict_ind += sum->random[b] > 1;
		sum->random[b] = sum->random[b] > 0;
		sum->cross_page += sum->crossing[b];
		sum->walk_blocks += sum->walks[b] > 0;
		sum->far_blocks += sum->far[b] > 0;
		sum->unaligned_blocks += sum->misaligned[b] > 0;
	}
}

int dbtp_gt_emit(const dbtp_gt_model *m, const struct dbtp_gt_emit_opts *o,
		 FILE *f, struct dbtp_gt_summary *sum, dbtp_err *err)
{
	uint32_t nb = dbtp_gt_model_nblocks(m), ng = dbtp_gt_model_ngroups(m);
	uint32_t nr = nb ? 2 * nb : 1; /* rows: blocks, chains' copies */
	const struct dbtp_gt_group *groups;
	struct dbtp_gt_group naive;
	uint32_t *slot_of = NULL, *seq_head = NULL, *seq_next = NULL, nemit = 0;
	/* tables of targets (put_indirect(), put_branch_count()) */
	uint32_t njt = 0;
	uint8_t *want = NULL;
	uint64_t *chunk = NULL; /* per function: runs a call at most */
	struct rewritten *rd = NULL;
	dbtp_gt_rw *rw = NULL;
	dbtp_disasm *dis = NULL;
	double tmax = 0, dyn_total = 0;
	double *sub = NULL; /* plan_chains() */
	unsigned umax = o->unroll ? o->unroll : DBTP_GT_UNROLL;
	int rc = -1, a64 = dbtp_gt_model_arch(m) == DBTP_ARCH_AARCH64;
	int rnd_on = o->mispredict && !o->naive;   /* random branches */
	int cross_on = o->cross_page && !o->naive; /* put_cross() */
	int walk_on = o->misses && !o->naive &&	   /* put_walks() */
		      dbtp_gt_model_mem(m);
	int unal_on = o->unaligned && !o->naive && !a64 && /* put_unaligned() */
		      dbtp_gt_model_mem(m);
	double owed = 0; /* the crossings put_cross() has left owing */

	memset(sum, 0, sizeof(*sum));
	memset(&naive, 0, sizeof(naive));
	if (!ng)
		return dbtp_err_set(err, EINVAL, "no thread executed a block");
	if (umax > DBTP_GT_MAX_UNROLL || (umax & (umax - 1)))
		return dbtp_err_set(err, EINVAL,
				    "unroll %u: a power of two up to %u", umax,
				    DBTP_GT_MAX_UNROLL);
	if (dbtp_gt_rw_open(&rw, dbtp_gt_model_arch(m), err))
		return -1;
	if (dbtp_disasm_open(&dis, dbtp_gt_model_arch(m), err)) {
		dbtp_gt_rw_close(rw);
		return -1;
	}
	dbtp_gt_rw_mark(rw, walk_on || unal_on);
	dbtp_gt_rw_fp_exact(rw, o->fp_exact);
	sum->fp_exact = o->fp_exact;
	if (o->naive) {
		if (naive_group(m, o, &naive, err))
			goto out;
		groups = &naive;
		ng = 1;
	} else {
		groups = dbtp_gt_model_group(m, 0);
	}
	for (uint32_t p = 0; p < dbtp_gt_model_nprofiles(m); p++)
		if (dbtp_gt_model_threads(m, p) > tmax)
			tmax = dbtp_gt_model_threads(m, p);
	/* (by row, the summary's past the model's blocks until folded:
	 * count_blocks()) */
	sum->stat = calloc(nr, sizeof(*sum->stat));
	sum->emitted = calloc(nr, 1);
	sum->random = calloc(nr, 1);
	sum->crossing = calloc(nr, 1);
	sum->walks = calloc(nr, sizeof(*sum->walks));
	sum->far = calloc(nr, sizeof(*sum->far));
	sum->misaligned = calloc(nr, sizeof(*sum->misaligned));
	chunk = calloc(nr, sizeof(*chunk));
	want = calloc(nr, 1);
	slot_of = calloc(nr, sizeof(*slot_of));
	seq_head = malloc(nr * sizeof(*seq_head));
	seq_next = malloc(nr * sizeof(*seq_next));
	rd = calloc(nr, sizeof(*rd));
	sub = calloc(nr, sizeof(*sub));
	if (!sum->stat || !sum->emitted || !sum->random || !sum->crossing ||
	    !sum->walks || !sum->far || !sum->misaligned || !chunk || !want ||
	    !slot_of || !seq_head || !seq_next || !rd || !sub)
		goto nomem;
	/* no sequences (the naive baseline's) until planned, no chains */
	memset(seq_head, 0xff, nr * sizeof(*seq_head));
	memset(seq_next, 0xff, nr * sizeof(*seq_next));
	for (uint32_t b = 0; b < nr; b++)
		rd[b].chain_to = rd[b].chain_from = UINT32_MAX;
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t k = 0; k < groups[i].nhot; k++)
			want[groups[i].hot[k].block] = 1;
	/* Copy 0 of every wanted block, the copies' plan, the other copies */
	for (uint32_t b = 0; b < nb; b++) {
		int bad;

		if (!want[b])
			continue;
		if (!o->naive)
			last_branch(m, b, &rd[b]);
		if (rnd_on)
			plan_random(m, b, dis, 1, &rd[b]);
		rd[b].u = 1;
		bad = rewrite_copies(rw, m, b, &rd[b], &sum->stat[b]);
		if (bad < 0)
			goto nomem;
		sum->skipped += bad;
		rd[b].ok = !bad;
		if (walk_on && sum->stat[b].walkable)
			rd[b].walk = miss_rate(m, b, 0);
	}
	if (o->chains && !o->naive &&
	    chain_rows(rw, m, groups, ng, rd, sum,
		       o->copy_min ? o->copy_min : DBTP_GT_UNROLL_MIN, sub,
		       err))
		goto out;
	if (plan_copies(m, groups, ng, rd, sum->stat, umax,
			o->copy_min ? o->copy_min : DBTP_GT_UNROLL_MIN,
			o->naive, dis, seq_head, seq_next, err))
		goto out;
	for (uint32_t b = 0; b < nr; b++) {
		int bad = rd[b].ok ? rewrite_copies(rw, m, b, &rd[b], NULL) : 0;

		if (bad < 0)
			goto nomem;
		if (bad) { /* a later copy failed: leave the block out */
			sum->skipped++;
			rd[b].ok = 0;
		}
	}
	unchain_failed(rd, nb, sub, sum);

	fprintf(f,
		"/* Generated by dbtprof gentest%s%s: a %s test program that\n"
		" * runs the profiled blocks with their relative hotness and "
		"thread\n"
		" * behaviour.  cc -O2 -pthread FILE.c -o test && ./test "
		"--help */\n"
		"#define _GNU_SOURCE\n"
		"#include <fcntl.h>\n#include <pthread.h>\n"
		"#include <stdint.h>\n#include <unistd.h>\n"
		"#include <stdio.h>\n#include <stdlib.h>\n"
		"#include <string.h>\n#include <sys/auxv.h>\n"
		"#include <sys/mman.h>\n#include <time.h>\n\n",
		o->source ? ": " : "", o->source ? o->source : "",
		o->naive ? "naive (random blocks)" : "generated");
	fprintf(f,
		"#define GT_NAME \"%s\"\n#define GT_THREADS %.17g\n"
		"#define GT_SLOT_MXCSR %d\n#define GT_SLOT_FCW %d\n"
		"#define GT_SLOT_DIV %d\n#define GT_SLOT_ZERO %d\n"
		"#define GT_SLOT_FXSAVE %d\n#define GT_SLOT_WALK %d\n"
		"#define GT_SLOT_CURSOR %d\n#define GT_SLOT_RESERVE %d\n"
		"#define GT_DATA %d\n"
		"#define GT_JUMPS %d\n#define GT_JT_BYTES %d\n"
		"#define GT_BUF_SIZE ((%d + GT_JT_COUNT * GT_JT_BYTES + 8191) "
		"& ~8191)\n"
		"#define GT_DATA_FILL 0x%x\n"
		"#define GT_RESERVE_BUF (8 << 20)\n"
		"#define GT_RESERVE (GT_RESERVE_BUF + GT_FAR_WALKS * "
		"GT_FAR_ALL)\n"
		"#define GT_FAR_ALL (GT_FAR_BYTES * (1 + GT_FAR_CHAIN))\n"
		"#define GT_FAR %d\n#define GT_FAR_BYTES %d\n"
		"#define GT_FAR_LINES %d\n"
		"#define GT_RAND %d\n#define GT_RAND_SIZE %d\n"
		"#define GT_RIDX %d\n"
		"#define GT_RANDOM %d\n"
		"#define GT_WALKS %d\n#define GT_WALK %d\n"
		"#define GT_WALK_NEXT %d\n"
		"#define GT_A64 %d\n#define GT_WALK_STEP %d\n",
		o->naive ? "naive" : "test", o->naive ? 1.0 : tmax,
		DBTP_GT_SLOT_MXCSR, DBTP_GT_SLOT_FCW, DBTP_GT_SLOT_DIV,
		DBTP_GT_SLOT_ZERO, DBTP_GT_SLOT_FXSAVE, DBTP_GT_SLOT_WALK,
		DBTP_GT_SLOT_CURSOR, DBTP_GT_SLOT_RESERVE, DBTP_GT_DATA,
		DBTP_GT_JUMPS, 8 * DBTP_GT_JT_ENTRIES, DBTP_GT_BUF_SIZE,
		DBTP_GT_DATA_FILL, DBTP_GT_FAR, DBTP_GT_FAR_BYTES,
		DBTP_GT_FAR_SIZE / 64, DBTP_GT_RAND, DBTP_GT_RAND_SIZE,
		DBTP_GT_RIDX, rnd_on, walk_on, DBTP_GT_WALK,
		DBTP_GT_WALK + DBTP_GT_WALK_NEXT, a64, DBTP_GT_A64_CHUNK);
	if (a64)
		fprintf(f, "#define GT_FXSAVE(p) ((void)(p))\n\n"
			   "__asm__(\n\t\".text\\n\"\n");
	else
		fprintf(
		    f, "#define GT_FXSAVE(p) __asm__ volatile(\"fxsave %%0\" : "
		       "\"=m\"(*(char(*)[512])(p)))\n\n"
		       "__asm__(\n\t\".intel_syntax noprefix\\n\"\n"
		       "\t\".text\\n\"\n");
	/* --pad: the same code elsewhere, for layouts' effects */
	if (o->pad)
		fprintf(f, "\t\"\\t.skip %u, %s\\n\"\n", o->pad,
			a64 ? "0" : "0xcc");
	if (!a64) {
		char *sh = NULL;
		size_t sh_len = 0;
		FILE *sf = open_memstream(&sh, &sh_len);

		if (!sf)
			goto nomem;
		emit_shared_x86(sf, rnd_on || walk_on, cross_on);
		fclose(sf);
		put_asm(f, sh);
		free(sh);
	} else {
		put_asm(f, GT_JT_HEAD);
		if (cross_on)
			put_asm(f, GT_FAR_ALIGN);
	}
	if (!o->naive &&
	    plan_sequences(m, groups, ng, rd, 0, seq_head, seq_next, err))
		goto out;
	if (walk_on && !a64 &&
	    plan_far(m, rd, seq_head, seq_next, sum->stat, nb))
		goto nomem;
	for (uint32_t b = 0; b < nb; b++) {
		const struct dbtp_gt_block *bl = blk(m, b);
		struct rewritten *r = &rd[b];
		struct dbtp_gt_rw_stats st = sum->stat[b];
		char *seq[DBTP_GT_MAX_UNROLL] = {0}, *seq_slots = NULL;
		char *fn = NULL, **body = r->body;
		const char *slots = r->slots;
		char *jtext = NULL; /* its tables of targets */
		size_t fn_len = 0, jt_len = 0;
		uint32_t last;
		FILE *ff, *jt;
		const struct gpr *wg = NULL, *ws = NULL;
		const struct walk_area *wa = &near_area;
		int rnd, bc, far, walks = 0, reset, dr, unal, cut;
		/* AArch64: its registers */
		struct dbtp_gt_a64_fn fa = {.wreg = -1, .jreg = -1};
		uint32_t keep, most; /* passes a call without a stack reset */
		uint32_t wbp = UINT32_MAX, wbl; /* the writebacks' base's */
		uint32_t bcp; /* a branch that counts: its passes a call */

		if (!r->ok || seq_member(seq_head, b))
			continue;
		last = seq_last(seq_next, b);
		if (closes(&rd[last]))
			cut_last(rd[last].body[r->u - 1],
				 last * DBTP_GT_MAX_UNROLL + r->u - 1,
				 blk(m, last)->ninsns);
		if (seq_head[b] == b) {
			if (sequence_text(m, rd, sum->stat, seq_next, b, a64,
					  seq, &seq_slots, &st)) {
				free_texts(seq, seq_slots);
				goto nomem;
			}
			body = seq;
			slots = seq_slots;
		}
		jt = open_memstream(&jtext, &jt_len);
		if (!jt) {
			free_texts(seq, seq_slots);
			goto nomem;
		}
		fa.joff = jt_at(njt) - DBTP_GT_DATA;
		rnd = rnd_on ? put_random(m, rd, seq_next, b, body, &st, jt,
					  &njt, &fa.jreg, sum)
			     : 0;
		/* AArch64: a switch that counts the passes, its add kept
		 * (not fold_target_a64()'s); no tail to walk in */
		bc = a64 && !rnd && r->branch_count && !st.moves_sp
			 ? put_branch_count_a64(m, b, last, body, &st,
						&fa.bc_shift, sum)
			 : 0;
		fa.bc = bc > 0;
		for (uint32_t k = b;
		     a64 && rnd >= 0 && bc >= 0 && k != UINT32_MAX;
		     k = seq_next[k])
			if (ends_indirect(m, &rd[k], k) &&
			    !(fa.bc && k == last) &&
			    fold_target_a64(body, r->u, k, blk(m, k),
					    &sum->stat[k]) < 0)
				rnd = -1;
		wbl = fa.bc ? DBTP_GT_SP_PASSES : 0; /* no tail to reset in */
		fa.sreg =
		    a64 ? fold_writebacks_a64(body, r->u, &st, wbl, &wbp, sum)
			: -1;
		fa.sreset = fa.sreg >= 0 && wbp < DBTP_GT_SP_PASSES;
		unal =
		    unal_on ? put_unaligned(m, rd, seq_next, b, body, sum) : 0;
		if (walk_on && !fa.bc) {
			if (a64)
				fa.wreg =
				    dbtp_gt_a64_reg(st.regs, !rnd	   ? 1
							     : fa.jreg < 0 ? 3
									   : 4);
			else
				wg = walk_reg(rd, seq_next, b, st.regs);
			if (!a64 && !wg)
				ws = spill_gpr(st.regs, NULL, 0);
			wa = rd[b].far ? rd[b].far : &near_area;
			walks = put_walks(m, rd, seq_next, b, body,
					  wg ? wg->name[0] : NULL, fa.wreg,
					  ws ? st.regs : 0, wa, sum->stat, sum);
			if (walks <= 0) {
				wg = ws = NULL;
				fa.wreg = -1;
				rd[b].far = NULL;
			}
		}
		for (unsigned j = 0; (walk_on || unal_on) && j < r->u; j++)
			strip_marks(body[j]);
		if (seq_head[b] != b)
			pass_moves(&st, &sum->stat[b], r->u);
		keep = st.moves_sp ? sp_passes(&st) : UINT32_MAX;
		reset = keep < DBTP_GT_SP_PASSES;
		dr = reset && !a64 && st.sp_reset
			 ? define_resets(body, r->u, sp_popped(&st))
			 : 0;
		if (!a64) {
			bc = !rnd && !wg && !ws && r->branch_count &&
				     njt < DBTP_GT_JT_MAX
				 ? put_branch_count(m, &rd[last], b, last, body,
						    &st, reset, njt, jt)
				 : 0;
			njt += bc > 0;
		}
		fclose(jt);
		far = cross_on ? put_cross(m, rd, seq_next, b, body, &owed, sum)
			       : 0;
		if (rnd < 0 || walks < 0 || bc < 0 || far < 0 || dr < 0 ||
		    unal < 0 || fa.sreg < -1) {
			free(jtext);
			free_texts(seq, seq_slots);
			goto nomem;
		}
		/* passes a call at most: the stack's, a table's, the
		 * writebacks' base's */
		most = reset ? UINT32_MAX : keep;
		bcp = a64 ? DBTP_GT_A64_BC_PASSES : DBTP_GT_RAND_PASSES;
		if (bc > 0 && most > bcp)
			most = bcp;
		if (a64 && rnd > 0 && most > DBTP_GT_A64_RAND_PASSES)
			most = DBTP_GT_A64_RAND_PASSES;
		if (fa.sreg >= 0 && !fa.sreset && most > wbp)
			most = wbp;
		if (most < UINT32_MAX)
			chunk[b] = (uint64_t)most * r->u;
		ff = open_memstream(&fn, &fn_len);
		if (!ff) {
			free(jtext);
			free_texts(seq, seq_slots);
			goto nomem;
		}
		fprintf(ff, "# block %u at 0x%" PRIx64 ", %u instructions%s\n",
			b, bl->vaddr, bl->ninsns,
			seq_slots ? ", with the rest of its sequence" : "");
		if (a64) {
			fa.rnd = rnd > 0;
			fa.far = far;
			/* the tail's subs in place of the compare, its
			 * counter in a register (emit-a64.c) */
			cut =
			    reads_flags(m, rd, last) && counter_free(1, st.regs)
				? cut_compare(body[r->u - 1],
					      last * DBTP_GT_MAX_UNROLL + r->u -
						  1,
					      blk(m, last)->ninsns, 1)
				: 0;
			dbtp_gt_emit_function_a64(ff, b, r->u, body, slots, &st,
						  &fa);
		} else {
			cut = emit_function(
			    ff, b, r->u, body, slots, &st, rnd || wg, bc, far,
			    wg, ws, wa, reset,
			    last * DBTP_GT_MAX_UNROLL + r->u - 1,
			    reads_flags(m, rd, last) ? blk(m, last)->ninsns
						     : 0);
		}
		/* a kept compare gone from copy 0, the one the summary
		 * describes */
		if (cut == 1 && r->u == 1) {
			sum->stat[last].n[DBTP_GT_KEPT]--;
			sum->stat[last].n[DBTP_GT_REWRITTEN]++;
		}
		if (jt_len) /* after gt_jt (GT_JT_HEAD), in order */
			fprintf(ff,
				"\t.pushsection .data.rel.ro.gt_jt,\"aw\"\n%s"
				"\t.popsection\n",
				jtext);
		free(jtext);
		fclose(ff);
		put_asm(f, fn);
		free(fn);
		free_texts(seq, seq_slots);
	}
	for (uint32_t b = 0; b < nb; b++)
		if (rd[b].ok) {
			sum->emitted[b] = 1;
			slot_of[b] = nemit++;
			sum->loader += blk(m, b)->loader;
		}
	for (uint32_t b = 0; b < nb; b++)
		if (rd[b].chain_to != UINT32_MAX) {
			slot_of[nb + rd[b].chain_to] = slot_of[rd[b].chain_to];
			sum->chains++;
		}
	count_blocks(m, rd, sum);
	if (cross_on)
		put_asm(f, GT_FAR_ALIGN);
	fprintf(f, a64 ? ");\n\n" : "\t\".att_syntax prefix\\n\");\n\n");
	sum->blocks = nemit;
	for (uint32_t b = 0; b < nb; b++)
		if (sum->emitted[b])
			fprintf(f, "void gt_b%u(void *buf, uint64_t n);\n", b);
	fprintf(f,
		"\nstruct gt_hot {\n\tvoid (*fn)(void *buf, uint64_t n);\n"
		"\tunsigned block;\n"
		"\tint loader; /* run only when linked statically */\n"
		"\tint far; /* walks over the far area */\n"
		"\tdouble theta, delta;\n"
		"\tconst unsigned *also; /* the rest of a sequence */\n"
		"\tunsigned nalso;\n"
		"\tuint64_t chunk; /* runs a call at most (0: any) */\n};\n"
		"struct gt_group {\n\tdouble alpha, beta;\n\tint parent;\n"
		"\tdouble create_at, join_at; /* at T = 0 */\n"
		"\tdouble create_t, join_t; /* per unit of T */\n"
		"\tint serial, even;\n"
		"\tconst double *shares;\n\tunsigned nshares;\n"
		"\tconst struct gt_hot *hot;\n\tunsigned nhot;\n};\n\n"
		"#define GT_NGROUPS %u\n#define GT_NBLOCKS %u\n\n",
		ng, nemit ? nemit : 1);
	fprintf(f, "static const unsigned gt_block_id[] = {");
	for (uint32_t b = 0, n = 0; b < nb; b++)
		if (sum->emitted[b])
			fprintf(f, "%s%u", n++ ? ", " : "", b);
	fprintf(f, "%s};\nstatic const unsigned long long gt_block_vaddr[] = {",
		nemit ? "" : "0");
	for (uint32_t b = 0, n = 0; b < nb; b++)
		if (sum->emitted[b])
			fprintf(f, "%s0x%" PRIx64, n++ ? ", " : "",
				blk(m, b)->vaddr);
	fprintf(f, "%s};\n\n", nemit ? "" : "0");
	emit_group_tables(f, m, groups, ng, rd, sum->emitted, slot_of, seq_head,
			  seq_next, chunk, sub);
	fprintf(f,
		"#define GT_JT_COUNT %u\n#define GT_FAR_WALKS %d\n"
		"#define GT_FAR_CHAIN %d\n",
		njt, sum->far_blocks > 0, sum->far_chase > 0);
	fputs(driver, f);
	/* Dynamic coverage at the largest profiled thread parameter. */
	for (uint32_t i = 0; i < ng; i++) {
		uint64_t sz = dbtp_gt_size(&groups[i], o->naive ? 1 : tmax);

		for (uint32_t k = 0; k < groups[i].nhot; k++) {
			const struct dbtp_gt_hot *h = &groups[i].hot[k];
			const struct dbtp_gt_block *bl = blk(m, h->block);
			uint64_t c = 0;

			for (uint64_t t = 0; t < sz; t++)
				c += dbtp_gt_count(&groups[i], h, sz, t);
			if (!sum->emitted[h->block]) {
				sum->dyn[DBTP_GT_DROPPED] +=
				    (double)c * bl->ninsns;
				continue;
			}
			if (bl->loader)
				sum->dyn_loader += (double)c * bl->ninsns;
			sum->execs += (double)c;
			if (rd[h->block].chain_to != UINT32_MAX)
				sum->execs_chained += 2.0 * (double)c;
			if (bl->count) {
				sum->misses_orig +=
				    (double)c * miss_rate(m, h->block, 0);
				sum->l2_orig +=
				    (double)c * miss_rate(m, h->block, 1);
				sum->unaligned_orig += (double)c *
						       (double)bl->unaligned /
						       (double)bl->count;
			}
			sum->misses_walk += (double)c * sum->walks[h->block];
			sum->l2_walk += (double)c * sum->far[h->block];
			sum->unaligned_made +=
			    (double)c * sum->misaligned[h->block];
			sum->read += (double)c * read_per_exec(bl);
			sum->dyn_fp += (double)c * sum->stat[h->block].fp;
			for (int j = 0; j < 3; j++)
				sum->dyn[j] +=
				    (double)c * sum->stat[h->block].n[j];
		}
	}
	for (int j = 0; j < 3; j++)
		dyn_total += sum->dyn[j];
	(void)dyn_total;
	if (ferror(f)) {
		dbtp_err_set(err, errno, "writing the program: %s",
			     strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	dbtp_err_set(err, ENOMEM, "out of memory");
out:
	free(naive.hot);
	free(sub);
	free(want);
	free(chunk);
	free(slot_of);
	free(seq_head);
	free(seq_next);
	for (uint32_t b = 0; rd && b < nr; b++)
		free_texts(rd[b].body, rd[b].slots);
	free(rd);
	dbtp_disasm_close(dis);
	dbtp_gt_rw_close(rw);
	if (rc)
		dbtp_gt_summary_free(sum);
	return rc;
}

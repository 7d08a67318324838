/* SPDX-License-Identifier: MIT */
/*
 * test-gentest-a64.c - dbtprof gentest's AArch64 rewriter: a table of
 * tricky instructions and short blocks (every load/store addressing mode,
 * pairs, SIMD structures, exclusives and LSE atomics, literal loads,
 * ADR/ADRP, every branch form, svc, EL0 system registers, dc zva, FP and
 * SIMD arithmetic, division by zero, x28 as data, stack-pointer writes,
 * privileged and pointer-authentication instructions), each with its
 * expected outcome per instruction and what its rewriting must say; then
 * the whole table as one generated program, compiled with the AArch64
 * cross compiler (warnings are errors) and run under qemu-aarch64, which
 * must execute every block as often as asked and exit normally.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbtp/gentest.h"
#include "dbtp/trace.h"
#include "gentest/rewrite.h"
#include "t.h"

static char dir[] = "/tmp/dbtp-gentest-a64.XXXXXX";

#define SP (1u << 31)
#define X(n) (1u << (n))

/*
 * @w: the block's instructions (up to 4), @out: their outcomes (K kept,
 * R rewritten, D dropped), @text: what the rewritten block must contain
 * (NULL: nothing checked), @regs: bits its register mask must have,
 * @noregs: bits it must not have.
 */
struct tricky {
	const char *name;
	uint32_t w[4];
	const char *out;
	const char *text;
	uint32_t regs, noregs;
};

static const struct tricky table[] = {
    /* loads and stores, every addressing mode */
    {"ldr x0, [x1, #8]", {0xf9400420}, "R", "ldr x0, [x28, #8]", 0, 0},
    {"ldrb w0, [x1, #3]", {0x39400c20}, "R", "ldrb w0, [x28, #3]", 0, 0},
    /* -8 modulo the 32 KiB data area */
    {"ldur x0, [x1, #-8]", {0xf85f8020}, "R", "ldr x0, [x28, #0x7ff8]", 0, 0},
    {"stur w0, [x29, #-4]", {0xb81fc3a0}, "R", "str w0, [x28, #0x3ffc]", 0, 0},
    {"ldr x0, [x1, #16]!",
     {0xf8410c20},
     "R",
     "ldr x0, [x28, #0x10] (was ldr x0, [x1, #0x10]!)\n\tadd x1, x1, #16",
     X(1),
     0},
    {"ldr x0, [x1], #16", {0xf8410420}, "R", "add x1, x1, #16", 0, 0},
    {"ldrh w0, [x1, #-2]!",
     {0x785fec20},
     "R",
     "ldrh w0, [x28, #0x1ffe] (was ldrh w0, [x1, #-2]!)\n\tsub x1, x1, #2",
     0,
     0},
    {"strb w0, [x1], #-1", {0x381ff420}, "R", "sub x1, x1, #1", 0, 0},
    {"ldtr x0, [x1, #8]", {0xf8408820}, "R", "ldr x0, [x28, #8]", 0, 0},
    {"ldr x0, [x1, x2, lsl #3]", {0xf8627820}, "R", "ldr x0, [x28]", 0, 0},
    {"ldrsw x0, [x1, w2, sxtw #2]", {0xb8a2d820}, "R", "ldrsw x0, [x28]", 0, 0},
    {"ldr x0, [sp, x1]", {0xf8616be0}, "R", "ldr x0, [x28]", 0, 0},
    {"ldr q0, [x0, #-16]!", {0x3cdf0c00}, "R", "ldr q0, [x28, #0x7ff0]", 0, 0},
    {"prfm pldl1keep, [x0]", {0xf9800000}, "R", "prfm pldl1keep, [x28]", 0, 0},
    /* on the private stack: kept */
    {"str q0, [sp, #32]", {0x3d800be0}, "K", NULL, SP, 0},
    {"stp x29, x30, [sp, #-16]!", {0xa9bf7bfd}, "K", NULL, SP | X(29), 0},
    {"ldp x29, x30, [sp], #16", {0xa8c17bfd}, "K", NULL, SP | X(30), 0},
    {"ldp x0, x1, [sp, #16]", {0xa94107e0}, "K", NULL, SP, 0},
    {"casal w0, w1, [sp]", {0x88e0ffe1}, "K", NULL, SP, 0},
    /* pairs: offset modulo what the form encodes, aligned */
    {"ldp q0, q1, [x0, #32]",
     {0xad410400},
     "R",
     "ldp q0, q1, [x28, #0x20]",
     0,
     0},
    {"ldnp d0, d1, [x2]", {0x6c400440}, "R", "ldnp d0, d1, [x28]", 0, 0},
    {"ldp x0, x28, [x1, #16]",
     {0xa9417020},
     "R",
     "ldp x0, x27, [x28, #0x10]",
     X(27),
     X(28)},
    {"stp x28, x0, [sp, #-32]!", {0xa9be03fc}, "R", NULL, SP, 0},
    /* SIMD structures */
    {"ld1 {v0.16b}, [x1]", {0x4c407020}, "R", "ld1 {v0.16b}, [x28]", 0, 0},
    {"ld1 {v0.16b, v1.16b}, [x1], #32",
     {0x4cdfa020},
     "R",
     "add x1, x1, #32",
     0,
     0},
    {"ld1 {v0.s}[1], [x1], x2",
     {0x0dc29020},
     "R",
     "add x1, x1, x2",
     X(1) | X(2),
     0},
    {"st1 {v0.4s}, [x3]", {0x4c007860}, "R", "st1 {v0.4s}, [x28]", 0, 0},
    {"st2 {v0.4s, v1.4s}, [x1], #32",
     {0x4c9f8820},
     "R",
     "st2 {v0.4s, v1.4s}, [x28]",
     0,
     0},
    {"ld1r {v0.4s}, [x2]", {0x4d40c840}, "R", "ld1r {v0.4s}, [x28]", 0, 0},
    /* exclusives, ordered, LSE atomics (not known to Capstone 4) */
    {"ldxr x0, [x1]", {0xc85f7c20}, "R", "ldxr x0, [x28]", 0, 0},
    {"stxr w2, x0, [x1]", {0xc8027c20}, "R", "stxr w2, x0, [x28]", 0, 0},
    {"ldxp x0, x1, [x2]", {0xc87f0440}, "R", "ldxp x0, x1, [x28]", 0, 0},
    {"ldar x0, [x1]", {0xc8dffc20}, "R", "ldar x0, [x28]", 0, 0},
    {"stlr x0, [x1]", {0xc89ffc20}, "R", "stlr x0, [x28]", 0, 0},
    {"ldadd x0, x1, [x2]", {0xf8200041}, "R", ".inst 0xf8200381", X(0), 0},
    {"ldaddal w0, w1, [x2]", {0xb8e00041}, "R", ".inst 0xb8e00381", 0, 0},
    {"swp x0, x1, [x2]", {0xf8208041}, "R", ".inst 0xf8208381", 0, 0},
    {"cas x0, x1, [x2]", {0xc8a07c41}, "R", ".inst 0xc8a07f81", 0, 0},
    {"casp x0, x1, x2, x3, [x4]", {0x48207c82}, "R", ".inst 0x48207f82", 0, 0},
    {"ldapr x0, [x1]", {0xf8bfc020}, "R", ".inst 0xf8bfc380", 0, 0},
    /* -8 modulo 256 */
    {"ldapur x0, [x1, #-8]", {0xd95f8020}, "R", ".inst 0xd94f8380", 0, 0},
    {"stlur w0, [x1, #4]", {0x99004020}, "R", ".inst 0x99004380", 0, 0},
    /* a retry loop: lands after the cbnz, never spins */
    {"ldaxr/add/stlxr/cbnz",
     {0x885ffc20, 0x11000400, 0x8802fc20, 0x35ffffa2},
     "RKRR",
     "cbnz w2, .Lg",
     0,
     0},
    /* SVE contiguous loads and stores (QEMU's default CPU has SVE) */
    {"ld1b {z0.b}, p0/z, [x1]", {0xa400a020}, "R", ".inst 0xa400a380", 0, 0},
    {"ld1b {z0.b}, p0/z, [x1, x2]",
     {0xa4024020},
     "R",
     ".inst 0xa400a380",
     X(1) | X(2),
     0},
    {"ld1d {z1.d}, p1/z, [x3, #2, mul vl]",
     {0xa5e2a461},
     "R",
     ".inst 0xa5e0a781",
     0,
     0},
    {"st1b {z0.b}, p0, [x0]", {0xe400e000}, "R", ".inst 0xe400e380", 0, 0},
    {"st1d {z1.d}, p1, [x3, x4, lsl #3]",
     {0xe5e44461},
     "R",
     ".inst 0xe5e0e781",
     0,
     0},
    {"st1w {z2.s}, p2, [x5, #-1, mul vl]",
     {0xe54fe8a2},
     "R",
     ".inst 0xe540eb82",
     0,
     0},
    {"ldff1b {z0.b}, p0/z, [x1, x2]",
     {0xa4026020},
     "R",
     ".inst 0xa41f6380",
     0,
     0},
    {"ldnf1b {z0.b}, p0/z, [x1, #1, mul vl]",
     {0xa411a020},
     "R",
     ".inst 0xa410a380",
     0,
     0},
    {"ldr z0, [x0, #1, mul vl]", {0x85804400}, "R", ".inst 0x85804380", 0, 0},
    {"ld1b {z0.b}, p0/z, [sp]", {0xa400a3e0}, "K", NULL, SP, 0},
    {"ld1d {z0.d}, p0/z, [z1.d] (gather)", {0xc5a0c020}, "D", NULL, 0, 0},
    /* PC-relative */
    {"adr x0, .", {0x10000000}, "K", NULL, 0, 0},
    {"adrp x0, .", {0x90000000}, "K", NULL, 0, 0},
    {"ldr x0, <literal>", {0x58000000}, "R", "ldr x0, [x28, #", 0, 0},
    {"ldr q0, <literal>", {0x9c000000}, "R", "ldr q0, [x28, #", 0, 0},
    {"ldrsw x0, <literal>", {0x98000000}, "R", "ldrsw x0, [x28, #", 0, 0},
    /* branches */
    {"b.ne .", {0x54000001}, "R", "b.ne .Lg", 0, 0},
    {"cbz x0, .", {0xb4000000}, "R", "cbz x0, .Lg", 0, 0},
    {"cbz w28, .", {0x3400001c}, "R", "cbz w27, .Lg", 0, 0},
    {"tbnz w1, #3, .", {0x37180001}, "R", "tbnz w1, #3, .Lg", 0, 0},
    {"tbz x28, #40, .", {0xb640001c}, "R", "tbz x27, #40, .Lg", 0, 0},
    {"b .", {0x14000000}, "R", "b .Lg", 0, 0},
    {"bl .", {0x94000000}, "R", "bl .Lg", X(30), 0},
    {"blr x1", {0xd63f0020}, "R", "adr x1, .Lg", X(1) | X(30), 0},
    {"br x16", {0xd61f0200}, "R", "br x16", X(16), 0},
    {"br x28", {0xd61f0380}, "R", "br x27", X(27), X(28)},
    {"ret", {0xd65f03c0}, "R", "adr x30, .Lg", X(30), 0},
    {"retaa", {0xd65f0bff}, "R", "ret x30", X(30), 0},
    /* exit(7) becomes getpid: the program would end here otherwise */
    {"mov x8, #93; mov x0, #7; svc #0",
     {0xd2800ba8, 0xd28000e0, 0xd4000001},
     "KKR",
     "mov x8, #172",
     X(0) | X(8),
     0},
    /* system registers and operations */
    {"mrs x0, tpidr_el0", {0xd53bd040}, "K", NULL, 0, 0},
    {"mrs x0, fpcr", {0xd53b4400}, "K", NULL, 0, 0},
    {"mrs x0, nzcv", {0xd53b4200}, "K", NULL, 0, 0},
    {"mrs x0, cntvct_el0", {0xd53be040}, "K", NULL, 0, 0},
    {"mrs x0, dczid_el0", {0xd53b00e0}, "K", NULL, 0, 0},
    {"mrs x0, midr_el1", {0xd5380000}, "K", NULL, 0, 0},
    {"msr nzcv, x0", {0xd51b4200}, "K", NULL, 0, 0},
    {"msr fpcr, x0", {0xd51b4400}, "R", "msr fpcr, xzr", 0, 0},
    /* the program's TLS pointer: never written */
    {"msr tpidr_el0, xzr", {0xd51bd05f}, "D", NULL, 0, 0},
    {"mrs x0, sctlr_el1", {0xd5381000}, "D", NULL, 0, 0},
    {"dc zva, x0", {0xd50b7420}, "R", "dc zva, x28", 0, 0},
    {"isb", {0xd5033fdf}, "K", NULL, 0, 0},
    {"dmb ish", {0xd5033bbf}, "K", NULL, 0, 0},
    {"paciasp", {0xd503233f}, "K", NULL, 0, 0},
    {"autiasp", {0xd50323bf}, "D", NULL, 0, 0},
    {"autia x0, x1", {0xdac11020}, "D", NULL, 0, 0},
    {"ldraa x0, [x1]", {0xf8200420}, "D", NULL, 0, 0},
    {"wfi", {0xd503207f}, "D", NULL, 0, 0},
    {"msr daifset, #2", {0xd50342df}, "D", NULL, 0, 0},
    {"brk #0", {0xd4200000}, "D", NULL, 0, 0},
    {"hlt #0", {0xd4400000}, "D", NULL, 0, 0},
    {"hvc #0", {0xd4000002}, "D", NULL, 0, 0},
    {"udf #0", {0x00000000}, "D", NULL, 0, 0},
    /* FP, SIMD, division by zero: nothing traps */
    {"fadd v0.4s, v1.4s, v2.4s", {0x4e22d420}, "K", NULL, 0, 0},
    {"fdiv d0, d1, d2", {0x1e621820}, "K", NULL, 0, 0},
    {"fsqrt d0, d1", {0x1e61c020}, "K", NULL, 0, 0},
    {"frecpe v0.4s, v1.4s", {0x4ea1d820}, "K", NULL, 0, 0},
    {"ucvtf d0, x2", {0x9e630040}, "K", NULL, X(2), 0},
    {"mov x2, #0; sdiv x0, x1, x2; udiv w0, w1, w2",
     {0xd2800002, 0x9ac20c20, 0x1ac20820},
     "KKK",
     NULL,
     0,
     0},
    /* x28 as data: renamed x27 (the immediate 28 is left alone) */
    {"mov x28, x0", {0xaa0003fc}, "R", "mov x27, x0", X(27), X(28)},
    {"add x28, x28, #0x1c",
     {0x9100739c},
     "R",
     "add x27, x27, #0x1c",
     X(27),
     X(28)},
    {"fmov d0, x28", {0x9e670380}, "R", "fmov d0, x27", 0, X(28)},
    {"ldr x28, [x1]", {0xf940003c}, "R", "ldr x27, [x28]", 0, 0},
    /* renamed, x28 must not become the other register of the access */
    {"ldp x27, x28, [sp, #16]",
     {0xa94173fb},
     "R",
     "ldp x27, x26, [sp, #0x10]",
     X(26) | X(27) | SP,
     X(28)},
    {"ldp x28, x27, [x2, #32]",
     {0xa9426c5c},
     "R",
     "ldp x26, x27, [x28, #0x20]",
     X(26) | X(27),
     X(28)},
    {"ldxp x27, x28, [x1]",
     {0xc87f703b},
     "R",
     "ldxp x27, x26, [x28]",
     X(26),
     0},
    {"stxr w28, x27, [x1]",
     {0xc81c7c3b},
     "R",
     "stxr w26, x27, [x28]",
     X(26),
     0},
    /* stores may name one register twice */
    {"stp x27, x28, [sp, #-96]!",
     {0xa9ba73fb},
     "R",
     "stp x27, x27, [sp, #-0x60]!",
     SP,
     X(28)},
    {"ldr x0, [x28, #8]", {0xf9400780}, "K", NULL, 0, 0},
    /* stack-pointer writes */
    {"add sp, sp, #16", {0x910043ff}, "K", NULL, SP, 0},
    {"mov sp, x29", {0x910003bf}, "R", "add sp, x28, #323584", SP, 0},
    {"and sp, x0, #-16", {0x927cec1f}, "R", "add sp, x28, #323584", SP, 0},
    /* two pages kept, the third would pass the budget: reset first */
    {"sub sp, sp, #4096 x 3",
     {0xd14007ff, 0xd14007ff, 0xd14007ff},
     "KKR",
     "add sp, x28, #323584\n\t.inst 0xd14007ff",
     SP,
     0},
};

#define NTRICKY (sizeof(table) / sizeof(*table))

static unsigned ninsns_of(const struct tricky *t)
{
	return (unsigned)strlen(t->out);
}

static void words(const struct tricky *t, uint8_t *b)
{
	for (unsigned i = 0; i < ninsns_of(t); i++)
		for (int j = 0; j < 4; j++)
			b[4 * i + j] = (uint8_t)(t->w[i] >> (8 * j));
}

static int have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

/* The output of @cmd (its first line), or "" when it fails. */
static void output(const char *cmd, char *out, size_t n)
{
	FILE *p = popen(cmd, "r");
	int s;

	out[0] = 0;
	if (!p)
		return;
	if (!fgets(out, (int)n, p))
		out[0] = 0;
	s = pclose(p);
	if (!WIFEXITED(s) || WEXITSTATUS(s))
		snprintf(out, n, "(exit status %d)", s);
	out[strcspn(out, "\n")] = 0;
}

/* Every access of the rewritten @text (its .inst lines' disassembly)
 * goes through x28 or sp.  Return: the accesses seen, -1 on one that
 * does not. */
static int bases_ok(const char *text)
{
	int n = 0;

	for (const char *l = strstr(text, "\t.inst "); l;
	     l = strstr(l + 1, "\t.inst ")) {
		const char *c = strstr(l, "// "), *e = strchr(l + 1, '\n');
		const char *was = c ? strstr(c, " (was ") : NULL;
		const char *b = c ? strstr(c, ", [") : NULL; /* not a lane */

		if (!b || (e && b > e) || (was && b > was))
			continue;
		if (strncmp(b, ", [x28", 6) && strncmp(b, ", [sp", 5))
			return -1;
		n++;
	}
	return n;
}

/* Instruction @k's line in @t ends with DBTP_GT_WALK_MARK. */
static int marked(const char *t, unsigned k)
{
	char label[32];
	const char *l, *e;
	size_t ml = strlen(DBTP_GT_WALK_MARK);

	snprintf(label, sizeof(label), ".Lg0_%u:\n", k);
	l = t ? strstr(t, label) : NULL;
	if (!l)
		return 0;
	l += strlen(label);
	e = strchr(l, '\n');
	return e && (size_t)(e - l) >= ml &&
	       !strncmp(e - ml, DBTP_GT_WALK_MARK, ml);
}

/* Rewrite the words @w (@n of them) with @mark and @fp set; the text. */
static char *rewrite_words(const uint32_t *w, unsigned n, int mark, int fp,
			   struct dbtp_gt_rw_stats *st)
{
	dbtp_gt_rw *rw = NULL;
	dbtp_err err = {0};
	uint8_t code[64];
	char *text = NULL;
	size_t len = 0;
	FILE *tf, *sf;

	if (dbtp_gt_rw_open(&rw, DBTP_ARCH_AARCH64, &err))
		return NULL;
	for (unsigned i = 0; i < n; i++)
		for (int j = 0; j < 4; j++)
			code[4 * i + j] = (uint8_t)(w[i] >> (8 * j));
	dbtp_gt_rw_mark(rw, mark);
	dbtp_gt_rw_fp_exact(rw, fp);
	tf = open_memstream(&text, &len);
	sf = fopen("/dev/null", "w");
	CHECK(!dbtp_gt_rw_block(rw, 0, code, 4 * n, n, NULL, 0x400000, tf, sf,
				st, &err));
	fclose(tf);
	fclose(sf);
	dbtp_gt_rw_close(rw);
	return text;
}

/*
 * Walking operands: with marks on, the loads and stores of 1 to 8 bytes
 * that address the data area end their line with the mark (not a
 * 16-byte one, not one through sp); dbtp_gt_a64_walk() moves such a word
 * to [x<reg>, #(at + off % 32)] (the expected words assembled with
 * aarch64-linux-gnu-as).  --fp-exact: a floating-point instruction
 * follows msr fpsr, xzr.
 */
static void test_walk_fp(void)
{
	/* ldr x0, [x1, #8]; ldrh w3, [x2, #6]; ldr q0, [x1]; ldr x0, [sp,
	 * #8]; fadd d0, d0, d1 */
	static const uint32_t w[] = {0xf9400420, 0x79400c43, 0x3dc00020,
				     0xf94007e0, 0x1e612800};
	struct dbtp_gt_rw_stats st;
	char *t;

	t = rewrite_words(w, 5, 1, 0, &st);
	CHECK_EQ(st.walkable, 2);
	CHECK_EQ(st.fp, 1);
	/* marked: instructions 0 and 1, not the q load nor the sp one */
	CHECK(marked(t, 0) && marked(t, 1));
	CHECK(!marked(t, 2) && !marked(t, 3) && !marked(t, 4));
	CHECK(t && strstr(t, "msr fpsr") == NULL);
	free(t);
	t = rewrite_words(w, 5, 0, 1, &st);
	CHECK_EQ(st.walkable, 0);
	CHECK(t && strstr(t, DBTP_GT_WALK_MARK) == NULL);
	CHECK(t && strstr(t, ".Lg0_4:\n\tmsr fpsr, xzr\n\t.inst 0x1e612800") !=
		       NULL);
	free(t);
	/* ldr x0, [x28, #8] -> ldr x0, [x20, #72]; strb w1, [x28, #33] ->
	 * strb w1, [x20, #129] */
	CHECK_EQ(dbtp_gt_a64_walk(0xf9400780, 20, 64), 0xf9402680);
	CHECK_EQ(dbtp_gt_a64_walk(0x39008781, 20, 128), 0x39020681);
	/* the classification of floating-point arithmetic */
	{
		static const struct {
			enum dbtp_arch arch;
			const char *mn;
			int fp;
		} cls[] = {
		    {DBTP_ARCH_AARCH64, "fmla", 1},
		    {DBTP_ARCH_AARCH64, "fcvtzu", 1},
		    {DBTP_ARCH_AARCH64, "scvtf", 1},
		    {DBTP_ARCH_AARCH64, "fmov", 0},
		    {DBTP_ARCH_AARCH64, "fneg", 0},
		    {DBTP_ARCH_AARCH64, "add", 0},
		    {DBTP_ARCH_X86_64, "addsd", 1},
		    {DBTP_ARCH_X86_64, "vfmadd231sd", 1},
		    {DBTP_ARCH_X86_64, "cvtsi2sd", 1},
		    {DBTP_ARCH_X86_64, "vsqrtpd", 1},
		    {DBTP_ARCH_X86_64, "paddd", 0},
		    {DBTP_ARCH_X86_64, "andpd", 0},
		    {DBTP_ARCH_X86_64, "movsd", 0},
		    {DBTP_ARCH_X86_64, "add", 0},
		};

		for (size_t i = 0; i < sizeof(cls) / sizeof(*cls); i++)
			CHECK_EQ(dbtp_gt_fp_insn(cls[i].arch, cls[i].mn),
				 cls[i].fp);
	}
}

static void test_outcomes(void)
{
	int accesses = 0;

	dbtp_gt_rw *rw = NULL;
	dbtp_err err = {0};

	CHECK(!dbtp_gt_rw_open(&rw, DBTP_ARCH_AARCH64, &err));
	if (!rw)
		return;
	for (size_t i = 0; i < NTRICKY; i++) {
		const struct tricky *t = &table[i];
		unsigned n = ninsns_of(t), want[3] = {0, 0, 0};
		struct dbtp_gt_rw_stats st;
		uint8_t code[16];
		char *text = NULL;
		size_t len = 0;
		FILE *tf = open_memstream(&text, &len),
		     *sf = fopen("/dev/null", "w");
		int ok;

		for (unsigned k = 0; k < n; k++)
			want[t->out[k] == 'K' ? 0 : t->out[k] == 'R' ? 1 : 2]++;
		words(t, code);
		CHECK(!dbtp_gt_rw_block(rw, (uint32_t)i, code, 4 * n, n, NULL,
					0x400000 + 64 * i, tf, sf, &st, &err));
		fclose(tf);
		fclose(sf);
		ok = st.n[0] == want[0] && st.n[1] == want[1] &&
		     st.n[2] == want[2] &&
		     (!t->text || strstr(text, t->text)) &&
		     (st.regs & t->regs) == t->regs && !(st.regs & t->noregs);
		if (!ok)
			fprintf(stderr, "%s: %u %u %u regs %08x\n%s", t->name,
				st.n[0], st.n[1], st.n[2], st.regs, text);
		CHECK_EQ(st.n[DBTP_GT_KEPT], want[0]);
		CHECK_EQ(st.n[DBTP_GT_REWRITTEN], want[1]);
		CHECK_EQ(st.n[DBTP_GT_DROPPED], want[2]);
		CHECK(!t->text || strstr(text, t->text) != NULL);
		CHECK_EQ(st.regs & t->regs, t->regs);
		CHECK_EQ(st.regs & t->noregs, 0);
		CHECK(bases_ok(text) >= 0);
		if (bases_ok(text) < 0)
			fprintf(stderr, "%s: base\n%s", t->name, text);
		if (bases_ok(text) > 0)
			accesses += bases_ok(text);
		/* a block ending in a dropped instruction still ends there */
		if (t->out[n - 1] == 'D') {
			char b[64];

			snprintf(b, sizeof(b), "\tb .Lg%zu_%u\n.Lg%zu_%u:\n", i,
				 n, i, n);
			CHECK(strstr(text, b) != NULL);
		}
		CHECK_EQ(st.jumps_out, t->out[n - 1] == 'D');
		free(text);
	}
	/* the loads and stores Capstone knows, after rewriting */
	CHECK_EQ(accesses, 45);
	/* svc as a read of the profile's bytes: 70000 = 1 << 16 | 4464;
	 * more than the read area holds is cut to it (2 << 16); 0: getpid */
	{
		static const struct {
			uint32_t bytes;
			const char *want;
		} rd[] = {
		    {70000, "\tmov x8, #63\t// read\n\tsub x0, x28, #3968\n"
			    "\tldr x0, [x0]\n\tadd x1, x28, #159, lsl #12\n"
			    "\tmovz x2, #4464\n\tmovk x2, #1, lsl #16\n"},
		    {875, "\tmovz x2, #875\n\t.inst 0xd4000001"},
		    {1u << 30, "\tmovz x2, #0\n\tmovk x2, #2, lsl #16\n"},
		    {0, "\tmov x8, #172\t// getpid\n\t.inst 0xd4000001"},
		};
		uint8_t svc[4] = {0x01, 0x00, 0x00, 0xd4};

		for (size_t i = 0; i < sizeof(rd) / sizeof(*rd); i++) {
			struct dbtp_gt_rw_stats st;
			char *text = NULL;
			size_t len = 0;
			FILE *tf = open_memstream(&text, &len),
			     *sf = fopen("/dev/null", "w");

			dbtp_gt_rw_read(rw, rd[i].bytes);
			CHECK(!dbtp_gt_rw_block(rw, 950, svc, 4, 1, NULL,
						0x400000, tf, sf, &st, &err));
			fclose(tf);
			fclose(sf);
			CHECK(strstr(text, rd[i].want) != NULL);
			if (!strstr(text, rd[i].want))
				fprintf(stderr, "read %u:\n%s", rd[i].bytes,
					text);
			CHECK_EQ(st.regs & (X(0) | X(8)), X(0) | X(8));
			CHECK_EQ(!!(st.regs & (X(1) | X(2))), rd[i].bytes != 0);
			free(text);
		}
	}
	/* Which instructions move sp (a sequence resets it after those
	 * only): sp as a base without writeback does not. */
	{
		static const struct {
			uint32_t w;
			int moves;
		} sp[] = {
		    {0xa9bf7bfd, 1}, /* stp x29, x30, [sp, #-16]! */
		    {0xf94007e0, 0}, /* ldr x0, [sp, #8] */
		    {0x910043ff, 1}, /* add sp, sp, #16 */
		    {0x910003e0, 0}, /* mov x0, sp */
		    {0xa8c17bfd, 1}, /* ldp x29, x30, [sp], #16 */
		    {0xd10083ff, 1}, /* sub sp, sp, #32 */
		};

		for (size_t i = 0; i < sizeof(sp) / sizeof(*sp); i++) {
			struct dbtp_gt_rw_stats st;
			uint8_t code[4];
			FILE *nf = fopen("/dev/null", "w");

			for (int k = 0; k < 4; k++)
				code[k] = (uint8_t)(sp[i].w >> (8 * k));
			CHECK(!dbtp_gt_rw_block(rw, 900 + (uint32_t)i, code, 4,
						1, NULL, 0x400000, nf, nf, &st,
						&err));
			fclose(nf);
			CHECK_EQ(st.moves_sp, sp[i].moves);
			CHECK_EQ(st.jumps_out, 0);
		}
	}
	/* every instruction is 4 bytes */
	{
		static const uint8_t code[6] = {0x1f, 0x20, 0x03, 0xd5};
		struct dbtp_gt_rw_stats st;
		FILE *nf = fopen("/dev/null", "w");

		CHECK(dbtp_gt_rw_block(rw, 0, code, 6, 1, NULL, 0x400000, nf,
				       nf, &st, &err) == -1);
		CHECK_STR(err.msg, "block at 0x400000: 6 bytes for 1 "
				   "instructions");
		fclose(nf);
	}
	dbtp_gt_rw_close(rw);
}

/* The whole table as one program, each block run 3 times. */
static void test_program(void)
{
	char p[64], c[64], x[64], cmd[512], out[256], want[256];
	struct dbtp_gt_emit_opts o = {0};
	struct dbtp_gt_summary sum;
	dbtp_writer *w = NULL;
	dbtp_gt_model *m = NULL;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	FILE *f;

	snprintf(p, sizeof(p), "%s/tricky.trace", dir);
	snprintf(c, sizeof(c), "%s/tricky.c", dir);
	snprintf(x, sizeof(x), "%s/tricky", dir);
	CHECK(!dbtp_writer_open(&w, p, DBTP_ARCH_AARCH64, DBTP_MODE_BLOCKS, 0,
				&err));
	for (size_t i = 0; i < NTRICKY; i++) {
		uint8_t code[16], sz[4] = {4, 4, 4, 4};
		uint32_t id;

		words(&table[i], code);
		CHECK(!dbtp_writer_block(w, 0x400000 + 64 * i,
					 ninsns_of(&table[i]), sz, code, 0, 0,
					 &id, &err));
		for (int k = 0; k < 3; k++)
			CHECK(!dbtp_writer_exec(w, 0, id, &err));
	}
	CHECK(!dbtp_writer_close(w, 0, &err));
	CHECK(!dbtp_gt_model_new(&m, &err));
	CHECK(!dbtp_trace_open(&t, p, &err));
	CHECK(!dbtp_gt_model_add(m, t, "tricky.trace", 1, &err));
	dbtp_trace_close(t);
	CHECK(!dbtp_gt_model_finish(m, &err));
	CHECK_EQ(dbtp_gt_model_arch(m), DBTP_ARCH_AARCH64);
	f = fopen(c, "w");
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK(!dbtp_gt_emit(m, &o, f, &sum, &err));
	fclose(f);
	CHECK_EQ(sum.skipped, 0);
	CHECK_EQ(sum.blocks, NTRICKY);
	dbtp_gt_summary_free(&sum);
	if (!have("aarch64-linux-gnu-gcc") || !have("qemu-aarch64")) {
		fprintf(stderr, "skipped: compiling and running the AArch64 "
				"program (no aarch64-linux-gnu-gcc or "
				"qemu-aarch64)\n");
		goto out;
	}
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-gcc -static -O2 -pthread -Wall -Wextra "
		 "-Werror %s -o %s",
		 c, x);
	CHECK_EQ(system(cmd), 0);
	/* every block 3 times; scaled by 2, once */
	snprintf(cmd, sizeof(cmd), "qemu-aarch64 %s", x);
	output(cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "1 threads, %zu block executions, scale 1",
		 3 * NTRICKY);
	CHECK(strncmp(out, want, strlen(want)) == 0);
	if (strncmp(out, want, strlen(want)))
		fprintf(stderr, "got '%s', want '%s'\n", out, want);
	snprintf(cmd, sizeof(cmd), "qemu-aarch64 %s --scale 2", x);
	output(cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "1 threads, %zu block executions, scale 2",
		 NTRICKY);
	CHECK(strncmp(out, want, strlen(want)) == 0);
	snprintf(cmd, sizeof(cmd), "qemu-aarch64 %s --counts | wc -l", x);
	output(cmd, out, sizeof(out));
	CHECK_EQ(strtoul(out, NULL, 10), NTRICKY);
out:
	dbtp_gt_model_free(m);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_outcomes();
	test_walk_fp();
	test_program();
	snprintf(cmd, sizeof(cmd), "%s %s",
		 getenv("GT_KEEP") ? "true" : "rm -rf", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return T_DONE();
}

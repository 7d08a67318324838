/* SPDX-License-Identifier: MIT */
/*
 * emit-a64.c - an AArch64 block function of the generated program
 * (dbtp/gentest.h, doc/dbtprof-gentest.md): the same frame as emit.c's
 * x86-64 one, in AArch64 assembly.
 *
 * gt_b<k>(buf, n) saves the callee-saved registers it may write (of
 * x19-x28 and d8-d15; x29 and x30 always) and
 * the host stack pointer (in the buffer), points x28 at the data area and
 * sp at the private stack, and enters the copies of the block
 * Duff's-device style at copy (-n mod u), so that exactly n copies run;
 * each pass ends with a tail that resets sp (if the block touches it) and
 * counts passes down in a register the block does not use (in the buffer
 * if it uses them all).  FPCR holds its default (0) throughout: the
 * rewriting makes a block's `msr fpcr` write 0, and the driver leaves it.
 * With random branches (@fn->rnd; emit.c, put_random()) a register points at
 * the random bytes, taken up from DBTP_GT_SLOT_CURSOR at the entry and
 * back into its window of 64 KiB there (the driver aligns it; a call runs
 * at most DBTP_GT_A64_RAND_PASSES passes), moved on a byte every pass,
 * put back at the exit.  With walking operands (put_walks()), register
 * @fn->wreg holds the walk's chunk: taken up from DBTP_GT_SLOT_WALK,
 * moved to the next chunk every pass, put back.  With tables of random
 * targets in reach of one register (emit.c, put_indirect_a64()), register
 * @fn->jreg holds the first's address, x28 + @fn->joff, set at the entry.
 * With pre- and post-indexed accesses on a register of their own (emit.c,
 * fold_writebacks_a64()), @fn->sreg: the middle of the data area at the
 * entry, and again every pass if @fn->sreset.  @fn->far: the page crossings
 * (put_cross()) in @body, odd if it ends in their section.  @fn->bc: the one
 * copy's switch counts the passes (emit.c, put_branch_count_a64()), no tail;
 * the counter points just past the passes' bytes, which the switch's load
 * reads down: 0s, whose target its add computes as the start, then the
 * exit's distance from it.
 */
#include <stdio.h>

#include "dbtp/gentest.h"
#include "gentest/rewrite.h"

/* x9 and x10 are the entry's scratch, never taken.  Caller-saved ones
 * first: a function saves a pair of x19-x28 only where it may write one
 * (written_pairs()); x0-x8 last, which the entry reads its arguments
 * from (x0, x1) before it sets the registers it takes. */
int dbtp_gt_a64_reg(uint32_t regs, int k)
{
	static const int pref[] = {12, 13, 14, 15, 16, 17, 11, 19, 20,
				   21, 22, 23, 24, 25, 26, 27, 0,  1,
				   2,  3,  4,  5,  6,  7,  8,  18, 29};

	for (size_t i = 0; i < sizeof(pref) / sizeof(*pref); i++)
		if (!(regs & (1u << pref[i])) && !k--)
			return pref[i];
	return -1;
}

/* The pairs of callee-saved registers (bit i: x19 and x20 .. x27 and x28,
 * then d8 and d9 .. d14 and d15) the function may write: a register of
 * its blocks' or of those it takes itself (dbtp_gt_a64_reg() 0 to 5,
 * x28), d8..d15 where a block may name v8..v15. */
static unsigned written_pairs(const struct dbtp_gt_rw_stats *st)
{
	uint32_t used = st->regs | 1u << 28;
	unsigned pairs = st->uses_v8_15 ? 0xfu << 5 : 0;

	for (int k = 0; k < 6; k++) {
		int r = dbtp_gt_a64_reg(st->regs, k);

		if (r >= 0)
			used |= 1u << r;
	}
	for (int i = 0; i < 5; i++)
		pairs |= (unsigned)((used >> (19 + 2 * i) & 3) != 0) << i;
	return pairs;
}

/* A pass's tail: the stack pointer and the registers that move a pass set
 * for the next, the passes counted down in register @cr (in the buffer
 * if -1), and back to the first copy while any are left. */
static void emit_tail(FILE *f, uint32_t id, const struct dbtp_gt_rw_stats *st,
		      const struct dbtp_gt_a64_fn *fn, int cr, int pr)
{
	if (st->moves_sp)
		fprintf(f, "\tadd sp, x28, #%d\n",
			DBTP_GT_STACK_MID - DBTP_GT_DATA);
	if (pr >= 0) /* the next random byte */
		fprintf(f, "\tadd x%d, x%d, #1\n", pr, pr);
	if (fn->sreset) /* the writebacks' base, back */
		fprintf(f, "\tadd x%d, x28, #%d, lsl #12\n", fn->sreg,
			DBTP_GT_DATA_SIZE / 2 >> 12);
	if (fn->wreg >= 0) /* the next chunk */
		fprintf(f, "\tldr x%d, [x%d, #%d]\n", fn->wreg, fn->wreg,
			DBTP_GT_WALK_NEXT - 4);
	if (cr >= 0)
		fprintf(f, "\tsubs x%d, x%d, #1\n", cr, cr);
	else
		fprintf(f,
			"\tsub x9, x28, #%d\n"
			"\tldr x10, [x9]\n"
			"\tsubs x10, x10, #1\n"
			"\tstr x10, [x9]\n",
			DBTP_GT_DATA - DBTP_GT_SLOT_COUNT);
	fprintf(f, "\tb.ne gt_b%u_body\n", id);
}

void dbtp_gt_emit_function_a64(FILE *f, uint32_t id, unsigned u,
			       char *const *body, const char *slots,
			       const struct dbtp_gt_rw_stats *st,
			       const struct dbtp_gt_a64_fn *fn)
{
	static const char *const save[] = {"x19, x20", "x21, x22", "x23, x24",
					   "x25, x26", "x27, x28", "d8, d9",
					   "d10, d11", "d12, d13", "d14, d15"};
	const int nsave = (int)(sizeof(save) / sizeof(*save));
	const int stack = DBTP_GT_STACK_MID - DBTP_GT_DATA;
	const unsigned pairs = written_pairs(st);
	int cr = dbtp_gt_a64_reg(st->regs, 0),
	    pr = fn->rnd ? dbtp_gt_a64_reg(st->regs, 1) : -1;
	unsigned sh = 0;

	while ((1u << sh) < u)
		sh++;
	fprintf(f,
		"\t.p2align 4\n"
		"\t.globl gt_b%u, gt_b%u_body\n"
		"\t.type gt_b%u, %%function\n"
		"gt_b%u:\n"
		"\tstp x29, x30, [sp, #-%d]!\n"
		"\tmov x29, sp\n",
		id, id, id, id, 16 * (nsave + 1));
	for (int i = 0; i < nsave; i++)
		if (pairs >> i & 1)
			fprintf(f, "\tstp %s, [sp, #%d]\n", save[i],
				16 * (i + 1));
	fprintf(f,
		"\tmov x9, sp\n"
		"\tstr x9, [x0, #%d]\n"
		"\tadd x28, x0, #%d\n"
		"\tneg x10, x1\n",
		DBTP_GT_SLOT_RSP, DBTP_GT_DATA);
	if (u > 1)
		fprintf(f, "\tand x10, x10, #%u\n", u - 1);
	else
		fprintf(f, "\tmov x10, #0\n");
	fprintf(f, "\tadd x11, x1, #%u\n", u - 1);
	if (sh)
		fprintf(f, "\tlsr x11, x11, #%u\n", sh);
	fprintf(f, "\tstr x11, [x0, #%d]\n", DBTP_GT_SLOT_COUNT);
	if (fn->bc) /* just past the passes' bytes (put_switch_a64()) */
		fprintf(f,
			"\tadrp x9, .Lgt%u_passes\n"
			"\tadd x9, x9, :lo12:.Lgt%u_passes\n"
			"\tadd x%d, x9, x11\n",
			id, id, cr);
	else if (cr >= 0)
		fprintf(f, "\tmov x%d, x11\n", cr);
	if (pr >= 0)
		fprintf(f,
			"\tldr x%d, [x0, #%d]\n"
			"\tand x%d, x%d, #0xfffffffffffeffff\n",
			pr, DBTP_GT_SLOT_CURSOR, pr, pr);
	if (fn->wreg >= 0)
		fprintf(f, "\tldr x%d, [x0, #%d]\n", fn->wreg,
			DBTP_GT_SLOT_WALK);
	if (fn->jreg >= 0)
		fprintf(f, "\tadd x%d, x28, #%u, lsl #12\n", fn->jreg,
			fn->joff >> 12);
	if (fn->jreg >= 0 && fn->joff % 4096)
		fprintf(f, "\tadd x%d, x%d, #%u\n", fn->jreg, fn->jreg,
			fn->joff % 4096);
	if (fn->sreg >= 0)
		fprintf(f, "\tadd x%d, x28, #%d, lsl #12\n", fn->sreg,
			DBTP_GT_DATA_SIZE / 2 >> 12);
	fprintf(f,
		"\tadd sp, x28, #%d\n"
		"\tadrp x9, .Lgt%u_tab\n"
		"\tadd x9, x9, :lo12:.Lgt%u_tab\n"
		"\tldr x9, [x9, x10, lsl #3]\n"
		"\tbr x9\n",
		stack, id, id);
	/* the tail: at most 12 instructions */
	dbtp_gt_emit_copies(f, id, u, body, 1, fn->bc ? 0 : 48);
	/* the copies end in page crossings' section: the tail, whose b.ne
	 * must reach the first copy, in .text */
	if (fn->far % 2)
		fprintf(f, "\tb .Lgt%u_tail\n\t.popsection\n.Lgt%u_tail:\n", id,
			id);
	if (fn->bc)
		fprintf(f, ".Lgt%u_exit:\n", id);
	else
		emit_tail(f, id, st, fn, cr, pr);
	fprintf(f, "\tsub x9, x28, #%d\n", DBTP_GT_DATA);
	if (pr >= 0)
		fprintf(f, "\tstr x%d, [x9, #%d]\n", pr, DBTP_GT_SLOT_CURSOR);
	if (fn->wreg >= 0)
		fprintf(f, "\tstr x%d, [x9, #%d]\n", fn->wreg,
			DBTP_GT_SLOT_WALK);
	fprintf(f,
		"\tldr x9, [x9, #%d]\n"
		"\tmov sp, x9\n",
		DBTP_GT_SLOT_RSP);
	for (int i = nsave - 1; i >= 0; i--)
		if (pairs >> i & 1)
			fprintf(f, "\tldp %s, [sp, #%d]\n", save[i],
				16 * (i + 1));
	fprintf(f,
		"\tldp x29, x30, [sp], #%d\n"
		"\tret\n"
		"\t.size gt_b%u, .-gt_b%u\n"
		"\t.pushsection .data.rel.ro,\"aw\"\n\t.p2align 3\n"
		".Lgt%u_tab:\n",
		16 * (nsave + 1), id, id, id);
	dbtp_gt_emit_table(f, id, u, slots);
	/* a pass's byte each, read down: 0 (the add computes the start),
	 * the last one the exit's distance at the add's scale */
	if (fn->bc)
		fprintf(f,
			"\t.pushsection .rodata\n.Lgt%u_passes:\n"
			"\t.byte (.Lgt%u_exit - gt_b%u_body) >> %d\n"
			"\t.fill %d, 1, 0\n\t.popsection\n",
			id, id, id, fn->bc_shift, DBTP_GT_A64_BC_PASSES);
}

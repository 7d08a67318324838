/* SPDX-License-Identifier: MIT */
/*
 * rewrite-a64.c - an AArch64 block as assembly that runs safely outside its
 * program (dbtp/gentest.h, doc/dbtprof-gentest.md).
 *
 * Every instruction is reproduced as its encoding (.inst); only what would
 * leave the block or touch memory the generated program does not own is
 * changed.  Instructions are classified by their encoding (Capstone 4 does
 * not know the LSE atomics, RCpc or pointer authentication; it gives the
 * comments and the registers an instruction uses):
 *  - kept: the original word, when the instruction does not access memory
 *    (or accesses it through sp with an immediate or no offset: sp is on
 *    the private stack), does not branch, does not use x28, does not write
 *    sp other than by a small adjustment, and is allowed in EL0;
 *  - loads and stores (every addressing mode, pairs, SIMD structures,
 *    exclusives, LSE atomics, literal loads) address [x28 + off]: x28 is
 *    the reserved base holding the data area, off = the original offset
 *    (or literal address) modulo what the form encodes, within the data
 *    area, aligned to the access size (pairs to twice it, up to 16); forms
 *    without an offset (exclusives, atomics, SIMD structures) use [x28]
 *    itself, page-aligned.  No address comes from a register the block
 *    computes or loads.  Pre- and post-indexed forms become offset forms,
 *    their base register updated by an add;
 *  - x28 as a data register is renamed x27 (x26 where that would give two
 *    registers of one load pair or store-exclusive the same number);
 *  - direct branches keep their condition and land on the next
 *    instruction; br, blr and ret (also with pointer authentication) go
 *    through their register, first set by adr to the next instruction;
 *  - svc becomes getpid (x8 = 172), or a read from /dev/zero as long as
 *    the profile's reads there (dbtp_gt_rw_read()); mrs of EL0-readable
 *    registers is kept, msr fpcr writes the default (0); dc zva and the
 *    other EL0 cache maintenance operations work on [x28];
 *  - sp writes other than small adjustments reset it to the private stack,
 *    as does a block moving it by more than DBTP_GT_A64_SP_BUDGET;
 *  - dropped: exception generation other than svc, privileged system
 *    registers and operations, msr tpidr_el0 (the program's TLS), wfe and
 *    wfi, pointer authentication checks (aut*: they fault on a return
 *    address the program did not sign), MTE memory accesses, SVE ones
 *    other than contiguous ld1/ldff1/ldnf1/st1 and ldr/str (which use
 *    [x28]), unallocated encodings.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "dbtp/gentest.h"
#include "gentest/rewrite.h"

#define BASE 28	   /* reserved base register */
#define RENAMED 27 /* x28 as data */
#define ALLREGS 0xffffffffu
#define SP_BIT 31

/* The private stack pointer, relative to x28 (the data area). */
#define STACK_OFF (DBTP_GT_STACK_MID - DBTP_GT_DATA)

struct ctx {
	dbtp_gt_rw *rw;
	FILE *f;
	uint32_t id, k;
	uint64_t pc;
	int decoded; /* rw->insn holds the instruction */
	int ends;
	uint32_t sp_used; /* stack-pointer movement kept so far */
	struct dbtp_gt_rw_stats *st;
};

static uint32_t bits(uint32_t w, int lo, int n)
{
	return (w >> lo) & ((1u << n) - 1);
}

static uint32_t setbits(uint32_t w, int lo, int n, uint32_t v)
{
	uint32_t m = ((1u << n) - 1) << lo;

	return (w & ~m) | ((v << lo) & m);
}

static int64_t sext(uint32_t v, int n)
{
	return (int64_t)((uint64_t)v << (64 - n)) >> (64 - n);
}

/* Register @r (not 31) as data, x28 renamed. */
static unsigned rn_of(unsigned r)
{
	return r == BASE ? RENAMED : r;
}

/* Rename x28 in the 5-bit register field at @lo. */
static uint32_t rename_field(uint32_t w, int lo)
{
	return bits(w, lo, 5) == BASE ? setbits(w, lo, 5, RENAMED) : w;
}

static void use(struct ctx *c, unsigned r)
{
	c->st->regs |= 1u << (r == BASE ? RENAMED : r);
}

/* Register number of a Capstone register name, 31 for sp, or -1. */
static int gpr_num(const char *n)
{
	char *e;
	long v;

	if (!n)
		return -1;
	if (!strcmp(n, "sp") || !strcmp(n, "wsp"))
		return 31;
	if (!strcmp(n, "fp"))
		return 29;
	if (!strcmp(n, "lr"))
		return 30;
	if ((n[0] != 'x' && n[0] != 'w') || n[1] < '0' || n[1] > '9')
		return -1;
	v = strtol(n + 1, &e, 10);
	return *e || v > 30 ? -1 : (int)v;
}

/* The registers the decoded instruction reads or writes, ALLREGS when
 * they are unknown. */
static uint32_t regs_of(struct ctx *c)
{
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;
	uint32_t regs = 0;

	if (!c->decoded ||
	    cs_regs_access(c->rw->cs, c->rw->insn, rr, &nr, ww, &nw))
		return ALLREGS;
	for (int i = 0; i < nr + nw; i++) {
		int g = gpr_num(
		    cs_reg_name(c->rw->cs, i < nr ? rr[i] : ww[i - nr]));

		if (g >= 0)
			regs |= 1u << (g == BASE ? RENAMED : g);
	}
	return regs;
}

static int word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || (ch >= 'A' && ch <= 'Z');
}

/* @s with the words x28 and w28 renamed x27 and w27, into @out. */
static void rename_text(const char *s, char *out, size_t n)
{
	size_t len = 0;

	for (const char *p = s; *p && len + 1 < n; p++) {
		out[len++] = *p;
		if ((*p == 'x' || *p == 'w') && (p == s || !word_char(p[-1])) &&
		    p[1] == '2' && p[2] == '8' && !word_char(p[3]) &&
		    len + 2 < n) {
			out[len++] = '2';
			out[len++] = '7';
			p += 2;
		}
	}
	out[len] = 0;
}

/* Disassembly of @w at the instruction's address into @out. */
static void disasm(struct ctx *c, uint32_t w, char *out, size_t n)
{
	uint8_t b[4] = {(uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16),
			(uint8_t)(w >> 24)};
	const uint8_t *p = b;
	size_t left = 4;
	uint64_t a = c->pc;

	if (cs_disasm_iter(c->rw->cs, &p, &left, &a, c->rw->aux))
		snprintf(out, n, "%s%s%s", c->rw->aux->mnemonic,
			 c->rw->aux->op_str[0] ? " " : "", c->rw->aux->op_str);
	else
		snprintf(out, n, "0x%08x (no disassembly)", w);
}

/* The decoded instruction with x28 renamed x27 in its register fields:
 * the fields holding 28 that, renamed, disassemble as the renamed text.
 * Return: 0 if there is none. */
static uint32_t rename_checked(struct ctx *c, uint32_t w)
{
	static const int pos[4] = {0, 5, 10, 16};
	char want[256], orig[256], got[256];
	int at[4], n = 0;

	snprintf(orig, sizeof(orig), "%s%s%s", c->rw->insn->mnemonic,
		 c->rw->insn->op_str[0] ? " " : "", c->rw->insn->op_str);
	rename_text(orig, want, sizeof(want));
	for (int i = 0; i < 4; i++)
		if (bits(w, pos[i], 5) == BASE)
			at[n++] = pos[i];
	for (unsigned set = (1u << n) - 1; set; set--) {
		uint32_t nw = w;

		for (int i = 0; i < n; i++)
			if (set & (1u << i))
				nw = setbits(nw, at[i], 5, RENAMED);
		disasm(c, nw, got, sizeof(got));
		if (!strcmp(got, want))
			return nw;
	}
	return 0;
}

static void helper(struct ctx *c, const char *text)
{
	fprintf(c->f, "\t%s\n", text);
	c->st->helpers++;
}

_Static_assert(DBTP_GT_DATA - DBTP_GT_SLOT_ZERO < 4096 &&
		   (DBTP_GT_READ - DBTP_GT_DATA) % 4096 == 0 &&
		   (DBTP_GT_READ - DBTP_GT_DATA) >> 12 < 4096,
	       "the read helpers' immediates");

/* read(zero, buffer + READ, bytes) instead of the profile's reads. */
static void svc_read(struct ctx *c)
{
	char t[64];
	uint32_t n = c->rw->read;

	c->st->regs |= 1u << 1 | 1u << 2;
	helper(c, "mov x8, #63\t// read");
	snprintf(t, sizeof(t), "sub x0, x28, #%d",
		 DBTP_GT_DATA - DBTP_GT_SLOT_ZERO);
	helper(c, t);
	helper(c, "ldr x0, [x0]");
	snprintf(t, sizeof(t), "add x1, x28, #%d, lsl #12",
		 (DBTP_GT_READ - DBTP_GT_DATA) >> 12);
	helper(c, t);
	snprintf(t, sizeof(t), "movz x2, #%" PRIu32, n & 0xffff);
	helper(c, t);
	if (n >> 16) {
		snprintf(t, sizeof(t), "movk x2, #%" PRIu32 ", lsl #16",
			 n >> 16);
		helper(c, t);
	}
}

/* Emit @nw, kept if it is the original word @w, else rewritten; with
 * @walk, the line ends with DBTP_GT_WALK_MARK. */
static void emit_mark(struct ctx *c, uint32_t w, uint32_t nw, int rewritten,
		      int walk)
{
	char now[256], was[256];

	disasm(c, nw, now, sizeof(now));
	if (nw == w && !rewritten) {
		fprintf(c->f, "\t.inst 0x%08x\t// %s", nw, now);
		c->st->n[DBTP_GT_KEPT]++;
	} else {
		disasm(c, w, was, sizeof(was));
		fprintf(c->f, "\t.inst 0x%08x\t// %s (was %s)", nw, now, was);
		c->st->n[DBTP_GT_REWRITTEN]++;
	}
	fprintf(c->f, "%s\n", walk ? DBTP_GT_WALK_MARK : "");
	c->st->walkable += (uint32_t)walk;
	c->ends = 1;
}

static void emit(struct ctx *c, uint32_t w, uint32_t nw, int rewritten)
{
	emit_mark(c, w, nw, rewritten, 0);
}

/* Emit @text (instructions, ';'-separated) in place of @w: rewritten. */
static void emit_text(struct ctx *c, uint32_t w, const char *text)
{
	char was[256];

	disasm(c, w, was, sizeof(was));
	fprintf(c->f, "\t%s\t// was %s\n", text, was);
	c->st->n[DBTP_GT_REWRITTEN]++;
	c->ends = 1;
}

static void drop(struct ctx *c, uint32_t w, const char *why)
{
	char was[256];

	disasm(c, w, was, sizeof(was));
	fprintf(c->f, "\t// dropped (%s): .inst 0x%08x %s\n", why, w, was);
	c->st->n[DBTP_GT_DROPPED]++;
	c->ends = 0;
}

static void sp_reset(struct ctx *c)
{
	char t[64];

	snprintf(t, sizeof(t), "add sp, x%d, #%d", BASE, STACK_OFF);
	helper(c, t);
	c->st->regs |= 1u << SP_BIT;
	c->st->moves_sp = 1;
}

/* A kept instruction moves sp by @d: past the budget, reset sp first.
 * Return: 1 if it did (the instruction is then rewritten). */
static int sp_move(struct ctx *c, int64_t d)
{
	uint32_t a = (uint32_t)(d < 0 ? -d : d);

	c->st->regs |= 1u << SP_BIT;
	c->st->moves_sp = 1;
	if (c->sp_used + a <= DBTP_GT_A64_SP_BUDGET) {
		c->sp_used += a;
		return 0;
	}
	sp_reset(c);
	c->sp_used = a;
	return 1;
}

/* Base register @rn updated by @imm after the access. */
static void writeback_imm(struct ctx *c, unsigned rn, int64_t imm)
{
	char t[64];

	if (!imm)
		return;
	snprintf(t, sizeof(t), "%s x%u, x%u, #%lld", imm < 0 ? "sub" : "add",
		 rn_of(rn), rn_of(rn), (long long)(imm < 0 ? -imm : imm));
	helper(c, t);
	use(c, rn);
}

/* Offset of an access at @disp in the data area: modulo @range (a power
 * of two, at most the data area), aligned down to @align. */
static uint32_t data_off(int64_t disp, uint32_t range, uint32_t align)
{
	if (range > DBTP_GT_DATA_SIZE)
		range = DBTP_GT_DATA_SIZE;
	return (uint32_t)((uint64_t)disp & (range - 1)) & ~(align - 1);
}

/*
 * Renaming x28 x27 must not make two registers of one access the same
 * where the architecture leaves that unpredictable (ldp x27, x28: both
 * loaded into x27; stxr w28, x27: status and data): the field at @lo that
 * was x28 gets x26, or x25 if the other one is x26.
 */
static uint32_t unclash(struct ctx *c, uint32_t w, uint32_t nw, int lo,
			int other)
{
	uint32_t alt;

	if (bits(w, lo, 5) != BASE || bits(nw, lo, 5) != bits(nw, other, 5))
		return nw;
	alt = bits(nw, other, 5) == 26 ? 25 : 26;
	use(c, alt);
	return setbits(nw, lo, 5, alt);
}

/* Data registers of a load/store the disassembler does not know. */
static void use_fields(struct ctx *c, uint32_t w, int rs, int rt2)
{
	use(c, bits(w, 0, 5));
	if (rs)
		use(c, bits(w, 16, 5));
	if (rt2)
		use(c, bits(w, 10, 5));
	if (bits(w, 5, 5) == 31) { /* perhaps with writeback */
		c->st->regs |= 1u << SP_BIT;
		c->st->moves_sp = 1;
	}
}

/* Exclusives, load-acquire/store-release, compare and swap: [Xn] only. */
static void ldst_excl(struct ctx *c, uint32_t w, uint32_t *regs)
{
	int casp = !(w >> 31) && !bits(w, 23, 1) && bits(w, 21, 1);
	uint32_t nw = rename_field(rename_field(rename_field(w, 0), 10), 16);

	if (casp && (bits(w, 16, 5) == BASE || bits(w, 0, 5) == BASE)) {
		drop(c, w, "casp on the x28 pair");
		return;
	}
	if (*regs == ALLREGS) {
		*regs = 0;
		use_fields(c, w, 1, 1);
	}
	if ((w >> 31) && bits(w, 21, 1) && bits(w, 22, 1)) { /* ldxp */
		nw = unclash(c, w, nw, 0, 10);
		nw = unclash(c, w, nw, 10, 0);
	}
	if (!bits(w, 23, 1) && !bits(w, 22, 1) && !casp) { /* stxr, stxp */
		nw = unclash(c, w, nw, 16, 0);
		if (bits(w, 21, 1))
			nw = unclash(c, w, nw, 16, 10);
	}
	if (bits(w, 5, 5) != 31)
		nw = setbits(nw, 5, 5, BASE);
	emit(c, w, nw, 0);
}

/* LSE atomics (and ldapr): [Xn] only. */
static void ldst_atomic(struct ctx *c, uint32_t w, uint32_t *regs)
{
	uint32_t nw = rename_field(rename_field(w, 0), 16);

	/* o3 = 1: swp (opc 0) and ldapr (4); the rest are the 64-byte
	 * accesses or unallocated */
	if (bits(w, 26, 1) ||
	    (bits(w, 15, 1) && bits(w, 12, 3) != 0 && bits(w, 12, 3) != 4)) {
		drop(c, w, "64-byte or unallocated atomic");
		return;
	}
	if (*regs == ALLREGS) {
		*regs = 0;
		use_fields(c, w, 1, 0);
	}
	if (bits(w, 5, 5) != 31)
		nw = setbits(nw, 5, 5, BASE);
	emit(c, w, nw, 0);
}

/* ldr (literal): an unsigned-offset load from the data area. */
static void ldst_literal(struct ctx *c, uint32_t w)
{
	static const uint8_t size_v0[4] = {2, 3, 2, 3},
			     opc_v0[4] = {1, 1, 2, 2};
	static const uint8_t size_v1[3] = {2, 3, 0}, opc_v1[3] = {1, 1, 3};
	uint32_t opc = w >> 30, v = bits(w, 26, 1), size, nopc, scale, off;
	uint64_t target = c->pc + (uint64_t)(sext(bits(w, 5, 19), 19) * 4);

	if (v && opc == 3) {
		drop(c, w, "unallocated");
		return;
	}
	size = v ? size_v1[opc] : size_v0[opc];
	nopc = v ? opc_v1[opc] : opc_v0[opc];
	scale = v && opc == 2 ? 16 : 1u << size;
	off = data_off((int64_t)target, 4096 * scale, scale);
	emit(c, w,
	     size << 30 | 0x39000000u | v << 26 | nopc << 22 |
		 (off / scale) << 10 | BASE << 5 |
		 (v || opc == 3 ? bits(w, 0, 5) : rn_of(bits(w, 0, 5))),
	     0);
}

/* ldp/stp/ldnp/stnp/ldpsw: signed 7-bit scaled offset. */
static void ldst_pair(struct ctx *c, uint32_t w)
{
	uint32_t opc = w >> 30, v = bits(w, 26, 1), type = bits(w, 23, 3);
	uint32_t rn = bits(w, 5, 5), scale, nw = w, off, al;
	int64_t imm;

	if (opc == 3 || (!v && opc == 1 && !bits(w, 22, 1))) {
		drop(c, w, "stgp or unallocated pair");
		return;
	}
	scale = v ? 4u << opc : opc == 2 ? 8 : 4;
	imm = sext(bits(w, 15, 7), 7) * (int64_t)scale;
	if (!v)
		nw = rename_field(rename_field(w, 0), 10);
	if (!v && bits(w, 22, 1)) { /* a load pair into one register */
		nw = unclash(c, w, nw, 0, 10);
		nw = unclash(c, w, nw, 10, 0);
	}
	if (rn == 31) {
		/* on the private stack */
		int reset = (type == 1 || type == 3) && sp_move(c, imm);

		emit(c, w, nw, reset);
		return;
	}
	al = 2 * scale > 16 ? 16 : 2 * scale;
	off = data_off(type == 1 ? 0 : imm, 64 * scale, al);
	nw = setbits(nw, 23, 3, type ? 2 : 0);
	nw = setbits(nw, 15, 7, off / scale);
	nw = setbits(nw, 5, 5, BASE);
	emit(c, w, nw, 0);
	if (type == 1 || type == 3)
		writeback_imm(c, rn, imm);
}

/* ldr/str and relatives with an immediate or register offset. */
static void ldst_reg(struct ctx *c, uint32_t w)
{
	uint32_t size = w >> 30, v = bits(w, 26, 1), opc = bits(w, 22, 2);
	uint32_t rn = bits(w, 5, 5), scale, off, nw = w;
	int prfm = !v && size == 3 && opc == 2, mode, wb = 0;
	int64_t disp = 0, imm9 = sext(bits(w, 12, 9), 9);

	scale = v && (opc & 2) && !size ? 16 : 1u << size;
	if (bits(w, 24, 1)) {
		mode = 'u';
		disp = (int64_t)(bits(w, 10, 12) * scale);
	} else if (!bits(w, 21, 1)) {
		mode = "upnw"[bits(w, 10, 2)]; /* unscaled post unpriv pre */
		disp = mode == 'p' ? 0 : imm9;
		wb = mode == 'p' || mode == 'w';
	} else if (bits(w, 10, 2) == 2) {
		mode = 'r';
	} else {
		drop(c, w, "pointer-authenticated load");
		return;
	}
	if (!v && !prfm)
		nw = rename_field(w, 0);
	if (rn == 31 && mode != 'r') {
		int reset = wb && sp_move(c, imm9);

		emit(c, w, nw, reset);
		return;
	}
	off = data_off(disp, 4096 * scale, scale);
	nw = (nw & 0xc4c0001fu) | 0x39000000u | (off / scale) << 10 | BASE << 5;
	/* a data access of 1 to 8 bytes may walk (dbtp_gt_a64_walk()) */
	emit_mark(c, w, nw, 0, c->rw->mark && !prfm && scale <= 8);
	if (wb)
		writeback_imm(c, rn, imm9);
}

/* ldapur/stlur: RCpc, signed 9-bit unscaled offset. */
static void ldst_rcpc(struct ctx *c, uint32_t w, uint32_t *regs)
{
	uint32_t nw = bits(w, 26, 1) ? w : rename_field(w, 0);

	if (*regs == ALLREGS) {
		*regs = 0;
		use_fields(c, w, 0, 0);
	}
	if (bits(w, 5, 5) != 31) {
		nw = setbits(
		    nw, 12, 9,
		    data_off(sext(bits(w, 12, 9), 9), 256, 1u << (w >> 30)));
		nw = setbits(nw, 5, 5, BASE);
	}
	emit(c, w, nw, 0);
}

/* SIMD ld1-ld4/st1-st4 (multiple and single structures): [Xn] only. */
static void ldst_simd(struct ctx *c, uint32_t w)
{
	uint32_t rn = bits(w, 5, 5), rm = bits(w, 16, 5), nw;
	int post = bits(w, 23, 1);
	int64_t amount = 0;
	char t[64];

	if (post && rm == 31 && c->decoded) {
		const cs_arm64 *a = &c->rw->insn->detail->arm64;

		for (int i = 0; i < a->op_count; i++)
			if (a->operands[i].type == ARM64_OP_IMM)
				amount = a->operands[i].imm;
	}
	if (rn == 31 && (!post || rm == 31)) {
		emit(c, w, w, post && sp_move(c, amount ? amount : 64));
		return;
	}
	nw = setbits(setbits(w, 23, 1, 0), 16, 5, 0);
	nw = setbits(nw, 5, 5, BASE);
	emit(c, w, nw, 0);
	if (!post || rn == 31)
		return;
	if (rm != 31) {
		snprintf(t, sizeof(t), "add x%u, x%u, x%u", rn_of(rn),
			 rn_of(rn), rn_of(rm));
		helper(c, t);
		use(c, rn);
		use(c, rm);
	} else {
		writeback_imm(c, rn, amount);
	}
}

static void ldst(struct ctx *c, uint32_t w, uint32_t *regs)
{
	if ((w & 0x3f000000u) == 0x08000000u)
		ldst_excl(c, w, regs);
	else if ((w & 0x3b200c00u) == 0x19000000u)
		ldst_rcpc(c, w, regs);
	else if ((w & 0x3b000000u) == 0x18000000u)
		ldst_literal(c, w);
	else if ((w & 0x38000000u) == 0x28000000u)
		ldst_pair(c, w);
	else if ((w & 0x3b200c00u) == 0x38200000u)
		ldst_atomic(c, w, regs);
	else if ((w & 0x3a000000u) == 0x38000000u)
		ldst_reg(c, w);
	else if ((w & 0xbfbf0000u) == 0x0c000000u ||
		 (w & 0xbfa00000u) == 0x0c800000u ||
		 (w & 0xbf9f0000u) == 0x0d000000u ||
		 (w & 0xbf800000u) == 0x0d800000u)
		ldst_simd(c, w);
	else
		drop(c, w, "memory tagging or unallocated load/store");
}

/*
 * SVE contiguous loads and stores (ld1*, ldff1*, ldnf1*, st1*) and ldr/str
 * of a vector or predicate register: on [x28], without offset (a vector
 * is at most 256 bytes); through sp with an immediate they stay on the
 * private stack.  Gathers, scatters, structures, non-temporal and
 * broadcast loads are dropped.
 */
static void sve_mem(struct ctx *c, uint32_t w, uint32_t *regs)
{
	uint32_t rn = bits(w, 5, 5), nw;
	int imm = 1;

	if ((w & 0xffc0e000u) == 0x85804000u ||
	    (w & 0xffc0e010u) == 0x85800000u ||
	    (w & 0xffc0e000u) == 0xe5804000u ||
	    (w & 0xffc0e010u) == 0xe5800000u) /* ldr, str (vector, pred.) */
		nw = setbits(setbits(w, 16, 6, 0), 10, 3, 0);
	else if ((w & 0xfe00e000u) == 0xa400a000u || /* ld1, ldnf1 */
		 (w & 0xfe10e000u) == 0xe400e000u)   /* st1 */
		nw = setbits(w, 16, 4, 0);
	else if ((w & 0xfe00e000u) == 0xa4004000u) /* ld1 (scalar+scalar) */
		nw = setbits(setbits(w, 16, 5, 0), 13, 3, 5), imm = 0;
	else if ((w & 0xfe00e000u) == 0xe4004000u) /* st1 (scalar+scalar) */
		nw = setbits(setbits(w, 16, 5, 0), 13, 3, 7), imm = 0;
	else if ((w & 0xfe00e000u) == 0xa4006000u) /* ldff1 (scalar+scalar) */
		nw = setbits(w, 16, 5, 31), imm = 0;
	else {
		drop(c, w, "SVE gather, scatter or structure access");
		return;
	}
	if (*regs == ALLREGS) {
		*regs = 0;
		use(c, rn);
		if (!imm)
			use(c, bits(w, 16, 5));
	}
	if (rn == 31 && imm) {
		emit(c, w, w, 0);
		return;
	}
	emit(c, w, setbits(nw, 5, 5, BASE), 0);
}

/* Data processing: kept, with x28 renamed (when its disassembly names
 * x28 or w28). */
static void data(struct ctx *c, uint32_t w)
{
	char orig[256], renamed[256];
	uint32_t nw;

	/* aut* (register forms): fail on what the program did not sign */
	if ((w & 0xffffd000u) == 0xdac11000u) {
		drop(c, w, "pointer authentication check");
		return;
	}
	if (!c->decoded) {
		if (bits(w, 0, 5) == BASE || bits(w, 5, 5) == BASE ||
		    bits(w, 10, 5) == BASE || bits(w, 16, 5) == BASE)
			drop(c, w, "unknown instruction, maybe using x28");
		else
			emit(c, w, w, 0);
		return;
	}
	snprintf(orig, sizeof(orig), "%s %s", c->rw->insn->mnemonic,
		 c->rw->insn->op_str);
	rename_text(orig, renamed, sizeof(renamed));
	if (!strcmp(orig, renamed)) {
		emit(c, w, w, 0);
		return;
	}
	nw = rename_checked(c, w);
	if (!nw)
		drop(c, w, "cannot rename x28");
	else
		emit(c, w, nw, 0);
}

/* add/sub (immediate, extended register) or logical immediate writing
 * sp: a small adjustment of sp itself is kept, the rest resets sp. */
static int sp_write(struct ctx *c, uint32_t w)
{
	uint32_t rd = bits(w, 0, 5), rn = bits(w, 5, 5);
	int addsub_imm = (w & 0x3f800000u) == 0x11000000u;
	int logic_imm = (w & 0x1f800000u) == 0x12000000u && bits(w, 29, 2) != 3;
	int addsub_ext = (w & 0x3fe00000u) == 0x0b200000u;
	char t[96];

	if (rd != 31 || !(addsub_imm || logic_imm || addsub_ext))
		return 0;
	c->st->regs |= 1u << SP_BIT;
	c->st->moves_sp = 1;
	if (addsub_imm && rn == 31 && (w >> 31)) {
		int64_t imm = (int64_t)bits(w, 10, 12)
			      << (bits(w, 22, 1) ? 12 : 0);

		if (imm <= 4096) {
			emit(c, w, w, sp_move(c, bits(w, 30, 1) ? -imm : imm));
			return 1;
		}
	}
	snprintf(t, sizeof(t), "add sp, x%d, #%d", BASE, STACK_OFF);
	emit_text(c, w, t);
	c->sp_used = 0;
	return 1;
}

static const char *const cond[16] = {"eq", "ne", "hs", "lo", "mi", "pl",
				     "vs", "vc", "hi", "ls", "ge", "lt",
				     "gt", "le", "al", "nv"};

/* Branches, exception generation, system instructions. */
static void branch_sys(struct ctx *c, uint32_t w, uint32_t *regs)
{
	char t[160];
	uint32_t rt = bits(w, 0, 5), key = w & 0xffffffe0u;

	if (*regs == ALLREGS) { /* not known to the disassembler */
		*regs = 0;
		use(c, rt);
		use(c, bits(w, 5, 5));
	}

	if ((w & 0x7c000000u) == 0x14000000u) { /* b, bl */
		snprintf(t, sizeof(t), "%s .Lg%u_%u", w >> 31 ? "bl" : "b",
			 c->id, c->k + 1);
		if (w >> 31)
			c->st->regs |= 1u << 30;
		emit_text(c, w, t);
		return;
	}
	if ((w & 0x7e000000u) == 0x34000000u) { /* cbz, cbnz */
		snprintf(t, sizeof(t), "%s %s%u, .Lg%u_%u",
			 bits(w, 24, 1) ? "cbnz" : "cbz", w >> 31 ? "x" : "w",
			 rn_of(rt), c->id, c->k + 1);
		if (rt == 31)
			snprintf(t, sizeof(t), "%s %szr, .Lg%u_%u",
				 bits(w, 24, 1) ? "cbnz" : "cbz",
				 w >> 31 ? "x" : "w", c->id, c->k + 1);
		emit_text(c, w, t);
		return;
	}
	if ((w & 0x7e000000u) == 0x36000000u) { /* tbz, tbnz */
		uint32_t bit = (w >> 31) << 5 | bits(w, 19, 5);

		if (rt == 31)
			snprintf(t, sizeof(t), "%s %szr, #%u, .Lg%u_%u",
				 bits(w, 24, 1) ? "tbnz" : "tbz",
				 w >> 31 ? "x" : "w", bit, c->id, c->k + 1);
		else
			snprintf(t, sizeof(t), "%s %s%u, #%u, .Lg%u_%u",
				 bits(w, 24, 1) ? "tbnz" : "tbz",
				 w >> 31 ? "x" : "w", rn_of(rt), bit, c->id,
				 c->k + 1);
		emit_text(c, w, t);
		return;
	}
	if ((w & 0xff000000u) == 0x54000000u) { /* b.cond, bc.cond */
		uint32_t cc = bits(w, 0, 4);

		if (cc >= 14)
			snprintf(t, sizeof(t), "b .Lg%u_%u", c->id, c->k + 1);
		else
			snprintf(t, sizeof(t), "b.%s .Lg%u_%u", cond[cc], c->id,
				 c->k + 1);
		emit_text(c, w, t);
		return;
	}
	if ((w & 0xfe1f0000u) == 0xd61f0000u) { /* br, blr, ret (+ PAC) */
		uint32_t opc = bits(w, 21, 4), rn = bits(w, 5, 5);
		const char *op = opc == 0 || opc == 8	? "br"
				 : opc == 1 || opc == 9 ? "blr"
				 : opc == 2		? "ret"
							: NULL;

		if (opc == 2 && rn == 31)
			rn = 30; /* retaa, retab */
		if (!op || rn == 31) {
			drop(c, w, "exception return");
			return;
		}
		snprintf(t, sizeof(t), "adr x%u, .Lg%u_%u\n\t%s x%u", rn_of(rn),
			 c->id, c->k + 1, op, rn_of(rn));
		c->st->helpers++;
		use(c, rn);
		if (opc == 1 || opc == 9)
			c->st->regs |= 1u << 30;
		emit_text(c, w, t);
		return;
	}
	if ((w & 0xffe0001fu) == 0xd4000001u) { /* svc */
		c->st->regs |= 1u << 8 | 1u << 0;
		if (c->rw->read)
			svc_read(c);
		else
			helper(c, "mov x8, #172\t// getpid");
		emit(c, w, w, 1);
		return;
	}
	if ((w & 0xfffff01fu) == 0xd503201fu) { /* hints */
		uint32_t h = bits(w, 5, 7);

		if (h == 2 || h == 3)
			drop(c, w, "wait for event or interrupt");
		else if (h == 0x0c || h == 0x0e || (h >= 0x1c && h <= 0x1f))
			drop(c, w, "pointer authentication check");
		else
			emit(c, w, w, 0);
		return;
	}
	if ((w & 0xfffff01fu) == 0xd503301fu) { /* barriers, clrex */
		emit(c, w, w, 0);
		return;
	}
	if ((w & 0xfff80000u) == 0xd5080000u) { /* sys: dc, ic */
		if (key == 0xd50b7420u || key == 0xd50b7a20u ||
		    key == 0xd50b7b20u || key == 0xd50b7e20u ||
		    key == 0xd50b7c20u || key == 0xd50b7d20u ||
		    key == 0xd50b7520u)
			emit(c, w, setbits(w, 0, 5, BASE), 0);
		else
			drop(c, w, "privileged system operation");
		return;
	}
	if ((w & 0xfff00000u) == 0xd5300000u) { /* mrs */
		if (key == 0xd53bd040u || key == 0xd53bd060u ||
		    key == 0xd53b4400u || key == 0xd53b4420u ||
		    key == 0xd53b4200u || key == 0xd53be040u ||
		    key == 0xd53be000u || key == 0xd53b0020u ||
		    key == 0xd53b00e0u || (w & 0xfffff000u) == 0xd5380000u)
			emit(c, w, rename_field(w, 0), 0);
		else
			drop(c, w, "system register not readable in EL0");
		return;
	}
	if ((w & 0xfff00000u) == 0xd5100000u) { /* msr */
		if (key == 0xd51b4200u || key == 0xd51b4420u)
			emit(c, w, rename_field(w, 0), 0);
		else if (key == 0xd51b4400u)
			emit(c, w, 0xd51b441fu, 0); /* msr fpcr, xzr */
		else
			drop(c, w, "system register not writable here");
		return;
	}
	drop(c, w, "exception or privileged instruction");
}

static void one(struct ctx *c, uint32_t w)
{
	uint32_t regs = regs_of(c);

	/* FP/SIMD or SVE data processing, a load or store of SIMD registers,
	 * SVE memory: may name v8..v15 (and so d8..d15, callee-saved) */
	c->st->uses_v8_15 |=
	    (w & 0x0e000000u) == 0x0e000000u ||
	    (w & 0x1e000000u) == 0x04000000u ||
	    ((w & 0x0a000000u) == 0x08000000u && bits(w, 26, 1));

	if (c->decoded &&
	    dbtp_gt_fp_insn(DBTP_ARCH_AARCH64, c->rw->insn->mnemonic)) {
		c->st->fp++;
		if (c->rw->fp_exact)
			helper(c, "msr fpsr, xzr");
	}

	if ((w & 0x0a000000u) == 0x08000000u)
		ldst(c, w, &regs);
	else if ((w & 0x1c000000u) == 0x14000000u)
		branch_sys(c, w, &regs);
	else if ((w & 0x1c000000u) == 0x10000000u ||
		 (w & 0x0e000000u) == 0x0a000000u) {
		if (!sp_write(c, w))
			data(c, w);
	} else if ((w & 0x0e000000u) == 0x0e000000u ||
		   ((w & 0x1e000000u) == 0x04000000u && !(w >> 31)))
		data(c, w); /* FP/SIMD, SVE data processing */
	else if ((w & 0x1e000000u) == 0x04000000u)
		sve_mem(c, w, &regs);
	else
		drop(c, w, "unallocated, SME or SVE memory access");
	c->st->regs |= regs;
}

int dbtp_gt_rw_a64(dbtp_gt_rw *rw, uint32_t id, const uint8_t *code,
		   uint32_t nbytes, uint32_t ninsns, const uint8_t *sizes,
		   uint64_t vaddr, FILE *f, FILE *slots,
		   struct dbtp_gt_rw_stats *st, dbtp_err *err)
{
	struct ctx c = {rw, f, id, 0, vaddr, 0, 0, 0, st};

	(void)slots;
	memset(st, 0, sizeof(*st));
	if ((uint64_t)ninsns * 4 != nbytes)
		return dbtp_err_set(err, EINVAL,
				    "block at 0x%llx: %u bytes for %u "
				    "instructions",
				    (unsigned long long)vaddr, nbytes, ninsns);
	for (uint32_t k = 0; k < ninsns; k++) {
		const uint8_t *p = code + 4 * k;
		size_t left = 4;
		uint64_t a = vaddr + 4 * k;
		uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

		if (sizes && sizes[k] != 4)
			return dbtp_err_set(err, EINVAL,
					    "block at 0x%llx: instruction %u "
					    "is %u bytes long",
					    (unsigned long long)vaddr, k,
					    sizes[k]);
		c.k = k;
		c.pc = vaddr + 4 * k;
		c.decoded = cs_disasm_iter(rw->cs, &p, &left, &a, rw->insn);
		fprintf(f, ".Lg%u_%u:\n", id, k);
		one(&c, w);
	}
	/* The block ends where its TB ended, even if its last instruction,
	 * dropped, no longer does (see rewrite-x86.c). */
	if (!c.ends) {
		fprintf(f, "\tb .Lg%u_%u\n", id, ninsns);
		st->helpers++;
		st->jumps_out = 1;
	}
	fprintf(f, ".Lg%u_%u:\n", id, ninsns);
	/* not bounded here: a sequence resets after every block moving sp */
	st->sp_bound = st->moves_sp ? UINT32_MAX : 0;
	return 0;
}

uint32_t dbtp_gt_a64_walk(uint32_t w, unsigned reg, uint32_t at)
{
	uint32_t size = w >> 30, v = bits(w, 26, 1), opc = bits(w, 22, 2);
	uint32_t scale = v && (opc & 2) && !size ? 16 : 1u << size;
	uint32_t off = bits(w, 10, 12) * scale;

	at += off % 32;
	return setbits(setbits(w, 10, 12, at / scale), 5, 5, reg);
}

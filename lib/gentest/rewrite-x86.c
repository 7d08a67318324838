/* SPDX-License-Identifier: MIT */
/*
 * rewrite-x86.c - an x86-64 block as assembly that runs safely outside its
 * program (dbtp/gentest.h, doc/dbtprof-gentest.md).
 *
 * Every instruction is reproduced; only what would leave the block or touch
 * memory the generated program does not own is changed:
 *  - kept: the original bytes (.byte), when the instruction has no memory
 *    operand that is accessed, no branch, no r15, no explicit stack-pointer
 *    write and nothing privileged;
 *  - memory operands become [r15 + off] (r15 is the reserved base holding
 *    the thread's buffer; off = data area + displacement modulo its size,
 *    aligned to the access size rounded up to a power of two, up to 64), so
 *    neither stack-, RIP-, segment-relative nor register-based addresses
 *    (values loaded from the buffer included) can reach anything else;
 *    a use of r15 as data is renamed to r14;
 *  - direct branches keep their condition and land on the next
 *    instruction; indirect jumps and calls go through a slot holding the
 *    next instruction's address; ret pushes that slot first (decomposed);
 *  - string instructions get rsi/rdi pointed into the buffer, and rcx = 1
 *    when repeated (QEMU enters a repeated string instruction once per
 *    iteration, so each profiled execution is one iteration);
 *  - div/idiv divide a sign- or zero-extended dividend by 3 from the
 *    buffer; bt* with a register bit offset have it masked; syscall becomes
 *    getpid, or a read from /dev/zero as long as the profile's reads there
 *    (dbtp_gt_rw_read()); cpuid gets leaf 0; ldmxcsr, fldcw and fxrstor
 *    load prepared default images; stack-pointer writes other than small
 *    adjustments reset it to the private stack;
 *  - dropped: privileged and interrupt instructions, far branches, segment
 *    register writes, xsave/xrstor, gathers and scatters, TSX, fldenv and
 *    frstor, address-size-prefixed string instructions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "dbtp/gentest.h"
#include "gentest/rewrite.h"

static int has_group(const cs_insn *in, int g)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return 1;
	return 0;
}

static int is_reg(unsigned r, unsigned a, unsigned b, unsigned c, unsigned d)
{
	return r == a || r == b || r == c || r == d;
}

static int is_r15(unsigned r)
{
	return is_reg(r, X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B);
}

static int is_rsp(unsigned r)
{
	return is_reg(r, X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL);
}

/* Each general-purpose register's names: 64-, 32-, 16-bit, low and high
 * byte (rsp .. r15 have no high byte). */
static const char *const fam[16][5] = {
    {"rax", "eax", "ax", "al", "ah"},	 {"rcx", "ecx", "cx", "cl", "ch"},
    {"rdx", "edx", "dx", "dl", "dh"},	 {"rbx", "ebx", "bx", "bl", "bh"},
    {"rsp", "esp", "sp", "spl", ""},	 {"rbp", "ebp", "bp", "bpl", ""},
    {"rsi", "esi", "si", "sil", ""},	 {"rdi", "edi", "di", "dil", ""},
    {"r8", "r8d", "r8w", "r8b", ""},	 {"r9", "r9d", "r9w", "r9b", ""},
    {"r10", "r10d", "r10w", "r10b", ""}, {"r11", "r11d", "r11w", "r11b", ""},
    {"r12", "r12d", "r12w", "r12b", ""}, {"r13", "r13d", "r13w", "r13b", ""},
    {"r14", "r14d", "r14w", "r14b", ""}, {"r15", "r15d", "r15w", "r15b", ""},
};

const char *dbtp_gt_x86_gpr(int g, int w)
{
	return g >= 0 && g < 16 && w >= 0 && w < 5 ? fam[g][w] : "";
}

/* The general-purpose register (0 rax .. 15 r15, in encoding order) that
 * register @r is part of, or -1; in *@w (if not NULL) which of its names
 * (dbtp_gt_x86_gpr()) @r is. */
static int gpr_name(csh cs, unsigned r, int *w)
{
	const char *n = cs_reg_name(cs, r);

	if (!n)
		return -1;
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 5; j++)
			if (fam[i][j][0] && !strcmp(n, fam[i][j])) {
				if (w)
					*w = j;
				return i;
			}
	return -1;
}

static int gpr_of(csh cs, unsigned r)
{
	return gpr_name(cs, r, NULL);
}

/*
 * Loads the block's memory operands wait for (struct dbtp_gt_rw_stats'
 * chase): the registers whose values came from memory, in the block or
 * through arithmetic on such values (loaded); the registers the block
 * wrote so far (written), and those its operands address through before
 * it writes them (live_in), for a block that loops on itself (self).
 */
struct chase {
	uint32_t loaded, written, live_in;
	int self;
};

/* Instruction @in (general-purpose registers read @rd, written @wr, bit
 * g for register g) in @c: counts in @st a memory operand whose address
 * waits for a load. */
static void note_chase(struct chase *c, csh cs, const cs_insn *in, uint32_t rd,
		       uint32_t wr, struct dbtp_gt_rw_stats *st)
{
	const cs_x86 *x = &in->detail->x86;
	uint32_t addr = 0;
	int load = in->id == X86_INS_POP, g;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *o = &x->operands[i];

		if (o->type != X86_OP_MEM || in->id == X86_INS_LEA)
			continue;
		if ((g = gpr_of(cs, o->mem.base)) >= 0 && g != 4)
			addr |= 1u << g;
		if ((g = gpr_of(cs, o->mem.index)) >= 0)
			addr |= 1u << g;
		load |= (o->access & CS_AC_READ) != 0;
	}
	/* xor or sub of a register with itself depends on nothing */
	if ((in->id == X86_INS_XOR || in->id == X86_INS_SUB) &&
	    x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG &&
	    x->operands[0].reg == x->operands[1].reg)
		rd = 0;
	st->chase += (addr & c->loaded) != 0;
	c->live_in |= addr & ~c->written;
	if (load || (rd & c->loaded))
		c->loaded |= wr;
	else
		c->loaded &= ~wr;
	c->written |= wr;
}

/*
 * Instruction @in (of registers written @ww, @nw) writes all of
 * general-purpose register @g (its 64- or 32-bit name, first operand) and
 * nothing else but the flags, by a move or arithmetic that a load of a
 * random byte into it can take the place of (emit.c, fold_table()).
 */
static int whole_write(csh cs, const cs_insn *in, const cs_regs ww, uint8_t nw,
		       int g)
{
	const cs_x86 *x = &in->detail->x86;
	int w = -1;

	switch (in->id) {
	case X86_INS_MOV:
	case X86_INS_MOVSXD:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_LEA:
	case X86_INS_ADD:
	case X86_INS_SUB:
	case X86_INS_AND:
	case X86_INS_OR:
	case X86_INS_XOR:
		break;
	default:
		return 0;
	}
	if (x->op_count != 2 || x->prefix[0] ||
	    x->operands[0].type != X86_OP_REG ||
	    gpr_name(cs, x->operands[0].reg, &w) != g || w > 1)
		return 0;
	for (uint8_t i = 0; i < nw; i++)
		if (ww[i] != X86_REG_EFLAGS && ww[i] != x->operands[0].reg)
			return 0;
	return 1;
}

/* The register an indirect jump or call @in goes through: its register
 * operand, 64-bit, or its memory operand's index (no segment); -1 if
 * none (rsp, r15) or not such a branch. */
static int branch_reg(csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o = &x->operands[0];
	int w = -1, g;

	if ((in->id != X86_INS_JMP && in->id != X86_INS_CALL) ||
	    x->op_count != 1)
		return -1;
	if (o->type == X86_OP_REG)
		g = gpr_name(cs, o->reg, &w);
	else if (o->type == X86_OP_MEM && o->mem.segment == X86_REG_INVALID &&
		 o->mem.index != X86_REG_INVALID)
		g = gpr_name(cs, o->mem.index, &w);
	else
		return -1;
	return w == 0 && g != 4 && g != 15 ? g : -1;
}

/* The instruction (+ 1) that last wrote each general-purpose register so
 * far in a block, whether all of it (whole_write()) and whether one since
 * read it. */
struct last_writes {
	uint32_t at[16];
	uint8_t whole[16], read[16];
};

/* Instruction @k (@in, registers read @rr and written @ww) in @lw; if it
 * is the block's indirect branch through a register that an instruction
 * before wrote all of and none since read, notes both in @st. */
static void note_access(struct last_writes *lw, csh cs, const cs_insn *in,
			const cs_regs rr, uint8_t nr, const cs_regs ww,
			uint8_t nw, uint32_t k, struct dbtp_gt_rw_stats *st)
{
	int g = branch_reg(cs, in);

	if (g >= 0 && lw->at[g] && lw->whole[g] && !lw->read[g]) {
		st->ind_reg = g;
		st->ind_writer = lw->at[g];
	}
	for (uint8_t i = 0; i < nr; i++)
		if ((g = gpr_of(cs, rr[i])) >= 0)
			lw->read[g == 15 ? 14 : g] = 1;
	for (uint8_t i = 0; i < nw; i++)
		if ((g = gpr_of(cs, ww[i])) >= 0) {
			g = g == 15 ? 14 : g; /* renamed */
			lw->at[g] = k + 1;
			lw->read[g] = 0;
			lw->whole[g] = (uint8_t)whole_write(cs, in, ww, nw, g);
		}
}

/* Instructions that cannot run safely in user mode outside the program. */
static int must_drop(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (has_group(in, X86_GRP_PRIVILEGE) || has_group(in, X86_GRP_IRET) ||
	    has_group(in, X86_GRP_VM) || has_group(in, X86_GRP_NOT64BITMODE))
		return 1;
	switch (in->id) {
	case X86_INS_INT:
	case X86_INS_INT3:
	case X86_INS_INT1:
	case X86_INS_INTO:
	case X86_INS_UD2:
	case X86_INS_UD0:
	case X86_INS_HLT:
	case X86_INS_IN:
	case X86_INS_OUT:
	case X86_INS_INSB:
	case X86_INS_INSW:
	case X86_INS_INSD:
	case X86_INS_OUTSB:
	case X86_INS_OUTSW:
	case X86_INS_OUTSD:
	case X86_INS_CLI:
	case X86_INS_STI:
	case X86_INS_LJMP:
	case X86_INS_LCALL:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_SYSENTER:
	case X86_INS_SYSEXIT:
	case X86_INS_SYSRET:
	case X86_INS_XBEGIN:
	case X86_INS_XEND:
	case X86_INS_XABORT:
	case X86_INS_XTEST:
	case X86_INS_XSAVE:
	case X86_INS_XSAVE64:
	case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT:
	case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES:
	case X86_INS_XSAVES64:
	case X86_INS_XRSTOR:
	case X86_INS_XRSTOR64:
	case X86_INS_XRSTORS:
	case X86_INS_XRSTORS64:
	case X86_INS_XSETBV:
	case X86_INS_FLDENV:
	case X86_INS_FRSTOR:
	case X86_INS_MONITOR:
	case X86_INS_MWAIT:
	case X86_INS_WRFSBASE:
	case X86_INS_WRGSBASE:
	case X86_INS_LSS:
	case X86_INS_LFS:
	case X86_INS_LGS:
	case X86_INS_SLDT:
	case X86_INS_SGDT:
	case X86_INS_SIDT:
	case X86_INS_SMSW:
	case X86_INS_STR:
	case X86_INS_LAR:
	case X86_INS_LSL:
	case X86_INS_VERR:
	case X86_INS_VERW:
		return 1;
	default:
		break;
	}
	/* Gathers and scatters: a vector index register. */
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM &&
		    ((op->mem.index >= X86_REG_XMM0 &&
		      op->mem.index <= X86_REG_XMM31) ||
		     (op->mem.index >= X86_REG_YMM0 &&
		      op->mem.index <= X86_REG_YMM31) ||
		     (op->mem.index >= X86_REG_ZMM0 &&
		      op->mem.index <= X86_REG_ZMM31)))
			return 1;
	}
	/* Writes to segment registers (mov sreg, pop fs/gs). */
	if (x->op_count >= 1 && x->operands[0].type == X86_OP_REG &&
	    (in->id == X86_INS_MOV || in->id == X86_INS_POP)) {
		unsigned r = x->operands[0].reg;

		if (r == X86_REG_CS || r == X86_REG_DS || r == X86_REG_ES ||
		    r == X86_REG_FS || r == X86_REG_GS || r == X86_REG_SS)
			return 1;
	}
	return 0;
}

/* Power of two >= @size, at least 1, at most 64. */
static unsigned align_of(unsigned size)
{
	unsigned a = 1;

	while (a < size && a < 64)
		a <<= 1;
	return a;
}

static uint64_t mem_offset(int64_t disp, unsigned size)
{
	uint64_t off = (uint64_t)disp & (DBTP_GT_DATA_SIZE - 1);

	return DBTP_GT_DATA + (off & ~(uint64_t)(align_of(size) - 1));
}

/*
 * Whether memory operand @mem of @in may walk (dbtp_gt_rw_mark()): 1 to 8
 * bytes, so no alignment but the size's, which the walk keeps; based on
 * neither the stack pointer nor a segment; accessed; not locked (a locked
 * access split over two lines would lock the bus).
 */
static int walkable(const cs_insn *in, int mem)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o = &x->operands[mem];

	if (o->size < 1 || o->size > 8 || is_rsp(o->mem.base) ||
	    o->mem.segment != X86_REG_INVALID ||
	    x->prefix[0] == X86_PREFIX_LOCK)
		return 0;
	switch (in->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_XCHG:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH:
		return 0;
	default:
		return 1;
	}
}

/* Append @s to @out (size @n) at *@len. */
static void put(char *out, size_t n, size_t *len, const char *s)
{
	size_t l = strlen(s);

	if (*len + l >= n)
		l = n - 1 - *len;
	memcpy(out + *len, s, l);
	*len += l;
	out[*len] = 0;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       (c >= 'A' && c <= 'Z');
}

/*
 * The operand text @ops with the memory operand's "[...]" (and any "seg:"
 * before it) replaced by "[r15 + @off]" (if @off is not UINT64_MAX), r15 as
 * a register renamed to r14, "xword ptr" spelled "tbyte ptr".
 */
static void rewrite_ops(const char *ops, const char *base, uint64_t off,
			char *out, size_t n)
{
	size_t len = 0;
	char tok[64];

	out[0] = 0;
	for (const char *p = ops; *p;) {
		if (*p == '[' && off != UINT64_MAX) {
			const char *e = strchr(p, ']');

			/* drop a "xs:" segment prefix already copied */
			if (len >= 3 && out[len - 1] == ':' &&
			    out[len - 2] == 's') {
				len -= 3;
				out[len] = 0;
			}
			snprintf(tok, sizeof(tok), "[%s + %llu]", base,
				 (unsigned long long)off);
			put(out, n, &len, tok);
			p = e ? e + 1 : p + strlen(p);
			continue;
		}
		if (word_char(*p) && (p == ops || !word_char(p[-1]))) {
			size_t w = 0;

			while (word_char(p[w]))
				w++;
			if (w < sizeof(tok)) {
				memcpy(tok, p, w);
				tok[w] = 0;
				if (!strcmp(tok, "r15") ||
				    !strcmp(tok, "r15d") ||
				    !strcmp(tok, "r15w") ||
				    !strcmp(tok, "r15b"))
					tok[2] = '4';
				else if (!strcmp(tok, "xword"))
					strcpy(tok, "tbyte");
				put(out, n, &len, tok);
				p += w;
				continue;
			}
		}
		tok[0] = *p++;
		tok[1] = 0;
		put(out, n, &len, tok);
	}
}

/*
 * Capstone 4 spells the memory operand of comisd/ucomisd and
 * comiss/ucomiss "xmmword ptr"; they read 8 and 4 bytes, and the
 * assembler wants that size.
 */
static void scalar_size(unsigned id, char *ops)
{
	const char *to = id == X86_INS_COMISD || id == X86_INS_UCOMISD ? "qword"
			 : id == X86_INS_COMISS || id == X86_INS_UCOMISS
			     ? "dword"
			     : NULL;
	char *p = to ? strstr(ops, "xmmword ptr") : NULL;

	if (p) { /* "xmmword" is 7 letters, its replacement 5 */
		memmove(p + 5, p + 7, strlen(p + 7) + 1);
		memcpy(p, to, 5);
	}
}

static void emit_bytes(FILE *f, const cs_insn *in)
{
	fprintf(f, "\t.byte ");
	for (unsigned i = 0; i < in->size; i++)
		fprintf(f, "%s0x%02x", i ? "," : "", in->bytes[i]);
	fprintf(f, "\t# %s %s\n", in->mnemonic, in->op_str);
}

/* The last word of a mnemonic ("bnd jmp" -> "jmp"). */
static const char *base_mnemonic(const char *m)
{
	const char *s = strrchr(m, ' ');

	return s ? s + 1 : m;
}

static const char *size_kw(unsigned size)
{
	switch (size) {
	case 1:
		return "byte";
	case 2:
		return "word";
	case 4:
		return "dword";
	default:
		return "qword";
	}
}

/*
 * How far instruction @in, which writes the stack pointer, can move it
 * (either way) as it runs in the program: 16 for a call or a ret (the
 * decomposed one pushes its slot first) and its immediate, the frame of
 * an `enter` kept, 8 for a push or pop, 64 for the rest (the small
 * `add`/`sub rsp` kept; the others are rewritten to a reset).
 */
static uint32_t sp_step(const cs_insn *in, const cs_x86 *x)
{
	if (has_group(in, X86_GRP_RET))
		return 16 + (x->op_count
				 ? (uint32_t)(x->operands[0].imm & 0xffff)
				 : 0);
	if (has_group(in, X86_GRP_CALL))
		return 16;
	switch (in->id) {
	case X86_INS_ENTER:
		return 512;
	case X86_INS_PUSH:
	case X86_INS_POP:
	case X86_INS_PUSHFQ:
	case X86_INS_POPFQ:
	case X86_INS_PUSHF:
	case X86_INS_POPF:
		return 8;
	default:
		return 64;
	}
}

static void sp_bound_add(struct dbtp_gt_rw_stats *st, uint32_t d)
{
	st->sp_bound =
	    st->sp_bound > UINT32_MAX - d ? UINT32_MAX : st->sp_bound + d;
}

/* @in is an `add` or `sub rsp, imm` that the rewriter keeps (|imm| <= 64). */
static int small_sp_add(const cs_insn *in, const cs_x86 *x)
{
	return (in->id == X86_INS_ADD || in->id == X86_INS_SUB) &&
	       x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	       x->operands[0].reg == X86_REG_RSP &&
	       x->operands[1].type == X86_OP_IMM && x->operands[1].imm >= -64 &&
	       x->operands[1].imm <= 64;
}

/* The stack pointer moved by @d bytes (upward positive); a move down
 * writes the slots it passes (@wrote: a push, a call) or leaves them
 * undefined (a `sub rsp`, `enter`'s frame): sp_def, sp_undef. */
static void sp_move_w(struct dbtp_gt_rw_stats *st, int32_t d, int wrote)
{
	int32_t *hi = st->sp_reset ? &st->sp_top : &st->sp_peak;

	st->sp_net += d;
	if (st->sp_net > *hi)
		*hi = st->sp_net;
	st->sp_def = dbtp_gt_slots_moved(st->sp_def, d);
	st->sp_undef = dbtp_gt_slots_moved(st->sp_undef, d);
	if (d < 0 && d % 8 == 0 && d > -512)
		*(wrote ? &st->sp_def : &st->sp_undef) |=
		    (1ull << (-d / 8)) - 1;
}

/* A push's or call's move (@d < 0), or a pop's (@d > 0). */
static void sp_move(struct dbtp_gt_rw_stats *st, int32_t d)
{
	sp_move_w(st, d, 1);
}

/*
 * Where instruction @in, which writes the stack pointer, moves it, as it
 * runs in the program (sp_exact, sp_reset, sp_net, sp_peak, sp_top of
 * @st): a push or pop by its operand's size, a call 8 down, a ret (the
 * decomposed one) 8 down and 8 and its immediate up, popf (after the
 * pushfq put before it) 8 down and its size up, leave (whose `mov rsp,
 * rbp` the rewriter makes a no-op) 8 up, `enter` kept its frame down,
 * `add`/`sub rsp, imm` kept; every other write (`and rsp` too: where it
 * leaves the stack pointer depends on where it is) becomes a reset to the
 * private stack's middle (the rewriter's `lea rsp`, aligned as `and rsp`
 * would leave it); `enter` with a nesting level's moves are not known.
 */
static void sp_track(struct dbtp_gt_rw_stats *st, const cs_insn *in,
		     const cs_x86 *x)
{
	int32_t sz = x->op_count && x->operands[0].size == 2 ? 2 : 8;

	if (has_group(in, X86_GRP_RET)) {
		sp_move(st, -8);
		sp_move(st, 8 + (x->op_count
				     ? (int32_t)(x->operands[0].imm & 0xffff)
				     : 0));
		return;
	}
	if (has_group(in, X86_GRP_CALL)) {
		sp_move(st, -8);
		return;
	}
	if (small_sp_add(in, x)) {
		int32_t d = (int32_t)x->operands[1].imm;

		sp_move_w(st, in->id == X86_INS_ADD ? d : -d, 0);
		return;
	}
	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ: /* no operand: 8 */
		sp_move(st, -sz);
		return;
	case X86_INS_PUSHF:
		sp_move(st, -2);
		return;
	case X86_INS_POP:
		if (x->op_count && x->operands[0].type == X86_OP_REG &&
		    is_rsp(x->operands[0].reg))
			break; /* pop rsp: a reset */
		dbtp_gt_sp_read(st, st->sp_net, sz);
		sp_move(st, sz);
		return;
	case X86_INS_POPFQ:
	case X86_INS_POPF:
		sp_move(st, -8);
		sp_move(st, in->id == X86_INS_POPF ? 2 : 8);
		return;
	case X86_INS_LEAVE:
		if (x->prefix[2] == 0x66)
			goto unknown;
		dbtp_gt_sp_read(st, st->sp_net, 8);
		sp_move(st, 8);
		return;
	case X86_INS_ENTER:
		if (x->op_count < 2)
			goto unknown;
		if (x->operands[0].imm > 64) /* dropped */
			return;
		if (x->operands[1].imm != 0)
			goto unknown;
		sp_move(st, -8);
		sp_move_w(st, -(int32_t)x->operands[0].imm, 0);
		return;
	default:
		break;
	}
	st->sp_reset = 1;
	st->sp_net = 0;
	st->sp_def = st->sp_undef = 0;
	return;
unknown:
	st->sp_exact = 0;
}

int dbtp_gt_rw_x86(dbtp_gt_rw *rw, uint32_t id, const uint8_t *code,
		   uint32_t nbytes, uint32_t ninsns, const uint8_t *sizes,
		   uint64_t vaddr, FILE *f, FILE *slots,
		   struct dbtp_gt_rw_stats *st, dbtp_err *err)
{
	const uint8_t *p = code;
	int ends = 0;
	size_t left = nbytes;
	uint64_t addr = vaddr;
	cs_insn *in = rw->insn;
	char ops[512];

	struct last_writes lw = {{0}, {0}, {0}};
	struct chase ch = {0, 0, 0, 0};

	memset(st, 0, sizeof(*st));
	st->sp_exact = 1;
	for (uint32_t k = 0; k < ninsns; k++) {
		const cs_x86 *x;
		cs_regs rr, ww;
		uint8_t nr = 0, nw = 0;
		int mem = -1, r15 = 0, wsp = 0, high8 = 0, walk;
		int outcome = DBTP_GT_KEPT;
		const char *mn;

		if (!cs_disasm_iter(rw->cs, &p, &left, &addr, in)) {
			if (!sizes || !sizes[k] || sizes[k] > left)
				return dbtp_err_set(
				    err, EINVAL,
				    "block at 0x%llx: instruction %u "
				    "does not decode",
				    (unsigned long long)vaddr, k);
			/* Capstone does not know it, or the trace holds
			 * only part of it: drop it alone. */
			fprintf(f, ".Lg%u_%u:\n\t# dropped: undecodable\n", id,
				k);
			p += sizes[k];
			left -= sizes[k];
			addr += sizes[k];
			ends = 0;
			st->n[DBTP_GT_DROPPED]++;
			continue;
		}
		x = &in->detail->x86;
		mn = base_mnemonic(in->mnemonic);
		ends = 1;
		fprintf(f, ".Lg%u_%u:\n", id, k);
		if (has_group(in, X86_GRP_AVX) || has_group(in, X86_GRP_AVX2) ||
		    has_group(in, X86_GRP_AVX512) ||
		    has_group(in, X86_GRP_FMA) || has_group(in, X86_GRP_F16C))
			st->uses_avx = 1;
		if (has_group(in, X86_GRP_FPU) || has_group(in, X86_GRP_MMX) ||
		    has_group(in, X86_GRP_3DNOW))
			st->uses_x87 = 1;
		if (in->id != X86_INS_SYSCALL && must_drop(in)) {
			fprintf(f, "\t# dropped: %s %s\n", in->mnemonic,
				in->op_str);
			ends = 0;
			st->n[DBTP_GT_DROPPED]++;
			continue;
		}
		if (dbtp_gt_fp_insn(DBTP_ARCH_X86_64, mn)) {
			st->fp++;
			if (rw->fp_exact) {
				fprintf(f, "\tldmxcsr dword ptr [r15 + %d]\n",
					DBTP_GT_SLOT_MXCSR);
				st->helpers++;
			}
		}
		if (!cs_regs_access(rw->cs, in, rr, &nr, ww, &nw)) {
			uint32_t rd = 0, wr = 0; /* as named, r15 too */

			for (int i = 0; i < nr + nw; i++) {
				int g =
				    gpr_of(rw->cs, i < nr ? rr[i] : ww[i - nr]);

				if (g >= 0)
					*(i < nr ? &rd : &wr) |= 1u << g;
			}
			/* r15 is renamed r14 */
			st->regs |= (rd | wr) & 0x7fff;
			st->regs |= (rd | wr) >> 15 << 14;
			for (int i = 0; i < nr; i++) {
				r15 |= is_r15(rr[i]);
				high8 |= is_reg(rr[i], X86_REG_AH, X86_REG_BH,
						X86_REG_CH, X86_REG_DH);
			}
			for (int i = 0; i < nw; i++) {
				r15 |= is_r15(ww[i]);
				wsp |= is_rsp(ww[i]);
				high8 |= is_reg(ww[i], X86_REG_AH, X86_REG_BH,
						X86_REG_CH, X86_REG_DH);
			}
			note_access(&lw, rw->cs, in, rr, nr, ww, nw, k, st);
			note_chase(&ch, rw->cs, in, rd, wr, st);
		} else {
			memset(lw.whole, 0, sizeof(lw.whole));
			ch.loaded = 0;
			ch.written = 0xffff;
			st->regs = 0xffff; /* unknown: all */
			st->moves_sp = 1;
			st->sp_bound = UINT32_MAX;
			st->sp_exact = 0;
		}
		wsp |= in->id == X86_INS_ENTER; /* not among its registers */
		st->moves_sp |= wsp;
		if (wsp || has_group(in, X86_GRP_CALL) ||
		    has_group(in, X86_GRP_RET)) {
			sp_bound_add(st, sp_step(in, x));
			sp_track(st, in, x);
		}
		for (int i = 0; i < x->op_count; i++)
			if (x->operands[i].type == X86_OP_MEM)
				mem = i;
		/* --- branches --- */
		if (has_group(in, X86_GRP_JUMP) ||
		    has_group(in, X86_GRP_CALL) || has_group(in, X86_GRP_RET) ||
		    in->id == X86_INS_LOOP || in->id == X86_INS_LOOPE ||
		    in->id == X86_INS_LOOPNE) {
			int call = has_group(in, X86_GRP_CALL);

			ends = 1;
			if (call || has_group(in, X86_GRP_RET)) {
				st->regs |= 1u << 4;
				st->moves_sp = 1;
			}
			if (has_group(in, X86_GRP_RET)) {
				fprintf(slots, ".Lgs%u_%u: .quad .Lg%u_%u\n",
					id, k, id, k + 1);
				fprintf(f,
					"\tpush qword ptr [rip + .Lgs%u_%u]\n",
					id, k);
				st->helpers++;
				emit_bytes(f, in);
			} else if (x->op_count == 1 &&
				   x->operands[0].type == X86_OP_IMM) {
				ch.self |=
				    (uint64_t)x->operands[0].imm == vaddr;
				fprintf(f, "\t%s .Lg%u_%u\n", mn, id, k + 1);
			} else {
				fprintf(slots, ".Lgs%u_%u: .quad .Lg%u_%u\n",
					id, k, id, k + 1);
				fprintf(f, "\t%s qword ptr [rip + .Lgs%u_%u]\n",
					call ? "call" : "jmp", id, k);
			}
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		}
		switch (in->id) {
		case X86_INS_SYSCALL:
			ends = 1;
			st->regs |= 1u << 0 | 1u << 1 | 1u << 11;
			if (rw->read) {
				/* read(zero, buffer + READ, bytes): mov, not
				 * xor, leaves the flags alone */
				st->regs |= 1u << 2 | 1u << 6 | 1u << 7;
				fprintf(f,
					"\tmov eax, 0\t# read\n"
					"\tmov edi, dword ptr [r15 + %d]\n"
					"\tlea rsi, [r15 + %d]\n"
					"\tmov edx, %" PRIu32 "\n",
					DBTP_GT_SLOT_ZERO, DBTP_GT_READ,
					rw->read);
				st->helpers += 3;
			} else {
				fprintf(f, "\tmov eax, 39\t# getpid\n");
			}
			emit_bytes(f, in);
			st->helpers++;
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_CPUID:
			st->regs |= 0xf;
			fprintf(f, "\txor eax, eax\n");
			emit_bytes(f, in);
			st->helpers++;
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_DIV:
		case X86_INS_IDIV: {
			unsigned sz = x->operands[0].size;
			int sgn = in->id == X86_INS_IDIV;
			const char *hi;

			st->regs |= 1u << 0 | 1u << 2;
			switch (sz) {
			case 1:
				hi = sgn ? "cbw" : "movzx eax, al";
				break;
			case 2:
				hi = sgn ? "cwd" : "xor edx, edx";
				break;
			case 4:
				hi = sgn ? "cdq" : "xor edx, edx";
				break;
			default:
				hi = sgn ? "cqo" : "xor edx, edx";
				break;
			}
			fprintf(f, "\t%s\n\t%s %s ptr [r15 + %d]\n", hi, mn,
				size_kw(sz), DBTP_GT_SLOT_DIV);
			st->helpers++;
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		}
		case X86_INS_POPF:
		case X86_INS_POPFQ:
			fprintf(f, "\tpushfq\n");
			emit_bytes(f, in);
			st->helpers++;
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_LEAVE:
			st->regs |= 1u << 4 | 1u << 5;
			st->moves_sp = 1;
			fprintf(f, "\tmov rbp, rsp\n");
			emit_bytes(f, in);
			st->helpers++;
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_ENTER:
			if (x->operands[0].imm > 64) {
				fprintf(f, "\t# dropped: %s %s\n", in->mnemonic,
					in->op_str);
				ends = 0;
				st->n[DBTP_GT_DROPPED]++;
				continue;
			}
			emit_bytes(f, in);
			st->n[DBTP_GT_KEPT]++;
			continue;
		case X86_INS_LDMXCSR:
		case X86_INS_VLDMXCSR:
			fprintf(f, "\t%s dword ptr [r15 + %d]\n", mn,
				DBTP_GT_SLOT_MXCSR);
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_FLDCW:
			fprintf(f, "\tfldcw word ptr [r15 + %d]\n",
				DBTP_GT_SLOT_FCW);
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_FXRSTOR:
		case X86_INS_FXRSTOR64:
		case X86_INS_FXSAVE:
		case X86_INS_FXSAVE64:
			fprintf(f, "\t%s [r15 + %d]\n", mn,
				DBTP_GT_SLOT_FXSAVE);
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		case X86_INS_NOP:
		case X86_INS_LEA:
			mem = -1; /* no access */
			break;
		default:
			break;
		}
		/* --- string instructions: implicit rsi/rdi --- */
		if (!x->opcode[1] && x->opcode[0] >= 0xa4 &&
		    x->opcode[0] <= 0xaf && x->opcode[0] != 0xa8 &&
		    x->opcode[0] != 0xa9) {
			int src = x->opcode[0] <= 0xa7 || x->opcode[0] >= 0xac;
			int dst = x->opcode[0] <= 0xab || x->opcode[0] >= 0xae;
			int rep = x->prefix[0] == X86_PREFIX_REP ||
				  x->prefix[0] == X86_PREFIX_REPNE;

			if (x->addr_size != 8 || x->prefix[1]) {
				fprintf(f, "\t# dropped: %s %s\n", in->mnemonic,
					in->op_str);
				ends = 0;
				st->n[DBTP_GT_DROPPED]++;
				continue;
			}
			st->regs |= 1u << 1 | 1u << 6 | 1u << 7;
			if (src) {
				fprintf(f, "\tlea rsi, [r15 + %d]\n",
					DBTP_GT_DATA + 1024);
				st->helpers++;
			}
			if (dst) {
				fprintf(f, "\tlea rdi, [r15 + %d]\n",
					DBTP_GT_DATA + 2048);
				st->helpers++;
			}
			if (rep) {
				fprintf(f, "\tmov ecx, 1\n");
				st->helpers++;
			}
			emit_bytes(f, in);
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		}
		if (in->id == X86_INS_XLATB || in->id == X86_INS_MASKMOVQ ||
		    in->id == X86_INS_MASKMOVDQU ||
		    in->id == X86_INS_VMASKMOVDQU) {
			st->regs |= 1u << 0 | 1u << 3 | 1u << 7;
			fprintf(f, "\tlea %s, [r15 + %d]\n",
				in->id == X86_INS_XLATB ? "rbx" : "rdi",
				DBTP_GT_DATA);
			emit_bytes(f, in);
			st->helpers++;
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		}
		/* --- explicit stack-pointer writes --- */
		if (wsp && in->id != X86_INS_PUSH && in->id != X86_INS_POP &&
		    in->id != X86_INS_PUSHFQ && in->id != X86_INS_PUSHF) {
			if (small_sp_add(in, x)) {
				emit_bytes(f, in);
				st->n[DBTP_GT_KEPT]++;
			} else {
				fprintf(f,
					"\tlea rsp, [r15 + %d]\t# was %s %s\n",
					DBTP_GT_STACK_MID, in->mnemonic,
					in->op_str);
				st->n[DBTP_GT_REWRITTEN]++;
			}
			continue;
		}
		if (in->id == X86_INS_POP && x->op_count == 1 &&
		    x->operands[0].type == X86_OP_REG &&
		    is_rsp(x->operands[0].reg)) {
			fprintf(f, "\tlea rsp, [r15 + %d]\t# was pop rsp\n",
				DBTP_GT_STACK_MID);
			st->n[DBTP_GT_REWRITTEN]++;
			continue;
		}
		if (mem < 0 && !r15) {
			emit_bytes(f, in);
			st->n[DBTP_GT_KEPT]++;
			continue;
		}
		/* --- memory operand and/or r15: re-assembled text --- */
		if (mem >= 0 &&
		    (in->id == X86_INS_BT || in->id == X86_INS_BTS ||
		     in->id == X86_INS_BTR || in->id == X86_INS_BTC) &&
		    x->operands[1].type == X86_OP_REG) {
			const char *r = cs_reg_name(rw->cs, x->operands[1].reg);

			/* the bit offset would reach past the operand */
			fprintf(f, "\tand %s, %d\n",
				is_r15(x->operands[1].reg) ? "r14" : r,
				x->operands[0].size * 8 - 1);
			st->helpers++;
		}
		/* ah..dh cannot be encoded with r15 (a REX prefix): such
		 * operands go through the private stack pointer instead,
		 * which stays inside the buffer, at a small offset. */
		if (mem >= 0 && high8) {
			unsigned a = align_of(x->operands[mem].size);

			rewrite_ops(in->op_str, "rsp",
				    (uint64_t)x->operands[mem].mem.disp & 0xff &
					~(uint64_t)(a - 1),
				    ops, sizeof(ops));
		} else {
			rewrite_ops(in->op_str, "r15",
				    mem >= 0
					? mem_offset(x->operands[mem].mem.disp,
						     x->operands[mem].size)
					: UINT64_MAX,
				    ops, sizeof(ops));
		}
		if (in->id == X86_INS_MOVABS)
			mn = "mov";
		scalar_size(in->id, ops);
		walk = rw->mark && mem >= 0 && !high8 && walkable(in, mem);
		st->walkable += walk;
		fprintf(f, "\t%s%s%s %s%s\n",
			x->prefix[0] == X86_PREFIX_LOCK ? "lock " : "",
			x->prefix[0] == X86_PREFIX_REP &&
				strncmp(in->mnemonic, "rep", 3) == 0
			    ? "rep "
			    : "",
			mn, ops, walk ? DBTP_GT_WALK_MARK : "");
		outcome = DBTP_GT_REWRITTEN;
		st->n[outcome]++;
	}
	/* The block ends where its TB ended, even if its last instruction,
	 * dropped, no longer does.  (A block QEMU ended for its size is left
	 * open: QEMU ends the copy at the same size, and a jmp would be one
	 * more block per execution.) */
	if (!ends) {
		fprintf(f, "\tjmp .Lg%u_%u\n", id, ninsns);
		st->helpers++;
		st->jumps_out = 1;
	}
	/* a loop on itself: the pass before loaded them */
	st->chase += ch.self && (ch.live_in & ch.loaded);
	fprintf(f, ".Lg%u_%u:\n", id, ninsns);
	return 0;
}

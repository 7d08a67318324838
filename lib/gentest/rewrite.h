/* SPDX-License-Identifier: MIT */
/*
 * rewrite.h - what the rewriters of each architecture share with the
 * dispatching entry points of dbtp/gentest.h (rewrite.c) and the emitter.
 */
#ifndef DBTP_GENTEST_REWRITE_H
#define DBTP_GENTEST_REWRITE_H

#include <stdio.h>

#include <capstone/capstone.h>

#include "dbtp/gentest.h"

struct dbtp_gt_rw {
	csh cs;
	cs_insn *insn, *aux; /* the instruction; a rewritten encoding */
	enum dbtp_arch arch;
	uint32_t read; /* dbtp_gt_rw_read() */
	int mark;      /* dbtp_gt_rw_mark() */
	int fp_exact;  /* dbtp_gt_rw_fp_exact() */
};

/* dbtp_gt_rw_block() for one architecture. */
int dbtp_gt_rw_x86(dbtp_gt_rw *rw, uint32_t id, const uint8_t *code,
		   uint32_t nbytes, uint32_t ninsns, const uint8_t *sizes,
		   uint64_t vaddr, FILE *f, FILE *slots,
		   struct dbtp_gt_rw_stats *st, dbtp_err *err);
int dbtp_gt_rw_a64(dbtp_gt_rw *rw, uint32_t id, const uint8_t *code,
		   uint32_t nbytes, uint32_t ninsns, const uint8_t *sizes,
		   uint64_t vaddr, FILE *f, FILE *slots,
		   struct dbtp_gt_rw_stats *st, dbtp_err *err);

/* x86-64: general-purpose register @g's (0 rax .. 15 r15) name @w: 0 its
 * 64-bit, 1 32-bit, 2 16-bit, 3 low byte, 4 high byte ("" if none). */
const char *dbtp_gt_x86_gpr(int g, int w);

/*
 * x86-64: a pop of @size bytes read the stack at @at bytes above where
 * @st's block (or, after a reset in it, the private stack's middle)
 * started: the 8-byte slot in sp_reads (sp_reads_top after a reset), or
 * sp_reads_far if it is no such slot of the first 512 bytes; nothing
 * below (the block's own pushes, or a call's).  The rewriter's pops and
 * the emitter's passes put together from blocks (emit.c, sp_then()).
 */
void dbtp_gt_sp_read(struct dbtp_gt_rw_stats *st, int64_t at, int32_t size);

/*
 * x86-64: slot mask @m (bit i: the 8 bytes at 8i above the stack pointer,
 * sp_def and sp_undef) after the stack pointer moved @d bytes up (down if
 * negative; the slots it passes then 0); 0 for a move by other than a
 * multiple of 8 or of 512 bytes or more.  The rewriter's moves and the
 * emitter's passes put together from blocks (emit.c, sp_define()).
 */
uint64_t dbtp_gt_slots_moved(uint64_t m, int32_t d);

/*
 * Parts of a block function both architectures' emitters write
 * (emit.c): the @u copies of @body, labelled gt_b<id>_body and
 * gt_b<id>_c<j>, after padding (never run) that keeps them and the
 * @tail bytes after them (at most) on one page where they fit in 2 KiB,
 * instructions 4 bytes each if @a64, else a kept encoding's length or at
 * most 15; where they switch to page crossings' section and back, their
 * part in .text (the tail too, but on x86-64 where the copies end in that
 * section) and each of their pieces there alike; and the table of those
 * entries (.Lgt<id>_tab's lines, after which the jump slots @slots and
 * the section's end follow).
 */
void dbtp_gt_emit_copies(FILE *f, uint32_t id, unsigned u, char *const *body,
			 int a64, unsigned tail);
void dbtp_gt_emit_table(FILE *f, uint32_t id, unsigned u, const char *slots);

/* What an AArch64 block function keeps in registers beyond its copies'
 * (emit-a64.c). */
struct dbtp_gt_a64_fn {
	int rnd;  /* random branches: the random bytes' pointer */
	int wreg; /* the walk's chunk, or -1 */
	int jreg; /* its first table's address, x28 + joff, or -1 */
	unsigned joff;
	int sreg;     /* the writebacks' base (emit.c), or -1 */
	int sreset;   /* pointed back every pass, not only at the entry */
	int far;      /* page crossings; odd: the copies end in their section */
	int bc;	      /* a switch counts the passes (emit.c), no tail */
	int bc_shift; /* its add's scale */
};

/*
 * The AArch64 block function gt_b<id> (emit-a64.c): @u copies of @body
 * entered Duff's-device style, as emit.c does for x86-64.
 */
void dbtp_gt_emit_function_a64(FILE *f, uint32_t id, unsigned u,
			       char *const *body, const char *slots,
			       const struct dbtp_gt_rw_stats *st,
			       const struct dbtp_gt_a64_fn *fn);

/*
 * The word of a load or store that ldst_reg() rewrote to [x28, #off] and
 * marked (dbtp_gt_rw_mark()) addressing [x<reg>, #(at + off % 32)]
 * instead: a walking operand (emit.c, put_walks()).  @at is a multiple of
 * 32 below 4096 - 32.
 */
uint32_t dbtp_gt_a64_walk(uint32_t w, unsigned reg, uint32_t at);

/*
 * The @k-th register (0: the pass counter's) that a function of registers
 * @regs leaves alone, in emit-a64.c's order, or -1.  A function counts
 * its passes in the first; one with random branches points at the random
 * bytes with the second and loads them into the third; its walk register
 * is the next.
 */
int dbtp_gt_a64_reg(uint32_t regs, int k);

/* AArch64 random bytes: a window of 64 KiB that the pointer is taken back
 * into at a call's entry, the offsets (below DBTP_GT_A64_RAND) at which
 * copies read from it, and the passes a call that it moves on a byte each
 * (so that it reads within the random bytes). */
#define DBTP_GT_A64_RAND 4096
#define DBTP_GT_A64_RAND_PASSES (131072 - 65536 - DBTP_GT_A64_RAND)

/* AArch64: the passes a call of a function whose switch counts them
 * (emit.c, put_branch_count_a64()), a byte each read down to a 0: a call
 * costs its entry and exit (some 30 instructions) every this many. */
#define DBTP_GT_A64_BC_PASSES 4095

/* Where a walk line holds the next one's offset (emit.c). */
#define DBTP_GT_WALK_NEXT 60

#endif

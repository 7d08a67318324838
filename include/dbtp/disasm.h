/* SPDX-License-Identifier: MIT */
/*
 * dbtp/disasm.h - one-instruction disassembler (a thin Capstone wrapper).
 *
 * x86-64 text uses Intel syntax, as "objdump -M intel".  A handle is not
 * thread-safe: open one per thread.
 */
#ifndef DBTP_DISASM_H
#define DBTP_DISASM_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/common.h"

typedef struct dbtp_disasm dbtp_disasm;

/**
 * dbtp_disasm_open() - create a disassembler for @arch.
 * @out: receives the handle (free with dbtp_disasm_close()).
 * @arch: DBTP_ARCH_X86_64 or DBTP_ARCH_AARCH64.
 * @err: filled on failure.
 *
 * Return: 0 on success, -1 on failure.
 */
int dbtp_disasm_open(dbtp_disasm **out, enum dbtp_arch arch, dbtp_err *err);

/**
 * dbtp_disasm_one() - disassemble the instruction at the start of @code.
 * @d: handle.
 * @code: instruction bytes.
 * @len: bytes available at @code.
 * @addr: guest address of @code (used for branch targets).
 * @text: receives "mnemonic operands" (or just "mnemonic"), or "(bad)";
 *        always NUL-terminated, truncated to @textsz bytes.
 * @textsz: size of @text (may be 0 if @text is NULL).
 *
 * Return: the instruction's length in bytes, or 0 if undecodable.
 */
size_t dbtp_disasm_one(dbtp_disasm *d, const uint8_t *code, size_t len,
		       uint64_t addr, char *text, size_t textsz);

/**
 * dbtp_disasm_count() - count the instructions in @code.
 * @d: handle.
 * @code: instruction bytes.
 * @len: size of @code.
 * @addr: guest address of @code.
 *
 * Stops at the first undecodable (or incomplete) instruction.
 *
 * Return: number of whole instructions decoded.
 */
size_t dbtp_disasm_count(dbtp_disasm *d, const uint8_t *code, size_t len,
			 uint64_t addr);

/** Kinds of control transfer, from dbtp_disasm_branch(). */
enum dbtp_branch {
	DBTP_BR_NONE = 0, /* not a control transfer */
	DBTP_BR_JUMP = 1, /* direct unconditional jump */
	DBTP_BR_COND = 2, /* conditional branch (jcc, loop, cbz, tbz, b.cc) */
	DBTP_BR_IND = 3,  /* indirect jump */
	DBTP_BR_CALL = 4, /* call, direct or indirect */
	DBTP_BR_RET = 5,  /* return */
	DBTP_BR_SYS = 6,  /* system call or software interrupt */
};

/**
 * dbtp_disasm_branch() - the kind of control transfer (enum dbtp_branch)
 * the instruction at the start of @code is, or -1 if it does not decode.
 */
int dbtp_disasm_branch(dbtp_disasm *d, const uint8_t *code, size_t len,
		       uint64_t addr);

/**
 * dbtp_disasm_target() - dbtp_disasm_branch(), and for a direct jump,
 * conditional branch or call the target address in *@target
 * (UINT64_MAX for other instructions).
 */
int dbtp_disasm_target(dbtp_disasm *d, const uint8_t *code, size_t len,
		       uint64_t addr, uint64_t *target);

/** dbtp_disasm_close() - free @d (NULL is ok). */
void dbtp_disasm_close(dbtp_disasm *d);

#endif

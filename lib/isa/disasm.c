/* SPDX-License-Identifier: MIT */
/*
 * disasm.c - Capstone wrapper: one instruction at a time, detail off, one
 * preallocated cs_insn per handle so decoding never allocates.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <capstone/capstone.h>

#include "dbtp/disasm.h"
#include "isa/cs.h"

struct dbtp_disasm {
	csh cs;
	cs_insn *insn;
	/* a second handle with detail on, opened by dbtp_disasm_branch() */
	csh csd;
	cs_insn *insnd;
	cs_arch ca;
	cs_mode mode;
};

int dbtp_disasm_open(dbtp_disasm **out, enum dbtp_arch arch, dbtp_err *err)
{
	dbtp_disasm *d;
	cs_arch ca;
	cs_mode mode;
	cs_err ce;

	*out = NULL;
	if (dbtp_cs_arch(arch, &ca, &mode))
		return dbtp_err_set(err, 0,
				    "disassembler: unsupported architecture %d",
				    (int)arch);
	d = calloc(1, sizeof(*d));
	if (!d)
		return dbtp_err_set(err, ENOMEM, "disassembler: out of memory");
	ce = cs_open(ca, mode, &d->cs);
	if (ce != CS_ERR_OK) {
		free(d);
		return dbtp_err_set(err, 0, "capstone: cs_open(%s): %s",
				    dbtp_arch_name(arch), cs_strerror(ce));
	}
	/* detail stays off (the default): we only need the text */
	d->ca = ca;
	d->mode = mode;
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		cs_close(&d->cs);
		free(d);
		return dbtp_err_set(err, ENOMEM, "disassembler: out of memory");
	}
	*out = d;
	return 0;
}

size_t dbtp_disasm_one(dbtp_disasm *d, const uint8_t *code, size_t len,
		       uint64_t addr, char *text, size_t textsz)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;
	const cs_insn *in = d->insn;

	if (!code || !len || !cs_disasm_iter(d->cs, &p, &n, &a, d->insn)) {
		if (text && textsz)
			snprintf(text, textsz, "(bad)");
		return 0;
	}
	if (text && textsz) {
		int w;

		if (in->op_str[0])
			w = snprintf(text, textsz, "%s %s", in->mnemonic,
				     in->op_str);
		else
			w = snprintf(text, textsz, "%s", in->mnemonic);
		/* no trailing blanks, whatever Capstone produced */
		n = w < 0 ? 0 : (size_t)w < textsz ? (size_t)w : textsz - 1;
		while (n && text[n - 1] == ' ')
			text[--n] = '\0';
	}
	return in->size;
}

size_t dbtp_disasm_count(dbtp_disasm *d, const uint8_t *code, size_t len,
			 uint64_t addr)
{
	const uint8_t *p = code;
	size_t n = len, count = 0;
	uint64_t a = addr;

	if (!code)
		return 0;
	while (n && cs_disasm_iter(d->cs, &p, &n, &a, d->insn))
		count++;
	return count;
}

int dbtp_disasm_branch(dbtp_disasm *d, const uint8_t *code, size_t len,
		       uint64_t addr)
{
	uint64_t target;

	return dbtp_disasm_target(d, code, len, addr, &target);
}

/* The last immediate operand of a branch: its target. */
static uint64_t direct_target(const cs_insn *in, cs_arch arch)
{
	if (arch == CS_ARCH_X86) {
		const cs_x86 *x = &in->detail->x86;

		for (int i = x->op_count - 1; i >= 0; i--)
			if (x->operands[i].type == X86_OP_IMM)
				return (uint64_t)x->operands[i].imm;
	} else if (arch == CS_ARCH_ARM64) {
		const cs_arm64 *x = &in->detail->arm64;

		for (int i = x->op_count - 1; i >= 0; i--)
			if (x->operands[i].type == ARM64_OP_IMM)
				return (uint64_t)x->operands[i].imm;
	}
	return UINT64_MAX;
}

int dbtp_disasm_target(dbtp_disasm *d, const uint8_t *code, size_t len,
		       uint64_t addr, uint64_t *target)
{
	int kind, indirect = 0;
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;

	*target = UINT64_MAX;

	if (!d->insnd) {
		if (cs_open(d->ca, d->mode, &d->csd) != CS_ERR_OK)
			return -1;
		cs_option(d->csd, CS_OPT_DETAIL, CS_OPT_ON);
		d->insnd = cs_malloc(d->csd);
		if (!d->insnd) {
			cs_close(&d->csd);
			return -1;
		}
	}
	if (!code || !len || !cs_disasm_iter(d->csd, &p, &n, &a, d->insnd))
		return -1;
	kind = dbtp_branch_kind(d->insnd, d->ca, &indirect);
	if (!indirect && (kind == DBTP_BR_JUMP || kind == DBTP_BR_COND ||
			  kind == DBTP_BR_CALL))
		*target = direct_target(d->insnd, d->ca);
	return kind;
}

void dbtp_disasm_close(dbtp_disasm *d)
{
	if (!d)
		return;
	if (d->insnd) {
		cs_free(d->insnd, 1);
		cs_close(&d->csd);
	}
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

/* SPDX-License-Identifier: MIT */
/* cs.c - Capstone handles and control-transfer kinds (isa/cs.h). */
#include "isa/cs.h"
#include "dbtp/disasm.h"

int dbtp_cs_arch(enum dbtp_arch arch, cs_arch *ca, cs_mode *mode)
{
	switch (arch) {
	case DBTP_ARCH_X86_64:
		*ca = CS_ARCH_X86;
		*mode = CS_MODE_64;
		return 0;
	case DBTP_ARCH_AARCH64:
		*ca = CS_ARCH_ARM64;
		*mode = CS_MODE_LITTLE_ENDIAN;
		return 0;
	default:
		return -1;
	}
}

static int kind_x86(const cs_insn *in, int *indirect)
{
	const cs_x86 *x = &in->detail->x86;
	int imm = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;

	switch (in->id) {
	case X86_INS_JMP:
	case X86_INS_LJMP:
		*indirect = !imm;
		return imm ? DBTP_BR_JUMP : DBTP_BR_IND;
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_INT3:
	case X86_INS_INTO:
		return DBTP_BR_SYS;
	}
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		switch (in->detail->groups[i]) {
		case X86_GRP_CALL:
			*indirect = !imm;
			return DBTP_BR_CALL;
		case X86_GRP_RET:
		case X86_GRP_IRET:
			return DBTP_BR_RET;
		case X86_GRP_JUMP:
			return DBTP_BR_COND; /* jcc, loop, jrcxz */
		}
	return DBTP_BR_NONE;
}

static int kind_arm64(const cs_insn *in, int *indirect)
{
	switch (in->id) {
	case ARM64_INS_B:
		return in->detail->arm64.cc != ARM64_CC_INVALID &&
			       in->detail->arm64.cc != ARM64_CC_AL
			   ? DBTP_BR_COND
			   : DBTP_BR_JUMP;
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		return DBTP_BR_COND;
	case ARM64_INS_BR:
		*indirect = 1;
		return DBTP_BR_IND;
	case ARM64_INS_BLR:
		*indirect = 1;
		return DBTP_BR_CALL;
	case ARM64_INS_BL:
		return DBTP_BR_CALL;
	case ARM64_INS_RET:
		return DBTP_BR_RET;
	case ARM64_INS_SVC:
		return DBTP_BR_SYS;
	}
	return DBTP_BR_NONE;
}

int dbtp_branch_kind(const cs_insn *in, cs_arch arch, int *indirect)
{
	int dummy;

	if (!indirect)
		indirect = &dummy;
	*indirect = 0;
	if (!in->detail)
		return DBTP_BR_NONE;
	return arch == CS_ARCH_X86 ? kind_x86(in, indirect)
				   : kind_arm64(in, indirect);
}

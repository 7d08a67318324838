/* SPDX-License-Identifier: MIT */
/*
 * branch.h - the kind of control transfer a decoded Capstone instruction
 * is (enum dbtp_branch), shared by the disassembler wrapper and the cycle
 * model so both classify alike.  Needs the instruction's detail.
 */
#ifndef DBTP_ISA_BRANCH_H
#define DBTP_ISA_BRANCH_H

#include <capstone/capstone.h>

/**
 * dbtp_branch_kind() - enum dbtp_branch of @in, decoded for @arch.
 * @indirect: if not NULL, set to 1 when the target comes from a register
 *	      or memory (indirect jumps and calls; returns count as neither).
 */
int dbtp_branch_kind(const cs_insn *in, cs_arch arch, int *indirect);

#endif

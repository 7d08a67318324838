/* SPDX-License-Identifier: MIT */
/*
 * cs.h - what the library's Capstone users share: the handle's arch and
 * mode for a guest architecture, and the kind of control transfer a
 * decoded instruction is, so the disassembler wrapper, the cycle model and
 * the test-program rewriter open and classify alike.
 */
#ifndef DBTP_ISA_CS_H
#define DBTP_ISA_CS_H

#include <capstone/capstone.h>

#include "dbtp/common.h"

/** dbtp_cs_arch() - Capstone's arch and mode for @arch; 0, or -1 if none. */
int dbtp_cs_arch(enum dbtp_arch arch, cs_arch *ca, cs_mode *mode);

/**
 * dbtp_branch_kind() - enum dbtp_branch of @in (decoded with detail), for
 * @arch.
 * @indirect: if not NULL, set to 1 when the target comes from a register
 *	      or memory (indirect jumps and calls; returns count as neither).
 */
int dbtp_branch_kind(const cs_insn *in, cs_arch arch, int *indirect);

#endif

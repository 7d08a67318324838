/* SPDX-License-Identifier: MIT */
/* x86.c - x86-64 instruction facts needed without a disassembler. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dbtp/bbv.h"

int dbtp_x86_is_rep_string(const uint8_t *p, size_t len)
{
	int rep = 0;
	size_t i = 0;

	for (; i < len; i++) { /* legacy prefixes, then REX */
		uint8_t c = p[i];

		if (c == 0xf2 || c == 0xf3)
			rep = 1;
		else if (c != 0xf0 && c != 0x2e && c != 0x36 && c != 0x3e &&
			 c != 0x26 && c != 0x64 && c != 0x65 && c != 0x66 &&
			 c != 0x67)
			break;
	}
	if (i < len && (p[i] & 0xf0) == 0x40)
		i++;
	if (!rep || i >= len)
		return 0;
	return (p[i] >= 0xa4 && p[i] <= 0xa7) ||
	       (p[i] >= 0xaa && p[i] <= 0xaf) || (p[i] >= 0x6c && p[i] <= 0x6f);
}

/* The second and later iterations of a rep string instruction: a TB that
 * starts where the previous TB's last instruction was, with that same
 * rep-prefixed instruction. */
static int rep_again(const struct dbtp_block *prev, const struct dbtp_block *b)
{
	uint32_t last;

	if (!prev || !b->ninsns || !prev->ninsns)
		return 0;
	last = prev->sizes[prev->ninsns - 1];
	if (prev->vaddr + prev->nbytes - last != b->vaddr ||
	    last != b->sizes[0])
		return 0;
	return dbtp_x86_is_rep_string(b->bytes, b->sizes[0]) &&
	       !memcmp(b->bytes, prev->bytes + prev->nbytes - last, last);
}

uint32_t dbtp_bbv_block_insns(const struct dbtp_block *prev,
			      const struct dbtp_block *b, enum dbtp_arch arch,
			      int rep_per_instruction)
{
	/* Hardware counts a whole rep instruction once: QEMU's repeat passes
	 * (a TB of just that instruction) add nothing. */
	if (rep_per_instruction && arch == DBTP_ARCH_X86_64 && b->ninsns == 1 &&
	    rep_again(prev, b))
		return 0;
	return b->ninsns;
}

/* SPDX-License-Identifier: MIT */
/*
 * rewrite.c - the rewriter's entry points (dbtp/gentest.h): a Capstone
 * handle for the guest's architecture, and each block handed to the
 * rewriter of that architecture (rewrite-x86.c, rewrite-a64.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/gentest.h"
#include "gentest/rewrite.h"
#include "isa/cs.h"

int dbtp_gt_rw_open(dbtp_gt_rw **out, enum dbtp_arch arch, dbtp_err *err)
{
	dbtp_gt_rw *rw;
	cs_arch ca;
	cs_mode mode;

	*out = NULL;
	if (dbtp_cs_arch(arch, &ca, &mode))
		return dbtp_err_set(err, ENOTSUP,
				    "gentest: rewriting %s code is not "
				    "supported",
				    dbtp_arch_name(arch));
	rw = calloc(1, sizeof(*rw));
	if (!rw)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	if (cs_open(ca, mode, &rw->cs) != CS_ERR_OK) {
		free(rw);
		return dbtp_err_set(err, 0, "capstone: cannot open %s",
				    dbtp_arch_name(arch));
	}
	cs_option(rw->cs, CS_OPT_DETAIL, CS_OPT_ON);
	rw->insn = cs_malloc(rw->cs);
	rw->aux = cs_malloc(rw->cs);
	if (!rw->insn || !rw->aux) {
		dbtp_gt_rw_close(rw);
		return dbtp_err_set(err, ENOMEM, "out of memory");
	}
	rw->arch = arch;
	*out = rw;
	return 0;
}

void dbtp_gt_rw_read(dbtp_gt_rw *rw, uint32_t bytes)
{
	rw->read = bytes < DBTP_GT_READ_SIZE ? bytes : DBTP_GT_READ_SIZE;
}

void dbtp_gt_rw_mark(dbtp_gt_rw *rw, int on)
{
	rw->mark = on;
}

void dbtp_gt_rw_close(dbtp_gt_rw *rw)
{
	if (!rw)
		return;
	if (rw->insn)
		cs_free(rw->insn, 1);
	if (rw->aux)
		cs_free(rw->aux, 1);
	cs_close(&rw->cs);
	free(rw);
}

int dbtp_gt_rw_block(dbtp_gt_rw *rw, uint32_t id, const uint8_t *code,
		     uint32_t nbytes, uint32_t ninsns, const uint8_t *sizes,
		     uint64_t vaddr, FILE *f, FILE *slots,
		     struct dbtp_gt_rw_stats *st, dbtp_err *err)
{
	if (rw->arch == DBTP_ARCH_AARCH64)
		return dbtp_gt_rw_a64(rw, id, code, nbytes, ninsns, sizes,
				      vaddr, f, slots, st, err);
	return dbtp_gt_rw_x86(rw, id, code, nbytes, ninsns, sizes, vaddr, f,
			      slots, st, err);
}

void dbtp_gt_rw_fp_exact(dbtp_gt_rw *rw, int on)
{
	rw->fp_exact = on;
}

int dbtp_gt_fp_insn(enum dbtp_arch arch, const char *mn)
{
	/* prefixes (fmadd covers fmaddsub, fmsub fmsubadd) */
	static const char *const x86[] = {"add",   "sub",    "mul",    "div",
					  "sqrt",  "min",    "max",    "round",
					  "hadd",  "hsub",   "dp",     "fmadd",
					  "fmsub", "fnmadd", "fnmsub", NULL};
	size_t n;

	if (arch == DBTP_ARCH_AARCH64)
		return (mn[0] == 'f' && strcmp(mn, "fmov") &&
			strcmp(mn, "fabs") && strcmp(mn, "fneg") &&
			strcmp(mn, "fcsel")) ||
		       !strcmp(mn, "scvtf") || !strcmp(mn, "ucvtf");
	if (mn[0] == 'v')
		mn++;
	if (!strncmp(mn, "cvt", 3))
		return 1;
	n = strlen(mn);
	if (n < 3 || (strcmp(mn + n - 2, "ss") && strcmp(mn + n - 2, "sd") &&
		      strcmp(mn + n - 2, "ps") && strcmp(mn + n - 2, "pd")))
		return 0;
	for (int i = 0; x86[i]; i++)
		if (!strncmp(mn, x86[i], strlen(x86[i])))
			return 1;
	return 0;
}

uint64_t dbtp_gt_slots_moved(uint64_t m, int32_t d)
{
	if (d % 8 || d >= 512 || d <= -512)
		return 0;
	return d >= 0 ? m >> (d / 8) : m << (-d / 8);
}

void dbtp_gt_sp_read(struct dbtp_gt_rw_stats *st, int64_t at, int32_t size)
{
	if (at < 0)
		return;
	if (at % 8 + size > 8 || at >= 512)
		st->sp_reads_far = 1;
	else if (st->sp_reset)
		st->sp_reads_top |= 1ull << (at / 8);
	else
		st->sp_reads |= 1ull << (at / 8);
}

/* SPDX-License-Identifier: MIT */
/*
 * dbtp/cpuview.h - what a program learns about its x86-64 CPU before it
 * runs any code of its own: the CPUID leaves, XCR0 (XGETBV), and the types
 * of its auxiliary vector with AT_HWCAP/AT_HWCAP2.  Taken from this CPU, or
 * from a QEMU CPU model by running a probe program under QEMU user mode; a
 * native run under ptrace can then be shown QEMU's view (lib/native/step.c
 * answers CPUID and XGETBV from it and rewrites the auxiliary vector), so
 * that glibc's start-up code takes the paths it takes under QEMU.
 */
#ifndef DBTP_CPUVIEW_H
#define DBTP_CPUVIEW_H

#include <stdint.h>
#include <stdio.h>

#include "dbtp/common.h"

/* CPUID leaves covered: 0..0x3f and 0x80000000..0x8000003f, subleaves
 * 0..31 of each; CPUID outside answers zeros. */
#define DBTP_CPUID_LEAVES 64
#define DBTP_CPUID_SUBLEAVES 32
#define DBTP_AUXV_MAX 64

/**
 * struct dbtp_cpu_view - a CPU as a program sees it.
 * @cpuid: [half][leaf][subleaf][eax ebx ecx edx], half 0 = basic leaves,
 *         1 = extended (0x80000000 + leaf).
 * @xcr0: XGETBV with ECX = 0; valid if @has_xcr0 (OSXSAVE set).
 * @auxv_type: the auxiliary vector's entry types in order (AT_NULL not
 *         included), @nauxv of them.
 * @hwcap, @hwcap2: AT_HWCAP and AT_HWCAP2 values (if among the types).
 */
struct dbtp_cpu_view {
	uint32_t cpuid[2][DBTP_CPUID_LEAVES][DBTP_CPUID_SUBLEAVES][4];
	uint64_t xcr0;
	int has_xcr0;
	uint64_t auxv_type[DBTP_AUXV_MAX];
	size_t nauxv;
	uint64_t hwcap, hwcap2;
};

/**
 * dbtp_cpu_view_self() - the view of the calling process: CPUID executed
 * here, XGETBV if OSXSAVE, /proc/self/auxv.  Under QEMU user mode that is
 * QEMU's view.  Fails on a non-x86-64 build.
 */
int dbtp_cpu_view_self(struct dbtp_cpu_view *v, dbtp_err *err);

/**
 * dbtp_cpu_view_write() - @v as text, one item a line:
 * "cpuid LEAF SUB EAX EBX ECX EDX" (hex, leaves whose registers are all
 * zero left out), "xcr0 HEX", "auxv TYPE" in order, "hwcap HEX",
 * "hwcap2 HEX".
 */
int dbtp_cpu_view_write(const struct dbtp_cpu_view *v, FILE *f, dbtp_err *err);

/** dbtp_cpu_view_parse() - read what dbtp_cpu_view_write() wrote. */
int dbtp_cpu_view_parse(struct dbtp_cpu_view *v, const char *text,
			dbtp_err *err);

/**
 * dbtp_cpu_view_qemu() - the view QEMU user mode gives: runs
 * `QEMU -cpu CPU PROBE PROBE_ARGS...` (PROBE an x86-64 program that writes
 * its dbtp_cpu_view_self() with dbtp_cpu_view_write() to stdout: dbtprof
 * cpu-view) and parses its output.  @qemu NULL: qemu-x86_64 from PATH;
 * @cpu NULL: "max".
 */
int dbtp_cpu_view_qemu(struct dbtp_cpu_view *v, const char *qemu,
		       const char *cpu, const char *probe,
		       const char *const *probe_args, dbtp_err *err);

/**
 * dbtp_cpu_view_cpuid() - the registers CPUID gives for (@leaf, @sub)
 * in @v.  A subleaf above 31 of a leaf whose subleaves 0-31 are all the
 * same (a leaf that ignores ECX) gives that; zeros for anything else
 * outside the covered leaves.
 */
void dbtp_cpu_view_cpuid(const struct dbtp_cpu_view *v, uint32_t leaf,
			 uint32_t sub, uint32_t r[4]);

#endif

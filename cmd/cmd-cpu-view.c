/* SPDX-License-Identifier: MIT */
/*
 * cmd-cpu-view.c - `dbtprof cpu-view`: the CPU a program sees (CPUID,
 * XCR0, auxiliary vector types), natively or under a QEMU CPU model.
 * `native-count --match-qemu` runs it under QEMU to learn what to show the
 * native program.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/cpuview.h"

static const char usage_text[] =
    "usage: dbtprof cpu-view [--cpu MODEL [--qemu PATH]]\n"
    "\n"
    "Print what an x86-64 program learns about its CPU before running code\n"
    "of its own: CPUID leaves 0-0x3f and 0x80000000-0x8000003f (subleaves\n"
    "0-31; all-zero ones left out), XCR0, the types of the auxiliary vector\n"
    "in order, AT_HWCAP and AT_HWCAP2.  Without --cpu: this CPU; with it:\n"
    "dbtprof runs itself under `qemu-x86_64 -cpu MODEL` and prints QEMU's\n"
    "view (what `native-count --match-qemu` shows the native program).\n"
    "\n"
    "Options:\n"
    "      --cpu MODEL   QEMU CPU model (e.g. max, EPYC-Milan)\n"
    "      --qemu PATH   emulator (default qemu-x86_64 from PATH)\n"
    "  -h, --help        this text\n";

int cpu_view_of(const char *qemu, const char *cpu, struct dbtp_cpu_view *v,
		dbtp_err *err)
{
	static const char *const args[] = {"cpu-view", NULL};
	const char *exe = getenv("DBTPROF_CPU_VIEW_EXE");
	char self[PATH_MAX];
	ssize_t n;

	/* another dbtprof to run under QEMU: a sanitizer build cannot */
	if (exe && *exe)
		return dbtp_cpu_view_qemu(v, qemu, cpu, exe, args, err);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return dbtp_err_set(err, 0,
				    "cannot find dbtprof itself "
				    "(/proc/self/exe)");
	self[n] = 0;
	return dbtp_cpu_view_qemu(v, qemu, cpu, self, args, err);
}

int cmd_cpu_view(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cpu", required_argument, NULL, 'C'},
	    {"qemu", required_argument, NULL, 'Q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cpu = NULL, *qemu = NULL;
	struct dbtp_cpu_view *v;
	dbtp_err err = {0};
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			cpu = optarg;
			break;
		case 'Q':
			qemu = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("cpu-view", "unknown option");
		}
	}
	if (optind < argc)
		return usage_error("cpu-view", "unexpected argument '%s'",
				   argv[optind]);
	if (qemu && !cpu)
		return usage_error("cpu-view", "--qemu needs --cpu");
	v = malloc(sizeof(*v));
	if (!v) {
		error("out of memory");
		return 1;
	}
	rc =
	    cpu ? cpu_view_of(qemu, cpu, v, &err) : dbtp_cpu_view_self(v, &err);
	if (!rc)
		rc = dbtp_cpu_view_write(v, stdout, &err);
	free(v);
	if (rc) {
		error("cpu-view: %s", err.msg);
		return 1;
	}
	return 0;
}

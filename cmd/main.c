/* SPDX-License-Identifier: MIT */
/* main.c - dbtprof's entry point: dispatch to one cmd-<name>.c per command. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

#define DBTPROF_VERSION "0.1.0"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
    {"record", cmd_record, "run a program under QEMU and record a trace"},
    {"stats", cmd_stats, "summarise a trace: counts, threads, hot code"},
    {"dump", cmd_dump, "print a trace's events or blocks as text"},
    {"verify", cmd_verify, "check a trace end to end and say how it ends"},
    {"bbv", cmd_bbv,
     "basic block vectors (SimPoint .bb) from a trace or a run"},
    {"simpoint", cmd_simpoint,
     "SimPoint phase clustering: simulation points and weights"},
    {"locate", cmd_locate,
     "where simulation points start; check them in another run"},
    {"cache", cmd_cache,
     "L1D/L2 cache model: miss rates and MPKI per interval"},
    {"cycles", cmd_cycles, "cycles of a run from an out-of-order model (LLVM)"},
    {"diff", cmd_diff,
     "differential throughput of two versions: cycles(B)/cycles(A)"},
    {"native-count", cmd_native_count,
     "count a program's instructions natively (ptrace), a reference"},
    {"cpu-view", cmd_cpu_view,
     "the CPU a program sees (CPUID, XCR0, auxv), natively or under QEMU"},
    {"compare", cmd_compare, "where two recordings of a program part, and why"},
    {"regions", cmd_regions,
     "simulate DBT region formation (NET, MRET2, LEI, TT, NETPlus, LEF)"},
    {"gentest", cmd_gentest, "a short test program from profiles, for DBTs"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: dbtprof COMMAND [OPTIONS] [ARGS]\n\n"
		   "Performance analysis with and for dynamic binary "
		   "translation.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'dbtprof COMMAND --help' describes a command; "
		   "doc/dbtprof-COMMAND.md has more.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dbtprof %s\n", DBTPROF_VERSION);
		return 0;
	}
	/* Output to a closed pipe (dbtprof dump | head) ends quietly. */
	signal(SIGPIPE, SIG_DFL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	error("'%s' is not a command; see 'dbtprof --help'", argv[1]);
	return EXIT_USAGE;
}

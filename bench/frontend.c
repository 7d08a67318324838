/*
 * bench/frontend.c - what this x86-64 machine's core does per cycle on
 * patterns that LLVM's scheduling models (and so `dbtprof cycles`) do not
 * describe: the clock, from a chain of dependent adds (one a cycle on
 * every x86-64 core of the last decade), the cost of taken branches and
 * of an interpreter's dispatch, and which loads of a value just stored
 * the core serves without waiting for the store (memory renaming).  A
 * stand-in for hardware cycle counters where a machine has none
 * (bench/RESULTS.md, "Lua under the model against a calibrated clock",
 * "Memory renaming as a Zen 4 does it").
 *
 *   cc -O2 bench/frontend.c -o frontend && taskset -c 1 ./frontend [REPS]
 *
 * A jump never goes to the next instruction (an int3 that never runs
 * stands between): in a recorded block stream that is no taken branch.
 * Each pattern is repeated 50 times in a loop (small enough for the op
 * cache), the loop run REPS/50 times (default 200,000,000 patterns; the
 * dispatch loops run REPS iterations of their own), the
 * least of five runs kept; cycles per pattern are its time over the add
 * chain's.  `dbtprof cycles -- ./frontend --one NAME REPS` models one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNROLL 50
#define STR(x) #x
#define XSTR(x) STR(x)
/* @body UNROLL times, looped over %0 times */
#define LOOP(setup, body)                                                      \
	setup "1:\n.rept " XSTR(UNROLL) "\n" body "\n.endr\ndec %0\njnz 1b\n"
/* @setup once, then @body */
#define PATTERN_AFTER(name, setup, body)                                       \
	__attribute__((noinline)) static void name(long it)                    \
	{                                                                      \
		__asm__ volatile(LOOP(setup, body)                             \
				 : "+r"(it)                                    \
				 :                                             \
				 : "rax", "rcx", "rdx", "rsi", "rdi", "r8",    \
				   "r9", "memory", "cc");                      \
	}
#define PATTERN(name, body) PATTERN_AFTER(name, "", body)
#define MOVS "mov $1, %%esi\nmov $2, %%edi\nmov $3, %%r8d\nmov $4, %%r9d\n"

PATTERN(add_chain, "add $1, %%rax")
PATTERN(mov4, MOVS)
PATTERN(mov4_not_taken, MOVS "test %%esi, %%esi\njz 2f\n2:")
PATTERN(jmp, "jmp 2f\nint3\n2:")
PATTERN(mov4_jmp, MOVS "jmp 2f\nint3\n2:")
PATTERN(jmp_indirect, "lea 2f(%%rip), %%rcx\njmp *%%rcx\nint3\n2:")
PATTERN(mov3_jmp_indirect, "lea 2f(%%rip), %%rcx\nmov $2, %%edi\n"
			   "mov $3, %%r8d\nmov $4, %%r9d\njmp *%%rcx\nint3\n2:")
PATTERN(call_ret, "call 3f\njmp 2f\n3: ret\n2:")

/*
 * Memory renaming: a value stored and loaded back, on a chain through
 * %rax with one add (a cycle if the load takes the stored register, the
 * store-to-load forwarding latency more if it does not), the store and
 * the load written in different ways; %rdi points at fe_buf unless the
 * pattern says otherwise.
 */
long fe_buf[4];
#define BUF "lea fe_buf(%%rip), %%rdi\n"
#define ADD "add $1, %%rax\n"
#define MEM(name, setup, body) PATTERN_AFTER(name, BUF setup, body ADD)
MEM(st_ld, "", "mov %%rax, (%%rdi)\nmov (%%rdi), %%rax\n")
MEM(st_ld_32, "", "mov %%eax, (%%rdi)\nmov (%%rdi), %%eax\n")
MEM(st_ld_64_32, "", "mov %%rax, 8(%%rdi)\nmov 8(%%rdi), %%eax\n")
MEM(st_ld_index, "xor %%ecx, %%ecx\n",
    "mov %%rax, (%%rdi,%%rcx,8)\nmov (%%rdi,%%rcx,8), %%rax\n")
MEM(st_ld_rsp, "", "mov %%rax, -8(%%rsp)\nmov -8(%%rsp), %%rax\n")
MEM(push_pop, "", "push %%rax\npop %%rax\n")
MEM(st_ld_lea_before, "", BUF "mov %%rax, (%%rdi)\nmov (%%rdi), %%rax\n")
MEM(st_ld_rip, "", "mov %%rax, fe_buf(%%rip)\nmov fe_buf(%%rip), %%rax\n")
MEM(st_ld_other_reg, "lea fe_buf(%%rip), %%rsi\n",
    "mov %%rax, (%%rdi)\nmov (%%rsi), %%rax\n")
MEM(st_ld_other_disp, "lea 8+fe_buf(%%rip), %%rsi\n",
    "mov %%rax, 8(%%rdi)\nmov (%%rsi), %%rax\n")
MEM(st_ld_base_written, "",
    "mov %%rax, (%%rdi)\nadd $0, %%rdi\nmov (%%rdi), %%rax\n")
MEM(st_loadop, "", "mov %%rax, (%%rdi)\nadd (%%rdi), %%rax\n")
MEM(st_movsxd, "", "mov %%eax, (%%rdi)\nmovslq (%%rdi), %%rax\n")
MEM(st_ld_byte, "", "mov %%al, (%%rdi)\nmovzbl (%%rdi), %%eax\n")
PATTERN(push3_pop3, "push %%rax\npush %%rcx\npush %%rdx\npop %%rdx\n"
		    "pop %%rcx\npop %%rax")

/*
 * One indirect jump through a table of four targets, each a block that
 * jumps back to the loop's tail, its targets in the order of a pattern of
 * 16 bytes (an interpreter's dispatch, learnable from history): the
 * first argument loops, the second points at the pattern.
 */
void ind_table(long it, const unsigned char *pat);
__asm__(".text\n.globl ind_table\n.type ind_table, @function\n"
	"ind_table:\n\txor %ecx, %ecx\n\tlea 5f(%rip), %rdx\n"
	"1:\n\tmovzbl (%rsi,%rcx), %eax\n\tadd $1, %ecx\n"
	"\tand $15, %ecx\n\tjmp *(%rdx,%rax,8)\n\tint3\n"
	"10:\n\tnop\n\tjmp 2f\n11:\n\tnop\n\tjmp 2f\n"
	"12:\n\tnop\n\tjmp 2f\n13:\n\tnop\n\tjmp 2f\n"
	"2:\n\tsub $1, %rdi\n\tjnz 1b\n\tret\n"
	".section .data.rel.ro\n.p2align 3\n"
	"5:\n\t.quad 10b, 11b, 12b, 13b\n.text\n");

static const unsigned char pat_one[16],
    pat_four[16] = {0, 1, 2, 3, 3, 2, 1, 0, 0, 2, 1, 3, 1, 3, 0, 2};

static void ind_one(long it)
{
	ind_table(it * UNROLL, pat_one);
}

static void ind_four(long it)
{
	ind_table(it * UNROLL, pat_four);
}

static const struct {
	const char *name;
	void (*run)(long);
} patterns[] = {
    {"add_chain", add_chain},
    {"mov4", mov4},
    {"mov4_not_taken", mov4_not_taken},
    {"jmp", jmp},
    {"mov4_jmp", mov4_jmp},
    {"jmp_indirect", jmp_indirect},
    {"mov3_jmp_indirect", mov3_jmp_indirect},
    {"call_ret", call_ret},
    {"dispatch_one_target", ind_one},
    {"dispatch_four_targets", ind_four},
    {"st_ld", st_ld},
    {"st_ld_32", st_ld_32},
    {"st_ld_64_32", st_ld_64_32},
    {"st_ld_index", st_ld_index},
    {"st_ld_rsp", st_ld_rsp},
    {"push_pop", push_pop},
    {"st_ld_lea_before", st_ld_lea_before},
    {"st_ld_rip", st_ld_rip},
    {"st_ld_other_reg", st_ld_other_reg},
    {"st_ld_other_disp", st_ld_other_disp},
    {"st_ld_base_written", st_ld_base_written},
    {"st_loadop", st_loadop},
    {"st_movsxd", st_movsxd},
    {"st_ld_byte", st_ld_byte},
    {"push3_pop3", push3_pop3},
};
#define NPAT (sizeof patterns / sizeof patterns[0])

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long reps = 200000000;
	double hz = 0;

	if (argc == 4 && !strcmp(argv[1], "--one")) {
		for (size_t i = 0; i < NPAT; i++)
			if (!strcmp(argv[2], patterns[i].name)) {
				patterns[i].run(atol(argv[3]) / UNROLL);
				return 0;
			}
		fprintf(stderr, "frontend: no pattern '%s'\n", argv[2]);
		return 2;
	}
	if (argc == 2)
		reps = atol(argv[1]);
	if (argc > 2 || reps < UNROLL) {
		fprintf(stderr, "usage: frontend [REPS] | --one NAME REPS\n");
		return 2;
	}
	printf("%-22s %10s %10s\n", "pattern", "ns", "cycles");
	for (size_t i = 0; i < NPAT; i++) {
		double best = 1e30, per;

		for (int r = 0; r < 5; r++) {
			double t0 = now();

			patterns[i].run(reps / UNROLL);
			t0 = now() - t0;
			if (t0 < best)
				best = t0;
		}
		per = best / (double)(reps / UNROLL * UNROLL);
		if (i == 0)
			hz = 1 / per;
		printf("%-22s %10.3f %10.3f\n", patterns[i].name, per * 1e9,
		       per * hz);
	}
	printf("clock %.3f GHz (one dependent add a cycle)\n", hz / 1e9);
	return 0;
}

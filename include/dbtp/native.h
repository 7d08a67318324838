/* SPDX-License-Identifier: MIT */
/*
 * dbtp/native.h - an instruction count that does not come from QEMU: run an
 * x86-64 program natively under ptrace single-stepping (x86-64 hosts only)
 * and count every user-mode instruction it executes, per thread, optionally
 * reporting each instruction and each dynamic basic block to callbacks; and
 * turn those blocks into basic block vectors (SimPoint .bb).
 *
 * How instructions are counted (doc/dbtprof-native-count.md has more):
 *
 *  - The child calls PTRACE_TRACEME and execs the program; every thread is
 *    then resumed with PTRACE_SINGLESTEP.  A single-step trap (SIGTRAP with
 *    si_code TRAP_TRACE, or TRAP_BRKPT after a syscall instruction) means
 *    one instruction completed.
 *  - The instruction that ends a thread or the process (the syscall
 *    instruction of exit or exit_group) never returns, so no step trap
 *    follows it.  PTRACE_O_TRACEEXIT stops the thread in the kernel's exit
 *    path; if it is there because of syscall 60 or 231 and the two bytes
 *    before its RIP are "syscall" (0f 05), that instruction is counted.
 *  - execve: PTRACE_O_TRACEEXEC reports the exec; its syscall instruction is
 *    counted there and counting goes on in the new program image.
 *  - Stops that complete no instruction count nothing: signals (delivered
 *    to the program unchanged), the trap at a signal handler's first
 *    instruction after a signal was delivered, faults (the faulting
 *    instruction did not complete), group-stops, a new thread's first stop.
 *  - An int3 executed by the program counts one and its SIGTRAP is
 *    delivered.
 *  - rep-prefixed string instructions trap once per iteration, so by default
 *    they count once per iteration (like QEMU); with @rep_per_instruction a
 *    step that leaves RIP on the same rep-prefixed string instruction is not
 *    counted, so the instruction counts once (like hardware counters and
 *    Valgrind).
 *  - Threads (clone without SIGCHLD as exit signal) are followed with
 *    PTRACE_O_TRACECLONE and counted separately; thread 0 is the main
 *    thread, then creation order.  Forked and vforked children are not
 *    traced and not counted.
 */
#ifndef DBTP_NATIVE_H
#define DBTP_NATIVE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dbtp/common.h"

struct dbtp_cpu_view;

/**
 * struct dbtp_native_insn - one counted instruction.
 * @pc: its address.
 * @next: the thread's RIP after it.
 * @len: its length in bytes; 0 if unknown (lengths are decoded only when
 *       dbtp_native_opts.on_block or .decode is set, or Capstone failed).
 * @flow: 1 if control went elsewhere than the next instruction (@next !=
 *        @pc + @len: a taken branch, call, ret, execve ...).  An iteration
 *        of a rep string instruction that stays in place has @flow 0.
 *        Without a length: 1 unless @next is within 1..15 bytes after @pc.
 * @thread: 0 = main thread, then in creation order.
 */
struct dbtp_native_insn {
	uint64_t pc, next;
	uint32_t thread;
	uint8_t len, flow;
};

/**
 * struct dbtp_native_opts - how to run.  Zero means the default.
 * @argv0: the program's argv[0]; default its base name.
 * @keep_env: pass the caller's environment instead of the fixed one
 *            (PATH=/usr/local/bin:/usr/bin:/bin, LC_ALL=C, as dbtp_run).
 * @env: extra VAR=VALUE strings, @nenv of them (as dbtp_run_env()).
 * @aslr: 1 leaves address-space randomisation on (default off).
 * @rep_per_instruction: count a rep string instruction once, not once per
 *            iteration.
 * @no_vdso: hide the vDSO from the program (its auxiliary vector entry
 *            becomes AT_IGNORE), as QEMU 7.2 user mode offers none.
 * @decode: decode instruction lengths even without @on_block (gives
 *            dbtp_native_insn.len to @on_insn).
 * @cpu_view: show the program this CPU view (dbtp/cpuview.h) instead of the
 *            host's: each CPUID it executes, and each XGETBV with ECX = 0,
 *            is not run but answered from the view (RIP moved past it; it
 *            counts as one instruction, dbtp_native_result.emulated); its
 *            auxiliary vector is rewritten to the view's entry types in
 *            the view's order (values the host's, AT_HWCAP/AT_HWCAP2 the
 *            view's; types the host does not give are left out), which
 *            also hides the vDSO when the view has no AT_SYSINFO_EHDR.
 * @rep_qemu: count rep string instructions as QEMU 7.2 executes them: one
 *            more for an instruction that ran at least one iteration and
 *            ended with its count register at 0 (not for a repe/repne
 *            compare its condition stopped), dbtp_native_result.rep_extra
 *            (ignored with @rep_per_instruction).
 * @qemu_mmap: mappings the kernel is to place (mmap without an address
 *            or MAP_FIXED: libraries, the loader's cache and memory,
 *            malloc's) get hints upward from the top of the address space
 *            in use at exec (the dynamic loader), in the order asked, as
 *            QEMU 7.2 places them above the program and the loader: loaded
 *            objects sort by address in the same order, and a mapping
 *            follows the previous one where QEMU's does.
 * @on_start: called once the program has been exec'ed and stopped, with its
 *            pid (for forwarding signals).
 * @on_insn: called for every counted instruction (in each thread's order).
 * @on_block: called for every executed dynamic basic block: a maximal run of
 *            consecutively executed instructions of one thread, entered at
 *            @entry, ended by a control transfer (or by a signal handler
 *            being entered, or the thread's end); @ninsns counted
 *            instructions.  A block ending in a transfer is reported right
 *            away, others when the thread next runs elsewhere or ends.
 * @on_progress: called every 65536 steps with the instructions so far.
 * @ctx: passed to the callbacks.
 *
 * A callback returning non-zero stops the run: the program is killed and
 * dbtp_native_run() fails with the callback's @err.
 */
struct dbtp_native_opts {
	const char *argv0;
	int keep_env;
	const char *const *env;
	size_t nenv;
	int aslr;
	int rep_per_instruction;
	int no_vdso;
	int decode;
	const struct dbtp_cpu_view *cpu_view;
	int rep_qemu;
	int qemu_mmap;
	void (*on_start)(void *ctx, pid_t pid);
	int (*on_insn)(void *ctx, const struct dbtp_native_insn *in,
		       dbtp_err *err);
	int (*on_block)(void *ctx, uint32_t thread, uint64_t entry,
			uint64_t ninsns, dbtp_err *err);
	void (*on_progress)(void *ctx, uint64_t insns);
	void *ctx;
};

/**
 * struct dbtp_native_thread - counts of one thread.
 * @tid: its kernel thread id.
 * @parent: number of the thread that created it (0 for thread 0 itself).
 * @insns: instructions counted.
 * @steps: single-step stops at which an instruction completed.
 * @exit_counted: 1 if its exit/exit_group syscall instruction was counted
 *                without a step stop.
 */
struct dbtp_native_thread {
	pid_t tid;
	uint32_t parent;
	uint64_t insns, steps;
	int exit_counted;
};

/**
 * struct dbtp_native_result - what a run gave.
 * @program: absolute path of the program.
 * @argv0: the argv[0] it got.
 * @status: the process's waitpid() status.
 * @insns: instructions counted, all threads.
 * @steps: single-step stops at which an instruction completed.
 * @exit_insns: exit syscall instructions counted without a step stop.
 * @exec_insns: execve syscall instructions counted at the exec stop.
 * @rep_folded: rep iterations not counted (@rep_per_instruction).
 * @rep_extra: executions added by @rep_qemu (counted in @insns).
 * @emulated: CPUID/XGETBV instructions answered from the CPU view (counted
 *            in @insns, not in @steps).
 * @signals: signals delivered to the program.
 * @seconds: wall time from start to the process's end.
 * @threads: per thread, @nthreads of them.
 */
struct dbtp_native_result {
	char *program, *argv0;
	char *maps; /* /proc/PID/maps as the first thread ended, or NULL */
	int status;
	uint64_t insns, steps, exit_insns, exec_insns, rep_folded, signals;
	uint64_t emulated, rep_extra;
	double seconds;
	struct dbtp_native_thread *threads;
	uint32_t nthreads;
};

/**
 * dbtp_native_run() - run @argv natively and count its instructions.
 * @res: receives the result (free with dbtp_native_result_free()).
 * @o: options (NULL for defaults).
 * @argv: program (resolved with dbtp_find_in_path()) and arguments.
 * @err: filled on failure.
 *
 * The program's stdio is the caller's.  The call waits with
 * waitpid(-1, __WALL): do not have other children of this process exit
 * during it.  Fails if the program is missing or not an x86-64 ELF, on a
 * non-x86-64 host, if ptrace is not permitted (EPERM: a container without
 * CAP_SYS_PTRACE, a seccomp filter, kernel.yama.ptrace_scope = 3, or
 * already being traced), and if a callback fails.  A program that ends by
 * a signal is a success: see @res->status.
 *
 * Return: 0 on success, -1 on failure.
 */
int dbtp_native_run(struct dbtp_native_result *res,
		    const struct dbtp_native_opts *o, char *const argv[],
		    dbtp_err *err);

/** dbtp_native_result_free() - free what @res holds (and zero it). */
void dbtp_native_result_free(struct dbtp_native_result *res);

/*
 * Basic block vectors from dbtp_native_opts.on_block: each thread's blocks
 * are cut into intervals of N instructions at block boundaries, carrying
 * the overshoot forward (interval k ends at the first block end at or after
 * (k+1)*N of that thread's instructions; a block longer than N makes the
 * following interval end at the next multiple of N it reaches).  Block ids
 * run from 1 in order of first appearance, thread 0's intervals first, then
 * thread 1's, ...
 */
typedef struct dbtp_native_bbv dbtp_native_bbv;

/** dbtp_native_bbv_new() - a generator for intervals of @interval (> 0). */
int dbtp_native_bbv_new(dbtp_native_bbv **out, uint64_t interval,
			dbtp_err *err);

/** dbtp_native_bbv_block() - thread @thread ran block @entry, @ninsns
 * instructions (an on_block callback with the generator as @ctx). */
int dbtp_native_bbv_block(void *bbv, uint32_t thread, uint64_t entry,
			  uint64_t ninsns, dbtp_err *err);

/**
 * dbtp_native_bbv_write() - close each thread's last partial interval and
 * write the vectors: to @bb one line per interval, "T" then ":ID:COUNT "
 * per block (ids ascending, COUNT = instructions of that block in the
 * interval), thread 0's intervals first; to @map (may be NULL) one line per
 * block in the columns of `dbtprof bbv`'s map, "ID 0xADDRESS - - FILE
 * 0xOFFSET": the mapped file holding the block and the block's offset in
 * it, found in @maps (the program's /proc/PID/maps text, see
 * dbtp_native_result), "-" where none.  @name is used in error messages.
 *
 * Return: 0, or -1 on a write error or out of memory.
 */
int dbtp_native_bbv_write(dbtp_native_bbv *b, FILE *bb, FILE *map,
			  const char *maps, const char *name, dbtp_err *err);

/** Intervals written (after dbtp_native_bbv_write()), distinct blocks. */
uint64_t dbtp_native_bbv_nintervals(const dbtp_native_bbv *b);
uint64_t dbtp_native_bbv_nblocks(const dbtp_native_bbv *b);

void dbtp_native_bbv_free(dbtp_native_bbv *b);

#endif

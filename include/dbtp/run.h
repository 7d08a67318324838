/* SPDX-License-Identifier: MIT */
/*
 * dbtp/run.h - start a guest program under QEMU user mode with the dbtprof
 * plugin, in a controlled environment, and hand back the plugin's trace
 * stream as a pipe.  `dbtprof record` copies that stream to a file; live
 * analyses read it directly with dbtp_trace_open_fd().
 */
#ifndef DBTP_RUN_H
#define DBTP_RUN_H

#include <stdint.h>
#include <sys/types.h>

#include "dbtp/common.h"

/**
 * struct dbtp_run_opts - how to run.  Zero (or NULL) means the default.
 * @qemu: emulator; default qemu-x86_64 or qemu-aarch64 from PATH, chosen by
 *        the program's ELF header.
 * @cpu: QEMU CPU model; default "qemu64" (x86-64), "max" (AArch64).
 * @sysroot: QEMU -L prefix for dynamically linked AArch64 programs; default
 *           /usr/aarch64-linux-gnu (Debian's libc6-arm64-cross).
 * @plugin: path of libdbtp-qemu.so (required).
 * @argv0: the guest's argv[0]; default the program's base name.
 * @mode: "count", "blocks" (default) or "mem".
 * @keep_env: pass the caller's environment instead of the fixed one.
 * @env: extra VAR=VALUE strings, @nenv of them.
 * @seed: QEMU's -seed (guest random numbers); default 1.
 * @chunk: plugin chunk size in words (0 = plugin default).
 * @zstd: plugin zstd level, -1 for the plugin default.
 * @flush_ms: plugin idle flush interval in ms, -1 for the default (20),
 *            0 to write only full chunks.
 * @aslr: 1 leaves host address-space randomisation on (default off).
 * @plugin_args: more comma-separated plugin arguments (e.g. "interval=N").
 */
/**
 * DBTP_MATCH_TUNABLES - the glibc tunable that makes a native x86-64 run
 * and a `qemu-x86_64 -cpu max` run (QEMU 7.2) of a program pick the same
 * code: it masks the host CPU features QEMU cannot offer that glibc
 * consults (AVX-512 for IFUNCs, XSAVEC for the lazy-binding trampoline,
 * HTT for the cache sizes behind memcpy's strategy; a native run shown
 * QEMU's CPU view lacks them anyway) and turns off rseq registration
 * (QEMU 7.2 has no rseq system call, so the host's success would take
 * another path).  Given to both runs so their environments are byte for
 * byte the same.
 */
#define DBTP_MATCH_TUNABLES                                                    \
	"GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512CD,-AVX512BW,"        \
	"-AVX512DQ,-AVX512VL,-XSAVEC,-HTT:glibc.pthread.rseq=0"

/**
 * dbtp_run_env() - the environment a run gets: the fixed one (PATH, LC_ALL)
 * or, with @keep_env, the caller's, then the @n VAR=VALUE strings @extra
 * (one replaces a variable already there, in place).  NULL-terminated;
 * NULL when out of memory.  Free with dbtp_run_env_free().
 */
char **dbtp_run_env(int keep_env, const char *const *extra, size_t n);
void dbtp_run_env_free(char **env);

struct dbtp_run_opts {
	const char *qemu, *cpu, *sysroot, *plugin, *argv0, *mode;
	int keep_env;
	const char *const *env;
	size_t nenv;
	uint64_t seed;
	unsigned chunk;
	int zstd;
	int flush_ms;
	int aslr;
	const char *plugin_args;
};

/**
 * struct dbtp_run - a started run.
 * @pid: QEMU's process id.
 * @fd: read end of the plugin's trace stream.
 * @program: absolute path of the program QEMU runs (a script's interpreter).
 * @qemu, @qemu_version: emulator path and the first line of its --version.
 * @cpu: the CPU model used.
 * @qemu_argv: QEMU's whole command line, NULL-terminated.
 * @envp: the guest's environment, NULL-terminated.
 * @env_digest: 16 hex digits identifying @envp (FNV-1a over its strings).
 */
struct dbtp_run {
	pid_t pid;
	int fd;
	enum dbtp_arch arch;
	int dynamic;
	char *program, *qemu, *qemu_version, *cpu;
	char **qemu_argv, **envp;
	char env_digest[17];
};

/**
 * dbtp_run_start() - resolve @argv[0], pick QEMU, start it.  A "#!" script
 * runs as Linux runs it, its interpreter under QEMU (@r->program), and
 * `#!/usr/bin/env NAME` runs NAME from the guest's PATH.
 * Fails with a one-line message if the program is missing or not an
 * x86-64/AArch64 ELF or a script of one, QEMU is missing, or the AArch64
 * sysroot is needed and absent.  On success the caller reads @r->fd and then
 * calls dbtp_run_wait().
 */
int dbtp_run_start(struct dbtp_run *r, const struct dbtp_run_opts *o,
		   char *const argv[], dbtp_err *err);

/**
 * dbtp_run_wait() - reap QEMU; *@status is the waitpid() status.
 */
int dbtp_run_wait(struct dbtp_run *r, int *status, dbtp_err *err);

void dbtp_run_free(struct dbtp_run *r);

/* The bytes of a "#!" line Linux reads (the line, its newline excluded, is
 * at most one fewer). */
#define DBTP_SHEBANG_MAX 256

/**
 * dbtp_shebang_parse() - the "#!" line at the start of @buf (@n bytes, the
 * first DBTP_SHEBANG_MAX looked at), read as Linux reads it: the
 * interpreter, the first word after "#!" and any blanks, into @interp, and
 * the rest of the line, blanks around it stripped, as one word into @arg
 * ("" if none).
 *
 * Return: 1; 0 if @buf does not start with "#!"; -1 if the line names no
 * interpreter; -2 if it has no end within DBTP_SHEBANG_MAX bytes.
 */
int dbtp_shebang_parse(const char *buf, size_t n, char interp[DBTP_SHEBANG_MAX],
		       char arg[DBTP_SHEBANG_MAX]);

/**
 * dbtp_resolve_program() - the program that runs when @name is started as
 * Linux starts it: @name itself (searched in $PATH if it has no slash) or,
 * for a "#!" script, its interpreter, given the line's argument (if any)
 * and the script's path (@name if that has a slash) before the script's
 * own arguments; the interpreter may be a script in turn (four levels),
 * and `#!/usr/bin/env NAME` runs NAME from the PATH of @envp (the
 * guest's environment; without one, dbtp_run_env()'s fixed PATH), as env
 * would, so that what runs is NAME itself.
 * @program: receives its absolute path; the caller frees it.
 * @words: receives the NULL-terminated words that go between it and the
 *	arguments, NULL for an executable; free with dbtp_run_env_free().
 * @argv0: receives the base name of the interpreter as the "#!" line names
 *	it, the default argv[0]; "" for an executable.
 *
 * Return: 0, or -1 with @err set (not found; a "#!" line without an
 * interpreter, too long, or too deep; its interpreter missing).
 */
int dbtp_resolve_program(const char *name, char *const envp[], char **program,
			 char ***words, char argv0[DBTP_SHEBANG_MAX],
			 dbtp_err *err);

/**
 * dbtp_find_in_path() - the absolute path of @name (searched in $PATH if it
 * has no slash), or NULL.  Caller frees.
 */
char *dbtp_find_in_path(const char *name);

/**
 * dbtp_which() - where $PATH's search finds @name (no slash), as the
 * shell would run it: that directory's entry, symbolic links not
 * resolved (a program may go by the name it was run as); NULL if @name
 * has a slash or is not found.  Caller frees.
 */
char *dbtp_which(const char *name);

#endif

/* SPDX-License-Identifier: MIT */
/* cmd.h - what the subcommands share: the table, messages, output helpers. */
#ifndef DBTP_CMD_H
#define DBTP_CMD_H

#include <stdint.h>
#include <stdio.h>

#include "dbtp/common.h"
#include "dbtp/trace.h"

/* Exit codes of dbtprof itself (record passes the guest's status through). */
#define EXIT_USAGE 2
#define EXIT_TOOL 125 /* record: dbtprof failed, not the guest */

int cmd_record(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_bbv(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_simpoint(int argc, char **argv);
int cmd_locate(int argc, char **argv);
int cmd_native_count(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_regions(int argc, char **argv);
int cmd_cycles(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_gentest(int argc, char **argv);
int cmd_cpu_view(int argc, char **argv);

/** error() - print "dbtprof: MSG" on stderr. */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** usage_error() - print "dbtprof CMD: MSG" and a hint to --help; returns 2. */
int usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** fmt_u64() - @v with thousands separators, in @buf (at least 32 bytes). */
const char *fmt_u64(uint64_t v, char *buf);

/* A trace's key/value @key (header, INFO or STATUS) as a number, 0 if
 * absent. */
uint64_t trace_kv_u64(const dbtp_trace *t, const char *key);

/* What a trace leaves out of the guest's run, appended to @buf (@n bytes)
 * as "; ..." clauses: processes it started (the plugin's INFO `forks`)
 * and the program it went on to run by execve (the recorder's `exec`). */
void trace_untraced(const dbtp_trace *t, char *buf, size_t n);

/** progress() - a "\r..." status line on stderr, only if it is a terminal and
 * a quarter second has passed since the last; progress_done() clears it. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress_done(void);

struct dbtp_run_opts;

/**
 * run_option() - apply one of the options shared by the commands that run
 * a program under QEMU: Q --qemu, C --cpu, L --sysroot, K --keep-env,
 * e --env VAR=VAL (appended to o->env, which the caller frees), P --plugin,
 * M --match-native (-cpu max unless --cpu, and DBTP_MATCH_TUNABLES).
 * Returns 1 if @c was one of them, 0 if not, -1 after a usage error
 * message (exit with EXIT_USAGE).
 */
int run_option(const char *cmd, int c, const char *arg,
	       struct dbtp_run_opts *o);

/* env_arg() - 0 if @arg is an --env VAR=VALUE, else -1 after a usage
 * error message for @cmd. */
int env_arg(const char *cmd, const char *arg);

struct dbtp_cycles_opts;
/* Options of the cycle model that cycles and diff share (option codes
 * for their getopt tables, the help lines, the parser). */
enum {
	MO_CACHE = 0x1100,
	MO_CACHE_PENALTY,
	MO_BPRED,
	MO_MISPREDICT,
	MO_MEMREN,
	MO_FRONTEND,
	MO_FULL
};
/* clang-format off */
#define MODEL_LONG_OPTIONS \
	{"cache", no_argument, NULL, MO_CACHE}, \
	{"cache-penalty", required_argument, NULL, MO_CACHE_PENALTY}, \
	{"branch-predictor", optional_argument, NULL, MO_BPRED}, \
	{"mispredict-penalty", required_argument, NULL, MO_MISPREDICT}, \
	{"memory-renaming", no_argument, NULL, MO_MEMREN}, \
	{"front-end", no_argument, NULL, MO_FRONTEND}, \
	{"full-model", no_argument, NULL, MO_FULL}
#define MODEL_HELP \
	"      --cache          add a cache model: loads go through an L1D\n" \
	"                       (32K, 8-way) and L2 (1M, 16-way) per thread;\n" \
	"                       an L1 miss adds 10 cycles, an L2 miss 40\n" \
	"      --cache-penalty L2,MEM  those two penalties (implies --cache)\n" \
	"      --branch-predictor[=gshare|tage]  add a branch predictor\n" \
	"                       (conditional branches by gshare, the default,\n" \
	"                       or a TAGE; indirect targets by path history,\n" \
	"                       or with tage an ITTAGE; return stack);\n" \
	"                       after a misprediction dispatch resumes a\n" \
	"                       penalty after the branch has executed (the\n" \
	"                       CPU's LLVM model's, 13-14)\n" \
	"      --mispredict-penalty N  that penalty (implies --branch-predictor)\n" \
	"      --memory-renaming  a mov or pop of the bytes an older store\n" \
	"                       wrote the same way takes the stored value at\n" \
	"                       once (AMD Zen 2 and Zen 4; x86 only)\n" \
	"      --front-end      add a front end: one taken branch a cycle, and\n" \
	"                       2 cycles more after an indirect jump or call\n" \
	"                       to another target than its last (measured on\n" \
	"                       a Zen 4; LLVM's models have no front end)\n" \
	"      --full-model     all four: --cache --branch-predictor\n" \
	"                       --memory-renaming --front-end\n"
/* clang-format on */
/**
 * model_option() - apply one of the MODEL_LONG_OPTIONS to @o (@argv the
 * command's, getopt_long() at optind: `--branch-predictor tage` takes
 * the next word when it names a predictor).  Returns 1 if @c was one of
 * them, 0 if not, -1 after a usage error message.
 */
int model_option(const char *cmd, int c, const char *arg, char **argv,
		 struct dbtp_cycles_opts *o);
/**
 * model_warm() - if @path is a trace file, read its block table first (a
 * quick pass over it) and time all its forms in one batch; 0, or -1 after
 * a message.
 */
struct dbtp_timing;
int model_warm(struct dbtp_timing *tm, const char *path);
/** model_flush() - write the timing table's cache; a warning if it fails. */
void model_flush(struct dbtp_timing *tm);
/** predictor() - DBTP_BPRED_GSHARE for "gshare" or NULL, DBTP_BPRED_TAGE
 * for "tage", else -1. */
int predictor(const char *name);
/** predictor_name() - "gshare" or "tage" for a DBTP_BPRED_* kind. */
const char *predictor_name(int kind);
/** model_defaults() - fill in the cache penalties --cache implies. */
void model_defaults(struct dbtp_cycles_opts *o);
/** write_file() - create @path with @len bytes of @p; prints the error. */
int write_file(const char *path, const void *p, size_t len);

/** The plugin next to the dbtprof executable, or $DBTPROF_PLUGIN. */
const char *plugin_path(void);

/* cpu_view_of() - QEMU's CPU view for -cpu @cpu, by running dbtprof
 * cpu-view under it (cmd-cpu-view.c). */
struct dbtp_cpu_view;
int cpu_view_of(const char *qemu, const char *cpu, struct dbtp_cpu_view *v,
		dbtp_err *err);

/* Minimal JSON writer. */
struct json {
	FILE *f;
	int depth, first[32], pretty;
};
void json_begin(struct json *j, FILE *f);
void json_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_obj(struct json *j, const char *key); /* key NULL inside arrays */
void json_arr(struct json *j, const char *key);
void json_close_obj(struct json *j);
void json_close_arr(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_hex(struct json *j, const char *key, uint64_t v);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
/* "branches": @n and @miss by DBTP_BPK_* class (conditional, indirect,
 * return, each's _mispredicted), as cycles and gentest write them. */
void json_branches(struct json *j, const uint64_t *n, const uint64_t *miss);
/* The DBTP_BPK_* classes' names in that object. */
extern const char *const bpk_name[];

#endif

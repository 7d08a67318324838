/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "dbtp/cycles.h"
#include "dbtp/run.h"

void error(const char *fmt, ...)
{
	va_list ap;

	fputs("dbtprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dbtprof %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'dbtprof %s --help'.\n", cmd);
	return EXIT_USAGE;
}

const char *fmt_u64(uint64_t v, char *buf)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v),
	    o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

static int progress_shown;
static struct timespec progress_last;

void progress(const char *fmt, ...)
{
	static int tty = -1;
	struct timespec now;
	va_list ap;

	if (tty < 0)
		tty = isatty(2);
	if (!tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (progress_shown &&
	    (now.tv_sec - progress_last.tv_sec) * 1000000000l +
		    (now.tv_nsec - progress_last.tv_nsec) <
		250000000l)
		return;
	progress_last = now;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_shown = 1;
}

void progress_done(void)
{
	if (progress_shown)
		fputs("\r\033[K", stderr);
	progress_shown = 0;
}

int write_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t off = 0;

	if (fd < 0) {
		error("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	while (off < len) {
		ssize_t w = write(fd, (const char *)p + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			error("%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (close(fd)) {
		error("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int env_arg(const char *cmd, const char *arg)
{
	if (strchr(arg, '=') && arg[0] != '=')
		return 0;
	usage_error(cmd, "--env wants VAR=VALUE, not '%s'", arg);
	return -1;
}

int run_option(const char *cmd, int c, const char *arg, struct dbtp_run_opts *o)
{
	const char **env;

	switch (c) {
	case 'Q':
		o->qemu = arg;
		return 1;
	case 'C':
		o->cpu = arg;
		return 1;
	case 'L':
		o->sysroot = arg;
		return 1;
	case 'K':
		o->keep_env = 1;
		return 1;
	case 'P':
		o->plugin = arg;
		return 1;
	case 'M': /* --match-native: the CPU view and glibc tunables that
		   * make QEMU and native runs pick the same code */
		if (!o->cpu)
			o->cpu = "max";
		arg = DBTP_MATCH_TUNABLES;
		/* fall through */
	case 'e':
		if (env_arg(cmd, arg))
			return -1;
		env = realloc((void *)o->env, (o->nenv + 1) * sizeof(*env));
		if (!env) {
			usage_error(cmd, "out of memory");
			return -1;
		}
		env[o->nenv++] = arg;
		o->env = env;
		return 1;
	default:
		return 0;
	}
}

const char *plugin_path(void)
{
	static char buf[PATH_MAX + 64];
	const char *env = getenv("DBTPROF_PLUGIN");
	static const char *rel[] = {"/libdbtp-qemu.so",
				    "/../lib/dbtprof/libdbtp-qemu.so"};
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "libdbtp-qemu.so";
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		snprintf(buf, sizeof(buf), "%s%s", exe, rel[i]);
		if (!access(buf, R_OK))
			return buf;
	}
	snprintf(buf, sizeof(buf), "%s%s", exe, rel[0]);
	return buf;
}

/* --- JSON -------------------------------------------------------------- */

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = 1;
	fputc('{', f);
	j->depth = 1;
	j->first[1] = 1;
}

void json_end(struct json *j)
{
	fputs("\n}\n", j->f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_key(j, key);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = 1;
}

static void json_close(struct json *j, char c)
{
	int empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
}

void json_obj(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_arr(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_close_obj(struct json *j)
{
	json_close(j, '}');
}

void json_close_arr(struct json *j)
{
	json_close(j, ']');
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_key(j, key);
	if (val)
		json_string(j->f, val);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

const char *const bpk_name[DBTP_BPK_N] = {"conditional", "indirect", "return"};

void json_branches(struct json *j, const uint64_t *n, const uint64_t *miss)
{
	char key[40];

	json_obj(j, "branches");
	for (int k = 0; k < DBTP_BPK_N; k++)
		json_u64(j, bpk_name[k], n[k]);
	for (int k = 0; k < DBTP_BPK_N; k++) {
		snprintf(key, sizeof(key), "%s_mispredicted", bpk_name[k]);
		json_u64(j, key, miss[k]);
	}
	json_close_obj(j);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_hex(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "\"0x%llx\"", (unsigned long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	fprintf(j->f, "%.6g", v);
}

void json_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

int predictor(const char *name)
{
	if (!name || !strcmp(name, "gshare"))
		return DBTP_BPRED_GSHARE;
	return strcmp(name, "tage") ? -1 : DBTP_BPRED_TAGE;
}

const char *predictor_name(int kind)
{
	return kind == DBTP_BPRED_TAGE ? "tage" : "gshare";
}

int model_option(const char *cmd, int c, const char *arg, char **argv,
		 struct dbtp_cycles_opts *o)
{
	unsigned a, b;
	int used = 0;

	switch (c) {
	case MO_CACHE:
		o->cache = 1;
		return 1;
	case MO_CACHE_PENALTY:
		if (sscanf(arg, "%u,%u%n", &a, &b, &used) != 2 || arg[used] ||
		    a > 10000 || b > 10000) {
			usage_error(cmd,
				    "--cache-penalty wants L2,MEM cycles, not "
				    "'%s'",
				    arg);
			return -1;
		}
		o->cache = 1;
		o->l2_penalty = a;
		o->mem_penalty = b;
		return 1;
	case MO_BPRED:
		if (!arg && argv[optind] && predictor(argv[optind]) > 0)
			arg = argv[optind++];
		if ((o->bpred = predictor(arg)) < 0) {
			usage_error(cmd,
				    "--branch-predictor wants gshare or tage, "
				    "not '%s'",
				    arg);
			return -1;
		}
		return 1;
	case MO_MEMREN:
		o->memren = 1;
		return 1;
	case MO_FRONTEND:
		o->front_end = 1;
		return 1;
	case MO_FULL:
		o->cache = o->memren = o->front_end = 1;
		if (!o->bpred) /* (a predictor named before stays) */
			o->bpred = DBTP_BPRED_GSHARE;
		return 1;
	case MO_MISPREDICT:
		if (sscanf(arg, "%u%n", &a, &used) != 1 || arg[used] ||
		    arg[0] == '-' || a < 1 || a > 10000) {
			usage_error(cmd,
				    "--mispredict-penalty wants cycles "
				    "(1-10000), not '%s'",
				    arg);
			return -1;
		}
		if (!o->bpred)
			o->bpred = DBTP_BPRED_GSHARE;
		o->mispredict_penalty = a;
		return 1;
	}
	return 0;
}

void model_defaults(struct dbtp_cycles_opts *o)
{
	if (o->cache && !o->l2_penalty && !o->mem_penalty) {
		o->l2_penalty = DBTP_CYCLES_L2_PENALTY;
		o->mem_penalty = DBTP_CYCLES_MEM_PENALTY;
	}
}

int model_warm(dbtp_timing *tm, const char *path)
{
	dbtp_trace *t = NULL;
	struct dbtp_event ev;
	dbtp_err err = {0};
	struct stat st;
	int r;

	if (!path || stat(path, &st) || !S_ISREG(st.st_mode) ||
	    dbtp_trace_open(&t, path, &err))
		return 0; /* not a file: the analysis times forms as it goes */
	dbtp_trace_skip_events(t);
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0)
		;
	/* a read error is the analysis's to report, at its place */
	r = dbtp_cycles_warm(tm, t, &err);
	dbtp_trace_close(t);
	if (r)
		error("%s", err.msg);
	return r;
}

void model_flush(dbtp_timing *tm)
{
	dbtp_err err = {0};

	if (dbtp_timing_flush(tm, &err))
		fprintf(stderr,
			"dbtprof: warning: timing table not cached: %s\n",
			err.msg);
}

uint64_t trace_kv_u64(const dbtp_trace *t, const char *key)
{
	const char *v = dbtp_trace_get(t, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

void trace_untraced(const dbtp_trace *t, char *buf, size_t n)
{
	const char *forks = dbtp_trace_get(t, "forks");
	const char *exec = dbtp_trace_get(t, "exec");
	size_t k = strlen(buf);

	if (exec && *exec && k < n)
		k += (size_t)snprintf(buf + k, n - k,
				      "; the guest called execve: %s ran "
				      "natively from there, not recorded",
				      exec);
	if (forks && k < n)
		snprintf(buf + k, n - k,
			 "; the guest started %s process%s (fork, vfork or "
			 "clone), not recorded",
			 forks, strcmp(forks, "1") ? "es" : "");
}

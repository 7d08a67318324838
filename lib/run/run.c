/* SPDX-License-Identifier: MIT */
/*
 * run.c - start a guest under QEMU user mode with the plugin writing into a
 * pipe, in a reproducible setting: fixed minimal environment, fixed argv[0],
 * fixed CPU model, QEMU's deterministic random seed, host ASLR off.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbtp/elf.h"
#include "dbtp/run.h"

extern char **environ;

/* The environment a guest gets unless --keep-env: enough for programs that
 * look up helpers in PATH, nothing that varies between machines or users. */
static const char *const fixed_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "LC_ALL=C",
};

/* Where the plugin's stream lands in QEMU: high, away from the guest's own. */
#define PLUGIN_FD 1023

/* @name (no slash) searched in the directories of the PATH-style list @dirs:
 * its absolute path, symbolic links resolved, if @real, else the
 * directory's entry as found; NULL if none. */
static char *find_in(const char *dirs, const char *name, int real)
{
	char buf[PATH_MAX];

	while (*dirs) {
		size_t n = strcspn(dirs, ":");
		struct stat st;

		if (n && n + strlen(name) + 2 <= sizeof(buf)) {
			memcpy(buf, dirs, n);
			buf[n] = '/';
			strcpy(buf + n + 1, name);
			if (!stat(buf, &st) && S_ISREG(st.st_mode) &&
			    !access(buf, X_OK))
				return real ? realpath(buf, NULL) : strdup(buf);
		}
		dirs += n;
		if (*dirs == ':')
			dirs++;
	}
	return NULL;
}

char *dbtp_find_in_path(const char *name)
{
	const char *path = getenv("PATH");

	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) ? NULL : realpath(name, NULL);
	return find_in(path ? path : fixed_env[0] + 5, name, 1);
}

char *dbtp_which(const char *name)
{
	const char *path = getenv("PATH");

	if (!*name || strchr(name, '/'))
		return NULL;
	return find_in(path ? path : fixed_env[0] + 5, name, 0);
}

int dbtp_shebang_parse(const char *buf, size_t n, char interp[DBTP_SHEBANG_MAX],
		       char arg[DBTP_SHEBANG_MAX])
{
	char line[DBTP_SHEBANG_MAX + 1], *p, *e;
	size_t k;

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	n = n < DBTP_SHEBANG_MAX ? n : DBTP_SHEBANG_MAX;
	memcpy(line, buf, n);
	line[n] = '\0';
	e = memchr(line, '\n', n);
	if (!e && n == DBTP_SHEBANG_MAX)
		return -2;
	if (e)
		*e = '\0';
	p = line + 2 + strspn(line + 2, " \t");
	k = strcspn(p, " \t");
	if (!k)
		return -1;
	memcpy(interp, p, k);
	interp[k] = '\0';
	p += k;
	p += strspn(p, " \t");
	for (e = p + strlen(p); e > p && (e[-1] == ' ' || e[-1] == '\t');)
		*--e = '\0';
	strcpy(arg, p);
	return 1;
}

/* Linux follows this many interpreters (a script's may be a script). */
#define SHEBANG_DEPTH 4

/* dbtp_shebang_parse() of @path's first bytes, errors in @err. */
static int shebang(const char *path, char *interp, char *arg, dbtp_err *err)
{
	char buf[DBTP_SHEBANG_MAX];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), k;

	if (fd < 0)
		return dbtp_err_set(err, errno, "%s: %s", path,
				    strerror(errno));
	n = read(fd, buf, sizeof(buf));
	close(fd);
	k = dbtp_shebang_parse(buf, n > 0 ? (size_t)n : 0, interp, arg);
	if (k == -2)
		return dbtp_err_set(err, ENOEXEC,
				    "%s: its #! line is longer than %d bytes",
				    path, DBTP_SHEBANG_MAX - 1);
	if (k < 0)
		return dbtp_err_set(
		    err, ENOEXEC, "%s: its #! line names no interpreter", path);
	return k;
}

struct strv {
	char **v;
	size_t n;
	int nomem;
};

static void strv_add(struct strv *s, const char *str)
{
	char **v;

	if (s->nomem)
		return;
	v = realloc(s->v, (s->n + 2) * sizeof(*v));
	if (!v || !(v[s->n] = strdup(str))) {
		s->nomem = 1;
		if (v)
			s->v = v;
		return;
	}
	s->v = v;
	s->n++;
	s->v[s->n] = NULL;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* @s with @a (if not empty) and @b put before its words. */
static void strv_prepend(struct strv *s, const char *a, const char *b)
{
	struct strv t = {0};

	if (*a)
		strv_add(&t, a);
	strv_add(&t, b);
	for (size_t i = 0; i < s->n; i++)
		strv_add(&t, s->v[i]);
	t.nomem |= s->nomem;
	strv_free(s->v);
	*s = t;
}

int dbtp_resolve_program(const char *name, char *const envp[], char **program,
			 char ***words, char argv0[DBTP_SHEBANG_MAX],
			 dbtp_err *err)
{
	char interp[DBTP_SHEBANG_MAX], arg[DBTP_SHEBANG_MAX], script[PATH_MAX];
	char as[PATH_MAX]; /* the script's path as its caller named it */
	const char *dirs = fixed_env[0] + 5;
	struct strv w = {0};

	for (size_t i = 0; envp[i]; i++)
		if (!strncmp(envp[i], "PATH=", 5))
			dirs = envp[i] + 5;

	*words = NULL;
	*argv0 = '\0';
	*program = dbtp_find_in_path(name);
	if (!*program)
		return dbtp_err_set(err, ENOENT, "%s: program not found%s",
				    name, strchr(name, '/') ? "" : " in PATH");
	snprintf(script, sizeof(script), "%s", *program);
	snprintf(as, sizeof(as), "%s", strchr(name, '/') ? name : *program);
	for (int depth = 0;; depth++) {
		const char *base;
		char *next;
		int k = shebang(*program, interp, arg, err), via_env;

		if (k < 0)
			goto fail;
		if (!k)
			break;
		if (depth == SHEBANG_DEPTH) {
			dbtp_err_set(err, ELOOP,
				     "%s: more than %d levels of #! "
				     "interpreters",
				     script, SHEBANG_DEPTH);
			goto fail;
		}
		base = strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp;
		via_env = !strcmp(base, "env") && *arg && *arg != '-' &&
			  !strpbrk(arg, "= \t");
		if (via_env) {
			next = strchr(arg, '/') ? realpath(arg, NULL)
						: find_in(dirs, arg, 1);
			if (!next) {
				dbtp_err_set(err, ENOENT,
					     "%s: #!%s %s: %s not found in the "
					     "guest's PATH (%s)",
					     script, interp, arg, arg, dirs);
				goto fail;
			}
			strv_prepend(&w, "", as);
			base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
		} else {
			next = access(interp, X_OK) ? NULL
						    : realpath(interp, NULL);
			if (!next) {
				dbtp_err_set(
				    err, ENOENT,
				    "%s: its interpreter %s is missing", script,
				    interp);
				goto fail;
			}
			strv_prepend(&w, arg, as);
		}
		/* a script in turn is named as the interp names it, or as env
		 * found it */
		snprintf(as, sizeof(as), "%s", via_env ? next : interp);
		free(*program);
		*program = next;
		memmove(argv0, base, strlen(base) + 1);
		if (w.nomem) {
			dbtp_err_set(err, ENOMEM, "out of memory");
			goto fail;
		}
	}
	*words = w.v;
	return 0;
fail:
	strv_free(w.v);
	free(*program);
	*program = NULL;
	return -1;
}

char **dbtp_run_env(int keep_env, const char *const *extra, size_t n)
{
	struct strv env = {0};

	if (keep_env)
		for (char **e = environ; *e; e++)
			strv_add(&env, *e);
	else
		for (size_t i = 0; i < sizeof(fixed_env) / sizeof(*fixed_env);
		     i++)
			strv_add(&env, fixed_env[i]);
	for (size_t i = 0; i < n; i++) {
		size_t klen = strcspn(extra[i], "=");
		size_t k = 0;

		while (k < env.n && strncmp(env.v[k], extra[i], klen + 1))
			k++;
		if (k == env.n) {
			strv_add(&env, extra[i]);
		} else { /* replace, keep the order */
			free(env.v[k]);
			if (!(env.v[k] = strdup(extra[i])))
				env.nomem = 1;
		}
	}
	if (!env.nomem && !env.v)
		env.v = calloc(1, sizeof(*env.v));
	if (env.nomem || !env.v) {
		strv_free(env.v);
		return NULL;
	}
	return env.v;
}

void dbtp_run_env_free(char **env)
{
	strv_free(env);
}

static void reverse(char **v)
{
	size_t n = 0;

	while (v[n])
		n++;
	for (size_t i = 0; i < n / 2; i++) {
		char *x = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = x;
	}
}

/* First line of `qemu --version`, or "unknown". */
static char *qemu_version_of(const char *qemu)
{
	int p[2];
	pid_t pid;
	char buf[256];
	size_t len = 0;
	ssize_t r;

	if (pipe2(p, O_CLOEXEC))
		return strdup("unknown");
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		execl(qemu, qemu, "--version", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && len < sizeof(buf) - 1 &&
	       (r = read(p[0], buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		len += (size_t)r;
	}
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return strdup(len ? buf : "unknown");
}

static void digest(struct dbtp_run *r)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; r->envp[i]; i++) {
		for (const char *p = r->envp[i]; *p; p++)
			h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
		h = (h ^ 0xff) * 0x100000001b3ull;
	}
	snprintf(r->env_digest, sizeof(r->env_digest), "%016" PRIx64, h);
}

int dbtp_run_start(struct dbtp_run *r, const struct dbtp_run_opts *o,
		   char *const argv[], dbtp_err *err)
{
	struct strv qa = {0}, env = {0};
	const char *sysroot = o->sysroot;
	char **words = NULL, interp[PATH_MAX], arg[PATH_MAX + 256],
	     argv0[DBTP_SHEBANG_MAX], *base;
	int p[2] = {-1, -1}, st[2] = {-1, -1};
	ssize_t n;
	int child_errno = 0;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->pid = -1;
	if (!argv[0])
		return dbtp_err_set(err, EINVAL, "no program given");
	if (!o->plugin || access(o->plugin, R_OK))
		return dbtp_err_set(err, ENOENT,
				    "plugin %s not found (build it with make)",
				    o->plugin ? o->plugin : "(none)");
	/* The guest's environment first: an `env` #! line searches its PATH. */
	env.v = dbtp_run_env(o->keep_env, o->env, o->nenv);
	if (!env.v) {
		dbtp_err_set(err, ENOMEM, "out of memory");
		goto fail_v;
	}
	if (dbtp_resolve_program(argv[0], env.v, &r->program, &words, argv0,
				 err) ||
	    dbtp_elf_probe(r->program, &r->arch, &r->dynamic, interp,
			   sizeof(interp), err))
		goto fail_v;
	if (o->qemu) {
		r->qemu = dbtp_find_in_path(o->qemu);
		if (!r->qemu) {
			dbtp_err_set(err, ENOENT, "%s: QEMU not found",
				     o->qemu);
			goto fail_v;
		}
	} else {
		const char *name = r->arch == DBTP_ARCH_X86_64 ? "qemu-x86_64"
							       : "qemu-aarch64";

		r->qemu = dbtp_find_in_path(name);
		if (!r->qemu) {
			dbtp_err_set(err, ENOENT,
				     "%s not found in PATH (Debian package "
				     "qemu-user; `make deps` installs it)",
				     name);
			goto fail_v;
		}
	}
	if (r->arch == DBTP_ARCH_AARCH64 && r->dynamic) {
		if (!sysroot)
			sysroot = "/usr/aarch64-linux-gnu";
		snprintf(arg, sizeof(arg), "%s%s", sysroot, interp);
		if (access(arg, R_OK)) {
			dbtp_err_set(err, ENOENT,
				     "%s is a dynamically linked AArch64 "
				     "program and its loader %s is missing "
				     "(Debian package libc6-arm64-cross, or "
				     "give --sysroot)",
				     r->program, arg);
			goto fail_v;
		}
	}
	r->cpu = strdup(o->cpu			      ? o->cpu
			: r->arch == DBTP_ARCH_X86_64 ? "qemu64"
						      : "max");
	r->qemu_version = qemu_version_of(r->qemu);
	base = strrchr(r->program, '/');

	/* QEMU's command line. */
	strv_add(&qa, r->qemu);
	strv_add(&qa, "-cpu");
	strv_add(&qa, r->cpu);
	strv_add(&qa, "-seed");
	snprintf(arg, sizeof(arg), "%" PRIu64, o->seed ? o->seed : 1);
	strv_add(&qa, arg);
	if (r->arch == DBTP_ARCH_AARCH64 && r->dynamic) {
		strv_add(&qa, "-L");
		strv_add(&qa, sysroot);
	}
	strv_add(&qa, "-0");
	strv_add(&qa, o->argv0 ? o->argv0 : *argv0 ? argv0 : base + 1);
	n = snprintf(arg, sizeof(arg), "%s,fd=%d,mode=%s", o->plugin, PLUGIN_FD,
		     o->mode ? o->mode : "blocks");
	if (o->chunk)
		n += snprintf(arg + n, sizeof(arg) - (size_t)n, ",chunk=%u",
			      o->chunk);
	if (o->zstd >= 0)
		n += snprintf(arg + n, sizeof(arg) - (size_t)n, ",zstd=%d",
			      o->zstd);
	if (o->flush_ms >= 0)
		n += snprintf(arg + n, sizeof(arg) - (size_t)n, ",flush=%d",
			      o->flush_ms);
	if (o->plugin_args && *o->plugin_args)
		snprintf(arg + n, sizeof(arg) - (size_t)n, ",%s",
			 o->plugin_args);
	strv_add(&qa, "-plugin");
	strv_add(&qa, arg);
	strv_add(&qa, r->program);
	for (size_t i = 0; words && words[i]; i++)
		strv_add(&qa, words[i]);
	for (size_t i = 1; argv[i]; i++)
		strv_add(&qa, argv[i]);
	strv_free(words);
	words = NULL;
	if (qa.nomem || !r->cpu || !r->qemu_version) {
		dbtp_err_set(err, ENOMEM, "out of memory");
		goto fail_v;
	}
	r->qemu_argv = qa.v;
	r->envp = env.v;
	digest(r);

	if (pipe2(p, O_CLOEXEC) || pipe2(st, O_CLOEXEC)) {
		dbtp_err_set(err, errno, "pipe: %s", strerror(errno));
		goto fail_p;
	}
	r->pid = fork();
	if (r->pid < 0) {
		dbtp_err_set(err, errno, "fork: %s", strerror(errno));
		goto fail_p;
	}
	if (r->pid == 0) {
		/* Child: the plugin's end of the pipe at PLUGIN_FD, then QEMU.
		 */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (dup2(p[1], PLUGIN_FD) < 0)
			goto child_fail;
		if (!o->aslr)
			personality(ADDR_NO_RANDOMIZE);
		/* QEMU hands its environment to the guest in reverse order
		 * (linux-user builds a list by prepending): reverse it here,
		 * in the child's copy, so the guest sees r->envp's order, as a
		 * native run of the program would. */
		reverse(r->envp);
		execve(r->qemu, r->qemu_argv, r->envp);
	child_fail:
		child_errno = errno;
		if (write(st[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	close(st[1]);
	p[1] = st[1] = -1;
	do {
		n = read(st[0], &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(st[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		waitpid(r->pid, NULL, 0);
		r->pid = -1;
		dbtp_err_set(err, child_errno, "cannot run %s: %s", r->qemu,
			     strerror(child_errno));
		close(p[0]);
		return -1;
	}
	r->fd = p[0];
	return 0;

fail_p:
	for (int i = 0; i < 2; i++) {
		if (p[i] >= 0)
			close(p[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	dbtp_run_free(r);
	return -1;
fail_v:
	strv_free(qa.v);
	strv_free(env.v);
	strv_free(words);
	free(r->program);
	free(r->qemu);
	free(r->cpu);
	free(r->qemu_version);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->pid = -1;
	return -1;
}

int dbtp_run_wait(struct dbtp_run *r, int *status, dbtp_err *err)
{
	pid_t w;

	do {
		w = waitpid(r->pid, status, 0);
	} while (w < 0 && errno == EINTR);
	if (w < 0)
		return dbtp_err_set(err, errno, "waitpid: %s", strerror(errno));
	r->pid = -1;
	return 0;
}

void dbtp_run_free(struct dbtp_run *r)
{
	if (r->fd >= 0)
		close(r->fd);
	strv_free(r->qemu_argv);
	strv_free(r->envp);
	free(r->program);
	free(r->qemu);
	free(r->cpu);
	free(r->qemu_version);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->pid = -1;
}

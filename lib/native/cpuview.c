/* SPDX-License-Identifier: MIT */
/*
 * cpuview.c - the CPU a program sees (CPUID, XCR0, auxiliary vector types),
 * of this process or of a QEMU CPU model through a probe run under QEMU.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbtp/cpuview.h"
#include "dbtp/run.h"
#include "util/buf.h"

#define AT_HWCAP_ 16
#define AT_HWCAP2_ 26

static uint32_t *slot(struct dbtp_cpu_view *v, uint32_t leaf, uint32_t sub)
{
	uint32_t half = leaf >> 31, l = leaf & 0x7fffffffu;

	if ((leaf & 0x40000000u) || l >= DBTP_CPUID_LEAVES ||
	    sub >= DBTP_CPUID_SUBLEAVES)
		return NULL;
	return v->cpuid[half][l][sub];
}

void dbtp_cpu_view_cpuid(const struct dbtp_cpu_view *v, uint32_t leaf,
			 uint32_t sub, uint32_t r[4])
{
	const uint32_t *s = slot((struct dbtp_cpu_view *)v, leaf, sub);

	/* A subleaf beyond the table: a leaf that gives the same for every
	 * subleaf covered ignores ECX (most do), others give zeros. */
	if (!s && sub >= DBTP_CPUID_SUBLEAVES &&
	    (s = slot((struct dbtp_cpu_view *)v, leaf, 0)))
		for (uint32_t i = 1; s && i < DBTP_CPUID_SUBLEAVES; i++)
			if (memcmp(s, s + 4 * i, 4 * sizeof(*s)))
				s = NULL;
	if (s)
		memcpy(r, s, 4 * sizeof(*r));
	else
		memset(r, 0, 4 * sizeof(*r));
}

#ifdef __x86_64__
static void do_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__asm__ volatile("cpuid"
			 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(sub));
}

static int read_auxv(struct dbtp_cpu_view *v, dbtp_err *err)
{
	uint64_t e[2];
	int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return dbtp_err_set(err, errno, "/proc/self/auxv: %s",
				    strerror(errno));
	while (read(fd, e, sizeof(e)) == (ssize_t)sizeof(e) && e[0] &&
	       v->nauxv < DBTP_AUXV_MAX) {
		v->auxv_type[v->nauxv++] = e[0];
		if (e[0] == AT_HWCAP_)
			v->hwcap = e[1];
		if (e[0] == AT_HWCAP2_)
			v->hwcap2 = e[1];
	}
	close(fd);
	return 0;
}

int dbtp_cpu_view_self(struct dbtp_cpu_view *v, dbtp_err *err)
{
	uint32_t r[4];

	memset(v, 0, sizeof(*v));
	for (uint32_t half = 0; half < 2; half++)
		for (uint32_t l = 0; l < DBTP_CPUID_LEAVES; l++)
			for (uint32_t s = 0; s < DBTP_CPUID_SUBLEAVES; s++)
				do_cpuid((half << 31) | l, s,
					 v->cpuid[half][l][s]);
	do_cpuid(1, 0, r);
	if (r[2] & (1u << 27)) { /* OSXSAVE */
		uint32_t lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		v->xcr0 = (uint64_t)hi << 32 | lo;
		v->has_xcr0 = 1;
	}
	return read_auxv(v, err);
}
#else
int dbtp_cpu_view_self(struct dbtp_cpu_view *v, dbtp_err *err)
{
	memset(v, 0, sizeof(*v));
	return dbtp_err_set(err, ENOSYS, "the CPU view needs an x86-64 build");
}
#endif

int dbtp_cpu_view_write(const struct dbtp_cpu_view *v, FILE *f, dbtp_err *err)
{
	for (uint32_t half = 0; half < 2; half++)
		for (uint32_t l = 0; l < DBTP_CPUID_LEAVES; l++)
			for (uint32_t s = 0; s < DBTP_CPUID_SUBLEAVES; s++) {
				const uint32_t *r = v->cpuid[half][l][s];

				if (r[0] | r[1] | r[2] | r[3])
					fprintf(f,
						"cpuid %" PRIx32 " %" PRIx32
						" %08" PRIx32 " %08" PRIx32
						" %08" PRIx32 " %08" PRIx32
						"\n",
						(half << 31) | l, s, r[0], r[1],
						r[2], r[3]);
			}
	if (v->has_xcr0)
		fprintf(f, "xcr0 %" PRIx64 "\n", v->xcr0);
	for (size_t i = 0; i < v->nauxv; i++)
		fprintf(f, "auxv %" PRIu64 "\n", v->auxv_type[i]);
	fprintf(f, "hwcap %" PRIx64 "\nhwcap2 %" PRIx64 "\n", v->hwcap,
		v->hwcap2);
	if (fflush(f) || ferror(f))
		return dbtp_err_set(err, errno, "writing the CPU view: %s",
				    strerror(errno));
	return 0;
}

int dbtp_cpu_view_parse(struct dbtp_cpu_view *v, const char *text,
			dbtp_err *err)
{
	int line = 0, seen = 0;

	memset(v, 0, sizeof(*v));
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		uint32_t leaf, sub, r[4];
		uint64_t x;
		int ok = 0;

		line++;
		if (sscanf(p,
			   "cpuid %" SCNx32 " %" SCNx32 " %" SCNx32 " %" SCNx32
			   " %" SCNx32 " %" SCNx32,
			   &leaf, &sub, &r[0], &r[1], &r[2], &r[3]) == 6) {
			uint32_t *s = slot(v, leaf, sub);

			if (s) {
				memcpy(s, r, sizeof(r));
				ok = 1;
			}
		} else if (sscanf(p, "xcr0 %" SCNx64, &x) == 1) {
			v->xcr0 = x;
			v->has_xcr0 = ok = 1;
		} else if (sscanf(p, "auxv %" SCNu64, &x) == 1 &&
			   v->nauxv < DBTP_AUXV_MAX) {
			v->auxv_type[v->nauxv++] = x;
			ok = 1;
		} else if (sscanf(p, "hwcap2 %" SCNx64, &x) == 1) {
			v->hwcap2 = x;
			ok = 1;
		} else if (sscanf(p, "hwcap %" SCNx64, &x) == 1) {
			v->hwcap = x;
			ok = 1;
		}
		if (!ok)
			return dbtp_err_set(err, EINVAL,
					    "CPU view: line %d: '%.*s'", line,
					    (int)(nl ? nl - p : 40), p);
		seen = 1;
		p = nl ? nl + 1 : NULL;
	}
	if (!seen || !v->nauxv)
		return dbtp_err_set(err, EINVAL, "CPU view: empty");
	return 0;
}

int dbtp_cpu_view_qemu(struct dbtp_cpu_view *v, const char *qemu,
		       const char *cpu, const char *probe,
		       const char *const *probe_args, dbtp_err *err)
{
	struct dbtp_buf out = {0};
	char *q = dbtp_find_in_path(qemu ? qemu : "qemu-x86_64");
	const char *av[16];
	size_t n = 0;
	int p[2], st = 0, rc = -1;
	pid_t pid;
	ssize_t got;

	memset(v, 0, sizeof(*v));
	if (!q)
		return dbtp_err_set(err, ENOENT, "%s not found%s",
				    qemu ? qemu : "qemu-x86_64",
				    qemu ? "" : " in PATH");
	av[n++] = q;
	av[n++] = "-cpu";
	av[n++] = cpu ? cpu : "max";
	av[n++] = probe;
	for (size_t i = 0; probe_args && probe_args[i] && n < 15; i++)
		av[n++] = probe_args[i];
	av[n] = NULL;
	if (pipe2(p, O_CLOEXEC)) {
		dbtp_err_set(err, errno, "pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		dbtp_err_set(err, errno, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		goto out;
	}
	if (pid == 0) {
		static char *const env[] = {"LC_ALL=C", NULL};
		int nul = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 2);
		}
		execve(q, (char *const *)av, env);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		if (dbtp_buf_reserve(&out, out.len + 4097)) {
			dbtp_err_set(err, ENOMEM, "out of memory");
			break;
		}
		got = read(p[0], out.p + out.len, 4096);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		out.len += (size_t)got;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!out.p)
		goto out;
	out.p[out.len] = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		dbtp_err_set(
		    err, EIO, "%s -cpu %s %s failed (status %d): no CPU view",
		    q, cpu ? cpu : "max", probe,
		    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		goto out;
	}
	rc = dbtp_cpu_view_parse(v, (const char *)out.p, err);
out:
	dbtp_buf_free(&out);
	free(q);
	return rc;
}

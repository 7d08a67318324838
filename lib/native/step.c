/* SPDX-License-Identifier: MIT */
/*
 * step.c - count a program's instructions natively, under ptrace
 * single-stepping (x86-64 hosts), and basic block vectors from the dynamic
 * blocks it runs.  The counting rules are in dbtp/native.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dbtp/bbv.h"
#include "dbtp/bbvfile.h"
#include "dbtp/cpuview.h"
#include "dbtp/disasm.h"
#include "dbtp/elf.h"
#include "dbtp/native.h"
#include "dbtp/run.h"
#include "util/buf.h"

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "out of memory");
}

static size_t hash64(uint64_t x, size_t mask)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & mask;
}

/* Grow *@p (elements of @size bytes, room for *@cap) to hold @need. */
static int grow(void *p, size_t *cap, size_t need, size_t size)
{
	void **pp = p;
	size_t c = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*pp, c * size);
	if (!n)
		return -1;
	*pp = n;
	*cap = c;
	return 0;
}

void dbtp_native_result_free(struct dbtp_native_result *res)
{
	free(res->program);
	free(res->argv0);
	free(res->threads);
	free(res->maps);
	memset(res, 0, sizeof(*res));
}

#ifndef __x86_64__

int dbtp_native_run(struct dbtp_native_result *res,
		    const struct dbtp_native_opts *o, char *const argv[],
		    dbtp_err *err)
{
	(void)o;
	(void)argv;
	memset(res, 0, sizeof(*res));
	return dbtp_err_set(err, ENOSYS,
			    "native counting needs an x86-64 host");
}

#else

#define NO_PARENT UINT32_MAX

struct nthread {
	pid_t tid;
	int fresh; /* its first (SIGSTOP) stop is still to come */
	int alive;
	int exec_pending; /* the next step trap completes an execve */
	uint64_t pc;	  /* RIP at its last stop (when want_pc) */
	int pc_fresh;	  /* @pc was read at this stop */
	uint64_t rep_at;  /* rep string instruction under way (rep_qemu) */
	uint64_t rep_n;	  /* its count register before its first iteration */
	uint8_t rep_kind;
	uint64_t mmap_want, mmap_len; /* an mmap placed (qemu_mmap) */
	/* the dynamic block being built */
	int bopen;
	uint64_t bentry, bn, expect;
};

/* Instruction lengths by address (key address + 1; 0 marks a free slot). */
struct lencache {
	uint64_t *k;
	uint8_t *v;
	size_t n, used;
};

struct run {
	const struct dbtp_native_opts *o;
	struct dbtp_native_result *res;
	struct nthread *th;
	size_t thcap, rescap;
	uint32_t last; /* index of the last thread looked up */
	int want_pc, want_len;
	dbtp_disasm *dis;
	struct lencache lc;
	struct lencache emu; /* by address: 0 other, 1 cpuid, 2 xgetbv,
			      * 3 syscall, REP_STRING | REP_* a rep string
			      * instruction */
	uint64_t rep_pc;
	int rep_known, rep_is;
	uint64_t mmap_next; /* qemu_mmap: where the next mapping goes */
	pid_t pid;
	dbtp_err *err;
};

static struct nthread *find_thread(struct run *r, pid_t tid)
{
	if (r->last < r->res->nthreads && r->th[r->last].tid == tid)
		return &r->th[r->last];
	for (uint32_t i = 0; i < r->res->nthreads; i++)
		if (r->th[i].tid == tid) {
			r->last = i;
			return &r->th[i];
		}
	return NULL;
}

static struct nthread *add_thread(struct run *r, pid_t tid, uint32_t parent)
{
	struct dbtp_native_result *res = r->res;
	uint32_t n = res->nthreads;

	if (grow(&r->th, &r->thcap, n + 1, sizeof(*r->th)) ||
	    grow(&res->threads, &r->rescap, n + 1, sizeof(*res->threads))) {
		nomem(r->err);
		return NULL;
	}
	memset(&r->th[n], 0, sizeof(r->th[n]));
	memset(&res->threads[n], 0, sizeof(res->threads[n]));
	r->th[n].tid = tid;
	r->th[n].alive = 1;
	res->threads[n].tid = tid;
	res->threads[n].parent = parent;
	res->nthreads = n + 1;
	r->last = n;
	return &r->th[n];
}

static uint32_t num_of(struct run *r, struct nthread *t)
{
	return (uint32_t)(t - r->th);
}

static int get_pc(struct run *r, pid_t tid, uint64_t *pc)
{
	long v;

	errno = 0;
	v = ptrace(PTRACE_PEEKUSER, tid,
		   (void *)offsetof(struct user_regs_struct, rip), NULL);
	if (v == -1 && errno)
		return errno == ESRCH
			   ? 1
			   : dbtp_err_set(r->err, errno, "ptrace(PEEKUSER): %s",
					  strerror(errno));
	*pc = (uint64_t)v;
	return 0;
}

/* Up to 16 code bytes at @pc, read as aligned words (so that one word never
 * straddles into an unmapped page).  Return: bytes read. */
static size_t peek_code(pid_t tid, uint64_t pc, uint8_t *buf)
{
	uint8_t w[24];
	uint64_t base = pc & ~7ull;
	size_t got = 0, off = (size_t)(pc - base);

	for (int i = 0; i < 3; i++) {
		long v;

		errno = 0;
		v = ptrace(PTRACE_PEEKTEXT, tid, (void *)(base + 8 * i), NULL);
		if (v == -1 && errno)
			break;
		memcpy(w + 8 * i, &v, 8);
		got += 8;
	}
	if (got <= off)
		return 0;
	got -= off;
	if (got > 16)
		got = 16;
	memcpy(buf, w + off, got);
	return got;
}

static void lc_clear(struct lencache *c)
{
	if (c->k)
		memset(c->k, 0, c->n * sizeof(*c->k));
	c->used = 0;
}

static int lc_put(struct lencache *c, uint64_t pc, uint8_t len)
{
	size_t h;

	if ((c->used + 1) * 2 > c->n) {
		struct lencache t = {0};

		t.n = c->n ? c->n * 2 : 4096;
		t.k = calloc(t.n, sizeof(*t.k));
		t.v = malloc(t.n);
		if (!t.k || !t.v) {
			free(t.k);
			free(t.v);
			return -1;
		}
		for (size_t i = 0; i < c->n; i++)
			if (c->k[i])
				lc_put(&t, c->k[i] - 1, c->v[i]);
		free(c->k);
		free(c->v);
		*c = t;
	}
	for (h = hash64(pc, c->n - 1); c->k[h] && c->k[h] != pc + 1;
	     h = (h + 1) & (c->n - 1))
		;
	if (!c->k[h])
		c->used++;
	c->k[h] = pc + 1;
	c->v[h] = len;
	return 0;
}

static int lc_get(const struct lencache *c, uint64_t pc, uint8_t *len)
{
	if (!c->n)
		return 0;
	for (size_t h = hash64(pc, c->n - 1); c->k[h]; h = (h + 1) & (c->n - 1))
		if (c->k[h] == pc + 1) {
			*len = c->v[h];
			return 1;
		}
	return 0;
}

/* Length of the instruction at @pc (cached; 0 if it cannot be decoded). */
static int insn_len(struct run *r, pid_t tid, uint64_t pc, uint8_t *len)
{
	uint8_t code[16];
	size_t n;

	if (lc_get(&r->lc, pc, len))
		return 0;
	n = peek_code(tid, pc, code);
	*len = n ? (uint8_t)dbtp_disasm_one(r->dis, code, n, pc, NULL, 0) : 0;
	if (lc_put(&r->lc, pc, *len))
		return nomem(r->err);
	return 0;
}

static int is_rep(struct run *r, pid_t tid, uint64_t pc)
{
	uint8_t code[16];
	size_t n;

	if (r->rep_known && r->rep_pc == pc)
		return r->rep_is;
	n = peek_code(tid, pc, code);
	r->rep_pc = pc;
	r->rep_known = 1;
	r->rep_is = dbtp_x86_is_rep_string(code, n);
	return r->rep_is;
}

static int flush_block(struct run *r, struct nthread *t)
{
	if (!t->bopen)
		return 0;
	t->bopen = 0;
	if (r->o->on_block(r->o->ctx, num_of(r, t), t->bentry, t->bn, r->err))
		return -1;
	return 0;
}

/*
 * Count one instruction of @t at @pc that continued at @next.  @len is its
 * length if known (else 0: decoded when wanted); @in_place: a rep iteration
 * that stays on the same instruction (no transfer).
 */
static int count(struct run *r, struct nthread *t, uint64_t pc, uint64_t next,
		 uint8_t len, int in_place)
{
	const struct dbtp_native_opts *o = r->o;
	struct dbtp_native_insn in;

	r->res->insns++;
	r->res->threads[num_of(r, t)].insns++;
	if (!o->on_insn && !o->on_block)
		return 0;
	in.pc = pc;
	in.next = next;
	in.thread = num_of(r, t);
	in.len = len;
	if (!len && r->want_len && insn_len(r, t->tid, pc, &in.len))
		return -1;
	if (in_place)
		in.flow = 0;
	else if (in.len)
		in.flow = next != pc + in.len;
	else
		in.flow = !(next > pc && next - pc <= 15);
	if (o->on_insn && o->on_insn(o->ctx, &in, r->err))
		return -1;
	if (!o->on_block)
		return 0;
	if (t->bopen && pc != t->expect && flush_block(r, t))
		return -1;
	if (!t->bopen) {
		t->bopen = 1;
		t->bentry = pc;
		t->bn = 0;
	}
	t->bn++;
	t->expect = next;
	if (in.flow)
		return flush_block(r, t);
	return 0;
}

enum {
	REP_STRING = 0x10,
	REP_COMPARE = 0x20, /* cmps, scas: the condition can end it */
	REP_NE = 0x40,	    /* repne (else repe/rep) */
	REP_ADDR32 = 0x80,  /* 0x67: the count is ECX */
};

/* REP_* flags of a rep string instruction in @p, 0 for anything else. */
static uint8_t rep_flags(const uint8_t *p, size_t n)
{
	uint8_t f = REP_STRING;
	size_t i = 0;

	if (!dbtp_x86_is_rep_string(p, n))
		return 0;
	for (; i < n && (p[i] & 0xf0) != 0x40 && p[i] != 0x0f; i++) {
		if (p[i] == 0xf2)
			f |= REP_NE;
		else if (p[i] == 0xf3)
			f &= (uint8_t)~REP_NE;
		else if (p[i] == 0x67)
			f |= REP_ADDR32;
		else if ((p[i] >= 0xa4 && p[i] <= 0xaf) ||
			 (p[i] >= 0x6c && p[i] <= 0x6f))
			break;
	}
	if (i < n && (p[i] & 0xf0) == 0x40)
		i++;
	if (i < n &&
	    (p[i] == 0xa6 || p[i] == 0xa7 || p[i] == 0xae || p[i] == 0xaf))
		f |= REP_COMPARE;
	return f;
}

/* CPUID, XGETBV, SYSCALL or a rep string instruction at @pc?  (cached by
 * address) */
static int emu_kind(struct run *r, pid_t tid, uint64_t pc, uint8_t *kind)
{
	uint8_t code[16];
	size_t n;

	if (lc_get(&r->emu, pc, kind))
		return 0;
	n = peek_code(tid, pc, code);
	*kind = 0;
	if (n >= 2 && code[0] == 0x0f && code[1] == 0xa2)
		*kind = 1;
	else if (n >= 3 && code[0] == 0x0f && code[1] == 0x01 &&
		 code[2] == 0xd0)
		*kind = 2;
	else if (n >= 2 && code[0] == 0x0f && code[1] == 0x05)
		*kind = 3;
	else
		*kind = rep_flags(code, n);
	if (lc_put(&r->emu, pc, *kind))
		return nomem(r->err);
	return 0;
}

/*
 * qemu_mmap: @t is at a syscall instruction.  A mapping the kernel is to
 * place (mmap without an address or MAP_FIXED) gets the next address above
 * the previous ones as a hint, so mappings lie upward in the order they
 * were asked for, above the dynamic loader, as QEMU 7.2 places them (the
 * loader's own allocator extends its region when the next mapping follows
 * it, and sorts the loaded objects by address).
 * Return: 0, 1 the thread is gone, -1 error.
 */
static int place_mmap(struct run *r, struct nthread *t)
{
	struct user_regs_struct regs;

	if (!r->o->qemu_mmap || !r->mmap_next)
		return 0;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs))
		return errno == ESRCH
			   ? 1
			   : dbtp_err_set(r->err, errno, "ptrace(GETREGS): %s",
					  strerror(errno));
	if (regs.rax != 9 || regs.rdi ||
	    (regs.r10 & (0x10 | 0x100000)) /* MAP_FIXED(_NOREPLACE) */ ||
	    !regs.rsi)
		return 0;
	regs.rdi = r->mmap_next;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs))
		return errno == ESRCH
			   ? 1
			   : dbtp_err_set(r->err, errno, "ptrace(SETREGS): %s",
					  strerror(errno));
	t->mmap_want = r->mmap_next;
	t->mmap_len = (regs.rsi + 4095) & ~4095ull;
	return 0;
}

/*
 * Answer the CPUID and XGETBV instructions @t is about to execute from the
 * CPU view, as long as it is at one.  Return: 0 go on stepping, 1 the
 * thread is gone, -1 error.
 */
static int emulate(struct run *r, struct nthread *t)
{
	const struct dbtp_cpu_view *v = r->o->cpu_view;

	for (;;) {
		struct user_regs_struct regs;
		uint64_t pc = t->pc;
		uint32_t q[4];
		uint8_t kind, len;
		int rc;

		if (!t->pc_fresh && (rc = get_pc(r, t->tid, &pc)))
			return rc;
		t->pc = pc;
		t->pc_fresh = 0;
		if (emu_kind(r, t->tid, pc, &kind))
			return -1;
		if (kind & REP_STRING) {
			long c;

			if (!r->o->rep_qemu || t->rep_at == pc)
				return 0;
			errno = 0;
			c = ptrace(
			    PTRACE_PEEKUSER, t->tid,
			    (void *)offsetof(struct user_regs_struct, rcx),
			    NULL);
			if (c == -1 && errno)
				return errno == ESRCH
					   ? 1
					   : dbtp_err_set(r->err, errno,
							  "ptrace(PEEKUSER): "
							  "%s",
							  strerror(errno));
			t->rep_at = pc;
			t->rep_kind = kind;
			t->rep_n =
			    kind & REP_ADDR32 ? (uint32_t)c : (uint64_t)c;
			return 0;
		}
		if (kind == 3)
			return place_mmap(r, t);
		if (!kind || !v)
			return 0;
		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs))
			return errno == ESRCH
				   ? 1
				   : dbtp_err_set(r->err, errno,
						  "ptrace(GETREGS): %s",
						  strerror(errno));
		if (kind == 1) {
			dbtp_cpu_view_cpuid(v, (uint32_t)regs.rax,
					    (uint32_t)regs.rcx, q);
			regs.rax = q[0];
			regs.rbx = q[1];
			regs.rcx = q[2];
			regs.rdx = q[3];
			len = 2;
		} else {
			if ((uint32_t)regs.rcx || !v->has_xcr0)
				return 0; /* XINUSE etc.: the host's */
			regs.rax = (uint32_t)v->xcr0;
			regs.rdx = v->xcr0 >> 32;
			len = 3;
		}
		regs.rip = pc + len;
		if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs))
			return errno == ESRCH
				   ? 1
				   : dbtp_err_set(r->err, errno,
						  "ptrace(SETREGS): %s",
						  strerror(errno));
		r->res->emulated++;
		if (count(r, t, pc, pc + len, len, 0))
			return -1;
		t->pc = pc + len;
		t->pc_fresh = 1;
	}
}

static int resume(struct run *r, struct nthread *t, int sig)
{
	if ((r->o->cpu_view || r->o->rep_qemu || r->o->qemu_mmap) && !sig &&
	    !t->exec_pending) {
		int rc = emulate(r, t);

		if (rc)
			return rc < 0 ? -1 : 0;
	}
	t->pc_fresh = 0;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) &&
	    errno != ESRCH)
		return dbtp_err_set(r->err, errno, "ptrace(SINGLESTEP): %s",
				    strerror(errno));
	if (sig)
		r->res->signals++;
	return 0;
}

/* A single-step trap: one instruction of @t completed. */
static int stepped(struct run *r, struct nthread *t, int deliver)
{
	struct dbtp_native_result *res = r->res;
	uint64_t pc = t->pc, next = 0;
	int in_place = 0, rc;

	res->steps++;
	res->threads[num_of(r, t)].steps++;
	if (!(res->steps & 0xffff) && r->o->on_progress)
		r->o->on_progress(r->o->ctx, res->insns);
	if (!r->want_pc) {
		res->insns++;
		res->threads[num_of(r, t)].insns++;
		return resume(r, t, deliver);
	}
	rc = get_pc(r, t->tid, &next);
	if (rc)
		return rc > 0 ? 0 : -1;
	t->pc = next;
	t->pc_fresh = 1;
	if (t->mmap_want) {
		long ret;

		errno = 0;
		ret = ptrace(PTRACE_PEEKUSER, t->tid,
			     (void *)offsetof(struct user_regs_struct, rax),
			     NULL);
		if (!errno && (uint64_t)ret == t->mmap_want)
			r->mmap_next = t->mmap_want + t->mmap_len;
		t->mmap_want = 0;
	}
	if (t->exec_pending) {
		/* The execve's syscall instruction, in the old image. */
		t->exec_pending = 0;
		if (count(r, t, pc, next, 2, 0))
			return -1;
		return resume(r, t, deliver);
	}
	if (next == pc && is_rep(r, t->tid, pc)) {
		if (r->o->rep_per_instruction) {
			res->rep_folded++;
			return resume(r, t, deliver);
		}
		in_place = 1;
	}
	if (t->rep_at == pc && next != pc) {
		/* The rep instruction ends: QEMU 7.2 executes it once more
		 * (finding the count 0) if it ran at least one iteration and
		 * did not stop on a compare's condition. */
		int extra = t->rep_n != 0;

		t->rep_at = 0;
		if (extra && (t->rep_kind & REP_COMPARE)) {
			struct user_regs_struct regs;
			int zf;

			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs))
				return errno == ESRCH
					   ? 0
					   : dbtp_err_set(r->err, errno,
							  "ptrace(GETREGS): %s",
							  strerror(errno));
			zf = !!(regs.eflags & 0x40);
			extra = (t->rep_kind & REP_ADDR32 ? (uint32_t)regs.rcx
							  : regs.rcx) == 0 &&
				zf == !(t->rep_kind & REP_NE);
		}
		if (extra) {
			res->rep_extra++;
			if (count(r, t, pc, pc, 0, 1))
				return -1;
		}
	}
	if (count(r, t, pc, next, 0, in_place))
		return -1;
	return resume(r, t, deliver);
}

static int on_sigtrap(struct run *r, struct nthread *t)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si)) {
		if (errno == ESRCH)
			return 0;
		return dbtp_err_set(r->err, errno, "ptrace(GETSIGINFO): %s",
				    strerror(errno));
	}
	if (si.si_code == TRAP_TRACE || si.si_code == TRAP_BRKPT)
		return stepped(r, t, 0);
	if (si.si_code == SI_KERNEL) /* the program's int3: its own trap */
		return stepped(r, t, SIGTRAP);
	if (si.si_code == SIGTRAP || si.si_code == (SIGTRAP | 0x80)) {
		/* ptrace_notify(): a signal handler was just entered; no
		 * instruction ran. */
		if (r->want_pc) {
			int rc = get_pc(r, t->tid, &t->pc);

			if (rc)
				return rc > 0 ? 0 : -1;
		}
		return resume(r, t, 0);
	}
	return resume(r, t, SIGTRAP); /* sent by someone: the program's */
}

/* /proc/@pid/maps as a string (NULL if unreadable: BBV maps lose files). */
static char *read_maps(pid_t pid)
{
	char path[64];
	struct dbtp_buf b = {0};
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (dbtp_buf_reserve(&b, b.len + 4097)) {
			n = -1;
			break;
		}
		n = read(fd, b.p + b.len, 4096);
		if (n <= 0)
			break;
		b.len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		dbtp_buf_free(&b);
		return NULL;
	}
	b.p[b.len] = 0;
	return (char *)b.p;
}

/* The end of the highest mapping below the stack (at the exec stop: the
 * dynamic loader's, or the vDSO's), 0 if unknown. */
static uint64_t top_mapping(pid_t pid)
{
	char *maps = read_maps(pid);
	uint64_t top = 0;

	for (char *l = maps; l && *l;) {
		char *nl = strchr(l, '\n');
		unsigned long long lo, hi;

		if (nl)
			*nl = 0;
		if (sscanf(l, "%llx-%llx", &lo, &hi) == 2 &&
		    !strstr(l, "[stack]") && !strstr(l, "[vsyscall]") &&
		    hi > top)
			top = hi;
		l = nl ? nl + 1 : NULL;
	}
	free(maps);
	return top;
}

static int on_event(struct run *r, struct nthread *t, int ev)
{
	unsigned long msg = 0;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg)) {
		if (errno == ESRCH)
			return 0;
		return dbtp_err_set(r->err, errno, "ptrace(GETEVENTMSG): %s",
				    strerror(errno));
	}
	if (ev == PTRACE_EVENT_CLONE) {
		pid_t tid = (pid_t)msg;
		uint32_t parent = num_of(r, t);
		struct nthread *c = find_thread(r, tid);

		if (!c) {
			c = add_thread(r, tid, parent);
			if (!c)
				return -1;
			c->fresh = 1;
		} else if (r->res->threads[num_of(r, c)].parent == NO_PARENT) {
			r->res->threads[num_of(r, c)].parent = parent;
		}
		t = find_thread(r, (pid_t)r->res->threads[parent].tid);
		return resume(r, t, 0);
	}
	if (ev == PTRACE_EVENT_EXEC) {
		/* The old image is gone; the step trap that follows completes
		 * the execve instruction. */
		lc_clear(&r->lc);
		lc_clear(&r->emu);
		r->rep_known = 0;
		t->exec_pending = 1;
		return resume(r, t, 0);
	}
	if (ev == PTRACE_EVENT_EXIT) {
		struct user_regs_struct regs;
		uint8_t code[16];

		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) == 0 &&
		    (regs.orig_rax == 60 || regs.orig_rax == 231) &&
		    peek_code(t->tid, regs.rip - 2, code) >= 2 &&
		    code[0] == 0x0f && code[1] == 0x05) {
			r->res->exit_insns++;
			r->res->threads[num_of(r, t)].exit_counted = 1;
			if (count(r, t, regs.rip - 2, regs.rip, 2, 0))
				return -1;
		}
		if (r->o->on_block && flush_block(r, t))
			return -1;
		if (t->tid == r->pid && !r->res->maps)
			r->res->maps = read_maps(t->tid);
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) && errno != ESRCH)
			return dbtp_err_set(r->err, errno, "ptrace(CONT): %s",
					    strerror(errno));
		return 0;
	}
	return resume(r, t, 0);
}

static int on_signal(struct run *r, struct nthread *t, int sig)
{
	siginfo_t si;

	if (t->fresh && sig == SIGSTOP) {
		/* A new thread's first stop: it has run nothing yet. */
		t->fresh = 0;
		if (r->want_pc) {
			int rc = get_pc(r, t->tid, &t->pc);

			if (rc)
				return rc > 0 ? 0 : -1;
		}
		return resume(r, t, 0);
	}
	if ((sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	     sig == SIGTTOU) &&
	    ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) && errno == EINVAL)
		return resume(r, t, 0); /* group-stop: carry on */
	return resume(r, t, sig);
}

/* Kill the program and reap every thread of it. */
static void kill_all(struct run *r)
{
	int st;
	pid_t w;

	kill(r->pid, SIGKILL);
	for (;;) {
		w = waitpid(-1, &st, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, w, NULL, NULL);
		else if (w == r->pid)
			break;
	}
}

static int loop(struct run *r)
{
	struct nthread *t;
	int st;
	pid_t w;

	for (;;) {
		w = waitpid(-1, &st, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return dbtp_err_set(r->err, errno, "waitpid: %s",
					    strerror(errno));
		}
		t = find_thread(r, w);
		if (!t) {
			/* A new thread stopping before its creator's clone
			 * event is reported. */
			t = add_thread(r, w, NO_PARENT);
			if (!t)
				return -1;
			t->fresh = 1;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (r->o->on_block && flush_block(r, t))
				return -1;
			t->alive = 0;
			if (w == r->pid) {
				r->res->status = st;
				return 0;
			}
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16) {
			if (on_event(r, t, st >> 16))
				return -1;
		} else if (WSTOPSIG(st) == SIGTRAP && !t->fresh) {
			if (on_sigtrap(r, t))
				return -1;
		} else if (on_signal(r, t, WSTOPSIG(st))) {
			return -1;
		}
	}
}

enum { STAGE_TRACEME = 1, STAGE_EXEC = 2 };

static void child(const char *path, char *const argv[], char *const envp[],
		  int aslr, int fd)
{
	int msg[2];
	static const int sigs[] = {SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGHUP};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		signal(sigs[i], SIG_DFL);
	if (!aslr)
		personality(ADDR_NO_RANDOMIZE);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
		msg[0] = STAGE_TRACEME;
	} else {
		execve(path, argv, envp);
		msg[0] = STAGE_EXEC;
	}
	msg[1] = errno;
	if (write(fd, msg, sizeof(msg)) < 0)
		_exit(127);
	_exit(127);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read @len bytes of the program's memory at @from (any alignment). */
static int peek_bytes(pid_t pid, uint64_t from, uint8_t *dst, size_t len)
{
	for (uint64_t a = from & ~7ull; a < from + len; a += 8) {
		uint8_t w[8];
		long x;

		errno = 0;
		x = ptrace(PTRACE_PEEKDATA, pid, (void *)a, NULL);
		if (errno)
			return -1;
		memcpy(w, &x, 8);
		for (int i = 0; i < 8; i++)
			if (a + i >= from && a + i < from + len)
				dst[a + i - from] = w[i];
	}
	return 0;
}

/* Copy @len bytes from @src into the program's memory at @to (any
 * alignment; the bytes around are kept). */
static int poke_bytes(pid_t pid, uint64_t to, const uint8_t *src, size_t len)
{
	for (uint64_t a = to & ~7ull; a < to + len; a += 8) {
		uint8_t w[8];
		long x;

		errno = 0;
		x = ptrace(PTRACE_PEEKDATA, pid, (void *)a, NULL);
		if (errno)
			return -1;
		memcpy(w, &x, 8);
		for (int i = 0; i < 8; i++)
			if (a + i >= to && a + i < to + len)
				w[i] = src[a + i - to];
		memcpy(&x, w, 8);
		if (ptrace(PTRACE_POKEDATA, pid, (void *)a, (void *)x))
			return -1;
	}
	return 0;
}

/*
 * Lay out the initial stack below the strings as QEMU 7.2 user mode does
 * (the kernel's layout differs in the details): the AT_PLATFORM string
 * right below argv[0]'s string, its length rounded up to 8; the 16
 * AT_RANDOM bytes below that, at a multiple of 16; then argc, argv[],
 * envp[] and the @m auxiliary entries of @neu ending at the random bytes,
 * padded so that argc is 16-aligned, and the stack pointer at argc.
 * String functions run on the platform string, and code using stack
 * addresses, then take the same paths.  @regs: the registers at the exec
 * stop (rsp is changed); @at: where the host's auxiliary vector starts.
 */
static int qemu_stack(pid_t pid, struct user_regs_struct *regs, uint64_t at,
		      uint64_t *neu, size_t m)
{
	size_t nw = (size_t)(at - regs->rsp) / 8, total = nw + 2 * m + 2;
	uint64_t *w = malloc(total * sizeof(*w)), top, size;
	uint8_t str[16] = {0}, rnd[16];
	size_t len = 0;
	int plat = -1, ran = -1;

	if (!w) {
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	for (size_t i = 0; i < nw && !errno; i++)
		w[i] = (uint64_t)ptrace(PTRACE_PEEKDATA, pid,
					(void *)(regs->rsp + 8 * i), NULL);
	for (size_t i = 0; i < m; i++) {
		if (neu[2 * i] == 15)
			plat = (int)i;
		if (neu[2 * i] == 25)
			ran = (int)i;
	}
	if (errno || nw < 2 || !w[1] ||
	    (plat >= 0 && peek_bytes(pid, neu[2 * plat + 1], str, 15)) ||
	    (ran >= 0 && peek_bytes(pid, neu[2 * ran + 1], rnd, 16)))
		goto fail;
	top = w[1]; /* argv[0]'s string: the lowest string */
	if (plat >= 0) {
		len = strnlen((char *)str, 15) + 1;
		top -= (len + 7) & ~7ull;
		if (poke_bytes(pid, top, str, len))
			goto fail;
		neu[2 * plat + 1] = top;
	}
	top &= ~15ull;
	if (ran >= 0) {
		top -= 16;
		if (poke_bytes(pid, top, rnd, 16))
			goto fail;
		neu[2 * ran + 1] = top;
	}
	memcpy(w + nw, neu, 2 * m * sizeof(*w));
	w[nw + 2 * m] = w[nw + 2 * m + 1] = 0;
	size = 8 * total;
	regs->rsp = top - size - (size & 15 ? 16 - (size & 15) : 0);
	for (size_t i = 0; i < total; i++)
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(regs->rsp + 8 * i),
			   (void *)w[i]))
			goto fail;
	free(w);
	return ptrace(PTRACE_SETREGS, pid, NULL, regs) ? -1 : 0;
fail:
	free(w);
	if (!errno)
		errno = EFAULT;
	return -1;
}

/*
 * Rewrite the stopped program's auxiliary vector: with a CPU view @v, to
 * the view's entry types in its order (host values, AT_HWCAP/AT_HWCAP2 from
 * the view, types the host lacks left out, AT_NULL-filled to the old
 * length); else, with @no_vdso, turn AT_SYSINFO_EHDR into AT_IGNORE, so
 * the dynamic loader sets up no vDSO, as under QEMU user mode (7.2 maps
 * none).  The initial stack is argc, argv[], NULL, envp[], NULL, then
 * (type, value) pairs up to AT_NULL.
 */
static int fix_auxv(pid_t pid, const struct dbtp_cpu_view *v, int no_vdso,
		    dbtp_err *err)
{
	struct user_regs_struct regs;
	uint64_t sp, argc, nul = 0, at, old[2 * 128], neu[2 * 128];
	size_t n = 0, m = 0;
	long x;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return dbtp_err_set(err, errno, "ptrace(GETREGS): %s",
				    strerror(errno));
	sp = regs.rsp;
	errno = 0;
	argc = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, (void *)sp, NULL);
	sp += 8 * (argc + 2); /* argc, argv[], NULL */
	for (int i = 0; i < 1 << 20 && !errno; i++, sp += 8) {
		x = ptrace(PTRACE_PEEKDATA, pid, (void *)sp, NULL);
		if (!errno && x == 0 && nul++ == 0)
			break; /* end of envp */
	}
	at = sp + 8;
	while (!errno && n < 127) {
		old[2 * n] = (uint64_t)ptrace(PTRACE_PEEKDATA, pid,
					      (void *)(at + 16 * n), NULL);
		old[2 * n + 1] = (uint64_t)ptrace(
		    PTRACE_PEEKDATA, pid, (void *)(at + 16 * n + 8), NULL);
		if (!old[2 * n])
			break;
		n++;
	}
	if (errno)
		return dbtp_err_set(err, errno,
				    "reading the auxiliary vector: %s",
				    strerror(errno));
	for (size_t k = 0; !v && k < n; k++, m++) {
		neu[2 * m] = old[2 * k] == 33 && no_vdso ? 1 : old[2 * k];
		neu[2 * m + 1] = old[2 * k + 1];
	}
	for (size_t i = 0; v && i < v->nauxv; i++)
		for (size_t k = 0; k < n; k++) {
			uint64_t t = old[2 * k];

			if (t != v->auxv_type[i])
				continue;
			neu[2 * m] = t;
			neu[2 * m + 1] = t == 16   ? v->hwcap
					 : t == 26 ? v->hwcap2
						   : old[2 * k + 1];
			m++;
			break;
		}
	if (v) {
		if (qemu_stack(pid, &regs, at, neu, m))
			return dbtp_err_set(err, errno,
					    "rewriting the initial stack: %s",
					    strerror(errno));
		return 0;
	}
	for (size_t i = 0; i < 2 * n; i++)
		if (neu[i] != old[i] &&
		    ptrace(PTRACE_POKEDATA, pid, (void *)(at + 8 * i),
			   (void *)neu[i]))
			return dbtp_err_set(err, errno,
					    "writing the auxiliary vector: %s",
					    strerror(errno));
	return 0;
}

int dbtp_native_run(struct dbtp_native_result *res,
		    const struct dbtp_native_opts *o, char *const argv[],
		    dbtp_err *err)
{
	static const struct dbtp_native_opts defaults;
	struct run r = {0};
	enum dbtp_arch arch;
	int dynamic, p[2], msg[2], st, rc = -1;
	char **cargv = NULL, **envp = NULL, **words = NULL;
	char interp[DBTP_SHEBANG_MAX];
	size_t nwords = 0;
	const char *base;
	size_t argc = 0;
	ssize_t n;
	double t0;

	memset(res, 0, sizeof(*res));
	if (!o)
		o = &defaults;
	r.o = o;
	r.res = res;
	r.err = err;
	r.want_pc = o->on_insn || o->on_block || o->rep_per_instruction ||
		    o->cpu_view || o->rep_qemu || o->qemu_mmap;
	r.want_len = o->on_block || o->decode;
	if (!argv || !argv[0])
		return dbtp_err_set(err, EINVAL, "no program given");
	/* the environment first: a "#!/usr/bin/env NAME" line searches its
	 * PATH */
	envp = dbtp_run_env(o->keep_env, o->env, o->nenv);
	if (!envp)
		return nomem(err);
	if (dbtp_resolve_program(argv[0], envp, &res->program, &words, interp,
				 err) ||
	    dbtp_elf_probe(res->program, &arch, &dynamic, NULL, 0, err))
		goto out;
	if (arch != DBTP_ARCH_X86_64) {
		dbtp_err_set(err, EINVAL,
			     "%s: an %s program; native counting runs x86-64 "
			     "programs on this x86-64 host",
			     res->program, dbtp_arch_name(arch));
		goto out;
	}
	if (r.want_len && dbtp_disasm_open(&r.dis, DBTP_ARCH_X86_64, err))
		goto out;
	base = strrchr(res->program, '/');
	res->argv0 = strdup(o->argv0  ? o->argv0
			    : *interp ? interp
			    : base    ? base + 1
				      : res->program);
	while (argv[argc])
		argc++;
	while (words && words[nwords])
		nwords++;
	cargv = calloc(nwords + argc + 1, sizeof(*cargv));
	if (!res->argv0 || !cargv) {
		nomem(err);
		goto out;
	}
	cargv[0] = res->argv0;
	for (size_t i = 0; i < nwords; i++)
		cargv[1 + i] = words[i];
	for (size_t i = 1; i < argc; i++)
		cargv[nwords + i] = argv[i];

	if (pipe2(p, O_CLOEXEC)) {
		dbtp_err_set(err, errno, "pipe: %s", strerror(errno));
		goto out;
	}
	t0 = now();
	r.pid = fork();
	if (r.pid < 0) {
		dbtp_err_set(err, errno, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		goto out;
	}
	if (r.pid == 0) {
		close(p[0]);
		child(res->program, cargv, envp, o->aslr, p[1]);
	}
	close(p[1]);
	do {
		n = read(p[0], msg, sizeof(msg));
	} while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == (ssize_t)sizeof(msg)) {
		while (waitpid(r.pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (msg[0] == STAGE_TRACEME)
			dbtp_err_set(err, msg[1],
				     "ptrace is not permitted here "
				     "(PTRACE_TRACEME: %s): a container "
				     "without CAP_SYS_PTRACE, a seccomp "
				     "filter, kernel.yama.ptrace_scope = 3, "
				     "or dbtprof itself being traced",
				     strerror(msg[1]));
		else
			dbtp_err_set(err, msg[1], "cannot run %s: %s",
				     res->program, strerror(msg[1]));
		goto out;
	}
	while (waitpid(r.pid, &st, 0) < 0) {
		if (errno != EINTR) {
			dbtp_err_set(err, errno, "waitpid: %s",
				     strerror(errno));
			goto out;
		}
	}
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
		if (WIFSTOPPED(st))
			kill_all(&r);
		dbtp_err_set(err, EPROTO,
			     "%s did not stop after exec as a traced program",
			     res->program);
		goto out;
	}
	if (ptrace(PTRACE_SETOPTIONS, r.pid, NULL,
		   (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE |
				  PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL))) {
		dbtp_err_set(err, errno, "ptrace(SETOPTIONS): %s",
			     strerror(errno));
		kill_all(&r);
		goto out;
	}
	if ((o->no_vdso || o->cpu_view) &&
	    fix_auxv(r.pid, o->cpu_view, o->no_vdso, err)) {
		kill_all(&r);
		goto out;
	}
	if (o->qemu_mmap)
		r.mmap_next = top_mapping(r.pid);
	if (o->on_start)
		o->on_start(o->ctx, r.pid);
	if (!add_thread(&r, r.pid, 0) ||
	    (r.want_pc && get_pc(&r, r.pid, &r.th[0].pc)) ||
	    resume(&r, &r.th[0], 0) || loop(&r)) {
		kill_all(&r);
		goto out;
	}
	res->seconds = now() - t0;
	rc = 0;
out:
	free(cargv);
	dbtp_run_env_free(envp);
	dbtp_run_env_free(words);
	free(r.th);
	free(r.lc.k);
	free(r.lc.v);
	free(r.emu.k);
	free(r.emu.v);
	dbtp_disasm_close(r.dis);
	if (rc)
		dbtp_native_result_free(res);
	return rc;
}

#endif /* __x86_64__ */

/* --- basic block vectors ------------------------------------------------ */

struct bbv_thread {
	uint64_t insns, end;
	uint64_t *cur; /* this interval's instructions, by block index */
	size_t curcap;
	uint32_t *touched;
	size_t ntouched, tcap;
	/* closed intervals: entries [ivl[i], ivl[i + 1]) of blk/cnt */
	uint32_t *blk;
	uint64_t *cnt;
	size_t n, bcap, ccap;
	size_t *ivl;
	size_t nivl, ivlcap;
};

struct dbtp_native_bbv {
	uint64_t interval, nintervals;
	struct bbv_thread *th;
	uint32_t nth;
	uint64_t *addr; /* by block index (order of discovery) */
	size_t nblk, acap;
	uint64_t *hk; /* address + 1 -> index, open addressing */
	uint32_t *hv;
	size_t hn;
};

int dbtp_native_bbv_new(dbtp_native_bbv **out, uint64_t interval, dbtp_err *err)
{
	dbtp_native_bbv *b;

	*out = NULL;
	if (!interval)
		return dbtp_err_set(err, EINVAL, "interval must be > 0");
	b = calloc(1, sizeof(*b));
	if (!b)
		return nomem(err);
	b->interval = interval;
	*out = b;
	return 0;
}

static int block_index(dbtp_native_bbv *b, uint64_t addr, uint32_t *idx)
{
	size_t h;

	if ((b->nblk + 1) * 2 > b->hn) {
		size_t n = b->hn ? b->hn * 2 : 4096;
		uint64_t *k = calloc(n, sizeof(*k));
		uint32_t *v = malloc(n * sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -1;
		}
		for (size_t i = 0; i < b->hn; i++) {
			if (!b->hk[i])
				continue;
			for (h = hash64(b->hk[i] - 1, n - 1); k[h];
			     h = (h + 1) & (n - 1))
				;
			k[h] = b->hk[i];
			v[h] = b->hv[i];
		}
		free(b->hk);
		free(b->hv);
		b->hk = k;
		b->hv = v;
		b->hn = n;
	}
	for (h = hash64(addr, b->hn - 1); b->hk[h]; h = (h + 1) & (b->hn - 1))
		if (b->hk[h] == addr + 1) {
			*idx = b->hv[h];
			return 0;
		}
	if (b->nblk >= UINT32_MAX ||
	    grow(&b->addr, &b->acap, b->nblk + 1, sizeof(*b->addr)))
		return -1;
	b->hk[h] = addr + 1;
	b->hv[h] = (uint32_t)b->nblk;
	b->addr[b->nblk] = addr;
	*idx = (uint32_t)b->nblk++;
	return 0;
}

static int close_interval(struct bbv_thread *t)
{
	if (grow(&t->blk, &t->bcap, t->n + t->ntouched, sizeof(*t->blk)) ||
	    grow(&t->cnt, &t->ccap, t->n + t->ntouched, sizeof(*t->cnt)) ||
	    grow(&t->ivl, &t->ivlcap, t->nivl + 2, sizeof(*t->ivl)))
		return -1;
	if (!t->nivl)
		t->ivl[t->nivl++] = 0;
	for (size_t i = 0; i < t->ntouched; i++) {
		uint32_t k = t->touched[i];

		t->blk[t->n] = k;
		t->cnt[t->n++] = t->cur[k];
		t->cur[k] = 0;
	}
	t->ntouched = 0;
	t->ivl[t->nivl++] = t->n;
	return 0;
}

int dbtp_native_bbv_block(void *ctx, uint32_t thread, uint64_t entry,
			  uint64_t ninsns, dbtp_err *err)
{
	dbtp_native_bbv *b = ctx;
	struct bbv_thread *t;
	uint32_t k;

	if (!ninsns)
		return 0;
	if (thread >= b->nth) {
		t = realloc(b->th, (thread + 1) * sizeof(*t));
		if (!t)
			return nomem(err);
		memset(t + b->nth, 0, (thread + 1 - b->nth) * sizeof(*t));
		for (uint32_t i = b->nth; i <= thread; i++)
			t[i].end = b->interval;
		b->th = t;
		b->nth = thread + 1;
	}
	t = &b->th[thread];
	if (block_index(b, entry, &k))
		return nomem(err);
	if (k >= t->curcap) {
		size_t old = t->curcap;

		if (grow(&t->cur, &t->curcap, (size_t)k + 1, sizeof(*t->cur)) ||
		    grow(&t->touched, &t->tcap, t->curcap, sizeof(*t->touched)))
			return nomem(err);
		memset(t->cur + old, 0, (t->curcap - old) * sizeof(*t->cur));
	}
	if (!t->cur[k])
		t->touched[t->ntouched++] = k;
	t->cur[k] += ninsns;
	t->insns += ninsns;
	if (t->insns >= t->end) {
		if (close_interval(t))
			return nomem(err);
		while (t->end <= t->insns)
			t->end += b->interval;
	}
	return 0;
}

struct pair {
	uint32_t id;
	uint64_t cnt;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The file and file offset of @addr according to @maps. */
static int map_file(const char *maps, uint64_t addr, const char **path,
		    size_t *plen, uint64_t *off)
{
	for (const char *l = maps; l && *l;) {
		const char *nl = strchr(l, '\n'), *p;
		unsigned long long lo, hi, fo;
		int n = 0;

		if (sscanf(l, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &fo,
			   &n) == 3 &&
		    n && addr >= lo && addr < hi && l[n] == '/') {
			p = l + n;
			*path = p;
			*plen = nl ? (size_t)(nl - p) : strlen(p);
			*off = addr - lo + fo;
			return 1;
		}
		l = nl ? nl + 1 : NULL;
	}
	return 0;
}

int dbtp_native_bbv_write(dbtp_native_bbv *b, FILE *bb, FILE *map,
			  const char *maps, const char *name, dbtp_err *err)
{
	uint32_t *id = NULL, *byid = NULL, *ids = NULL, next = 1;
	uint64_t *cnts = NULL;
	struct pair *pairs = NULL;
	struct dbtp_buf line = {0};
	size_t maxn = 0;
	int rc = -1;

	b->nintervals = 0;
	for (uint32_t i = 0; i < b->nth; i++) {
		struct bbv_thread *t = &b->th[i];

		if (t->ntouched && close_interval(t))
			return nomem(err);
		for (size_t k = 0; k + 1 < t->nivl; k++)
			if (t->ivl[k + 1] - t->ivl[k] > maxn)
				maxn = t->ivl[k + 1] - t->ivl[k];
		b->nintervals += t->nivl ? t->nivl - 1 : 0;
	}
	id = calloc(b->nblk + 1, sizeof(*id));
	byid = calloc(b->nblk + 1, sizeof(*byid));
	pairs = malloc((maxn + 1) * sizeof(*pairs));
	ids = malloc((maxn + 1) * sizeof(*ids));
	cnts = malloc((maxn + 1) * sizeof(*cnts));
	if (!id || !byid || !pairs || !ids || !cnts) {
		nomem(err);
		goto out;
	}
	/* Ids in order of first appearance, thread by thread. */
	for (uint32_t i = 0; i < b->nth; i++)
		for (size_t e = 0; e < b->th[i].n; e++) {
			uint32_t k = b->th[i].blk[e];

			if (!id[k]) {
				id[k] = next;
				byid[next++] = k;
			}
		}
	for (uint32_t i = 0; i < b->nth; i++) {
		struct bbv_thread *t = &b->th[i];

		for (size_t k = 0; k + 1 < t->nivl; k++) {
			size_t m = 0;

			for (size_t e = t->ivl[k]; e < t->ivl[k + 1]; e++) {
				pairs[m].id = id[t->blk[e]];
				pairs[m++].cnt = t->cnt[e];
			}
			qsort(pairs, m, sizeof(*pairs), pair_cmp);
			for (size_t e = 0; e < m; e++) {
				ids[e] = pairs[e].id;
				cnts[e] = pairs[e].cnt;
			}
			line.len = 0;
			if (dbtp_bbv_format_line(ids, cnts, m, &line)) {
				nomem(err);
				goto out;
			}
			fwrite(line.p, 1, line.len, bb);
		}
	}
	for (uint32_t i = 1; map && i < next; i++) {
		uint64_t a = b->addr[byid[i]], off;
		const char *path;
		size_t plen;

		if (map_file(maps, a, &path, &plen, &off))
			fprintf(map,
				"%" PRIu32 " 0x%" PRIx64 " - - %.*s 0x%" PRIx64
				"\n",
				i, a, (int)plen, path, off);
		else
			fprintf(map, "%" PRIu32 " 0x%" PRIx64 " - - - -\n", i,
				a);
	}
	if (fflush(bb) || ferror(bb) || (map && (fflush(map) || ferror(map)))) {
		dbtp_err_set(err, errno, "%s: write error: %s", name,
			     strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(id);
	free(byid);
	free(pairs);
	free(ids);
	free(cnts);
	dbtp_buf_free(&line);
	return rc;
}

uint64_t dbtp_native_bbv_nintervals(const dbtp_native_bbv *b)
{
	return b->nintervals;
}

uint64_t dbtp_native_bbv_nblocks(const dbtp_native_bbv *b)
{
	return b->nblk;
}

void dbtp_native_bbv_free(dbtp_native_bbv *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->nth; i++) {
		free(b->th[i].cur);
		free(b->th[i].touched);
		free(b->th[i].blk);
		free(b->th[i].cnt);
		free(b->th[i].ivl);
	}
	free(b->th);
	free(b->addr);
	free(b->hk);
	free(b->hv);
	free(b);
}

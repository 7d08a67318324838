/* SPDX-License-Identifier: MIT */
/*
 * cycles.c - the streaming out-of-order pipeline model.
 *
 * Each thread's instructions go, in their real order, through an issue-time
 * formulation of llvm-mca's pipeline: for instruction i
 *   dispatch D = the first cycle (not before the previous instruction's)
 *       with room for its micro-ops in the dispatch group (dispatch width
 *       micro-ops a cycle, an instruction wider than that takes whole
 *       cycles), in the reorder buffer (the oldest instructions leave it
 *       when they retire) and in the scheduler (instructions leave it when
 *       they issue);
 *   ready = max(D + 1, when its source registers are written, and for a
 *       load, when an older store to overlapping bytes has executed);
 *   issue t = when the last of its resource uses starts: each takes the
 *       member of its group free first at or after ready (ties: the least
 *       used) for its cycles, the first free ones from there (per-resource
 *       busy bitmaps over a 65,536-cycle horizon);
 *   its destinations are ready at t + latency; it retires at
 *       max(t + latency + 1, the previous retirement).
 * Total cycles are the last retirement + 1, as llvm-mca counts them.
 * Unlike llvm-mca, which steps cycle by cycle and issues the oldest ready
 * instruction first, an instruction here takes the first free slot at or
 * after its ready cycle in program order: a younger instruction never
 * takes a port from an older one that became ready later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "analysis/bpred.h"
#include "analysis/timing.h"
#include "dbtp/bbv.h"
#include "dbtp/cache.h"
#include "dbtp/cycles.h"
#include "dbtp/disasm.h"
#include "isa/cs.h"

#define HORIZON (1u << 16) /* cycles of resource bitmaps */
#define HWORDS (HORIZON / 64)
#define STORES 4096   /* store table entries (8-byte granules) */
#define MAX_MEMS 1024 /* MEM events kept per block execution */
#define NREGS 256
#define MAX_RW 12

/*
 * Memory renaming (opts.memren), as measured on a Zen 4 (bench/frontend.c):
 * a store's data operand is mirrored for a later load written the same way
 * (base, index, scale and displacement) whose registers have not been
 * written since, or for any stack-pointer-based load of the same address
 * (push, pop and rsp-relative moves: the stack engine follows rsp).
 */
#define REN_OP 1 /* its one memory operand can be mirrored */
#define REN_LD 2 /* and its load takes a mirrored value (mov, pop) */

struct mexpr {
	int32_t disp;
	uint8_t base, index, scale; /* mapped registers (0: none) */
};

struct insn {
	uint32_t form;
	uint16_t addr;	/* bit k: r[k] forms an address */
	uint16_t waddr; /* bit k: w[k] is an address register (written back) */
	uint8_t nr, nw, nmem;
	uint8_t out;  /* outside the region (opts.keep) */
	uint8_t call; /* a call (for opts.mca_compat) */
	uint8_t stk;  /* x86 push, pop, call or ret (opts.front_end) */
	uint8_t ren;  /* REN_* (opts.memren) */
	uint8_t rep;  /* a rep string instruction: bytes per element */
	uint8_t r[MAX_RW], w[MAX_RW];
	struct mexpr m; /* its one memory operand, if ren */
};

struct binfo {
	uint32_t ninsns, nmem; /* nmem: expected MEM events */
	uint32_t nin;	       /* instructions in the region */
	struct insn *ins;      /* NULL: not decoded yet */
	uint8_t br, ind;     /* last instruction: enum dbtp_branch, indirect */
	uint64_t br_pc, end; /* its address; the block's end (fall-through) */
};

struct mem {
	uint64_t addr;
	uint32_t size;
	uint8_t store;
};

struct store {
	uint64_t gran, addr, done;
	uint64_t issue; /* its data was ready (opts.memren) */
	uint32_t size;
	uint8_t ren;	     /* made by an insn.ren instruction */
	struct mexpr m;	     /* and its operand */
	uint32_t vbase, vix; /* versions of its registers */
};

struct fe_target {
	uint64_t pc, target; /* pc + 1 (0: empty) */
};

struct pipe {
	uint32_t num;	 /* thread number */
	uint64_t seq;	 /* instructions of the thread so far */
	uint64_t d;	 /* current dispatch cycle */
	unsigned slots;	 /* dispatch slots left in it */
	uint64_t retire; /* last retirement */
	int any;
	/* reorder buffer: retirement cycle and micro-ops, oldest first */
	uint64_t *rob_r;
	uint16_t *rob_u;
	unsigned rob_head, rob_n, rob_uops;
	/* scheduler: instructions issuing at each cycle of the horizon (an
	 * entry is free from its issue cycle on), and how many issue after
	 * cycle @sd */
	uint32_t *issuing;
	uint64_t sd;
	unsigned waiting;
	uint64_t reg[NREGS];
	uint32_t regver[NREGS]; /* writes of each register (opts.memren) */
	uint64_t sp_t;		/* stack engine: the cycle of the last */
	unsigned sp_n;		/* push, pop, call or ret, and how many */
	/* busy cycles: word w of resource r at bits[w * nres + r], so that
	 * the resources' words of one 64-cycle stretch share cache lines
	 * (one array of HWORDS words a resource put them all 8 KiB apart,
	 * in one set of the host's L1) */
	uint64_t *bits;
	unsigned nres;
	uint64_t base; /* bitmaps valid for [base, base + HORIZON) */
	struct store *st;
	uint64_t store_max; /* all-alias: latest store execution */
	dbtp_cache *cache;  /* opts.cache */
	bpred *bp;	    /* opts.bpred */
	uint64_t last_pc;   /* last instruction of the previous block */
	int any_block;	    /* last_pc is set */
	unsigned rep_bytes; /* of the rep string under way, not yet timed */
	uint64_t fe;	    /* opts.front_end: the next block dispatches from */
	struct fe_target *tg; /* opts.front_end: indirect branches' targets */
	struct dbtp_cache_counts cc;
	/* the block being collected */
	uint32_t pend;
	int has_pend;
	struct mem *mems;
	uint32_t nmems;
	uint64_t extra_mems;
	struct dbtp_cycles_counts c;
};

struct dbtp_cycles {
	dbtp_timing *t;
	const struct dbtp_cpu_params *cpu;
	enum dbtp_arch arch;
	struct dbtp_cycles_opts o;
	csh cs;
	cs_arch ca; /* the handle's architecture */
	cs_insn *ci;
	uint8_t regmap[4096]; /* capstone register -> canonical (0: none) */
	unsigned nregs, sp;   /* canonical registers; the stack pointer's */
	struct binfo *b;
	struct dbtp_cycles_block *bs;
	uint32_t nb, decoded; /* blocks of the trace decoded so far */
	struct pipe **th;
	uint32_t nth;
	int finished;
	struct dbtp_form_timing def; /* for instructions without a form */
	unsigned penalty;	     /* mispredict penalty (opts.bpred) */
	uint8_t *seen;		     /* per form: met in a decoded block */
	size_t nseen;
	uint64_t forms, untimed;
	uint64_t resmask; /* the CPU's resource columns */
};

static int nomem(dbtp_err *err)
{
	return dbtp_err_set(err, ENOMEM, "cycle model: out of memory");
}

const char *dbtp_stall_name(int s)
{
	static const char *const n[DBTP_STALL_N] = {"reorder buffer full",
						    "scheduler full",
						    "register dependency",
						    "memory dependency",
						    "resource pressure",
						    "branch mispredict",
						    "front end"};

	return s >= 0 && s < DBTP_STALL_N ? n[s] : "?";
}

/* --- registers ----------------------------------------------------------- */

/* The full register a (sub-)register name belongs to, in @out. */
static void canon_x86(const char *n, char *out, size_t sz)
{
	static const char *const legacy[][5] = {
	    {"rax", "eax", "ax", "al", "ah"}, {"rbx", "ebx", "bx", "bl", "bh"},
	    {"rcx", "ecx", "cx", "cl", "ch"}, {"rdx", "edx", "dx", "dl", "dh"},
	    {"rsi", "esi", "si", "sil", ""},  {"rdi", "edi", "di", "dil", ""},
	    {"rbp", "ebp", "bp", "bpl", ""},  {"rsp", "esp", "sp", "spl", ""},
	};
	size_t l = strlen(n);

	for (size_t i = 0; i < sizeof(legacy) / sizeof(*legacy); i++)
		for (int j = 0; j < 5; j++)
			if (legacy[i][j][0] && !strcmp(n, legacy[i][j])) {
				snprintf(out, sz, "%s", legacy[i][0]);
				return;
			}
	if (n[0] == 'r' && n[1] >= '0' && n[1] <= '9') {
		/* r8..r15 with b/w/d suffixes */
		snprintf(out, sz, "%.*s", (int)strspn(n, "r0123456789"), n);
		return;
	}
	if (l > 3 && (!strncmp(n, "xmm", 3) || !strncmp(n, "ymm", 3) ||
		      !strncmp(n, "zmm", 3))) {
		snprintf(out, sz, "v%s", n + 3);
		return;
	}
	if (!strcmp(n, "eflags") || !strcmp(n, "rflags") ||
	    !strcmp(n, "flags")) {
		snprintf(out, sz, "flags");
		return;
	}
	if (!strcmp(n, "rip") || !strcmp(n, "eip") || !strcmp(n, "ip")) {
		out[0] = 0;
		return;
	}
	snprintf(out, sz, "%s", n);
}

static void canon_a64(const char *n, char *out, size_t sz)
{
	if (!strcmp(n, "wzr") || !strcmp(n, "xzr")) {
		out[0] = 0;
		return;
	}
	if (!strcmp(n, "wsp") || !strcmp(n, "sp")) {
		snprintf(out, sz, "sp");
		return;
	}
	if ((n[0] == 'w' || n[0] == 'x') && n[1] >= '0' && n[1] <= '9') {
		snprintf(out, sz, "x%s", n + 1);
		return;
	}
	if (strchr("bhsdqv", n[0]) && n[1] >= '0' && n[1] <= '9') {
		snprintf(out, sz, "v%s", n + 1);
		return;
	}
	snprintf(out, sz, "%s", n);
}

static void build_regmap(dbtp_cycles *c)
{
	char names[NREGS][16];
	unsigned top =
	    c->arch == DBTP_ARCH_AARCH64 ? ARM64_REG_ENDING : X86_REG_ENDING;

	c->nregs = 1;
	if (top > sizeof(c->regmap))
		top = sizeof(c->regmap);
	for (unsigned r = 1; r < top; r++) {
		const char *n = cs_reg_name(c->cs, r);
		char cn[16];
		unsigned k;

		if (!n)
			continue;
		if (c->arch == DBTP_ARCH_AARCH64)
			canon_a64(n, cn, sizeof(cn));
		else
			canon_x86(n, cn, sizeof(cn));
		if (!cn[0])
			continue;
		for (k = 1; k < c->nregs; k++)
			if (!strcmp(names[k], cn))
				break;
		if (k == c->nregs) {
			if (c->nregs == NREGS)
				continue;
			snprintf(names[k], sizeof(names[k]), "%s", cn);
			c->nregs++;
		}
		c->regmap[r] = (uint8_t)k;
		if (!strcmp(cn, c->arch == DBTP_ARCH_AARCH64 ? "sp" : "rsp"))
			c->sp = k;
	}
}

/* --- decoding blocks ----------------------------------------------------- */

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* x86: a register cleared whatever its value (xor r, r and the like). */
static int zero_idiom(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	const char *m = ci->mnemonic;

	if (!(starts(m, "xor") || starts(m, "sub") || starts(m, "pxor") ||
	      starts(m, "vpxor") || starts(m, "vxorp") || starts(m, "psub") ||
	      starts(m, "vpsub") || starts(m, "pcmpgt") ||
	      starts(m, "vpcmpgt")))
		return 0;
	if (x->op_count < 2)
		return 0;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type != X86_OP_REG ||
		    x->operands[i].reg != x->operands[x->op_count - 1].reg)
			return 0;
	return 1;
}

/* push, pop, call, ret and leave: an implicit stack access. */
static int stack_op(const char *m)
{
	return starts(m, "push") || starts(m, "pop") || starts(m, "call") ||
	       starts(m, "ret") || !strcmp(m, "leave");
}

/*
 * Memory operations QEMU (7.2) reports for one x86 instruction, as far as
 * known: one per direction of each memory operand (read-modify-write: a
 * load then a store), operands wider than 8 bytes as 8-byte pieces, one
 * more for the implicit stack access of push, pop, call, ret and leave.
 * Capstone 4 marks the operand of test, cmp, bt and the compares as
 * written too; they only read.
 */
static unsigned x86_mems(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	const char *m = ci->mnemonic;
	int ro = (starts(m, "test") ||
		  (starts(m, "cmp") && !starts(m, "cmpxchg") &&
		   !starts(m, "cmps")) ||
		  !strcmp(m, "bt") || starts(m, "ucomi") || starts(m, "comi") ||
		  starts(m, "vucomi") || starts(m, "vcomi") ||
		  starts(m, "ptest") || starts(m, "vptest"));
	unsigned n = 0;

	if (starts(m, "lea") || starts(m, "nop") || starts(m, "prefetch") ||
	    starts(m, "endbr"))
		return 0;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		unsigned pieces = op->size > 8 ? op->size / 8u : 1, dirs;

		if (op->type != X86_OP_MEM)
			continue;
		dirs = ((op->access & CS_AC_READ) ? 1 : 0) +
		       ((op->access & CS_AC_WRITE) && !ro ? 1 : 0);
		n += pieces * (dirs ? dirs : 1);
	}
	if (stack_op(m))
		n++;
	return n;
}

/* Capstone register @r as one of the model's (0: none or unknown). */
static inline uint8_t canon(const dbtp_cycles *c, unsigned r)
{
	return r < sizeof(c->regmap) ? c->regmap[r] : 0;
}

/*
 * What memory renaming (opts.memren) can do with the x86 instruction, and
 * its memory operand into @e: REN_OP if its only memory access is an
 * explicit operand [base + index + displacement] (not absolute, not
 * rip-relative) of 4 or 8 bytes moving general-purpose data, or the stack
 * slot of a push or pop of a register; REN_LD as well if that access is a
 * plain load into a register (mov, pop).  A Zen 4 mirrors neither a
 * load-op's operand nor a sign-extending or 1- or 2-byte load.
 */
static uint8_t x86_renaming(const dbtp_cycles *c, const cs_insn *ci,
			    struct mexpr *e)
{
	const cs_x86 *x = &ci->detail->x86;
	const char *m = ci->mnemonic;
	int n = 0, ok = 0, load = 0;

	if (!strcmp(m, "push") || !strcmp(m, "pop")) {
		if (x->op_count != 1 || x->operands[0].type != X86_OP_REG ||
		    x->operands[0].size != 8)
			return 0;
		*e = (struct mexpr){.base = c->sp};
		return m[1] == 'o' ? REN_OP | REN_LD : REN_OP;
	}
	if (stack_op(m))
		return 0;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG) {
			/* vector, x87 and mask data are not renamed */
			const char *r = cs_reg_name(c->cs, op->reg);

			if (!r || r[0] == 'x' || r[0] == 'y' || r[0] == 'z' ||
			    r[0] == 'k' || starts(r, "mm") || starts(r, "st"))
				return 0;
		}
		if (op->type != X86_OP_MEM)
			continue;
		n++;
		ok = op->mem.base != X86_REG_INVALID &&
		     op->mem.base != X86_REG_RIP &&
		     op->mem.segment == X86_REG_INVALID &&
		     (op->size == 4 || op->size == 8) &&
		     op->mem.disp >= INT32_MIN && op->mem.disp <= INT32_MAX;
		if (!ok)
			break;
		load = (op->access & CS_AC_READ) && !strcmp(m, "mov");
		e->base = canon(c, op->mem.base);
		e->index = canon(c, op->mem.index);
		e->scale = (uint8_t)(e->index ? op->mem.scale : 0);
		e->disp = (int32_t)op->mem.disp;
	}
	if (n != 1 || !ok)
		return 0;
	return load ? REN_OP | REN_LD : REN_OP;
}

/* Bytes a string instruction moves, compares or stores per element. */
static uint8_t x86_element(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	uint8_t size = 1;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].size > size)
			size = x->operands[i].size;
	return size > 8 ? 8 : size;
}

/* The canonical registers an instruction's memory operands address with. */
static unsigned addr_regs(const dbtp_cycles *c, const cs_insn *ci, uint8_t *out)
{
	unsigned n = 0, k[4];

	if (c->arch == DBTP_ARCH_X86_64) {
		const cs_x86 *x = &ci->detail->x86;

		for (int i = 0; i < x->op_count && n < 4; i++)
			if (x->operands[i].type == X86_OP_MEM) {
				k[n++] = x->operands[i].mem.base;
				if (n < 4)
					k[n++] = x->operands[i].mem.index;
			}
	} else {
		const cs_arm64 *a = &ci->detail->arm64;

		for (int i = 0; i < a->op_count && n < 4; i++)
			if (a->operands[i].type == ARM64_OP_MEM) {
				k[n++] = a->operands[i].mem.base;
				if (n < 4)
					k[n++] = a->operands[i].mem.index;
			}
	}
	for (unsigned i = 0; i < n; i++)
		out[i] = canon(c, k[i]);
	return n;
}

static unsigned a64_mems(const cs_insn *ci)
{
	const char *m = ci->mnemonic;

	if (starts(m, "prfm") || starts(m, "prfum"))
		return 0;
	if (starts(m, "ldp") || starts(m, "stp") || starts(m, "ldnp") ||
	    starts(m, "stnp") || starts(m, "ldxp") || starts(m, "ldaxp") ||
	    starts(m, "stxp") || starts(m, "stlxp"))
		return 2;
	if (starts(m, "cas") || starts(m, "swp") || starts(m, "ldadd") ||
	    starts(m, "ldclr") || starts(m, "ldeor") || starts(m, "ldset") ||
	    starts(m, "ldsmax") || starts(m, "ldsmin") || starts(m, "ldumax") ||
	    starts(m, "ldumin"))
		return 2;
	if (starts(m, "ld") || starts(m, "st"))
		return 1;
	return 0;
}

/* Count form @f once. */
static int note_form(dbtp_cycles *c, size_t f, dbtp_err *err)
{
	if (f >= c->nseen) {
		size_t n = c->nseen ? c->nseen : 1024;
		uint8_t *p;

		while (n <= f)
			n *= 2;
		p = realloc(c->seen, n);
		if (!p)
			return nomem(err);
		memset(p + c->nseen, 0, n - c->nseen);
		c->seen = p;
		c->nseen = n;
	}
	if (c->seen[f])
		return 0;
	c->seen[f] = 1;
	c->forms++;
	if (timing_at(c->t, (uint32_t)f)->flags & DBTP_FORM_DEFAULT)
		c->untimed++;
	return 0;
}

/*
 * Decode block @b: registers read and written, expected memory events, and
 * the forms; forms not in the table are appended to @forms/@lens.
 */
static int decode(dbtp_cycles *c, const struct dbtp_block *b, uint32_t id,
		  dbtp_err *err)
{
	struct binfo *bi;
	uint32_t off = 0;

	if (id >= c->nb) {
		uint32_t nb = c->nb ? c->nb : 256;
		void *p, *q;

		while (nb <= id)
			nb *= 2;
		p = realloc(c->b, nb * sizeof(*c->b));
		if (!p)
			return nomem(err);
		c->b = p;
		q = realloc(c->bs, nb * sizeof(*c->bs));
		if (!q)
			return nomem(err);
		c->bs = q;
		memset(c->b + c->nb, 0, (nb - c->nb) * sizeof(*c->b));
		memset(c->bs + c->nb, 0, (nb - c->nb) * sizeof(*c->bs));
		c->nb = nb;
	}
	bi = &c->b[id];
	if (bi->ins)
		return 0;
	bi->ins = calloc(b->ninsns ? b->ninsns : 1, sizeof(*bi->ins));
	if (!bi->ins)
		return nomem(err);
	bi->ninsns = b->ninsns;
	bi->end = b->vaddr + b->nbytes;
	for (uint32_t i = 0; i < b->ninsns; i++)
		bi->ins[i].form = UINT32_MAX; /* until decoded */
	for (uint32_t i = 0; i < b->ninsns; i++) {
		struct insn *in = &bi->ins[i];
		const uint8_t *code = b->bytes + off;
		size_t len = b->sizes[i];
		uint64_t addr = b->vaddr + off;
		cs_regs rr, ww;
		uint8_t nr = 0, nw = 0;
		int64_t f;

		if (off + len > b->nbytes || !len)
			break;
		off += (uint32_t)len;
		if (c->o.keep && !c->o.keep(c->o.arg, b, i, addr))
			in->out = 1;
		else
			bi->nin++;
		f = timing_index(c->t, code, (unsigned)len);
		in->form = f < 0 ? UINT32_MAX : (uint32_t)f;
		if (f >= 0 && note_form(c, (size_t)f, err))
			return -1;
		if (!cs_disasm_iter(c->cs, &code, &len, &addr, c->ci))
			continue; /* undecodable: no registers, no memory */
		if (i + 1 == b->ninsns) {
			int ind;

			bi->br = (uint8_t)dbtp_branch_kind(c->ci, c->ca, &ind);
			bi->ind = (uint8_t)ind;
			bi->br_pc = b->vaddr + off - b->sizes[i];
		}
		if (cs_regs_access(c->cs, c->ci, rr, &nr, ww, &nw) ==
		    CS_ERR_OK) {
			int idiom =
			    c->arch == DBTP_ARCH_X86_64 && zero_idiom(c->ci);
			uint8_t ar[4];
			unsigned na = addr_regs(c, c->ci, ar);

			for (unsigned k = 0; k < nr && !idiom; k++) {
				uint8_t r = canon(c, rr[k]);

				if (!r || in->nr >= MAX_RW)
					continue;
				for (unsigned a = 0; a < na; a++)
					if (ar[a] == r)
						in->addr |= 1u << in->nr;
				if (r == c->sp)
					in->addr |= 1u << in->nr;
				in->r[in->nr++] = r;
			}
			for (unsigned k = 0; k < nw; k++) {
				uint8_t r = canon(c, ww[k]);

				if (!r || in->nw >= MAX_RW)
					continue;
				for (unsigned a = 0; a < na; a++)
					if (ar[a] == r)
						in->waddr |= 1u << in->nw;
				if (r == c->sp)
					in->waddr |= 1u << in->nw;
				in->w[in->nw++] = r;
			}
		}
		in->call = (uint8_t)cs_insn_group(c->cs, c->ci, CS_GRP_CALL);
		in->stk = (uint8_t)(c->arch == DBTP_ARCH_X86_64 &&
				    stack_op(c->ci->mnemonic) &&
				    strcmp(c->ci->mnemonic, "leave"));
		in->nmem =
		    (uint8_t)(c->arch == DBTP_ARCH_X86_64 ? x86_mems(c->ci)
							  : a64_mems(c->ci));
		if (c->arch == DBTP_ARCH_X86_64)
			in->ren = x86_renaming(c, c->ci, &in->m);
		if (c->arch == DBTP_ARCH_X86_64 &&
		    dbtp_x86_is_rep_string(b->bytes + off - b->sizes[i],
					   b->sizes[i]))
			in->rep = x86_element(c->ci);
		bi->nmem += in->nmem;
	}
	return 0;
}

/* Instruction encodings to time. */
struct forms {
	const uint8_t **f;
	uint8_t *len;
	size_t n, cap;
};

/* Append block @x's instruction encodings to @fs; 0 or -1 (no memory). */
static int add_forms(struct forms *fs, const struct dbtp_block *x)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < x->ninsns; i++) {
		if (off + x->sizes[i] > x->nbytes || !x->sizes[i] ||
		    x->sizes[i] > DBTP_TIMING_MAX_BYTES)
			break;
		if (fs->n == fs->cap) {
			size_t nc = fs->cap ? fs->cap * 2 : 1024;
			const uint8_t **f = realloc(fs->f, nc * sizeof(*f));
			uint8_t *l;

			if (!f)
				return -1;
			fs->f = f;
			l = realloc(fs->len, nc);
			if (!l)
				return -1;
			fs->len = l;
			fs->cap = nc;
		}
		fs->f[fs->n] = x->bytes + off;
		fs->len[fs->n++] = x->sizes[i];
		off += x->sizes[i];
	}
	return 0;
}

int dbtp_cycles_warm(dbtp_timing *t, const dbtp_trace *trace, dbtp_err *err)
{
	struct forms fs = {0};
	int rc = 0;

	for (uint32_t id = 0; id < dbtp_trace_nblocks(trace) && !rc; id++) {
		const struct dbtp_block *x = dbtp_trace_block(trace, id);

		if (x && add_forms(&fs, x))
			rc = nomem(err);
	}
	if (!rc)
		rc = dbtp_timing_resolve(t, fs.f, fs.len, fs.n, err);
	free(fs.f);
	free(fs.len);
	return rc;
}

/*
 * Time the forms of the blocks of @trace not decoded yet (up to its last
 * declared one), or of @b alone, and decode those blocks.
 */
static int prepare(dbtp_cycles *c, const dbtp_trace *trace,
		   const struct dbtp_block *b, dbtp_err *err)
{
	struct forms fs = {0};
	uint32_t lo = b->id, hi = b->id + 1;
	int rc = -1;

	if (trace && dbtp_trace_nblocks(trace) > b->id) {
		lo = c->decoded < b->id ? c->decoded : b->id;
		hi = dbtp_trace_nblocks(trace);
	}
	for (uint32_t id = lo; id < hi; id++) {
		const struct dbtp_block *x =
		    trace && id != b->id ? dbtp_trace_block(trace, id) : b;

		if (!x || (id < c->nb && c->b[id].ins))
			continue;
		if (add_forms(&fs, x))
			goto nomem;
	}
	if (dbtp_timing_resolve(c->t, fs.f, fs.len, fs.n, err))
		goto out;
	for (uint32_t id = lo; id < hi; id++) {
		const struct dbtp_block *x =
		    trace && id != b->id ? dbtp_trace_block(trace, id) : b;

		if (x && decode(c, x, id, err))
			goto out;
	}
	if (trace && hi > c->decoded && lo <= c->decoded)
		c->decoded = hi;
	rc = 0;
	goto out;
nomem:
	nomem(err);
out:
	free(fs.f);
	free(fs.len);
	return rc;
}

/* --- the pipeline -------------------------------------------------------- */

/* Free a pipe's buffers (an ended thread keeps only its counts). */
static void pipe_release(struct pipe *p)
{
	free(p->rob_r);
	free(p->rob_u);
	free(p->issuing);
	free(p->bits);
	free(p->st);
	free(p->mems);
	free(p->tg);
	p->tg = NULL;
	dbtp_cache_free(p->cache);
	p->cache = NULL;
	bpred_free(p->bp);
	p->bp = NULL;
	p->rob_r = NULL;
	p->rob_u = NULL;
	p->issuing = NULL;
	p->bits = NULL;
	p->st = NULL;
	p->mems = NULL;
	p->rob_head = p->rob_n = p->rob_uops = 0;
	p->waiting = 0;
	p->nmems = 0;
	p->has_pend = 0;
}

/* (Re)allocate a pipe's buffers, empty: the pipeline drained. */
static int pipe_bufs(const dbtp_cycles *c, struct pipe *p)
{
	unsigned nres = c->cpu->nres ? c->cpu->nres : 1;

	p->rob_r = calloc(c->cpu->rob, sizeof(*p->rob_r));
	p->rob_u = calloc(c->cpu->rob, sizeof(*p->rob_u));
	p->issuing = calloc(HORIZON, sizeof(*p->issuing));
	p->bits = calloc((size_t)nres * HWORDS, sizeof(*p->bits));
	p->nres = nres;
	p->st = calloc(STORES, sizeof(*p->st));
	p->mems = calloc(MAX_MEMS, sizeof(*p->mems));
	if (!p->rob_r || !p->rob_u || !p->issuing || !p->bits || !p->st ||
	    !p->mems) {
		pipe_release(p);
		return -1;
	}
	if (c->o.front_end &&
	    !(p->tg = calloc(DBTP_CYCLES_FE_TARGETS, sizeof(*p->tg)))) {
		pipe_release(p);
		return -1;
	}
	if (c->o.bpred &&
	    !(p->bp = bpred_new(c->arch == DBTP_ARCH_AARCH64 ? 2 : 0,
				c->o.bpred))) {
		pipe_release(p);
		return -1;
	}
	if (c->o.cache) {
		struct dbtp_cache_opts co;

		dbtp_cache_default_opts(&co);
		if (dbtp_cache_new(&p->cache, &co.l1, &co.l2, NULL)) {
			pipe_release(p);
			return -1;
		}
	}
	p->base = p->d;
	p->sd = p->d;
	p->fe = 0;
	return 0;
}

static struct pipe *pipe_new(const dbtp_cycles *c)
{
	struct pipe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->slots = c->cpu->dispatch;
	if (pipe_bufs(c, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void pipe_free(struct pipe *p)
{
	if (!p)
		return;
	pipe_release(p);
	free(p);
}

/* Move the scheduler's clock to @d: entries issued by then are free. */
static void sched_at(struct pipe *p, uint64_t d)
{
	for (; p->sd < d && p->waiting; p->sd++) {
		uint32_t *n = &p->issuing[(p->sd + 1) % HORIZON];

		p->waiting -= *n;
		*n = 0;
	}
	if (p->sd < d)
		p->sd = d;
}

/* The first cycle after @d at which an entry frees. */
static uint64_t sched_next(struct pipe *p, uint64_t d)
{
	sched_at(p, d);
	while (p->waiting && !p->issuing[(p->sd + 1) % HORIZON])
		p->sd++;
	sched_at(p, p->sd + 1);
	return p->sd;
}

/*
 * Move the bitmaps' window so that it starts at @d.  A word is cleared
 * once the window has passed all its 64 cycles (it is next used a horizon
 * later); stale bits below @d in the current word are never looked at.
 */
static void advance(const dbtp_cycles *c, struct pipe *p, uint64_t d)
{
	unsigned nres = c->cpu->nres;
	uint64_t w0 = p->base / 64, w1 = d / 64;

	if (d <= p->base)
		return;
	if (w1 - w0 >= HWORDS) {
		memset(p->bits, 0, (size_t)nres * HWORDS * sizeof(*p->bits));
	} else {
		for (uint64_t w = w0; w < w1; w++)
			memset(&p->bits[(size_t)(w % HWORDS) * nres], 0,
			       nres * sizeof(*p->bits));
	}
	p->base = d;
}

/* Beyond the horizon a cycle is taken as free and not recorded. */
static inline void set_busy(struct pipe *p, unsigned r, uint64_t cy, int on)
{
	unsigned bit = cy % HORIZON;
	uint64_t *w = &p->bits[(size_t)(bit / 64) * p->nres + r];

	if (cy >= p->base + HORIZON)
		return;
	if (on)
		*w |= 1ull << (bit & 63);
	else
		*w &= ~(1ull << (bit & 63));
}

/* The resources of @mask free at cycle @t (>= the window's start). */
static inline uint64_t free_at(const struct pipe *p, uint64_t mask, uint64_t t)
{
	unsigned bit = t % HORIZON, sh = bit & 63;
	const uint64_t *w = &p->bits[(size_t)(bit / 64) * p->nres];
	uint64_t f = 0;

	if (t >= p->base + HORIZON)
		return mask;
	for (uint64_t m = mask; m; m &= m - 1) {
		unsigned r = (unsigned)__builtin_ctzll(m);

		f |= (~w[r] >> sh & 1) << r;
	}
	return f;
}

/* First cycle >= @t at which resource @r is free. */
static uint64_t free_from(const struct pipe *p, unsigned r, uint64_t t)
{
	while (t < p->base + HORIZON) {
		unsigned bit = t % HORIZON;
		uint64_t w =
		    p->bits[(size_t)(bit / 64) * p->nres + r] >> (bit & 63);

		if (~w & 1)
			break;
		if (w == ~0ull >> (bit & 63))
			t += 64 - (bit & 63);
		else
			t += (unsigned)__builtin_ctzll(~w);
	}
	return t;
}

/*
 * The issue cycle of an instruction ready at @ready using @ft's resources.
 * Each use takes the member of its group free first (ties: the least used
 * so far) and holds it for its cycles, the first free ones from there; the
 * instruction issues when its last use has started.  Reserves the cycles
 * and counts them.
 */
static uint64_t issue(const dbtp_cycles *c, struct pipe *p,
		      const struct dbtp_form_timing *ft, uint64_t ready)
{
	uint64_t t = ready;

	for (unsigned u = 0; u < ft->nuse; u++) {
		uint64_t best = UINT64_MAX, cy,
			 mask = ft->use[u].mask & c->resmask;
		unsigned bp = 0, left;

		/* the members free at @ready first (found without branches
		 * on the bits, which no predictor learns): most often one
		 * is, and then no other can be free sooner */
		for (uint64_t m = free_at(p, mask, ready); m; m &= m - 1) {
			unsigned r = (unsigned)__builtin_ctzll(m);

			if (best == UINT64_MAX || p->c.res[r] < p->c.res[bp]) {
				best = ready;
				bp = r;
			}
		}
		for (uint64_t m = best == UINT64_MAX ? mask : 0; m;
		     m &= m - 1) {
			unsigned r = (unsigned)__builtin_ctzll(m);
			uint64_t s = free_from(p, r, ready);

			if (s < best ||
			    (s == best && p->c.res[r] < p->c.res[bp])) {
				best = s;
				bp = r;
			}
		}
		if (best == UINT64_MAX)
			continue;
		if (best > t)
			t = best;
		/* (cycle @best is free: the first needs no search) */
		if (ft->use[u].cycles)
			set_busy(p, bp, best, 1);
		for (cy = best + 1, left = ft->use[u].cycles; left > 1;
		     left--) {
			cy = free_from(p, bp, cy);
			set_busy(p, bp, cy, 1);
			cy++;
		}
		p->c.res[bp] += ft->use[u].cycles;
	}
	return t;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* When a load of [@a, @a+@n) may execute: after overlapping older stores. */
static uint64_t load_after(const struct pipe *p, uint64_t a, uint32_t n)
{
	uint64_t t = 0;

	if (!n)
		n = 1;
	for (uint64_t g = a >> 3, e = (a + n - 1) >> 3, k = 0; g <= e && k < 8;
	     g++, k++) {
		const struct store *s = &p->st[g % STORES];

		if (s->gran == g + 1 && s->addr < a + n &&
		    a < s->addr + s->size)
			t = max64(t, s->done);
	}
	return t;
}

/*
 * The store a renamed load of @in takes its value from: the latest store
 * to the address, of at least the bytes loaded, made through a renamable
 * operand written as the load's (REN_* above) whose registers have not
 * been written since, or any such store if both address the stack by its
 * pointer (NULL: none).
 */
static const struct store *store_same(const dbtp_cycles *c,
				      const struct pipe *p,
				      const struct insn *in, uint64_t a,
				      uint32_t n)
{
	const struct store *s = &p->st[(a >> 3) % STORES];
	const struct mexpr *x = &s->m, *y = &in->m;

	if (s->gran != (a >> 3) + 1 || s->addr != a || n > s->size || !s->ren)
		return NULL;
	if (x->base == c->sp && y->base == c->sp)
		return s;
	return x->base == y->base && x->index == y->index &&
		       x->scale == y->scale && x->disp == y->disp &&
		       s->vbase == p->regver[y->base] &&
		       s->vix == p->regver[y->index]
		   ? s
		   : NULL;
}

static void store_at(struct pipe *p, const struct insn *in, uint64_t a,
		     uint32_t n, uint64_t done, uint64_t issue)
{
	if (!n)
		n = 1;
	for (uint64_t g = a >> 3, e = (a + n - 1) >> 3, k = 0; g <= e && k < 8;
	     g++, k++) {
		struct store *s = &p->st[g % STORES];

		s->gran = g + 1;
		s->addr = a;
		s->size = n;
		s->done = done;
		s->issue = issue;
		s->ren = in->ren & REN_OP;
		if (s->ren) { /* what store_same() compares */
			s->m = in->m;
			s->vbase = p->regver[in->m.base];
			s->vix = p->regver[in->m.index];
		}
	}
}

/* Run one instruction through the pipeline; returns when it has executed. */
static uint64_t step(dbtp_cycles *c, struct pipe *p, const struct insn *in,
		     const struct dbtp_form_timing *ft, const struct mem *m,
		     unsigned nm, uint64_t *frontier,
		     struct dbtp_cycles_insn *ci)
{
	const struct dbtp_cpu_params *cpu = c->cpu;
	unsigned u = ft->uops ? ft->uops : 1,
		 rob_u = u > cpu->rob ? cpu->rob : u;
	uint64_t d = p->d, d0, ready, regready = 0, memready = 0, t, done, r;
	uint64_t value;	    /* its results are ready */
	unsigned extra = 0; /* cache-miss cycles of its loads */
	uint64_t ren = 0;   /* renamed loads: their values were ready */
	int nren = 0, nld = 0;

	/* reorder buffer */
	d0 = d;
	while (p->rob_uops + rob_u > cpu->rob) {
		d = max64(d, p->rob_r[p->rob_head]);
		p->rob_uops -= p->rob_u[p->rob_head];
		p->rob_head = (p->rob_head + 1) % cpu->rob;
		p->rob_n--;
	}
	p->c.stall[DBTP_STALL_ROB] += d - d0;
	/* scheduler */
	d0 = d;
	sched_at(p, d);
	while (p->waiting >= cpu->sched)
		d = sched_next(p, d);
	p->c.stall[DBTP_STALL_SCHED] += d - d0;
	if (d > p->d)
		p->slots = cpu->dispatch;
	/* dispatch group */
	if (p->slots < (u < cpu->dispatch ? u : cpu->dispatch)) {
		d++;
		p->slots = cpu->dispatch;
	}
	{
		unsigned left = u;

		for (;;) {
			unsigned take = left < p->slots ? left : p->slots;

			p->slots -= take;
			left -= take;
			if (!left)
				break;
			d++;
			p->slots = cpu->dispatch;
		}
	}
	p->d = d;
	advance(c, p, d);
	/* operands; a load-op reads its data operands after the load */
	{
		unsigned adv = 0;

		if ((ft->flags & DBTP_FORM_LOAD) && ft->latency > 1)
			adv = cpu->load_latency < ft->latency - 1u
				  ? cpu->load_latency
				  : ft->latency - 1u;
		for (unsigned k = 0; k < in->nr; k++) {
			uint64_t need = p->reg[in->r[k]];

			if (adv && !((in->addr >> k) & 1))
				need = need > adv ? need - adv : 0;
			regready = max64(regready, need);
		}
	}
	ready = max64(d + 1, regready);
	p->c.stall[DBTP_STALL_REG] += ready - (d + 1);
	for (unsigned k = 0; k < nm; k++) {
		uint64_t w;

		if (p->cache) {
			uint64_t l1 = p->cc.l1_misses, l2 = p->cc.l2_misses;

			dbtp_cache_access(p->cache, m[k].addr, m[k].size,
					  m[k].store, &p->cc);
			if (!m[k].store && p->cc.l2_misses > l2) {
				p->c.l2_misses++;
				p->c.l1_misses++;
				if (c->o.mem_penalty > extra)
					extra = c->o.mem_penalty;
			} else if (!m[k].store && p->cc.l1_misses > l1) {
				p->c.l1_misses++;
				if (c->o.l2_penalty > extra)
					extra = c->o.l2_penalty;
			}
		}
		if (m[k].store) {
			p->c.stores++;
			continue;
		}
		p->c.loads++;
		nld++;
		if (c->o.memren && (in->ren & REN_LD)) {
			const struct store *s = store_same(
			    c, p, in, m[k].addr, m[k].size ? m[k].size : 1);

			if (s) {
				/* forwarded by renaming: no wait, no
				 * memory latency */
				ren = max64(ren, s->issue);
				nren++;
				p->c.renamed++;
				continue;
			}
		}
		if (c->o.alias == DBTP_ALIAS_NONE)
			continue;
		w = c->o.alias == DBTP_ALIAS_ALL
			? p->store_max
			: load_after(p, m[k].addr, m[k].size);
		if (w > d + 1)
			p->c.mem_deps++;
		memready = max64(memready, w);
	}
	if (memready > ready) {
		p->c.stall[DBTP_STALL_MEM] += memready - ready;
		ready = memready;
	}
	t = issue(c, p, ft, ready);
	p->c.stall[DBTP_STALL_PORT] += t - ready;
	done = value = t + ft->latency + extra;
	if (nren && nren == nld) {
		/* every load renamed: the result is the operation's own
		 * latency after the stored values were ready, whenever the
		 * load itself issues (its destination is the store's source
		 * register: a push and pop round takes one cycle on a Zen 4) */
		unsigned op = ft->latency > cpu->load_latency
				  ? ft->latency - cpu->load_latency
				  : 0;

		value = ren + op;
		done = max64(t + 1, value);
	}
	/* an address register written back (push, pop, call, ret, pre- and
	 * post-indexed addressing) is an add: ready the next cycle; with the
	 * front end, the stack engine's: push, pop, call and ret move rsp
	 * two a cycle, at once (on a Zen 4 six pushes and pops take three
	 * cycles) */
	for (unsigned k = 0; k < in->nw; k++) {
		uint8_t w = in->w[k];

		p->reg[w] =
		    (in->waddr >> k) & 1 && !c->o.mca_compat ? t + 1 : value;
		if (in->stk && w == c->sp && c->o.front_end &&
		    !c->o.mca_compat) {
			p->sp_n = t == p->sp_t ? p->sp_n + 1 : 1;
			p->sp_t = t;
			p->reg[w] = p->sp_n >= 2 ? t + 1 : t;
		}
		p->regver[w]++;
	}
	for (unsigned k = 0; k < nm; k++)
		if (m[k].store) {
			if (c->o.alias == DBTP_ALIAS_ADDR || c->o.memren)
				store_at(p, in, m[k].addr, m[k].size, done, t);
			p->store_max = max64(p->store_max, done);
		}
	/* llvm-mca 14 gives a call 100 cycles to execute (not to its
	 * results) */
	r = max64((c->o.mca_compat && in->call ? t + 100 : done) + 1,
		  p->retire);
	*frontier += p->any ? r - p->retire : r + 1;
	p->retire = r;
	p->any = 1;
	/* into the reorder buffer and the scheduler */
	{
		unsigned tail = (p->rob_head + p->rob_n) % cpu->rob;

		p->rob_r[tail] = r;
		p->rob_u[tail] = (uint16_t)rob_u;
		p->rob_n++;
		p->rob_uops += rob_u;
	}
	/* (an issue beyond the horizon is counted at its edge) */
	p->issuing[(t - p->sd < HORIZON ? t : p->sd + HORIZON - 1) % HORIZON]++;
	p->waiting++;
	p->c.insns++;
	p->c.uops += u;
	if (ci) {
		ci->dispatch = d;
		ci->issue = t;
		ci->executed = done;
		ci->retire = r;
	}
	return done;
}

/* Count @nm memory operations that are not timed. */
static void count_mems(struct pipe *p, const struct mem *m, unsigned nm)
{
	for (unsigned k = 0; k < nm; k++) {
		p->c.loads += !m[k].store;
		p->c.stores += m[k].store;
	}
}

/*
 * Predict the branch ending block @bi, followed by a block at @next; 1 if
 * it was mispredicted.  Counted in @p when @count.
 */
static int predict(struct pipe *p, const struct binfo *bi, uint64_t next,
		   int count)
{
	int miss = 0, k = bpred_branch(p->bp, bi->br, bi->ind, bi->br_pc,
				       bi->end, next, &miss);

	if (k < 0)
		return 0;
	if (count) {
		p->c.branches[k]++;
		p->c.mispredicts[k] += (unsigned)miss;
	}
	return miss;
}

/*
 * opts.front_end: after block @bi, whose last instruction dispatched at
 * @bd (UINT64_MAX: not modelled), comes the block at @next.  A taken
 * branch lets it dispatch from the next cycle on, an indirect jump or
 * call to another target than its last DBTP_CYCLES_FE_INDIRECT cycles
 * later; the targets are learnt from every branch, modelled or not.
 */
static void front_end(struct pipe *p, const struct binfo *bi, uint64_t next,
		      uint64_t bd)
{
	const struct insn *li = bi->ninsns ? &bi->ins[bi->ninsns - 1] : NULL;
	/* (a rep string's next element is no branch) */
	int taken = next != bi->end && !(li && li->rep && next == bi->br_pc);
	int changed = 0;

	if (bi->br == DBTP_BR_IND || (bi->br == DBTP_BR_CALL && bi->ind)) {
		struct fe_target *e = &p->tg[(bi->br_pc ^ bi->br_pc >> 12) %
					     DBTP_CYCLES_FE_TARGETS];

		changed = e->pc != bi->br_pc + 1 || e->target != next;
		e->pc = bi->br_pc + 1;
		e->target = next;
	}
	if (taken && bd != UINT64_MAX)
		p->fe = bd + 1 + (changed ? DBTP_CYCLES_FE_INDIRECT : 0);
}

/*
 * Time thread @p's pending block with the memory events collected; @next
 * is the address of the block that follows (@has_next 0: the thread's
 * stream ends).
 */
static void run_block(dbtp_cycles *c, struct pipe *p, int has_next,
		      uint64_t next)
{
	struct binfo *bi = &c->b[p->pend];
	const struct dbtp_form_timing *def = &c->def;
	uint64_t frontier = 0;
	uint32_t mi = 0;
	int match = bi->nmem == p->nmems && !p->extra_mems;
	uint64_t lo = c->o.from, hi = c->o.from + c->o.count;
	/* the predictor learns from every branch, modelled or not */
	int miss = 0, last = 0;
	/* QEMU runs a rep string one element per block: a block that is
	 * just the previous block's last instruction again is a repeat */
	int again = bi->ninsns == 1 && bi->ins[0].rep && p->any_block &&
		    p->last_pc == bi->br_pc;
	uint64_t bd = UINT64_MAX; /* when its last instruction dispatched */

	p->any_block = 1;
	p->last_pc = bi->br_pc;
	if (p->bp && has_next) {
		uint64_t s = p->seq + bi->ninsns - 1;
		const struct insn *li =
		    bi->ninsns ? &bi->ins[bi->ninsns - 1] : NULL;

		/* counted when its branch is modelled */
		last = li && !li->out && !(c->o.count && (s < lo || s >= hi));
		miss = predict(p, bi, next, last);
	}
	if ((c->o.count &&
	     (p->seq + bi->ninsns <= lo || p->seq >= hi || hi < lo)) ||
	    (c->o.keep && !bi->nin)) {
		/* outside the window or the region */
		if (p->tg && has_next)
			front_end(p, bi, next, UINT64_MAX);
		p->fe = 0;
		p->seq += bi->ninsns;
		p->has_pend = 0;
		p->nmems = 0;
		p->extra_mems = 0;
		return;
	}
	if (!match)
		p->c.mem_mismatch++;
	if (p->fe > p->d) {
		/* the front end delivers this block no sooner */
		p->c.stall[DBTP_STALL_FRONTEND] += p->fe - p->d;
		p->d = p->fe;
		p->slots = c->cpu->dispatch;
	}
	p->fe = 0;
	for (uint32_t i = 0; i < bi->ninsns; i++, p->seq++) {
		const struct insn *in = &bi->ins[i];
		const struct dbtp_form_timing *ft =
		    in->form == UINT32_MAX ? def : timing_at(c->t, in->form);
		unsigned nm = 0;
		const struct mem *m = NULL;
		struct dbtp_cycles_insn ci;
		uint64_t done;
		int skip =
		    (c->o.count && (p->seq < lo || p->seq >= hi)) || in->out;

		if (in->nmem && mi < p->nmems) {
			m = &p->mems[mi];
			nm = in->nmem;
			if (nm > p->nmems - mi)
				nm = p->nmems - mi;
			mi += nm;
		}
		if (skip)
			continue;
		if (in->rep) {
			/* fast strings: one element in every
			 * DBTP_CYCLES_STRING_BYTES is timed, as a default
			 * 1-cycle operation; the others retire with it */
			ft = def;
			if (!again) {
				p->rep_bytes = 0;
			} else if ((p->rep_bytes += in->rep) <
				   DBTP_CYCLES_STRING_BYTES) {
				p->c.insns++;
				count_mems(p, m, nm);
				continue;
			} else {
				p->rep_bytes -= DBTP_CYCLES_STRING_BYTES;
			}
		}
		done = step(c, p, in, ft, m, nm, &frontier,
			    c->o.on_insn ? &ci : NULL);
		if (i + 1 == bi->ninsns)
			bd = p->d; /* before a misprediction moves it */
		if (miss && last && i + 1 == bi->ninsns &&
		    done + c->penalty > p->d) {
			/* the front end restarts once the branch has
			 * executed */
			p->c.stall[DBTP_STALL_BRANCH] +=
			    done + c->penalty - p->d;
			p->d = done + c->penalty;
			p->slots = c->cpu->dispatch;
		}
		if (c->o.on_insn) {
			ci.thread = p->num;
			ci.block = p->pend;
			ci.insn = i;
			ci.seq = p->seq;
			c->o.on_insn(c->o.arg, &ci);
		}
	}
	if (p->tg && has_next)
		front_end(p, bi, next, bd);
	/* events beyond the expected ones still count as operations */
	if (mi < p->nmems)
		count_mems(p, p->mems + mi, p->nmems - mi);
	p->c.cycles = p->any ? p->retire + 1 : 0;
	p->c.blocks++;
	c->bs[p->pend].execs++;
	c->bs[p->pend].cycles += frontier;
	p->has_pend = 0;
	p->nmems = 0;
	p->extra_mems = 0;
}

/* --- the stream ---------------------------------------------------------- */

int dbtp_cycles_new(dbtp_cycles **out, dbtp_timing *t, enum dbtp_arch arch,
		    const struct dbtp_cycles_opts *o, dbtp_err *err)
{
	dbtp_cycles *c;
	cs_arch ca;
	cs_mode mode;
	cs_err ce;

	*out = NULL;
	if (dbtp_cs_arch(arch, &ca, &mode))
		return dbtp_err_set(err, EINVAL,
				    "cycle model: unsupported architecture %s",
				    dbtp_arch_name(arch));
	if (o && o->bpred && !bpred_kind_valid(o->bpred))
		return dbtp_err_set(err, EINVAL,
				    "cycle model: no branch predictor %d",
				    o->bpred);
	c = calloc(1, sizeof(*c));
	if (!c)
		return nomem(err);
	c->t = t;
	c->cpu = dbtp_timing_cpu(t);
	c->resmask = c->cpu->nres >= 64 ? ~0ull : (1ull << c->cpu->nres) - 1;
	timing_default(t, &c->def);
	c->arch = arch;
	if (o)
		c->o = *o;
	if (c->o.cache && !c->o.l2_penalty && !c->o.mem_penalty) {
		c->o.l2_penalty = DBTP_CYCLES_L2_PENALTY;
		c->o.mem_penalty = DBTP_CYCLES_MEM_PENALTY;
	}
	c->penalty = c->o.mispredict_penalty
			 ? c->o.mispredict_penalty
			 : dbtp_timing_mispredict_penalty(c->cpu, NULL);
	c->ca = ca;
	ce = cs_open(ca, mode, &c->cs);
	if (ce != CS_ERR_OK) {
		free(c);
		return dbtp_err_set(err, 0, "capstone: %s", cs_strerror(ce));
	}
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	c->ci = cs_malloc(c->cs);
	if (!c->ci) {
		cs_close(&c->cs);
		free(c);
		return nomem(err);
	}
	build_regmap(c);
	*out = c;
	return 0;
}

static struct pipe *thread(dbtp_cycles *c, uint32_t num, dbtp_err *err)
{
	if (c->finished) {
		dbtp_err_set(err, EINVAL, "cycle model: event after the end");
		return NULL;
	}
	if (num >= c->nth) {
		struct pipe **th;

		if (num > 1u << 20) {
			dbtp_err_set(err, EINVAL, "cycle model: thread %u",
				     num);
			return NULL;
		}
		th = realloc(c->th, ((size_t)num + 1) * sizeof(*th));
		if (!th) {
			nomem(err);
			return NULL;
		}
		memset(th + c->nth, 0, (num + 1 - c->nth) * sizeof(*th));
		c->th = th;
		c->nth = num + 1;
	}
	if (!c->th[num]) {
		if (!(c->th[num] = pipe_new(c)))
			nomem(err);
		else
			c->th[num]->num = num;
	} else if (!c->th[num]->rob_r && pipe_bufs(c, c->th[num])) {
		nomem(err); /* events after the thread's exit */
		return NULL;
	}
	return c->th[num];
}

int dbtp_cycles_event(dbtp_cycles *c, const dbtp_trace *trace,
		      const struct dbtp_event *ev, dbtp_err *err)
{
	struct pipe *p;

	switch (ev->type) {
	case DBTP_EV_BLOCK:
		if (!(p = thread(c, ev->thread, err)))
			return -1;
		if (p->has_pend)
			run_block(c, p, 1, ev->block->vaddr);
		if ((ev->block->id >= c->nb || !c->b[ev->block->id].ins) &&
		    prepare(c, trace, ev->block, err))
			return -1;
		p->pend = ev->block->id;
		p->has_pend = 1;
		return 0;
	case DBTP_EV_MEM:
		if (!(p = thread(c, ev->thread, err)))
			return -1;
		if (!p->has_pend)
			return 0;
		if (p->nmems < MAX_MEMS) {
			struct mem *m = &p->mems[p->nmems++];

			m->addr = ev->addr;
			m->size = ev->size;
			m->store = !!(ev->mem_flags & DBTP_ACCESS_STORE);
		} else {
			p->extra_mems++;
		}
		return 0;
	case DBTP_EV_THREAD_EXIT:
		/* the thread's counts stay, its buffers go: many short
		 * threads cost little */
		if (ev->thread < c->nth && c->th[ev->thread]) {
			if (c->th[ev->thread]->has_pend)
				run_block(c, c->th[ev->thread], 0, 0);
			pipe_release(c->th[ev->thread]);
		}
		return 0;
	default:
		return 0;
	}
}

int dbtp_cycles_finish(dbtp_cycles *c, dbtp_err *err)
{
	(void)err;
	if (c->finished)
		return 0;
	for (uint32_t i = 0; i < c->nth; i++)
		if (c->th[i] && c->th[i]->has_pend)
			run_block(c, c->th[i], 0, 0);
	c->finished = 1;
	return 0;
}

uint32_t dbtp_cycles_nthreads(const dbtp_cycles *c)
{
	return c->nth;
}

const struct dbtp_cycles_counts *dbtp_cycles_thread(const dbtp_cycles *c,
						    uint32_t num)
{
	return num < c->nth && c->th[num] ? &c->th[num]->c : NULL;
}

void dbtp_cycles_total(const dbtp_cycles *c, struct dbtp_cycles_counts *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < c->nth; i++) {
		const struct dbtp_cycles_counts *s;

		if (!c->th[i])
			continue;
		s = &c->th[i]->c;
		out->insns += s->insns;
		out->uops += s->uops;
		out->cycles += s->cycles;
		out->blocks += s->blocks;
		out->loads += s->loads;
		out->stores += s->stores;
		out->mem_deps += s->mem_deps;
		out->mem_mismatch += s->mem_mismatch;
		out->renamed += s->renamed;
		out->l1_misses += s->l1_misses;
		out->l2_misses += s->l2_misses;
		for (int k = 0; k < DBTP_BPK_N; k++) {
			out->branches[k] += s->branches[k];
			out->mispredicts[k] += s->mispredicts[k];
		}
		for (int k = 0; k < DBTP_STALL_N; k++)
			out->stall[k] += s->stall[k];
		for (int k = 0; k < DBTP_TIMING_MAX_RES; k++)
			out->res[k] += s->res[k];
	}
}

uint32_t dbtp_cycles_nblocks(const dbtp_cycles *c)
{
	uint32_t n = c->nb;

	while (n && !c->bs[n - 1].execs)
		n--;
	return n;
}

const struct dbtp_cycles_block *dbtp_cycles_block(const dbtp_cycles *c,
						  uint32_t id)
{
	return id < c->nb ? &c->bs[id] : NULL;
}

unsigned dbtp_cycles_mispredict_penalty(const dbtp_cycles *c)
{
	return c->penalty;
}

void dbtp_cycles_forms(const dbtp_cycles *c, uint64_t *forms, uint64_t *untimed)
{
	*forms = c->forms;
	*untimed = c->untimed;
}

void dbtp_cycles_free(dbtp_cycles *c)
{
	if (!c)
		return;
	free(c->seen);
	for (uint32_t i = 0; i < c->nth; i++)
		pipe_free(c->th[i]);
	free(c->th);
	for (uint32_t i = 0; i < c->nb; i++)
		free(c->b[i].ins);
	free(c->b);
	free(c->bs);
	if (c->ci)
		cs_free(c->ci, 1);
	cs_close(&c->cs);
	free(c);
}

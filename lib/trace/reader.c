/* SPDX-License-Identifier: MIT */
/*
 * reader.c - streaming trace reader.
 *
 * Reads one record at a time (frame, CRC, zstd), keeps the block table and
 * the per-thread state, and decodes EVENTS chunks op by op on demand.  Every
 * inconsistency is an error naming the file and the record's byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "dbtp/disasm.h"
#include "trace/format.h"

#define MAX_THREADS (1u << 20)
#define MAX_FILES (1u << 20)
#define MAX_BLOCKS (1u << 28)
#define PAGE_SHIFT 12
#define PAGE_MASK ((1u << PAGE_SHIFT) - 1)

static inline struct dbtp_block *blk(const struct dbtp_trace *t, uint32_t id);

struct link { /* a clone that returned a new thread's id */
	uint64_t tid;
	uint32_t parent;
	uint64_t blocks, insns;
};

struct tstate {
	struct dbtp_thread pub;
	const struct dbtp_block *cur; /* last block executed */
	uint64_t next_seq;
	uint64_t phantoms; /* instructions the plugin counted that never ran */
	int seen;
	/* bbv mode: its interval written at an execve (DBTP_IVL_EXEC), held
	 * until its next one replaces it (the execve failed) or the trace
	 * ends (it did not) */
	uint32_t *held_ids;
	uint64_t *held_execs;
	size_t held_cap;
	uint32_t held_n;
	int held;
};

struct dbtp_trace {
	int fd, own_fd;
	char *name;
	/* input buffering */
	uint8_t *in;
	size_t in_len, in_pos, in_cap;
	int eof;
	uint64_t offset, rec_offset;
	/* current record */
	struct dbtp_buf payload, raw;
	ZSTD_DCtx *dctx;
	struct dbtp_trace_info info;
	/* key/value pairs */
	char **keys, **vals;
	uint32_t nkv;
	/* tables */
	struct dbtp_block **pages; /* stable: pointers stay valid */
	dbtp_disasm *dis;	   /* for phantom_insn(), opened when needed */
	uint32_t nblocks, npages;
	struct dbtp_buf *block_mem; /* storage of sizes and bytes */
	size_t nblock_mem;
	char **files;
	uint32_t nfiles;
	struct tstate *threads;
	uint32_t nthreads, cap_threads;
	struct link *links;
	size_t nlinks;
	int64_t nr_clone, nr_clone3;
	/* decoding an EVENTS chunk */
	int in_chunk;
	struct dbtp_cursor c;
	struct dbtp_pred pred;
	struct tstate *ct;
	uint32_t prev, idx;
	uint64_t run, cblocks, cmems, csys;
	int pending_start, pending_exit, chunk_done;
	/* the last INTERVALS record */
	uint32_t *ivl_ids;
	uint64_t *ivl_execs;
	size_t ivl_cap;
	uint32_t nheld; /* threads holding an interval (struct tstate) */
	/* decoding COUNTS */
	struct dbtp_cursor cc;
	uint64_t count_next, count_left;
	/* decoding CACHE */
	struct dbtp_cursor kc;
	uint64_t cache_left, cache_next;
	int after_end;
	int skip_events; /* dbtp_trace_skip_events() */
};

static inline struct dbtp_block *blk(const struct dbtp_trace *t, uint32_t id)
{
	return &t->pages[id >> PAGE_SHIFT][id & PAGE_MASK];
}

const char *dbtp_mode_name(int mode)
{
	switch (mode) {
	case DBTP_MODE_COUNT:
		return "count";
	case DBTP_MODE_BLOCKS:
		return "blocks";
	case DBTP_MODE_MEM:
		return "mem";
	case DBTP_MODE_BBV:
		return "bbv";
	default:
		return "unknown";
	}
}

static int fail(dbtp_trace *t, dbtp_err *err, const char *what)
{
	return dbtp_err_set(err, EINVAL, "%s: offset %llu: %s", t->name,
			    (unsigned long long)t->rec_offset, what);
}

/* Read exactly @n bytes into @dst; returns bytes read (< n at EOF) or -1. */
static ssize_t read_in(dbtp_trace *t, void *dst, size_t n, dbtp_err *err)
{
	size_t got = 0;

	while (got < n) {
		size_t avail = t->in_len - t->in_pos;

		if (avail) {
			size_t k = avail < n - got ? avail : n - got;

			memcpy((uint8_t *)dst + got, t->in + t->in_pos, k);
			t->in_pos += k;
			got += k;
			continue;
		}
		if (t->eof)
			break;
		if (n - got >= t->in_cap) { /* large: straight to dst */
			ssize_t r = read(t->fd, (uint8_t *)dst + got, n - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return dbtp_err_set(err, errno, "%s: read: %s",
						    t->name, strerror(errno));
			if (r == 0)
				t->eof = 1;
			got += (size_t)r;
			continue;
		}
		{
			ssize_t r = read(t->fd, t->in, t->in_cap);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return dbtp_err_set(err, errno, "%s: read: %s",
						    t->name, strerror(errno));
			if (r == 0)
				t->eof = 1;
			t->in_len = (size_t)r;
			t->in_pos = 0;
		}
	}
	t->offset += got;
	return (ssize_t)got;
}

/*
 * Read the next record into t->raw (decoded payload).  Returns 1 with the
 * type in *type, 0 at a clean end (EOF on a record boundary), -1 on error.
 */
static int read_record(dbtp_trace *t, int *type, dbtp_err *err)
{
	uint8_t fr[DBTP_FRAME_LEN];
	struct dbtp_frame f;
	const char *why;
	ssize_t r;
	char msg[160];

	t->rec_offset = t->offset;
	r = read_in(t, fr, sizeof(fr), err);
	if (r < 0)
		return -1;
	if (r == 0)
		return 0;
	if (r < (ssize_t)sizeof(fr)) {
		snprintf(msg, sizeof(msg),
			 "truncated: record frame cut after %zd of 16 bytes",
			 r);
		return fail(t, err, msg);
	}
	if (dbtp_frame_parse(fr, &f, &why))
		return fail(t, err, why);
	t->payload.len = 0;
	if (dbtp_buf_reserve(&t->payload, f.stored_len + 1))
		return dbtp_err_set(err, ENOMEM, "%s: out of memory", t->name);
	r = read_in(t, t->payload.p, f.stored_len, err);
	if (r < 0)
		return -1;
	if (r < (ssize_t)f.stored_len) {
		snprintf(msg, sizeof(msg),
			 "truncated: record of %u bytes cut after %zd",
			 f.stored_len, r);
		return fail(t, err, msg);
	}
	t->payload.len = f.stored_len;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION /* let fuzzers past CRCs */
	if (!dbtp_frame_crc_ok(fr, t->payload.p, f.stored_len))
		return fail(t, err, "checksum mismatch (CRC-32C)");
#endif
	if (t->skip_events && f.type == DBTP_REC_EVENTS) {
		t->info.records++;
		t->info.bytes = t->offset;
		*type = f.type;
		return 1;
	}
	if (f.flags & DBTP_FLAG_ZSTD) {
		size_t z;

		t->raw.len = 0;
		if (dbtp_buf_reserve(&t->raw, f.raw_len + 1))
			return dbtp_err_set(err, ENOMEM, "%s: out of memory",
					    t->name);
		if (!t->dctx && !(t->dctx = ZSTD_createDCtx()))
			return dbtp_err_set(err, ENOMEM, "%s: out of memory",
					    t->name);
		z = ZSTD_decompressDCtx(t->dctx, t->raw.p, f.raw_len,
					t->payload.p, f.stored_len);
		if (ZSTD_isError(z) || z != f.raw_len)
			return fail(t, err,
				    "zstd payload does not decompress "
				    "to its stated length");
		t->raw.len = z;
	} else {
		struct dbtp_buf tmp = t->raw;

		t->raw = t->payload;
		t->payload = tmp;
	}
	t->info.records++;
	t->info.bytes = t->offset;
	*type = f.type;
	return 1;
}

static int add_kv(dbtp_trace *t, struct dbtp_cursor *c, dbtp_err *err)
{
	while (!dbtp_cursor_done(c)) {
		uint64_t kl = dbtp_get_varint(c);
		const uint8_t *k = dbtp_get_bytes(c, kl);
		uint64_t vl = dbtp_get_varint(c);
		const uint8_t *v = dbtp_get_bytes(c, vl);
		char **nk, **nv;
		uint32_t i;

		if (c->bad)
			return fail(t, err, "malformed key/value pair");
		if (!kl || memchr(k, 0, kl))
			return fail(t, err, "bad key in key/value pair");
		for (i = 0; i < t->nkv; i++)
			if (strlen(t->keys[i]) == kl &&
			    !memcmp(t->keys[i], k, kl))
				break;
		if (i == t->nkv) {
			nk = realloc(t->keys, (t->nkv + 1) * sizeof(*nk));
			if (nk)
				t->keys = nk;
			nv = realloc(t->vals, (t->nkv + 1) * sizeof(*nv));
			if (nv)
				t->vals = nv;
			if (!nk || !nv ||
			    !(t->keys[i] = strndup((char *)k, kl)))
				return dbtp_err_set(err, ENOMEM,
						    "out of memory");
			t->vals[i] = NULL;
			t->nkv++;
		}
		free(t->vals[i]);
		t->vals[i] = malloc(vl + 1);
		if (!t->vals[i])
			return dbtp_err_set(err, ENOMEM, "out of memory");
		memcpy(t->vals[i], v, vl);
		t->vals[i][vl] = 0;
	}
	return 0;
}

static int rec_header(dbtp_trace *t, dbtp_err *err)
{
	struct dbtp_cursor c;
	uint64_t maj, min, feat, arch, mode;

	dbtp_cursor_init(&c, t->raw.p, t->raw.len);
	maj = dbtp_get_varint(&c);
	min = dbtp_get_varint(&c);
	feat = dbtp_get_varint(&c);
	arch = dbtp_get_varint(&c);
	mode = dbtp_get_varint(&c);
	if (c.bad)
		return fail(t, err, "malformed header");
	if (maj != DBTP_FORMAT_MAJOR) {
		char m[96];

		snprintf(m, sizeof(m),
			 "format version %llu.%llu; this reader knows %d.x",
			 (unsigned long long)maj, (unsigned long long)min,
			 DBTP_FORMAT_MAJOR);
		return fail(t, err, m);
	}
	if (feat & ~(uint64_t)DBTP_FEAT_KNOWN)
		return fail(t, err, "unknown feature bits in header");
	if (arch != DBTP_ARCH_X86_64 && arch != DBTP_ARCH_AARCH64)
		return fail(t, err, "unknown guest architecture");
	if (mode > DBTP_MODE_BBV)
		return fail(t, err, "unknown recording mode");
	if ((feat & DBTP_FEAT_CACHE) && mode != DBTP_MODE_BLOCKS)
		return fail(t, err, "cache tallies outside blocks mode");
	t->info.major = (unsigned)maj;
	t->info.minor = (unsigned)min;
	t->info.features = feat;
	t->info.arch = (enum dbtp_arch)arch;
	t->info.mode = (int)mode;
	t->info.cache = (feat & DBTP_FEAT_CACHE) != 0;
	if (mode == DBTP_MODE_BBV) {
		t->info.interval = dbtp_get_varint(&c);
		t->info.rep_per_instruction = (int)dbtp_get_varint(&c);
		if (c.bad || !t->info.interval ||
		    t->info.rep_per_instruction > 1)
			return fail(t, err, "malformed bbv header fields");
	}
	if (arch == DBTP_ARCH_X86_64) {
		t->nr_clone = 56;
		t->nr_clone3 = 435;
	} else {
		t->nr_clone = 220;
		t->nr_clone3 = 435;
	}
	return add_kv(t, &c, err);
}

static int rec_file(dbtp_trace *t, dbtp_err *err)
{
	struct dbtp_cursor c;
	uint64_t id, len;
	const uint8_t *p;
	char **f;

	dbtp_cursor_init(&c, t->raw.p, t->raw.len);
	id = dbtp_get_varint(&c);
	len = dbtp_get_varint(&c);
	p = dbtp_get_bytes(&c, len);
	if (c.bad || !dbtp_cursor_done(&c))
		return fail(t, err, "malformed FILE record");
	if (id != (uint64_t)t->nfiles + 1 || id > MAX_FILES)
		return fail(t, err, "FILE record out of sequence");
	if (memchr(p, 0, len))
		return fail(t, err, "FILE path contains a NUL byte");
	f = realloc(t->files, (t->nfiles + 1) * sizeof(*f));
	if (!f)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	t->files = f;
	if (!(t->files[t->nfiles] = strndup((const char *)p, len)))
		return dbtp_err_set(err, ENOMEM, "out of memory");
	t->nfiles++;
	return 0;
}

/*
 * QEMU 7.2 (x86-64) ends a translation block before an instruction that
 * crosses into the next page, but its plugin interface still lists that
 * instruction, with the bytes read before translation stopped, as the
 * block's last: it is counted on every execution of the block though it
 * runs in the next block.  Such a phantom is the last of several
 * instructions, ends less than 16 bytes before a page boundary (or on
 * it), and its bytes are not a whole instruction while the others are.
 */
static int phantom_insn(struct dbtp_trace *t, const struct dbtp_block *b)
{
	uint32_t last, off = 0;

	if (t->info.arch != DBTP_ARCH_X86_64 || b->ninsns < 2 || !b->sizes ||
	    !b->bytes || ((b->vaddr + b->nbytes - 1) & 4095) < 4096 - 16)
		return 0;
	if (!t->dis && dbtp_disasm_open(&t->dis, DBTP_ARCH_X86_64, NULL))
		return 0;
	for (uint32_t i = 0; i + 1 < b->ninsns; off += b->sizes[i++])
		if (dbtp_disasm_one(t->dis, b->bytes + off, b->sizes[i],
				    b->vaddr + off, NULL, 0) != b->sizes[i])
			return 0;
	last = b->sizes[b->ninsns - 1];
	return dbtp_disasm_one(t->dis, b->bytes + b->nbytes - last, last,
			       b->vaddr + b->nbytes - last, NULL, 0) != last;
}

static int rec_blocks(dbtp_trace *t, dbtp_err *err)
{
	struct dbtp_cursor c;
	uint64_t first, count;
	struct dbtp_buf *mem;
	uint8_t *store;

	dbtp_cursor_init(&c, t->raw.p, t->raw.len);
	first = dbtp_get_varint(&c);
	count = dbtp_get_varint(&c);
	if (c.bad || first != t->nblocks)
		return fail(t, err, "BLOCKS record out of sequence");
	if (count > MAX_BLOCKS - t->nblocks || count > t->raw.len)
		return fail(t, err, "BLOCKS record count out of range");
	/* Keep the record's bytes: sizes and code point into them. */
	mem = realloc(t->block_mem, (t->nblock_mem + 1) * sizeof(*mem));
	if (!mem)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	t->block_mem = mem;
	store = malloc(t->raw.len ? t->raw.len : 1);
	if (!store)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	memcpy(store, t->raw.p, t->raw.len);
	mem[t->nblock_mem].p = store;
	mem[t->nblock_mem].len = mem[t->nblock_mem].cap = t->raw.len;
	t->nblock_mem++;
	dbtp_cursor_init(&c, store, t->raw.len);
	dbtp_get_varint(&c);
	dbtp_get_varint(&c);
	for (uint64_t i = 0; i < count; i++) {
		struct dbtp_block *b;
		uint64_t n, total = 0;

		if ((t->nblocks >> PAGE_SHIFT) >= t->npages) {
			struct dbtp_block **pg =
			    realloc(t->pages, (t->npages + 1) * sizeof(*pg));

			if (!pg)
				return dbtp_err_set(err, ENOMEM,
						    "out of memory");
			t->pages = pg;
			pg[t->npages] = calloc(PAGE_MASK + 1, sizeof(**pg));
			if (!pg[t->npages])
				return dbtp_err_set(err, ENOMEM,
						    "out of memory");
			t->npages++;
		}
		b = blk(t, t->nblocks);

		b->id = t->nblocks;
		b->vaddr = dbtp_get_varint(&c);
		n = dbtp_get_varint(&c);
		if (n > 4096)
			return fail(t, err,
				    "block with over 4096 instructions");
		b->ninsns = (uint32_t)n;
		b->sizes = dbtp_get_bytes(&c, n);
		for (uint64_t k = 0; b->sizes && k < n; k++)
			total += b->sizes[k];
		b->nbytes = (uint32_t)total;
		b->bytes = dbtp_get_bytes(&c, total);
		n = dbtp_get_varint(&c);
		b->offset = dbtp_get_varint(&c);
		if (c.bad)
			return fail(t, err, "malformed block description");
		if (n > t->nfiles)
			return fail(t, err,
				    "block refers to an undeclared file");
		b->file = (uint32_t)n;
		if (phantom_insn(t, b)) {
			b->nbytes -= b->sizes[b->ninsns - 1];
			b->ninsns--;
			b->phantom = 1;
		}
		t->nblocks++;
	}
	if (!dbtp_cursor_done(&c))
		return fail(t, err, "trailing bytes in BLOCKS record");
	return 0;
}

static struct tstate *thread_get(dbtp_trace *t, uint64_t num, dbtp_err *err)
{
	if (num >= MAX_THREADS) {
		fail(t, err, "thread number out of range");
		return NULL;
	}
	if (num >= t->cap_threads) {
		uint32_t cap = t->cap_threads ? t->cap_threads : 16;
		struct tstate *n;

		while (cap <= num)
			cap *= 2;
		n = realloc(t->threads, cap * sizeof(*n));
		if (!n) {
			dbtp_err_set(err, ENOMEM, "out of memory");
			return NULL;
		}
		memset(n + t->cap_threads, 0,
		       (cap - t->cap_threads) * sizeof(*n));
		t->threads = n;
		t->cap_threads = cap;
	}
	if (num >= t->nthreads)
		t->nthreads = (uint32_t)num + 1;
	return &t->threads[num];
}

static void link_child(dbtp_trace *t, struct tstate *child)
{
	for (size_t i = 0; i < t->nlinks; i++) {
		if (t->links[i].tid != child->pub.tid)
			continue;
		child->pub.parent = (int32_t)t->links[i].parent;
		child->pub.created_blocks = t->links[i].blocks;
		child->pub.created_insns = t->links[i].insns;
		t->links[i] = t->links[--t->nlinks];
		return;
	}
}

/* Thread @ts's record says it is thread @num with id @tid: note it the
 * first time (and find its creator), check it after. */
static int thread_seen(dbtp_trace *t, struct tstate *ts, uint64_t num,
		       uint64_t tid, dbtp_err *err)
{
	if (ts->seen)
		return tid == ts->pub.tid
			   ? 0
			   : fail(t, err, "thread id changed between records");
	ts->seen = 1;
	ts->pub.num = (uint32_t)num;
	ts->pub.tid = tid;
	ts->pub.parent = -1;
	link_child(t, ts);
	return 0;
}

static int chunk_begin(dbtp_trace *t, dbtp_err *err)
{
	uint64_t num, seq, tid, first;
	struct tstate *ts;

	if (t->info.mode == DBTP_MODE_COUNT || t->info.mode == DBTP_MODE_BBV)
		return fail(t, err,
			    "EVENTS record in a count- or bbv-mode trace");
	dbtp_cursor_init(&t->c, t->raw.p, t->raw.len);
	num = dbtp_get_varint(&t->c);
	seq = dbtp_get_varint(&t->c);
	tid = dbtp_get_varint(&t->c);
	first = dbtp_get_varint(&t->c);
	if (t->c.bad)
		return fail(t, err, "malformed EVENTS chunk header");
	ts = thread_get(t, num, err);
	if (!ts)
		return -1;
	if (seq != ts->next_seq) {
		char m[128];

		snprintf(m, sizeof(m),
			 "thread %llu: chunk %llu where chunk %llu was due",
			 (unsigned long long)num, (unsigned long long)seq,
			 (unsigned long long)ts->next_seq);
		return fail(t, err, m);
	}
	if (ts->pub.end != DBTP_THREAD_RUNNING)
		return fail(t, err, "events after the thread's exit");
	if (first != ts->pub.blocks)
		return fail(t, err,
			    "chunk's first block index disagrees with "
			    "the thread's count");
	t->pending_start = !ts->seen;
	if (thread_seen(t, ts, num, tid, err))
		return -1;
	ts->next_seq++;
	t->ct = ts;
	dbtp_pred_reset(&t->pred);
	t->prev = DBTP_NO_SUCC;
	t->idx = 0;
	t->run = t->cblocks = t->cmems = t->csys = 0;
	t->pending_exit = 0;
	t->chunk_done = 0;
	t->in_chunk = 1;
	return 0;
}

static int on_clone_ret(dbtp_trace *t, struct tstate *ts, int64_t ret,
			dbtp_err *err)
{
	struct link *l;

	/* The child may already be known (its chunk came first). */
	for (uint32_t i = 0; i < t->nthreads; i++) {
		struct tstate *o = &t->threads[i];

		if (o->seen && o->pub.tid == (uint64_t)ret &&
		    o->pub.parent < 0 && o != ts && o->pub.num != 0) {
			o->pub.parent = (int32_t)ts->pub.num;
			o->pub.created_blocks = ts->pub.blocks;
			o->pub.created_insns = ts->pub.insns;
			return 0;
		}
	}
	l = realloc(t->links, (t->nlinks + 1) * sizeof(*l));
	if (!l)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	t->links = l;
	l[t->nlinks].tid = (uint64_t)ret;
	l[t->nlinks].parent = ts->pub.num;
	l[t->nlinks].blocks = ts->pub.blocks;
	l[t->nlinks].insns = ts->pub.insns;
	t->nlinks++;
	return 0;
}

static inline __attribute__((always_inline)) int
emit_block(dbtp_trace *t, uint32_t id, struct dbtp_event *ev)
{
	struct tstate *ts = t->ct;
	const struct dbtp_block *b = blk(t, id);

	ts->cur = b;
	ts->pub.blocks++;
	ts->pub.insns += b->ninsns;
	ts->phantoms += b->phantom;
	t->cblocks++;
	t->prev = id;
	t->idx = 0;
	ev->type = DBTP_EV_BLOCK;
	ev->thread = ts->pub.num;
	ev->block = b;
	return 1;
}

static int chunk_next(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err);

/* The event of op @v, just read from the current chunk (chunk_next()). */
static __attribute__((noinline)) int
chunk_op(dbtp_trace *t, uint64_t v, struct dbtp_event *ev, dbtp_err *err)
{
	struct tstate *ts = t->ct;
	struct dbtp_cursor *c = &t->c;
	uint64_t val = v >> 3;

	switch (v & 7) {
	case DBTP_OP_RUN:
		if (!val || t->prev == DBTP_NO_SUCC)
			return fail(t, err, "bad RUN op");
		if (val > DBTP_MAX_CHUNK_BLOCKS - t->cblocks)
			return fail(t, err,
				    "chunk holds more blocks than a chunk "
				    "can");
		t->run = val;
		return chunk_next(t, ev, err);
	case DBTP_OP_BLOCK:
		if (val >= t->nblocks)
			return fail(t, err, "event names an undeclared block");
		if (t->prev != DBTP_NO_SUCC &&
		    dbtp_pred_set_succ(&t->pred, t->prev, (uint32_t)val))
			return dbtp_err_set(err, ENOMEM, "out of memory");
		return emit_block(t, (uint32_t)val, ev);
	case DBTP_OP_MEM: {
		struct dbtp_slot *s;
		uint64_t key, guess, addr;
		int fresh;

		if (val > 0x3f || (val & DBTP_MEM_SIZE_SHIFT_MASK) > 6)
			return fail(t, err, "bad memory access info");
		key = (uint64_t)t->prev << 16 |
		      (t->idx > 0xffff ? 0xffff : t->idx);
		t->idx++;
		s = dbtp_pred_slot(&t->pred, key, &fresh);
		if (!s)
			return dbtp_err_set(err, ENOMEM, "out of memory");
		guess =
		    fresh ? t->pred.last_addr : s->last + (uint64_t)s->stride;
		addr = guess + (uint64_t)dbtp_unzigzag(dbtp_get_varint(c));
		if (c->bad)
			return fail(t, err, "truncated MEM op");
		s->stride = fresh ? 0 : (int64_t)(addr - s->last);
		s->last = addr;
		t->pred.last_addr = addr;
		t->cmems++;
		ts->pub.mems++;
		ev->type = DBTP_EV_MEM;
		ev->thread = ts->pub.num;
		ev->block = ts->cur;
		ev->addr = addr;
		ev->size = 1u << (val & DBTP_MEM_SIZE_SHIFT_MASK);
		ev->mem_flags = (uint8_t)(val & ~DBTP_MEM_SIZE_SHIFT_MASK);
		return 1;
	}
	case DBTP_OP_SYSCALL:
		ev->type = DBTP_EV_SYSCALL;
		ev->thread = ts->pub.num;
		ev->block = ts->cur;
		ev->sysno = (int64_t)val;
		for (int i = 0; i < 6; i++)
			ev->args[i] = dbtp_get_varint(c);
		if (c->bad)
			return fail(t, err, "truncated SYSCALL op");
		t->csys++;
		ts->pub.syscalls++;
		return 1;
	case DBTP_OP_SYSRET:
		ev->type = DBTP_EV_SYSRET;
		ev->thread = ts->pub.num;
		ev->block = ts->cur;
		ev->sysno = (int64_t)val;
		ev->ret = dbtp_unzigzag(dbtp_get_varint(c));
		if (c->bad)
			return fail(t, err, "truncated SYSRET op");
		if ((ev->sysno == t->nr_clone || ev->sysno == t->nr_clone3) &&
		    ev->ret > 0 && on_clone_ret(t, ts, ev->ret, err))
			return -1;
		return 1;
	case DBTP_OP_EXIT: {
		uint64_t b = dbtp_get_varint(c), i = dbtp_get_varint(c),
			 m = dbtp_get_varint(c);

		if (c->bad || val > DBTP_EXIT_PROCESS)
			return fail(t, err, "malformed EXIT op");
		if (b != ts->pub.blocks || i != ts->pub.insns + ts->phantoms ||
		    m != ts->pub.mems)
			return fail(t, err,
				    "thread's exit totals disagree "
				    "with its events");
		ts->pub.end = val == DBTP_EXIT_THREAD ? DBTP_THREAD_EXITED
						      : DBTP_THREAD_ENDED;
		t->pending_exit = 1;
		return chunk_next(t, ev, err);
	}
	case DBTP_OP_END: {
		uint64_t m = dbtp_get_varint(c), s = dbtp_get_varint(c);

		if (c->bad || !dbtp_cursor_done(c))
			return fail(t, err, "malformed END op");
		if (val != t->cblocks || m != t->cmems || s != t->csys)
			return fail(t, err,
				    "chunk's counts disagree with its "
				    "events");
		t->chunk_done = 1;
		return chunk_next(t, ev, err);
	}
	default:
		return fail(t, err, "unknown op in EVENTS chunk");
	}
}

/* Decode the next event of the current chunk: 1, 0 when done, -1. */
static int chunk_next(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err)
{
	struct tstate *ts = t->ct;
	struct dbtp_cursor *c = &t->c;
	uint64_t v;

	if (t->pending_start) {
		t->pending_start = 0;
		ev->type = DBTP_EV_THREAD_START;
		ev->thread = ts->pub.num;
		ev->block = NULL;
		return 1;
	}
	if (t->run) {
		uint32_t id = dbtp_pred_succ(&t->pred, t->prev);

		t->run--;
		if (id == DBTP_NO_SUCC)
			return fail(t, err, "RUN op without a prediction");
		return emit_block(t, id, ev);
	}
	if (t->pending_exit) {
		t->pending_exit = 0;
		ev->type = DBTP_EV_THREAD_EXIT;
		ev->thread = ts->pub.num;
		ev->block = ts->cur;
		return 1;
	}
	if (t->chunk_done) {
		t->in_chunk = 0;
		return 0;
	}
	if (dbtp_cursor_done(c))
		return fail(t, err, "EVENTS chunk without END op");
	v = dbtp_get_varint(c);
	if (c->bad)
		return fail(t, err, "malformed op in EVENTS chunk");
	return chunk_op(t, v, ev, err);
}

static int rec_counts(dbtp_trace *t, dbtp_err *err)
{
	uint64_t first, count;

	if (t->info.mode != DBTP_MODE_COUNT)
		return fail(t, err, "COUNTS record outside count mode");
	dbtp_cursor_init(&t->cc, t->raw.p, t->raw.len);
	first = dbtp_get_varint(&t->cc);
	count = dbtp_get_varint(&t->cc);
	if (t->cc.bad || first > t->nblocks || count > t->nblocks - first)
		return fail(t, err,
			    "COUNTS record refers to undeclared blocks");
	t->count_next = first;
	t->count_left = count;
	return 0;
}

static int rec_cache(dbtp_trace *t, dbtp_err *err)
{
	if (!t->info.cache)
		return fail(t, err, "CACHE record without the cache feature");
	dbtp_cursor_init(&t->kc, t->raw.p, t->raw.len);
	t->cache_left = dbtp_get_varint(&t->kc);
	t->cache_next = 0;
	if (t->kc.bad || !t->cache_left || t->cache_left > t->nblocks)
		return fail(t, err, "malformed CACHE record");
	return 0;
}

/* The next entry of the CACHE record being decoded, in @ev. */
static int cache_next(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err)
{
	struct dbtp_cursor *c = &t->kc;
	uint64_t id = t->cache_next + dbtp_get_varint(c);

	memset(ev, 0, sizeof(*ev));
	ev->type = DBTP_EV_CACHE;
	ev->count = dbtp_get_varint(c);
	ev->l1_misses = dbtp_get_varint(c);
	ev->l2_misses = dbtp_get_varint(c);
	ev->unaligned = dbtp_get_varint(c);
	if (c->bad || id < t->cache_next || id >= t->nblocks || !ev->count ||
	    ev->l2_misses > ev->l1_misses || ev->unaligned > ev->count)
		return fail(t, err, "bad entry in CACHE record");
	ev->block = blk(t, (uint32_t)id);
	t->cache_next = id + 1;
	if (!--t->cache_left && !dbtp_cursor_done(c))
		return fail(t, err, "trailing bytes in CACHE record");
	return 1;
}

/* Swap the INTERVALS record just read with the one thread @ts holds. */
static void ivl_swap(dbtp_trace *t, struct tstate *ts)
{
	uint32_t *ids = t->ivl_ids;
	uint64_t *ex = t->ivl_execs;
	size_t cap = t->ivl_cap;

	t->ivl_ids = ts->held_ids;
	t->ivl_execs = ts->held_execs;
	t->ivl_cap = ts->held_cap;
	ts->held_ids = ids;
	ts->held_execs = ex;
	ts->held_cap = cap;
}

/* The interval in t->ivl_* (@n blocks) as thread @num's event @ev: its
 * executions go to the thread's totals. */
static int ivl_event(dbtp_trace *t, struct dbtp_event *ev, uint32_t num,
		     uint64_t index, uint32_t n, unsigned flags)
{
	struct tstate *ts = &t->threads[num];

	for (uint32_t i = 0; i < n; i++) {
		const struct dbtp_block *b = blk(t, t->ivl_ids[i]);

		ts->pub.blocks += t->ivl_execs[i];
		ts->pub.insns += t->ivl_execs[i] * b->ninsns;
		ts->phantoms += t->ivl_execs[i] * b->phantom;
	}
	ts->next_seq = index + 1;
	if (flags & DBTP_IVL_LAST)
		ts->pub.end = flags & DBTP_IVL_EXITED ? DBTP_THREAD_EXITED
						      : DBTP_THREAD_ENDED;
	memset(ev, 0, sizeof(*ev));
	ev->type = DBTP_EV_INTERVAL;
	ev->thread = num;
	ev->ivl_ids = t->ivl_ids;
	ev->ivl_execs = t->ivl_execs;
	ev->nivl = n;
	ev->ivl_index = index;
	ev->ivl_last = (flags & DBTP_IVL_LAST) != 0;
	return 1;
}

/* The first thread's interval held, if any, as event @ev (1), else 0: at
 * the end of the trace, where nothing replaced it. */
static int ivl_release(dbtp_trace *t, struct dbtp_event *ev)
{
	for (uint32_t i = 0; t->nheld && i < t->nthreads; i++) {
		struct tstate *ts = &t->threads[i];

		if (!ts->held)
			continue;
		ts->held = 0;
		t->nheld--;
		ivl_swap(t, ts);
		return ivl_event(t, ev, i, ts->next_seq, ts->held_n, 0);
	}
	return 0;
}

static int rec_intervals(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err)
{
	struct dbtp_cursor c;
	uint64_t num, tid, flags, index, n;
	int64_t id = 0;
	struct tstate *ts;

	if (t->info.mode != DBTP_MODE_BBV)
		return fail(t, err, "INTERVALS record outside bbv mode");
	dbtp_cursor_init(&c, t->raw.p, t->raw.len);
	num = dbtp_get_varint(&c);
	tid = dbtp_get_varint(&c);
	flags = dbtp_get_varint(&c);
	index = dbtp_get_varint(&c);
	n = dbtp_get_varint(&c);
	if (c.bad ||
	    flags > (DBTP_IVL_LAST | DBTP_IVL_EXITED | DBTP_IVL_EXEC) ||
	    ((flags & DBTP_IVL_EXEC) && flags != DBTP_IVL_EXEC) ||
	    n > t->raw.len || n > t->nblocks)
		return fail(t, err, "malformed INTERVALS record");
	ts = thread_get(t, num, err);
	if (!ts)
		return -1;
	if (thread_seen(t, ts, num, tid, err))
		return -1;
	if (ts->pub.end != DBTP_THREAD_RUNNING || index != ts->next_seq)
		return fail(t, err, "INTERVALS record out of sequence");
	if (n > t->ivl_cap) {
		uint32_t *ids = realloc(t->ivl_ids, n * sizeof(*ids));
		uint64_t *ex;

		if (!ids)
			return dbtp_err_set(err, ENOMEM, "out of memory");
		t->ivl_ids = ids;
		ex = realloc(t->ivl_execs, n * sizeof(*ex));
		if (!ex)
			return dbtp_err_set(err, ENOMEM, "out of memory");
		t->ivl_execs = ex;
		t->ivl_cap = n;
	}
	for (uint64_t i = 0; i < n; i++) {
		id += dbtp_unzigzag(dbtp_get_varint(&c));
		t->ivl_execs[i] = dbtp_get_varint(&c);
		if (c.bad || id < 0 || (uint64_t)id >= t->nblocks ||
		    !t->ivl_execs[i])
			return fail(t, err, "bad entry in INTERVALS record");
		t->ivl_ids[i] = (uint32_t)id;
	}
	if (!dbtp_cursor_done(&c))
		return fail(t, err, "trailing bytes in INTERVALS record");
	/* the thread's interval replaces the one it held */
	if (ts->held) {
		ts->held = 0;
		t->nheld--;
	}
	if (!(flags & DBTP_IVL_EXEC))
		return ivl_event(t, ev, (uint32_t)num, index, (uint32_t)n,
				 (unsigned)flags);
	ivl_swap(t, ts);
	ts->held = 1;
	ts->held_n = (uint32_t)n;
	t->nheld++;
	return 0;
}

static int rec_end(dbtp_trace *t, dbtp_err *err)
{
	struct dbtp_cursor c;
	uint64_t total = 0;

	dbtp_cursor_init(&c, t->raw.p, t->raw.len);
	t->info.end_reason = (int)dbtp_get_varint(&c);
	t->info.end_code = dbtp_get_varint(&c);
	t->info.end_threads = dbtp_get_varint(&c);
	t->info.end_blocks = dbtp_get_varint(&c);
	t->info.end_distinct = dbtp_get_varint(&c);
	t->info.end_files = dbtp_get_varint(&c);
	if (c.bad || !dbtp_cursor_done(&c) || t->info.end_reason > 1)
		return fail(t, err, "malformed END record");
	if (t->info.end_distinct != t->nblocks ||
	    t->info.end_files != t->nfiles)
		return fail(t, err,
			    "END record's block or file count disagrees "
			    "with the trace");
	if (t->info.mode != DBTP_MODE_COUNT && !t->skip_events) {
		for (uint32_t i = 0; i < t->nthreads; i++)
			total += t->threads[i].pub.blocks;
		if (t->info.end_threads != t->nthreads ||
		    t->info.end_blocks != total)
			return fail(t, err,
				    "END record's thread or block "
				    "totals disagree with the events");
	}
	t->info.has_end = 1;
	return 0;
}

static int rec_status(dbtp_trace *t, dbtp_err *err)
{
	struct dbtp_cursor c;

	dbtp_cursor_init(&c, t->raw.p, t->raw.len);
	t->info.status_kind = (int)dbtp_get_varint(&c);
	t->info.status_value = dbtp_unzigzag(dbtp_get_varint(&c));
	if (c.bad || t->info.status_kind > DBTP_STATUS_UNKNOWN)
		return fail(t, err, "malformed STATUS record");
	t->info.has_status = 1;
	return add_kv(t, &c, err);
}

/* The next event of any kind: dbtp_trace_next() past its fast path. */
static __attribute__((noinline)) int
next_event(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err)
{
	for (;;) {
		int type, r;

		if (t->in_chunk) {
			r = chunk_next(t, ev, err);
			if (r)
				return r;
		}
		if (t->count_left) {
			ev->type = DBTP_EV_COUNT;
			ev->thread = 0;
			ev->block = blk(t, (uint32_t)t->count_next++);
			ev->count = dbtp_get_varint(&t->cc);
			t->count_left--;
			if (t->cc.bad)
				return fail(t, err, "truncated COUNTS record");
			if (!t->count_left && !dbtp_cursor_done(&t->cc))
				return fail(t, err, "trailing bytes in COUNTS");
			return 1;
		}
		if (t->cache_left)
			return cache_next(t, ev, err);
		r = read_record(t, &type, err);
		if (r == 0 && ivl_release(t, ev))
			return 1;
		if (r <= 0)
			return r;
		if (t->after_end && type != DBTP_REC_STATUS &&
		    type != DBTP_REC_INFO)
			return fail(t, err, "record after the END record");
		switch (type) {
		case DBTP_REC_HEADER:
			return fail(t, err, "second HEADER record");
		case DBTP_REC_INFO: {
			struct dbtp_cursor c;

			dbtp_cursor_init(&c, t->raw.p, t->raw.len);
			r = add_kv(t, &c, err);
			break;
		}
		case DBTP_REC_FILE:
			r = rec_file(t, err);
			break;
		case DBTP_REC_BLOCKS:
			r = rec_blocks(t, err);
			break;
		case DBTP_REC_EVENTS:
			r = t->skip_events ? 0 : chunk_begin(t, err);
			break;
		case DBTP_REC_COUNTS:
			r = rec_counts(t, err);
			break;
		case DBTP_REC_END:
			if (t->nheld)
				return fail(t, err,
					    "END record after an interval cut "
					    "at an execve that nothing "
					    "replaced");
			r = rec_end(t, err);
			t->after_end = 1;
			break;
		case DBTP_REC_STATUS:
			r = rec_status(t, err);
			break;
		case DBTP_REC_CACHE:
			r = t->skip_events ? 0 : rec_cache(t, err);
			break;
		case DBTP_REC_INTERVALS:
			r = rec_intervals(t, ev, err);
			if (r == 1)
				return 1;
			break;
		}
		if (r)
			return -1;
	}
}

int dbtp_trace_next(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err)
{
	/* Within a chunk, as chunk_next() decodes them but without the
	 * frame of next_event(): after a block, the next one a RUN op
	 * predicts (a RUN op's first, or one of its rest) or a BLOCK op
	 * names, most events of a blocks-mode trace; any other op.  What is
	 * not plainly valid goes to next_event(), whose checks report it:
	 * with them inline here (chunk_next() itself) the frame grows and
	 * a blocks-mode profile costs gentest 9% more instructions. */
	if (t->in_chunk && !t->pending_start && !t->pending_exit &&
	    !t->chunk_done) {
		uint32_t prev = t->prev, id;
		struct dbtp_cursor c;
		uint64_t v;
		int r;

		if (t->run) {
			id = dbtp_pred_succ(&t->pred, prev);
			if (id == DBTP_NO_SUCC)
				return next_event(t, ev, err);
			t->run--;
			return emit_block(t, id, ev);
		}
		c = t->c;
		v = dbtp_get_varint(&c);
		if (c.bad)
			return next_event(t, ev, err);
		if ((v & 7) == DBTP_OP_BLOCK && v >> 3 < t->nblocks &&
		    prev < t->pred.cap) {
			id = (uint32_t)(v >> 3);
			t->c = c;
			t->pred.succ[prev].id = id;
			t->pred.succ[prev].gen = t->pred.gen;
			return emit_block(t, id, ev);
		}
		if ((v & 7) == DBTP_OP_RUN && v >> 3 && prev != DBTP_NO_SUCC &&
		    v >> 3 <= DBTP_MAX_CHUNK_BLOCKS - t->cblocks &&
		    (id = dbtp_pred_succ(&t->pred, prev)) != DBTP_NO_SUCC) {
			t->c = c;
			t->run = (v >> 3) - 1;
			return emit_block(t, id, ev);
		}
		t->c = c;
		r = chunk_op(t, v, ev, err);
		if (r) /* else the chunk's end: on to the next record */
			return r;
	}
	return next_event(t, ev, err);
}

int dbtp_trace_open_fd(dbtp_trace **out, int fd, const char *name,
		       dbtp_err *err)
{
	dbtp_trace *t = calloc(1, sizeof(*t));
	uint8_t magic[DBTP_MAGIC_LEN];
	ssize_t r;
	int type;

	*out = NULL;
	if (!t || !(t->name = strdup(name)) || !(t->in = malloc(1 << 16))) {
		if (t)
			free(t->name);
		free(t);
		return dbtp_err_set(err, ENOMEM, "out of memory");
	}
	t->fd = fd;
	t->in_cap = 1 << 16;
	r = read_in(t, magic, sizeof(magic), err);
	if (r < 0)
		goto bad;
	if (r < (ssize_t)sizeof(magic) ||
	    memcmp(magic, DBTP_MAGIC, sizeof(magic))) {
		dbtp_err_set(err, EINVAL, "%s: not a dbtprof trace (bad magic)",
			     name);
		goto bad;
	}
	r = read_record(t, &type, err);
	if (r == 0)
		fail(t, err, "no header record");
	if (r <= 0)
		goto bad;
	if (type != DBTP_REC_HEADER) {
		fail(t, err, "first record is not a HEADER");
		goto bad;
	}
	if (rec_header(t, err))
		goto bad;
	*out = t;
	return 0;
bad:
	t->fd = -1;
	dbtp_trace_close(t);
	return -1;
}

int dbtp_trace_open(dbtp_trace **out, const char *path, dbtp_err *err)
{
	int fd;

	*out = NULL;
	if (!strcmp(path, "-"))
		return dbtp_trace_open_fd(out, 0, "(stdin)", err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dbtp_err_set(err, errno, "%s: %s", path,
				    strerror(errno));
	if (dbtp_trace_open_fd(out, fd, path, err)) {
		close(fd);
		return -1;
	}
	(*out)->own_fd = 1;
	return 0;
}

void dbtp_trace_close(dbtp_trace *t)
{
	if (!t)
		return;
	if (t->own_fd && t->fd >= 0)
		close(t->fd);
	dbtp_disasm_close(t->dis);
	for (uint32_t i = 0; i < t->nkv; i++) {
		free(t->keys[i]);
		free(t->vals[i]);
	}
	free(t->keys);
	free(t->vals);
	for (size_t i = 0; i < t->nblock_mem; i++)
		free(t->block_mem[i].p);
	free(t->block_mem);
	for (uint32_t i = 0; i < t->nfiles; i++)
		free(t->files[i]);
	free(t->files);
	for (uint32_t i = 0; i < t->npages; i++)
		free(t->pages[i]);
	free(t->pages);
	for (uint32_t i = 0; i < t->nthreads; i++) {
		free(t->threads[i].held_ids);
		free(t->threads[i].held_execs);
	}
	free(t->threads);
	free(t->links);
	free(t->ivl_ids);
	free(t->ivl_execs);
	dbtp_pred_free(&t->pred);
	dbtp_buf_free(&t->payload);
	dbtp_buf_free(&t->raw);
	ZSTD_freeDCtx(t->dctx);
	free(t->in);
	free(t->name);
	free(t);
}

const struct dbtp_trace_info *dbtp_trace_info(const dbtp_trace *t)
{
	return &t->info;
}

const char *dbtp_trace_get(const dbtp_trace *t, const char *key)
{
	for (uint32_t i = 0; i < t->nkv; i++)
		if (!strcmp(t->keys[i], key))
			return t->vals[i];
	return NULL;
}

int dbtp_trace_kv(const dbtp_trace *t, uint32_t i, const char **key,
		  const char **val)
{
	if (i >= t->nkv)
		return -1;
	*key = t->keys[i];
	*val = t->vals[i];
	return 0;
}

void dbtp_trace_skip_events(dbtp_trace *t)
{
	t->skip_events = 1;
}

uint32_t dbtp_trace_nblocks(const dbtp_trace *t)
{
	return t->nblocks;
}

const struct dbtp_block *dbtp_trace_block(const dbtp_trace *t, uint32_t id)
{
	return id < t->nblocks ? blk(t, id) : NULL;
}

const char *dbtp_trace_file(const dbtp_trace *t, uint32_t id)
{
	return id >= 1 && id <= t->nfiles ? t->files[id - 1] : NULL;
}

uint32_t dbtp_trace_nfiles(const dbtp_trace *t)
{
	return t->nfiles;
}

uint32_t dbtp_trace_nthreads(const dbtp_trace *t)
{
	return t->nthreads;
}

const struct dbtp_thread *dbtp_trace_thread(const dbtp_trace *t, uint32_t num)
{
	return num < t->nthreads && t->threads[num].seen ? &t->threads[num].pub
							 : NULL;
}

uint64_t dbtp_trace_offset(const dbtp_trace *t)
{
	return t->rec_offset;
}

/* SPDX-License-Identifier: MIT */
/*
 * plugin.c - libdbtp-qemu.so, the TCG plugin that records a guest's execution
 * into the dbtprof trace format (doc/trace-format.md).
 *
 *   qemu-x86_64 -plugin libdbtp-qemu.so,out=run.trace,mode=blocks PROGRAM
 *
 * Arguments: out=PATH or fd=N (where to write), mode=count|blocks|mem,
 * chunk=WORDS (events buffered per thread before a chunk is cut),
 * zstd=LEVEL (0 stores chunks uncompressed), flush=MS (when the writer has
 * been idle that long, and before a thread's last chunk, it encodes what
 * threads have published; 0 = only full buffers; default 20), cache=on
 * (blocks mode: the memory accesses are recorded as in mem mode, but the
 * writer thread runs them through each thread's L1 and L2 model
 * (dbtp/cache.h) and writes, at the end, per block tallies of operations,
 * misses and unaligned accesses instead of the accesses).
 *
 * The plugin collects and never analyses.  Hot path: a guest thread appends
 * one 64-bit word per executed block (plus two per memory access in mem mode
 * and with cache=on) to a buffer of its own - no locks, no atomics.  A full
 * buffer is handed to a writer thread, which encodes it (predicted
 * successors, address strides), compresses it with zstd and writes it, on
 * another core.  Block descriptions are written before the first chunk that
 * uses them.
 *
 * bbv mode (mode=bbv, interval=N, rep=iter|insn, single=BLOCKS) counts in
 * the callback itself while the guest has one thread: the callback's
 * argument points at the block's own counter, so counting is an increment,
 * an add and a compare on memory no other thread touches.  When the guest
 * creates a thread, or translates more than `single` distinct blocks
 * (default 1048576; 0: never count this way), the counts so far become the
 * first thread's and every thread goes over to the blocks-mode buffers,
 * counted by the writer thread.
 *
 * Threads are found through thread-local storage, not the vCPU index, which
 * QEMU recycles when guest threads exit.  Children of a guest fork() are not
 * recorded (their copy of the plugin goes quiet and closes the output); the
 * parent counts them (INFO forks).  At an execve, which would replace QEMU,
 * the calling thread's events are written out first.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "dbtp/bbv.h"
#include "dbtp/cache.h"
#include "qemu_api.h"
#include "trace/format.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define DEFAULT_CHUNK (1u << 16) /* words */
#define SLACK 8192		 /* words: room for one block's accesses */
#define MAX_QUEUED 16		 /* chunks waiting for the writer */
#define EXIT_EXEC (-2)		 /* an item's exit_reason: at an execve */
#define PAGE_BLOCKS DBTP_NI_PAGE
#define MAX_PAGES (1u << 16)

/* --- block table ------------------------------------------------------- */

struct blk {
	struct dbtp_block d; /* id, vaddr, ninsns, nbytes, sizes, bytes */
	struct blk *hnext;   /* dedup hash chain */
};

static struct blk *blk_pages[MAX_PAGES];
static uint16_t *ni_pages[MAX_PAGES]; /* ninsns by id, for the encoder */
/* Count mode: executions by id, dense so hot counters share cache lines. */
static uint64_t *cnt_pages[MAX_PAGES];
/*
 * Count mode once the guest has created a thread: QEMU 7.2's inline adds
 * are not atomic, so threads running a block at once would lose counts.
 * The plugin resets itself (every translation dropped) and counts from then
 * on by callback into counters of each thread's own, added to the shared
 * ones when the thread ends (cthr_fold()) or, for those still running, at
 * exit.
 */
struct cthr {
	uint64_t *pages[MAX_PAGES];
	struct cthr *next;
};
static int cnt_multi;
static struct cthr *cthrs; /* the live threads' (cthr_fold()) */
/* Count mode: executions by id already written, in COUNTS records put out
 * at an execve (counts_at_exec()); a later record holds what came after. */
static uint64_t *cnt_done[MAX_PAGES];
static pthread_mutex_t cthr_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread struct cthr *tls_cthr
    __attribute__((tls_model("initial-exec")));
static qemu_plugin_id_t plugin_id;
/* cache=on: by id, the writer thread's: the tally, and with cache_sample
 * the block's executions past its threads' first phases and those of them
 * whose accesses were tallied, and apart the tally and executions of
 * those first phases (all tallied: tally_of()). */
struct blk_cache {
	struct dbtp_cache_tally tally, first;
	uint64_t execs, tallied, fexecs;
};
static struct blk_cache *bc_pages[MAX_PAGES];
static uint32_t nblk;	      /* ids handed out */
static struct blk **blk_hash; /* by vaddr and content */
static size_t blk_hash_size;
static pthread_mutex_t blk_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dbtp_buf pend_blocks; /* BLOCKS payload body, not yet written */
static uint32_t pend_first;	    /* first id in pend_blocks */
static struct dbtp_buf pend_files;  /* FILE records, framed, not yet written */

static inline struct blk *blk_get(uint32_t id)
{
	return &blk_pages[id / PAGE_BLOCKS][id % PAGE_BLOCKS];
}

/* --- mapped files (host address -> file, offset) ----------------------- */

struct map {
	uintptr_t start, end;
	uint64_t offset;
	uint32_t file; /* 0 until a block comes from it */
	char *path;
};

static struct map *maps;
static size_t nmaps;
static char **files; /* files[id - 1] */
static uint32_t nfiles;

/* --- threads ----------------------------------------------------------- */

struct thr {
	/* Hot: the guest thread's, on a cache line of their own. */
	_Alignas(64) uint64_t *buf;
	size_t n, limit, hard;
	uint64_t sleft; /* cache_sample: executions left in its phase */
	int live;	/* ... whether the phase records accesses */
	int cycled;	/* ... past its first phase without */
	/* Rare: slow path, freeze, identity. */
	_Alignas(64) pthread_mutex_t mu;
	int frozen;
	uint32_t num;
	uint64_t tid;
	struct thr *next;
	struct thr *anext, *aprev; /* the threads alive; under thr_mu */
	int queued; /* its buffers waiting in the writer queue; under q_mu */
	uint64_t handed;  /* buffers it queued; under q_mu */
	uint64_t buf_gen; /* handed when buf became its buffer */
	/* bbv mode: the current interval, counted by the writer thread from
	 * the same raw words as blocks mode (so the guest thread only stores).
	 */
	_Alignas(64) uint64_t *bx; /* executions by block id */
	uint32_t *btouch;	   /* ids in order of first execution */
	size_t bcap, bntouch;
	uint64_t binsns, bend, bindex;
	const struct dbtp_block *bprev; /* the thread's previous block */
	int bdone;			/* its last interval is out */
	/* The writer thread's: apart, or every chunk it encodes would pull
	 * the hot line away from the guest thread. */
	_Alignas(64) struct dbtp_enc enc;
	uint64_t *taken_buf; /* buffer the writer has encoded a prefix of */
	size_t taken;	     /* words of it already encoded */
	dbtp_cache *cache;   /* cache=on: the thread's L1 and L2 */
	uint32_t cblk;	     /* ... and its current block + 1 (0: none yet) */
	struct dbtp_cache_tally *ctally; /* ... that block's, once looked up */
	/* cache_sample: accesses left to warm the caches with; whether the
	 * thread ran a block without accesses since; whether the current
	 * block's accesses are tallied */
	uint64_t cwarm;
	int cgap, ccount;
};

static __thread struct thr *tls_thr __attribute__((tls_model("initial-exec")));
static struct thr *threads, *alive;
static uint32_t nthreads;
static pthread_mutex_t thr_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *scratch; /* where frozen threads write, read by no one */

/* --- writer queue ------------------------------------------------------ */

/* Where another thread was when a thread ended: its buffer and the words
 * it had published in it. */
struct cut {
	struct thr *t;
	uint64_t *buf;
	size_t n;
};

struct item {
	struct thr *t;
	uint64_t *words;
	size_t n;
	int exit_reason;
	int interval;	  /* words: flags, then (id, executions) pairs */
	struct cut *cuts; /* a thread's end: the others' events before it */
	uint32_t ncuts;
	struct item *next;
};

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_space = PTHREAD_COND_INITIALIZER;
static struct item *q_head, *q_tail, *q_free_items;
static uint64_t *free_bufs[MAX_QUEUED + 2];
static int nfree_bufs, q_len, q_stop;
static pthread_t writer;
static int writer_started;

/* --- settings and state ------------------------------------------------ */

static int mode = DBTP_MODE_BLOCKS;
static int cache_on; /* cache=on */
/*
 * cache_sample=N > 1: each thread's accesses are recorded in one phase of
 * cache_phase of its block executions in N, its first phase included; in
 * the others the memory callback returns at once (what costs is recording
 * and simulating an access, not QEMU's call).  A block execution is of
 * the phase it began in.  After a phase without, a thread's first
 * sample_warm accesses (a tenth of a phase, at most SAMPLE_WARM) only warm
 * its caches.  A block's tally is scaled by its executions over those it
 * was tallied in.  Each thread's phases are its own, so that its tallies
 * do not depend on how the threads interleave; its first phase without
 * is longer by a share of it that its number gives, so that threads that
 * run alike do not sample the same parts of their work.  The first phase,
 * whose caches start cold as the thread's do, is not scaled (tally_of()).
 */
static uint64_t sample_n = 1, sample_phase = 10000000, sample_warm;
#define SAMPLE_WARM (UINT64_C(1) << 20)
/* on a block id in a BLOCK word: its execution recorded its accesses; in
 * its thread's first phase */
#define SAMPLED_FLAG (UINT64_C(1) << 40)
#define FIRST_FLAG (UINT64_C(1) << 41)
static long flush_ms = 20; /* idle writer encodes what threads published */
static uint64_t bbv_interval = 100000000; /* bbv mode */
static int bbv_rep_insn;		  /* bbv mode: rep counted once */
static size_t chunk_words = DEFAULT_CHUNK;
static int zlevel = 1;
static int out_fd = -1;
static int write_errno;	 /* first output error; later writes are skipped */
static int forked_child; /* we are a guest fork()'s copy: stay quiet */
static enum dbtp_arch arch;
static int64_t nr_exit, nr_exit_group, nr_clone, nr_fork, nr_vfork;
static int64_t nr_execve, nr_execveat;
static uint64_t nforks; /* processes the guest started (not recorded) */
static int exit_seen;
static uint64_t exit_code;
static ZSTD_CCtx *zctx;
/* Output staging, encoder scratch: the writer thread's (or the exit
 * callback's, once the writer has stopped) and nobody else's. */
static struct dbtp_buf obuf, ebuf;
static uint32_t info_key[256]; /* cache of mem_info(), by raw meminfo */
static uint8_t info_val[256], info_valid[256];
static uint32_t pend_count;    /* entries in pend_blocks */
static uint32_t nblk_declared; /* blocks whose BLOCKS record is out */
/* The program of the guest's latest execve, as the guest named it ("" if
 * unread), for the INFO record written before the execve proceeds. */
static char exec_path[4096];

/*
 * bbv mode while the guest has one thread: executions in the interval by
 * block id, one 64-bit counter each (untouched pages stay unallocated); a
 * block's callback gets the address of its counter with its instruction
 * count in the top 16 bits.  A program with more blocks than this goes
 * over to the per-thread buffers.
 */
#define ONE_MAX_BLOCKS (1u << 20)
#define ONE_PTR_MASK ((UINT64_C(1) << 48) - 1)
static uint32_t one_max = ONE_MAX_BLOCKS; /* single=N */
static uint64_t *one_execs;
static struct {
	_Alignas(64) uint64_t insns, end; /* as thr's binsns and bend */
	uint64_t *prev;			  /* the previous block's counter */
	int slow;	 /* multi or frozen: not counting here */
	int multi;	 /* threads count through their buffers */
	int frozen;	 /* ended, or a fork()'s child */
	uint32_t *touch; /* ids in order of first execution */
	size_t ntouch;
} one;
static int nalive; /* threads started and not exited */

static void complain(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void complain(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	msg[n] = 0;
	qemu_plugin_outs(msg);
	if (write(2, msg, (size_t)n) < 0) {
		/* nothing more to be done */
	}
}

/* Write all of @p, remembering the first error.  Writer thread or exit. */
static void out_write(const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len && !write_errno) {
		ssize_t w = write(out_fd, b, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			write_errno = errno;
			complain("dbtprof plugin: writing the trace: %s",
				 strerror(errno));
			return;
		}
		b += w;
		len -= (size_t)w;
	}
}

static void out_flush(void)
{
	out_write(obuf.p, obuf.len);
	obuf.len = 0;
}

/* --- files ------------------------------------------------------------- */

static uint32_t file_id(const char *path)
{
	struct dbtp_buf rec = {0};
	char **f;
	uint32_t id;
	size_t len = strlen(path);

	for (uint32_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i], path))
			return i + 1;
	f = realloc(files, (nfiles + 1) * sizeof(*files));
	if (!f)
		return 0;
	files = f;
	files[nfiles] = strdup(path);
	if (!files[nfiles])
		return 0;
	id = ++nfiles;
	/* A guest thread runs this (translation, under blk_mu): its own
	 * buffer, never the writer thread's ebuf. */
	if (!dbtp_buf_reserve(&rec, len + 20)) {
		dbtp_put_varint(&rec, id);
		dbtp_put_varint(&rec, len);
		dbtp_put_bytes(&rec, path, len);
		if (dbtp_frame_put(&pend_files, DBTP_REC_FILE, rec.p, rec.len,
				   NULL, 0))
			id = 0;
	} else {
		id = 0;
	}
	dbtp_buf_free(&rec);
	return id;
}

static void maps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 256];

	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	nmaps = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		char perms[8];
		int pos = 0;
		struct map *m;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end,
			   perms, &off, &pos) < 4 ||
		    !pos)
			continue;
		if (perms[2] != 'x' && perms[0] != 'r')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (!line[pos])
			continue; /* anonymous */
		m = realloc(maps, (nmaps + 1) * sizeof(*maps));
		if (!m)
			break;
		maps = m;
		maps[nmaps].start = start;
		maps[nmaps].end = end;
		maps[nmaps].offset = off;
		maps[nmaps].file = 0;
		maps[nmaps].path = strdup(line + pos);
		if (!maps[nmaps].path)
			break;
		nmaps++;
	}
	fclose(f);
}

static struct map *maps_find(uintptr_t a)
{
	for (size_t i = 0; i < nmaps; i++)
		if (a >= maps[i].start && a < maps[i].end)
			return &maps[i];
	return NULL;
}

/*
 * Where the code at host address @h came from: file id (0 = anonymous).
 * A file is declared in the trace only once code is found in it, so the
 * trace names no file the guest did not run (QEMU's own libraries, say).
 */
static uint32_t locate(uintptr_t h, uint64_t *offset)
{
	struct map *m = h ? maps_find(h) : NULL;

	if (!m && h) {
		maps_load();
		m = maps_find(h);
	}
	if (!m)
		return 0;
	*offset = h - m->start + m->offset;
	if (!m->file)
		m->file = file_id(m->path);
	return m->file;
}

/* --- translation ------------------------------------------------------- */

static uint64_t blk_hash_of(uint64_t vaddr, const uint8_t *b, size_t n)
{
	uint64_t h = vaddr * 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int blk_hash_grow(void)
{
	size_t n = blk_hash_size ? blk_hash_size * 2 : 4096;
	struct blk **h = calloc(n, sizeof(*h));

	if (!h)
		return -1;
	for (size_t i = 0; i < blk_hash_size; i++) {
		struct blk *b = blk_hash[i], *next;

		for (; b; b = next) {
			size_t k =
			    blk_hash_of(b->d.vaddr, b->d.bytes, b->d.nbytes) &
			    (n - 1);

			next = b->hnext;
			b->hnext = h[k];
			h[k] = b;
		}
	}
	free(blk_hash);
	blk_hash = h;
	blk_hash_size = n;
	return 0;
}

/*
 * Id of the block at @vaddr with these instructions: an existing one when
 * QEMU translates the same code again, else a new one whose description is
 * queued for the output.  Returns UINT32_MAX when out of memory.
 */
static uint32_t blk_intern(struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), nbytes = 0;
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb), off = 0;
	uint8_t code[4096], sizes[512];
	struct blk *b, **slot;
	uint8_t *mem;
	uint32_t id, file;

	if (n > sizeof(sizes))
		return UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		size_t sz = qemu_plugin_insn_size(insn);

		if (sz > 255 || nbytes + sz > sizeof(code))
			return UINT32_MAX;
		memcpy(code + nbytes, qemu_plugin_insn_data(insn), sz);
		sizes[i] = (uint8_t)sz;
		nbytes += sz;
	}
	if (blk_hash_size < 2 * (size_t)nblk + 2 && blk_hash_grow())
		return UINT32_MAX;
	slot =
	    &blk_hash[blk_hash_of(vaddr, code, nbytes) & (blk_hash_size - 1)];
	for (b = *slot; b; b = b->hnext)
		if (b->d.vaddr == vaddr && b->d.ninsns == n &&
		    b->d.nbytes == nbytes && !memcmp(b->d.bytes, code, nbytes))
			return b->d.id;
	if (nblk >= (uint64_t)MAX_PAGES * PAGE_BLOCKS)
		return UINT32_MAX;
	id = nblk;
	if (!blk_pages[id / PAGE_BLOCKS]) {
		blk_pages[id / PAGE_BLOCKS] =
		    calloc(PAGE_BLOCKS, sizeof(struct blk));
		ni_pages[id / PAGE_BLOCKS] =
		    calloc(PAGE_BLOCKS, sizeof(uint16_t));
		if (!blk_pages[id / PAGE_BLOCKS] || !ni_pages[id / PAGE_BLOCKS])
			return UINT32_MAX;
		if (mode == DBTP_MODE_COUNT &&
		    !(cnt_pages[id / PAGE_BLOCKS] =
			  calloc(PAGE_BLOCKS, sizeof(uint64_t))))
			return UINT32_MAX;
	}
	b = blk_get(id);
	/* Sizes then code, one allocation; d.sizes and d.bytes point in. */
	mem = malloc(n + nbytes + 1);
	if (!mem)
		return UINT32_MAX;
	memcpy(mem, sizes, n);
	memcpy(mem + n, code, nbytes);
	b->d.sizes = mem;
	b->d.bytes = mem + n;
	b->d.id = id;
	b->d.vaddr = vaddr;
	b->d.ninsns = (uint32_t)n;
	b->d.nbytes = (uint32_t)nbytes;
	ni_pages[id / PAGE_BLOCKS][id % PAGE_BLOCKS] = (uint16_t)n;
	b->hnext = *slot;
	*slot = b;
	file = n ? locate((uintptr_t)qemu_plugin_insn_haddr(
			      qemu_plugin_tb_get_insn(tb, 0)),
			  &off)
		 : 0;
	if (!file)
		off = vaddr;
	if (dbtp_buf_reserve(&pend_blocks, 40 + n + nbytes))
		return UINT32_MAX;
	if (!pend_blocks.len)
		pend_first = id;
	pend_count++;
	dbtp_put_varint(&pend_blocks, vaddr);
	dbtp_put_varint(&pend_blocks, n);
	dbtp_put_bytes(&pend_blocks, sizes, n);
	dbtp_put_bytes(&pend_blocks, code, nbytes);
	dbtp_put_varint(&pend_blocks, file);
	dbtp_put_varint(&pend_blocks, off);
	nblk++;
	return id;
}

static void on_tb_exec(unsigned int vcpu, void *udata);
static void on_tb_exec_count(unsigned int vcpu, void *udata);
static void on_tb_exec_sampled(unsigned int vcpu, void *udata);
static void on_mem_sampled(unsigned int vcpu, qemu_plugin_meminfo_t info,
			   uint64_t vaddr, void *udata);
static void on_tb_exec_one(unsigned int vcpu, void *udata);
static void on_tb_exec_one_prev(unsigned int vcpu, void *udata);
static void on_tb_exec_one_rep(unsigned int vcpu, void *udata);
static void one_to_threads(void);
static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata);

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint32_t bid;

	(void)id;
	if (forked_child)
		return;
	pthread_mutex_lock(&blk_mu);
	bid = blk_intern(tb);
	pthread_mutex_unlock(&blk_mu);
	if (bid == UINT32_MAX) {
		complain("dbtprof plugin: out of memory for the block table at "
			 "guest address 0x%" PRIx64,
			 qemu_plugin_tb_vaddr(tb));
		abort();
	}
	if (mode == DBTP_MODE_COUNT) {
		if (cnt_multi)
			qemu_plugin_register_vcpu_tb_exec_cb(
			    tb, on_tb_exec_count, QEMU_PLUGIN_CB_NO_REGS,
			    (void *)(uintptr_t)bid);
		else
			qemu_plugin_register_vcpu_tb_exec_inline(
			    tb, QEMU_PLUGIN_INLINE_ADD_U64,
			    &cnt_pages[bid / PAGE_BLOCKS][bid % PAGE_BLOCKS],
			    1);
		return;
	}
	if (mode == DBTP_MODE_BBV && !one.multi && bid >= one_max)
		one_to_threads();
	if (mode == DBTP_MODE_BBV && !one.multi) {
		const struct dbtp_block *b = &blk_get(bid)->d;
		int rep = bbv_rep_insn && arch == DBTP_ARCH_X86_64 &&
			  b->ninsns == 1 &&
			  dbtp_x86_is_rep_string(b->bytes, b->nbytes);

		qemu_plugin_register_vcpu_tb_exec_cb(
		    tb,
		    rep		   ? on_tb_exec_one_rep
		    : bbv_rep_insn ? on_tb_exec_one_prev
				   : on_tb_exec_one,
		    QEMU_PLUGIN_CB_NO_REGS,
		    (void *)((uintptr_t)(one_execs + bid) | (uintptr_t)b->ninsns
								<< 48));
		return;
	}
	qemu_plugin_register_vcpu_tb_exec_cb(
	    tb, sample_n > 1 ? on_tb_exec_sampled : on_tb_exec,
	    QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)bid);
	if (mode == DBTP_MODE_MEM || cache_on) {
		size_t n = qemu_plugin_tb_n_insns(tb);

		for (size_t i = 0; i < n; i++)
			qemu_plugin_register_vcpu_mem_cb(
			    qemu_plugin_tb_get_insn(tb, i),
			    sample_n > 1 ? on_mem_sampled : on_mem,
			    QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
	}
}

/* --- the writer thread ------------------------------------------------- */

/* Move queued FILE and BLOCKS records to the output buffer. */
static void take_pending_blocks(void)
{
	struct dbtp_buf files_now, blocks_now;
	uint32_t first, count;

	pthread_mutex_lock(&blk_mu);
	files_now = pend_files;
	blocks_now = pend_blocks;
	first = pend_first;
	count = pend_count;
	memset(&pend_files, 0, sizeof(pend_files));
	memset(&pend_blocks, 0, sizeof(pend_blocks));
	pend_count = 0;
	pthread_mutex_unlock(&blk_mu);
	if (files_now.len && !dbtp_buf_reserve(&obuf, files_now.len))
		dbtp_put_bytes(&obuf, files_now.p, files_now.len);
	if (blocks_now.len) {
		ebuf.len = 0;
		if (!dbtp_buf_reserve(&ebuf, blocks_now.len + 20)) {
			dbtp_put_varint(&ebuf, first);
			dbtp_put_varint(&ebuf, count);
			dbtp_put_bytes(&ebuf, blocks_now.p, blocks_now.len);
			if (dbtp_frame_put(&obuf, DBTP_REC_BLOCKS, ebuf.p,
					   ebuf.len, zctx, zlevel))
				write_errno =
				    write_errno ? write_errno : ENOMEM;
			else
				nblk_declared = first + count;
		} else {
			write_errno = write_errno ? write_errno : ENOMEM;
		}
	}
	dbtp_buf_free(&files_now);
	dbtp_buf_free(&blocks_now);
}

/* Raw meminfo to the trace's info byte; QEMU's encoding is its own. */
static uint64_t mem_info(uint64_t raw)
{
	qemu_plugin_meminfo_t m = (qemu_plugin_meminfo_t)raw;
	unsigned int h = (m * 0x9e3779b1u) >> 24;
	uint64_t v;

	if (info_valid[h] && info_key[h] == m)
		return info_val[h];
	v = qemu_plugin_mem_size_shift(m) & DBTP_MEM_SIZE_SHIFT_MASK;

	if (qemu_plugin_mem_is_store(m))
		v |= DBTP_MEM_STORE;
	if (qemu_plugin_mem_is_sign_extended(m))
		v |= DBTP_MEM_SIGNED;
	if (qemu_plugin_mem_is_big_endian(m))
		v |= DBTP_MEM_BIG_ENDIAN;
	info_key[h] = m;
	info_val[h] = (uint8_t)v;
	info_valid[h] = 1;
	return v;
}

static void bbv_count(struct thr *t, const uint64_t *w, size_t n,
		      int exit_reason);

/* cache=on: block @id's state, its page allocated at its first use.  Writer
 * thread. */
static struct blk_cache *bc_at(uint32_t id)
{
	struct blk_cache **pg = &bc_pages[id / PAGE_BLOCKS];

	if (!*pg && !(*pg = calloc(PAGE_BLOCKS, sizeof(**pg)))) {
		complain("dbtprof plugin: out of memory");
		abort();
	}
	return &(*pg)[id % PAGE_BLOCKS];
}

/*
 * cache_sample: count the execution of BLOCK word @word of thread @t for its
 * block (whose tally becomes the thread's), and whether its accesses are
 * tallied: in the thread's first phase (FIRST_FLAG), all, apart; else if
 * recorded (SAMPLED_FLAG) and past the warm-up that follows a phase
 * without.  Returns the word without the flags.  Writer thread.
 */
static uint64_t sample_block(struct thr *t, uint64_t word)
{
	const uint64_t flag = SAMPLED_FLAG << 2, first = FIRST_FLAG << 2;
	struct blk_cache *bc = bc_at((uint32_t)(word >> 2));

	t->ccount = 0;
	if (word & first) {
		t->ctally = &bc->first;
		bc->fexecs++;
		t->ccount = 1;
		return word & ~(flag | first);
	}
	t->ctally = &bc->tally;
	bc->execs++;
	if (!(word & flag)) {
		t->cgap = 1;
		return word;
	}
	if (t->cgap) {
		t->cgap = 0;
		t->cwarm = sample_warm;
	}
	if (!t->cwarm) {
		t->ccount = 1;
		bc->tallied++;
	}
	return word & ~flag;
}

/*
 * cache=on: run the memory accesses among words [from, n) of thread @t's
 * buffer @w through the thread's caches, tally them for their block, and
 * move the other words down over them.  Returns the new end.  Writer
 * thread; the words below the guest thread's n are no longer its.
 */
static size_t cache_range(struct thr *t, uint64_t *w, size_t from, size_t n)
{
	size_t k = from;

	if (!t->cache && dbtp_cache_new_default(&t->cache, NULL)) {
		complain("dbtprof plugin: out of memory for thread %u's caches",
			 t->num);
		abort();
	}
	for (size_t i = from; i < n;) {
		uint64_t word = w[i], info, a;
		size_t len = 2; /* DBTP_RAW_SYSRET */

		switch (word & 3) {
		case DBTP_RAW_BLOCK:
			t->ctally = NULL; /* looked up at its first access */
			if (sample_n > 1)
				w[i] = word = sample_block(t, word);
			t->cblk = (uint32_t)(word >> 2) + 1;
			len = 1;
			break;
		case DBTP_RAW_MEM: {
			struct dbtp_cache_tally warm;

			a = w[i + 1];
			i += 2;
			if (!t->cblk) /* as gentest's model: none before */
				continue;
			if (!t->ctally)
				t->ctally = &bc_at(t->cblk - 1)->tally;
			info = mem_info(word >> 2);
			dbtp_cache_tally(
			    t->cache, a,
			    1u << (info & DBTP_MEM_SIZE_SHIFT_MASK),
			    (info & DBTP_MEM_STORE) != 0,
			    sample_n == 1 || t->ccount ? t->ctally : &warm);
			if (sample_n > 1 && !t->ccount && t->cwarm)
				t->cwarm--;
			continue;
		}
		case DBTP_RAW_SYSCALL:
			len = 7;
			break;
		}
		memmove(w + k, w + i, len * sizeof(*w));
		k += len;
		i += len;
	}
	return k;
}

/* Encode words [from, n) of thread @t's buffer @w as one chunk. */
static void write_range(struct thr *t, uint64_t *w, size_t from, size_t n,
			int exit_reason)
{
	take_pending_blocks();
	if (mode == DBTP_MODE_BBV) {
		bbv_count(t, w + from, n - from, exit_reason);
		out_flush();
		return;
	}
	if (exit_reason == EXIT_EXEC)
		exit_reason = -1;
	if (from == n && exit_reason < 0)
		return;
	if (mode == DBTP_MODE_MEM) {
		/* Translate QEMU's meminfo into ours, in place. */
		for (size_t i = from; i < n; i++) {
			uint64_t word = w[i];

			switch (word & 3) {
			case DBTP_RAW_MEM:
				w[i] = mem_info(word >> 2) << 2 | DBTP_RAW_MEM;
				i++;
				break;
			case DBTP_RAW_SYSCALL:
				i += 6;
				break;
			case DBTP_RAW_SYSRET:
				i++;
				break;
			}
		}
	}
	if (cache_on) {
		n = cache_range(t, w, from, n);
		if (exit_reason >= 0) {
			dbtp_cache_free(t->cache);
			t->cache = NULL;
		}
	}
	ebuf.len = 0;
	if (dbtp_enc_chunk(
		&t->enc, t->num, t->tid, w + from, n - from, exit_reason,
		(struct dbtp_ninsns){(uint16_t *const *)ni_pages}, &ebuf) ||
	    dbtp_frame_put(&obuf, DBTP_REC_EVENTS, ebuf.p, ebuf.len, zctx,
			   zlevel)) {
		complain("dbtprof plugin: cannot encode a chunk of thread %u",
			 t->num);
		write_errno = write_errno ? write_errno : ENOMEM;
	}
	out_flush();
}

static void bbv_write_counted(struct thr *t, const uint64_t *w, size_t n);

static void write_chunk(struct item *it)
{
	struct thr *t = it->t;
	size_t from = 0;

	if (it->interval) {
		bbv_write_counted(t, it->words, it->n);
		return;
	}
	if (t->taken_buf == it->words) { /* a prefix went out already */
		from = t->taken;
		t->taken_buf = NULL;
	}
	write_range(t, it->words, from, it->n, it->exit_reason);
}

/*
 * The writer has been idle for flush_ms: encode what each running thread
 * has published since, so a guest killed now loses at most that much and a
 * live reader sees slow programs progress.  A thread with buffers still
 * queued is left alone (its chunks must stay in order).  The words below
 * t->n never change until the buffer is handed over, and only this thread
 * recycles buffers, so they are read outside the locks.
 */
/* Encode thread @t's words in buffer @w that it published up to @n and
 * that are not out yet. */
static void write_upto(struct thr *t, uint64_t *w, size_t n)
{
	if (t->taken_buf != w) {
		t->taken_buf = w;
		t->taken = 0;
	}
	if (n > t->taken) {
		write_range(t, w, t->taken, n, -1);
		t->taken = n;
	}
}

/* What every thread has published; @idle (the writer found nothing queued):
 * stop if something is queued now. */
static void flush_idle(int idle)
{
	struct thr *head;

	/* Trylocks only: a thread handing over a buffer holds its mutex while
	 * it waits for this thread to make room in the queue.  The list only
	 * grows at its head and is never freed. */
	if (pthread_mutex_trylock(&thr_mu))
		return;
	head = threads;
	pthread_mutex_unlock(&thr_mu);
	for (struct thr *t = head; t; t = t->next) {
		uint64_t *w;
		size_t n;
		int busy, queued;

		if (pthread_mutex_trylock(&t->mu))
			continue;
		w = t->buf;
		n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
		/* After reading n: words a thread published once another
		 * thread's end had cut it (thr_end()) come after that end's
		 * item is queued, which then goes first, cuts and all. */
		pthread_mutex_lock(&q_mu);
		busy = t->frozen || t->queued;
		queued = q_head != NULL;
		pthread_mutex_unlock(&q_mu);
		pthread_mutex_unlock(&t->mu);
		if (queued && idle)
			return;
		if (!busy)
			write_upto(t, w, n);
	}
}

/*
 * Encode each cut thread's words up to where it was when another thread
 * ended (thr_end()).  Its buffers queued before that end went out already;
 * the cut's buffer is still its own or queued after, so its words up to
 * there are there and never change.
 */
static void write_cuts(const struct cut *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		write_upto(c[i].t, c[i].buf, c[i].n);
}

static void write_exec_note(void);
static void bbv_exec_others(struct thr *self);

static void *writer_main(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&q_mu);
	for (;;) {
		struct item *it;

		while (!q_head && !q_stop) {
			struct timespec ts;

			if (flush_ms <= 0) {
				pthread_cond_wait(&q_nonempty, &q_mu);
				continue;
			}
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += flush_ms % 1000 * 1000000;
			ts.tv_sec += flush_ms / 1000 + ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			if (pthread_cond_timedwait(&q_nonempty, &q_mu, &ts) ==
				ETIMEDOUT &&
			    !q_head && !q_stop) {
				pthread_mutex_unlock(&q_mu);
				flush_idle(1);
				pthread_mutex_lock(&q_mu);
			}
		}
		if (!q_head)
			break;
		it = q_head;
		q_head = it->next;
		if (!q_head)
			q_tail = NULL;
		pthread_mutex_unlock(&q_mu);
		/* A thread ended: first what the others had published then
		 * (thr_end()), or without those cuts what they have now; so
		 * too at an execve, all that is left of them if it succeeds */
		if ((it->exit_reason == DBTP_EXIT_THREAD ||
		     it->exit_reason == EXIT_EXEC) &&
		    flush_ms > 0) {
			if (it->cuts)
				write_cuts(it->cuts, it->ncuts);
			else
				flush_idle(0);
		}
		free(it->cuts);
		write_chunk(it);
		if (it->exit_reason == EXIT_EXEC) {
			if (mode == DBTP_MODE_BBV)
				bbv_exec_others(it->t);
			write_exec_note();
		}
		pthread_mutex_lock(&q_mu);
		if (it->interval)
			free(it->words);
		else if (nfree_bufs <
			 (int)(sizeof(free_bufs) / sizeof(*free_bufs)))
			free_bufs[nfree_bufs++] = it->words;
		else
			free(it->words);
		it->next = q_free_items;
		q_free_items = it;
		it->t->queued--;
		q_len--;
		pthread_cond_broadcast(&q_space);
	}
	pthread_mutex_unlock(&q_mu);
	return NULL;
}

static uint64_t *buf_alloc(void)
{
	return malloc((chunk_words + SLACK + 64) * sizeof(uint64_t));
}

/*
 * Note in @c (room for every thread alive) where each was: its buffer and
 * the words it had published there.  Under q_mu and thr_mu, so no thread
 * queues a buffer meanwhile: one whose buffer is still the one it had when
 * it last queued one (buf_gen) is cut there; one that queued its buffer
 * and has not yet taken the next has all it did in the queue before the
 * end being queued, and none is cut.  Returns the cuts.
 */
static uint32_t cuts_note(struct cut *c)
{
	uint32_t k = 0;

	for (struct thr *o = alive; o; o = o->anext)
		if (__atomic_load_n(&o->buf_gen, __ATOMIC_ACQUIRE) == o->handed)
			c[k++] = (struct cut){
			    o, o->buf,
			    __atomic_load_n(&o->n, __ATOMIC_ACQUIRE)};
	return k;
}

/*
 * Queue thread @t's @n raw @words for the writer, waiting while the queue
 * is full; *@fresh gets a recycled buffer, or NULL.  With @fresh NULL, the
 * words are an interval counted by the guest thread (the writer frees them).
 * With @cuts (room for every thread alive but @t, which is off that list;
 * under thr_mu), where they were, for the writer to put first
 * (cuts_note()).
 */
static void queue_put(struct thr *t, uint64_t *words, size_t n, int exit_reason,
		      struct cut *cuts, uint64_t **fresh)
{
	struct item *it;

	pthread_mutex_lock(&q_mu);
	while (q_len >= MAX_QUEUED)
		pthread_cond_wait(&q_space, &q_mu);
	it = q_free_items;
	if (it)
		q_free_items = it->next;
	else
		it = malloc(sizeof(*it));
	if (!it) {
		pthread_mutex_unlock(&q_mu);
		complain("dbtprof plugin: out of memory for the writer queue");
		abort();
	}
	if (fresh) {
		*fresh = nfree_bufs ? free_bufs[--nfree_bufs] : NULL;
		t->handed++;
	}
	it->interval = !fresh;
	it->t = t;
	it->words = words;
	it->n = n;
	it->exit_reason = exit_reason;
	it->cuts = cuts;
	it->ncuts = cuts ? cuts_note(cuts) : 0;
	it->next = NULL;
	if (q_tail)
		q_tail->next = it;
	else
		q_head = it;
	q_tail = it;
	q_len++;
	t->queued++;
	pthread_cond_signal(&q_nonempty);
	pthread_mutex_unlock(&q_mu);
}

/* Hand @t's buffer to the writer (with @cuts, queue_put()) and give @t an
 * empty one.  Under t->mu. */
static void hand_over(struct thr *t, int exit_reason, struct cut *cuts)
{
	uint64_t *fresh;

	queue_put(t, t->buf, t->n, exit_reason, cuts, &fresh);
	if (!fresh && !(fresh = buf_alloc())) {
		complain("dbtprof plugin: out of memory for event buffers");
		abort();
	}
	t->buf = fresh;
	t->n = 0;
	__atomic_store_n(&t->buf_gen, t->handed, __ATOMIC_RELEASE);
}

/* --- threads ----------------------------------------------------------- */

static struct thr *thr_new(void)
{
	struct thr *t = aligned_alloc(64, sizeof(*t));

	if (t)
		memset(t, 0, sizeof(*t));
	if (!t || !(t->buf = buf_alloc())) {
		complain("dbtprof plugin: out of memory for a new thread");
		abort();
	}
	pthread_mutex_init(&t->mu, NULL);
	t->tid = (uint64_t)syscall(SYS_gettid);
	t->limit = chunk_words;
	t->hard = chunk_words + SLACK;
	t->bend = bbv_interval;
	if (forked_child) {
		t->frozen = 1;
		t->limit = t->hard = 0;
	} else {
		pthread_mutex_lock(&thr_mu);
		t->num = nthreads++;
		nalive++;
		t->next = threads;
		threads = t;
		t->anext = alive;
		if (alive)
			alive->aprev = t;
		alive = t;
		pthread_mutex_unlock(&thr_mu);
	}
	tls_thr = t;
	return t;
}

/*
 * Thread @t ends (its exit syscall, or the process's end): hand over what it
 * recorded with the end marked, and freeze it so any later callback goes to
 * the slow path and writes nowhere that is read.  At its exit syscall, with
 * where every other thread was then (cuts_note()), which the writer puts
 * first, so that the trace shows where its parent was when it ended
 * (gentest's joins), not where the parent got to before the writer came to
 * it: QEMU clears the thread's tid right after this and wakes a parent
 * waiting to join it, and a parent that was not waiting runs on.
 */
static void one_close(struct thr *t, unsigned flags);

static void thr_end(struct thr *t, int reason)
{
	int exiting = reason == DBTP_EXIT_THREAD && !forked_child;
	struct cut *c = NULL;

	if (mode == DBTP_MODE_BBV && !one.multi) {
		if (!one.frozen)
			one_close(t, DBTP_IVL_LAST | (reason == DBTP_EXIT_THREAD
							  ? DBTP_IVL_EXITED
							  : 0));
		one.frozen = one.slow = 1;
		return;
	}
	if (exiting)
		pthread_mutex_lock(&thr_mu);
	pthread_mutex_lock(&t->mu);
	if (!t->frozen) {
		if (exiting) {
			uint32_t k = 0;

			if (t->anext)
				t->anext->aprev = t->aprev;
			if (t->aprev)
				t->aprev->anext = t->anext;
			else
				alive = t->anext;
			for (struct thr *o = alive; o; o = o->anext)
				k++;
			/* none, or out of memory: the writer cuts the others
			 * where it finds them */
			if (flush_ms > 0 && k)
				c = malloc(k * sizeof(*c));
		}
		t->frozen = 1;
		__atomic_store_n(&t->limit, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->hard, 0, __ATOMIC_RELAXED);
		hand_over(t, reason, c);
	}
	pthread_mutex_unlock(&t->mu);
	if (exiting)
		pthread_mutex_unlock(&thr_mu);
}

/* Buffer full, or the thread frozen at process exit: the rare path. */
static __attribute__((noinline)) void thr_slow(struct thr *t)
{
	pthread_mutex_lock(&t->mu);
	if (t->frozen) {
		t->buf = scratch;
		t->n = 0;
	} else {
		hand_over(t, -1, NULL);
	}
	pthread_mutex_unlock(&t->mu);
}

static inline struct thr *thr_cur(void)
{
	struct thr *t = tls_thr;

	return likely(t) ? t : thr_new();
}

static void on_tb_exec(unsigned int vcpu, void *udata)
{
	struct thr *t = thr_cur();

	(void)vcpu;
	if (unlikely(t->n >= __atomic_load_n(&t->limit, __ATOMIC_RELAXED)))
		thr_slow(t);
	t->buf[t->n] = (uint64_t)(uintptr_t)udata << 2 | DBTP_RAW_BLOCK;
	/* Release: the writer may read the words below n at any time. */
	__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
}

static void on_tb_exec_sampled(unsigned int vcpu, void *udata)
{
	struct thr *t = thr_cur();

	if (unlikely(!t->sleft)) { /* the thread's next phase (first: live) */
		uint64_t off = sample_phase * (sample_n - 1);

		t->live = !t->live;
		t->sleft = t->live ? sample_phase : off;
		/* its first phase without longer by a share of that, by its
		 * number: threads that run alike sample apart */
		if (!t->live && !t->cycled) {
			t->cycled = 1;
			t->sleft +=
			    (uint64_t)((unsigned __int128)off *
					   ((t->num * 2654435761u) >> 16) >>
				       16);
		}
	}
	t->sleft--;
	on_tb_exec(vcpu, (void *)((uintptr_t)udata |
				  (!t->live    ? 0
				   : t->cycled ? SAMPLED_FLAG
					       : SAMPLED_FLAG | FIRST_FLAG)));
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	struct thr *t = thr_cur();
	size_t n = t->n;

	(void)vcpu;
	(void)udata;
	t->buf[n] = (uint64_t)info << 2 | DBTP_RAW_MEM;
	t->buf[n + 1] = vaddr;
	__atomic_store_n(&t->n, n + 2, __ATOMIC_RELEASE);
	if (unlikely(t->n >= __atomic_load_n(&t->hard, __ATOMIC_RELAXED)))
		thr_slow(t);
}

static void on_mem_sampled(unsigned int vcpu, qemu_plugin_meminfo_t info,
			   uint64_t vaddr, void *udata)
{
	if (thr_cur()->live)
		on_mem(vcpu, info, vaddr, udata);
}

/* --- bbv mode ----------------------------------------------------------- */

/* Start thread @t's next INTERVALS record, of @n blocks, in ebuf.  Writer
 * thread. */
static int bbv_begin(struct thr *t, unsigned flags, size_t n)
{
	ebuf.len = 0;
	if (dbtp_buf_reserve(&ebuf, 50 + n * 20)) {
		write_errno = write_errno ? write_errno : ENOMEM;
		return -1;
	}
	dbtp_put_varint(&ebuf, t->num);
	dbtp_put_varint(&ebuf, t->tid);
	dbtp_put_varint(&ebuf, flags);
	dbtp_put_varint(&ebuf, t->bindex);
	dbtp_put_varint(&ebuf, n);
	t->bindex += !(flags & DBTP_IVL_EXEC);
	return 0;
}

/* Add (block, executions) to the record begun; ids as zigzag deltas.  An
 * interval at an execve (@exec) is not yet the thread's: a later one may
 * replace it. */
static void bbv_put(struct thr *t, uint32_t *prev, uint32_t id, uint64_t x,
		    int exec)
{
	dbtp_put_varint(&ebuf, dbtp_zigzag((int64_t)id - *prev));
	dbtp_put_varint(&ebuf, x);
	if (!exec)
		t->enc.blocks += x;
	*prev = id;
}

static void bbv_end(void)
{
	if (dbtp_frame_put(&obuf, DBTP_REC_INTERVALS, ebuf.p, ebuf.len, zctx,
			   zlevel))
		write_errno = write_errno ? write_errno : ENOMEM;
}

/*
 * Close thread @t's interval: an INTERVALS record of (block, executions)
 * in order of first execution.  At an execve (DBTP_IVL_EXEC) the interval
 * stays open.  Writer thread.
 */
static void bbv_close(struct thr *t, unsigned flags)
{
	int exec = (flags & DBTP_IVL_EXEC) != 0;
	uint32_t prev = 0;

	if (bbv_begin(t, flags, t->bntouch))
		return;
	for (size_t i = 0; i < t->bntouch; i++) {
		bbv_put(t, &prev, t->btouch[i], t->bx[t->btouch[i]], exec);
		if (!exec)
			t->bx[t->btouch[i]] = 0;
	}
	if (!exec)
		t->bntouch = 0;
	bbv_end();
}

/* An interval counted in the guest's one thread: @w is flags, then
 * (id, executions) pairs up to @n words.  Writer thread. */
static void bbv_write_counted(struct thr *t, const uint64_t *w, size_t n)
{
	uint32_t prev = 0;

	take_pending_blocks();
	if (bbv_begin(t, (unsigned)w[0], (n - 1) / 2))
		return;
	for (size_t i = 1; i + 1 < n; i += 2)
		bbv_put(t, &prev, (uint32_t)w[i], w[i + 1],
			(w[0] & DBTP_IVL_EXEC) != 0);
	bbv_end();
	out_flush();
}

static int bbv_grow(struct thr *t, uint32_t id)
{
	/* Start large: calloc'd memory is zero pages until touched. */
	size_t cap = t->bcap ? t->bcap : 1u << 16;
	uint64_t *bx;
	uint32_t *bt;

	while (cap <= id)
		cap *= 2;
	bx = realloc(t->bx, cap * sizeof(*bx));
	if (!bx)
		return -1;
	memset(bx + t->bcap, 0, (cap - t->bcap) * sizeof(*bx));
	t->bx = bx;
	bt = realloc(t->btouch, cap * sizeof(*bt));
	if (!bt)
		return -1;
	t->btouch = bt;
	t->bcap = cap;
	return 0;
}

/*
 * Count @n raw block words of thread @t into its interval, closing
 * intervals by the rule dbtp_bbv_block_insns() states for traces.  Writer
 * thread.  @exit_reason >= 0 ends the thread: its last interval follows.
 */
static void bbv_count(struct thr *t, const uint64_t *w, size_t n,
		      int exit_reason)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t id = (uint32_t)(w[i] >> 2), ni;
		const struct dbtp_block *b;

		if ((w[i] & 3) != DBTP_RAW_BLOCK)
			continue;
		if (id >= t->bcap && bbv_grow(t, id)) {
			write_errno = write_errno ? write_errno : ENOMEM;
			return;
		}
		b = &blk_get(id)->d;
		ni = dbtp_bbv_block_insns(t->bprev, b, arch, bbv_rep_insn);
		t->bprev = b;
		if (!ni && b->ninsns)
			continue; /* a rep repeat pass, counted once */
		if (!t->bx[id]++)
			t->btouch[t->bntouch++] = id;
		t->binsns += ni;
		if (dbtp_interval_cut(&t->bend, t->binsns, bbv_interval))
			bbv_close(t, 0);
	}
	if (exit_reason == EXIT_EXEC)
		bbv_close(t, DBTP_IVL_EXEC);
	if (exit_reason >= 0) {
		bbv_close(t, DBTP_IVL_LAST | (exit_reason == DBTP_EXIT_THREAD
						  ? DBTP_IVL_EXITED
						  : 0));
		t->bdone = 1;
	}
}

/*
 * bbv mode, thread @self's execve: the other threads' intervals so far
 * too (DBTP_IVL_EXEC), with what they had published (counted before),
 * all that is left of them if it succeeds.  Writer thread.
 */
static void bbv_exec_others(struct thr *self)
{
	for (struct thr *t = __atomic_load_n(&threads, __ATOMIC_ACQUIRE); t;
	     t = t->next)
		if (t != self && !t->bdone && t->bntouch)
			bbv_close(t, DBTP_IVL_EXEC);
	out_flush();
}

/* --- bbv mode, one guest thread ---------------------------------------- */

/* The counter a callback argument points at. */
static inline uint64_t *one_ctr(uintptr_t arg)
{
	return (uint64_t *)(arg & ONE_PTR_MASK);
}

/* Counter @c's block id. */
static inline uint32_t one_id(const uint64_t *c)
{
	return (uint32_t)(c - one_execs);
}

/* Counter @c's block (NULL for NULL: no block yet). */
static inline const struct dbtp_block *one_block(const uint64_t *c)
{
	return c ? &blk_get(one_id(c))->d : NULL;
}

/* Queue the interval counted so far as thread @t's, with @flags; at an
 * execve (DBTP_IVL_EXEC) it stays open. */
static void one_close(struct thr *t, unsigned flags)
{
	int exec = (flags & DBTP_IVL_EXEC) != 0;
	uint64_t *w = malloc((1 + 2 * one.ntouch) * sizeof(*w));

	if (!w) {
		complain("dbtprof plugin: out of memory for an interval");
		abort();
	}
	w[0] = flags;
	for (size_t i = 0; i < one.ntouch; i++) {
		w[1 + 2 * i] = one.touch[i];
		w[2 + 2 * i] = one_execs[one.touch[i]];
		if (!exec)
			one_execs[one.touch[i]] = 0;
	}
	queue_put(t, w, 1 + 2 * one.ntouch, exec ? EXIT_EXEC : -1, NULL, NULL);
	if (!exec)
		one.ntouch = 0;
}

/* Counter @c's first execution in the interval, or the interval's end. */
static __attribute__((noinline)) void one_more(uint64_t *c, uint64_t x)
{
	if (!x)
		one.touch[one.ntouch++] = one_id(c);
	if (one.insns >= one.end &&
	    dbtp_interval_cut(&one.end, one.insns, bbv_interval))
		one_close(thr_cur(), 0);
}

/* A block has run: bbv_count()'s rule, on the callback's own counters. */
static inline void one_count(uintptr_t arg)
{
	uint64_t *c = one_ctr(arg);
	uint64_t x = (*c)++;

	one.insns += arg >> 48;
	if (unlikely(!x || one.insns >= one.end))
		one_more(c, x);
}

static __attribute__((noinline)) void one_slow(unsigned int vcpu, uintptr_t arg)
{
	if (one.multi)
		on_tb_exec(vcpu, (void *)(uintptr_t)one_id(one_ctr(arg)));
}

/* The callback of every block while the guest has one thread... */
static void on_tb_exec_one(unsigned int vcpu, void *udata)
{
	if (unlikely(one.slow))
		one_slow(vcpu, (uintptr_t)udata);
	else
		one_count((uintptr_t)udata);
}

/* ... with rep=insn, where the next block may need to know this one ... */
static void on_tb_exec_one_prev(unsigned int vcpu, void *udata)
{
	if (unlikely(one.slow)) {
		one_slow(vcpu, (uintptr_t)udata);
		return;
	}
	one_count((uintptr_t)udata);
	one.prev = one_ctr((uintptr_t)udata);
}

/* ... and for a lone rep string instruction with rep=insn: its repeat
 * passes count nothing. */
static void on_tb_exec_one_rep(unsigned int vcpu, void *udata)
{
	uint64_t *c = one_ctr((uintptr_t)udata);

	if (unlikely(one.slow)) {
		one_slow(vcpu, (uintptr_t)udata);
		return;
	}
	if (dbtp_bbv_block_insns(one_block(one.prev), one_block(c), arch,
				 bbv_rep_insn))
		one_count((uintptr_t)udata);
	one.prev = c;
}

/*
 * The guest is about to create a thread: the counts so far become its first
 * thread's, counted on by the writer thread from the buffers from now on.
 * Runs in that first thread, before any other exists.
 */
static void one_to_threads(void)
{
	struct thr *t;

	if (one.multi || one.frozen)
		return;
	t = thr_cur();
	if (nblk > t->bcap && bbv_grow(t, nblk - 1)) {
		complain("dbtprof plugin: out of memory for counters");
		abort();
	}
	for (size_t i = 0; i < one.ntouch; i++) {
		t->bx[one.touch[i]] = one_execs[one.touch[i]];
		t->btouch[i] = one.touch[i];
		one_execs[one.touch[i]] = 0;
	}
	t->bntouch = one.ntouch;
	one.ntouch = 0;
	t->binsns = one.insns;
	t->bend = one.end;
	t->bprev = one_block(one.prev);
	one.multi = one.slow = 1;
}

/* A fork(), a vfork() or a clone() that starts a process, not a thread
 * (QEMU runs a vfork as a fork): the child's copy of the plugin stays
 * quiet, so the trace says how many there were (INFO `forks`). */
static inline void note_fork(int64_t num, uint64_t a1)
{
	if (!forked_child && (num == nr_fork || num == nr_vfork ||
			      (num == nr_clone && (a1 & 0x4100) != 0x100)))
		__atomic_fetch_add(&nforks, 1, __ATOMIC_RELAXED);
}

/* Read @len bytes of this process at @addr into @dst, or fail (-1) where
 * nothing is mapped, without a fault. */
static int self_read(void *dst, uint64_t addr, size_t len)
{
	struct iovec l = {dst, len}, r = {(void *)(uintptr_t)addr, len};

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0
									   : -1;
}

/*
 * exec_path: the guest's string at @addr, the program its execve names,
 * or "" if it cannot be read.  QEMU's linux-user has a guest address at
 * the host's address plus its guest base, 0 unless the guest's layout
 * needs otherwise; the plugin API of QEMU 7.2 does not read guest memory,
 * so it reads its own at @addr where the first block's code there is the
 * code QEMU translated (process_vm_readv(), which fails on a bad pointer
 * rather than fault).
 */
static void read_exec_path(uint64_t addr)
{
	const struct dbtp_block *b = nblk ? &blk_get(0)->d : NULL;
	uint8_t code[64];
	size_t n = 0,
	       c = b && b->nbytes < sizeof(code) ? b->nbytes : sizeof(code);

	exec_path[0] = '\0';
	if (!b || !c || self_read(code, b->vaddr, c) ||
	    memcmp(code, b->bytes, c))
		return;
	/* a page at a time: the string may end before an unmapped one */
	while (n < sizeof(exec_path) - 1) {
		size_t k = 4096 - (addr + n) % 4096;
		char *end;

		if (k > sizeof(exec_path) - 1 - n)
			k = sizeof(exec_path) - 1 - n;
		if (self_read(exec_path + n, addr + n, k))
			break;
		end = memchr(exec_path + n, '\0', k);
		if (end)
			return;
		n += k;
	}
	exec_path[0] = '\0';
}

/*
 * Thread @t calls execve: if it succeeds, QEMU's process becomes the new
 * program, natively, and nothing of the plugin runs again, so what the
 * thread recorded, its execve included, goes out now (the writer encodes
 * and writes a queued buffer, what the other threads published, and the
 * INFO `execve`, then wakes q_space); in bbv mode every thread's interval
 * so far (DBTP_IVL_EXEC).  If it fails, the thread goes on with a fresh
 * buffer, as after a full one, and the intervals go on.
 */
static void flush_for_exec(struct thr *t)
{
	if (mode == DBTP_MODE_BBV && !one.multi) {
		if (!one.frozen)
			one_close(t, DBTP_IVL_EXEC);
	} else {
		pthread_mutex_lock(&t->mu);
		if (!t->frozen)
			hand_over(t, EXIT_EXEC, NULL);
		pthread_mutex_unlock(&t->mu);
	}
	pthread_mutex_lock(&q_mu);
	while (t->queued)
		pthread_cond_wait(&q_space, &q_mu);
	pthread_mutex_unlock(&q_mu);
}

static void counts_at_exec(void);

/* System call @num (arguments @a1, @a2) may be an execve: what the run
 * did so far goes out before it proceeds, every mode. */
static void at_execve(int64_t num, uint64_t a1, uint64_t a2)
{
	if ((num != nr_execve && num != nr_execveat) || forked_child)
		return;
	read_exec_path(num == nr_execve ? a1 : a2);
	if (mode == DBTP_MODE_COUNT)
		counts_at_exec();
	else
		flush_for_exec(thr_cur());
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num,
		       uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		       uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
	struct thr *t = thr_cur();
	uint64_t *w;

	(void)id;
	(void)vcpu;
	(void)a7;
	(void)a8;
	if (t->n + 8 >= t->hard)
		thr_slow(t);
	w = t->buf + t->n;
	w[0] = (uint64_t)num << 2 | DBTP_RAW_SYSCALL;
	w[1] = a1;
	w[2] = a2;
	w[3] = a3;
	w[4] = a4;
	w[5] = a5;
	w[6] = a6;
	__atomic_store_n(&t->n, t->n + 7, __ATOMIC_RELEASE);
	note_fork(num, a1);
	at_execve(num, a1, a2);
	if (num == nr_exit_group) {
		exit_seen = 1;
		exit_code = a1;
	}
	if (num == nr_exit) {
		/* The thread ends here; what it did is complete. */
		thr_end(t, DBTP_EXIT_THREAD);
		pthread_mutex_lock(&thr_mu);
		if (--nalive == 0) { /* the last thread: the process exits */
			exit_seen = 1;
			exit_code = a1;
		}
		pthread_mutex_unlock(&thr_mu);
	}
}

/* Count mode, multi-threaded: block @id's page of this thread's counters,
 * the thread's counters first made if need be. */
static __attribute__((noinline)) uint64_t *cthr_page(uint32_t id)
{
	struct cthr *c = tls_cthr;
	uint64_t **page;

	if (!c) {
		if (!(c = calloc(1, sizeof(*c))))
			goto oom;
		pthread_mutex_lock(&cthr_mu);
		c->next = cthrs;
		cthrs = c;
		pthread_mutex_unlock(&cthr_mu);
		tls_cthr = c;
	}
	page = &c->pages[id / PAGE_BLOCKS];
	if (!*page && !(*page = calloc(PAGE_BLOCKS, sizeof(uint64_t))))
		goto oom;
	return *page;
oom:
	complain("dbtprof plugin: out of memory for counters");
	abort();
}

/* Count mode, multi-threaded: add thread counters @c to the shared ones
 * (which no translated code adds to any more) and free its pages.  Under
 * cthr_mu. */
static void cthr_add(struct cthr *c)
{
	for (uint32_t g = 0; g < MAX_PAGES; g++) {
		if (!c->pages[g])
			continue;
		for (uint32_t i = 0; i < PAGE_BLOCKS; i++)
			cnt_pages[g][i] += c->pages[g][i];
		free(c->pages[g]);
		c->pages[g] = NULL;
	}
}

/* The calling thread ends: its counts go to the shared counters, so that
 * a guest that creates many threads holds the live ones' only. */
static void cthr_fold(void)
{
	struct cthr *c = tls_cthr, **p;

	if (!c)
		return;
	pthread_mutex_lock(&cthr_mu);
	for (p = &cthrs; *p != c; p = &(*p)->next)
		;
	*p = c->next;
	cthr_add(c);
	pthread_mutex_unlock(&cthr_mu);
	free(c);
	tls_cthr = NULL;
}

static void on_tb_exec_count(unsigned int vcpu, void *udata)
{
	uint32_t id = (uint32_t)(uintptr_t)udata;
	struct cthr *c = tls_cthr;
	uint64_t *page = c ? c->pages[id / PAGE_BLOCKS] : NULL;

	(void)vcpu;
	if (unlikely(!page))
		page = cthr_page(id);
	page[id % PAGE_BLOCKS]++;
}

static void on_syscall_count(qemu_plugin_id_t id, unsigned int vcpu,
			     int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
			     uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
			     uint64_t a8);
static void on_exit_cb(qemu_plugin_id_t id, void *p);

/* After the reset: every vCPU is stopped, no block translated. */
static void count_rearm(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall_count);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
}

/* Count mode keeps no per-thread state until the guest creates a thread;
 * it notes how the process ends. */
static void on_syscall_count(qemu_plugin_id_t id, unsigned int vcpu,
			     int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
			     uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
			     uint64_t a8)
{
	(void)id, (void)vcpu, (void)a2, (void)a3, (void)a4, (void)a5;
	(void)a6, (void)a7, (void)a8;
	note_fork(num, a1);
	if (num == nr_exit_group || num == nr_exit) {
		exit_seen = 1;
		exit_code = a1;
	}
	at_execve(num, a1, a2);
	if (mode == DBTP_MODE_BBV && num == nr_exit)
		thr_end(thr_cur(), DBTP_EXIT_THREAD);
	if (mode == DBTP_MODE_COUNT && num == nr_exit)
		cthr_fold();
	/* clone sharing memory and not vfork (QEMU runs it as a thread; a
	 * vfork as a fork), clone3 */
	if (!((num == nr_clone && (a1 & 0x4100) == 0x100) || num == 435))
		return;
	if (mode == DBTP_MODE_BBV)
		one_to_threads();
	/* QEMU resets before this thread runs translated code again; until
	 * then the new thread alone counts the shared way, and loses none. */
	if (mode == DBTP_MODE_COUNT && !cnt_multi) {
		cnt_multi = 1;
		qemu_plugin_reset(plugin_id, count_rearm);
	}
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned int vcpu, int64_t num,
			   int64_t ret)
{
	struct thr *t = thr_cur();

	(void)id;
	(void)vcpu;
	if (t->n + 2 >= t->hard)
		thr_slow(t);
	t->buf[t->n] = (uint64_t)num << 2 | DBTP_RAW_SYSRET;
	t->buf[t->n + 1] = (uint64_t)ret;
	__atomic_store_n(&t->n, t->n + 2, __ATOMIC_RELEASE);
}

/* --- start and end ----------------------------------------------------- */

static void write_end(void)
{
	uint64_t total = 0;

	for (struct thr *t = threads; t; t = t->next)
		total += t->enc.blocks;
	ebuf.len = 0;
	if (dbtp_buf_reserve(&ebuf, 80))
		return;
	dbtp_put_varint(&ebuf, exit_seen ? DBTP_END_EXIT : DBTP_END_SIGNAL);
	dbtp_put_varint(&ebuf, exit_seen ? exit_code : 0);
	dbtp_put_varint(&ebuf, nthreads);
	dbtp_put_varint(&ebuf, total);
	dbtp_put_varint(&ebuf, nblk);
	dbtp_put_varint(&ebuf, nfiles);
	dbtp_frame_put(&obuf, DBTP_REC_END, ebuf.p, ebuf.len, NULL, 0);
}

/*
 * A COUNTS record of blocks 0 to @n - 1 (all declared): each block's
 * executions not yet written (cnt_done).  With @live, at an execve, the
 * running threads' own counters too (read as they count: what they add
 * after goes in the next record), and what it writes is marked done.
 * Under cthr_mu.
 */
static void write_counts(uint32_t n, int live)
{
	ebuf.len = 0;
	if (dbtp_buf_reserve(&ebuf, 20 + (size_t)n * 10)) {
		write_errno = write_errno ? write_errno : ENOMEM;
		return;
	}
	dbtp_put_varint(&ebuf, 0);
	dbtp_put_varint(&ebuf, n);
	for (uint32_t g = 0; g * PAGE_BLOCKS < n; g++) {
		uint64_t *done = cnt_done[g];

		if (live && !done &&
		    !(done = cnt_done[g] =
			  calloc(PAGE_BLOCKS, sizeof(uint64_t)))) {
			write_errno = write_errno ? write_errno : ENOMEM;
			return;
		}
		for (uint32_t i = 0; i < PAGE_BLOCKS && g * PAGE_BLOCKS + i < n;
		     i++) {
			uint64_t x =
			    __atomic_load_n(&cnt_pages[g][i], __ATOMIC_RELAXED);

			for (struct cthr *c = live ? cthrs : NULL; c;
			     c = c->next) {
				uint64_t *p = __atomic_load_n(&c->pages[g],
							      __ATOMIC_ACQUIRE);

				if (p)
					x += __atomic_load_n(&p[i],
							     __ATOMIC_RELAXED);
			}
			dbtp_put_varint(&ebuf, x - (done ? done[i] : 0));
			if (live)
				done[i] = x;
		}
	}
	if (dbtp_frame_put(&obuf, DBTP_REC_COUNTS, ebuf.p, ebuf.len, zctx,
			   zlevel))
		write_errno = write_errno ? write_errno : ENOMEM;
}

/*
 * Count mode: the guest calls execve.  If it succeeds the plugin never
 * runs again, so the counts so far go out now, in a COUNTS record of
 * their own (the reader adds records up); if it fails, the record at exit
 * holds what runs after.
 */
static void counts_at_exec(void)
{
	pthread_mutex_lock(&cthr_mu);
	if (out_fd >= 0) {
		take_pending_blocks();
		write_counts(nblk_declared, 1);
		write_exec_note();
	}
	pthread_mutex_unlock(&cthr_mu);
}

static int put_kv_u64(struct dbtp_buf *b, const char *key, uint64_t val)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRIu64, val);
	return dbtp_put_kv(b, key, v);
}

/* cache_sample: an INFO record of the block executions whose accesses
 * were tallied. */
static void write_sampled(void)
{
	uint64_t n = 0;

	for (uint32_t id = 0; id < nblk; id++)
		if (bc_pages[id / PAGE_BLOCKS]) {
			const struct blk_cache *bc =
			    &bc_pages[id / PAGE_BLOCKS][id % PAGE_BLOCKS];

			n += bc->tallied + bc->fexecs;
		}
	ebuf.len = 0;
	if (put_kv_u64(&ebuf, "cache_tallied", n) ||
	    dbtp_frame_put(&obuf, DBTP_REC_INFO, ebuf.p, ebuf.len, zctx,
			   zlevel))
		write_errno = write_errno ? write_errno : ENOMEM;
}

/* An INFO record of @key = @val, uncompressed, so that the recorder reads
 * it as it copies. */
static void write_plain_info(const char *key, const char *val)
{
	ebuf.len = 0;
	if (dbtp_put_kv(&ebuf, key, val) ||
	    dbtp_frame_put(&obuf, DBTP_REC_INFO, ebuf.p, ebuf.len, NULL, 0))
		write_errno = write_errno ? write_errno : ENOMEM;
}

/* INFO `execve`: the guest's execve goes on after this (the recorder
 * takes a stream that ends here for an execve that succeeded). */
static void write_exec_note(void)
{
	write_plain_info("execve", exec_path);
	out_flush();
}

/* INFO `forks`. */
static void write_forks(void)
{
	uint64_t n = __atomic_load_n(&nforks, __ATOMIC_RELAXED);
	char v[24];

	if (!n)
		return;
	snprintf(v, sizeof(v), "%" PRIu64, n);
	write_plain_info("forks", v);
}

/* @x * @num / @den, rounded to nearest (@den > 0). */
static uint64_t scale(uint64_t x, uint64_t num, uint64_t den)
{
	return (uint64_t)(((unsigned __int128)x * num + den / 2) / den);
}

/* Block @id's tally as written; with cache_sample its threads' first
 * phases' as they were (their caches started cold, as the threads' did:
 * scaled, the misses of a start would count many times), and the rest's
 * scaled by its executions over those tallied, or if none was, the first
 * phases' by all executions over theirs (one factor for every field, so
 * that l2 <= l1 and unaligned <= ops hold); none for a block never
 * tallied. */
static const struct dbtp_cache_tally *tally_of(void *ctx, uint32_t id)
{
	static struct dbtp_cache_tally out;
	const struct blk_cache *bc;
	const struct dbtp_cache_tally *t;
	uint64_t num, den;

	(void)ctx;
	if (!bc_pages[id / PAGE_BLOCKS])
		return NULL;
	bc = &bc_pages[id / PAGE_BLOCKS][id % PAGE_BLOCKS];
	if (sample_n == 1)
		return &bc->tally;
	if (!bc->tallied && !bc->fexecs)
		return NULL;
	t = bc->tallied ? &bc->tally : &bc->first;
	num = bc->tallied ? bc->execs : bc->execs + bc->fexecs;
	den = bc->tallied ? bc->tallied : bc->fexecs;
	out.ops = scale(t->ops, num, den);
	out.l1 = scale(t->l1, num, den);
	out.l2 = scale(t->l2, num, den);
	out.unaligned = scale(t->unaligned, num, den);
	if (bc->tallied) {
		out.ops += bc->first.ops;
		out.l1 += bc->first.l1;
		out.l2 += bc->first.l2;
		out.unaligned += bc->first.unaligned;
	}
	return &out;
}

static void on_exit_cb(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	if (forked_child || out_fd < 0)
		return;
	if (mode == DBTP_MODE_COUNT) {
		/* the threads still running add theirs (QEMU has dropped
		 * the callbacks that count into them) */
		pthread_mutex_lock(&cthr_mu);
		for (struct cthr *c = cthrs; c; c = c->next)
			cthr_add(c);
		pthread_mutex_unlock(&cthr_mu);
		take_pending_blocks();
		write_counts(nblk, 0);
	} else {
		/* Freeze every thread and queue what it still holds. */
		if (mode == DBTP_MODE_BBV && !one.multi && !one.frozen)
			thr_end(thr_cur(), DBTP_EXIT_PROCESS);
		pthread_mutex_lock(&thr_mu);
		for (struct thr *t = threads; t; t = t->next)
			thr_end(t, DBTP_EXIT_PROCESS);
		pthread_mutex_unlock(&thr_mu);
		pthread_mutex_lock(&q_mu);
		q_stop = 1;
		pthread_cond_signal(&q_nonempty);
		pthread_mutex_unlock(&q_mu);
		if (writer_started)
			pthread_join(writer, NULL);
		take_pending_blocks();
		if (cache_on && dbtp_cache_recs_put(&obuf, nblk, tally_of, NULL,
						    zctx, zlevel))
			write_errno = write_errno ? write_errno : ENOMEM;
		if (sample_n > 1)
			write_sampled();
	}
	write_forks();
	write_end();
	out_flush();
	close(out_fd);
	out_fd = -1;
}

static void atfork_child(void)
{
	struct thr *t = tls_thr;

	forked_child = 1;
	one.frozen = one.slow = 1;
	if (t) {
		t->frozen = 1;
		t->limit = t->hard = 0;
		t->buf = scratch;
		t->n = 0;
		pthread_mutex_init(&t->mu, NULL);
	}
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
}

static int write_header(const char *target)
{
	/* The guest binary is not known yet at install time; the recorder
	 * adds the command line in an INFO record. */
	const char *kv[][2] = {
	    {"producer", "libdbtp-qemu"},
	    {"target", target},
	};
	uint64_t feat = 0;

	if (mode == DBTP_MODE_BLOCKS || mode == DBTP_MODE_MEM)
		feat |= DBTP_FEAT_SYSCALL;
	if (mode == DBTP_MODE_MEM)
		feat |= DBTP_FEAT_MEM;
	if (mode == DBTP_MODE_BBV)
		feat |= DBTP_FEAT_BBV;
	if (cache_on)
		feat |= DBTP_FEAT_CACHE;
	ebuf.len = 0;
	if (dbtp_buf_reserve(&ebuf, 64))
		return -1;
	dbtp_put_varint(&ebuf, DBTP_FORMAT_MAJOR);
	dbtp_put_varint(&ebuf, DBTP_FORMAT_MINOR);
	dbtp_put_varint(&ebuf, feat);
	dbtp_put_varint(&ebuf, arch);
	dbtp_put_varint(&ebuf, (uint64_t)mode);
	if (mode == DBTP_MODE_BBV) {
		dbtp_put_varint(&ebuf, bbv_interval);
		dbtp_put_varint(&ebuf, (uint64_t)bbv_rep_insn);
	}
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (dbtp_put_kv(&ebuf, kv[i][0], kv[i][1]))
			return -1;
	if (sample_n > 1 && (put_kv_u64(&ebuf, "cache_sample", sample_n) ||
			     put_kv_u64(&ebuf, "cache_phase", sample_phase)))
		return -1;
	if (dbtp_buf_reserve(&obuf, DBTP_MAGIC_LEN))
		return -1;
	dbtp_put_bytes(&obuf, DBTP_MAGIC, DBTP_MAGIC_LEN);
	if (dbtp_frame_put(&obuf, DBTP_REC_HEADER, ebuf.p, ebuf.len, NULL, 0))
		return -1;
	out_flush();
	return write_errno ? -1 : 0;
}

static int parse_args(int argc, char **argv)
{
	const char *out = NULL;
	long fd = -1;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=');
		char *end;

		if (!v) {
			complain(
			    "dbtprof plugin: argument '%s' is not key=value",
			    a);
			return -1;
		}
		v++;
		if (!strncmp(a, "out=", 4)) {
			out = v;
		} else if (!strncmp(a, "fd=", 3)) {
			fd = strtol(v, &end, 10);
			if (*end || fd < 0) {
				complain("dbtprof plugin: bad fd '%s'", v);
				return -1;
			}
		} else if (!strncmp(a, "mode=", 5)) {
			if (!strcmp(v, "count"))
				mode = DBTP_MODE_COUNT;
			else if (!strcmp(v, "blocks"))
				mode = DBTP_MODE_BLOCKS;
			else if (!strcmp(v, "mem"))
				mode = DBTP_MODE_MEM;
			else if (!strcmp(v, "bbv"))
				mode = DBTP_MODE_BBV;
			else {
				complain("dbtprof plugin: unknown mode '%s' "
					 "(count, blocks, mem or bbv)",
					 v);
				return -1;
			}
		} else if (!strncmp(a, "cache=", 6)) {
			if (strcmp(v, "on") && strcmp(v, "off")) {
				complain("dbtprof plugin: cache is on or off");
				return -1;
			}
			cache_on = !strcmp(v, "on");
		} else if (!strncmp(a, "cache_sample=", 13) ||
			   !strncmp(a, "cache_phase=", 12)) {
			int ph = a[6] == 'p';
			unsigned long long x = strtoull(v, &end, 10);

			if (*end || !*v || *v == '-' || !x ||
			    x > (ph ? UINT64_C(1) << 40 : 1000000)) {
				complain("dbtprof plugin: %s must be 1..%s",
					 ph ? "cache_phase" : "cache_sample",
					 ph ? "2^40 block executions"
					    : "1000000");
				return -1;
			}
			if (ph)
				sample_phase = x;
			else
				sample_n = x;
		} else if (!strncmp(a, "chunk=", 6)) {
			long c = strtol(v, &end, 10);

			if (*end || c < 64 || c > (1l << 24)) {
				complain("dbtprof plugin: chunk must be 64.."
					 "16777216 words");
				return -1;
			}
			chunk_words = (size_t)c;
		} else if (!strncmp(a, "interval=", 9)) {
			bbv_interval = strtoull(v, &end, 10);
			if (*end || !*v || !bbv_interval || *v == '-') {
				complain("dbtprof plugin: bad interval '%s'",
					 v);
				return -1;
			}
		} else if (!strncmp(a, "single=", 7)) {
			unsigned long long m = strtoull(v, &end, 10);

			if (*end || !*v || *v == '-' || m > ONE_MAX_BLOCKS) {
				complain("dbtprof plugin: single must be "
					 "0..%u blocks",
					 ONE_MAX_BLOCKS);
				return -1;
			}
			one_max = (uint32_t)m;
		} else if (!strncmp(a, "rep=", 4)) {
			if (strcmp(v, "iter") && strcmp(v, "insn")) {
				complain("dbtprof plugin: rep is iter or insn");
				return -1;
			}
			bbv_rep_insn = !strcmp(v, "insn");
		} else if (!strncmp(a, "flush=", 6)) {
			flush_ms = strtol(v, &end, 10);
			if (*end || !*v || flush_ms < 0 || flush_ms > 60000) {
				complain(
				    "dbtprof plugin: flush must be 0..60000 "
				    "ms");
				return -1;
			}
		} else if (!strncmp(a, "zstd=", 5)) {
			long l = strtol(v, &end, 10);

			if (*end || l < 0 || l > 19) {
				complain("dbtprof plugin: zstd level must be "
					 "0..19");
				return -1;
			}
			zlevel = (int)l;
		} else {
			complain("dbtprof plugin: unknown argument '%s'", a);
			return -1;
		}
	}
	if (cache_on && mode != DBTP_MODE_BLOCKS) {
		complain("dbtprof plugin: cache=on needs mode=blocks");
		return -1;
	}
	if (sample_n > 1 && !cache_on) {
		complain("dbtprof plugin: cache_sample needs cache=on");
		return -1;
	}
	if (out && fd >= 0) {
		complain("dbtprof plugin: give out= or fd=, not both");
		return -1;
	}
	if (out) {
		out_fd =
		    open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			complain("dbtprof plugin: cannot create %s: %s", out,
				 strerror(errno));
			return -1;
		}
	} else if (fd >= 0) {
		out_fd = (int)fd;
		if (fcntl(out_fd, F_SETFD, FD_CLOEXEC) < 0) {
			complain("dbtprof plugin: fd %ld is not open", fd);
			return -1;
		}
	} else {
		complain("dbtprof plugin: no output: give out=PATH or fd=N");
		return -1;
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	if (info->system_emulation) {
		complain("dbtprof plugin: only user-mode emulation "
			 "(qemu-x86_64, qemu-aarch64) is supported");
		return -1;
	}
	arch = dbtp_arch_from_name(info->target_name);
	if (arch == DBTP_ARCH_X86_64) {
		nr_exit = 60;
		nr_exit_group = 231;
		nr_clone = 56;
		nr_fork = 57;
		nr_vfork = 58;
		nr_execve = 59;
		nr_execveat = 322;
	} else if (arch == DBTP_ARCH_AARCH64) {
		nr_exit = 93;
		nr_exit_group = 94;
		nr_clone = 220;
		nr_fork = nr_vfork = -1; /* clone only */
		nr_execve = 221;
		nr_execveat = 281;
	} else {
		complain("dbtprof plugin: guest architecture '%s' is not "
			 "supported (x86_64, aarch64)",
			 info->target_name);
		return -1;
	}
	if (parse_args(argc, argv))
		return -1;
	plugin_id = id;
	one.end = bbv_interval;
	if (mode == DBTP_MODE_BBV) {
		/* Zero pages until touched */
		one_execs = calloc(one_max + 1, sizeof(*one_execs));
		one.touch = calloc(one_max + 1, sizeof(*one.touch));
		if (!one_execs || !one.touch) {
			complain("dbtprof plugin: out of memory");
			return -1;
		}
		if (!one_max || (uintptr_t)(one_execs + one_max) > ONE_PTR_MASK)
			one.multi = one.slow = 1;
	}
	if (zlevel && !(zctx = ZSTD_createCCtx())) {
		complain("dbtprof plugin: out of memory");
		return -1;
	}
	if (write_header(info->target_name))
		return -1;
	if (mode == DBTP_MODE_BBV)
		qemu_plugin_register_vcpu_syscall_cb(id, on_syscall_count);
	if (mode != DBTP_MODE_COUNT) {
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&q_nonempty, &ca);
		pthread_condattr_destroy(&ca);
		scratch = buf_alloc();
		if (!scratch ||
		    pthread_create(&writer, NULL, writer_main, NULL)) {
			complain("dbtprof plugin: cannot start the writer");
			return -1;
		}
		writer_started = 1;
		if (mode != DBTP_MODE_BBV) {
			qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
			qemu_plugin_register_vcpu_syscall_ret_cb(
			    id, on_syscall_ret);
		}
	} else {
		qemu_plugin_register_vcpu_syscall_cb(id, on_syscall_count);
	}
	pthread_atfork(NULL, NULL, atfork_child);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	sample_warm =
	    sample_phase / 10 < SAMPLE_WARM ? sample_phase / 10 : SAMPLE_WARM;
	return 0;
}

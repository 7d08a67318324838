/* SPDX-License-Identifier: MIT */
/*
 * format.h - constants of the trace format, version 1.1.
 * doc/trace-format.md is the normative description; keep the two in step.
 */
#ifndef DBTP_TRACE_FORMAT_H
#define DBTP_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/cache.h"
#include "dbtp/common.h"
#include "dbtp/trace.h"
#include "util/buf.h"

#define DBTP_MAGIC "DBTPTRC\n"
#define DBTP_MAGIC_LEN 8
#define DBTP_FORMAT_MAJOR 1
#define DBTP_FORMAT_MINOR 2 /* 1.1: DBTP_FEAT_CACHE; 1.2: DBTP_IVL_EXEC */

#define DBTP_FRAME_LEN 16
#define DBTP_MAX_PAYLOAD (64u << 20)	/* stored or decoded, per record */
#define DBTP_MAX_CHUNK_WORDS (1u << 24) /* raw words a chunk can hold */
#define DBTP_MAX_CHUNK_BLOCKS (DBTP_MAX_CHUNK_WORDS + (1u << 16)) /* + slack   \
								   */

/* Record types. */
enum {
	DBTP_REC_HEADER =
	    1,		   /* first record: version, features, arch, mode, kv */
	DBTP_REC_INFO = 2, /* more key/value pairs about the run */
	DBTP_REC_FILE = 3, /* a mapped file a block came from */
	DBTP_REC_BLOCKS = 4,	/* block descriptions, ids in sequence */
	DBTP_REC_EVENTS = 5,	/* one chunk of one thread's event stream */
	DBTP_REC_COUNTS = 6,	/* per-block execution counts (count mode) */
	DBTP_REC_END = 7,	/* the plugin's last record */
	DBTP_REC_STATUS = 8,	/* how the guest ended, added by the recorder */
	DBTP_REC_INTERVALS = 9, /* bbv mode: one thread's interval vector */
	DBTP_REC_CACHE = 10,	/* per-block cache tallies (DBTP_FEAT_CACHE) */
	DBTP_REC_MAX = 10,
};

/* Frame flags. */
#define DBTP_FLAG_ZSTD 0x01

/* Feature bits in the header; a reader rejects bits it does not know. */
#define DBTP_FEAT_MEM 0x01     /* EVENTS carry memory accesses */
#define DBTP_FEAT_SYSCALL 0x02 /* EVENTS carry syscalls */
#define DBTP_FEAT_BBV 0x04     /* INTERVALS records (bbv mode) */
#define DBTP_FEAT_CACHE 0x08   /* CACHE records (blocks mode) */
#define DBTP_FEAT_KNOWN                                                        \
	(DBTP_FEAT_MEM | DBTP_FEAT_SYSCALL | DBTP_FEAT_BBV | DBTP_FEAT_CACHE)

/* INTERVALS record flags. */
#define DBTP_IVL_LAST 0x01   /* the thread's last interval (may be short) */
#define DBTP_IVL_EXITED 0x02 /* ... because the thread called exit */
/* The thread's interval so far, at its execve (alone: no other flag); the
 * thread's next INTERVALS record, of the same index, replaces it (the
 * execve failed); if none comes, the trace ends with it. */
#define DBTP_IVL_EXEC 0x04

/* Op kinds of an EVENTS chunk: varint v, kind = v & 7, value = v >> 3. */
enum {
	DBTP_OP_RUN = 0,     /* value n: n blocks, each its predecessor's
				predicted successor */
	DBTP_OP_BLOCK = 1,   /* value: block id */
	DBTP_OP_MEM = 2,     /* value: info; then zigzag(addr - predicted) */
	DBTP_OP_SYSCALL = 3, /* value: number; then 6 varint arguments */
	DBTP_OP_SYSRET = 4,  /* value: number; then zigzag(return value) */
	DBTP_OP_EXIT = 5,    /* value: reason; then blocks, insns, mem totals */
	DBTP_OP_END = 6,     /* value: blocks in chunk; then mem, syscalls */
};

/* Memory access info byte (DBTP_OP_MEM value). */
#define DBTP_MEM_SIZE_SHIFT_MASK 0x07 /* log2 of the access size */
#define DBTP_MEM_STORE 0x08
#define DBTP_MEM_SIGNED 0x10
#define DBTP_MEM_BIG_ENDIAN 0x20

/* Thread exit reasons (DBTP_OP_EXIT value). */
enum {
	DBTP_EXIT_THREAD = 0,  /* the thread called exit */
	DBTP_EXIT_PROCESS = 1, /* the process ended (exit_group, signal) */
};

/* END record reasons: DBTP_ENDED_* in dbtp/trace.h; STATUS kinds:
 * DBTP_STATUS_*. */
#define DBTP_END_EXIT DBTP_ENDED_EXIT
#define DBTP_END_SIGNAL DBTP_ENDED_SIGNAL

/*
 * Raw words: what the plugin appends on its hot path, one 64-bit word per
 * event plus operands.  The low two bits tag the word.
 */
enum {
	DBTP_RAW_BLOCK = 0,   /* id << 2 */
	DBTP_RAW_MEM = 1,     /* info << 2 | 1, then vaddr */
	DBTP_RAW_SYSCALL = 2, /* num << 2 | 2, then 6 arguments */
	DBTP_RAW_SYSRET = 3,  /* num << 2 | 3, then return value */
};

/**
 * dbtp_frame_put() - append a record (frame + payload) to @out, compressing
 * the payload with zstd when @zctx is non-NULL and that makes it smaller.
 * @zctx is a ZSTD_CCtx * (void * keeps zstd.h out of this header).
 * Returns 0 or -1 (out of memory or compression failure).
 */
int dbtp_frame_put(struct dbtp_buf *out, int type, const void *payload,
		   size_t len, void *zctx, int level);

/** struct dbtp_frame - a decoded frame header. */
struct dbtp_frame {
	uint8_t type, flags;
	uint32_t stored_len, raw_len, crc;
};

/**
 * dbtp_frame_parse() - decode the 16-byte frame header at @p.
 * Checks the reserved field, lengths and type; the CRC is checked with
 * dbtp_frame_crc_ok() once the payload is in memory.  0 or -1 with @why set.
 */
int dbtp_frame_parse(const uint8_t *p, struct dbtp_frame *f, const char **why);
int dbtp_frame_crc_ok(const uint8_t *frame, const uint8_t *payload,
		      uint32_t stored_len);

/*
 * Predictor state shared by the chunk encoder and decoder.  It lives for one
 * chunk (each chunk decodes on its own); generation numbers make the reset
 * O(1) so the arrays, sized by the program's static blocks, are reused.
 */
struct dbtp_slot {
	uint64_t key; /* block id << 16 | access index within the execution */
	uint64_t last;
	int64_t stride;
	uint32_t gen;
};

struct dbtp_succ {
	uint32_t id, gen; /* predicted successor, valid if gen is current */
};

struct dbtp_pred {
	uint32_t gen;
	struct dbtp_succ *succ; /* by block id */
	size_t cap;
	struct dbtp_slot *slots; /* open addressing, power-of-two size */
	size_t nslots, used;
	uint64_t last_addr; /* previous memory address of the chunk */
};

#define DBTP_NO_SUCC UINT32_MAX

void dbtp_pred_reset(struct dbtp_pred *p);
int dbtp_pred_grow(struct dbtp_pred *p, uint32_t id);

static inline uint32_t dbtp_pred_succ(const struct dbtp_pred *p, uint32_t prev)
{
	if (prev >= p->cap || p->succ[prev].gen != p->gen)
		return DBTP_NO_SUCC;
	return p->succ[prev].id;
}

static inline int dbtp_pred_set_succ(struct dbtp_pred *p, uint32_t prev,
				     uint32_t next)
{
	if (prev >= p->cap && dbtp_pred_grow(p, prev))
		return -1;
	p->succ[prev].id = next;
	p->succ[prev].gen = p->gen;
	return 0;
}
/** dbtp_pred_slot() - the slot of @key in this chunk, made if new; NULL on
 * ENOMEM. */
struct dbtp_slot *dbtp_pred_slot(struct dbtp_pred *p, uint64_t key, int *fresh);
void dbtp_pred_free(struct dbtp_pred *p);

/** struct dbtp_enc - per-thread state of the chunk encoder. */
struct dbtp_enc {
	struct dbtp_pred pred;
	/* Running totals of the thread, carried from chunk to chunk. */
	uint64_t blocks, insns, mems, syscalls, chunks;
};

/**
 * struct dbtp_ninsns - instruction counts by block id, in pages of
 * DBTP_NI_PAGE entries that never move (the plugin's writer thread reads
 * them while guest threads add blocks).
 */
#define DBTP_NI_SHIFT 12
#define DBTP_NI_PAGE (1u << DBTP_NI_SHIFT)
struct dbtp_ninsns {
	uint16_t *const *pages;
};

static inline uint32_t dbtp_ninsns_get(struct dbtp_ninsns t, uint32_t id)
{
	return t.pages[id >> DBTP_NI_SHIFT][id & (DBTP_NI_PAGE - 1)];
}

/**
 * dbtp_enc_chunk() - encode @n raw words of thread @thread (tid @tid) into
 * an EVENTS payload appended to @out.  If @exit_reason >= 0 the chunk ends
 * with an EXIT op carrying the thread's totals.  0 or -1 (ENOMEM or
 * malformed raw words).
 */
int dbtp_enc_chunk(struct dbtp_enc *e, uint32_t thread, uint64_t tid,
		   const uint64_t *w, size_t n, int exit_reason,
		   struct dbtp_ninsns ninsns, struct dbtp_buf *out);
void dbtp_enc_free(struct dbtp_enc *e);

/*
 * CACHE records: per block, its tally (struct dbtp_cache_tally, of
 * dbtp/cache.h) of the plugin's cache model (DBTP_FEAT_CACHE).
 * Payload: varint n, then n entries of varint gap (the first entry's block
 * id; later ones' id - previous id - 1), ops, l1, l2, unaligned.
 */
#define DBTP_CACHE_REC_ENTRIES 65536 /* at most, per record */

/**
 * dbtp_cache_recs_put() - append CACHE records to @out for the blocks
 * 0 .. @nblocks - 1 whose tally (@get(@ctx, id), NULL for none) has
 * memory operations, compressed as dbtp_frame_put() does.  0 or -1 (out of
 * memory).
 */
int dbtp_cache_recs_put(struct dbtp_buf *out, uint32_t nblocks,
			const struct dbtp_cache_tally *(*get)(void *, uint32_t),
			void *ctx, void *zctx, int level);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * dbtp/trace.h - read and write dbtprof traces (doc/trace-format.md).
 *
 * The reader streams: it holds the block table (the program's static size)
 * and one decoded chunk, never the whole trace, and reads from files or pipes
 * alike.  Anything malformed ends in an error naming the file and the byte
 * offset of the record at fault.
 */
#ifndef DBTP_TRACE_H
#define DBTP_TRACE_H

#include <stdint.h>

#include "dbtp/common.h"

/** Recording modes (stored in the header). */
enum dbtp_mode {
	DBTP_MODE_COUNT = 0,  /* per-block execution counts only */
	DBTP_MODE_BLOCKS = 1, /* every executed block, per thread, + syscalls */
	DBTP_MODE_MEM = 2,    /* blocks + every load and store */
	DBTP_MODE_BBV = 3,    /* per-thread interval vectors, counted in QEMU */
};

/** dbtp_mode_name() - "count", "blocks", "mem" or "unknown". */
const char *dbtp_mode_name(int mode);

/**
 * struct dbtp_block - one translated block, described once per trace.
 * @id: index in the block table, from 0.
 * @vaddr: guest address of the first instruction.
 * @ninsns: instructions in the block.
 * @nbytes: bytes of code.
 * @file: id of the mapped file the code came from (dbtp_trace_file()),
 *        0 for anonymous memory.
 * @offset: offset of the first instruction in that file (@vaddr if none).
 * @sizes: @ninsns instruction lengths.
 * @bytes: the @nbytes bytes of code.
 */
struct dbtp_block {
	uint32_t id, ninsns, nbytes, file;
	uint32_t phantom; /* 1: QEMU listed one more, dropped (reader.c) */
	uint64_t vaddr, offset;
	const uint8_t *sizes, *bytes;
};

/** Thread end states. */
enum {
	DBTP_THREAD_RUNNING = 0, /* no end seen (trace cut short) */
	DBTP_THREAD_EXITED = 1,	 /* called exit */
	DBTP_THREAD_ENDED = 2,	 /* alive when the process ended */
};

/**
 * struct dbtp_thread - what the trace says about one guest thread.
 * @num: thread number, 0 for the first, in order of first execution.
 * @tid: the guest's thread id.
 * @parent: number of the creating thread, -1 if none or not seen.
 * @created_blocks: the parent's block executions when clone returned the
 *                  new thread's id (its creation point); likewise
 * @created_insns: in instructions.
 * @blocks, @insns, @mems, @syscalls: counted so far (final at the end).
 * @end: DBTP_THREAD_*.
 */
struct dbtp_thread {
	uint32_t num;
	int32_t parent;
	uint64_t tid;
	uint64_t created_blocks, created_insns;
	uint64_t blocks, insns, mems, syscalls;
	int end;
};

enum dbtp_event_type {
	DBTP_EV_BLOCK = 1,	  /* @block executed by @thread */
	DBTP_EV_MEM = 2,	  /* @addr, @size, @mem_flags, within @block */
	DBTP_EV_SYSCALL = 3,	  /* @sysno, @args */
	DBTP_EV_SYSRET = 4,	  /* @sysno, @ret */
	DBTP_EV_THREAD_START = 5, /* first event of @thread */
	DBTP_EV_THREAD_EXIT = 6,  /* @thread ended */
	DBTP_EV_COUNT = 7,	  /* count mode: @block executed @count times */
	DBTP_EV_INTERVAL = 8,	  /* bbv mode: one interval of @thread */
	DBTP_EV_CACHE = 9,	  /* @block's cache tally (see below) */
};

/* struct dbtp_event.mem_flags */
#define DBTP_ACCESS_STORE 0x08
#define DBTP_ACCESS_SIGNED 0x10
#define DBTP_ACCESS_BIG_ENDIAN 0x20

/**
 * struct dbtp_event - one event, valid until the next dbtp_trace_next().
 * @thread: thread number (see dbtp_trace_thread()).
 * @block: the block executed (BLOCK, COUNT) or executing (MEM).
 */
struct dbtp_event {
	enum dbtp_event_type type;
	uint32_t thread;
	const struct dbtp_block *block;
	uint64_t addr;
	uint32_t size;
	uint8_t mem_flags;
	int64_t sysno;
	uint64_t args[6];
	int64_t ret;
	uint64_t count;
	/* DBTP_EV_INTERVAL: @nivl translation blocks @ivl_ids executed
	 * @ivl_execs times, in order of first execution in the interval;
	 * @ivl_index counts the thread's intervals from 0; @ivl_last marks
	 * its last (possibly shorter) one. */
	const uint32_t *ivl_ids;
	const uint64_t *ivl_execs;
	uint32_t nivl;
	uint64_t ivl_index;
	int ivl_last;
	/* DBTP_EV_CACHE (traces with dbtp_trace_info's @cache, after every
	 * block event): over the whole run, @block made @count memory
	 * operations, of which @unaligned (2, 4 or 8 bytes at an address not a
	 * multiple of their size), and missed @l1_misses times in the L1 data
	 * cache and @l2_misses times in the L2, each thread through its own
	 * caches of dbtp/cache.h's default geometry; @thread is 0.  A block
	 * without memory operations has none. */
	uint64_t l1_misses, l2_misses, unaligned;
};

/** How the plugin said the process ended (END record). */
enum {
	DBTP_ENDED_EXIT = 0,   /* an exit or exit_group syscall */
	DBTP_ENDED_SIGNAL = 1, /* ended by QEMU without one (fatal signal) */
};

/** How the recorder saw the guest end (STATUS record). */
enum {
	DBTP_STATUS_EXITED = 0,
	DBTP_STATUS_SIGNALED = 1,
	DBTP_STATUS_UNKNOWN = 2,
};

/**
 * struct dbtp_trace_info - the header and, once read, the trailer records.
 * @has_end: the plugin's END record was read (the trace is complete).
 * @has_status: the recorder's STATUS record was read.
 */
struct dbtp_trace_info {
	unsigned major, minor;
	uint64_t features;
	enum dbtp_arch arch;
	int mode;
	uint64_t interval;	 /* bbv mode: instructions per interval */
	int rep_per_instruction; /* bbv mode: rep counting convention */
	int cache;		 /* blocks mode with DBTP_EV_CACHE events */
	int has_end, end_reason;
	uint64_t end_code, end_threads, end_blocks, end_distinct, end_files;
	int has_status, status_kind;
	int64_t status_value;
	uint64_t records, bytes; /* read so far */
};

typedef struct dbtp_trace dbtp_trace;

/**
 * dbtp_trace_open() - open a trace file ("-" reads standard input).
 * Reads and checks the magic and the header record.
 */
int dbtp_trace_open(dbtp_trace **out, const char *path, dbtp_err *err);

/** dbtp_trace_open_fd() - the same over an open descriptor (a pipe). */
int dbtp_trace_open_fd(dbtp_trace **out, int fd, const char *name,
		       dbtp_err *err);

void dbtp_trace_close(dbtp_trace *t);

/**
 * dbtp_trace_next() - the next event.
 * Return: 1 with @ev filled, 0 at the end of the trace, -1 on error.
 * The end is wherever the data ends at a record boundary; check
 * dbtp_trace_info()->has_end to know whether the run was recorded whole.
 */
int dbtp_trace_next(dbtp_trace *t, struct dbtp_event *ev, dbtp_err *err);

const struct dbtp_trace_info *dbtp_trace_info(const dbtp_trace *t);

/** dbtp_trace_get() - value of header/INFO key @key, or NULL. */
const char *dbtp_trace_get(const dbtp_trace *t, const char *key);

/** dbtp_trace_kv() - the @i-th key/value pair; 0 or -1 past the end. */
int dbtp_trace_kv(const dbtp_trace *t, uint32_t i, const char **key,
		  const char **val);

/**
 * dbtp_trace_skip_events() - from now on pass over EVENTS records without
 * decompressing or decoding them (their checksums are still verified): no
 * block, memory or syscall events are returned and the END record's totals
 * are not cross-checked.  A quick first pass that reads the complete block
 * and file tables.
 */
void dbtp_trace_skip_events(dbtp_trace *t);

uint32_t dbtp_trace_nblocks(const dbtp_trace *t);
const struct dbtp_block *dbtp_trace_block(const dbtp_trace *t, uint32_t id);

/** dbtp_trace_file() - path of mapped file @id (1..), or NULL. */
const char *dbtp_trace_file(const dbtp_trace *t, uint32_t id);
uint32_t dbtp_trace_nfiles(const dbtp_trace *t);

uint32_t dbtp_trace_nthreads(const dbtp_trace *t);
const struct dbtp_thread *dbtp_trace_thread(const dbtp_trace *t, uint32_t num);

/** dbtp_trace_offset() - byte offset of the record being decoded. */
uint64_t dbtp_trace_offset(const dbtp_trace *t);

/*
 * Writer: builds a trace from events given one by one, for tests, synthetic
 * streams and converters.  Same encoding as the plugin.
 */
typedef struct dbtp_writer dbtp_writer;

/**
 * dbtp_writer_open() - create @path.  @chunk_events (0 = default 65536)
 * sets how many raw words a thread buffers before a chunk is cut.  @mode
 * DBTP_MODE_BLOCKS | DBTP_WRITER_CACHE writes a blocks-mode trace with
 * cache tallies (dbtp_writer_cache()).
 */
#define DBTP_WRITER_CACHE 0x100
int dbtp_writer_open(dbtp_writer **out, const char *path, enum dbtp_arch arch,
		     int mode, uint32_t chunk_events, dbtp_err *err);
int dbtp_writer_info(dbtp_writer *w, const char *key, const char *val,
		     dbtp_err *err);
/** dbtp_writer_file() - declare a mapped file; its id in *@id. */
int dbtp_writer_file(dbtp_writer *w, const char *path, uint32_t *id,
		     dbtp_err *err);
/** dbtp_writer_block() - declare a block; its id in *@id. */
int dbtp_writer_block(dbtp_writer *w, uint64_t vaddr, uint32_t ninsns,
		      const uint8_t *sizes, const uint8_t *bytes, uint32_t file,
		      uint64_t offset, uint32_t *id, dbtp_err *err);
/* Events of thread @thread (threads are numbered in order of first use,
 * from 0; a thread's tid is 1000 + its number unless set). */
int dbtp_writer_exec(dbtp_writer *w, uint32_t thread, uint32_t block,
		     dbtp_err *err);
int dbtp_writer_mem(dbtp_writer *w, uint32_t thread, uint64_t addr,
		    unsigned size_shift, unsigned flags, dbtp_err *err);
int dbtp_writer_syscall(dbtp_writer *w, uint32_t thread, int64_t num,
			const uint64_t args[6], dbtp_err *err);
int dbtp_writer_sysret(dbtp_writer *w, uint32_t thread, int64_t num,
		       int64_t ret, dbtp_err *err);
int dbtp_writer_thread_exit(dbtp_writer *w, uint32_t thread, dbtp_err *err);
/** dbtp_writer_count() - count mode: block @block ran @count times. */
int dbtp_writer_count(dbtp_writer *w, uint32_t block, uint64_t count,
		      dbtp_err *err);
/**
 * dbtp_writer_cache() - add to block @block's cache tally (DBTP_EV_CACHE):
 * @ops memory operations, @l1 and @l2 misses, @unaligned accesses.  The
 * tallies are written at dbtp_writer_close().
 */
int dbtp_writer_cache(dbtp_writer *w, uint32_t block, uint64_t ops, uint64_t l1,
		      uint64_t l2, uint64_t unaligned, dbtp_err *err);
/** dbtp_writer_close() - flush, write the END record, close; frees @w. */
int dbtp_writer_close(dbtp_writer *w, int64_t exit_code, dbtp_err *err);

/*
 * Recorder side: copying a live plugin stream to a file.
 */

/**
 * struct dbtp_copy_result - what dbtp_stream_copy() saw.
 * @bytes: bytes written to the output.
 * @records: whole records copied.
 * @saw_end: the plugin's END record arrived.
 * @cut: bytes of a partial last record that were dropped (the producer
 *       died mid-record).
 * @forks: processes the guest started, not recorded (the plugin's INFO
 *       `forks`; 0 if none arrived).
 * @exec_last: the last record copied was the plugin's INFO `execve`: the
 *       stream ends at an execve that went on (and succeeded, if no END).
 * @exec_path: that record's program, as the guest named it ("" unknown).
 */
struct dbtp_copy_result {
	uint64_t bytes, records, cut, forks;
	int saw_end, exec_last;
	char exec_path[4096];
};

/**
 * dbtp_stream_copy() - copy the trace stream on @in to @out record by record,
 * checking each frame, and insert an INFO record with the @nkv key/value
 * pairs (@kv holds 2 * @nkv strings) right after the header.  Stops after the
 * END record or at the end of @in; only whole records reach @out.
 * Fails on a malformed stream or a write error (then @res still tells how
 * much was written).
 */
int dbtp_stream_copy(int in, const char *in_name, int out, const char *out_name,
		     const char *const *kv, size_t nkv,
		     struct dbtp_copy_result *res, dbtp_err *err);

/**
 * dbtp_stream_status() - append a STATUS record (DBTP_STATUS_* @kind,
 * exit code or signal number @value, plus key/value notes) to @out.
 */
int dbtp_stream_status(int out, const char *out_name, int kind, int64_t value,
		       const char *const *kv, size_t nkv, dbtp_err *err);

#endif

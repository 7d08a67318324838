/* SPDX-License-Identifier: MIT */
/*
 * cmd-stats.c - dbtprof stats: what a trace says about its run: counts,
 * threads and their creation points, syscalls, and the hottest code.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbtp/disasm.h"
#include "dbtp/symbolize.h"
#include "dbtp/syscalls.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof stats [OPTIONS] TRACE\n"
    "\n"
    "Summarise a trace (\"-\" reads standard input): guest, command line,\n"
    "instructions and block executions (total and per thread), distinct\n"
    "blocks, threads with their creation points, syscalls, and the hottest\n"
    "functions and blocks with their disassembly.\n"
    "\n"
    "Options:\n"
    "      --json       the same as JSON\n"
    "  -n, --top N      how many hot functions and blocks (default 10)\n"
    "      --no-disasm  leave out the disassembly of hot blocks\n"
    "  -h, --help       this text\n";

struct fn_acc {
	const char *name, *file;
	uint64_t insns, execs;
};

struct stats {
	dbtp_trace *t;
	uint64_t *execs; /* per block id */
	uint32_t nexecs;
	uint64_t blocks, insns, mems, stores, syscalls;
	uint64_t l1, l2, unaligned; /* record --cache's tallies */
	uint64_t sys_calls[1024], sys_other;
	struct fn_acc *fns;
	size_t nfns;
};

static int grow(struct stats *s, uint32_t id)
{
	uint32_t n = s->nexecs ? s->nexecs : 1024;
	uint64_t *e;

	while (n <= id)
		n *= 2;
	e = realloc(s->execs, n * sizeof(*e));
	if (!e)
		return -1;
	memset(e + s->nexecs, 0, (n - s->nexecs) * sizeof(*e));
	s->execs = e;
	s->nexecs = n;
	return 0;
}

static int by_insns_desc(const void *a, const void *b)
{
	const struct fn_acc *x = a, *y = b;

	if (x->insns != y->insns)
		return x->insns < y->insns ? 1 : -1;
	return strcmp(x->name, y->name);
}

struct hot {
	uint32_t id;
	uint64_t insns;
};

static int hot_desc(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	if (x->insns != y->insns)
		return x->insns < y->insns ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static const char *end_text(const struct dbtp_thread *th)
{
	switch (th->end) {
	case DBTP_THREAD_EXITED:
		return "exit";
	case DBTP_THREAD_ENDED:
		return "process end";
	default:
		return "cut short";
	}
}

static void describe_end(const dbtp_trace *t, char *buf, size_t n)
{
	const struct dbtp_trace_info *in = dbtp_trace_info(t);
	int k = 0;

	if (in->has_end)
		k = snprintf(buf, n, "%s",
			     in->end_reason == DBTP_ENDED_EXIT
				 ? "exit syscall"
				 : "no exit syscall (fatal signal)");
	else
		k = snprintf(buf, n, "no END record (recording cut short)");
	if (in->has_status && k >= 0 && (size_t)k < n) {
		if (in->status_kind == DBTP_STATUS_EXITED)
			snprintf(buf + k, n - (size_t)k,
				 "; guest exited with status %" PRId64,
				 in->status_value);
		else if (in->status_kind == DBTP_STATUS_SIGNALED)
			snprintf(buf + k, n - (size_t)k,
				 "; guest killed by signal %" PRId64 " (%s)",
				 in->status_value,
				 strsignal((int)in->status_value));
	}
	trace_untraced(t, buf, n);
}

/* Aggregate executed instructions by function. */
static int collect_fns(struct stats *s, dbtp_symcache *cache)
{
	uint32_t nb = dbtp_trace_nblocks(s->t);

	for (uint32_t id = 0; id < nb && id < s->nexecs; id++) {
		const struct dbtp_block *b = dbtp_trace_block(s->t, id);
		struct dbtp_sym sym;
		const char *name;
		size_t i;

		if (!s->execs[id])
			continue;
		dbtp_symbolize(cache, s->t, b, 0, &sym);
		name = sym.name ? sym.name : "?";
		for (i = 0; i < s->nfns; i++)
			if (s->fns[i].name == name &&
			    s->fns[i].file == sym.file)
				break;
		if (i == s->nfns) {
			struct fn_acc *f =
			    realloc(s->fns, (s->nfns + 1) * sizeof(*f));

			if (!f)
				return -1;
			s->fns = f;
			f[i].name = name;
			f[i].file = sym.file;
			f[i].insns = f[i].execs = 0;
			s->nfns++;
		}
		s->fns[i].insns += s->execs[id] * b->ninsns;
		s->fns[i].execs += s->execs[id];
	}
	if (s->nfns)
		qsort(s->fns, s->nfns, sizeof(*s->fns), by_insns_desc);
	return 0;
}

static int run_stats(const char *path, int json, int top, int disasm)
{
	struct stats s = {0};
	struct dbtp_event ev;
	dbtp_err err = {0};
	dbtp_symcache *cache = NULL;
	dbtp_disasm *dis = NULL;
	const struct dbtp_trace_info *in;
	struct hot *hot = NULL;
	uint32_t nb, nhot = 0, distinct = 0;
	int sampled;
	char endbuf[1024], n1[32], n2[32], n3[32];
	int r, rc = 1;

	if (dbtp_trace_open(&s.t, path, &err)) {
		error("%s", err.msg);
		return 1;
	}
	while ((r = dbtp_trace_next(s.t, &ev, &err)) > 0) {
		switch (ev.type) {
		case DBTP_EV_BLOCK:
			if (ev.block->id >= s.nexecs && grow(&s, ev.block->id))
				goto nomem;
			s.execs[ev.block->id]++;
			s.blocks++;
			s.insns += ev.block->ninsns;
			if (!(s.blocks & 0xfffff))
				progress("stats: %s blocks",
					 fmt_u64(s.blocks, n1));
			break;
		case DBTP_EV_COUNT:
			if (ev.block->id >= s.nexecs && grow(&s, ev.block->id))
				goto nomem;
			s.execs[ev.block->id] += ev.count;
			s.blocks += ev.count;
			s.insns += ev.count * ev.block->ninsns;
			break;
		case DBTP_EV_INTERVAL:
			for (uint32_t i = 0; i < ev.nivl; i++) {
				const struct dbtp_block *b =
				    dbtp_trace_block(s.t, ev.ivl_ids[i]);

				if (b->id >= s.nexecs && grow(&s, b->id))
					goto nomem;
				s.execs[b->id] += ev.ivl_execs[i];
				s.blocks += ev.ivl_execs[i];
				s.insns += ev.ivl_execs[i] * b->ninsns;
			}
			break;
		case DBTP_EV_MEM:
			s.mems++;
			if (ev.mem_flags & DBTP_ACCESS_STORE)
				s.stores++;
			break;
		case DBTP_EV_CACHE:
			s.mems += ev.count;
			s.l1 += ev.l1_misses;
			s.l2 += ev.l2_misses;
			s.unaligned += ev.unaligned;
			break;
		case DBTP_EV_SYSCALL:
			s.syscalls++;
			if (ev.sysno >= 0 && ev.sysno < 1024)
				s.sys_calls[ev.sysno]++;
			else
				s.sys_other++;
			break;
		default:
			break;
		}
	}
	progress_done();
	if (r < 0) {
		error("%s", err.msg);
		goto out;
	}
	in = dbtp_trace_info(s.t);
	sampled = in->cache && dbtp_trace_get(s.t, "cache_sample");
	nb = dbtp_trace_nblocks(s.t);
	hot = calloc(nb ? nb : 1, sizeof(*hot));
	cache = dbtp_symcache_new();
	if (!hot || !cache)
		goto nomem;
	for (uint32_t id = 0; id < nb && id < s.nexecs; id++) {
		if (!s.execs[id])
			continue;
		distinct++;
		hot[nhot].id = id;
		hot[nhot].insns =
		    s.execs[id] * dbtp_trace_block(s.t, id)->ninsns;
		nhot++;
	}
	if (nhot)
		qsort(hot, nhot, sizeof(*hot), hot_desc);
	if (collect_fns(&s, cache))
		goto nomem;
	if (disasm && dbtp_disasm_open(&dis, in->arch, &err)) {
		error("%s", err.msg);
		goto out;
	}
	describe_end(s.t, endbuf, sizeof(endbuf));

	if (json) {
		struct json j;
		const char *v;

		json_begin(&j, stdout);
		json_str(&j, "trace", path);
		json_str(&j, "arch", dbtp_arch_name(in->arch));
		json_str(&j, "mode", dbtp_mode_name(in->mode));
		json_bool(&j, "cache_tallies", in->cache);
		json_u64(&j, "format_major", in->major);
		json_u64(&j, "format_minor", in->minor);
		json_str(&j, "command", dbtp_trace_get(s.t, "command"));
		json_str(&j, "qemu_version",
			 dbtp_trace_get(s.t, "qemu_version"));
		json_str(&j, "qemu_command",
			 dbtp_trace_get(s.t, "qemu_command"));
		json_str(&j, "cpu", dbtp_trace_get(s.t, "cpu"));
		json_str(&j, "env_digest", dbtp_trace_get(s.t, "env_digest"));
		json_obj(&j, "end");
		json_bool(&j, "complete", in->has_end);
		json_str(&j, "reason",
			 !in->has_end			     ? "cut short"
			 : in->end_reason == DBTP_ENDED_EXIT ? "exit"
							     : "signal");
		if (in->has_status) {
			json_str(&j, "status",
				 in->status_kind == DBTP_STATUS_EXITED
				     ? "exited"
				 : in->status_kind == DBTP_STATUS_SIGNALED
				     ? "signaled"
				     : "unknown");
			json_i64(&j, "value", in->status_value);
		}
		if (dbtp_trace_get(s.t, "exec"))
			json_str(&j, "exec", dbtp_trace_get(s.t, "exec"));
		json_u64(&j, "forks", trace_kv_u64(s.t, "forks"));
		json_close_obj(&j);
		json_u64(&j, "instructions", s.insns);
		json_u64(&j, "block_executions", s.blocks);
		json_u64(&j, "distinct_blocks", distinct);
		json_u64(&j, "translated_blocks", nb);
		if (in->mode == DBTP_MODE_MEM) {
			json_u64(&j, "memory_accesses", s.mems);
			json_u64(&j, "loads", s.mems - s.stores);
			json_u64(&j, "stores", s.stores);
		}
		if (in->cache) {
			json_u64(&j, "memory_accesses", s.mems);
			json_u64(&j, "l1_misses", s.l1);
			json_u64(&j, "l2_misses", s.l2);
			json_u64(&j, "unaligned", s.unaligned);
			if (sampled) {
				json_u64(&j, "cache_sample",
					 trace_kv_u64(s.t, "cache_sample"));
				json_u64(&j, "cache_phase",
					 trace_kv_u64(s.t, "cache_phase"));
				json_u64(&j, "cache_tallied",
					 trace_kv_u64(s.t, "cache_tallied"));
			}
		}
		json_u64(&j, "trace_bytes", in->bytes);
		json_arr(&j, "threads");
		for (uint32_t i = 0; i < dbtp_trace_nthreads(s.t); i++) {
			const struct dbtp_thread *th =
			    dbtp_trace_thread(s.t, i);

			if (!th)
				continue;
			json_obj(&j, NULL);
			json_u64(&j, "thread", th->num);
			json_u64(&j, "tid", th->tid);
			if (th->parent >= 0) {
				json_i64(&j, "parent", th->parent);
				json_u64(&j, "created_at_blocks",
					 th->created_blocks);
				json_u64(&j, "created_at_instructions",
					 th->created_insns);
			} else {
				json_null(&j, "parent");
			}
			json_u64(&j, "instructions", th->insns);
			json_u64(&j, "block_executions", th->blocks);
			json_u64(&j, "syscalls", th->syscalls);
			if (in->mode == DBTP_MODE_MEM)
				json_u64(&j, "memory_accesses", th->mems);
			json_str(&j, "end", end_text(th));
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_arr(&j, "syscalls");
		for (int n = 0; n < 1024; n++) {
			if (!s.sys_calls[n])
				continue;
			json_obj(&j, NULL);
			json_u64(&j, "number", (uint64_t)n);
			v = dbtp_syscall_name(in->arch, n);
			json_str(&j, "name", v);
			json_u64(&j, "calls", s.sys_calls[n]);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_arr(&j, "hot_functions");
		for (size_t i = 0; i < s.nfns && i < (size_t)top; i++) {
			json_obj(&j, NULL);
			json_str(&j, "function", s.fns[i].name);
			json_str(&j, "file", s.fns[i].file);
			json_u64(&j, "instructions", s.fns[i].insns);
			json_u64(&j, "block_executions", s.fns[i].execs);
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_arr(&j, "hot_blocks");
		for (uint32_t i = 0; i < nhot && i < (uint32_t)top; i++) {
			const struct dbtp_block *b =
			    dbtp_trace_block(s.t, hot[i].id);
			struct dbtp_sym sym;
			char text[160];
			size_t off = 0;

			dbtp_symbolize(cache, s.t, b, 0, &sym);
			json_obj(&j, NULL);
			json_u64(&j, "id", b->id);
			json_hex(&j, "address", b->vaddr);
			json_u64(&j, "instructions_per_execution", b->ninsns);
			json_u64(&j, "executions", s.execs[b->id]);
			json_u64(&j, "instructions", hot[i].insns);
			json_str(&j, "function", sym.name);
			json_u64(&j, "function_offset", sym.delta);
			json_str(&j, "file", sym.file);
			if (dis) {
				json_arr(&j, "disassembly");
				for (uint32_t k = 0; k < b->ninsns; k++) {
					dbtp_disasm_one(
					    dis, b->bytes + off, b->sizes[k],
					    b->vaddr + off, text, sizeof(text));
					json_str(&j, NULL, text);
					off += b->sizes[k];
				}
				json_close_arr(&j);
			}
			json_close_obj(&j);
		}
		json_close_arr(&j);
		json_end(&j);
		rc = 0;
		goto out;
	}

	printf("trace         %s (format %u.%u, %.1f MB, %s records)\n", path,
	       in->major, in->minor, (double)in->bytes / 1e6,
	       fmt_u64(in->records, n1));
	printf("guest         %s, mode %s%s\n", dbtp_arch_name(in->arch),
	       dbtp_mode_name(in->mode),
	       in->cache ? ", with cache tallies (--cache)" : "");
	if (dbtp_trace_get(s.t, "command"))
		printf("command       %s\n", dbtp_trace_get(s.t, "command"));
	if (dbtp_trace_get(s.t, "qemu_version"))
		printf("qemu          %s, -cpu %s\n",
		       dbtp_trace_get(s.t, "qemu_version"),
		       dbtp_trace_get(s.t, "cpu") ? dbtp_trace_get(s.t, "cpu")
						  : "?");
	printf("ended         %s\n\n", endbuf);
	printf("instructions      %18s\n", fmt_u64(s.insns, n1));
	printf("block executions  %18s\n", fmt_u64(s.blocks, n1));
	printf("distinct blocks   %18s  (%s translated)\n",
	       fmt_u64(distinct, n1), fmt_u64(nb, n2));
	if (s.blocks)
		printf("instructions/block%18.2f\n",
		       (double)s.insns / (double)s.blocks);
	if (in->mode == DBTP_MODE_MEM)
		printf("memory accesses   %18s  (%s loads, %s stores)\n",
		       fmt_u64(s.mems, n1), fmt_u64(s.mems - s.stores, n2),
		       fmt_u64(s.stores, n3));
	if (in->cache) {
		printf("memory accesses   %18s\n", fmt_u64(s.mems, n1));
		printf("L1 misses         %18s  (L2 misses %s)\n",
		       fmt_u64(s.l1, n1), fmt_u64(s.l2, n2));
		printf("unaligned         %18s\n", fmt_u64(s.unaligned, n1));
		if (sampled) {
			uint64_t x = trace_kv_u64(s.t, "cache_tallied");

			printf("cache sample      %18s  (one phase of %s block "
			       "executions in that many)\n",
			       fmt_u64(trace_kv_u64(s.t, "cache_sample"), n1),
			       fmt_u64(trace_kv_u64(s.t, "cache_phase"), n2));
			printf("tallied in        %18s  block executions "
			       "(%.1f%%; tallies scaled to all)\n",
			       fmt_u64(x, n1),
			       s.blocks ? 100.0 * (double)x / (double)s.blocks
					: 0.0);
		}
	}
	if (in->mode != DBTP_MODE_COUNT) {
		if (in->mode == DBTP_MODE_BBV)
			printf("intervals         %18s instructions%s\n",
			       fmt_u64(in->interval, n1),
			       in->rep_per_instruction
				   ? " (rep counted per instruction)"
				   : "");
		printf("\nthreads (%u)\n", dbtp_trace_nthreads(s.t));
		printf("  %-4s %-8s %-6s %-27s %16s %14s  %s\n", "#", "tid",
		       "parent", "created at (blocks / insns)", "instructions",
		       "blocks", "end");
		for (uint32_t i = 0; i < dbtp_trace_nthreads(s.t); i++) {
			const struct dbtp_thread *th =
			    dbtp_trace_thread(s.t, i);
			char at[64] = "-", par[16] = "-";

			if (!th)
				continue;
			if (th->parent >= 0) {
				snprintf(par, sizeof(par), "%d", th->parent);
				snprintf(at, sizeof(at), "%s / %s",
					 fmt_u64(th->created_blocks, n1),
					 fmt_u64(th->created_insns, n2));
			}
			printf(
			    "  %-4u %-8" PRIu64 " %-6s %-27s %16s %14s  %s\n",
			    th->num, th->tid, par, at, fmt_u64(th->insns, n1),
			    fmt_u64(th->blocks, n2), end_text(th));
		}
		printf("\nsyscalls (%s calls)\n", fmt_u64(s.syscalls, n1));
		for (int n = 0; n < 1024; n++) {
			const char *name;

			if (!s.sys_calls[n])
				continue;
			name = dbtp_syscall_name(in->arch, n);
			printf("  %4d %-22s %12s\n", n, name ? name : "?",
			       fmt_u64(s.sys_calls[n], n1));
		}
	}
	printf("\nhottest functions (by instructions executed)\n");
	for (size_t i = 0; i < s.nfns && i < (size_t)top; i++)
		printf(
		    "  %5.1f%% %16s  %-32s %s\n",
		    s.insns ? 100.0 * (double)s.fns[i].insns / (double)s.insns
			    : 0.0,
		    fmt_u64(s.fns[i].insns, n1),
		    strcmp(s.fns[i].name, "?") ? s.fns[i].name : "(no symbol)",
		    s.fns[i].file ? dbtp_basename(s.fns[i].file)
				  : "(anonymous)");
	printf("\nhottest blocks (by instructions executed)\n");
	for (uint32_t i = 0; i < nhot && i < (uint32_t)top; i++) {
		const struct dbtp_block *b = dbtp_trace_block(s.t, hot[i].id);
		struct dbtp_sym sym;
		size_t off = 0;

		dbtp_symbolize(cache, s.t, b, 0, &sym);
		printf("  %5.1f%% 0x%-12" PRIx64 " %s executions x %u insns  ",
		       s.insns ? 100.0 * (double)hot[i].insns / (double)s.insns
			       : 0.0,
		       b->vaddr, fmt_u64(s.execs[b->id], n1), b->ninsns);
		if (sym.name)
			printf("%s+0x%" PRIx64 " (%s)\n", sym.name, sym.delta,
			       dbtp_basename(sym.file));
		else if (sym.file)
			printf("%s+0x%" PRIx64 "\n", dbtp_basename(sym.file),
			       b->offset);
		else
			printf("(anonymous)\n");
		for (uint32_t k = 0; dis && k < b->ninsns; k++) {
			char text[160];

			dbtp_disasm_one(dis, b->bytes + off, b->sizes[k],
					b->vaddr + off, text, sizeof(text));
			printf("           0x%-12" PRIx64 " %s\n",
			       b->vaddr + off, text);
			off += b->sizes[k];
		}
	}
	rc = 0;
	goto out;
nomem:
	error("out of memory");
out:
	dbtp_disasm_close(dis);
	dbtp_symcache_free(cache);
	free(hot);
	free(s.fns);
	free(s.execs);
	dbtp_trace_close(s.t);
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"top", required_argument, NULL, 'n'},
	    {"no-disasm", no_argument, NULL, 'D'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c, json = 0, top = 10, disasm = 1;
	char *end;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'n':
			top = (int)strtol(optarg, &end, 10);
			if (*end || top < 0 || top > 1000000)
				return usage_error(
				    "stats", "--top wants a count, not '%s'",
				    optarg);
			break;
		case 'D':
			disasm = 0;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("stats", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return usage_error("stats", "give exactly one trace file");
	return run_stats(argv[optind], json, top, disasm);
}

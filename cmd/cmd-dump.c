/* SPDX-License-Identifier: MIT */
/* cmd-dump.c - dbtprof dump: a trace's events, or its block table, as text. */
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
    "usage: dbtprof dump [OPTIONS] TRACE\n"
    "\n"
    "Print the event stream, one event a line, in file order (threads'\n"
    "chunks interleave; within a thread the order is exact):\n"
    "  T<n> block <id> <address> <instructions> [function+offset]\n"
    "  T<n> mem <address> <size> load|store\n"
    "  T<n> syscall <number> <name> <arg1> .. <arg6>\n"
    "  T<n> sysret <number> <name> = <value>\n"
    "  T<n> start tid <tid>        T<n> exit\n"
    "  count <id> <address> <instructions> x <executions>   (count mode)\n"
    "  cache <id> <address> ops <n> l1 <misses> l2 <misses> unaligned <n>\n"
    "                              (blocks mode recorded with --cache)\n"
    "\n"
    "Options:\n"
    "      --blocks      print the block table instead, with disassembly\n"
    "  -t, --thread N    only thread N's events\n"
    "  -l, --limit N     stop after N events\n"
    "  -s, --symbols     add function+offset to block lines\n"
    "  -h, --help        this text\n";

static void print_sym(dbtp_symcache *cache, dbtp_trace *t,
		      const struct dbtp_block *b)
{
	struct dbtp_sym s;

	if (dbtp_symbolize(cache, t, b, 0, &s))
		printf(" %s+0x%" PRIx64, s.name, s.delta);
	else if (s.file)
		printf(" %s+0x%" PRIx64, dbtp_basename(s.file), b->offset);
}

static int dump_blocks(dbtp_trace *t)
{
	struct dbtp_event ev;
	dbtp_err err = {0};
	dbtp_symcache *cache = dbtp_symcache_new();
	dbtp_disasm *dis = NULL;
	int r;

	while ((r = dbtp_trace_next(t, &ev, &err)) > 0)
		;
	if (r < 0) {
		error("%s", err.msg);
		dbtp_symcache_free(cache);
		return 1;
	}
	if (dbtp_disasm_open(&dis, dbtp_trace_info(t)->arch, &err)) {
		error("%s", err.msg);
		dbtp_symcache_free(cache);
		return 1;
	}
	for (uint32_t id = 0; id < dbtp_trace_nblocks(t); id++) {
		const struct dbtp_block *b = dbtp_trace_block(t, id);
		size_t off = 0;

		printf("block %u 0x%" PRIx64 " insns %u bytes %u", id, b->vaddr,
		       b->ninsns, b->nbytes);
		print_sym(cache, t, b);
		putchar('\n');
		for (uint32_t k = 0; k < b->ninsns; k++) {
			char text[160];

			dbtp_disasm_one(dis, b->bytes + off, b->sizes[k],
					b->vaddr + off, text, sizeof(text));
			printf("  0x%" PRIx64 "  %s\n", b->vaddr + off, text);
			off += b->sizes[k];
		}
	}
	dbtp_disasm_close(dis);
	dbtp_symcache_free(cache);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"blocks", no_argument, NULL, 'B'},
	    {"thread", required_argument, NULL, 't'},
	    {"limit", required_argument, NULL, 'l'},
	    {"symbols", no_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c, blocks = 0, syms = 0, r, rc = 0;
	long thread = -1;
	unsigned long long limit = 0, n = 0;
	char *end;
	dbtp_trace *t;
	dbtp_err err = {0};
	struct dbtp_event ev;
	dbtp_symcache *cache = NULL;
	enum dbtp_arch arch;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:l:sh", opts, NULL)) != -1) {
		switch (c) {
		case 'B':
			blocks = 1;
			break;
		case 't':
			thread = strtol(optarg, &end, 10);
			if (*end || !*optarg || thread < 0)
				return usage_error("dump", "bad thread '%s'",
						   optarg);
			break;
		case 'l':
			limit = strtoull(optarg, &end, 10);
			if (*end || !*optarg || !limit)
				return usage_error("dump", "bad limit '%s'",
						   optarg);
			break;
		case 's':
			syms = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("dump", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return usage_error("dump", "give exactly one trace file");
	if (dbtp_trace_open(&t, argv[optind], &err)) {
		error("%s", err.msg);
		return 1;
	}
	if (blocks) {
		rc = dump_blocks(t);
		dbtp_trace_close(t);
		return rc;
	}
	if (syms)
		cache = dbtp_symcache_new();
	arch = dbtp_trace_info(t)->arch;
	while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
		const char *name;

		if (thread >= 0 && ev.type != DBTP_EV_COUNT &&
		    ev.type != DBTP_EV_CACHE && ev.thread != (uint32_t)thread)
			continue;
		if (limit && n++ >= limit)
			break;
		switch (ev.type) {
		case DBTP_EV_BLOCK:
			printf("T%u block %u 0x%" PRIx64 " %u", ev.thread,
			       ev.block->id, ev.block->vaddr, ev.block->ninsns);
			if (cache)
				print_sym(cache, t, ev.block);
			putchar('\n');
			break;
		case DBTP_EV_MEM:
			printf("T%u mem 0x%" PRIx64 " %u %s\n", ev.thread,
			       ev.addr, ev.size,
			       ev.mem_flags & DBTP_ACCESS_STORE ? "store"
								: "load");
			break;
		case DBTP_EV_SYSCALL:
			name = dbtp_syscall_name(arch, ev.sysno);
			printf("T%u syscall %" PRId64 " %s", ev.thread,
			       ev.sysno, name ? name : "?");
			for (int i = 0; i < 6; i++)
				printf(" 0x%" PRIx64, ev.args[i]);
			putchar('\n');
			break;
		case DBTP_EV_SYSRET:
			name = dbtp_syscall_name(arch, ev.sysno);
			printf("T%u sysret %" PRId64 " %s = %" PRId64 "\n",
			       ev.thread, ev.sysno, name ? name : "?", ev.ret);
			break;
		case DBTP_EV_THREAD_START:
			printf("T%u start tid %" PRIu64 "\n", ev.thread,
			       dbtp_trace_thread(t, ev.thread)->tid);
			break;
		case DBTP_EV_THREAD_EXIT:
			printf("T%u exit\n", ev.thread);
			break;
		case DBTP_EV_INTERVAL:
			printf("T%u interval %" PRIu64 "%s", ev.thread,
			       ev.ivl_index, ev.ivl_last ? " last" : "");
			for (uint32_t i = 0; i < ev.nivl; i++)
				printf(" %u:%" PRIu64, ev.ivl_ids[i],
				       ev.ivl_execs[i]);
			putchar('\n');
			break;
		case DBTP_EV_COUNT:
			printf("count %u 0x%" PRIx64 " %u x %" PRIu64 "\n",
			       ev.block->id, ev.block->vaddr, ev.block->ninsns,
			       ev.count);
			break;
		case DBTP_EV_CACHE:
			printf("cache %u 0x%" PRIx64 " ops %" PRIu64
			       " l1 %" PRIu64 " l2 %" PRIu64
			       " unaligned %" PRIu64 "\n",
			       ev.block->id, ev.block->vaddr, ev.count,
			       ev.l1_misses, ev.l2_misses, ev.unaligned);
			break;
		}
	}
	if (r < 0) {
		fflush(stdout);
		error("%s", err.msg);
		rc = 1;
	}
	dbtp_symcache_free(cache);
	dbtp_trace_close(t);
	return rc;
}

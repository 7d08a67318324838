/* SPDX-License-Identifier: MIT */
/*
 * cmd-verify.c - dbtprof verify: read a trace end to end (framing, CRCs,
 * decoding, every count cross-checked) and say exactly how it ends.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "cmd.h"
#include "dbtp/trace.h"

static const char usage_text[] =
    "usage: dbtprof verify [--json] TRACE\n"
    "\n"
    "Check a trace end to end: record framing and CRC-32C checksums, zstd\n"
    "payloads, every event chunk decoded, chunk sequence numbers, chunk,\n"
    "thread and whole-run totals cross-checked, and how the run ended.\n"
    "\n"
    "Exit status: 0 complete and valid; 3 valid up to where it stops but\n"
    "the run was cut short (no END record: guest or QEMU killed); 1 corrupt,\n"
    "truncated mid-record or unreadable (the message names the offset).\n"
    "\n"
    "Options:\n"
    "      --json   machine-readable result\n"
    "  -h, --help   this text\n";

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c, json = 0, r, rc;
	dbtp_trace *t = NULL;
	dbtp_err err = {0};
	struct dbtp_event ev;
	uint64_t events = 0, blocks = 0, insns = 0, mems = 0, sys = 0;
	const struct dbtp_trace_info *in;
	const char *path, *verdict;
	char ending[1024] = "", n1[32], n2[32], n3[32];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("verify", "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return usage_error("verify", "give exactly one trace file");
	path = argv[optind];
	if (dbtp_trace_open(&t, path, &err)) {
		r = -1;
	} else {
		while ((r = dbtp_trace_next(t, &ev, &err)) > 0) {
			events++;
			if (ev.type == DBTP_EV_BLOCK) {
				blocks++;
				insns += ev.block->ninsns;
			} else if (ev.type == DBTP_EV_COUNT) {
				blocks += ev.count;
				insns += ev.count * ev.block->ninsns;
			} else if (ev.type == DBTP_EV_INTERVAL) {
				for (uint32_t i = 0; i < ev.nivl; i++) {
					blocks += ev.ivl_execs[i];
					insns +=
					    ev.ivl_execs[i] *
					    dbtp_trace_block(t, ev.ivl_ids[i])
						->ninsns;
				}
			} else if (ev.type == DBTP_EV_MEM) {
				mems++;
			} else if (ev.type == DBTP_EV_SYSCALL) {
				sys++;
			}
			if (!(events & 0xfffff))
				progress("verify: %s events",
					 fmt_u64(events, n1));
		}
		progress_done();
	}
	in = t ? dbtp_trace_info(t) : NULL;
	if (r < 0) {
		verdict = "corrupt";
		rc = 1;
		snprintf(ending, sizeof(ending), "%s", err.msg);
	} else {
		int k;

		if (in->has_end) {
			verdict = "complete";
			rc = 0;
			k = snprintf(ending, sizeof(ending),
				     "plugin END record: %s",
				     in->end_reason == DBTP_ENDED_EXIT
					 ? "exit syscall"
					 : "process ended without an exit "
					   "syscall (fatal signal)");
		} else {
			verdict = "incomplete";
			rc = 3;
			k = snprintf(ending, sizeof(ending),
				     "no END record: the trace stops after "
				     "record %" PRIu64 " at byte %" PRIu64
				     " (the last whole record)",
				     in->records, in->bytes);
		}
		if (in->has_status && k > 0 && (size_t)k < sizeof(ending)) {
			if (in->status_kind == DBTP_STATUS_EXITED)
				snprintf(ending + k, sizeof(ending) - (size_t)k,
					 "; recorder: guest exited with status "
					 "%" PRId64,
					 in->status_value);
			else if (in->status_kind == DBTP_STATUS_SIGNALED)
				snprintf(ending + k, sizeof(ending) - (size_t)k,
					 "; recorder: guest killed by signal "
					 "%" PRId64 " (%s)",
					 in->status_value,
					 strsignal((int)in->status_value));
		}
		trace_untraced(t, ending, sizeof(ending));
	}
	if (json) {
		struct json j;

		json_begin(&j, stdout);
		json_str(&j, "trace", path);
		json_str(&j, "verdict", verdict);
		json_str(&j, "detail", ending);
		if (in) {
			json_u64(&j, "records", in->records);
			json_u64(&j, "bytes", in->bytes);
			json_u64(&j, "threads", dbtp_trace_nthreads(t));
			json_u64(&j, "block_executions", blocks);
			json_u64(&j, "instructions", insns);
			json_u64(&j, "memory_accesses", mems);
			json_u64(&j, "syscalls", sys);
			json_bool(&j, "has_end", in->has_end);
			json_bool(&j, "has_status", in->has_status);
			if (in->has_status) {
				json_u64(&j, "status_kind",
					 (uint64_t)in->status_kind);
				json_i64(&j, "status_value", in->status_value);
			}
			if (dbtp_trace_get(t, "exec"))
				json_str(&j, "exec", dbtp_trace_get(t, "exec"));
			json_u64(&j, "forks", trace_kv_u64(t, "forks"));
		}
		json_end(&j);
	} else if (rc == 1) {
		error("%s", ending);
	} else {
		printf("%s: %s: %s %s trace, %s records, %u threads, %s block "
		       "executions, %s instructions\n  %s\n",
		       path, verdict, dbtp_arch_name(in->arch),
		       dbtp_mode_name(in->mode), fmt_u64(in->records, n1),
		       dbtp_trace_nthreads(t), fmt_u64(blocks, n2),
		       fmt_u64(insns, n3), ending);
	}
	dbtp_trace_close(t);
	return rc;
}

/*
 * shadow-model TRACE: a mem-mode trace's first thread through dbtprof's
 * L1/L2 model (dbtp_cache_tally(), the default geometry) twice: its
 * accesses alone, and each access followed by what memcheck's check of it
 * reads, the primary map's entry (8 bytes at a >> 16) and the secondary
 * map's bits (a quarter of the access, each 64 KiB chunk's map 16 KiB,
 * given in order of first touch); and the same through a 64-entry,
 * 1,536-entry TLB of 4 KiB pages.  bench/RESULTS.md, "What memcheck pays
 * more for in sqlite".  Build against the library:
 *   cc -O2 -Iinclude bench/probes/shadow-model.c build/libdbtp.a \
 *      -lzstd -lcapstone -lpthread -lm -o shadow-model
 */
#include <stdint.h>
#include <stdio.h>

#include "dbtp/cache.h"
#include "dbtp/trace.h"

#define NCH (1u << 22)
static uint32_t chunk[NCH];
static uint64_t chkey[NCH];
static uint32_t nch;

/* Where memcheck's bits for @a lie in this model. */
static uint64_t secmap(uint64_t a)
{
	uint64_t k = a >> 16, h = (k * 0x9e3779b97f4a7c15ull) >> 42;

	while (chkey[h] && chkey[h] != k + 1)
		h = (h + 1) & (NCH - 1);
	if (!chkey[h]) {
		chkey[h] = k + 1;
		chunk[h] = nch++;
	}
	return 0x100000000000ull + (uint64_t)chunk[h] * 16384 +
	       ((a & 0xffff) >> 2);
}

int main(int argc, char **argv)
{
	struct dbtp_cache_geom t1 = {256 << 10, 4, 4096},
			       t2 = {6 << 20, 12, 4096};
	struct dbtp_cache_tally d = {0}, s = {0}, pm = {0}, sm = {0};
	struct dbtp_cache_tally td = {0}, ts = {0};
	dbtp_cache *cd, *cs, *tlbd, *tlbs;
	struct dbtp_event ev;
	dbtp_trace *t;
	dbtp_err e;
	int r;

	if (argc != 2 || dbtp_trace_open(&t, argv[1], &e) ||
	    dbtp_cache_new_default(&cd, &e) ||
	    dbtp_cache_new_default(&cs, &e) ||
	    dbtp_cache_new(&tlbd, &t1, &t2, &e) ||
	    dbtp_cache_new(&tlbs, &t1, &t2, &e)) {
		fprintf(stderr, "usage: shadow-model MEM-TRACE\n");
		return 2;
	}
	while ((r = dbtp_trace_next(t, &ev, &e)) > 0) {
		int st = !!(ev.mem_flags & DBTP_ACCESS_STORE);
		uint64_t pa, sa;

		if (ev.type != DBTP_EV_MEM || ev.thread != 0)
			continue;
		pa = 0x200000000000ull + ((ev.addr >> 16) & 0x1fffff) * 8;
		sa = secmap(ev.addr);
		dbtp_cache_tally(cd, ev.addr, ev.size, st, &d);
		dbtp_cache_tally(cs, ev.addr, ev.size, st, &s);
		dbtp_cache_tally(cs, pa, 8, 0, &pm);
		dbtp_cache_tally(cs, sa, ev.size >= 4 ? ev.size / 4 : 1, st,
				 &sm);
		dbtp_cache_tally(tlbd, ev.addr, 1, 0, &td);
		dbtp_cache_tally(tlbs, ev.addr, 1, 0, &ts);
		dbtp_cache_tally(tlbs, pa, 1, 0, &ts);
		dbtp_cache_tally(tlbs, sa, 1, 0, &ts);
	}
	if (r < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	printf("accesses %llu, 64 KiB chunks %u\n", (unsigned long long)d.ops,
	       nch);
	printf("alone: L1 misses %llu, L2 %llu\n", (unsigned long long)d.l1,
	       (unsigned long long)d.l2);
	printf("with the shadow: L1 misses %llu (shadow-induced %llu), "
	       "primary map %llu, secondary maps %llu\n",
	       (unsigned long long)(s.l1 + pm.l1 + sm.l1),
	       (unsigned long long)(s.l1 + pm.l1 + sm.l1 - d.l1),
	       (unsigned long long)pm.l1, (unsigned long long)sm.l1);
	printf("TLB: L1 misses %llu alone, %llu with the shadow\n",
	       (unsigned long long)td.l1, (unsigned long long)ts.l1);
	return 0;
}

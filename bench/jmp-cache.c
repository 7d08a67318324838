/* SPDX-License-Identifier: MIT */
/*
 * jmp-cache.c - QEMU's per-vCPU jump cache simulated on a recorded block
 * stream: how often looking up the next translated block by its guest
 * address would miss the cache and fall back to the hash table.  Under
 * -d nochain every block transition is such a lookup, so the misses are
 * part of what a program pays there.
 *
 *   dbtprof dump TRACE | jmp-cache [BLOCKS]
 *
 * prints "blocks N hits H misses M".  The cache is QEMU 7.2's for user
 * mode: 4096 entries, indexed by its user-mode tb_jmp_cache_hash_func(),
 * (pc ^ pc >> 12) & 4095, one per guest thread (a vCPU each in user
 * mode).  (The figures in bench/RESULTS.md before "A loop on one page"
 * came from the system-mode hash, page bits folded into the top six
 * index bits.)  It keys blocks by address only: on AArch64 under -cpu
 * max QEMU keys them by the BTYPE they were entered with too, as
 * `dbtprof gentest`'s model of the same cache (its summary's "jump
 * cache" line) does.
 *
 * With BLOCKS, the output of `dbtprof dump --blocks TRACE` (x86-64), it
 * also prints "lookups cross-page C indirect I misses M": the transitions
 * plain QEMU looks up instead of chaining (a block to one that starts on
 * another page than it does, and every return, indirect jump or indirect
 * call), and how often those alone would miss a cache that only they
 * fill.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BITS 12
#define MAX_THREADS 4096

static unsigned slot(uint64_t pc)
{
	return (unsigned)((pc ^ pc >> BITS) & ((1u << BITS) - 1));
}

/* A cache of 1 << BITS addresses, all empty; NULL out of memory. */
static uint64_t *new_cache(void)
{
	uint64_t *c = malloc(sizeof(uint64_t) << BITS);

	if (c)
		memset(c, 0xff, sizeof(uint64_t) << BITS);
	return c;
}

/* 1 if the cache misses @pc (and now holds it). */
static int miss(uint64_t *c, uint64_t pc)
{
	if (c[slot(pc)] == pc)
		return 0;
	c[slot(pc)] = pc;
	return 1;
}

/* Whether disassembly @ins ("mnemonic operands") ends a block with a
 * transfer QEMU looks up: ret, or jmp/call to a register or memory. */
static int indirect(const char *ins)
{
	if (!strncmp(ins, "ret", 3))
		return 1;
	if (!strncmp(ins, "jmp ", 4))
		return strncmp(ins + 4, "0x", 2) != 0;
	if (!strncmp(ins, "call ", 5))
		return strncmp(ins + 5, "0x", 2) != 0;
	return 0;
}

/* Block table: id -> last instruction indirect (bit 0), known (bit 1). */
static unsigned char *kinds;
static size_t nkinds;

static int read_blocks(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], last[512] = "";
	long cur = -1;

	if (!f) {
		perror(path);
		return -1;
	}
	for (;;) {
		int eof = !fgets(line, sizeof(line), f);

		if ((eof || !strncmp(line, "block ", 6)) && cur >= 0) {
			if ((size_t)cur >= nkinds) {
				size_t n = (size_t)cur * 2 + 1024;
				unsigned char *k = realloc(kinds, n);

				if (!k) {
					fclose(f);
					return -1;
				}
				memset(k + nkinds, 0, n - nkinds);
				kinds = k;
				nkinds = n;
			}
			kinds[cur] = (unsigned char)(2 | indirect(last));
		}
		if (eof)
			break;
		if (!strncmp(line, "block ", 6)) {
			cur = strtol(line + 6, NULL, 10);
		} else if (line[0] == ' ' && line[1] == ' ') {
			/* "  0xADDRESS  mnemonic operands" */
			char *p = line + 2;

			p += strcspn(p, " ");
			p += strspn(p, " ");
			snprintf(last, sizeof(last), "%s", p);
		}
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static uint64_t *cache[MAX_THREADS], *lcache[MAX_THREADS];
	static uint64_t prev[MAX_THREADS];
	static unsigned prev_id[MAX_THREADS];
	uint64_t blocks = 0, misses = 0, cross = 0, ind = 0, lmisses = 0, pc;
	unsigned th, id;
	char line[512];

	if (argc > 2 || (argc == 2 && read_blocks(argv[1]))) {
		fputs("usage: dbtprof dump TRACE | jmp-cache [BLOCKS]\n",
		      stderr);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "T%u block %u %" SCNx64, &th, &id, &pc) != 3)
			continue;
		if (th >= MAX_THREADS) {
			fprintf(stderr, "jmp-cache: thread %u: too many\n", th);
			return 1;
		}
		if (!cache[th] && (!(cache[th] = new_cache()) ||
				   (kinds && !(lcache[th] = new_cache())))) {
			fputs("jmp-cache: out of memory\n", stderr);
			return 1;
		}
		blocks++;
		misses += (uint64_t)miss(cache[th], pc);
		if (kinds && prev[th]) {
			unsigned k =
			    prev_id[th] < nkinds ? kinds[prev_id[th]] : 0;
			int look = 1;

			if (!(k & 2)) {
				fprintf(stderr,
					"jmp-cache: block %u not in "
					"the table\n",
					prev_id[th]);
				return 1;
			}
			if (k & 1)
				ind++;
			else if (prev[th] >> 12 != pc >> 12)
				cross++;
			else
				look = 0;
			if (look)
				lmisses += (uint64_t)miss(lcache[th], pc);
		}
		prev[th] = pc;
		prev_id[th] = id;
	}
	printf("blocks %" PRIu64 " hits %" PRIu64 " misses %" PRIu64 "\n",
	       blocks, blocks - misses, misses);
	if (kinds)
		printf("lookups cross-page %" PRIu64 " indirect %" PRIu64
		       " misses %" PRIu64 "\n",
		       cross, ind, lmisses);
	return 0;
}

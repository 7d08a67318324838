/* SPDX-License-Identifier: MIT */
/*
 * jmp-cache.c - QEMU's per-vCPU jump cache simulated on a recorded block
 * stream: how often looking up the next translated block by its guest
 * address would miss the cache and fall back to the hash table.  Under
 * -d nochain every block transition is such a lookup, so the misses are
 * part of what a program pays there.
 *
 *   dbtprof dump TRACE | jmp-cache
 *
 * prints "blocks N hits H misses M".  The cache is QEMU 7.2's for user
 * mode: 4096 entries, indexed by tb_jmp_cache_hash_func() (page bits
 * 12-23 folded into the top six index bits, address bits 0-11 into the
 * low six), one per guest thread (a vCPU each in user mode).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BITS 12
#define MAX_THREADS 4096

static unsigned slot(uint64_t pc)
{
	uint64_t t = pc ^ (pc >> (12 - BITS / 2));

	return (unsigned)(((t >> (12 - BITS / 2)) &
			   ((1u << BITS) - (1u << (BITS / 2)))) |
			  (t & ((1u << (BITS / 2)) - 1)));
}

int main(void)
{
	static uint64_t *cache[MAX_THREADS];
	uint64_t blocks = 0, misses = 0, pc;
	unsigned th, id;
	char line[512];

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "T%u block %u %" SCNx64, &th, &id, &pc) != 3)
			continue;
		if (th >= MAX_THREADS) {
			fprintf(stderr, "jmp-cache: thread %u: too many\n", th);
			return 1;
		}
		if (!cache[th]) {
			cache[th] = malloc(sizeof(uint64_t) << BITS);
			if (!cache[th]) {
				fputs("jmp-cache: out of memory\n", stderr);
				return 1;
			}
			memset(cache[th], 0xff, sizeof(uint64_t) << BITS);
		}
		blocks++;
		if (cache[th][slot(pc)] != pc) {
			misses++;
			cache[th][slot(pc)] = pc;
		}
	}
	printf("blocks %" PRIu64 " hits %" PRIu64 " misses %" PRIu64 "\n",
	       blocks, blocks - misses, misses);
	return 0;
}

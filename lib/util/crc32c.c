/* SPDX-License-Identifier: MIT */
/*
 * CRC-32C, reflected polynomial 0x82f63b78, computed slicing-by-8 from tables
 * built on first use.  Uses the SSE4.2 crc32 instruction when the host has it.
 */
#include <pthread.h>
#include <string.h>

#include "util/crc32c.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < 8; s++)
			table[s][i] = (table[s - 1][i] >> 8) ^
				      table[0][table[s - 1][i] & 0xff];
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t c, const uint8_t *p, size_t len)
{
	uint64_t c64 = c;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c64 = __builtin_ia32_crc32di(c64, w);
		p += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	while (len--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t len)
{
	pthread_once(&table_once, table_init);
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		    table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		    table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		    table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
	return c;
}

uint32_t dbtp_crc32c(uint32_t crc, const void *p, size_t len)
{
	uint32_t c = ~crc;

#if defined(__x86_64__)
	static int hw = -1;

	if (hw < 0)
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (hw)
		return ~crc_hw(c, p, len);
#endif
	return ~crc_sw(c, p, len);
}

/* SPDX-License-Identifier: MIT */
/* test-u64map.c - the address map: insert, find, absent keys, growth. */
#include "t.h"
#include "util/u64map.h"

int main(void)
{
	struct dbtp_u64map m = {0};
	uint64_t *v;

	CHECK(dbtp_u64map_find(&m, 0) == NULL);
	for (uint64_t k = 0; k < 100000; k++) {
		v = dbtp_u64map_slot(&m, k * 0x40 + 0x400000);
		CHECK(v && *v == 0);
		if (v)
			*v = k + 1;
	}
	CHECK_EQ(m.used, 100000);
	for (uint64_t k = 0; k < 100000; k += 97) {
		v = dbtp_u64map_find(&m, k * 0x40 + 0x400000);
		CHECK(v && *v == k + 1);
		/* slot on an existing key returns the same value */
		CHECK(dbtp_u64map_slot(&m, k * 0x40 + 0x400000) == v);
	}
	CHECK(dbtp_u64map_find(&m, 0x400001) == NULL);
	CHECK(dbtp_u64map_find(&m, 0) == NULL);
	v = dbtp_u64map_slot(&m, 0);
	CHECK(v && *v == 0);
	CHECK(dbtp_u64map_find(&m, 0) == v);
	CHECK_EQ(m.used, 100001);
	dbtp_u64map_free(&m);
	CHECK(dbtp_u64map_find(&m, 0x400000) == NULL);
	return T_DONE();
}

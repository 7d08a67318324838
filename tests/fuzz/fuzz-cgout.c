/* SPDX-License-Identifier: MIT */
/*
 * fuzz-cgout.c - libFuzzer harness for the reader of cachegrind's output
 * (gentest validate --measure instructions where there is no counter):
 * any bytes give a count or fail with a message, and never read past
 * their end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/counter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly @size bytes, so that ASAN sees an overread */
	char *s = malloc(size ? size : 1);
	uint64_t ir = 0;
	dbtp_err err = {0};

	if (!s)
		return 0;
	memcpy(s, data, size);
	if (dbtp_cachegrind_ir(s, size, &ir, &err) && !err.msg[0])
		abort();
	free(s);
	return 0;
}

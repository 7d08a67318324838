/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run a fuzz harness over saved inputs without libFuzzer, so
 * `make check` (and `make asan`) replays the corpus and every input that
 * once crashed.  Usage: replay-NAME FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc(n > 0 ? (size_t)n : 1);
		if (!buf ||
		    (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
	}
	printf("replayed %d inputs\n", argc - 1);
	return 0;
}

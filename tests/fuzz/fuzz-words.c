/* SPDX-License-Identifier: MIT */
/*
 * fuzz-words.c - libFuzzer harness for the shell-style word splitter of
 * command lines (gentest validate's --original, --generated, --config):
 * any bytes split cleanly or fail with a message, and words that split
 * come back unchanged when quoted again and split a second time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/words.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *q, *p;
	char **v = NULL, **w = NULL;
	dbtp_err err = {0};
	int n = 0, m = 0;
	size_t len = 0;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (dbtp_words_split(s, &v, &n, &err)) {
		if (!err.msg[0] || v || n)
			abort();
		free(s);
		return 0;
	}
	for (int i = 0; i < n; i++)
		len += 4 * strlen(v[i]) + 3;
	q = p = malloc(len + 1);
	if (!q)
		abort();
	/* each word in '...', a ' as '\'' */
	for (int i = 0; i < n; i++) {
		*p++ = '\'';
		for (const char *c = v[i]; *c; c++) {
			if (*c == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *c;
			}
		}
		*p++ = '\'';
		*p++ = ' ';
	}
	*p = '\0';
	if (dbtp_words_split(q, &w, &m, &err) || m != n)
		abort();
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], w[i]))
			abort();
	free(w);
	free(q);
	free(v);
	free(s);
	return 0;
}

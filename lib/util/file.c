/* SPDX-License-Identifier: MIT */
/*
 * file.c - a whole file read into memory (util/file.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

int dbtp_read_file(const char *path, char **out, size_t *len, dbtp_err *err)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return dbtp_err_set(err, errno, "%s: %s", path,
				    strerror(errno));
	for (;;) {
		size_t r;

		if (cap - n < 4096) {
			char *q = realloc(p, cap ? cap * 2 : 8192);

			if (!q) {
				free(p);
				fclose(f);
				return dbtp_err_set(err, ENOMEM,
						    "out of memory");
			}
			p = q;
			cap = cap ? cap * 2 : 8192;
		}
		r = fread(p + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(p);
		fclose(f);
		return dbtp_err_set(err, e, "%s: %s", path, strerror(e));
	}
	fclose(f);
	p[n] = 0;
	*out = p;
	*len = n;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* words.c - shell-style word splitting (util/words.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/words.h"

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/*
 * One pass over @s: the words' characters, each word NUL-terminated, go to
 * @out if not NULL.  Returns the word count, or -1 with @bad set to the
 * offset of the quote or backslash left open.
 */
static int scan(const char *s, char *out, size_t *bad)
{
	int n = 0;
	size_t o = 0;

	for (size_t i = 0; s[i];) {
		if (blank(s[i])) {
			i++;
			continue;
		}
		for (; s[i] && !blank(s[i]); i++) {
			char q = s[i];

			if (q == '\\') {
				if (!s[i + 1])
					return *bad = i, -1;
				if (out)
					out[o] = s[i + 1];
				o++, i++;
			} else if (q == '\'' || q == '"') {
				size_t open = i;

				for (i++; s[i] && s[i] != q; i++) {
					if (q == '"' && s[i] == '\\' &&
					    (s[i + 1] == '"' ||
					     s[i + 1] == '\\'))
						i++;
					if (out)
						out[o] = s[i];
					o++;
				}
				if (!s[i])
					return *bad = open, -1;
			} else {
				if (out)
					out[o] = q;
				o++;
			}
		}
		if (out)
			out[o] = '\0';
		o++, n++;
	}
	return n;
}

int dbtp_words_split(const char *s, char ***argv, int *argc, dbtp_err *err)
{
	size_t len = strlen(s), bad = 0;
	int n = scan(s, NULL, &bad);
	char **v, *text;

	*argv = NULL;
	*argc = 0;
	if (n < 0)
		return dbtp_err_set(err, EINVAL, "offset %zu: unterminated %s",
				    bad,
				    s[bad] == '\\' ? "backslash" : "quote");
	/* the pointers, then the words: no word is longer than @s */
	v = malloc((size_t)(n + 1) * sizeof(*v) + len + 1);
	if (!v)
		return dbtp_err_set(err, ENOMEM, "out of memory");
	text = (char *)(v + n + 1);
	scan(s, text, &bad);
	for (int k = 0; k < n; k++) {
		v[k] = text;
		text += strlen(text) + 1;
	}
	v[n] = NULL;
	*argv = v;
	*argc = n;
	return 0;
}

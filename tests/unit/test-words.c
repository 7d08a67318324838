/* SPDX-License-Identifier: MIT */
/*
 * test-words.c - shell-style word splitting: blanks, both quotes,
 * backslashes, empty words, and the errors of an open quote or backslash.
 */
#include <stdlib.h>

#include "t.h"
#include "util/words.h"

/* @s splits into the @n words of @want, joined by '|' */
static void check(const char *s, int n, const char *want)
{
	char **v, got[512] = "";
	dbtp_err err = {0};
	int argc = -1;

	CHECK(dbtp_words_split(s, &v, &argc, &err) == 0);
	CHECK_EQ(argc, n);
	if (!v)
		return;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(got, "|");
		strcat(got, v[i]);
	}
	CHECK(v[argc] == NULL);
	CHECK_STR(got, want);
	free(v);
}

static void fails(const char *s, const char *msg)
{
	char **v = (char **)1;
	dbtp_err err = {0};
	int argc = -1;

	CHECK(dbtp_words_split(s, &v, &argc, &err) == -1);
	CHECK(v == NULL);
	CHECK_EQ(argc, 0);
	CHECK_STR(err.msg, msg);
}

int main(void)
{
	check("", 0, "");
	check(" \t\n ", 0, "");
	check("a", 1, "a");
	check("  qemu-x86_64 -d  nochain\tprog ", 4,
	      "qemu-x86_64|-d|nochain|prog");
	check("sqlite3 :memory: '.read /tmp/x y.sql'", 3,
	      "sqlite3|:memory:|.read /tmp/x y.sql");
	check("a\"b c\"d 'e f'g", 2, "ab cd|e fg");
	check("'' \"\" x", 3, "||x");
	check("\\ a\\'b \\\\", 2, " a'b|\\");
	/* inside "...", only \" and \\ are escapes */
	check("\"a\\\"b\\\\c\\d\\$\"", 1, "a\"b\\c\\d\\$");
	/* inside '...', nothing is */
	check("'a\\b\"c'", 1, "a\\b\"c");
	check("$HOME *.c ~", 3, "$HOME|*.c|~");
	fails("a 'b c", "offset 2: unterminated quote");
	fails("\"abc", "offset 0: unterminated quote");
	fails("\"a\\\"", "offset 0: unterminated quote");
	fails("ab\\", "offset 2: unterminated backslash");
	return T_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * util/words.h - a command line split into words the way a POSIX shell
 * quotes them: blanks separate words, '...' keeps everything literally,
 * "..." keeps everything but \" and \\, a backslash outside quotes keeps
 * the next character.  No expansion of any kind.
 */
#ifndef DBTP_UTIL_WORDS_H
#define DBTP_UTIL_WORDS_H

#include "dbtp/common.h"

/**
 * dbtp_words_split() - split @s into a NULL-terminated @argv of @argc words
 * (one allocation, freed with free(*argv)).  An unterminated quote or a
 * trailing backslash is an error naming its offset.
 */
int dbtp_words_split(const char *s, char ***argv, int *argc, dbtp_err *err);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * util/file.h - a whole file read into memory.
 */
#ifndef DBTP_UTIL_FILE_H
#define DBTP_UTIL_FILE_H

#include <stddef.h>

#include "dbtp/common.h"

/**
 * dbtp_read_file() - the bytes of @path in @out (NUL-terminated, freed by
 * the caller), their number in @len.  0, or -1 with @err naming the path.
 */
int dbtp_read_file(const char *path, char **out, size_t *len, dbtp_err *err);

#endif

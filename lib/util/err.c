/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dbtp/common.h"

int dbtp_err_set(dbtp_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

const char *dbtp_arch_name(enum dbtp_arch arch)
{
	switch (arch) {
	case DBTP_ARCH_X86_64:
		return "x86_64";
	case DBTP_ARCH_AARCH64:
		return "aarch64";
	default:
		return "unknown";
	}
}

enum dbtp_arch dbtp_arch_from_name(const char *name)
{
	if (!strcmp(name, "x86_64"))
		return DBTP_ARCH_X86_64;
	if (!strcmp(name, "aarch64"))
		return DBTP_ARCH_AARCH64;
	return DBTP_ARCH_UNKNOWN;
}

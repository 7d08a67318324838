/* SPDX-License-Identifier: MIT */
/* dbtp/syscalls.h - Linux syscall names of the guest architectures. */
#ifndef DBTP_SYSCALLS_H
#define DBTP_SYSCALLS_H

#include "dbtp/common.h"

/** dbtp_syscall_name() - "write" for (x86_64, 1); NULL if unknown. */
const char *dbtp_syscall_name(enum dbtp_arch arch, long long num);

#endif

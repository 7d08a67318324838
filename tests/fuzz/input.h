/* SPDX-License-Identifier: MIT */
/*
 * input.h - a fuzzer's input as a file for the readers that take one: a
 * memfd holding the bytes, at offset 0.
 */
#ifndef DBTP_FUZZ_INPUT_H
#define DBTP_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

/* A descriptor of a memfd holding @size bytes of @data; -1 if none. */
static inline int fuzz_input_fd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		return -1;
	if ((size && write(fd, data, size) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif

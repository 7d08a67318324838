/* SPDX-License-Identifier: MIT */
/*
 * dbtp/elf.h - a small ELF64 little-endian reader (x86-64 and AArch64):
 * probing an executable and symbolising code addresses.
 *
 * Every offset and size read from a file is bounds-checked: a malformed file
 * makes the calls fail with an error, never read out of bounds.
 */
#ifndef DBTP_ELF_H
#define DBTP_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "dbtp/common.h"

/**
 * dbtp_elf_probe() - identify an ELF executable.
 * @path: file to read.
 * @arch: set to DBTP_ARCH_X86_64 or DBTP_ARCH_AARCH64.
 * @is_dynamic: set to 1 if the file has a PT_INTERP program header, else 0.
 * @interp: if non-NULL, receives the interpreter path ("" if none),
 *          NUL-terminated and truncated to @interp_size bytes.
 * @interp_size: size of @interp.
 * @err: filled on failure.
 *
 * Fails on anything that is not a 64-bit little-endian ET_EXEC/ET_DYN ELF
 * file for x86-64 or AArch64, and on unreadable or truncated files.
 *
 * Return: 0 on success, -1 on failure.
 */
int dbtp_elf_probe(const char *path, enum dbtp_arch *arch, int *is_dynamic,
		   char *interp, size_t interp_size, dbtp_err *err);

/**
 * dbtp_elf_probe_mem() - dbtp_elf_probe() on an in-memory image.
 * @name: used in error messages in place of the path.
 *
 * Return: 0 on success, -1 on failure.
 */
int dbtp_elf_probe_mem(const uint8_t *data, size_t size, const char *name,
		       enum dbtp_arch *arch, int *is_dynamic, char *interp,
		       size_t interp_size, dbtp_err *err);

/* Function symbols of one ELF file plus its PT_LOAD file-offset mapping. */
typedef struct dbtp_symtab dbtp_symtab;

/**
 * dbtp_symtab_load() - load the function symbols of an ELF file.
 * @out: receives the table (free with dbtp_symtab_free()).
 * @path: file to read.
 * @err: filled on failure.
 *
 * Reads .symtab if present, else .dynsym.  A file without symbols loads as
 * an empty table.  At one address a global symbol is preferred over a weak
 * or local alias (then FUNC over NOTYPE, default symbol version over a
 * hidden one, shortest name, smallest name).  Symbols of size 0 extend to
 * the next symbol, but not past the end of their section.
 *
 * Return: 0 on success, -1 on failure.
 */
int dbtp_symtab_load(dbtp_symtab **out, const char *path, dbtp_err *err);

/**
 * dbtp_symtab_load_mem() - dbtp_symtab_load() on an in-memory image.
 * @name: used in error messages in place of the path.
 *
 * The table does not reference @data after the call returns.
 *
 * Return: 0 on success, -1 on failure.
 */
int dbtp_symtab_load_mem(dbtp_symtab **out, const uint8_t *data, size_t size,
			 const char *name, dbtp_err *err);

/**
 * dbtp_symtab_lookup() - symbolise a file offset.
 * @st: table.
 * @file_offset: offset in the file of the code (mapped through PT_LOAD).
 * @delta: if non-NULL, receives the offset from the symbol's start.
 *
 * Return: name of the function containing the code, or NULL if none.  The
 * string lives as long as @st.
 */
const char *dbtp_symtab_lookup(const dbtp_symtab *st, uint64_t file_offset,
			       uint64_t *delta);

/**
 * dbtp_symtab_lookup_vaddr() - symbolise an ELF virtual address.
 * @st: table.
 * @vaddr: virtual address as in the file (not relocated).
 * @delta: if non-NULL, receives the offset from the symbol's start.
 *
 * Return: name of the function containing @vaddr, or NULL if none.
 */
const char *dbtp_symtab_lookup_vaddr(const dbtp_symtab *st, uint64_t vaddr,
				     uint64_t *delta);

/**
 * dbtp_symtab_offset_to_vaddr() - map a file offset through PT_LOAD.
 * @st: table.
 * @file_offset: offset in the file.
 * @vaddr: receives the ELF virtual address.
 *
 * Return: 0 on success, -1 if no PT_LOAD segment holds @file_offset.
 */
int dbtp_symtab_offset_to_vaddr(const dbtp_symtab *st, uint64_t file_offset,
				uint64_t *vaddr);

/**
 * dbtp_symtab_find() - find a function symbol by name.
 * @st: table.
 * @name: exact symbol name (no "@VERSION" suffix); aliases are found too.
 * @vaddr: if non-NULL, receives its ELF virtual address.
 * @size: if non-NULL, receives its size (for a size-0 symbol, its extent
 *        as used by the lookups).
 *
 * When several symbols share the name, the best ranked one (as for
 * aliases) is returned, then the lowest address.
 *
 * Return: 0 if found, -1 if not.
 */
int dbtp_symtab_find(const dbtp_symtab *st, const char *name, uint64_t *vaddr,
		     uint64_t *size);

/** dbtp_symtab_count() - number of distinct symbol addresses in @st. */
size_t dbtp_symtab_count(const dbtp_symtab *st);

/** dbtp_symtab_free() - free @st (NULL is ok). */
void dbtp_symtab_free(dbtp_symtab *st);

/* Per-path cache of loaded tables, failures included. */
typedef struct dbtp_symcache dbtp_symcache;

/**
 * dbtp_symcache_new() - create an empty cache.
 *
 * Return: the cache, or NULL if out of memory.
 */
dbtp_symcache *dbtp_symcache_new(void);

/**
 * dbtp_symcache_get() - table of @path, loaded on first use.
 * @c: cache.
 * @path: file path, e.g. from /proc/PID/maps ("[heap]" etc. just fail).
 *
 * A file that cannot be loaded is remembered and not retried.
 *
 * Return: the table (owned by @c), or NULL if @path cannot be loaded.
 */
const dbtp_symtab *dbtp_symcache_get(dbtp_symcache *c, const char *path);

/** dbtp_symcache_free() - free @c and every table in it (NULL is ok). */
void dbtp_symcache_free(dbtp_symcache *c);

#endif

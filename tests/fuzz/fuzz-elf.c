/* SPDX-License-Identifier: MIT */
/*
 * fuzz-elf.c - libFuzzer harness for what reads a program file's first
 * bytes: lib/isa/elf.c's probe, symbol table load and lookups, and
 * lib/run/run.c's "#!" line parser, on arbitrary bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/elf.h"
#include "dbtp/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A "#!" line parsed: words within bounds, without the blanks and the
 * newline around them; a line cut short or without an interpreter refused. */
static void shebang(const uint8_t *copy, size_t size)
{
	char interp[DBTP_SHEBANG_MAX], arg[DBTP_SHEBANG_MAX];
	size_t k, a;
	int r = dbtp_shebang_parse((const char *)copy, size, interp, arg);

	if (r < -2 || r > 1 || (size < 2 && r) ||
	    (r && (copy[0] != '#' || copy[1] != '!')))
		__builtin_trap();
	if (r != 1)
		return;
	k = strnlen(interp, sizeof(interp));
	a = strnlen(arg, sizeof(arg));
	if (!k || k + a + 2 >= DBTP_SHEBANG_MAX || strpbrk(interp, " \t\n") ||
	    strchr(arg, '\n') ||
	    (a && (strchr(" \t", arg[0]) || strchr(" \t", arg[a - 1]))))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = {
	    0,	      1,	0x40,		0x1000,	    0x1040,
	    0x401000, 0x401040, UINT64_MAX - 1, UINT64_MAX,
	};
	enum dbtp_arch arch;
	char interp[16];
	dbtp_symtab *st = NULL;
	dbtp_err err;
	uint64_t d, va, sz;
	uint8_t *copy;
	size_t i;
	int dyn;

	/* an exact-size heap copy so ASan sees any overread */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);

	shebang(copy, size);
	dbtp_elf_probe_mem(copy, size, "fuzz", &arch, &dyn, interp,
			   sizeof(interp), &err);
	if (dbtp_symtab_load_mem(&st, copy, size, "fuzz", &err) == 0) {
		/* the table must not keep pointers into the input */
		memset(copy, 0xa5, size);
		for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			dbtp_symtab_lookup(st, probes[i], &d);
			dbtp_symtab_lookup_vaddr(st, probes[i], &d);
		}
		for (i = 0; i + 8 <= size && i < 256; i += 8) {
			const char *name;
			uint64_t x;

			memcpy(&x, data + i, sizeof(x));
			dbtp_symtab_lookup(st, x, &d);
			dbtp_symtab_offset_to_vaddr(st, x, &va);
			/* invariants: what a lookup names, find finds */
			name = dbtp_symtab_lookup_vaddr(st, x, &d);
			if (name &&
			    (d > x || dbtp_symtab_find(st, name, &va, &sz)))
				__builtin_trap();
		}
		dbtp_symtab_find(st, "main", &va, &sz);
		dbtp_symtab_find(st, "_start", &va, &sz);
		dbtp_symtab_find(st, "", &va, &sz);
		dbtp_symtab_count(st);
		dbtp_symtab_free(st);
	}
	free(copy);
	return 0;
}

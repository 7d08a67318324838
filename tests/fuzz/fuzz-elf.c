/* SPDX-License-Identifier: MIT */
/*
 * fuzz-elf.c - libFuzzer harness for lib/isa/elf.c: probe, symbol table
 * load and lookups on arbitrary bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbtp/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

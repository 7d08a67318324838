/* SPDX-License-Identifier: MIT */
/*
 * test-isa.c - lib/isa: ELF probe and symbol tables (checked against
 * readelf run on system files), and the Capstone wrapper.
 */
#include <elf.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "dbtp/disasm.h"
#include "dbtp/elf.h"
#include "t.h"

#define LIBC_X86 "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBC_A64 "/usr/aarch64-linux-gnu/lib/libc.so.6"

/* ------------------------------------------------- readelf references */

struct rsym {
	uint64_t value, size;
	char name[128];
};

/* Defined FUNC/IFUNC symbols of @path per "readelf -Ws", version dropped. */
static size_t ref_syms(const char *path, struct rsym **out)
{
	char cmd[512], line[1024], type[32], bind[32], vis[32], ndx[32];
	char name[512], *at;
	size_t n = 0, cap = 0;
	struct rsym *v = NULL;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -Ws '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long value;
		char size[32];

		if (sscanf(line, "%*u: %llx %31s %31s %31s %31s %31s %511s",
			   &value, size, type, bind, vis, ndx, name) != 7)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) ||
		    !strcmp(ndx, "UND") || !strcmp(ndx, "ABS") || !value)
			continue;
		at = strchr(name, '@');
		if (at)
			*at = '\0';
		if (strlen(name) >= sizeof(v->name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n].value = value;
		v[n].size = strtoull(size, NULL, 0);
		strcpy(v[n].name, name);
		n++;
	}
	pclose(f);
	*out = v;
	return n;
}

/* Address of the default version of @name per readelf, 0 if absent. */
static uint64_t ref_addr(const char *path, const char *name)
{
	char cmd[512], line[1024], want[256];
	uint64_t r = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -Ws '%s' 2>/dev/null", path);
	snprintf(want, sizeof(want), " %s@@", name);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long value;

		if (!strstr(line, want) || !strstr(line, "FUNC"))
			continue;
		if (sscanf(line, "%*u: %llx", &value) == 1)
			r = value;
		break;
	}
	pclose(f);
	return r;
}

/* File offset of @vaddr per the PT_LOAD lines of "readelf -lW". */
static uint64_t ref_offset(const char *path, uint64_t vaddr)
{
	char cmd[512], line[1024];
	unsigned long long off, va, pa, fsz;
	uint64_t r = UINT64_MAX;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return r;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " LOAD %llx %llx %llx %llx", &off, &va, &pa,
			   &fsz) != 4)
			continue;
		if (vaddr >= va && vaddr - va < fsz) {
			r = vaddr - va + off;
			break;
		}
	}
	pclose(f);
	return r;
}

static int cmp_rsym(const void *a, const void *b)
{
	const struct rsym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

static int file_exists(const char *path)
{
	return access(path, R_OK) == 0;
}

/* -------------------------------------------------------------- probe */

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static void test_probe(void)
{
	char interp[256], tmp[] = "/tmp/test-isa-XXXXXX";
	uint8_t buf[64] = {0};
	enum dbtp_arch arch = DBTP_ARCH_UNKNOWN;
	dbtp_err err = {0};
	int dyn = -1, fd;
	FILE *f;

	CHECK_EQ(dbtp_elf_probe("/bin/true", &arch, &dyn, interp,
				sizeof(interp), &err),
		 0);
#if defined(__x86_64__)
	CHECK_EQ(arch, DBTP_ARCH_X86_64);
	CHECK_STR(interp, "/lib64/ld-linux-x86-64.so.2");
#endif
	CHECK_EQ(dyn, 1);
	/* small interp buffer: truncated, still terminated */
	CHECK_EQ(dbtp_elf_probe("/bin/true", NULL, NULL, interp, 5, &err), 0);
	CHECK_EQ(strlen(interp), 4);

	/* nonexistent */
	CHECK_EQ(dbtp_elf_probe("/nonexistent/xyz", &arch, &dyn, NULL, 0, &err),
		 -1);
	CHECK(strstr(err.msg, "/nonexistent/xyz") != NULL);
	/* a directory */
	CHECK_EQ(dbtp_elf_probe("/tmp", &arch, &dyn, NULL, 0, &err), -1);
	CHECK(strstr(err.msg, "/tmp") != NULL);

	/* text file */
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	write_file(tmp, "#!/bin/sh\necho hello\n", 21);
	CHECK_EQ(dbtp_elf_probe(tmp, &arch, &dyn, NULL, 0, &err), -1);
	CHECK(strstr(err.msg, tmp) != NULL);
	CHECK(strstr(err.msg, "not an ELF") != NULL);

	/* empty file */
	write_file(tmp, "", 0);
	CHECK_EQ(dbtp_elf_probe(tmp, &arch, &dyn, NULL, 0, &err), -1);
	CHECK(strstr(err.msg, tmp) != NULL);

	/* the first 40 bytes of /bin/true */
	f = fopen("/bin/true", "rb");
	CHECK(f && fread(buf, 1, 40, f) == 40);
	if (f)
		fclose(f);
	write_file(tmp, buf, 40);
	CHECK_EQ(dbtp_elf_probe(tmp, &arch, &dyn, NULL, 0, &err), -1);
	CHECK(strstr(err.msg, tmp) != NULL);
	CHECK(strstr(err.msg, "truncated") != NULL);

	/* ELF32, big-endian, other machine */
	buf[EI_CLASS] = ELFCLASS32;
	CHECK_EQ(dbtp_elf_probe_mem(buf, 64, "x", &arch, &dyn, NULL, 0, &err),
		 -1);
	CHECK(strstr(err.msg, "64-bit") != NULL);
	buf[EI_CLASS] = ELFCLASS64;
	buf[EI_DATA] = ELFDATA2MSB;
	CHECK_EQ(dbtp_elf_probe_mem(buf, 64, "x", &arch, &dyn, NULL, 0, &err),
		 -1);
	CHECK(strstr(err.msg, "little-endian") != NULL);
	f = fopen("/bin/true", "rb");
	CHECK(f && fread(buf, 1, 64, f) == 64);
	if (f)
		fclose(f);
	buf[18] = EM_RISCV;
	buf[19] = 0;
	CHECK_EQ(
	    dbtp_elf_probe_mem(buf, 64, "rv.elf", &arch, &dyn, NULL, 0, &err),
	    -1);
	CHECK_STR(err.msg, "rv.elf: not an x86-64 or AArch64 ELF executable "
			   "(e_machine 243)");
	/* program headers beyond the end */
	buf[18] = EM_X86_64;
	CHECK_EQ(dbtp_elf_probe_mem(buf, 64, "t", &arch, &dyn, NULL, 0, &err),
		 -1);
	CHECK(strstr(err.msg, "program headers") != NULL);
	unlink(tmp);

	if (file_exists(LIBC_A64)) {
		CHECK_EQ(dbtp_elf_probe(LIBC_A64, &arch, &dyn, NULL, 0, &err),
			 0);
		CHECK_EQ(arch, DBTP_ARCH_AARCH64);
	}
}

/* ---------------------------------------------------------- synthetic */

/*
 * A hand-made ELF image: .text at 0x401000 (file offset 0x1000, 0x100
 * bytes, not present in the image), a data section, and a .symtab.
 */
struct synsym {
	const char *name;
	uint64_t value, size;
	unsigned char bind, type;
	uint16_t shndx;
};

static size_t build_elf(uint8_t *img, size_t cap, const struct synsym *s,
			size_t ns)
{
	Elf64_Ehdr eh = {0};
	Elf64_Phdr ph = {0};
	Elf64_Shdr sh[5] = {{0}};
	size_t off, stroff, symoff, i, strsz = 1;

	memset(img, 0, cap);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	ph.p_type = PT_LOAD;
	ph.p_offset = 0x1000;
	ph.p_vaddr = 0x401000;
	ph.p_filesz = 0x100;
	ph.p_memsz = 0x100;
	memcpy(img + sizeof(eh), &ph, sizeof(ph));

	/* strings, then symbols, then section headers */
	stroff = sizeof(eh) + sizeof(ph);
	for (i = 0; i < ns; i++) {
		memcpy(img + stroff + strsz, s[i].name, strlen(s[i].name) + 1);
		strsz += strlen(s[i].name) + 1;
	}
	symoff = (stroff + strsz + 7) & ~(size_t)7;
	off = 1;
	for (i = 0; i < ns; i++) {
		Elf64_Sym sym = {0};

		sym.st_name = (uint32_t)off;
		off += strlen(s[i].name) + 1;
		sym.st_value = s[i].value;
		sym.st_size = s[i].size;
		sym.st_info = ELF64_ST_INFO(s[i].bind, s[i].type);
		sym.st_shndx = s[i].shndx;
		memcpy(img + symoff + (i + 1) * sizeof(sym), &sym, sizeof(sym));
	}
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[1].sh_addr = 0x401000;
	sh[1].sh_offset = 0x1000;
	sh[1].sh_size = 0x100;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[2].sh_addr = 0x402000;
	sh[2].sh_size = 0x100;
	sh[3].sh_type = SHT_SYMTAB;
	sh[3].sh_offset = symoff;
	sh[3].sh_size = (ns + 1) * sizeof(Elf64_Sym);
	sh[3].sh_entsize = sizeof(Elf64_Sym);
	sh[3].sh_link = 4;
	sh[4].sh_type = SHT_STRTAB;
	sh[4].sh_offset = stroff;
	sh[4].sh_size = strsz;
	eh.e_shoff = symoff + (ns + 1) * sizeof(Elf64_Sym);
	memcpy(img + eh.e_shoff, sh, sizeof(sh));
	memcpy(img, &eh, sizeof(eh));
	return eh.e_shoff + sizeof(sh);
}

static void test_synthetic(void)
{
	static const struct synsym syms[] = {
	    {"walias", 0x401000, 0x80, STB_WEAK, STT_FUNC, 1},
	    {"aa", 0x401000, 0x80, STB_LOCAL, STT_FUNC, 1},
	    {"outer", 0x401000, 0x80, STB_GLOBAL, STT_FUNC, 1},
	    {"$x", 0x401000, 0, STB_LOCAL, STT_NOTYPE, 1},
	    {"inner", 0x401020, 0x10, STB_LOCAL, STT_FUNC, 1},
	    {"zlabel", 0x401090, 0, STB_LOCAL, STT_NOTYPE, 1},
	    {"last", 0x4010a0, 0, STB_GLOBAL, STT_NOTYPE, 1},
	    {"bb", 0x4010f0, 0, STB_GLOBAL, STT_FUNC, 1},
	    {"abc", 0x4010f0, 0, STB_GLOBAL, STT_FUNC, 1},
	    {"ab", 0x4010f0, 0, STB_GLOBAL, STT_FUNC, 1},
	    {"data", 0x402000, 8, STB_GLOBAL, STT_FUNC, 2},
	    {"undef", 0, 0, STB_GLOBAL, STT_FUNC, SHN_UNDEF},
	    {"obj", 0x401010, 8, STB_GLOBAL, STT_OBJECT, 1},
	};
	static uint8_t img[4096];
	const size_t ns = sizeof(syms) / sizeof(syms[0]);
	dbtp_symtab *st = NULL;
	dbtp_err err = {0};
	uint64_t d = 99, va, sz;
	size_t n, cut;

	n = build_elf(img, sizeof(img), syms, ns);
	CHECK_EQ(dbtp_symtab_load_mem(&st, img, n, "syn", &err), 0);
	if (!st)
		return;
	CHECK_EQ(dbtp_symtab_count(st), 5);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x401000, &d), "outer");
	CHECK_EQ(d, 0);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x401025, &d), "inner");
	CHECK_EQ(d, 5);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x401030, &d), "outer");
	CHECK_EQ(d, 0x30);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x40107f, &d), "outer");
	CHECK(dbtp_symtab_lookup_vaddr(st, 0x401080, &d) == NULL);
	CHECK(dbtp_symtab_lookup_vaddr(st, 0x40108f, &d) == NULL);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x401095, &d), "zlabel");
	CHECK_EQ(d, 5);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x4010ef, &d), "last");
	CHECK_EQ(d, 0x4f);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, 0x4010ff, &d), "ab");
	CHECK_EQ(d, 0xf);
	CHECK(dbtp_symtab_lookup_vaddr(st, 0x401100, &d) == NULL);
	CHECK(dbtp_symtab_lookup_vaddr(st, 0x400fff, &d) == NULL);
	CHECK(dbtp_symtab_lookup_vaddr(st, 0x402000, &d) == NULL);
	CHECK(dbtp_symtab_lookup_vaddr(st, UINT64_MAX, &d) == NULL);
	/* by file offset */
	CHECK_STR(dbtp_symtab_lookup(st, 0x1026, &d), "inner");
	CHECK_EQ(d, 6);
	CHECK(dbtp_symtab_lookup(st, 0x26, &d) == NULL);
	CHECK(dbtp_symtab_lookup(st, 0x1100, &d) == NULL);
	CHECK_EQ(dbtp_symtab_offset_to_vaddr(st, 0x10ff, &va), 0);
	CHECK_EQ(va, 0x4010ff);
	/* by name, aliases included */
	CHECK_EQ(dbtp_symtab_find(st, "walias", &va, &sz), 0);
	CHECK_EQ(va, 0x401000);
	CHECK_EQ(sz, 0x80);
	CHECK_EQ(dbtp_symtab_find(st, "zlabel", &va, &sz), 0);
	CHECK_EQ(va, 0x401090);
	CHECK_EQ(sz, 0x10);
	CHECK_EQ(dbtp_symtab_find(st, "bb", &va, &sz), 0);
	CHECK_EQ(sz, 0x10);
	CHECK_EQ(dbtp_symtab_find(st, "$x", &va, &sz), -1);
	CHECK_EQ(dbtp_symtab_find(st, "data", &va, &sz), -1);
	CHECK_EQ(dbtp_symtab_find(st, "undef", &va, &sz), -1);
	CHECK_EQ(dbtp_symtab_find(st, "obj", &va, &sz), -1);
	CHECK_EQ(dbtp_symtab_find(st, "", &va, &sz), -1);
	CHECK_EQ(dbtp_symtab_find(st, "zzz", NULL, NULL), -1);
	dbtp_symtab_free(st);

	/* every truncation fails cleanly or loads */
	for (cut = 0; cut < n; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);

		memcpy(p, img, cut);
		if (dbtp_symtab_load_mem(&st, p, cut, "cut", &err) == 0)
			dbtp_symtab_free(st);
		else
			CHECK(st == NULL && !strncmp(err.msg, "cut: ", 5));
		free(p);
	}
}

/* ------------------------------------------------------ system files */

static void check_libc(const char *path)
{
	struct rsym *ref = NULL;
	dbtp_symtab *st = NULL;
	dbtp_err err = {0};
	uint64_t va, sz, d, off;
	size_t n, i, j, bad = 0;
	const char *nm;
	clock_t t0;

	CHECK_EQ(dbtp_symtab_load(&st, path, &err), 0);
	if (!st) {
		fprintf(stderr, "%s\n", err.msg);
		return;
	}
	CHECK(dbtp_symtab_count(st) > 1000);

	/* malloc: unique name at its address */
	CHECK_EQ(dbtp_symtab_find(st, "malloc", &va, &sz), 0);
	CHECK_EQ(va, ref_addr(path, "malloc"));
	CHECK(sz > 3);
	off = ref_offset(path, va);
	CHECK(off != UINT64_MAX);
	CHECK_STR(dbtp_symtab_lookup(st, off + 3, &d), "malloc");
	CHECK_EQ(d, 3);
	CHECK_STR(dbtp_symtab_lookup_vaddr(st, va + sz - 1, &d), "malloc");
	CHECK_EQ(d, sz - 1);

	/* getpid is a weak alias of the global __getpid */
	CHECK_EQ(dbtp_symtab_find(st, "getpid", &va, &sz), 0);
	CHECK_EQ(va, ref_addr(path, "getpid"));
	CHECK_EQ(dbtp_symtab_find(st, "__getpid", &d, NULL), 0);
	CHECK_EQ(d, va);
	off = ref_offset(path, va);
	CHECK_STR(dbtp_symtab_lookup(st, off + 3, &d), "__getpid");
	CHECK_EQ(d, 3);

	/* memcpy: the default version (@@) */
	CHECK_EQ(dbtp_symtab_find(st, "memcpy", &va, &sz), 0);
	CHECK_EQ(va, ref_addr(path, "memcpy"));
	CHECK_EQ(dbtp_symtab_find(st, "no_such_function_xyz", &va, &sz), -1);
	CHECK(dbtp_symtab_lookup(st, 0, &d) == NULL);

	/* every readelf function: lookup names one of its aliases */
	n = ref_syms(path, &ref);
	CHECK(n > 1000);
	qsort(ref, n, sizeof(*ref), cmp_rsym);
	for (i = 0; i < n; i = j) {
		int found = 0;

		for (j = i; j < n && ref[j].value == ref[i].value; j++)
			;
		nm = dbtp_symtab_lookup_vaddr(st, ref[i].value, &d);
		if (!nm || d) {
			bad++;
			continue;
		}
		for (size_t k = i; k < j; k++)
			found |= !strcmp(ref[k].name, nm);
		bad += !found;
		if (ref[i].size && j - i == 1) {
			nm = dbtp_symtab_lookup_vaddr(
			    st, ref[i].value + ref[i].size - 1, &d);
			/* a nested symbol may win; else the same one */
			if (nm && !strcmp(nm, ref[i].name))
				bad += d != ref[i].size - 1;
		}
	}
	CHECK_EQ(bad, 0);

	/* speed: 1M lookups by file offset */
	t0 = clock();
	d = 0;
	for (i = 0; i < 1000000; i++)
		d += dbtp_symtab_lookup(st, (i * 7919) % 0x200000, NULL) != 0;
	CHECK(d > 0);
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);

	free(ref);
	dbtp_symtab_free(st);
}

static void test_symtab(void)
{
	dbtp_symtab *st = (dbtp_symtab *)1;
	dbtp_err err = {0};

	CHECK_EQ(dbtp_symtab_load(&st, "/nonexistent/lib.so", &err), -1);
	CHECK(st == NULL);
	CHECK(strstr(err.msg, "/nonexistent/lib.so") != NULL);

	/* /bin/true: .dynsym holds only imports */
	CHECK_EQ(dbtp_symtab_load(&st, "/bin/true", &err), 0);
	dbtp_symtab_free(st);

	if (file_exists(LIBC_X86))
		check_libc(LIBC_X86);
	if (file_exists(LIBC_A64))
		check_libc(LIBC_A64);
}

static void test_symcache(void)
{
	dbtp_symcache *c = dbtp_symcache_new();
	const dbtp_symtab *a, *b;
	char path[64];
	int i;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(dbtp_symcache_get(c, "[heap]") == NULL);
	CHECK(dbtp_symcache_get(c, "[heap]") == NULL);
	CHECK(dbtp_symcache_get(c, "/nonexistent/x") == NULL);
	a = dbtp_symcache_get(c, "/bin/true");
	CHECK(a != NULL);
	if (file_exists(LIBC_X86)) {
		b = dbtp_symcache_get(c, LIBC_X86);
		CHECK(b != NULL && b != a);
		CHECK(dbtp_symcache_get(c, LIBC_X86) == b);
	}
	/* force the table to grow */
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/nonexistent/%d", i);
		CHECK(dbtp_symcache_get(c, path) == NULL);
	}
	CHECK(dbtp_symcache_get(c, "/bin/true") == a);
	dbtp_symcache_free(c);
	dbtp_symcache_free(NULL);
}

/* ------------------------------------------------------------- disasm */

static void test_disasm(void)
{
	static const uint8_t x86[] = "\x48\x89\xd8\x0f\x05\xc3";
	static const uint8_t a64[] = {0xc0, 0x03, 0x5f, 0xd6,
				      0x01, 0x00, 0x00, 0xd4};
	dbtp_disasm *d = NULL;
	dbtp_err err = {0};
	char text[64];

	CHECK_EQ(dbtp_disasm_open(&d, DBTP_ARCH_UNKNOWN, &err), -1);
	CHECK(d == NULL);

	CHECK_EQ(dbtp_disasm_open(&d, DBTP_ARCH_X86_64, &err), 0);
	if (d) {
		CHECK_EQ(dbtp_disasm_one(d, x86, 6, 0x1000, text, sizeof(text)),
			 3);
		CHECK_STR(text, "mov rax, rbx");
		CHECK_EQ(
		    dbtp_disasm_one(d, x86 + 3, 3, 0x1003, text, sizeof(text)),
		    2);
		CHECK_STR(text, "syscall");
		CHECK_EQ(
		    dbtp_disasm_one(d, x86 + 5, 1, 0x1005, text, sizeof(text)),
		    1);
		CHECK_STR(text, "ret");
		CHECK_EQ(
		    dbtp_disasm_one(d, (const uint8_t *)"\xe8\x00\x00\x00\x00",
				    5, 0x1000, text, sizeof(text)),
		    5);
		CHECK_STR(text, "call 0x1005");
		/* truncated instruction, empty buffer, tiny text buffer */
		CHECK_EQ(dbtp_disasm_one(d, x86, 2, 0, text, sizeof(text)), 0);
		CHECK_STR(text, "(bad)");
		CHECK_EQ(dbtp_disasm_one(d, x86, 0, 0, text, sizeof(text)), 0);
		CHECK_EQ(dbtp_disasm_one(d, x86, 6, 0, text, 5), 3);
		CHECK_STR(text, "mov");
		CHECK_EQ(dbtp_disasm_one(d, x86, 6, 0, NULL, 0), 3);
		CHECK_EQ(dbtp_disasm_count(d, x86, 6, 0x1000), 3);
		CHECK_EQ(dbtp_disasm_count(d, x86, 5, 0x1000), 2);
		CHECK_EQ(dbtp_disasm_count(d, x86, 0, 0x1000), 0);
		/* direct targets: jnz to itself, call; none for the rest */
		{
			static const struct {
				uint8_t len, bytes[5];
				int kind;
				uint64_t target;
			} br[] = {
			    {2, {0x75, 0xfe}, DBTP_BR_COND, 0x1000},
			    {5, {0xe8, 0, 0, 0, 0}, DBTP_BR_CALL, 0x1005},
			    {5, {0xe9, 0x10, 0, 0, 0}, DBTP_BR_JUMP, 0x1015},
			    {2, {0xff, 0xe0}, DBTP_BR_IND, UINT64_MAX},
			    {1, {0xc3}, DBTP_BR_RET, UINT64_MAX},
			    {3, {0x48, 0x89, 0xd8}, DBTP_BR_NONE, UINT64_MAX},
			};
			uint64_t t = 0;

			for (size_t i = 0; i < sizeof(br) / sizeof(*br); i++) {
				CHECK_EQ(dbtp_disasm_target(d, br[i].bytes,
							    br[i].len, 0x1000,
							    &t),
					 br[i].kind);
				CHECK_EQ(t, br[i].target);
			}
			CHECK_EQ(dbtp_disasm_target(d, x86, 1, 0, &t), -1);
			CHECK_EQ(t, UINT64_MAX);
		}
		dbtp_disasm_close(d);
	}

	CHECK_EQ(dbtp_disasm_open(&d, DBTP_ARCH_AARCH64, &err), 0);
	if (d) {
		CHECK_EQ(
		    dbtp_disasm_one(d, a64, 8, 0x400000, text, sizeof(text)),
		    4);
		CHECK_STR(text, "ret");
		CHECK_EQ(dbtp_disasm_one(d, a64 + 4, 4, 0x400004, text,
					 sizeof(text)),
			 4);
		CHECK_STR(text, "svc #0");
		CHECK_EQ(dbtp_disasm_one(d, a64, 3, 0, text, sizeof(text)), 0);
		CHECK_STR(text, "(bad)");
		CHECK_EQ(dbtp_disasm_one(d, (const uint8_t *)"\0\0\0\0", 4, 0,
					 text, sizeof(text)),
			 0);
		CHECK_EQ(dbtp_disasm_count(d, a64, 8, 0), 2);
		CHECK_EQ(dbtp_disasm_count(d, a64, 7, 0), 1);
		{
			/* at 0x400008: b.ne 0x400004; cbz x0 and tbz w1, #3
			 * (at 0x40000c, 0x400014); br x3 */
			static const struct {
				uint32_t w, at;
				int kind;
				uint64_t target;
			} br[] = {
			    {0x54ffffe1, 8, DBTP_BR_COND, 0x400004},
			    {0xb4000040, 12, DBTP_BR_COND, 0x400014},
			    {0x361fff81, 20, DBTP_BR_COND, 0x400004},
			    {0xd61f0060, 24, DBTP_BR_IND, UINT64_MAX},
			};
			uint64_t t = 0;

			for (size_t i = 0; i < sizeof(br) / sizeof(*br); i++) {
				uint8_t b[4];

				for (int k = 0; k < 4; k++)
					b[k] = (uint8_t)(br[i].w >> (8 * k));
				CHECK_EQ(dbtp_disasm_target(
					     d, b, 4, 0x400000 + br[i].at, &t),
					 br[i].kind);
				CHECK_EQ(t, br[i].target);
			}
		}
		dbtp_disasm_close(d);
	}
	dbtp_disasm_close(NULL);
}

int main(void)
{
	test_probe();
	test_synthetic();
	test_symtab();
	test_symcache();
	test_disasm();
	return T_DONE();
}

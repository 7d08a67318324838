/* SPDX-License-Identifier: MIT */
/*
 * elf.c - ELF64 little-endian reader: probe an executable, load its function
 * symbols and map file offsets / virtual addresses to "symbol+delta".
 *
 * The file is mapped read-only and parsed in place.  Nothing read from it is
 * trusted: every table offset, entry size and count is checked against the
 * image size before use, and structures are copied out with memcpy() since
 * offsets in a hostile file need not be aligned.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbtp/elf.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error                                                                         \
    "lib/isa/elf.c reads little-endian ELF in place: little-endian hosts only"
#endif

/* Bound on one name's length, so hostile string tables cannot cost O(n^2). */
#define NAME_MAX_LEN 65536

/* ---------------------------------------------------------------- image */

struct img {
	const uint8_t *data;
	size_t size;
	const char *name;
	Elf64_Ehdr eh;
	uint64_t phnum;
	uint64_t shnum;
};

static int in_range(const struct img *im, uint64_t off, uint64_t len)
{
	return off <= im->size && len <= im->size - off;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int img_open(struct img *im, const uint8_t *data, size_t size,
		    const char *name, dbtp_err *err)
{
	memset(im, 0, sizeof(*im));
	im->data = data;
	im->size = data ? size : 0;
	im->name = name ? name : "(memory)";
	name = im->name;

	if (im->size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG))
		return dbtp_err_set(err, 0, "%s: not an ELF file", name);
	if (data[EI_CLASS] != ELFCLASS64)
		return dbtp_err_set(err, 0,
				    "%s: not a 64-bit ELF file (class %u)",
				    name, data[EI_CLASS]);
	if (data[EI_DATA] != ELFDATA2LSB)
		return dbtp_err_set(err, 0, "%s: not a little-endian ELF file",
				    name);
	if (im->size < sizeof(Elf64_Ehdr))
		return dbtp_err_set(err, 0,
				    "%s: truncated ELF file (%zu bytes)", name,
				    im->size);
	memcpy(&im->eh, data, sizeof(im->eh));
	return 0;
}

/* Section header 0, which holds the extended counts; 0 if there is none. */
static int img_shdr0(const struct img *im, Elf64_Shdr *sh)
{
	if (!im->eh.e_shoff || im->eh.e_shentsize < sizeof(*sh) ||
	    !in_range(im, im->eh.e_shoff, sizeof(*sh)))
		return -1;
	memcpy(sh, im->data + im->eh.e_shoff, sizeof(*sh));
	return 0;
}

/* Validate the program header table; sets im->phnum. */
static int img_phdrs(struct img *im, dbtp_err *err)
{
	const Elf64_Ehdr *eh = &im->eh;
	Elf64_Shdr sh0;
	uint64_t n = eh->e_phnum;

	if (n == PN_XNUM) {
		if (img_shdr0(im, &sh0))
			return dbtp_err_set(err, 0,
					    "%s: truncated or malformed ELF "
					    "(extended program header count)",
					    im->name);
		n = sh0.sh_info;
	}
	if (n && (eh->e_phentsize < sizeof(Elf64_Phdr) ||
		  n > im->size / eh->e_phentsize ||
		  !in_range(im, eh->e_phoff, n * eh->e_phentsize)))
		return dbtp_err_set(err, 0,
				    "%s: truncated or malformed ELF "
				    "(program headers out of bounds)",
				    im->name);
	im->phnum = n;
	return 0;
}

/* Validate the section header table; sets im->shnum. */
static int img_shdrs(struct img *im, dbtp_err *err)
{
	const Elf64_Ehdr *eh = &im->eh;
	Elf64_Shdr sh0;
	uint64_t n = eh->e_shnum;

	if (!eh->e_shoff) {
		im->shnum = 0;
		return 0;
	}
	if (n == 0 && !img_shdr0(im, &sh0))
		n = sh0.sh_size;
	if (n && (eh->e_shentsize < sizeof(Elf64_Shdr) ||
		  n > im->size / eh->e_shentsize ||
		  !in_range(im, eh->e_shoff, n * eh->e_shentsize)))
		return dbtp_err_set(err, 0,
				    "%s: truncated or malformed ELF "
				    "(section headers out of bounds)",
				    im->name);
	im->shnum = n;
	return 0;
}

static void get_phdr(const struct img *im, uint64_t i, Elf64_Phdr *ph)
{
	memcpy(ph, im->data + im->eh.e_phoff + i * im->eh.e_phentsize,
	       sizeof(*ph));
}

static void get_shdr(const struct img *im, uint64_t i, Elf64_Shdr *sh)
{
	memcpy(sh, im->data + im->eh.e_shoff + i * im->eh.e_shentsize,
	       sizeof(*sh));
}

/* Map @path read-only; *data is NULL for an empty file. */
static int map_file(const char *path, const uint8_t **data, size_t *size,
		    dbtp_err *err)
{
	struct stat sb;
	void *p;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dbtp_err_set(err, errno, "%s: %s", path,
				    strerror(errno));
	if (fstat(fd, &sb)) {
		e = errno;
		close(fd);
		return dbtp_err_set(err, e, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return dbtp_err_set(err, 0, "%s: not a regular file", path);
	}
	*data = NULL;
	*size = 0;
	if (sb.st_size > 0) {
		p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd,
			 0);
		if (p == MAP_FAILED) {
			e = errno;
			close(fd);
			return dbtp_err_set(err, e, "%s: mmap: %s", path,
					    strerror(e));
		}
		*data = p;
		*size = (size_t)sb.st_size;
	}
	close(fd);
	return 0;
}

static void unmap_file(const uint8_t *data, size_t size)
{
	if (data)
		munmap((void *)data, size);
}

/* ---------------------------------------------------------------- probe */

int dbtp_elf_probe_mem(const uint8_t *data, size_t size, const char *name,
		       enum dbtp_arch *arch, int *is_dynamic, char *interp,
		       size_t interp_size, dbtp_err *err)
{
	struct img im;
	Elf64_Phdr ph;
	enum dbtp_arch a;
	uint64_t i;
	int dyn = 0;

	if (img_open(&im, data, size, name, err))
		return -1;
	name = im.name;
	switch (im.eh.e_machine) {
	case EM_X86_64:
		a = DBTP_ARCH_X86_64;
		break;
	case EM_AARCH64:
		a = DBTP_ARCH_AARCH64;
		break;
	default:
		return dbtp_err_set(err, 0,
				    "%s: not an x86-64 or AArch64 ELF "
				    "executable (e_machine %u)",
				    name, im.eh.e_machine);
	}
	if (im.eh.e_type != ET_EXEC && im.eh.e_type != ET_DYN)
		return dbtp_err_set(err, 0,
				    "%s: not an ELF executable (e_type %u)",
				    name, im.eh.e_type);
	if (img_phdrs(&im, err))
		return -1;
	if (interp && interp_size)
		interp[0] = '\0';
	for (i = 0; i < im.phnum; i++) {
		get_phdr(&im, i, &ph);
		if (ph.p_type != PT_INTERP)
			continue;
		if (!in_range(&im, ph.p_offset, ph.p_filesz) || !ph.p_filesz)
			return dbtp_err_set(err, 0,
					    "%s: truncated or malformed ELF "
					    "(PT_INTERP out of bounds)",
					    name);
		dyn = 1;
		if (interp && interp_size) {
			const char *s = (const char *)im.data + ph.p_offset;
			size_t n = strnlen(s, ph.p_filesz);

			if (n >= interp_size)
				n = interp_size - 1;
			memcpy(interp, s, n);
			interp[n] = '\0';
		}
		break;
	}
	if (arch)
		*arch = a;
	if (is_dynamic)
		*is_dynamic = dyn;
	return 0;
}

int dbtp_elf_probe(const char *path, enum dbtp_arch *arch, int *is_dynamic,
		   char *interp, size_t interp_size, dbtp_err *err)
{
	const uint8_t *data;
	size_t size;
	int r;

	if (map_file(path, &data, &size, err))
		return -1;
	r = dbtp_elf_probe_mem(data, size, path, arch, is_dynamic, interp,
			       interp_size, err);
	unmap_file(data, size);
	return r;
}

/* --------------------------------------------------------------- symtab */

/* A contiguous address range attributed to one symbol. */
struct ival {
	uint64_t start, end; /* [start, end) */
	uint64_t sym;	     /* the symbol's start address */
	const char *name;
};

/* A symbol as found by name. */
struct nent {
	const char *name;
	uint64_t addr, size;
	uint32_t rank;
};

struct seg {
	uint64_t off, filesz, vaddr;
};

struct dbtp_symtab {
	char *strs; /* copy of the string table, NUL-terminated */
	struct ival *iv;
	size_t niv;
	struct nent *byname;
	size_t nname;
	struct seg *segs;
	size_t nseg;
	size_t naddr;
};

/* A candidate symbol while building. */
struct cand {
	uint64_t addr, size, secend;
	const char *name;
	uint32_t len, rank;
};

/* Distinct address with its extent. */
struct uent {
	uint64_t addr, end;
	const char *name;
};

static int cmp_cand_addr(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int c;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return 0;
}

static int cmp_nent(const void *pa, const void *pb)
{
	const struct nent *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return 0;
}

/*
 * Rank of an alias, lower is better: binding (global, weak, local), then
 * FUNC/IFUNC over NOTYPE, then the default symbol version over a hidden one.
 */
static uint32_t sym_rank(const Elf64_Sym *s, int hidden)
{
	uint32_t r;

	switch (ELF64_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		r = 0;
		break;
	case STB_WEAK:
		r = 1;
		break;
	case STB_LOCAL:
		r = 2;
		break;
	default:
		r = 3;
		break;
	}
	r = r * 2 + (ELF64_ST_TYPE(s->st_info) == STT_NOTYPE);
	return r * 2 + !!hidden;
}

/* Pick the symbol section (.symtab, else .dynsym); -1 if none. */
static int64_t find_symsec(const struct img *im)
{
	int64_t dyn = -1;
	Elf64_Shdr sh;
	uint64_t i;

	for (i = 1; i < im->shnum; i++) {
		get_shdr(im, i, &sh);
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return (int64_t)i;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_size && dyn < 0)
			dyn = (int64_t)i;
	}
	return dyn;
}

/* The GNU version table for symbol section @symidx, or NULL. */
static const uint8_t *find_versym(const struct img *im, uint64_t symidx,
				  uint64_t nsym)
{
	Elf64_Shdr sh;
	uint64_t i;

	for (i = 1; i < im->shnum; i++) {
		get_shdr(im, i, &sh);
		if (sh.sh_type == SHT_GNU_versym && sh.sh_link == symidx &&
		    sh.sh_size / 2 >= nsym &&
		    in_range(im, sh.sh_offset, sh.sh_size))
			return im->data + sh.sh_offset;
	}
	return NULL;
}

/*
 * Split possibly nested or overlapping extents @u[0..nu) (sorted by address,
 * addresses distinct) into disjoint intervals, the innermost (latest
 * starting) symbol winning.  @iv must hold 2 * nu entries.
 */
static size_t flatten(const struct uent *u, size_t nu, size_t *stack,
		      struct ival *iv)
{
	size_t i, sp = 0, n = 0;
	uint64_t cur = 0, next;

	for (i = 0; i <= nu; i++) {
		next = i < nu ? u[i].addr : UINT64_MAX;
		while (sp) {
			const struct uent *t = &u[stack[sp - 1]];

			if (i < nu && t->end > next)
				break;
			if (cur < t->end) {
				iv[n++] = (struct ival){cur, t->end, t->addr,
							t->name};
				cur = t->end;
			}
			sp--;
		}
		if (i == nu)
			break;
		if (sp && cur < next) {
			const struct uent *t = &u[stack[sp - 1]];

			iv[n++] = (struct ival){cur, next, t->addr, t->name};
		}
		cur = next;
		stack[sp++] = i;
	}
	return n;
}

static int load_segs(dbtp_symtab *st, const struct img *im)
{
	Elf64_Phdr ph;
	uint64_t i;

	if (!im->phnum)
		return 0;
	st->segs = calloc(im->phnum, sizeof(*st->segs));
	if (!st->segs)
		return -1;
	for (i = 0; i < im->phnum; i++) {
		get_phdr(im, i, &ph);
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		st->segs[st->nseg++] =
		    (struct seg){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	}
	return 0;
}

/* Build the lookup tables from the candidates; @c is sorted in place. */
static int build(dbtp_symtab *st, struct cand *c, size_t nc)
{
	struct uent *u = NULL;
	size_t *stack = NULL;
	size_t i, j, g, nu = 0;
	int r = -1;

	if (nc) /* (c may be NULL) */
		qsort(c, nc, sizeof(*c), cmp_cand_addr);
	u = malloc((nc ? nc : 1) * sizeof(*u));
	stack = malloc((nc ? nc : 1) * sizeof(*stack));
	st->iv = malloc((2 * nc + 1) * sizeof(*st->iv));
	st->byname = malloc((nc ? nc : 1) * sizeof(*st->byname));
	if (!u || !stack || !st->iv || !st->byname)
		goto out;

	for (i = 0; i < nc; i = j) {
		uint64_t maxsz = 0, end, next;

		for (j = i; j < nc && c[j].addr == c[i].addr; j++)
			if (c[j].size > maxsz)
				maxsz = c[j].size;
		next = j < nc ? c[j].addr : UINT64_MAX;
		if (maxsz)
			end = sat_add(c[i].addr, maxsz);
		else
			end = next < c[i].secend ? next : c[i].secend;
		if (end > c[i].addr)
			u[nu++] = (struct uent){c[i].addr, end, c[i].name};
		for (g = i; g < j; g++) {
			uint64_t sz = c[g].size;

			if (!sz && end > c[g].addr)
				sz = end - c[g].addr;
			st->byname[g] =
			    (struct nent){c[g].name, c[g].addr, sz, c[g].rank};
		}
	}
	st->naddr = nu;
	st->niv = flatten(u, nu, stack, st->iv);
	if (st->niv) {
		struct ival *iv = realloc(st->iv, st->niv * sizeof(*iv));

		if (iv)
			st->iv = iv;
	}
	st->nname = nc;
	qsort(st->byname, nc, sizeof(*st->byname), cmp_nent);
	r = 0;
out:
	free(u);
	free(stack);
	return r;
}

int dbtp_symtab_load_mem(dbtp_symtab **out, const uint8_t *data, size_t size,
			 const char *name, dbtp_err *err)
{
	struct cand *c = NULL;
	const uint8_t *syms, *versym = NULL;
	dbtp_symtab *st;
	Elf64_Shdr ssh, strsh, sh;
	struct img im;
	uint64_t nsym, i, strsz;
	int64_t symidx;
	size_t nc = 0;

	*out = NULL;
	if (img_open(&im, data, size, name, err) || img_phdrs(&im, err) ||
	    img_shdrs(&im, err))
		return -1;
	name = im.name;
	st = calloc(1, sizeof(*st));
	if (!st || load_segs(st, &im))
		goto nomem;

	symidx = find_symsec(&im);
	if (symidx < 0) {
		if (build(st, NULL, 0))
			goto nomem;
		*out = st;
		return 0;
	}
	get_shdr(&im, (uint64_t)symidx, &ssh);
	if (ssh.sh_entsize < sizeof(Elf64_Sym) ||
	    !in_range(&im, ssh.sh_offset, ssh.sh_size) || ssh.sh_link == 0 ||
	    ssh.sh_link >= im.shnum) {
		dbtp_err_set(err, 0,
			     "%s: truncated or malformed ELF (bad symbol "
			     "table section %" PRId64 ")",
			     name, symidx);
		goto fail;
	}
	get_shdr(&im, ssh.sh_link, &strsh);
	if (strsh.sh_type != SHT_STRTAB ||
	    !in_range(&im, strsh.sh_offset, strsh.sh_size)) {
		dbtp_err_set(err, 0,
			     "%s: truncated or malformed ELF (bad string "
			     "table section %u)",
			     name, ssh.sh_link);
		goto fail;
	}
	nsym = ssh.sh_size / ssh.sh_entsize;
	syms = im.data + ssh.sh_offset;
	if (ssh.sh_type == SHT_DYNSYM)
		versym = find_versym(&im, (uint64_t)symidx, nsym);

	strsz = strsh.sh_size;
	st->strs = malloc(strsz + 1);
	c = malloc((nsym ? nsym : 1) * sizeof(*c));
	if (!st->strs || !c)
		goto nomem;
	memcpy(st->strs, im.data + strsh.sh_offset, strsz);
	st->strs[strsz] = '\0';

	for (i = 1; i < nsym; i++) {
		Elf64_Sym s;
		unsigned int type;
		const char *nm;
		uint16_t ver = 0;

		memcpy(&s, syms + i * ssh.sh_entsize, sizeof(s));
		type = ELF64_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    type != STT_NOTYPE)
			continue;
		if (type == STT_NOTYPE && !s.st_value)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    s.st_shndx >= im.shnum)
			continue;
		get_shdr(&im, s.st_shndx, &sh);
		if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
		    (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		if (s.st_name >= strsz)
			continue;
		nm = st->strs + s.st_name;
		/* skip unnamed symbols and AArch64 mapping symbols ($x, $d) */
		if (!nm[0] || nm[0] == '$')
			continue;
		if (versym)
			memcpy(&ver, versym + 2 * i, sizeof(ver));
		c[nc++] = (struct cand){
		    .addr = s.st_value,
		    .size = s.st_size,
		    .secend = sat_add(sh.sh_addr, sh.sh_size),
		    .name = nm,
		    .len = (uint32_t)strnlen(nm, NAME_MAX_LEN),
		    .rank = sym_rank(&s, ver & 0x8000),
		};
	}
	if (build(st, c, nc))
		goto nomem;
	free(c);
	*out = st;
	return 0;

nomem:
	dbtp_err_set(err, ENOMEM, "%s: out of memory", name);
fail:
	free(c);
	dbtp_symtab_free(st);
	return -1;
}

int dbtp_symtab_load(dbtp_symtab **out, const char *path, dbtp_err *err)
{
	const uint8_t *data;
	size_t size;
	int r;

	*out = NULL;
	if (map_file(path, &data, &size, err))
		return -1;
	r = dbtp_symtab_load_mem(out, data, size, path, err);
	unmap_file(data, size);
	return r;
}

const char *dbtp_symtab_lookup_vaddr(const dbtp_symtab *st, uint64_t vaddr,
				     uint64_t *delta)
{
	size_t lo = 0, hi, mid;
	const struct ival *v;

	if (!st || !st->niv)
		return NULL;
	/* find the last interval with start <= vaddr */
	hi = st->niv;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->iv[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	v = &st->iv[lo - 1];
	if (vaddr >= v->end)
		return NULL;
	if (delta)
		*delta = vaddr - v->sym;
	return v->name;
}

int dbtp_symtab_offset_to_vaddr(const dbtp_symtab *st, uint64_t file_offset,
				uint64_t *vaddr)
{
	size_t i;

	if (!st)
		return -1;
	for (i = 0; i < st->nseg; i++) {
		const struct seg *s = &st->segs[i];

		if (file_offset >= s->off && file_offset - s->off < s->filesz) {
			*vaddr = file_offset - s->off + s->vaddr;
			return 0;
		}
	}
	return -1;
}

const char *dbtp_symtab_lookup(const dbtp_symtab *st, uint64_t file_offset,
			       uint64_t *delta)
{
	uint64_t va;

	if (dbtp_symtab_offset_to_vaddr(st, file_offset, &va))
		return NULL;
	return dbtp_symtab_lookup_vaddr(st, va, delta);
}

int dbtp_symtab_find(const dbtp_symtab *st, const char *name, uint64_t *vaddr,
		     uint64_t *size)
{
	size_t lo = 0, hi, mid;

	if (!st || !name)
		return -1;
	/* first entry whose name is >= @name: the best ranked one */
	hi = st->nname;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(st->byname[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == st->nname || strcmp(st->byname[lo].name, name))
		return -1;
	if (vaddr)
		*vaddr = st->byname[lo].addr;
	if (size)
		*size = st->byname[lo].size;
	return 0;
}

size_t dbtp_symtab_count(const dbtp_symtab *st)
{
	return st ? st->naddr : 0;
}

void dbtp_symtab_free(dbtp_symtab *st)
{
	if (!st)
		return;
	free(st->strs);
	free(st->iv);
	free(st->byname);
	free(st->segs);
	free(st);
}

/* ---------------------------------------------------------------- cache */

struct centry {
	char *path;	 /* NULL: empty slot */
	dbtp_symtab *st; /* NULL: the load failed */
	uint64_t hash;
};

struct dbtp_symcache {
	struct centry *tab;
	size_t cap; /* power of two */
	size_t n;
	const struct centry *last;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

dbtp_symcache *dbtp_symcache_new(void)
{
	dbtp_symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cap = 16;
	c->tab = calloc(c->cap, sizeof(*c->tab));
	if (!c->tab) {
		free(c);
		return NULL;
	}
	return c;
}

static int cache_grow(dbtp_symcache *c)
{
	size_t cap = c->cap * 2, i, k;
	struct centry *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < c->cap; i++) {
		if (!c->tab[i].path)
			continue;
		for (k = c->tab[i].hash & (cap - 1); t[k].path;
		     k = (k + 1) & (cap - 1))
			;
		t[k] = c->tab[i];
	}
	free(c->tab);
	c->tab = t;
	c->cap = cap;
	c->last = NULL;
	return 0;
}

const dbtp_symtab *dbtp_symcache_get(dbtp_symcache *c, const char *path)
{
	struct centry *e;
	dbtp_symtab *st;
	uint64_t h;
	size_t k;

	if (!c || !path)
		return NULL;
	if (c->last && !strcmp(c->last->path, path))
		return c->last->st;
	h = hash_str(path);
	for (k = h & (c->cap - 1); c->tab[k].path; k = (k + 1) & (c->cap - 1)) {
		e = &c->tab[k];
		if (e->hash == h && !strcmp(e->path, path)) {
			c->last = e;
			return e->st;
		}
	}
	if (dbtp_symtab_load(&st, path, NULL))
		st = NULL;
	if ((c->n + 1) * 2 > c->cap) {
		if (cache_grow(c)) {
			dbtp_symtab_free(st);
			return NULL;
		}
		for (k = h & (c->cap - 1); c->tab[k].path;
		     k = (k + 1) & (c->cap - 1))
			;
	}
	e = &c->tab[k];
	e->path = strdup(path);
	if (!e->path) {
		dbtp_symtab_free(st);
		return NULL;
	}
	e->st = st;
	e->hash = h;
	c->n++;
	c->last = e;
	return st;
}

void dbtp_symcache_free(dbtp_symcache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->cap; i++) {
		free(c->tab[i].path);
		dbtp_symtab_free(c->tab[i].st);
	}
	free(c->tab);
	free(c);
}

#!/bin/bash
# bench/probes/closers.sh [PASSES]: a loop of two `add`s closed three ways
# (`cmp` then `loop`; `dec rcx`/`jnz`; `sub rcx, 1`/`jnz`), PASSES passes
# (default 200 M), timed on CPU 1 under plain QEMU and Valgrind's none
# tool with and without IR optimisation and chasing: what a generated
# program's pass counter costs each DBT (bench/RESULTS.md, "The pass
# counter in place of the closing branch's flag-setter").
set -eu
out=${OUT:-$(mktemp -d)}
cat >"$out/closers.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#define BODY "mov %2, %%rcx\n1:\n\tadd %1, %0\n\tadd %1, %0\n\t"
int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1, a = 1, b = 2;

	switch (argc > 1 ? atoi(argv[1]) : 0) {
	case 0:
		__asm__ volatile(BODY "cmp %1, %0\n\tloop 1b"
				 : "+r"(a) : "r"(b), "r"(n) : "rcx");
		break;
	case 1:
		__asm__ volatile(BODY "dec %%rcx\n\tjnz 1b"
				 : "+r"(a) : "r"(b), "r"(n) : "rcx");
		break;
	default:
		__asm__ volatile(BODY "sub $1, %%rcx\n\tjnz 1b"
				 : "+r"(a) : "r"(b), "r"(n) : "rcx");
	}
	printf("%ld\n", a);
	return 0;
}
EOF
gcc -O2 -o "$out/closers" "$out/closers.c"
names=("cmp/loop" "dec/jnz" "sub/jnz")
for m in 0 1 2; do
	for c in "qemu-x86_64" "valgrind -q --tool=none" \
		"valgrind -q --tool=none --vex-iropt-level=0" \
		"valgrind -q --tool=none --vex-guest-chase=no"; do
		# shellcheck disable=SC2086
		/usr/bin/time -f "${names[m]} [$c] %U s" taskset -c 1 $c \
			"$out/closers" $m "${1:-200000000}" >/dev/null
	done
done

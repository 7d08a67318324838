#!/bin/bash
# bench/probes/jumpcache.sh [N...]: a guest of N labels that jumps through a
# table to one of them at random, 40 M times (computed gotos, gcc -O1),
# timed natively and under plain QEMU on CPU 1: what a lookup costs once
# the targets outgrow QEMU's 4,096-entry jump cache (bench/RESULTS.md,
# "What the copies cost QEMU").
set -eu
out=${OUT:-$(mktemp -d)}
for N in "${@:-512 2048 8192 32768}"; do
	{
		echo '#include <stdio.h>'
		echo '#include <stdlib.h>'
		echo 'int main(void) {'
		echo " static void *tbl[$N]; static unsigned short seq[1 << 16];"
		echo ' unsigned long s = 0, k = 0, n = 40000000;'
		echo " for (int i = 0; i < (1 << 16); i++) seq[i] = (unsigned short)((unsigned)rand() % $N);"
		for ((i = 0; i < N; i++)); do echo " tbl[$i] = &&L$i;"; done
		echo ' goto *tbl[seq[0]];'
		for ((i = 0; i < N; i++)); do
			echo " L$i: s += $i; if (++k == n) goto done; goto *tbl[seq[k & 0xffff]];"
		done
		echo ' done: printf("%lu\n", s); return 0; }'
	} >"$out/j$N.c"
	gcc -O1 -o "$out/j$N" "$out/j$N.c"
	for c in native qemu-x86_64; do
		pre=()
		[ $c = native ] || pre=($c)
		/usr/bin/time -f "N=$N $c %U s" taskset -c 1 "${pre[@]}" "$out/j$N" >/dev/null
	done
done

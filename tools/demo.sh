#!/bin/sh
# make demo: build the bundled workload (demo/wordfreq.c), generate its
# input, record it under QEMU and summarise the trace.
set -eu
B=${B:-build}
mkdir -p "$B/demo"
cc -O2 -pthread -o "$B/demo/wordfreq" demo/wordfreq.c
# A deterministic text: 60,000 lines of words drawn from a small vocabulary.
awk 'BEGIN { split("qemu translates guest blocks into host code then runs them from a cache of traces and regions", v, " ")
	s = 12345; for (i = 0; i < 60000; i++) { line = ""
	for (k = 0; k < 8; k++) { s = (s * 1103515245 + 12345) % 2147483648; line = line (k ? " " : "") v[int(s / 65536) % 17 + 1] }
	print line } }' >"$B/demo/input.txt"
echo "== dbtprof record -o $B/demo/demo.trace -- $B/demo/wordfreq $B/demo/input.txt"
"$B/dbtprof" record -o "$B/demo/demo.trace" -- "$B/demo/wordfreq" "$B/demo/input.txt"
echo
echo "== dbtprof verify $B/demo/demo.trace"
"$B/dbtprof" verify "$B/demo/demo.trace"
echo
echo "== dbtprof stats --top 5 $B/demo/demo.trace"
"$B/dbtprof" stats --top 5 "$B/demo/demo.trace"

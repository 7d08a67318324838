#!/bin/bash
# simpoint: planted phases come back with their exact weights; the
# bbv -> simpoint pipeline on a real program; clear errors.
. tests/e2e/lib.sh

# 120 intervals: phase A (ids 1-5) for 20, B (ids 10-14) for 40, C (ids
# 20-24) for 60, interleaved in runs; small deterministic noise in counts.
awk 'BEGIN { s = 7
	for (i = 0; i < 120; i++) {
		p = (i % 6 == 0) ? 0 : (i % 6 < 3 ? 1 : 2); base = p == 0 ? 1 : p == 1 ? 10 : 20
		line = "T"
		for (k = 0; k < 5; k++) { s = (s * 1103515245 + 12345) % 2147483648
			line = line ":" base + k ":" 1000 + int(s / 65536) % 50 " " }
		print line } }' >"$T/p.bb"
"$DBTPROF" simpoint --json -i "$T/p.bb" -o "$T/p" >"$T/p.json"
eq "planted k" 3 "$(jq -r .k "$T/p.json")"
eq "planted weights" "0.166667 0.333333 0.5" \
	"$(awk '{ print $1 }' "$T/p.weights" | sort -g | paste -sd' ')"
# Each point lies in its phase: interval i is phase A iff i % 6 == 0.
while read -r ivl cl; do
	w=$(awk -v c="$cl" '$2 == c { print $1 }' "$T/p.weights")
	case $w in
	0.166667) eq "point $ivl in A" 0 $((ivl % 6)) ;;
	0.333333) eq "point $ivl in B" 1 $((ivl % 6 == 1 || ivl % 6 == 2)) ;;
	0.5) eq "point $ivl in C" 1 $((ivl % 6 >= 3)) ;;
	*) fail "weight $w" ;;
	esac
done <"$T/p.simpoints"
eq "labels: one per interval" 120 "$(wc -l <"$T/p.labels")"
eq "same seed, same points" "$(cat "$T/p.simpoints")" \
	"$("$DBTPROF" simpoint -i "$T/p.bb" -o "$T/q" >/dev/null && cat "$T/q.simpoints")"

# A single phase is k = 1.
for i in $(seq 1 30); do echo "T:1:500 :2:500 "; done >"$T/one.bb"
eq "one phase" 1 "$("$DBTPROF" simpoint --json -i "$T/one.bb" -o "$T/one" | jq -r .k)"

# The pipeline on a real program: points are intervals that exist.
seq 1 40000 >"$T/in.txt"
"$DBTPROF" bbv -q -i 2000000 -o "$T/x.bb" -- xz -1 -c "$T/in.txt" >/dev/null
n=$(wc -l <"$T/x.bb")
"$DBTPROF" simpoint -i "$T/x.bb" -o "$T/x" >/dev/null
eq "xz points in range" "" "$(awk -v n="$n" '$1 >= n' "$T/x.simpoints")"
eq "xz weights sum" 1 "$(awk '{ s += $1 } END { printf "%.3g", s }' "$T/x.weights")"

# Errors.
printf 'T:1:5 :2:x \n' >"$T/bad.bb"
set +e
out=$("$DBTPROF" simpoint -i "$T/bad.bb" -o "$T/b" 2>&1)
s=$?
set -e
eq "bad bb status" 1 "$s"
contains "bad bb message" "$T/bad.bb: line 1" "$out"
eq "missing input" 1 "$(status "$DBTPROF" simpoint -i "$T/none.bb" -o "$T/b")"
eq "no output prefix" 2 "$(status "$DBTPROF" simpoint -i "$T/p.bb")"
eq "bad maxk" 2 "$(status "$DBTPROF" simpoint -k 0 -i "$T/p.bb" -o "$T/b")"
done_ok

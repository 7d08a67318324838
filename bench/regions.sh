#!/bin/bash
# bench/regions.sh - the region formation simulator on the workload suite.
#
# For each workload: record a blocks-mode trace (kept in BENCH_WORK/traces),
# then, side by side on that trace:
#   - the anchor: `dbtprof verify` (reading and decoding the whole trace);
#   - `dbtprof regions -t T` for each technique alone: wall time (median of
#     BENCH_REPS), executed instructions per second, peak RSS;
#   - `dbtprof regions --segment --csv` (all techniques, with and without
#     segments by mapped file) for the results table.
# Prints Markdown on stdout (paste into bench/RESULTS.md); CSVs go to
# BENCH_OUT (default bench/out/regions/).
#
# Environment: BENCH_SCALE (small, the default here, or full),
# BENCH_WORKLOADS (default "sha256 xz lua sqlite pigz"), BENCH_REPS (3),
# BENCH_NO_TABLE=1 (speed only).

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -eu

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
BENCH_SCALE=${BENCH_SCALE:-small}
# shellcheck source=bench/workloads.sh
. "$BENCH_DIR/workloads.sh"

SCALE=$BENCH_SCALE
REPS=${BENCH_REPS:-3}
WORKLOADS=${BENCH_WORKLOADS:-$BENCH_WORKLOADS_ALL}
OUT=${BENCH_OUT:-$BENCH_DIR/out/regions}
DBTPROF=${DBTPROF:-$ROOT/build/dbtprof}
TRACES=$BENCH_WORK/traces
TECHS="net mret2 lei tt netplus lef"

bench_check_scale "$SCALE"
[ -x "$DBTPROF" ] || bench_die "$DBTPROF not built (make)"
mkdir -p "$OUT" "$TRACES"
bench_prepare "$SCALE" >&2

# median of the numbers on stdin
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# timed CMD... : "wall_s maxrss_kb cpu_s" of one run (stdout discarded);
# the commands are single-threaded, so on a quiet machine cpu = wall, and
# on a busy one cpu (user + sys) is the fairer figure.
timed() {
	/usr/bin/time -f "%e %M %U %S" -o "$OUT/time.txt" "$@" >/dev/null
	awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$OUT/time.txt"
}

speed="| workload | instructions | trace MB | anchor: verify s (cpu s) |"
sep="|---|---:|---:|---:|"
for t in $TECHS; do
	speed="$speed $t s (cpu s; M insns/cpu s) |"
	sep="$sep---:|"
done
speed="$speed peak RSS MB (max) |"
sep="$sep---:|"
echo "$speed"
echo "$sep"
for w in $WORKLOADS; do
	tr=$TRACES/regions-$w-$SCALE.trace
	if [ ! -s "$tr" ]; then
		echo "bench: recording $w ($SCALE)" >&2
		bench_argv "$w" "$SCALE"
		"$DBTPROF" record -q -m blocks -o "$tr" -- "${WL_ARGV[@]}" >/dev/null </dev/null
	fi
	insns=$("$DBTPROF" stats --json --no-disasm --top 0 "$tr" | jq -r .instructions)
	mb=$(awk -v b="$(stat -c %s "$tr")" 'BEGIN {printf "%.1f", b / 1048576}')
	: >"$OUT/runs.txt"
	for _ in $(seq "$REPS"); do timed "$DBTPROF" verify "$tr" >>"$OUT/runs.txt"; done
	row="| $w | $insns | $mb | $(cut -d' ' -f1 "$OUT/runs.txt" | median) ($(cut -d' ' -f3 "$OUT/runs.txt" | median)) |"
	rss=0
	for t in $TECHS; do
		echo "bench: $w $t" >&2
		: >"$OUT/runs.txt"
		for _ in $(seq "$REPS"); do timed "$DBTPROF" regions -t "$t" "$tr" >>"$OUT/runs.txt"; done
		s=$(cut -d' ' -f1 "$OUT/runs.txt" | median)
		u=$(cut -d' ' -f3 "$OUT/runs.txt" | median)
		m=$(cut -d' ' -f2 "$OUT/runs.txt" | sort -n | tail -1)
		[ "$m" -gt "$rss" ] && rss=$m
		row="$row $s ($u; $(awk -v i="$insns" -v s="$u" 'BEGIN {printf "%.0f", (s > 0 ? i / s / 1e6 : 0)}')) |"
	done
	echo "$row $(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}') |"
	[ -n "${BENCH_NO_TABLE:-}" ] || "$DBTPROF" regions --segment --csv "$tr" >"$OUT/$w.csv"
done
[ -z "${BENCH_NO_TABLE:-}" ] || exit 0

echo
echo "| workload | technique | regions | coverage % | 70% / 80% / 90% cover | completion % | duplication | dyn. size | static size | transitions | side exits | counters |"
echo "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for w in $WORKLOADS; do
	awk -F, -v w="$w" 'NR > 1 {
		name = $1 ($2 == 1 ? "+seg" : "")
		c = ($7 == "" ? "-" : $7) " / " ($9 == "" ? "-" : $9) " / " ($11 == "" ? "-" : $11)
		printf "| %s | %s | %d | %.2f | %s | %s | %s | %s | %s | %d | %d | %d |\n",
			w, name, $5, 100 * $6, c,
			$15 == "" ? "-" : sprintf("%.2f", 100 * $15),
			$18 == "" ? "-" : sprintf("%.2f", $18),
			$19 == "" ? "-" : sprintf("%.1f", $19),
			$20 == "" ? "-" : sprintf("%.1f", $20), $21, $22, $23
	}' "$OUT/$w.csv"
done

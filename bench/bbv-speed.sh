#!/bin/bash
# bench/bbv-speed.sh - live `dbtprof bbv` against plain QEMU and Valgrind's
# exp-bbv on the workload suite, side by side, interleaved rep by rep.
#
#   plain:   qemu-x86_64 -cpu qemu64 CMD
#   noop:    the same with bench/noop-plugin.c, one empty callback per
#            executed block: the floor of exact block profiles (plugin API 1)
#   bbv:     dbtprof bbv -q -i 100000000 -o OUT.bb -- CMD
#   buffers: the plugin alone (qemu-x86_64 -cpu qemu64 -plugin
#            PLUGIN,mode=bbv,single=0 CMD), counting in its writer thread
#            from the per-thread buffers, as for multi-threaded guests
#   exp-bbv: valgrind --tool=exp-bbv --interval-size=100000000 CMD
#
# Median wall time of BENCH_REPS runs (default 3), and the median CPU time
# (user + system, all threads) of plain QEMU, noop, bbv and buffers;
# Markdown on stdout.
# Environment: BENCH_SCALE (small, the default here, or full),
# BENCH_WORKLOADS (default all), DBTPROF, QEMU.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -eu

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
BENCH_SCALE=${BENCH_SCALE:-small}
# shellcheck source=bench/workloads.sh
. "$BENCH_DIR/workloads.sh"

REPS=${BENCH_REPS:-3}
WORKLOADS=${BENCH_WORKLOADS:-$BENCH_WORKLOADS_ALL}
DBTPROF=${DBTPROF:-$ROOT/build/dbtprof}
PLUGIN=${DBTPROF_PLUGIN:-$ROOT/build/libdbtp-qemu.so}
QEMU=${QEMU:-qemu-x86_64}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
bench_prepare "$BENCH_SCALE" >&2
cc -O2 -shared -fPIC -I"$ROOT/plugin" -o "$W/noop.so" "$BENCH_DIR/noop-plugin.c"

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# t NAME CMD... : append the wall time of one run to $W/NAME
t() {
	n=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$W/one" "$@" >/dev/null 2>"$W/err" </dev/null ||
		{ echo "bench: $n failed: $(tail -1 "$W/err")" >&2; return 1; }
	awk '{print $1 >> "'"$W/$n"'"; print $2 + $3 >> "'"$W/$n.cpu"'"}' "$W/one"
}

echo "| workload ($BENCH_SCALE) | plain QEMU s | live bbv s | × QEMU | exp-bbv s | exp-bbv / bbv | CPU s: QEMU | noop | bbv | buffers | noop × QEMU | bbv × QEMU | buffers × QEMU |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for w in $WORKLOADS; do
	bench_argv "$w" "$BENCH_SCALE"
	rm -f "$W/q" "$W/b" "$W/v" "$W"/*.cpu "$W/z" "$W/s"
	for _ in $(seq "$REPS"); do
		echo "bench: $w" >&2
		t q "$QEMU" -cpu qemu64 "${WL_ARGV[@]}"
		t z "$QEMU" -cpu qemu64 -plugin "$W/noop.so" "${WL_ARGV[@]}"
		t b "$DBTPROF" bbv -q -i 100000000 -o "$W/o.bb" -- "${WL_ARGV[@]}"
		t s "$QEMU" -cpu qemu64 -plugin "$PLUGIN,out=$W/s.trace,mode=bbv,single=0" "${WL_ARGV[@]}"
		t v valgrind --tool=exp-bbv --interval-size=100000000 \
			--bb-out-file="$W/vg.bb" --pc-out-file="$W/vg.pc" "${WL_ARGV[@]}" || true
	done
	q=$(median <"$W/q")
	b=$(median <"$W/b")
	if [ -s "$W/v" ]; then
		v=$(median <"$W/v")
		r=$(awk -v v="$v" -v b="$b" 'BEGIN {printf "%.1f", v / b}')
	else
		v="—"
		r="—"
	fi
	qc=$(median <"$W/q.cpu")
	zc=$(median <"$W/z.cpu")
	bc=$(median <"$W/b.cpu")
	sc=$(median <"$W/s.cpu")
	x() { awk -v a="$1" -v q="$2" 'BEGIN {printf "%.2f", a / q}'; }
	echo "| $w | $q | $b | $(x "$b" "$q") | $v | $r | $qc | $zc | $bc | $sc | $(x "$zc" "$qc") | $(x "$bc" "$qc") | $(x "$sc" "$qc") |"
done

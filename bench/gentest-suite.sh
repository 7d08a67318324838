#!/bin/bash
# bench/gentest-suite.sh - every workload of the suite through `dbtprof
# gentest`: profile it (BENCH_SCALE, default small), generate its test
# program, build it with warnings as errors, and run it to completion
# natively, under qemu-x86_64 and under valgrind --tool=none and
# --tool=memcheck.  One Markdown row a workload: blocks, dynamic
# instructions kept / rewritten / dropped (the summary's), the exit
# status of each run (0 = ran to completion) and the errors memcheck
# reported (its log in GT_OUT/WORKLOAD.memcheck).
#
#   bash bench/gentest-suite.sh [WORKLOAD...]   default: the whole suite
#
# Files in GT_OUT (default bench/out/gentest-suite).
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
export BENCH_SCALE=${BENCH_SCALE:-small}
# shellcheck source=bench/workloads.sh
. "$here/workloads.sh"
D=${DBTPROF:-$root/build/dbtprof}
out=${GT_OUT:-$root/bench/out/gentest-suite}
mkdir -p "$out"
bench_prepare "$BENCH_SCALE" >/dev/null

# The exit status of a command, its output discarded.
status() { "$@" >/dev/null 2>&1 </dev/null && echo 0 || echo $?; }

echo "| workload | blocks | dynamic instructions | kept | rewritten | dropped | cc -Werror | native | qemu-x86_64 | vg-none | vg-memcheck | memcheck errors |"
echo "|---|--:|--:|--:|--:|--:|:-:|:-:|:-:|:-:|:-:|--:|"
# shellcheck disable=SC2048,SC2086
for w in ${*:-$BENCH_WORKLOADS_ALL}; do
	echo "### $w" >&2
	bench_argv "$w" "$BENCH_SCALE"
	"$D" record -q -o "$out/$w.trace" -- "${WL_ARGV[@]}" >/dev/null
	"$D" gentest --json -o "$out/$w.c" "$out/$w.trace" >"$out/$w.json"
	cc=$(status cc -O2 -pthread -Wall -Wextra -Werror "$out/$w.c" -o "$out/$w-test")
	m=$(status valgrind --tool=memcheck --log-file="$out/$w.memcheck" "$out/$w-test" --quiet)
	e=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$out/$w.memcheck")
	jq -r --arg w "$w" --arg cc "$cc" \
		--arg n "$(status "$out/$w-test" --quiet)" \
		--arg q "$(status qemu-x86_64 "$out/$w-test" --quiet)" \
		--arg v "$(status valgrind -q --tool=none "$out/$w-test" --quiet)" \
		--arg m "$m" --arg e "${e:--}" '
		(.dynamic.kept + .dynamic.rewritten + .dynamic.dropped) as $t
		| def pct(x): "\(x * 10000 / $t | round / 100)%";
		"| \($w) | \(.blocks) | \($t) | \(pct(.dynamic.kept)) | \(pct(.dynamic.rewritten)) | \(pct(.dynamic.dropped)) | \($cc) | \($n) | \($q) | \($v) | \($m) | \($e) |"' \
		"$out/$w.json"
done

#!/bin/bash
# bench/gentest.sh - how well generated test programs track their
# originals across DBT configurations (doc/dbtprof-gentest.md).
#
#   bash bench/gentest.sh [WORKLOAD...]      default: sha256 pigz
#
# Workloads: sha256, pigz, kernels-a64 (bench/cycles/kernels.c built with
# aarch64-linux-gnu-gcc, run under qemu-aarch64), interp-a64 (bench/interp.c
# so), xz, lua, sqlite.
#
# For each workload: profile it with `dbtprof record` (pigz at -p 2, 3 and
# 4), generate the test program (`dbtprof gentest`), build it, and run
# `dbtprof gentest validate` with the default configurations, the
# generated program at scale GT_SCALE (default 1) and, for pigz, 8
# threads (the original with -p 8).  Markdown on stdout (the host CPU
# first); everything else
# in GT_OUT (default bench/out/gentest).
#
#   GT_RUNS   runs per program and configuration (median; default 3)
#   GT_SCALE  --scale of the generated program (default 1)
#   BENCH_SCALE  input scale of the workloads (default small)
#   GT_CPUS   run the validations on these CPUs only (validate --cpus)
#   GT_STAT   median (default) or min of the runs (validate --stat)
#   GT_CONFIGS  names of default configurations to run (validate
#             --config NAME; default: all; kernels-a64 takes the qemu
#             ones of them)
#   GT_STATIC  1: link the generated programs statically
#   GT_GENFLAGS  more options for dbtprof gentest (e.g. --no-mispredict)
#   GT_MODE   how the profiles are recorded: cache (default; blocks mode
#             with the plugin's cache tallies, record --cache: the L1 and
#             L2 misses the generated program reproduces), mem (the same
#             program from a trace some ten times larger), sample
#             (record --cache-sample 10: tallies estimated from a tenth
#             of the run, cheaper for long originals), blocks (none)
#   GT_MEASURE  cpu (default), wall, instructions or cycles (validate
#             --measure; instructions by cachegrind where the machine has
#             no counter: QEMU configurations only)
#   GT_FIXED  1: take the generated program's fixed part (its command
#             with --cap 16) off both programs' times (validate --fixed)
#   GT_REPEAT  a longer original for large GT_SCALE (default 1): sha256
#             hashes its input this many times in one run, pigz
#             compresses it this many times (one gzip member each), xz
#             too (one stream each), lua runs its set of kernels this many
#             times, sqlite its script (its tables dropped in between),
#             kernels-a64 and interp-a64 this many times their rounds
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
export BENCH_SCALE=${BENCH_SCALE:-small}
# shellcheck source=bench/workloads.sh
. "$here/workloads.sh"
D=${DBTPROF:-$root/build/dbtprof}
out=${GT_OUT:-$root/bench/out/gentest}
runs=${GT_RUNS:-3}
scale=${GT_SCALE:-1}
repeat=${GT_REPEAT:-1}
mode=${GT_MODE:-cache}
case $mode in
cache) recmode=(-m blocks --cache) ;;
sample) recmode=(-m blocks --cache-sample 10) ;;
*) recmode=(-m "$mode") ;;
esac
cflags="-O2 -pthread -Wall -Wextra${GT_STATIC:+ -static}"
mkdir -p "$out"
bench_prepare "$BENCH_SCALE" >/dev/null

# the host's CPU: ratios between DBT configurations move with it
awk -F': ' '/^model name/ { n = $2 } /^cpu family/ { f = $2 } /^model\t/ { m = $2 }
	END { if (n != "") printf "host: %s (family %s, model %s), %s\n\n", n, f, m, cpus }' \
	cpus="$(nproc) CPUs" /proc/cpuinfo

set -- "${@:-sha256 pigz}"
# shellcheck disable=SC2048,SC2086
set -- $*

# NAME ORIGINAL-CMD GENERATED-CMD [qemu]: with "qemu" (an AArch64
# program), only the QEMU configurations of GT_CONFIGS
validate() {
	local configs=() c
	for c in ${GT_CONFIGS:-}; do
		[ "${4:-}" = qemu ] && [ "${c#qemu}" = "$c" ] && continue
		configs+=(--config "$c")
	done
	echo "### $1" >&2
	"$D" gentest validate --json --runs "$runs" ${GT_CPUS:+--cpus "$GT_CPUS"} \
		${GT_STAT:+--stat "$GT_STAT"} ${GT_MEASURE:+--measure "$GT_MEASURE"} "${configs[@]}" \
		${GT_FIXED:+--fixed "$3 --cap 16"} \
		--original "$2" --generated "$3" >"$out/$1.json"
	jq -r --arg n "$1" '
		"#### \($n)\n",
		"original: `\(.original)`  ",
		"generated: `\(.generated)`\n",
		(if .counter then "user-mode \(.measure), counted by \(.counter)\n" else empty end),
		(if .counter then "| configuration | original | ratio | generated | ratio | error |"
		 else "| configuration | original s | ratio | generated s | ratio | error |" end),
		"|---|---:|---:|---:|---:|---:|",
		(.configs[] | "| \(.name) | \(.original_s // .original_count | . * 1000 | round / 1000) | \(.original_ratio * 1000 | round / 1000) | \(.generated_s // .generated_count | . * 1000 | round / 1000) | \(.generated_ratio * 1000 | round / 1000) | \(.error * 1000 | round / 10)% |"),
		"",
		(if .fixed and .counter then "counts less the fixed part (`\(.fixed)`: \(.configs | map(.fixed_count | round | tostring) | join(", "))) in the ratios and errors\n"
		 elif .fixed then "times less the fixed part (`\(.fixed)`: \(.configs | map(.fixed_s * 1000 | round | tostring) | join(", ")) ms) in the ratios and errors\n" else empty end),
		"mean ratio error \(.mean_error * 1000 | round / 10)%, rank correlation \(if .spearman == null then "-" else (.spearman * 1000 | round / 1000) end), testing speedup \(.speedup * 10 | round / 10)x\n"' \
		"$out/$1.json"
}

for w in "$@"; do
	case $w in
	sha256)
		cmd=$(bench_cmdline sha256 "$BENCH_SCALE")
		for ((i = 1; i < repeat; i++)); do cmd+=" ${cmd##* }"; done
		# shellcheck disable=SC2086
		"$D" record -q "${recmode[@]}" -o "$out/sha256.trace" -- $cmd >/dev/null
		"$D" gentest ${GT_GENFLAGS:-} -o "$out/sha256.c" "$out/sha256.trace" >"$out/sha256.summary"
		# shellcheck disable=SC2086
		cc $cflags "$out/sha256.c" -o "$out/sha256-test"
		validate sha256 "$cmd" "$out/sha256-test --quiet --scale $scale"
		;;
	pigz)
		cmd=$(bench_cmdline pigz "$BENCH_SCALE")
		for ((i = 1; i < repeat; i++)); do cmd+=" ${cmd##* }"; done
		for p in 2 3 4; do
			# shellcheck disable=SC2086
			"$D" record -q "${recmode[@]}" -o "$out/pigz$p.trace" -- ${cmd/-p 4/-p $p} >/dev/null
		done
		"$D" gentest ${GT_GENFLAGS:-} -o "$out/pigz.c" "$out/pigz2.trace:2" "$out/pigz3.trace:3" \
			"$out/pigz4.trace:4" >"$out/pigz.summary"
		# shellcheck disable=SC2086
		cc $cflags "$out/pigz.c" -o "$out/pigz-test"
		validate pigz-8 "${cmd/-p 4/-p 8}" "$out/pigz-test --quiet --threads 8 --scale $scale"
		;;
	kernels-a64)
		# bench/cycles/kernels.c (matrix multiply, insertion sort,
		# sieve, hash) built for AArch64, profiled and validated
		# under qemu-aarch64; its matrices hold small integers, so
		# its floating-point results are exact (--fp-exact)
		rounds=100
		[ "$BENCH_SCALE" = full ] && rounds=1000
		rounds=$((rounds * repeat))
		aarch64-linux-gnu-gcc -O2 -static -o "$out/kernels-a64" \
			"$root/bench/cycles/kernels.c"
		"$D" record -q "${recmode[@]}" -o "$out/kernels-a64.trace" -- \
			"$out/kernels-a64" "$rounds" >/dev/null
		"$D" gentest --fp-exact ${GT_GENFLAGS:-} \
			-o "$out/kernels-a64.c" "$out/kernels-a64.trace" \
			>"$out/kernels-a64.summary"
		aarch64-linux-gnu-gcc -O2 -static -pthread -Wall -Wextra \
			"$out/kernels-a64.c" -o "$out/kernels-a64-test"
		validate kernels-a64 "$out/kernels-a64 $rounds" \
			"$out/kernels-a64-test --quiet --scale $scale" qemu
		;;
	interp-a64)
		# bench/interp.c (a bytecode interpreter: a switch's jump
		# table and calls through pointers) built for AArch64,
		# profiled and validated under qemu-aarch64
		rounds=$((10 * repeat))
		[ "$BENCH_SCALE" = full ] && rounds=$((rounds * 10))
		aarch64-linux-gnu-gcc -O2 -static -o "$out/interp-a64" \
			"$root/bench/interp.c"
		"$D" record -q "${recmode[@]}" -o "$out/interp-a64.trace" -- \
			"$out/interp-a64" "$rounds" >/dev/null
		"$D" gentest ${GT_GENFLAGS:-} -o "$out/interp-a64.c" \
			"$out/interp-a64.trace" >"$out/interp-a64.summary"
		aarch64-linux-gnu-gcc -O2 -static -pthread -Wall -Wextra \
			"$out/interp-a64.c" -o "$out/interp-a64-test"
		validate interp-a64 "$out/interp-a64 $rounds" \
			"$out/interp-a64-test --quiet --scale $scale" qemu
		;;
	xz | lua | sqlite)
		# single-threaded workloads of the suite, profiled once;
		# validate splits the quoted command line as a shell would
		cmd=$(bench_cmdline "$w" "$BENCH_SCALE")
		bench_argv "$w" "$BENCH_SCALE"
		if [ "$w" = lua ] && [ "$repeat" -gt 1 ]; then
			WL_ARGV+=("$repeat")
			cmd+=" $repeat"
		fi
		if [ "$w" = xz ]; then
			for ((i = 1; i < repeat; i++)); do
				WL_ARGV+=("${WL_ARGV[-1]}")
				cmd+=" ${cmd##* }"
			done
		fi
		if [ "$w" = sqlite ] && [ "$repeat" -gt 1 ]; then
			# the script again, its tables dropped first
			rd=${WL_ARGV[-1]}
			for ((i = 1; i < repeat; i++)); do
				WL_ARGV+=("DROP TABLE orders; DROP TABLE customer; DROP TABLE product;" "$rd")
			done
			cmd=$(printf '%q ' "${WL_ARGV[@]}")
			cmd=${cmd% }
		fi
		"$D" record -q "${recmode[@]}" -o "$out/$w.trace" -- "${WL_ARGV[@]}" >/dev/null
		"$D" gentest ${GT_GENFLAGS:-} -o "$out/$w.c" "$out/$w.trace" >"$out/$w.summary"
		# shellcheck disable=SC2086
		cc $cflags "$out/$w.c" -o "$out/$w-test"
		validate "$w" "$cmd" "$out/$w-test --quiet --scale $scale"
		;;
	*)
		echo "bench/gentest.sh: unknown workload '$w'" >&2
		exit 2
		;;
	esac
done

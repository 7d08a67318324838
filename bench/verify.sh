#!/bin/bash
# bench/verify.sh - check that every workload gives the same output natively,
# under plain `qemu-x86_64 -cpu qemu64` and under `dbtprof record` (guest
# stdio passes through), with the same exit status.  One run of each, timed.
#
#   bash bench/verify.sh [WORKLOAD...]
#
# Environment: BENCH_SCALE (full|small, default full), BENCH_VERIFY_MODES
# (dbtprof modes to check, default "count blocks"; mem is added at small
# scale), DBTPROF (default build/dbtprof; skipped when missing), QEMU
# (default qemu-x86_64), BENCH_WORK.
# Exit status 0 when everything that ran matched, 1 otherwise.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -u

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
# shellcheck source=bench/workloads.sh
. "$BENCH_DIR/workloads.sh"

SCALE=${BENCH_SCALE:-full}
DBTPROF=${DBTPROF:-$ROOT/build/dbtprof}
QEMU=${QEMU:-qemu-x86_64}
MODES=${BENCH_VERIFY_MODES:-count blocks}
[ "$SCALE" = small ] && [ -z "${BENCH_VERIFY_MODES:-}" ] && MODES="count blocks mem"
bench_check_scale "$SCALE"
WORKLOADS=${*:-$BENCH_WORKLOADS_ALL}

command -v "$QEMU" >/dev/null || bench_die "$QEMU not found"
configs="native qemu"
if [ -x "$DBTPROF" ]; then
	for m in $MODES; do configs="$configs $m"; done
else
	echo "verify: $DBTPROF missing, checking native and plain QEMU only" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbtprof-verify.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
bench_prepare "$SCALE"

now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }

fail=0
printf '%-7s %-6s %-7s %6s %9s  %s\n' workload scale config status wall_s stdout_sha256
for w in $WORKLOADS; do
	bench_argv "$w" "$SCALE"
	ref=
	for c in $configs; do
		case $c in
		native) cmd=("${WL_ARGV[@]}") ;;
		qemu) cmd=("$QEMU" -cpu qemu64 "${WL_ARGV[@]}") ;;
		*) cmd=("$DBTPROF" record --mode "$c" -o "$tmp/trace" -- "${WL_ARGV[@]}") ;;
		esac
		t0=$(now)
		"${cmd[@]}" </dev/null >"$tmp/out" 2>"$tmp/err"
		st=$?
		t1=$(now)
		sum=$(sha256sum <"$tmp/out" | cut -d' ' -f1)
		rm -f "$tmp/trace"
		mark=
		if [ -z "$ref" ]; then
			ref="$st $sum"
		elif [ "$st $sum" != "$ref" ]; then
			mark="  MISMATCH (native: $ref)"
			fail=1
		fi
		printf '%-7s %-6s %-7s %6s %9.2f  %s%s\n' "$w" "$SCALE" "$c" "$st" \
			"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$sum" "$mark"
		if [ "$st" != 0 ] || [ -n "$mark" ]; then
			sed 's/^/    stderr: /' "$tmp/err" | tail -n 5 >&2
		fi
	done
done
exit $fail

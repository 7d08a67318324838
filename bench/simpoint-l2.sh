#!/bin/bash
# The seed's experiment: does the SimPoint estimate of the L2 miss rate (and
# MPKI) match the whole run?  For each workload: record in mem mode, cut
# BBVs, cluster, then run the cache model over every interval and over the
# simulation points alone.  Prints a Markdown table (paste into RESULTS.md).
#   BENCH_SCALE (small), SP_INTERVAL (10000000), BENCH_WORKLOADS
#   (sha256 xz lua sqlite), DBTPROF, L2 geometry via SP_L2 (1M,16,64),
#   SP_PARTIAL (keep or drop the last partial interval; default drop).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${BENCH_SCALE:-small} # before workloads.sh sets its own default
. bench/workloads.sh
DBTPROF=${DBTPROF:-build/dbtprof}
IVL=${SP_INTERVAL:-10000000}
L2=${SP_L2:-1M,16,64}
PARTIAL=${SP_PARTIAL:-drop}
W=$(mktemp -d /tmp/dbtprof-sp.XXXXXX)
trap 'rm -rf "$W"' EXIT
bench_prepare "$SCALE"
echo "### SimPoint estimate vs full run (L1D 32K/8/64, L2 $L2, interval $IVL)"
echo
echo "Command: \`BENCH_SCALE=$SCALE SP_INTERVAL=$IVL SP_PARTIAL=$PARTIAL bash bench/simpoint-l2.sh\` ($(date -u +%F), $(git rev-parse --short HEAD 2>/dev/null))"
echo
echo "| workload | intervals | k | L2 miss rate full | estimate | error | L2 MPKI full | estimate | error | L1 MPKI error |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for w in ${BENCH_WORKLOADS:-sha256 xz lua sqlite}; do
	bench_argv "$w" "$SCALE"
	echo "simpoint-l2: $w" >&2
	"$DBTPROF" record -q -m mem -o "$W/t.trace" -- "${WL_ARGV[@]}" >/dev/null </dev/null
	"$DBTPROF" bbv -q -i "$IVL" --partial "$PARTIAL" -o "$W/t.bb" "$W/t.trace"
	"$DBTPROF" simpoint --json -i "$W/t.bb" -o "$W/t" >"$W/sp.json"
	"$DBTPROF" cache --json --l2 "$L2" -i "$IVL" --partial "$PARTIAL" --simpoints "$W/t.simpoints" \
		--weights "$W/t.weights" "$W/t.trace" >"$W/c.json"
	jq -r --arg w "$w" --argjson n "$(wc -l <"$W/t.bb")" --argjson k "$(jq .k "$W/sp.json")" '
		.estimate as $e |
		def pct: if . == null then "n/a" else (. * 1000 | round / 10 | tostring) + "%" end;
		"| \($w) | \($n) | \($k) | \($e.l2_miss_rate.full) | \($e.l2_miss_rate.estimate) | \($e.l2_miss_rate.relative_error | pct) | \($e.l2_mpki.full) | \($e.l2_mpki.estimate) | \($e.l2_mpki.relative_error | pct) | \($e.l1_mpki.relative_error | pct) |"' "$W/c.json"
	rm -f "$W/t.trace"
done

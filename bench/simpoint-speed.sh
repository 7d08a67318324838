#!/bin/bash
# bench/simpoint-speed.sh - `dbtprof simpoint` on large basic block vector
# files: SP_INTERVALS intervals (default 10,000) over SP_BLOCKS distinct
# blocks (default 50,000), each interval SP_PER blocks (default 200).
#   phases: SP_PHASES phases (default 8) in runs of 50 to 549 intervals;
#           each phase has its own 1/SP_PHASES of the blocks, SP_PER - 50
#           hot ones with fixed weights (within 10%) and 50 cold ones drawn
#           at random per interval: what real programs look like.
#   random: every interval draws from all blocks: no structure, so k-means
#           runs to its iteration limit: the worst case.
# Generated with awk from fixed seeds (the same files every run).  Prints
# Markdown on stdout: elapsed and CPU seconds, peak RSS, the chosen k.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
cd "$(dirname "$0")/.."
D=$PWD/build/dbtprof
N=${SP_INTERVALS:-10000}
B=${SP_BLOCKS:-50000}
PER=${SP_PER:-200}
PH=${SP_PHASES:-8}
W=$(mktemp -d /tmp/dbtprof-bench-sp.XXXXXX)
trap 'rm -rf "$W"' EXIT

# gen KIND OUT
gen() {
	awk -v kind="$1" -v n="$N" -v b="$B" -v per="$PER" -v ph="$PH" 'BEGIN {
		srand(1)
		span = int(b / ph); hot = per - 50; phase = 0; left = 0
		for (p = 0; p < ph; p++)
			for (j = 0; j < hot; j++) {
				hid[p, j] = p * span + 1 + int(rand() * span)
				hw[p, j] = 1 + int(rand() * 100000)
			}
		for (i = 0; i < n; i++) {
			if (kind == "phases" && left-- <= 0) {
				phase = int(rand() * ph); left = 50 + int(rand() * 500)
			}
			line = "T"
			delete seen
			for (j = 0; j < per; j++) {
				if (kind == "random") {
					id = 1 + int(rand() * b); w = 1 + int(rand() * 100000)
				} else if (j < hot) {
					id = hid[phase, j]; w = int(hw[phase, j] * (0.9 + 0.2 * rand())) + 1
				} else {
					id = phase * span + 1 + int(rand() * span); w = 1 + int(rand() * 100)
				}
				if (id in seen) continue
				seen[id] = 1
				line = line ":" id ":" w " "
			}
			print line
		}
	}' >"$2"
}

echo "| BBV ($N intervals, $B blocks, $PER a line) | file MiB | distinct blocks | elapsed s | CPU s | peak RSS MiB | k |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for kind in phases random; do
	echo "[simpoint-speed] generating $kind" >&2
	gen "$kind" "$W/$kind.bb"
	echo "[simpoint-speed] clustering $kind" >&2
	/usr/bin/time -f "%e %U %S %M" -o "$W/t" "$D" simpoint --json -i "$W/$kind.bb" \
		-o "$W/$kind" >"$W/$kind.json"
	read -r e u s m <"$W/t"
	nb=$(tr ' ' '\n' <"$W/$kind.bb" | awk -F: 'NF == 3 {print $2}' | sort -u | wc -l)
	awk -v kind="$kind" -v sz="$(stat -c %s "$W/$kind.bb")" -v e="$e" -v u="$u" \
		-v s="$s" -v m="$m" -v nb="$nb" -v k="$(jq -r .k "$W/$kind.json")" 'BEGIN {
		printf "| %s | %.1f | %d | %.2f | %.2f | %.0f | %s |\n", kind, sz / 1048576, nb, e, u + s, m / 1024, k }'
done

#!/bin/bash
# bench/native-delta.sh - how far QEMU's instruction counts are from native
# ones, before and after the matching presets.
#
# For each short command (native single-stepping runs ~30-60 k
# instructions/s, so the programs are small; their start-up is where QEMU
# and native differ): the instructions counted natively by `dbtprof
# native-count` and under QEMU by `dbtprof record` + `stats`,
#   before: both with their defaults (QEMU -cpu qemu64), and with -cpu max;
#   after:  `native-count --match-qemu` (QEMU's CPU view, auxiliary vector,
#           stack layout, order of mappings and rep counting, the preset's
#           GLIBC_TUNABLES) vs `record --match-native` (-cpu max, the same
#           GLIBC_TUNABLES).
# Both sides must see the same /etc/ld.so.cache (installing a package
# changes it, and the loader's cache lookup with it): run the table in one
# go.
# Prints a Markdown table (paste into bench/RESULTS.md).
#
# Environment: DBTPROF (default build/dbtprof).

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -eu

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
DBTPROF=${DBTPROF:-$ROOT/build/dbtprof}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
seq 1 2000 >s.txt
printf 'local s = 0\nfor i = 1, 20000 do s = s + i %% 7 end\nprint(s)\n' >l.lua

CMDS=("true" "sha256sum s.txt" "xz -1 -c s.txt" "lua5.4 l.lua"
	"sqlite3 :memory: 'select 1;'" "pigz -p 1 -c s.txt")

native() { # ARGS... -- CMD
	"$DBTPROF" native-count --json --report n.json "$@" >/dev/null 2>&1 </dev/null
	jq .instructions n.json
}

qemu() { # ARGS... -- CMD
	"$DBTPROF" record -q -m count -o q.trace "$@" >/dev/null </dev/null
	"$DBTPROF" stats --json --top 0 --no-disasm q.trace | jq .instructions
}

d() { echo $(($2 - $1)); }

echo "| command | native | QEMU qemu64 (Δ) | QEMU max (Δ) | native, --match-qemu | QEMU, --match-native (Δ) |"
echo "|---|--:|--:|--:|--:|--:|"
for c in "${CMDS[@]}"; do
	eval "set -- $c"
	echo "bench: $c" >&2
	n=$(native -- "$@")
	q=$(qemu -- "$@")
	qm=$(qemu --cpu max -- "$@")
	nm=$(native --match-qemu -- "$@")
	qp=$(qemu --match-native -- "$@")
	echo "| \`$c\` | $n | $q ($(d "$n" "$q")) | $qm ($(d "$n" "$qm")) | $nm | $qp ($(d "$nm" "$qp")) |"
done

#!/bin/bash
# Region formation end to end: exact metrics on the loop guests (x86-64 and
# AArch64), the same dynamics for one program on both ISAs, threads, the
# output formats, and bad input.
. tests/e2e/lib.sh

# rc TRACE FILTER ARGS... : a value from `regions --json`
rc_() {
	tr=$1
	f=$2
	shift 2
	"$DBTPROF" regions --json "$@" "$tr" | jq -r "$f"
}

# loop: basic blocks [mov] (the first translation block, split at the
# loop's leader), [dec; jnz] x 10,000, [mov; xor; syscall]: 20,004
# instructions.  The loop block is reached by falling through once, then by
# 9,999 back edges.  NET, TT, NETPlus, LEF (threshold 50): hot at the 51st
# execution (count 50), recorded, the region entered at the 52nd: 9,949
# entries, each a completion (the last leaves for the exit block, which
# becomes an exit target: 2 counters), 19,898 instructions.  MRET2: passes
# at the 26th and 51st, the same region at the same point (2 recordings).
# LEI (35): the first back edge only remembers the target, cycles count
# from the 3rd execution, hot at the 37th: 9,964 entries.
"$DBTPROF" record -q -m blocks -o "$T/loop.trace" -- "$G/x86_64/loop"
"$DBTPROF" record -q -m blocks -o "$T/aloop.trace" -- "$G/aarch64/loop"
want="net 20004 19898 1 9949 9949 0 0 2 1 2 2
mret2 20004 19898 1 9949 9949 0 0 2 2 2 2
lei 20004 19928 1 9964 9964 0 0 2 1 2 2
tt 20004 19898 1 9949 9949 0 0 2 1 2 2
netplus 20004 19898 1 9949 9949 0 0 2 1 2 2
lef 20004 19898 1 9949 9949 0 0 2 1 2 2"
q='.techniques[] | [.technique, .instructions, .region_instructions,
	.regions, .entries, .completions, .transitions, .side_exits,
	.counters, .recordings, .static_instructions,
	.distinct_instructions] | join(" ")'
eq "x86 loop" "$want" "$(rc_ "$T/loop.trace" "$q")"
# AArch64: [mov x0] + [subs; b.ne] x 10,000 + [mov x8; svc]: 20,003.
eq "aarch64 loop" "$(echo "$want" | sed 's/20004/20003/')" \
	"$(rc_ "$T/aloop.trace" "$q")"
eq "loop covers" "1 2 1 2 1 2" "$(rc_ "$T/loop.trace" \
	'[.techniques[0].cover_sets[] | .regions, .static_instructions] | join(" ")')"
eq "loop ratios" "0.994701 1 1 2 2" "$(rc_ "$T/loop.trace" \
	'.techniques[0] | [(.coverage * 1e6 | round / 1e6), .completion,
	.duplication, .dynamic_size, .static_size] | join(" ")')"
eq "tt has no completion ratio" "null" "$(rc_ "$T/loop.trace" \
	'.techniques[3].completion')"
eq "instructions = stats" "$(js "$T/loop.trace" .instructions)" \
	"$(rc_ "$T/loop.trace" '.techniques[0].instructions')"

# Text and CSV carry the same numbers.
out=$("$DBTPROF" regions -t net,lei "$T/loop.trace")
contains "text row" "net                 1    99.47     1     1     1   100.00   1.00     2.00     2.00            0            0         2" "$out"
contains "text instructions" "instructions: 20,004" "$out"
eq "csv row" "lei,0,20004,19928,1,0.996201,1,2,1,2,1,2,9964,9964,1.000000,2,2,1.000000,2.000000,2.000000,0,0,2,1,0" \
	"$("$DBTPROF" regions --csv -t lei "$T/loop.trace" | sed -n 2p)"

# Per-region table, graphs, chart.
"$DBTPROF" regions -t net,tt --csv --regions "$T/r.csv" --dot "$T/dot" \
	--svg "$T/c.svg" "$T/loop.trace" >/dev/null
eq "region table" 'technique,rank,entry,symbol,nodes,static_insns,entries,insns,completions,completion,side_exits
net,1,0x401007,"_start+0x7",1,2,9949,19898,9949,1.000000,0
tt,1,0x401007,"_start+0x7",1,2,9949,19898,9949,,0' "$(cat "$T/r.csv")"
contains "dot" 'r0_0 [label="0x401007\n2 insns", style=bold];' \
	"$(cat "$T/dot/net.dot")"
[ -f "$T/dot/tt.dot" ] || fail "no tt.dot"
contains "svg" '<text x="10" y="24" font-weight="bold">dynamic coverage (%)</text>' \
	"$(cat "$T/c.svg")"

# One program, two ISAs (nested: a call, an if-else, nested loops): the
# same region dynamics, whatever the instruction counts.
"$DBTPROF" record -q -m blocks -o "$T/xn.trace" -- "$G/x86_64/nested" || true
"$DBTPROF" record -q -m blocks -o "$T/an.trace" -- "$G/aarch64/nested" || true
q='.techniques[] | [.technique, .regions, .entries, .completions,
	.transitions, .side_exits, .counters, .recordings] | join(" ")'
eq "nested: same on both ISAs" "$(rc_ "$T/xn.trace" "$q")" \
	"$(rc_ "$T/an.trace" "$q")"

# Segments: the static guest has one file, so segmenting by file changes
# nothing; ranges that cut the code do.
seg=$(rc_ "$T/xn.trace" '[.techniques[] | select(.technique == "net") |
	.region_instructions] | join(" ")' --segment -t net)
eq "one file: segmented = unsegmented" 2 "$(echo "$seg" | wc -w)"
[ "${seg% *}" = "${seg#* }" ] || fail "segment by file changed a one-file run: $seg"
s1=$(rc_ "$T/xn.trace" '.techniques[1].regions' --segment=401000-401030 -t net)
s0=$(rc_ "$T/xn.trace" '.techniques[0].regions' --segment=401000-401030 -t net)
[ "$s1" -gt "$s0" ] || fail "a range cutting the loop should add regions ($s0 -> $s1)"

# Threads: every thread's blocks are simulated.
"$DBTPROF" record -q -m blocks -o "$T/th.trace" -- "$G/c/mt" 4 >/dev/null
eq "threads: instructions = stats" "$(js "$T/th.trace" .instructions)" \
	"$(rc_ "$T/th.trace" '.techniques[0].instructions' --segment=main)"
eq "segment main names" "none main" "$("$DBTPROF" regions --json -t net \
	"$T/th.trace" | jq -r .parameters.segment) $("$DBTPROF" regions \
	--json -t net --segment=main "$T/th.trace" | jq -r .parameters.segment)"

# Bad input: one line, exit 1 (usage: 2), nothing crashes.
"$DBTPROF" record -q -m count -o "$T/count.trace" -- "$G/x86_64/loop"
eq "count mode" 1 "$(status "$DBTPROF" regions "$T/count.trace")"
contains "count mode message" "a count-mode trace has no block stream" \
	"$("$DBTPROF" regions "$T/count.trace" 2>&1)"
eq "stdin" 1 "$(status "$DBTPROF" regions - <"$T/loop.trace")"
eq "missing" 1 "$(status "$DBTPROF" regions "$T/nope.trace")"
# (cut inside the last record: a cut between two records, where the
# threads' chunks may end, is a recording cut short, read with a warning)
sz=$(stat -c %s "$T/th.trace")
head -c $((sz - 7)) "$T/th.trace" >"$T/cut.trace"
eq "truncated" 1 "$(status "$DBTPROF" regions "$T/cut.trace")"
eq "truncated: one line" 1 "$("$DBTPROF" regions "$T/cut.trace" 2>&1 | wc -l)"
for bad in "-t foo" "-t net,bogus" "--threshold 0" "--threshold net=x" \
	"--threshold zz=4" "--max-insns -1" "--lei-buffer 99999999" \
	"--segment=12-4" "--segment=zz" "--csv --json" "--bogus"; do
	# shellcheck disable=SC2086
	eq "usage: $bad" 2 "$(status "$DBTPROF" regions $bad "$T/loop.trace")"
done
eq "no trace" 2 "$(status "$DBTPROF" regions)"
contains "help" "usage: dbtprof regions" "$("$DBTPROF" regions --help)"
eq "threshold per technique" "7 50" "$(rc_ "$T/loop.trace" \
	'[.parameters.threshold.net, .parameters.threshold.tt] | join(" ")' \
	--threshold net=7)"
eq "--tt-inner 0 allowed" 0 "$(status "$DBTPROF" regions --tt-inner 0 "$T/loop.trace")"

done_ok

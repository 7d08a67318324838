#!/bin/sh
# dbtprof compare: where two recordings part, found at the exact instruction;
# identical recordings; the hints for a different environment, CPU model and
# input; errors.  Exit status 0 same, 1 different, 2 error.
. tests/e2e/lib.sh

# cmpj A B FILTER : a value from `compare --json`
cmpj() {
	set +e
	"$DBTPROF" compare --json "$1" "$2" >"$T/cmp.json"
	set -e
	jq -r "$3" "$T/cmp.json"
}

# --- Planted divergence: loop vs nested (tests/guests/*/{loop,nested}.S).
# x86-64: both start at 0x401000 (static, .text at 0x401000); loop's first
# instruction, mov $10000,%rcx, is 7 bytes, nested's, mov $20,%r12d, is 6:
# the streams part at instruction 1, 0x401007 vs 0x401006, both inside the
# first TB (expected.txt: 3 and 4 instructions at 0x401000).
for g in loop nested; do
	rec "$T/$g.trace" "$G/x86_64/$g" >/dev/null
done
eq "loop vs nested exit" 1 "$(status "$DBTPROF" compare "$T/loop.trace" "$T/nested.trace")"
d=.threads[0].divergence
eq "x86 divergence instruction" 1 "$(cmpj "$T/loop.trace" "$T/nested.trace" "$d.instruction")"
eq "x86 A address" 0x401007 "$(jq -r "$d.a.address" "$T/cmp.json")"
eq "x86 B address" 0x401006 "$(jq -r "$d.b.address" "$T/cmp.json")"
eq "x86 A symbol" "_start+7" "$(jq -r "$d.a.function + \"+\" + ($d.a.function_offset|tostring)" "$T/cmp.json")"
eq "x86 B symbol" "_start+6" "$(jq -r "$d.b.function + \"+\" + ($d.b.function_offset|tostring)" "$T/cmp.json")"
eq "x86 block indices" "0 0 1 1" "$(jq -r "[$d.a.block_index, $d.b.block_index, $d.a.instruction_in_block, $d.b.instruction_in_block] | map(tostring) | join(\" \")" "$T/cmp.json")"
eq "x86 last common block" "0x401000 1" "$(jq -r "$d.common_blocks[-1] | .address + \" \" + (.instructions|tostring)" "$T/cmp.json")"
eq "x86 A/B instructions" "20004 8565 -11439" "$(jq -r '[.threads[0].a.instructions, .threads[0].b.instructions, .total.instructions_delta] | map(tostring) | join(" ")' "$T/cmp.json")"
eq "x86 block delta" "-5480" "$(jq -r .total.block_executions_delta "$T/cmp.json")"
eq "x86 hint" "command likely" "$(jq -r '.hints[0] | .cause + " " + .confidence' "$T/cmp.json")"
out=$("$DBTPROF" compare "$T/loop.trace" "$T/nested.trace" || true)
contains "text: divergence" "the streams part at instruction 1 " "$out"
contains "text: A symbol" "_start+0x7 (loop)" "$out"
contains "text: B symbol" "_start+0x6 (nested)" "$out"
contains "text: hint label" "hint (best effort" "$out"

# AArch64: fixed 4-byte instructions; loop is mov, subs, b.ne (TB of 3)
# then back to 0x401004; nested is mov, mov, mov, bl (TB of 4).  They part
# at instruction 3: 0x401004 (loop's second TB) vs 0x40100c (inside
# nested's first TB) - one block index apart, which only an
# instruction-level comparison gets right.
for g in loop nested; do
	rec "$T/a-$g.trace" "$G/aarch64/$g" >/dev/null
done
eq "a64 divergence instruction" 3 "$(cmpj "$T/a-loop.trace" "$T/a-nested.trace" "$d.instruction")"
eq "a64 addresses" "0x401004 0x40100c" "$(jq -r "$d.a.address + \" \" + $d.b.address" "$T/cmp.json")"
eq "a64 blocks" "1 0 0 3" "$(jq -r "[$d.a.block_index, $d.b.block_index, $d.a.instruction_in_block, $d.b.instruction_in_block] | map(tostring) | join(\" \")" "$T/cmp.json")"

# --- Identical: the same program twice, blocks vs mem mode, a trace with
# itself (four threads), and a static program that never reads its
# environment recorded with an extra variable.
rec "$T/loop2.trace" "$G/x86_64/loop" >/dev/null
eq "same twice exit" 0 "$(status "$DBTPROF" compare "$T/loop.trace" "$T/loop2.trace")"
contains "same twice text" "identical block streams" "$("$DBTPROF" compare "$T/loop.trace" "$T/loop2.trace")"
"$DBTPROF" record -q -m mem -o "$T/nested-mem.trace" -- "$G/x86_64/nested" || true
eq "blocks vs mem exit" 0 "$(status "$DBTPROF" compare "$T/nested.trace" "$T/nested-mem.trace")"
if [ -x "$G/c/mt" ]; then
	rec "$T/mt.trace" "$G/c/mt" >/dev/null
	eq "mt with itself" true "$(cmpj "$T/mt.trace" "$T/mt.trace" .identical)"
	eq "mt threads" 4 "$(jq -r '.threads | length' "$T/cmp.json")"
fi
"$DBTPROF" record -q -e FOO=bar -o "$T/loop-env.trace" -- "$G/x86_64/loop"
eq "static program, other env" 0 "$(status "$DBTPROF" compare "$T/loop.trace" "$T/loop-env.trace")"

# --- Real programs (dynamic, glibc).
if [ -x /usr/bin/sha256sum ] && [ -x /bin/true ]; then
	printf 'hello\n' >"$T/small.txt"
	rec "$T/sha1.trace" /usr/bin/sha256sum "$T/small.txt" >/dev/null
	rec "$T/sha2.trace" /usr/bin/sha256sum "$T/small.txt" >/dev/null
	eq "sha256sum twice" 0 "$(status "$DBTPROF" compare "$T/sha1.trace" "$T/sha2.trace")"

	# One more environment variable: the loader's walk over envp (to
	# find the auxiliary vector) runs once more, before any syscall.
	rec "$T/true1.trace" /bin/true >/dev/null
	"$DBTPROF" record -q -e FOO=bar -o "$T/true2.trace" -- /bin/true
	eq "env exit" 1 "$(status "$DBTPROF" compare "$T/true1.trace" "$T/true2.trace")"
	eq "env: before the first syscall" "0 0" "$(cmpj "$T/true1.trace" "$T/true2.trace" "[$d.a.syscalls_before, $d.b.syscalls_before] | map(tostring) | join(\" \")")"
	contains "env: in the loader" "ld-linux" "$(jq -r "$d.a.file" "$T/cmp.json")"
	eq "env: hint" "environment likely" "$(jq -r '.hints[0] | .cause + " " + .confidence' "$T/cmp.json")"
	contains "env: hint names the variable" "B adds FOO=bar" "$(jq -r '.hints[0].text' "$T/cmp.json")"

	# Another CPU model: glibc's CPU feature detection (cpuid) and IFUNC
	# selection go another way.
	"$DBTPROF" record -q --cpu max -o "$T/sha-max.trace" -- /usr/bin/sha256sum "$T/small.txt" >/dev/null
	eq "cpu exit" 1 "$(status "$DBTPROF" compare "$T/sha1.trace" "$T/sha-max.trace")"
	eq "cpu: setup difference" "qemu64 max" "$(cmpj "$T/sha1.trace" "$T/sha-max.trace" '.setup_differences[] | select(.key == "cpu") | .a + " " + .b')"
	eq "cpu: hint" "cpu likely" "$(jq -r '.hints[0] | .cause + " " + .confidence' "$T/cmp.json")"
	contains "cpu: hint says IFUNC" "IFUNC" "$(jq -r '.hints[0].text' "$T/cmp.json")"

	# The same command on files of 6 and 18 bytes: read returns 6 vs 18.
	mkdir "$T/d1" "$T/d2"
	printf 'hello\n' >"$T/d1/in.txt"
	printf 'hello world, more\n' >"$T/d2/in.txt"
	(cd "$T/d1" && "$DBTPROF" record -q -o "$T/in1.trace" -- /usr/bin/sha256sum in.txt >/dev/null)
	(cd "$T/d2" && "$DBTPROF" record -q -o "$T/in2.trace" -- /usr/bin/sha256sum in.txt >/dev/null)
	eq "input: hint" "syscall likely" "$(cmpj "$T/in1.trace" "$T/in2.trace" '.hints[0] | .cause + " " + .confidence')"
	h=$(jq -r '.hints[0].text' "$T/cmp.json")
	contains "input: hint names read" "read (0)" "$h"
	contains "input: hint has both values" "returned 6 in A but 18 in B" "$h"
fi

# --- Errors: exit 2 and one line.
printf 'T:1:5 :2:3\n' >"$T/x.bb"
eq "not a trace exit" 2 "$(status "$DBTPROF" compare "$T/x.bb" "$T/loop.trace")"
msg=$("$DBTPROF" compare "$T/loop.trace" "$T/x.bb" 2>&1 >/dev/null || true)
contains "not a trace message" "x.bb: not a trace" "$msg"
eq "one line" 1 "$(printf '%s\n' "$msg" | wc -l | tr -d ' ')"
"$DBTPROF" record -q -m count -o "$T/count.trace" -- "$G/x86_64/loop" || true
eq "count mode exit" 2 "$(status "$DBTPROF" compare "$T/loop.trace" "$T/count.trace")"
contains "count mode message" "count-mode" "$("$DBTPROF" compare "$T/loop.trace" "$T/count.trace" 2>&1 || true)"
eq "missing file" 2 "$(status "$DBTPROF" compare "$T/loop.trace" "$T/nope.trace")"
eq "one argument" 2 "$(status "$DBTPROF" compare "$T/loop.trace")"
eq "arch mismatch" 2 "$(status "$DBTPROF" compare "$T/loop.trace" "$T/a-loop.trace")"
eq "help" 0 "$(status "$DBTPROF" compare --help)"
# Two basic block vector files: identical ones, and the same run with and
# without splitting translation blocks (blocks matched by address).
"$DBTPROF" bbv -q -i 5000 -o "$T/v1.bb" -- "$G/x86_64/loop"
"$DBTPROF" bbv -q -i 5000 -o "$T/v2.bb" -- "$G/x86_64/loop"
"$DBTPROF" bbv -q -i 5000 --no-split -o "$T/v3.bb" -- "$G/x86_64/loop"
eq "bbv identical" 0 "$(status "$DBTPROF" compare "$T/v1.bb" "$T/v2.bb")"
eq "bbv split vs not" 1 "$(status "$DBTPROF" compare "$T/v1.bb" "$T/v3.bb")"
eq "bbv first difference" "bbv file offset 0 loop+0x1000:1:3 loop+0x1007:5000:4998" \
	"$("$DBTPROF" compare --json "$T/v1.bb" "$T/v3.bb" | jq -r '[.kind, .matched_by, .first_different_interval, (.differences[] | "\(.block):\(.a):\(.b)")] | join(" ")')"
# Maps with addresses but no file columns: matched by address.
for v in v1 v3; do cut -d' ' -f1-4 "$T/$v.bb.map" >"$T/$v.m" && mv "$T/$v.m" "$T/$v.bb.map"; done
eq "bbv by address" "address 0x401000:1:3 0x401007:5000:4998" \
	"$("$DBTPROF" compare --json "$T/v1.bb" "$T/v3.bb" | jq -r '[.matched_by, (.differences[] | "\(.address):\(.a):\(.b)")] | join(" ")')"
rm "$T/v3.bb.map"
eq "bbv by id without maps" id "$("$DBTPROF" compare --json "$T/v1.bb" "$T/v3.bb" | jq -r .matched_by)"
done_ok

#!/bin/bash
# bench/gentest-l1.sh - where a generated test program's L1 data cache
# misses come from, by callgrind's cache simulation (an independent
# reference: the host's L1, as cachegrind sees it from CPUID).
#
#   bash bench/gentest-l1.sh PROGRAM [ARGS...]
#
# PROGRAM is a program `dbtprof gentest` wrote (x86-64, built natively),
# e.g. `bash bench/gentest-l1.sh ./test --quiet`; any other x86-64
# program works too (its misses then by stack, rip-relative or
# elsewhere).  Runs it under `valgrind --tool=callgrind --cache-sim=yes
# --dump-instr=yes` (some 100 times slower than natively) and prints,
# as Markdown, its D1 misses (reads and writes) by what the missing
# instruction addresses:
#   random-target tables   indirect branches through a table of targets
#                          in the buffer (random targets, the switches
#                          that count a function's passes)
#   random bytes           the random branches' bytes and (x86-64)
#                          the random tables' indices
#   walks                  the walk areas (the L1 and L2 misses the
#                          program reproduces on purpose)
#   data area, slots, reads  the rewritten operands' area, the buffer's
#                          slots, reproduced reads
#   stack                  the private stack (push, pop, call, ret, rsp)
#   rip-relative           the program's own data (slots of targets,
#                          entry pointers)
#   elsewhere              through other registers: the driver's
#                          schedule, the block functions' tables of
#                          copies
# and the ten functions with the most (a block's copies and stubs counted
# as its function gt_b<N>, a chain's copy as the block it copies).  The
# buffer's layout is read from this checkout's include/dbtp/gentest.h: a
# program that another build of dbtprof wrote may be laid out otherwise.
#
# GT_L1_CALLGRIND=FILE: take the misses from FILE, an earlier run's
# callgrind output (with --cache-sim=yes --dump-instr=yes), rather than
# running PROGRAM.  Needs valgrind, binutils (objdump, nm) and awk.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
	exit $(($# < 1))
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hdr=$(dirname "$here")/include/dbtp/gentest.h
prog=$(command -v "$1") || {
	echo "gentest-l1: $1: no such program" >&2
	exit 1
}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

def() { awk -v n="DBTP_GT_$1" '$1 == "#define" && $2 == n { print $3 }' "$hdr"; }

shift
if [ -n "${GT_L1_CALLGRIND:-}" ]; then
	cp "$GT_L1_CALLGRIND" "$W/cg"
elif ! valgrind -q --tool=callgrind --cache-sim=yes --dump-instr=yes \
	--callgrind-out-file="$W/cg" "$prog" "$@" >/dev/null 2>"$W/err"; then
	cat "$W/err" >&2
	exit 1
fi
objdump -d -M intel --no-show-raw-insn "$prog" >"$W/dis"
nm -n "$prog" | awk 'NF == 3 && $2 ~ /^[tT]$/' >"$W/syms"

# a hexadecimal number's value (lower-case digits, no 0x)
hex='function hex(s,    i, v) {
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}'

# per instruction address (in decimal): D1 misses (D1mr + D1mw);
# positions "instr line", relative ones (+N, -N, *) to the last; the
# line after calls= is the call's inclusive cost, not the instruction's
awk "$hex"'
function pos(p) {
	if (p == "*") return last
	if (p ~ /^\+/) return last + num(substr(p, 2))
	if (p ~ /^-/) return last - num(substr(p, 2))
	return num(p)
}
function num(s) { return s ~ /^0x/ ? hex(tolower(substr(s, 3))) : s + 0 }
/^events:/ {
	for (i = 2; i <= NF; i++) col[$i] = i + 1 # two positions first
	next
}
/^calls=/ { skip = 1; next }
/^[0-9+*-]/ {
	a = pos($1); last = a
	if (skip) { skip = 0; next }
	m[a] += $(col["D1mr"]) + $(col["D1mw"])
}
END { for (a in m) if (m[a]) printf "%.0f %d\n", a, m[a] }
' "$W/cg" >"$W/miss"

awk -v rnd="$(def RAND)" -v rsize="$(def RAND_SIZE)" \
	-v ridx="$(def RIDX)" -v isize="$(def RIDX_SIZE)" -v walk="$(def WALK)" \
	-v jumps="$(def JUMPS)" -v far="$(def FAR)" "$hex"'
function base(s) { # a block function for its copies, chains, stubs
	sub(/_(c|v|w)[0-9]+$/, "", s); sub(/_body$/, "", s); return s
}
FILENAME == ARGV[1] { sym[n] = hex($1); name[n++] = base($3); next }
FILENAME == ARGV[2] {
	if (match($0, /^ *[0-9a-f]+:/)) {
		a = substr($0, RSTART, RLENGTH - 1); gsub(/ /, "", a)
		ins[hex(a)] = substr($0, RLENGTH + 1)
	}
	next
}
{
	a = $1 + 0; t = ins[a]; c = "elsewhere"
	if (t ~ /rip\+/)
		c = "rip-relative"
	else if (t ~ /^[ \t]*(push|pop|call|ret)/ && t !~ /r15\+/ || t ~ /\[rsp/)
		c = "stack"
	else if (match(t, /\[r15[^]]*\]/)) {
		op = substr(t, RSTART, RLENGTH); d = 0
		if (match(op, /0x[0-9a-f]+\]/))
			d = hex(substr(op, RSTART + 2, RLENGTH - 3))
		if (d >= far) c = "walks"
		else if (d >= jumps) c = "random-target tables"
		else if (d >= ridx - 1 && d < ridx + isize) c = "random bytes"
		else if (d >= walk) c = "walks"
		else if (d >= rnd - 1 && d < rnd + rsize) c = "random bytes"
		else c = "data area, slots, reads"
		if (op ~ /rsp/) c = "stack"
	}
	by[c] += $2; tot += $2
	lo = 0; hi = n - 1 # the function: last symbol at or below a
	while (lo < hi) {
		mid = int((lo + hi + 1) / 2)
		if (sym[mid] <= a) lo = mid; else hi = mid - 1
	}
	fn[n ? name[lo] : "?"] += $2
}
END {
	if (!tot) { print "no D1 misses"; exit }
	print "| misses by what they address | D1 misses | share |"
	print "|---|--:|--:|"
	for (c in by) printf "| %s | %d | %.1f%% |\n", c, by[c], 100 * by[c] / tot | "sort -t\"|\" -k3 -nr"
	close("sort -t\"|\" -k3 -nr")
	printf "| all | %d | 100%% |\n\n", tot
	print "| function | D1 misses | share |"
	print "|---|--:|--:|"
	for (f in fn) printf "| %s | %d | %.1f%% |\n", f, fn[f], 100 * fn[f] / tot | "sort -t\"|\" -k3 -nr | head -10"
}
' "$W/syms" "$W/dis" "$W/miss"

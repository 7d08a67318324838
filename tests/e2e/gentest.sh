#!/bin/bash
# gentest: the generated program compiles without warnings, runs natively,
# under qemu-x86_64 and valgrind (memcheck finding no error), and executes
# each block exactly as often as asked -- measured by dbtprof itself,
# recording the generated program under QEMU and counting the executions
# of each block's gt_b<K>_body label (where every iteration enters) --
# for the loop and threads guests; the
# group model across profiles of a program whose thread count is a
# parameter; --scale; --naive; bad input.
. tests/e2e/lib.sh

CC=${CC_GUEST:-cc}
CC_A64=${AARCH64_CC:-aarch64-linux-gnu-gcc}
CFLAGS_GT="-O2 -pthread -Wall -Wextra -Werror"

# blockcounts TRACE: "ADDRESS EXECUTIONS" per distinct block address
blockcounts() {
	"$DBTPROF" dump "$1" | awk '$2 == "block" { n[$4]++ }
		END { for (a in n) print a, n[a] }' | sort
}

# measured TRACE [PROG]: "gt_bK_body EXECUTIONS" for every block: the entries
# into its copies (gt_bK_body, gt_bK_c1, ...; a chain's copies of it,
# gt_bK_v0, ...), each one execution (the program PROG, or TRACE less
# .gen.trace)
measured() {
	# a random indirect target gt_t<copy>_<i> is i + 1 nops (one byte
	# each; AArch64, e_machine 183: four) before the copy's next
	# instruction: its block counts for the function whose body or copy
	# starts there
	local prog=${2:-${1%.gen.trace}} nop=1
	[ "$(od -An -j18 -N2 -tu2 "$prog" | tr -d ' ')" = 183 ] && nop=4
	nm "$prog" | awk -v nop=$nop '
		function hex(s,  v, i) {
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		$3 ~ /^gt_t[0-9]+_[0-9]+$/ { split($3, p, "_"); t[$3] = hex($1) + (p[3] + 1) * nop }
		$3 ~ /^gt_b[0-9]+_(body|c[0-9]+|v[0-9]+)$/ { at[hex($1)] = $3 }
		END { for (s in t) if (t[s] in at) print s, at[t[s]] }' >"$T/sleds"
	"$DBTPROF" dump --symbols "$1" | awk 'FILENAME != "-" { to[$1 "+0x0"] = $2 "+0x0"; next }
		$2 == "block" && ($6 in to) { $6 = to[$6] }
		$2 == "block" && $6 ~ /^gt_b[0-9]+_(body|c[0-9]+|v[0-9]+)\+0x0$/ {
		sub(/_(body|c[0-9]+|v[0-9]+)\+0x0$/, "_body", $6); n[$6]++ }
		END { for (s in n) print s, n[s] }' "$T/sleds" - | sort
}

# fn_misses TRACE K [FIELD]: L1 misses (or FIELD of block_outcomes:
# dbtprof's model, a recording of the generated program in mem mode) of
# the blocks that start at function gt_bK's copies
fn_misses() {
	"$DBTPROF" dump --symbols "$1" | awk -v k="$2" '$2 == "block" &&
		$6 ~ ("^gt_b" k "_(body|c[0-9]+)\\+0x0$") { print $4 }' | sort -u >"$T/fn.addr"
	"$DBTPROF" gentest --json -o "$T/fn.c" "$1" |
		jq -r ".block_outcomes[] | \"\\(.vaddr) \\(.${3:-l1_misses})\"" |
		awk 'NR == FNR { a[$1] = 1; next } $1 in a { s += $2 } END { print s + 0 }' "$T/fn.addr" -
}

# mem_guest NAME SRC: assembly guest SRC built as $T/NAME and checked
# as exact() does, from a mem-mode profile ($T/NAME.trace)
mem_guest() {
	$CC -O2 -static -masm=intel -o "$T/$1" "$2"
	"$DBTPROF" record -q --cache -o "$T/$1.cache" -- "$T/$1" >/dev/null
	"$DBTPROF" record -q --cache-sample 10 -o "$T/$1.sample" -- "$T/$1" >/dev/null
	MODE=mem exact "$T/$1" "$1"
	# the plugin's cache tallies (record --cache) give the program that
	# the accesses of the mem-mode profile give
	"$DBTPROF" gentest -o "$T/$1.cache.c" "$T/$1.cache" >/dev/null
	eq "$1: record --cache, the program of mem mode" "" \
		"$(cmp "$T/$1.c" "$T/$1.cache.c" 2>&1)"
}

# gen_misses NAME K LO HI WHAT [FIELD]: a mem-mode recording of generated
# program NAME misses LO to HI times (L1, or FIELD of block_outcomes) in
# the blocks of function gt_bK
gen_misses() {
	local got
	"$DBTPROF" record -q -m mem -o "$T/$1.gen.mem" -- "$T/$1" >/dev/null
	got=$(fn_misses "$T/$1.gen.mem" "$2" "${6:-}")
	[ "$got" -ge "$3" ] && [ "$got" -le "$4" ] ||
		fail "$5: the generated program's passes miss $got times, not $3 to $4"
	checks=$((checks + 1))
}

# pads_split PROG NOP: how many copies of PROG have their pads (gt_t<copy>_<i>,
# NOP bytes each) and the instruction after them on more than one page
pads_split() {
	nm "$1" | awk -v nop="$2" '
		function hex(s,  v, i) {
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		$3 ~ /^gt_t[0-9]+_[0-9]+$/ { split($3, p, "_"); a = hex($1)
			if (!(p[2] in lo) || a < lo[p[2]]) lo[p[2]] = a
			if (!(p[2] in hi) || a > hi[p[2]]) hi[p[2]] = a }
		END { for (i in lo) n += int(lo[i] / 4096) != int((hi[i] + nop) / 4096); print n + 0 }'
}

# hot JSON FIELDS: FIELDS (jq, comma-separated) of the blocks that ran
# 1,000 times or more in gentest's JSON summary JSON, space-separated
hot() {
	jq -r "[.block_outcomes[] | select(.executions >= 1000) | $2] | join(\" \")" <<<"$1"
}

# threads124 "CC..." NAME SRC: build SRC as $T/NAME (-O1 -pthread) and
# profile it in blocks mode at 1, 2 and 4 threads ($T/NAME{1,2,4}.trace)
threads124() {
	$1 -O1 -pthread -o "$T/$2" "$3"
	for n in 1 2 4; do
		"$DBTPROF" record -q -m blocks -o "$T/$2$n.trace" -- "$T/$2" $n
	done
}

# block_of PLAN COUNT: K of the function gt_bK planned to run COUNT times
block_of() {
	awk -v c="$2" '$3 == c { sub(/^gt_b/, "", $1); sub(/_body$/, "", $1); print $1; exit }' "$1"
}

# fp_reset FILE PATTERN RESET: "N N" when each of the N instruction lines
# of FILE matching PATTERN follows a line matching RESET
fp_reset() {
	awk -v p="$2" -v r="$3" '$0 ~ p { n++; if (prev ~ r) ok++ } { prev = $0 }
		END { print n + 0, ok + 0 }' "$1"
}

# asm_json NAME: build the x86-64 guest $T/NAME.c (static, Intel syntax),
# record it and print `dbtprof gentest --json` of its profile
asm_json() {
	$CC -O2 -static -masm=intel -o "$T/${1}o" "$T/$1.c"
	"$DBTPROF" record -q -m blocks -o "$T/$1.trace" -- "$T/${1}o"
	"$DBTPROF" gentest --json -o "$T/x.c" "$T/$1.trace"
}

# page_leaves TRACE: "BRANCH FALL", the transitions to another page than
# the last block's start, counted from `dbtprof dump`: after a direct
# jump, call or conditional branch, and after a block that ends in no
# control transfer (an independent count of the profile's totals)
page_leaves() {
	{
		"$DBTPROF" dump --blocks "$1"
		echo "--events"
		"$DBTPROF" dump "$1"
	} | awk '
		$1 == "block" { id = $2; next }
		$1 == "--events" { ev = 1; next }
		!ev && $1 ~ /^0x/ { m[id] = $2; o[id] = $3; next }
		ev && $2 == "block" {
			pg = substr($4, 1, length($4) - 3)
			if (($1 in last) && pg != start[$1]) {
				k = last[$1]
				if (m[k] ~ /^(ret|syscall|int|int3|hlt|ud2)$/ ||
				    ((m[k] == "jmp" || m[k] == "call") && o[k] !~ /^0x/))
					;
				else if (m[k] ~ /^(j|loop)/ || m[k] == "call")
					br++
				else
					fall++
			}
			last[$1] = $3
			start[$1] = pg
		}
		END { print br + 0, fall + 0 }'
}

# crossings TRACE IDS: "EXECUTIONS CROSSINGS ..." of the blocks IDS
# (K|K|...) in a recording of a generated program, in order of K: its
# functions' entries into their copies, and how often the last translated
# block of a copy and the next one (a function's) start on different
# pages
crossings() {
	"$DBTPROF" dump --symbols "$1" | awk -v ids="^gt_b($2)_(body|c[0-9]+|v[0-9]+)[+]" '
		$2 == "block" {
			pg = substr($4, 1, length($4) - 3)
			if (k != "" && pg != ppg && $6 ~ /^gt_b[0-9]+_/) x[k]++
			k = ""
			if ($6 ~ ids) {
				k = $6; sub(/_(body|c[0-9]+|v[0-9]+)[+].*$/, "", k); sub(/^gt_b/, "", k)
				if ($6 ~ /[+]0x0$/) n[k]++
			}
			ppg = pg
		}
		END { for (s in n) print s, n[s], x[s] + 0 }' | sort -n | awk '{ print $2, $3 }' | paste -sd' '
}

# exact GUEST NAME: generate from one profile, compare counts three ways
exact() {
	local g=$1 n=$2
	shift 2
	# (the guest's exit status, passed through, does not matter here)
	"$DBTPROF" record -q -m "${MODE:-blocks}" -o "$T/$n.trace" -- "$g" >/dev/null || true
	"$DBTPROF" gentest "$@" -o "$T/$n.c" "$T/$n.trace" >"$T/$n.sum"
	$CC $CFLAGS_GT "$T/$n.c" -o "$T/$n" 2>"$T/$n.cc"
	eq "$n compiles without warnings" "" "$(cat "$T/$n.cc")"
	# What the program will run (block label, profiled address, count)
	# equals the profile's per-address counts.
	"$T/$n" --counts >"$T/$n.plan"
	eq "$n plan = profile" "$(blockcounts "$T/$n.trace")" \
		"$(awk '{ print $2, $3 }' "$T/$n.plan" | sort)"
	[ -s "$T/$n.plan" ] || fail "$n: empty plan"
	# What it runs, measured under QEMU by dbtprof, equals the plan.
	"$DBTPROF" record -q -m blocks -o "$T/$n.gen.trace" -- "$T/$n" >/dev/null
	eq "$n measured = plan" "$(awk '$3 > 0 { print $1, $3 }' "$T/$n.plan" | sort)" \
		"$(measured "$T/$n.gen.trace")"
	eq "$n runs natively" 0 "$(status "$T/$n")"
	eq "$n runs under qemu" 0 "$(status qemu-x86_64 "$T/$n")"
	if command -v valgrind >/dev/null; then
		eq "$n runs under valgrind" 0 "$(status valgrind --tool=none "$T/$n")"
		eq "$n: no memcheck error" 0 \
			"$(status valgrind -q --error-exitcode=9 "$T/$n" --quiet)"
	fi
}

# exact_a64 GUEST NAME: the same for an AArch64 guest
exact_a64() {
	local g=$1 n=$2
	shift 2
	"$DBTPROF" record -q -m "${MODE:-blocks}" -o "$T/$n.trace" -- "$g" >/dev/null || true
	"$DBTPROF" gentest "$@" -o "$T/$n.c" "$T/$n.trace" >"$T/$n.sum"
	$CC_A64 -static $CFLAGS_GT "$T/$n.c" -o "$T/$n" 2>"$T/$n.cc"
	eq "$n compiles without warnings" "" "$(cat "$T/$n.cc")"
	qemu-aarch64 "$T/$n" --counts >"$T/$n.plan"
	[ -s "$T/$n.plan" ] || fail "$n: empty plan"
	eq "$n plan = profile" "$(blockcounts "$T/$n.trace")" \
		"$(awk '{ print $2, $3 }' "$T/$n.plan" | sort)"
	"$DBTPROF" record -q -m blocks -o "$T/$n.gen.trace" -- "$T/$n" >/dev/null
	eq "$n measured = plan" "$(awk '$3 > 0 { print $1, $3 }' "$T/$n.plan" | sort)" \
		"$(measured "$T/$n.gen.trace")"
	eq "$n runs under qemu-aarch64" 0 "$(status qemu-aarch64 "$T/$n")"
}

exact "$G/x86_64/loop" loop
# one copy per pass, and eight: the same counts
exact "$G/x86_64/loop" loop --unroll 1
exact "$G/x86_64/loop" loop --unroll 8
# --pad: the same program 1,040 bytes further on, its counts as exact
exact "$G/x86_64/loop" loop_pad --unroll 8 --pad 1040
eq "--pad: the text moved" 1040 \
	"$(($(nm "$T/loop_pad" | awk '$3 == "gt_enter" { print "0x" $1 }') - $(nm "$T/loop" | awk '$3 == "gt_enter" { print "0x" $1 }')))"
eq "bad --pad" 2 "$(status "$DBTPROF" gentest -o "$T/x.c" --pad 2M "$T/loop.trace")"
# loop: 3 blocks (1, 9999, 1); 3 + 2 x 9999 + 3 = 20004 instructions; the
# exit syscall becomes getpid, the jnz lands on the next instruction; the
# pass counter's decrement takes the place of the loop block's dec (the
# first block's too: one copy each), so 4 kept.
contains "loop summary" "blocks: 3 distinct, 3 emitted, 0 skipped" "$(cat "$T/loop.sum")"
contains "loop dynamic" "dynamic instructions at T=1: 20,004" "$(cat "$T/loop.sum")"
contains "loop kept" "kept                      4    0.020%" "$(cat "$T/loop.sum")"
contains "loop rewritten" "rewritten            20,000   99.980%" "$(cat "$T/loop.sum")"
grep -q 'mov eax, 39' "$T/loop.c" || fail "loop: syscall not turned into getpid"
# The loop block branches back to its own start: its jnz gives way to the
# pass counter's (one translated block a pass, as in the original; the
# counts are exact above), in one copy even with --unroll 8.
eq "loop: the self-loop's own branch is gone" 0 "$(grep -c 'jnz .Lg16_2' "$T/loop.c" || true)"
contains "loop: closed by the pass counter" '".Lg16_0:\n"
	".Lg16_1:\n"
	"\tsub r13, 1\n"
	"\tjnz gt_b1_body\n"' "$(cat "$T/loop.c")"

exact "$G/x86_64/threads" threads
# rep strings (QEMU enters the repeat block once per iteration: 100 and 8
# times), memory forms, nested loops, syscalls, a thread reusing a vCPU
for g in rep memops nested syscalls threads_reuse; do
	exact "$G/x86_64/$g" "$g"
done
# One of nested's inner-loop branches (500 runs) is missed 8 times by the
# profile's predictor, 1/64 or more: by default it decides on random bytes
# and its function counts in a register's low byte (lea of the whole
# register, so that Valgrind never stores a byte of it; the test of the
# byte), the counts still exact.
eq "nested: one random branch" 1 "$(grep -c 'test byte ptr \[r15 + r12 + [0-9]*\], 63' "$T/nested.c")"
contains "nested: counted in a byte" "lea r12d, [r12 - 1]\n\"
	\"\ttest r12b, r12b\n" "$(cat "$T/nested.c")"
exact "$G/x86_64/nested" nested_det --no-mispredict
# The outer loop's block (`dec r12d; jnz outer`) closes its function: the
# pass counter's decrement and branch take the place of both (the same
# instructions and conditional branches a pass; counts exact above).
contains "nested: the counter in place of dec and jnz" '".Lg112_0:\n"
	".Lg112_1:\n"
	"\tsub rcx, 1\n"
	"\tjnz .Lgt7_top\n"' "$(cat "$T/nested_det.c")"
# Blocks of a group with one copy and the same count model run as one
# sequence: nested's entry and exit block (once each) share gt_b0, and
# the exit block's label is still a block of its own (measured above).
contains "nested sequence" "with the rest of its sequence" "$(cat "$T/nested.c")"
eq "nested: no function of its own in a sequence" 0 "$(grep -c '^gt_b8:' <(sed 's/^\t"//; s/\\n"$//' "$T/nested.c"))"
# The inner loop's blocks run 1,000 times: with --copy-min 256 the block
# before them (gt_b2, 1,000 runs) gets two copies, the second under its
# own label (measured = plan); one copy by default (a copy per 4,096
# executions).  Their sequence (func and the block after the call) ends
# in func's return: one copy even so, its passes counted in where the
# return goes (a table the passes left index: the block's start, or the
# exit after the last).  No pass resets the stack pointer (only the two
# entries set it): a pass moves it 16 bytes at most (a call; the
# return's push and pop), so a call runs at most 255 passes (the
# table's) and gt_b0's 1,024 (16 KiB, DBTP_GT_SP_CALL, over 16 bytes),
# gt_b2's 512 (two copies a pass: 1,024 runs).
eq "nested: no copies below --copy-min" 0 "$(grep -c 'gt_b2_c1:' "$T/nested.c")"
exact "$G/x86_64/nested" nested_c256 --copy-min 256 --no-chains
contains "nested: copies with --copy-min 256" "gt_b2_c1:" "$(cat "$T/nested_c256.c")"
eq "nested: a return counts the passes" 0 "$(grep -c 'gt_b9_c1:' "$T/nested_c256.c")"
jumps=$(awk '$2 == "GT_JUMPS" { print $3 }' "$T/nested_c256.c")
contains "nested: the return's table" '\tlea r12, [r12 - 1]\n"
	"\tpush qword ptr [r15 + r12 * 8 + '"$jumps"']\n"
	"\t.byte 0xc3\t# ret \n"
	".Lg144_2:\n"
	".Lgt3_exit:\n"' "$(cat "$T/nested_c256.c")"
contains "nested: that function's entry sets r12 alone" \
	'jmp qword ptr [rip + gt_enter_r12_p]' "$(cat "$T/nested_c256.c")"
eq "nested: no pass resets the stack (only the shared entries)" \
	"$(grep '"gt_enter[a-z0-9_]*:' "$T/nested_c256.c" | grep -vc '_p:')" \
	"$(grep -c 'lea rsp, \[r15 + 327680\]' "$T/nested_c256.c")"
eq "nested: passes a call" "gt_b0 1024 gt_b2 1024 gt_b3 255" \
	"$(awk -F'[{}, ]+' '/^\t\{gt_b[023],/ { printf "%s%s %s", n++ ? " " : "", $2, $(NF-1) }' "$T/nested_c256.c")"
eq "bad copy-min" 2 "$(status "$DBTPROF" gentest -o "$T/x.c" --copy-min 0 "$T/nested.trace")"
# The inner loop's other blocks (4, 5, 6; 500 passes) end in a direct
# branch and leave rcx alone: one copy, the last member's dec and jne
# replaced by rcx's, so a pass runs their instructions and translated
# blocks exactly: after the last member's label only the exit runs, once
# a call.
contains "nested: closed by rcx" '".Lg96_0:\n"
	".Lg96_1:\n"
	"\tsub rcx, 1\n"
	"\tjnz .Lgt4_top\n"' "$(cat "$T/nested_det.c")"
n=$("$DBTPROF" dump --symbols "$T/nested_det.gen.trace" | awk '$2 == "block" && $6 == "gt_b4+0x0" { c++ }
	$2 == "block" && $6 ~ /^gt_b6_body\+0x[0-9a-f]+$/ && $6 != "gt_b6_body+0x0" { x++ }
	END { print c + 0, x + 0 }')
eq "nested: no block for the pass counter" "2 2" "$n"
grep -q 'rep movsb' "$T/rep.c" || fail "rep: no rep movsb kept"
# blocks in address order: entry, the rep movsb block 100 times (once per
# byte), the block after it, rep stosq 8 times, exit
eq "rep plan" "1 100 1 8 1" "$(awk '{ print $3 }' "$T/rep.plan" | tr '\n' ' ' | sed 's/ $//')"
# threads: main, thread 1 (40000 iterations), thread 2 (50000): three
# groups of one; the workers created at main's 10001st and 30002nd of
# 60006 block executions.
j=$("$DBTPROF" gentest --json -o "$T/threads.c" "$T/threads.trace")
eq "threads groups" "3" "$(jq '.groups | length' <<<"$j")"
eq "threads sizes" "0 1 0 1 0 1" "$(jq -r '[.groups[] | .alpha, .beta] | join(" ")' <<<"$j")"
eq "threads parents" "-1 0 0" "$(jq -r '[.groups[].parent] | join(" ")' <<<"$j")"
# (the workers' numbers follow which ran first: compare the set)
eq "threads created at (x 1000)" "167 500" "$(jq -r '[.groups[1:][] | .create_at * 1000 | round] | sort | join(" ")' <<<"$j")"
# (one profile: points that do not move with T)
eq "threads points' slopes" "0 0 0 0" "$(jq -r '[.groups[1:][] | .create_t, .join_t] | join(" ")' <<<"$j")"
# The jump cache (QEMU's, each thread's): each loop of main and the
# workers missed it once, at its first execution.
eq "threads: loops cold once" "1 1 1 1 1" \
	"$(jq -r '[.block_outcomes[] | select(.executions > 1000) | .cold] | join(" ")' <<<"$j")"
out=$("$T/threads")
contains "threads run" "3 threads, 150009 block executions, scale 1" "$out"
# The driver's set-up fills and copies its buffers without memset and
# memcpy: under a CPU with ERMS (QEMU's max, the default of a plain
# qemu-x86_64) the C library's rep stosb runs a translated block a byte,
# 4.5 M of the 4.9 M blocks this program's three threads ran before
# their first block when it did.
"$DBTPROF" record -q --cpu max -m count -o "$T/setup.trace" -- \
	"$T/threads" --quiet --scale 1000000000000 >/dev/null
rep=$("$DBTPROF" dump --blocks "$T/setup.trace" |
	awk '/^block/ { b = $2 } /^  0x[0-9a-f]+  rep (stos|movs)/ { print b }' | sort -u |
	awk 'NR == FNR { r[$1] = 1; next } $1 == "count" && ($2 in r) { s += $6 } END { print s + 0 }' - \
		<("$DBTPROF" dump "$T/setup.trace"))
eq "threads' set-up: rep string iterations" "fewer than 10,000" \
	"$([ "$rep" -lt 10000 ] && echo "fewer than 10,000" || echo "$rep")"

# --scale 2 halves every thread's count of every block (rounded down):
# the block main and thread 1 both run once is skipped.
"$T/threads" --counts --scale 2 >"$T/half"
eq "scale 2" "0x401005 4999 0x401024 0 0x40102e 9999 0x40104d 0 0x401069 19999 0x40107b 24999" \
	"$(awk '$2 ~ /^0x4010(24|69|05|2e|4d|7b)$/ { printf "%s%s %s", s, $2, $3; s = " " }' "$T/half")"
"$T/loop" --counts --scale 3 >"$T/third"
eq "scale 3" "$(awk '{ print $1, int($3 / 3) }' "$T/loop.plan")" \
	"$(awk '{ print $1, $3 }' "$T/third")"
# --cap N: each thread runs each entry at most N times after the scale
# (the loop guest: one thread, each block in one entry); what the capped
# threads program runs, measured under QEMU, equals its plan.
eq "cap 7" "$(awk '{ print $1, ($3 < 7 ? $3 : 7) }' "$T/loop.plan")" \
	"$("$T/loop" --counts --cap 7 | awk '{ print $1, $3 }')"
eq "cap 0" "0" "$("$T/threads" --counts --cap 0 | awk '{ s += $3 } END { print s }')"
"$T/threads" --counts --scale 2 --cap 5 >"$T/capped.plan"
"$DBTPROF" record -q -m blocks -o "$T/capped.gen.trace" -- "$T/threads" --scale 2 --cap 5 >/dev/null
eq "cap 5 measured = plan" "$(awk '$3 > 0 { print $1, $3 }' "$T/capped.plan" | sort)" \
	"$(measured "$T/capped.gen.trace" "$T/threads")"
eq "bad cap" 2 "$(status "$T/threads" --cap -1)"
# --only: only the entries that run a block picked, each as often as
# without it (the loop guest: a block an entry); what the threads program
# runs with the lower half of its blocks picked, measured under QEMU,
# equals its plan.
k=$(sort -k3,3n "$T/loop.plan" | tail -1 | sed 's/^gt_b\([0-9]*\)_body.*/\1/')
eq "only K" "$(awk -v b="gt_b${k}_body" '{ print $1, ($1 == b ? $3 : 0) }' "$T/loop.plan")" \
	"$("$T/loop" --counts --only "$k" | awk '{ print $1, $3 }')"
eq "only all" "$(cat "$T/loop.plan")" "$("$T/loop" --counts --only 0-4294967295)"
k2=$(sort -k3,3n "$T/loop.plan" | tail -2 | head -1 | sed 's/^gt_b\([0-9]*\)_body.*/\1/')
"$T/loop" --counts --only "$k2" --only "$k" >"$T/only2.plan"
eq "only twice: both" "$(printf 'gt_b%s_body\n' "$k" "$k2" | sort | paste -sd' ')" "$(awk -v a="gt_b${k}_body" -v b="gt_b${k2}_body" \
	'$3 > 0 && ($1 == a || $1 == b) { print $1 }' "$T/only2.plan" | sort | paste -sd' ')"
eq "only twice = one list" "$("$T/loop" --counts --only "$k2,$k")" "$(cat "$T/only2.plan")"
mid=$(awk '$3 > 0 { sub(/^gt_b/, "", $1); sub(/_body$/, "", $1); print $1 }' "$T/threads.plan" |
	sort -n | awk '{ a[NR] = $1 } END { print a[int(NR / 2)] }')
"$T/threads" --counts --only "0-$mid,$((mid + 100000))" >"$T/only.plan"
# (every block picked runs, and whatever runs, runs as often as without
# --only: a sequence's members run together, so some past the half may)
eq "only picks" "" "$(awk -v m="$mid" 'NR == FNR { if ($3 > 0) on[$1] = 1; next }
	{ k = $1; sub(/^gt_b/, "", k); sub(/_body$/, "", k) }
	$3 > 0 && k + 0 <= m && !($1 in on) { print $1 }' "$T/only.plan" "$T/threads.plan")"
eq "only keeps counts" "" "$(awk '$3 > 0' "$T/only.plan" | sort | comm -23 - <(sort "$T/threads.plan"))"
eq "only leaves some out" 1 "$(awk 'NR == FNR { if ($3 > 0) n++; next } $3 > 0 { o++ }
	END { print (o > 0 && o < n) }' "$T/threads.plan" "$T/only.plan")"
"$DBTPROF" record -q -m blocks -o "$T/only.gen.trace" -- "$T/threads" --only "0-$mid" >/dev/null
eq "only measured = plan" "$(awk '$3 > 0 { print $1, $3 }' "$T/only.plan" | sort)" \
	"$(measured "$T/only.gen.trace" "$T/threads")"
for bad in x 5- 1, ,1 1-x ""; do
	eq "bad only '$bad'" 2 "$(status "$T/threads" --only "$bad")"
done
eq "only without a list" 2 "$(status "$T/threads" --only)"
eq "calibrate" 0 "$(status "$T/threads" --calibrate 0.01 --quiet)"
eq "bad scale" 2 "$(status "$T/threads" --scale 0.5)"

# A program whose thread count is a parameter: main creates N workers,
# each runs 200000/N + 1000 iterations of one loop.  Profiled at 1, 2, 4:
# the workers' group has size 1*T + 0, its loop block (entered once less
# than it iterates, per worker) 999*m + 200000; main's group is 0*T + 1.
cat >"$T/w.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
static volatile unsigned long sink;
static void *work(void *a)
{
	unsigned long n = (unsigned long)a;
	for (unsigned long i = 0; i < n; i++)
		sink += i;
	return 0;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	for (int i = 0; i < 1000; i++)
		sink += i;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], 0, work, (void *)(200000UL / n + 1000));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], 0);
	return 0;
}
EOF
threads124 "$CC" w "$T/w.c"
j=$("$DBTPROF" gentest --json -o "$T/wt.c" --threads-arg 1,2,4 "$T/w1.trace" "$T/w2.trace" "$T/w4.trace")
eq "w groups" 2 "$(jq '.groups | length' <<<"$j")"
eq "w main" "0 1 1 1 1" "$(jq -r '.groups[0] | [.alpha, .beta, .sizes[]] | join(" ")' <<<"$j")"
eq "w workers" "1 0 1 2 4" "$(jq -r '.groups[1] | [.alpha, .beta, .sizes[]] | join(" ")' <<<"$j")"
eq "w loop" "999 200000" "$(jq -r '.groups[1].blocks[] | select(.theta == 999) | "\(.theta) \(.delta)"' <<<"$j")"
eq "w same with TRACE:T" "$j" "$("$DBTPROF" gentest --json -o "$T/wt.c" \
	"$T/w1.trace:1" "$T/w2.trace:2" "$T/w4.trace:4")"
# the profiles read one at a time (-j 1) or three at once (-j 3, each
# into a model of its own, merged in order): the same program and summary
for jb in 1 3; do
	"$DBTPROF" gentest -j $jb -o "$T/wj$jb.c" "$T/w1.trace:1" "$T/w2.trace:2" \
		"$T/w4.trace:4" | sed "s|$T/wj$jb.c||" >"$T/wj$jb.sum"
done
eq "w: -j 1 and -j 3, the same program and summary" "" \
	"$(cmp "$T/wj1.c" "$T/wj3.c" 2>&1; cmp "$T/wj1.sum" "$T/wj3.sum" 2>&1)"
eq "w: -j 3, the program of the default" "" "$(cmp "$T/wj3.c" "$T/wt.c" 2>&1)"
for bad in 0 x 1025; do
	eq "gentest --jobs $bad: usage error" 2 "$(status "$DBTPROF" gentest -j $bad -o "$T/x.c" "$T/w1.trace")"
done
$CC $CFLAGS_GT "$T/wt.c" -o "$T/wt"
out=$("$T/wt" --threads 8)
contains "w 8 threads" "9 threads" "$out"
# 8 workers: the loop block 999 x 8 + 200000 = 207992 times in total.
addr=$(jq -r '.groups[1].blocks[] | select(.theta == 999) | .vaddr' <<<"$j")
eq "w loop at 8" 207992 "$("$T/wt" --counts --threads 8 | awk -v a="$addr" '$2 == a { print $3 }')"
eq "w under qemu" 0 "$(status qemu-x86_64 "$T/wt" --threads 8)"
eq "w workers at once" false "$(jq '.groups[1].serial' <<<"$j")"

# Workers one after another: main creates one, joins it, creates the
# next (its own loop split evenly around them).  The workers' group is
# serial, its joins where main's pthread_join returned; the program
# generated for 8 workers runs them one after another too: its own
# recording, modelled, has them serial (w's program at 4: at once).
cat >"$T/ser.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
static volatile unsigned long sink;
static void *work(void *a)
{
	for (unsigned long i = 0; i < (unsigned long)a; i++)
		sink += i;
	return 0;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	for (int t = 0; t <= n; t++) {
		for (unsigned long i = 0; i < 400000UL / (n + 1); i++)
			sink += i;
		if (t < n) {
			pthread_t p;
			pthread_create(&p, 0, work, (void *)50000UL);
			pthread_join(p, 0);
		}
	}
	return 0;
}
EOF
threads124 "$CC" ser "$T/ser.c"
j=$("$DBTPROF" gentest --json -o "$T/sert.c" "$T/ser1.trace:1" "$T/ser2.trace:2" "$T/ser4.trace:4")
eq "ser workers" "1 0 1 2 4 true" "$(jq -r '.groups[1] | [.alpha, .beta, .sizes[], .serial] | join(" ")' <<<"$j")"
# The first creation comes earlier as T grows (at 1/(T+1) of main's
# loop), the last join later (T/(T+1)): the points' fits in T say so.
eq "ser points move with T" "true true" "$(jq -r '.groups[1] | "\(.create_t < 0) \(.join_t > 0)"' <<<"$j")"
sum=$("$DBTPROF" gentest -o "$T/sert.c" "$T/ser1.trace:1" "$T/ser2.trace:2" "$T/ser4.trace:4")
contains "ser summary" "created by group 0 from 0." "$sum"
eq "ser summary: points in T" 1 \
	"$(grep -cE 'created by group 0 from 0\.[0-9]{3}-[0-9.e-]+\*T, joined one after another by 0\.[0-9]{3}\+[0-9.e-]+\*T' <<<"$sum")"
$CC $CFLAGS_GT "$T/sert.c" -o "$T/sert"
"$DBTPROF" record -q -m blocks -o "$T/sert.trace" -- "$T/sert" --threads 8 --quiet
eq "ser generated: 8 workers one after another" "8 true" \
	"$("$DBTPROF" gentest --json -o "$T/serr.c" "$T/sert.trace" | jq -r '.groups[1] | "\(.sizes[0]) \(.serial)"')"
"$DBTPROF" record -q -m blocks -o "$T/wtr.trace" -- "$T/wt" --threads 4 --quiet
eq "w generated: 4 workers at once" "4 false" \
	"$("$DBTPROF" gentest --json -o "$T/wtr.c" "$T/wtr.trace" | jq -r '.groups[1] | "\(.sizes[0]) \(.serial)"')"

# A program that reads a 10,500-byte file 1,000 bytes at a time: 12
# reads (the last at the end of the file) bring 10,500 bytes, so the
# generated program reads /dev/zero 12 times, 875 bytes each.
cat >"$T/rd.c" <<'EOF'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char b[1000];
	int fd = open(argc > 1 ? argv[1] : "", O_RDONLY);
	while (read(fd, b, sizeof(b)) > 0)
		;
	return 0;
}
EOF
head -c 10500 /dev/zero >"$T/rd.in"
# TRACE's reads: how many, their bytes, the distinct results
reads() {
	"$DBTPROF" dump "$1" | awk '$2 == "sysret" && $4 == "read" { print $6 }' |
		awk '{ n++; b += $1 } END { print n + 0, b + 0 }'
	"$DBTPROF" dump "$1" | awk '$2 == "sysret" && $4 == "read" { print $6 }' | sort -nu | tr '\n' ' '
}
rd_check() { # CC RUNNER NAME
	$1 -O1 -static -o "$T/$3" "$T/rd.c"
	"$DBTPROF" record -q -m blocks -o "$T/$3.trace" -- "$T/$3" "$T/rd.in"
	eq "$3: the profile's reads" "12 10500
0 500 1000 " "$(reads "$T/$3.trace")"
	"$DBTPROF" gentest -o "$T/$3t.c" "$T/$3.trace" >"$T/$3t.sum"
	contains "$3: summary" "bytes read from /dev/zero at T=1: 10,500" "$(cat "$T/$3t.sum")"
	$1 -static $CFLAGS_GT "$T/$3t.c" -o "$T/$3t"
	"$DBTPROF" record -q -m blocks -o "$T/$3t.trace" -- "$T/$3t" --quiet
	eq "$3: the generated program's reads" "12 10500
875 " "$(reads "$T/$3t.trace")"
	eq "$3: runs" 0 "$(status $2 "$T/$3t" --quiet)"
}
rd_check "$CC" "" rd

# The dynamic loader's blocks run only when the generated program is
# linked statically: linked dynamically, it runs a loader of its own.
# Static: the plan is the profile.  Dynamic: exactly the loader's blocks
# are planned 0 times, and what runs is the plan.
"$DBTPROF" gentest -o "$T/wl.c" "$T/w1.trace" >"$T/wl.sum"
nld=$(awk '/^dynamic loader:/ { print $3 }' "$T/wl.sum")
[ "${nld:-0}" -gt 100 ] || fail "w: the loader's blocks not found (${nld:-none})"
$CC $CFLAGS_GT "$T/wl.c" -o "$T/wl"
$CC -static $CFLAGS_GT "$T/wl.c" -o "$T/wls" 2>/dev/null
"$T/wl" --counts >"$T/wl.plan"
"$T/wls" --counts >"$T/wls.plan"
eq "w static plan = profile" "$(blockcounts "$T/w1.trace")" \
	"$(awk '{ print $2, $3 }' "$T/wls.plan" | sort)"
eq "w dynamic: the loader's blocks planned 0 times" "$nld 0" \
	"$(paste "$T/wl.plan" "$T/wls.plan" | awk '$3 != $6 { n++; if ($3) bad++ } END { print n + 0, bad + 0 }')"
"$DBTPROF" record -q -m blocks -o "$T/wl.gen.trace" -- "$T/wl" >/dev/null
eq "w dynamic measured = plan" "$(awk '$3 > 0 { print $1, $3 }' "$T/wl.plan" | sort)" \
	"$(measured "$T/wl.gen.trace")"

# The naive baseline: K random blocks, one thread.
"$DBTPROF" gentest --naive --blocks 5 --seed 7 -o "$T/naive.c" "$T/threads.trace" >"$T/naive.sum"
contains "naive blocks" "5 emitted" "$(cat "$T/naive.sum")"
$CC $CFLAGS_GT "$T/naive.c" -o "$T/naive"
contains "naive runs" "1 threads" "$("$T/naive")"

# Bad input: one-line errors, non-zero exits.
eq "no -o" 2 "$(status "$DBTPROF" gentest "$T/loop.trace")"
eq "no trace" 2 "$(status "$DBTPROF" gentest -o "$T/x.c")"
eq "two traces, no T" 2 "$(status "$DBTPROF" gentest -o "$T/x.c" "$T/w1.trace" "$T/w2.trace")"
eq "bad unroll" 2 "$(status "$DBTPROF" gentest -o "$T/x.c" --unroll 3 "$T/loop.trace")"
eq "bad threads-arg" 2 "$(status "$DBTPROF" gentest -o "$T/x.c" --threads-arg 1,x "$T/w1.trace" "$T/w2.trace")"
"$DBTPROF" record -q -m count -o "$T/c.trace" -- "$G/x86_64/loop"
err=$("$DBTPROF" gentest -o "$T/x.c" "$T/c.trace" 2>&1 || true)
eq "count mode" "dbtprof: $T/c.trace: a count-mode trace has no per-thread block streams; record it with --mode blocks" "$err"
# (among others: checked when opened, before any is read)
err=$("$DBTPROF" gentest -o "$T/x.c" "$T/w1.trace:1" "$T/c.trace:2" 2>&1 || true)
eq "count mode among blocks-mode profiles" "dbtprof: $T/c.trace: a count-mode trace has no per-thread block streams; record it with --mode blocks" "$err"
# profiles of different architectures: one line, exit 1
"$DBTPROF" record -q -m blocks -o "$T/a.trace" -- "$G/aarch64/loop"
err=$("$DBTPROF" gentest -o "$T/x.c" --threads-arg 1,2 "$T/loop.trace" "$T/a.trace" 2>&1 || true)
eq "mixed architectures" 1 "$(printf '%s\n' "$err" | wc -l)"
contains "mixed architectures" "aarch64" "$err"
eq "mixed architectures status" 1 "$(status "$DBTPROF" gentest -o "$T/x.c" --threads-arg 1,2 "$T/loop.trace" "$T/a.trace")"
eq "mixed architectures, named before any is read" \
	"dbtprof: $T/a.trace: an aarch64 trace among x86_64 ones" "$err"
eq "missing file" 1 "$(status "$DBTPROF" gentest -o "$T/x.c" "$T/nope.trace")"

# The profiles' branches and their mispredictions by the predictor of
# cycles --branch-predictor.  The loop guests' one conditional branch runs
# 10,000 times, mispredicted 16 times (tests/e2e/cycles.sh says why).
br='.profiles[0].branches | [.conditional, .conditional_mispredicted, .indirect, .return] | join(" ")'
eq "loop branches" "10000 16 0 0" "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/loop.trace" | jq -r "$br")"
eq "aarch64 loop branches" "10000 16 0 0" "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a.trace" | jq -r "$br")"
contains "loop branches, text" "conditional 16 of 10,000, indirect 0 of 0, return 0 of 0; 0.80 per 1000 instructions" \
	"$("$DBTPROF" gentest -o "$T/x.c" "$T/loop.trace")"
# --branch-predictor tage: the loop's branch mispredicted twice (the
# first outcome and the exit, test-cycles says why); in the summary
eq "loop branches, tage" "10000 2 0 0 tage" "$("$DBTPROF" gentest --json --branch-predictor tage -o "$T/x.c" "$T/loop.trace" |
	jq -r "($br) + \" \" + .branch_predictor")"
eq "aarch64 loop branches, tage" "10000 2 0 0" "$("$DBTPROF" gentest --json --branch-predictor tage -o "$T/x.c" "$T/a.trace" | jq -r "$br")"
contains "loop branches, tage, text" "(dbtprof's predictor, tage): conditional 2 of 10,000" \
	"$("$DBTPROF" gentest --branch-predictor tage -o "$T/x.c" "$T/loop.trace")"
eq "loop branches, gshare named" "gshare" "$("$DBTPROF" gentest --json --branch-predictor gshare -o "$T/x.c" "$T/loop.trace" | jq -r .branch_predictor)"
eq "bad predictor" 2 "$(status "$DBTPROF" gentest --branch-predictor tag -o "$T/x.c" "$T/loop.trace")"
err=$("$DBTPROF" gentest --branch-predictor tag -o "$T/x.c" "$T/loop.trace" 2>&1 | head -1 || true)
eq "bad predictor message" "dbtprof gentest: --branch-predictor wants gshare or tage, not 'tag'" "$err"
# qsort of pseudo-random numbers through a comparison function (calls,
# returns, PLT jumps): as cycles counts them, and the comparisons'
# branches are mispredicted often.
cat >"$T/qs.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}
int main(void)
{
	static int v[5000];
	unsigned x = 1;
	for (int i = 0; i < 5000; i++)
		v[i] = (int)((x = x * 1103515245 + 12345) >> 16);
	qsort(v, 5000, sizeof(v[0]), cmp);
	printf("%d\n", v[2500]);
	return 0;
}
EOF
$CC -O1 -static -o "$T/qs" "$T/qs.c"
"$DBTPROF" record -q -m mem -o "$T/qs.trace" -- "$T/qs" >/dev/null
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/qs.trace")
eq "qsort branches = cycles'" \
	"$("$DBTPROF" cycles --json --mcpu skylake --branch-predictor "$T/qs.trace" | jq -c .branches)" \
	"$(jq -c '.profiles[0].branches' <<<"$j")"
eq "qsort branches = cycles', tage" \
	"$("$DBTPROF" cycles --json --mcpu skylake --branch-predictor=tage "$T/qs.trace" | jq -c .branches)" \
	"$("$DBTPROF" gentest --json --branch-predictor tage -o "$T/x.c" "$T/qs.trace" | jq -c '.profiles[0].branches')"
jq -e '.profiles[0].branches | .conditional_mispredicted * 20 > .conditional and .return > 50000 and .indirect > 50000' >/dev/null <<<"$j" ||
	fail "qsort: expected calls, returns and > 5% mispredicted conditional branches"
checks=$((checks + 1))
eq "qsort instructions" "$("$DBTPROF" stats --json "$T/qs.trace" | jq .instructions)" "$(jq .profiles[0].instructions <<<"$j")"

# --mispredict (the default, so $j above has it): the loop's branch (16
# misses in 10,000) stays predictable; qsort's comparisons go either way
# at random, with the blocks' counts as exact as without, and
# (cachegrind's predictor, where valgrind is) as many mispredictions as
# the profile's give or take a third.
eq "naive: no random blocks" 0 "$("$DBTPROF" gentest --json --naive -o "$T/x.c" "$T/qs.trace" | jq .mispredict_blocks)"
for o in "--blocks 5" "--seed 7"; do
	eq "gentest $o without --naive: usage error" 2 "$(status "$DBTPROF" gentest $o -o "$T/x.c" "$T/qs.trace")"
done
eq "--no-mispredict" 0 "$("$DBTPROF" gentest --json --no-mispredict -o "$T/x.c" "$T/qs.trace" | jq .mispredict_blocks)"
eq "loop --mispredict" 0 "$("$DBTPROF" gentest --json --mispredict -o "$T/x.c" "$T/loop.trace" | jq .mispredict_blocks)"
exact "$T/qs" qs_rnd --mispredict
eq "qsort random blocks" "$(jq .mispredict_blocks <<<"$j")" "$(jq '[.block_outcomes[] | select(.random)] | length' <<<"$j")"
jq -e '(.block_outcomes | max_by(.mispredicted) | .random) and ([.block_outcomes[] | select(.random and (.mispredicted * 64 < .executions or .executions < 256))] | length == 0)' >/dev/null <<<"$j" ||
	fail "qsort --mispredict: the most mispredicted block is not random, or a random one ran < 256 times or < 1/64 mispredicted"
checks=$((checks + 1))
contains "qsort random tests" "byte ptr [r15 + r" "$(cat "$T/qs_rnd.c")"
# A random test takes the place of a kept cmp or test of registers, or
# of arithmetic on a register (nested.S's `dec`), right before the branch
# (one instruction rewritten, no helper), else it is a helper of its own
# (AArch64: the load stays a helper): block by block
# against the program without them, each random block "folded" or
# "helper", every other block the same (else "off"). Where the program
# without them has one copy of a function that has several with them,
# the pass counter's decrement takes a compare's place in it
# (cut_compare()): a kept instruction fewer there.
rnd_kinds() { # TRACE HELPERS
	"$DBTPROF" gentest --json -o "$T/x.c" "$1" >"$T/rk1.json"
	"$DBTPROF" gentest --json --no-mispredict -o "$T/x.c" "$1" >"$T/rk2.json"
	jq -n -r --argjson h "$2" --slurpfile a "$T/rk1.json" --slurpfile d "$T/rk2.json" '
		($d[0].block_outcomes | map({key: (.id | tostring), value: .}) | from_entries) as $o |
		[$a[0].block_outcomes[] as $b | $o[$b.id | tostring] as $o |
		 ($o.kept == $b.kept - 1 and $o.rewritten == $b.rewritten + 1) as $cut |
		 if $b.random | not then (if ($b.kept == $o.kept or $cut) and $b.helpers == $o.helpers then "same" else "off" end)
		 elif (($b.kept == $o.kept - 1 and $b.rewritten == $o.rewritten + 1) or ($b.kept == $o.kept and $b.rewritten == $o.rewritten)) and $b.helpers == $o.helpers + $h - 1 then "folded"
		 elif $b.kept == $o.kept and $b.helpers == $o.helpers + $h then "helper" else "off" end] |
		map(select(. != "same")) | group_by(.) | map("\(.[0]) \(length)") | join(", ")'
}
r=$(rnd_kinds "$T/qs.trace" 1)
eq "qsort random tests in place of compares ($r)" folded "${r% *}"
eq "nested: a random test in place of dec" "folded 1" "$(rnd_kinds "$T/nested.trace" 1)"
if command -v valgrind >/dev/null; then
	"$DBTPROF" gentest --no-mispredict -o "$T/qs_det.c" "$T/qs.trace" >/dev/null
	$CC $CFLAGS_GT "$T/qs_det.c" -o "$T/qs_det"
	bcm() {
		valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes \
			--cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			awk '/Mispredicts:/ { gsub(/[(,]/, "", $5); print $5 }'
	}
	want=$(jq '.profiles[0].branches.conditional_mispredicted' <<<"$j")
	det=$(bcm "$T/qs_det" --quiet)
	rnd=$(bcm "$T/qs_rnd" --quiet)
	[ $((rnd - det)) -gt $((want * 2 / 3)) ] && [ $((rnd - det)) -lt $((want * 4 / 3)) ] ||
		fail "qsort --mispredict: cachegrind counts $rnd - $det more mispredictions, the profile $want"
	checks=$((checks + 1))
fi
# A switch on pseudo-random numbers through a jump table (eight targets)
# and a call through one of two function pointers at random: both go
# through tables of targets indexed by a random byte, with one pad fewer
# than their targets (four and one), the counts as exact as without;
# cachegrind's last-target predictor (where valgrind is) misses them about
# as often as the original's, and so does the profile's predictor over a
# recording of the generated program (the original's targets are random:
# their path teaches it nothing).
cat >"$T/sw.c" <<'EOF2'
#include <stdio.h>
static unsigned f(unsigned a) { return a + 1; }
static unsigned g(unsigned a) { return a ^ 3; }
static unsigned (*volatile fp[2])(unsigned) = {f, g};
int main(void)
{
	unsigned x = 1, acc = 0;
	for (int i = 0; i < 20000; i++) {
		x = x * 1103515245 + 12345;
		switch ((x >> 16) & 7) {
		case 0: acc += 3; break;
		case 1: acc ^= x; break;
		case 2: acc = acc * 7 + 1; break;
		case 3: acc -= x >> 3; break;
		case 4: acc = (acc << 3) | (acc >> 29); break;
		case 5: acc += x & 0xff; break;
		case 6: acc = ~acc; break;
		default: acc ^= acc >> 5; break;
		}
		acc = fp[(x >> 24) & 1](acc);
	}
	printf("%u\n", acc);
	return 0;
}
EOF2
$CC -O2 -static -o "$T/sw" "$T/sw.c"
exact "$T/sw" sw_rnd
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/sw_rnd.trace")
jq -e '.mispredict_indirect_blocks >= 2' >/dev/null <<<"$j" || fail "switch: expected two or more random indirect branches"
checks=$((checks + 1))
eq "switch: pads per copy" "1 4" "$(sed 's/^\t"//; s/\\n"$//' "$T/sw_rnd.c" |
	awk -F'[_:]' '/^gt_t[0-9]+_[0-9]+:$/ { n[$2]++ } END { for (i in n) print n[i] }' | sort -un | paste -sd' ')"
# (each copy's pads and the instruction they lead to on one page, or QEMU
# would start a second block at the page a pad run crosses)
eq "switch: pads on one page" 0 "$(pads_split "$T/sw_rnd" 1)"
# Each copy's table of random targets, 64 entries indexed by a random
# index (0 to 63) of its own from the index area, four tables to 2 KiB:
# a function's tables 512 bytes apart, a program's few lines of L1.
jt_offsets() {
	awk -v j="$(awk '$2 == "GT_JUMPS" { print $3 }' "$1")" '
		/(jmp|call) qword ptr \[r15 \+ r[a-z0-9]+ \* 8 \+ [0-9]+\]/ {
			o = $0; sub(/.*\* 8 \+ /, "", o); sub(/\].*/, "", o)
			print (o - j) % 2048, (o - j) % 512
		}' "$1" | sort -u | paste -sd' '
}
eq "switch: random tables four to 2 KiB" "0 0 1024 0 1536 0 512 0" "$(jt_offsets "$T/sw_rnd.c")"
ridx=$(awk '$2 == "GT_RIDX" { print $3 }' "$T/sw_rnd.c")
eq "switch: random indices from the index area" yes "$(awk -v r="$ridx" '
	/movzx e[a-z0-9]+, byte ptr \[r15 \+ r[a-z0-9]+ \+ [0-9]+\]/ {
		o = $0; sub(/.*\+ /, "", o); sub(/\].*/, "", o)
		if (o >= r - 1 && o < r + 131072) n++
	}
	END { print (n >= 2 ? "yes" : "no: " n + 0) }' "$T/sw_rnd.c")"
# 400,000 iterations in 100 slices (the program built so): a call of a
# random function runs more than 256 passes (one call a slice), over
# several windows of random bytes, the counts still exact.
sed 's/i < 20000/i < 400000/' "$T/sw.c" >"$T/sw4.c"
$CC -O2 -static -o "$T/sw4" "$T/sw4.c"
CFLAGS_GT="$CFLAGS_GT -DGT_SLICES=100" exact "$T/sw4" sw4_rnd
contains "switch: 256 passes more" "sub qword ptr [r15 + 144], 1" "$(cat "$T/sw4_rnd.c")"
# Without --mispredict no random target, and the functions that end in
# the jump and the call count their passes in where they go (a table the
# passes left index), with the counts exact.
exact "$T/sw" sw_det --no-mispredict
eq "switch: no table without --mispredict" 0 \
	"$("$DBTPROF" gentest --json --no-mispredict -o "$T/x.c" "$T/sw_rnd.trace" | jq .mispredict_indirect_blocks)"
contains "switch: a jump counts the passes" "jmp qword ptr [r15 + r" "$(cat "$T/sw_det.c")"
contains "switch: a call counts the passes" "call qword ptr [r15 + r" "$(cat "$T/sw_det.c")"
ind() { "$DBTPROF" gentest --json -o "$T/x.c" "$1" | jq '.profiles[0].branches.indirect_mispredicted'; }
want=$(jq '.profiles[0].branches.indirect_mispredicted' <<<"$j")
got=$(($(ind "$T/sw_rnd.gen.trace") - $(ind "$T/sw_det.gen.trace")))
[ $((got * 3)) -gt $((want * 2)) ] && [ $((got * 3)) -lt $((want * 4)) ] ||
	fail "switch: the predictor misses $got more indirect jumps in the generated program, the profile $want"
checks=$((checks + 1))
if command -v valgrind >/dev/null; then
	bim() {
		valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes \
			--cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			awk '/Mispredicts:/ { gsub(/,/, "", $8); print $8 }'
	}
	want=$(bim "$T/sw")
	got=$(($(bim "$T/sw_rnd" --quiet) - $(bim "$T/sw_det" --quiet)))
	[ $((got * 3)) -gt $((want * 2)) ] && [ $((got * 3)) -lt $((want * 4)) ] ||
		fail "switch: cachegrind counts $got more indirect mispredictions, $want for the original"
	checks=$((checks + 1))
fi
# An indirect jump's table with no helper: where the register it goes
# through (its own, or its memory operand's index) was last written, all
# of it, by a move or arithmetic that nothing read since, that
# instruction loads the random byte (a, c); where one read it since (b),
# or wrote it without naming it (e: lodsq), a free register loads it, a
# helper.  A compare of memory right before a random branch gives the
# random test its place (d).  Counts exact.
cat >"$T/xjt.S" <<'EOF2'
	.intel_syntax noprefix
	.text
	.globl _start
_start:
	mov	r12d, 20000
	mov	ebx, 1
	lea	r13, [rip + tab]
1:	imul	ebx, ebx, 0x41c64e6d
	add	ebx, 0x3039
	mov	ecx, ebx
	shr	ecx, 16
	and	ecx, 1
	mov	rax, qword ptr [r13 + rcx * 8]
	jmp	rax
a0:	inc	esi
	jmp	a9
a1:	xor	esi, ebx
a9:	mov	ecx, ebx
	shr	ecx, 17
	and	ecx, 1
	mov	rdx, qword ptr [r13 + rcx * 8 + 16]
	mov	r8, rdx
	jmp	rdx
b0:	inc	edi
	jmp	b9
b1:	xor	edi, ebx
b9:	mov	ecx, ebx
	shr	ecx, 18
	and	ecx, 1
	jmp	qword ptr [r13 + rcx * 8 + 32]
c0:	inc	r10d
	jmp	c9
c1:	xor	r10d, ebx
c9:	mov	dword ptr [rsp - 16], ebx
	test	byte ptr [rsp - 14], 0x10
	jne	d1
	inc	r9d
d1:	mov	eax, ebx
	mov	ecx, ebx
	shr	ecx, 19
	and	ecx, 1
	lea	rsi, [r13 + rcx * 8 + 48]
	lodsq
	jmp	rax
e0:	inc	r11d
	jmp	e9
e1:	xor	r11d, ebx
e9:	sub	r12d, 1
	jne	1b
	mov	eax, 60
	xor	edi, edi
	syscall
	.section .rodata
	.p2align 3
tab:	.quad	a0, a1, b0, b1, c0, c1, e0, e1
EOF2
$CC -nostdlib -static -o "$T/xjto" "$T/xjt.S"
exact "$T/xjto" xjt
# (b, c, d and e end two blocks each: a1 runs on into a9, b1 into b9, c1
# into c9, the block of inc r9d into d1; e's lodsq has a helper of its
# own; the helpers' free register is one of r10 to r14, left out below)
eq "table folds: helpers of the random blocks" "0,0,0,0,0,1,1,2,2" "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/xjt.trace" |
	jq -r '[.block_outcomes[] | select(.random) | .helpers] | sort | join(",")')"
eq "table folds: what the random bytes' loads were" "and ecx, 1|mov rax, qword ptr [r15 + 4096]" \
	"$(sed -n 's/.*\\tmovzx [a-z0-9]*, byte ptr \[r15 + r[0-9a-z]* + [0-9]*\]\\t# was \(.*\)\\n"$/\1/p' "$T/xjt.c" | sort -u | paste -sd'|')"
eq "table folds: through the registers written" "rax rcx" \
	"$(sed -n 's/.*\\tjmp qword ptr \[r15 + \(r[a-z0-9]*\) \* 8 + [0-9]*\]\\n"$/\1/p' "$T/xjt.c" | grep -v '^r1[0-4]$' | sort -u | paste -sd' ')"
# A random branch whose flags come from arithmetic that also writes a
# register of the block's (f: `sub` of memory, g: `dec`, h: `neg`), or
# from a compare of r15, which the program renames (m): the random test
# takes that one's place, no helper; from arithmetic on memory (k: `sub
# dword ptr [mem], 1`), whose store stays, the test is a helper.  Counts
# exact, memcheck silent.
cat >"$T/xar.S" <<'EOF2'
	.intel_syntax noprefix
	.text
	.globl _start
_start:
	mov	r12d, 20000
	mov	ebx, 1
	mov	qword ptr [rsp - 8], 1
1:	imul	ebx, ebx, 0x41c64e6d
	add	ebx, 0x3039
	mov	r8d, ebx
	shr	r8d, 16
	and	r8d, 1
	sub	r8, qword ptr [rsp - 8]
	jne	.Lf
	inc	esi
.Lf:	mov	r9d, ebx
	shr	r9d, 17
	and	r9d, 1
	dec	r9d
	jne	.Lg
	inc	edi
.Lg:	mov	r10d, ebx
	shr	r10d, 18
	and	r10d, 1
	neg	r10
	js	.Lh
	inc	r11d
.Lh:	mov	eax, ebx
	shr	eax, 19
	and	eax, 1
	mov	dword ptr [rsp - 24], eax
	sub	dword ptr [rsp - 24], 1
	jne	.Lk
	inc	ecx
.Lk:	mov	r15d, ebx
	shr	r15d, 20
	and	r15d, 1
	cmp	r15d, 0
	jne	.Lm
	inc	edx
.Lm:	sub	r12d, 1
	jne	1b
	mov	eax, 60
	xor	edi, edi
	syscall
EOF2
$CC -nostdlib -static -o "$T/xaro" "$T/xar.S"
exact "$T/xaro" xar
# (g, h, k, m and the loop's branch end two blocks each, from either way
# of the branch before; the loop's, which the predictor misses after the
# random ones, folds into its `sub r12d, 1`)
eq "arithmetic folds: helpers of the random blocks" "0,0,0,0,0,0,0,0,0,1,1" "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/xar.trace" |
	jq -r '[.block_outcomes[] | select(.random) | .helpers] | sort | join(",")')"
eq "arithmetic folds: the store kept in every copy" "$(grep -c '# and eax, 1' "$T/xar.c")" \
	"$(grep -c 'sub dword ptr \[r15' "$T/xar.c")"
# MXCSR keeps its sticky flags across calls (the functions' exits leave
# it alone; no block here writes it)
eq "exits leave MXCSR alone" 0 "$(grep -c ldmxcsr "$T/xar.c")"
# Page crossings: QEMU chains a block only to one on its own page.  A
# call, a jump and a taken branch to another page, 20,000 times each (the
# call's block runs 19,999 times after the first, the branch falls through
# once): the profile counts them, and in the generated program every
# execution of those blocks leaves its page too (the plan for a block that
# did on half its executions or more, with one copy or four), counted from
# the recording of the generated program: the block's last translated
# block (the branch's own, or the jump after a jcc that fell through) and
# the next block's (not the exit's) start on different pages.
cat >"$T/pgs.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tmov ebx, 20000\n"
	".Lhead:\n\tcall far_fn\n\ttest ebx, 1\n\tjmp .Lmid\n"
	"\t.p2align 12\n.Lmid:\n\tsub ebx, 1\n\tjnz .Lhead\n"
	"\txor eax, eax\n\tpop rbx\n\tret\n"
	"\t.p2align 12\nfar_fn:\n\tlea rax, [rbx + 1]\n\tret\n");
EOF2
$CC -O2 -static -masm=intel -o "$T/pgo" "$T/pgs.c"
exact "$T/pgo" pg --no-chains
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/pg.trace")
eq "page crossings in the profile" "19999 19999 20000 20000 20000 19999" \
	"$(jq -r '[.block_outcomes[] | select(.crossed >= 1000) | .executions, .crossed] | join(" ")' <<<"$j")"
eq "page crossings: blocks" 3 "$(jq '[.block_outcomes[] | select(.crossed >= 1000 and .crosses)] | length' <<<"$j")"
ids=$(jq -r '[.block_outcomes[] | select(.crossed >= 1000) | .id] | join("|")' <<<"$j")
eq "page crossings in the generated program" "19999 19999 20000 20000 20000 20000" \
	"$(crossings "$T/pg.gen.trace" "$ids")"
contains "page crossings: the second text section" '.pushsection .text.gt_far' "$(cat "$T/pg.c")"
eq "--no-cross-page: none" "0 0" "$("$DBTPROF" gentest --json --no-cross-page -o "$T/x.c" "$T/pg.trace" | jq .cross_page_blocks) $(grep -c 'text.gt_far' "$T/x.c")"
# Straight-line code over a page boundary: QEMU ends the block before the
# first instruction on the next page and looks the next one up.  A loop
# of 2,000 passes over two page-aligned pages of 4-byte adds (blocks of
# 512 instructions): a jump at the end of the first page to the second
# (crossed), the second page's last block falls into the third (fell),
# whose closing branch goes back to the first (crossed, 1,999 times).
# The generated program's pass of the same two pages and more leaves its
# page twice by itself and closing, three times as the original's did, so
# the jump is not made to cross (where a pass fits a page it is: above).
cat >"$T/pgf.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tmov ebx, 2000\n\tjmp .Lbig\n"
	"\t.p2align 12\n.Lbig:\n\t.rept 1023\n\tadd rax, 1\n\t.endr\n\tjmp .Lk\n"
	"\t.p2align 12\n.Lk:\n\t.rept 1024\n\tadd rax, 1\n\t.endr\n"
	"\tsub ebx, 1\n\tjnz .Lbig\n\txor eax, eax\n\tpop rbx\n\tret\n");
EOF2
j=$(asm_json pgf)
eq "falls to another page in the profile" "2000 2000 0 false 2000 0 2000 false 2000 1999 0 false" \
	"$(jq -r '[.block_outcomes[] | select(.crossed >= 1000 or .fell >= 1000) | .executions, .crossed, .fell, .crosses] | join(" ")' <<<"$j")"
# the profile's totals (the loop's and the C library's start-up), as a
# count of the dump's transitions has them, in the JSON and the text
eq "page crossings and falls: the totals" "$(page_leaves "$T/pgf.trace")" \
	"$(jq -r '"\(.page_crossings) \(.page_falls)"' <<<"$j")"
eq "page crossings and falls: the text" "$(page_leaves "$T/pgf.trace")" \
	"$("$DBTPROF" gentest -o "$T/x.c" "$T/pgf.trace" |
		sed -n 's/.*to another page: \([0-9,]*\) by a branch, \([0-9,]*\) falling.*/\1 \2/p' | tr -d ,)"
# The other way: a small loop whose original fell over a page boundary
# (an add across it, a block of its own) and whose closing branch went
# back over it, 2,000 times; a jump to the next instruction crossed
# nothing.  The generated program's pass fits a page, so the jump crosses
# in its place (and the pass closes from the other section).
cat >"$T/pgs2.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tmov ebx, 2000\n\tjmp .Lsm\n"
	"\t.p2align 12\n\t.skip 4080, 0xcc\n.Lsm:\n\tadd rax, 1\n\tjmp .Lj\n.Lj:\n"
	"\tadd rax, 1\n\tadd rax, 1\n\tadd rax, 1\n\tsub ebx, 1\n\tjnz .Lsm\n"
	"\txor eax, eax\n\tpop rbx\n\tret\n");
EOF2
eq "a fall made up by a jump" "2000 0 0 true 2000 0 0 false 2000 0 2000 false 2000 1999 0 false" \
	"$(asm_json pgs2 | jq -r '[.block_outcomes[] | select(.executions >= 1000) | .executions, .crossed, .fell, .crosses] | join(" ")')"
# Chains: f is called from two loops, 30,000 and 10,000 times (f's block
# runs 40,000 times, no other as often: it is in no sequence).  Each
# call's block runs as often as the block after the call (their
# sequence).  The hotter call's block runs with a copy of f after it
# (gt_bF_v0, between it and the block after the call, in their function),
# f's own entry the rest, 10,000 (one profile: theta = the count, delta
# 0); the counts stay exact (measured = plan).  The colder call keeps its
# own entry (f is in one chain at most).
cat >"$T/chs.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tmov ebx, 30000\n\tjmp .La\n"
	".La:\n\tcall f\n\tsub ebx, 1\n\tjnz .La\n"
	"\tmov ebx, 10000\n\tjmp .Lb\n.Lb:\n\tcall f\n\tsub ebx, 1\n\tjnz .Lb\n"
	"\txor eax, eax\n\tpop rbx\n\tret\n"
	"f:\n\tlea rax, [rax + 1]\n\tret\n");
EOF2
$CC -O2 -static -masm=intel -o "$T/ch" "$T/chs.c"
exact "$T/ch" ch
f=$(block_of "$T/ch.plan" 40000)
contains "chains: the summary" "chains (a jump or call, then a copy of its target): 1, " "$(cat "$T/ch.sum")"
sed 's/^\t"//; s/\\n"$//' "$T/ch.c" >"$T/ch.s"
p=$(awk -v v="gt_b${f}_v0:" '/^gt_b[0-9]+:$/ { fn = $0; sub(/^gt_b/, "", fn); sub(/:$/, "", fn) } $0 == v { print fn }' "$T/ch.s")
eq "chains: f's copy in the hotter call's function" 30000 \
	"$(awk -v b="gt_b${p}_body" '$1 == b { print $3 }' "$T/ch.plan")"
eq "chains: the copy right after the call" "call .Lg$((p * 16))_1 .Lg$((p * 16))_1: .globl gt_b${f}_v0" \
	"$(grep -A4 "^gt_b${p}_body:" "$T/ch.s" | sed -n '3,5p' | sed 's/\\t//g' | paste -sd' ')"
eq "chains: f's own entry runs the rest" 1 "$(grep -c "^	{gt_b$f, [0-9]*, 0, 0, 10000, 0, " "$T/ch.c")"
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/ch.trace")
eq "chains: JSON" "1 30000 true" "$(jq -r '[.chains, .chained_executions / 2, .block_executions > 80000] | join(" ")' <<<"$j")"
"$DBTPROF" gentest --no-chains -o "$T/x.c" "$T/ch.trace" >"$T/x.sum"
contains "--no-chains: none" "chains (a jump or call, then a copy of its target): 0, 0.00%" "$(cat "$T/x.sum")"
eq "--no-chains: no copies" 0 "$(grep -c '_v[0-9]*:' "$T/x.c")"
# Under Valgrind the call and f's copy are one superblock: it follows the
# call into the copy, so that no superblock starts at any copy (lackey's
# trace of superblock entries, the program built at fixed addresses),
# one at each pass of the chain's function (30,000 over its copies), and
# f's own entry 10,000.
if command -v valgrind >/dev/null; then
	$CC $CFLAGS_GT -no-pie "$T/ch.c" -o "$T/ch_np"
	valgrind --tool=lackey --basic-counts=no --trace-superblocks=yes "$T/ch_np" --quiet 2>&1 |
		awk '$1 == "SB" { print $2 }' | sort | uniq -c >"$T/ch.sbs"
	sb() {
		nm "$T/ch_np" | awk -v s="^$1\$" '$3 ~ s { a[$1] = 1 }
			END { for (x in a) print x }' | awk 'NR == FNR { sub(/^0+/, "", $1); a[$1] = 1; next }
			{ x = $2; sub(/^0+/, "", x) } x in a { n += $1 } END { print n + 0 }' - "$T/ch.sbs"
	}
	u=$(grep -c "^gt_b${f}_v[0-9]*:" "$T/ch.s")
	eq "chains: superblocks (the function's, the copies', f's)" "$((30000 / u)) 0 10000" \
		"$(sb "gt_b${p}_body") $(sb "gt_b${f}_v[0-9]*") $(sb "gt_b${f}_body")"
	checks=$((checks + 1))
fi
# The jump cache: a loop of two blocks 0x1001 bytes apart, the first at
# an even page and offset ((pc ^ pc >> 12) & 4095 the same for both),
# each missing it at every one of its 1,000,000 executions.
cat >"$T/cold.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tmov ecx, 1000000\n\tjmp .Lc\n"
	"\t.p2align 13\n.Lc:\n\tadd rax, rcx\n\t.byte 0xe9\n\t.long .Ld - . - 4\n"
	"\t.skip 0x1001 - 8\n.Ld:\n\tsub ecx, 1\n\tjnz .Lc\n\txor eax, eax\n\tret\n");
EOF2
eq "cold: both blocks missed every time" "1000000 1000000" \
	"$(asm_json cold | jq -r '[.block_outcomes[] | select(.executions == 1000000) | .cold] | join(" ")')"
# Calls: the loop's block, run 999,999 times, runs in calls of 256
# executions or a few more (GT_MIN_CALL: a call as soon as its share of
# the 65,536 slices done reaches 256 more, a share at most 16 a slice;
# the rest in the last), interleaved with every other block's calls as
# the original interleaves its blocks: 3,677 to 3,907 calls (100 in 100
# slices), counted at the function's entry in a recording.
cat >"$T/calls.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tmov ecx, 1000000\n.Lc:\n"
	"\tadd rax, rcx\n\tsub ecx, 1\n\tjnz .Lc\n\txor eax, eax\n\tret\n");
EOF2
$CC -O2 -static -masm=intel -o "$T/calls" "$T/calls.c"
exact "$T/calls" calls
k=$(block_of "$T/calls.plan" 999999)
# calls TRACE K: entries of block K's function in a blocks-mode TRACE
calls() {
	"$DBTPROF" dump --symbols "$1" | awk -v f="gt_b$2+0x0" '$2 == "block" && $6 == f { n++ } END { print n + 0 }'
}
n=$(calls "$T/calls.gen.trace" "$k")
[ "$n" -ge 3677 ] && [ "$n" -le 3907 ] || fail "calls of a block run 999,999 times: $n, not 3,677 to 3,907"
checks=$((checks + 1))
# A scaled run makes fewer calls of the sizes a run at scale 1 makes: in
# 100 slices the block's calls bring 9,999 executions each (its share of
# a slice at scale 1), 100 calls at --scale 1 and 10 at --scale 10 (9
# of 9,999, the rest in the last slice), not one a slice.
$CC $CFLAGS_GT -DGT_SLICES=100 "$T/calls.c" -o "$T/calls100"
for s in 1 10; do
	"$DBTPROF" record -q -m blocks -o "$T/calls100.trace" -- "$T/calls100" --quiet --scale $s >/dev/null
	eq "calls in 100 slices at --scale $s" $((100 / s)) "$(calls "$T/calls100.trace" "$k")"
done
# A sequence runs its members in address order (here all run once):
# a_fn's frame (`sub rsp, 40`, written through rsp, which the program's
# operands take to the data area) stays undefined to memcheck, and
# b_tail, d_fn's epilogue, comes next and pops two of its slots into a
# register it tests.  The generated program writes them first (up past
# them, two pushes down), so memcheck finds no error (in exact()).
cat >"$T/frames_s.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tcall d_fn\n\tcall a_fn\n\txor eax, eax\n\tret\n"
	"a_fn:\n\tpush r12\n\tsub rsp, 40\n\tmov qword ptr [rsp], 0\n\tcall c_fn\n\tjmp a_rest\n"
	"b_tail:\n\tpop rbx\n\tpop rbp\n\ttest rbx, rbx\n\tjz .Lbz\n.Lbz:\n\tret\n"
	"a_rest:\n\tadd rsp, 40\n\tpop r12\n\tret\n"
	"c_fn:\n\tret\n"
	"d_fn:\n\tpush rbp\n\tpush rbx\n\tmov ebx, 1\n\tjmp b_tail\n");
EOF2
$CC -O2 -static -masm=intel -o "$T/fr" "$T/frames_s.c"
exact "$T/fr" frames
a=$(printf '0x%x' "$((16#$(nm "$T/fr" | awk '$3 == "b_tail" { print $1 }')))")
k=$(awk -v a="$a" '$2 == a { print $1 }' "$T/frames.plan")
eq "frames: b_tail's slots written" "lea rsp, [rsp + 16] .rept 2 push 0" \
	"$(awk -v l="$k:" '$0 ~ "\"" l "\\\\n\"" { for (i = 0; i < 3; i++) { getline; gsub(/^\t"\\t|\\n"$/, ""); printf "%s%s", i ? " " : "", $0 } }' "$T/frames.c")"
# L1 misses: a loop that loads from a new line each time (20,000 lines, 64
# bytes apart) misses a 32 KiB L1 on every execution; the first iteration
# is part of main's block.  The profile (mem mode) counts 19,999 misses in
# the loop's block, the generated program's function walks one operand an
# execution, and its recording, run through the same model, misses as
# often in the block that runs the passes, within 1% (the other functions
# that walk go over the same lines, a few of them shortly before).
cat >"$T/l1s.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tlea rsi, [rip + l1buf]\n"
	"\tmov ebx, 20000\n.Lm:\n\tmov rax, qword ptr [rsi]\n\tadd rsi, 64\n"
	"\tsub ebx, 1\n\tjnz .Lm\n\txor eax, eax\n\tpop rbx\n\tret\n"
	"\t.bss\n\t.p2align 6\nl1buf:\n\t.zero 1280000\n\t.text\n");
EOF2
mem_guest l1 "$T/l1s.c"
# record --cache-sample (mem_guest): a run shorter than its first phase
# is tallied whole, so the program is that of --cache; the summary says
# the tallies are estimates
out=$("$DBTPROF" gentest -o "$T/l1.sample.c" "$T/l1.sample")
eq "l1: record --cache-sample, the program of --cache" "" \
	"$(cmp "$T/l1.c" "$T/l1.sample.c" 2>&1)"
contains "l1: --cache-sample in the summary" \
	"cache tallies: estimated from sampled profiles (record --cache-sample)" "$out"
eq "l1: --cache-sample in the JSON summary" "true false" \
	"$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1.sample" | jq -r .cache_sampled) $("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1.cache" | jq -r .cache_sampled)"
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1.trace")
eq "L1 misses in the profile: the loop's" "19999 19999 1" \
	"$(hot "$j" '.executions, .l1_misses, .walks')"
# (1.28 MB, read once: every line misses the 1 MiB L2 as well)
eq "L2 misses in the profile: the loop's" 19999 \
	"$(jq '[.block_outcomes[] | select(.executions >= 1000) | .l2_misses] | add' <<<"$j")"
eq "L1 misses: walked at T=1, the blocks' walks times executions" \
	"$(jq '[.block_outcomes[] | .executions * .walks] | add | round' <<<"$j")" "$(jq .l1_misses_walked <<<"$j")"
contains "L1 misses: the summary" "L1 data cache misses at T=1: " "$(cat "$T/l1.sum")"
# A random branch after a compare of memory marked to walk: the random
# test takes the compare's place where the block's other operands can
# walk its misses (a load from a new line every time, then a store and
# the compare on that line), and they walk them all, the counts exact.
cat >"$T/l1r.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tlea rsi, [rip + l1buf]\n"
	"\tmov edi, 20000\n\tmov ebx, 1\n\txor ecx, ecx\n"
	".Lm:\n\timul ebx, ebx, 0x41c64e6d\n\tadd ebx, 0x3039\n"
	"\tmov rax, qword ptr [rsi]\n\tmov dword ptr [rsi + 8], ebx\n"
	"\tadd rsi, 64\n\ttest byte ptr [rsi - 54], 0x10\n\tjne .Ls\n"
	"\tadd ecx, 1\n.Ls:\n\tsub edi, 1\n\tjnz .Lm\n\txor eax, eax\n"
	"\tpop rbx\n\tret\n\t.bss\n\t.p2align 6\nl1buf:\n\t.zero 1280000\n\t.text\n");
EOF2
mem_guest l1r "$T/l1r.c"
eq "l1r: the random block's executions, misses, helpers, walks" "19999 19999 0 1" \
	"$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1r.trace" | jq -r '[.block_outcomes[] | select(.random) | .executions, .l1_misses, .helpers, .walks] | join(" ")')"
# Its misses all missed the L2 as well, but fewer than the far walks'
# minimum (65,536 a profile): it walks near.
eq "L2 misses, too few to walk far: the loop walks near" "false 19999 0" \
	"$(hot "$j" '.far, .l2_misses') $(jq .far_blocks <<<"$j")"
contains "L2 misses: the summary" "by walks over the far area in 0 of those blocks" "$(cat "$T/l1.sum")"
"$DBTPROF" record -q -m mem -o "$T/l1.gen.mem" -- "$T/l1" >/dev/null
got=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1.gen.mem" |
	jq '[.block_outcomes[] | select(.executions == 19999) | .l1_misses] | add')
[ "$got" -ge 19800 ] && [ "$got" -le 20003 ] ||
	fail "L1 misses: the generated program's passes miss $got times, the original's 19999"
checks=$((checks + 1))
# The same loop 70,000 times over 4.48 MB: 69,999 L1 and L2 misses in
# the loop's block, enough to walk far: its function walks the far area
# (8 MiB), the far walks in all are the profile's L2 misses within 2%
# (the start-up's blocks' too), and the loop's passes miss the L1 and
# the L2 as often as its executions did, within 1%.
sed 's/mov ebx, 20000/mov ebx, 70000/; s/zero 1280000/zero 4480000/' "$T/l1s.c" >"$T/l1f.c"
mem_guest l1f "$T/l1f.c"
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1f.trace")
eq "L2 misses: the loop walks far" "69999 69999 69999 1 true" \
	"$(hot "$j" '.executions, .l1_misses, .l2_misses, .walks, .far')"
jq -e '.far_blocks >= 1 and (.l2_misses_walked - .l2_misses) * 50 <= .l2_misses and
	(.l2_misses - .l2_misses_walked) * 50 <= .l2_misses' >/dev/null <<<"$j" ||
	fail "L2 misses: far walks $(jq .l2_misses_walked <<<"$j") for the profile's $(jq .l2_misses <<<"$j")"
checks=$((checks + 1))
for lv in l1 l2; do
	gen_misses l1f "$(block_of "$T/l1f.plan" 69999)" 69299 70699 \
		"$lv misses of a far walk (the original's 69999)" "${lv}_misses"
done
# A thread makes the far area (mprotect of GT_FAR_BYTES, then a write a
# page) only when it runs a function that walks it: the loop's alone
# (--only) makes it, any other block's alone does not.
fb=$(sed -n 's/^#define GT_FAR_BYTES //p' "$T/l1f.c")
k=$(block_of "$T/l1f.plan" 69999)
other=$(sed -n 's/^\t{gt_b\([0-9]*\), [0-9]*, [0-9]*, 0, .*/\1/p' "$T/l1f.c" | head -1)
far_made() {
	strace -f -e trace=mprotect -o "$T/l1f.strace" "$T/l1f" --quiet --only "$1"
	grep -c ", $fb, PROT_READ|PROT_WRITE)" "$T/l1f.strace" || true
}
eq "far area: made by a thread that walks it, not by one that does not" \
	"1 1 0" "$(grep -c "^	{gt_b$k, [0-9]*, [0-9]*, 1, " "$T/l1f.c") $(far_made "$k") $(far_made "$other")"
# A pointer chase: a loop linking 70,000 lines of 4.48 MB (each store's
# address stepped, as the loop above reads) and one that follows 60,000
# of the links (each load's address the load before's value). Both
# miss the L1 and the L2 every time and walk far; the chase's walks
# wait for each other as its loads did: W's next line is read from the
# line (which the driver links in one cycle), where the linking loop's
# steps.
cat >"$T/l1c.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tlea rsi, [rip + l1buf]\n"
	"\tmov rdi, rsi\n\tmov ebx, 70000\n.Li:\n\tlea rax, [rdi + 64]\n"
	"\tmov qword ptr [rdi], rax\n\tmov rdi, rax\n\tsub ebx, 1\n\tjnz .Li\n"
	"\tmov ebx, 60000\n.Lc:\n\tmov rsi, qword ptr [rsi]\n\tsub ebx, 1\n"
	"\tjnz .Lc\n\txor eax, eax\n\tpop rbx\n\tret\n"
	"\t.bss\n\t.p2align 6\nl1buf:\n\t.zero 4480064\n\t.text\n");
EOF2
mem_guest l1c "$T/l1c.c"
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1c.trace")
eq "chase: both loops walk far, one block's walks wait" \
	"69999 59999 true true 1" \
	"$(hot "$j" 'select(.l2_misses > 50000) | .executions') $(hot "$j" 'select(.l2_misses > 50000) | .far') $(jq .far_chase_blocks <<<"$j")"
kc=$(block_of "$T/l1c.plan" 59999)
ks=$(block_of "$T/l1c.plan" 69999)
# how a function's walk goes to its next line: read from the line (of
# the chain's area, past the far area), or stepped
tail_of() {
	awk -v f="gt_b$1:" -v at="$(awk '/^#define GT_FAR / { a = $3 }
		/^#define GT_FAR_BYTES / { b = $3 } END { print a + b + 60 }' "$T/l1c.c")" '
		$0 ~ "^\t\"" f { on = 1 } on && /\.size/ { exit }
		on && index($0, "dword ptr [r15 + ") && index($0, " + " at "]") { print "read"; exit }
		on && /add [a-z0-9]+, 262336/ { print "stepped"; exit }' "$T/l1c.c"
}
eq "chase: its walk reads the next line, the linking loop's steps" \
	"read stepped" "$(tail_of "$kc") $(tail_of "$ks")"
eq "chase: the driver links the far lines" "#define GT_FAR_CHAIN 1" \
	"$(grep '^#define GT_FAR_CHAIN' "$T/l1c.c")"
for lv in l1 l2; do
	gen_misses l1c "$kc" 59399 60599 \
		"$lv misses of a chained far walk (the original's 59999)" "${lv}_misses"
done
# Since each thread that walks far makes its own area, the minimum
# counts those threads: 80,000 L2 misses (lines read once) walk far when
# one worker has them all (65,536 a thread), near when four workers
# share them (262,144 for four).
cat >"$T/l2t.c" <<'EOF2'
#include <pthread.h>
#include <stdlib.h>
static long per;
static void *work(void *a)
{
	volatile char *p = calloc(per, 64);
	long s = 0;
	for (long i = 0; i < per; i++)
		s += p[i * 64];
	return (void *)s;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	pthread_t t[4];
	per = 80000 / n;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], 0, work, 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], 0);
	return 0;
}
EOF2
$CC -O1 -pthread -o "$T/l2t" "$T/l2t.c"
for n in 1 4; do
	"$DBTPROF" record -q --cache -o "$T/l2t$n.trace" -- "$T/l2t" $n
done
# (the far walks within 2% of the misses; the main thread's few, from
# its start-up, walk near)
l2t() { "$DBTPROF" gentest --json -o "$T/x.c" "$T/l2t$1.trace" | jq -r '[.far_blocks > 0, .l2_misses >= 80000, (.l2_misses - .l2_misses_walked) * 50 <= .l2_misses] | join(" ")'; }
eq "far walks: one thread's 80,000 L2 misses walk far, four threads' 20,000 each near" \
	"true true true false true false" "$(l2t 1) $(l2t 4)"
# the two profiles together, read one at a time or both at once: the
# same program (the blocks' tallies added as one reading adds them)
for jb in 1 2; do
	"$DBTPROF" gentest -j $jb -o "$T/l2tj$jb.c" "$T/l2t1.trace:1" "$T/l2t4.trace:4" >/dev/null
done
eq "l2t: -j 1 and -j 2, the same program" "" "$(cmp "$T/l2tj1.c" "$T/l2tj2.c" 2>&1)"
# A loop that goes round 64 KiB, a line an execution: every access
# misses the 32 KiB L1 (19,999 in the loop's block), the L2 only the
# first time round (1,023 lines): its function walks the near area, and
# its passes miss the L1 as often, within 1%, the L2 on fewer than 1,300
# (the first meetings of the near area's 1,024 lines).
cat >"$T/l1n.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tmov ebx, 20000\n"
	"\txor ecx, ecx\n\tlea rsi, [rip + l1buf]\n.Lm:\n"
	"\tmov rax, qword ptr [rsi + rcx]\n\tadd ecx, 64\n\tand ecx, 65535\n"
	"\tsub ebx, 1\n\tjnz .Lm\n\txor eax, eax\n\tpop rbx\n\tret\n"
	"\t.bss\n\t.p2align 6\nl1buf:\n\t.zero 65536\n\t.text\n");
EOF2
mem_guest l1n "$T/l1n.c"
eq "L1 but not L2 misses: the profile's, a near walk" "19999 19999 1023 1 false" \
	"$(hot "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1n.trace")" '.executions, .l1_misses, .l2_misses, .walks, .far')"
for lv in l1:19799:20199 l2:0:1300; do
	IFS=: read -r lv lo hi <<<"$lv"
	gen_misses l1n "$(block_of "$T/l1n.plan" 19999)" "$lo" "$hi" \
		"$lv misses of a near walk" "${lv}_misses"
done
# A loop that misses on every fourth execution (a new line every 16
# bytes: 4,999 of its 19,999): a self-loop gets copies for its walks
# (here 4: 19,999 executions, a copy per 4,096), one of them walking, and
# its passes miss as often, within 2% (the walk goes round its cycle five
# times; its lines meet the rest of the program's accesses).
sed 's/add rsi, 64/add rsi, 16/' "$T/l1s.c" >"$T/l1q.c"
mem_guest l1q "$T/l1q.c"
eq "L1 misses every fourth execution: the profile's (and L2's: lines met once)" "19999 4999 4999 0.25" \
	"$(hot "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1q.trace")" '.executions, .l1_misses, .l2_misses, .walks')"
gen_misses l1q "$(block_of "$T/l1q.plan" 19999)" 4899 5099 \
	"L1 misses every fourth execution (the original's 4999)"
# The same loop with every register the generator could walk or count in
# taken by the loop (r15 is renamed to r14): its function walks through
# one of its own registers, loaded from the walk's slot just before the
# walking operand, and its passes miss as often, within 1%.
cat >"$T/l1r.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tpush rbp\n\tpush r12\n"
	"\tpush r13\n\tpush r14\n\tpush r15\n\tlea rsi, [rip + l1buf]\n"
	"\tmov ebx, 20000\n.Lm:\n\tmov rax, qword ptr [rsi]\n\tadd rsi, 64\n"
	"\tmov rcx, rax\n\tmov rdx, rax\n\tmov rdi, rax\n\tmov rbp, rax\n"
	"\tmov r8, rax\n\tmov r9, rax\n\tmov r10, rax\n\tmov r11, rax\n"
	"\tmov r12, rax\n\tmov r13, rax\n\tmov r14, rax\n\tmov r15, rax\n"
	"\tsub ebx, 1\n\tjnz .Lm\n\tpop r15\n\tpop r14\n\tpop r13\n"
	"\tpop r12\n\tpop rbp\n\tpop rbx\n\txor eax, eax\n\tret\n"
	"\t.bss\n\t.p2align 6\nl1buf:\n\t.zero 1280000\n\t.text\n");
EOF2
mem_guest l1r "$T/l1r.c"
eq "L1 misses, no register free: the loop walks once an execution" "19999 19999 1" \
	"$(hot "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1r.trace")" '.executions, .l1_misses, .walks')"
k=$(block_of "$T/l1r.plan" 19999)
eq "L1 misses, no register free: the walk register loaded before its operand" 1 \
	"$(awk -v f="\"# block $k " 'index($0, f) == 2 { on = 1; next }
		on && /^\t"# block/ { on = 0 }
		on && /mov r[0-9]+d, dword ptr \[r15 \+ 152\]/ { prev = 1; next }
		on && prev && /qword ptr \[r15 \+ r[0-9]+ \+ 9[0-9]+\]/ { n++ } { prev = 0 }
		END { print n + 0 }' "$T/l1r.c")"
gen_misses l1r "$k" 19800 20199 "L1 misses, no register free (the original's 19999)"
# Two blocks of one loop, each missing once in 21 executions (a byte
# every 3 of 120,000 read once: 1,875 of 40,000), too rarely to walk
# alone in 8 copies (0.375 a pass, rounded away); their function's pass,
# both together, walks once in 8 copies (0.75 rounded up: 5,000 walks
# for the profile's 3,750), and its recording misses as often, within 2%.
cat >"$T/l1t.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tlea rsi, [rip + l1buf]\n"
	"\tlea rdi, [rip + l1buf + 122880]\n\tmov ebx, 40000\n\tjmp .La\n"
	"\t.p2align 6\n.La:\n\tmovzx eax, byte ptr [rsi]\n\tadd rsi, 3\n"
	"\tjmp .Lb\n\t.p2align 6\n.Lb:\n\tmovzx ecx, byte ptr [rdi]\n"
	"\tadd rdi, 3\n\tsub ebx, 1\n\tjnz .La\n\txor eax, eax\n\tpop rbx\n"
	"\tret\n\t.bss\n\t.p2align 6\nl1buf:\n\t.zero 245760\n\t.text\n");
EOF2
mem_guest l1t "$T/l1t.c"
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/l1t.trace")
eq "L1 misses of two rare blocks: the profile's" "40000 1875 40000 1875" \
	"$(hot "$j" '.executions, .l1_misses')"
eq "L1 misses of two rare blocks: walked together" 5000 \
	"$(jq '[.block_outcomes[] | select(.executions >= 1000) | .executions * .walks] | add' <<<"$j")"
gen_misses l1t "$(block_of "$T/l1t.plan" 40000)" 4900 5100 \
	"L1 misses of two rare blocks (the walks 5000)"
# Far walks with a chain: A misses the L1 and L2 on each of 70,000
# executions, Q (60,000) four times the L1 and once the L2 an execution,
# f (called from two loops, 40,000 times; its hotter call's block chains
# to it) six and once.  Functions walk far by their L2 share, A's first,
# while their walks stay within the profile's L2 misses (half a
# function's over at most): Q's 240,000 walks would not (70,000 + 120,000
# > 171,000); counting f's chain copy and f's own entry each with f's
# whole count let them in (310,000 far walks).
cat >"$T/pfs.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n"
	"\tlea rsi, [rip + pfa]\n\tmov ebx, 70000\n.La:\n\tmov rax, qword ptr [rsi]\n"
	"\tadd rsi, 64\n\tsub ebx, 1\n\tjnz .La\n"
	"\tlea rsi, [rip + pfq]\n\tlea rdi, [rip + pfr]\n\txor edx, edx\n\tmov ebx, 60000\n"
	".Lq:\n\tmov rax, qword ptr [rsi]\n\tmov rcx, qword ptr [rdi + rdx]\n"
	"\tmov r8, qword ptr [rdi + rdx + 64]\n\tmov r9, qword ptr [rdi + rdx + 128]\n"
	"\tadd rsi, 64\n\tadd edx, 192\n\tand edx, 65535\n\tsub ebx, 1\n\tjnz .Lq\n"
	"\tlea rsi, [rip + pff]\n\txor edx, edx\n\tmov ebx, 30000\n"
	".Lc1:\n\tcall pf_f\n\tsub ebx, 1\n\tjnz .Lc1\n"
	"\tmov ebx, 10000\n.Lc2:\n\tcall pf_f\n\tsub ebx, 1\n\tjnz .Lc2\n"
	"\txor eax, eax\n\tpop rbx\n\tret\n"
	"pf_f:\n\tmov rax, qword ptr [rsi]\n\tmov rcx, qword ptr [rdi + rdx]\n"
	"\tmov r8, qword ptr [rdi + rdx + 64]\n\tmov r9, qword ptr [rdi + rdx + 128]\n"
	"\tmov r10, qword ptr [rdi + rdx + 192]\n\tmov r11, qword ptr [rdi + rdx + 256]\n"
	"\tadd rsi, 64\n\tadd edx, 320\n\tand edx, 65535\n\tret\n"
	"\t.bss\n\t.p2align 6\npfa:\n\t.zero 4480000\npfq:\n\t.zero 3840000\n"
	"pff:\n\t.zero 2560000\npfr:\n\t.zero 65536\n\t.text\n");
EOF2
$CC -O2 -static -masm=intel -o "$T/pf" "$T/pfs.c"
"$DBTPROF" record -q --cache -o "$T/pf.trace" -- "$T/pf" >/dev/null
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/pf.trace")
eq "far walks with a chain: one chain, the walking blocks' L2 misses" "1 69999 61022 40002" \
	"$(jq -r '"\(.chains) " + ([.block_outcomes[] | select(.l2_misses > 40000) | .l2_misses] | join(" "))' <<<"$j")"
jq -e '.l2_misses_walked >= 69999 and .l2_misses_walked <= .l2_misses' >/dev/null <<<"$j" ||
	fail "far walks with a chain: $(jq .l2_misses_walked <<<"$j") for the profile's $(jq .l2_misses <<<"$j") L2 misses"
checks=$((checks + 1))
# Unaligned accesses: a loop whose qword load at +3 and dword load at +1
# are off their alignment (its word at +8 and qword at +16 are not) on
# each of its 19,999 executions: the profile (mem mode) counts 39,998 in
# its block, the generated program's function moves two of its operands
# off theirs, and its recording, run through the same model, makes as
# many unaligned accesses in the blocks that run the passes.
cat >"$T/uas.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tlea rsi, [rip + uabuf]\n"
	"\tmov ebx, 20000\n.Lm:\n\tmov rax, qword ptr [rsi + 3]\n"
	"\tmov ecx, dword ptr [rsi + 1]\n\tmov dx, word ptr [rsi + 8]\n"
	"\tmov r8, qword ptr [rsi + 16]\n"
	"\tsub ebx, 1\n\tjnz .Lm\n\txor eax, eax\n\tpop rbx\n\tret\n"
	"\t.bss\n\t.p2align 6\nuabuf:\n\t.zero 64\n\t.text\n");
EOF2
mem_guest ua "$T/uas.c"
j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/ua.trace")
eq "unaligned accesses in the profile: the loop's" "19999 39998 2" \
	"$(hot "$j" '.executions, .unaligned, .misaligned')"
eq "unaligned accesses made at T=1: the blocks' operands times executions" \
	"$(jq '[.block_outcomes[] | .executions * .misaligned] | add | round' <<<"$j")" "$(jq .unaligned_made <<<"$j")"
contains "unaligned accesses: the summary" "unaligned accesses at T=1: " "$(cat "$T/ua.sum")"
"$DBTPROF" record -q -m mem -o "$T/ua.gen.mem" -- "$T/ua" >/dev/null
eq "unaligned accesses: the generated program's passes" 39998 \
	"$(fn_misses "$T/ua.gen.mem" "$(block_of "$T/ua.plan" 19999)" unaligned)"
eq "--no-unaligned: none" "0 0" \
	"$("$DBTPROF" gentest --json --no-unaligned -o "$T/x.c" "$T/ua.trace" | jq -r '"\(.unaligned_made) \(.unaligned_blocks)"')"
# A random test takes the place of a compare from memory in a block with
# unaligned accesses where its other operands can make them (the loop's
# qword load at +3, an execution, beside a dword store and its word
# compare at +34 of a random bit): a helper fewer, every unaligned access
# made; not where the compare is the only operand of 2 to 8 bytes, and
# the unaligned one (a qword at +3).
for v in "mov dword ptr [rsi + 32], eax|mov rcx, qword ptr [rsi + 3]|test word ptr [rsi + 34], 0x80|folded 1" \
	"mov ecx, eax\\n\\tshr ecx, 8\\n\\tmov byte ptr [rsi + 5], cl|nop|test qword ptr [rsi + 3], 0x800000|helper 1"; do
	IFS='|' read -r st ld cmp want <<<"$v"
	cat >"$T/uar.c" <<EOF2
__asm__(".text\n.globl main\nmain:\n\tpush rbx\n\tlea rsi, [rip + uabuf]\n"
	"\tmov ebx, 20000\n\tmov eax, 1\n\txor r8d, r8d\n"
	".Lm:\n\timul eax, eax, 1103515245\n\tadd eax, 12345\n"
	"\t$st\n\t$ld\n\t$cmp\n\tjne .Ln\n\tadd r8d, 1\n"
	".Ln:\n\tsub ebx, 1\n\tjnz .Lm\n\txor eax, eax\n\tpop rbx\n\tret\n"
	"\t.bss\n\t.p2align 6\nuabuf:\n\t.zero 64\n\t.text\n");
EOF2
	$CC -O2 -static -masm=intel -o "$T/uar" "$T/uar.c"
	"$DBTPROF" record -q -m mem -o "$T/uar.trace" -- "$T/uar" >/dev/null
	j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/uar.trace")
	eq "random test beside unaligned accesses ($cmp): one an execution, made" "1 1" \
		"$(jq -r '[.block_outcomes[] | select(.random)] | map("\(.unaligned / .executions) \(.misaligned)") | join(" ")' <<<"$j")"
	eq "random test beside unaligned accesses ($cmp)" "$want" "$(rnd_kinds "$T/uar.trace" 1)"
done
# --fp-exact: every floating-point instruction follows ldmxcsr of the
# default MXCSR (addsd, mulsd: 2 x 1000 executions); the counts stay exact
cat >"$T/fp.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tmov edx, 1000\n.Lf:\n"
	"\taddsd xmm0, xmm1\n\tmulsd xmm0, xmm1\n\tsub edx, 1\n\tjnz .Lf\n"
	"\txor eax, eax\n\tret\n");
EOF2
$CC -O2 -static -masm=intel -o "$T/fp" "$T/fp.c"
exact "$T/fp" fp --fp-exact
contains "--fp-exact: the summary" "floating-point instructions at T=1: 2,000, each after a reset of the status flags" "$(cat "$T/fp.sum")"
n=$(fp_reset "$T/fp.c" '(addsd|mulsd) xmm0' 'ldmxcsr dword ptr')
eq "--fp-exact: each after the reset" "$(echo "$n" | awk '{ print ($1 > 0) ? $1 : -1, $1 }')" "$n"
eq "--fp-exact: JSON" "2000 true" "$("$DBTPROF" gentest --json --fp-exact -o "$T/x.c" "$T/fp.trace" | jq -r '"\(.fp_instructions) \(.fp_exact)"')"
eq "without --fp-exact: no reset" "0" "$("$DBTPROF" gentest -o "$T/x.c" "$T/fp.trace" >/dev/null; grep -c 'ldmxcsr dword ptr \[r15 + 16\]' "$T/x.c" || true)"
eq "--no-misses: none" "0 0" "$("$DBTPROF" gentest --json --no-misses -o "$T/x.c" "$T/l1.trace" | jq .walk_blocks) $(grep -c 'r15 + r[0-9a-z]* + 9[0-9]*\]' "$T/x.c")"
eq "blocks-mode profile: no memory accesses" "false 0" \
	"$("$DBTPROF" gentest --json -o "$T/x.c" "$T/pg.trace" | jq -r '"\(.memory_accesses) \(.walk_blocks)"')"
contains "blocks-mode profile: the summary says so" "not reproduced (the profiles have no memory accesses" \
	"$("$DBTPROF" gentest -o "$T/x.c" "$T/pg.trace")"
contains "help" "usage: dbtprof gentest" "$("$DBTPROF" gentest --help)"

# AArch64 guests: the same checks, the program built with the AArch64
# cross compiler and run under qemu-aarch64 (dbtprof picks it from the ELF
# header when it records the program).
if command -v "$CC_A64" >/dev/null && command -v qemu-aarch64 >/dev/null; then
	for g in loop memops nested syscalls threads threads_reuse; do
		exact_a64 "$G/aarch64/$g" "a64_$g"
	done
	exact_a64 "$G/aarch64/loop" a64_loop --unroll 1
	# loop: [mov; subs; b.ne] once, [subs; b.ne] 9999 times, [mov x8;
	# svc] once: 3 + 2 x 9999 + 2 = 20003 instructions; rewritten: the
	# b.ne of both loop blocks and the svc (10001); the svc became getpid.
	contains "a64 loop summary" "blocks: 3 distinct, 3 emitted, 0 skipped" "$(cat "$T/a64_loop.sum")"
	contains "a64 loop dynamic" "dynamic instructions at T=1: 20,003" "$(cat "$T/a64_loop.sum")"
	contains "a64 loop kept" "kept                 10,002   50.002%" "$(cat "$T/a64_loop.sum")"
	contains "a64 loop rewritten" "rewritten            10,001   49.998%" "$(cat "$T/a64_loop.sum")"
	grep -q 'mov x8, #172' "$T/a64_loop.c" || fail "a64 loop: svc not turned into getpid"
	# nested: bl and ret land on the next instruction (adr x30 first)
	grep -q 'adr x30, .Lg' "$T/a64_nested.c" || fail "a64 nested: ret not rewritten"
	# threads: three groups of one, as for x86-64
	j=$("$DBTPROF" gentest --json -o "$T/a64_threads.c" "$T/a64_threads.trace")
	eq "a64 threads groups" "3" "$(jq '.groups | length' <<<"$j")"
	eq "a64 threads parents" "-1 0 0" "$(jq -r '[.groups[].parent] | join(" ")' <<<"$j")"
	contains "a64 threads run" "3 threads, 150009 block executions, scale 1" "$(qemu-aarch64 "$T/a64_threads")"
	eq "a64 scale 3" "$(awk '{ print $1, int($3 / 3) }' "$T/a64_loop.plan")" \
		"$(qemu-aarch64 "$T/a64_loop" --counts --scale 3 | awk '{ print $1, $3 }')"

	# L1 misses, as for x86-64: a loop loading from a new line every
	# execution (19,999 misses), and every fourth (16 bytes on: 4,999).
	# The walking operands move through chunks of the walk area; the
	# generated program's passes miss as often, within 2%.
	for st in 64 16; do
		cat >"$T/a64_l1_$st.c" <<EOF2
__asm__(".text\\n.globl main\\nmain:\\n\\tadrp x1, l1buf\\n"
	"\\tadd x1, x1, :lo12:l1buf\\n\\tmov w2, #20000\\n.Lm:\\n"
	"\\tldr x0, [x1]\\n\\tadd x1, x1, #$st\\n\\tsubs w2, w2, #1\\n"
	"\\tb.ne .Lm\\n\\tmov w0, #0\\n\\tret\\n"
	"\\t.bss\\n\\t.p2align 6\\nl1buf:\\n\\t.zero 1280000\\n\\t.text\\n");
EOF2
		$CC_A64 -O2 -static -o "$T/a64_l1_$st" "$T/a64_l1_$st.c"
		MODE=mem exact_a64 "$T/a64_l1_$st" "a64_l1_$st"
		want=$((st == 64 ? 19999 : 4999))
		eq "a64 L1 misses, $st bytes a step: the profile's" "19999 $want $([ "$st" = 64 ] && echo 1 || echo 0.25)" \
			"$(hot "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_l1_$st.trace")" '.executions, .l1_misses, .walks')"
		gen_misses "a64_l1_$st" "$(block_of "$T/a64_l1_$st.plan" 19999)" \
			$((want * 98 / 100)) $((want * 102 / 100)) \
			"a64 L1 misses, $st bytes a step (the original's $want)"
	done

	# --fp-exact: every floating-point instruction follows msr fpsr, xzr
	# (fadd, fmul: 2 x 1000 executions); the counts stay exact
	cat >"$T/a64_fp.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tmov w2, #1000\n\tfmov d1, #1.5\n"
	".Lf:\n\tfadd d0, d0, d1\n\tfmul d0, d0, d1\n\tsubs w2, w2, #1\n"
	"\tb.ne .Lf\n\tmov w0, #0\n\tret\n");
EOF2
	$CC_A64 -O2 -static -o "$T/a64_fp" "$T/a64_fp.c"
	exact_a64 "$T/a64_fp" a64_fp --fp-exact
	contains "a64 --fp-exact: the summary" "floating-point instructions at T=1: 2,000, each after a reset of the status flags" "$(cat "$T/a64_fp.sum")"
	n=$(fp_reset "$T/a64_fp.c" '// f(add|mul) d0' 'msr fpsr, xzr')
	eq "a64 --fp-exact: each after the reset" "$(echo "$n" | awk '{ print ($1 > 0) ? $1 : -1, $1 }')" "$n"
	"$DBTPROF" gentest -o "$T/x.c" "$T/a64_fp.trace" >/dev/null
	eq "a64 without --fp-exact: no reset" "0" "$(grep -c 'msr fpsr' "$T/x.c")"
	# A function saves d8..d15 (callee-saved) only where its blocks may
	# name v8..v15 (any floating-point or SIMD instruction): the loop's
	# does, the integer switch's program's none (below)
	k=$(block_of "$T/a64_fp.plan" 999)
	eq "a64: the floating-point loop's function saves d8..d15" "4 4" \
		"$(awk -v f="gt_b$k:" '$0 ~ "\"" f "\\\\n\"" { in_f = 1 } in_f && /(stp|ldp) d[0-9]+, d[0-9]+/ { n[$0 ~ /stp/]++ }
			in_f && /\.size gt_b/ { exit } END { print n[1] + 0, n[0] + 0 }' "$T/a64_fp.c")"

	# a64_cmp_loop NAME INSNS: main counts x0 up to 100,000 in a loop of
	# INSNS (assembly text; x3 holds sp) and `add x0, x0, #1; cmp x0, x1;
	# b.ne`, built as $T/NAME and checked exact (exact_a64); k: the loop's
	# block (99,999 passes after the first)
	a64_cmp_loop() {
		cat >"$T/$1.c" <<EOF2
__asm__(".text\\n.globl main\\nmain:\\n\\tmov x0, #0\\n\\tmov x1, #34464\\n"
	"\\tmovk x1, #1, lsl #16\\n\\tmov x3, sp\\n.Lc:\\n$2\\tadd x0, x0, #1\\n"
	"\\tcmp x0, x1\\n\\tb.ne .Lc\\n\\tmov w0, #0\\n\\tret\\n");
EOF2
		$CC_A64 -O2 -static -o "$T/$1" "$T/$1.c"
		exact_a64 "$T/$1" "$1"
		k=$(block_of "$T/$1.plan" 99999)
	}
	# A loop closed by `cmp` and `b.ne`: its function gets one copy, the
	# pass counter's `subs` and `b.ne` in place of the two (as x86-64's,
	# nested_det above), so a pass runs the original's three instructions
	# in one translated block, the `cmp` counted as rewritten.
	a64_cmp_loop a64_cmp ""
	eq "a64: the counter in place of cmp and b.ne" "99999 3 0" \
		"$("$DBTPROF" dump --symbols "$T/a64_cmp.gen.trace" | awk -v s="gt_b${k}_body+0x0" \
			'$2 == "block" && $6 == s { n++; i = $5 } END { print n + 0, i + 0 }') $(grep -c "gt_b${k}_c1:" "$T/a64_cmp.c")"
	eq "a64: the cmp rewritten" "1 2" "$(hot "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_cmp.trace")" '.kept, .rewritten')"
	# A loop kept on one page: two blocks of 151 and 153 instructions
	# (a jump to the next instruction between them; a pass 1,216 bytes,
	# one copy) at four paddings 1 KiB apart, of which at least one would
	# put a page boundary inside the loop (QEMU would cut a block there
	# and look its second half up every pass): the padding before the
	# copies keeps it whole, each block one translated block a pass at
	# every padding.  (The original's loop on a page of its own.)
	cat >"$T/a64_fit.c" <<EOF2
__asm__(".text\\n.p2align 12\\n.globl main\\nmain:\\n\\tmov x0, #0\\n\\tmov x1, #34464\\n"
	"\\tmovk x1, #1, lsl #16\\n.Lc:\\n$(printf '\\tadd x2, x2, #1\\n%.0s' $(seq 150))\\tb .Ld\\n.Ld:\\n"
	"$(printf '\\tadd x3, x3, #1\\n%.0s' $(seq 150))"
	"\\tadd x0, x0, #1\\n\\tcmp x0, x1\\n\\tb.ne .Lc\\n\\tmov w0, #0\\n\\tret\\n");
EOF2
	$CC_A64 -O2 -static -o "$T/a64_fit" "$T/a64_fit.c"
	r=""
	for p in 0 1024 2048 3072; do
		exact_a64 "$T/a64_fit" "a64_fit$p" --pad "$p"
		r="$r $("$DBTPROF" dump --symbols "$T/a64_fit$p.gen.trace" | awk '
			$2 == "block" && $6 ~ /^gt_b/ { n[$6 " " $5]++ }
			END { for (s in n) if (n[s] >= 99999) { split(s, f, " "); print n[s], f[2], f[1] ~ /[+]0x0$/ } }' |
			sort -k2n | paste -sd' ')"
	done
	# (the second block runs as a copy after the jump: gt_b<k>_v0)
	eq "a64: a loop of 1,216 bytes on one page at any padding" \
		" 99999 151 1 99999 153 1 99999 151 1 99999 153 1 99999 151 1 99999 153 1 99999 151 1 99999 153 1" "$r"
	# The same loop with a post-indexed load (and its base set back):
	# the writebacks' base, set at the entry, drifts 8 bytes a pass, and
	# a call runs the (16,320 - 8) / 8 + 1 = 2,040 passes that keep it in
	# the data area; one copy, the counter in place of cmp and b.ne (ldr,
	# sub, add, subs, b.ne: five instructions, the original's).
	a64_cmp_loop a64_cmpw '\tldr x2, [x3], #8\n\tsub x3, x3, #8\n'
	eq "a64: a writeback's drift, one copy, the counter in place of cmp" "0 99999 5 1" \
		"$(grep -c "gt_b${k}_c1:" "$T/a64_cmpw.c") $("$DBTPROF" dump --symbols "$T/a64_cmpw.gen.trace" |
			awk -v s="gt_b${k}_body+0x0" '$2 == "block" && $6 == s { n++; i = $5 } END { print n + 0, i + 0 }') $(grep -cE "^	\{gt_b$k, .*, 2040\},$" "$T/a64_cmpw.c")"
	# With steps of 128 the base would leave the data area within 127
	# passes, fewer than a call's 256: the tail points it back every
	# pass, which copies share; the eight copies stay, the last one's
	# `cmp` and `b.ne` the counter's (ldr, sub, add, the base, subs,
	# b.ne: six instructions).
	a64_cmp_loop a64_cmpx '\tldr x2, [x3], #128\n\tsub x3, x3, #128\n'
	eq "a64: a writeback's wide drift keeps the copies, the last one's cmp the counter's" "1 6" \
		"$(grep -c "gt_b${k}_c1:" "$T/a64_cmpx.c") $("$DBTPROF" dump --symbols "$T/a64_cmpx.gen.trace" |
			awk -v s="gt_b${k}_c7+0x0" '$2 == "block" && $6 == s { i = $5 } END { print i + 0 }')"

	# Page crossings (AArch64): a bl and a b to another page, 20,000
	# times each (the first bl in _start's block, run once: whether it
	# crosses depends on what the other functions owe), and a b.cond back;
	# the bl and the b cross in every execution of the generated program
	# too (conditional branches do not: they reach 1 MiB).
	# Chains (AArch64): the chain test's program with bl; f's copy
	# follows the hotter bl in its function, the counts exact
	cat >"$T/a64_ch.c" <<'EOF2'
__asm__(".text\n.globl main\nmain:\n\tstp x29, x30, [sp, #-16]!\n\tmov w19, #30000\n\tb .La\n"
	".La:\n\tbl f\n\tsubs w19, w19, #1\n\tb.ne .La\n"
	"\tmov w19, #10000\n\tb .Lb\n.Lb:\n\tbl f\n\tsubs w19, w19, #1\n\tb.ne .Lb\n"
	"\tmov w0, #0\n\tldp x29, x30, [sp], #16\n\tret\n"
	"f:\n\tadd x0, x0, #1\n\tret\n");
EOF2
	$CC_A64 -O2 -static -o "$T/a64_cho" "$T/a64_ch.c"
	exact_a64 "$T/a64_cho" a64_ch
	contains "a64 chains: the summary" "chains (a jump or call, then a copy of its target): 1, " "$(cat "$T/a64_ch.sum")"
	f=$(block_of "$T/a64_ch.plan" 40000)
	eq "a64 chains: f's copy, f's own entry the rest" "1 1" \
		"$(grep -c "gt_b${f}_v0:" "$T/a64_ch.c") $(grep -c "^	{gt_b$f, [0-9]*, 0, 0, 10000, 0, " "$T/a64_ch.c")"

	exact_a64 "$G/aarch64/pages" a64_pg
	j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_pg.trace")
	eq "a64 page crossings in the profile" "19999 19999 true 20000 20000 true 20000 19999 false" \
		"$(jq -r '[.block_outcomes[] | select(.crossed >= 1000) | .executions, .crossed, .crosses] | join(" ")' <<<"$j")"
	ids=$(jq -r '[.block_outcomes[] | select(.crosses and .executions >= 1000) | .id] | join("|")' <<<"$j")
	eq "a64 page crossings in the generated program" "19999 19999 20000 20000" \
		"$(crossings "$T/a64_pg.gen.trace" "$ids")"
	eq "a64 --no-cross-page: none" "0 0" "$("$DBTPROF" gentest --json --no-cross-page -o "$T/x.c" "$T/a64_pg.trace" | jq .cross_page_blocks) $(grep -c 'text.gt_far' "$T/x.c")"

	# Random branches (AArch64): the LCG's two branches, which dbtprof's
	# predictor misses on about a third and a seventh of their runs, load
	# a random byte and test it before their branch (in place of the `tst`
	# and the `cmp` there).  Where a branch goes
	# is invisible in a block trace (both ways lead to the next
	# instruction), so a copy of the program sends each random branch's
	# taken way through a block of its own (gt_pad_<copy>_<cond>_<op>_<imm>):
	# each copy takes it as often as its test says (tst #m: Z 1 / (m + 1);
	# cmp #i: below i, i / 256), within 0.03 of some 2,000 to 7,000 runs.
	exact_a64 "$G/aarch64/random" a64_rnd
	jq -e '.mispredict_blocks >= 2' >/dev/null <<<"$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_rnd.trace")" ||
		fail "a64 random: expected two or more random branches"
	eq "a64 random tests in place of tst and cmp" "folded 2" "$(rnd_kinds "$T/a64_rnd.trace" 2)"
	awk '/"\\t(tst|cmp) w[0-9]+, #[0-9]+\\n"/ { t = $0; print; next }
	t != "" && match($0, /"\\tb\.[a-z][a-z] \.Lg[0-9]+_[0-9]+\\t/) {
		split(substr($0, RSTART + 3), a, /[ \\]/)
		id = a[2]; sub(/^\.Lg/, "", id); sub(/_.*/, "", id)
		match(t, /(tst|cmp) w[0-9]+, #[0-9]+/)
		split(substr(t, RSTART, RLENGTH), o, /[ #]/)
		pad = "gt_pad_" id "_" substr(a[1], 3) "_" o[1] "_" o[4]
		printf "\t\"\\t%s %s\\n\\tb %s\\n\\t.globl %s\\n%s:\\n\\tb %s\\n\"\n", a[1], pad, a[2], pad, pad, a[2]
		t = ""; next }
	t != "" && /^\t"\.Lg[0-9]+_[0-9]+:\\n"$/ { print; next } # a folded test
	{ t = ""; print }' "$T/a64_rnd.c" >"$T/a64_rndp.c"
	$CC_A64 -static -O2 -pthread -o "$T/a64_rndp" "$T/a64_rndp.c"
	"$DBTPROF" record -q -m blocks -o "$T/a64_rndp.trace" -- "$T/a64_rndp" >/dev/null
	"$DBTPROF" dump --symbols "$T/a64_rndp.trace" | awk '
		$2 == "block" && $6 ~ /\+0x0$/ { s = $6; sub(/\+0x0$/, "", s); n[s]++ }
		END {
			for (s in n) {
				if (s !~ /^gt_pad_/)
					continue
				split(s, p, "_"); k = int(p[3] / 16); c = p[3] % 16
				runs = n[c ? "gt_b" k "_c" c : "gt_b" k "_body"]
				cc = p[4]; i = p[6]
				if (p[5] == "tst")
					e = (cc == "eq" || cc == "le") ? 1 / (i + 1) : 1 - 1 / (i + 1)
				else if (cc == "lo" || cc == "cc" || cc == "lt")
					e = i / 256
				else if (cc == "hi")
					e = 1 - (i + 1) / 256
				else if (cc == "ls")
					e = (i + 1) / 256
				else
					e = 1 - i / 256
				d = n[s] / runs - e
				print s, n[s], runs, e, (d < 0 ? -d : d) <= 0.03 ? "ok" : "off"
			}
		}' >"$T/a64_rnd.rates"
	eq "a64 random: copies that take their way as often as their test says" \
		"$(grep -c . "$T/a64_rnd.rates") 0" \
		"$(grep -c ' ok$' "$T/a64_rnd.rates") $(grep -c -v ' ok$' "$T/a64_rnd.rates")"
	[ -s "$T/a64_rnd.rates" ] || fail "a64 random: no random branch measured"

	# Random indirect targets (AArch64): a computed goto (br) to eight
	# labels and a call (blr) of one of two functions on pseudo-random
	# numbers go through tables of targets as on x86-64, the counts exact,
	# each copy's pads and next instruction on one page, and dbtprof's
	# predictor missing the generated program's branches about as often
	# as the original's.
	cat >"$T/a64_sw.c" <<'EOF2'
#include <stdio.h>
static unsigned f(unsigned a) { return a + 1; }
static unsigned g(unsigned a) { return a ^ 3; }
static unsigned (*volatile fp[2])(unsigned) = {f, g};
int main(void)
{
	static void *const lab[8] = {&&l0, &&l1, &&l2, &&l3,
				     &&l4, &&l5, &&l6, &&l7};
	unsigned x = 1, acc = 0;
	for (int i = 0; i < 20000; i++) {
		x = x * 1103515245 + 12345;
		goto *lab[(x >> 16) & 7];
	l0: acc += 3; goto out;
	l1: acc ^= x; goto out;
	l2: acc = acc * 7 + 1; goto out;
	l3: acc -= x >> 3; goto out;
	l4: acc = (acc << 3) | (acc >> 29); goto out;
	l5: acc += x & 0xff; goto out;
	l6: acc = ~acc; goto out;
	l7: acc ^= acc >> 5;
	out:
		acc = fp[(x >> 24) & 1](acc);
	}
	printf("%u\n", acc);
	return 0;
}
EOF2
	$CC_A64 -O2 -static -o "$T/a64_swo" "$T/a64_sw.c"
	exact_a64 "$T/a64_swo" a64_sw
	exact_a64 "$T/a64_swo" a64_swd --no-mispredict
	j=$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_sw.trace")
	eq "a64 switch: br and blr through tables" "blr br" "$(awk '
		/"\\tldr x[0-9]+, \[x[0-9]+, #[0-9]+\]\\n"$/ { t = 1; next }
		t && match($0, /\\t(br|blr) /) { print substr($0, RSTART + 2, RLENGTH - 3) }
		{ t = 0 }' "$T/a64_sw.c" | sort -u | paste -sd' ')"
	eq "a64 switch: pads on one page" 0 "$(pads_split "$T/a64_sw" 4)"
	want=$(jq '.profiles[0].branches.indirect_mispredicted' <<<"$j")
	got=$(($(ind "$T/a64_sw.gen.trace") - $(ind "$T/a64_swd.gen.trace")))
	[ $((got * 3)) -gt $((want * 2)) ] && [ $((got * 3)) -lt $((want * 4)) ] ||
		fail "a64 switch: the predictor misses $got more indirect branches in the generated program, the profile $want"
	checks=$((checks + 1))
	# A function's tables within 32 KiB of the first (16 of them) are
	# reached from a register set at its entry: two helpers an execution
	# beyond the rewriter's adr; the 17th makes every table of the
	# function come from x28, three.  N indirect branches in a row
	# (one sequence, one copy), each to one of two blocks by a bit of an
	# LCG, the counts exact either way.
	for n in 16 17; do
		{
			printf '\t.text\n\t.globl _start\n_start:\n\tmov w2, #20000\n\tmov w3, #1\n'
			printf '\tmovz w4, #0x4e6d\n\tmovk w4, #0x41c6, lsl #16\n\tadr x10, tab\n\tb 1f\n'
			printf '1:\tmul w3, w3, w4\n\tadd w3, w3, #3039\n'
			for i in $(seq 0 $((n - 1))); do
				printf '\tubfx w6, w3, #%d, #1\n\tadd x6, x6, #%d\n' $((10 + i)) $((2 * i))
				printf '\tldr x7, [x10, x6, lsl #3]\n\tbr x7\n'
				printf 'd%d_0:\tadd w5, w5, #1\n\tb d%d_n\nd%d_1:\teor w5, w5, w3\n\tb d%d_n\nd%d_n:\n' $i $i $i $i $i
			done
			printf '\tsubs w2, w2, #1\n\tb.ne 1b\n\tmov x0, #0\n\tmov x8, #93\n\tsvc #0\n'
			printf '\t.section .rodata\n\t.p2align 3\ntab:\n'
			for i in $(seq 0 $((n - 1))); do printf '\t.quad d%d_0, d%d_1\n' $i $i; done
		} >"$T/a64_d$n.S"
		$CC_A64 -nostdlib -static -o "$T/a64_d${n}o" "$T/a64_d$n.S"
		exact_a64 "$T/a64_d${n}o" "a64_d$n"
	done
	eq "a64 tables from a register: helpers, random blocks" "3 16" "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_d16.trace" |
		jq -r '[.block_outcomes[] | select(.random) | .helpers] | "\(unique | join(",")) \(length)"')"
	eq "a64 tables beyond its reach: from x28" "4 17" "$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_d17.trace" |
		jq -r '[.block_outcomes[] | select(.random) | .helpers] | "\(unique | join(",")) \(length)"')"
	# A switch's jump (the target computed by an add from the case
	# number, as gcc's tables are read): the add becomes the adr the
	# branch needs (--no-mispredict: no helper left), or the table's
	# entry overwrites what it computed (two helpers), the counts exact.
	cat >"$T/a64_jt.S" <<'EOF2'
	.text
	.globl _start
_start:
	mov	w2, #20000
	mov	w3, #1
	movz	w4, #0x4e6d
	movk	w4, #0x41c6, lsl #16
	b	1f
1:	mul	w3, w3, w4
	add	w3, w3, #3039
	ubfx	w6, w3, #16, #2
	adr	x9, 5f
	add	x7, x9, w6, uxtw #3
	br	x7
5:	add	w5, w5, #1
	b	6f
	eor	w5, w5, w3
	b	6f
	sub	w5, w5, #3
	b	6f
	add	w5, w5, w3
	b	6f
6:	subs	w2, w2, #1
	b.ne	1b
	mov	x0, #0
	mov	x8, #93
	svc	#0
EOF2
	$CC_A64 -nostdlib -static -o "$T/a64_jto" "$T/a64_jt.S"
	exact_a64 "$T/a64_jto" a64_jt
	exact_a64 "$T/a64_jto" a64_jtd --no-mispredict
	eq "a64: an integer program's functions save no d register" 0 \
		"$(grep -c 'stp d8, d9' "$T/a64_jt.c")"
	eq "a64: no function sets FPCR (nothing else does)" 0 \
		"$(grep -c 'msr fpcr' "$T/a64_jt.c")"
	# jt NAME INSNS RANDOM [OPTION]: kept, rewritten, helpers of the
	# jump's block (of INSNS instructions) in NAME's program
	jt() { "$DBTPROF" gentest --json ${4:-} -o "$T/x.c" "$T/$1.trace" |
		jq -r --argjson n "$2" --argjson r "$3" '.block_outcomes[] | select(.executions == 20000 and .kept + .rewritten == $n and .random == $r) | "\(.kept) \(.rewritten) \(.helpers)"'; }
	eq "a64 switch's add: the table's entry (kept, rewritten, helpers)" "4 2 2" "$(jt a64_jt 6 true)"
	eq "a64 switch's add: the adr" "4 2 0" "$(jt a64_jt 6 false --no-mispredict)"
	contains "a64 switch's add: the adr in its place" 'adr x7, .Lg' "$(grep 'was add x7, x9, w6, uxtw #3' "$T/a64_jtd.c")"
	contains "a64 switch's add: the table's entry below" "add x7, x9, w6, uxtw #3: the table's entry below" "$(cat "$T/a64_jt.c")"
	# The same switch with its case number loaded from a table of bytes
	# (gcc's `ldrb w2, [x21, w2, uxtw]`): that load loads the random
	# byte, the adr points at the copy's table and the add loads its
	# entry: no helper left, the counts exact.
	sed -e 's/^\tadr\tx9, 5f$/\tldrb\tw6, [x11, w6, uxtw]\n&/' \
		-e 's/^\tb\t1f$/\tadr\tx11, 7f\n&/' "$T/a64_jt.S" >"$T/a64_jl.S"
	printf '\t.section .rodata\n7:\t.byte\t3, 0, 2, 1\n' >>"$T/a64_jl.S"
	$CC_A64 -nostdlib -static -o "$T/a64_jlo" "$T/a64_jl.S"
	exact_a64 "$T/a64_jlo" a64_jl
	exact_a64 "$T/a64_jlo" a64_jld --no-mispredict
	eq "a64 switch's load: the random byte (kept, rewritten, helpers)" "3 4 0" "$(jt a64_jl 7 true)"
	eq "a64 switch's load: kept without a table" "4 3 0" "$(jt a64_jl 7 false --no-mispredict)"
	eq "a64 switch's load: its parts in the original's places" 3 \
		"$(grep -oE 'ldrb w6, \[x[0-9]+, #[0-9]+\]\\t// was ldrb w6, \[x11, w6, uxtw\]|add x9, x28, #[0-9]+, lsl #12\\t// was adr x9|ldr x7, \[x9, x6, lsl #3\]\\t// was add x7, x9, w6, uxtw #3' "$T/a64_jl.c" | sed 's/.*was //' | sort -u | wc -l)"
	eq "a64 switch's load: pads on one page" 0 "$(pads_split "$T/a64_jl" 4)"
	# its random bytes' pointer taken back into its window at the entry
	# only, a call at most 61,440 passes (a byte each) of its copies
	eq "a64 random bytes: the window at the entry" 1 "$(grep -c 'and x[0-9]*, x[0-9]*, #0xfffffffffffeffff' "$T/a64_jl.c")"
	eq "a64 random bytes: passes a call" 1 "$(grep -cE '^	\{gt_b[0-9]+, .*, (61440|122880|245760|491520|983040)\},$' "$T/a64_jl.c")"
	# The same switch at the end of its loop (each case counts down and
	# branches back to it; its add scales by 4, the case bytes 0, 4, 8,
	# 12), with --no-mispredict: its function, one copy, counts its
	# passes with the switch itself, as x86-64's jumps do (sw_det
	# above): the load takes the next of the passes' bytes, its base is
	# the function's start and the add, kept, computes the start or, at
	# the last pass, the exit; a pass runs the original's seven
	# instructions, one load among them, in one translated block, no
	# tail after it; the counts exact.
	{
		sed -e '/^5:/,$d' -e 's/uxtw #3$/uxtw #2/' "$T/a64_jl.S"
		printf '5:'
		for c in 'add\tw5, w5, #1' 'eor\tw5, w5, w3' 'sub\tw5, w5, #3' 'add\tw5, w5, w3'; do
			printf "\\t$c\\n\\tsubs\\tw2, w2, #1\\n\\tb.ne\\t1b\\n\\tb\\t9f\\n"
		done
		printf '9:\tmov\tx0, #0\n\tmov\tx8, #93\n\tsvc\t#0\n\t.section .rodata\n7:\t.byte\t12, 0, 8, 4\n'
	} >"$T/a64_jc.S"
	$CC_A64 -nostdlib -static -o "$T/a64_jco" "$T/a64_jc.S"
	exact_a64 "$T/a64_jco" a64_jc --no-mispredict
	k=$(block_of "$T/a64_jc.plan" 20000)
	# (calls of 256 passes, the driver's least, not split: the exit,
	# after the seven, runs 79 times)
	eq "a64 switch counts the passes: blocks of a pass, its instructions, calls, copies, tails" "20000 7 79 0 0" \
		"$("$DBTPROF" dump --symbols "$T/a64_jc.gen.trace" | awk -v s="gt_b${k}_body+0x0" -v x="gt_b${k}_body+0x1c" \
			'$2 == "block" && $6 == s { n++; i = $5 } $2 == "block" && $6 == x { c++ } END { print n + 0, i + 0, c + 0 }') $(grep -c "gt_b${k}_c1:" "$T/a64_jc.c") $(grep -c "b.ne gt_b${k}_body" "$T/a64_jc.c")"
	eq "a64 switch counts the passes: kept, rewritten, helpers" "4 3 0" "$(jt a64_jc 7 false --no-mispredict)"
	contains "a64 switch counts the passes: the add kept" "add x7, x9, w6, uxtw #2\\n" "$(grep -A2 "adr x9, gt_b${k}_body" "$T/a64_jc.c")"
	# scaled by 16 (cases apart by 16, the bytes 3, 0, 2, 1), the exit
	# could fall between two targets: copies and a tail, as before
	sed -e 's/uxtw #2$/uxtw #4/' -e 's/12, 0, 8, 4$/3, 0, 2, 1/' "$T/a64_jc.S" >"$T/a64_jc4.S"
	$CC_A64 -nostdlib -static -o "$T/a64_jc4o" "$T/a64_jc4.S"
	exact_a64 "$T/a64_jc4o" a64_jc4 --no-mispredict
	k=$(block_of "$T/a64_jc4.plan" 20000)
	eq "a64 switch scaled by 16: copies and a tail" "1 1" \
		"$(grep -c "gt_b${k}_c1:" "$T/a64_jc4.c") $(grep -c "b.ne gt_b${k}_body" "$T/a64_jc4.c")"

	# sign-extended (reach 127 instructions) after 130 more in its block
	# (kept, as encodings): the exit out of a byte's reach, copies and a
	# tail
	sed -e 's/uxtw #2$/sxtb #2/' \
		-e "s/^1:\tmul\tw3, w3, w4\$/&$(printf '\\n\\tadd\\tw12, w12, #1%.0s' $(seq 130))/" \
		"$T/a64_jc.S" >"$T/a64_jcf.S"
	$CC_A64 -nostdlib -static -o "$T/a64_jcfo" "$T/a64_jcf.S"
	exact_a64 "$T/a64_jcfo" a64_jcf --no-mispredict
	k=$(block_of "$T/a64_jcf.plan" 20000)
	eq "a64 switch 137 instructions from its start, sign-extended: copies and a tail" "1 1 137" \
		"$(grep -c "gt_b${k}_c1:" "$T/a64_jcf.c") $(grep -c "b.ne gt_b${k}_body" "$T/a64_jcf.c") $("$DBTPROF" dump --blocks "$T/a64_jcf.trace" | awk '$1 == "block" && $5 > 100 { print $5 }')"

	# Pre- and post-indexed accesses: those whose steps are multiples
	# of 4, the most, address a register of the function's own that the
	# entry and each pass point at the middle of the data area, no
	# helper; the pairs (16) and the byte (1) keep their base register's
	# add; the counts exact.
	cat >"$T/a64_wb.S" <<'EOF2'
	.text
	.globl _start
_start:
	mov	w2, #20000
	adr	x19, buf
	add	x20, x19, #32768
	add	x21, x19, #16384
	add	x22, x19, #8192
1:	str	w2, [x19], #4
	ldr	w3, [x19, #-4]!
	stp	x2, x3, [x20, #-16]!
	ldp	x4, x5, [x20], #16
	ldrb	w6, [x21], #1
	sub	x21, x21, #1
	str	w3, [x22], #4
	sub	x22, x22, #4
	subs	w2, w2, #1
	b.ne	1b
	mov	x0, #0
	mov	x8, #93
	svc	#0
	.bss
	.p2align 4
buf:	.zero	65536
EOF2
	$CC_A64 -nostdlib -static -o "$T/a64_wbo" "$T/a64_wb.S"
	exact_a64 "$T/a64_wbo" a64_wb
	eq "a64 writebacks: helpers left (the pairs', the byte's)" 3 \
		"$("$DBTPROF" gentest --json -o "$T/x.c" "$T/a64_wb.trace" |
			jq '.block_outcomes[] | select(.executions == 19999) | .helpers')"
	wr=$(grep -oE 'str w2, \[x[0-9]+\], #4\\t// was str w2, \[x19\], #4' "$T/a64_wb.c" | head -1 | sed 's/^str w2, \[x\([0-9]*\)\].*/\1/')
	eq "a64 writebacks: on their register" 3 \
		"$(grep -oE "(str w2, \[x$wr\], #4|ldr w3, \[x$wr, #-4\]!|str w3, \[x$wr\], #4)\\\\t// was" "$T/a64_wb.c" | sort -u | wc -l)"
	# (in two functions, the start's block runs the first pass; the
	# register drifts, 16 bytes a pass of the loop's 4 copies)
	eq "a64 writebacks: the register at the entry only" 2 \
		"$(grep -c "add x$wr, x28, #4, lsl #12" "$T/a64_wb.c")"

	# A pthreads C program (glibc: exclusives, LSE atomics, mrs
	# tpidr_el0, dc zva, PLT branches, svc) built for AArch64: main and
	# three workers.  The plan equals the profile; the program compiles
	# without warnings and runs its threads to completion under QEMU.
	mt=$G/c-aarch64/mt
	"$DBTPROF" record -q -m blocks -o "$T/a64_mt.trace" -- "$mt"
	j=$("$DBTPROF" gentest --json -o "$T/a64_mt.c" "$T/a64_mt.trace")
	eq "a64 mt nothing skipped" 0 "$(jq '.skipped' <<<"$j")"
	nth=$(jq '[.groups[].sizes[0]] | add' <<<"$j")
	eq "a64 mt threads" 4 "$nth"
	$CC_A64 -static $CFLAGS_GT "$T/a64_mt.c" -o "$T/a64_mt" 2>"$T/a64_mt.cc"
	eq "a64 mt compiles without warnings" "" "$(cat "$T/a64_mt.cc")"
	qemu-aarch64 "$T/a64_mt" --counts >"$T/a64_mt.plan"
	eq "a64 mt plan = profile" "$(blockcounts "$T/a64_mt.trace")" \
		"$(awk '{ print $2, $3 }' "$T/a64_mt.plan" | sort)"
	out=$(qemu-aarch64 "$T/a64_mt")
	contains "a64 mt runs" "4 threads, $(awk '{ s += $3 } END { print s }' "$T/a64_mt.plan") block executions, scale 1" "$out"
	# the marker loop block, entered 50000 - 1 + (1 + 2 + 3) x 100000 -
	# 3 = 649996 times, run as often by the generated program
	maddr=$("$DBTPROF" dump --symbols "$T/a64_mt.trace" | awk '$2 == "block" && $6 == "mt_marker+0x0" { print $4; exit }')
	eq "a64 mt marker" 649996 "$(awk -v a="$maddr" '$2 == a { print $3 }' "$T/a64_mt.plan")"
	"$DBTPROF" record -q -m blocks -o "$T/a64_mt.gen.trace" -- "$T/a64_mt" >/dev/null
	eq "a64 mt marker measured" 649996 "$(measured "$T/a64_mt.gen.trace" |
		awk -v k="$(awk -v a="$maddr" '$2 == a { print $1 }' "$T/a64_mt.plan")" '$1 == k { print $2 }')"
	# and every one of its (some 2,000) blocks, glibc's included, runs
	# exactly as planned
	eq "a64 mt measured = plan" "$(awk '$3 > 0 { print $1, $3 }' "$T/a64_mt.plan" | sort)" \
		"$(measured "$T/a64_mt.gen.trace")"

	# the naive baseline of an AArch64 profile
	"$DBTPROF" gentest --naive --blocks 5 --seed 7 -o "$T/a64_naive.c" "$T/a64_threads.trace" >"$T/a64_naive.sum"
	contains "a64 naive blocks" "5 emitted" "$(cat "$T/a64_naive.sum")"
	$CC_A64 -static $CFLAGS_GT "$T/a64_naive.c" -o "$T/a64_naive"
	contains "a64 naive runs" "1 threads" "$(qemu-aarch64 "$T/a64_naive")"

	# validate picks qemu-aarch64 for an AArch64 generated program
	j=$("$DBTPROF" gentest validate --json --runs 1 --original "$G/aarch64/loop" --generated "$T/a64_loop")
	eq "a64 validate configs" "qemu qemu-nochain qemu-singlestep" "$(jq -r '[.configs[].name] | join(" ")' <<<"$j")"
	eq "a64 validate commands" "qemu-aarch64,qemu-aarch64 -d nochain,qemu-aarch64 -singlestep" \
		"$(jq -r '[.configs[].command] | join(",")' <<<"$j")"
	eq "a64 validate baseline" "1 1 0" "$(jq -r '.configs[0] | [.original_ratio, .generated_ratio, .error] | join(" ")' <<<"$j")"
	err=$("$DBTPROF" gentest validate --config vg-none --original true --generated "$T/a64_loop" 2>&1 | head -1 || true)
	eq "a64 validate no valgrind default" "dbtprof gentest validate: --config vg-none: no default configuration of that name for AArch64 programs" "$err"

	# the reads above, for AArch64: svc reads /dev/zero as much
	rd_check "$CC_A64" qemu-aarch64 rda

	# The worker program above, built for AArch64 and profiled at 1, 2
	# and 4 workers: the same model, and its 8-thread run executes the
	# loop block 999 x 8 + 200000 = 207992 times.
	threads124 "$CC_A64" wa "$T/w.c"
	j=$("$DBTPROF" gentest --json -o "$T/wat.c" "$T/wa1.trace:1" "$T/wa2.trace:2" "$T/wa4.trace:4")
	eq "a64 w main" "0 1 1 1 1" "$(jq -r '.groups[0] | [.alpha, .beta, .sizes[]] | join(" ")' <<<"$j")"
	eq "a64 w workers" "1 0 1 2 4" "$(jq -r '.groups[1] | [.alpha, .beta, .sizes[]] | join(" ")' <<<"$j")"
	eq "a64 w loop" "999 200000" "$(jq -r '.groups[1].blocks[] | select(.theta == 999) | "\(.theta) \(.delta)"' <<<"$j")"
	$CC_A64 -static $CFLAGS_GT "$T/wat.c" -o "$T/wat"
	contains "a64 w 8 threads" "9 threads" "$(qemu-aarch64 "$T/wat" --threads 8)"
	addr=$(jq -r '.groups[1].blocks[] | select(.theta == 999) | .vaddr' <<<"$j")
	eq "a64 w loop at 8" 207992 "$(qemu-aarch64 "$T/wat" --counts --threads 8 | awk -v a="$addr" '$2 == a { print $3 }')"
else
	echo "skipped: AArch64 generated programs (no $CC_A64 or qemu-aarch64)"
fi

# validate: the table's shape and the baseline's ratios (times are not
# checked; the arithmetic is in the unit test); failing runs; usage.
j=$("$DBTPROF" gentest validate --json --runs 2 --config "a=env" \
	--config "q=qemu-x86_64" --original "$G/x86_64/loop" --generated "$T/loop")
eq "validate configs" "a q" "$(jq -r '[.configs[].name] | join(" ")' <<<"$j")"
eq "validate baseline" "1 1 0 0 0" "$(jq -r '.configs[0] | [.original_ratio, .generated_ratio, .error, .round_errors[]] | join(" ")' <<<"$j")"
eq "validate fields" "true" "$(jq '.speedup > 0 and .mean_error >= 0 and (.configs[1].original_s > 0)' <<<"$j")"
# each round's error from that round's times (0 counts as a microsecond;
# the JSON's times have six digits)
eq "validate round errors" "true true" "$(jq -r 'def p: if . > 0 then . else 1e-6 end;
	.configs as $c | [range(2) as $r |
	(($c[1].original_runs[$r] | p) / ($c[0].original_runs[$r] | p)) as $o |
	(($c[1].generated_runs[$r] | p) / ($c[0].generated_runs[$r] | p)) as $g |
	((($g - $o) | fabs) / $o - $c[1].round_errors[$r] | fabs) < 1e-4] | join(" ")' <<<"$j")"
contains "validate text: the rounds' errors" "rounds' errors" \
	"$("$DBTPROF" gentest validate --runs 1 --config "a=env" --original true --generated true)"
# CPU time (the default) against wall time: sleeping costs no CPU.
# runs go in rounds over the configurations, original then generated
"$DBTPROF" gentest validate --runs 2 --config "a=sh -c 'echo a\$2 >>$T/order; exec \"\$@\"' x" \
	--config "b=sh -c 'echo b\$2 >>$T/order; exec \"\$@\"' x" --original "true o" --generated "true g" >/dev/null
eq "validate rounds" "ao ag bo bg ao ag bo bg" "$(paste -sd' ' "$T/order")"
# a program named without a directory is found in PATH before the DBT
# runs it (QEMU's user mode does not search PATH), by the name found,
# symbolic links not followed: a DBT that runs only a path
mkdir -p "$T/bin" && ln -sf "$(type -P true)" "$T/bin/mytrue"
PATH="$T/bin:$PATH" "$DBTPROF" gentest validate --runs 1 \
	--config "a=sh -c 'case \$1 in */*) echo \$1 >>$T/argv0; exec \"\$@\";; esac; exit 9' x" \
	--original mytrue --generated "$T/bin/mytrue" >/dev/null
eq "validate: the program found in PATH" "$T/bin/mytrue $T/bin/mytrue" "$(paste -sd' ' "$T/argv0")"
# the runs' environment: the one `dbtprof record` gives a guest (the
# profile's), the caller's with --keep-env, -e setting a variable
envcfg="a=sh -c 'echo \"\$PATH \$LC_ALL \${FOO-unset}\" >>$T/env; exec \"\$@\"' x"
FOO=x LC_ALL=C.UTF-8 "$DBTPROF" gentest validate --runs 1 --config "$envcfg" \
	--original true --generated true >/dev/null
eq "validate env: record's" "/usr/local/bin:/usr/bin:/bin C unset" "$(sort -u "$T/env")"
rm "$T/env"
FOO=x LC_ALL=C.UTF-8 "$DBTPROF" gentest validate --runs 1 --keep-env --config "$envcfg" \
	--original true --generated true >/dev/null
eq "validate env: --keep-env" "$PATH C.UTF-8 x" "$(sort -u "$T/env")"
rm "$T/env"
FOO=x "$DBTPROF" gentest validate --runs 1 -e FOO=y --env LC_ALL=POSIX --config "$envcfg" \
	--original true --generated true >/dev/null
eq "validate env: -e" "/usr/local/bin:/usr/bin:/bin POSIX y" "$(sort -u "$T/env")"
eq "validate env: bad -e" 2 "$(status "$DBTPROF" gentest validate -e FOO --original true --generated true)"
j=$("$DBTPROF" gentest validate --json --runs 1 --config "a=env" --original "sleep 0.3" --generated true)
eq "validate cpu time" "cpu true" "$(jq -r '[.measure, (.configs[0].original_s < 0.1)] | join(" ")' <<<"$j")"
j=$("$DBTPROF" gentest validate --json --runs 1 --measure wall --config "a=env" --original "sleep 0.3" --generated true)
eq "validate wall time" "wall true" "$(jq -r '[.measure, (.configs[0].original_s >= 0.3)] | join(" ")' <<<"$j")"
# --measure instructions: the user-mode instructions of a run and of all
# it starts, by the hardware counter, or by cachegrind where there is
# none.  loop runs exactly 20004 (its expected.txt), which is what
# cachegrind counts of `env loop` (a process replaced by execve counts
# from the new program on there; the counter counts env too); the shell
# that runs it twice adds its own to both runs'.  Counts are exact
# integers in the JSON.
j=$("$DBTPROF" gentest validate --json --runs 2 --measure instructions --config "a=env" \
	--original "$G/x86_64/loop" --generated "sh -c '$G/x86_64/loop; $G/x86_64/loop'" 2>"$T/ir.err") ||
	fail "validate instructions: $(cat "$T/ir.err")"
ctr=$(jq -r .counter <<<"$j")
case $ctr in
cachegrind)
	eq "validate instructions: loop by cachegrind" "20004 20004 20004" \
		"$(jq -r '.configs[0] | [.original_count, .original_runs[]] | join(" ")' <<<"$j")"
	contains "validate instructions: the note" "cachegrind counts them" "$(cat "$T/ir.err")"
	;;
perf)
	# (the counter counts env too, before it becomes loop)
	eq "validate instructions: loop by the counter" true \
		"$(jq '.configs[0] | [.original_count, .original_runs[]] | all(. >= 20004 and . < 10000000)' <<<"$j")"
	;;
*) fail "validate instructions: counter '$ctr'" ;;
esac
eq "validate instructions: children counted" "instructions true true" \
	"$(jq -r '[.measure, (.configs[0] | .generated_count > 40008, (.generated_runs | all(. == floor)))] | join(" ")' <<<"$j")"
contains "validate instructions: text" "user-mode instructions, counted by" \
	"$("$DBTPROF" gentest validate --runs 1 --measure instructions --config "a=env" \
		--original "$G/x86_64/loop" --generated "$G/x86_64/loop" 2>/dev/null)"
if [ "$ctr" = cachegrind ]; then
	# cachegrind cannot count what runs under Valgrind itself; nor is there
	# a cycle counter to fall back on
	err=$("$DBTPROF" gentest validate --runs 1 --measure instructions --config "a=env" --config vg-none \
		--original true --generated true 2>&1 || true)
	contains "validate instructions: no Valgrind configuration" "cannot run the Valgrind configuration vg-none" "$err"
	err=$("$DBTPROF" gentest validate --runs 1 --measure cycles --config "a=env" \
		--original true --generated true 2>&1 || true)
	contains "validate cycles: no counter" "dbtprof: validate: --measure cycles: no cycle counter here" "$err"
	mkdir -p "$T/cgtmp"
	err=$(TMPDIR=$T/cgtmp "$DBTPROF" gentest validate --runs 1 --measure instructions --config "a=env" \
		--original false --generated true 2>&1 || true)
	contains "validate instructions: failing run" "'env false' under cachegrind exited with 1" "$err"
	eq "validate instructions: nothing left behind" "" "$(ls -A "$T/cgtmp")"
	# a TMPDIR that would need quoting: cachegrind's files go to /tmp
	mkdir -p "$T/cg tmp"
	j=$(TMPDIR="$T/cg tmp" "$DBTPROF" gentest validate --json --runs 1 --measure instructions \
		--config "a=env" --original "$G/x86_64/loop" --generated "$G/x86_64/loop" 2>/dev/null)
	eq "validate instructions: TMPDIR with a blank" 20004 "$(jq .configs[0].original_count <<<"$j")"
	eq "validate instructions: nothing left there" "" "$(ls -A "$T/cg tmp")"
else
	j=$("$DBTPROF" gentest validate --json --runs 1 --measure cycles --config "a=env" \
		--original "$G/x86_64/loop" --generated "$G/x86_64/loop")
	eq "validate cycles: counted" "cycles perf true" \
		"$(jq -r '[.measure, .counter, (.configs[0].original_count > 0)] | join(" ")' <<<"$j")"
fi
# A program whose runs under one configuration spread by more than 10%
# (its second run twice as long as its first): a warning naming it and
# its range, max_spread in the JSON; steady runs, none.
j=$("$DBTPROF" gentest validate --json --runs 2 --measure wall --config "a=env" --original "sleep 0.3" \
	--generated "sh -c 'if [ -e $T/once ]; then sleep 0.6; else : >$T/once; sleep 0.3; fi'" 2>"$T/noisy.err")
contains "validate noisy: the warning" "dbtprof: warning: one program's runs spread by" "$(cat "$T/noisy.err")"
contains "validate noisy: which" "(the generated program under a: 0.3" "$(cat "$T/noisy.err")"
eq "validate noisy: max_spread" true "$(jq '.max_spread > 0.5 and .max_spread < 1.5' <<<"$j")"
j=$("$DBTPROF" gentest validate --json --runs 2 --measure wall --config "a=env" --original "sleep 0.3" \
	--generated "sleep 0.3" 2>"$T/steady.err")
eq "validate steady: no warning" "" "$(cat "$T/steady.err")"
eq "validate steady: max_spread" true "$(jq '.max_spread < 0.1' <<<"$j")"
# --cpus: both programs run on those CPUs only (grep sees its own list;
# the first two CPUs this test may use)
cpus=$(awk '/^Cpus_allowed_list/ { n = split($2, r, ",")
	for (i = 1; i <= n; i++) { m = split(r[i], b, "-")
		for (c = b[1] + 0; c <= (m > 1 ? b[2] : b[1]) + 0; c++) print c } }' /proc/self/status)
c0=$(sed -n 1p <<<"$cpus")
c1=$(sed -n 2p <<<"$cpus")
j=$("$DBTPROF" gentest validate --json --runs 1 --cpus "$c0" --config "a=env" \
	--original "grep -q ^Cpus_allowed_list:.$c0$ /proc/self/status" --generated true)
eq "validate cpus" "$c0" "$(jq -r .cpus <<<"$j")"
if [ -n "$c1" ]; then
	eq "validate cpus pin" 1 "$(status "$DBTPROF" gentest validate --runs 1 --cpus "$c0,$c1" --config "a=env" \
		--original "grep -q ^Cpus_allowed_list:.$c0$ /proc/self/status" --generated true)"
fi
for c in x 1- ,0 0, 99999999999 ''; do
	eq "validate bad cpus '$c'" 2 "$(status "$DBTPROF" gentest validate --cpus "$c" --original true --generated true)"
done
err=$("$DBTPROF" gentest validate --cpus 1000 --original true --generated true 2>&1 | head -1 || true)
eq "validate unavailable cpus" "dbtprof gentest validate: --cpus 1000: none of them is available here" "$err"
# every run's time is kept; a configuration's time is their median, or
# with --stat min their least
printf 'i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done\n' >"$T/burn.sh"
j=$("$DBTPROF" gentest validate --json --runs 5 --config "a=env" --config "b=nice" \
	--original "sh $T/burn.sh" --generated true)
eq "validate runs kept" "median 5 5 5 5" "$(jq -r '[.stat, (.configs[] | (.original_runs, .generated_runs) | length)] | join(" ")' <<<"$j")"
eq "validate median of runs" "true true" "$(jq -r '[.configs[] | .original_s == (.original_runs | sort | .[2]) and .generated_s == (.generated_runs | sort | .[2])] | join(" ")' <<<"$j")"
j=$("$DBTPROF" gentest validate --json --runs 3 --stat min --config "a=env" --config "b=nice" \
	--original "sh $T/burn.sh" --generated true)
eq "validate least of runs" "min true true" "$(jq -r '[.stat, (.configs[] | .original_s == (.original_runs | min) and .generated_s == (.generated_runs | min))] | join(" ")' <<<"$j")"
# --fixed: its time under each configuration is taken off both programs'
# before the ratios and errors (each round's too); the speedup stays on
# whole times
# (wall time of sleeps, which a busy machine barely moves, where CPU
# time of shell loops once let the fixed part catch up with the
# programs: configuration b starts as a DBT does, at a cost of its own,
# 0.1 s, that the ratios then leave out; under b the fixed part takes
# 0.11 s of the programs' 0.2 s)
j=$("$DBTPROF" gentest validate --json --runs 3 --stat min --measure wall --config "a=env" \
	--config "b=sh -c 'sleep 0.1; exec \"\$@\"' x" \
	--original "sleep 0.1" --generated "sleep 0.1" --fixed "sleep 0.01" \
	2>"$T/fixed.err") || fail "validate --fixed: $(cat "$T/fixed.err")"
contains "validate fixed: b's above half" "fixed part is" "$(cat "$T/fixed.err")"
eq "validate fixed fields" "sleep 0.01 3 3" "$(jq -r '[.fixed, (.configs[] | .fixed_runs | length)] | join(" ")' <<<"$j")"
eq "validate fixed takes off" "true" "$(jq -r '.configs[1].original_ratio < .configs[1].original_s / .configs[0].original_s - 0.3' <<<"$j")"
eq "validate fixed ratios" "true true true" "$(jq -r 'def near(a; b): ((a - b) | fabs) < 1e-4 * ((b | fabs) + 1);
	.configs as $c | [range(2) as $i |
	(($c[$i].original_s - $c[$i].fixed_s) / ($c[0].original_s - $c[0].fixed_s)) as $o |
	(($c[$i].generated_s - $c[$i].fixed_s) / ($c[0].generated_s - $c[0].fixed_s)) as $g |
	near($c[$i].original_ratio; $o) and near($c[$i].generated_ratio; $g) and
	near($c[$i].error; (($g - $o) | fabs) / $o)] +
	[near(.speedup; ($c | map(.original_s) | add) / ($c | map(.generated_s) | add))] | join(" ")' <<<"$j")"
# (as in validate, a time less the fixed part counts as 1e-6 s unless it
# is above 0; within a share of the error, which such a round makes huge,
# as the JSON's times are rounded)
eq "validate fixed round errors" "true true true" "$(jq -r 'def pos(x): if x > 0 then x else 1e-6 end;
	.configs as $c | [range(3) as $r |
	(pos($c[1].original_runs[$r] - $c[1].fixed_runs[$r]) / pos($c[0].original_runs[$r] - $c[0].fixed_runs[$r])) as $o |
	(pos($c[1].generated_runs[$r] - $c[1].fixed_runs[$r]) / pos($c[0].generated_runs[$r] - $c[0].fixed_runs[$r])) as $g |
	((($g - $o) | fabs) / $o - $c[1].round_errors[$r] | fabs) < 1e-3 * ($c[1].round_errors[$r] + 1)] | join(" ")' <<<"$j")"
eq "validate no fixed" "true false" "$(jq -r '[(.fixed == null), (.configs[0] | has("fixed_s"))] | join(" ")' <<<"$("$DBTPROF" gentest validate --json --runs 1 --config "a=env" --original true --generated true)")"
printf 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done\n' >"$T/burn20k.sh"
contains "validate fixed text" "fixed s" "$("$DBTPROF" gentest validate --runs 1 --config "a=env" --original "sh $T/burn20k.sh" --generated "sh $T/burn20k.sh" --fixed true)"
# a fixed part of more than half the generated program's time: a warning
# naming the configuration; a tenth of it: none (sleeps, as above)
"$DBTPROF" gentest validate --runs 1 --measure wall --config "a=env" --original "sleep 0.1" \
	--generated "sleep 0.1" --fixed "sleep 0.07" >/dev/null 2>"$T/share.err" ||
	fail "validate fixed share: $(cat "$T/share.err")"
contains "validate fixed share: the warning" "warning: the fixed part is" "$(cat "$T/share.err")"
contains "validate fixed share: where" "of the generated program's time under a:" "$(cat "$T/share.err")"
"$DBTPROF" gentest validate --runs 1 --measure wall --config "a=env" --original "sleep 0.1" \
	--generated "sleep 0.1" --fixed "sleep 0.01" >/dev/null 2>"$T/share.err" ||
	fail "validate fixed share: $(cat "$T/share.err")"
eq "validate fixed share: none for a tenth" "" "$(grep 'fixed part is' "$T/share.err")"
# (burn20k.sh, not burn.sh: `true`'s CPU time includes the fork of
# dbtprof, which a loaded machine or an ASAN build can make as long as
# burn.sh's)
err=$("$DBTPROF" gentest validate --runs 1 --config "a=env" --original "sh $T/burn20k.sh" --generated true --fixed "sh $T/burn20k.sh" 2>&1 || true)
contains "validate fixed too long" "dbtprof: validate: --fixed: under a it takes" "$err"
eq "validate fixed too long status" 1 "$(status "$DBTPROF" gentest validate --runs 1 --config "a=env" --original "sh $T/burn20k.sh" --generated true --fixed "sh $T/burn20k.sh")"
eq "validate fixed open quote" 2 "$(status "$DBTPROF" gentest validate --original true --generated true --fixed "sh -c 'x")"
j=$("$DBTPROF" gentest validate --json --runs 1 --config qemu-nochain --config "b=nice" --config qemu \
	--original "$G/x86_64/loop" --generated "$T/loop")
eq "validate default by name" "qemu-x86_64 -d nochain,nice,qemu-x86_64" "$(jq -r '[.configs[].command] | join(",")' <<<"$j")"
err=$("$DBTPROF" gentest validate --config vg-fast --original true --generated true 2>&1 | head -1 || true)
eq "validate unknown default" "dbtprof gentest validate: --config vg-fast: no default configuration of that name for x86-64 programs" "$err"
eq "validate bad stat" 2 "$(status "$DBTPROF" gentest validate --stat mean --original true --generated true)"
eq "validate bad measure" 2 "$(status "$DBTPROF" gentest validate --measure insns --original true --generated true)"
err=$("$DBTPROF" gentest validate --runs 1 --config "a=env" --original false --generated true 2>&1 || true)
eq "validate failing run" "dbtprof: validate: 'env false' exited with 1" "$err"
# commands are split as a shell would: quotes keep blanks, \ escapes
j=$("$DBTPROF" gentest validate --json --runs 1 --config "a=env 'X=a b'" \
	--original "sh -c 'test \"\$X/\$0\" = \"a b/c d\"' c\\ d" \
	--generated "sh -c 'test \"\$X\" = \"a b\"'")
eq "validate quoted words" "a" "$(jq -r '.configs[0].name' <<<"$j")"
err=$("$DBTPROF" gentest validate --original "sh -c 'exit" --generated true 2>&1 | head -1 || true)
eq "validate open quote" "dbtprof gentest validate: --original 'sh -c 'exit': offset 6: unterminated quote" "$err"
eq "validate open quote status" 2 "$(status "$DBTPROF" gentest validate --original true --generated 'x\')"
eq "validate open quote config" 2 "$(status "$DBTPROF" gentest validate --config 'a="env' --original true --generated true)"
eq "validate empty command" 2 "$(status "$DBTPROF" gentest validate --original "  ''x" --generated " ")"
eq "validate no programs" 2 "$(status "$DBTPROF" gentest validate --original true)"
eq "validate bad config" 2 "$(status "$DBTPROF" gentest validate --config x --original true --generated true)"
eq "validate bad runs" 2 "$(status "$DBTPROF" gentest validate --runs 0 --original true --generated true)"
contains "validate help" "usage: dbtprof gentest validate" "$("$DBTPROF" gentest validate --help)"
done_ok

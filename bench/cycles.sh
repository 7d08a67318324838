#!/bin/bash
# bench/cycles.sh - figures of `dbtprof cycles` for bench/RESULTS.md:
#  1. hot blocks run as loops: model vs llvm-mca-14 -iterations=100
#  2. straight-line windows of 100k instructions vs llvm-mca -iterations=1
#  3. speed and peak memory, dbtprof vs llvm-mca on the same windows, and
#     of whole runs (CYCLES_BIG_N: fib(N) in Lua, about 10^9 instructions
#     at 31), and live mode against plain QEMU
#  4. differential throughput of one C program at -O0..-O3 against native
#     CPU time
#  5. the same for Lua 5.1, 5.2, 5.3 and 5.4 on one script
#  6. the same for clang 13, 14, 15 and 16 compiling one bitcode file at -O2
#     (make bench-deps installs them)
# Parts 4-6 give each version's model cycles under four configurations:
# the default, --branch-predictor, --memory-renaming, and all of those
# with --cache, on CYCLES_MCPU (default znver3) with CYCLES_LLVM (default:
# dbtprof's) and CYCLES_MODEL_OPTS added to all four (e.g. --front-end).
# Their results are kept in CYCLES_STATE (a file; default: temporary) and
# taken from there when present, so the deterministic model runs can be
# done while the machine is busy (CYCLES_SKIP_TRUTH=1: no native timing,
# no tables) and the native timings later on a quiet machine with the
# same CYCLES_STATE (CYCLES_SKIP_MODEL=1: only what the state has of the
# models).
# Prints Markdown on stdout, progress on stderr.  Needs build/dbtprof,
# llvm-mca-14, lua5.1-5.4, clang-13..16, xz, gcc, jq, GNU time.  Takes
# about an hour (CYCLES_PARTS picks parts; CYCLES_CACHE_DIR keeps the
# timing tables between runs).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
cd "$(dirname "$0")/.."
D=$PWD/build/dbtprof
MCA=llvm-mca-14
CPUS=${CYCLES_CPUS:-"skylake znver3"}
BIG=${CYCLES_BIG_N:-31}
PARTS=${CYCLES_PARTS:-"1 2 3 4 5 6"}
ROUNDS=${CYCLES_ROUNDS:-2000}
LUA_ROUNDS=${CYCLES_LUA_ROUNDS:-400}
CLANG_REPS=${CYCLES_CLANG_REPS:-20}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
W=$(mktemp -d /tmp/dbtprof-bench-cycles.XXXXXX)
trap 'rm -rf "$W"' EXIT
export DBTPROF_CACHE_DIR=${CYCLES_CACHE_DIR:-$W/cache}
say() { echo "[cycles] $*" >&2; }

cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -o "$W/loops" bench/cycles-loops.c \
	build/libdbtp.a -lzstd -lcapstone -lpthread -lm
printf 'local function f(n) if n < 2 then return n end return f(n-1) + f(n-2) end\nprint(f(tonumber(arg[1])))\n' >"$W/fib.lua"
head -c 300000 /dev/urandom | base64 >"$W/input.txt"

if part 1 || part 2 || part 3; then
	say "recording workloads (mem mode)"
	"$D" record -q -m mem -o "$W/lua.trace" -- lua5.4 "$W/fib.lua" 24 >/dev/null
	"$D" record -q -m mem -o "$W/xz.trace" -- xz -6 -c "$W/input.txt" >/dev/null
fi

# stats LIST: "median p90 mean" of absolute values
stats() {
	awk '{print $1 < 0 ? -$1 : $1}' | sort -g | awk '{v[NR] = $1; s += $1} END {
		n = NR
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		k = int(0.9 * n); if (k < 0.9 * n) k++
		printf "%.1f%% | %.1f%% | %.1f%% | %d", 100 * m, 100 * v[k], 100 * s / n, n }'
}

echo "## Cycle estimation (dbtprof cycles)"
echo
echo "\`bash bench/cycles.sh\` — $(date -u +%Y-%m-%d), dbtprof $(git rev-parse --short HEAD), $(nproc) × $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $($MCA --version | awk '/LLVM version/ {print "LLVM " $NF}')${CYCLES_LLVM:+ (the version pairs: LLVM $CYCLES_LLVM)}."
echo
if part 1; then
echo "### 1. Hot blocks as loops: model vs llvm-mca -iterations=100"
echo
echo "The 20 most executed blocks of each trace (whose every instruction LLVM"
echo "takes), each run 100 times in a row through the model (no store-to-load"
echo "ordering, as llvm-mca) and by \`llvm-mca-14 -iterations=100\` on LLVM's text"
echo "of the block (\`bench/cycles-loops.c\`). Error = (model − llvm-mca) / llvm-mca"
echo "of the total cycles."
echo
echo "| trace | CPU | median error | p90 | mean | blocks | median, --llvm-mca-compat | p90, compat |"
echo "|---|---|--:|--:|--:|--:|--:|--:|"
for tr in lua xz; do
	for cpu in $CPUS; do
		say "loops: $tr $cpu"
		mkdir -p "$W/b-$tr-$cpu"
		"$W/loops" "$W/$tr.trace" $cpu 20 100 "$W/b-$tr-$cpu" >"$W/b-$tr-$cpu.txt"
		: >"$W/e1"
		: >"$W/e2"
		while read -r id addr n c cc; do
			m=$($MCA -mtriple=x86_64 -mcpu=$cpu -iterations=100 "$W/b-$tr-$cpu/block-$id.s" 2>/dev/null |
				awk '/^Total Cycles:/ {print $3}')
			awk -v a=$c -v b=$m 'BEGIN {print (a - b) / b}' >>"$W/e1"
			awk -v a=$cc -v b=$m 'BEGIN {print (a - b) / b}' >>"$W/e2"
		done <"$W/b-$tr-$cpu.txt"
		s1=$(stats <"$W/e1")
		s2=$(stats <"$W/e2" | awk -F' [|] ' '{print $1 " | " $2}')
		echo "| $tr | $cpu | $s1 | $s2 |"
	done
done
fi
if part 2; then
echo
echo "### 2. Windows of 100,000 instructions: model vs llvm-mca -iterations=1"
echo
echo "Five windows per trace, at 10%, 30%, 50%, 70% and 90% of the run, written"
echo "with \`--emit-asm\` and given to \`llvm-mca-14 -iterations=1\` as one region;"
echo "the model with \`--alias none\` (llvm-mca's default), by default and with"
echo "\`--llvm-mca-compat\`."
echo
echo "| trace | CPU | median error | p90 | mean | windows | median, compat | p90, compat |"
echo "|---|---|--:|--:|--:|--:|--:|--:|"
for tr in lua xz; do
	total=$("$D" cycles --json --mcpu skylake "$W/$tr.trace" | jq -r .instructions)
	for cpu in $CPUS; do
		: >"$W/e1"
		: >"$W/e2"
		for pct in 10 30 50 70 90; do
			from=$((total / 100 * pct))
			say "window: $tr $cpu $from"
			c=$("$D" cycles --json --mcpu $cpu --alias none --window $from:100000 \
				--emit-asm "$W/win.s" "$W/$tr.trace" 2>/dev/null | jq -r .total_cycles)
			cc=$("$D" cycles --json --mcpu $cpu --alias none --llvm-mca-compat \
				--window $from:100000 "$W/$tr.trace" | jq -r .total_cycles)
			m=$($MCA -mtriple=x86_64 -mcpu=$cpu -iterations=1 "$W/win.s" 2>/dev/null |
				awk '/^Total Cycles:/ {print $3}')
			awk -v a=$c -v b=$m 'BEGIN {print (a - b) / b}' >>"$W/e1"
			awk -v a=$cc -v b=$m 'BEGIN {print (a - b) / b}' >>"$W/e2"
		done
		s1=$(stats <"$W/e1")
		s2=$(stats <"$W/e2" | awk -F' [|] ' '{print $1 " | " $2}')
		echo "| $tr | $cpu | $s1 | $s2 |"
	done
done
fi
if part 3; then
echo
echo "### 3. Speed and memory"
echo
echo "Same window, same CPU (skylake), one core each, GNU time (elapsed, max RSS);"
echo "dbtprof's time includes reading the trace up to the window and its"
echo "table comes from the cache (a first run adds the llvm-mca runs)."
echo
echo "| what | instructions | dbtprof s | dbtprof MiB | llvm-mca s | llvm-mca MiB | insns/s dbtprof | insns/s llvm-mca |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|"
for n in 100000 1000000; do
	say "speed window $n"
	"$D" cycles --mcpu skylake --window 1000000:$n --emit-asm "$W/win.s" "$W/lua.trace" >/dev/null 2>&1
	/usr/bin/time -f "%e %M" -o "$W/t1" "$D" cycles --mcpu skylake --alias none \
		--window 1000000:$n "$W/lua.trace" >/dev/null
	/usr/bin/time -f "%e %M" -o "$W/t2" $MCA -mtriple=x86_64 -mcpu=skylake \
		-iterations=1 "$W/win.s" >/dev/null 2>&1 || true
	read -r s1 m1 <"$W/t1"
	read -r s2 m2 <"$W/t2"
	awk -v n=$n -v s1=$s1 -v m1=$m1 -v s2=$s2 -v m2=$m2 'BEGIN {
		printf "| Lua window | %d | %.2f | %.0f | %.2f | %.0f | %.2g | %.2g |\n",
		n, s1, m1 / 1024, s2, m2 / 1024, n / (s1 > 0 ? s1 : 0.01), n / (s2 > 0 ? s2 : 0.01) }'
done
say "big run: fib($BIG)"
"$D" record -q -m mem -o "$W/big.trace" -- lua5.4 "$W/fib.lua" $BIG >/dev/null

/usr/bin/time -f "%e %M" -o "$W/t1" "$D" cycles --json --mcpu skylake "$W/big.trace" >"$W/big.json"
read -r s1 m1 <"$W/t1"
n=$(jq -r .instructions "$W/big.json")
awk -v n=$n -v s1=$s1 -v m1=$m1 -v b=$BIG 'BEGIN {
	printf "| whole run, Lua fib(%d) | %d | %.1f | %.0f | | | %.3g | |\n", b, n, s1, m1 / 1024, n / s1 }'
echo
LIVE=$((BIG - 4))
say "live: fib($LIVE)"
/usr/bin/time -f "%e" -o "$W/q" qemu-x86_64 -cpu qemu64 "$(command -v lua5.4)" "$W/fib.lua" $LIVE >/dev/null
/usr/bin/time -f "%e" -o "$W/r" "$D" record -q -m mem -o "$W/live.trace" -- lua5.4 "$W/fib.lua" $LIVE >/dev/null
/usr/bin/time -f "%e %M" -o "$W/l" "$D" cycles --json --mcpu skylake -- lua5.4 "$W/fib.lua" $LIVE >"$W/live.json"
q=$(cat "$W/q")
r=$(cat "$W/r")
read -r l lm <"$W/l"
echo "Live mode, Lua fib($LIVE) ($(jq -r .instructions "$W/live.json") instructions): plain QEMU $q s;"
echo "\`record -m mem\` $r s ($(awk -v a=$r -v b=$q 'BEGIN {printf "%.1f", a / b}')× QEMU); \`cycles -- ...\` (recording and"
echo "model concurrently through a pipe) $l s, $(awk -v a=$l -v b=$q 'BEGIN {printf "%.1f", a / b}')× QEMU, peak $(awk -v m=$lm 'BEGIN {printf "%.0f", m / 1024}') MiB."
fi
# --- differential throughput (parts 4-6) ---------------------------------
# Truth: median of CYCLES_TRUTH_RUNS (9) native runs, in hardware cycles
# where `perf stat -e cycles` counts them, else in CPU time (user +
# system, which varies less than wall-clock under other load), from perf's
# task-clock (nanoseconds) or, without perf, GNU time (hundredths of a
# second).  The runs are interleaved: each round times every version once,
# so a slow drift of the machine moves all versions alike.  Both sides run
# the same code: the recordings use `record --match-native` (QEMU's -cpu
# max), the native runs the glibc tunables of that preset, so glibc's CPU
# dispatch (memcpy, strlen, ...) picks the same routines natively and
# under QEMU.
# Model: each version recorded once in mem mode, its cycles estimated
# under each configuration; delta = cycles(B) / cycles(A), the same as
# `dbtprof diff` computes.
TUNABLES=$(sed -n '/define DBTP_MATCH_TUNABLES/,/^$/p' include/dbtp/run.h |
	grep -o '"[^"]*"' | tr -d '"\n')
CONFIGS=("" "--branch-predictor" "--memory-renaming"
	"--branch-predictor --memory-renaming --cache")
MCPU=${CYCLES_MCPU:-znver3}
MOPTS=(--mcpu "$MCPU" ${CYCLES_LLVM:+--llvm "$CYCLES_LLVM"} ${CYCLES_MODEL_OPTS:-})
# the state's key of a model's result: the default CPU, LLVM and options
# add nothing (the keys of earlier states stay valid)
MTAG=
[ "$MCPU" = znver3 ] || MTAG+=".$MCPU"
[ -z "${CYCLES_LLVM:-}" ] || MTAG+=".llvm$CYCLES_LLVM"
[ -z "${CYCLES_MODEL_OPTS:-}" ] || MTAG+=".${CYCLES_MODEL_OPTS// /}"
declare -A T S M I
STATE=${CYCLES_STATE:-$W/state}
touch "$STATE"
get() { awk -F '\t' -v k="$1" '$1 == k {v = $2} END {print v}' "$STATE"; }
put() { printf '%s\t%s\n' "$1" "$2" >>"$STATE"; }

if perf stat -x, -e cycles -o "$W/p" true 2>/dev/null &&
	grep -q '^[0-9]' "$W/p"; then
	TRUTH="hardware cycles (perf stat -e cycles), in units of 10^9"
elif perf stat -x, -e task-clock -o "$W/p" true 2>/dev/null &&
	grep -q '^[0-9]' "$W/p"; then
	TRUTH="CPU time in seconds (perf stat -e task-clock; no hardware cycle counter here)"
else
	TRUTH="CPU time in seconds (GNU time; no hardware cycle counter here)"
fi

# Native runs are pinned to one CPU (CYCLES_PIN_CPU, default the last;
# empty: not pinned): unpinned, Lua's runs spread by 12%, pinned by 1-4%
# (bench/RESULTS.md, "Lua under the model against a calibrated clock").
PIN=()
pin_cpu=${CYCLES_PIN_CPU-$(($(nproc) - 1))}
if [ -n "$pin_cpu" ] && command -v taskset >/dev/null; then
	PIN=(taskset -c "$pin_cpu")
fi

# once CMD... : the truth of one run, on stdout
once() {
	case $TRUTH in
	hardware*)
		"${PIN[@]}" env "$TUNABLES" perf stat -x, -e cycles -o "$W/p" "$@" >/dev/null 2>&1
		awk -F, '/cycles/ {printf "%.6f\n", $1 / 1e9}' "$W/p"
		;;
	*task-clock*)
		"${PIN[@]}" env "$TUNABLES" perf stat -x, -e task-clock -o "$W/p" "$@" >/dev/null 2>&1
		awk -F, '/task-clock/ {printf "%.6f\n", $1 / 1e3}' "$W/p"
		;;
	*)
		"${PIN[@]}" env "$TUNABLES" /usr/bin/time -f "%U %S" -o "$W/tt" "$@" >/dev/null 2>&1
		awk '{print $1 + $2}' "$W/tt"
		;;
	esac
}

# want KEY CMD... : time CMD natively as KEY at the next measure, unless
# the state has it already
declare -A WANTC
WANTK=()
want() {
	k=$1
	shift
	T[$k]=$(get "T.$k")
	S[$k]=$(get "S.$k")
	[ -z "${T[$k]}" ] || return 0
	[ -z "${CYCLES_SKIP_TRUTH:-}" ] || return 0
	WANTK+=("$k")
	WANTC[$k]=$(printf '%q ' "$@")
}

# measure: RUNS rounds, each timing every wanted command once (so that a
# slow drift of the machine moves all versions alike, not one), then the
# median and range of each
RUNS=${CYCLES_TRUTH_RUNS:-9}
measure() {
	[ ${#WANTK[@]} -gt 0 ] || return 0
	for k in "${WANTK[@]}"; do : >"$W/t.$k"; done
	for r in $(seq "$RUNS"); do
		for k in "${WANTK[@]}"; do
			say "native $k, round $r of $RUNS"
			eval "once ${WANTC[$k]}" >>"$W/t.$k"
		done
	done
	for k in "${WANTK[@]}"; do
		T[$k]=$(sort -g "$W/t.$k" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
		S[$k]=$(sort -g "$W/t.$k" | awk '{v[NR] = $1} END {printf "%.2f–%.2f", v[1], v[NR]}')
		put "T.$k" "${T[$k]}"
		put "S.$k" "${S[$k]}"
	done
	WANTK=()
}

# model KEY CMD... : record CMD, then its cycles under each configuration
model() {
	k=$1
	shift
	I[$k]=$(get "I.$k")
	for c in "${!CONFIGS[@]}"; do
		M[$k.$c]=$(get "M.$k$MTAG.${CONFIGS[$c]// /}")
		[ -z "${M[$k.$c]}" ] || continue
		[ -z "${CYCLES_SKIP_MODEL:-}" ] || continue
		if [ ! -e "$W/$k.trace" ]; then
			say "record $k"
			"$D" record -q -m mem --match-native -o "$W/$k.trace" -- "$@" >/dev/null 2>&1
		fi
		say "model $k ${CONFIGS[$c]}"
		# shellcheck disable=SC2086
		"$D" cycles --json "${MOPTS[@]}" ${CONFIGS[$c]} "$W/$k.trace" >"$W/c.json"
		M[$k.$c]=$(jq -r .total_cycles "$W/c.json")
		I[$k]=$(jq -r .instructions "$W/c.json")
		put "M.$k$MTAG.${CONFIGS[$c]// /}" "${M[$k.$c]}"
		put "I.$k" "${I[$k]}"
	done
	rm -f "$W/$k.trace"
}

# pairs "A B" ... : the table, then the mean E of each configuration
pairs() {
	for p in "$@"; do
		for k in $p; do
			if [ -z "${T[$k]}" ]; then
				echo "(native times not measured yet: no table)"
				return 0
			fi
			for c in "${!CONFIGS[@]}"; do
				if [ -z "${M[$k.$c]}" ]; then
					echo "(models not all run yet: no table)"
					return 0
				fi
			done
		done
	done
	echo "Truth: $TRUTH, median of $RUNS runs; each run times every version once, in turn."
	echo
	echo "| pair | native (A) | native (B) | range A | range B | Δ truth | Δ model | E | E --branch-predictor | E --memory-renaming | E all + --cache | instructions B/A |"
	echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
	: >"$W/E"
	for p in "$@"; do
		set -- $p
		awk -v a="${T[$1]}" -v b="${T[$2]}" -v x="$1" -v y="$2" \
			-v ra="${S[$1]}" -v rb="${S[$2]}" -v ia="${I[$1]}" -v ib="${I[$2]}" \
			-v m0="${M[$1.0]} ${M[$2.0]}" -v m1="${M[$1.1]} ${M[$2.1]}" \
			-v m2="${M[$1.2]} ${M[$2.2]}" -v m3="${M[$1.3]} ${M[$2.3]}" 'BEGIN {
			t = b / a
			split(m0 " " m1 " " m2 " " m3, m, " ")
			for (c = 0; c < 4; c++) {
				d[c] = m[2 * c + 2] / m[2 * c + 1]
				e[c] = t - d[c]; if (e[c] < 0) e[c] = -e[c]
			}
			printf "| %s → %s | %.2f | %.2f | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
				x, y, a, b, ra, rb, t, d[0], e[0], e[1], e[2], e[3], ib / ia
			print e[0], e[1], e[2], e[3] > "/dev/stderr" }' 2>>"$W/E"
	done
	echo
	awk '{for (c = 1; c <= 4; c++) s[c] += $c} END {
		printf "Mean E: %.3f (--branch-predictor %.3f, --memory-renaming %.3f, all + --cache %.3f).\n",
			s[1] / NR, s[2] / NR, s[3] / NR, s[4] / NR }' "$W/E"
}

if part 4; then
echo
echo "### 4. Differential throughput: one C program at -O0..-O3"
echo
echo "\`bench/cycles/kernels.c\` (matrix multiply, insertion sort, sieve, hash)"
echo "built with gcc at -O0..-O3; truth: $ROUNDS rounds natively; model: 5"
echo "rounds (every round does the same work). Model: \`${MOPTS[*]}\`."
echo "Δ = time(B) / time(A), E = |Δ_truth − Δ_model|."
echo
for o in 0 1 2 3; do
	gcc -O$o -o "$W/k$o" bench/cycles/kernels.c
	want "-O$o" "$W/k$o" "$ROUNDS"
	model "-O$o" "$W/k$o" 5
done
measure
pairs "-O0 -O1" "-O1 -O2" "-O2 -O3" "-O0 -O3"
fi

if part 5; then
echo
echo "### 5. Differential throughput: Lua 5.1, 5.2, 5.3, 5.4"
echo
echo "One CPU-bound script, \`bench/cycles/versions.lua\` (recursion, a sieve,"
echo "string building and matching, sorting; unchanged on every version);"
echo "truth: $LUA_ROUNDS rounds natively; model: 10 rounds, \`${MOPTS[*]}\`."
echo
for v in 5.1 5.2 5.3 5.4; do
	want "lua$v" lua$v bench/cycles/versions.lua "$LUA_ROUNDS"
	model "lua$v" lua$v bench/cycles/versions.lua 10
done
measure
pairs "lua5.1 lua5.2" "lua5.2 lua5.3" "lua5.3 lua5.4" "lua5.1 lua5.4"
fi

if part 6; then
echo
echo "### 6. Differential throughput: clang 13, 14, 15, 16"
echo
echo "The seed's experiment: each version compiles the same bitcode at -O2"
echo "(\`lib/analysis/simpoint.c\` compiled by clang-13 at -O0 without"
echo "optnone, so every version reads it and has the whole -O2 pipeline to"
echo "run). Truth: $CLANG_REPS compilations a run (timing one, about 0.2 s, is too"
echo "coarse for GNU time's hundredths); model: one, \`${MOPTS[*]}\`."
echo
clang-13 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -O0 -Xclang -disable-O0-optnone \
	-emit-llvm -c lib/analysis/simpoint.c -o "$W/in.bc"
for v in 13 14 15 16; do
	want "clang-$v" sh -c 'for i in $(seq "$1"); do "$2" -O2 -c "$3" -o "$4"; done' \
		- "$CLANG_REPS" "clang-$v" "$W/in.bc" "$W/out.o"
	model "clang-$v" clang-$v -O2 -c "$W/in.bc" -o "$W/out.o"
done
measure
pairs "clang-13 clang-14" "clang-14 clang-15" "clang-15 clang-16" "clang-13 clang-16"
fi

#!/bin/bash
# bench/cycles.sh - figures of `dbtprof cycles` for bench/RESULTS.md:
#  1. hot blocks run as loops: model vs llvm-mca-14 -iterations=100
#  2. straight-line windows of 100k instructions vs llvm-mca -iterations=1
#  3. speed and peak memory, dbtprof vs llvm-mca on the same windows, and
#     of whole runs (CYCLES_BIG_N: fib(N) in Lua, about 10^9 instructions
#     at 31), and live mode against plain QEMU
#  4. differential throughput of one C program at -O0..-O3 against native
#     wall-clock time
# Prints Markdown on stdout, progress on stderr.  Needs build/dbtprof,
# llvm-mca-14, lua5.4, xz, gcc, GNU time.  Takes about 10 minutes.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
cd "$(dirname "$0")/.."
D=$PWD/build/dbtprof
MCA=llvm-mca-14
CPUS=${CYCLES_CPUS:-"skylake znver3"}
BIG=${CYCLES_BIG_N:-31}
PARTS=${CYCLES_PARTS:-"1 2 3 4"}
ROUNDS=${CYCLES_ROUNDS:-2000}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
W=$(mktemp -d /tmp/dbtprof-bench-cycles.XXXXXX)
trap 'rm -rf "$W"' EXIT
export DBTPROF_CACHE_DIR=$W/cache
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
echo "\`bash bench/cycles.sh\` — $(date -u +%Y-%m-%d), dbtprof $(git rev-parse --short HEAD), $(nproc) × $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $($MCA --version | awk '/LLVM version/ {print "LLVM " $NF}')."
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
if part 4; then
echo
echo "### 4. Differential throughput against the machine"
echo
echo "\`bench/cycles/kernels.c\` built with gcc at -O0..-O3. Truth: median of 7"
echo "native runs of $ROUNDS rounds each, CPU time (user + system, less disturbed by other load than wall-clock) (no hardware cycle counters in"
echo "this VM: perf reports cycles as not supported); model: \`dbtprof diff\` of"
echo "runs of 5 rounds (the per-round work is the same, so the ratio carries"
echo "over), CPU znver3 (this host's). Δ = time(B) / time(A); E = |Δ_truth − Δ_model|."
echo
for o in 0 1 2 3; do gcc -O$o -o "$W/k$o" bench/cycles/kernels.c; done
declare -A T S
for o in 0 1 2 3; do
	say "native -O$o"
	for i in 1 2 3 4 5 6 7; do
		/usr/bin/time -f "%U %S" -o "$W/tt" "$W/k$o" $ROUNDS >/dev/null
		awk '{print $1 + $2}' "$W/tt"
	done | sort -g >"$W/times$o"
	T[$o]=$(awk '{v[NR] = $1} END {print v[4]}' "$W/times$o")
	S[$o]=$(awk '{v[NR] = $1} END {printf "%.2f–%.2f", v[1], v[NR]}' "$W/times$o")
	"$D" record -q -m mem -o "$W/k$o.trace" -- "$W/k$o" 5 >/dev/null
done
echo "| pair | native s (A) | native s (B) | range A | range B | Δ truth | Δ model | E | Δ model --cache | E --cache |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
: >"$W/E"
for p in "0 1" "1 2" "2 3" "0 3"; do
	set -- $p
	dm=$("$D" diff --json --mcpu znver3 "$W/k$1.trace" "$W/k$2.trace" | jq -r .delta)
	dc=$("$D" diff --json --mcpu znver3 --cache "$W/k$1.trace" "$W/k$2.trace" | jq -r .delta)
	awk -v a=${T[$1]} -v b=${T[$2]} -v m=$dm -v mc=$dc -v x=$1 -v y=$2 -v ra="${S[$1]}" -v rb="${S[$2]}" 'BEGIN {
		t = b / a; e = t - m; if (e < 0) e = -e; ec = t - mc; if (ec < 0) ec = -ec
		printf "| -O%s → -O%s | %.2f | %.2f | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", x, y, a, b, ra, rb, t, m, e, mc, ec
		print e, ec > "/dev/stderr" }' 2>>"$W/E"
done
echo
echo "Mean E: $(awk '{s += $1; c += $2} END {printf "%.3f (with --cache: %.3f)", s / NR, c / NR}' "$W/E")."
fi

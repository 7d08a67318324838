#!/bin/bash
# Cache model: exact hit/miss/write-back counts for the memops guests
# (x86-64 and AArch64) derived by hand, intervals lined up with bbv, a
# SimPoint estimate from hand-made files, and the errors.
. tests/e2e/lib.sh

# cj TRACE FILTER ARGS... : a value from `cache --json`
cj() {
	tr=$1
	f=$2
	shift 2
	"$DBTPROF" cache --json "$@" "$tr" | jq -r "$f"
}

# memops: 1000 iterations of an 8-byte load at buf+16k and an 8-byte store
# at buf+16k+8; buf is 4096-aligned, 16,000 bytes: 250 64-byte lines, each
# first touched by a load (4 iterations per line).  With the default
# geometry (L1D 32 KiB 8-way, L2 1 MiB 16-way, 64 B lines) everything fits:
# 250 cold L1 misses, the other 1750 accesses hit (the store to +8 hits the
# line its load just brought in); L2 is accessed on each L1 miss and misses
# each time (cold).  Nothing is evicted, so nothing is written back.
# Instructions: x86-64 7 (first block) + 999 x 5 (loop) + 3 (exit) = 5005.
"$DBTPROF" record -q -m mem -o "$T/m.trace" -- "$G/x86_64/memops"
tot=$(cj "$T/m.trace" '.total | [.instructions, .memory_ops, .stores,
	.l1_accesses, .l1_misses, .l1_evictions, .l1_writebacks, .l2_accesses,
	.l2_misses, .l2_evictions, .mem_writebacks] | join(" ")')
eq "x86 memops totals" "5005 2000 1000 2000 250 0 0 250 250 0 0" "$tot"
eq "x86 memops instructions = stats" "$(js "$T/m.trace" .instructions)" \
	"$(cj "$T/m.trace" .total.instructions)"
# miss rates 250/2000 and 250/250; MPKI 250 x 1000 / 5005 = 49.95005
eq "x86 memops rates" "0.125 1 49.95 49.95" "$(cj "$T/m.trace" \
	'.total | [.l1_miss_rate, .l2_miss_rate, .l1_mpki, .l2_mpki] | join(" ")')"
eq "x86 memops one thread" 1 "$(cj "$T/m.trace" '.threads | length')"
eq "x86 defaults" "32768 8 64 64 1048576 16 64 1024" "$(cj "$T/m.trace" \
	'[.l1.size, .l1.ways, .l1.line, .l1.sets, .l2.size, .l2.ways, .l2.line, .l2.sets] | join(" ")')"
out=$("$DBTPROF" cache "$T/m.trace")
contains "text config" "L1D  32 KiB, 8-way, 64 B lines, 64 sets" "$out"
contains "text misses" "L1 misses                        250  miss rate 12.500%, MPKI 49.950" "$out"

# A 1 KiB 2-way L1 (8 sets, 16 lines): line i is evicted when line i+16
# arrives, dirty (its store): 250 - 16 = 234 evictions, all written back
# into L2.  With a 4 KiB 4-way L2 (16 sets, 64 lines) line i leaves L2 when
# line i+64 arrives, after its L1 write-back made it dirty there: 250 - 64
# = 186 L2 evictions, each a write to memory.
eq "small caches" "250 234 234 250 186 186" "$(cj "$T/m.trace" \
	'.total | [.l1_misses, .l1_evictions, .l1_writebacks, .l2_misses, .l2_evictions, .mem_writebacks] | join(" ")' \
	--l1 1K,2,64 --l2 4K,4,64)"
# 128-byte lines halve the cold misses: 125.
eq "128 B lines" "125 125" "$(cj "$T/m.trace" '.total | [.l1_misses, .l2_misses] | join(" ")' \
	--l1 32K,8,128 --l2 1M,16,128)"

# AArch64: the same walk; instructions 8 + 999 x 5 + 3 = 5006.
"$DBTPROF" record -q -m mem -o "$T/a.trace" -- "$G/aarch64/memops"
eq "aarch64 memops totals" "5006 2000 1000 2000 250 0 250 250 0" "$(cj "$T/a.trace" \
	'.total | [.instructions, .memory_ops, .stores, .l1_accesses, .l1_misses, .l1_writebacks, .l2_accesses, .l2_misses, .mem_writebacks] | join(" ")')"

# Intervals of 1000 instructions, cut as bbv cuts them: 7 + 5k >= 1000 at
# k = 199 (1002 instructions, 200 iterations), then 1000 each (200
# iterations: 400 accesses over 3,200 bytes = 50 lines), and the exit
# block's 3 instructions alone.
"$DBTPROF" cache --csv -i 1000 "$T/m.trace" >"$T/i.csv"
eq "intervals" "0,1002,400,50,50|1,1000,400,50,50|2,1000,400,50,50|3,1000,400,50,50|4,1000,400,50,50|5,3,0,0,0" \
	"$(awk -F, '$1 == 0 && $2 != "total" { print $2 "," $3 "," $7 "," $8 "," $14 }' "$T/i.csv" | paste -sd'|')"
eq "interval MPKI" "49.900200 50.000000 0.000000" \
	"$(awk -F, 'NR == 2 || NR == 3 || NR == 7 { print $10 }' "$T/i.csv" | paste -sd' ')"
"$DBTPROF" bbv -q -i 1000 -o "$T/m.bb" "$T/m.trace"
eq "as many intervals as bbv" "$(wc -l <"$T/m.bb")" \
	"$(cj "$T/m.trace" '.threads[0].intervals | length' -i 1000)"
"$DBTPROF" bbv -q -i 1000 --partial drop -o "$T/d.bb" "$T/m.trace"
eq "drop: as many as bbv" "$(wc -l <"$T/d.bb")" \
	"$(cj "$T/m.trace" '.threads[0].intervals | length' -i 1000 --partial drop)"
eq "drop keeps totals" "5 5005 250" "$(cj "$T/m.trace" \
	'[(.threads[0].intervals | length), .total.instructions, .total.l1_misses] | join(" ")' \
	-i 1000 --partial drop)"
eq "intervals sum" 5005 "$(cj "$T/m.trace" '[.threads[0].intervals[].instructions] | add' -i 777)"

# Threads (a libc program with four): each has its own hierarchy and
# intervals; per thread, instructions and memory operations are those of
# stats, and the interval count is the line count of its .bb file.
"$DBTPROF" record -q -m mem -o "$T/t.trace" -- "$G/c/mt"
"$DBTPROF" cache --json -i 100000 "$T/t.trace" >"$T/t.json"
"$DBTPROF" bbv -q -i 100000 -o "$T/t.bb" "$T/t.trace"
n=$(js "$T/t.trace" '.threads | length')
eq "mt threads" "$n" "$(jq '.threads | length' "$T/t.json")"
for ((k = 0; k < n; k++)); do
	eq "mt thread $k counts" \
		"$(js "$T/t.trace" ".threads[$k] | [.instructions, .memory_accesses] | join(\" \")")" \
		"$(jq -r ".threads[$k].total | [.instructions, .memory_ops] | join(\" \")" "$T/t.json")"
	f=$T/t.bb
	[ $k -gt 0 ] && f=$T/t.bb.t$k
	eq "mt thread $k intervals" "$(wc -l <"$f")" "$(jq ".threads[$k].intervals | length" "$T/t.json")"
	eq "mt thread $k L2 accesses = L1 misses" "$(jq ".threads[$k].total.l1_misses" "$T/t.json")" \
		"$(jq ".threads[$k].total.l2_accesses" "$T/t.json")"
done
eq "mt total" "$(js "$T/t.trace" .memory_accesses)" "$(jq .total.memory_ops "$T/t.json")"

# SimPoint estimate: 0.8 x interval 1 + 0.2 x interval 5 (no accesses:
# rates 0).  L1 miss rate 0.8 x 0.125 = 0.1 against 0.125: -20%; L1 MPKI
# 0.8 x 50 = 40 against 250000 / 5005: 40 x 5005 / 250000 - 1 = -0.1992;
# L2 miss rate 0.8 (-20%), L2 MPKI as L1's.
printf '1 0\n5 1\n' >"$T/m.simpoints"
printf '0.8 0\n0.2 1\n' >"$T/m.weights"
est=$(cj "$T/m.trace" '.estimate | [.weight_sum,
	.l1_miss_rate.estimate, .l1_miss_rate.full, .l1_miss_rate.relative_error,
	.l1_mpki.estimate, .l1_mpki.relative_error,
	.l2_miss_rate.estimate, .l2_miss_rate.relative_error,
	.l2_mpki.estimate, .l2_mpki.relative_error] | join(" ")' \
	-i 1000 --simpoints "$T/m.simpoints" --weights "$T/m.weights")
eq "estimate" "1 0.1 0.125 -0.2 40 -0.1992 0.8 -0.2 40 -0.1992" "$est"
out=$("$DBTPROF" cache -i 1000 --simpoints "$T/m.simpoints" --weights "$T/m.weights" "$T/m.trace")
contains "text estimate" "SimPoint estimate of thread 0: 2 points, weights sum 1" "$out"
contains "text estimate L1" "L1 miss rate        10.0000%      12.5000%        -20.00%" "$out"

# Errors.
# record --cache: the plugin runs the accesses through the same model,
# per thread, and keeps per block their count, misses and unaligned ones.
# memops: the loop's block makes 999 x 2 accesses; the first iteration's
# two are in the first block: 250 L1 and L2 misses in all, as above.
"$DBTPROF" record -q --cache -o "$T/c.trace" -- "$G/x86_64/memops"
eq "--cache: memops tallies" "2 1 1 0|1998 249 249 0" "$("$DBTPROF" dump "$T/c.trace" |
	awk '$1 == "cache" { print $5, $7, $9, $11 }' | paste -sd'|')"
eq "--cache: memops, the blocks of the accesses" \
	"$("$DBTPROF" dump "$T/m.trace" | awk '$2 == "block" { b = $3 } $2 == "mem" { n[b]++ } END { for (k in n) print k }' | sort -n | paste -sd' ')" \
	"$("$DBTPROF" dump "$T/c.trace" | awk '$1 == "cache" { print $2 }' | paste -sd' ')"
eq "--cache: stats, the mem-mode trace's totals" \
	"blocks true $(cj "$T/m.trace" '.total | [.memory_ops, .l1_misses, .l2_misses] | join(" ")') 0" \
	"$(js "$T/c.trace" '[.mode, .cache_tallies, .memory_accesses, .l1_misses, .l2_misses, .unaligned] | join(" ")')"
contains "--cache: stats" "mode blocks, with cache tallies (--cache)" "$("$DBTPROF" stats "$T/c.trace")"
# Two threads each walk a 1.28 MB buffer once with 20,000 unaligned
# 4-byte loads 64 bytes apart, at +62: each straddles two lines, the
# second of which the next load touches first.  Each thread's own L1 and
# L2 (the buffer is larger) miss on both lines in the first iteration,
# which is part of the function's first block, then on one new line in
# each of the loop block's 19,999.
cat >"$T/w2.c" <<'EOF'
#include <pthread.h>
void walk(void);
__asm__(".text\n.globl walk\nwalk:\n\tlea rsi, [rip + wbuf + 62]\n"
	"\tmov ecx, 20000\n.globl walk_loop\nwalk_loop:\n"
	"\tmov eax, dword ptr [rsi]\n\tadd rsi, 64\n\tsub ecx, 1\n"
	"\tjnz walk_loop\n\tret\n\t.bss\n\t.p2align 6\nwbuf:\n"
	"\t.zero 1280064\n\t.text\n");
static void *run(void *a) { walk(); return a; }
int main(void)
{
	pthread_t t;
	pthread_create(&t, 0, run, 0);
	walk();
	pthread_join(t, 0);
	return 0;
}
EOF
${CC_GUEST:-cc} -O2 -static -pthread -masm=intel -o "$T/w2" "$T/w2.c"
"$DBTPROF" record -q --cache -o "$T/w2.trace" -- "$T/w2"
for f in walk walk_loop; do
	a=$(nm "$T/w2" | awk -v f=$f '$3 == f { print $1 }' | sed 's/^0*/0x/')
	"$DBTPROF" dump "$T/w2.trace" | awk -v a="$a" '$1 == "cache" && $3 == a { print $5, $7, $9, $11 }'
done >"$T/w2.tally"
eq "--cache: two threads' walks" "2 4 4 2|39998 39998 39998 39998" "$(paste -sd'|' "$T/w2.tally")"
eq "--cache: two threads" 2 "$(js "$T/w2.trace" '.threads | length')"
# --cache-sample: the accesses recorded in one phase of 4,096 block
# executions in three (each thread's own), each thread's caches warmed by
# 409 accesses (a tenth of a phase) after a phase without, tallies scaled
# by each block's executions over those tallied.  Every walk_loop
# execution past the warm-up misses as every other one did (one new
# line), and both threads' walk blocks as each other: the estimates are
# exact.
"$DBTPROF" record -q --cache-sample 3 --cache-phase 4096 -o "$T/w2s.trace" -- "$T/w2"
for f in walk walk_loop; do
	a=$(nm "$T/w2" | awk -v f=$f '$3 == f { print $1 }' | sed 's/^0*/0x/')
	"$DBTPROF" dump "$T/w2s.trace" | awk -v a="$a" '$1 == "cache" && $3 == a { print $5, $7, $9, $11 }'
done >"$T/w2s.tally"
eq "--cache-sample: two threads' walks" "2 4 4 2|39998 39998 39998 39998" "$(paste -sd'|' "$T/w2s.tally")"
js "$T/w2s.trace" '[.block_executions, .cache_tallied, .cache_sample, .cache_phase] | join(" ")' >"$T/w2s.n"
read -r nb nt ns np <"$T/w2s.n"
eq "--cache-sample: the run's parameters" "3 4096" "$ns $np"
eq "--cache-sample: a third or so tallied" 1 "$((nt * 4 > nb && nt * 2 < nb))"
contains "--cache-sample: stats" "one phase of 4,096 block executions in that many" \
	"$("$DBTPROF" stats "$T/w2s.trace")"
# Each thread's phases are its own: a second recording gives the same
# tallies (by address: blocks are numbered as the threads translate
# them) and the same executions tallied, however the threads interleaved.
"$DBTPROF" record -q --cache-sample 3 --cache-phase 4096 -o "$T/w2s2.trace" -- "$T/w2"
for t in w2s w2s2; do
	"$DBTPROF" dump "$T/$t.trace" | awk '$1 == "cache" { $1 = $2 = ""; print }' | sort >"$T/$t.bya"
done
eq "--cache-sample: the tallies again" "" "$(cmp "$T/w2s.bya" "$T/w2s2.bya" 2>&1)"
eq "--cache-sample: as many tallied again" "$nt" "$(js "$T/w2s2.trace" .cache_tallied)"
# A thread's first phase is tallied as it ran, not scaled: its caches
# start cold as the thread's do, and its misses happen once.  A walk of
# 2,000 new lines, all in the first phase of 4,096 block executions, then
# 40 walks of 20,000 loads of one line in the same loop block: the
# estimates are --cache's (scaled with the rest, 6,627 misses).
cat >"$T/cold.c" <<'EOF'
void walk(const char *p, int n, long step);
__asm__(".text\n.globl walk\nwalk:\n\tmov rcx, rsi\n.globl walk_loop\nwalk_loop:\n"
	"\tmov eax, dword ptr [rdi]\n\tadd rdi, rdx\n\tsub ecx, 1\n"
	"\tjnz walk_loop\n\tret\n");
static char big[2000 * 64] __attribute__((aligned(64)));
int main(void)
{
	walk(big, 2000, 64);
	for (int i = 0; i < 40; i++)
		walk(big, 20000, 0);
	return 0;
}
EOF
${CC_GUEST:-cc} -O2 -static -masm=intel -o "$T/cold" "$T/cold.c"
a=$(nm "$T/cold" | awk '$3 == "walk_loop" { print $1 }' | sed 's/^0*/0x/')
for o in "--cache" "--cache-sample 3 --cache-phase 4096"; do
	# shellcheck disable=SC2086
	"$DBTPROF" record -q $o -o "$T/cold.trace" -- "$T/cold"
	"$DBTPROF" dump "$T/cold.trace" | awk -v a="$a" '$1 == "cache" && $3 == a { print $5, $7, $9, $11 }'
done >"$T/cold.tally"
eq "--cache-sample: a cold start as it ran" "801959 1999 1999 0|801959 1999 1999 0" "$(paste -sd'|' "$T/cold.tally")"
# Threads that lock and wait across phases (a libc program with four).
"$DBTPROF" record -q --cache-sample 3 --cache-phase 4096 -o "$T/mts.trace" -- "$G/c/mt" >/dev/null
eq "--cache-sample: four threads, run whole" "true exited 0" \
	"$(js "$T/mts.trace" '[.end.complete, .end.status, .end.value] | join(" ")')"
# A run shorter than the first phase is tallied whole: as --cache.
"$DBTPROF" record -q --cache-sample 10 -o "$T/cs.trace" -- "$G/x86_64/memops"
eq "--cache-sample: a short run as --cache" "$("$DBTPROF" dump "$T/c.trace" | grep '^cache')" \
	"$("$DBTPROF" dump "$T/cs.trace" | grep '^cache')"
eq "--cache-sample: a short run, every execution tallied" "$(js "$T/cs.trace" .block_executions)" \
	"$(js "$T/cs.trace" .cache_tallied)"
eq "--cache-sample 0" 2 "$(status "$DBTPROF" record -q --cache-sample 0 -o "$T/x.trace" -- "$G/x86_64/memops")"
eq "--cache-phase 1x" 2 "$(status "$DBTPROF" record -q --cache-phase 1x -o "$T/x.trace" -- "$G/x86_64/memops")"
contains "--cache-sample: message" "bad --cache-sample '-3' (1..1000000)" \
	"$("$DBTPROF" record -q --cache-sample -3 -o "$T/x.trace" -- "$G/x86_64/memops" 2>&1 || true)"
eq "cache_sample without cache=on" 1 "$(status qemu-x86_64 -plugin "$B/libdbtp-qemu.so,out=$T/x.trace,cache_sample=4" "$G/x86_64/memops")"
eq "--cache with mem mode" 2 "$(status "$DBTPROF" record -q -m mem --cache -o "$T/x.trace" -- "$G/x86_64/memops")"
contains "--cache with mem mode: message" "--cache goes with -m blocks" \
	"$("$DBTPROF" record -q -m mem --cache -o "$T/x.trace" -- "$G/x86_64/memops" 2>&1 || true)"
contains "--cache: dbtprof cache says what it has" "has per-block totals only (dbtprof stats, dump)" \
	"$("$DBTPROF" cache "$T/c.trace" 2>&1 || true)"
eq "cache=maybe" 1 "$(status qemu-x86_64 -plugin "$B/libdbtp-qemu.so,out=$T/x.trace,cache=maybe" "$G/x86_64/memops")"

"$DBTPROF" record -q -m blocks -o "$T/b.trace" -- "$G/x86_64/memops"
eq "blocks mode status" 1 "$(status "$DBTPROF" cache "$T/b.trace")"
contains "blocks mode message" "a blocks-mode trace has no memory accesses; record it with --mode mem" \
	"$("$DBTPROF" cache "$T/b.trace" 2>&1 || true)"
eq "no trace" 2 "$(status "$DBTPROF" cache)"
eq "two traces" 2 "$(status "$DBTPROF" cache "$T/m.trace" "$T/m.trace")"
eq "missing trace" 1 "$(status "$DBTPROF" cache "$T/none.trace")"
eq "ways 0" 2 "$(status "$DBTPROF" cache --l1 32K,0,64 "$T/m.trace")"
eq "line 48" 2 "$(status "$DBTPROF" cache --l1 32K,8,48 "$T/m.trace")"
eq "192 sets" 2 "$(status "$DBTPROF" cache --l2 96K,8,64 "$T/m.trace")"
eq "L2 line < L1 line" 2 "$(status "$DBTPROF" cache --l2 1M,16,32 "$T/m.trace")"
eq "geometry syntax" 2 "$(status "$DBTPROF" cache --l1 32K "$T/m.trace")"
contains "geometry message" "dbtprof cache: --l1 '32K,8,48': line size 48 is not a power of two" \
	"$("$DBTPROF" cache --l1 32K,8,48 "$T/m.trace" 2>&1 || true)"
eq "interval 0" 2 "$(status "$DBTPROF" cache -i 0 "$T/m.trace")"
eq "bad partial" 2 "$(status "$DBTPROF" cache --partial some "$T/m.trace")"
eq "csv and json" 2 "$(status "$DBTPROF" cache --csv --json "$T/m.trace")"
eq "simpoints alone" 2 "$(status "$DBTPROF" cache --simpoints "$T/m.simpoints" "$T/m.trace")"
printf '9 0\n' >"$T/far.simpoints"
printf '1 0\n' >"$T/far.weights"
eq "point out of range" 1 "$(status "$DBTPROF" cache -i 1000 --simpoints "$T/far.simpoints" --weights "$T/far.weights" "$T/m.trace")"
contains "point out of range message" "far.simpoints: line 1: interval 9 is past the last interval of thread 0 (6 intervals)" \
	"$("$DBTPROF" cache -i 1000 --simpoints "$T/far.simpoints" --weights "$T/far.weights" "$T/m.trace" 2>&1 || true)"
printf '1 0\n2\n' >"$T/bad.simpoints"
contains "malformed simpoints" "bad.simpoints: line 2: expected \"INTERVAL CLUSTER\"" \
	"$("$DBTPROF" cache --simpoints "$T/bad.simpoints" --weights "$T/m.weights" "$T/m.trace" 2>&1 || true)"
printf '0.8 0\n0.2 1\n0.1 2\n' >"$T/bad.weights"
contains "weight of no point" "bad.weights: line 3: cluster 2 is not in" \
	"$("$DBTPROF" cache --simpoints "$T/m.simpoints" --weights "$T/bad.weights" "$T/m.trace" 2>&1 || true)"
done_ok

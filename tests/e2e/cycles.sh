#!/bin/bash
# Cycle estimation: counts against stats, per-iteration cycles of loop
# kernels against llvm-mca-14 -iterations=1000 on the same body and CPU
# (within 5%), the timing-table cache, live mode, and the errors.
. tests/e2e/lib.sh

export DBTPROF_CACHE_DIR=$T/cache
MCA=llvm-mca-14

# cy TRACE FILTER ARGS... : a value from `cycles --json`
cy() {
	tr=$1
	f=$2
	shift 2
	"$DBTPROF" cycles --json "$@" "$tr" | jq -r "$f"
}

# within WHAT A B PCT : |A - B| <= PCT% of B
within() {
	checks=$((checks + 1))
	awk -v a="$2" -v b="$3" -v p="$4" 'BEGIN {
		d = a - b; if (d < 0) d = -d; exit !(d <= p / 100 * b) }' ||
		fail "$1: $2 is not within $4% of $3"
}

# memops: 1000 iterations of a load, a store to other bytes, add, dec,
# jnz: 5005 instructions, all one micro-op on Skylake, 1000 loads and
# 1000 stores matched one to one to the memory instructions.
"$DBTPROF" record -q -m mem -o "$T/m.trace" -- "$G/x86_64/memops"
eq "memops counts" "5005 5005 1000 1000 0 0" "$(cy "$T/m.trace" \
	'[.instructions, .total_uops, .loads, .stores, .mem_mismatch_blocks, .loads_after_store] | join(" ")' \
	--mcpu skylake)"
eq "memops instructions = stats" "$(js "$T/m.trace" .instructions)" \
	"$(cy "$T/m.trace" .instructions --mcpu skylake)"
eq "skylake machine" "6 224 60" "$(cy "$T/m.trace" \
	'[.dispatch_width, .rob_size, .scheduler_size] | join(" ")' --mcpu skylake)"
# The loop against llvm-mca: 999 iterations of the body.
printf 'mov (%%rsi), %%rax\nmov %%rax, 8(%%rsi)\nadd $16, %%rsi\ndec %%ecx\njnz .L\n' >"$T/memops.s"
ref=$($MCA -mtriple=x86_64 -mcpu=skylake -iterations=999 "$T/memops.s" |
	awk '/^Total Cycles:/ {print $3}')
got=$(cy "$T/m.trace" '.blocks[] | select(.executions == 999) | .cycles' --mcpu skylake)
within "memops loop vs llvm-mca" "$got" "$ref" 2
# Block cycles add up to the total.
eq "blocks add up" "$(cy "$T/m.trace" .total_cycles --mcpu skylake)" \
	"$(cy "$T/m.trace" '[.blocks[].cycles] | add' --mcpu skylake)"

# The table was cached: a second run needs no llvm-mca.
eq "cached table" "0 0 10 0" "$(cy "$T/m.trace" \
	'.timing_table | [.llvm_runs, .measured, .forms, .untimed] | join(" ")' --mcpu skylake)"
ls "$T/cache"/llvm-14.*-x86_64-unknown-linux-gnu-skylake.timing >/dev/null ||
	fail "no cache file"
eq "no cache: llvm-mca runs" "2" "$(cy "$T/m.trace" .timing_table.llvm_runs \
	--mcpu skylake --no-cache)"
# A damaged cache file (a reorder buffer of 2^32 - 1 entries) is ignored
# and written again: the same result, then no llvm-mca again.
want=$(cy "$T/m.trace" '[.total_cycles, .rob_size] | join(" ")' --mcpu skylake)
for f in "$T/cache"/llvm-14.*-x86_64-unknown-linux-gnu-skylake.timing; do
	sed -i 's/^params \([0-9]*\) [0-9]*/params \1 4294967295/' "$f"
	grep -q '^params 6 4294967295 ' "$f" || fail "cache file not damaged"
done
eq "damaged cache: same result" "$want" "$(cy "$T/m.trace" \
	'[.total_cycles, .rob_size] | join(" ")' --mcpu skylake)"
eq "damaged cache: written again" "0" "$(cy "$T/m.trace" \
	.timing_table.llvm_runs --mcpu skylake)"

# Memory ordering: with every load after every store the loop is slower.
none=$(cy "$T/m.trace" .total_cycles --mcpu skylake --alias none)
all=$(cy "$T/m.trace" .total_cycles --mcpu skylake --alias all)
eq "alias addr = none here" "$none" "$(cy "$T/m.trace" .total_cycles --mcpu skylake)"
[ "$all" -gt $((none * 2)) ] || fail "alias all: $all not > 2 x $none"
checks=$((checks + 1))

# Loop kernels: cycles per iteration of each loop block against llvm-mca.
K=(
	"chain|imul %rax, %rax;imul %rax, %rax;imul %rax, %rax;imul %rax, %rax"
	"alu|add \$1, %rax;add \$1, %rbx;add \$1, %rdx;add \$1, %rsi;add \$1, %rdi;add \$1, %r8"
	"ldst|mov (%rsp), %rax;mov %rax, -8(%rsp);add (%rsp), %rbx"
	"mulhadd|mulq %rbx;vhaddps %xmm0, %xmm0, %xmm1;vhaddps %xmm0, %xmm0, %xmm2"
	"fp|vmulps %ymm0, %ymm1, %ymm2;vaddps %ymm2, %ymm3, %ymm3;vaddps %ymm2, %ymm4, %ymm4"
	"div|xor %edx, %edx;divq %rbx"
	"lea|lea (%rax,%rbx,2), %rcx;shl \$3, %rcx;or %rcx, %rdx;imul %rdx, %rsi"
)
{
	printf '.text\n.globl _start\n_start:\nmov $3, %%ebx\n'
	for k in "${K[@]}"; do
		n=${k%%|*}
		printf 'mov $1000, %%r15d\n.globl k_%s\nk_%s:\n' "$n" "$n"
		echo "${k#*|}" | tr ';' '\n'
		printf 'dec %%r15d\njnz k_%s\n' "$n"
	done
	printf 'mov $60, %%eax\nxor %%edi, %%edi\nsyscall\n'
} >"$T/k.S"
gcc -nostdlib -static -no-pie -o "$T/k" "$T/k.S"
"$DBTPROF" record -q --cpu max -m mem -o "$T/k.trace" -- "$T/k"
# LLVM 16 (--llvm) knows this Zen 4 as znver4, which LLVM 14 has not.
for lc in 14:skylake 14:znver3 16:znver4; do
	cpu=${lc#*:}
	MCA=llvm-mca-${lc%%:*}
	"$DBTPROF" cycles --json --top 100 --llvm ${lc%%:*} --mcpu $cpu \
		"$T/k.trace" >"$T/k.json"
	eq "$lc: model's LLVM" "$cpu ${lc%%:*}." "$(jq -r '"\(.cpu) \(.llvm)"' \
		"$T/k.json" | cut -d. -f1)."
	for k in "${K[@]}"; do
		n=${k%%|*}
		{
			echo "${k#*|}" | tr ';' '\n'
			printf 'dec %%r15d\njnz .L\n'
		} >"$T/body.s"
		ref=$($MCA -mtriple=x86_64 -mcpu=$cpu -iterations=1000 "$T/body.s" |
			awk '/^Total Cycles:/ {print $3 / 1000}')
		got=$(jq -r ".blocks[] | select(.where == \"k_$n+0x0\") |
			.cycles / .executions" "$T/k.json")
		within "$lc $n per iteration vs llvm-mca" "$got" "$ref" 5
	done
done
MCA=llvm-mca-14
# The default LLVM is 14 (installed); DBTPROF_LLVM and --llvm pick another.
eq "default LLVM" "14" "$(cy "$T/k.trace" .llvm --mcpu znver3 | cut -d. -f1)"
eq "DBTPROF_LLVM" "16" "$(DBTPROF_LLVM=16 cy "$T/k.trace" .llvm \
	--mcpu znver3 | cut -d. -f1)"
eq "--llvm over DBTPROF_LLVM" "14" "$(DBTPROF_LLVM=16 cy "$T/k.trace" .llvm \
	--llvm 14 --mcpu znver3 | cut -d. -f1)"

# The front end (--front-end): one taken branch a cycle, and
# DBTP_CYCLES_FE_INDIRECT (2) cycles more after an indirect jump to
# another target than its last.  1000 iterations each of three jumps and
# a loop branch (4 taken branches: 4 cycles an iteration, 2 without: two
# branch ports), an indirect jump whose target alternates and a loop
# branch (1 + 2 + 1 = 4), the same with one target (2).  No jump goes to
# the next instruction (that is no taken branch in a block stream).
{
	printf '.text\n.globl _start\n_start:\n'
	printf 'mov $1000, %%r15d\n.globl f_jmp\nf_jmp:\njmp 1f\nint3\n'
	printf '1: jmp 2f\nint3\n2: jmp 3f\nint3\n3: dec %%r15d\njnz f_jmp\n'
	for n in alt same; do
		printf 'mov $1000, %%r15d\nlea .L%s1(%%rip), %%rax\n' $n
		if [ $n = alt ]; then
			printf 'lea .L%s2(%%rip), %%rcx\nxor %%rax, %%rcx\n' $n
		else
			printf 'xor %%ecx, %%ecx\n'
		fi
		printf '.globl f_%s\nf_%s:\nxor %%rcx, %%rax\njmp *%%rax\nint3\n' $n $n
		printf '.L%s1: dec %%r15d\njnz f_%s\njmp .L%s3\n' $n $n $n
		printf '.L%s2: dec %%r15d\njnz f_%s\n.L%s3:\n' $n $n $n
	done
	printf 'mov $60, %%eax\nxor %%edi, %%edi\nsyscall\n'
} >"$T/fe.S"
gcc -nostdlib -static -no-pie -o "$T/fe" "$T/fe.S"
"$DBTPROF" record -q -m mem -o "$T/fe.trace" -- "$T/fe"
# fe NAME ARGS... : cycles an iteration of loop NAME (its blocks' sum)
fe() {
	n=$1
	shift
	"$DBTPROF" cycles --json --top 100 --mcpu skylake "$@" "$T/fe.trace" |
		jq -r "[.blocks[] | select(.where | startswith(\"f_$n+\")) |
			.cycles] | add / 1000"
}
within "front end: jumps" "$(fe jmp --front-end)" 4 1
within "no front end: jumps" "$(fe jmp)" 2 1
within "front end: changing indirect target" "$(fe alt --front-end)" 4 1
within "front end: one indirect target" "$(fe same --front-end)" 2 1
[ "$(cy "$T/fe.trace" .stalls.front_end --mcpu skylake --front-end)" -gt 5000 ] ||
	fail "front end: no dispatch held"
checks=$((checks + 1))
eq "front end off" "0 false" "$(cy "$T/fe.trace" \
	'[.stalls.front_end, .front_end] | join(" ")' --mcpu skylake)"
# --full-model is the four optional parts together.
full='[.total_cycles, .cache_model, .branch_predictor, .memory_renaming, .front_end] | join(" ")'
eq "full model" "$(cy "$T/m.trace" "$full" --mcpu znver3 --cache \
	--branch-predictor --memory-renaming --front-end)" \
	"$(cy "$T/m.trace" "$full" --mcpu znver3 --full-model)"
contains "full model: all on" "true true true true" \
	"$(cy "$T/m.trace" "$full" --mcpu znver3 --full-model)"

# Windows: memops' loop alone (instructions 7 .. 7 + 4995) against
# llvm-mca over 999 iterations of it; a timeline of two iterations of the
# imul chain kernel is llvm-mca's, row for row.
eq "window instructions" 4995 "$(cy "$T/m.trace" .instructions --mcpu skylake --window 7:4995)"
ref=$($MCA -mtriple=x86_64 -mcpu=skylake -iterations=999 "$T/memops.s" |
	awk '/^Total Cycles:/ {print $3}')
within "window vs llvm-mca" "$(cy "$T/m.trace" .total_cycles --mcpu skylake --window 7:4995)" "$ref" 1
printf 'imul %%rax, %%rax\nimul %%rax, %%rax\nimul %%rax, %%rax\nimul %%rax, %%rax\ndec %%r15d\njnz .L\n' >"$T/chain.s"
ref=$($MCA -mtriple=x86_64 -mcpu=skylake -iterations=2 -timeline "$T/chain.s" |
	awk '/^\[[0-9],[0-9]\]/ {print $2}' | tr -d ' .')
got=$("$DBTPROF" cycles --mcpu skylake --timeline 2:12 "$T/k.trace" |
	awk '/^\[[0-9]+\] / {print substr($0, 19, 30)}' | tr -d ' .')
eq "timeline = llvm-mca's" "$ref" "$got"
"$DBTPROF" cycles --mcpu skylake --window 2:12 --chrome-trace "$T/ct.json" "$T/k.trace" >/dev/null
eq "chrome trace" "12 imul rax, rax 0 1 4 5" "$(jq -r '[(.traceEvents | length),
	.traceEvents[0].name, .traceEvents[0].ts, .traceEvents[0].args.issue,
	.traceEvents[0].args.executed, .traceEvents[0].args.retire] | join(" ")' "$T/ct.json")"
eq "chrome needs a window" 2 "$(status "$DBTPROF" cycles --chrome-trace "$T/x.json" "$T/k.trace")"
eq "bad window" 2 "$(status "$DBTPROF" cycles --window 5 "$T/k.trace")"
eq "timeline too long" 2 "$(status "$DBTPROF" cycles --timeline 0:100001 "$T/k.trace")"

# A window of real code (Lua) written as llvm-mca input: with llvm-mca's
# own conventions (--llvm-mca-compat: calls 100 cycles, the stack pointer
# of push/pop after the full latency) and no store-to-load ordering, the
# model is within 5% of llvm-mca over 2000 instructions.
printf 'local function f(n) if n < 2 then return n end return f(n-1) + f(n-2) end\nprint(f(12))\n' >"$T/f.lua"
"$DBTPROF" record -q -m mem -o "$T/l.trace" -- lua5.4 "$T/f.lua" >/dev/null
got=$(cy "$T/l.trace" .total_cycles --mcpu skylake --alias none --llvm-mca-compat \
	--window 200000:2000 --emit-asm "$T/w.s" 2>/dev/null)
eq "emitted window" 2000 "$(($(grep -vc '^#' "$T/w.s") + $(cy "$T/l.trace" .instructions --mcpu skylake \
	--window 200000:2000 --emit-asm "$T/w2.s" 2>&1 >/dev/null | awk '{n = $3} END {print n + 0}')))"
ref=$($MCA -mtriple=x86_64 -mcpu=skylake -iterations=1 "$T/w.s" 2>/dev/null |
	awk '/^Total Cycles:/ {print $3}')
within "lua window vs llvm-mca (compat)" "$got" "$ref" 5

# Regions: the imul chain kernel alone is 1000 x 6 instructions plus the
# loop counter's set-up for the next kernel (k_chain's symbol extent ends
# at k_alu): 4000 imul in a chain, 3 cycles each, + 3 = 12,003 cycles; the
# same addresses as a range give the same; the main binary of a static
# program is all of it; the division kernel is 1000 x 4 + 1.
"$DBTPROF" cycles --json --mcpu skylake --function k_chain --function k_div \
	--range "0x$(nm "$T/k" | awk '$3 == "k_chain" {print $1}')-0x$(nm "$T/k" | awk '$3 == "k_alu" {print $1}')" \
	--main "$T/k.trace" >"$T/r.json"
eq "regions" "function k_chain 6001 12003|function k_div 4001|6001 12003|main binary" \
	"$(jq -r '[(.regions[0] | "\(.region) \(.instructions) \(.total_cycles)"),
	(.regions[1] | "\(.region) \(.instructions)"),
	(.regions[2] | "\(.instructions) \(.total_cycles)"), .regions[3].region] | join("|")' "$T/r.json")"
eq "main = all (static)" "$(jq -r '[.instructions, .total_cycles] | join(" ")' "$T/r.json")" \
	"$(jq -r '.regions[3] | [.instructions, .total_cycles] | join(" ")' "$T/r.json")"
contains "region text" "Region 1: function k_chain" \
	"$("$DBTPROF" cycles --mcpu skylake --function k_chain "$T/k.trace")"
eq "bad range" 2 "$(status "$DBTPROF" cycles --range 0x20-0x10 "$T/k.trace")"
# A dynamic program: its own code is a part of the run.
"$DBTPROF" record -q -m mem -o "$T/h.trace" -- "$G/c/hello" >/dev/null
"$DBTPROF" cycles --json --mcpu skylake --main "$T/h.trace" >"$T/h.json"
jq -e '.regions[0].instructions > 0 and .regions[0].instructions < .instructions / 2' "$T/h.json" >/dev/null ||
	fail "main binary of a dynamic program: $(jq -c '[.instructions, .regions[0].instructions]' "$T/h.json")"
checks=$((checks + 1))

# AArch64: the same walk; 8 + 999 x 5 + 3 instructions.
"$DBTPROF" record -q -m mem -o "$T/a.trace" -- "$G/aarch64/memops"
eq "aarch64 memops" "5006 1000 1000 0" "$(cy "$T/a.trace" \
	'[.instructions, .loads, .stores, .mem_mismatch_blocks] | join(" ")' \
	--mcpu cortex-a57)"
eq "aarch64 neoverse-n1" "5006" "$(cy "$T/a.trace" .instructions --mcpu neoverse-n1)"

# AArch64 against llvm-mca (Cortex-A57): 999 iterations of the loop body.
printf 'ldr x0, [x1]\nstr x0, [x1, #8]\nadd x1, x1, #16\nsubs x2, x2, #1\nb.ne .L\n' >"$T/memops-a64.s"
ref=$($MCA -mtriple=aarch64 -mcpu=cortex-a57 -iterations=999 "$T/memops-a64.s" |
	awk '/^Total Cycles:/ {print $3}')
got=$(cy "$T/a.trace" '.blocks[] | select(.executions == 999) | .cycles' --mcpu cortex-a57)
within "aarch64 memops loop vs llvm-mca" "$got" "$ref" 5

# Branch predictor.  The loop guests have one conditional branch, run
# 10000 times: taken 9999 times, then not.  Its first 15 outcomes each
# meet a fresh gshare counter (the history fills with ones), the 16th
# the counter the 15th trained; the exit is the 16th misprediction.
"$DBTPROF" record -q -m mem -o "$T/l.trace" -- "$G/x86_64/loop"
"$DBTPROF" record -q -m mem -o "$T/la.trace" -- "$G/aarch64/loop"
bp='[.branches.conditional, .branches.conditional_mispredicted, .branches.indirect, .branches.return, .mispredict_penalty] | join(" ")'
eq "loop branches skylake" "10000 16 0 0 14" "$(cy "$T/l.trace" "$bp" --mcpu skylake --branch-predictor)"
eq "loop branches znver3" "10000 16 0 0 13" "$(cy "$T/l.trace" "$bp" --mcpu znver3 --branch-predictor)"
eq "loop branches cortex-a57" "10000 16 0 0 14" "$(cy "$T/la.trace" "$bp" --mcpu cortex-a57 --branch-predictor)"
# The TAGE (--branch-predictor=tage): its base counter starts weakly not
# taken (the first outcome mispredicted) and predicts taken from then
# on; the exit, 2 (test-cycles says why).  --full-model keeps the choice.
bpk='[.branches.conditional, .branches.conditional_mispredicted, .branches.indirect, .branches.return, .mispredict_penalty, .conditional_predictor] | join(" ")'
eq "loop branches tage" "10000 2 0 0 14 tage" "$(cy "$T/l.trace" "$bpk" --mcpu skylake --branch-predictor=tage)"
eq "loop branches tage, aarch64" "10000 2 0 0 14" "$(cy "$T/la.trace" "$bp" --mcpu cortex-a57 --branch-predictor=tage)"
eq "loop branches tage, full model" "2 tage" "$(cy "$T/l.trace" '[.branches.conditional_mispredicted, .conditional_predictor] | join(" ")' --mcpu skylake --branch-predictor=tage --full-model)"
# the predictor's name may follow as the next word (it is not the trace)
eq "loop branches tage, a word of its own" "2 tage" "$(cy "$T/l.trace" '[.branches.conditional_mispredicted, .conditional_predictor] | join(" ")' --mcpu skylake --branch-predictor tage)"
eq "diff takes the tage" "$(cy "$T/l.trace" .total_cycles --mcpu skylake --branch-predictor=tage)" \
	"$("$DBTPROF" diff --json --mcpu skylake --branch-predictor tage "$T/l.trace" "$T/l.trace" | jq -r .a.total_cycles)"
eq "loop branches gshare named" "16 gshare" "$(cy "$T/l.trace" '[.branches.conditional_mispredicted, .conditional_predictor] | join(" ")' --mcpu skylake --branch-predictor=gshare)"
for bad in tag '' 2; do
	eq "bad predictor '$bad'" 2 "$(status "$DBTPROF" cycles --branch-predictor="$bad" "$T/l.trace")"
done
contains "bad predictor message" "--branch-predictor wants gshare or tage, not 'tag'" \
	"$("$DBTPROF" cycles --branch-predictor=tag "$T/l.trace" 2>&1 || true)"
eq "penalty option" "10000 16 0 0 20" "$(cy "$T/l.trace" "$bp" --mcpu skylake --mispredict-penalty 20)"
eq "predictor off" "0 0 false null null" "$(cy "$T/l.trace" \
	'[.branches.conditional, .stalls.branch_mispredict, .branch_predictor, (.mispredict_penalty | tostring), (.conditional_predictor | tostring)] | join(" ")' --mcpu skylake)"
# The 16 mispredictions hold dispatch back, and cost cycles.
jq -e '.stalls.branch_mispredict >= 16 * 14' >/dev/null <<<"$("$DBTPROF" cycles --json --mcpu skylake --branch-predictor "$T/l.trace")" ||
	fail "loop: mispredictions hold dispatch for fewer than 16 x 14 cycles"
checks=$((checks + 1))
[ "$(cy "$T/l.trace" .total_cycles --mcpu skylake --branch-predictor)" -gt \
	"$(cy "$T/l.trace" .total_cycles --mcpu skylake)" ] || fail "predictor adds no cycles"
checks=$((checks + 1))
contains "predictor text" "Branch predictor (gshare): 10,000 branches predicted, 16 mispredicted" \
	"$("$DBTPROF" cycles --mcpu skylake --branch-predictor "$T/l.trace")"
contains "diff takes the predictor" "delta = cycles(B) / cycles(A) = 1.0000" \
	"$("$DBTPROF" diff --mcpu skylake --branch-predictor "$T/l.trace" "$T/l.trace")"
for bad in 0 -3 abc 10001 ''; do
	eq "bad penalty '$bad'" 2 "$(status "$DBTPROF" cycles --mispredict-penalty "$bad" "$T/l.trace")"
done
contains "bad penalty message" "--mispredict-penalty wants cycles" \
	"$("$DBTPROF" cycles --mispredict-penalty abc "$T/l.trace" 2>&1 || true)"

# Memory renaming: memops never loads the bytes it stored, so nothing is
# renamed and the cycles stay exactly the default's.
eq "renaming, nothing to rename" "0 true $(cy "$T/m.trace" .total_cycles --mcpu skylake)" \
	"$(cy "$T/m.trace" '[.renamed_loads, .memory_renaming, .total_cycles] | join(" ")' --mcpu skylake --memory-renaming)"
contains "renaming text" "Memory renaming: 0 loads took a stored value at once" \
	"$("$DBTPROF" cycles --mcpu skylake --memory-renaming "$T/m.trace")"

# Live: the same numbers as from the trace.
eq "live = trace" "$(cy "$T/m.trace" '[.instructions, .total_cycles] | join(" ")' --mcpu skylake)" \
	"$("$DBTPROF" cycles --json --mcpu skylake -- "$G/x86_64/memops" |
		jq -r '[.instructions, .total_cycles] | join(" ")')"

# The cache model: memops' 1000 loads touch 250 new lines (cache.sh
# works them out), all cold misses in L1 and L2; each costs cycles.
eq "cache model" "250 250 true" "$(cy "$T/m.trace" \
	'[.l1_load_misses, .l2_load_misses, .cache_model] | join(" ")' --mcpu skylake --cache)"
c1=$(cy "$T/m.trace" .total_cycles --mcpu skylake --cache)
c2=$(cy "$T/m.trace" .total_cycles --mcpu skylake --cache-penalty 20,100)
[ "$c1" -gt "$none" ] && [ "$c2" -gt "$c1" ] || fail "cache penalties: $none $c1 $c2"
checks=$((checks + 1))
eq "bad penalty" 2 "$(status "$DBTPROF" cycles --cache-penalty 5 "$T/m.trace")"
# Live: the guest's output goes to stderr, the report stays JSON.
eq "live guest output aside" "hello from guest" \
	"$("$DBTPROF" cycles --json --mcpu skylake -- "$G/c/hello" 2>&1 >/dev/null | grep hello)"
"$DBTPROF" diff --json --mcpu skylake -- "$G/c/hello" ::: "$G/c/hello" 2>/dev/null | jq -e '.delta == 1' >/dev/null ||
	fail "live diff of a talking guest"
checks=$((checks + 1))

# Text output carries llvm-mca's terms.
out=$("$DBTPROF" cycles --mcpu skylake "$T/m.trace")
for term in "Instructions:      5005" "Total Cycles:" "Total uOps:        5005" \
	"Dispatch Width:    6" "uOps Per Cycle:" "IPC:" "SKLPort4" "_start (memops)"; do
	contains "text: $term" "$term" "$out"
done

# Blocks mode: analysed without memory ordering, and said so.
"$DBTPROF" record -q -m blocks -o "$T/b.trace" -- "$G/x86_64/memops"
err=$("$DBTPROF" cycles --mcpu skylake "$T/b.trace" 2>&1 >/dev/null)
contains "blocks-mode notice" "no memory addresses; assuming no load depends on a store" "$err"
eq "blocks mode = alias none" "$none" "$(cy "$T/b.trace" .total_cycles --mcpu skylake 2>/dev/null)"

# diff: the same trace twice is delta 1; two traces give the ratio of
# their cycles as `cycles` reports them, and the functions' changes add up
# to the change in cycles; live gives what the traces give.
eq "diff's CPU and LLVM" "znver4 16" "$("$DBTPROF" diff --json --llvm 16 \
	--mcpu znver4 "$T/m.trace" "$T/m.trace" | jq -r '"\(.cpu) \(.llvm)"' | cut -d. -f1)"
eq "diff same" "1 0" "$("$DBTPROF" diff --json --mcpu skylake "$T/m.trace" "$T/m.trace" |
	jq -r '[.delta, .cycle_change] | join(" ")')"
"$DBTPROF" diff --json --top 1000 --mcpu skylake "$T/m.trace" "$T/k.trace" >"$T/d.json"
ca=$(cy "$T/m.trace" .total_cycles --mcpu skylake)
cb=$(cy "$T/k.trace" .total_cycles --mcpu skylake)
eq "diff cycles" "$ca $cb" "$(jq -r '[.a.total_cycles, .b.total_cycles] | join(" ")' "$T/d.json")"
within "diff delta" "$(jq -r .delta "$T/d.json")" "$(awk -v a=$ca -v b=$cb 'BEGIN {print b / a}')" 0.001
eq "diff shares add up" "$((cb - ca))" "$(jq -r '[.functions[].change] | add' "$T/d.json")"
eq "diff biggest" "k_div" "$(jq -r '.functions[0].name' "$T/d.json")"
eq "diff live = traces" "$(jq -r '[.a.total_cycles, .b.total_cycles] | join(" ")' "$T/d.json")" \
	"$("$DBTPROF" diff --json --mcpu skylake --cpu max -- "$G/x86_64/memops" ::: "$T/k" |
		jq -r '[.a.total_cycles, .b.total_cycles] | join(" ")')"
out=$("$DBTPROF" diff --mcpu skylake "$T/m.trace" "$T/k.trace")
contains "diff text" "delta = cycles(B) / cycles(A) = " "$out"
eq "diff usage" 2 "$(status "$DBTPROF" diff "$T/m.trace")"
eq "diff live usage" 2 "$(status "$DBTPROF" diff -- "$G/x86_64/memops")"

# Errors.
"$DBTPROF" record -q -m count -o "$T/c.trace" -- "$G/x86_64/memops"
eq "count mode" 1 "$(status "$DBTPROF" cycles --mcpu skylake "$T/c.trace")"
contains "count mode message" "has no instruction stream" \
	"$("$DBTPROF" cycles --mcpu skylake "$T/c.trace" 2>&1 || true)"
eq "bad cpu" 1 "$(status "$DBTPROF" cycles --mcpu nosuchcpu "$T/m.trace")"
eq "bad cpu message" "dbtprof: CPU 'nosuchcpu' is not one LLVM 14.0.6 knows for x86_64" \
	"$("$DBTPROF" cycles --mcpu nosuchcpu "$T/m.trace" 2>&1 || true)"
contains "x86 cpu for aarch64" "is not one LLVM" \
	"$("$DBTPROF" cycles --mcpu skylake "$T/a.trace" 2>&1 || true)"
eq "bad LLVM version" "dbtprof: '1x' is not an LLVM version (a number such as 14 or 16)" \
	"$("$DBTPROF" cycles --llvm 1x "$T/m.trace" 2>&1 || true)"
contains "LLVM not installed" "cannot run llvm-mca-99" \
	"$("$DBTPROF" diff --llvm 99 "$T/m.trace" "$T/m.trace" 2>&1 || true)"
eq "LLVM not installed: status" 1 "$(status "$DBTPROF" cycles --llvm 99 "$T/m.trace")"
eq "bad alias" 2 "$(status "$DBTPROF" cycles --alias maybe "$T/m.trace")"
eq "no trace" 2 "$(status "$DBTPROF" cycles)"
eq "missing trace" 1 "$(status "$DBTPROF" cycles --mcpu skylake "$T/none.trace")"
eq "help" 0 "$(status "$DBTPROF" cycles --help)"
done_ok

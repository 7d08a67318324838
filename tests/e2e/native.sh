#!/bin/bash
# dbtprof native-count: instruction counts taken natively under ptrace
# single-stepping, not from QEMU.  They must equal the known counts of the
# x86-64 guests and what `dbtprof record` + `dbtprof stats` count; a BBV of
# the loop guest derived by hand; per-thread counts; error cases.
. "$(dirname "$0")/lib.sh"
X=$G/x86_64

nc() {
	"$DBTPROF" native-count "$@"
}

# Where ptrace is not allowed (a container without CAP_SYS_PTRACE, ...)
# there is nothing to count: say so and pass.
s=$(status nc --report "$T/probe" -- "$X/loop")
if [ "$s" = 125 ] && grep -q "ptrace is not permitted" "$T/probe" 2>/dev/null; then
	echo "skipped: ptrace not permitted here"
	exit 0
fi
nc --report "$T/probe" -- "$X/loop" 2>"$T/probe.err" ||
	fail "native-count loop: $(cat "$T/probe.err")"

# --- exact counts, and equal to QEMU's ------------------------------------
# loop 20004, nested 8565, syscalls 13: tests/guests/expected.txt.
# memops: lea + mov, N = 1000 iterations of 5 (mov, mov, add, dec, jnz),
# then mov, xor, syscall: 2 + 5000 + 3 = 5005.
for g in loop:20004:0 nested:8565:7 syscalls:13:3 memops:5005:0; do
	IFS=: read -r name insns st <<<"$g"
	s=$(status nc --json --report "$T/$name.json" -- "$X/$name")
	eq "$name status" "$st" "$s"
	eq "$name instructions" "$insns" "$(jq -r .instructions "$T/$name.json")"
	# The final exit syscall gives no step stop: counted from the exit stop.
	eq "$name steps" $((insns - 1)) "$(jq -r .steps "$T/$name.json")"
	eq "$name exit syscall counted" 1 "$(jq -r .exit_syscalls "$T/$name.json")"
	eq "$name argv0" "$name" "$(jq -r .argv0 "$T/$name.json")"
	eq "$name record status" "$st" "$(rec "$T/$name.trace" "$X/$name")"
	eq "$name native = record" "$(js "$T/$name.trace" .instructions)" "$insns"
done

# Text report on stderr; the guest's stdout passes through untouched.
out=$(nc -- "$X/syscalls" 2>"$T/syscalls.txt") || true
eq "syscalls stdout" "hello" "$out"
contains "text report" "instructions  13" "$(cat "$T/syscalls.txt")"
contains "text report exit" "exit          status 3" "$(cat "$T/syscalls.txt")"

# segv: mov + 1000 x (dec, jnz) + xor complete, the faulting load does not:
# 2002 (insns_retired in expected.txt); status 128 + SIGSEGV.
s=$(status nc --json --report "$T/segv.json" -- "$X/segv")
eq "segv status" 139 "$s"
eq "segv instructions" 2002 "$(jq -r .instructions "$T/segv.json")"
eq "segv signal" 11 "$(jq -r .signal "$T/segv.json")"
eq "segv no exit syscall" 0 "$(jq -r .exit_syscalls "$T/segv.json")"

# --- rep string instructions ---------------------------------------------
# rep stosb x100, rep movsq x10, rep movsb with rcx = 0, among 10 others:
# per iteration 10 + 100 + 10 + 1 = 121; per instruction 10 + 3 = 13.
cat >"$T/rep.S" <<'EOF'
	.bss
buf:	.skip 4096
	.text
	.globl _start
_start:
	lea buf(%rip), %rdi
	mov $100, %ecx
	xor %eax, %eax
	rep stosb
	lea buf(%rip), %rsi
	lea buf+2048(%rip), %rdi
	mov $10, %ecx
	rep movsq
	xor %ecx, %ecx
	rep movsb
	mov $60, %eax
	xor %edi, %edi
	syscall
EOF
if ${GUEST_CC:-gcc} -nostdlib -static -no-pie -o "$T/rep" "$T/rep.S" 2>/dev/null; then
	nc --json --report "$T/rep1.json" -- "$T/rep"
	eq "rep per iteration" 121 "$(jq -r .instructions "$T/rep1.json")"
	eq "rep mode" iteration "$(jq -r .rep_counting "$T/rep1.json")"
	nc --json --report "$T/rep2.json" --rep-per-instruction -- "$T/rep"
	eq "rep per instruction" 13 "$(jq -r .instructions "$T/rep2.json")"
	eq "rep folded" 108 "$(jq -r .rep_iterations_folded "$T/rep2.json")"
	# One block: nothing transfers control; a rep iteration stays in it.
	nc --report /dev/null --interval 1000 -o "$T/rep.bb" -- "$T/rep"
	eq "rep bbv" "T:1:121 " "$(cat "$T/rep.bb")"
fi

# --- basic block vectors ---------------------------------------------------
# loop: block 1 = 0x401000 [mov, dec, jnz taken] = 3; block 2 = 0x401007
# [dec, jnz taken] = 2, 9998 times, then once [dec, jnz not taken, mov, xor,
# syscall] = 5 (a block ends only where control goes elsewhere).
# Interval 5000, cut at the first block end at or after k x 5000:
#   1: 3 + 2499 x 2 = 5001            -> T:1:3 :2:4998
#   2: ends at 10001 (2500 blocks)    -> T:2:5000
#   3: ends at 15001                  -> T:2:5000
#   4: 2499 x 2 + 5 = 5003, at 20004  -> T:2:5003
s=$(status nc --json --report "$T/bbv.json" --interval 5000 -o "$T/loop.bb" -- "$X/loop")
eq "bbv status" 0 "$s"
eq "loop bbv" "T:1:3 :2:4998 
T:2:5000 
T:2:5000 
T:2:5003 " "$(cat "$T/loop.bb")"
eq "loop bbv map" "1 0x401000 - - $X/loop 0x1000
2 0x401007 - - $X/loop 0x1007" "$(cat "$T/loop.bb.map")"
# Native and QEMU vectors of one program match block by block through the
# maps' file and offset columns, whatever the load addresses (the dynamic
# loader sits elsewhere under QEMU).
"$DBTPROF" bbv -q -i 5000 -o "$T/q.bb" -- "$X/loop"
eq "native vs qemu: matched by file" "file offset 20004 20004" \
	"$("$DBTPROF" compare --json "$T/loop.bb" "$T/q.bb" | jq -r '[.matched_by, .instructions_a, .instructions_b] | join(" ")')"
nc --match-qemu --interval 100000 -o "$T/hn.bb" --report /dev/null -- "$G/c/hello" >/dev/null
"$DBTPROF" bbv -q --match-native -i 100000 -o "$T/hq.bb" -- "$G/c/hello" >/dev/null
eq "dynamic: matched by file" "file offset" \
	"$("$DBTPROF" compare --json "$T/hn.bb" "$T/hq.bb" | jq -r .matched_by)"
eq "dynamic: blocks named by file+offset" true \
	"$("$DBTPROF" compare --json "$T/hn.bb" "$T/hq.bb" | jq -r '[.differences[]?.block | test("^[^ ]+\\+0x[0-9a-f]+$")] | all')"
eq "bbv intervals" 4 "$(jq -r .bbv.intervals "$T/bbv.json")"
eq "bbv blocks" 2 "$(jq -r .bbv.blocks "$T/bbv.json")"

# Line totals: each interval is N plus the overshoot past its nominal cut,
# less the previous interval's overshoot; cumulative totals reach each cut
# by less than one block (<= 5 here) and add up to the instruction count.
check_cuts() { # FILE N TOTAL MAXBLOCK
	sed 's/^T//' "$1" | awk -v n="$2" -v total="$3" -v maxb="$4" '
		{ s = 0
		  for (i = 1; i <= NF; i++) { split($i, p, ":"); s += p[3] }
		  cum += s; k++
		  if (cum < total && (cum < k * n || cum - k * n >= maxb))
			{ print "interval " k " ends at " cum; bad = 1 } }
		END { if (cum != total) { print "sum " cum; bad = 1 }
		      print bad ? "bad" : "ok" }'
}
eq "loop bbv cuts" ok "$(check_cuts "$T/loop.bb" 5000 20004 5)"
nc --report /dev/null --interval 1000 -o "$T/nested.bb" -- "$X/nested" || true
eq "nested bbv cuts" ok "$(check_cuts "$T/nested.bb" 1000 8565 8565)"
eq "nested bbv intervals" 9 "$(wc -l <"$T/nested.bb")"
eq "nested bbv ids" "$(wc -l <"$T/nested.bb.map")" \
	"$(tr ' ' '\n' <"$T/nested.bb" | sed -n 's/^T\{0,1\}:\([0-9]*\):.*/\1/p' | sort -un | wc -l)"

# --- threads: followed and counted per thread (expected.txt) --------------
nc --json --report "$T/threads.json" -- "$X/threads"
eq "threads instructions" 300036 "$(jq -r .instructions "$T/threads.json")"
eq "threads per thread" "120024 80006 100006" \
	"$(jq -r '[.threads[].instructions] | map(tostring) | join(" ")' "$T/threads.json")"
eq "threads exit syscalls" 3 "$(jq -r .exit_syscalls "$T/threads.json")"

# --- the same controlled environment as record -----------------------------
out=$(nc --report /dev/null -- env)
eq "fixed env" "PATH=/usr/local/bin:/usr/bin:/bin
LC_ALL=C" "$out"

# --- errors: one line, status 125 (2 for usage) ----------------------------
s=$(status nc -- "$T/no-such-program")
eq "missing program status" 125 "$s"
contains "missing program" "program not found" "$(nc -- "$T/no-such-program" 2>&1 || true)"
s=$(status nc -- "$G/aarch64/loop")
eq "aarch64 status" 125 "$s"
contains "aarch64" "an aarch64 program" "$(nc -- "$G/aarch64/loop" 2>&1 || true)"
printf 'exit 0\n' >"$T/text"
chmod +x "$T/text"
eq "not ELF status" 125 "$(status nc -- "$T/text")"
eq "not ELF one line" 1 "$(nc -- "$T/text" 2>&1 | wc -l)"
printf '#!/no/such/shell\n' >"$T/noshell"
chmod +x "$T/noshell"
eq "#! missing interpreter status" 125 "$(status nc -- "$T/noshell")"
contains "#! missing interpreter" "its interpreter /no/such/shell is missing" \
	"$(nc -- "$T/noshell" 2>&1 || true)"

# A "#!" script runs as record runs it: its interpreter, given the same
# words, counted exactly as QEMU counts it.
printf '#!/bin/sh\necho "hi $0 $*"\n' >"$T/script"
chmod +x "$T/script"
nat=$(cd "$T" && nc --match-qemu -- ./script a b 2>&1)
contains "#! native output" "hi ./script a b" "$nat"
contains "#! native program" "$(readlink -f /bin/sh)" "$nat"
(cd "$T" && "$DBTPROF" record -q -m count --match-native -o "$T/script.trace" -- ./script a b >/dev/null)
eq "#! native = QEMU" "$(js "$T/script.trace" .instructions)" \
	"$(echo "$nat" | awk '$1 == "instructions" {gsub(/,/, "", $2); print $2}')"
if command -v strace >/dev/null; then
	# Being traced already makes PTRACE_TRACEME fail with EPERM, as in a
	# container without CAP_SYS_PTRACE.
	# (LeakSanitizer stops the world with ptrace itself: not under strace.)
	s=$(ASAN_OPTIONS=detect_leaks=0 status strace -f -o /dev/null "$DBTPROF" native-count -- "$X/loop")
	eq "ptrace denied status" 125 "$s"
	msg=$(ASAN_OPTIONS=detect_leaks=0 strace -f -o /dev/null "$DBTPROF" native-count -- "$X/loop" 2>&1 || true)
	contains "ptrace denied" "ptrace is not permitted here" "$msg"
	eq "ptrace denied one line" 1 "$(echo "$msg" | wc -l)"
fi
# --- matched runs ------------------------------------------------------------
# The presets give a native run and a QEMU run the same process state: the
# same argv[0] and environment (GLIBC_TUNABLES included) and no vDSO
# (QEMU 7.2 maps none).  By default native has one and QEMU has not.
E=$G/c/envdump
nat=$(nc --report /dev/null -- "$E")
qem=$("$DBTPROF" record -q -o "$T/e.trace" -- "$E")
contains "native default: a vDSO" "vdso=yes" "$nat"
contains "qemu: no vDSO" "vdso=no" "$qem"
nat=$(nc --match-qemu --report /dev/null -- "$E")
qem=$("$DBTPROF" record -q --match-native -o "$T/e.trace" -- "$E")
eq "matched: same state" "$nat" "$qem"
contains "matched: no vDSO" "vdso=no" "$nat"
contains "matched: tunables" "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F," "$nat"
contains "matched: no rseq" ":glibc.pthread.rseq=0" "$nat"
eq "match-native: cpu max" max "$(js "$T/e.trace" .cpu)"
"$DBTPROF" record -q --match-native --cpu qemu64 -o "$T/e.trace" -- "$E" >/dev/null
eq "--cpu after --match-native wins" qemu64 "$(js "$T/e.trace" .cpu)"

# QEMU's CPU view: `cpu-view --cpu max` runs dbtprof under qemu-x86_64 -cpu
# max (QEMU 7.2: basic leaves up to 0xd, AuthenticAMD; XCR0 x87, SSE, AVX,
# MPX, PKRU; 17 auxiliary entries, no AT_SYSINFO_EHDR/AT_HWCAP2).
V=$("$DBTPROF" cpu-view --cpu max)
contains "cpu-view max: leaf 0" "cpuid 0 0 0000000d 68747541 444d4163 69746e65" "$V"
contains "cpu-view max: xcr0" "xcr0 21f" "$V"
eq "cpu-view max: auxv types" "3 4 5 6 7 8 9 11 12 13 14 16 17 25 23 31 15" \
	"$(echo "$V" | awk '$1 == "auxv" { printf "%s%s", s, $2; s = " " }')"
contains "cpu-view native" "cpuid 0 0 " "$("$DBTPROF" cpu-view)"
eq "cpu-view: --qemu without --cpu" 2 "$(status "$DBTPROF" cpu-view --qemu qemu-x86_64)"
eq "cpu-view: missing QEMU" 1 "$(status "$DBTPROF" cpu-view --cpu max --qemu /no/such/qemu)"
eq "native-count: bad CPU model" 125 "$(status nc --cpu no-such-cpu -- "$X/loop")"
# A program shown QEMU's view sees what it sees under QEMU: CPUID (leaf 0
# is QEMU's, not the host's), XGETBV, the auxiliary vector and the initial
# stack layout (argv[], argv[0], AT_PLATFORM and AT_RANDOM addresses).
C=$G/c/cpuview
nat=$(nc --match-qemu --json --report "$T/cv.json" -- "$C")
qem=$("$DBTPROF" record -q -m count --match-native -o "$T/cv.trace" -- "$C")
eq "cpu view: same output" "$qem" "$nat"
contains "cpu view: QEMU's leaf 0" "cpuid 0.0 0000000d 68747541" "$nat"
contains "cpu view: QEMU's XCR0" "xcr0 21f" "$nat"
contains "cpu view: QEMU's order of mappings" "program < loader < libc: 1" "$nat"
contains "native default: the kernel's order" "program < loader < libc: 0" \
	"$(nc --report /dev/null -- "$C")"
# ... and executes exactly as many instructions (Δ = 0): glibc's start-up
# (init_cpu_features, cache info, tunables, the loader's auxv loop, strcmp
# on the platform string, _dl_find_object_init's sort) takes the same paths.
eq "cpu view: native = QEMU instructions" "$(js "$T/cv.trace" .instructions)" \
	"$(jq -r .instructions "$T/cv.json")"
eq "cpu view: guest's CPUID and XGETBV answered" true \
	"$(jq -r '.cpuid_emulated >= 5' "$T/cv.json")"
# QEMU 7.2 executes a rep instruction once more when its count runs out:
# --match-qemu counts that too (rep guest: 118 natively, 120 as QEMU).
nc --match-qemu --json --report "$T/rep.json" -- "$X/rep"
eq "match-qemu rep: as QEMU" 120 "$(jq -r .instructions "$T/rep.json")"
eq "match-qemu rep: re-executions" 2 "$(jq -r .rep_extra "$T/rep.json")"
rec "$T/rep.trace" "$X/rep" >/dev/null
eq "rep: record" 120 "$(js "$T/rep.trace" .instructions)"
# An instruction straddling a page boundary runs once per iteration: the
# reader drops the copy QEMU 7.2's plugin API lists in the block before it.
eq "pagecross: record" 0 "$(rec "$T/pc.trace" "$X/pagecross")"
eq "pagecross: QEMU instructions" 4005 "$(js "$T/pc.trace" .instructions)"
nc --json --report "$T/pc.json" -- "$X/pagecross"
eq "pagecross: native instructions" 4005 "$(jq -r .instructions "$T/pc.json")"
"$DBTPROF" record -q -m count -o "$T/pcc.trace" -- "$X/pagecross"
eq "pagecross: count mode" 4005 "$(js "$T/pcc.trace" .instructions)"
"$DBTPROF" record -q -m bbv --interval 1000 -o "$T/pcb.trace" -- "$X/pagecross"
eq "pagecross: bbv mode" 4005 "$(js "$T/pcb.trace" .instructions)"
contains "--no-vdso alone" "vdso=no" "$(nc --no-vdso --report /dev/null -- "$E")"
contains "-e" "X=1" "$(nc -e X=1 --report /dev/null -- "$E")"
eq "-e without =" 2 "$(status nc -e X -- "$E")"
eq "interval without -o" 2 "$(status nc --interval 5 -- "$X/loop")"
eq "-o without interval" 2 "$(status nc -o "$T/x.bb" -- "$X/loop")"
eq "interval 0" 2 "$(status nc --interval 0 -o "$T/x.bb" -- "$X/loop")"
eq "unwritable bbv" 125 "$(status nc --interval 5 -o "$T/no/such/dir.bb" -- "$X/loop")"
eq "no program" 2 "$(status nc)"
contains "help" "native-count" "$(nc --help)"

done_ok

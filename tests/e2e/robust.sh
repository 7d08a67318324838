#!/bin/sh
# Crashing and killed guests leave readable traces; corrupt, truncated and
# unwritable traces end in one clear line and the documented exit status.
. tests/e2e/lib.sh

# A guest that segfaults mid-run: the trace verifies up to its last whole
# record, and verify says it was cut short by signal 11.
eq "segv record status" 139 "$(rec "$T/segv.trace" "$G/x86_64/segv")"
set +e
out=$("$DBTPROF" verify "$T/segv.trace" 2>&1)
s=$?
set -e
eq "segv verify status" 3 "$s"
contains "segv verify" "killed by signal 11" "$out"
eq "segv stats end" "signaled 11" \
	"$(js "$T/segv.trace" '.end.status + " " + (.end.value|tostring)')"

# A guest killed by SIGKILL while running.
"$DBTPROF" record -q -o "$T/kill.trace" -- "$G/x86_64/spin" &
pid=$!
sleep 1
pkill -KILL -f "qemu-x86_64 .*$G/x86_64/spin" || fail "spin guest not found"
set +e
wait $pid
s=$?
set -e
eq "killed record status" 137 "$s"
set +e
out=$("$DBTPROF" verify "$T/kill.trace" 2>&1)
s=$?
set -e
eq "killed verify status" 3 "$s"
contains "killed verify" "no END record" "$out"
contains "killed verify" "killed by signal 9" "$out"

# A guest killed while it sleeps keeps every block it ran: the idle writer
# flushes what threads published (plugin flush=, default 20 ms).
"$DBTPROF" record -q -o "$T/sleep.trace" -- "$G/x86_64/sleeper" &
pid=$!
sleep 1
pkill -KILL -f "qemu-x86_64 .*$G/x86_64/sleeper" || fail "sleeper not found"
wait $pid || true
eq "sleeper verify status" 3 "$(status "$DBTPROF" verify "$T/sleep.trace")"
eq "sleeper blocks" 1001 "$(js "$T/sleep.trace" .block_executions)"
eq "sleeper instructions" 2006 "$(js "$T/sleep.trace" .instructions)"
eq "sleeper last syscall" nanosleep "$(js "$T/sleep.trace" '.syscalls[-1].name')"

# A complete trace verifies (status 0); every corrupt byte and torn tail
# is reported with the file and offset (status 1).
eq "loop record" 0 "$(rec "$T/ok.trace" "$G/x86_64/loop")"
eq "verify ok" 0 "$(status "$DBTPROF" verify "$T/ok.trace")"
size=$(stat -c %s "$T/ok.trace")
for off in 3 20 40 $((size / 2)) $((size - 5)); do
	cp "$T/ok.trace" "$T/bad.trace"
	printf '\377' | dd of="$T/bad.trace" bs=1 seek=$off conv=notrunc 2>/dev/null
	set +e
	out=$("$DBTPROF" verify "$T/bad.trace" 2>&1)
	s=$?
	set -e
	eq "corrupt at $off: status" 1 "$s"
	contains "corrupt at $off" "$T/bad.trace" "$out"
	eq "corrupt at $off: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
	eq "stats on corrupt" 1 "$(status "$DBTPROF" stats "$T/bad.trace")"
done
head -c $((size - 7)) "$T/ok.trace" >"$T/cut.trace"
set +e
out=$("$DBTPROF" verify "$T/cut.trace" 2>&1)
s=$?
set -e
eq "torn tail status" 1 "$s"
contains "torn tail" "truncated" "$out"
contains "torn tail" "offset" "$out"
printf 'not a trace at all\n' >"$T/text.trace"
contains "not a trace" "bad magic" "$("$DBTPROF" verify "$T/text.trace" 2>&1 || true)"
: >"$T/empty.trace"
eq "empty trace" 1 "$(status "$DBTPROF" verify "$T/empty.trace")"
eq "missing trace" 1 "$(status "$DBTPROF" stats "$T/nope.trace")"

# Output problems: full disk, unwritable path.
set +e
out=$("$DBTPROF" record -q -o /dev/full -- "$G/x86_64/loop" 2>&1)
s=$?
set -e
eq "disk full status" 125 "$s"
contains "disk full" "No space left on device" "$out"
set +e
out=$("$DBTPROF" record -o /nonexistent/dir/x.trace -- "$G/x86_64/loop" 2>&1)
s=$?
set -e
eq "unwritable status" 125 "$s"
contains "unwritable" "cannot create /nonexistent/dir/x.trace" "$out"
# What runs outside the recording is said, not lost silently: processes a
# guest starts (a fork's and a vfork's child; every mode, both guests) and
# the program an execve starts natively in QEMU's place.
for g in c c-aarch64; do
	for m in blocks count bbv mem; do
		set +e
		out=$("$DBTPROF" record -q -m $m -o "$T/fork.trace" -- "$G/$g/forker" 2>&1)
		s=$?
		set -e
		eq "forker $g $m status" 0 "$s"
		contains "forker $g $m output" "children 48 3" "$out"
		contains "forker $g $m warning" "the guest started 2 processes" "$out"
		eq "forker $g $m forks" 2 "$(js "$T/fork.trace" .end.forks)"
	done
done
contains "forker verify" "the guest started 2 processes (fork, vfork or clone), not recorded" \
	"$("$DBTPROF" verify "$T/fork.trace")"
eq "forker verify --json" 2 "$("$DBTPROF" verify --json "$T/fork.trace" | jq .forks)"
eq "threads record" 0 "$(rec "$T/mt.trace" "$G/c/mt")"
eq "threads are no forks" 0 "$(js "$T/mt.trace" .end.forks)"
set +e
out=$("$DBTPROF" record -q -o "$T/exec.trace" -- /bin/sh -c 'exec sleep 0.5' 2>&1)
s=$?
set -e
eq "exec status" 0 "$s"
contains "exec warning" "the guest called execve: $(readlink -f /bin/sleep) ran natively" "$out"
eq "exec in stats" "$(readlink -f /bin/sleep)" "$(js "$T/exec.trace" .end.exec)"
contains "exec in verify" "the guest called execve" "$("$DBTPROF" verify "$T/exec.trace" || true)"
eq "exec in verify --json" "$(readlink -f /bin/sleep)" "$("$DBTPROF" verify --json "$T/exec.trace" | jq -r .exec)"
eq "no exec, no key" null "$(js "$T/fork.trace" .end.exec)"
contains "exec: the trace runs up to it" "syscall 59 execve" "$("$DBTPROF" dump "$T/exec.trace" | tail -n 1)"
eq "exec: the shell's blocks" 1 "$(test "$(js "$T/exec.trace" .block_executions)" -gt 10000 && echo 1)"
eq "failed exec status" 127 "$(status "$DBTPROF" record -q -o "$T/noexec.trace" -- /bin/sh -c 'exec /no/such/program 2>/dev/null')"
eq "failed exec: the run goes on to its end" 0 "$(status "$DBTPROF" verify "$T/noexec.trace")"
eq "failed exec: no exec key" null "$(js "$T/noexec.trace" .end.exec)"
# What ran up to an execve is kept in every mode: count mode writes its
# counts there, bbv mode the interval so far, which the thread's next one
# replaces if the execve fails.  An assembly guest with exact counts
# (tests/guests/x86_64/execs.S: a failed execve, then one that succeeds),
# and the C guest on both architectures, its counts and vectors as the
# blocks-mode trace gives them.
# per_block TRACE: "address executions" lines of each block, sorted
per_block() {
	"$DBTPROF" dump "$1" | awk '$2 == "block" { n[$4]++ }
		$1 == "count" && $NF > 0 { n[$3] += $NF }
		END { for (a in n) print a, n[a] }' | sort
}
for m in blocks count bbv; do
	eq "execs $m status" 0 "$(status "$DBTPROF" record -q -m $m --interval 1500 -o "$T/x$m.trace" -- "$G/x86_64/execs")"
	eq "execs $m counts" "4012 2002 $(readlink -f /bin/true)" \
		"$(js "$T/x$m.trace" '"\(.instructions) \(.block_executions) \(.end.exec)"')"
done
eq "execs per block" "0x401000 1 0x401007 999 0x40100c 1 0x401023 1 0x40102a 999 0x40102f 1" \
	"$(per_block "$T/xcount.trace" | tr '\n' ' ' | sed 's/ $//')"
eq "execs count = blocks" "$(per_block "$T/xblocks.trace")" "$(per_block "$T/xcount.trace")"
"$DBTPROF" bbv -q -i 1500 -o "$T/xb.bb" "$T/xblocks.trace"
"$DBTPROF" bbv -q -i 1500 -o "$T/xv.bb" "$T/xbbv.trace"
eq "execs bbv = blocks" "$(cat "$T/xb.bb")" "$(cat "$T/xv.bb")"
eq "execs bbv intervals" "0 1 2" "$("$DBTPROF" dump "$T/xbbv.trace" | awk '$2 == "interval" { printf "%s%s", s, $3; s = " " }')"
# work TRACE: the instructions the guest's work() executed
work() {
	js "$1" '.hot_functions[] | select(.function == "work") | .instructions'
}
for g in c c-aarch64; do
	for m in blocks count bbv; do
		"$DBTPROF" record -q -m $m --interval 3000 -o "$T/e$m.trace" -- "$G/$g/execer" - /bin/true 2>/dev/null
		"$DBTPROF" record -q -m $m --interval 3000 -o "$T/t$m.trace" -- "$G/$g/execer" thread /bin/true 2>/dev/null
		# the work loop's 6,000 passes, with a thread or without
		eq "execer $g $m work" "$(work "$T/eblocks.trace")" "$(work "$T/t$m.trace")"
		# and with a thread that the execve ends in its read()
		"$DBTPROF" record -q -m $m --interval 3000 -o "$T/l$m.trace" -- "$G/$g/execer" blocked /bin/true 2>/dev/null
		eq "execer $g $m blocked thread" "$(work "$T/eblocks.trace")" "$(work "$T/l$m.trace")"
	done
	eq "execer $g bbv blocked threads" "cut short cut short" "$(js "$T/lbbv.trace" '[.threads[].end] | join(" ")')"
	eq "execer $g count = blocks" "$(per_block "$T/eblocks.trace")" "$(per_block "$T/ecount.trace")"
	rm -f "$T"/eb.bb* "$T"/ev.bb*
	"$DBTPROF" bbv -q -i 3000 -o "$T/eb.bb" "$T/eblocks.trace"
	"$DBTPROF" bbv -q -i 3000 -o "$T/ev.bb" "$T/ebbv.trace"
	eq "execer $g bbv = blocks" "$(cat "$T/eb.bb")" "$(cat "$T/ev.bb")"
	eq "execer $g bbv threads" "cut short exit" "$(js "$T/tbbv.trace" '[.threads[].end] | join(" ")')"
done
done_ok

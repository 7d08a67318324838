#!/bin/bash
# Basic block vectors: exact contents for known guests, live == from trace,
# both rep conventions against Valgrind, basic-block leaders against
# Valgrind's exp-bbv, per-thread files.
. tests/e2e/lib.sh

# loop: 10,000 iterations of [dec; jnz]; derivation in the comments below.
# Basic blocks: 1 = [mov] (0x401000, split off the first TB because the
# loop jumps to 0x401007), 2 = [dec; jnz] (0x401007), 3 = exit (0x40100c).
# Cuts at the first block end at or after 5000, 10000, ...: 5001, 10001,
# 15001, 20001, then the partial interval with the 3 exit instructions.
"$DBTPROF" bbv -q -i 5000 -o "$T/l.bb" -- "$G/x86_64/loop"
eq "loop bbv" "T:1:1 :2:5000 |T:2:5000 |T:2:5000 |T:2:5000 |T:3:3 " \
	"$(paste -sd'|' "$T/l.bb")"
eq "loop map" "1 0x401000 1 _start+0x0|2 0x401007 2 _start+0x7|3 0x40100c 3 _start+0xc" \
	"$(cut -d' ' -f1-4 "$T/l.bb.map" | paste -sd'|')"
"$DBTPROF" record -q -o "$T/l.trace" -- "$G/x86_64/loop"
"$DBTPROF" bbv -q -i 5000 -o "$T/l2.bb" "$T/l.trace"
eq "loop live == trace" "$(cat "$T/l.bb")" "$(cat "$T/l2.bb")"
"$DBTPROF" bbv -q -i 5000 --no-split --partial drop -o "$T/l3.bb" "$T/l.trace"
eq "loop no-split, drop" "T:1:3 :2:4998 |T:2:5000 |T:2:5000 |T:2:5000 " \
	"$(paste -sd'|' "$T/l3.bb")"

# Every interval of every guest sums to its instruction count.
for g in nested memops threads; do
	"$DBTPROF" record -q -o "$T/g.trace" -- "$G/x86_64/$g" || true
	"$DBTPROF" bbv -q -i 777 -o "$T/g.bb" "$T/g.trace"
	n=$(js "$T/g.trace" '.threads|length')
	for ((k = 0; k < n; k++)); do
		f=$T/g.bb
		[ $k -gt 0 ] && f=$T/g.bb.t$k
		sum=$(tr ' ' '\n' <"$f" | awk -F: 'NF == 3 { s += $3 } END { print s + 0 }')
		eq "$g thread $k sum" "$(js "$T/g.trace" ".threads[$k].instructions")" "$sum"
	done
done

# rep: QEMU runs `rep movsb` (100 bytes) as 101 passes and `rep stosq` (8)
# as 9: per-iteration totals 120, as Valgrind's lackey counts; counted per
# instruction, 12, as Valgrind's exp-bbv (and hardware) count.
"$DBTPROF" record -q -o "$T/r.trace" -- "$G/x86_64/rep"
"$DBTPROF" bbv -q -i 1000 -o "$T/r.bb" "$T/r.trace"
"$DBTPROF" bbv -q -i 1000 --rep per-instruction -o "$T/r1.bb" "$T/r.trace"
eq "rep per-iteration" "T:1:4 :2:101 :3:3 :4:9 :5:3 " "$(cat "$T/r.bb")"
eq "rep per-instruction" "T:1:4 :2:1 :3:3 :4:1 :5:3 " "$(cat "$T/r1.bb")"
if command -v valgrind >/dev/null; then
	v=$(valgrind --tool=lackey "$G/x86_64/rep" 2>&1 | sed -n 's/.*guest instrs: *//p' | tr -d ,)
	eq "rep vs lackey" "$v" 120
	for g in rep loop nested memops; do
		valgrind --tool=exp-bbv --interval-size=1000000 --bb-out-file="$T/vg.bb" \
			--pc-out-file="$T/vg.pc" "$G/x86_64/$g" >/dev/null 2>&1 || true
		"$DBTPROF" bbv -q -i 1000000 --rep per-instruction -o "$T/o.bb" -- "$G/x86_64/$g" || true
		total=$(sed -n 's/^# *Total instructions: *//p' "$T/vg.bb")
		ours=$(tr ' ' '\n' <"$T/o.bb" | awk -F: 'NF == 3 { s += $3 } END { print s + 0 }')
		eq "$g total vs exp-bbv" "$total" "$ours"
		# Basic-block leaders: exp-bbv's block addresses are ours.
		vl=$(sed -n 's/^F:[0-9]*:\([0-9a-f]*\):.*/0x\1/p' "$T/vg.pc" | sort | paste -sd' ')
		ol=$(awk '{ print $2 }' "$T/o.bb.map" | sort | paste -sd' ')
		eq "$g leaders vs exp-bbv" "$vl" "$ol"
	done
fi

# A real program: live and from a trace give the same files; AArch64 too.
seq 1 3000 >"$T/in.txt"
"$DBTPROF" bbv -q -i 200000 -o "$T/s1.bb" -- sha256sum "$T/in.txt" >/dev/null
"$DBTPROF" record -q -o "$T/s.trace" -- sha256sum "$T/in.txt" >/dev/null
"$DBTPROF" bbv -q -i 200000 -o "$T/s2.bb" "$T/s.trace"
eq "sha256sum live == trace" "$(cksum <"$T/s1.bb")" "$(cksum <"$T/s2.bb")"
eq "sha256sum map" "$(cksum <"$T/s1.bb.map")" "$(cksum <"$T/s2.bb.map")"
"$DBTPROF" bbv -q -i 5000 -o "$T/a.bb" -- "$G/aarch64/loop"
eq "aarch64 loop" 20003 "$(tr ' ' '\n' <"$T/a.bb" | awk -F: 'NF == 3 { s += $3 } END { print s }')"

# by_addr PREFIX: the vectors of PREFIX and its per-thread files with each
# block id replaced by the block's address (from PREFIX.map), one line
# per (interval, block), each thread's lines sorted, the threads in sorted
# order: what does not depend on the order threads first ran in.
by_addr() {
	for f in "$1" "$1".t*; do
		awk 'NR == FNR { a[$1] = $2; next }
			{ n = split($0, p, " ")
			  for (i = 1; i <= n; i++) {
				split(p[i], q, ":")
				print FNR, a[q[2]], q[3] } }' "$1.map" "$f" |
			sort | tr '\n' ' '
		echo
	done | sort
}

# The plugin's own counting (live bbv, record -m bbv) gives the files the
# block stream gives, for both rep conventions and several threads.
for g in rep threads nested; do
	for r in per-iteration per-instruction; do
		# (no per-thread files left from the guest before)
		rm -f "$T"/t.bb* "$T"/v.bb* "$T"/w.bb*
		"$DBTPROF" record -q -o "$T/b.trace" -- "$G/x86_64/$g" || true
		"$DBTPROF" bbv -q -i 3000 --rep $r -o "$T/t.bb" "$T/b.trace"
		"$DBTPROF" bbv -q -i 3000 --rep $r -o "$T/v.bb" -- "$G/x86_64/$g" || true
		"$DBTPROF" record -q -m bbv --interval 3000 --rep $r -o "$T/v.trace" -- "$G/x86_64/$g" || true
		"$DBTPROF" bbv -q -i 3000 --rep $r -o "$T/w.bb" "$T/v.trace"
		if [ "$g" = threads ]; then
			# three runs: the workers may start in either order,
			# which numbers blocks and threads; each thread's
			# vectors by block address are the same
			eq "$g $r live" "$(by_addr "$T/t.bb")" "$(by_addr "$T/v.bb")"
			eq "$g $r bbv trace" "$(by_addr "$T/t.bb")" "$(by_addr "$T/w.bb")"
			continue
		fi
		for f in "$T"/t.bb*; do
			x=${f#"$T"/t.bb}
			eq "$g $r live$x" "$(cat "$f")" "$(cat "$T/v.bb$x")"
			eq "$g $r bbv trace$x" "$(cat "$f")" "$(cat "$T/w.bb$x")"
		done
	done
done
# The plugin counts in the callback while the guest has one thread and at
# most single=N blocks, then goes over to the writer thread's counting (as
# for several threads, checked against the trace above): the same vectors
# whether that happens never, at once (single=0) or mid-run.
P=${DBTPROF_PLUGIN:-$B/libdbtp-qemu.so}
for g in x86_64/rep c/hello; do
	for r in iter insn; do
		for n in 0 3 40 1048576; do
			qemu-x86_64 -plugin "$P,out=$T/s.trace,mode=bbv,interval=3000,rep=$r,single=$n" \
				"$G/$g" >/dev/null
			rep=per-iteration
			[ $r = insn ] && rep=per-instruction
			"$DBTPROF" bbv -q -i 3000 --rep $rep -o "$T/s$n.bb" "$T/s.trace"
			eq "$g rep=$r single=$n" "$(cat "$T/s0.bb")" "$(cat "$T/s$n.bb")"
		done
	done
done
contains "plugin single= checked" "single must be" \
	"$(qemu-x86_64 -plugin "$P,out=$T/s.trace,mode=bbv,single=-1" "$G/x86_64/loop" 2>&1 || true)"

# The run's last block closes an interval exactly (20,004 instructions):
# no empty interval follows, live or not.
"$DBTPROF" bbv -q -i 20004 -o "$T/x1.bb" -- "$G/x86_64/loop"
"$DBTPROF" bbv -q -i 20004 -o "$T/x2.bb" "$T/l.trace"
eq "exact last interval, live" "T:1:1 :2:20000 :3:3 " "$(cat "$T/x1.bb")"
eq "exact last interval, trace" "$(cat "$T/x2.bb")" "$(cat "$T/x1.bb")"
eq "bbv trace verifies" 0 "$(status "$DBTPROF" verify "$T/v.trace")"
eq "bbv trace, other interval" 1 "$(status "$DBTPROF" bbv -q -i 5000 -o "$T/x.bb" "$T/v.trace")"

# Errors and exit status.
eq "bbv status passes" 7 "$(status "$DBTPROF" bbv -q -i 1000 -o "$T/n.bb" -- "$G/x86_64/nested")"
eq "bbv no output" 2 "$(status "$DBTPROF" bbv "$T/l.trace")"
eq "bbv bad interval" 2 "$(status "$DBTPROF" bbv -i 0 -o "$T/x.bb" "$T/l.trace")"
"$DBTPROF" record -q -m count -o "$T/c.trace" -- "$G/x86_64/loop"
contains "bbv count mode" "count-mode" "$("$DBTPROF" bbv -o "$T/x.bb" "$T/c.trace" 2>&1 || true)"
done_ok

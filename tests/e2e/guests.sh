#!/bin/bash
# Exact numbers: record every test guest (x86-64 and AArch64, assembly and C)
# and compare what the trace says with tests/guests/expected.txt, whose
# numbers were derived by hand and confirmed with QEMU's own -d exec log and
# Valgrind (tests/guests/EXPECTED.md).  Keys this test does not measure
# (QEMU's vCPU index, stack addresses, retired-vs-entered splits) are listed
# in SKIP.
. tests/e2e/lib.sh
EXP=tests/guests/expected.txt
SKIP=' vcpu_index stack addr insns_retired blocks_completed fault '
# QEMU 7.2 runs no plugin exit callback when a guest dies of a signal: the
# events still buffered are lost (doc/design.md), so only how a crashing
# guest ends is compared here; tests/e2e/robust.sh checks its trace.
CRASHERS=' x86_64/segv aarch64/segv '

num() { # a decimal, negative or hex number as bash sees it
	echo $(($1))
}

facts() { # GUEST_BINARY TRACE -> "KEY VALUE" lines on stdout
	local tr=$2
	"$DBTPROF" dump --symbols "$tr" >"$T/dump"
	"$DBTPROF" stats --json --no-disasm --top 0 "$tr" >"$T/stats.json"
	echo "insns $(jq -r .instructions "$T/stats.json")"
	echo "blocks $(jq -r .block_executions "$T/stats.json")"
	echo "threads $(jq -r '.threads|length' "$T/stats.json")"
	# Threads in creation order: main first, then by creation point.
	jq -r '.threads | sort_by(if .parent == null then -1 else .created_at_blocks end)
		| to_entries[] | "\(.value.thread) \(.key)"' "$T/stats.json" >"$T/map"
	jq -r '.threads[] | select(.parent != null) | "\(.thread) \(.parent) \(.created_at_blocks) \(.created_at_instructions) \(.instructions) \(.block_executions)"' \
		"$T/stats.json" >"$T/tinfo"
	jq -r '.threads[] | select(.parent == null) | "\(.thread) - - - \(.instructions) \(.block_executions)"' \
		"$T/stats.json" >>"$T/tinfo"
	awk -v mapf="$T/map" '
	BEGIN { while ((getline l < mapf) > 0) { split(l, m, " "); ord["T" m[1]] = m[2] } }
	$2 == "block" {
		t = ord[$1]; a = $4
		execs[a]++; ins[a] = $5
		if (!(t SUBSEP a in seen)) { seen[t, a] = 1; dist[t]++ }
		if (!(a in all)) { all[a] = 1; ndist++ }
		if (!(t in first)) first[t] = a
		if ($6 ~ /^mt_marker\+/ && $5 == 2) { mk[t]++; mkall++; mkins = $5; mksym = "mt_marker" }
	}
	$2 == "syscall" {
		t = ord[$1]; nsys++
		if (t in sc) sc[t] = sc[t] "," $3; else sc[t] = $3
		nr[nsys] = $3; nm[nsys] = $4
		args[nsys] = $5 " " $6 " " $7 " " $8 " " $9 " " $10
		last[t] = nsys; ret[nsys] = "none"
		if ($4 ~ /^clone/) { ncl++; cl[ncl] = $5 }
	}
	$2 == "sysret" { t = ord[$1]; ret[last[t]] = $6 }
	END {
		print "distinct " ndist
		print "syscalls " nsys
		for (a in execs) { print "tb." a ".insns " ins[a]; print "tb." a ".execs " execs[a] }
		for (t in dist) print "thread" t ".distinct " dist[t]
		for (t in first) if (t > 0) print "thread" t ".start_pc " first[t]
		for (t in sc) print "thread" t ".syscalls " sc[t]
		for (i = 1; i <= nsys; i++) {
			print "syscall" i ".nr " nr[i]; print "syscall" i ".name " nm[i]
			print "syscall" i ".args " args[i]; print "syscall" i ".ret " ret[i]
		}
		for (i = 1; i <= ncl; i++) print "clone" i ".flags " cl[i]
		if (ncl) print "clone.flags " cl[1]
		if (mkall) { print "marker.symbol " mksym; print "marker.insns " mkins; print "marker.execs " mkall }
		for (t in mk) { print "thread" t ".marker_execs " mk[t]; if (t > 0) print "worker" (t - 1) ".marker_execs " mk[t] }
	}' "$T/dump"
	while read -r num parent cb ci insns blocks; do
		o=$(awk -v n="$num" '$1 == n { print $2 }' "$T/map")
		echo "thread$o.insns $insns"
		echo "thread$o.blocks $blocks"
		if [ "$parent" != - ]; then
			echo "thread$o.parent $(awk -v n="$parent" '$1 == n { print $2 }' "$T/map")"
			echo "thread$o.created_at_blocks $cb"
			echo "thread$o.created_at_insns $ci"
		fi
	done <"$T/tinfo"
}

compare() { # GUEST KEY EXPECTED FACTS_FILE
	local g=$1 k=$2 want=$3 f=$4 got
	got=$(awk -v k="$k" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$f")
	case $k in
	*.args)
		if [ "$want" = - ]; then return; fi
		IFS=, read -r -a w <<<"$want"
		read -r -a a <<<"$got"
		for i in "${!w[@]}"; do
			eq "$g $k[$i]" "$(num "${w[$i]}")" "$(num "${a[$i]:-x}")"
		done
		;;
	*.ret)
		[ "$want" = any ] && return
		if [ "$want" = none ]; then eq "$g $k" none "$got"; else eq "$g $k" "$(num "$want")" "$(num "${got:-x}")"; fi
		;;
	*.flags | *.start_pc | tb.*) eq "$g $k" "$(num "$want")" "$(num "${got:-x}")" ;;
	*) eq "$g $k" "$want" "$got" ;;
	esac
}

guests=$(grep -v '^#' "$EXP" | awk 'NF { print $1 }' | uniq)
nguests=0
for g in $guests; do
	[ "$g" = x86_64/spin ] && continue
	[ -x "$G/$g" ] || fail "guest $G/$g not built"
	set +e
	"$DBTPROF" record -q -o "$T/g.trace" -- "$G/$g" >"$T/stdout" 2>/dev/null
	s=$?
	set -e
	facts "$G/$g" "$T/g.trace" >"$T/facts"
	echo "status $s" >>"$T/facts"
	echo "signal $((s - 128))" >>"$T/facts"
	printf 'stdout %s\n' "$(sed ':a;N;$!ba;s/\n/\\n/g' "$T/stdout")" >>"$T/facts"
	[ -s "$T/stdout" ] && [ "$(tail -c1 "$T/stdout" | od -An -c | tr -d ' ')" = '\n' ] &&
		sed -i '$ s/$/\\n/' "$T/facts"
	[ -s "$T/stdout" ] || sed -i '$ s/.*/stdout -/' "$T/facts"
	while read -r eg key val; do
		[ "$eg" = "$g" ] || continue
		base=${key##*.}
		case "$SKIP" in *" $base "* | *" ${key%%.*} "*) continue ;; esac
		case "$CRASHERS" in *" $g "*) [ "$key" = signal ] || continue ;; esac
		compare "$g" "$key" "$val" "$T/facts"
	done < <(grep -v '^#' "$EXP")
	nguests=$((nguests + 1))
done
[ "$nguests" -ge 10 ] || fail "only $nguests guests checked"
echo "$nguests guests"
done_ok

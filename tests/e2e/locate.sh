#!/bin/bash
# locate: simulation-point markers at exact positions; --check finds them
# in a second recording, and reports moved and missing ones.
. tests/e2e/lib.sh

"$DBTPROF" record -q -o "$T/l1.trace" -- "$G/x86_64/loop"
"$DBTPROF" record -q -o "$T/l2.trace" -- "$G/x86_64/loop"
printf '2 0\n0 1\n4 2\n' >"$T/l.simpoints"
"$DBTPROF" locate -i 5000 -s "$T/l.simpoints" -o "$T/l.markers" "$T/l1.trace"
# Interval 2 starts after the block that ends interval 1 at 10,001
# instructions (see tests/e2e/bbv.sh): the 5,000th run of [dec; jnz].
eq "markers" "0 1 0 0x401000 1|2 0 10001 0x401007 5000|4 2 20001 0x40100c 1" \
	"$(grep -v '^#' "$T/l.markers" | cut -d' ' -f1-5 | paste -sd'|')"
eq "check same program" 0 "$(status "$DBTPROF" locate --check "$T/l.markers" "$T/l2.trace")"
"$DBTPROF" record -q -o "$T/n.trace" -- "$G/x86_64/nested" || true
set +e
out=$("$DBTPROF" locate --check "$T/l.markers" "$T/n.trace")
s=$?
set -e
eq "check other program" 1 "$s"
contains "gone" "GONE  interval 2: 0x401007 does not run 5000 times" "$out"

# A real program whose start-up work changes with the environment: the
# markers keep their code position but move by the same instruction delta.
seq 1 20000 >"$T/in.txt"
"$DBTPROF" record -q -o "$T/a.trace" -- sha256sum "$T/in.txt" >/dev/null
"$DBTPROF" record -q -e LONGER_ENVIRONMENT=1234567890 -o "$T/b.trace" -- sha256sum "$T/in.txt" >/dev/null
"$DBTPROF" bbv -q -i 100000 -o "$T/a.bb" "$T/a.trace"
"$DBTPROF" simpoint -i "$T/a.bb" -o "$T/a" >/dev/null
"$DBTPROF" locate -i 100000 -s "$T/a.simpoints" -o "$T/a.markers" "$T/a.trace"
eq "check identical run" 0 "$(status "$DBTPROF" locate --check "$T/a.markers" "$T/a.trace")"
set +e
out=$("$DBTPROF" locate --check "$T/a.markers" "$T/b.trace")
s=$?
set -e
delta=$(( $("$DBTPROF" stats --json "$T/b.trace" | jq .instructions) - $(js "$T/a.trace" .instructions) ))
checks=$((checks + 1))
[ "$delta" -ne 0 ] || fail "the environment no longer changes sha256sum's start-up"
eq "env shifts markers" 1 "$s"
contains "moved by the whole-run delta" "($(printf '%+d' "$delta"))" "$out"

# Errors.
printf 'x y\n' >"$T/bad.simpoints"
contains "bad simpoints" "line 1" "$("$DBTPROF" locate -s "$T/bad.simpoints" "$T/l1.trace" 2>&1 || true)"
printf '99 0\n' >"$T/far.simpoints"
contains "past the end" "past the end" "$("$DBTPROF" locate -i 5000 -s "$T/far.simpoints" "$T/l1.trace" 2>&1 || true)"
eq "no mode" 2 "$(status "$DBTPROF" locate "$T/l1.trace")"
done_ok

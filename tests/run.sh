#!/bin/sh
# Run every test: unit binaries, fuzz-corpus replays, end-to-end scripts.
# Prints one line per test and a closing "N passed, N failed".
# B selects the build directory (build, or build-asan under `make asan`).
B=${B:-build}
export B
DBTPROF=${DBTPROF:-$B/dbtprof}
export DBTPROF
pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {
	name=$1
	shift
	if "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		echo "ok    $name"
	else
		fail=$((fail + 1))
		echo "FAIL  $name"
		tail -n 30 "$log" | sed 's/^/      /'
	fi
}

for t in "$B"/tests/test-*; do
	[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
for r in "$B"/tests/replay-*; do
	[ -x "$r" ] || continue
	n=${r##*/replay-}
	set -- tests/fuzz/corpus/"$n"/* tests/fuzz/regress/"$n"/*
	files=
	for f in "$@"; do [ -f "$f" ] && files="$files $f"; done
	# shellcheck disable=SC2086
	run "fuzz-replay/$n" "$r" $files
done
for e in tests/e2e/*.sh; do
	[ "$(basename "$e")" = lib.sh ] && continue
	run "e2e/$(basename "$e" .sh)" bash "$e"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

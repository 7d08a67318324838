#!/bin/sh
# make fuzz: run each libFuzzer harness for FUZZ_SECONDS (default 60) from
# its corpus (undefined behaviour stops a run as a crash does); new crashers
# are written to tests/fuzz/regress/NAME/ (replayed by make check from then
# on).
set -eu
S=${FUZZ_SECONDS:-60}
B=build-fuzz
mkdir -p "$B"
for src in ${FUZZ_ONLY:-tests/fuzz/fuzz-*.c}; do
	n=$(basename "$src" .c)
	n=${n#fuzz-}
	clang -std=c11 -D_GNU_SOURCE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Iinclude -Ilib "$src" lib/*/*.c -o "$B/fuzz-$n" -lzstd -lcapstone -lpthread -lm
	mkdir -p "$B/corpus-$n" "tests/fuzz/regress/$n"
	echo "fuzz-$n: ${S}s"
	"$B/fuzz-$n" -max_total_time="$S" -artifact_prefix="tests/fuzz/regress/$n/" \
		"$B/corpus-$n" "tests/fuzz/corpus/$n"
done

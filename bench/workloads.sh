#!/bin/bash
# bench/workloads.sh - the dbtprof benchmark suite: workload definitions and
# deterministic input generation.  No downloads: every input is generated
# here with awk and touched to a fixed mtime, so it is byte-identical on
# every machine (the generator uses integer-only arithmetic).
#
# Sourced by bench/run.sh and bench/verify.sh, or used directly:
#   bash bench/workloads.sh list              workload names, one a line
#   bash bench/workloads.sh prepare [SCALE]   generate the inputs of SCALE
#   bash bench/workloads.sh cmd NAME [SCALE]  print the exact command line
#   bash bench/workloads.sh run NAME [SCALE]  run it natively (stdout kept)
#
# SCALE is "full" (default) or "small" (quick smoke run); the environment
# variable BENCH_SCALE sets the default.  Inputs go to BENCH_WORK (default
# bench/work/, gitignored).
#
# Workloads (stdout of each goes to /dev/null when timed):
#   sha256  sha256sum over a generated 20 MiB file         (2 MiB small)
#   xz      xz -6 -T1 -c on a generated 8 MiB log text     (1 MiB small)
#   lua     lua5.4 -E bench/lua/bench.lua full|small
#   sqlite  sqlite3 -init /dev/null :memory: with bench/sql/bench.sql,
#           200k order rows (20k small)
#   pigz    pigz -p 4 -6 -c on the same 8 MiB text         (1 MiB small)

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi

BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
BENCH_WORK=${BENCH_WORK:-$BENCH_DIR/work}
BENCH_SCALE=${BENCH_SCALE:-full}

BENCH_WORKLOADS_ALL="sha256 xz lua sqlite pigz"

# Options the workload programs take from the environment would make native,
# QEMU and dbtprof runs differ (dbtprof gives the guest a controlled
# environment); drop them, and fix the locale.
unset XZ_OPT XZ_DEFAULTS PIGZ GZIP LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_PATH_5_4 \
	LUA_CPATH LUA_CPATH_5_4 SQLITE_HISTORY GLIBC_TUNABLES
export LC_ALL=C

# Fixed mtime for generated inputs (pigz stores the mtime in its header).
BENCH_INPUT_MTIME=@1700000000

# Expected sha256 of the generated inputs (checked after generation; a
# mismatch means a broken awk, and the results would not be comparable).
bench_expected_sum() {
	case $1 in
	text-full.txt) echo 3e903171aaa939b8b47ef7b1fd70ac06473b047de08b1b616a642a06f95dd059 ;;
	text-small.txt) echo c3f60a2a70a02d769e2a7db586208657699a89787861a13a46c494551b1eded5 ;;
	blob-full.bin) echo 653cd9de853708273c12e50fce06fab6b8c17b45d8f5db2d723753b37d1b5338 ;;
	blob-small.bin) echo 5f3e0b8d91cb723f034e3dfd35f310fe068a71a7c849080d1308cff8edaabf0e ;;
	esac
}

bench_die() { echo "bench: $*" >&2; exit 1; }

bench_check_scale() {
	case $1 in
	full | small) ;;
	*) bench_die "unknown scale '$1' (use full or small)" ;;
	esac
}

# Absolute path of a program: qemu-user does not search PATH.
bench_prog() {
	local p
	p=$(command -v "$1" 2>/dev/null) || bench_die "'$1' not found (make deps installs it)"
	case $p in
	/*) printf '%s\n' "$p" ;;
	*) bench_die "'$1' is not an executable file ($p)" ;;
	esac
}

# bench_gen_text FILE BYTES SEED - pseudo-log text, semi-compressible
# (xz -6 gets about 4.4:1): timestamps, levels, hosts, Zipf-ish words
# drawn from a generated 3000-word vocabulary, and random numbers.
bench_gen_text() {
	local file=$1 bytes=$2 seed=$3
	awk -v bytes="$bytes" -v seed="$seed" '
	function rnd(n) { seed = (seed * 16807) % 2147483647; return seed % n }
	BEGIN {
		ns = split("ka ri to mo na le su vi de po ga chi ren al or ex in un per con tra bel sor mi", syl, " ")
		V = 3000
		for (i = 0; i < V; i++) {
			w = ""; k = 1 + rnd(3) + rnd(2)
			for (j = 0; j < k; j++) w = w syl[1 + rnd(ns)]
			word[i] = w
		}
		nl = split("INFO INFO INFO INFO DEBUG DEBUG WARN ERROR", lvl, " ")
		out = 0; line = 0
		while (out < bytes) {
			line++
			s = sprintf("2024-06-%02d %02d:%02d:%02d.%03d %-5s host%02d worker[%d]:", \
			    1 + int(line / 400000) % 28, int(line / 16000) % 24, int(line / 270) % 60, \
			    int(line / 4.5) % 60, rnd(1000), lvl[1 + rnd(nl)], rnd(40), 1000 + rnd(64))
			n = 4 + rnd(10)
			for (j = 0; j < n; j++) {
				u = rnd(1000000) / 1000000
				s = s " " word[int(V * u * u * u)]
				if (rnd(8) == 0) s = s "=" rnd(100000)
			}
			print s
			out += length(s) + 1
		}
	}' >"$file.tmp" && truncate -s "$bytes" "$file.tmp" || return 1
	touch -d "$BENCH_INPUT_MTIME" "$file.tmp" && mv "$file.tmp" "$file"
}

# bench_input NAME SCALE - print the path of an input file.
bench_input() {
	case $1 in
	blob) echo "$BENCH_WORK/blob-$2.bin" ;;
	text) echo "$BENCH_WORK/text-$2.txt" ;;
	esac
}

bench_input_bytes() {
	case $1-$2 in
	blob-full) echo 20971520 ;;
	blob-small) echo 2097152 ;;
	text-full) echo 8388608 ;;
	text-small) echo 1048576 ;;
	esac
}

# bench_prepare [SCALE] - generate the inputs of SCALE unless present.
bench_prepare() {
	local scale=${1:-$BENCH_SCALE} kind file bytes seed sum
	bench_check_scale "$scale"
	mkdir -p "$BENCH_WORK" || bench_die "cannot create $BENCH_WORK"
	for kind in text blob; do
		file=$(bench_input "$kind" "$scale")
		bytes=$(bench_input_bytes "$kind" "$scale")
		if [ -f "$file" ] && [ "$(stat -c %s "$file")" = "$bytes" ]; then
			continue
		fi
		case $kind in
		text) seed=20240601 ;;
		blob) seed=19700101 ;;
		esac
		echo "bench: generating $file ($bytes bytes)" >&2
		bench_gen_text "$file" "$bytes" "$seed" || bench_die "cannot generate $file"
		sum=$(sha256sum "$file" | cut -d' ' -f1)
		if [ "$sum" != "$(bench_expected_sum "${file##*/}")" ]; then
			echo "bench: warning: $file has sha256 $sum, not the expected one;" \
				"results are not comparable with other machines (awk: $(command -v awk))" >&2
		fi
	done
}

# bench_sums - sha256 of every generated input (for BENCH_INPUTS.sha256).
bench_sums() {
	(cd "$BENCH_WORK" && sha256sum blob-*.bin text-*.txt 2>/dev/null)
}

# bench_argv NAME [SCALE] - set the array WL_ARGV to the exact command line
# of workload NAME (absolute program path first).  stdout of the command is
# the workload's output; it reads nothing from stdin.
bench_argv() {
	local name=$1 scale=${2:-$BENCH_SCALE}
	bench_check_scale "$scale"
	case $name in
	sha256)
		WL_ARGV=("$(bench_prog sha256sum)" "$(bench_input blob "$scale")") ;;
	xz)
		WL_ARGV=("$(bench_prog xz)" -6 -T1 -c "$(bench_input text "$scale")") ;;
	lua)
		WL_ARGV=("$(bench_prog lua5.4)" -E "$BENCH_DIR/lua/bench.lua" "$scale") ;;
	sqlite)
		local n=200000
		[ "$scale" = small ] && n=20000
		WL_ARGV=("$(bench_prog sqlite3)" -init /dev/null :memory: ".parameter set @n $n"
			".read $BENCH_DIR/sql/bench.sql") ;;
	pigz)
		WL_ARGV=("$(bench_prog pigz)" -p 4 -6 -c "$(bench_input text "$scale")") ;;
	*)
		bench_die "unknown workload '$name' (have: $BENCH_WORKLOADS_ALL)" ;;
	esac
}

# Human-readable, shell-quoted command line of a workload.
bench_cmdline() {
	bench_argv "$@" || return 1
	printf '%q ' "${WL_ARGV[@]}" | sed 's/ $//'
	echo
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	case ${1:-} in
	list) for w in $BENCH_WORKLOADS_ALL; do echo "$w"; done ;;
	prepare) bench_prepare "${2:-$BENCH_SCALE}" && bench_sums ;;
	cmd) [ $# -ge 2 ] || bench_die "usage: $0 cmd NAME [SCALE]"
		bench_cmdline "$2" "${3:-$BENCH_SCALE}" ;;
	run) [ $# -ge 2 ] || bench_die "usage: $0 run NAME [SCALE]"
		bench_prepare "${3:-$BENCH_SCALE}"
		bench_argv "$2" "${3:-$BENCH_SCALE}"
		exec "${WL_ARGV[@]}" </dev/null ;;
	*) echo "usage: $0 list | prepare [SCALE] | cmd NAME [SCALE] | run NAME [SCALE]" >&2
		exit 2 ;;
	esac
fi

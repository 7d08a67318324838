#!/bin/bash
# bench/run.sh - run the dbtprof benchmark suite (see bench/README.md).
#
# For every workload of bench/workloads.sh, side by side in one session and
# interleaved rep by rep: native, plain `qemu-x86_64 -cpu qemu64`, and
# `dbtprof record --mode count|blocks|mem`.  Median wall time of BENCH_REPS
# runs, peak RSS, trace size and `dbtprof stats --json` counts.
#
# Output: bench/out/results.csv (machine-readable), bench/out/results.md and
# the same Markdown on stdout (paste into bench/RESULTS.md).  Progress lines
# go to stderr; the stderr of every run is kept in bench/out/logs/.
#
# Environment (all optional):
#   BENCH_SCALE      full (default) or small (smoke run, a few seconds each)
#   BENCH_REPS       repetitions per configuration (default 3)
#   BENCH_WORKLOADS  subset, e.g. "xz lua" (default: all)
#   BENCH_CONFIGS    subset of "native qemu count blocks mem" (default: all)
#   BENCH_MEM_SCALE  scale for mem mode (default small: its traces are big;
#                    a qemu/native anchor at that scale is added for ratios)
#   BENCH_TIMEOUT    seconds per run before it is killed (default 3600, 0=off)
#   BENCH_KEEP_TRACES=1  keep the trace files in BENCH_WORK/traces
#   BENCH_OUT        output directory (default bench/out)
#   BENCH_WORK       input/trace directory (default bench/work)
#   DBTPROF          dbtprof binary (default build/dbtprof; skipped if missing)
#   QEMU             plain QEMU anchor binary (default qemu-x86_64)

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -u

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
# shellcheck source=bench/workloads.sh
. "$BENCH_DIR/workloads.sh"

SCALE=${BENCH_SCALE:-full}
REPS=${BENCH_REPS:-3}
WORKLOADS=${BENCH_WORKLOADS:-$BENCH_WORKLOADS_ALL}
CONFIGS=${BENCH_CONFIGS:-native qemu count blocks mem}
MEM_SCALE=${BENCH_MEM_SCALE:-small}
TIMEOUT=${BENCH_TIMEOUT:-3600}
OUT=${BENCH_OUT:-$BENCH_DIR/out}
DBTPROF=${DBTPROF:-$ROOT/build/dbtprof}
QEMU=${QEMU:-qemu-x86_64}
TRACES=$BENCH_WORK/traces

bench_check_scale "$SCALE"
bench_check_scale "$MEM_SCALE"
case $REPS in '' | *[!0-9]* | 0) bench_die "BENCH_REPS must be a positive integer" ;; esac
for w in $WORKLOADS; do bench_argv "$w" "$SCALE" >/dev/null; done
for c in $CONFIGS; do
	case $c in native | qemu | count | blocks | mem) ;; *) bench_die "unknown config '$c'" ;; esac
done

log() { echo "bench: $*" >&2; }
now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
has_config() { case " $CONFIGS " in *" $1 "*) return 0 ;; esac; return 1; }
is_dbtprof() { case $1 in count | blocks | mem) return 0 ;; esac; return 1; }

QEMU_BIN=$(command -v "$QEMU") || bench_die "$QEMU not found"
HAVE_DBTPROF=1
if [ ! -x "$DBTPROF" ]; then
	HAVE_DBTPROF=0
	log "$DBTPROF not found (run make): skipping the count/blocks/mem configs"
fi

# GNU time gives peak RSS; without it only wall time is measured.
TIME_BIN=
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
	TIME_BIN=/usr/bin/time
else
	log "/usr/bin/time (GNU) missing: peak RSS is left out"
fi
TIMEOUT_BIN=
if [ "$TIMEOUT" != 0 ] && command -v timeout >/dev/null; then TIMEOUT_BIN=$(command -v timeout); fi

mkdir -p "$OUT/logs" "$TRACES" || bench_die "cannot create $OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbtprof-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The list of runs of one workload: "config:scale" words.  mem runs at
# MEM_SCALE; when that differs from SCALE, native and qemu also run there so
# the mem ratios have an anchor.
RUNS=
for c in $CONFIGS; do
	if is_dbtprof "$c" && [ $HAVE_DBTPROF = 0 ]; then continue; fi
	if [ "$c" = mem ]; then continue; fi
	RUNS="$RUNS $c:$SCALE"
done
if has_config mem && [ $HAVE_DBTPROF = 1 ]; then
	if [ "$MEM_SCALE" != "$SCALE" ]; then
		has_config native && RUNS="$RUNS native:$MEM_SCALE"
		has_config qemu && RUNS="$RUNS qemu:$MEM_SCALE"
	fi
	RUNS="$RUNS mem:$MEM_SCALE"
fi
[ -n "$RUNS" ] || bench_die "nothing to run"

bench_prepare "$SCALE"
[ "$MEM_SCALE" != "$SCALE" ] && has_config mem && bench_prepare "$MEM_SCALE"

# run_one WORKLOAD CONFIG SCALE - one timed run; appends "wall rss status"
# to $tmp/WORKLOAD.CONFIG.SCALE.
run_one() {
	local w=$1 c=$2 s=$3 trace="$TRACES/$1-$3-$2.trace" key="$1.$2.$3"
	local -a cmd pre=()
	bench_argv "$w" "$s"
	case $c in
	native) cmd=("${WL_ARGV[@]}") ;;
	qemu) cmd=("$QEMU_BIN" -cpu qemu64 "${WL_ARGV[@]}") ;;
	*) rm -f "$trace"
		cmd=("$DBTPROF" record --mode "$c" -o "$trace" -- "${WL_ARGV[@]}") ;;
	esac
	[ -n "$TIMEOUT_BIN" ] && pre=("$TIMEOUT_BIN" -s KILL "$TIMEOUT")
	[ -n "$TIME_BIN" ] && pre=("$TIME_BIN" -f %M -o "$tmp/time" "${pre[@]}")
	: >"$tmp/time"
	local t0 t1 st rss=
	t0=$(now)
	"${pre[@]}" "${cmd[@]}" </dev/null >/dev/null 2>"$OUT/logs/$w-$s-$c.stderr"
	st=$?
	t1=$(now)
	[ -n "$TIME_BIN" ] && rss=$(tail -n 1 "$tmp/time" | tr -cd 0-9)
	local wall
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "$wall ${rss:--} $st" >>"$tmp/$key"
	log "$(printf '%-7s %-5s %-6s rep %d/%d: %8.2f s  status %s' "$w" "$s" "$c" "$rep" "$REPS" "$wall" "$st")"
	if [ "$st" != 0 ]; then
		sed 's/^/    | /' "$OUT/logs/$w-$s-$c.stderr" | tail -n 5 >&2
	fi
}

# json_num FILE KEY - the first number stored under "KEY" in a JSON file.
json_num() {
	tr -d '\n\r' <"$1" | grep -o "\"$2\"[[:space:]]*:[[:space:]]*[0-9][0-9.eE+]*" |
		head -n 1 | sed 's/.*:[[:space:]]*//'
}

# median - "median min max" of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit;
	if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2;
	printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'; }

CSV=$OUT/results.csv
echo "workload,scale,config,reps,wall_s_median,wall_s_min,wall_s_max,ratio_vs_qemu,ratio_vs_native,peak_rss_kb,status,trace_bytes,block_executions,instructions,memory_accesses,bytes_per_block,bytes_per_mem_access,raw4_bytes,trace_vs_raw4" >"$CSV.tmp"

FAILED=0
START=$(now)
for w in $WORKLOADS; do
	log "$w: $(bench_cmdline "$w" "$SCALE")"
	for rep in $(seq 1 "$REPS"); do
		for r in $RUNS; do run_one "$w" "${r%%:*}" "${r#*:}"; done
	done
	# Summaries: medians first (ratios need the anchors), then the stats.
	for r in $RUNS; do
		c=${r%%:*} s=${r#*:} key="$w.$c.$s"
		read -r med min max < <(cut -d' ' -f1 "$tmp/$key" | median)
		rss=$(cut -d' ' -f2 "$tmp/$key" | grep -v -- - | median | cut -d' ' -f3)
		# status: 0 when every rep exited 0, else the first non-zero status.
		st=$(cut -d' ' -f3 "$tmp/$key" | grep -v '^0$' | head -n 1)
		rss=${rss%.000}
		echo "$med $min $max ${rss:--} ${st:-0}" >"$tmp/$key.sum"
	done
	for r in $RUNS; do
		c=${r%%:*} s=${r#*:} key="$w.$c.$s"
		read -r med min max rss st <"$tmp/$key.sum"
		[ "$rss" = - ] && rss=
		q=$(cut -d' ' -f1 "$tmp/$w.qemu.$s.sum" 2>/dev/null)
		n=$(cut -d' ' -f1 "$tmp/$w.native.$s.sum" 2>/dev/null)
		rq=$(awk -v a="$med" -v b="${q:-}" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
		rn=$(awk -v a="$med" -v b="${n:-}" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
		tb='' blk='' ins='' mem='' bpb='' bpm='' raw4='' tr4=''
		if [ "$st" != 0 ]; then
			FAILED=1
		fi
		if is_dbtprof "$c"; then
			trace="$TRACES/$w-$s-$c.trace"
			if [ "$st" != 0 ]; then
				log "$w $s $c: failed (exit $st), trace not analysed; see $OUT/logs/$w-$s-$c.stderr"
				[ "${BENCH_KEEP_TRACES:-0}" = 1 ] || rm -f "$trace"
			elif [ -f "$trace" ]; then
				tb=$(stat -c %s "$trace")
				if "$DBTPROF" stats --json "$trace" >"$tmp/stats.json" 2>"$OUT/logs/$w-$s-$c.stats.stderr"; then
					cp "$tmp/stats.json" "$OUT/logs/$w-$s-$c.stats.json"
					blk=$(json_num "$tmp/stats.json" block_executions)
					ins=$(json_num "$tmp/stats.json" instructions)
					mem=$(json_num "$tmp/stats.json" memory_accesses)
				else
					log "$w $s $c: dbtprof stats --json failed (see $OUT/logs/$w-$s-$c.stats.stderr)"
					FAILED=1
				fi
				[ "${BENCH_KEEP_TRACES:-0}" = 1 ] || rm -f "$trace"
			else
				log "$w $s $c: no trace file written"
				FAILED=1
			fi
			if [ -n "$blk" ]; then
				raw4=$(awk -v b="$blk" 'BEGIN { printf "%.0f", 4 * b }')
			fi
			if [ "$c" = blocks ] && [ -n "$tb" ] && [ -n "$blk" ]; then
				bpb=$(awk -v t="$tb" -v b="$blk" 'BEGIN { if (b > 0) printf "%.4f", t / b }')
				tr4=$(awk -v t="$tb" -v r="$raw4" 'BEGIN { if (r > 0) printf "%.4f", t / r }')
			fi
			if [ "$c" = mem ] && [ -n "$tb" ] && [ -n "$mem" ]; then
				bpm=$(awk -v t="$tb" -v m="$mem" 'BEGIN { if (m > 0) printf "%.4f", t / m }')
			fi
		fi
		echo "$w,$s,$c,$REPS,$med,$min,$max,$rq,$rn,$rss,$st,$tb,$blk,$ins,$mem,$bpb,$bpm,$raw4,$tr4" >>"$CSV.tmp"
	done
done
mv "$CSV.tmp" "$CSV"
log "done in $(awk -v a="$START" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s; $CSV"

# ---------------------------------------------------------------- Markdown
cpu_model=$(grep -m 1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*:[[:space:]]*//')
os_name=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") )
qemu_ver=$("$QEMU_BIN" --version | head -n 1)
if dbtprof_rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
	git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || dbtprof_rev="$dbtprof_rev, dirty tree"
else
	dbtprof_rev="no commit yet"
fi
invocation=
for v in BENCH_SCALE BENCH_REPS BENCH_WORKLOADS BENCH_CONFIGS BENCH_MEM_SCALE BENCH_TIMEOUT DBTPROF QEMU; do
	if [ -n "${!v+x}" ]; then invocation="$invocation$v=$(printf '%q' "${!v}") "; fi
done
case $0 in "$ROOT"/*) self=${0#"$ROOT"/} ;; *) self=$0 ;; esac
invocation="${invocation}sh $self"

# human N - 3 significant digits with k/M/G/T suffix.
human() {
	awk -v x="$1" 'BEGIN { if (x == "") exit; s = ""; split("k M G T", u, " ")
		for (i = 1; i <= 4 && x >= 1000; i++) { x /= 1000; s = " " u[i] }
		if (x >= 100 || s == "" && x == int(x)) f = "%.0f"; else if (x >= 10) f = "%.1f"; else f = "%.2f"
		printf f "%s", x, s }'
}
mib() { awk -v x="$1" 'BEGIN { if (x != "") printf "%.2f", x / 1048576 }'; }
fix() { awk -v x="$1" -v p="$2" 'BEGIN { if (x != "") printf "%." p "f", x }'; }

{
	echo "### dbtprof benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- Command: \`$invocation\` (dbtprof $dbtprof_rev)"
	echo "- Machine: $(nproc) CPUs, ${cpu_model:-unknown CPU}; Linux $(uname -r); ${os_name:-unknown OS}"
	echo "- QEMU: $qemu_ver; anchor \`qemu-x86_64 -cpu qemu64\`"
	echo "- Median of $REPS interleaved runs, wall seconds; \`× qemu\` and \`× native\` compare with the same workload at the same scale."
	if has_config mem && [ "$MEM_SCALE" != "$SCALE" ] && [ $HAVE_DBTPROF = 1 ]; then
		echo "- mem mode runs at scale \`$MEM_SCALE\` only (its traces are large), with native and qemu anchors at that scale."
	fi
	[ -z "$TIME_BIN" ] && echo "- Peak RSS not measured (no GNU /usr/bin/time)."
	[ $HAVE_DBTPROF = 0 ] && echo "- dbtprof configs skipped: \`$DBTPROF\` was not built."
	echo
	echo "| workload | scale | config | wall s | × qemu | × native | peak RSS MiB | trace MiB | block execs | instructions | B/block | B/mem access | raw4 MiB | trace/raw4 |"
	echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
	tail -n +2 "$CSV" | while IFS=, read -r w s c _ med min max rq rn rss st tb blk ins mem bpb bpm raw4 tr4; do
		wall=$(fix "$med" 2)
		[ "$st" != 0 ] && wall="$wall FAIL($st)"
		rssm=
		[ -n "$rss" ] && rssm=$(awk -v x="$rss" 'BEGIN { printf "%.0f", x / 1024 }')
		echo "| $w | $s | $c | $wall | $(fix "$rq" 2) | $(fix "$rn" 2) | $rssm | $(mib "$tb") | $(human "$blk") | $(human "$ins") | $(fix "$bpb" 3) | $(fix "$bpm" 3) | $(mib "$raw4") | $(fix "$tr4" 3) |"
	done
	echo
	echo "Targets (xz and lua; meaningful at scale full): count ≤ 1.15× qemu, blocks ≤ 2.00× qemu (compression included)."
	echo
	echo "| workload | scale | count × qemu | count target | blocks × qemu | blocks target |"
	echo "|---|---|--:|---|--:|---|"
	for w in xz lua; do
		case " $WORKLOADS " in *" $w "*) ;; *) continue ;; esac
		line="| $w | $SCALE"
		for m in count:1.15 blocks:2.00; do
			row=$(awk -F, -v w="$w" -v s="$SCALE" -v c="${m%%:*}" '$1 == w && $2 == s && $3 == c' "$CSV")
			rq=$(echo "$row" | cut -d, -f8)
			st=$(echo "$row" | cut -d, -f11)
			if [ -z "$row" ] || [ -z "$rq" ]; then
				verdict="not run"
			elif [ "$st" != 0 ]; then
				verdict="FAIL (exit $st)"
			else
				verdict=$(awk -v r="$rq" -v t="${m#*:}" 'BEGIN { print (r <= t) ? "met" : "MISSED" }')
			fi
			line="$line | $(fix "$rq" 2) | $verdict"
		done
		echo "$line |"
	done
	echo
	echo "Workload commands (scale $SCALE; stdout to /dev/null):"
	echo
	for w in $WORKLOADS; do
		echo "- $w: \`$(bench_cmdline "$w" "$SCALE" | sed "s|$ROOT/||g")\`"
	done
} | tee "$OUT/results.md"

exit $FAILED

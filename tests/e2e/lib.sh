# Shared helpers of the end-to-end tests (sourced).  Each test exits
# non-zero at the first failed check and says what it expected.
set -eu
B=${B:-build}
DBTPROF=${DBTPROF:-$B/dbtprof}
G=$B/guests
# Absolute, so tests may change directory.
case $DBTPROF in /*) ;; *) DBTPROF=$(pwd)/$DBTPROF ;; esac
case $G in /*) ;; *) G=$(pwd)/$G ;; esac
ulimit -c 0 # QEMU writes core files for crashing guests otherwise
T=$(mktemp -d /tmp/dbtprof-e2e.XXXXXX)
trap 'rm -rf "$T"' EXIT
checks=0

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# eq WHAT EXPECTED ACTUAL
eq() {
	checks=$((checks + 1))
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# contains WHAT NEEDLE HAYSTACK
contains() {
	checks=$((checks + 1))
	case $3 in
	*"$2"*) ;;
	*) fail "$1: '$2' not in: $3" ;;
	esac
}

# status CMD... : prints the exit status, never fails
status() {
	set +e
	"$@" >/dev/null 2>&1
	s=$?
	set -e
	echo $s
}

# rec TRACE GUEST ARGS... : record quietly; prints the exit status
rec() {
	out=$1
	shift
	status "$DBTPROF" record -q -o "$out" -- "$@"
}

# js TRACE FILTER : a value from `stats --json`
js() {
	"$DBTPROF" stats --json --no-disasm --top 0 "$1" | jq -r "$2"
}

done_ok() {
	echo "$checks checks passed"
}

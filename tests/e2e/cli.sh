#!/bin/sh
# The command line: help for every command, clear errors, the guest's stdio
# and status passing through, dynamic AArch64 programs, pipes.
. tests/e2e/lib.sh

for c in record stats dump verify; do
	eq "$c --help" 0 "$(status "$DBTPROF" $c --help)"
	contains "$c --help" "usage: dbtprof $c" "$("$DBTPROF" $c --help)"
	eq "$c bad option" 2 "$(status "$DBTPROF" $c --no-such-option x)"
done
eq "dbtprof --help" 0 "$(status "$DBTPROF" --help)"
eq "unknown command" 2 "$(status "$DBTPROF" frobnicate)"
eq "no args" 2 "$(status "$DBTPROF")"

set +e
out=$("$DBTPROF" record -o "$T/x.trace" -- /no/such/program 2>&1)
s=$?
set -e
eq "missing program status" 125 "$s"
contains "missing program" "program not found" "$out"
printf 'echo hi\n' >"$T/text"
chmod +x "$T/text"
contains "not ELF" "not an ELF" "$("$DBTPROF" record -o "$T/x.trace" -- "$T/text" 2>&1 || true)"

# A "#!" script runs as Linux runs it, its interpreter recorded: the same
# words reach it as natively (the script's path as given, the line's one
# argument, the interpreter a script in turn), `#!/usr/bin/env NAME` runs
# NAME from the guest's PATH, and the status passes through.
printf '#!/bin/sh\necho "hi $0 $*"\nexit 3\n' >"$T/script.sh"
printf '#!/usr/bin/env   sh  \necho "env $0 $*"\n' >"$T/env.sh"
printf '#!%s  x  y\n' "$T/script.sh" >"$T/nested"
printf '#!/no/such/shell\n' >"$T/missing"
printf '#!  \n' >"$T/empty"
printf '#!/usr/bin/env no-such-tool-here\n' >"$T/noenv"
chmod +x "$T/script.sh" "$T/env.sh" "$T/nested" "$T/missing" "$T/empty" "$T/noenv"
for s in script.sh env.sh nested; do
	set +e
	native=$(cd "$T" && "./$s" a b)
	ns=$?
	recorded=$(cd "$T" && "$DBTPROF" record -q -o "$T/$s.trace" -- "./$s" a b)
	rs=$?
	set -e
	eq "#! $s output" "$native" "$recorded"
	eq "#! $s status" "$ns" "$rs"
	eq "#! $s verifies" 0 "$(status "$DBTPROF" verify "$T/$s.trace")"
done
eq "#! output" "hi ./script.sh a b" "$(cd "$T" && "$DBTPROF" record -q -o "$T/x.trace" -- ./script.sh a b || true)"
eq "#! nested output" "hi $T/script.sh x  y ./nested a b" \
	"$(cd "$T" && "$DBTPROF" record -q -o "$T/x.trace" -- ./nested a b || true)"
q=$(js "$T/script.sh.trace" .qemu_command)
contains "#! interpreter recorded" "$(readlink -f /bin/sh) ./script.sh a b" "$q"
contains "#! argv[0]" "-0 sh " "$q"
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "inner $0 $*"\n' >"$T/bin/inner"
printf '#!/usr/bin/env inner\n' >"$T/outer"
chmod +x "$T/bin/inner" "$T/outer"
eq "#! env to a script" "$(cd "$T" && PATH="$T/bin:/usr/bin:/bin" ./outer a)" \
	"$(cd "$T" && "$DBTPROF" record -q -e PATH="$T/bin:/usr/bin:/bin" -o "$T/x.trace" -- ./outer a)"
for s in missing empty noenv; do
	eq "#! $s status" 125 "$(status "$DBTPROF" record -o "$T/x.trace" -- "$T/$s")"
	eq "#! $s one line" 1 "$("$DBTPROF" record -o "$T/x.trace" -- "$T/$s" 2>&1 | wc -l)"
done
contains "#! missing" "its interpreter /no/such/shell is missing" \
	"$("$DBTPROF" record -o "$T/x.trace" -- "$T/missing" 2>&1 || true)"
contains "#! empty" "names no interpreter" \
	"$("$DBTPROF" record -o "$T/x.trace" -- "$T/empty" 2>&1 || true)"
contains "#! env" "no-such-tool-here not found in the guest's PATH" \
	"$("$DBTPROF" record -o "$T/x.trace" -- "$T/noenv" 2>&1 || true)"
eq "no output" 2 "$(status "$DBTPROF" record -- "$G/x86_64/loop")"
eq "bad mode" 2 "$(status "$DBTPROF" record -m fast -o "$T/x.trace" -- "$G/x86_64/loop")"
contains "missing qemu" "QEMU not found" \
	"$("$DBTPROF" record --qemu /no/qemu -o "$T/x.trace" -- "$G/x86_64/loop" 2>&1 || true)"

# stdout, stderr and status pass through.
out=$("$DBTPROF" record -q -o "$T/s.trace" -- "$G/x86_64/syscalls" 2>/dev/null || true)
eq "guest stdout" "hello" "$out"
eq "guest status" 3 "$(rec "$T/s.trace" "$G/x86_64/syscalls")"
eq "nested status" 7 "$(rec "$T/n.trace" "$G/x86_64/nested")"
out=$("$DBTPROF" record -q -o "$T/e.trace" -- /bin/sh -c 'echo out; echo err >&2; exit 5' 2>"$T/err") || true
eq "sh stdout" out "$out"
eq "sh stderr" err "$(cat "$T/err")"
eq "sh status" 5 "$(rec "$T/e.trace" /bin/sh -c 'exit 5')"
echo "piped input" | "$DBTPROF" record -q -o "$T/cat.trace" -- cat >"$T/cat.out"
eq "guest stdin" "piped input" "$(cat "$T/cat.out")"

# A dynamically linked AArch64 program runs with Debian's cross sysroot.
out=$("$DBTPROF" record -q -o "$T/a.trace" -- "$G/c-aarch64/hello")
eq "aarch64 hello" "hello from guest" "$out"
eq "aarch64 arch" aarch64 "$(js "$T/a.trace" .arch)"
contains "aarch64 qemu" "-L /usr/aarch64-linux-gnu" "$(js "$T/a.trace" .qemu_command)"
eq "aarch64 missing sysroot" 125 \
	"$(status "$DBTPROF" record --sysroot /nonexistent -o "$T/b.trace" -- "$G/c-aarch64/hello")"

# A trace read from a pipe gives the same numbers as from the file.
eq "stdin trace" "$(js "$T/n.trace" .instructions)" \
	"$("$DBTPROF" stats --json - <"$T/n.trace" | jq -r .instructions)"

# Live: the trace goes through a pipe to a reader in another process while
# the guest runs (its stdout kept apart).
out=$("$DBTPROF" record -q -o /dev/fd/3 -- "$G/x86_64/threads" 3>&1 >/dev/null |
	"$DBTPROF" stats --json - | jq -r '[.instructions, (.threads|length), .end.complete] | join(" ")')
eq "live pipe" "300036 3 true" "$out"

# dump: threads, limits, syscalls by name.
eq "dump limit" 5 "$("$DBTPROF" dump --limit 5 "$T/s.trace" | wc -l)"
contains "dump syscall" "syscall 1 write 0x1" "$("$DBTPROF" dump "$T/s.trace")"
contains "dump sysret" "sysret 3 close = -9" "$("$DBTPROF" dump "$T/s.trace")"
contains "dump blocks" "syscall" "$("$DBTPROF" dump --blocks "$T/s.trace")"
done_ok

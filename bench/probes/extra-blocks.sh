#!/bin/bash
# bench/probes/extra-blocks.sh PROGRAM [ARGS...]: the translated blocks a
# generated test program runs beyond its copies' entries, by what ends the
# block before them.  Records PROGRAM with `dbtprof record -m count`; a
# block that does not start at a label of the program's own (a copy,
# gt_b<K>_body or gt_b<K>_c<J>, a pad, a function) is put to the
# instruction before it in `objdump -d`, or to "page" where that one or
# it crosses into another 4 KiB page.  Block executions by (symbol kind,
# reason), largest first.
set -eu
D=${DBTPROF:-$(dirname "$0")/../../build/dbtprof}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$D" record -q -m count -o "$t/c.trace" -- "$@" >/dev/null
"$D" dump --blocks --symbols "$t/c.trace" | awk '$1 == "block" { print $2, $3, $NF }' >"$t/blocks"
"$D" dump "$t/c.trace" | awk '$1 == "count" { print $2, $6 }' >"$t/counts"
objdump -d --no-show-raw-insn -M intel "$1" >"$t/dis"
base=$(nm "$1" | awk '$3 == "main" { print $1 }')
load=$(awk '$3 ~ /^main\+0x0$/ { print $2 }' "$t/blocks" | head -n 1)
python3 - "$t" "$base" "${load:-0x0}" <<'PY'
import bisect, collections, re, sys
t, base, load = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
bias = load - base if load else 0
ins, addrs = {}, []
for l in open(t + '/dis'):
    m = re.match(r'\s+([0-9a-f]+):\s+(.*)', l)
    if m:
        a = int(m.group(1), 16); ins[a] = m.group(2).split(); addrs.append(a)
addrs.sort()
cnt = dict(l.split() for l in open(t + '/counts'))
c = collections.Counter()
for l in open(t + '/blocks'):
    i, a, sym = l.split()
    ex = int(cnt.get(i, 0))
    if not ex or sym.endswith('+0x0') or '.so' in sym or '+' not in sym:
        continue
    a = int(a, 16) - bias
    k = bisect.bisect_left(addrs, a)
    if k == 0 or k >= len(addrs) or addrs[k] != a:
        c[('?', '?')] += ex; continue
    prev, nxt = addrs[k - 1], addrs[k + 1] if k + 1 < len(addrs) else a + 16
    if prev >> 12 != (a - 1) >> 12 or a >> 12 != (nxt - 1) >> 12 or not a & 0xfff:
        why = 'page'
    else:
        op = ins[prev][0] if ins[prev] else '?'
        why = 'after jcc' if op.startswith('j') and op != 'jmp' else 'after ' + op
    kind = re.sub(r'[0-9]+', 'N', sym.split('+')[0])
    c[('gt_run' if kind == 'gt_run' else 'copies', why)] += ex
for (kind, why), v in c.most_common():
    print('%14d  %s, %s' % (v, kind, why))
print('%14d  in all' % sum(c.values()))
PY

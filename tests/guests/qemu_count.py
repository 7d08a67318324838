#!/usr/bin/env python3
"""Summarise a QEMU `-d in_asm,exec,nochain` log, the independent check
behind tests/guests/EXPECTED.md.

usage: qemu_count.py LOG [--per-pc]   (or import: parse(path))

Instructions per TB come from the "IN:" blocks (one line per guest
instruction, keyed by the TB's start address); executions come from the
"Trace CPU: HOST [CSBASE/PC/FLAGS/CFLAGS]" lines that nochain makes QEMU print
at every TB entry, minus the entries QEMU aborted before the TB's first
instruction ("Stopped execution of TB chain before HOST [PC]": another vCPU
had requested an exit, e.g. for an exclusive section; QEMU's TB prologue
checks that before the plugin's TB callback, so a plugin does not count
them).  The aborted entry carries no vCPU number; it is charged to the vCPU
whose Trace line for that PC came last, which is right unless two vCPUs run
that TB at the same moment.  Prints totals, distinct TB start addresses, translations,
and per-vCPU (= per-thread, numbered by cpu_index) instructions and TB
executions.  The instruction count is at TB entry (whole TB), like the plugin.
"""
import re
import sys
from collections import Counter, defaultdict

TRACE = re.compile(r"^Trace (\d+): 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
INSN = re.compile(r"^0x([0-9a-f]+):")
STOP = re.compile(r"^Stopped execution of TB chain before 0x[0-9a-f]+ \[([0-9a-f]+)\]")


def parse(path):
    """Return (sizes, translations, execs, order, traces): sizes[pc] = insns,
    translations[pc] = count, execs[cpu][pc] = count, order = cpus in order
    of first appearance, traces[cpu] = list of executed pcs in order."""
    sizes = {}                       # pc -> instructions in its TB
    translations = Counter()         # pc -> how often translated
    execs = defaultdict(Counter)     # cpu -> pc -> executions
    first_seen = []                  # cpu order of first appearance
    traces = defaultdict(list)
    last_cpu = {}                    # pc -> cpu of the latest Trace line
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("IN:"):
                cur = []
                continue
            if cur is not None:
                m = INSN.match(line)
                if m:
                    cur.append(int(m.group(1), 16))
                    continue
                if cur:
                    pc = cur[0]
                    if pc in sizes and sizes[pc] != len(cur):
                        print(f"WARNING: TB at {pc:#x} translated with "
                              f"{sizes[pc]} and {len(cur)} insns")
                    sizes[pc] = len(cur)
                    translations[pc] += 1
                cur = None
            m = TRACE.match(line)
            if m:
                cpu, pc = int(m.group(1)), int(m.group(2), 16)
                if cpu not in execs:
                    first_seen.append(cpu)
                execs[cpu][pc] += 1
                traces[cpu].append(pc)
                last_cpu[pc] = cpu
                continue
            m = STOP.match(line)
            if m:
                pc = int(m.group(1), 16)
                cpu = last_cpu[pc]
                execs[cpu][pc] -= 1
                if not execs[cpu][pc]:
                    del execs[cpu][pc]
                assert traces[cpu][-1] == pc, "aborted entry not at trace end"
                traces[cpu].pop()
    return sizes, translations, execs, first_seen, traces


def main():
    path = sys.argv[1]
    per_pc = "--per-pc" in sys.argv[2:]
    sizes, translations, execs, first_seen, _ = parse(path)
    tot_i = tot_b = 0
    allpcs = set()
    for cpu in first_seen:
        b = sum(execs[cpu].values())
        i = sum(n * sizes.get(pc, 0) for pc, n in execs[cpu].items())
        missing = [pc for pc in execs[cpu] if pc not in sizes]
        print(f"cpu {cpu}: insns {i} blocks {b} distinct {len(execs[cpu])}"
              + (f" (no IN: for {[hex(p) for p in missing]})" if missing else ""))
        tot_i += i
        tot_b += b
        allpcs |= set(execs[cpu])
    print(f"total: insns {tot_i} blocks {tot_b} distinct {len(allpcs)} "
          f"translations {sum(translations.values())}")
    if per_pc:
        for pc in sorted(allpcs):
            row = " ".join(f"cpu{c}={execs[c][pc]}" for c in first_seen
                           if execs[c][pc])
            print(f"  {pc:#x} insns={sizes.get(pc, '?')} "
                  f"translated={translations[pc]} {row}")


if __name__ == "__main__":
    main()

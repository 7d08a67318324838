#!/usr/bin/env python3
"""Check tests/guests/expected.txt against QEMU's own logging.

usage: verify_expected.py [BUILD_GUESTS_DIR] [GUEST_PATH...]

Runs each guest under qemu-x86_64 / qemu-aarch64 with
`-d in_asm,exec,nochain` (every TB entry logged) and once with `-strace`,
then compares the facts it can measure: insns, blocks, distinct, tb.*,
threadN.{insns,blocks,distinct,vcpu_index,created_at_*,start_pc,syscalls},
status/signal, stdout, syscallN.*, marker execs (c/mt).  This is the
independent check behind EXPECTED.md; it does not use the project's plugin.
Facts it cannot measure are listed as "unchecked" (segv's fault.pc and
insns_retired: see valgrind in EXPECTED.md).  GUESTS_EXPECTED=FILE reads
another expected file.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu_count import parse  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
A64_ROOT = "/usr/aarch64-linux-gnu"
PIE_BASE = {"x86_64": 0x4000000000, "aarch64": 0x5500000000}
NR = {"x86_64": {"write": 1, "getpid": 39, "close": 3, "exit": 60,
                 "exit_group": 231, "clone": 56, "futex": 202},
      "aarch64": {"write": 64, "getpid": 172, "close": 57, "exit": 93,
                  "exit_group": 94, "clone": 220, "futex": 98}}
CLONE_BITS = {"CLONE_VM": 0x100, "CLONE_FS": 0x200, "CLONE_FILES": 0x400,
              "CLONE_SIGHAND": 0x800, "CLONE_THREAD": 0x10000,
              "CLONE_SYSVSEM": 0x40000, "CLONE_PARENT_SETTID": 0x100000,
              "CLONE_CHILD_CLEARTID": 0x200000}


def load_expected():
    facts = defaultdict(dict)
    with open(os.environ.get("GUESTS_EXPECTED",
                             os.path.join(HERE, "expected.txt"))) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            guest, key, value = line.split(" ", 2)
            facts[guest][key] = value
    return facts


def arch_of(guest):
    return "x86_64" if guest.startswith(("x86_64/", "c/")) else "aarch64"


def qemu_cmd(guest, extra):
    arch = arch_of(guest)
    cmd = ["qemu-" + arch] + extra
    if guest.startswith("c-aarch64/"):
        cmd += ["-L", A64_ROOT]
    return cmd


def run(cmd, kill_after=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: __import__("resource").setrlimit(
                             __import__("resource").RLIMIT_CORE, (0, 0)))
    if kill_after is not None:
        time.sleep(kill_after)
        p.send_signal(signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    return p.returncode, out, err


def strace_calls(text):
    """qemu -strace lines: 'PID name(args) = ret' (lines may interleave)."""
    calls = []
    for m in re.finditer(r"(\d+) (\w+)\(([^)]*)\)(?: = (-?\w+))?", text):
        calls.append((int(m.group(1)), m.group(2), m.group(3), m.group(4)))
    return calls


def check(bdir, guest, exp):
    path = os.path.join(bdir, guest)
    arch = arch_of(guest)
    got = {}
    unchecked = []
    spin = "signal" in exp and exp["signal"] == "9"
    with tempfile.TemporaryDirectory() as td:
        log = os.path.join(td, "log")
        rc, out, err = run(qemu_cmd(guest, ["-d", "in_asm,exec,nochain",
                                            "-D", log]) + [path],
                           kill_after=0.3 if spin else None)
        sizes, _tr, execs, order, traces = parse(log)
    if rc < 0:
        got["signal"] = str(-rc)
    else:
        got["status"] = str(rc)
    got["stdout"] = out.decode().replace("\n", "\\n") or "-"
    allpcs = set()
    ti = tb = 0
    for cpu in order:
        allpcs |= set(execs[cpu])
        tb += sum(execs[cpu].values())
        ti += sum(n * sizes[pc] for pc, n in execs[cpu].items())
    got["insns"], got["blocks"], got["distinct"] = str(ti), str(tb), str(len(allpcs))
    tot = defaultdict(int)
    for cpu in order:
        for pc, n in execs[cpu].items():
            tot[pc] += n
    for pc in allpcs:
        got[f"tb.{pc:#x}.insns"] = str(sizes[pc])
        got[f"tb.{pc:#x}.execs"] = str(tot[pc])
    # threads.  Guests with start_pc facts: a child vCPU's trace is cut at
    # each thread's start_pc (a vCPU index freed by an exited thread can be
    # handed to the next one), so per-thread counts do not depend on which
    # index each thread got.  Others (c/mt): threadN = vcpu_index (default N).
    nthreads = int(exp.get("threads", "1"))
    starts = {int(exp[f"thread{n}.start_pc"], 16): n for n in range(nthreads)
              if f"thread{n}.start_pc" in exp}
    seqs, cpus = {}, {}
    if starts:
        seqs[0], cpus[0] = traces[0], 0
        for cpu in order:
            if cpu == 0:
                continue
            cur = None
            for pc in traces[cpu]:
                if pc in starts and starts[pc] not in seqs:
                    cur = starts[pc]
                    seqs[cur], cpus[cur] = [], cpu
                if cur is not None:
                    seqs[cur].append(pc)
    else:
        for n in range(nthreads):
            cpu = int(exp.get(f"thread{n}.vcpu_index", n))
            if cpu in traces:
                seqs[n], cpus[n] = traces[cpu], cpu
    got["threads"] = str(len(seqs) if starts else len(order))
    if len(set(cpus.values())) < len(cpus):
        print(f"note {guest}: vCPU index reused: thread -> vcpu {cpus}")
    for n, seq in seqs.items():
        got[f"thread{n}.blocks"] = str(len(seq))
        got[f"thread{n}.insns"] = str(sum(sizes[pc] for pc in seq))
        got[f"thread{n}.distinct"] = str(len(set(seq)))
        got[f"thread{n}.vcpu_index"] = str(cpus[n])
        if f"thread{n}.start_pc" in exp and n:
            got[f"thread{n}.start_pc"] = f"{seq[0]:#x}"
            parent = seqs[int(exp[f"thread{n}.parent"])]
            sp = int(exp[f"thread{n}.start_pc"], 16)
            if sp in parent:
                i = parent.index(sp)
                got[f"thread{n}.created_at_blocks"] = str(i)
                got[f"thread{n}.created_at_insns"] = str(
                    sum(sizes[pc] for pc in parent[:i]))
    if "signal" in got and "fault.tb" in exp:
        seq = traces[order[0]]
        got["fault.tb"] = f"{seq[-1]:#x}"
        got["blocks_completed"] = str(len(seq) - 1)
    # c/mt marker
    if "marker.symbol" in exp:
        nm = "nm" if arch == "x86_64" else "aarch64-linux-gnu-nm"
        syms = subprocess.run([nm, path], capture_output=True, text=True).stdout
        off = int(re.search(r"^([0-9a-f]+) T " + exp["marker.symbol"] + "$",
                            syms, re.M).group(1), 16)
        mpc = PIE_BASE[arch] + off
        got["marker.insns"] = str(sizes.get(mpc, "?"))
        got["marker.execs"] = str(tot.get(mpc, 0))
        for n in range(nthreads):
            got[f"thread{n}.marker_execs"] = str(execs[cpus[n]][mpc])
        for k in range(nthreads - 1):
            got[f"worker{k}.marker_execs"] = str(execs[cpus[k + 1]][mpc])
    # syscalls via -strace
    if any(k.startswith(("syscall", "thread")) and k.endswith(("syscalls", ".nr", ".args", ".ret", ".name"))
           for k in exp) or "fault.addr" in exp:
        _rc, _o, serr = run(qemu_cmd(guest, ["-strace"]) + [path])
        m = re.search(r"--- SIGSEGV \{.*si_addr=(\w+)", serr.decode())
        if m:
            got["fault.addr"] = "0x0" if m.group(1) == "NULL" else m.group(1)
        calls = strace_calls(serr.decode(errors="replace"))
        for i, (_pid, name, args, ret) in enumerate(calls, 1):
            got[f"syscall{i}.name"] = name
            a = [x.strip() for x in args.split(",") if x.strip()]
            got[f"syscall{i}.args"] = ",".join(a) if a else "-"
            got[f"syscall{i}.ret"] = "none" if ret is None else ret
            got[f"syscall{i}.nr"] = str(NR[arch].get(name, name))
        got["syscalls"] = str(len(calls))
        # per-thread lists: qemu -strace prints the process id for every
        # thread, so compare the multiset of all threads' syscalls
        want = sorted(x for n in range(nthreads)
                      for x in exp.get(f"thread{n}.syscalls", "").split(",") if x)
        have = sorted(str(NR[arch].get(c[1], c[1])) for c in calls)
        if want:
            for n in range(nthreads):
                if f"thread{n}.syscalls" in exp:
                    got[f"thread{n}.syscalls"] = (exp[f"thread{n}.syscalls"]
                                                  if want == have else
                                                  "all threads: " + ",".join(have))
        clones = [c for c in calls if c[1] == "clone"]
        for i, c in enumerate(clones, 1):
            kv = dict(x.split("=", 1) if "=" in x else ("flags", x)
                      for x in c[2].split(","))
            fl = sum(CLONE_BITS[b] for b in kv["flags"].split("|"))
            got[f"clone{i}.flags"] = f"{fl:#x}"
            got[f"thread{i}.stack"] = f"{int(kv['child_stack'], 16):#x}"
            if int(kv["parent_tidptr"], 16):
                got["tid1.addr"] = f"{int(kv['parent_tidptr'], 16):#x}"
            got[f"thread{i}.parent"] = "0"
        if clones and len({got[f"clone{i}.flags"]
                           for i in range(1, len(clones) + 1)}) == 1:
            got["clone.flags"] = got["clone1.flags"]
    bad = 0
    for key, want in sorted(exp.items()):
        if key in got:
            have = got[key]
            if key.endswith(".args") and want != have:
                # qemu prints args in its own format; compare numerically
                try:
                    ok = [int(x, 0) for x in want.split(",")] == \
                         [int(x, 0) for x in have.split(",")[:len(want.split(","))]]
                except ValueError:
                    ok = False
                have = want if ok else have
            if key.endswith(".ret") and want in ("any",):
                continue
            if key.endswith(".ret") and have == "-1" and want.startswith("-"):
                have = want if f"errno={-int(want)}" in serr.decode() else have
            if want != have:
                print(f"MISMATCH {guest} {key}: expected {want}, qemu log says {have}")
                bad += 1
        else:
            unchecked.append(key)
    print(f"{guest}: {len(exp) - len(unchecked) - bad} ok, {bad} mismatched, "
          f"unchecked: {' '.join(sorted(unchecked)) or '-'}")
    return bad


def main():
    args = sys.argv[1:]
    bdir = args.pop(0) if args and os.path.isdir(args[0]) else "build/guests"
    facts = load_expected()
    guests = args or list(facts)
    bad = sum(check(bdir, g, facts[g]) for g in guests)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

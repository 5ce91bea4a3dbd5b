#!/usr/bin/env python3
"""Checks that a stopped bench leaves no server behind (issue 55, item 5).

    bench/cleanup-check.py [--after 40] [--cases run-term,run-int,...] [--build-dir DIR]

Each case starts a bench, stops it mid-run, waits for it to end, and lists what is left:

  run-term   timeout -s TERM 40 bench/run.sh --quick   (SIGTERM to run.sh and its group)
  run-int    timeout -s INT 40 bench/run.sh --quick    (SIGINT, as Ctrl-C sends it)
  run-alone  SIGTERM to run.sh's pid only, as a supervisor sends it
  run-kill   SIGKILL to run.sh's pid only: its Python step sees the runner gone and ends
  step-kill  SIGKILL to the Python step (bench/lib/bench.py) once its servers answer: run.sh
             stops on the error (set -e) and ends the groups the step listed
  tls-term   bench/tls.py alone, SIGTERM once tern and nginx answer
  h2-int     bench/h2.py alone, SIGINT once tern, nginx and h2o answer

This script makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a process a case
orphans is reparented here instead of to init, so what is left after a case is exactly the
processes still below this script, whoever else runs servers on the machine. For each case it
prints `pgrep -a` of the server and load-generator names among them ("none left" when
clean), and exits 1 when any case left a process or was stopped before its servers ran. It
first brings this checkout's bench build up to date (run.sh --quick on one workload), so that
the stops land mid-measurement; run.sh's cases use --no-install. Run it where no other bench
runs (under `flock /tmp/tern-build.lock` on the shared machine). About 3 minutes.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
NAMES = ("hello", "bench_app", "ceiling", "nginx", "h2o", "caddy", "beast", "httplib", "go-peer",
         "node", "wrk", "h2load", "tls_load", "ws_load", "ab", "postgres", "python3")
PR_SET_CHILD_SUBREAPER = 36
CASES = ["run-term", "run-int", "run-alone", "run-kill", "step-kill", "tls-term", "h2-int"]


def parents() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, comm) of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            data = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        comm = data[data.find(b"(") + 1:data.rfind(b")")].decode(errors="replace")
        rest = data[data.rfind(b")") + 2:].split()
        out[int(entry)] = (int(rest[1]), rest[0].decode(), comm)
    return out


def below_me() -> dict[int, str]:
    """The live (not zombie) processes below this one: pid -> comm."""
    table, me = parents(), os.getpid()
    found = {}
    for pid, (ppid, state, comm) in table.items():
        p, seen = ppid, 0
        while p not in (0, 1, me) and p in table and seen < 64:
            p, seen = table[p][0], seen + 1
        if p == me and pid != me and state != "Z":
            found[pid] = comm
    return found


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


SEEN: set[str] = set()  # the server and client names seen running during the current case


def wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        reap()
        SEEN.update(comm for comm in below_me().values() if comm in NAMES)
        if pred():
            return True
        time.sleep(0.2)
    return False


def named_below(*names: str) -> list[int]:
    return [pid for pid, comm in below_me().items() if comm in names]


def leftovers(settle: float) -> dict[int, str]:
    """What is still below this script once the case's processes had `settle` s to end."""
    wait_for(lambda: not below_me(), settle)
    return below_me()


def pgrep_lines(pids) -> list[str]:
    """`pgrep -a` for the server and client names, restricted to `pids`."""
    r = subprocess.run(["pgrep", "-a", f"^({'|'.join(NAMES)})$"], capture_output=True, text=True)
    keep = set(pids)
    return [line for line in r.stdout.splitlines() if int(line.split()[0]) in keep]


def run_case(case: str, a, scratch: Path) -> dict[int, str]:
    out = scratch / case
    run_sh = [str(BENCH / "run.sh"), "--quick", "--no-install", "--no-micro", "--out", str(out),
              *(["--build-dir", a.build_dir] if a.build_dir else [])]
    log = open(scratch / f"{case}.log", "wb")
    common = {"stdout": log, "stderr": subprocess.STDOUT, "stdin": subprocess.DEVNULL}
    if case in ("run-term", "run-int"):
        sig = "TERM" if case == "run-term" else "INT"
        p = subprocess.Popen(["timeout", "-s", sig, str(a.after)] + run_sh, **common)
        wait_for(lambda: p.poll() is not None, a.after + 600)
    elif case in ("run-alone", "run-kill"):
        p = subprocess.Popen(run_sh, **common)
        # Mid-run: once the measuring step has its servers up.
        wait_for(lambda: named_below("nginx") and named_below("bench_app"), a.after + 120)
        time.sleep(3)
        p.send_signal(signal.SIGTERM if case == "run-alone" else signal.SIGKILL)
        p.wait()
    elif case == "step-kill":
        p = subprocess.Popen(run_sh, **common)
        wait_for(lambda: named_below("nginx") and named_below("bench_app"), a.after + 120)
        time.sleep(3)
        for pid, comm in below_me().items():
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if comm.startswith("python") and any(c.endswith(b"lib/bench.py") for c in cmd):
                os.kill(pid, signal.SIGKILL)
        p.wait()
    else:
        script, names, sig = {"tls-term": ("tls.py", ("hello", "nginx"), signal.SIGTERM),
                              "h2-int": ("h2.py", ("hello", "nginx", "h2o"), signal.SIGINT)}[case]
        hello = Path(a.build_dir or BENCH / "results" / "build") / "tern/examples/hello/hello"
        p = subprocess.Popen([sys.executable, str(BENCH / script), "--hello", str(hello),
                              "--seconds", "3", "--rounds", "3"], **common)
        wait_for(lambda: all(named_below(n) for n in names), 60)
        time.sleep(4)
        p.send_signal(sig)
        p.wait()
    log.close()
    return leftovers(a.settle)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--after", type=int, default=40, help="seconds before run.sh is stopped")
    ap.add_argument("--settle", type=float, default=20.0,
                    help="seconds a stopped case has to end its processes")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--build-dir", default="")
    a = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("cleanup-check: prctl(PR_SET_CHILD_SUBREAPER) failed")
    scratch = Path(tempfile.mkdtemp(prefix="tern-cleanup-check-"))
    t0 = time.monotonic()
    with open(scratch / "prebuild.log", "wb") as log:
        r = subprocess.run([str(BENCH / "run.sh"), "--quick", "--no-install", "--no-micro",
                            "--workloads", "levtus", "--peers", "tern", "--rounds", "1",
                            "--out", str(scratch / "prebuild"),
                            *(["--build-dir", a.build_dir] if a.build_dir else [])],
                           stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise SystemExit(f"cleanup-check: the build failed (see {scratch / 'prebuild.log'})")
    print(f"build up to date: {time.monotonic() - t0:.0f} s")
    failed = []
    for case in [c for c in a.cases.split(",") if c]:
        if case not in CASES:
            raise SystemExit(f"cleanup-check: unknown case {case!r}; known: {', '.join(CASES)}")
        t0 = time.monotonic()
        SEEN.clear()
        left = run_case(case, a, scratch)
        took = time.monotonic() - t0
        print(f"{case}: {took:.0f} s (log: {scratch / case}.log)")
        print(f"  seen running: {', '.join(sorted(SEEN)) or 'nothing'}")
        said = [l for l in (scratch / f"{case}.log").read_text(errors="replace").splitlines()
                if l.startswith("[bench")]
        if said:
            print(f"  stopped after: {said[-1].strip()[:100]}")
        lines = pgrep_lines(left)
        print("  pgrep -a: " + ("none left" if not lines else ""))
        for line in lines:
            print("    " + line)
        other = {pid: comm for pid, comm in left.items()
                 if str(pid) not in {line.split()[0] for line in lines}}
        for pid, comm in sorted(other.items()):
            print(f"    also left: {pid} {comm}")
        if not SEEN & {"hello", "bench_app", "nginx", "h2o", "ceiling"}:
            print("  stopped before its servers ran: nothing was checked")
            failed.append(case)
        if left:
            failed.append(case)
            for pid in left:  # leave the machine clean for the next case
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            wait_for(lambda: not below_me(), 5)
    print("cleanup-check: " + ("every case left nothing behind" if not failed
                                else f"left processes behind: {', '.join(failed)}"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

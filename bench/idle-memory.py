#!/usr/bin/env python3
"""Resident memory per idle keep-alive connection of one or more bench_app builds.

    bench/idle-memory.py BENCH_APP [BENCH_APP...] [--conns N] [--rounds R]

Per round and binary: a fresh server (one thread, pinned to CPU 1), its RSS, then N
connections that each make one request and stay open (bench/lib/load.idle_connections, as
bench/run.sh's per-connection row), its RSS again; prints (after - before) / N for each run
and the median per binary. The binaries take turns, so a change and its base are measured
under the same conditions. Kernel socket memory is not in RSS; the client's file descriptor
limit bounds N (about half of `ulimit -Hn`).
"""
import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from load import idle_connections  # noqa: E402  (bench/lib, beside this script)
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def measure(binary: str, conns: int) -> float:
    port = procs.free_port()
    proc = groups.start(["taskset", "-c", "1", binary, str(port)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        procs.wait_for_port(port, proc)
        time.sleep(0.3)
        before = rss_kib(proc.pid)
        answered, socks = idle_connections(port, conns)
        time.sleep(0.5)
        after = rss_kib(proc.pid)
        for s in socks:
            s.close()
        if answered != conns:
            sys.exit(f"{binary}: only {answered} of {conns} connections were answered")
        per = (after - before) * 1024 / answered
        print(f"{binary}: {answered} connections, RSS {before} -> {after} KiB, {per:.0f} B each",
              flush=True)
        return per
    finally:
        procs.kill(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--conns", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    results = {b: [] for b in a.binaries}
    for _ in range(a.rounds):
        for b in a.binaries:
            results[b].append(measure(b, a.conns))
    for b, runs in results.items():
        print(f"median {b}: {statistics.median(runs):.0f} B per idle connection")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Server CPU per request of two builds of bench_app beside the ceiling, interleaved.

    bench/ab-cpu.py BASE_BENCH_APP NEW_BENCH_APP CEILING [ROUNDS=3]

Each server is pinned to CPU 1 and wrk to CPU 0; per round, for keep-alive
(`wrk -t1 -c100`), Levtus (`wrk -t4 -c400`) and 16-deep pipelining (`wrk -t1 -c128` with
bench/wrk/pipeline.lua, as bench/run.sh's `pipeline`), each server gets one 3 s run. CPU time comes
from /proc/<pid>/stat. Prints every run and the medians as multiples of the ceiling's.
Used in docs/performance.md (round 2) to compare the builds before and after a change.
"""
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import CLK_TCK, cpu_ticks  # noqa: E402  (bench/lib, beside this script)
from load import parse_wrk  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bins = {"base": sys.argv[1], "new": sys.argv[2], "ceiling": sys.argv[3]}
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    ports = {"base": 18971, "new": 18972, "ceiling": 18973}
    www = "/tmp"
    procs = {}
    for k, b in bins.items():
        args = ["taskset", "-c", "1", b, str(ports[k])] + (["1", www] if k != "ceiling" else [])
        procs[k] = groups.start(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    pipeline = str(Path(__file__).resolve().parent / "wrk" / "pipeline.lua")
    shapes = [("keepalive", ["-t1", "-c100"], []), ("levtus", ["-t4", "-c400"], []),
              ("pipeline", ["-t1", "-c128", "-s", pipeline], ["--", "/", "16"])]
    res: dict = {}
    try:
        for rnd in range(rounds):
            for name, opts, tail in shapes:
                for k in bins:
                    pid = procs[k].pid  # taskset execs the server in place
                    c0 = cpu_ticks([pid])
                    out = subprocess.run(["taskset", "-c", "0", "wrk", *opts, "-d3s",
                                          f"http://127.0.0.1:{ports[k]}/", *tail],
                                         capture_output=True, text=True).stdout
                    c1 = cpu_ticks([pid])
                    n = parse_wrk(out)["requests"]
                    us = (c1 - c0) / CLK_TCK * 1e6 / n
                    res.setdefault((name, k), []).append(us)
                    print(f"round {rnd + 1} {name:9s} {k:7s} {n / 3:10.0f} req/s {us:5.2f} us/req",
                          flush=True)
    finally:
        for p in procs.values():
            p.kill()
    for name, _, _ in shapes:
        b, n, c = (statistics.median(res[(name, k)]) for k in ("base", "new", "ceiling"))
        print(f"{name}: base {b:.2f} us ({b / c:.2f}x the ceiling), new {n:.2f} us "
              f"({n / c:.2f}x), ceiling {c:.2f} us")


if __name__ == "__main__":
    main()

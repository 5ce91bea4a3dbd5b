#!/usr/bin/env python3
"""Where a server's start-up time and idle memory go: the profile behind docs/performance.md's
"pay only for what you use" (issue 32).

    bench/startup-profile.py SERVER [STARTS=20] [--cwd DIR]

SERVER is started as `SERVER PORT` (examples/hello's usage; run it from examples/hello, or
give --cwd, so that ./public exists). Prints:

- exec to the first 200, median and minimum over STARTS starts (a fresh port each);
- the dynamic loader's share: its own statistics (LD_DEBUG=statistics, cycles and
  relocations) and the symbol bindings it made for each library (LD_DEBUG=bindings), which
  says which libraries are paid for at every start;
- after one request, the resident memory (Rss) of each mapping, file-backed and anonymous,
  from /proc/PID/smaps, and which libraries the server called into at all (a library with
  bindings at start but no call afterwards is loaded for nothing).

Nothing is asserted: the machine is shared, so compare two builds in one session.
"""
import argparse
import collections
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def first_answer_ms(server: str, port: int, cwd: str | None) -> float | None:
    t0 = time.perf_counter()
    proc = groups.start([server, str(port)], cwd=cwd, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - t0 < 5 and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    if s.recv(4096).startswith(b"HTTP/1.1 200"):
                        return (time.perf_counter() - t0) * 1000
            except OSError:
                time.sleep(0.0002)
        return None
    finally:
        proc.terminate()
        proc.wait()


def wait_ready(port: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                if s.recv(4096).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            time.sleep(0.01)
    raise SystemExit("startup-profile: the server did not answer within 5 s")


def loader_log(server: str, port: int, cwd: str | None, what: str) -> str:
    """The LD_DEBUG=<what> log of one start, one request and a stop."""
    log = f"/tmp/startup-profile.{os.getpid()}.{what}"
    env = dict(os.environ, LD_DEBUG=what, LD_DEBUG_OUTPUT=log)
    proc = groups.start([server, str(port)], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
    try:
        wait_ready(port)
    finally:
        proc.terminate()
        proc.wait()
    text = ""
    for name in os.listdir("/tmp"):
        if name.startswith(os.path.basename(log)):
            path = os.path.join("/tmp", name)
            with open(path, errors="replace") as f:
                text += f.read()
            os.unlink(path)
    return text


def smaps_rss(pid: int) -> tuple[dict[str, int], int]:
    per_mapping: dict[str, int] = collections.Counter()
    anonymous = 0
    name = ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                fields = line.split()
                name = fields[5] if len(fields) > 5 else "[anonymous]"
            elif line.startswith("Rss:"):
                per_mapping[name] += int(line.split()[1])
            elif line.startswith("Anonymous:"):
                anonymous += int(line.split()[1])
    return per_mapping, anonymous


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("server")
    parser.add_argument("starts", nargs="?", type=int, default=20)
    parser.add_argument("--cwd")
    parser.add_argument("--port", type=int, default=19700)
    a = parser.parse_args()
    server = os.path.abspath(a.server)

    times = [t for i in range(a.starts)
             if (t := first_answer_ms(server, a.port + 1 + i, a.cwd)) is not None]
    if not times:
        raise SystemExit("startup-profile: the server never answered")
    print(f"exec to first 200: median {statistics.median(times):.2f} ms, "
          f"min {min(times):.2f} ms over {len(times)} starts")

    stats = loader_log(server, a.port, a.cwd, "statistics")
    cycles = [int(c.replace(",", "")) for c in
              re.findall(r"total startup time in dynamic loader:\s+([\d,]+) cycles", stats)]
    relocations = re.findall(r"final number of relocations:\s+(\d+)", stats)
    if cycles:
        print(f"dynamic loader: {max(cycles):,} cycles, "
              f"{relocations[-1] if relocations else '?'} relocations")

    bindings = loader_log(server, a.port, a.cwd, "bindings")
    at_start: dict[str, int] = collections.Counter()
    called: dict[str, int] = collections.Counter()
    for line in bindings.splitlines():
        m = re.search(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]", line)
        if not m:
            continue
        at_start[m.group(1)] += 1
        if m.group(1) == server:
            called[m.group(2)] += 1
    print("symbol bindings the loader made, by the library that needed them "
          "(BIND_NOW libraries resolve all of theirs at start):")
    for lib, n in at_start.most_common(12):
        print(f"  {n:6d}  {lib}")
    print("libraries the server's own code called into (lazy bindings), start + one request:")
    for lib, n in called.most_common():
        print(f"  {n:6d}  {lib}")

    proc = groups.start([server, str(a.port)], cwd=a.cwd, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
    try:
        wait_ready(a.port)
        time.sleep(0.2)
        per_mapping, anonymous = smaps_rss(proc.pid)
    finally:
        proc.terminate()
        proc.wait()
    total = sum(per_mapping.values())
    print(f"resident after one request: {total} KiB, of it anonymous {anonymous} KiB; "
          "by mapping:")
    for lib, kib in sorted(per_mapping.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {kib:6d} KiB  {lib}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The conformance table: tests/conformance/http1.py (RFC 9112 and RFC 9110 cases) against
tern and the peers bench/ runs, in one session.

    bench/conformance.py HELLO [--peers nginx,h2o,node,go] [--build-dir bench/.build]

HELLO is the examples/hello binary (run in examples/hello, for ./public). Each peer is
started with its bench/ configuration (bench/peers/), those that are not installed or built
are left out and said so. Prints a Markdown table, cases passed per section and server, and
under it every case a server failed with what it answered: the README's conformance table
is this output.
"""
import argparse
import collections
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "lib"))
from servers import Peers, stop_proc  # noqa: E402  (bench/lib, beside this script)

SUITE = BENCH.parent / "tests" / "conformance" / "http1.py"

# Cases a peer fails because of how bench/ configures it, not how it follows the RFC: shown
# as "n/a" with the reason, not scored.
NOT_SCORED = {
    ("h2o", "pipelined requests are answered in order"):
        "bench's h2o configuration answers every path with its file, so the missing path is "
        "a 200 too and the order cannot be seen",
    ("node", "the absolute form of the target is accepted"):
        "Node accepts it and hands the target to the application unchanged (req.url is the "
        "absolute URI); bench's Node peer compares req.url with \"/\" and answers 404",
}


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return s.recv(4096).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def wait_ready(proc: subprocess.Popen, port: int) -> bool:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if answers(port):
            return True
        time.sleep(0.05)
    return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("hello")
    p.add_argument("--peers", default="nginx,h2o,node,go")
    p.add_argument("--build-dir", default=str(BENCH / ".build"))
    p.add_argument("--port", type=int, default=19900)
    a = p.parse_args()
    hello = Path(a.hello).resolve()

    work = Path(tempfile.mkdtemp(prefix="tern-conformance-"))
    work.chmod(0o755)  # h2o started as root serves files as nobody
    (work / "www").mkdir()
    peers = Peers(SimpleNamespace(build_dir=a.build_dir, server_threads=1), work)
    results: dict[str, list[dict]] = {}
    left_out: dict[str, str] = {}
    servers = ["tern"] + [n for n in a.peers.split(",") if n]
    for i, name in enumerate(servers):
        port = a.port + i
        if name == "tern":
            proc = subprocess.Popen([str(hello), str(port)], cwd=BENCH.parent / "examples" / "hello",
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
        else:
            why = peers.available(name)
            if why:
                left_out[name] = why
                continue
            proc = peers.spawn(name, port, None, work / f"{name}.log")
        try:
            if not wait_ready(proc, port):
                left_out[name] = "did not answer GET / with 200"
                continue
            out = subprocess.run([sys.executable, str(SUITE), str(port), "--json"],
                                 capture_output=True, text=True, timeout=600)
            results[name] = [r for r in json.loads(out.stdout)
                             if (name, r["name"]) not in NOT_SCORED]
        finally:
            stop_proc(proc)

    sections: dict[str, None] = {}
    for rows in results.values():
        for r in rows:
            sections.setdefault(r["section"], None)
    names = list(results)
    print("| section | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for section in sections:
        cells = []
        for n in names:
            rows = [r for r in results[n] if r["section"] == section]
            cells.append(f"{sum(r['passed'] for r in rows)}/{len(rows)}")
        print(f"| {section} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(r['passed'] for r in results[n])}/{len(results[n])}**" for n in names]
    print("| all cases | " + " | ".join(totals) + " |")
    print()
    for n in names:
        failed = [r for r in results[n] if not r["passed"]]
        for r in failed:
            print(f"- {n}, {r['section']} ({r['requirement']}): {r['name']}: {r['why']}")
    for (n, case), why in NOT_SCORED.items():
        if n in results:
            print(f"- {n}, not scored: {case}: {why}")
    for n, why in left_out.items():
        print(f"- {n} left out: {why}")
    counts = collections.Counter(r["requirement"] for r in next(iter(results.values()), []))
    print(f"\n{sum(counts.values())} cases ({counts['MUST']} MUST, {counts['SHOULD']} SHOULD), "
          f"{time.strftime('%Y-%m-%d')}; `bench/conformance.py {os.path.relpath(hello)}`")


if __name__ == "__main__":
    main()

"""What the conformance suites (http1.py, h2.py, ws.py) share: starting the server under
test on a free port, and the command line that runs a suite's cases and prints or returns
their results."""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)


def start_server(command: list[str], cwd: str | None) -> tuple[subprocess.Popen, int]:
    """Runs `command PORT` (the program's path made absolute, so `cwd` may differ) and waits
    until the port accepts."""
    srv = procs.start([os.path.abspath(command[0]), *command[1:], "{port}"], cwd=cwd)
    return srv.proc, srv.port


def main(doc: str, run: Callable[[int, str, argparse.Namespace], list[dict]],
         add_arguments: Callable[[argparse.ArgumentParser], None] = lambda p: None) -> int:
    """The suites' command line: PORT or --server BINARY [--server-args ...] [--cwd DIR],
    then --json (one object per case) or a line per failed case (--verbose: per case) and
    `conformance: N of M cases passed`. Non-zero when a case failed. `run(port, host, args)`
    runs the cases; `add_arguments` adds a suite's own options."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("port", type=int, nargs="?")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--server")
    p.add_argument("--server-args", nargs="*", default=[])
    p.add_argument("--cwd")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true")
    add_arguments(p)
    a = p.parse_args()
    if (a.port is None) == (a.server is None):
        p.error("give a PORT or --server BINARY")
    proc = None
    if a.server:
        proc, a.port = start_server([a.server, *a.server_args], a.cwd)
    try:
        results = run(a.port, a.host, a)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=15)
    if a.json:
        print(json.dumps(results, indent=1))
    else:
        for r in results:
            if a.verbose or not r["passed"]:
                mark = "pass" if r["passed"] else "FAIL"
                print(f"{mark}  [{r['section']}] ({r['requirement']}) {r['name']}"
                      + (f": {r['why']}" if r["why"] else ""))
        passed = sum(r["passed"] for r in results)
        print(f"conformance: {passed} of {len(results)} cases passed")
    return 0 if all(r["passed"] for r in results) else 1

#!/usr/bin/python3
"""A SIGTERM sent the moment hello's port first accepts a connection stops hello cleanly
(exit status 0): app.listen takes the stop signals before its listener opens, so none sent
once the port answers is left to the default action, which kills the process (docs/shutdown.md).
Thirty starts; before the fix about half of them died of the signal. And once the stop has
begun the signals are the default's again: live, draining a request that waits 20 s
(/later), ends at once on a second SIGTERM.

    sigterm_at_start.py HELLO LIVE
"""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

ROUNDS = 30


def main():
    hello = os.path.abspath(sys.argv[1])
    here = Path(__file__).resolve().parents[2] / "examples" / "hello"
    statuses = []
    for _ in range(ROUNDS):
        port = procs.free_port()
        proc = subprocess.Popen([hello, str(port)], cwd=here, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.001)
        proc.terminate()  # SIGTERM, at once
        try:
            statuses.append(proc.wait(15))
        except subprocess.TimeoutExpired:
            proc.kill()
            statuses.append("did not stop within 15 s")
    bad = [s for s in statuses if s != 0]
    check(f"hello exits 0 on a SIGTERM sent as its port first answers, {ROUNDS} times of {ROUNDS}",
          not bad, f"{len(bad)} did not: {bad[:5]}")

    live = os.path.abspath(sys.argv[2])
    srv = procs.start([live, "{port}"], timeout=10)
    held = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    held.sendall(b"GET /later?ms=20000 HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.3)  # the request is in progress: the drain will wait for it
    srv.proc.terminate()
    time.sleep(0.5)
    check("live still drains its request after the first SIGTERM", srv.proc.poll() is None,
          srv.proc.poll())
    srv.proc.terminate()
    try:
        status = srv.proc.wait(5)
    except subprocess.TimeoutExpired:
        srv.proc.kill()
        status = "still running 5 s later"
    check("and a second SIGTERM during the drain ends it at once, by the signal",
          status == -15, status)
    held.close()
    sys.exit(finish())


if __name__ == "__main__":
    main()

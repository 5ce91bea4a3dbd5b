#!/usr/bin/env python3
"""A flood of anonymous new sessions against a logged-in user (docs/sessions.md, "Under a flood").

    bench/session-flood.py [--requests N] path/to/bench_sessions_app

Starts bench_sessions_app (default session settings) on a free port, logs a user in, prints
the server's RSS, then sends N (default 100,000) POST /visit requests without a cookie on one
connection, pipelined 100 at a time, each of which makes a new session. Prints the RSS after,
the time the flood took, and whether the logged-in user's cookie still finds the session.
"""
import argparse
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import free_port, status_fields  # noqa: E402  (bench/lib, beside this script)
from servers import wait_ready  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def rss_mib(pid: int) -> float:
    return status_fields(pid).get("VmRSS", 0) / 1024


def one(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return buf
            buf += chunk


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("app")
    ap.add_argument("--requests", type=int, default=100_000)
    args = ap.parse_args()
    port = free_port()
    p = groups.start([args.app, str(port)], stdout=subprocess.DEVNULL)
    try:
        if not wait_ready(p, port):
            sys.exit("session-flood: the app did not start")
        head = b"Host: 127.0.0.1\r\nContent-Length: 0\r\n"
        r = one(port, b"POST /login HTTP/1.1\r\n" + head + b"Connection: close\r\n\r\n")
        cookie = re.search(rb"Set-Cookie: (tern_session=[^;]+)", r).group(1)
        before = rss_mib(p.pid)
        visit = b"POST /visit HTTP/1.1\r\n" + head + b"\r\n"
        start = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            sent = 0
            while sent < args.requests:
                batch = min(100, args.requests - sent)
                s.sendall(visit * batch)
                sent += batch
                seen, buf = 0, b""
                while seen < batch:
                    buf += s.recv(1 << 20)
                    seen = buf.count(b"HTTP/1.1 200 ")
        took = time.monotonic() - start
        after = rss_mib(p.pid)
        me = one(port, b"GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie +
                 b"\r\nConnection: close\r\n\r\n")
        body = me.split(b"\r\n\r\n", 1)[1].decode()
        print(f"RSS before the flood: {before:.1f} MiB")
        print(f"{args.requests} new sessions in {took:.1f} s on one connection")
        print(f"RSS after the flood:  {after:.1f} MiB")
        print(f"the logged-in user's cookie reads: {body!r}")
    finally:
        p.terminate()
        p.wait()


if __name__ == "__main__":
    main()

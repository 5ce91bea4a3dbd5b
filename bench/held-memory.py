#!/usr/bin/env python3
"""What idle keep-alive connections hold after one large request each.

    bench/held-memory.py [--connections N] [--mib M] path/to/bench_app

Starts bench_app on a free port, opens N connections (default 20) and on each sends one
POST /login with an M MiB body (default 5), reads the echoed response whole, and leaves the
connection open and idle. Prints the server's RSS before and after. A server that keeps the
buffers a big request grew holds about 3 x M MiB per idle connection (request body, response
body, output buffer); tern frees any buffer above 64 KiB once its request is done
(src/http/buffers.hpp), so the figure after stays near the one before.
"""
import argparse
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


def exchange(port: int, body: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("held-memory: the server closed the connection")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    got = len(rest)
    while got < length:
        chunk = s.recv(1 << 20)
        if not chunk:
            sys.exit("held-memory: the response was cut short")
        got += len(chunk)
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=20)
    ap.add_argument("--mib", type=int, default=5)
    ap.add_argument("bench_app")
    a = ap.parse_args()
    port = free_port()
    server = groups.start([a.bench_app, str(port), "1"], stdout=subprocess.DEVNULL)
    try:
        if not wait_ready(server, port, timeout=10):
            sys.exit("held-memory: bench_app did not start")
        before = rss_mib(server.pid)
        body = b"x" * (a.mib << 20)
        held = [exchange(port, body) for _ in range(a.connections)]
        time.sleep(0.5)
        after = rss_mib(server.pid)
        print(f"held-memory: RSS {before:.1f} MiB before, {after:.1f} MiB with {len(held)} idle "
              f"connections after a {a.mib} MiB POST echoed on each")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()

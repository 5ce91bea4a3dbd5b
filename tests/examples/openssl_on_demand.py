#!/usr/bin/python3
"""libtern loads OpenSSL only when something needs it (docs/performance.md, round 3).

    openssl_on_demand.py HELLO BENCH_LIVE_APP

hello, serving plain HTTP/1.1 and h2c, has no libssl or libcrypto among its needed
libraries, and none mapped after it answered a request. bench_live_app has none mapped
after a plain request either, and both mapped once a WebSocket handshake (SHA-1 of the key)
made it load them; the handshake's Sec-WebSocket-Accept is right, and the server goes on
serving. Prints a line per check; exits 1 when one fails.
"""
import base64
import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)


def start(cmd, cwd=None):
    srv = procs.start(cmd + ["{port}"], timeout=10, cwd=cwd)
    return srv.proc, srv.port


def get(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def openssl_mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        maps = f.read()
    return [name for name in ("libssl.so", "libcrypto.so") if name in maps]


def main():
    hello, live = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    needed = subprocess.run(["readelf", "-d", hello], capture_output=True, text=True).stdout
    check("hello needs neither libssl nor libcrypto at link time",
          "libssl" not in needed and "libcrypto" not in needed, needed)

    here = os.path.dirname(os.path.abspath(__file__))
    proc, port = start([hello], cwd=os.path.join(here, "..", "..", "examples", "hello"))
    try:
        answer = get(port)
        check("hello answers a plain request", answer.startswith(b"HTTP/1.1 200"), answer[:40])
        check("hello has not loaded OpenSSL after it", not openssl_mapped(proc.pid),
              openssl_mapped(proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    proc, port = start([live, "--threads", "1"])
    try:
        check("bench_live_app has not loaded OpenSSL after a plain request",
              get(port).startswith(b"HTTP/1.1 200") and not openssl_mapped(proc.pid),
              openssl_mapped(proc.pid))
        key = base64.b64encode(os.urandom(16)).decode()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall((f"GET /ws/echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                       f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                       f"Sec-WebSocket-Version: 13\r\n\r\n").encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
        want = base64.b64encode(hashlib.sha1(
            (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        check("a WebSocket handshake is answered 101 with the right Sec-WebSocket-Accept",
              head.startswith(b"HTTP/1.1 101") and want.encode() in head, head[:200])
        check("the handshake loaded libssl and libcrypto",
              openssl_mapped(proc.pid) == ["libssl.so", "libcrypto.so"],
              openssl_mapped(proc.pid))
        check("the server goes on serving", get(port).startswith(b"HTTP/1.1 200"))
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    sys.exit(finish())


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Debian's ngtcp2 example client (gtlsclient, package ngtcp2-client) uses examples/live over
HTTP/3 (docs/http3.md): the page (static file), a late answer, a streamed body checked byte
by byte, Server-Sent Events, a spooled upload hashed on the blocking pool, 60 requests at
once on one connection, after garbage datagrams; HTTPS on the same port goes on meanwhile,
and SIGTERM stops the server cleanly with an HTTP/3 connection open.

    h3_clients.py PATH/TO/live PATH/TO/examples/live/public

curl and h2load in Debian 12 are built without HTTP/3 (curl -V lists no HTTP3; h2load has
QUIC options but needs a build with ngtcp2), so gtlsclient is the command-line client.
Exit 77 (ctest: skipped) when gtlsclient is not installed.
"""
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402
from certs import self_signed  # noqa: E402  (tests/support/certs.py)

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def fetch(port, path, work, extra=(), timeout=15, more=()):
    """gtlsclient GET (or what `extra` says) of `path` (and of `more` paths, each a stream of
    the one connection); returns (exit code, the first body, every downloaded file)."""
    out = Path(work) / "dl"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    cmd = ["gtlsclient", "--quiet", "--exit-on-all-streams-close", "--timeout=5s",
           f"--download={out}", *extra, "127.0.0.1", str(port),
           f"https://127.0.0.1:{port}{path}", *(f"https://127.0.0.1:{port}{p}" for p in more)]
    try:
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        rc = -1
    files = sorted(out.iterdir())
    body = files[0].read_bytes() if files else b""
    return rc, body, files


def main():
    live, public = sys.argv[1], Path(sys.argv[2])
    if shutil.which("gtlsclient") is None:
        print("skip: gtlsclient (ngtcp2-client) is not installed")
        return 77
    with tempfile.TemporaryDirectory() as work:
        self_signed(work, "127.0.0.1")
        srv = procs.start([live, "{port}", "--cert", f"{work}/cert.pem", "--key",
                           f"{work}/key.pem", "--http3"], name="live", timeout=10)
        port = srv.port
        try:
            # Garbage first: dropped without an answer, and nothing else is disturbed.
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                for junk in (b"\xff" * 10, b"\x00" * 1300, os.urandom(1200)):
                    s.sendto(junk, ("127.0.0.1", port))

            rc, body, _ = fetch(port, "/", work)
            check(rc == 0 and body == (public / "index.html").read_bytes(),
                  f"the page (a static file) over h3 is public/index.html ({len(body)} bytes)")

            rc, body, _ = fetch(port, "/later?ms=50", work)
            check(rc == 0 and body == b"later 50", f"a late answer: {body[:40]!r}")

            rc, body, _ = fetch(port, "/stream?n=40&size=100000", work)
            want = bytes(ord("a") + i % 26 for i in range(4_000_000))
            check(rc == 0 and body == want,
                  f"a 4 MB streamed body arrives whole and in order ({len(body)} bytes)")

            # SSE never ends: gtlsclient is stopped by its own timeout (exit != 0).
            _, body, _ = fetch(port, "/events", work, extra=["--timeout=2s"])
            text = body.decode(errors="replace")
            check("id: 1\ndata: tick 1\n\n" in text and "data: tick 5\n" in text,
                  f"Server-Sent Events tick over h3 ({text.count('data: ')} events in 2 s)")

            upload = Path(work) / "upload.bin"
            upload.write_bytes(os.urandom(3_000_000))
            digest = hashlib.sha256(upload.read_bytes()).hexdigest()
            rc, body, _ = fetch(port, "/upload", work, extra=["-m", "POST", "-d", str(upload)])
            check(rc == 0 and body == f'{{"bytes": 3000000, "sha256": "{digest}"}}'.encode(),
                  f"a 3 MB upload is spooled and hashed: {body[:60]!r}")

            paths = [f"/later?ms={(i % 10) * 20}&n={i}" for i in range(60)]
            rc, _, files = fetch(port, paths[0], work, extra=["-n", "60"], more=paths[1:])
            answered = sum(1 for f in files if f.read_bytes().startswith(b"later "))
            check(rc == 0 and answered == 60,
                  f"60 requests at once on one connection: {answered} answered (exit {rc})")

            https = subprocess.run(["curl", "-sk", "--max-time", "5", "-D", "-",
                                    f"https://127.0.0.1:{port}/later?ms=1"],
                                   capture_output=True, text=True)
            alt_svc = f'alt-svc: h3=":{port}"; ma=86400'
            check(https.stdout.endswith("later 1") and alt_svc in https.stdout.lower(),
                  f"HTTPS on the same port goes on beside HTTP/3 and names it: {alt_svc}")

            # A stop with an HTTP/3 connection open (an SSE stream): the server exits 0.
            sse = subprocess.Popen(["gtlsclient", "--quiet", "--timeout=10s",
                                    f"--download={work}", "127.0.0.1", str(port),
                                    f"https://127.0.0.1:{port}/events"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
            code = srv.stop(timeout=15, expect=None)
            check(code == 0, f"SIGTERM with an h3 stream open: live exits {code}")
            try:
                sse.wait(timeout=15)
            except subprocess.TimeoutExpired:
                sse.kill()
                check(False, "the h3 client is told the connection closed")
        finally:
            procs.kill(srv.proc)
    print("FAIL" if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

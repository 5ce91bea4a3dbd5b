#!/usr/bin/python3
"""libtern loads GnuTLS, ngtcp2 and nghttp3 only when HTTP/3 is started (docs/http3.md,
"Turning it on"), in a build with HTTP/3 (the default).

    http3_on_demand.py HELLO LIVE [--sanitized]

hello and live name none of the four libraries among their needed ones; hello, which never
calls app.http3, links none of src/quic's code; live serving plain HTTP has none of them
mapped after a request; live started with --http3 has GnuTLS and ngtcp2 mapped once it
listens (its UDP endpoint made), nghttp3 once gtlsclient's first HTTP/3 request has been
answered, and answers over HTTPS beside them. Prints a line per check; exits 1 when one
fails; 77 (skipped) without gtlsclient (ngtcp2-client).
"""
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

LIBRARIES = ("libngtcp2_crypto_gnutls.so", "libngtcp2.so", "libgnutls.so", "libnghttp3.so")


def mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        maps = f.read()
    return [name for name in LIBRARIES if f"/{name}" in maps]


def get(port, tls=False):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        s = raw
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            s = ctx.wrap_socket(raw, server_hostname="localhost")
        s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def main():
    if shutil.which("gtlsclient") is None:
        print("skip: gtlsclient (ngtcp2-client) is not installed")
        sys.exit(77)
    hello, live = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for program in (hello, live):
        needed = subprocess.run(["readelf", "-d", program], capture_output=True,
                                text=True).stdout
        named = [lib for lib in ("gnutls", "ngtcp2", "nghttp3") if lib in needed]
        check(f"{os.path.basename(program)} needs none of GnuTLS, ngtcp2, nghttp3 at link time",
              not named, named)
    # Not in a sanitizer build (--sanitized): its instrumentation keeps code that
    # --gc-sections drops from a plain build.
    if "--sanitized" not in sys.argv[3:]:
        symbols = subprocess.run(["nm", "-C", hello], capture_output=True, text=True).stdout
        quic = [line for line in symbols.splitlines() if "tern::detail::quic::" in line]
        check("hello, which never calls app.http3, links none of src/quic's code", not quic,
              quic[:3])

    here = os.path.dirname(os.path.abspath(__file__))
    srv = procs.start([hello, "{port}"], timeout=10,
                      cwd=os.path.join(here, "..", "..", "examples", "hello"))
    try:
        answer = get(srv.port)
        check("hello answers a plain request", answer.startswith(b"HTTP/1.1 200"), answer[:40])
        check("hello has loaded none of them after it", not mapped(srv.proc.pid),
              mapped(srv.proc.pid))
    finally:
        srv.stop()

    srv = procs.start([live, "{port}"], timeout=10)
    try:
        answer = get(srv.port)
        check("live without --http3 answers a plain request", answer.startswith(b"HTTP/1.1 200"),
              answer[:40])
        check("live without --http3 has loaded none of them", not mapped(srv.proc.pid),
              mapped(srv.proc.pid))
    finally:
        srv.stop()

    with tempfile.TemporaryDirectory() as work:
        self_signed(work, "127.0.0.1")
        srv = procs.start([live, "{port}", "--cert", f"{work}/cert.pem", "--key",
                           f"{work}/key.pem", "--http3"], timeout=10)
        try:
            # The TCP port accepts a moment before the UDP endpoint is made (and the libraries
            # loaded) in the same start: waited for, a few seconds at most.
            procs.poll_until(lambda: mapped(srv.proc.pid) == list(LIBRARIES[:3]), timeout=10)
            check("live --http3 has loaded GnuTLS and ngtcp2 once listening",
                  mapped(srv.proc.pid) == list(LIBRARIES[:3]), mapped(srv.proc.pid))
            # An idle timeout of 15 s: on a fresh machine's first run under CI's parallel
            # load, the client's own start and the server's first handshake are slow.
            client = subprocess.run(["gtlsclient", "--quiet", "--exit-on-all-streams-close",
                                     "--timeout=15s", "127.0.0.1", str(srv.port),
                                     f"https://127.0.0.1:{srv.port}/"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True, timeout=30)
            check("gtlsclient's HTTP/3 request is answered", client.returncode == 0,
                  f"exit code {client.returncode}: {client.stderr[-400:]}")
            check("and nghttp3 is loaded by then", mapped(srv.proc.pid) == list(LIBRARIES),
                  mapped(srv.proc.pid))
            answer = get(srv.port, tls=True)
            check("HTTPS is answered beside them", answer.startswith(b"HTTP/1.1 200"),
                  answer[:40])
        finally:
            srv.stop()

    sys.exit(finish())


if __name__ == "__main__":
    main()

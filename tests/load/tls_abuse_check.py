#!/usr/bin/env python3
"""Load plus a TLS handshake flood: wrk drives examples/hello over HTTPS while abusive TLS
clients run beside it. The well-behaved clients must see no error, and the abusers must be
refused or closed by the server. Bounded: about 11 s in all.

    tls_abuse_check.py path/to/hello [seconds]

A self-signed EC P-256 certificate is made with the openssl command in a temporary folder
(deleted at the end); hello serves HTTPS with it on 127.0.0.1. Then, at the same time:

  well-behaved  wrk -c40 over kept-alive connections, and wrk -c8 with `Connection: close`
                (a full handshake per request), for `seconds` (default 8)
  silent        connect and send nothing: hello must close them at first_byte_timeout
  trickle       a real ClientHello, one byte every 0.25 s: closed at header_timeout, counted
                from the accept (both 10 s: tern::config's defaults, which hello keeps)
  garbage       random bytes that are no TLS record, and a handshake record whose message
                is no ClientHello: each must be closed at once
  old versions  raw ClientHellos offering only SSLv3, TLS 1.0 or TLS 1.1: each must get an
                alert and a close (protocol_version; OpenSSL 3 answers SSLv3 with
                handshake_failure, "version too low", as nginx does)
  flood         full handshakes in a tight loop, each connection dropped without a request

The stalled clients (silent, trickle) stay below tls_config::max_handshakes (64 per worker)
together with the flood: over it, hello would rightly close new connections at once, and wrk
would count the refusals. hello prints no stats, so everything is checked from the client
side, plus the refused hellos hello logs on stderr.
"""
import os
import random
import re
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)

DEADLINE = 10.0  # tern::config's first_byte_timeout and header_timeout (docs/limits.md)
SLACK = 4.0      # how late a deadline may close on a busy shared machine
STALLED = 12     # silent and trickle clients each (one connection each, held to the deadline)
FLOODERS = 4     # threads completing handshakes in a tight loop
# Hellos of old versions and the alert each must get: protocol_version (70); OpenSSL 3
# answers an SSLv3 hello with handshake_failure (40), as nginx does.
OLD_VERSIONS = ((0x0300, "SSLv3 hello", 40), (0x0301, "TLS 1.0 hello", 70), (0x0302, "TLS 1.1 hello", 70))

failures = 0
lock = threading.Lock()


def check(what, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures += 1


def client_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the certificate is a throwaway; what is tested is the server
    return ctx


def client_hello():
    """The bytes of a real ClientHello (OpenSSL's, through Python's ssl, never sent)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = client_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def old_hello(version):
    """A ClientHello record offering only `version` (0x0300 SSLv3, 0x0301 TLS 1.0, 0x0302
    TLS 1.1): no supported_versions extension, so that is all the client speaks."""
    ciphers = bytes.fromhex("c009c013002f0035000a00ff")
    body = struct.pack(">H", version) + os.urandom(32) + b"\x00"
    body += struct.pack(">H", len(ciphers)) + ciphers + b"\x01\x00"
    if version > 0x0300:  # TLS 1.0 and 1.1: groups and point formats, as their clients sent
        exts = bytes.fromhex("000a0006000400170018") + bytes.fromhex("000b00020100")
        body += struct.pack(">H", len(exts)) + exts
    msg = b"\x01" + struct.pack(">I", len(body))[1:] + body
    return b"\x16" + struct.pack(">HH", version, len(msg)) + msg


def read_to_close(s, limit):
    """Reads until the server closes (EOF or reset); returns (bytes read, closed by server)."""
    s.settimeout(limit)
    got = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return got, True
            got += chunk
    except (ConnectionResetError, BrokenPipeError):
        return got, True
    except (socket.timeout, OSError):
        return got, False


class Stats:
    def __init__(self):
        self.counts = {}
        self.problems = {}
        self.close_times = {}

    def add(self, kind, key="connections", n=1):
        with lock:
            self.counts.setdefault(kind, {}).setdefault(key, 0)
            self.counts[kind][key] += n

    def problem(self, kind, what):
        with lock:
            self.problems.setdefault(kind, []).append(what)

    def closed_after(self, kind, seconds):
        with lock:
            self.close_times.setdefault(kind, []).append(seconds)


def silent(port, stats):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        stats.add("silent")
        got, closed = read_to_close(s, DEADLINE + SLACK + 2)
    if closed and not got:
        stats.closed_after("silent", time.monotonic() - start)
    else:
        stats.problem("silent", f"closed={closed}, {len(got)} bytes answered")


def trickle(port, stats, hello):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        stats.add("trickle")
        for b in hello:
            if time.monotonic() - start > DEADLINE + SLACK + 2:
                stats.problem("trickle", "still open past the deadline")
                return
            try:
                s.sendall(bytes([b]))
            except (BrokenPipeError, ConnectionResetError):
                stats.closed_after("trickle", time.monotonic() - start)
                return
            # A close shows as a readable socket: look without waiting.
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    stats.closed_after("trickle", time.monotonic() - start)
                    return
                stats.problem("trickle", "the server answered a partial hello")
                return
            except BlockingIOError:
                pass
            except ConnectionResetError:
                stats.closed_after("trickle", time.monotonic() - start)
                return
            finally:
                s.setblocking(True)
            time.sleep(0.25)
        stats.problem("trickle", "the whole hello went out before the deadline")


def garbage(port, stats, until):
    while time.monotonic() < until:
        if random.random() < 0.5:
            # No TLS record: a first byte that is no record type, no SSLv2 length and no
            # HTTP method's letter, and a second that is no TLS major version (after a 3
            # OpenSSL would wait for a record of the length the next bytes say).
            data = bytes([random.randint(0x00, 0x13), random.choice([0, 1, 2, 4, 0x47, 0xfe])])
            data += os.urandom(random.randint(8, 2048))
            kind = "garbage-bytes"
        else:
            # A handshake record of the right length whose message is no ClientHello.
            payload = bytes([random.choice([0, 2, 11, 20, 99])]) + os.urandom(random.randint(3, 600))
            data = b"\x16\x03\x01" + struct.pack(">H", len(payload)) + payload
            kind = "garbage-record"
        start = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                stats.add(kind)
                s.sendall(data)
                got, closed = read_to_close(s, 3)
        except OSError as e:
            stats.problem(kind, f"connect/send: {e}")
            time.sleep(0.05)
            continue
        if not closed:
            stats.problem(kind, "not closed within 3 s")
        else:
            stats.closed_after(kind, time.monotonic() - start)
            if got[:1] == b"\x15":
                stats.add(kind, "alerts")


def old_versions(port, stats, until, version, name, alert):
    while time.monotonic() < until:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                stats.add(name)
                s.sendall(old_hello(version))
                got, closed = read_to_close(s, 3)
        except OSError as e:
            stats.problem(name, f"connect/send: {e}")
            time.sleep(0.05)
            continue
        # An alert record: 0x15, version, length 2, level, description.
        if closed and len(got) >= 7 and got[0] == 0x15 and got[6] == alert:
            stats.add(name, "alerts")
        else:
            stats.problem(name, f"closed={closed}, answer {got[:16].hex()}")
        time.sleep(0.02)


def flood(port, stats, until):
    ctx = client_context()
    while time.monotonic() < until:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                with ctx.wrap_socket(raw, server_hostname="localhost"):  # the handshake
                    stats.add("flood", "handshakes")
                # Dropped: no request, no close_notify.
        except (OSError, ssl.SSLError) as e:
            stats.problem("flood", str(e))
            time.sleep(0.05)


def wrk(port, connections, seconds, close, out):
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s"]
    if close:
        cmd += ["-H", "Connection: close"]
    with open(out, "w") as f:
        return subprocess.Popen(cmd + [f"https://127.0.0.1:{port}/"], stdout=f,
                                stderr=subprocess.STDOUT)


def check_wrk(name, path, minimum):
    text = open(path).read()
    print(f"--- {name}\n{text.rstrip()}")
    m = re.search(r"(\d+) requests in", text)
    requests = int(m.group(1)) if m else 0
    errors = re.search(r"Socket errors:.*", text)
    non2xx = re.search(r"Non-2xx or 3xx responses: \d+", text)
    check(f"{name}: no socket errors (connect, read, write, timeout)", not errors,
          errors.group(0) if errors else "")
    check(f"{name}: no non-2xx answers", not non2xx, non2xx.group(0) if non2xx else "")
    check(f"{name}: completed at least {minimum} requests", requests >= minimum, f"{requests}")
    return requests


def serving(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with client_context().wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                got, _ = read_to_close(s, 5)
                return got.startswith(b"HTTP/1.1 200")
    except (OSError, ssl.SSLError):
        return False


def main(hello, seconds):
    for tool in ("wrk", "openssl"):
        if not shutil.which(tool):
            print(f"FAIL {tool} is missing (scripts/install-deps.sh)")
            return 1
    work = tempfile.mkdtemp(prefix="tern-tls-abuse-")
    server = None
    try:
        os.mkdir(os.path.join(work, "public"))
        self_signed(work)
        log = open(f"{work}/hello.log", "w")
        srv = procs.start([hello, "{port}", "--cert", f"{work}/cert.pem", "--key", f"{work}/key.pem"],
                          name="hello --cert", cwd=work, stdout=log, stderr=subprocess.STDOUT,
                          ready=serving)
        server, port = srv.proc, srv.port

        stats = Stats()
        begin = time.monotonic()
        until = begin + seconds + 1  # the looping abusers run as long as wrk, and a little more
        hello_bytes = client_hello()
        threads = [threading.Thread(target=silent, args=(port, stats)) for _ in range(STALLED)]
        threads += [threading.Thread(target=trickle, args=(port, stats, hello_bytes)) for _ in range(STALLED)]
        threads += [threading.Thread(target=garbage, args=(port, stats, until)) for _ in range(3)]
        for version, name, alert in OLD_VERSIONS:
            threads.append(threading.Thread(target=old_versions, args=(port, stats, until, version, name, alert)))
        threads += [threading.Thread(target=flood, args=(port, stats, until)) for _ in range(FLOODERS)]
        for t in threads:
            t.daemon = True
            t.start()
        time.sleep(0.5)  # the stalled clients take their places first
        keep_alive = wrk(port, 40, seconds, False, f"{work}/wrk-keepalive.log")
        handshakes = wrk(port, 8, seconds, True, f"{work}/wrk-close.log")
        for p in (keep_alive, handshakes):
            p.wait(timeout=seconds + 20)
        # The stalled clients end at their deadline (about 10 s after they connected).
        for t in threads:
            t.join(timeout=max(0.0, begin + DEADLINE + SLACK + 5 - time.monotonic()))
        check("every abuser ended", not any(t.is_alive() for t in threads))

        check_wrk("wrk keep-alive (-c40)", f"{work}/wrk-keepalive.log", 1000)
        check_wrk("wrk a handshake per request (-c8, Connection: close)", f"{work}/wrk-close.log", 100)

        print("--- abusers")
        for kind in sorted(stats.counts):
            times = stats.close_times.get(kind, [])
            span = f", closed after {min(times):.2f}..{max(times):.2f} s" if times else ""
            print(f"{kind}: " + ", ".join(f"{v} {k}" for k, v in stats.counts[kind].items()) + span)
        for kind, problems in sorted(stats.problems.items()):
            check(f"{kind}: refused or closed as it should be", False,
                  f"{len(problems)} times, e.g. {problems[:3]}")
        for kind in ("silent", "trickle"):
            times = stats.close_times.get(kind, [])
            check(f"{kind}: all {STALLED} closed by the server", len(times) == STALLED, f"{len(times)}")
            if times:
                check(f"{kind}: closed at the {DEADLINE:.0f} s handshake deadline "
                      f"({min(times):.2f}..{max(times):.2f} s)",
                      min(times) >= DEADLINE - 0.5 and max(times) <= DEADLINE + SLACK)
        for kind in ("garbage-bytes", "garbage-record"):
            check(f"{kind}: some connections made and closed", len(stats.close_times.get(kind, [])) >= 5)
        for _, name, alert in OLD_VERSIONS:
            n = stats.counts.get(name, {}).get("alerts", 0)
            check(f"{name}: refused with alert {alert} ({n} times)", n >= 5)
        n = stats.counts.get("flood", {}).get("handshakes", 0)
        check(f"flood: {n} handshakes completed and dropped", n >= 100)

        check("hello still serves HTTPS afterwards", serving(port))
        check("hello is still running", server.poll() is None)
        server.terminate()
        server.wait(timeout=15)
        log.close()
        text = open(f"{work}/hello.log").read()
        # hello logs refused hellos, at most a line a second per worker thread (one per CPU,
        # hello's default; docs/tls.md):
        # the flood of refusals must not flood the log.
        lines = re.findall(r"tern: TLS handshake with 127\.0\.0\.1 refused: .*", text)
        elapsed = time.monotonic() - begin
        check(f"hello logged refused hellos, rate-limited ({len(lines)} lines in {elapsed:.0f} s)",
              1 <= len(lines) <= (os.cpu_count() or 1) * (elapsed + 1) and any("more since the last line" in l for l in lines),
              text[-2000:])
        check("hello stopped cleanly on SIGTERM", server.returncode == 0, f"exit {server.returncode}")
    finally:
        if server and server.poll() is None:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(f"tls abuse check: {'FAIL' if failures else 'ok'} ({failures} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 8))

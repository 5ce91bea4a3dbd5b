#!/usr/bin/python3
"""examples/gateway over real sockets, with the standard library only.

Two upstreams (Python's ThreadingHTTPServer) behind the gateway: /api/REST reaches /REST on
them in turn with the same method, query, headers and body, plus X-Forwarded-For and the
request id; a large upload (256 MiB, or 1 GiB with --big), sized and chunked, passes through
piece by piece with no file in the gateway's temporary directory (nor a deleted one open) and
its peak RSS far below the size, and a download of the same size is relayed whole;
a slow streamed answer reaches the client piece by piece before the upstream has finished;
the client's forwarding fields, the fields its Connection names and hop-by-hop ones do not
reach the upstream, which sees the gateway's own and one X-Request-Id; an upstream slower
than --timeout is a 504; a stopped upstream is skipped and two are a 502;
the gateway still serves after all that, and SIGTERM stops it.

    gateway_smoke.py path/to/gateway [--big]
"""
import hashlib
import http.client
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

BIG = "--big" in sys.argv
# Built with AddressSanitizer (scripts/test.sh --sanitize): its quarantine holds up to 256 MiB
# of freed memory, so the gateway's RSS says nothing about what tern holds; the memory bound
# is checked by the plain build's run.
SANITIZED = "--sanitized" in sys.argv
TRANSFER_BYTES = (1024 if BIG else 256) * 1024 * 1024
PIECE = bytes(range(256)) * 4096  # 1 MiB
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def upstream(name):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body, ctype="application/json"):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Upstream", name)
            self.end_headers()
            self.wfile.write(data)

        def gone(self):
            # A stopped upstream: its kept-alive connections close without an answer too.
            if self.server.stopped:
                self.close_connection = True
            return self.server.stopped

        def read_chunked(self, digest):
            got = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return got
                left = size
                while left > 0:
                    piece = self.rfile.read(min(left, 1 << 20))
                    if not piece:
                        return got
                    digest.update(piece)
                    got += len(piece)
                    left -= len(piece)
                self.rfile.readline()

        def echo(self):
            if self.gone():
                return
            digest = hashlib.sha256()
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                length = self.read_chunked(digest)
                left = 0
            else:
                length = int(self.headers.get("Content-Length") or 0)
                left = length
            while left > 0:
                piece = self.rfile.read(min(left, 1 << 20))
                if not piece:
                    break
                digest.update(piece)
                left -= len(piece)
            self.reply(200, json.dumps({
                "upstream": name, "method": self.command, "path": self.path,
                "forwarded_for": self.headers.get("X-Forwarded-For"),
                "request_id": self.headers.get("X-Request-Id"),
                "probe": self.headers.get("X-Probe"),
                "headers": [[k, v] for k, v in self.headers.items()],
                "chunked": "chunked" in (self.headers.get("Transfer-Encoding") or ""),
                "length": length - left, "sha256": digest.hexdigest()}))

        def do_GET(self):
            if self.gone():
                return
            if self.path == "/slow-stream":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(8):
                    piece = ("piece %d\n" % i).encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                    time.sleep(0.25)
                self.wfile.write(b"0\r\n\r\n")
                return
            if self.path.startswith("/download/"):
                n = int(self.path[len("/download/"):])
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                view = memoryview(PIECE)
                while n > 0:
                    self.wfile.write(view[:min(n, len(PIECE))])
                    n -= min(n, len(PIECE))
                return
            if self.path == "/sleep":
                time.sleep(3)
                self.reply(200, "late")
                return
            self.echo()

        do_POST = do_PUT = do_DELETE = echo

    server = http.server.ThreadingHTTPServer(("127.0.0.1", procs.free_port()), Handler)
    server.daemon_threads = True
    server.stopped = False
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def request(port, method, path, body=None, headers=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def fields_named(answer, name):
    return [v for k, v in answer["headers"] if k.lower() == name.lower()]


def check_forwarding(port):
    """A client's forwarding fields, its Connection options and hop-by-hop fields never reach
    the upstream (RFC 9110 7.6.1); the gateway's own do, once each."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.putrequest("GET", "/api/forwarded", skip_host=True)
    sent = [("Host", "front.example"),
            ("X-Forwarded-For", "10.0.0.1"), ("X-Forwarded-Proto", "https"),
            ("X-Forwarded-Host", "evil.example"), ("Forwarded", "for=10.0.0.1;proto=https"),
            ("X-Real-IP", "10.0.0.1"), ("X-Request-Id", "client-one"),
            ("X-Request-Id", "client-two"), ("Connection", "keep-alive, X-Hop-Secret"),
            ("Connection", "X-Other-Hop"), ("X-Hop-Secret", "for this hop"),
            ("X-Other-Hop", "this hop too"), ("Keep-Alive", "timeout=5"), ("TE", "trailers"),
            ("Proxy-Connection", "keep-alive"), ("X-Probe", "kept")]
    for name, value in sent:
        c.putheader(name, value)
    c.endheaders()
    r = c.getresponse()
    answer = json.loads(r.read())
    c.close()
    check(r.status == 200 and fields_named(answer, "X-Probe") == ["kept"],
          "an end-to-end field passes")
    own = {"X-Forwarded-For": ["127.0.0.1"], "X-Forwarded-Proto": ["http"],
           "X-Forwarded-Host": ["front.example"], "X-Real-IP": ["127.0.0.1"],
           "Forwarded": ['for="127.0.0.1";proto=http;host="front.example"']}
    for name, expected in own.items():
        got = fields_named(answer, name)
        check(got == expected, "the upstream sees the gateway's own %s only: %r" % (name, got))
    ids = fields_named(answer, "X-Request-Id")
    check(len(ids) == 1 and ids[0] == r.getheader("X-Request-Id"),
          "one X-Request-Id goes upstream, the one the answer carries: %r" % ids)
    for name in ("X-Hop-Secret", "X-Other-Hop", "Keep-Alive", "TE", "Proxy-Connection"):
        check(not fields_named(answer, name), "%s (hop-by-hop) stays at the gateway" % name)
    connection = ",".join(fields_named(answer, "Connection")).lower()
    check("x-hop-secret" not in connection and "x-other-hop" not in connection,
          "the client's Connection options stay at the gateway: %r" % connection)


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def deleted_files(pid):
    """The gateway's open descriptors of files that have no name (a spool file)."""
    found = []
    base = "/proc/%d/fd" % pid
    try:
        for fd in os.listdir(base):
            try:
                target = os.readlink(os.path.join(base, fd))
            except OSError:
                continue
            if target.endswith("(deleted)") or target.startswith("/tmp") or \
                    "spool" in target:
                found.append(target)
    except OSError:
        pass
    return found


def check_big_transfers(port, pid, spool):
    """An upload sized and chunked, and a download, of TRANSFER_BYTES through the gateway:
    whole, no file made for them, bounded memory."""
    mib = TRANSFER_BYTES >> 20
    expected = hashlib.sha256()
    for _ in range(mib):
        expected.update(PIECE)
    expected = expected.hexdigest()
    seen_files = []
    watching = threading.Event()

    def watch():
        while not watching.is_set():
            seen_files.extend(deleted_files(pid))
            time.sleep(0.02)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    def pieces():
        for _ in range(mib):
            yield PIECE
    try:
        for sized in (True, False):
            what = "a %d MiB upload %s" % (mib, "with Content-Length" if sized else "chunked")
            headers = {"Content-Length": str(TRANSFER_BYTES)} if sized else {}
            start = time.time()
            # Without a Content-Length, http.client sends an iterable body chunked.
            r, data = request(port, "POST", "/api/upload", body=pieces(), headers=headers,
                              timeout=120)
            took = time.time() - start
            answer = json.loads(data)
            check(r.status == 200 and answer["length"] == TRANSFER_BYTES and
                  answer["sha256"] == expected and answer["chunked"] == (not sized),
                  "%s arrives whole, framed the same (%.1f s)" % (what, took))

        # Over HTTP/2 (curl, h2c with prior knowledge), from a pipe: no length, so the
        # gateway sends it on chunked.
        start = time.time()
        curl = subprocess.Popen(["curl", "-s", "--http2-prior-knowledge", "-T", "-",
                                 "-w", "\n%{http_version} %{http_code}",
                                 "http://127.0.0.1:%d/api/upload-h2" % port],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for piece in pieces():
            curl.stdin.write(piece)
        curl.stdin.close()
        out = curl.stdout.read().decode()
        curl.wait(timeout=120)
        answer_text, _, version = out.rpartition("\n")
        try:
            answer = json.loads(answer_text)
        except ValueError:
            answer = {}
        check(version == "2 200" and answer.get("length") == TRANSFER_BYTES and
              answer.get("sha256") == expected and answer.get("chunked"),
              "a %d MiB upload over HTTP/2 without a length arrives whole, chunked upstream "
              "(%s, %.1f s)" % (mib, version, time.time() - start))

        start = time.time()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("GET", "/api/download/%d" % TRANSFER_BYTES)
        r = c.getresponse()
        digest = hashlib.sha256()
        got = 0
        while True:
            piece = r.read(1 << 20)
            if not piece:
                break
            digest.update(piece)
            got += len(piece)
        c.close()
        check(r.status == 200 and got == TRANSFER_BYTES and digest.hexdigest() == expected,
              "a %d MiB download is relayed whole (%d bytes, %.1f s)"
              % (mib, got, time.time() - start))
    finally:
        watching.set()
        watcher.join()
    check(not seen_files, "no spool file was open in the gateway: %r" % sorted(set(seen_files)))
    left = os.listdir(spool)
    check(not left, "nothing was written in the gateway's TMPDIR: %r" % left)
    peak = peak_rss_kib(pid)
    print("     the gateway's peak RSS: %d KiB" % peak)
    if SANITIZED:
        print("     (not bounded under a sanitizer: its quarantine keeps freed memory)")
    else:
        check(peak < 32 * 1024, "the gateway's peak RSS stays under 32 MiB (%d KiB)" % peak)


def main():
    binary = sys.argv[1]
    a, b = upstream("A"), upstream("B")
    spool = tempfile.mkdtemp(prefix="gateway-tmp-")
    env = dict(os.environ, TMPDIR=spool)
    srv = procs.start([binary, "{port}",
                       "--upstream", "http://127.0.0.1:%d" % a.server_port,
                       "--upstream", "http://127.0.0.1:%d/" % b.server_port,
                       "--timeout", "1000"], name="the gateway", timeout=10, stdout=None,
                      env=env)
    port, gw = srv.port, srv.proc
    try:
        # In turn, with the method, path, query, headers, forwarded-for and request id.
        seen = set()
        for _ in range(4):
            r, data = request(port, "GET", "/api/items/7?full=1", headers={"X-Probe": "p1"})
            answer = json.loads(data)
            seen.add(answer["upstream"])
            check(r.status == 200 and answer["path"] == "/items/7?full=1" and
                  answer["method"] == "GET" and answer["probe"] == "p1", "GET passes through")
            check(answer["forwarded_for"] == "127.0.0.1", "X-Forwarded-For names the client")
            check(answer["request_id"] and r.getheader("X-Request-Id") == answer["request_id"],
                  "the request id reaches the upstream and comes back")
            check(r.getheader("X-Upstream") == answer["upstream"],
                  "the upstream's own headers come back")
        check(seen == {"A", "B"}, "both upstreams are used in turn")
        check_forwarding(port)
        for method in ("PUT", "DELETE", "POST"):
            r, data = request(port, method, "/api/m?q=%s" % method, body=b"abc")
            answer = json.loads(data)
            check(answer["method"] == method and answer["length"] == 3 and
                  answer["path"] == "/m?q=" + method, method + " passes with its body")

        check_big_transfers(port, gw.pid, spool)

        # A slow streamed answer arrives piece by piece.
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        start = time.time()
        c.request("GET", "/api/slow-stream")
        r = c.getresponse()
        first = r.fp.readline()  # the first chunk's size line
        first_at = time.time() - start
        body = b""
        while True:
            size_line = first if first is not None else r.fp.readline()
            first = None
            size = int(size_line.strip(), 16)
            if size == 0:
                break
            body += r.fp.read(size)
            r.fp.readline()
        total = time.time() - start
        c.close()
        check(body == b"".join(b"piece %d\n" % i for i in range(8)), "the streamed body is whole")
        check(first_at < 1.0 and total >= 1.5,
              "the first piece arrives before the upstream ends (%.2f s of %.2f s)"
              % (first_at, total))

        # Past --timeout: 504.
        start = time.time()
        r, _ = request(port, "GET", "/api/sleep")
        check(r.status == 504 and time.time() - start < 2.5, "an upstream past the timeout is 504")

        # One upstream down: the other answers; both down: 502.
        a.stopped = True
        a.shutdown()
        a.server_close()
        for _ in range(3):
            r, data = request(port, "GET", "/api/x")
            check(r.status == 200 and json.loads(data)["upstream"] == "B",
                  "a stopped upstream is skipped")
        b.stopped = True
        b.shutdown()
        b.server_close()
        r, data = request(port, "GET", "/api/x")
        check(r.status == 502, "no upstream answering is 502")
        r, _ = request(port, "GET", "/nothing-here")
        check(r.status == 404, "the gateway still serves its own routes")
    finally:
        code = srv.stop(timeout=10, expect=None)
        check(code == 0, "SIGTERM stops the gateway (exit %s)" % code)
        try:
            os.rmdir(spool)
        except OSError:
            pass
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()

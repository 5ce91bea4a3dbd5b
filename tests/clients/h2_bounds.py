#!/usr/bin/python3
"""What one HTTP/2 connection may hold, over real sockets (docs/http2.md, "What one
connection may hold"): open descriptors, unsent response bytes and request bodies in memory
stay bounded whatever h2_max_concurrent_streams is, a window trickled a byte at a time is held to a minimum rate,
and near RLIMIT_NOFILE new work is refused with an answer while others are still served.
Frames are built with hyperframe and hpack (Debian python3-h2) against
tests/support/h2_bounds_app.cpp.

    h2_bounds.py PATH/TO/tern_h2_bounds_app

Prints a line per check, with the measured figures, and ends with "N passed, M failed";
exits 1 when any failed.
"""
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import hpack
from hyperframe.frame import (DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

APP = sys.argv[1]
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
INITIAL_WINDOW_SIZE = 0x4
MIB = 1024 * 1024

# The documented bounds (docs/http2.md) with the app's defaults.
MAX_OPEN_FILES = 8               # config::h2_max_open_files
MAX_UNSENT = 4 * MIB             # config::h2_max_unsent
MIN_PROGRESS = 16 * 1024         # config::h2_min_send_progress, per write_timeout
MAX_BODY_MEMORY = 4 * MIB        # config::http2.max_body_memory
STREAM_WINDOW = 65535            # the server's stream window for request bodies (RFC 9113 6.9.2)
SPOOL_ABOVE = MIB                # config::spool.body_above: larger bodies go to a file


def start(*args, nofile=None):
    def limit():
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    srv = procs.start([APP, "{port}", *args], name="h2_bounds' app", timeout=10,
                      preexec_fn=limit)
    time.sleep(0.1)  # the probe's connection is closed by then
    return srv.proc, srv.port


def stop(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def open_fds(proc):
    return len(os.listdir(f"/proc/{proc.pid}/fd"))


def rss(proc):
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def http1_get(port, path="/", timeout=5.0):
    """The status line of a fresh HTTP/1.1 client's answer, or None without one."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            deadline = time.time() + timeout
            while b"\r\n" not in data and time.time() < deadline:
                s.settimeout(max(0.01, deadline - time.time()))
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.split(b"\r\n", 1)[0].decode() if b"\r\n" in data else None
    except OSError:
        return None


class conn:
    """An h2c connection of raw frames: the client's SETTINGS (a stream window of `window`),
    requests, window updates, and the frames read back."""

    def __init__(self, port, window=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.buf = b""
        self.next_id = 1
        self.status = {}     # stream -> :status
        self.body = {}       # stream -> bytes of DATA
        self.ended = set()   # streams whose response ended
        self.reset = {}      # stream -> RST_STREAM error code
        self.goaway = None
        self.closed = False
        self.window = 65535  # the server's connection window for request bodies
        self.stream_window = {}  # stream -> the server's window for its request body
        settings = SettingsFrame(0)
        if window is not None:
            settings.settings = {INITIAL_WINDOW_SIZE: window}
        self.sock.sendall(PREFACE + settings.serialize())

    def send(self, *frames):
        try:
            self.sock.sendall(b"".join(f.serialize() for f in frames))
        except OSError:
            self.closed = True

    def open_streams(self, method, path, count, end):
        """Opens `count` streams of `method` requests for `path` (a HEADERS frame each, with
        END_STREAM when `end`); returns their ids."""
        frames, ids = [], []
        for _ in range(count):
            f = HeadersFrame(self.next_id)
            f.data = self.enc.encode([(":method", method), (":scheme", "http"),
                                      (":authority", "localhost"), (":path", path)])
            f.flags = {"END_STREAM", "END_HEADERS"} if end else {"END_HEADERS"}
            frames.append(f)
            ids.append(self.next_id)
            self.next_id += 2
        self.send(*frames)
        return ids

    def get(self, path, count=1):
        return self.open_streams("GET", path, count, end=True)

    def post(self, path, count=1):
        """Opens `count` POST streams whose bodies follow (upload())."""
        ids = self.open_streams("POST", path, count, end=False)
        for s in ids:
            self.stream_window[s] = STREAM_WINDOW
        return ids

    def upload(self, left, end, quiet=1.0, limit=60.0):
        """Sends the bytes `left` says per stream (stream -> bytes still to send) as the
        server's windows allow, with END_STREAM after the last when `end`; streams answered
        or reset drop out. Returns when all is sent, or when no window came for `quiet`
        seconds (the server holds the rest back), or after `limit`."""
        ended = set()
        t0 = last = time.time()
        while not self.closed and time.time() - t0 < limit:
            frames, size = [], 0
            for sid in list(left):
                if sid in self.reset or sid in self.status:
                    del left[sid]
                    continue
                n = min(left[sid], self.stream_window.get(sid, 0), self.window, 16384)
                if n > 0:
                    left[sid] -= n
                    self.stream_window[sid] -= n
                    self.window -= n
                    flags = ["END_STREAM"] if end and left[sid] == 0 else []
                    frames.append(DataFrame(sid, data=b"u" * n, flags=flags))
                    size += n
                    if flags:
                        ended.add(sid)
                elif left[sid] == 0 and end and sid not in ended:
                    frames.append(DataFrame(sid, data=b"", flags=["END_STREAM"]))
                    ended.add(sid)
                if size >= 256 * 1024:
                    break
            if frames:
                self.send(*frames)
                last = time.time()
            if not any(left.values()) and (not end or all(s in ended for s in left)):
                return
            if not frames and time.time() - last > quiet:
                return
            if self.read(0.001 if frames else 0.05):
                while self.read(0.0005):
                    pass

    def grant(self, stream_ids, n):
        self.send(*[WindowUpdateFrame(sid, window_increment=n) for sid in stream_ids])

    def read(self, timeout):
        """Frames that arrive within `timeout`; returns when nothing more came in time."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 20)
        except socket.timeout:
            return False
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return False
        self.buf += data
        while len(self.buf) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(self.buf[:9]))
            if len(self.buf) < 9 + length:
                break
            frame.parse_body(memoryview(self.buf[9:9 + length]))
            self.buf = self.buf[9 + length:]
            self.on_frame(frame)
        return True

    def on_frame(self, f):
        sid = f.stream_id
        if isinstance(f, HeadersFrame):
            fields = dict(self.dec.decode(f.data))
            status = fields.get(b":status", fields.get(":status"))
            self.status[sid] = int(status)
            if "END_STREAM" in f.flags:
                self.ended.add(sid)
        elif isinstance(f, DataFrame):
            self.body[sid] = self.body.get(sid, b"") + f.data
            if "END_STREAM" in f.flags:
                self.ended.add(sid)
        elif isinstance(f, RstStreamFrame):
            self.reset[sid] = f.error_code
        elif isinstance(f, WindowUpdateFrame) and sid == 0:
            self.window += f.window_increment
        elif isinstance(f, WindowUpdateFrame):
            self.stream_window[sid] = self.stream_window.get(sid, 0) + f.window_increment
        elif isinstance(f, GoAwayFrame):
            self.goaway = f.error_code
        elif isinstance(f, PingFrame) and "ACK" in f.flags:
            self.pong = bytes(f.opaque_data)
        elif isinstance(f, SettingsFrame) and "ACK" not in f.flags:
            self.send(SettingsFrame(0, flags=["ACK"]))

    def sync(self, timeout=10.0):
        """A PING answered: the server has read (and run the handlers of) all sent before."""
        token = os.urandom(8)
        self.pong = None
        self.send(PingFrame(0, opaque_data=token))
        deadline = time.time() + timeout
        while self.pong != token and not self.closed and time.time() < deadline:
            self.read(max(0.01, deadline - time.time()))
        return self.pong == token

    def close(self):
        self.sock.close()


def make_files(d):
    with open(os.path.join(d, "big.bin"), "wb") as f:
        f.write(b"b" * (8 * MIB))
    with open(os.path.join(d, "mid.bin"), "wb") as f:
        f.write(b"m" * (100 * 1024))


# ---- the checks --------------------------------------------------------------------------

def descriptors(d):
    # Twelve connections that grant no window, each with 100 streams asking for an 8 MiB
    # file, under a 1,024 descriptor limit: a fresh HTTP/1.1 client is still answered.
    # A long write_timeout: the stalled streams are not reset while the test runs.
    proc, port = start("--static", d, "--write-timeout", "60000", nofile=1024)
    try:
        http1_get(port, "/files/mid.bin")  # the static directory is opened once per thread
        time.sleep(0.2)
        before = open_fds(proc)
        conns = []
        synced = 0
        for _ in range(12):
            c = conn(port, window=0)
            c.get("/files/big.bin", 100)
            synced += c.sync(timeout=3)
            conns.append(c)
        held = open_fds(proc) - before
        per = held / 12
        print(f"     descriptors: {held} for 12 connections, {per:.1f} per connection "
              f"(100 streams each on an 8 MiB file, zero window)", flush=True)
        check(f"a zero-window h2 connection with 100 file streams holds at most "
              f"1 + h2_max_open_files ({1 + MAX_OPEN_FILES}) descriptors",
              per <= 1 + MAX_OPEN_FILES, f"{per:.1f} per connection")
        check("all 12 connections are accepted and answer a PING", synced == 12,
              f"{synced} of 12")
        # A hundred fresh HTTP/1.1 keep-alive clients at once, each asking for a file.
        fresh = []
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /files/mid.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            fresh.append(s)
        lines = []
        for s in fresh:
            try:
                s.settimeout(5)
                lines.append(s.recv(64).split(b"\r\n", 1)[0].decode())
            except OSError:
                lines.append(None)
        for s in fresh:
            s.close()
        ok = sum(1 for x in lines if x == "HTTP/1.1 200 OK")
        check("beside them, under a 1,024 descriptor limit, 100 fresh HTTP/1.1 keep-alive "
              "clients asking for a file are all answered 200", ok == 100,
              f"{ok} of 100; others: {set(lines) - {'HTTP/1.1 200 OK'}}")
        answered = sum(1 for c in conns for s in c.status)
        check("no stream was answered with an error meanwhile (the others wait)",
              all(v == 200 for c in conns for v in c.status.values()),
              {v for c in conns for v in c.status.values()})
        for c in conns:
            c.close()
        print(f"     ({answered} of 1200 streams had their head sent)", flush=True)
    finally:
        stop(proc)

    # Streams that wait for a file slot are served once the window opens: nothing is lost.
    proc, port = start("--static", d)
    try:
        c = conn(port, window=0)
        ids = c.get("/files/mid.bin", 100)
        c.sync()
        c.grant([0], 200 * MIB)
        c.grant(ids, 200 * 1024)
        deadline = time.time() + 20
        while len(c.ended) < 100 and not c.closed and time.time() < deadline:
            c.read(1)
        whole = sum(1 for s in ids if len(c.body.get(s, b"")) == 100 * 1024 and s in c.ended)
        check("100 streams of a 100 KiB file on a zero-window connection are all served "
              "whole once the window opens", whole == 100, f"{whole} of 100")
        c.close()
    finally:
        stop(proc)


def spooled_bodies(d):
    # Request bodies over spool_body_above go to temporary files, a descriptor each: 20
    # streams that each send 20 KB (spooled above 16 KiB) and never end hold at most
    # h2_max_open_files of them; the streams past it are refused (REFUSED_STREAM).
    proc, port = start("--static", d, "--spool-above", "16384")
    try:
        before = open_fds(proc)
        c = conn(port)
        ids = []
        for _ in range(20):
            f = HeadersFrame(c.next_id)
            f.data = c.enc.encode([(":method", "POST"), (":scheme", "http"),
                                   (":authority", "localhost"), (":path", "/size")])
            f.flags = {"END_HEADERS"}
            ids.append(c.next_id)
            c.next_id += 2
            c.send(f)
            deadline = time.time() + 5
            while c.window < 20000 and not c.closed and time.time() < deadline:
                c.read(0.2)
            c.window -= 20000
            c.send(DataFrame(ids[-1], data=b"u" * 10000), DataFrame(ids[-1], data=b"u" * 10000))
        c.sync()
        held = open_fds(proc) - before
        refused = sum(1 for s in ids if c.reset.get(s) == 0x7)
        print(f"     spooled bodies: {held} descriptors for one connection with 20 unfinished "
              f"spooled uploads, {refused} streams refused", flush=True)
        check("unfinished spooled uploads on one connection hold at most 1 + h2_max_open_files "
              "descriptors; the streams past it are refused (REFUSED_STREAM)",
              held <= 1 + MAX_OPEN_FILES and refused == 20 - MAX_OPEN_FILES and c.goaway is None,
              f"{held} descriptors, {refused} refused, GOAWAY {c.goaway}")
        # The uploads that were kept end: each is answered, though the connection holds
        # h2_max_open_files spooled bodies (their own, open already: not new files).
        kept = [s for s in ids if s not in c.reset]
        c.send(*[DataFrame(s, data=b"", flags=["END_STREAM"]) for s in kept])
        deadline = time.time() + 10
        while not all(s in c.ended for s in kept) and not c.closed and time.time() < deadline:
            c.read(0.2)
        answered = [s for s in kept if c.status.get(s) == 200 and c.body.get(s) == b"20000"]
        check("the kept spooled uploads, once ended, are all answered (their own spooled "
              "bodies do not hold their handlers back)",
              len(kept) == MAX_OPEN_FILES and len(answered) == len(kept),
              f"{len(answered)} of {len(kept)} answered")
        c.close()
    finally:
        stop(proc)


def memory():
    # One connection that grants no window, 100 streams of a 1 MiB answer made by the
    # handler (ctx.text): what the server holds for it, measured as RSS.
    proc, port = start()
    try:
        warm = conn(port, window=0)
        warm.get("/big?n=1048576", 2)
        warm.sync()
        warm.close()
        time.sleep(0.3)
        before = rss(proc)
        conns = []
        for _ in range(2):
            c = conn(port, window=0)
            c.get("/big?n=1048576", 100)
            c.sync()
            conns.append(c)
        time.sleep(0.2)
        per = (rss(proc) - before) / 2
        bound = MAX_UNSENT + MIB  # the budget and the one answer that passes it
        print(f"     memory: +{per / MIB:.1f} MiB of RSS per connection (100 streams of a "
              f"1 MiB answer, zero window); documented bound {bound / MIB:.0f} MiB", flush=True)
        check("a zero-window h2 connection with 100 streams of 1 MiB answers holds no more "
              "than h2_max_unsent + one answer (with slack: 2x)", per < 2 * bound,
              f"+{per / MIB:.1f} MiB")
        for c in conns:
            c.close()
        # The streams that waited are answered once the client reads: 100 x 100 KB.
        c = conn(port, window=0)
        ids = c.get("/big?n=100000", 100)
        c.sync()
        heads = len(c.status)
        c.grant([0], 200 * MIB)
        c.grant(ids, 200 * 1024)
        deadline = time.time() + 20
        while len(c.ended) < 100 and not c.closed and time.time() < deadline:
            c.read(1)
        whole = sum(1 for s in ids if len(c.body.get(s, b"")) == 100000 and s in c.ended)
        check("100 answers of 100 KB (10 MB, over the budget) all arrive once the window "
              "opens", whole == 100, f"{whole} of 100, {heads} heads before the window opened")
        c.close()
    finally:
        stop(proc)


def bodies():
    # Request bodies under spool_body_above are held in memory until their stream closes:
    # one connection with 100 streams, each sending 900 KiB that never ends, may hold only
    # http2.max_body_memory (4 MiB) + a stream window per stream + the one body that passed
    # it, whatever the client sends (before the bound: all of it).
    body = 900 * 1024
    proc, port = start()
    try:
        warm = conn(port)
        ids = warm.post("/size", 2)
        warm.upload({s: body for s in ids}, end=True)
        warm.sync()
        warm.close()
        time.sleep(0.3)
        before = rss(proc)
        c = conn(port)
        ids = c.post("/size", 100)
        left = {s: body for s in ids}
        t0 = time.time()
        c.upload(left, end=False)
        took = time.time() - t0
        c.sync()
        time.sleep(0.2)
        grown = rss(proc) - before
        taken = sum(body - n for n in left.values())
        bound = MAX_BODY_MEMORY + 100 * STREAM_WINDOW + SPOOL_ABOVE
        print(f"     bodies: the server took {taken / MIB:.1f} MiB of 100 unfinished 900 KiB "
              f"uploads in {took:.1f} s, +{grown / MIB:.1f} MiB of RSS; documented bound "
              f"{bound / MIB:.1f} MiB", flush=True)
        # Under AddressSanitizer (scripts/test.sh --sanitize sets ASAN_OPTIONS) a body's
        # bytes cost about twice their size in RSS (redzones, shadow memory, the quarantine):
        # the RSS slack is 4x there, the bytes taken are held to the bound all the same.
        slack = 4 if "ASAN_OPTIONS" in os.environ else 2
        check("an h2 connection with 100 unfinished 900 KiB uploads holds no more than "
              f"http2.max_body_memory + a stream window per stream + one body (with slack: "
              f"{slack}x)", grown < slack * bound and taken <= bound,
              f"+{grown / MIB:.1f} MiB, {taken / MIB:.1f} MiB taken")
        line = http1_get(port)
        check("another client is served meanwhile", line == "HTTP/1.1 200 OK", line)
        # The client goes on and ends every upload: each is answered, whole, in turn.
        c.upload(left, end=True, quiet=5.0, limit=120.0)
        deadline = time.time() + 20
        while len(c.status) < 100 and not c.closed and time.time() < deadline:
            c.read(0.2)
        whole = sum(1 for s in ids if c.status.get(s) == 200 and
                    c.body.get(s) == str(body).encode())
        check("once the client goes on, all 100 uploads (88 MiB, over the budget) are "
              "answered whole", whole == 100, f"{whole} of 100, statuses "
              f"{set(c.status.values())}, resets {set(c.reset.values())}")
        c.close()

        # A single body larger than the stream window on an otherwise idle connection.
        c = conn(port)
        ids = c.post("/size", 1)
        c.upload({ids[0]: body}, end=True, quiet=5.0)
        deadline = time.time() + 10
        while ids[0] not in c.ended and not c.closed and time.time() < deadline:
            c.read(0.2)
        check("a single 900 KiB upload completes", c.body.get(ids[0]) == str(body).encode(),
              c.body.get(ids[0]))
        c.close()
    finally:
        stop(proc)

    # A client that sends 30 uploads past the budget for a second and goes silent: every one
    # is answered 408 after timeouts.body_idle (1 s) of silence (those the server held back,
    # once it gives their window back), and the server serves on.
    proc, port = start("--body-idle", "1000")
    try:
        c = conn(port)
        ids = c.post("/size", 30)
        c.upload({s: body for s in ids}, end=False, limit=1.0)
        t0 = time.time()
        while len(c.status) < 30 and not c.closed and time.time() - t0 < 15:
            c.read(0.2)
        took = time.time() - t0
        statuses = [c.status.get(s) for s in ids]
        print(f"     silent uploads: {statuses.count(408)} of 30 answered 408 in {took:.1f} s",
              flush=True)
        check("30 unfinished uploads of a client gone silent are all answered 408 (body_idle "
              "1 s; with slack: 15 s)", statuses.count(408) == 30, set(statuses))
        c.close()
        time.sleep(0.3)
        line = http1_get(port)
        check("the server serves after them", line == "HTTP/1.1 200 OK", line)
    finally:
        stop(proc)


def trickle():
    # write_timeout 1 s: a stream must send h2_min_send_progress bytes (or all it has) per
    # write_timeout while it waits for window; bound: 2 x write_timeout.
    proc, port = start("--write-timeout", "1000")
    try:
        c = conn(port, window=0)
        ids = c.get("/big?n=100000", 10)
        t0 = time.time()
        while len(c.reset) < 10 and not c.closed and time.time() - t0 < 8:
            c.grant([s for s in ids if s not in c.reset], 1)
            end = time.time() + 0.25
            while time.time() < end and c.read(max(0.01, end - time.time())):
                pass
        took = time.time() - t0
        sent = max((len(v) for v in c.body.values()), default=0)
        print(f"     stream trickle: {len(c.reset)} of 10 streams reset after {took:.1f} s "
              f"({sent} bytes sent on the longest)", flush=True)
        check("a stream window trickled 1 byte per 0.25 s: every stream is reset (CANCEL) "
              "within 2 x write_timeout (asserted with slack: 6 s)",
              len(c.reset) == 10 and all(v == 0x8 for v in c.reset.values()) and took < 6,
              (c.reset, round(took, 1)))
        c.close()

        # The connection's window trickled instead: streams may take 1 MiB, the connection
        # stays at its first 65,535 bytes plus a byte per 0.25 s.
        c = conn(port, window=MIB)
        c.get("/big?n=1000000", 4)
        t0 = time.time()
        while c.goaway is None and not c.closed and time.time() - t0 < 8:
            c.grant([0], 1)
            end = time.time() + 0.25
            while time.time() < end and c.read(max(0.01, end - time.time())):
                pass
        took = time.time() - t0
        print(f"     connection trickle: GOAWAY {c.goaway} after {took:.1f} s", flush=True)
        check("a connection window trickled 1 byte per 0.25 s: GOAWAY and the close within "
              "2 x write_timeout (asserted with slack: 6 s)",
              c.goaway is not None and took < 6, (c.goaway, round(took, 1)))
        c.close()
        check("the server serves after the trickles", http1_get(port) == "HTTP/1.1 200 OK")
    finally:
        stop(proc)


def near_the_limit(d):
    # 128 descriptors: clients that hold nearly all of them do not silence the next ones,
    # which are answered 503; an h2 stream is refused (REFUSED_STREAM) rather than failed;
    # once the clients leave, new ones are served again.
    proc, port = start("--static", d, nofile=128)
    try:
        c = conn(port)
        c.sync()
        idle = []
        for _ in range(140):
            try:
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                break
        time.sleep(0.5)
        line = http1_get(port, "/", timeout=5)
        check("with every descriptor but the reserve taken, a new HTTP/1.1 client is "
              "answered 503 instead of waiting unaccepted",
              line == "HTTP/1.1 503 Service Unavailable", line)
        ids = c.get("/files/mid.bin", 20)
        c.sync()
        deadline = time.time() + 5
        while len(c.ended) + len(c.reset) < 20 and not c.closed and time.time() < deadline:
            c.read(0.5)
        refused = [s for s in ids if c.reset.get(s) == 0x7]
        failed = [s for s in ids if c.status.get(s, 200) >= 500]
        check("an h2 stream that could take one of the last descriptors is refused "
              "(RST_STREAM REFUSED_STREAM), none fails with 500",
              len(refused) == 20 and not failed,
              f"{len(refused)} refused, {len(failed)} failed, statuses {set(c.status.values())}")
        c.close()
        for s in idle:
            s.close()
        time.sleep(0.5)
        line = http1_get(port, "/", timeout=5)
        check("once they leave, a new client is served again", line == "HTTP/1.1 200 OK", line)
    finally:
        stop(proc)


def main():
    only = sys.argv[2:]  # e.g. "trickle": run only those parts
    with tempfile.TemporaryDirectory() as d:
        make_files(d)
        for name, part in (("descriptors", lambda: descriptors(d)),
                           ("spooled", lambda: spooled_bodies(d)), ("memory", memory),
                           ("bodies", bodies),
                           ("trickle", trickle), ("near_the_limit", lambda: near_the_limit(d))):
            if not only or name in only:
                part()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

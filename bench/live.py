#!/usr/bin/env python3
"""Responses that outlive the handler, measured: deferred answers, a pulled stream, SSE fan-out.

    bench/live.py [--quick] [--only later,stream,sse] [options]

Builds examples/bench_app's bench_live_app (Release, in bench/run.sh's build folder) and the Go
SSE peer unless --no-build, then runs three phases against 127.0.0.1, every one bounded in
time, and writes bench/results/live-<date>-<time>/ (results.json, report.md, server logs). The
servers run pinned to --server-cpus (CPU 1), this script to --load-cpus (CPU 0).

  later   N concurrent GET /later?ms=1000 on bench_live_app --threads 1 (one worker thread):
          how many were answered 200 "later 1000", the wall time from the first request sent
          to the last answer, each request's latency, the server's peak RSS (VmHWM) and its
          thread count while they wait.
  stream  one GET /stream of --stream-bytes read at --stream-rate: the server's RSS every
          second (min/median/max), whether the body is complete and follows the 'a'..'z'
          pattern (a sample of offsets is checked), the server's CPU per GiB.
  sse     N SSE clients on GET /feed of tern (bench_live_app --threads 1), Go net/http
          (bench/peers/go/sse, GOMAXPROCS=1) and Node's http (bench/peers/node/sse.js), in
          interleaved rounds: (c) RSS per idle client, (a) one POST /broadcast a second
          (delivered events, time until the last client has it), (b) broadcasts as fast as
          the clients take them (events delivered per second, server CPU per delivered
          event; this client's CPU and its time blocked in epoll: little time blocked
          means the client, not the server, is the bound), with N clients and again with
          --sse-fast-clients on a fresh server.

The default run takes about 8 minutes on 2 cores (the 1 GiB stream 107 s), --quick under one.
The SSE client is one epoll loop in this process (standard library only). Tests never
assert on these figures; ratios hold within one run only (see bench/README.md, "Method").
Figures and what bounds them: docs/performance.md, "Long-lived responses".
"""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import json
import math
import os
import re
import resource
import select
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import BENCH, CLK_TCK, ROOT, cpu_busy_ticks, cpu_ticks, free_port, log, machine_info, mem_of, parse_cpus, proc_tree, raise_fd_limit  # noqa: E402
from report import fmt_num, fmt_x, med, paired  # noqa: E402
from servers import stop_proc, wait_ready  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP = (select.EPOLLIN, select.EPOLLOUT, select.EPOLLERR,
                                         select.EPOLLHUP)
PEERS = ("tern", "go", "node")


def parse_size(text: str) -> int:
    """'1GiB' 1073741824, '10MB' 10000000, '64Ki' 65536, '500' 500."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([kKmMgG]?)(i?)[bB]?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    power = " kmg".index(m.group(2).lower() or " ")
    return int(float(m.group(1)) * (1024 if m.group(3) else 1000) ** power)


def client_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# ---- servers -------------------------------------------------------------------------------

class Server:
    """One server process, pinned, with its /proc readings."""

    def __init__(self, name: str, a, out: Path):
        self.name, self.a, self.out = name, a, out
        self.port = free_port()
        build = Path(a.build_dir)
        env = dict(os.environ)
        if name == "tern":
            cmd = [str(build / "tern/examples/bench_app/bench_live_app"), "--threads", "1",
                   str(self.port)]
        elif name == "go":
            env["GOMAXPROCS"] = "1"
            cmd = [str(build / "go-sse-peer"), str(self.port)]
        else:
            cmd = ["node", str(BENCH / "peers/node/sse.js"), str(self.port)]
        self.cmd = cmd
        with open(out / f"{name}.log", "ab") as log_file:
            self.proc = groups.start(["taskset", "-c", a.server_cpus] + cmd, env=env,
                                     stdout=log_file, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        if not wait_ready(self.proc, self.port, timeout=15):
            self.stop()
            raise RuntimeError(f"{name} did not answer GET / (see {out / (name + '.log')})")

    def mem(self) -> dict:
        return mem_of(proc_tree(self.proc.pid))  # KiB: VmRSS, VmHWM; Threads, fds

    def cpu_s(self) -> float:
        return cpu_ticks(proc_tree(self.proc.pid)) / CLK_TCK

    def switches(self) -> int:
        """Context switches (voluntary and not) of all the server's threads so far."""
        n = 0
        for pid in proc_tree(self.proc.pid):
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tasks:
                try:
                    with open(f"/proc/{pid}/task/{tid}/status") as f:
                        n += sum(int(l.split()[1]) for l in f if "ctxt_switches" in l)
                except OSError:
                    pass
        return n

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        stop_proc(self.proc)


def available(name: str, a) -> str:
    """Empty when the server can run, else why not."""
    build = Path(a.build_dir)
    if name == "tern":
        p = build / "tern/examples/bench_app/bench_live_app"
        return "" if p.exists() else f"{p} was not built"
    if name == "go":
        return "" if (build / "go-sse-peer").exists() else "go-sse-peer was not built (golang-go?)"
    return "" if shutil.which("node") else "`node` is not installed"


def build(a):
    bd = Path(a.build_dir)
    bd.mkdir(parents=True, exist_ok=True)
    logf = bd / "live-build.log"
    with open(logf, "wb") as f:
        if not (bd / "build.ninja").exists():
            subprocess.run(["cmake", "-S", str(BENCH / "superbuild"), "-B", str(bd), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release"], stdout=f, stderr=subprocess.STDOUT,
                           check=True)
        subprocess.run(["nice", "cmake", "--build", str(bd), "--target", "bench_live_app"],
                       stdout=f, stderr=subprocess.STDOUT, check=True)
        if shutil.which("go"):
            env = dict(os.environ, GOCACHE=str(bd / "gocache"), GOPATH=str(bd / "gopath"),
                       GOFLAGS="-trimpath")
            r = subprocess.run(["nice", "go", "build", "-o", str(bd / "go-sse-peer"), "main.go"],
                               cwd=BENCH / "peers/go/sse", env=env, stdout=f,
                               stderr=subprocess.STDOUT)
            if r.returncode:
                log("the Go SSE peer did not build; see", logf)


# ---- many connections on one epoll ---------------------------------------------------------

def connect_many(port: int, n: int, deadline: float, burst: int = 256):
    """Opens n connections to 127.0.0.1:port, at most `burst` still connecting at a time.
    Returns (connected non-blocking sockets, failures)."""
    ep = select.epoll()
    connecting: dict[int, socket.socket] = {}
    done: list[socket.socket] = []
    failures = started = 0
    try:
        while (started < n or connecting) and time.monotonic() < deadline:
            while started < n and len(connecting) < burst:
                s = socket.socket()
                s.setblocking(False)
                started += 1
                err = s.connect_ex(("127.0.0.1", port))
                if err == 0:
                    done.append(s)
                elif err == errno.EINPROGRESS:
                    connecting[s.fileno()] = s
                    ep.register(s.fileno(), EPOLLOUT)
                else:
                    s.close()
                    failures += 1
            for fd, _ in ep.poll(0.2):
                s = connecting.pop(fd)
                ep.unregister(fd)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    done.append(s)
                else:
                    s.close()
                    failures += 1
    finally:
        for s in connecting.values():
            s.close()
        failures += len(connecting) + (n - started)
        ep.close()
    return done, failures


def parse_head(buf: bytes) -> tuple[int, dict]:
    lines = buf.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers


class ChunkedBody:
    """Incremental Transfer-Encoding: chunked decoder: feed(data, i) returns the payload's
    (start, end) ranges within data."""

    __slots__ = ("need", "skip", "line", "ended")

    def __init__(self):
        self.need = 0      # payload bytes left in the current chunk
        self.skip = 0      # bytes of the CRLF after a chunk still to skip
        self.line = b""    # a size line cut by a read
        self.ended = False

    def feed(self, data: bytes, i: int = 0) -> list[tuple[int, int]]:
        out = []
        n = len(data)
        while i < n and not self.ended:
            if self.need:
                take = min(self.need, n - i)
                out.append((i, i + take))
                self.need -= take
                i += take
                if not self.need:
                    self.skip = 2
            elif self.skip:
                t = min(self.skip, n - i)
                self.skip -= t
                i += t
            else:
                j = data.find(b"\n", i)
                if j < 0:
                    self.line += data[i:]
                    break
                line, self.line = self.line + data[i:j], b""
                i = j + 1
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    self.ended = True
                self.need = size
        return out


# ---- 1. many deferred answers ---------------------------------------------------------------

def phase_later(a, out: Path) -> dict:
    n, ms = a.later_clients, a.later_ms
    log(f"later: {n:,} concurrent GET /later?ms={ms} on bench_live_app --threads 1")
    srv = Server("tern", a, out)
    r = {"clients": n, "ms": ms}
    try:
        m0 = srv.mem()
        r["idle_rss_kib"], r["idle_threads"] = m0["VmRSS"], m0["Threads"]
        cpu0, sw0, cli0 = srv.cpu_s(), srv.switches(), client_cpu_s()
        t = time.monotonic()
        socks, failed = connect_many(srv.port, n, t + 30)
        r["connect_s"], r["connect_failures"] = time.monotonic() - t, failed
        cpu1 = srv.cpu_s()
        r["server_cpu_connect_s"] = cpu1 - cpu0
        log(f"later: {len(socks):,} connected in {r['connect_s']:.2f} s ({failed} failed)")
        req = f"GET /later?ms={ms} HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n\r\n".encode()
        want = f"later {ms}".encode()
        ep = select.epoll()
        sent_at, bufs = {}, {}
        first_send = time.monotonic()
        for s in socks:
            try:
                s.send(req)
            except OSError:
                continue
            fd = s.fileno()
            sent_at[fd] = time.monotonic()
            bufs[fd] = b""
            ep.register(fd, EPOLLIN)
        last_send = time.monotonic()
        by_fd = {s.fileno(): s for s in socks}
        latencies, statuses, ok = [], {}, 0
        last_answer = None
        threads_max, rss_max = 0, 0
        next_sample = 0.0
        deadline = last_send + ms / 1000 + a.later_grace
        pending = len(sent_at)
        while pending and time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_sample:  # the server's threads and RSS while requests wait
                mm = srv.mem()
                threads_max = max(threads_max, mm["Threads"])
                rss_max = max(rss_max, mm["VmRSS"])
                next_sample = now + 0.1
            for fd, _ in ep.poll(0.1):
                try:
                    chunk = by_fd[fd].recv(4096)
                except OSError:
                    chunk = b""
                done_now = time.monotonic()
                if chunk:
                    bufs[fd] += chunk
                    head, sep, body = bufs[fd].partition(b"\r\n\r\n")
                    if not sep:
                        continue
                    status, headers = parse_head(head)
                    if len(body) < int(headers.get("content-length", "0")):
                        continue
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200 and body == want:
                        ok += 1
                    latencies.append(done_now - sent_at[fd])
                    last_answer = done_now
                else:
                    statuses["closed"] = statuses.get("closed", 0) + 1
                ep.unregister(fd)
                pending -= 1
        ep.close()
        m1 = srv.mem()
        r.update({
            "sent": len(sent_at), "answered_ok": ok, "statuses": {str(k): v for k, v in statuses.items()},
            "unanswered": pending, "send_spread_s": last_send - first_send,
            "wall_s": (last_answer - first_send) if last_answer else None,
            "latency_s": {"min": min(latencies), "median": statistics.median(latencies),
                          "p99": sorted(latencies)[int(0.99 * (len(latencies) - 1))],
                          "max": max(latencies)} if latencies else None,
            "threads_max": max(threads_max, m1["Threads"]), "rss_max_sampled_kib": rss_max,
            "hwm_kib": m1["VmHWM"], "rss_after_kib": m1["VmRSS"], "server_cpu_s": srv.cpu_s() - cpu0,
            "server_cpu_requests_s": srv.cpu_s() - cpu1, "server_switches": srv.switches() - sw0,
            "client_cpu_s": client_cpu_s() - cli0, "alive": srv.alive(),
        })
        for s in socks:
            s.close()
        time.sleep(0.5)
        r["rss_after_close_kib"] = srv.mem()["VmRSS"]
        log(f"later: {ok:,}/{n:,} answered 200 '{want.decode()}', wall "
            f"{fmt_num(r['wall_s'], 3)} s, VmHWM {r['hwm_kib'] / KIB:.1f} MiB, "
            f"{r['threads_max']} threads")
    finally:
        srv.stop()
    return r


# ---- 2. one long pulled stream --------------------------------------------------------------

def phase_stream(a, out: Path) -> dict:
    piece = a.stream_piece
    pieces = math.ceil(a.stream_bytes / piece)
    total = pieces * piece
    rate = a.stream_rate
    log(f"stream: {total / GIB:.2f} GiB ({pieces:,} pieces of {piece:,} B) at "
        + (f"{rate / 1e6:g} MB/s, about {total / rate:.0f} s" if rate else "full speed"))
    srv = Server("tern", a, out)
    r = {"bytes": total, "pieces": pieces, "piece": piece, "rate": rate}
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def sampler():
        while not stop.wait(1.0):
            samples.append((time.monotonic(), srv.mem()["VmRSS"]))

    try:
        r["idle_rss_kib"] = srv.mem()["VmRSS"]
        cpu0 = srv.cpu_s()
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        s.sendall(f"GET /stream?n={pieces}&size={piece} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  .encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("stream: closed before the head")
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        status, headers = parse_head(head)
        r["status"], r["framing"] = status, headers.get("transfer-encoding", "close-delimited")
        dec = ChunkedBody()
        got = checked = bad = 0
        next_window = 0
        t0 = time.monotonic()
        deadline = t0 + (total / rate * 1.5 if rate else 0) + 60
        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        data, start = rest, 0
        while True:
            for i, j in dec.feed(data, start):
                # Offset o of the body holds 'a' + o % 26: check each piece's first byte and
                # a 64-byte window every MiB.
                checked += 1
                bad += data[i] != 97 + got % 26
                if got >= next_window:
                    w = min(64, j - i)
                    expect = bytes(97 + (got + k) % 26 for k in range(w))
                    checked += 1
                    bad += data[i:i + w] != expect
                    next_window += MIB
                got += j - i
            if dec.ended or time.monotonic() > deadline:
                break
            ahead = got / rate - (time.monotonic() - t0) if rate else 0
            if ahead > 0:
                time.sleep(ahead)
            data, start = s.recv(256 * KIB), 0
            if not data:
                break
        elapsed = time.monotonic() - t0
        r["ended"] = ("last chunk" if dec.ended else "deadline" if data else
                      f"closed by the server without the last chunk after {elapsed:.1f} s")
        stop.set()
        th.join()
        m = srv.mem()
        s.close()
        rss = [k for _, k in samples]
        r.update({
            "received": got, "complete": dec.ended and got == total, "seconds": elapsed,
            "rate_achieved": got / elapsed if elapsed else None,
            "samples_checked": checked, "samples_bad": bad,
            "rss_kib": {"min": min(rss), "median": statistics.median(rss), "max": max(rss),
                        "n": len(rss)} if rss else None,
            "rss_series_kib": rss, "hwm_kib": m["VmHWM"], "threads": m["Threads"],
            "server_cpu_s": srv.cpu_s() - cpu0, "alive": srv.alive(),
        })
        if r["rss_kib"]:
            log(f"stream: {got / GIB:.3f} GiB in {elapsed:.1f} s, complete={r['complete']}, "
                f"{bad} of {checked} samples wrong, RSS {r['rss_kib']['min'] / KIB:.1f}–"
                f"{r['rss_kib']['max'] / KIB:.1f} MiB")
    finally:
        stop.set()
        srv.stop()
    return r


# ---- 3. SSE fan-out ------------------------------------------------------------------------

class Feed:
    """One SSE client: reads the head, then counts events in the de-chunked payload."""

    __slots__ = ("sock", "fd", "head", "dec", "nl", "events", "comments", "gone", "status")

    def __init__(self, sock):
        self.sock, self.fd = sock, sock.fileno()
        self.head = b""
        self.dec = ChunkedBody()
        self.nl = False       # the payload's last byte was '\n'
        self.events = self.comments = 0
        self.gone = False
        self.status = 0


class Control:
    """The keep-alive connection POST /broadcast goes through."""

    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.buf = b""
        self.busy = False
        self.sent_at = 0.0

    def send(self, n: int, size: int):
        self.sock.sendall(f"POST /broadcast?n={n}&size={size} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          f"Content-Length: 0\r\n\r\n".encode())
        self.busy = True
        self.sent_at = time.monotonic()

    def read(self) -> list[int] | None:
        """The counts of a complete answer, else None."""
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return None
        if not data:
            raise RuntimeError("the server closed the POST /broadcast connection")
        self.buf += data
        head, sep, body = self.buf.partition(b"\r\n\r\n")
        if not sep:
            return None
        status, headers = parse_head(head)
        need = int(headers.get("content-length", "-1"))
        if need < 0 or len(body) < need:
            if need < 0:
                raise RuntimeError(f"broadcast answer without Content-Length: {head!r}")
            return None
        if status != 200:
            raise RuntimeError(f"POST /broadcast answered {status}: {body[:200]!r}")
        self.buf = body[need:]
        self.busy = False
        return [int(x) for x in body[:need].split()]


class Fanout:
    """n SSE clients of one server on one epoll, and the broadcasts to them."""

    def __init__(self, srv: Server, a):
        self.srv, self.a = srv, a
        self.ep = select.epoll()
        self.feeds: dict[int, Feed] = {}
        self.total = 0          # events received by all clients
        self.gone = 0           # streams the server ended (cut off) or that failed
        self.why_gone: dict[str, int] = {}
        self.track = None       # during the paced phase: arrivals per broadcast
        self.awaiting = 0       # clients connected that have not had their head yet
        self.waited = 0.0       # seconds spent blocked in epoll (waiting for the server)
        self.reads = 0          # reads that returned event-stream bytes
        self.ctl: Control | None = None

    # -- the loop --
    def pump(self, timeout: float) -> list[int] | None:
        """One epoll round; returns the counts of a broadcast answer if one completed."""
        counts = None
        t0 = time.perf_counter()
        ready = self.ep.poll(timeout)
        self.waited += time.perf_counter() - t0
        for fd, ev in ready:
            if self.ctl and fd == self.ctl.sock.fileno():
                counts = self.ctl.read()
                continue
            f = self.feeds[fd]
            try:
                data = f.sock.recv(65536)
            except OSError as e:
                self.drop(f, errno.errorcode.get(e.errno, str(e.errno)))
                continue
            if not data:
                self.drop(f, "closed by the server" if f.status else "closed before the head")
                continue
            self.reads += 1
            i = 0
            if not f.status:
                f.head += data
                head, sep, rest = f.head.partition(b"\r\n\r\n")
                if not sep:
                    continue
                f.status = parse_head(head)[0]
                f.head = b""
                self.awaiting -= 1
                data, i = rest, 0
                if f.status != 200:
                    self.drop(f, f"answered {f.status}")
                    continue
            e0 = f.events
            for s, e in f.dec.feed(data, i):
                # Events end with a blank line: "\n\n" in the payload ("data: xx\n\n"; a
                # payload never holds three newlines in a row, so a pair cut by a chunk or a
                # read is counted once). tern's keep-alive ":\n\n" is counted apart.
                k = data.count(b"\n\n", s, e)
                if f.nl and data[s] == 10:
                    k += 1
                c = data.count(b":\n\n", s, e)
                f.comments += c
                f.events += k - c
                f.nl = data[e - 1] == 10
            if f.dec.ended:
                self.drop(f, "ended by the server (last chunk)")
            got = f.events - e0
            if got:
                self.total += got
                if self.track is not None:
                    arrivals, last_at, target = self.track
                    now = time.monotonic()
                    for k in range(e0, min(f.events, len(arrivals))):
                        arrivals[k] += 1
                        if arrivals[k] == target:
                            last_at[k] = now
        return counts

    def drop(self, f: Feed, why: str):
        if not f.gone:
            if not f.status:
                self.awaiting -= 1
            f.gone = True
            self.gone += 1
            self.why_gone[why] = self.why_gone.get(why, 0) + 1
            self.ep.unregister(f.fd)
            f.sock.close()

    def live(self) -> int:
        return sum(1 for f in self.feeds.values() if f.status == 200 and not f.gone)

    # -- phases --
    def connect(self, n: int, deadline: float, burst: int = 256, path: str = "/feed") -> dict:
        """n clients GET `path`; at most `burst` wait for their head at once (which also bounds
        the server's accept queue)."""
        req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.srv.port}\r\nAccept: text/event-stream\r\n\r\n".encode()
        t0 = time.monotonic()
        started = 0
        errors: dict[str, int] = {}

        def failed(err: int):
            name = errno.errorcode.get(err, str(err))
            errors[name] = errors.get(name, 0) + 1

        connecting: dict[int, socket.socket] = {}
        cep = select.epoll()  # the connecting sockets apart: feeds' reads must not crowd them out
        while time.monotonic() < deadline:
            if started >= n and not connecting and not self.awaiting:
                break
            while started < n and len(connecting) + self.awaiting < burst:
                s = socket.socket()
                s.setblocking(False)
                started += 1
                err = s.connect_ex(("127.0.0.1", self.srv.port))
                if err in (0, errno.EINPROGRESS):
                    connecting[s.fileno()] = s
                    cep.register(s.fileno(), EPOLLOUT)
                else:
                    s.close()
                    failed(err)
            for fd, ev in cep.poll(0.01 if self.feeds else 0.05):
                s = connecting.pop(fd)
                cep.unregister(fd)
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if not err:
                    try:
                        s.send(req)
                    except OSError as e:
                        err = e.errno
                if err:
                    s.close()
                    failed(err)
                    continue
                self.ep.register(fd, EPOLLIN)
                self.feeds[fd] = Feed(s)
                self.awaiting += 1
            self.pump(0)  # heads and events
        for s in connecting.values():
            s.close()
        cep.close()
        return {"asked": n, "connected": self.live(), "seconds": time.monotonic() - t0,
                "connect_errors": errors, "still_connecting": len(connecting),
                "not_started": n - started, "no_head_yet": self.awaiting,
                "gone": dict(self.why_gone)}

    def paced(self, seconds: int, size: int) -> dict:
        """One broadcast of one event a second; every client should get every one."""
        target = self.live()
        arrivals, last_at = [0] * seconds, [None] * seconds
        base = [f.events for f in self.feeds.values()]
        if any(base):
            raise RuntimeError("clients received events before the paced phase")
        self.track = (arrivals, last_at, target)
        sent_at, reached, late = [], [], 0
        t0 = time.monotonic()
        cpu0, total0 = self.srv.cpu_s(), self.total
        while len(sent_at) < seconds and time.monotonic() < t0 + seconds + 10:
            due = t0 + len(sent_at)
            if not self.ctl.busy and time.monotonic() >= due:
                late += time.monotonic() - due > 0.1
                self.ctl.send(1, size)
                sent_at.append(self.ctl.sent_at)
            counts = self.pump(max(0.0, min(0.05, due - time.monotonic())))
            if counts is not None:
                reached.extend(counts)
        end = time.monotonic() + 10
        while time.monotonic() < end and (self.ctl.busy or self.total - total0 < sum(reached)):
            counts = self.pump(0.05)
            if counts is not None:
                reached.extend(counts)
        self.track = None
        fan = [l - s for s, l in zip(sent_at, last_at) if l is not None]
        return {"clients": target, "broadcasts": len(sent_at), "late_sends": late,
                "reached": sum(reached), "expected": target * len(sent_at),
                "delivered": self.total - total0,
                "fanout_ms": {"median": 1000 * statistics.median(fan), "max": 1000 * max(fan)}
                if fan else None,
                "complete_broadcasts": len(fan), "server_cpu_s": self.srv.cpu_s() - cpu0}

    def fast(self, seconds: float, size: int, batch: int, window: int) -> dict:
        """Broadcasts back to back for `seconds`, keeping at most `window` events per client
        sent but not yet received, then waits for the rest."""
        clients = self.live()
        server_cpus = parse_cpus(self.a.server_cpus)
        queued = 0
        total0 = self.total
        load_cpus = parse_cpus(self.a.load_cpus)
        busy0, all0 = cpu_busy_ticks(server_cpus)
        lbusy0, lall0 = cpu_busy_ticks(load_cpus)
        srv_ticks0 = cpu_ticks(proc_tree(self.srv.proc.pid))
        cli0 = client_cpu_s()
        waited0, reads0 = self.waited, self.reads
        t0 = time.monotonic()
        posts = 0
        while time.monotonic() < t0 + seconds:
            if not self.ctl.busy and queued - (self.total - total0) < window * clients:
                self.ctl.send(batch, size)
                posts += 1
            counts = self.pump(0.02)
            if counts is not None:
                queued += sum(counts)
        t1 = time.monotonic()
        delivered_window = self.total - total0
        srv_ticks1 = cpu_ticks(proc_tree(self.srv.proc.pid))
        busy1, all1 = cpu_busy_ticks(server_cpus)
        lbusy1, lall1 = cpu_busy_ticks(load_cpus)
        cli1 = client_cpu_s()
        waited1, reads1 = self.waited, self.reads
        end = time.monotonic() + 15
        while time.monotonic() < end and (self.ctl.busy or self.total - total0 < queued):
            counts = self.pump(0.05)
            if counts is not None:
                queued += sum(counts)
        srv_ticks2 = cpu_ticks(proc_tree(self.srv.proc.pid))
        delivered = self.total - total0
        wall = t1 - t0
        srv_s = (srv_ticks1 - srv_ticks0) / CLK_TCK
        return {
            "clients": clients, "seconds": wall, "posts": posts, "batch": batch, "window": window,
            "queued": queued, "delivered": delivered, "delivered_in_window": delivered_window,
            "msgs_per_s": delivered_window / wall,
            "server_cpu_pct": 100 * srv_s / wall,
            "server_us_per_msg": 1e6 * (srv_ticks2 - srv_ticks0) / CLK_TCK / delivered
            if delivered else None,
            "client_cpu_pct": 100 * (cli1 - cli0) / wall,
            # Blocked in epoll_wait: the client waited for the server (near 0: the client is
            # the bottleneck, or its core is taken by others).
            "client_wait_pct": 100 * (waited1 - waited0) / wall,
            # How many events each read of the client found: the server's writes carry
            # several when it (or the client) falls behind.
            "events_per_read": delivered_window / (reads1 - reads0) if reads1 > reads0 else None,
            "other_pct": max(0.0, 100 * ((busy1 - busy0) - (srv_ticks1 - srv_ticks0))
                             / max(1, all1 - all0)),
            # Idle time left on each core: none on the client's core with the client well
            # under 100% means others took it; idle on the server's core means the server
            # waited (for the client).
            "server_core_idle_pct": 100 - 100 * (busy1 - busy0) / max(1, all1 - all0),
            "client_core_idle_pct": 100 - 100 * (lbusy1 - lbusy0) / max(1, lall1 - lall0),
            "lost": queued - delivered,
        }

    def close(self):
        for f in self.feeds.values():
            if not f.gone:
                f.sock.close()
        if self.ctl:
            self.ctl.sock.close()
        self.ep.close()


def sse_once(name: str, a, out: Path, clients: int, full: bool) -> dict:
    """A fresh server, `clients` SSE clients; with `full` the idle memory and the paced phase
    before the fast one."""
    srv = Server(name, a, out)
    fan = Fanout(srv, a)
    r: dict = {"peer": name}
    try:
        time.sleep(0.5)
        m0 = srv.mem()
        r["rss_before_kib"], r["threads_before"] = m0["VmRSS"], m0["Threads"]
        r["connect"] = fan.connect(clients, time.monotonic() + a.sse_connect_timeout)
        log(f"sse {name}: {r['connect']['connected']:,}/{clients:,} clients in "
            f"{r['connect']['seconds']:.1f} s")
        fan.ctl = Control(srv.port)
        fan.ep.register(fan.ctl.sock.fileno(), EPOLLIN)
        if full:
            settle = time.monotonic() + a.sse_settle
            while time.monotonic() < settle:
                fan.pump(0.1)
            m1 = srv.mem()
            r["rss_idle_kib"], r["threads_idle"] = m1["VmRSS"], m1["Threads"]
            live = r["connect"]["connected"]
            r["kib_per_client"] = (m1["VmRSS"] - m0["VmRSS"]) / live if live else None
            r["paced"] = fan.paced(a.sse_paced_seconds, a.sse_size)
            p = r["paced"]
            log(f"sse {name}: paced {p['delivered']:,}/{p['expected']:,} delivered, fan-out "
                f"{fmt_num(p['fanout_ms'] and p['fanout_ms']['median'], 1)} ms; idle "
                f"{fmt_num(r['kib_per_client'], 2)} KiB/client")
        r["fast"] = fan.fast(a.sse_fast_seconds, a.sse_size, a.sse_batch, a.sse_window)
        f = r["fast"]
        log(f"sse {name}: fast {f['msgs_per_s']:,.0f} events/s to {f['clients']:,} clients, "
            f"server {f['server_cpu_pct']:.0f}% CPU, {fmt_num(f['server_us_per_msg'], 2)} µs/event, "
            f"client {f['client_cpu_pct']:.0f}% CPU ({f['client_wait_pct']:.0f}% waiting), "
            f"{fmt_num(f['events_per_read'], 2)} events/read, lost {f['lost']}")
        m2 = srv.mem()
        r["hwm_kib"], r["threads_end"] = m2["VmHWM"], m2["Threads"]
        r["gone"] = fan.gone
        r["why_gone"] = dict(fan.why_gone)
        r["alive"] = srv.alive()
    finally:
        fan.close()
        srv.stop()
    return r


def phase_sse(a, out: Path) -> dict:
    peers = [p for p in a.peers.split(",") if p]
    res: dict = {"left_out": {}, "full": {p: [] for p in peers}, "small": {p: [] for p in peers}}
    for p in list(peers):
        why = available(p, a)
        if why:
            res["left_out"][p] = why
            peers.remove(p)
            log(f"sse: {p} left out: {why}")
    for rnd in range(1, a.rounds + 1):
        for p in peers:  # interleaved: round 1 runs every peer, then round 2, ...
            log(f"sse round {rnd}/{a.rounds}: {p}, {a.sse_clients:,} clients")
            try:
                r = sse_once(p, a, out, a.sse_clients, full=True)
            except (RuntimeError, OSError) as e:
                log(f"sse {p}: {e}")
                r = {"peer": p, "error": str(e)}
            r["round"] = rnd
            res["full"][p].append(r)
            if a.sse_fast_clients:
                log(f"sse round {rnd}/{a.rounds}: {p}, {a.sse_fast_clients:,} clients, fast only")
                try:
                    r = sse_once(p, a, out, a.sse_fast_clients, full=False)
                except (RuntimeError, OSError) as e:
                    log(f"sse {p}: {e}")
                    r = {"peer": p, "error": str(e)}
                r["round"] = rnd
                res["small"][p].append(r)
    return res


# ---- report --------------------------------------------------------------------------------

def flat(runs: list[dict], *path):
    """Per-round values at runs[i][path...], with the round number: for med and paired."""
    out = []
    for r in runs:
        v = r
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if v is not None:
            out.append({"round": r["round"], "v": v})
    return out


def span(xs: list[dict], digits: int = 0, scale: float = 1.0) -> str:
    vals = [x["v"] * scale for x in xs]
    if not vals:
        return "–"
    m = fmt_num(statistics.median(vals), digits)
    if len(vals) == 1:
        return m
    return f"{m} ({fmt_num(min(vals), digits)}–{fmt_num(max(vals), digits)})"


def report(a, res: dict, info: dict, command: str) -> str:
    L = [f"# bench/live.py, {info['date']}", "",
         f"`{command}` on {info['model']} ({info['cpus']} CPUs), tern `{info['commit']}`"
         f"{' (dirty: ' + ', '.join(info['dirty']) + ')' if info['dirty'] else ''}; servers on CPU "
         f"{a.server_cpus}, this client on CPU {a.load_cpus}. {res.get('fd_note', '')}", ""]
    for name, err in res.get("errors", {}).items():
        L += [f"**{name} failed:** {err}", ""]
    if "later" in res:
        r = res["later"]
        lat = r.get("latency_s") or {}
        L += ["## Deferred answers: concurrent GET /later on one worker thread", "",
              "| figure | value |", "|---|---:|",
              f"| requests sent (connected first: {r['connect_s']:.2f} s, {r['connect_failures']} failed) | {r['sent']:,} |",
              f"| answered 200 `later {r['ms']}` | {r['answered_ok']:,} |",
              f"| other outcomes | {', '.join(f'{k}: {v}' for k, v in r['statuses'].items() if k != '200') or 'none'}; unanswered at the deadline: {r['unanswered']} |",
              f"| wall time, first request sent → last answer | {fmt_num(r['wall_s'], 3)} s |",
              f"| time to send all requests | {r['send_spread_s'] * 1000:.0f} ms |",
              f"| latency min / median / p99 / max | {fmt_num(lat.get('min'), 3)} / {fmt_num(lat.get('median'), 3)} / {fmt_num(lat.get('p99'), 3)} / {fmt_num(lat.get('max'), 3)} s |",
              f"| server RSS idle → peak (VmHWM) | {r['idle_rss_kib'] / KIB:.1f} → {r['hwm_kib'] / KIB:.1f} MiB |",
              f"| peak above idle, per waiting request | {(r['hwm_kib'] - r['idle_rss_kib']) / max(1, r['sent']):.2f} KiB |",
              f"| server threads idle / most while waiting | {r['idle_threads']} / {r['threads_max']} |",
              f"| server CPU: connecting / requests and answers | {r['server_cpu_connect_s']:.2f} / {r['server_cpu_requests_s']:.2f} s |",
              f"| server context switches, all threads | {r['server_switches']:,} |",
              f"| this client's CPU (connect, send, read) | {r['client_cpu_s']:.2f} s |",
              f"| RSS after the clients closed | {r['rss_after_close_kib'] / KIB:.1f} MiB |", ""]
    if "stream" in res:
        r = res["stream"]
        rss = r.get("rss_kib") or {}
        L += ["## One long stream: GET /stream", "",
              "| figure | value |", "|---|---:|",
              f"| body | {r['bytes'] / GIB:.2f} GiB ({r['pieces']:,} pieces of {r['piece']:,} B), {r['framing']} |",
              f"| client read rate asked / achieved | {r['rate'] / 1e6 if r['rate'] else 'unlimited'} / {fmt_num(r.get('rate_achieved') and r['rate_achieved'] / 1e6, 2)} MB/s |",
              f"| received, complete | {r.get('received', 0):,} B, {'yes' if r.get('complete') else 'NO'} in {fmt_num(r.get('seconds'), 1)} s (end: {r.get('ended')}) |",
              f"| 'a'..'z' pattern samples wrong / checked | {r.get('samples_bad')} / {r.get('samples_checked'):,} |",
              f"| server RSS idle | {r['idle_rss_kib'] / KIB:.1f} MiB |",
              f"| server RSS every second, min / median / max | {fmt_num(rss.get('min', 0) / KIB, 1)} / {fmt_num(rss.get('median', 0) / KIB, 1)} / {fmt_num(rss.get('max', 0) / KIB, 1)} MiB ({rss.get('n', 0)} samples) |",
              f"| server VmHWM | {r['hwm_kib'] / KIB:.1f} MiB |",
              f"| server CPU per GiB sent | {r['server_cpu_s'] / max(r.get('received', 0) / GIB, 1e-9):.2f} s |", ""]
    if "sse" in res:
        s = res["sse"]
        full, small = s["full"], s["small"]
        peers = [p for p in PEERS if p in full and full[p]]
        others = [p for p in peers if p != "tern"]
        L += ["## SSE fan-out", "",
              f"Medians of {a.rounds} interleaved round(s) (min–max); tern ×peer is tern ÷ peer, "
              "the median of per-round ratios (above 1 is better for events/s, below 1 for CPU, "
              "memory and time). Every round starts fresh servers.", ""]
        hdr = "| figure | " + " | ".join(peers) + " | " + " | ".join(f"tern ×{p}" for p in others) + " |"
        L += [hdr, "|---|" + "---:|" * (len(peers) + len(others))]

        def row(label, runs, path, digits=0, scale=1.0, ratio=True):
            cells = [span(flat(runs[p], *path), digits, scale) for p in peers]
            rs = []
            for p in others:
                x = paired(flat(runs["tern"], *path), flat(runs[p], *path), "v") if ratio else None
                rs.append(fmt_x(x) if ratio else "")
            L.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")

        n, m = a.sse_clients, a.sse_fast_clients
        row(f"clients connected (of {n:,})", full, ("connect", "connected"), ratio=False)
        row("seconds to connect them", full, ("connect", "seconds"), 1)
        row("server RSS before, MiB", full, ("rss_before_kib",), 1, 1 / KIB)
        row(f"server RSS with {n:,} idle clients, MiB", full, ("rss_idle_kib",), 1, 1 / KIB)
        row("(c) KiB per idle SSE client", full, ("kib_per_client",), 2)
        row("server threads with the clients", full, ("threads_idle",), ratio=False)
        row(f"(a) events delivered, {a.sse_paced_seconds} broadcasts at 1/s", full, ("paced", "delivered"), ratio=False)
        row("(a) events expected (clients × broadcasts)", full, ("paced", "expected"), ratio=False)
        row("(a) ms from POST to the last client, median", full, ("paced", "fanout_ms", "median"), 1)
        row(f"(b) events/s delivered, {n:,} clients", full, ("fast", "msgs_per_s"))
        row("(b) server CPU µs per delivered event", full, ("fast", "server_us_per_msg"), 2)
        row("(b) server CPU % (of its core)", full, ("fast", "server_cpu_pct"), ratio=False)
        row("(b) client CPU % (of its core)", full, ("fast", "client_cpu_pct"), ratio=False)
        row("(b) client blocked in epoll, % of the time", full, ("fast", "client_wait_pct"), ratio=False)
        row("(b) events per client read", full, ("fast", "events_per_read"), 2, ratio=False)
        row("(b) others' load on the server's core %", full, ("fast", "other_pct"), ratio=False)
        row("(b) server's core idle %", full, ("fast", "server_core_idle_pct"), ratio=False)
        row("(b) client's core idle %", full, ("fast", "client_core_idle_pct"), ratio=False)
        row("(b) events queued but not delivered", full, ("fast", "lost"), ratio=False)
        row("streams ended by the server", full, ("gone",), ratio=False)
        row("server VmHWM at the end, MiB", full, ("hwm_kib",), 1, 1 / KIB)
        if m and any(small.get(p) for p in peers):
            row(f"(b) events/s delivered, {m:,} clients", small, ("fast", "msgs_per_s"))
            row(f"(b) server CPU µs per delivered event, {m:,} clients", small, ("fast", "server_us_per_msg"), 2)
            row(f"(b) server CPU %, {m:,} clients", small, ("fast", "server_cpu_pct"), ratio=False)
            row(f"(b) client CPU %, {m:,} clients", small, ("fast", "client_cpu_pct"), ratio=False)
            row(f"(b) client blocked in epoll %, {m:,} clients", small, ("fast", "client_wait_pct"), ratio=False)
            row(f"(b) events per client read, {m:,} clients", small, ("fast", "events_per_read"), 2, ratio=False)
            row(f"(b) server's core idle %, {m:,} clients", small, ("fast", "server_core_idle_pct"), ratio=False)
            row(f"(b) client's core idle %, {m:,} clients", small, ("fast", "client_core_idle_pct"), ratio=False)
            row(f"(b) events queued but not delivered, {m:,} clients", small, ("fast", "lost"), ratio=False)
        if s["left_out"]:
            L += ["", "Left out: " + "; ".join(f"{p}: {w}" for p, w in s["left_out"].items())]
        errs = [f"{r['peer']} round {r['round']}: {r['error']}" for runs in (full, small)
                for rs in runs.values() for r in rs if "error" in r]
        for runs in (full, small):
            for rs in runs.values():
                for r in rs:
                    c = r.get("connect", {})
                    trouble = {k: v for k, v in (("connect errors", c.get("connect_errors")),
                                                 ("not started by the deadline", c.get("not_started")),
                                                 ("no head by the deadline", c.get("no_head_yet")),
                                                 ("streams lost", r.get("why_gone"))) if v}
                    if trouble:
                        errs.append(f"{r['peer']} round {r['round']} ({c.get('asked', 0):,} clients): "
                                    + "; ".join(f"{k}: {v}" for k, v in trouble.items()))
        if errs:
            L += ["", "Trouble seen:", ""] + [f"- {e}" for e in errs]
        L += ["", f"(b): POST /broadcast?n={a.sse_batch}&size={a.sse_size} back to back for "
              f"{a.sse_fast_seconds} s, at most {a.sse_window} events per client sent and not yet "
              "received. When the client's CPU is near 100% it, not the server, sets events/s; "
              "the server's CPU per event still compares the servers."]
    return "\n".join(L) + "\n"


# ---- main ----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smaller counts, a smoke run under 2 minutes")
    ap.add_argument("--only", default="later,stream,sse", help="later,stream,sse (comma list)")
    ap.add_argument("--later-clients", type=int, default=None, help="default 10000 (quick 1000)")
    ap.add_argument("--later-ms", type=int, default=1000)
    ap.add_argument("--later-grace", type=float, default=30.0,
                    help="seconds past ms after the last send before giving up")
    ap.add_argument("--stream-bytes", type=parse_size, default=None,
                    help="default 1GiB (quick 50MiB); 10GiB takes ~18 min at 10MB")
    ap.add_argument("--stream-rate", type=parse_size, default=parse_size("10MB"),
                    help="client read rate in bytes/s (10MB = 10,000,000; 0: as fast as it can)")
    ap.add_argument("--stream-piece", type=parse_size, default=64 * KIB)
    ap.add_argument("--sse-clients", type=int, default=None, help="default 10000 (quick 1000)")
    ap.add_argument("--sse-fast-clients", type=int, default=None,
                    help="a second fast phase with this many clients (default 1000, quick 200; 0: none)")
    ap.add_argument("--sse-paced-seconds", type=int, default=None, help="default 10 (quick 3)")
    ap.add_argument("--sse-fast-seconds", type=float, default=None, help="default 5 (quick 3)")
    ap.add_argument("--sse-size", type=int, default=64, help="bytes of data per event")
    ap.add_argument("--sse-batch", type=int, default=1, help="events per POST /broadcast")
    ap.add_argument("--sse-window", type=int, default=16,
                    help="events per client sent but not yet received, at most")
    ap.add_argument("--sse-settle", type=float, default=2.0)
    ap.add_argument("--sse-connect-timeout", type=float, default=60.0)
    ap.add_argument("--rounds", type=int, default=None, help="SSE rounds (default 5, quick 1)")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--server-cpus", default="1")
    ap.add_argument("--load-cpus", default="0")
    ap.add_argument("--build-dir", default=str(BENCH / "results" / "build"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    q = a.quick
    for k, full, quick in (("later_clients", 10000, 1000), ("stream_bytes", GIB, 50 * MIB),
                           ("sse_clients", 10000, 1000), ("sse_fast_clients", 1000, 200),
                           ("sse_paced_seconds", 10, 3), ("sse_fast_seconds", 5.0, 3.0),
                           ("rounds", 5, 1)):
        if getattr(a, k) is None:
            setattr(a, k, quick if q else full)
    only = set(a.only.split(","))
    if only - {"later", "stream", "sse"}:
        ap.error("--only takes later, stream, sse")
    command = "bench/live.py " + " ".join(sys.argv[1:])

    os.sched_setaffinity(0, parse_cpus(a.load_cpus))
    need = max(a.later_clients if "later" in only else 0, a.sse_clients if "sse" in only else 0)
    limit, note = raise_fd_limit(need + 256)
    if note or limit < need + 64:
        note = note or f"RLIMIT_NOFILE is {limit}"
        log(f"warning: {note}; fewer than {need:,} connections may open")
    out = Path(a.out or BENCH / "results" / f"live-{dt.datetime.now():%Y-%m-%d-%H%M}")
    out.mkdir(parents=True, exist_ok=True)
    if not a.no_build:
        log("building bench_live_app (Release) and the Go SSE peer into", a.build_dir)
        build(a)
    info = machine_info(a)
    res: dict = {"args": vars(a), "command": command, "machine": info,
                 "fd_limit": limit, "fd_note": note}
    try:
        for name, phase in (("later", phase_later), ("stream", phase_stream), ("sse", phase_sse)):
            if name in only:
                try:
                    res[name] = phase(a, out)
                except (RuntimeError, OSError) as e:  # the other phases still run
                    log(f"{name}: failed: {e}")
                    res.setdefault("errors", {})[name] = str(e)
    finally:
        (out / "results.json").write_text(json.dumps(res, indent=1, default=str))
    text = report(a, res, info, command)
    (out / "report.md").write_text(text)
    print()
    print(text)
    log(f"results in {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""One large upload to a tern::streamed_body route that hashes the body as it arrives
(examples/bench_app/streamed_upload_main.cpp), with the server's memory: its RSS when idle,
its peak RSS while the body passed (VmHWM, reset through /proc/PID/clear_refs once the
server is up, or the highest RSS sampled every 50 ms if that is higher), the wall time and
the throughput. No file is written on either side: the client sends a repeated 64 KiB
pattern from memory, the server keeps one read buffer.
Loopback only (127.0.0.1), bounded in time (--timeout), one upload at a time unless
--concurrent says more.

With --multipart the body is multipart/form-data of two file parts of --size-mib each (and
a small field), sent to POST /parts, which reads it with tern::multipart_reader and hashes
each part as it arrives; the answer must give each part's size and digest.

    bench/streamed-upload.py [--size-mib 1024] [--rounds 1] [--timeout 300] [--multipart]
                             [--protocol http1|h2|h3] [--concurrent N] [--chunked]
                             [--server build/examples/bench_app/bench_streamed_upload_app]

`--protocol h2` sends the body over HTTP/2 (h2c with prior knowledge, one stream with a
content-length, DATA frames of 16 KiB within the flow-control windows the server gives
back as its reader asks), its frames packed here and its fields coded with hpack (Debian's
python3-hpack: run it with /usr/bin/python3); --multipart goes over HTTP/1.1 only.

`--protocol h3` sends it over HTTP/3 with bench/peers/h3load's upload mode (Go, Debian's
quic-go 0.29, built here offline in GOPATH mode as bench/h3.py does): the body made by a
reader as the stream takes it, with a content-length (none with --chunked); the server then
runs with a self-signed certificate (--cert, --key, --http3). `--concurrent N` sends N such
uploads at once, every one checked for its digest: over HTTP/1.1 each on its own connection
(a thread each), over HTTP/2 all N as streams of one connection (at most the server's 100
concurrent streams), over HTTP/3 all N as streams of one QUIC connection (h3load -c 1 -m N).

Every answer's digest is checked against the pattern's FNV-1a (h3load -digest, so h3load is
built for every protocol). No file may be written: the server runs with TMPDIR (where it
would spool) an empty directory of its own, which must still be empty after each round, and
a watcher reads /proc/PID/fd every 50 ms while the bodies pass: a descriptor on a file the
idle server did not have open (a spool file is an unnamed "(deleted)" one) fails the round.
It samples the RSS too and prints the highest of each quarter of the round: memory that
levels off, or memory that grows with the bytes sent.
The load average is printed before and after (the figures are memory figures; the times
depend on the machine's load).

Build the server first: cmake --build build --target bench_streamed_upload_app. Not part of
ctest: timings vary with the machine, and tests never assert on them.
"""
import argparse
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import free_port, status_fields  # noqa: E402  (bench/lib, beside this script)
from servers import wait_ready  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from h3 import build_h3load  # noqa: E402  (bench/h3.py: bench/peers/h3load built offline)

MIB = 1024 * 1024
REPO = Path(__file__).resolve().parent.parent


BOUNDARY = b"tern-bench-7MA4YWxkTrZu0gW"


def part_head(name: bytes, filename: bytes = b"") -> bytes:
    disposition = b'form-data; name="%s"' % name
    if filename:
        disposition += b'; filename="%s"' % filename
    return (b"--" + BOUNDARY + b"\r\nContent-Disposition: " + disposition +
            b"\r\nContent-Type: application/octet-stream\r\n\r\n")


def send_repeated(s: socket.socket, chunk: bytes, size: int, deadline: float) -> None:
    view = memoryview(chunk)
    left = size
    while left > 0:
        n = min(left, len(chunk))
        s.sendall(view[:n])
        left -= n
        if time.monotonic() > deadline:
            raise TimeoutError("the upload did not finish within --timeout")


def upload(port: int, size: int, chunk: bytes, deadline: float,
           multipart: bool = False) -> tuple[float, bytes]:
    """Sends `size` bytes of `chunk` repeated with a Content-Length (with --multipart: two
    file parts of `size` bytes each and a field); returns the seconds from the head to the
    answer's end, and the answer."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(max(1.0, deadline - time.monotonic()))
        t = time.monotonic()
        if multipart:
            pieces = [part_head(b"a", b"a.bin"), None, b"\r\n" + part_head(b"b", b"b.bin"),
                      None, b"\r\n" + part_head(b"note") + b"hello\r\n--" + BOUNDARY + b"--\r\n"]
            length = sum(len(p) for p in pieces if p is not None) + 2 * size
            s.sendall(b"POST /parts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n"
                      b"Content-Type: multipart/form-data; boundary=%s\r\n"
                      b"Connection: close\r\n\r\n" % (length, BOUNDARY))
            for p in pieces:
                if p is None:
                    send_repeated(s, chunk, size, deadline)
                else:
                    s.sendall(p)
        else:
            s.sendall(b"POST /hash HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n" % size)
            send_repeated(s, chunk, size, deadline)
        answer = b""
        while True:
            more = s.recv(65536)
            if not more:
                break
            answer += more
        return time.monotonic() - t, answer


def upload_h2(port: int, size: int, chunk: bytes, deadline: float,
              count: int = 1) -> list[tuple[float, bytes]]:
    """Sends `size` bytes of `chunk` repeated on each of `count` HTTP/2 streams of one
    connection (h2c, prior knowledge), within the windows the server grants: in each pass
    a DATA frame of up to 16 KiB on every stream that has window, each pass starting one
    stream further on. Returns per stream the seconds from the connection's start to the
    answer's end, and the answer's status and body as "status NNN\r\n\r\nBODY"."""
    import select
    import struct
    import hpack  # Debian's python3-hpack (the frames are packed here)

    def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
        n = len(payload)
        return struct.pack(">BHBBI", n >> 16, n & 0xFFFF, kind, flags, stream) + bytes(payload)

    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(max(1.0, deadline - time.monotonic()))
        # As HTTP/2 clients do (curl, nghttp2's tools): without it Nagle holds a window's
        # last segment until the server's delayed ACK, tens of ms per window.
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        enc, dec = hpack.Encoder(), hpack.Decoder()
        ids = [1 + 2 * i for i in range(count)]
        t = time.monotonic()
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0))
        # The server's SETTINGS come first: its initial stream window and stream limit.
        conn_window, initial = 65535, 65535
        inbuf = b""
        state = {sid: {"window": 0, "sent": 0, "status": None, "body": b"", "ended": False,
                       "seconds": 0.0} for sid in ids}
        got_settings = False

        def take(block_reads: bool) -> None:
            nonlocal inbuf, conn_window, initial, got_settings
            if not block_reads and not select.select([s], [], [], 0)[0]:
                return
            more = s.recv(1 << 20)
            if not more:
                raise ConnectionError("the server closed the connection")
            inbuf += more
            while len(inbuf) >= 9:
                n = (inbuf[0] << 16) | (inbuf[1] << 8) | inbuf[2]
                if len(inbuf) < 9 + n:
                    break
                kind, flags = inbuf[3], inbuf[4]
                stream = struct.unpack(">I", inbuf[5:9])[0] & 0x7FFFFFFF
                payload, inbuf = inbuf[9:9 + n], inbuf[9 + n:]
                st = state.get(stream)
                if kind == 8:  # WINDOW_UPDATE
                    inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
                    if stream == 0:
                        conn_window += inc
                    elif st:
                        st["window"] += inc
                elif kind == 4 and not flags & 1:  # SETTINGS
                    for i in range(0, len(payload), 6):
                        key, value = struct.unpack(">HI", payload[i:i + 6])
                        if key == 3 and value < count:
                            raise SystemExit(f"the server allows {value} streams at once, "
                                             f"not {count}")
                        if key == 4:
                            if got_settings:  # the streams are open: their windows move
                                for x in state.values():
                                    x["window"] += value - initial
                            initial = value
                    s.sendall(frame(4, 1, 0))
                    got_settings = True
                elif kind == 1 and st:  # HEADERS
                    for name, value in dec.decode(payload):
                        if name in (":status", b":status"):
                            st["status"] = value if isinstance(value, str) else value.decode()
                    if flags & 1:
                        st["ended"] = True
                        st["seconds"] = time.monotonic() - t
                elif kind == 0 and st:  # DATA
                    st["body"] += payload
                    if flags & 1:
                        st["ended"] = True
                        st["seconds"] = time.monotonic() - t
                elif kind in (3, 7):  # RST_STREAM, GOAWAY
                    said = f" after the answer {st['status']} {st['body'][:200]!r}" if st else ""
                    raise ConnectionError(f"the server sent frame type {kind} on stream "
                                          f"{stream}: {payload.hex()}{said} (sent "
                                          f"{st['sent'] if st else '-'} bytes on it)")

        while not got_settings:
            take(True)
        for sid in ids:
            state[sid]["window"] += initial
            block = enc.encode([(":method", "POST"), (":scheme", "http"), (":path", "/hash"),
                                (":authority", "127.0.0.1"), ("content-length", str(size))])
            s.sendall(frame(1, 4, sid, block))
        view = memoryview(chunk)
        sending = list(ids)
        while sending:
            progressed = False
            # Each pass starts one stream further on: when the connection's window runs out
            # within a pass, the same first streams must not take it every time (the last
            # ones would starve past timeouts.body_idle, and the server answer them 408).
            sending = sending[1:] + sending[:1]
            for sid in list(sending):
                st = state[sid]
                window = min(conn_window, st["window"], 16384, size - st["sent"])
                if window <= 0:
                    continue
                at = st["sent"] % len(chunk)
                n = min(window, len(chunk) - at)
                last = st["sent"] + n == size
                s.sendall(frame(0, 1 if last else 0, sid, view[at:at + n]))
                st["sent"] += n
                conn_window -= n
                st["window"] -= n
                if last:
                    sending.remove(sid)
                progressed = True
            take(not progressed)
            if time.monotonic() > deadline:
                raise TimeoutError("the upload did not finish within --timeout")
        while not all(x["ended"] for x in state.values()):
            take(True)
        return [(x["seconds"], f"status {x['status']}\r\n\r\n".encode() + x["body"])
                for x in state.values()]


def upload_h3(h3load: Path, port: int, size: int, deadline: float, count: int,
              chunked: bool) -> list[tuple[float, bytes]]:
    """`count` uploads at once as streams of one QUIC connection (h3load -c 1 -m COUNT);
    per upload the seconds and the answer as "status NNN\r\n\r\nBODY"."""
    cmd = [str(h3load), "-c", "1", "-m", str(count), "-n", str(count), "-upload", str(size)]
    cmd += (["-chunked"] if chunked else []) + [f"https://127.0.0.1:{port}/hash"]
    done = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=max(1.0, deadline - time.monotonic()))
    answers = []
    for line in done.stdout.splitlines():
        m = re.match(r"h3load: answer (\d+) ([\d.]+) (.*)$", line)
        if m:
            answers.append((float(m.group(2)),
                            f"status {m.group(1)}\r\n\r\n{m.group(3)}".encode()))
    if len(answers) != count or done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"h3load gave {len(answers)} answers of {count}")
    return answers


def open_files(pid: int) -> set[str]:
    """What the process's descriptors name that is a file (not a socket, pipe, eventfd...)."""
    out = set()
    base = f"/proc/{pid}/fd"
    for fd in os.listdir(base):
        try:
            target = os.readlink(f"{base}/{fd}")
        except OSError:
            continue
        if target.startswith("/") and not target.startswith("/dev/"):
            out.add(f"{fd} -> {target}")
    return out


class FileWatcher(threading.Thread):
    """Reads /proc/PID/fd and the RSS every 50 ms until stopped; `found` keeps every file
    descriptor the idle server did not have (a spool file would be one, "(deleted)"),
    `rss` the RSS samples in KiB (whether the memory levels off or keeps growing)."""

    def __init__(self, pid: int, idle: set[str]) -> None:
        super().__init__(daemon=True)
        self.pid, self.idle, self.found, self.looks = pid, idle, set(), 0
        self.rss: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.found |= open_files(self.pid) - self.idle
                self.rss.append(status_fields(self.pid)["VmRSS"])
                self.looks += 1
            except (OSError, KeyError):
                pass
            self.done.wait(0.05)

    def quarters(self) -> str:
        """The highest RSS in each quarter of the run, MiB."""
        n = len(self.rss)
        if n < 4:
            return "-"
        return " / ".join(f"{max(self.rss[q * n // 4:(q + 1) * n // 4]) / 1024:.1f}"
                          for q in range(4))


def https_ready(server: subprocess.Popen, port: int, timeout: float = 15.0) -> bool:
    """True once GET / over HTTPS answers (the certificate is not checked)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    end = time.monotonic() + timeout
    while time.monotonic() < end and server.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as raw:
                with context.wrap_socket(raw) as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    if s.recv(100).startswith(b"HTTP/1.1 200"):
                        return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=1024, help="body size in MiB (default 1024)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for all rounds")
    ap.add_argument("--server", default="build/examples/bench_app/bench_streamed_upload_app")
    ap.add_argument("--protocol", choices=["http1", "h2", "h3"], default="http1")
    ap.add_argument("--concurrent", type=int, default=1, metavar="N",
                    help="N uploads at once, each of --size-mib (default 1)")
    ap.add_argument("--chunked", action="store_true",
                    help="--protocol h3: send no content-length")
    ap.add_argument("--multipart", action="store_true",
                    help="two file parts of --size-mib each, read with tern::multipart_reader")
    a = ap.parse_args()
    if a.multipart and (a.protocol != "http1" or a.concurrent != 1):
        ap.error("--multipart is sent over http1 only, one at a time")
    if a.chunked and a.protocol != "h3":
        ap.error("--chunked is for --protocol h3")
    if a.concurrent < 1:
        ap.error("--concurrent is at least 1")
    size = a.size_mib * MIB
    chunk = bytes((i * 7) % 251 for i in range(64 * 1024))
    work = Path(tempfile.mkdtemp(prefix="tern-bench-upload-"))
    spool = work / "spool"
    spool.mkdir()
    server = None
    try:
        h3load = build_h3load(work)
        # FNV-1a of the pattern (the same 64 KiB chunk repeated), made by h3load in Go.
        expected = int(subprocess.run([str(h3load), "-digest", str(size)], check=True,
                                      capture_output=True, text=True).stdout)
        port = free_port()
        cmd = [a.server, str(port)]
        if a.protocol == "h3":
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(work / "key.pem"),
                            "-out", str(work / "cert.pem"), "-days", "1", "-subj",
                            "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                           check=True, capture_output=True)
            cmd += ["--cert", str(work / "cert.pem"), "--key", str(work / "key.pem"), "--http3"]
        server = groups.start(cmd, stdout=subprocess.DEVNULL, env=dict(os.environ, TMPDIR=str(spool)))
        deadline = time.monotonic() + a.timeout
        ready = https_ready(server, port) if a.protocol == "h3" else wait_ready(server, port)
        if not ready:
            print("the server did not start", file=sys.stderr)
            return 1
        idle = status_fields(server.pid)["VmRSS"]
        idle_files = open_files(server.pid)
        what = f"two file parts of {a.size_mib} MiB" if a.multipart else f"body {a.size_mib} MiB"
        if a.concurrent > 1:
            what = f"{a.concurrent} uploads at once of {a.size_mib} MiB each"
        how = {"http1": "each on its own connection", "h2": "streams of one connection",
               "h3": "streams of one QUIC connection"}[a.protocol]
        print(f"{what} over {a.protocol}{' (' + how + ')' if a.concurrent > 1 else ''}"
              f"{' without content-length' if a.chunked else ''}, idle RSS {idle / 1024:.1f} MiB, "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("round  seconds  MiB/s  peak RSS (MiB)  above idle (MiB)  per upload (MiB)  files"
              "  answer")
        for r in range(a.rounds):
            with open(f"/proc/{server.pid}/clear_refs", "w") as f:
                f.write("5")  # VmHWM := VmRSS
            watcher = FileWatcher(server.pid, idle_files)
            watcher.start()
            t = time.monotonic()
            if a.protocol == "h3":
                answers = upload_h3(h3load, port, size, deadline, a.concurrent, a.chunked)
            elif a.protocol == "h2":
                answers = upload_h2(port, size, chunk, deadline, a.concurrent)
            elif a.concurrent > 1:
                answers = [None] * a.concurrent
                failures = []

                def one(k: int) -> None:
                    try:
                        answers[k] = upload(port, size, chunk, deadline)
                    except Exception as e:  # noqa: BLE001 (reported below)
                        failures.append(e)

                threads = [threading.Thread(target=one, args=(k,)) for k in range(a.concurrent)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
                if failures:
                    raise failures[0]
            else:
                answers = [upload(port, size, chunk, deadline, a.multipart)]
            seconds = time.monotonic() - t
            watcher.done.set()
            watcher.join()
            # VmHWM read now can be below an RSS the watcher saw during the round (it was,
            # by 0.1-0.3 MiB, with many uploads at once): the peak is the higher of the two.
            peak = max([status_fields(server.pid)["VmHWM"]] + watcher.rss)
            files = sorted(watcher.found) + [f"{p} (in the spool directory)" for p in spool.iterdir()]
            sent = (2 if a.multipart else 1) * size * len(answers)
            ok = not files
            bodies = []
            for _, answer in answers:
                body = answer.split(b"\r\n\r\n", 1)[-1].decode(errors="replace").strip()
                if a.multipart:
                    lines = body.split("\n")
                    good = (len(lines) == 3 and all(lines[i] == f"{n} bytes={size} fnv1a={expected}"
                                                    for i, n in ((0, "a"), (1, "b")))
                            and lines[2].startswith("note bytes=5 "))
                    body = body.replace("\n", "; ")
                else:
                    good = body == f"bytes={size} fnv1a={expected}"
                ok = ok and good
                bodies.append(body + ("" if good else "  (WRONG)"))
            shown = bodies[0] if len(set(bodies)) == 1 else " | ".join(sorted(set(bodies)))
            if len(answers) > 1:
                shown = f"{len(answers)} x {shown}"
                slowest = max(x[0] for x in answers)
                fastest = min(x[0] for x in answers)
                shown += f" (each {fastest:.1f}-{slowest:.1f} s)"
            print(f"{r + 1:5}  {seconds:7.2f}  {sent / MIB / seconds:5.0f}  {peak / 1024:14.1f}"
                  f"  {(peak - idle) / 1024:16.1f}  {(peak - idle) / 1024 / len(answers):16.2f}"
                  f"  {len(files) if files else 'none'} ({watcher.looks} looks)  {shown}")
            print(f"  highest RSS in each quarter of the round (MiB): {watcher.quarters()}")
            for f in files:
                print(f"  a file was open or written: {f}")
            if not ok:
                return 1
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        groups.stop(server)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

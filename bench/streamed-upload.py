#!/usr/bin/env python3
"""One large upload to a tern::streamed_body route that hashes the body as it arrives
(examples/bench_app/streamed_upload_main.cpp), with the server's memory: its RSS when idle,
its peak RSS while the body passed (VmHWM, reset through /proc/PID/clear_refs once the
server is up), the wall time and the throughput. No file is written on either side: the
client sends a repeated 64 KiB pattern from memory, the server keeps one read buffer.
Loopback only (127.0.0.1), bounded in time (--timeout), one upload at a time.

With --multipart the body is multipart/form-data of two file parts of --size-mib each (and
a small field), sent to POST /parts, which reads it with tern::multipart_reader and hashes
each part as it arrives; the answer must give each part's size (and, up to 64 MiB, its
digest).

    bench/streamed-upload.py [--size-mib 1024] [--rounds 1] [--timeout 300] [--multipart]
                             [--protocol http1|h2]
                             [--server build/examples/bench_app/bench_streamed_upload_app]

`--protocol h2` sends the body over HTTP/2 (h2c with prior knowledge, one stream with a
content-length, DATA frames of 16 KiB within the flow-control windows the server gives
back as its reader asks), its frames packed here and its fields coded with hpack (Debian's
python3-hpack: run it with /usr/bin/python3); --multipart goes over HTTP/1.1 only.

Build the server first: cmake --build build --target bench_streamed_upload_app. Not part of
ctest: timings vary with the machine, and tests never assert on them.
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

MIB = 1024 * 1024


def fnv1a(data: bytes, h: int = 14695981039346656037) -> int:
    for c in data:
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


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


def upload_h2(port: int, size: int, chunk: bytes, deadline: float) -> tuple[float, bytes]:
    """Sends `size` bytes of `chunk` repeated on one HTTP/2 stream (h2c, prior knowledge)
    within the windows the server grants; returns the seconds from the HEADERS to the
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
        t = time.monotonic()
        block = enc.encode([(":method", "POST"), (":scheme", "http"), (":path", "/hash"),
                            (":authority", "127.0.0.1"), ("content-length", str(size))])
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(1, 4, 1, block))
        conn_window = stream_window = 65535
        inbuf = b""
        status, body, ended = None, b"", False

        def take(block_reads: bool) -> None:
            nonlocal inbuf, conn_window, stream_window, status, body, ended
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
                if kind == 8:  # WINDOW_UPDATE
                    inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
                    if stream == 0:
                        conn_window += inc
                    else:
                        stream_window += inc
                elif kind == 4 and not flags & 1:  # SETTINGS
                    s.sendall(frame(4, 1, 0))
                elif kind == 1 and stream == 1:  # HEADERS
                    for name, value in dec.decode(payload):
                        if name in (":status", b":status"):
                            status = value if isinstance(value, str) else value.decode()
                    ended = ended or bool(flags & 1)
                elif kind == 0 and stream == 1:  # DATA
                    body += payload
                    ended = ended or bool(flags & 1)
                elif kind in (3, 7):  # RST_STREAM, GOAWAY
                    raise ConnectionError(f"the server sent frame type {kind}: {payload.hex()}")

        view = memoryview(chunk)
        sent = 0
        while sent < size:
            window = min(conn_window, stream_window, 16384, size - sent)
            if window <= 0:
                take(True)
                continue
            at = sent % len(chunk)
            n = min(window, len(chunk) - at)
            last = sent + n == size
            s.sendall(frame(0, 1 if last else 0, 1, view[at:at + n]))
            sent += n
            conn_window -= n
            stream_window -= n
            take(False)
            if time.monotonic() > deadline:
                raise TimeoutError("the upload did not finish within --timeout")
        while not ended:
            take(True)
        return time.monotonic() - t, f"status {status}\r\n\r\n".encode() + body


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=1024, help="body size in MiB (default 1024)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for all rounds")
    ap.add_argument("--server", default="build/examples/bench_app/bench_streamed_upload_app")
    ap.add_argument("--protocol", choices=["http1", "h2"], default="http1")
    ap.add_argument("--multipart", action="store_true",
                    help="two file parts of --size-mib each, read with tern::multipart_reader")
    a = ap.parse_args()
    if a.multipart and a.protocol != "http1":
        ap.error("--multipart is sent over http1 only")
    size = a.size_mib * MIB
    chunk = bytes((i * 7) % 251 for i in range(64 * 1024))
    # FNV-1a over the repeated pattern, when it is small enough to check here in Python.
    expected = None
    if size <= 64 * MIB:
        h = 14695981039346656037
        for _ in range(size // len(chunk)):
            h = fnv1a(chunk, h)
        expected = h
    port = free_port()
    server = groups.start([a.server, str(port)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + a.timeout
    try:
        if not wait_ready(server, port):
            print("the server did not start", file=sys.stderr)
            return 1
        idle = status_fields(server.pid)["VmRSS"]
        what = f"two file parts of {a.size_mib} MiB" if a.multipart else f"body {a.size_mib} MiB"
        print(f"{what} over {a.protocol}, idle RSS {idle / 1024:.1f} MiB")
        print("round  seconds  MiB/s  peak RSS (MiB)  above idle (MiB)  answer")
        for r in range(a.rounds):
            with open(f"/proc/{server.pid}/clear_refs", "w") as f:
                f.write("5")  # VmHWM := VmRSS
            if a.protocol == "h2":
                seconds, answer = upload_h2(port, size, chunk, deadline)
            else:
                seconds, answer = upload(port, size, chunk, deadline, a.multipart)
            peak = status_fields(server.pid)["VmHWM"]
            body = answer.split(b"\r\n\r\n", 1)[-1].decode(errors="replace")
            sent = 2 * size if a.multipart else size
            if a.multipart:
                lines = body.strip().split("\n")
                digest = f" fnv1a={expected}" if expected is not None else " "
                ok = (len(lines) == 3 and all(lines[i].startswith(f"{n} bytes={size}{digest}")
                                              for i, n in ((0, "a"), (1, "b")))
                      and lines[2].startswith("note bytes=5 "))
                body = body.strip().replace("\n", "; ")
            else:
                ok = f"bytes={size}" in body and (expected is None or f"fnv1a={expected}" in body)
            print(f"{r + 1:5}  {seconds:7.2f}  {sent / MIB / seconds:5.0f}  {peak / 1024:14.1f}"
                  f"  {(peak - idle) / 1024:16.1f}  {body}{'' if ok else '  (WRONG)'}")
            if not ok:
                return 1
    finally:
        groups.stop(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())

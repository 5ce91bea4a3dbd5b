#!/usr/bin/python3
"""The server CPU an HPACK bomb costs, per header block.

    bench/h2_hpack_bomb.py [--blocks N] path/to/bench_hostile_app

Starts bench_hostile_app (examples/bench_app/hostile_main.cpp: tern's default limits, one
worker thread) on a free port and sends N (60) bomb blocks over h2c, each on a fresh
connection: one header block of 128 KiB (HEADERS + 7 CONTINUATION frames, nghttp2's limit
is 8) that enters a 4,000-byte field into the HPACK table once and then refers to it by its
one-byte index about 131,000 times (half a gigabyte of decoded fields from 128 KiB on the
wire). It reads each answer (a reset or a 431), then prints the CPU the server spent
(utime + stime of /proc/PID/stat) per block, beside the same figure for as many plain
`GET /` on fresh connections (the cost of a connection and a request). Not part of ctest:
timings vary with the machine, and tests never assert on them. Needs Debian's python3-h2
(hpack, hyperframe) and /usr/bin/python3.
"""
import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

import hpack
from hyperframe.frame import ContinuationFrame, Frame, HeadersFrame, SettingsFrame

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
BLOCK = 128 * 1024
FRAME = 16384


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def fields(path="/"):
    return [(":method", "GET"), (":scheme", "http"), (":authority", "localhost"),
            (":path", path)]


def bomb(enc):
    head = enc.encode(fields() + [("x-bomb", "b" * 4000)], huffman=False)
    block = head + b"\xbe" * (BLOCK - len(head))  # index 62: the newest table entry
    frames = [HeadersFrame(1, data=block[:FRAME], flags={"END_STREAM"})]
    for at in range(FRAME, BLOCK, FRAME):
        frames.append(ContinuationFrame(1, data=block[at:at + FRAME],
                                        flags={"END_HEADERS"} if at + FRAME >= BLOCK else set()))
    return frames


def plain(enc):
    return [HeadersFrame(1, data=enc.encode(fields()), flags={"END_STREAM", "END_HEADERS"})]


def exchange(port, make):
    """One connection: the preface, the frames, and reading until stream 1 is answered
    (HEADERS then a DATA with END_STREAM, or a RST_STREAM) or the server closes."""
    enc = hpack.Encoder()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(PREFACE + SettingsFrame(0).serialize() +
                  b"".join(f.serialize() for f in make(enc)))
        buf = b""
        while True:
            while len(buf) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(buf[:9]))
                if len(buf) < 9 + length:
                    break
                buf = buf[9 + length:]
                ends = frame.type == 0x3 or (frame.type in (0x0, 0x1) and  # RST, DATA, HEADERS
                                             "END_STREAM" in frame.flags)
                if (frame.stream_id == 1 and ends) or frame.type == 0x7:  # or GOAWAY
                    return
            data = s.recv(65536)
            if not data:
                return
            buf += data


def measure(pid, port, make, n):
    before = cpu_ms(pid)
    for _ in range(n):
        exchange(port, make)
    return (cpu_ms(pid) - before) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=60)
    ap.add_argument("app")
    args = ap.parse_args()
    port = free_port()
    proc = groups.start([args.app, str(port), "1"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    sys.exit("h2_hpack_bomb: the app did not start")
                time.sleep(0.05)
        measure(proc.pid, port, plain, 5)  # warm up
        base = measure(proc.pid, port, plain, args.blocks)
        spent = measure(proc.pid, port, bomb, args.blocks)
        print(f"server CPU per 128 KiB bomb block: {spent:.1f} ms "
              f"(a plain GET on a fresh connection: {base:.1f} ms; {args.blocks} of each)")
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Peak memory and event-loop CPU of the worst request bodies a client can send.

    bench/hostile-bodies.py [--repeat N] [--only SUBSTRING] path/to/bench_hostile_app

For each body below, N times (default 3), it starts a fresh bench_hostile_app
(examples/bench_app/hostile_main.cpp: tern's default limits, one worker thread) on a free
port, sends the body and reads the whole answer. It prints the status, the server's RSS
before, its peak RSS while the body was handled (VmHWM, reset through /proc/PID/clear_refs
once the server is up), the RSS left after it, and the CPU time the server's threads spent
(the sum of /proc/PID/task/*/schedstat: the event loop is the only busy thread), each the
median of the N runs. The last column is the peak above the idle RSS, in MiB per MiB of
body.

The bodies are the ones issue 13 found or suspected: JSON that nlohmann_json turns into far
more memory than its text (deep nesting, many small values, many keys), at max_json_size
and at max_body_size, and multipart bodies at max_body_size, among them a boundary that
makes a naive delimiter search quadratic. Not part of ctest: timings vary with the machine,
and tests never assert on them. Run it on an idle machine, from a RelWithDebInfo or Release
build: cmake --build build --target bench_hostile_app.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import free_port, status_fields  # noqa: E402  (bench/lib, beside this script)
from servers import wait_ready  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

KIB = 1024
MIB = 1024 * KIB
MAX_JSON_SIZE = 1 * MIB  # tern::config defaults
MAX_BODY_SIZE = 10 * MIB
BOUNDARY = "b0undary"
LONG_BOUNDARY = "a" * 70  # the longest RFC 2046 allows


def fill(head: bytes, item: bytes, tail: bytes, size: int, sep: bytes = b",") -> bytes:
    """head item sep item sep ... item tail, as many items as fit in `size` bytes."""
    n = max(1, (size - len(head) - len(tail) + len(sep)) // (len(item) + len(sep)))
    return head + sep.join([item] * n) + tail


def distinct_keys(size: int) -> bytes:
    """{"0":0,"1":0,...}: every key new, so every member is a map node (repeated keys are not)."""
    out, i, total = [], 0, 2
    while True:
        member = b'"%x":0' % i
        if total + len(member) + 1 > size:
            break
        out.append(member)
        total += len(member) + 1
        i += 1
    return b"{" + b",".join(out) + b"}"


def nests(depth: int, size: int) -> bytes:
    """[ nest, nest, ... ]: arrays nested `depth` deep (the outer one included), filling `size`."""
    inner = b"[" * (depth - 1) + b"]" * (depth - 1)
    return fill(b"[", inner, b"]", size)


def multipart(boundary: str, parts: list[tuple[str, bytes]]) -> bytes:
    b = boundary.encode()
    out = []
    for name, data in parts:
        out.append(b"--" + b + b"\r\nContent-Disposition: form-data; name=\"f\"; filename=\"" +
                   name.encode() + b"\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
                   data + b"\r\n")
    return b"".join(out) + b"--" + b + b"--\r\n"


def multipart_fill(boundary: str, data_byte: bytes, size: int) -> bytes:
    """One file of `data_byte` repeated, the whole body `size` bytes."""
    empty = multipart(boundary, [("x.bin", b"")])
    return multipart(boundary, [("x.bin", data_byte * (size - len(empty)))])


def cases() -> list[tuple[str, str, str, bytes]]:
    """(name, path, content type, body)."""
    json = "application/json"
    out = []
    for size, label in ((MAX_JSON_SIZE, "1 MiB = max_json_size"),
                        (MAX_BODY_SIZE, "10 MiB = max_body_size")):
        out += [
            (f"JSON [[],[],...] {label}", "/json", json, fill(b"[", b"[]", b"]", size)),
            (f"JSON [{{}},{{}},...] {label}", "/json", json, fill(b"[", b"{}", b"]", size)),
            (f"JSON [0,0,...] {label}", "/json", json, fill(b"[", b"0", b"]", size)),
            (f'JSON ["","",...] {label}', "/json", json, fill(b"[", b'""', b"]", size)),
            (f'JSON {{"":0,"":0,...}} {label}', "/json", json, fill(b"{", b'"":0', b"}", size)),
            (f'JSON {{"0":0,"1":0,...}} distinct keys {label}', "/json", json,
             distinct_keys(size)),
            (f"JSON 512-deep nests side by side {label}", "/json", json, nests(512, size)),
            (f"JSON unclosed [[[... {label}", "/json", json, b"[" * size),
            (f"JSON unclosed [[[... to a struct (rest_api POST /api/todos) {label}", "/todo", json,
             b"[" * size),
        ]
    out += [
        ("JSON nested 512 deep (at max_json_depth)", "/json", json,
         b"[" * 512 + b"]" * 512),
        ("JSON nested 60000 deep (issue 13)", "/json", json, b"[" * 60000 + b"]" * 60000),
    ]
    form = "multipart/form-data; boundary="
    out += [
        ("multipart: one 10 MiB file of random bytes", "/upload", form + BOUNDARY,
         multipart(BOUNDARY, [("x.bin", os.urandom(MAX_BODY_SIZE - 200))])),
        ("multipart: 70-byte boundary of a's, 10 MiB file of a's", "/upload",
         form + LONG_BOUNDARY, multipart_fill(LONG_BOUNDARY, b"a", MAX_BODY_SIZE)),
        ("multipart: 70-byte boundary, file of CRLF--aaa... near-delimiters", "/upload",
         form + LONG_BOUNDARY,
         multipart(LONG_BOUNDARY, [("x.bin", (b"\r\n--" + b"a" * 69 + b"b") *
                                   ((MAX_BODY_SIZE - 300) // 74))])),
        ("multipart: 1000 parts (max) of 10 KiB", "/upload", form + BOUNDARY,
         multipart(BOUNDARY, [(f"{i}.bin", b"x" * (10 * KIB)) for i in range(1000)])),
        ("multipart: no closing boundary, 10 MiB of a's", "/upload", form + LONG_BOUNDARY,
         ("--" + LONG_BOUNDARY + "\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n")
         .encode().ljust(MAX_BODY_SIZE, b"a")),
    ]
    return out


def cpu_ns(pid: int) -> int:
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS (proc(5))


def send(port: int, path: str, content_type: str, body: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
                  b"Connection: close\r\nContent-Length: %d\r\n\r\n"
                  % (path.encode(), content_type.encode(), len(body)) + body)
        data = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    if not data.startswith(b"HTTP/1.1 "):
        return 0  # closed without an answer: the server died
    return int(data[9:12])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("server")
    a = ap.parse_args()

    rows = []
    for name, path, ctype, body in cases():
        if a.only not in name:
            continue
        idles, peaks, afters, cpus, status = [], [], [], [], None
        for _ in range(a.repeat):
            # A fresh server per run: memory a previous body left with the allocator would
            # otherwise be reused and hide this body's peak.
            port = free_port()
            server = groups.start([a.server, str(port), "1"], stdout=subprocess.DEVNULL)
            try:
                if not wait_ready(server, port, timeout=10):
                    sys.exit("hostile-bodies: the server did not start")
                idle = status_fields(server.pid).get("VmRSS", 0) / 1024
                reset_peak(server.pid)
                before = cpu_ns(server.pid)
                status = send(port, path, ctype, body)
                time.sleep(0.05)
                if server.poll() is not None:
                    status = f"crash ({server.returncode})"
                    break
                cpus.append((cpu_ns(server.pid) - before) / 1e6)
                fields = status_fields(server.pid)
                idles.append(idle)
                peaks.append(fields.get("VmHWM", 0) / 1024)
                afters.append(fields.get("VmRSS", 0) / 1024)
            finally:
                server.kill()
                server.wait()
        if peaks:
            peak, idle = statistics.median(peaks), statistics.median(idles)
            factor = (peak - idle) / (len(body) / MIB)
            rows.append((name, len(body), status, f"{idle:.1f}", f"{peak:.1f}",
                         f"{statistics.median(afters):.1f}", f"{statistics.median(cpus):.1f}",
                         f"{factor:.1f}"))
        else:
            rows.append((name, len(body), status, "-", "-", "-", "-", "-"))
        print(f"hostile-bodies: {name}: {rows[-1][2:]}", file=sys.stderr, flush=True)

    print("| body | bytes | status | idle RSS MiB | peak RSS MiB | RSS after MiB | "
          "server CPU ms | (peak - idle) / body size |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What half-open QUIC connections cost a server, in memory and in the work of each datagram.

    bench/h3-half-open.py [--count N] [--datagrams D] path/to/live path/to/tern_quic_wire_tests

Starts examples/live with HTTP/3 on a free port (a self-signed certificate, two workers),
then measures, on the server process:
  1. CPU per garbage datagram (D 1,200-byte datagrams no QUIC version reads, 5,000 by default,
     sent one at a time about 0.1 ms apart from one socket) with no connection open;
  2. its resident memory before and after N half-open connections: clients whose Initial
     (after the Retry) carries a ClientHello and who then never answer, made and held by the
     wire-test binary's hidden "[.bench]" case (tests/quic/test_half_open.cpp);
  3. CPU per garbage datagram again while they are held.
The server's CPU is read from /proc/PID/stat (user + system), less what it spent idle just
before (--idle seconds). The half-open connections' own timers (the server resends its
handshake flight to clients that never answer) make that idle figure noisy: read the
second line as "about the first", or "far above it", across a few runs. N stays below http3.max_handshakes (1,000 by default) so that all are held;
they live http3.handshake_timeout (5 s), so the measurement is made as soon as they are
held (the script warns when it took too long).
"""
import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from certs import self_signed  # noqa: E402  (tests/support)
from common import free_port, status_fields  # noqa: E402  (bench/lib)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    return status_fields(pid).get("VmRSS", 0)


def wait_udp(port: int, pid: int) -> None:
    for _ in range(100):
        out = subprocess.run(["ss", "-Hlun", f"sport = :{port}"], capture_output=True, text=True)
        if out.stdout.strip():
            return
        if not Path(f"/proc/{pid}").exists():
            sys.exit("h3-half-open: live exited")
        time.sleep(0.05)
    sys.exit("h3-half-open: live does not listen on UDP")


def per_datagram_us(pid: int, port: int, count: int, idle_window: float) -> float:
    """Server CPU per garbage datagram, in microseconds, less its idle CPU."""
    idle_from, idle_t = cpu_seconds(pid), time.monotonic()
    time.sleep(idle_window)
    idle_rate = (cpu_seconds(pid) - idle_from) / (time.monotonic() - idle_t)
    garbage = bytes([0x00]) + os.urandom(1199)  # no fixed bit: nothing QUIC would read
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    start, t = cpu_seconds(pid), time.monotonic()
    for _ in range(count):
        # One at a time, as a slow attacker sends them: the server reads each alone (a
        # burst is read in batches, and the work after each read is shared by a batch).
        s.sendto(garbage, ("127.0.0.1", port))
        time.sleep(0.0001)
    time.sleep(0.2)
    spent = cpu_seconds(pid) - start - idle_rate * (time.monotonic() - t)
    s.close()
    return max(spent, 0.0) / max(count, 1) * 1e6


@contextlib.contextmanager
def live_server(args, work: str, cert: str, key: str):
    """examples/live with HTTP/3 on a free port, listening on UDP: (pid, port)."""
    port = free_port()
    live = groups.start([args.live, str(port), "--cert", cert, "--key", key, "--http3"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
    try:
        wait_udp(port, live.pid)
        time.sleep(0.3)
        yield live.pid, port
    finally:
        live.terminate()
        live.wait(timeout=30)


@contextlib.contextmanager
def held_connections(args, port: int, kind: str):
    """The wire-test binary's hidden client holding args.count `kind` connections (half-open
    or established) to `port` while the block runs."""
    env = dict(os.environ, TERN_HALF_OPEN_PORT=str(port), TERN_HALF_OPEN_COUNT=str(args.count),
               TERN_HALF_OPEN_KIND=kind)
    client = groups.start(
        [args.wire_tests, "bench: hold QUIC connections for bench/h3-half-open.py"],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for line in client.stdout:  # Catch2 prints its filter first
            if "half-open: ready" in line:
                break
        else:
            sys.exit("h3-half-open: the client ended before it was ready")
        yield
    finally:
        client.stdin.close()
        client.wait(timeout=30)


def held_memory(args, work: str, cert: str, key: str, kind: str) -> tuple[int, int]:
    """A fresh live's resident memory before and after the client holds `kind` connections."""
    with live_server(args, work, cert, key) as (pid, port):
        before = rss_kib(pid)
        with held_connections(args, port, kind):
            return before, rss_kib(pid)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("live")
    ap.add_argument("wire_tests")
    ap.add_argument("--count", type=int, default=900)
    ap.add_argument("--established", action="store_true",
                    help="also hold as many established, idle connections, and print their memory")
    ap.add_argument("--datagrams", type=int, default=5_000)
    ap.add_argument("--idle", type=float, default=0.3,
                    help="seconds over which the server's idle CPU is measured first")
    args = ap.parse_args()
    args.live, args.wire_tests = os.path.abspath(args.live), os.path.abspath(args.wire_tests)
    with tempfile.TemporaryDirectory() as work:
        cert, key = self_signed(work, "127.0.0.1")
        with live_server(args, work, cert, key) as (pid, port):
            empty = per_datagram_us(pid, port, args.datagrams, args.idle)
            before = rss_kib(pid)
            made = time.monotonic()
            with held_connections(args, port, "half-open"):
                after = rss_kib(pid)
                held = per_datagram_us(pid, port, args.datagrams, args.idle)
                if time.monotonic() - made > 4.5:
                    print("h3-half-open: warning: the measurement outlasted some connections' "
                          "handshake timeout (5 s)")
        established = held_memory(args, work, cert, key, "established") if args.established else None
    print(f"garbage datagram, no connection:      {empty:6.2f} us of server CPU")
    print(f"garbage datagram, {args.count} half-open:   {held:6.2f} us of server CPU")
    print(f"resident memory: {before} KiB -> {after} KiB, "
          f"{(after - before) / args.count:.1f} KiB per half-open connection")
    if established:
        base, full = established
        print(f"resident memory: {base} KiB -> {full} KiB, "
              f"{(full - base) / args.count:.1f} KiB per established, idle connection")


if __name__ == "__main__":
    main()

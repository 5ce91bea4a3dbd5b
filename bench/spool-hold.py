#!/usr/bin/python3
"""What one HTTP/2 connection may make the server keep on disk: N concurrent uploads that
each declare M MiB, send 20 KB and hold (issue 38, item 4).

    bench/spool-hold.py [--uploads 20] [--mib 4] [--h2-spool BYTES] path/to/tern_h2_app

Starts tests/support/h2_app.cpp (its POST /upload takes bodies up to 8 MiB, spooled above
16 KiB; `--streams 100`, the default h2_max_concurrent_streams) with a fresh spool
directory, opens one h2c connection and starts the uploads. A
spooled body's declared length is reserved whole when it starts, so what the connection may
fill is (uploads the server took) x M MiB; the refused ones are answered 503, or reset
(REFUSED_STREAM) past h2_max_open_files (8 descriptors per connection). Prints that,
and the bytes actually on disk now (the spool files' blocks, read through /proc/PID/fd: they
are unnamed). Before the spool quota, every upload up to h2_max_open_files was taken: 8 x M
MiB per connection (before that cap, up to h2_max_concurrent_streams (100) x M MiB).
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# In place of bench/ (whose h2.py would hide Python's h2 package): the tests' h2 client.
sys.path[0] = str(Path(__file__).resolve().parent.parent / "tests" / "clients")
import h2_wire  # noqa: E402


def spool_disk_bytes(pid, spool):
    """Blocks of the files the server holds open in `spool` (unnamed O_TMPFILE files)."""
    total = 0
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            if os.readlink(f"{fd_dir}/{fd}").startswith(spool):
                total += os.stat(f"{fd_dir}/{fd}").st_blocks * 512
        except OSError:
            pass
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("app")
    ap.add_argument("--uploads", type=int, default=20)
    ap.add_argument("--mib", type=int, default=4)
    ap.add_argument("--h2-spool", type=int, default=0,
                    help="h2_max_spooled_bytes (default: the server's, 64 MiB)")
    args = ap.parse_args()
    h2_wire.APP = args.app
    spool = tempfile.mkdtemp(prefix="tern-spool-bench-")
    extra = ["--streams", "100"] + (["--h2-spool", str(args.h2_spool)] if args.h2_spool else [])
    proc, port = h2_wire.start("--spool-dir", spool, *extra)
    declared = args.mib << 20
    try:
        c = h2_wire.client(port)
        sids = [c.request("/upload", "POST", headers=[("content-length", str(declared))],
                          body=b"x" * 20000, end=False) for _ in range(args.uploads)]
        # The refusals come at once; the takers stay silent (until the app's 1 s
        # body_idle_timeout answers them 408).
        deadline = time.time() + 0.5
        while time.time() < deadline:
            c.pump(0.1)
        rs = [c.responses[s] for s in sids]
        refused = sum(r["status"] == 503 for r in rs)
        reset = sum(r["status"] is None and r["reset"] is not None for r in rs)
        other = sum(r["status"] not in (None, 503) for r in rs)
        taken = args.uploads - refused - reset - other
        disk = spool_disk_bytes(proc.pid, spool)
        print(f"one h2c connection, {args.uploads} uploads declaring {args.mib} MiB each, "
              f"20 KB sent of each:")
        print(f"  taken {taken}; refused: 503 {refused}, reset (REFUSED_STREAM: "
              f"h2_max_open_files) {reset}; other answers {other}")
        print(f"  the connection may fill {taken * args.mib} MiB of spool "
              f"(declared in all: {args.uploads * args.mib} MiB)")
        print(f"  on disk now: {disk / 1024:.0f} KiB")
        c.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(spool, ignore_errors=True)


if __name__ == "__main__":
    main()

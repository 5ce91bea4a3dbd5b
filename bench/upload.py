#!/usr/bin/env python3
"""A large upload into examples/live's POST /upload (spooled to a temporary file, hashed on
the blocking pool) beside a plain baseline doing the same work on the same machine:
`cat file > spool; sha256sum spool`. Interleaved rounds; reports wall time, throughput and
the server's peak RSS (VmHWM) per round. Loopback only, bounded in time.

    bench/upload.py [--size-mib 1024] [--rounds 3] [--live build/examples/live/live]
"""
import argparse, hashlib, os, socket, statistics, subprocess, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import free_port  # noqa: E402  (bench/lib, beside this script)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def rss_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def upload(port, path, size):
    """POSTs the file with curl (a real client; -T reads it as it sends, --data-binary
    would load it whole first); returns (seconds, response body)."""
    t = time.monotonic()
    out = subprocess.run(
        ["curl", "-s", "--max-time", "600", "-X", "POST", "-T", path,  # -T streams the file
         "-H", "Content-Type: application/octet-stream", f"http://127.0.0.1:{port}/upload"],
        capture_output=True, text=True, check=True)
    return time.monotonic() - t, out.stdout


def baseline(path, spool_dir):
    t = time.monotonic()
    target = os.path.join(spool_dir, "baseline.bin")
    subprocess.run(f"cat '{path}' > '{target}' && sha256sum '{target}' > /dev/null",
                   shell=True, check=True)
    elapsed = time.monotonic() - t
    os.unlink(target)
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--live", default="build/examples/live/live")
    args = ap.parse_args()
    size = args.size_mib << 20
    work = tempfile.mkdtemp(prefix="tern-upload-")
    path = os.path.join(work, "upload.bin")
    with open(path, "wb") as f:  # incompressible, written once
        for _ in range(args.size_mib):
            f.write(os.urandom(1 << 20))
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            digest.update(piece)
    want = f'{{"bytes": {size}, "sha256": "{digest.hexdigest()}"}}'
    rows = []
    for r in range(args.rounds):
        port = free_port()
        env = dict(os.environ, TMPDIR=work)  # spool next to the baseline's file
        server = groups.start([args.live, str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            idle = rss_hwm_kib(server.pid)
            tern_s, body = upload(port, path, size)
            peak = rss_hwm_kib(server.pid)
            if body != want:
                sys.exit(f"upload.py: wrong answer {body!r}, want {want!r}")
        finally:
            server.terminate()
            server.wait(timeout=30)
        base_s = baseline(path, work)
        rows.append((tern_s, base_s, idle, peak))
        print(f"round {r + 1}: tern {tern_s:.2f} s ({args.size_mib / tern_s:.0f} MiB/s), "
              f"cat+sha256sum {base_s:.2f} s, server peak RSS {peak / 1024:.1f} MiB "
              f"(idle {idle / 1024:.1f})", flush=True)
    os.unlink(path)
    os.rmdir(work)
    t = statistics.median(r[0] for r in rows)
    b = statistics.median(r[1] for r in rows)
    print(f"\n| {args.size_mib} MiB upload, median of {args.rounds} | tern /upload | cat > file; sha256sum | tern ÷ baseline |")
    print("|---|---:|---:|---:|")
    print(f"| seconds | {t:.2f} | {b:.2f} | {t / b:.2f}x |")
    print(f"| MiB/s | {args.size_mib / t:.0f} | {args.size_mib / b:.0f} | |")
    print(f"| server peak RSS | {statistics.median(r[3] for r in rows) / 1024:.1f} MiB | | |")


if __name__ == "__main__":
    main()

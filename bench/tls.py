#!/usr/bin/env python3
"""HTTPS beside nginx, in one run (docs/tls.md, "Measured"): the same EC P-256 certificate,
TLS 1.3, each server pinned to one CPU and wrk (built with OpenSSL) to the other.

Workloads, each as interleaved rounds (tern, nginx, tern, nginx, ...):
  keep-alive   GET / over kept-alive TLS connections          wrk -t1 -c50
  handshakes   a new TLS connection per request (full handshake, Connection: close)
  file-1MiB    a 1 MiB static file over kept-alive connections  wrk -t1 -c10

    bench/tls.py [--hello build/examples/hello/hello] [--seconds 8] [--rounds 2]

tern runs examples/hello --cert --key (serving ./public); nginx `worker_processes 1`, the
same certificate, `ssl_protocols TLSv1.2 TLSv1.3`, `sendfile on` (which nginx, too, cannot
use through user-space TLS). Prints a table and the ratios; a shared 2-core machine is
noisy (about +-30%), so only ratios from one run mean anything.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import free_port, raise_fd_limit  # noqa: E402

NGINX_CONF = """worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000000;
    sendfile on;
    client_body_temp_path {work}/nb; proxy_temp_path {work}/np; fastcgi_temp_path {work}/nf;
    uwsgi_temp_path {work}/nu; scgi_temp_path {work}/ns;
    server {{
        listen 127.0.0.1:{port} ssl backlog=4096;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        root {work}/public;
        location = / {{ default_type text/plain; return 200 "An incoming GET request!"; }}
    }}
}}
"""


def wrk(url, connections, seconds, close=False):
    cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if close:
        cmd += ["-H", "Connection: close"]
    out = subprocess.run(cmd + [url], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    transfer = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", out)
    scale = {"B": 1 / 2**20, "KB": 1 / 1024, "MB": 1, "GB": 1024}[transfer.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out)
    return rps, float(transfer.group(1)) * scale, errors.group(0) if errors else ""


def wait_up(port):
    for _ in range(200):
        r = subprocess.run(["curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
                            f"https://127.0.0.1:{port}/"], capture_output=True, text=True)
        if r.stdout == "200":
            return
        time.sleep(0.05)
    raise SystemExit(f"tls.py: nothing answers on {port}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hello", default="build/examples/hello/hello")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    for tool in ("wrk", "nginx", "taskset", "openssl", "curl"):
        if not shutil.which(tool):
            raise SystemExit(f"tls.py: {tool} is missing (scripts/install-deps.sh --bench)")
    raise_fd_limit(10000)
    work = Path(tempfile.mkdtemp(prefix="tern-bench-tls-"))
    (work / "public").mkdir()
    (work / "public" / "file.bin").write_bytes(os.urandom(1 << 20))
    # nginx's worker runs as another user: it must be able to read the file.
    for p in (work, work / "public"):
        p.chmod(0o755)
    (work / "public" / "file.bin").chmod(0o644)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", work / "key.pem", "-out", work / "cert.pem", "-days", "1",
                    "-subj", "/CN=localhost"], check=True, capture_output=True)
    tern_port, nginx_port = free_port(), free_port()
    (work / "nginx.conf").write_text(NGINX_CONF.format(work=work, port=nginx_port))
    procs = {
        "tern": subprocess.Popen(["taskset", "-c", "0", os.path.abspath(args.hello), str(tern_port),
                                  "--cert", work / "cert.pem", "--key", work / "key.pem"],
                                 cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True),
        "nginx": subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", work / "nginx.conf", "-p", work,
                                   "-e", work / "nginx-error.log"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True),
    }
    ports = {"tern": tern_port, "nginx": nginx_port}
    try:
        for name in procs:
            wait_up(ports[name])
        workloads = [("keep-alive", "/", 50, False), ("handshakes", "/", 20, True),
                     ("file-1MiB", "/file.bin", 10, False)]
        best = {}
        for label, path, conns, close in workloads:
            for _ in range(args.rounds):
                for name in ("tern", "nginx"):
                    rps, mib, err = wrk(f"https://127.0.0.1:{ports[name]}{path}", conns, args.seconds, close)
                    key = (label, name)
                    if key not in best or rps > best[key][0]:
                        best[key] = (rps, mib, err)
        print(f"\n{'workload':12} {'tern req/s':>12} {'nginx req/s':>12} {'ratio':>7}   MiB/s tern / nginx")
        for label, *_ in workloads:
            t, n = best[(label, "tern")], best[(label, "nginx")]
            print(f"{label:12} {t[0]:12.0f} {n[0]:12.0f} {t[0] / n[0]:7.2f}   {t[1]:.1f} / {n[1]:.1f}"
                  + (f"   tern: {t[2]}" if t[2] else "") + (f"   nginx: {n[2]}" if n[2] else ""))
        print(f"\n(best of {args.rounds} interleaved rounds of {args.seconds} s each; server on CPU 0, "
              "wrk -t1 on CPU 1; tern: examples/hello, 2 event loops sharing CPU 0; nginx: 1 worker)")
    finally:
        for p in procs.values():
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

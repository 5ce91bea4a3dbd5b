#!/usr/bin/env python3
"""HTTP/2 over TLS beside nginx and h2o, in one run (docs/http2.md, "Measured"): the same EC
P-256 certificate, h2 by ALPN, each server pinned to CPU 0 and h2load (one thread) to CPU 1.

Workloads, each as interleaved rounds (tern, nginx, h2o, tern, ...), all GET of the same
24-byte static file (/small.txt: no server runs application code, so the three do the same
work):
  c100-m10    100 connections, 10 streams in flight on each       h2load -c100 -m10
  c1-m1000    one connection asking for 1,000 streams at once      h2load -c1 -m1000
              (each server caps it at its SETTINGS_MAX_CONCURRENT_STREAMS: tern 100,
              nginx 128, h2o 100; the table says what each allowed)

    bench/h2.py [--hello build/examples/hello/hello] [--seconds 8] [--rounds 2]
                [--workloads c100-m10,c1-m1000] [--tern-threads 1]

tern runs examples/hello --threads 1 --cert --key (one event loop on CPU 0, as h2o's one
thread and nginx's one worker; `--tern-threads 2` gives it two loops sharing CPU 0, as before
2026-12-07 evening); nginx
1.22 `worker_processes 1`, `listen ... ssl http2`; h2o 2.2 `num-threads: 1`. Prints req/s,
the ratios, each server's CPU (100% = its one CPU), the server's CPU per request and
h2load's errors. A shared 2-core machine is noisy (about +-30%): only ratios from one run
mean anything. Needs h2load (nghttp2-client), nginx and h2o: scripts/install-deps.sh --bench.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import (CLK_TCK, cpu_ticks, free_port, proc_tree, raise_fd_limit,  # noqa: E402
                    self_signed_cert, stop_groups)
import procs  # noqa: E402  (tests/support/procs.py, on the path bench/lib/common puts it on)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

NGINX_CONF = """worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000000;
    http2_max_requests 1000000000;
    client_body_temp_path {work}/nb; proxy_temp_path {work}/np; fastcgi_temp_path {work}/nf;
    uwsgi_temp_path {work}/nu; scgi_temp_path {work}/ns;
    server {{
        listen 127.0.0.1:{port} ssl http2 backlog=4096;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        root {work}/public;
    }}
}}
"""

H2O_CONF = """num-threads: 1
user: nobody
error-log: {work}/h2o-error.log
listen:
  host: 127.0.0.1
  port: {port}
  ssl:
    certificate-file: {work}/cert.pem
    key-file: {work}/key.pem
    minimum-version: TLSv1.2
hosts:
  default:
    paths:
      /:
        file.dir: {work}/public
"""

# (label, connections, streams per connection)
WORKLOADS = [("c100-m10", 100, 10), ("c1-m1000", 1, 1000)]
SERVERS = ("tern", "nginx", "h2o")


def h2load(port, connections, streams, seconds):
    """(req/s, succeeded, failed + errored, streams the server allowed)"""
    cmd = ["taskset", "-c", "1", "h2load", "-t1", f"-c{connections}", f"-m{streams}",
           f"-D{seconds}", f"https://127.0.0.1:{port}/small.txt"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60).stdout
    rps = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out)
    req = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, "
                    r"(\d+) errored", out)
    if not rps or not req:
        raise SystemExit(f"h2.py: h2load said:\n{out}")
    return float(rps.group(1)), int(req.group(1)), int(req.group(2)) + int(req.group(3))


def allowed_streams(port):
    """The server's SETTINGS_MAX_CONCURRENT_STREAMS, as nghttp sees it."""
    out = subprocess.run(["nghttp", "-nv", f"https://127.0.0.1:{port}/small.txt"],
                         capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):(\d+)", out)
    return int(m.group(1)) if m else None


def wait_up(port):
    def h2_answers():
        r = subprocess.run(["curl", "-sk", "--http2", "-o", "/dev/null", "-w", "%{http_version}",
                            f"https://127.0.0.1:{port}/small.txt"], capture_output=True, text=True)
        return r.stdout == "2"
    if not procs.poll_until(h2_answers, 10):
        raise SystemExit(f"h2.py: nothing answers h2 on {port}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hello", default="build/examples/hello/hello")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workloads", default=",".join(w[0] for w in WORKLOADS))
    ap.add_argument("--tern-threads", type=int, default=1,
                    help="tern's event loops, all on CPU 0 (default 1, as h2o's one thread)")
    args = ap.parse_args()
    workloads = [w for w in WORKLOADS if w[0] in args.workloads.split(",")]
    for tool in ("h2load", "nghttp", "nginx", "h2o", "taskset", "openssl", "curl"):
        if not shutil.which(tool):
            raise SystemExit(f"h2.py: {tool} is missing (scripts/install-deps.sh --bench)")
    raise_fd_limit(10000)
    work = Path(tempfile.mkdtemp(prefix="tern-bench-h2-"))
    (work / "public").mkdir()
    (work / "public" / "small.txt").write_text("An incoming GET request!")
    for p in (work, work / "public"):
        p.chmod(0o755)
    (work / "public" / "small.txt").chmod(0o644)
    self_signed_cert(work)
    (work / "key.pem").chmod(0o644)  # h2o reads it after dropping to `nobody`
    ports = {name: free_port() for name in SERVERS}
    (work / "nginx.conf").write_text(NGINX_CONF.format(work=work, port=ports["nginx"]))
    (work / "h2o.conf").write_text(H2O_CONF.format(work=work, port=ports["h2o"]))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = {
        "tern": groups.start(["taskset", "-c", "0", os.path.abspath(args.hello),
                              str(ports["tern"]), "--threads", str(args.tern_threads),
                              "--cert", work / "cert.pem", "--key", work / "key.pem"],
                             cwd=work, **quiet),
        "nginx": groups.start(["taskset", "-c", "0", "nginx", "-c", work / "nginx.conf", "-p",
                               work, "-e", work / "nginx-error.log"], **quiet),
        "h2o": groups.start(["taskset", "-c", "0", "h2o", "-c", work / "h2o.conf"], **quiet),
    }
    try:
        for name in SERVERS:
            wait_up(ports[name])
        streams = {name: allowed_streams(ports[name]) for name in SERVERS}
        best = {}
        for label, conns, m in workloads:
            for _ in range(args.rounds):
                for name in SERVERS:
                    tree = proc_tree(procs[name].pid)
                    before, start = cpu_ticks(tree), time.monotonic()
                    rps, ok, bad = h2load(ports[name], conns, m, args.seconds)
                    elapsed = time.monotonic() - start
                    cpu = (cpu_ticks(tree) - before) / CLK_TCK / elapsed
                    if (label, name) not in best or rps > best[(label, name)]["rps"]:
                        best[(label, name)] = {"rps": rps, "cpu": cpu, "bad": bad}
        print(f"\nSETTINGS_MAX_CONCURRENT_STREAMS: " +
              ", ".join(f"{n} {streams[n]}" for n in SERVERS))
        print(f"\n{'workload':10} " + " ".join(f"{n + ' req/s':>12}" for n in SERVERS) +
              f" {'xnginx':>7} {'xh2o':>6}  {'server CPU':>17}  {'server us/req':>17}"
              f" {'xnginx':>7} {'xh2o':>6}  errors")
        for label, *_ in workloads:
            r = {n: best[(label, n)] for n in SERVERS}
            us = {n: r[n]["cpu"] / r[n]["rps"] * 1e6 for n in SERVERS}
            errors = ", ".join(f"{n} {r[n]['bad']}" for n in SERVERS if r[n]["bad"]) or "none"
            print(f"{label:10} " + " ".join(f"{r[n]['rps']:12.0f}" for n in SERVERS) +
                  f" {r['tern']['rps'] / r['nginx']['rps']:7.2f} {r['tern']['rps'] / r['h2o']['rps']:6.2f}"
                  f"  {r['tern']['cpu']:4.0%}/{r['nginx']['cpu']:4.0%}/{r['h2o']['cpu']:4.0%}"
                  f"  {us['tern']:5.1f}/{us['nginx']:5.1f}/{us['h2o']:5.1f}"
                  f" {us['tern'] / us['nginx']:7.2f} {us['tern'] / us['h2o']:6.2f}  {errors}")
        print(f"\n(best of {args.rounds} interleaved rounds of {args.seconds} s each; servers on "
              f"CPU 0, h2load -t1 on CPU 1; tern: examples/hello, {args.tern_threads} event "
              "loop(s) on CPU 0; nginx: 1 worker; h2o: 1 thread)")
    finally:
        stop_groups(procs.values())
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

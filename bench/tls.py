#!/usr/bin/env python3
"""HTTPS beside nginx, in one run (docs/tls.md, "Measured"): the same EC P-256 certificate,
each server pinned to one CPU and the client (wrk, built with OpenSSL, or tls_load) to the
other.

Workloads, each as interleaved rounds (tern, nginx, tern, nginx, ...):
  keep-alive   GET / over kept-alive TLS 1.3 connections        wrk -t1 -c50
  new-1.3-full, new-1.3-resumed, new-1.2-full, new-1.2-resumed
               a new connection per request, 20 at a time, by bench/peers/tls_load.c (one
               epoll loop, OpenSSL): a full handshake each, or each resuming the session
               (ticket) its slot's previous connection received, as a browser does
  file-1MiB    a 1 MiB static file over kept-alive TLS 1.3 connections  wrk -t1 -c10

Not `wrk -H "Connection: close"` for handshakes: wrk keeps each connection's session
across its reconnections (SSL_shutdown, SSL_clear), so it resumes them; it chooses neither
full nor resumed handshakes, and how many resume depends on the server's tickets.

    bench/tls.py [--hello build/examples/hello/hello] [--seconds 8] [--rounds 2]
                 [--workloads keep-alive,new-1.3-full,...]

tls_load is compiled with cc into the run's temporary folder (libssl-dev). tern runs
examples/hello --cert --key (serving ./public); nginx `worker_processes 1`, the same
certificate, `ssl_protocols TLSv1.2 TLSv1.3`, session tickets on (its default), `sendfile
on` (which nginx, too, cannot use through user-space TLS). Prints a table with the ratios,
each server's CPU over the run (100% = its one CPU) and the client's (wrk's or tls_load's:
at 100% the client, not the server, was the bound), the server's CPU per request (what
compares the servers when the client was the bound), and how many handshakes resumed; a
shared 2-core machine is noisy (about +-30%), so only ratios from one run mean anything.
"""
import argparse
import json
import os
import re
import resource
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


# (label, client, ...): wrk's path and connections; tls_load's version and mode.
WORKLOADS = [
    ("keep-alive", "wrk", "/", 50),
    ("new-1.3-full", "load", "1.3", "full"),
    ("new-1.3-resumed", "load", "1.3", "resume"),
    ("new-1.2-full", "load", "1.2", "full"),
    ("new-1.2-resumed", "load", "1.2", "resume"),
    ("file-1MiB", "wrk", "/file.bin", 10),
]


def wrk(url, connections, seconds):
    cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    out = subprocess.run(cmd + [url], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    transfer = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", out)
    scale = {"B": 1 / 2**20, "KB": 1 / 1024, "MB": 1, "GB": 1024}[transfer.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out)
    return rps, float(transfer.group(1)) * scale, errors.group(0) if errors else ""


def tls_load(binary, port, seconds, version, mode):
    """Runs bench/peers/tls_load.c: (requests/s, resumed share, errors)."""
    cmd = ["taskset", "-c", "1", str(binary), str(port), str(seconds), "20", version, mode]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
    if r.returncode != 0:
        raise SystemExit(f"tls.py: {' '.join(cmd)}: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    resumed = out["resumed"] / out["handshakes"] if out["handshakes"] else 0.0
    errors = f"{out['errors']} errors ({out['first_error']})" if out["errors"] else ""
    return out["per_sec"], resumed, errors


def children_cpu():
    """CPU seconds of this script's finished children (wrk, tls_load) so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def build_tls_load(work):
    binary = work / "tls_load"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-o", binary,
                    Path(__file__).resolve().parent / "peers" / "tls_load.c", "-lssl", "-lcrypto"],
                   check=True)
    return binary


def wait_up(port):
    def answers_200():
        r = subprocess.run(["curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
                            f"https://127.0.0.1:{port}/"], capture_output=True, text=True)
        return r.stdout == "200"
    if not procs.poll_until(answers_200, 10):
        raise SystemExit(f"tls.py: nothing answers on {port}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hello", default="build/examples/hello/hello")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workloads", default=",".join(w[0] for w in WORKLOADS),
                    help="comma-separated, of: " + ", ".join(w[0] for w in WORKLOADS))
    args = ap.parse_args()
    chosen = args.workloads.split(",")
    unknown = set(chosen) - {w[0] for w in WORKLOADS}
    if unknown:
        ap.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    workloads = [w for w in WORKLOADS if w[0] in chosen]
    for tool in ("wrk", "nginx", "taskset", "openssl", "curl", "cc"):
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
    self_signed_cert(work)
    load_binary = build_tls_load(work)
    tern_port, nginx_port = free_port(), free_port()
    (work / "nginx.conf").write_text(NGINX_CONF.format(work=work, port=nginx_port))
    procs = {
        "tern": groups.start(["taskset", "-c", "0", os.path.abspath(args.hello), str(tern_port),
                              "--cert", work / "cert.pem", "--key", work / "key.pem"],
                             cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        "nginx": groups.start(["taskset", "-c", "0", "nginx", "-c", work / "nginx.conf", "-p", work,
                               "-e", work / "nginx-error.log"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL),
    }
    ports = {"tern": tern_port, "nginx": nginx_port}
    try:
        for name in procs:
            wait_up(ports[name])
        best = {}
        for label, kind, *spec in workloads:
            for _ in range(args.rounds):
                for name in ("tern", "nginx"):
                    tree = proc_tree(procs[name].pid)
                    before, start = cpu_ticks(tree), time.monotonic()
                    client_before = children_cpu()
                    if kind == "wrk":
                        path, conns = spec
                        rps, mib, err = wrk(f"https://127.0.0.1:{ports[name]}{path}", conns,
                                            args.seconds)
                        resumed = None
                    else:
                        version, mode = spec
                        rps, resumed, err = tls_load(load_binary, ports[name], args.seconds,
                                                     version, mode)
                        mib = None
                    elapsed = time.monotonic() - start
                    server_cpu = (cpu_ticks(tree) - before) / CLK_TCK / elapsed
                    client_cpu = (children_cpu() - client_before) / elapsed
                    key = (label, name)
                    if key not in best or rps > best[key]["rps"]:
                        best[key] = {"rps": rps, "mib": mib, "err": err, "cpu": server_cpu,
                                     "client_cpu": client_cpu, "resumed": resumed}
        print(f"\n{'workload':16} {'tern req/s':>11} {'nginx req/s':>11} {'ratio':>6}"
              f"  {'server CPU':>13}  {'client CPU':>13}  {'server us/req':>13} {'ratio':>6}"
              "  notes (tern / nginx)")
        for label, kind, *_ in workloads:
            t, n = best[(label, "tern")], best[(label, "nginx")]
            notes = []
            if kind == "wrk" and t["mib"] is not None and label.startswith("file"):
                notes.append(f"MiB/s {t['mib']:.1f} / {n['mib']:.1f}")
            if kind == "load":
                notes.append(f"resumed {t['resumed']:.0%} / {n['resumed']:.0%}")
            for name, r in (("tern", t), ("nginx", n)):
                if r["err"]:
                    notes.append(f"{name}: {r['err']}")
            # Server CPU per request: what compares the servers when the client, not the
            # server, was the bound (a server CPU below 100%).
            t_us, n_us = (r["cpu"] / r["rps"] * 1e6 for r in (t, n))
            print(f"{label:16} {t['rps']:11.0f} {n['rps']:11.0f} {t['rps'] / n['rps']:6.2f}"
                  f"  {t['cpu']:5.0%} / {n['cpu']:<5.0%}  {t['client_cpu']:5.0%} / {n['client_cpu']:<5.0%}"
                  f"  {t_us:5.0f} / {n_us:<5.0f} {t_us / n_us:6.2f}  " + ", ".join(notes))
        for version in ("1.3", "1.2"):
            full, res = f"new-{version}-full", f"new-{version}-resumed"
            if all((w, name) in best for w in (full, res) for name in ("tern", "nginx")):
                rate = {n: best[(res, n)]["rps"] / best[(full, n)]["rps"] for n in ("tern", "nginx")}
                cost = {n: (best[(res, n)]["cpu"] / best[(res, n)]["rps"])
                        / (best[(full, n)]["cpu"] / best[(full, n)]["rps"]) for n in ("tern", "nginx")}
                print(f"resumed / full, TLS {version}: rate tern {rate['tern']:.2f}x, nginx "
                      f"{rate['nginx']:.2f}x; server CPU per connection tern {cost['tern']:.2f}x, "
                      f"nginx {cost['nginx']:.2f}x")
        print(f"\n(best of {args.rounds} interleaved rounds of {args.seconds} s each; server on CPU 0, "
              "the client on CPU 1; tern: examples/hello, 2 event loops sharing CPU 0; nginx: 1 worker)")
    finally:
        stop_groups(procs.values())
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

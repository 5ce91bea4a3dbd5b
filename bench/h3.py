#!/usr/bin/env python3
"""HTTP/3 beside HTTP/2 and HTTPS, on tern, nginx 1.26 and Caddy, in one run (docs/http3.md,
"Measured"): the same EC P-256 certificate and the same file, each server pinned to CPU 0 and
the client to CPU 1. Debian 12's h2load and curl speak no HTTP/3, so the HTTP/3 client is
bench/peers/h3load (Go, on Debian's quic-go 0.29, built here offline in GOPATH mode); the
HTTP/2 and HTTPS client is h2load. Neither nginx 1.22 nor h2o 2.2 in Debian 12 serves HTTP/3:
the nginx peer is Debian 13's nginx 1.26 (built --with-http_v3_module), unpacked from its .deb
by bench/lib/nginx126.sh (fetched once, into bench/results/build/nginx126); Caddy 2.6 is
Debian 12's (package caddy).

Workloads, each as interleaved rounds (tern, nginx, caddy, tern, ...), GETs of
examples/live/public/index.html (1,400 bytes, a static file on every server) unless said:
  h3-c10-m10   HTTP/3, 10 connections, 10 requests in flight on each     h3load -c10 -m10
  h3-new-c10   HTTP/3, a new connection for every request (a handshake
               each: new connections per second), 10 at a time            h3load -new -c10
  h3-10MiB-c4  HTTP/3, a 10 MiB file, 4 connections, one request each    h3load -c4 -m1
  h2-c10-m10   HTTP/2 over TLS, the same as h3-c10-m10                    h2load -c10 -m10
  h1-c100      HTTPS (HTTP/1.1 over TLS), 100 connections, one request in
               flight on each: the same 100 requests in flight             h2load --h1 -c100
The 10 MiB file is written into examples/live/public (tern's live serves that folder, as
the peers do here) for the run and removed after it (bench-10MiB.bin, ignored by git).

Retry: tern answers every Initial without a token with a Retry (address validation,
docs/http3.md), so each new connection costs it one more round trip and a token check;
nginx's `quic_retry` is off by default. The peer `nginx-retry` (in the default list) is the
same nginx with `quic_retry on`, measured on the HTTP/3 rows only, so that the new-connection
row compares like with like.

    bench/h3.py [--live build/examples/live/live] [--seconds 8] [--rounds 2]
                [--peers tern,nginx,nginx-retry,caddy] [--nginx PATH] [--tern-threads 1]

tern runs examples/live --threads 1 --cert --key --http3 (HTTP/3 is in the default build; one
event loop on CPU 0, as nginx's one worker; `--tern-threads 2` gives it two loops sharing CPU
0, each with its own UDP socket on the HTTP/3 port, as before 2026-12-07 evening); nginx 1.26 one worker,
`listen ... ssl` and `listen ... quic reuseport` on the same port, `http2 on`, `http3 on`, the
certificate on its default server (Go's client, like Chromium, sends no SNI to an IP address),
QUIC settings at their defaults (against Debian 12's OpenSSL 3.0 it runs QUIC through its
OpenSSL compatibility layer); Caddy 2.6 with GOMAXPROCS=1, `protocols h1 h2 h3`, the same
certificate (`default_sni 127.0.0.1`: without it Caddy ends a handshake without SNI with
internal_error). Prints req/s and tern's ratio to each peer, each server's CPU (100% = its
one CPU), the client's, and the server's CPU per request with tern's ratio. A shared 2-core
machine is noisy (about +-30%): only ratios from one run mean anything; when the client's CPU
is near 100% the client, not the server, was the bound, and the server's CPU per request is
what compares them.
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
                    stop_groups)
import procs  # noqa: E402  (tests/support/procs.py, on the path bench/lib/common puts it on)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

REPO = Path(__file__).resolve().parent.parent
PUBLIC = REPO / "examples" / "live" / "public"

CADDYFILE = """{{
    admin off
    default_sni 127.0.0.1
    auto_https off
    servers {{
        protocols h1 h2 h3
    }}
}}
https://127.0.0.1:{port} {{
    tls {work}/cert.pem {work}/key.pem
    root * {public}
    file_server
}}
"""

# (label, protocol, connections, requests in flight per connection, path, a connection
# per request)
WORKLOADS = [("h3-c10-m10", "h3", 10, 10, "/index.html", False),
             ("h3-new-c10", "h3", 10, 1, "/index.html", True),
             ("h3-10MiB-c4", "h3", 4, 1, "/bench-10MiB.bin", False),
             ("h2-c10-m10", "h2", 10, 10, "/index.html", False),
             ("h1-c100", "h1", 100, 1, "/index.html", False)]
PEERS = ("tern", "nginx", "nginx-retry", "caddy")
BIG_FILE = "bench-10MiB.bin"

NGINX_CONF = """worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000000;
    sendfile on;
    types {{ text/html html; }}
    client_body_temp_path {work}/nb; proxy_temp_path {work}/np; fastcgi_temp_path {work}/nf;
    uwsgi_temp_path {work}/nu; scgi_temp_path {work}/ns;
    server {{
        listen 127.0.0.1:{port} ssl default_server backlog=4096;
        listen 127.0.0.1:{port} quic reuseport default_server;
        http2 on;
        http3 on;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        root {public};
    }}
}}
"""


def build_h3load(work):
    out = work / "h3load"
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="-trimpath",
               GOCACHE=str(REPO / "build" / "h3load-gocache"),
               GOPATH=f"{work / 'gopath'}:/usr/share/gocode")
    subprocess.run(["go", "build", "-o", str(out), str(REPO / "bench/peers/h3load/main.go")],
                   check=True, env=env, cwd=work)
    return out


def run_client(h3load, protocol, port, conns, streams, seconds, path="/index.html",
               fresh=False):
    """(req/s, errors, the client's CPU share)"""
    url = f"https://127.0.0.1:{port}{path}"
    if protocol == "h3":
        cmd = ["taskset", "-c", "1", str(h3load), "-c", str(conns), "-m", str(streams),
               "-d", str(seconds)] + (["-new"] if fresh else []) + [url]
        env = dict(os.environ, GOMAXPROCS="1")
    else:
        cmd = ["taskset", "-c", "1", "h2load", "-t1", f"-c{conns}", f"-m{streams}",
               f"-D{seconds}", url]
        if protocol == "h1":
            cmd.insert(4, "--h1")
        env = None
    before = os.times()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60,
                         env=env).stdout
    after = os.times()
    client_cpu = ((after.children_user - before.children_user) +
                  (after.children_system - before.children_system)) / seconds
    if protocol == "h3":
        m = re.search(r"h3load: (\d+) requests, (\d+) errors, ([\d.]+) req/s", out)
        if not m:
            raise SystemExit(f"h3.py: h3load said:\n{out}")
        return float(m.group(3)), int(m.group(2)), client_cpu
    rps = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out)
    req = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, "
                    r"(\d+) errored", out)
    if not rps or not req:
        raise SystemExit(f"h3.py: h2load said:\n{out}")
    return float(rps.group(1)), int(req.group(2)) + int(req.group(3)), client_cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--live", default="build/examples/live/live")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--peers", default=",".join(PEERS),
                    help="servers, tern first (default tern,nginx,caddy)")
    ap.add_argument("--tern-threads", type=int, default=1,
                    help="tern's event loops, all on CPU 0 (default 1, as nginx's one worker)")
    ap.add_argument("--nginx", help="nginx with http_v3_module (default: Debian 13's 1.26, "
                    "fetched and unpacked by bench/lib/nginx126.sh)")
    args = ap.parse_args()
    servers_wanted = [p for p in args.peers.split(",") if p]
    if servers_wanted[:1] != ["tern"] or not set(servers_wanted) <= set(PEERS):
        raise SystemExit(f"h3.py: --peers is tern followed by some of {', '.join(PEERS[1:])}")
    for tool in ("h2load", "go", "taskset", "openssl") + (
            ("caddy",) if "caddy" in servers_wanted else ()):
        if not shutil.which(tool):
            raise SystemExit(f"h3.py: {tool} is missing (apt-get install nghttp2-client caddy "
                             "golang-go golang-github-lucas-clemente-quic-go-dev)")
    nginx_env = None
    if {"nginx", "nginx-retry"} & set(servers_wanted):
        if not args.nginx:
            fetched = subprocess.run([str(REPO / "bench/lib/nginx126.sh")],
                                     stdout=subprocess.PIPE, text=True)
            if fetched.returncode != 0:
                raise SystemExit("h3.py: nginx 1.26 could not be fetched (bench/lib/nginx126.sh "
                                 "said why); --peers tern,caddy runs without it")
            args.nginx = fetched.stdout.strip()
        if not os.access(args.nginx, os.X_OK):
            raise SystemExit(f"h3.py: {args.nginx} is not an executable nginx")
        # A trixie library Debian 12 lacked would be unpacked beside the binary
        # (bench/lib/nginx126.sh); today it needs none.
        root = Path(args.nginx).resolve().parent.parent.parent
        nginx_env = dict(os.environ, LD_LIBRARY_PATH=f"{root}/usr/lib/x86_64-linux-gnu:"
                         f"{root}/lib/x86_64-linux-gnu")
        version = subprocess.run([args.nginx, "-v"], capture_output=True, text=True,
                                 env=nginx_env).stderr.strip()
        print(f"nginx: {args.nginx} ({version})")
    names = tuple(servers_wanted)
    raise_fd_limit(10000)
    work = Path(tempfile.mkdtemp(prefix="tern-bench-h3-"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(work / "key.pem"),
                    "-out", str(work / "cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    h3load = build_h3load(work)
    ports = {name: free_port() for name in names}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    servers = {"tern": groups.start(["taskset", "-c", "0", os.path.abspath(args.live),
                                     str(ports["tern"]), "--threads", str(args.tern_threads),
                                     "--cert", work / "cert.pem", "--key",
                                     work / "key.pem", "--http3"], **quiet)}
    for name in ("nginx", "nginx-retry"):
        if name not in names:
            continue
        conf = NGINX_CONF.format(work=work, port=ports[name], public=PUBLIC)
        if name == "nginx-retry":
            # Its own pid file and the Retry on; everything else as nginx.
            conf = conf.replace(f"pid {work}/nginx.pid;", f"pid {work}/nginx-retry.pid;")
            conf = conf.replace("http3 on;", "http3 on;\n        quic_retry on;")
        (work / f"{name}.conf").write_text(conf)
        servers[name] = groups.start(["taskset", "-c", "0", args.nginx, "-c",
                                      work / f"{name}.conf", "-p", work, "-e",
                                      work / f"{name}-error.log"], env=nginx_env, **quiet)
    if "caddy" in names:
        (work / "Caddyfile").write_text(CADDYFILE.format(work=work, port=ports["caddy"],
                                                         public=PUBLIC))
        servers["caddy"] = groups.start(["taskset", "-c", "0", "caddy", "run", "--config",
                                         work / "Caddyfile", "--adapter", "caddyfile"],
                                        env=dict(os.environ, GOMAXPROCS="1", HOME=str(work),
                                                 XDG_DATA_HOME=str(work),
                                                 XDG_CONFIG_HOME=str(work)),
                                        **quiet)
    big = PUBLIC / BIG_FILE
    big.write_bytes(os.urandom(10 * 1024 * 1024))
    try:
        for name in names:
            procs.wait_for_port(ports[name], servers[name])
            # Both answer over HTTP/3 before anything is measured.
            rps, errors, _ = run_client(h3load, "h3", ports[name], 1, 1, 1)
            if rps == 0 or errors:
                raise SystemExit(f"h3.py: {name} does not answer over HTTP/3")
        best = {}
        for label, protocol, conns, m, path, fresh in WORKLOADS:
            for _ in range(args.rounds):
                for name in names:
                    if name == "nginx-retry" and protocol != "h3":
                        continue
                    tree = proc_tree(servers[name].pid)
                    before, start = cpu_ticks(tree), time.monotonic()
                    rps, bad, client = run_client(h3load, protocol, ports[name], conns, m,
                                                  args.seconds, path, fresh)
                    elapsed = time.monotonic() - start
                    cpu = (cpu_ticks(tree) - before) / CLK_TCK / elapsed
                    if (label, name) not in best or rps > best[(label, name)]["rps"]:
                        best[(label, name)] = {"rps": rps, "cpu": cpu, "bad": bad,
                                               "client": client}
        peers = names[1:]
        head = f"{'workload':11} " + " ".join(f"{n + ' req/s':>12}" for n in names)
        head += "".join(f" {'x' + n:>7}" for n in peers)
        head += f"  {'server CPU':>{5 * len(names) - 1}}  {'client CPU':>{5 * len(names) - 1}}"
        head += f"  {'server us/req':>{7 * len(names) - 1}}"
        head += "".join(f" {'x' + n:>7}" for n in peers) + "  errors"
        print("\n" + head)
        none = {"rps": 0.0, "cpu": 0.0, "bad": 0, "client": 0.0}
        for label, *_ in WORKLOADS:
            r = {n: best.get((label, n), none) for n in names}
            us = {n: r[n]["cpu"] / r[n]["rps"] * 1e6 if r[n]["rps"] else float("nan")
                  for n in names}
            errors = ", ".join(f"{n} {r[n]['bad']}" for n in names if r[n]["bad"]) or "none"
            line = f"{label:11} " + " ".join(f"{r[n]['rps']:12.0f}" for n in names)
            line += "".join(f" {r['tern']['rps'] / r[n]['rps'] if r[n]['rps'] else float('nan'):7.2f}"
                            for n in peers)
            line += "  " + "/".join(f"{r[n]['cpu']:4.0%}" for n in names)
            line += "  " + "/".join(f"{r[n]['client']:4.0%}" for n in names)
            line += "  " + "/".join(f"{us[n]:6.1f}" for n in names)
            line += "".join(f" {us['tern'] / us[n] if r[n]['rps'] else float('nan'):7.2f}"
                            for n in peers)
            print(f"{line}  {errors}")
        loops = ("one event loop" if args.tern_threads == 1 else
                 f"{args.tern_threads} event loops sharing CPU 0, a UDP socket each")
        described = {"tern": f"tern: examples/live, {loops}",
                     "nginx": "nginx 1.26: one worker",
                     "nginx-retry": "nginx-retry: the same with quic_retry on (HTTP/3 rows)",
                     "caddy": "caddy: GOMAXPROCS=1"}
        print(f"\n(best of {args.rounds} interleaved rounds of {args.seconds} s each; servers on "
              f"CPU 0, the client on CPU 1; CPU and us/req columns in the order "
              f"{'/'.join(names)}; x<peer>: tern's figure divided by the peer's; "
              + "; ".join(described[n] for n in names) + "; h3load: GOMAXPROCS=1)")
    finally:
        stop_groups(servers.values())
        big.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""examples/gateway beside nginx's proxy_pass, in one run (docs/client.md, "Measured"): the
same upstream (examples/hello on CPU 1, serving "/" and ./public), each proxy pinned to CPU 0,
wrk on CPU 1 beside the upstream.

Workloads, each as interleaved rounds (gateway, nginx, gateway, nginx, ...):
  small        GET /api/ -> upstream "/" (24 bytes), kept-alive      wrk -t1 -c50
  file-1MiB    GET /api/file.bin -> a 1 MiB static file              wrk -t1 -c10
  upload-1GiB  POST /api/up, 1 GiB with Content-Length -> bench/lib/bulk_upstream.py, which
               reads and discards it                                 one Python client
  download-1GiB GET /api/bytes/1073741824 <- bulk_upstream.py        one Python client
The large transfers go through a second gateway and an nginx location on the bulk upstream
with `proxy_request_buffering off` and `proxy_buffering off` (nginx passes the body on as it
arrives, as the gateway does, instead of spooling it to its temp files); each is one
transfer per proxy and round, the Python client and upstream on CPU 1. They print MiB/s,
the proxy's CPU per GiB and its peak RSS.

And tern::client's own requests/s against wrk's, both on CPU 1 against the upstream alone
(`client` rows): examples/bench_app's bench_client_load, N threads each calling
fetch_blocking in a loop through one client, against `wrk -t1 -cN`.

nginx: `worker_processes 1`, an upstream block with `keepalive 64`, `proxy_http_version
1.1` and an empty Connection header (so it reuses upstream connections, as the gateway
does), `proxy_set_header X-Forwarded-For`, buffering on (its default). The gateway runs
with its default two threads, both on CPU 0. Prints requests/s, p99 latency, each proxy's
CPU over the run and its CPU per request; a shared 2-core machine is noisy (about +-30%),
so only ratios from one run mean anything.

    bench/gateway.py [--gateway build/examples/gateway/gateway]
                     [--hello build/examples/hello/hello]
                     [--client-load build/examples/bench_app/bench_client_load]
                     [--seconds 8] [--rounds 2] [--bulk-mib 1024] [--bulk-only]
"""
import argparse
import http.client
import json
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
                    status_fields, stop_groups)
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
    client_body_temp_path {work}/nb; proxy_temp_path {work}/np; fastcgi_temp_path {work}/nf;
    uwsgi_temp_path {work}/nu; scgi_temp_path {work}/ns;
    upstream up {{ server 127.0.0.1:{upstream}; keepalive 64; }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location /api/ {{
            proxy_pass http://up/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
    upstream bulk {{ server 127.0.0.1:{bulk}; keepalive 8; }}
    server {{
        listen 127.0.0.1:{bulk_port} backlog=4096;
        client_max_body_size 0;
        location /api/ {{
            proxy_pass http://bulk/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_request_buffering off;
            proxy_buffering off;
        }}
    }}
}}
"""

PIECE = memoryview(bytes(range(256)) * 4096)  # 1 MiB

WORKLOADS = [("small", "/api/", 50), ("file-1MiB", "/api/file.bin", 10)]


def wrk(url, connections, seconds):
    cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    out = subprocess.run(cmd + [url], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out)
    return rps, p99_ms, errors.group(0) if errors else ""


def transfer(port, kind, nbytes):
    """One upload or download of `nbytes` through the proxy on `port`: the seconds it took."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    start = time.monotonic()
    if kind == "upload":
        def pieces():
            left = nbytes
            while left > 0:
                k = min(left, len(PIECE))
                yield PIECE[:k]
                left -= k
        c.request("POST", "/api/up", body=pieces(), headers={"Content-Length": str(nbytes)})
        r = c.getresponse()
        got = int(r.read())
    else:
        c.request("GET", f"/api/bytes/{nbytes}")
        r = c.getresponse()
        got = 0
        sink = bytearray(1 << 20)
        while True:
            k = r.readinto(sink)
            if not k:
                break
            got += k
    took = time.monotonic() - start
    c.close()
    if r.status != 200 or got != nbytes:
        raise SystemExit(f"gateway.py: {kind} on {port}: status {r.status}, {got} of {nbytes}")
    return took


def wait_up(port, path):
    def answers_200():
        r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                            f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True)
        return r.stdout == "200"
    if not procs.poll_until(answers_200, 10):
        raise SystemExit(f"gateway.py: nothing answers 200 on {port}{path}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gateway", default="build/examples/gateway/gateway")
    ap.add_argument("--hello", default="build/examples/hello/hello")
    ap.add_argument("--client-load", default="build/examples/bench_app/bench_client_load")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--bulk-mib", type=int, default=1024)
    ap.add_argument("--bulk-only", action="store_true")
    args = ap.parse_args()
    for tool in ("wrk", "nginx", "taskset", "curl"):
        if not shutil.which(tool):
            raise SystemExit(f"gateway.py: {tool} is missing (scripts/install-deps.sh --bench)")
    raise_fd_limit(10000)
    work = Path(tempfile.mkdtemp(prefix="tern-bench-gateway-"))
    (work / "public").mkdir()
    (work / "public" / "file.bin").write_bytes(os.urandom(1 << 20))
    upstream, gw_port, nginx_port = free_port(), free_port(), free_port()
    bulk, bulk_gw_port, bulk_nginx_port = free_port(), free_port(), free_port()
    (work / "nginx.conf").write_text(
        NGINX_CONF.format(work=work, upstream=upstream, port=nginx_port, bulk=bulk,
                          bulk_port=bulk_nginx_port))
    procs = {}
    try:
        procs["upstream"] = groups.start(
            ["taskset", "-c", "1", os.path.abspath(args.hello), str(upstream)], cwd=work,
            stdout=subprocess.DEVNULL)
        wait_up(upstream, "/")
        procs["gateway"] = groups.start(
            ["taskset", "-c", "0", os.path.abspath(args.gateway), str(gw_port), "--upstream",
             f"http://127.0.0.1:{upstream}"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        procs["nginx"] = groups.start(
            ["taskset", "-c", "0", "nginx", "-c", work / "nginx.conf", "-p", work])
        procs["bulk"] = groups.start(
            ["taskset", "-c", "1", sys.executable,
             str(Path(__file__).resolve().parent / "lib" / "bulk_upstream.py"), str(bulk)])
        wait_up(bulk, "/")
        procs["bulk-gateway"] = groups.start(
            ["taskset", "-c", "0", os.path.abspath(args.gateway), str(bulk_gw_port),
             "--upstream", f"http://127.0.0.1:{bulk}"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        ports = {"gateway": gw_port, "nginx": nginx_port}
        for name in ports:
            wait_up(ports[name], "/api/")
        bulk_ports = {"gateway": bulk_gw_port, "nginx": bulk_nginx_port}
        bulk_procs = {"gateway": procs["bulk-gateway"], "nginx": procs["nginx"]}
        for name in bulk_ports:
            wait_up(bulk_ports[name], "/api/")
        results = {}
        bulk_results = {}
        nbytes = args.bulk_mib << 20
        os.sched_setaffinity(0, {1})  # this script's client beside the upstreams
        for kind in ("upload", "download"):
            for _ in range(args.rounds):
                for name in ("gateway", "nginx"):
                    tree = proc_tree(bulk_procs[name].pid)
                    before = cpu_ticks(tree)
                    took = transfer(bulk_ports[name], kind, nbytes)
                    cpu = (cpu_ticks(tree) - before) / CLK_TCK
                    hwm = max(status_fields(pid).get("VmHWM", 0) for pid in tree)
                    bulk_results.setdefault((kind, name), []).append(
                        (args.bulk_mib / took, cpu / (nbytes / (1 << 30)), hwm))
        workloads = [] if args.bulk_only else WORKLOADS
        for label, path, conns in workloads:
            for _ in range(args.rounds):
                for name in ("gateway", "nginx"):
                    tree = proc_tree(procs[name].pid)
                    before, start = cpu_ticks(tree), time.monotonic()
                    rps, p99, err = wrk(f"http://127.0.0.1:{ports[name]}{path}", conns,
                                        args.seconds)
                    elapsed = time.monotonic() - start
                    cpu = (cpu_ticks(tree) - before) / CLK_TCK
                    results.setdefault((label, name), []).append(
                        (rps, p99, cpu / elapsed, cpu / max(rps * elapsed, 1), err))
        # tern::client against wrk, on the upstream alone.
        client_rows = []
        for conns in () if args.bulk_only else (1, 8):
            best_client, best_wrk = 0.0, 0.0
            for _ in range(args.rounds):
                out = subprocess.run(
                    ["taskset", "-c", "1", os.path.abspath(args.client_load),
                     f"http://127.0.0.1:{upstream}/", str(conns), str(args.seconds)],
                    capture_output=True, text=True, check=True).stdout
                best_client = max(best_client, json.loads(out)["per_sec"])
                best_wrk = max(best_wrk, wrk(f"http://127.0.0.1:{upstream}/", conns,
                                             args.seconds)[0])
            client_rows.append((conns, best_client, best_wrk))
        print(f"\nbench/gateway.py, {args.rounds} round(s) of {args.seconds} s, best round each")
        if workloads:
            print(f"{'workload':10} {'proxy':8} {'req/s':>9} {'p99 ms':>7} {'CPU':>5} "
                  f"{'CPU/req':>8} {'ratio':>6}  errors")
        for label, _, _ in workloads:
            best = {name: max(results[(label, name)]) for name in ("gateway", "nginx")}
            for name in ("gateway", "nginx"):
                rps, p99, busy, per, err = best[name]
                ratio = rps / best["nginx"][0]
                print(f"{label:10} {name:8} {rps:9.0f} {p99:7.2f} {busy * 100:4.0f}% "
                      f"{per * 1e6:6.1f}us {ratio:5.2f}x  {err}")
        print(f"\n{'transfer':14} {'proxy':8} {'MiB/s':>7} {'CPU s/GiB':>10} "
              f"{'peak RSS KiB':>13} {'ratio':>6}   ({args.bulk_mib} MiB each)")
        for kind in ("upload", "download"):
            best = {name: max(bulk_results[(kind, name)]) for name in ("gateway", "nginx")}
            for name in ("gateway", "nginx"):
                rate, cpu, hwm = best[name]
                label = f"{kind}-{args.bulk_mib}M"
                print(f"{label:14} {name:8} {rate:7.0f} {cpu:10.2f} {hwm:13d} "
                      f"{rate / best['nginx'][0]:5.2f}x")
        if client_rows:
            print(f"\n{'client':10} {'conns':>5} {'tern::client req/s':>19} {'wrk req/s':>10} "
                  f"{'ratio':>6}")
        for conns, client_rps, wrk_rps in client_rows:
            print(f"{'blocking':10} {conns:5} {client_rps:19.0f} {wrk_rps:10.0f} "
                  f"{client_rps / wrk_rps:5.2f}x")
    finally:
        stop_groups(procs.values())
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

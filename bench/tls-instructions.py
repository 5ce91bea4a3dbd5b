#!/usr/bin/env python3
"""User-space instructions per new TLS connection (handshake and one request) on the server
side, tern beside nginx, counted by callgrind (docs/tls.md, "Resumption"; docs/performance.md).
Deterministic where bench/tls.py's rates are not.

    bench/tls-instructions.py [--hello build/examples/hello/hello] [--servers tern,nginx]
                              [--version 1.2] [--mode resume|full] [--seconds 2,6]

Each server runs under `valgrind --tool=callgrind` twice, while bench/peers/tls_load.c (built
by the script, outside valgrind: 20 connections, each a handshake and one `GET /`, then
closed, resuming by ticket in `resume` mode) runs for each of the two durations; the
difference in instructions over the difference in connections leaves out start-up and
shutdown. tern is examples/hello --cert --key, nginx 1.22 the configuration of bench/tls.py
(one process: `master_process off`). Kernel time is not counted. Needs valgrind, cc,
OpenSSL's headers, curl and nginx (scripts/install-deps.sh --bench).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))
from common import callgrind_total, free_port, self_signed_cert  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)


def nginx_conf(work, port):
    # bench/tls.py's configuration, in one process so that callgrind sees the worker's work.
    source = (HERE / "tls.py").read_text()
    conf = re.search(r'NGINX_CONF = """(.*?)"""', source, re.S).group(1)
    return "master_process off;\n" + conf.format(work=work, port=port)


def one_run(server, hello, work, load, version, mode, seconds):
    """(instructions, connections) of one server run."""
    port = free_port()
    out = f"callgrind.{server}.{seconds}"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / out}.%p"]
    if server == "tern":
        cmd = valgrind + [hello, str(port), "--cert", str(work / "cert.pem"),
                          "--key", str(work / "key.pem")]
        stop = signal.SIGINT
    else:
        (work / "nginx.conf").write_text(nginx_conf(work, port))
        cmd = valgrind + ["nginx", "-c", str(work / "nginx.conf"), "-p", str(work),
                          "-e", str(work / "nginx-error.log")]
        stop = signal.SIGQUIT  # nginx's graceful stop: callgrind writes its file
    proc = groups.start(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if subprocess.run(["curl", "-sk", "-o", "/dev/null",
                               f"https://127.0.0.1:{port}/"]).returncode == 0:
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"tls-instructions.py: {server} does not answer on {port}")
        said = subprocess.run([str(load), str(port), str(seconds), "20", version, mode],
                              capture_output=True, text=True, timeout=seconds + 60)
        result = json.loads(said.stdout)
    finally:
        os.killpg(proc.pid, stop)
        proc.wait(120)
    return callgrind_total(work, out), result["handshakes"], result["resumed"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hello", default="build/examples/hello/hello")
    ap.add_argument("--servers", default="tern,nginx")
    ap.add_argument("--version", default="1.2", choices=["1.2", "1.3"])
    ap.add_argument("--mode", default="resume", choices=["resume", "full"])
    ap.add_argument("--seconds", default="2,6")
    args = ap.parse_args()
    servers = args.servers.split(",")
    short, long_ = (int(s) for s in args.seconds.split(","))
    for tool in ["valgrind", "cc", "curl"] + (["nginx"] if "nginx" in servers else []):
        if not shutil.which(tool):
            raise SystemExit(f"tls-instructions.py: {tool} is missing")
    work = Path(tempfile.mkdtemp(prefix="tern-bench-tlsi-"))
    (work / "public").mkdir()
    self_signed_cert(work)
    load = work / "tls_load"
    subprocess.run(["cc", "-O2", "-o", load, HERE / "peers" / "tls_load.c", "-lssl", "-lcrypto"],
                   check=True)
    hello = os.path.abspath(args.hello)
    results = {}
    for server in servers:
        (i1, c1, r1), (i2, c2, r2) = (one_run(server, hello, work, load, args.version, args.mode, s)
                                      for s in (short, long_))
        results[server] = (i2 - i1) / (c2 - c1)
        print(f"{server:6} {results[server]:11,.0f} instructions per TLS {args.version} "
              f"{args.mode} connection ({c1} and {c2} connections, {r1 + r2} resumed)", flush=True)
    if "tern" in results and "nginx" in results:
        print(f"tern / nginx: {results['tern'] / results['nginx']:.2f}x")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

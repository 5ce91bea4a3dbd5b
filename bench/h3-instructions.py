#!/usr/bin/env python3
"""Where an HTTP/3 request's cost goes on the server, tern beside nginx 1.26 (issue 54's
profile; docs/performance.md, "HTTP/3: where a request's cost goes").

    bench/h3-instructions.py [--live build/examples/live/live] [--servers tern,nginx]
                             [--requests 1000,4000] [--split] [--kernel-seconds 5]
                             [--nginx PATH]

Two measures, because QUIC's cost is split between user space and the kernel:

1. User-space instructions per request, counted by callgrind (deterministic: a busy machine
   gives about the same counts). Each server runs under `valgrind --tool=callgrind` twice,
   and bench/peers/h3load (outside valgrind) sends N GETs of the same 1,400-byte static file
   over HTTP/3 (`-c 10 -m 10 -n N`); the difference of the two runs divided by the difference
   in requests leaves out start-up, the handshakes and the shutdown. `--split` prints tern's
   per library (ngtcp2, GnuTLS and its nettle, nghttp3, libc, tern's own code in the
   program) and its 25 busiest functions (Debian's ngtcp2, nghttp3 and GnuTLS are stripped
   to their exported names: their internal functions show as addresses).
2. User and system CPU per request (`--kernel-seconds`, 0 skips it): each server runs
   natively on CPU 0 under h3load -c 10 -m 10 for that many seconds on CPU 1, and its
   utime and stime (/proc) are divided by the requests answered. The system share is the
   UDP send and receive path that callgrind does not see; on a shared machine only the
   ratios mean anything (about +-30%).
3. System calls per request (`--syscalls`): `strace -f -c` attached to each server, run
   natively, while h3load sends a fixed number of requests (strace slows the server; the
   counts are what matter): how many sendmsg/recvmsg/epoll calls one request costs.

tern runs examples/live --cert --key --http3 (bench/h3.py's tern); nginx 1.26 with bench/h3.py's
configuration and `master_process off` (one process, which valgrind follows). Needs valgrind,
callgrind_annotate, go (h3load), openssl, taskset; nginx 1.26 is fetched by
bench/lib/nginx126.sh unless --nginx names one.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))
sys.path.insert(0, str(HERE))
from common import (CLK_TCK, callgrind_total, exclusive_by_function, free_port,  # noqa: E402
                    self_signed_cert)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)
import h3  # noqa: E402  (bench/h3.py: nginx's configuration, the h3load build)

def library_of(obj, program):
    if obj == "?":
        return "unnamed"
    if obj == program:
        return f"{program} (tern's own code, static)"
    return re.sub(r"\.so[.\d]*$", "", obj)


def print_split(low, high, requests, program):
    per = {k: (high.get(k, 0) - low.get(k, 0)) / requests for k in set(low) | set(high)}
    libraries = {}
    for (obj, _), n in per.items():
        name = library_of(obj, program)
        libraries[name] = libraries.get(name, 0) + n
    print("  by library (exclusive instructions per request):")
    for name, n in sorted(libraries.items(), key=lambda kv: -kv[1]):
        if n >= 1:
            print(f"  {n:9,.0f}  {name}")
    top = sorted(per.items(), key=lambda kv: -kv[1])[:25]
    print("  the 25 busiest functions:")
    for (obj, fn), n in top:
        print(f"  {n:9,.0f}  {fn[:90]}  [{library_of(obj, program)}]")


def server_command(server, args, work, port):
    if server == "tern":
        return [os.path.abspath(args.live), str(port), "--cert", str(work / "cert.pem"),
                "--key", str(work / "key.pem"), "--http3"]
    conf = "master_process off;\n" + h3.NGINX_CONF.format(work=work, port=port,
                                                          public=h3.PUBLIC)
    (work / "nginx.conf").write_text(conf)
    return [args.nginx, "-c", str(work / "nginx.conf"), "-p", str(work), "-e",
            str(work / "nginx-error.log")]


def wait_h3(h3load, port, proc):
    url = f"https://127.0.0.1:{port}/index.html"
    for _ in range(120):
        if proc.poll() is not None:
            raise SystemExit("h3-instructions.py: the server exited")
        said = subprocess.run([str(h3load), "-c", "1", "-m", "1", "-n", "1", url],
                              capture_output=True, text=True, timeout=60).stdout
        if re.search(r"h3load: 1 requests, 0 errors", said):
            return
        time.sleep(0.5)
    raise SystemExit(f"h3-instructions.py: nothing answers HTTP/3 on {port}")


def stop(server, proc):
    os.killpg(proc.pid, signal.SIGINT if server == "tern" else signal.SIGQUIT)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def callgrind_run(server, args, work, h3load, env, requests):
    """(instructions, requests that succeeded) of one run under callgrind."""
    port = free_port()
    out = f"callgrind.{server}.{requests}"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / out}.%p"]
    proc = groups.start(cmd + server_command(server, args, work, port), cwd=work,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_h3(h3load, port, proc)
        said = subprocess.run([str(h3load), "-c", "10", "-m", "10", "-n", str(requests),
                               f"https://127.0.0.1:{port}/index.html"],
                              capture_output=True, text=True, timeout=1800).stdout
        ok = re.search(r"h3load: (\d+) requests, (\d+) errors", said)
        if not ok:
            raise SystemExit(f"h3-instructions.py: h3load said:\n{said}")
    finally:
        stop(server, proc)
    # wait_h3's request is counted in both runs alike.
    return callgrind_total(work, out), int(ok.group(1))


def times_of(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        rest = f.read().rsplit(b")", 1)[1].split()
    return int(rest[11]), int(rest[12])  # utime, stime (fields 14 and 15)


def kernel_run(server, args, work, h3load, env):
    """(requests per second, user µs per request, system µs per request), natively."""
    port = free_port()
    proc = groups.start(["taskset", "-c", "0"] + server_command(server, args, work, port),
                        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        env=env)
    try:
        wait_h3(h3load, port, proc)
        u0, s0 = times_of(proc.pid)
        said = subprocess.run(["taskset", "-c", "1", str(h3load), "-c", "10", "-m", "10", "-d",
                               str(args.kernel_seconds), f"https://127.0.0.1:{port}/index.html"],
                              capture_output=True, text=True, timeout=args.kernel_seconds + 60,
                              env=dict(os.environ, GOMAXPROCS="1")).stdout
        u1, s1 = times_of(proc.pid)
        m = re.search(r"h3load: (\d+) requests, (\d+) errors, ([\d.]+) req/s", said)
        if not m:
            raise SystemExit(f"h3-instructions.py: h3load said:\n{said}")
    finally:
        stop(server, proc)
    n = int(m.group(1))
    return (float(m.group(3)), (u1 - u0) / CLK_TCK / n * 1e6, (s1 - s0) / CLK_TCK / n * 1e6)


def udp_datagrams():
    """(datagrams received, datagrams sent) by this host's UDP so far (/proc/net/snmp)."""
    lines = [line.split() for line in Path("/proc/net/snmp").read_text().splitlines()
             if line.startswith("Udp:")]
    fields = dict(zip(lines[0][1:], (int(v) for v in lines[1][1:])))
    return fields["InDatagrams"], fields["OutDatagrams"]


def syscall_run(server, args, work, h3load, env, requests):
    """{system call: calls per request} for `requests` GETs, strace attached natively."""
    port = free_port()
    proc = groups.start(server_command(server, args, work, port), cwd=work,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    summary = work / f"strace.{server}"
    try:
        wait_h3(h3load, port, proc)
        # Every thread of the server (tern's event loops), not only its first.
        threads = [arg for tid in os.listdir(f"/proc/{proc.pid}/task") for arg in ("-p", tid)]
        tracer = subprocess.Popen(["strace", "-f", "-c", "-o", str(summary)] + threads,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)  # attached to every thread before the load starts
        in0, out0 = udp_datagrams()
        said = subprocess.run([str(h3load), "-c", "10", "-m", "10", "-n", str(requests),
                               f"https://127.0.0.1:{port}/index.html"],
                              capture_output=True, text=True, timeout=600).stdout
        in1, out1 = udp_datagrams()
        tracer.send_signal(signal.SIGINT)
        tracer.wait(60)
        ok = re.search(r"h3load: (\d+) requests", said)
        if not ok:
            raise SystemExit(f"h3-instructions.py: h3load said:\n{said}")
    finally:
        stop(server, proc)
    calls = {}
    for line in summary.read_text().splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors,] syscall
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3]) / int(ok.group(1))
    return calls, (in1 - in0) / int(ok.group(1)), (out1 - out0) / int(ok.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--live", default="build/examples/live/live")
    ap.add_argument("--servers", default="tern,nginx")
    ap.add_argument("--requests", default="1000,4000")
    ap.add_argument("--split", action="store_true", help="tern's instructions by library and work")
    ap.add_argument("--kernel-seconds", type=int, default=5)
    ap.add_argument("--syscalls", type=int, default=0, metavar="REQUESTS",
                    help="count system calls per request over this many requests (0: not)")
    ap.add_argument("--nginx", help="nginx with http_v3_module (default: bench/lib/nginx126.sh's)")
    args = ap.parse_args()
    servers = args.servers.split(",")
    for tool in ("valgrind", "callgrind_annotate", "go", "openssl", "taskset"):
        if not shutil.which(tool):
            raise SystemExit(f"h3-instructions.py: {tool} is missing")
    envs = {"tern": dict(os.environ)}
    if "nginx" in servers:
        if not args.nginx:
            fetched = subprocess.run([str(HERE / "lib/nginx126.sh")], stdout=subprocess.PIPE,
                                     text=True)
            if fetched.returncode != 0:
                raise SystemExit("h3-instructions.py: nginx 1.26 could not be fetched")
            args.nginx = fetched.stdout.strip()
        root = Path(args.nginx).resolve().parent.parent.parent
        envs["nginx"] = dict(os.environ, LD_LIBRARY_PATH=f"{root}/usr/lib/x86_64-linux-gnu:"
                             f"{root}/lib/x86_64-linux-gnu")
    low, high = (int(n) for n in args.requests.split(","))
    work = Path(tempfile.mkdtemp(prefix="tern-bench-h3i-"))
    try:
        self_signed_cert(work)
        for d in ("nb", "np", "nf", "nu", "ns"):
            (work / d).mkdir()
        h3load = h3.build_h3load(work)
        results = {}
        for server in servers:
            (i1, ok1), (i2, ok2) = (callgrind_run(server, args, work, h3load, envs[server], n)
                                    for n in (low, high))
            results[server] = (i2 - i1) / (ok2 - ok1)
            print(f"{server:6} {results[server]:9,.0f} user-space instructions per request"
                  f" ({i1:,} for {ok1} requests, {i2:,} for {ok2})", flush=True)
            if args.split and server == "tern":
                print_split(exclusive_by_function(work, f"callgrind.tern.{low}"),
                            exclusive_by_function(work, f"callgrind.tern.{high}"), ok2 - ok1,
                            Path(args.live).name)
        if "tern" in results and "nginx" in results:
            print(f"tern / nginx: {results['tern'] / results['nginx']:.2f}x instructions")
        if args.kernel_seconds > 0:
            print(f"\nnatively, h3load -c10 -m10 for {args.kernel_seconds} s (server on CPU 0, "
                  "client on CPU 1):")
            for server in servers:
                rps, user, system = kernel_run(server, args, work, h3load, envs[server])
                print(f"{server:6} {rps:9,.0f} req/s  user {user:5.1f} µs + system {system:5.1f}"
                      f" µs per request (system {system / (user + system):.0%})", flush=True)
        if args.syscalls > 0:
            runs = {server: syscall_run(server, args, work, h3load, envs[server],
                                        args.syscalls) for server in servers}
            counted = {server: run[0] for server, run in runs.items()}
            names = sorted({c for calls in counted.values() for c in calls},
                           key=lambda c: -max(calls.get(c, 0) for calls in counted.values()))
            print(f"\nsystem calls per request (strace -c, {args.syscalls} requests):")
            print(f"  {'':16}" + "".join(f"{s:>9}" for s in servers))
            for name in names:
                if max(calls.get(name, 0) for calls in counted.values()) >= 0.01:
                    print(f"  {name:16}" + "".join(f"{counted[s].get(name, 0):9.2f}"
                                                   for s in servers))
            print(f"  {'all':16}" + "".join(f"{sum(counted[s].values()):9.2f}" for s in servers))
            print("UDP datagrams per request, client and server together (/proc/net/snmp, "
                  "host-wide):")
            print(f"  {'received':16}" + "".join(f"{runs[s][1]:9.2f}" for s in servers))
            print(f"  {'sent':16}" + "".join(f"{runs[s][2]:9.2f}" for s in servers))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

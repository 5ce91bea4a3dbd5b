"""wrk workloads and the measurements around them."""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import BENCH, CLK_TCK, HELLO, cpu_busy_ticks, cpu_ticks, log, mem_of, parse_cpus, proc_tree
from servers import Peer, Peers, stop_proc

# ---- wrk -----------------------------------------------------------------------------------

@dataclass
class Workload:
    key: str
    title: str
    path: str
    threads: int
    conns: int
    script: str | None = None
    script_args: tuple = ()
    latency: bool = True
    needs: str = ""          # "post" or "static"
    seed: str = ""


def make_workloads(args) -> list[Workload]:
    lt = max(1, len(parse_cpus(args.load_cpus)))
    ws = [
        Workload("levtus", "Levtus: keep-alive GET /", "/", 4, 400,
                 seed="Levtus: `wrk -t4 -c400 -d30s --latency`"),
        # One wrk thread per load CPU (issue 21): with -t4 on one core wrk saturated first and
        # hid the server's cost; one thread on its own core leaves wrk room to spare.
        Workload("pipeline", "pipelined GET /, 16 deep", "/", lt, 128, "pipeline.lua", ("/", "16"),
                 latency=False,
                 seed="light-4j: `wrk -t4 -c128 -d30s -s pipeline.lua --latency -- / 16`"),
        Workload("keepalive", "keep-alive GET /", "/", lt, 100,
                 seed="Java framework comparison: health endpoint at 100 connections"),
        Workload("post", "POST /login, small JSON", "/login", lt, 50, "post.lua", needs="post",
                 seed="Go-vs-Java JWT login: `wrk -s post.lua -t8 -c50`"),
        Workload("static-small", "static file, 1 KiB", "/static/small.bin", lt, 100,
                 needs="static"),
        Workload("static-large", "static file, 10 MiB", "/static/large.bin", lt, 10,
                 needs="static"),
    ]
    for spec in args.conns:
        k, _, v = spec.partition("=")
        for w in ws:
            if w.key == k:
                w.conns = int(v)
    for spec in args.wrk_threads:
        k, _, v = spec.partition("=")
        for w in ws:
            if w.key == k:
                w.threads = int(v)
    wanted = args.workloads.split(",") if args.workloads else [w.key for w in ws]
    return [w for w in ws if w.key in wanted]


def wrk_command(w: Workload, port: int, duration: float) -> list[str]:
    # wrk takes whole seconds (it reads "0.5s" as 0).
    cmd = ["wrk", f"-t{min(w.threads, w.conns)}", f"-c{w.conns}", f"-d{max(1, round(duration))}s"]
    if w.latency:
        cmd.append("--latency")
    url = f"http://127.0.0.1:{port}"
    if w.script:
        cmd += ["-s", str(BENCH / "wrk" / w.script)]
    if w.script_args:
        cmd += [url, "--", *w.script_args]
    else:
        cmd.append(url + w.path)
    return cmd


def display_command(w: Workload, duration: float) -> str:
    cmd = wrk_command(w, 8080, duration)
    return " ".join(c.replace(str(BENCH) + "/", "bench/") for c in cmd)


UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def parse_wrk(text: str) -> dict:
    r = {"rps": 0.0, "requests": 0, "errors": 0, "timeouts": 0, "non2xx": 0,
         "p50": None, "p99": None}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if m:
        r["rps"] = float(m.group(1))
    m = re.search(r"(\d+) requests in", text)
    if m:
        r["requests"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        c, rd, wr, to = map(int, m.groups())
        r["errors"] = c + rd + wr
        r["timeouts"] = to
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        r["non2xx"] = int(m.group(1))
    for pct in ("50", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
        if m:
            r["p" + pct] = float(m.group(1)) * UNIT_MS[m.group(2)]
    return r


def run_wrk(cmd: list[str]) -> tuple[str, float]:
    """Runs wrk; returns its output and the CPU seconds it used."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:  # SIGTERM or SIGINT while waiting: wrk must not outlive us
            p.kill()
            p.wait()
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if p.returncode != 0:
        text += f"\n(wrk exited with {p.returncode})"
    return text, ru.ru_utime + ru.ru_stime


# ---- measurements --------------------------------------------------------------------------

def measure_run(peer: Peer, w: Workload, duration: float, server_cpus: list[int]) -> dict:
    pids = proc_tree(peer.proc.pid)
    busy0, total0 = cpu_busy_ticks(server_cpus)
    t0 = cpu_ticks(pids)
    wall0 = time.monotonic()
    text, wrk_cpu = run_wrk(wrk_command(w, peer.port, duration))
    wall = time.monotonic() - wall0
    t1 = cpu_ticks(pids)
    busy1, total1 = cpu_busy_ticks(server_cpus)
    r = parse_wrk(text)
    server_cpu_s = (t1 - t0) / CLK_TCK
    r["server_cpu_pct"] = 100.0 * server_cpu_s / wall
    r["us_per_req"] = (1e6 * server_cpu_s / r["requests"]) if r["requests"] else None
    r["wrk_cpu_pct"] = 100.0 * wrk_cpu / wall
    # Busy time on the server CPUs that was not the server's: other processes (noise).
    elapsed_ticks = max(1, total1 - total0)
    r["other_pct"] = max(0.0, 100.0 * ((busy1 - busy0) - (t1 - t0)) / elapsed_ticks)
    r["alive"] = peer.proc.poll() is None
    r["mem"] = mem_of(proc_tree(peer.proc.pid)) if r["alive"] else {}
    r["raw"] = text
    return r


def startup_times(peers: Peers, name: str, n: int, base_port: int,
                  server_cpus: list[int]) -> list[float]:
    """Milliseconds from exec to the first 200 "Hello, World!", n times (fresh port each)."""
    times = []
    own = os.sched_getaffinity(0)
    try:
        for i in range(n):
            port = base_port + i
            t0 = time.perf_counter()
            # The child inherits the affinity at fork (no taskset exec in the way); this
            # process goes back to the load CPUs to poll.
            os.sched_setaffinity(0, server_cpus)
            try:
                p = peers.spawn(name, port, None, None)
            finally:
                os.sched_setaffinity(0, own)
            ok = False
            deadline = t0 + 5.0
            while time.perf_counter() < deadline and p.poll() is None:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
                        s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                        data = b""
                        while not data.endswith(HELLO):
                            chunk = s.recv(4096)
                            if not chunk:
                                break
                            data += chunk
                        if data.startswith(b"HTTP/1.1 200") and data.endswith(HELLO):
                            ok = True
                            break
                except OSError:
                    time.sleep(0.0002)
            elapsed = (time.perf_counter() - t0) * 1000
            stop_proc(p)
            if not ok:
                break  # it does not start; wait_ready later says why
            times.append(elapsed)
    finally:
        os.sched_setaffinity(0, own)
    return times


def idle_connections(port: int, n: int, deadline_s: float = 20.0) -> tuple[int, list]:
    """Opens n keep-alive connections, makes one request on each, keeps them open.
    Returns (how many were answered, the sockets: the caller closes them)."""
    sel = selectors.DefaultSelector()
    socks, answered = [], 0
    req = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    end = time.monotonic() + deadline_s
    pending = 0
    for _ in range(n):
        if time.monotonic() > end:
            break
        s = socket.socket()
        s.settimeout(2.0)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(req)
        except OSError:
            s.close()
            continue
        s.setblocking(False)
        socks.append(s)
        sel.register(s, selectors.EVENT_READ, [b""])
        pending += 1
        # Keep the number awaiting an answer bounded, as a pool of clients would.
        while pending > 256 and time.monotonic() < end:
            for key, _ in sel.select(0.5):
                answered, pending = _read_one(sel, key, answered, pending)
    while pending and time.monotonic() < end:
        events = sel.select(0.5)
        for key, _ in events:
            answered, pending = _read_one(sel, key, answered, pending)
    sel.close()
    return answered, socks


def _read_one(sel, key, answered, pending):
    s = key.fileobj
    try:
        chunk = s.recv(4096)
    except BlockingIOError:
        return answered, pending
    except OSError:
        chunk = b""
    if not chunk:
        sel.unregister(s)
        return answered, pending - 1
    key.data[0] += chunk
    if key.data[0].endswith(HELLO):
        sel.unregister(s)
        return answered + 1, pending - 1
    return answered, pending


def run_micro(args, out_dir: Path) -> list[dict]:
    exe = Path(args.build_dir) / "micro" / "tern_micro"
    if not exe.exists():
        log("micro-benchmarks: tern_micro was not built; skipped")
        return []
    out = out_dir / "micro.json"
    cmd = ["taskset", "-c", args.server_cpus, str(exe), f"--benchmark_min_time={args.micro_min_time}",
           "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true",
           f"--benchmark_out={out}", "--benchmark_out_format=json"]
    log("micro-benchmarks:", " ".join(cmd[3:5]))
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if not out.exists():
        return []
    data = json.loads(out.read_text())
    rows = []
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name") != "median":
            continue
        items = b.get("items_per_second")
        rows.append({"name": b["run_name"], "ns": b["real_time"] if b["time_unit"] == "ns" else None,
                     "time": b["real_time"], "unit": b["time_unit"],
                     "ns_per_item": (1e9 / items) if items else None})
    return rows

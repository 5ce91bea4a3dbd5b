#!/usr/bin/env python3
"""WebSocket, measured: echo round trips and messages, memory per idle connection, fan-out.

    bench/ws.py [--quick] [--peers tern,node,python] [options]

Builds examples/bench_app's bench_live_app (Release, in bench/run.sh's build folder) and the
load generator bench/peers/ws_load.c unless --no-build, then runs, in interleaved rounds, each
server on a fresh process pinned to --server-cpus (CPU 1), the load generator pinned to
--load-cpus (CPU 0):

  tern    bench_live_app --threads 1 (/ws/echo, /ws/feed, /ws/control)
  node    bench/peers/node/ws.js: Debian's node-ws on Node's http server, one event loop
  python  bench/peers/python/ws_server.py: Debian's python3-websockets on asyncio

Every server runs without permessage-deflate (tern's default) and does the same work.

  idle    --idle-conns upgraded WebSocket connections held silent: the server's RSS over
          its RSS before them, per connection
  rtt     --conns connections each with one 32-byte text message in flight (an echo, then
          the next): round trips per second, the round trip's median and 99th percentile,
          server CPU per message
  burst   --conns connections each with --depth messages in flight: messages per second
  fanout  --fanout-conns connections on /ws/feed; one message of 64 bytes broadcast to all
          of them, and the next as soon as every one has it: deliveries per second and the
          time for one broadcast to reach every connection (median, p99)

The load generator is one C epoll loop (bench/peers/ws_load.c); its CPU seconds are in the
report, so a phase it bounds can be told. Tests never assert on these figures; ratios hold
within one run only (see bench/README.md, "Method"). Results: bench/results/ws-<date>/
(results.json, report.md, server logs). The default run takes about 6 minutes, --quick one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from common import BENCH, CLK_TCK, cpu_ticks, free_port, log, machine_info, mem_of, parse_cpus, proc_tree, raise_fd_limit  # noqa: E402
from report import fmt_num, fmt_x, med  # noqa: E402
from servers import stop_proc, wait_ready  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

PEERS = ("tern", "node", "python")


class Server:
    """One server process, pinned, with its /proc readings."""

    def __init__(self, name: str, a, out: Path):
        self.name = name
        self.port = free_port()
        env = dict(os.environ)
        if name == "tern":
            cmd = [str(Path(a.build_dir) / "tern/examples/bench_app/bench_live_app"), "--threads",
                   "1", str(self.port)]
        elif name == "node":
            env["NODE_PATH"] = "/usr/share/nodejs"
            cmd = ["node", str(BENCH / "peers/node/ws.js"), str(self.port)]
        else:
            cmd = ["/usr/bin/python3", str(BENCH / "peers/python/ws_server.py"), str(self.port)]
        with open(out / f"{name}.log", "ab") as log_file:
            self.proc = groups.start(["taskset", "-c", a.server_cpus] + cmd, env=env,
                                     stdout=log_file, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        if not wait_ready(self.proc, self.port, timeout=15):
            self.stop()
            raise RuntimeError(f"{name} did not answer GET / (see {out / (name + '.log')})")

    def rss_kib(self) -> int:
        return mem_of(proc_tree(self.proc.pid)).get("VmRSS", 0)

    def cpu_s(self) -> float:
        return cpu_ticks(proc_tree(self.proc.pid)) / CLK_TCK

    def stop(self):
        stop_proc(self.proc)


def available(name: str, a) -> str:
    if name == "tern":
        p = Path(a.build_dir) / "tern/examples/bench_app/bench_live_app"
        return "" if p.exists() else f"{p} was not built"
    if name == "node":
        if not shutil.which("node"):
            return "`node` is not installed"
        return "" if Path("/usr/share/nodejs/ws").exists() else "node-ws is not installed"
    r = subprocess.run(["/usr/bin/python3", "-c", "import websockets"], capture_output=True)
    return "" if r.returncode == 0 else "python3-websockets is not installed"


def build(a):
    bd = Path(a.build_dir)
    bd.mkdir(parents=True, exist_ok=True)
    with open(bd / "ws-build.log", "wb") as f:
        if not (bd / "build.ninja").exists():
            subprocess.run(["cmake", "-S", str(BENCH / "superbuild"), "-B", str(bd), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release"], stdout=f, stderr=subprocess.STDOUT,
                           check=True)
        subprocess.run(["nice", "cmake", "--build", str(bd), "--target", "bench_live_app",
                        "ws_load"], stdout=f, stderr=subprocess.STDOUT, check=True)


def load_cmd(a, port: int, *args) -> list[str]:
    return ["taskset", "-c", a.load_cpus, str(Path(a.build_dir) / "ws_load"), str(port),
            *map(str, args)]


def run_load(a, srv: Server, *args) -> dict:
    """Runs ws_load to its end; adds the server's CPU seconds over the run."""
    cpu0 = srv.cpu_s()
    r = subprocess.run(load_cmd(a, srv.port, *args), capture_output=True, text=True,
                       timeout=240)
    cpu = srv.cpu_s() - cpu0
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"ws_load {' '.join(map(str, args))}: {r.stderr.strip()[-300:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    res["server_cpu_s"] = cpu
    res["server_us_per_msg"] = cpu / res["messages"] * 1e6 if res.get("messages") else None
    return res


def phase_idle(a, srv: Server) -> dict:
    time.sleep(0.3)
    before = srv.rss_kib()
    p = subprocess.Popen(load_cmd(a, srv.port, "idle", a.idle_conns, 60), stdout=subprocess.PIPE,
                         text=True)
    try:
        line = p.stdout.readline()
        res = json.loads(line) if line.strip() else {"connected": 0, "failed": a.idle_conns}
        time.sleep(1.0)
        held = srv.rss_kib()
    finally:
        p.kill()
        p.wait()
    n = res.get("connected", 0)
    res.update(rss_before_kib=before, rss_held_kib=held,
               bytes_per_conn=(held - before) * 1024 / n if n else None)
    return res


def one_round(name: str, a, out: Path) -> dict:
    srv = Server(name, a, out)
    res: dict = {}
    try:
        for phase in a.phases:
            try:
                if phase == "idle":
                    res["idle"] = phase_idle(a, srv)
                elif phase == "rtt":
                    res["rtt"] = run_load(a, srv, "echo", a.conns, a.seconds, 32, 1)
                elif phase == "burst":
                    res["burst"] = run_load(a, srv, "echo", a.conns, a.seconds, 32, a.depth)
                elif phase == "fanout":
                    res["fanout"] = run_load(a, srv, "feed", a.fanout_conns, a.seconds, 64)
                time.sleep(0.5)  # closed connections leave the server before the next phase
            except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
                log(f"{name} {phase}: {e}")
                res[phase] = {"error": str(e)}
            if srv.proc.poll() is not None:
                res["crashed"] = True
                break
    finally:
        srv.stop()
    return res


def values(runs: list[dict], phase: str, key: str) -> list[float]:
    return [r[phase][key] for r in runs
            if isinstance(r.get(phase), dict) and r[phase].get(key) is not None]


def report(a, res: dict, info: dict, command: str) -> str:
    peers = [p for p in a.peers if p in res["runs"]]
    lines = [f"# WebSocket: tern beside Node's ws and Python's websockets ({info['date']})", "",
             f"`{command}` on {info['model']} ({info['cpus']} CPUs), commit {info['commit']}"
             f"{' (dirty: ' + ', '.join(info['dirty']) + ')' if info['dirty'] else ''}; "
             f"servers on CPU {a.server_cpus}, the load generator on CPU {a.load_cpus}; "
             f"{a.rounds} interleaved round(s), each server fresh per round; medians of the rounds.",
             ""]
    for name, why in res.get("left_out", {}).items():
        lines.append(f"- {name} left out: {why}")
    rows = [
        ("idle", "bytes_per_conn", f"memory per idle WebSocket ({a.idle_conns:,} held), bytes", 0, False),
        ("rtt", "per_s", f"echo round trips/s ({a.conns:,} connections, 1 in flight, 32 B)", 0, True),
        ("rtt", "p50_us", "round trip median, µs", 0, False),
        ("rtt", "p99_us", "round trip p99, µs", 0, False),
        ("rtt", "server_us_per_msg", "server CPU per round trip, µs", 2, False),
        ("rtt", "client_cpu_s", "load generator CPU, s", 2, False),
        ("burst", "per_s", f"echo messages/s ({a.conns:,} connections, {a.depth} in flight)", 0, True),
        ("burst", "server_us_per_msg", "server CPU per message, µs", 2, False),
        ("burst", "client_cpu_s", "load generator CPU, s", 2, False),
        ("fanout", "per_s", f"broadcast deliveries/s ({a.fanout_conns:,} clients, 64 B)", 0, True),
        ("fanout", "p50_us", f"one broadcast to all {a.fanout_conns:,}: median, ms", 0, False),
        ("fanout", "p99_us", "one broadcast to all: p99, ms", 0, False),
        ("fanout", "server_us_per_msg", "server CPU per delivery, µs", 2, False),
        ("fanout", "client_cpu_s", "load generator CPU, s", 2, False),
    ]
    head = "| | " + " | ".join(peers) + " | " + " | ".join(f"tern ÷ {p}" for p in peers if p != "tern") + " |"
    lines += ["", head, "|---" * (1 + len(peers) + len([p for p in peers if p != "tern"])) + "|"]
    for phase, key, label, digits, _higher in rows:
        if phase not in a.phases:
            continue
        meds = {}
        for p in peers:
            vs = values(res["runs"][p], phase, key)
            if key in ("p50_us", "p99_us") and phase == "fanout":
                vs = [v / 1000 for v in vs]
            meds[p] = med(vs) if vs else None
        cells = [fmt_num(meds[p], digits) if meds[p] is not None else "–" for p in peers]
        ratios = []
        for p in peers:
            if p == "tern":
                continue
            t, o = meds.get("tern"), meds.get(p)
            ratios.append(fmt_x(t / o) if t and o else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    failures = []
    for p in peers:
        for r in res["runs"][p]:
            for phase in a.phases:
                d = r.get(phase, {})
                if d.get("error") or d.get("failed"):
                    failures.append(f"{p} {phase}: {d.get('error') or str(d.get('failed')) + ' connections failed'}")
            if r.get("crashed"):
                failures.append(f"{p}: the server exited during the round")
    lines += ["", "Ratios are tern's figure over the peer's (for rates higher is better for tern; "
              "for times, memory and CPU lower is). Rates, connection counts and the load "
              "generator's own CPU seconds are in results.json."]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {f}" for f in failures]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 round, smaller counts, ~1 minute")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--phases", default="idle,rtt,burst,fanout")
    ap.add_argument("--rounds", type=int, default=None, help="default 3 (quick 1)")
    ap.add_argument("--seconds", type=float, default=None, help="per measured phase (default 5, quick 2)")
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--idle-conns", type=int, default=None, help="default 10000 (quick 2000)")
    ap.add_argument("--fanout-conns", type=int, default=None, help="default 10000 (quick 2000)")
    ap.add_argument("--server-cpus", default="1")
    ap.add_argument("--load-cpus", default="0")
    ap.add_argument("--build-dir", default=str(BENCH / "results" / "build"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    for k, full, quick in (("rounds", 3, 1), ("seconds", 5.0, 2.0), ("idle_conns", 10000, 2000),
                           ("fanout_conns", 10000, 2000)):
        if getattr(a, k) is None:
            setattr(a, k, quick if a.quick else full)
    a.peers = a.peers.split(",")
    a.phases = a.phases.split(",")
    if set(a.phases) - {"idle", "rtt", "burst", "fanout"}:
        ap.error("--phases takes idle, rtt, burst, fanout")
    command = "bench/ws.py " + " ".join(sys.argv[1:])
    os.sched_setaffinity(0, parse_cpus(a.load_cpus))
    limit, note = raise_fd_limit(max(a.idle_conns, a.fanout_conns, a.conns) + 512)
    if note:
        log(f"warning: {note}; fewer connections may open (RLIMIT_NOFILE {limit})")
    out = Path(a.out or BENCH / "results" / f"ws-{dt.datetime.now():%Y-%m-%d-%H%M}")
    out.mkdir(parents=True, exist_ok=True)
    if not a.no_build:
        log("building bench_live_app (Release) and ws_load into", a.build_dir)
        build(a)
    info = machine_info(a)
    res: dict = {"args": vars(a), "command": command, "machine": info, "runs": {},
                 "left_out": {}}
    for p in list(a.peers):
        why = available(p, a)
        if why:
            res["left_out"][p] = why
            a.peers.remove(p)
        else:
            res["runs"][p] = []
    try:
        for rnd in range(a.rounds):
            for p in a.peers:
                log(f"round {rnd + 1}/{a.rounds}: {p}")
                try:
                    res["runs"][p].append(one_round(p, a, out))
                except RuntimeError as e:
                    log(f"{p}: {e}")
                    res["runs"][p].append({"error": str(e)})
    finally:
        (out / "results.json").write_text(json.dumps(res, indent=1, default=str))
    text = report(a, res, info, command)
    (out / "report.md").write_text(text)
    print()
    print(text)
    log(f"results in {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs bench/'s workloads against tern and its peers and writes the report.

bench/run.sh installs, builds and then calls this (standard library only). It expects the
binaries under --build-dir. Method (see bench/README.md): every server is pinned to the
server CPUs, wrk (and this script) to the load CPUs; rounds are interleaved across peers;
server CPU time comes from /proc/<pid>/stat of the server's whole process tree.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import tempfile
import time
from pathlib import Path

from common import (POST_BODY_PROBE, binary_sizes, get, log, machine_info, mem_of, parse_cpus, post,
                    proc_tree)
from load import (display_command, idle_connections, make_workloads, measure_run, run_micro,
                  run_wrk, startup_times, wrk_command)
from report import (fmt_num, gnuplot_chart, headline_table, med, stalled, summarise, summary_block, tern_health,
                    update_docs, write_report)
from servers import ALL_PEERS, EXTRA_PEERS, LABELS, Peer, Peers, stop_proc, wait_ready


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--server-cpus", default="1")
    ap.add_argument("--load-cpus", default="0")
    ap.add_argument("--server-threads", type=int, default=1)
    ap.add_argument("--peers", default=",".join(ALL_PEERS))
    ap.add_argument("--workloads", default="")
    ap.add_argument("--conns", action="append", default=[], metavar="WORKLOAD=N")
    ap.add_argument("--wrk-threads", action="append", default=[], metavar="WORKLOAD=N")
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--idle-conns", type=int, default=10000)
    ap.add_argument("--micro-min-time", default="0.5")
    ap.add_argument("--no-micro", action="store_true")
    ap.add_argument("--base-port", type=int, default=18100)
    ap.add_argument("--force-static", action="store_true",
                    help="run the static workloads for the peers even when tern has none")
    ap.add_argument("--update-docs", action="store_true")
    ap.add_argument("--argv", default="", help="run.sh's arguments, for the report")
    a = ap.parse_args()

    server_cpus = parse_cpus(a.server_cpus)
    out_dir = Path(a.out)
    (out_dir / "raw").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tern-bench-"))
    work.chmod(0o755)  # nginx's workers and h2o run as nobody when started as root
    (work / "www").mkdir()
    (work / "www" / "small.bin").write_bytes(os.urandom(1024))
    with open(work / "www" / "large.bin", "wb") as f:
        f.write(os.urandom(10 * 1024 * 1024))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    info = machine_info(a)
    peers_obj = Peers(a, work)
    wanted = [p for p in a.peers.split(",") if p]
    peers: dict[str, Peer] = {}
    for i, name in enumerate(wanted):
        if name not in LABELS:
            log(f"unknown peer '{name}'; known: {', '.join(ALL_PEERS + EXTRA_PEERS)}")
            continue
        label, note = LABELS[name]
        pr = Peer(name, label, note.replace("{n}", str(a.server_threads)))
        pr.port = a.base_port + i
        pr.why_out = peers_obj.available(name)
        peers[name] = pr
    ctx = {"args": a, "info": info, "peers": peers, "results": {}, "skipped": {}, "deaths": {},
           "startup": {}, "hwm_levtus": {}, "hwm_end": {}, "per_conn": {}, "health": [],
           "micro": [], "sizes": [], "argv": a.argv}

    running: list[Peer] = []

    def cleanup(*_):
        for pr in running:
            stop_proc(pr.proc)
        shutil.rmtree(work, ignore_errors=True)

    try:
        # 1. Startup times, before anything else runs.
        for name, pr in peers.items():
            if pr.why_out:
                continue
            t = startup_times(peers_obj, name, a.starts, a.base_port + 200, server_cpus)
            ctx["startup"][name] = t
            log(f"startup {name}: median {fmt_num(med(t), 1)} ms over {len(t)} starts")

        # 2. Start every peer, pinned, and check what it answers.
        for name, pr in peers.items():
            if pr.why_out:
                continue
            pr.log_path = out_dir / "raw" / f"{name}.log"
            pr.proc = peers_obj.spawn(name, pr.port, server_cpus, pr.log_path)
            if not wait_ready(pr.proc, pr.port):
                tail = pr.log_path.read_text(errors="replace")[-300:].strip()
                pr.why_out = f"did not answer GET / on start ({tail or 'no output'})"
                stop_proc(pr.proc)
                continue
            running.append(pr)
        time.sleep(1.0)
        for pr in running:
            pr.idle = mem_of(proc_tree(pr.proc.pid))
            try:
                status, headers, body, _ = post(pr.port, "/login", POST_BODY_PROBE)
                if pr.name == "ceiling":
                    pr.can_post, pr.post_note = status == 200, "canned answer"
                else:
                    pr.can_post = status == 200 and body == POST_BODY_PROBE
                    if not pr.can_post:
                        pr.post_note = f"POST /login gave {status}"
                if pr.name == "h2o":
                    pr.post_note = "mruby"
                if pr.name == "nginx" and pr.can_post:
                    pr.post_note = "echo module"
            except (OSError, ValueError, IndexError) as e:
                pr.can_post, pr.post_note = False, f"POST /login failed: {e}"
            if pr.name != "ceiling":
                try:
                    status, _, body, _ = get(pr.port, "/static/small.bin")
                    pr.can_static = status == 200 and len(body) == 1024
                    status_l, _, body_l, _ = get(pr.port, "/static/large.bin", timeout=10)
                    pr.can_static = pr.can_static and status_l == 200 and len(body_l) == 10 << 20
                    pr.static_note = "" if pr.can_static else f"GET /static/small.bin gave {status}"
                except (OSError, ValueError, IndexError) as e:
                    pr.static_note = f"static probe failed: {e}"
        order = [pr.name for pr in running]
        ctx["peer_order"] = order
        log("running:", ", ".join(f"{pr.name}:{pr.port}" for pr in running))

        def revive(pr: Peer, when: str) -> bool:
            """A server that died is reported and started again for the runs that follow."""
            if pr.proc.poll() is None:
                return True
            rc = pr.proc.returncode
            how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
            ctx["deaths"].setdefault(pr.name, []).append(f"{when} ({how})")
            log(f"{pr.name} died {when} ({how}); starting it again")
            pr.proc = peers_obj.spawn(pr.name, pr.port, server_cpus, pr.log_path)
            if not wait_ready(pr.proc, pr.port):
                stop_proc(pr.proc)
                return False
            return True

        # 3. Workloads, rounds interleaved across peers.
        W = make_workloads(a)
        ctx["workloads"] = W
        tern = peers.get("tern")
        tern_trace = []
        for w in W:
            eligible = []
            for pr in running:
                if w.needs == "post" and not pr.can_post:
                    continue
                if w.needs == "static" and not pr.can_static:
                    continue
                eligible.append(pr)
            if w.needs == "static" and not (tern and tern.can_static) and not a.force_static:
                why = tern.static_note if tern else "tern is not running"
                ctx["skipped"][w.key] = f"not available: tern does not serve static files yet ({why})"
                log(f"{w.key}: skipped ({ctx['skipped'][w.key]})")
                continue
            left = [pr.name for pr in running if pr not in eligible]
            if left:
                ctx["skipped"][w.key] = ("Not run for: " + ", ".join(
                    f"{n} ({(peers[n].post_note if w.needs == 'post' else peers[n].static_note) or 'no such route'})"
                    for n in left) + ".")
            ctx["results"][w.key] = {pr.name: [] for pr in eligible}
            log(f"{w.key}: {display_command(w, a.duration)} x {a.rounds} rounds, "
                f"{len(eligible)} peers")
            if a.warmup > 0:
                for pr in eligible:
                    if revive(pr, f"before the `{w.key}` warm-up"):
                        run_wrk(wrk_command(w, pr.port, a.warmup))
            for rnd in range(a.rounds):
                for pr in eligible:
                    after = f"the `{w.key}` warm-up" if rnd == 0 else f"`{w.key}` round {rnd}"
                    if not revive(pr, f"during or after {after}"):
                        continue
                    r = measure_run(pr, w, a.duration, server_cpus)
                    (out_dir / "raw" / f"{w.key}-{pr.name}-{rnd + 1}.txt").write_text(r.pop("raw"))
                    r["round"] = rnd + 1
                    ctx["results"][w.key][pr.name].append(r)
                    log(f"  {w.key} r{rnd + 1} {pr.name:8s} {r['rps']:>12,.0f} req/s  "
                        f"cpu {r['server_cpu_pct']:5.1f}%  "
                        f"{(r['us_per_req'] or 0):6.1f} us/req  wrk {r['wrk_cpu_pct']:5.1f}%  "
                        f"other {r['other_pct']:4.1f}%  err {r['errors']}/{r['timeouts']}/{r['non2xx']}")
                    if pr.name == "tern":
                        tern_trace.append({"workload": w.key, "round": rnd + 1,
                                           "rss_kib": r["mem"].get("VmRSS"), "fds": r["mem"].get("fds"),
                                           **{k: r[k] for k in ("errors", "timeouts", "non2xx", "rps",
                                                                "server_cpu_pct", "us_per_req",
                                                                "other_pct", "wrk_cpu_pct")}})
            if w.key == "levtus":
                for pr in running:
                    if pr.proc.poll() is None:
                        ctx["hwm_levtus"][pr.name] = mem_of(proc_tree(pr.proc.pid))["VmHWM"]

        for pr in running:
            revive(pr, "during or after its last run")

        # 4. Per-connection memory: a fresh instance of each server holding many idle
        #    keep-alive connections (a fresh one: the loaded one's allocator keeps memory).
        if a.idle_conns > 0:
            for pr in running:
                if pr.name == "httplib":
                    continue  # a thread per connection from a pool of 8: the rest would wait
                port = a.base_port + 100 + (ALL_PEERS + EXTRA_PEERS).index(pr.name)
                p = peers_obj.spawn(pr.name, port, server_cpus, out_dir / "raw" / f"{pr.name}-idle.log")
                try:
                    if not wait_ready(p, port):
                        continue
                    time.sleep(0.3)
                    before = mem_of(proc_tree(p.pid))["VmRSS"]
                    answered, socks = idle_connections(port, a.idle_conns)
                    time.sleep(0.5)
                    after = mem_of(proc_tree(p.pid))["VmRSS"]
                    for sk in socks:
                        sk.close()
                finally:
                    stop_proc(p)
                if answered:
                    ctx["per_conn"][pr.name] = {"bytes": (after - before) * 1024 / answered,
                                                "answered": answered, "n": a.idle_conns,
                                                "before_kib": before, "after_kib": after}
                log(f"idle connections {pr.name}: {answered}/{a.idle_conns} answered, "
                    f"RSS {before / 1024:.1f} -> {after / 1024:.1f} MB")
        for pr in running:
            if pr.proc.poll() is None:
                ctx["hwm_end"][pr.name] = mem_of(proc_tree(pr.proc.pid))["VmHWM"]

        # 5. tern's health after everything.
        if tern and tern in running:
            ctx["health"] = tern_health(tern, tern_trace, ctx) + ctx["health"]

        # 6. Micro-benchmarks and binary sizes (servers stopped first: a quiet server CPU).
        for pr in running:
            stop_proc(pr.proc)
        if not a.no_micro:
            ctx["micro"] = run_micro(a, out_dir)
        ctx["sizes"] = binary_sizes(a, work)
        info["loadavg_end"] = open("/proc/loadavg").read().split()[:3]

        # 7. Charts and report.
        for w in W:
            if w.key not in ctx["results"]:
                continue
            S = {p: summarise(r) for p, r in ctx["results"][w.key].items() if r}
            gone = stalled(S)
            shown = [p for p in order if p in S and p not in gone]
            note = f" ({', '.join(gone)} stalled, not drawn)" if gone else ""
            rows = [(p, S[p]["rps"], S[p]["rps_min"], S[p]["rps_max"]) for p in shown]
            gnuplot_chart(out_dir / f"{w.key}-rps.png", f"{w.title}: req/s (median, min-max){note}",
                          "requests per second", rows)
            rows = []
            for p in shown:
                if S[p]["us"] is not None:
                    us = [r["us_per_req"] for r in ctx["results"][w.key][p] if r["us_per_req"]]
                    rows.append((p, S[p]["us"], min(us), max(us)))
            gnuplot_chart(out_dir / f"{w.key}-us.png",
                          f"{w.title}: server CPU per request, lower is better{note}",
                          "CPU microseconds per request", rows)
        report = write_report(ctx, out_dir)
        (out_dir / "report.md").write_text(report)
        summary = summary_block(ctx, out_dir)
        (out_dir / "summary.md").write_text(summary + "\n")
        (out_dir / "results.json").write_text(json.dumps({
            "info": info, "args": vars(a), "results": ctx["results"], "skipped": ctx["skipped"],
            "startup_ms": ctx["startup"], "idle": {p.name: p.idle for p in running},
            "hwm_levtus_kib": ctx["hwm_levtus"], "hwm_end_kib": ctx["hwm_end"],
            "per_connection": ctx["per_conn"], "micro": ctx["micro"],
            "binary_sizes": ctx["sizes"], "tern_trace": tern_trace,
            "left_out": {p.name: p.why_out for p in peers.values() if p.why_out},
            "deaths": ctx["deaths"],
        }, indent=1))
        if a.update_docs:
            update_docs(summary)
        log(f"report: {out_dir / 'report.md'}")
        print()
        print(headline_table(ctx))
    finally:
        cleanup()


if __name__ == "__main__":
    main()

"""Statistics, charts and the Markdown report."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
from pathlib import Path

from common import BENCH, ROOT, answers_hello, log, mem_of, proc_tree
from load import Workload, display_command
from servers import Peer

# ---- statistics and report -----------------------------------------------------------------

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_num(x, digits=0):
    if x is None:
        return "–"
    if digits == 0:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def paired(runs_a: list[dict], runs_b: list[dict], key: str = "rps"):
    """a / b as the median of per-round ratios: the peers of one round ran within a minute of
    each other, so a burst of someone else's work on the machine cancels out of the ratio."""
    by_round = {r["round"]: r.get(key) for r in runs_b}
    xs = [r[key] / by_round[r["round"]] for r in runs_a
          if r.get(key) and by_round.get(r["round"])]
    return med(xs)


def fmt_x(x):
    return "–" if x is None else f"{x:.2f}×"


def summarise(runs: list[dict]) -> dict:
    rps = [r["rps"] for r in runs]
    return {
        "rps": med(rps), "rps_min": min(rps) if rps else None, "rps_max": max(rps) if rps else None,
        "p50": med([r["p50"] for r in runs]), "p99": med([r["p99"] for r in runs]),
        "cpu": med([r["server_cpu_pct"] for r in runs]), "us": med([r["us_per_req"] for r in runs]),
        "wrk": med([r["wrk_cpu_pct"] for r in runs]), "other": med([r["other_pct"] for r in runs]),
        "errors": sum(r["errors"] for r in runs), "timeouts": sum(r["timeouts"] for r in runs),
        "non2xx": sum(r["non2xx"] for r in runs), "n": len(runs),
    }


def stalled(S: dict) -> list[str]:
    """Peers whose median is under 2% of the best: their CPU per request means nothing."""
    best = max((s["rps"] or 0) for s in S.values()) if S else 0
    return [p for p, s in S.items() if best and (s["rps"] or 0) < 0.02 * best]


def gnuplot_chart(path: Path, title: str, ylabel: str, rows: list[tuple[str, float, float, float]]):
    """Bar chart of medians with min–max whiskers; tern's bar in its own colour."""
    if not shutil.which("gnuplot") or not rows:
        return False
    data = path.with_suffix(".dat")
    with open(data, "w") as f:
        for i, (label, m, lo, hi) in enumerate(rows):
            colour = 0xD55E00 if label == "tern" else (0x999999 if label == "ceiling" else 0x0072B2)
            f.write(f'{i} "{label}" {m} {lo} {hi} {colour}\n')
    script = f"""
set terminal pngcairo size 820,400 font "sans,10"
set output "{path}"
set title "{title}"
set ylabel "{ylabel}"
set style fill solid 0.85 border -1
set boxwidth 0.6
set grid ytics
set yrange [0:*]
set xrange [-0.6:{len(rows) - 0.4}]
set format y "%'.0f"
set decimalsign locale
plot "{data}" using 1:3:6:xtic(2) with boxes lc rgb variable notitle, \\
     "{data}" using 1:3:4:5 with yerrorbars lc rgb "black" pt 0 ps 0 notitle
"""
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        log("gnuplot:", r.stderr.strip()[:300])
        return False
    return True


def write_report(ctx: dict, out_dir: Path) -> str:
    a = ctx["args"]
    info = ctx["info"]
    W: list[Workload] = ctx["workloads"]
    res = ctx["results"]      # key -> peer -> [runs]
    peers: dict[str, Peer] = ctx["peers"]
    order = [p for p in ctx["peer_order"]]
    L = []
    L.append(f"# tern benchmark report, {info['date']}")
    L.append("")
    L.append(f"- machine: {info['model']}, {info['cpus']} CPUs, Linux {info['kernel']}; "
             f"load average at start {' '.join(info['loadavg_start'])}, at end "
             f"{' '.join(info.get('loadavg_end', []))}")
    dirty = (f" (uncommitted changes under: {', '.join(info['dirty'])})" if info["dirty"] else "")
    L.append(f"- tern commit: `{info['commit']}`{dirty}; Release build")
    L.append(f"- method: server pinned to CPU {a.server_cpus}, wrk to CPU {a.load_cpus}; "
             f"servers run {a.server_threads} thread(s) where configurable; {a.rounds} interleaved "
             f"rounds of {a.duration:g} s per peer and workload "
             + (f"(a {a.warmup:g} s warm-up per peer first); " if a.warmup else "(no warm-up); ")
             + "medians, min–max over rounds")
    L.append(f"- command: `bench/run.sh {ctx['argv']}`".replace("`bench/run.sh `", "`bench/run.sh`"))
    L.append("- this machine is shared: other processes may have been running; the *other* "
             "column is the busy time of the server CPU not used by the server. Compare ratios "
             "within this report only.")
    L.append("")
    left = [p for p in peers.values() if p.why_out]
    if left:
        L.append("Left out: " + "; ".join(f"**{p.name}** ({p.why_out})" for p in left) + ".")
        L.append("")

    # Headline.
    L.append("## Headline: tern against nginx, the best peer and the ceiling")
    L.append("")
    L.append(headline_table(ctx))
    L.append("")
    L.append("req/s and CPU µs/req are medians over rounds. Every ratio (×) is the median of "
             "the per-round ratios: the peers of one round ran within a minute of each other, so "
             "a burst of other work on this shared machine cancels out. *Best peer*: the peer "
             "(not the ceiling) that tern compares worst against. CPU µs/req is the server's own "
             "CPU time per request, the figure that separates servers when wrk is the bottleneck "
             "(wrk CPU near 100%).")
    L.append("")

    for w in W:
        L.append(f"## {w.title} (`{w.key}`)")
        L.append("")
        L.append(f"`{display_command(w, a.duration)}`" + (f" — seed: {w.seed}" if w.seed else ""))
        L.append("")
        if w.key not in res or not res[w.key]:
            L.append(ctx["skipped"].get(w.key, "not run"))
            L.append("")
            continue
        if ctx["skipped"].get(w.key):
            L.append(ctx["skipped"][w.key])
            L.append("")
        S = {p: summarise(runs) for p, runs in res[w.key].items()}
        R = res[w.key]
        ng, ce = R.get("nginx", []), R.get("ceiling", [])
        lat = w.latency
        head = "| peer | req/s (median) | min–max | ×nginx | ×ceiling |"
        sep = "|---|---:|---:|---:|---:|"
        if lat:
            head += " p50 ms | p99 ms |"
            sep += "---:|---:|"
        head += " server CPU % | CPU µs/req | ×ceiling µs | wrk CPU % | other % | errors |"
        sep += "---:|---:|---:|---:|---:|---:|"
        L += [head, sep]
        gone = stalled(S)
        for p in order:
            if p not in S:
                continue
            s = S[p]
            if p in gone:
                s = dict(s, us=None)  # a few requests in seconds: CPU per request is noise
            errs = s["errors"] + s["timeouts"] + s["non2xx"]
            err_txt = "0" if errs == 0 else (f"{s['errors']} sock, {s['timeouts']} timeout, "
                                             f"{s['non2xx']} non-2xx")
            name = f"**{p}**" if p == "tern" else p
            note = ""
            if w.key == "post":
                note = peers[p].post_note
            if note:
                name += f" ({note})"
            if p in gone:
                name += " (stalled)"
            row = (f"| {name} | {fmt_num(s['rps'])} | {fmt_num(s['rps_min'])}–{fmt_num(s['rps_max'])} "
                   f"| {fmt_x(paired(R[p], ng))} | {fmt_x(paired(R[p], ce))} |")
            if lat:
                row += f" {fmt_num(s['p50'], 2)} | {fmt_num(s['p99'], 2)} |"
            us_x = None if p in gone else paired(R[p], ce, "us_per_req")
            row += (f" {fmt_num(s['cpu'])} | {fmt_num(s['us'], 1)} | {fmt_x(us_x)} "
                    f"| {fmt_num(s['wrk'])} | {fmt_num(s['other'])} | {err_txt} |")
            L.append(row)
        L.append("")
        if not lat:
            L.append("wrk's latency histogram is not meaningful when requests are pipelined; "
                     "only throughput is reported.")
            L.append("")
        for suffix, what in (("rps", "req/s"), ("us", "server CPU µs per request")):
            png = out_dir / f"{w.key}-{suffix}.png"
            if png.exists():
                L.append(f"![{w.title}: {what}]({png.name})")
        L.append("")

    # Resources.
    L.append("## Resources")
    L.append("")
    L.append("| peer | idle RSS MB | peak RSS MB after -c400 (VmHWM) | peak RSS MB, whole run | "
             "threads | processes | startup ms (median, min–max) | RSS per idle keep-alive "
             "connection |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p in order:
        pr = peers[p]
        i = pr.idle
        if not i:
            continue
        st = ctx["startup"].get(p, [])
        st_txt = (f"{fmt_num(med(st), 1)} ({fmt_num(min(st), 1)}–{fmt_num(max(st), 1)}, n={len(st)})"
                  if st else "–")
        hw = ctx["hwm_levtus"].get(p)
        # Over every run (VmHWM read after each): a server that died and was started again
        # still shows its largest instance.
        hw_all = max([ctx["hwm_end"].get(p) or 0] +
                     [r.get("mem", {}).get("VmHWM", 0) for runs in ctx["results"].values()
                      for r in runs.get(p, [])]) or None
        per = ctx["per_conn"].get(p)
        per_txt = "–"
        if per:
            per_txt = (f"{per['bytes']:,.0f} B ({per['before_kib'] / 1024:.1f} → "
                       f"{per['after_kib'] / 1024:.1f} MB, {per['answered']:,}/{per['n']:,} answered)")
        L.append(f"| {'**tern**' if p == 'tern' else p} | {i['VmRSS'] / 1024:.1f} | "
                 f"{fmt_num(hw / 1024 if hw else None, 1)} | {fmt_num(hw_all / 1024 if hw_all else None, 1)} | "
                 f"{i['Threads']} | {i['procs']} | {st_txt} | {per_txt} |")
    L.append("")
    L.append("Idle RSS: after start and one request. Threads and processes: the server's whole "
             "process tree (nginx: master + workers). Startup: from exec to the first 200 "
             "answer to `GET /`, polled every 0.2 ms; it includes fork/exec from Python, so the "
             "ceiling's figure is the floor. Per-connection RSS: a fresh instance of the "
             f"server, (RSS holding {a.idle_conns:,} idle keep-alive connections, each after one "
             "request − RSS before) / connections answered; nginx and h2o preallocate "
             "connection structures, so theirs shows less. Peak RSS of the whole run: "
             "the largest VmHWM read after any run.")
    L.append("")
    L.append("| binary | stripped size | shared libraries beyond libc/libstdc++ |")
    L.append("|---|---:|---|")
    for label, size, libs in ctx["sizes"]:
        L.append(f"| {label} | {size / 1048576:.2f} MB | {libs} |")
    L.append("")

    # Micro.
    L.append("## Micro-benchmarks (Google Benchmark, median of 3 repetitions)")
    L.append("")
    if ctx["micro"]:
        L.append("| benchmark | ns per item |")
        L.append("|---|---:|")
        for m in ctx["micro"]:
            v = m["ns_per_item"] if m["ns_per_item"] is not None else m["time"]
            L.append(f"| `{m['name']}` | {v:,.1f} |")
        L.append("")
        L.append("Items: one parsed request, one route lookup, one serialized response "
                 "(`/N`: N routes registered).")
    else:
        L.append("not run")
    L.append("")

    # tern health.
    L.append("## tern under load")
    L.append("")
    L += ctx["health"] or ["nothing unusual was seen"]
    L.append("")
    others = {p: d for p, d in ctx["deaths"].items() if p != "tern"}
    if others:
        L.append("Other servers that died (each was started again for the runs that followed): "
                 + "; ".join(f"**{p}** {', '.join(d)}" for p, d in others.items()) + ".")
        L.append("")

    L.append("## Peers")
    L.append("")
    for p in order:
        pr = peers[p]
        L.append(f"- **{p}**: {pr.label}" + (f" — {pr.note}" if pr.note else ""))
    for p in peers.values():
        if p.why_out:
            L.append(f"- **{p.name}**: left out — {p.why_out}")
    L.append("")
    L.append("Versions: " + "; ".join(f"{k} {v}" for k, v in info["versions"].items() if v))
    L.append("")
    L.append("Raw wrk output of every run: `raw/`; all figures: `results.json`.")
    return "\n".join(L) + "\n"


def headline_table(ctx: dict) -> str:
    res = ctx["results"]
    L = ["| workload | tern req/s | nginx req/s | ceiling req/s | best peer | tern ×nginx | "
         "tern ×best peer | tern ×ceiling | tern CPU µs/req | ×ceiling µs | tern p99 ms | nginx p99 ms | "
         "wrk CPU % (tern / ceiling) | io_uring variant req/s ×tern | its µs ×tern |",
         "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for w in ctx["workloads"]:
        if w.key not in res or "tern" not in res.get(w.key, {}):
            reason = ctx["skipped"].get(w.key, "not run")
            L.append(f"| {w.title} | {reason} | | | | | | | | | | | | | |")
            continue
        R = res[w.key]
        S = {p: summarise(r) for p, r in R.items()}
        t = S["tern"]
        ng = S.get("nginx", {})
        ce = S.get("ceiling", {})
        # The best peer is the one tern compares worst against, round by round.
        best_name, best_x = None, None
        for p in R:
            if p == "ceiling" or p.startswith("tern"):
                continue
            x = paired(R["tern"], R[p])
            if x is not None and (best_x is None or x < best_x):
                best_name, best_x = p, x
        best = S.get(best_name, {}) if best_name else {}
        L.append(
            f"| {w.title} | {fmt_num(t['rps'])} | {fmt_num(ng.get('rps'))} | {fmt_num(ce.get('rps'))} "
            f"| {best_name or '–'} {fmt_num(best.get('rps'))} | {fmt_x(paired(R['tern'], R.get('nginx', [])))} "
            f"| {fmt_x(best_x)} | {fmt_x(paired(R['tern'], R.get('ceiling', [])))} "
            f"| {fmt_num(t['us'], 1)} | {fmt_x(paired(R['tern'], R.get('ceiling', []), 'us_per_req'))} "
            f"| {fmt_num(t['p99'], 2) if w.latency else '–'} "
            f"| {fmt_num(ng.get('p99'), 2) if w.latency else '–'} "
            f"| {fmt_num(t.get('wrk'))} / {fmt_num(ce.get('wrk'))} "
            f"| {fmt_x(paired(R.get('tern-uring', []), R['tern']))} "
            f"| {fmt_x(paired(R.get('tern-uring', []), R['tern'], 'us_per_req'))} |")
    return "\n".join(L)


def update_docs(summary: str):
    """Replaces the block between the markers in bench/README.md and docs/performance.md."""
    begin, end = "<!-- bench:latest:begin -->", "<!-- bench:latest:end -->"
    for path in (BENCH / "README.md", ROOT / "docs" / "performance.md"):
        if not path.exists():
            continue
        text = path.read_text()
        i, j = text.find(begin), text.find(end)
        if i < 0 or j < i:
            continue
        path.write_text(text[: i + len(begin)] + "\n" + summary + "\n" + text[j:])
        log("updated", path.relative_to(ROOT))


def tern_health(tern: Peer, trace: list, ctx: dict) -> list[str]:
    out = []
    for when in ctx["deaths"].get("tern", []):
        out.append(f"- **tern died** {when}; it was started again for the runs that followed")
    errs = [t for t in trace if t["errors"] or t["timeouts"] or t["non2xx"]]
    for t in errs:
        out.append(f"- `{t['workload']}` round {t['round']}: {t['errors']} socket errors, "
                   f"{t['timeouts']} timeouts, {t['non2xx']} non-2xx answers")
    if not errs:
        out.append("- no socket errors, timeouts or non-2xx answers in any run")
    rss = [t for t in trace if t["rss_kib"]]
    if rss:
        peak = max(t["rss_kib"] for t in rss)
        out.append(f"- RSS after each run: first {rss[0]['rss_kib'] / 1024:.1f} MB, last "
                   f"{rss[-1]['rss_kib'] / 1024:.1f} MB, largest {peak / 1024:.1f} MB (idle at start "
                   f"{tern.idle.get('VmRSS', 0) / 1024:.1f} MB)")
        levtus = [t["rss_kib"] for t in rss if t["workload"] == "levtus"]
        if len(levtus) >= 2 and levtus[-1] > levtus[0] * 1.2 and levtus[-1] - levtus[0] > 2048:
            out.append("- **RSS grew across identical rounds** of `levtus`: "
                       + ", ".join(f"{m / 1024:.1f}" for m in levtus) + " MB")
    by_w: dict[str, list[dict]] = {}
    for t in trace:
        by_w.setdefault(t["workload"], []).append(t)
    for k, runs in by_w.items():
        best = max(t["rps"] for t in runs)
        slow = [t for t in runs if t["rps"] < 0.5 * best]
        for t in slow:
            # A slow round with the server CPU taken by others is interference; one where the
            # server itself idled while wrk had its CPU is a stall.
            busy_elsewhere = t["other_pct"] > 40 or t["wrk_cpu_pct"] < 50
            what = ("the machine was busy: other load on the server CPU "
                    f"{t['other_pct']:.0f}%, wrk CPU {t['wrk_cpu_pct']:.0f}%" if busy_elsewhere else
                    f"**possible stall**: tern CPU {t['server_cpu_pct']:.0f}%, wrk CPU "
                    f"{t['wrk_cpu_pct']:.0f}%, other load {t['other_pct']:.0f}%")
            out.append(f"- slow round: `{k}` round {t['round']} at {t['rps']:,.0f} req/s against "
                       f"{best:,.0f} in its best round; {what}; CPU per request "
                       f"{fmt_num(t['us_per_req'], 1)} µs")
    fds_idle = tern.idle.get("fds")
    time.sleep(0.5)
    now = mem_of(proc_tree(tern.proc.pid)) if tern.proc.poll() is None else {}
    if now:
        out.append(f"- open fds: {fds_idle} idle at start, {now['fds']} after the last run; "
                   f"threads {now['Threads']}; RSS now {now['VmRSS'] / 1024:.1f} MB")
    out.append("- still answers `GET /` after all runs: "
               + ("yes" if answers_hello(tern.port) else "**no**"))
    if tern.log_path and tern.log_path.exists():
        lines = [l for l in tern.log_path.read_text(errors="replace").splitlines()
                 if l.strip() and "listening on" not in l]
        if lines:
            out.append(f"- its output had {len(lines)} line(s), e.g. `{lines[0][:160]}`")
    return out


def summary_block(ctx: dict, out_dir: Path) -> str:
    info = ctx["info"]
    a = ctx["args"]
    dirty = f", uncommitted changes under {', '.join(info['dirty'])}" if info["dirty"] else ""
    cmd = "bench/run.sh" + (f" {ctx['argv']}" if ctx["argv"] else "")
    return (f"Run {info['date']} on {info['model']} ({info['cpus']} CPUs), tern `{info['commit']}`"
            f"{dirty}; `{cmd}`: server on CPU {a.server_cpus}, wrk on CPU {a.load_cpus}, "
            f"{a.rounds} interleaved rounds of {a.duration:g} s, medians. Full report: "
            f"`bench/results/{out_dir.name}/report.md`.\n\n" + headline_table(ctx))

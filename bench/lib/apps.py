#!/usr/bin/env python3
"""The real-app workloads of issue 19: tern's examples beside peers doing the same work.

bench/run.sh calls this (standard library only) for the workloads `jwt`, `health`,
`db-read`, `db-write` and `users1k`, after it has built examples/jwt_login,
examples/todo, examples/bench_app, bench/peers/go/app (go-app) and installed
bench/peers/node's npm packages into the build folder. Method (see bench/README.md):

- every server is started fresh for each workload and connection count, pinned to the
  server CPUs; the load (wrk or ab, and this script) runs on the load CPUs;
- PostgreSQL is a real server of this run's own (initdb + pg_ctl in a temporary
  directory, as the postgres user when run as root, on a free port on 127.0.0.1, trust
  authentication, default settings, pinned to the server CPUs too), one database per server
  under test, stopped at the end even on failure; SQLite is a real file in the same
  temporary directory (WAL mode, set by examples/todo);
- db-read reads random ids among ROWS rows seeded through POST /todos first;
- rounds are interleaved across the servers of a (workload, connections) step; medians;
- peak RSS is the sum of VmHWM over the server's process tree at the end of the step (the
  server was fresh at its start), threads the most seen (sampled every 0.1 s) summed over
  the tree; the database server's own memory is not counted.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import pwd
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import (BENCH, CLK_TCK, cpu_busy_ticks, cpu_ticks, free_port, log, mem_of, parse_cpus,
                    proc_tree, raise_fd_limit)
from load import UNIT_MS, parse_wrk, run_wrk
from servers import stop_proc
import groups
import procs  # noqa: E402  (tests/support/procs.py, on the path common puts it on)

APP_WORKLOADS = ["jwt", "health", "db-read", "db-write", "users1k"]
JWT_SECRET = "bench-secret-0123456789abcdef0123456789abcdef"  # 44 bytes, > RFC 7518's 32
LOGIN = b'{"username":"alice","password":"wonderland"}'


# ---- PostgreSQL of the run's own ------------------------------------------------------------

def postgres_bindir() -> str | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parts[4]) if p.parts[4].isdigit() else 0)
    if found:
        return str(found[-1].parent)
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


class Postgres:
    """initdb + pg_ctl in `work`/pg on a free port; stop() is safe to call more than once."""

    def __init__(self, work: Path, cpus: list[int]):
        self.bindir = postgres_bindir()
        if self.bindir is None:
            raise RuntimeError("initdb not found (install Debian's postgresql)")
        self.as_user: list[str] = []
        self.dir = work / "pg"
        self.dir.mkdir(mode=0o700)
        if os.geteuid() == 0:  # postgres refuses to run as root
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no postgres user") from None
            self.as_user = ["runuser", "-u", "postgres", "--"]
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self.cpus = cpus
        self.data = self.dir / "data"
        self.port = free_port()
        self.running = False
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                 "--no-locale")

    def run(self, tool: str, *args: str) -> str:
        cmd = ["taskset", "-c", ",".join(map(str, self.cpus))] + self.as_user + [
            os.path.join(self.bindir, tool), *args]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError(f"{tool} exited {r.returncode}: {r.stdout.strip()[-500:]}")
        return r.stdout

    def start(self):
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
                 "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir}", "start")
        self.running = True
        # pg_ctl makes the postmaster a session leader: its group ends with the others even
        # when stop() never runs.
        groups.adopt(int((self.data / "postmaster.pid").read_text().split()[0]))

    def stop(self):
        if self.running:
            self.running = False
            try:
                self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                log(f"postgresql: stop failed: {e}")

    def createdb(self, name: str) -> str:
        """A fresh database; its URL (libpq, lib/pq and node-postgres all read the URL form)."""
        psql = os.path.join(self.bindir, "psql")
        subprocess.run([psql, "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        "-d", "postgres", "-c", f'CREATE DATABASE "{name}"'],
                       check=True, capture_output=True, timeout=60)
        # lib/pq asks for TLS unless told not to; the server here has none (loopback).
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}?sslmode=disable"

    def version(self) -> str:
        return self.run("postgres", "--version").strip()


# ---- the servers under test -----------------------------------------------------------------

@dataclass
class App:
    name: str                 # e.g. "tern-pg"
    base: str                 # the --peers name: tern, go, node, nginx
    label: str
    cmd: list[str]
    probe: tuple[str, str, bytes | None]   # method, path, body: must answer 200
    env: dict = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    port: int = 0
    why_out: str = ""


class Apps:
    def __init__(self, a, work: Path):
        self.a = a
        self.work = work
        self.build = Path(a.build_dir)
        self.pg: Postgres | None = None
        self.pg_why = ""
        self.urls: dict[str, str] = {}

    def exe(self, rel: str) -> Path:
        return self.build / rel

    def postgres(self) -> str:
        """Starts PostgreSQL on first use; '' when it runs, else why not."""
        if self.pg is None and not self.pg_why:
            try:
                self.pg = Postgres(self.work, parse_cpus(self.a.server_cpus))
                self.pg.start()
                log(f"postgresql: {self.pg.version()} on 127.0.0.1:{self.pg.port} ({self.pg.dir})")
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                self.pg_why = f"PostgreSQL did not start: {e}"
                log(self.pg_why)
        return self.pg_why

    def db_url(self, name: str) -> str:
        if name not in self.urls:
            self.urls[name] = self.pg.createdb(name.replace("-", "_"))
        return self.urls[name]

    def for_workload(self, key: str) -> list[App]:
        t = str(self.a.server_threads)
        bench_app = self.exe("tern/examples/bench_app/bench_app")
        jwt = self.exe("tern/examples/jwt_login/jwt_login")
        todo = self.exe("tern/examples/todo/todo")
        go = self.exe("go-app")
        node_app = str(BENCH / "peers" / "node" / "app.js")
        env_jwt = {"JWT_SECRET": JWT_SECRET, "GOMAXPROCS": t,
                   "NODE_PATH": str(self.build / "node" / "node_modules")}
        health = ("GET", "/health", None)
        apps: list[App] = []
        if key == "jwt":
            login = ("POST", "/login", LOGIN)
            apps = [
                App("tern", "tern", "tern examples/jwt_login `--pbkdf2-iterations 0`",
                    [str(jwt), "{port}", "--pbkdf2-iterations", "0"], login, env_jwt),
                App("go", "go", "Go net/http bench/peers/go/app", [str(go), "{port}"], login, env_jwt),
                App("node", "node", "Node http bench/peers/node/app.js",
                    ["node", node_app, "{port}"], login, env_jwt),
            ]
        elif key in ("health", "users1k"):
            apps = [
                App("tern", "tern", f"tern examples/bench_app `threads({t})`",
                    [str(bench_app), "{port}", t], health),
                App("go", "go", "Go net/http bench/peers/go/app", [str(go), "{port}"], health, env_jwt),
                App("node", "node", "Node http bench/peers/node/app.js",
                    ["node", node_app, "{port}"], health, env_jwt),
                App("nginx", "nginx", f"nginx `return 200` (worker_processes {t})",
                    ["nginx", "-c", "{nginx_conf}", "-p", str(self.work), "-e",
                     str(self.work / "nginx-error.log")], health),
            ]
        elif key in ("db-read", "db-write"):
            apps = [App("tern-sqlite", "tern", "tern examples/todo `--db FILE` (SQLite, WAL)",
                        [str(todo), "{port}", "--db", str(self.work / "todo.db")], health)]
            pg_apps = [
                App("tern-pg", "tern", "tern examples/todo `--pg URL` (libpq non-blocking, 4 connections per loop)",
                    [str(todo), "{port}", "--pg", "{db_url}"], health),
                App("go-pg", "go", "Go net/http + lib/pq (8 connections)",
                    [str(go), "{port}", "--pg", "{db_url}"], health, env_jwt),
                App("node-pg", "node", "Node http + pg Pool (8 connections)",
                    ["node", node_app, "{port}", "--pg", "{db_url}"], health, env_jwt),
            ]
            apps += pg_apps
        wanted = set(self.a.peers.split(",")) if self.a.peers else None
        out = []
        for app in apps:
            if wanted is not None and app.base not in wanted and app.name not in wanted:
                continue
            app.why_out = self.why_out(app)
            out.append(app)
        return out

    def why_out(self, app: App) -> str:
        prog = app.cmd[0]
        if "/" in prog and not Path(prog).exists():
            return f"{Path(prog).name} was not built"
        if "/" not in prog and not shutil.which(prog):
            return f"`{prog}` is not installed"
        if app.name == "node-pg" and not (self.build / "node" / "node_modules" / "pg").exists():
            return "the npm package pg is not installed (bench/run.sh runs npm ci)"
        if app.name.endswith("-pg"):
            return self.postgres()
        return ""

    def spawn(self, app: App, port: int, log_path: Path) -> subprocess.Popen:
        cmd = []
        for c in app.cmd:
            if "{nginx_conf}" in c:
                c = str(self.nginx_conf(port))
            if "{db_url}" in c:
                c = self.db_url(app.name)
            cmd.append(c.replace("{port}", str(port)))
        env = dict(os.environ, **app.env)
        cmd = ["taskset", "-c", self.a.server_cpus] + cmd
        with open(log_path, "ab") as out:
            return groups.start(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)

    def nginx_conf(self, port: int) -> Path:
        text = (BENCH / "peers" / "nginx.conf.in").read_text()
        text = (text.replace("@WORK@", str(self.work)).replace("@PORT@", str(port))
                .replace("@STATIC@", str(self.work)).replace("@THREADS@", str(self.a.server_threads)))
        for d in ("nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
            (self.work / d).mkdir(exist_ok=True)
        dest = self.work / f"nginx-{port}.conf"
        dest.write_text(text)
        return dest


def request(port: int, method: str, path: str, body: bytes | None = None,
            timeout: float = 5.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def wait_ready(app: App, timeout: float = 20.0) -> bool:
    """True once the app answers its probe with 200; False when it exits or `timeout` passes."""
    method, path, body = app.probe

    def answers_probe() -> bool:
        try:
            return request(app.port, method, path, body, timeout=1.0)[0] == 200
        except (OSError, http.client.HTTPException):
            return False
    return procs.poll_until(answers_probe, timeout, app.proc)


def b64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def hs256_problem(token: str) -> str:
    """'' when `token` is an HS256 JWT signed with JWT_SECRET whose exp is after iat."""
    try:
        head, body, sig = token.split(".")
        header, claims = json.loads(b64url(head)), json.loads(b64url(body))
        want = hmac.new(JWT_SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    except ValueError as e:
        return f"not a JWT ({e})"
    if header.get("alg") != "HS256":
        return f"header {header}"
    if not hmac.compare_digest(b64url(sig), want):
        return "the HMAC-SHA256 signature does not match JWT_SECRET"
    if not claims.get("exp", 0) > claims.get("iat", 0) or claims.get("sub") != "alice":
        return f"claims {claims}"
    return ""


def check_answers(app: App, key: str) -> str:
    """What the server answers on the workload's route; '' when it is the expected answer."""
    try:
        if key == "jwt":
            status, body = request(app.port, "POST", "/login", LOGIN)
            token = json.loads(body)["token"] if status == 200 else ""
            conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=5)
            conn.request("GET", "/me", headers={"Authorization": f"Bearer {token}"})
            r = conn.getresponse()
            claims = json.loads(r.read()) if r.status == 200 else {}
            conn.close()
            if claims.get("sub") != "alice":
                return f"POST /login then GET /me gave {status}/{r.status}"
            why = hs256_problem(token)
            if why:
                return f"the token of POST /login: {why}"
            status, _ = request(app.port, "POST", "/login", b'{"username":"alice","password":"x"}')
            if status != 401:
                return f"a wrong password gave {status}, not 401"
        elif key in ("health", "users1k"):
            status, body = request(app.port, "GET", "/health")
            if status != 200 or json.loads(body) != {"status": "ok"}:
                return f"GET /health gave {status} {body[:80]!r}"
        elif key == "db-read":
            status, body = request(app.port, "GET", "/todos/1")
            if status != 200 or json.loads(body).get("id") != 1:
                return f"GET /todos/1 gave {status} {body[:80]!r}"
        elif key == "db-write":
            status, body = request(app.port, "POST", "/todos", b'{"title":"probe","done":true}')
            if status != 201 or json.loads(body).get("title") != "probe":
                return f"POST /todos gave {status} {body[:80]!r}"
    except (OSError, ValueError, KeyError, http.client.HTTPException) as e:
        return f"probe failed: {e}"
    return ""


def seed(app: App, rows: int) -> int:
    """POSTs to-dos until GET /todos/{rows} answers 200 (ids start at 1 in a fresh table)."""
    if request(app.port, "GET", f"/todos/{rows}")[0] == 200:
        return 0
    conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=30)
    made = 0
    try:
        for i in range(rows):
            body = json.dumps({"title": f"seeded to-do {i + 1}", "done": i % 3 == 0}).encode()
            conn.request("POST", "/todos", body=body, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            if r.status != 201:
                raise RuntimeError(f"seeding {app.name}: POST /todos gave {r.status}")
            made += 1
    finally:
        conn.close()
    if request(app.port, "GET", f"/todos/{rows}")[0] != 200:
        raise RuntimeError(f"seeding {app.name}: GET /todos/{rows} is not 200 after {made} rows")
    return made


# ---- the load -------------------------------------------------------------------------------

@dataclass
class Step:
    key: str
    conns: int
    tool: str   # "wrk" or "ab"


def load_command(a, step: Step, port: int, duration: int) -> list[str]:
    url = f"http://127.0.0.1:{port}"
    if step.tool == "ab":
        # ab: HTTP/1.0, a new connection per request; -r counts receive errors instead of
        # stopping; -s bounds a stuck request.
        return ["ab", "-r", "-s", "10", "-n", str(a.users1k_requests), "-c", str(step.conns),
                f"{url}/health"]
    cmd = ["wrk", f"-t{min(a.app_wrk_threads, step.conns)}", f"-c{step.conns}", f"-d{duration}s",
           "--latency"]
    script = {"jwt": "login.lua", "db-read": "todo-read.lua", "db-write": "todo-write.lua"}.get(step.key)
    path = {"jwt": "/login", "health": "/health", "db-write": "/todos"}.get(step.key, "")
    if script:
        cmd += ["-s", str(BENCH / "wrk" / script)]
    cmd.append(url + path)
    if step.key == "db-read":
        cmd += ["--", str(a.rows)]
    return cmd


def display(cmd: list[str]) -> str:
    """The command as the report shows it: bench/-relative paths, PORT for the port."""
    text = " ".join(c.replace(str(BENCH) + "/", "bench/") for c in cmd)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


def parse_ab(text: str) -> dict:
    r = {"rps": 0.0, "requests": 0, "errors": 0, "timeouts": 0, "non2xx": 0,
         "p50": None, "p90": None, "p99": None, "failed": None}
    num = lambda pat: (lambda m: m.group(1) if m else None)(re.search(pat, text, re.M))
    if num(r"^Requests per second:\s+([\d.]+)"):
        r["rps"] = float(num(r"^Requests per second:\s+([\d.]+)"))
    r["requests"] = int(num(r"^Complete requests:\s+(\d+)") or 0)
    r["failed"] = int(num(r"^Failed requests:\s+(\d+)") or 0)
    r["errors"] = r["failed"]
    r["non2xx"] = int(num(r"^Non-2xx responses:\s+(\d+)") or 0)
    for pct in ("50", "90", "99"):
        v = num(rf"^\s+{pct}%\s+(\d+)")
        r["p" + pct] = float(v) if v is not None else None
    return r


def parse_wrk_full(text: str) -> dict:
    r = parse_wrk(text)
    m = re.search(r"^\s+90%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
    r["p90"] = float(m.group(1)) * UNIT_MS[m.group(2)] if m else None
    return r


class Sampler:
    """Largest summed RSS and thread count of a process tree, sampled every 0.1 s."""

    def __init__(self, pid: int):
        self.pid, self.rss, self.threads = pid, 0, 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stop_event.is_set():
            m = mem_of(proc_tree(self.pid))
            self.rss = max(self.rss, m["VmRSS"])
            self.threads = max(self.threads, m["Threads"])
            self.stop_event.wait(0.1)

    def stop(self):
        self.stop_event.set()
        self.thread.join()


def measure(a, app: App, step: Step) -> dict:
    pids = proc_tree(app.proc.pid)
    server_cpus = parse_cpus(a.server_cpus)
    busy0, total0 = cpu_busy_ticks(server_cpus)
    t0 = cpu_ticks(pids)
    sampler = Sampler(app.proc.pid)
    wall0 = time.monotonic()
    text, load_cpu = run_wrk(load_command(a, step, app.port, a.duration))
    wall = time.monotonic() - wall0
    sampler.stop()
    t1 = cpu_ticks(proc_tree(app.proc.pid) or pids)
    busy1, total1 = cpu_busy_ticks(server_cpus)
    r = parse_ab(text) if step.tool == "ab" else parse_wrk_full(text)
    server_cpu_s = (t1 - t0) / CLK_TCK
    r["server_cpu_pct"] = 100.0 * server_cpu_s / wall
    r["us_per_req"] = (1e6 * server_cpu_s / r["requests"]) if r["requests"] else None
    r["load_cpu_pct"] = 100.0 * load_cpu / wall
    # Busy time of the server CPUs that was not the server's: the database server (for the
    # db workloads) and everything else on the machine (noise).
    r["other_pct"] = max(0.0, 100.0 * ((busy1 - busy0) - (t1 - t0)) / max(1, total1 - total0))
    r["rss_max_kib"] = sampler.rss
    r["threads_max"] = sampler.threads
    r["alive"] = app.proc.poll() is None
    r["raw"] = text
    return r


# ---- the run --------------------------------------------------------------------------------

def ok_rps(r: dict) -> float:
    """Requests per second answered 2xx: wrk and ab count a 503 as a request done."""
    bad = r["non2xx"] + (r.get("failed") or 0)
    return r["rps"] * max(0, r["requests"] - bad) / r["requests"] if r["requests"] else 0.0


def summarise(rs: list[dict], mem: dict, tool: str) -> dict:
    ok = [ok_rps(r) for r in rs]
    return {
        "rps": med(ok), "rps_min": min(ok, default=None), "rps_max": max(ok, default=None),
        "all_rps": med([r["rps"] for r in rs]),
        "p50": med([r["p50"] for r in rs]), "p90": med([r["p90"] for r in rs]),
        "p99": med([r["p99"] for r in rs]),
        "us": med([r["us_per_req"] for r in rs]),
        "cpu": med([r["server_cpu_pct"] for r in rs]),
        "other": med([r.get("other_pct") for r in rs]),
        "errors": sum(r["errors"] + r["timeouts"] for r in rs),
        "non2xx": sum(r["non2xx"] for r in rs),
        "failed": sum(r["failed"] or 0 for r in rs) if tool == "ab" else None,
        "requests": sum(r["requests"] for r in rs),
        "peak_rss_kib": max([mem.get("VmHWM", 0)] + [r["rss_max_kib"] for r in rs]),
        "threads": max([mem.get("Threads", 0)] + [r["threads_max"] for r in rs]),
        "procs": mem.get("procs"),
    }


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits=0):
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def steps_for(a, key: str) -> list[Step]:
    if key == "users1k":
        return [Step(key, a.users1k_conns, "ab")]
    if key == "jwt":
        return [Step(key, c, "wrk") for c in a.jwt_conns]
    return [Step(key, c, "wrk") for c in a.levels]


def run(a) -> dict:
    out_dir = Path(a.out)
    raw = out_dir / "raw-apps"
    raw.mkdir(parents=True, exist_ok=True)
    limit, note = raise_fd_limit(max(4096, 4 * a.users1k_conns))
    if note:
        log(note)
    work = Path(tempfile.mkdtemp(prefix="tern-apps-"))
    work.chmod(0o755)  # nginx's workers run as nobody when started as root
    apps_obj = Apps(a, work)
    results: dict = {"steps": [], "left_out": {}, "fd_limit": limit,
                     "loadavg_start": open("/proc/loadavg").read().split()[:3],
                     "started": time.strftime("%Y-%m-%d %H:%M")}
    running: list[App] = []

    def stop_all():
        for app in running:
            stop_proc(app.proc)
        running.clear()

    try:
        port_base = a.base_port
        for key in [k for k in APP_WORKLOADS if k in a.workloads.split(",")]:
            for step in steps_for(a, key):
                apps = apps_obj.for_workload(key)
                for app in apps:
                    if app.why_out:
                        results["left_out"][f"{key}/{app.name}"] = app.why_out
                live: list[App] = []
                for i, app in enumerate([x for x in apps if not x.why_out]):
                    app.port = port_base + i
                    log_path = raw / f"{key}-c{step.conns}-{app.name}.log"
                    app.proc = apps_obj.spawn(app, app.port, log_path)
                    running.append(app)
                    if not wait_ready(app):
                        tail = log_path.read_text(errors="replace")[-300:].strip()
                        results["left_out"][f"{key}/{app.name}"] = f"did not start ({tail or 'no output'})"
                        log(f"{key}: {app.name} did not start: {tail}")
                        stop_proc(app.proc)
                        continue
                    if key == "db-read":
                        made = seed(app, a.rows)
                        if made:
                            log(f"{key}: seeded {made} rows through {app.name}")
                    why = check_answers(app, key)
                    if why:
                        results["left_out"][f"{key}/{app.name}"] = why
                        log(f"{key}: {app.name} left out: {why}")
                        stop_proc(app.proc)
                        continue
                    live.append(app)
                port_base += 10
                cmd = load_command(a, step, 8080, a.duration)
                log(f"{key} c={step.conns}: {display(cmd)} x {a.rounds} rounds, "
                    f"{', '.join(x.name for x in live)}")
                rec = {"workload": key, "conns": step.conns, "tool": step.tool,
                       "command": display(cmd), "servers": {}}
                if a.warmup > 0 and step.tool == "wrk":
                    for app in live:
                        run_wrk(load_command(a, step, app.port, a.warmup))
                runs: dict[str, list[dict]] = {app.name: [] for app in live}
                for rnd in range(a.rounds):
                    for app in live:
                        if app.proc.poll() is not None:
                            continue
                        r = measure(a, app, step)
                        (raw / f"{key}-c{step.conns}-{app.name}-{rnd + 1}.txt").write_text(r.pop("raw"))
                        r["round"] = rnd + 1
                        runs[app.name].append(r)
                        log(f"  {key} c={step.conns} r{rnd + 1} {app.name:11s} {r['rps']:>10,.0f} req/s "
                            f"p99 {fmt(r['p99'], 2):>8s} ms  cpu {r['server_cpu_pct']:5.1f}%  "
                            f"load {r['load_cpu_pct']:5.1f}%  other {r['other_pct']:5.1f}%  rss {r['rss_max_kib'] / 1024:6.1f} MiB  "
                            f"thr {r['threads_max']}  err {r['errors']}/{r['timeouts']}/{r['non2xx']}")
                for app in live:
                    alive = app.proc.poll() is None
                    mem = mem_of(proc_tree(app.proc.pid)) if alive else {}
                    rs = runs[app.name]
                    rec["servers"][app.name] = {"label": app.label, "alive": alive, "runs": rs,
                                                "mem_end": mem, **summarise(rs, mem, step.tool)}
                    if not alive:
                        rec["servers"][app.name]["died"] = f"exit status {app.proc.returncode}"
                stop_all()
                results["steps"].append(rec)
        if apps_obj.pg is not None:
            results["postgres"] = apps_obj.pg.version()
        results["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    finally:
        stop_all()
        if apps_obj.pg is not None:
            apps_obj.pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    return results


TITLES = {
    "jwt": "JWT login: POST /login (HS256 token, plain password compare)",
    "health": "health endpoint: GET /health",
    "db-read": "database read: GET /todos/{random id}",
    "db-write": "database write: POST /todos",
    "users1k": "1,000 users: ab, a new connection per request, GET /health",
}


def ratio(a, b):
    return f"{a / b:.2f}×" if a and b else "–"


def report(results: dict, a) -> str:
    for rec in results["steps"]:  # recomputed: --report-only reads an older apps.json
        for s in rec["servers"].values():
            kept = {k: s[k] for k in ("peak_rss_kib", "threads") if "mem_end" not in s and k in s}
            s.update(summarise(s["runs"], s.get("mem_end", {}), rec["tool"]), **kept)
    lines = [f"# Real-app workloads (bench/lib/apps.py)", "",
             f"{a.rounds} interleaved round(s) of {a.duration} s per server (ab: "
             f"{a.users1k_requests:,} requests), medians; servers on CPU {a.server_cpus}, load on "
             f"CPU {a.load_cpus}; every server fresh for each step. Peak RSS: VmHWM summed over "
             "the process tree (the database server not counted); threads: the most seen. "
             "*2xx req/s*: answers with a 2xx status per second (wrk and ab count a 503 "
             "as a request like any other; their count is *non-2xx*). "
             "tern ÷ peer: tern's 2xx req/s over the peer's, both from this run (>1: tern "
             "answered more); the SQLite row has no peer. *server CPU %*: the server's "
             "process tree, of one core; *other %*: the rest of the server CPU's busy time "
             "(PostgreSQL in the db rows, other people's work always).", "",
             f"Started {results.get('started')}; load average at the start "
             f"{' '.join(results.get('loadavg_start', []))}, at the end "
             f"{' '.join(results.get('loadavg_end', []))} (a 2-core machine: above 2, other "
             "work waited for the CPUs).", ""]
    if results.get("postgres"):
        lines += [f"PostgreSQL: {results['postgres']}, default settings, pinned with the servers.", ""]
    for rec in results["steps"]:
        key = rec["workload"]
        lines += [f"## {TITLES[key]}, {rec['conns']} connections", "", f"`{rec['command']}`", ""]
        ab = rec["tool"] == "ab"
        lines.append("| server | 2xx req/s (min–max) | p50 ms | p90 ms | p99 ms | "
                     + ("failed | " if ab else "errors | non-2xx | ")
                     + "peak RSS MiB | threads | server CPU % | other % | CPU µs/req | tern ÷ peer req/s |")
        lines.append("|---|---:|---:|---:|---:|" + ("---:|" if ab else "---:|---:|")
                     + "---:|---:|---:|---:|---:|---:|")
        srv = rec["servers"]
        for name, s in srv.items():
            base = "tern-sqlite" if name == "tern-sqlite" else (
                "tern-pg" if name.endswith("-pg") else "tern")
            ref = srv.get(base, {}).get("rps")
            # A 503 is answered fast: the percentiles of a run with non-2xx mix them in.
            mark = " †" if s["non2xx"] else ""
            cells = [f"{name} ({s['label']})" + (f" **died: {s['died']}**" if s.get("died") else ""),
                     f"{fmt(s['rps'])} ({fmt(s['rps_min'])}–{fmt(s['rps_max'])})",
                     fmt(s["p50"], 2) + mark, fmt(s["p90"], 2) + mark, fmt(s["p99"], 2) + mark]
            cells += [fmt(s["failed"])] if ab else [fmt(s["errors"]), fmt(s["non2xx"])]
            cells += [fmt(s["peak_rss_kib"] / 1024, 1), fmt(s["threads"]), fmt(s["cpu"], 0),
                      fmt(s["other"], 0), fmt(s["us"], 1),
                      "" if name == base else ratio(ref, s["rps"])]
            lines.append("| " + " | ".join(cells) + " |")
        if any(s["non2xx"] for s in srv.values()):
            lines.append("")
            lines.append("† the latencies include the non-2xx answers (examples/todo answers 503 "
                         "at once when its blocking pool's queue, 256, is full), so they are not "
                         "comparable with a server that queued every request.")
        lines.append("")
    if results["left_out"]:
        lines += ["## Left out", ""] + [f"- {k}: {v}" for k, v in results["left_out"].items()] + [""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workloads", default=",".join(APP_WORKLOADS))
    ap.add_argument("--peers", default="", help="tern,go,node,nginx (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--server-cpus", default="1")
    ap.add_argument("--load-cpus", default="0")
    ap.add_argument("--server-threads", type=int, default=1)
    ap.add_argument("--levels", default="10,100,500", help="connections for health and db-*")
    ap.add_argument("--jwt-conns", default="50")
    ap.add_argument("--app-wrk-threads", type=int, default=1)
    ap.add_argument("--users1k-requests", type=int, default=60000)
    ap.add_argument("--users1k-conns", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=1000, help="rows seeded before db-read")
    ap.add_argument("--base-port", type=int, default=18400)
    ap.add_argument("--report-only", metavar="APPS_JSON",
                    help="write apps.md again from an apps.json (no run)")
    a = ap.parse_args()
    if a.report_only:
        saved = json.loads(Path(a.report_only).read_text())
        for k, v in saved["args"].items():
            if k not in ("out", "report_only"):
                setattr(a, k, v)
        text = report(saved, a)
        (Path(a.out) / "apps.md").write_text(text + "\n")
        print(text)
        return
    a.levels = [int(x) for x in a.levels.split(",") if x]
    a.jwt_conns = [int(x) for x in a.jwt_conns.split(",") if x]
    results = run(a)
    text = report(results, a)
    out = Path(a.out)
    (out / "apps.md").write_text(text + "\n")
    (out / "apps.json").write_text(json.dumps({"args": vars(a), **results}, indent=1))
    print()
    print(text)
    log(f"report: {out / 'apps.md'}")


if __name__ == "__main__":
    main()

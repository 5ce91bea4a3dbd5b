#!/usr/bin/env python3
"""The conformance tables: tests/conformance/http1.py (RFC 9112 and RFC 9110 cases) and
tests/conformance/h2.py (RFC 9113 and RFC 7541, over h2c) against tern and the peers bench/
runs, in one session.

    bench/conformance.py HELLO [--peers nginx,h2o,node,go] [--build-dir bench/.build]
                               [--live-app BENCH_LIVE_APP]

HELLO is the examples/hello binary (run in examples/hello, for ./public; it serves HTTP/1.1
and h2c on one port). Each peer is started with its bench/ configuration (bench/peers/); for
HTTP/2, nginx with `http2` on its plain listener and Node's http2 module over cleartext.
For WebSocket (tests/conformance/ws.py, RFC 6455 by Autobahn's categories), bench/ws.py's
servers: tern's bench_live_app, Node's `ws` and Python's `websockets`, each echoing on
/ws/echo. Those that are not installed or built are left out and said so. Prints, per protocol, a
Markdown table of cases passed per section and server, and under it every case a server
failed with what it answered: the README's conformance tables are this output.
"""
import argparse
import collections
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "lib"))
from servers import Peers, stop_proc  # noqa: E402  (bench/lib, beside this script)
import procs  # noqa: E402  (tests/support/procs.py, on the path bench/lib/common puts it on)
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

SUITES = {"HTTP/1.1": BENCH.parent / "tests" / "conformance" / "http1.py",
          "HTTP/2": BENCH.parent / "tests" / "conformance" / "h2.py",
          "WebSocket": BENCH.parent / "tests" / "conformance" / "ws.py"}
# The WebSocket servers: bench/ws.py's, each echoing on /ws/echo.
WS_SERVERS = ["tern", "node", "python"]

# Node's HTTP/2 server over cleartext (prior knowledge), answering GET / like bench's peer.
NODE_H2C = """
const http2 = require('http2');
http2.createServer((req, res) => {
  res.writeHead(req.url === '/' ? 200 : 404, {'content-type': 'text/plain'});
  res.end(req.url === '/' ? 'Hello, World!' : 'Not Found');
}).listen(Number(process.argv[1]), '127.0.0.1');
"""

# Cases a peer fails because of how bench/ configures it, not how it follows the RFC: shown
# as "n/a" with the reason, not scored.
NOT_SCORED = {
    ("h2o", "pipelined requests are answered in order"):
        "bench's h2o configuration answers every path with its file, so the missing path is "
        "a 200 too and the order cannot be seen",
    ("node", "the absolute form of the target is accepted"):
        "Node accepts it and hands the target to the application unchanged (req.url is the "
        "absolute URI); bench's Node peer compares req.url with \"/\" and answers 404",
}


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return s.recv(4096).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def wait_ready(proc: subprocess.Popen, port: int, h2c: bool) -> bool:
    """HTTP/1.1 servers must answer GET / with 200; h2c-only ones (nginx's `listen ...
    http2` on a plain port) only listen."""
    return procs.poll_until(lambda: (listens if h2c else answers)(port), 15, proc)


def start_ws(name: str, port: int, live_app: Path):
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if name == "tern":
        if not live_app.exists():
            return None, f"{live_app} was not built"
        return groups.start([str(live_app), "--threads", "1", str(port)], **quiet), ""
    if name == "node":
        if not Path("/usr/share/nodejs/ws").exists():
            return None, "node-ws is not installed"
        return groups.start(["node", str(BENCH / "peers" / "node" / "ws.js"), str(port)],
                            env=dict(os.environ, NODE_PATH="/usr/share/nodejs"),
                            **quiet), ""
    return groups.start(["/usr/bin/python3", str(BENCH / "peers" / "python" /
                                                 "ws_server.py"), str(port)], **quiet), ""


def start(name: str, port: int, h2c: bool, peers: Peers, hello: Path, work: Path):
    """The server `name` on port, for the HTTP/1.1 suite or (h2c) the HTTP/2 one; None with
    the reason when it cannot run."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if name == "tern":  # hello serves HTTP/1.1 and h2c (prior knowledge) on one port
        return groups.start([str(hello), str(port)],
                            cwd=BENCH.parent / "examples" / "hello", **quiet), ""
    why = peers.available(name)
    if why:
        return None, why
    if h2c and name == "nginx":
        conf = peers.render("nginx.conf.in", port, work / f"nginx-h2c-{port}.conf")
        conf.write_text(conf.read_text().replace(f"listen 127.0.0.1:{port} ",
                                                 f"listen 127.0.0.1:{port} http2 "))
        for d in ("nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
            (work / d).mkdir(exist_ok=True)
        return groups.start(["nginx", "-c", str(conf), "-p", str(work), "-e",
                             str(work / "nginx-error.log")], **quiet), ""
    if h2c and name == "node":
        return groups.start(["node", "-e", NODE_H2C, str(port)], **quiet), ""
    if h2c and name == "go":
        return None, "bench's Go peer serves HTTP/1.1 only (no h2c handler)"
    return peers.spawn(name, port, None, work / f"{name}.log"), ""


def table(results: dict[str, list[dict]]) -> None:
    sections: dict[str, None] = {}
    for rows in results.values():
        for r in rows:
            sections.setdefault(r["section"], None)
    names = list(results)
    print("| section | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for section in sections:
        cells = []
        for n in names:
            rows = [r for r in results[n] if r["section"] == section]
            cells.append(f"{sum(r['passed'] for r in rows)}/{len(rows)}")
        print(f"| {section} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(r['passed'] for r in results[n])}/{len(results[n])}**" for n in names]
    print("| all cases | " + " | ".join(totals) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("hello")
    p.add_argument("--peers", default="nginx,h2o,node,go")
    p.add_argument("--build-dir", default=str(BENCH / ".build"))
    p.add_argument("--port", type=int, default=19900)
    p.add_argument("--live-app", help="bench_live_app (default: beside HELLO's build, "
                   "examples/bench_app/bench_live_app)")
    a = p.parse_args()
    hello = Path(a.hello).resolve()
    if not a.live_app:
        a.live_app = str(hello.parent.parent / "bench_app" / "bench_live_app")

    work = Path(tempfile.mkdtemp(prefix="tern-conformance-"))
    work.chmod(0o755)  # h2o started as root serves files as nobody
    (work / "www").mkdir()
    peers = Peers(SimpleNamespace(build_dir=a.build_dir, server_threads=1), work)
    servers = ["tern"] + [n for n in a.peers.split(",") if n]
    port = a.port
    for protocol, suite in SUITES.items():
        h2c = protocol == "HTTP/2"
        results: dict[str, list[dict]] = {}
        notes: list[str] = []
        for name in (WS_SERVERS if protocol == "WebSocket" else servers):
            port += 1
            if protocol == "WebSocket":
                proc, why = start_ws(name, port, Path(a.live_app).resolve())
            else:
                proc, why = start(name, port, h2c, peers, hello, work)
            if proc is None:
                notes.append(f"{name} left out: {why}")
                continue
            try:
                if not wait_ready(proc, port, h2c or protocol == "WebSocket"):
                    notes.append(f"{name} left out: it did not start")
                    continue
                out = subprocess.run([sys.executable, str(suite), str(port), "--json"],
                                     capture_output=True, text=True, timeout=600)
                rows = json.loads(out.stdout)
            finally:
                stop_proc(proc)
            results[name] = []
            for r in rows:
                reason = NOT_SCORED.get((name, r["name"]))
                if reason:
                    notes.append(f"{name}, not scored: {r['name']}: {reason}")
                else:
                    results[name].append(r)
                    if not r["passed"]:
                        notes.append(f"{name}, {r['section']} ({r['requirement']}): "
                                     f"{r['name']}: {r['why']}")
        counts = collections.Counter(r["requirement"] for r in next(iter(results.values()), []))
        print(f"### {protocol}: {sum(counts.values())} cases ({counts['MUST']} MUST, "
              f"{counts['SHOULD']} SHOULD), `{suite.relative_to(BENCH.parent)}`\n")
        table(results)
        print()
        for note in notes:
            print(f"- {note}")
        print()
    print(f"{time.strftime('%Y-%m-%d')}: `bench/conformance.py {a.hello} --peers {a.peers}`")


if __name__ == "__main__":
    main()

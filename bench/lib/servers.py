"""The servers under test: how each is started, stopped and probed."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from common import BENCH, HELLO, answers_hello
import groups
import procs  # noqa: E402  (tests/support/procs.py, on the path common puts it on)

# ---- peers ---------------------------------------------------------------------------------

@dataclass
class Peer:
    name: str
    label: str
    note: str = ""
    proc: subprocess.Popen | None = None
    port: int = 0
    why_out: str = ""          # set when the peer is left out
    can_post: bool = False
    post_note: str = ""
    can_static: bool = False
    static_note: str = ""
    idle: dict = field(default_factory=dict)
    log_path: Path | None = None


class Peers:
    """Knows how to start each peer on a port."""

    def __init__(self, args, work: Path):
        self.args = args
        self.work = work
        self.build = Path(args.build_dir)
        self.www = work / "www"
        (work / "hello.txt").write_bytes(HELLO)
        self.threads = args.server_threads

    def available(self, name: str) -> str:
        """Empty when the peer can run, else why not."""
        need = {
            "tern": self.bench_app_path(),
            "tern-1t": self.bench_app_path(),
            "tern-uring": self.bench_app_path(uring=True),
            "ceiling": self.build / "ceiling",
            "beast": self.build / "beast",
            "httplib": self.build / "httplib",
            "go": self.build / "go-peer",
        }
        if name in need:
            return "" if need[name].exists() else f"{need[name].name} was not built"
        tool = {"nginx": "nginx", "h2o": "h2o", "node": "node"}[name]
        return "" if shutil.which(tool) else f"`{tool}` is not installed"

    def bench_app_path(self, uring: bool = False) -> Path:
        # Built by tern's own examples/CMakeLists.txt inside the superbuild; the io_uring
        # variant (-DTERN_IO_URING=ON) in a build of tern alone beside it (bench/run.sh).
        if uring:
            return self.build / "uring" / "examples" / "bench_app" / "bench_app"
        return self.build / "tern" / "examples" / "bench_app" / "bench_app"

    def render(self, template: str, port: int, dest: Path, echo: bool = False) -> Path:
        text = (BENCH / "peers" / template).read_text()
        text = (text.replace("@WORK@", str(self.work)).replace("@PORT@", str(port))
                .replace("@STATIC@", str(self.www)).replace("@THREADS@", str(self.threads)))
        if echo:
            text = text.replace("#echo: ", "")
        dest.write_text(text)
        return dest

    def nginx_echo(self) -> bool:
        return Path("/usr/lib/nginx/modules/ngx_http_echo_module.so").exists()

    def command(self, name: str, port: int) -> tuple[list[str], dict]:
        env = dict(os.environ)
        t = str(self.threads)
        if name == "tern":
            return [str(self.bench_app_path()), str(port), t, str(self.www)], env
        if name == "tern-uring":
            return [str(self.bench_app_path(uring=True)), str(port), t, str(self.www)], env
        if name == "tern-1t":
            # tern with one worker whatever --server-threads says, to run beside "tern"
            # with --server-threads 2 in the same interleaved rounds.
            return [str(self.bench_app_path()), str(port), "1", str(self.www)], env
        if name == "ceiling":
            return [str(self.build / "ceiling"), str(port)], env
        if name == "beast":
            return [str(self.build / "beast"), str(port), t], env
        if name == "httplib":
            return [str(self.build / "httplib"), str(port), str(self.www)], env
        if name == "go":
            env["GOMAXPROCS"] = t
            return [str(self.build / "go-peer"), str(port), str(self.www)], env
        if name == "node":
            return ["node", str(BENCH / "peers" / "node.js"), str(port)], env
        if name == "nginx":
            conf = self.render("nginx.conf.in", port, self.work / f"nginx-{port}.conf",
                               echo=self.nginx_echo())
            for d in ("nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
                (self.work / d).mkdir(exist_ok=True)
            return ["nginx", "-c", str(conf), "-p", str(self.work), "-e",
                    str(self.work / "nginx-error.log")], env
        if name == "h2o":
            conf = self.render("h2o.conf.in", port, self.work / f"h2o-{port}.conf")
            return ["h2o", "-c", str(conf)], env
        raise KeyError(name)

    def spawn(self, name: str, port: int, cpus: list[int] | None, log_path: Path | None):
        cmd, env = self.command(name, port)
        if cpus is not None:
            cmd = ["taskset", "-c", ",".join(map(str, cpus))] + cmd
        out = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            return groups.start(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                            close_fds=False)
        finally:
            if log_path:
                out.close()


def stop_proc(p: subprocess.Popen | None, timeout: float = 5.0):
    groups.stop(p, timeout=timeout)  # its own group: nginx's worker goes too


def wait_ready(p: subprocess.Popen, port: int, timeout: float = 15.0) -> bool:
    """True once the server on `port` answers hello; False when it exits or `timeout` passes."""
    return procs.poll_until(lambda: answers_hello(port), timeout, p, interval=0.02)


ALL_PEERS = ["tern", "tern-uring", "ceiling", "nginx", "h2o", "beast", "go", "node", "httplib"]
# Peers run only when asked for with --peers.
EXTRA_PEERS = ["tern-1t"]
LABELS = {
    "tern": ("tern `examples/bench_app`", "`threads({n})`"),
    "tern-uring": ("tern `examples/bench_app` built with `-DTERN_IO_URING=ON`: asio's io_uring "
                   "backend for the outer loop (connections stay on tern's own epoll set)",
                   "`threads({n})`"),
    "tern-1t": ("tern `examples/bench_app` again", "`threads(1)` whatever --server-threads says"),
    "ceiling": ("bench/peers/ceiling.c: one epoll loop, answers every `\\r\\n\\r\\n` with "
                "canned bytes, parses nothing", ""),
    "nginx": ("nginx (Debian), `return 200`", "`worker_processes {n}`, plus its idle master process; "
              "POST through Debian's echo module (`echo_request_body`, chunked answer)"),
    "h2o": ("h2o (Debian), `file.file` for GET /", "`num-threads: {n}`; POST through its mruby "
            "handler; its file handler adds ETag/Last-Modified headers"),
    "beast": ("bench/peers/beast.cpp: Boost.Beast, async, one io_context", "{n} thread(s) run it"),
    "go": ("bench/peers/go/main.go: Go net/http, standard library only", "GOMAXPROCS={n}"),
    "node": ("bench/peers/node.js: Node.js http module", "single-threaded event loop"),
    "httplib": ("bench/peers/httplib.cpp: cpp-httplib (Debian)", "thread per connection from "
                "its default pool (not single-threaded); all pinned to the server CPU"),
}

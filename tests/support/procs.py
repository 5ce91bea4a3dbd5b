"""Starting and stopping the programs that the Python tests and bench/ run (a tern example,
a test app, a peer server): on a free port of 127.0.0.1, waiting until it is ready, stopped
with SIGTERM. The one copy of the free-port, wait-for-port and stop code (issue 33); a
script imports it with

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))  # tests/<dir>/
    import procs

    with procs.start([binary, "{port}", "--threads", "1"], name="hello") as srv:
        ... srv.port, srv.base ("http://127.0.0.1:PORT"), srv.proc ...
        srv.stop()        # SIGTERM; the exit status, which must be 0 unless told otherwise

Failures end the script as the tests report them: SystemExit("FAIL <what>"), after killing
the program, so a test never leaves a server running behind it.
"""
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Callable, Optional


def free_port() -> int:
    """A port of 127.0.0.1 that was free a moment ago (bound to 0, read and closed), for TCP
    and for UDP alike: a server that also serves HTTP/3 binds the same number over UDP, where
    a QUIC or DNS client of a test running beside it may hold it as its own ephemeral port."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                try:
                    u.bind(("0.0.0.0", port))
                except OSError:
                    continue
            return port
    raise RuntimeError("no port free for both TCP and UDP in 100 tries")


def accepts(port: int, host: str = "127.0.0.1") -> bool:
    """True when a TCP connection to host:port succeeds (it is closed at once)."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def answers(path: str = "/") -> Callable[[int], bool]:
    """A readiness check for start(): GET http://127.0.0.1:PORT<path> gives any status."""
    def check(port: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1) as r:
                r.read()
            return True
        except urllib.error.HTTPError:
            return True  # an answer, if not a 2xx: the server is up
        except OSError:
            return False
    return check


def poll_until(ready: Callable[[], bool], timeout: float = 15.0,
               proc: Optional[subprocess.Popen] = None, interval: float = 0.05) -> bool:
    """Polls `ready` every `interval` s: True once it is, False when `timeout` seconds pass
    first or `proc` exits meanwhile. For callers that report a failure their own way (bench/);
    the tests use wait_until."""
    deadline = time.monotonic() + timeout
    while True:
        if ready():
            return True
        if proc is not None and proc.poll() is not None:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def wait_until(ready: Callable[[], bool], what: str, timeout: float = 15.0,
               proc: Optional[subprocess.Popen] = None) -> None:
    """Polls `ready` every 50 ms until it is true; SystemExit("FAIL <what> ...") when `timeout`
    seconds pass first or `proc` exits meanwhile (it is killed on the timeout)."""
    if poll_until(ready, timeout, proc):
        return
    if proc is not None and proc.poll() is not None:
        raise SystemExit(f"FAIL {what}: the program exited with {proc.returncode} first")
    if proc is not None:
        kill(proc)
    raise SystemExit(f"FAIL {what}: not within {timeout:g} s")


def wait_for_port(port: int, proc: Optional[subprocess.Popen] = None, timeout: float = 15.0,
                  host: str = "127.0.0.1") -> None:
    """Waits until host:port accepts a TCP connection (wait_until's failures)."""
    wait_until(lambda: accepts(port, host), f"{host}:{port} accepts", timeout, proc)


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL, then reaps it; nothing when it has exited already."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()


class server:
    """A program started by start(): `proc`, `port`, `base` ("http://127.0.0.1:PORT") and
    `name`. As a context manager it kills the program on the way out unless stop() ended it."""

    def __init__(self, proc: subprocess.Popen, port: int, name: str):
        self.proc = proc
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.name = name

    def stop(self, timeout: float = 30.0, expect: Optional[int] = 0) -> int:
        """SIGTERM, then waits up to `timeout` s: the exit status. SystemExit("FAIL ...") when
        it does not end in time (it is killed) or, unless `expect` is None, when the status
        is not `expect`."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            status = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(self.proc)
            raise SystemExit(f"FAIL {self.name} did not stop within {timeout:g} s of SIGTERM")
        if expect is not None and status != expect:
            raise SystemExit(f"FAIL {self.name} exited with {status} after SIGTERM, not {expect}")
        return status

    def kill(self) -> None:
        """SIGKILL, then reaps it."""
        kill(self.proc)

    def __enter__(self) -> "server":
        return self

    def __exit__(self, *exc) -> None:
        kill(self.proc)


def start(argv: list[str], name: Optional[str] = None, port: Optional[int] = None,
          ready: Optional[Callable[[int], bool]] = None, timeout: float = 15.0,
          **popen) -> server:
    """Runs `argv` with every "{port}" in it replaced by `port` (a free one when None) and
    waits until `ready(port)` is true (default: the port accepts a TCP connection). stdout
    goes to /dev/null unless `popen` says otherwise; other `popen` keywords (cwd, env,
    stderr...) go to subprocess.Popen. SystemExit("FAIL <name> ...") when the program exits
    first or is not ready within `timeout` seconds (then it is killed)."""
    port = free_port() if port is None else port
    name = name or os.path.basename(argv[0])
    popen.setdefault("stdout", subprocess.DEVNULL)
    proc = subprocess.Popen([a.replace("{port}", str(port)) for a in argv], **popen)
    check = ready or accepts
    wait_until(lambda: check(port), f"{name} is ready on port {port}", timeout, proc)
    return server(proc, port, name)

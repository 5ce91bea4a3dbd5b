"""Every server a bench script starts, in a process group of its own that is ended on any exit.

start() runs a command in a new session (so its process group is its own, and nginx's workers
and h2o's helpers are in it) and remembers the group; stop() ends one group
(SIGTERM, then SIGKILL after a grace period). Whatever way the script ends, the groups still
running are ended too: on a normal exit or an exception (atexit), on SIGINT (KeyboardInterrupt
unwinds to atexit) and on SIGTERM or SIGHUP (turned into SystemExit here, so `finally` blocks
run first). Importing this module installs those handlers (from the main thread).

A SIGKILL leaves no chance to clean up, so when TERN_BENCH_GROUPS names a file (bench/run.sh
sets it), each group's id is also appended to it and the runner ends the listed groups itself
when it exits. The other way round, a script run by bench/run.sh ends itself as above when the
runner is gone (SIGKILLed: this process is then reparented).
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
import time

GRACE = 5.0  # seconds a group has to exit after SIGTERM before SIGKILL

_live: dict[int, subprocess.Popen | None] = {}  # group id -> its leader (None: adopted)


def start(cmd, **popen_kw) -> subprocess.Popen:
    """subprocess.Popen(cmd, **popen_kw) in a new session (stdin /dev/null unless given),
    ended by stop(), stop_all() or this script's exit."""
    popen_kw.setdefault("stdin", subprocess.DEVNULL)
    popen_kw["start_new_session"] = True
    p = subprocess.Popen(cmd, **popen_kw)
    _remember(p.pid, p)
    return p


def adopt(pgid: int) -> None:
    """Ends the process group `pgid` (one started elsewhere, e.g. by `pg_ctl start`) with the
    others when the script exits."""
    _remember(pgid, None)


def _remember(pgid: int, p: subprocess.Popen | None) -> None:
    _live[pgid] = p
    registry = os.environ.get("TERN_BENCH_GROUPS")
    if registry:
        with open(registry, "a") as f:
            f.write(f"{pgid}\n")


def stop(p: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = GRACE) -> None:
    """Sends `sig` to p's group, waits up to `timeout` s for p, then SIGKILLs what is left."""
    if p is None:
        return
    _signal_group(p.pid, sig)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        _signal_group(p.pid, signal.SIGKILL)
        p.wait()
    _signal_group(p.pid, signal.SIGKILL)  # members that outlived their leader
    _live.pop(p.pid, None)


def stop_all(timeout: float = GRACE) -> None:
    """Ends every group still running: SIGTERM to all at once, SIGKILL to what is left after
    `timeout` s."""
    groups = list(_live.items())
    for pgid, _ in groups:
        _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for pgid, p in groups:
        while time.monotonic() < deadline and _group_alive(pgid, p):
            time.sleep(0.05)
        _signal_group(pgid, signal.SIGKILL)
        if p is not None:
            p.wait()
        _live.pop(pgid, None)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int, p: subprocess.Popen | None) -> bool:
    if p is not None:
        return p.poll() is None
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _exit_on(signum, _frame):
    # Once: a second signal must not cut the cleanup short (stop_all is bounded by GRACE).
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def _watch_runner(runner: int) -> None:
    global _runner_gone
    while os.getppid() == runner:
        time.sleep(0.5)
    _runner_gone = True
    os.kill(os.getpid(), signal.SIGTERM)


def _drop_registry() -> None:
    # The runner that would have removed its list is gone; the groups in it are ended.
    if _runner_gone:
        try:
            os.unlink(os.environ["TERN_BENCH_GROUPS"])
        except OSError:
            pass


_runner_gone = False
atexit.register(_drop_registry)  # runs after stop_all (atexit runs last registered first)
atexit.register(stop_all)
if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGTERM, _exit_on)
    signal.signal(signal.SIGHUP, _exit_on)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started in the background by a shell without job control: take SIGINT anyway.
        signal.signal(signal.SIGINT, _exit_on)
    if os.environ.get("TERN_BENCH_GROUPS"):
        threading.Thread(target=_watch_runner, args=(os.getppid(),), daemon=True).start()

"""Shared by bench/lib: paths, logging, /proc readings, HTTP probes and the machine."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import resource
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent  # bench/
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
HELLO = b"Hello, World!"
POST_BODY_PROBE = b'{"probe":"echo"}'


T0 = time.monotonic()


def log(*args):
    print(f"[bench {time.monotonic() - T0:6.1f}s]", *args, flush=True)


# ---- sockets and limits ------------------------------------------------------------------

# free_port: the copy the tests use too (tests/support/procs.py).
from procs import free_port  # noqa: E402,F401
import groups  # noqa: E402,F401  (bench/lib: every server's group ends when the script does)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)


def raise_fd_limit(need: int) -> tuple[int, str]:
    """Raises RLIMIT_NOFILE (inherited by the servers) toward `need`; returns (limit, note)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(need, soft)
    note = ""
    if hard != resource.RLIM_INFINITY and hard < want:
        try:  # root may raise the hard limit too (up to /proc/sys/fs/nr_open)
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            soft, hard = want, want
        except (ValueError, OSError) as e:
            note = f"RLIMIT_NOFILE hard limit {hard} < {want} and cannot be raised ({e})"
    if soft < min(want, hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
        except (ValueError, OSError) as e:
            note = f"RLIMIT_NOFILE stays {soft} ({e})"
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0], note


# ---- servers under test -------------------------------------------------------------------

def self_signed_cert(work: Path, name: str = "localhost") -> None:
    """An EC P-256 certificate for `name`, valid a day: work/cert.pem and work/key.pem
    (tests/support/certs.py, the tests' own)."""
    self_signed(work, name)


def stop_groups(procs) -> None:
    """Ends each server's process group (started by groups.start): SIGTERM, SIGKILL after 10 s."""
    for p in procs:
        groups.stop(p, timeout=10)


# ---- /proc helpers ------------------------------------------------------------------------

def callgrind_total(work: Path, prefix: str) -> int:
    """The instructions of the busiest process among callgrind's files `work/prefix.*` (run
    with --callgrind-out-file=work/prefix.%p: a server's forked helpers write files of their
    own). Exits when there are none."""
    totals = [int(line.split()[1]) for f in work.glob(prefix + ".*")
              for line in f.read_text(errors="replace").splitlines()
              if line.startswith("summary:") or line.startswith("totals:")]
    if not totals:
        raise SystemExit(f"no callgrind totals for {work / prefix}")
    return max(totals)


def exclusive_by_function(work, prefix):
    """{(object, function): exclusive instructions} of the busiest of callgrind's files
    `work/prefix.*` (callgrind_annotate's per-function table; bench/h2-instructions.py and
    bench/h3-instructions.py split a run's cost with it)."""
    files = sorted(work.glob(prefix + ".*"), key=lambda f: f.stat().st_size)
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no",
                          str(files[-1])], capture_output=True, text=True).stdout
    counts = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)  (\S.*?)(?: \[(/[^\]]*)\])?$", line)
        if not m or m.group(2) == "PROGRAM TOTALS":
            continue
        obj = Path(m.group(3)).name if m.group(3) else "?"
        key = (obj, m.group(2).rsplit(":", 1)[-1])
        counts[key] = counts.get(key, 0) + int(m.group(1).replace(",", ""))
    return counts


def proc_tree(root: int) -> list[int]:
    """root and all its descendants (nginx's worker, h2o's helpers, ...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2:].split()
        children.setdefault(int(rest[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def cpu_ticks(pids: list[int]) -> int:
    """utime + stime of the processes (all their threads), in clock ticks."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2:].split()
        total += int(rest[11]) + int(rest[12])  # fields 14 and 15 of proc(5)
    return total


def status_fields(pid: int) -> dict[str, int]:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "Threads"):
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def mem_of(pids: list[int]) -> dict[str, int]:
    """Sum over the tree: RSS and VmHWM (KiB), threads, processes, open fds."""
    tot = {"VmRSS": 0, "VmHWM": 0, "Threads": 0, "procs": 0, "fds": 0}
    for pid in pids:
        st = status_fields(pid)
        if not st:
            continue
        tot["procs"] += 1
        for k in ("VmRSS", "VmHWM", "Threads"):
            tot[k] += st.get(k, 0)
        try:
            tot["fds"] += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            pass
    return tot


def cpu_busy_ticks(cpus: list[int]) -> tuple[int, int]:
    """(busy, total) ticks of the given CPUs from /proc/stat."""
    busy = total = 0
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *vals = line.split()
            if int(name[3:]) not in cpus:
                continue
            v = [int(x) for x in vals]
            t = sum(v[:8])  # user nice system idle iowait irq softirq steal
            total += t
            busy += t - v[3] - v[4]
    return busy, total


def parse_cpus(spec: str) -> list[int]:
    out = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


# ---- HTTP probes ---------------------------------------------------------------------------

def http_request(port: int, raw: bytes, timeout: float = 2.0) -> tuple[int, dict, bytes, bytes]:
    """Sends raw bytes, reads one Content-Length or chunked response.
    Returns (status, headers, body, raw head)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the response head")
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            need = int(headers["content-length"])
            while len(rest) < need:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                rest += chunk
            return status, headers, rest[:need], head + b"\r\n\r\n"
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while not rest.endswith(b"0\r\n\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                rest += chunk
            body, data = b"", rest
            while True:
                size_line, _, data = data.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    break
                body += data[:size]
                data = data[size + 2:]
            return status, headers, body, head + b"\r\n\r\n"
        return status, headers, rest, head + b"\r\n\r\n"


def get(port: int, path: str = "/", timeout: float = 2.0):
    raw = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    return http_request(port, raw, timeout)


def post(port: int, path: str, body: bytes):
    raw = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    return http_request(port, raw)


def answers_hello(port: int) -> bool:
    try:
        status, _, body, _ = get(port, "/", timeout=1.0)
        return status == 200 and body == HELLO
    except (OSError, ValueError, IndexError):
        return False


# ---- machine and repository ----------------------------------------------------------------

def machine_info(args) -> dict:
    def sh(cmd, strip=True):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                 cwd=ROOT).stdout
            return out.strip() if strip else out
        except OSError:
            return ""
    model = ""
    for line in sh(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    dirty = [l[3:] for l in sh(["git", "status", "--porcelain"], strip=False).splitlines() if l]
    tern_dirty = sorted({d.split("/")[0] for d in dirty if not d.startswith("bench/")})
    return {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "model": model or platform.processor(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "commit": sh(["git", "rev-parse", "--short", "HEAD"]),
        "dirty": tern_dirty,
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "versions": {
            "wrk": sh(["sh", "-c", "dpkg-query -W -f='${Version}' wrk"]),
            "nginx": sh(["sh", "-c", "dpkg-query -W -f='${Version}' nginx"]),
            "h2o": sh(["sh", "-c", "dpkg-query -W -f='${Version}' h2o"]),
            "boost": sh(["sh", "-c", "dpkg-query -W -f='${Version}' libboost-dev"]),
            "go": sh(["go", "version"]).replace("go version ", ""),
            "node": sh(["node", "--version"]),
            "cpp-httplib": sh(["sh", "-c", "dpkg-query -W -f='${Version}' libcpp-httplib-dev"]),
            "compiler": sh(["sh", "-c", "c++ --version | head -1"]),
        },
    }


def binary_sizes(args, work: Path) -> list[tuple[str, int, str]]:
    build = Path(args.build_dir)
    rows = []
    for label, path in (("tern `hello`", build / "tern" / "examples" / "hello" / "hello"),
                        ("tern `bench_app`", build / "tern" / "examples" / "bench_app" / "bench_app"),
                        ("ceiling", build / "ceiling"), ("beast", build / "beast"),
                        ("httplib", build / "httplib"), ("go", build / "go-peer")):
        if not path.exists():
            continue
        copy = work / ("stripped-" + path.name)
        shutil.copy(path, copy)
        subprocess.run(["strip", str(copy)], check=False)
        libs = subprocess.run(["ldd", str(copy)], capture_output=True, text=True).stdout
        shared = sorted({m.group(1) for m in re.finditer(r"^\s*(lib[\w+-]+)\.so", libs, re.M)}
                        - {"libc", "libm", "libgcc_s", "libstdc++", "libpthread", "libdl",
                           "librt", "libresolv"})
        rows.append((label, copy.stat().st_size, ", ".join(shared) or "libc/libstdc++ only"))
    for label, tool in (("nginx", "nginx"), ("h2o", "h2o"), ("node", "node")):
        p = shutil.which(tool)
        if p:
            rows.append((label + " (Debian binary)", Path(p).resolve().stat().st_size, "as packaged"))
    return rows

#!/usr/bin/env python3
"""User-space instructions per HTTP/2 request on the server side, tern beside h2o, counted by
callgrind (docs/performance.md, "HTTP/2: instructions per request"). Deterministic where
bench/h2.py's req/s are not: a busy machine gives about the same counts.

    bench/h2-instructions.py [--hello build/examples/hello/hello] [--servers tern,h2o]
                             [--requests 2000,12000] [--path /small.txt]

Each server runs under `valgrind --tool=callgrind` twice, and `h2load -c100 -m10 -n N`
(outside valgrind) sends N requests over h2 with TLS 1.3 (the same EC P-256 certificate);
the difference in instructions divided by the difference in requests leaves out start-up,
the 100 handshakes and shutdown. tern runs examples/hello --cert --key (whose /small.txt
is the same 24-byte static file h2o serves; `--path /` asks for hello's in-memory route,
which h2o does not have, so h2o is then left out). Kernel time (system calls, TCP) is not
counted: compare CPU per request with bench/h2.py as well. Needs valgrind, h2load, curl
and, for the peer, h2o (scripts/install-deps.sh --bench).

`--split` also prints where tern's instructions per request go, by library (exclusive
counts from callgrind_annotate, the same difference of the two runs) and, within nghttp2,
by the work its functions do. Debian's libnghttp2 is stripped, so for nghttp2's own split
run it against a build with symbols: `--library-path "$(bench/nghttp2-symbols.sh)"`, which
puts that directory first in tern's LD_LIBRARY_PATH (docs/performance.md, "Where the
instructions go, function by function").
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))
from common import callgrind_total, exclusive_by_function, free_port, self_signed_cert  # noqa: E402
import groups  # noqa: E402  (bench/lib: the servers' process groups end when this script does)

def h2o_conf(work, port):
    # bench/h2.py's configuration, run as root so that h2o can still write callgrind's file
    # after it drops its privileges.
    conf = re.search(r'H2O_CONF = """(.*?)"""', (HERE / "h2.py").read_text(), re.S).group(1)
    return conf.replace("user: nobody", "user: root").format(work=work, port=port)


def wait_up(port, path):
    for _ in range(300):
        r = subprocess.run(["curl", "-sk", "--http2", "-o", "/dev/null", "-w", "%{http_version}",
                            f"https://127.0.0.1:{port}{path}"], capture_output=True, text=True)
        if r.stdout == "2":
            return
        time.sleep(0.2)
    raise SystemExit(f"h2-instructions.py: nothing answers h2 on {port}")


# nghttp2's functions by the work they do (--split), matched on the function's name.
NGHTTP2_WORK = [
    ("checks of the request's fields", ("http_on_header", "check_header", "downcase",
                                        "check_authority", "check_method", "check_path",
                                        "http_on_request_headers", "http_on_remote_end")),
    ("HPACK decoding", ("inflate", "decode_length", "lookup_token", "hd_table_get",
                        "huff_decode", "rcbuf")),
    ("HPACK encoding", ("deflate", "huff_encode", "emit_", "bufs_add", "pack_headers",
                        "search_hd", "hash")),
]


def print_split(low, high, requests):
    """Instructions per request by library and, for nghttp2, by its work (--split)."""
    per = {k: (high.get(k, 0) - low.get(k, 0)) / requests for k in set(low) | set(high)}
    libraries = {}
    for (obj, _), n in per.items():
        name = re.sub(r"\.so[.\d]*$", "", obj) if obj != "?" else "unnamed (inlined, tern's mostly)"
        libraries[name] = libraries.get(name, 0) + n
    print("  by library (exclusive instructions per request):")
    for name, n in sorted(libraries.items(), key=lambda kv: -kv[1]):
        if n >= 1:
            print(f"  {n:9,.0f}  {name}")
    malloc = sum(n for (obj, fn), n in per.items() if obj.startswith("libc.")
                 and re.search(r"malloc|free|consolidate|unlink_chunk|tcache", fn))
    print(f"  {malloc:9,.0f}  of libc's: malloc and free")
    work = {}
    for (obj, fn), n in per.items():
        if not obj.startswith("libnghttp2"):
            continue
        kind = next((k for k, keys in NGHTTP2_WORK if any(x in fn for x in keys)),
                    "frames, streams and the rest")
        work[kind] = work.get(kind, 0) + n
    # A library with symbols names its internal functions too, not only the exported ones.
    if any(fn == "nghttp2_http_on_header" for (obj, fn) in per if obj.startswith("libnghttp2")):
        print("  nghttp2 by its work:")
        for kind, n in sorted(work.items(), key=lambda kv: -kv[1]):
            print(f"  {n:9,.0f}  {kind}")
    else:
        print("  (nghttp2 has no symbols here: --library-path \"$(bench/nghttp2-symbols.sh)\")")


def one_run(server, hello, work, path, requests, library_path=None):
    """(instructions, requests that succeeded) of one server run."""
    port = free_port()
    # %p: h2o forks helpers (its OCSP updater) that callgrind follows into files of their own.
    out = f"callgrind.{server}.{requests}"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / out}.%p"]
    if server == "tern":
        cmd = valgrind + [hello, str(port), "--cert", str(work / "cert.pem"),
                          "--key", str(work / "key.pem")]
    else:
        (work / "h2o.conf").write_text(h2o_conf(work, port))
        cmd = valgrind + ["h2o", "-c", str(work / "h2o.conf")]
    env = dict(os.environ)
    if server == "tern" and library_path:
        env["LD_LIBRARY_PATH"] = ":".join(filter(None, [library_path,
                                                        env.get("LD_LIBRARY_PATH")]))
    proc = groups.start(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_up(port, path)
        said = subprocess.run(["h2load", "-t1", "-c100", "-m10", f"-n{requests}",
                               f"https://127.0.0.1:{port}{path}"],
                              capture_output=True, text=True, timeout=600).stdout
        ok = re.search(r"(\d+) succeeded", said)
        if not ok:
            raise SystemExit(f"h2-instructions.py: h2load said:\n{said}")
    finally:
        os.killpg(proc.pid, signal.SIGINT if server == "tern" else signal.SIGTERM)
        proc.wait(120)
    return callgrind_total(work, out), int(ok.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hello", default="build/examples/hello/hello")
    ap.add_argument("--servers", default="tern,h2o")
    ap.add_argument("--requests", default="2000,12000")
    ap.add_argument("--path", default="/small.txt")
    ap.add_argument("--split", action="store_true",
                    help="also tern's instructions per request by library and nghttp2's work")
    ap.add_argument("--library-path",
                    help="put first in tern's LD_LIBRARY_PATH (nghttp2 with symbols)")
    args = ap.parse_args()
    servers = args.servers.split(",")
    if args.path != "/small.txt" and "h2o" in servers:
        servers.remove("h2o")
    low, high = (int(n) for n in args.requests.split(","))
    tools = ["valgrind", "h2load", "curl"] + (["h2o"] if "h2o" in servers else [])
    for tool in tools + (["callgrind_annotate"] if args.split else []):
        if not shutil.which(tool):
            raise SystemExit(f"h2-instructions.py: {tool} is missing")
    work = Path(tempfile.mkdtemp(prefix="tern-bench-h2i-"))
    (work / "public").mkdir()
    (work / "public" / "small.txt").write_text("An incoming GET request!")
    self_signed_cert(work)
    hello = os.path.abspath(args.hello)
    results = {}
    for server in servers:
        (i1, ok1), (i2, ok2) = (one_run(server, hello, work, args.path, n, args.library_path)
                                for n in (low, high))
        results[server] = (i2 - i1) / (ok2 - ok1)
        print(f"{server:5} {results[server]:9,.0f} instructions per request"
              f" ({i1:,} for {ok1} requests, {i2:,} for {ok2})", flush=True)
        if args.split and server == "tern":
            print_split(exclusive_by_function(work, f"callgrind.tern.{low}"),
                        exclusive_by_function(work, f"callgrind.tern.{high}"), ok2 - ok1)
    if "tern" in results and "h2o" in results:
        print(f"tern / h2o: {results['tern'] / results['h2o']:.2f}x")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""libtern loads zlib, brotli and zstd only when something uses them (docs/performance.md,
round 3), as it does OpenSSL, and never loads nghttp2: HTTP/2 is tern's own codec.

    codecs_on_demand.py HELLO REST_API

hello (plain HTTP/1.1 and h2c, no compression) needs none of the four libraries at link
time and maps none after a plain request, nor after an HTTP/2 request (h2c with prior
knowledge), which is answered, and hello goes on serving HTTP/1.1. rest_api
(app.compression(): zstd, br or gzip for answers of 1 KiB and more) maps none of the three
compression libraries after an uncompressed answer; a gzip answer loads zlib alone (and
gunzips to the same document), then br loads brotli's encoder, then zstd loads libzstd.

Then both again with libnghttp2 and zlib made unloadable (a mount namespace binds /dev/null
over libnghttp2's file, as the loader finds it, and the zlib file the first runs loaded;
skipped, exit 77, where namespaces are not allowed): hello still answers two h2c connections
and, over TLS (hello --cert --key), curl --http2 in HTTP/2, and says nothing of nghttp2 on
stderr; a gzip request to rest_api is answered uncompressed (stderr names libz.so.1 once),
br still works.
Prints a line per check; exits 1 when one fails.
"""
import gzip
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import h2.config
import h2.connection
import h2.events

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

LIBRARIES = ("libnghttp2.so", "libz.so", "libbrotlienc.so", "libzstd.so")


def mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        maps = f.read()
    return [name for name in LIBRARIES if name in maps]


def mapped_file(pid, name):
    """The path of the file of library `name` the process maps."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if name in line:
                return line.split()[-1]
    return None


def loader_file(soname):
    """The file the dynamic loader would take for `soname` (ldconfig's cache)."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith(soname + " ") and "=>" in line:
            return line.split("=>")[-1].strip()
    return None


def hidden(files, argv):
    """argv run in a mount namespace where each of `files` reads as empty (dlopen fails)."""
    binds = " && ".join(f"mount --bind /dev/null {f}" for f in files)
    return ["unshare", "-m", "sh", "-c", f'{binds} && exec "$0" "$@"'] + argv


def http1(port, path="/", encoding=None):
    """(status line, headers dict, body) of one GET with Connection: close."""
    extra = f"Accept-Encoding: {encoding}\r\n" if encoding else ""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}"
                  "Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return lines[0], headers, body


def https_version(port):
    """(HTTP version, status) curl agreed on for GET / over TLS, offering h2 and http/1.1."""
    r = subprocess.run(["curl", "-sk", "--http2", "-o", "/dev/null", "-w",
                        "%{http_version} %{http_code}", f"https://127.0.0.1:{port}/"],
                       capture_output=True, text=True, timeout=15)
    return r.stdout


def h2c(port):
    """(status, body) of GET / over h2c with prior knowledge."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, [(":method", "GET"), (":path", "/"), (":scheme", "http"),
                               (":authority", "localhost")], end_stream=True)
    status, body = None, b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(conn.data_to_send())
        done = False
        while not done:
            chunk = s.recv(65536)
            if not chunk:
                break
            for event in conn.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived):
                    status = dict(event.headers).get(b":status")
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, stream)
                elif isinstance(event, h2.events.StreamEnded):
                    done = True
            s.sendall(conn.data_to_send())
    return status, body


def main():
    hello, rest_api = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    needed = subprocess.run(["readelf", "-d", hello], capture_output=True, text=True).stdout
    named = [name for name in LIBRARIES if name in needed]
    check("hello needs none of libnghttp2, libz, libbrotlienc, libzstd at link time",
          not named, named)

    here = Path(__file__).resolve().parent
    with procs.start([hello, "{port}"], name="hello", cwd=here.parents[1] / "examples" / "hello") as srv:
        line, _, body = http1(srv.port)
        check("hello answers a plain request", line.startswith("HTTP/1.1 200"), line)
        check("hello has loaded none of the four after it", not mapped(srv.proc.pid),
              mapped(srv.proc.pid))
        status, body = h2c(srv.port)
        check("an h2c request is answered 200 with hello's text",
              status == b"200" and body == b"An incoming GET request!", (status, body[:60]))
        check("the HTTP/2 connection loaded none of the four either", not mapped(srv.proc.pid),
              mapped(srv.proc.pid))
        nghttp2_file = loader_file("libnghttp2.so.14")
        line, _, _ = http1(srv.port)
        check("hello goes on serving HTTP/1.1", line.startswith("HTTP/1.1 200"), line)
        srv.stop()
    certs = tempfile.TemporaryDirectory(prefix="codecs-on-demand-")  # removed at exit
    cert, key = self_signed(certs.name)
    tls = ["--cert", cert, "--key", key]
    with procs.start([hello, "{port}"] + tls, name="hello over TLS",
                     cwd=here.parents[1] / "examples" / "hello") as srv:
        agreed = https_version(srv.port)
        check("over TLS, a client offering h2 is answered in HTTP/2", agreed == "2 200", agreed)
        srv.stop()

    with procs.start([rest_api, "{port}"], name="rest_api",
                     ready=procs.answers("/openapi.json")) as srv:
        line, headers, plain = http1(srv.port, "/openapi.json")
        check("rest_api answers /openapi.json uncompressed without Accept-Encoding",
              line.startswith("HTTP/1.1 200") and "content-encoding" not in headers
              and len(plain) >= 1024, (line, headers.get("content-encoding"), len(plain)))
        check("and has loaded no compression library", not mapped(srv.proc.pid),
              mapped(srv.proc.pid))
        line, headers, body = http1(srv.port, "/openapi.json", "gzip")
        check("a gzip answer gunzips to the same document",
              headers.get("content-encoding") == "gzip" and gzip.decompress(body) == plain,
              (line, headers.get("content-encoding")))
        check("it loaded zlib alone", mapped(srv.proc.pid) == ["libz.so"], mapped(srv.proc.pid))
        zlib_file = mapped_file(srv.proc.pid, "libz.so")
        line, headers, body = http1(srv.port, "/openapi.json", "br")
        check("a br answer is coded br", headers.get("content-encoding") == "br"
              and 0 < len(body) < len(plain), (line, headers.get("content-encoding")))
        check("it loaded brotli's encoder", mapped(srv.proc.pid) == ["libz.so", "libbrotlienc.so"],
              mapped(srv.proc.pid))
        line, headers, body = http1(srv.port, "/openapi.json", "zstd")
        check("a zstd answer is coded zstd (its frame's magic number)",
              headers.get("content-encoding") == "zstd" and body[:4] == b"\x28\xb5\x2f\xfd",
              (line, headers.get("content-encoding"), body[:4]))
        check("it loaded libzstd", mapped(srv.proc.pid) == ["libz.so", "libbrotlienc.so", "libzstd.so"],
              mapped(srv.proc.pid))
        line, _, _ = http1(srv.port, "/openapi.json")
        check("rest_api goes on serving", line.startswith("HTTP/1.1 200"), line)
        srv.stop()

    missing(hello, rest_api, here, [nghttp2_file, zlib_file], tls)

    sys.exit(finish())


def missing(hello, rest_api, here, files, tls):
    """The two servers with libnghttp2 and zlib unloadable."""
    probe = subprocess.run(hidden(files, ["true"]), capture_output=True)
    if probe.returncode != 0:
        print(f"skip: no mount namespace here ({probe.stderr.decode().strip()})")
        sys.exit(finish(77))
    with procs.start(hidden(files, [hello, "{port}"]), name="hello without libnghttp2",
                     cwd=here.parents[1] / "examples" / "hello", stderr=subprocess.PIPE) as srv:
        answers = [h2c(srv.port) for _ in range(2)]
        check("without libnghttp2 two h2c connections are answered",
              answers == [(b"200", b"An incoming GET request!")] * 2, answers)
        line, _, _ = http1(srv.port)
        check("and hello goes on serving HTTP/1.1", line.startswith("HTTP/1.1 200"), line)
        srv.stop()
        err = srv.proc.stderr.read().decode()
        check("stderr says nothing of nghttp2", "nghttp2" not in err, err[-300:])
    with procs.start(hidden(files, [hello, "{port}"] + tls), name="hello over TLS without libnghttp2",
                     cwd=here.parents[1] / "examples" / "hello", stderr=subprocess.PIPE) as srv:
        agreed = [https_version(srv.port) for _ in range(2)]
        check("over TLS without libnghttp2, a client offering h2 is answered in HTTP/2",
              agreed == ["2 200", "2 200"], agreed)
        srv.stop()
    with procs.start(hidden(files, [rest_api, "{port}"]), name="rest_api without zlib",
                     ready=procs.answers("/openapi.json"), stderr=subprocess.PIPE) as srv:
        line, headers, body = http1(srv.port, "/openapi.json", "gzip")
        check("without zlib a gzip request is answered 200 uncompressed",
              line.startswith("HTTP/1.1 200") and "content-encoding" not in headers
              and len(body) >= 1024, (line, headers.get("content-encoding"), len(body)))
        line, headers, _ = http1(srv.port, "/openapi.json", "br")
        check("and br still works", headers.get("content-encoding") == "br", line)
        srv.stop()
        err = srv.proc.stderr.read().decode()
        check("stderr names libz.so.1 once", err.count("libz.so.1 is needed for gzip") == 1,
              err[-300:])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""HTTP/1.1 conformance cases written from RFC 9112 (message syntax) and RFC 9110 (semantics).

    http1.py PORT [--host 127.0.0.1] [--json] [--verbose]
    http1.py --server BINARY [--cwd DIR] [--json] [--verbose]   (starts `BINARY PORT` on a free
                                                                port first, stops it after)

Each case sends raw bytes to a server that answers `GET /` with 200 and a body, and checks
what the RFC requires of a server (a MUST, or a SHOULD where noted) from the bytes that come
back and whether the connection was closed. Cases are grouped by the RFC section they test;
the last line is `conformance: N of M cases passed`, and the exit status is non-zero when a
case fails. `--json` prints one object per case instead (bench/conformance.py builds the
README's table from it). Used by ctest against examples/hello, and by bench/conformance.py
against the peers bench/ installs.

A case only checks what every conforming server must do: where the RFC allows two answers
(reject, or accept and process), both pass.
"""
import socket
import sys
import time
from dataclasses import dataclass
from typing import Callable

import suite  # tests/conformance/suite.py, beside this file

# --- what came back -------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    version: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


@dataclass
class Exchange:
    responses: list[Response]
    closed: bool          # the server closed (or reset) the connection
    raw: bytes
    garbage: bool         # bytes that do not parse as responses


def parse_responses(data: bytes, head_requests: int = 0) -> tuple[list[Response], bool]:
    """Splits data into responses. The first head_requests final responses have no body
    (answers to HEAD). Returns (responses, whether bytes were left that are not one)."""
    out: list[Response] = []
    pos = 0
    finals = 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            return out, True
        lines = data[pos:end].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            return out, True
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        r = Response(int(parts[1]), parts[0], headers, b"")
        pos = end + 4
        interim = 100 <= r.status < 200
        no_body = interim or r.status in (204, 304) or finals < head_requests
        if not interim:
            finals += 1
        if not no_body:
            te = (r.header("transfer-encoding") or "").lower()
            cl = r.header("content-length")
            if "chunked" in te:
                body = b""
                while True:
                    line_end = data.find(b"\r\n", pos)
                    if line_end < 0:
                        return out, True
                    size = int(data[pos:line_end].split(b";")[0], 16)
                    pos = line_end + 2
                    if size == 0:
                        trailer_end = data.find(b"\r\n\r\n", pos - 2)
                        if trailer_end < 0:
                            return out, True
                        pos = trailer_end + 4
                        break
                    body += data[pos:pos + size]
                    pos += size + 2
                r.body = body
            elif cl is not None:
                r.body = data[pos:pos + int(cl)]
                pos += int(cl)
            else:
                r.body = data[pos:]  # delimited by the close
                pos = len(data)
        out.append(r)
    return out, False


def exchange(port: int, host: str, payload: bytes, head_requests: int = 0,
             quiet: float = 0.6, limit: float = 3.0) -> Exchange:
    """Sends payload and reads until the server closes or is quiet for `quiet` seconds."""
    data = b""
    closed = False
    with socket.create_connection((host, port), timeout=limit) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            s.sendall(payload)
        except OSError:
            closed = True
        deadline = time.monotonic() + limit
        s.settimeout(quiet)
        while not closed and time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            data += chunk
    responses, garbage = parse_responses(data, head_requests)
    return Exchange(responses, closed, data, garbage)


# --- the cases ------------------------------------------------------------------------------

@dataclass
class Case:
    section: str
    name: str
    requirement: str      # "MUST" or "SHOULD"
    payload: bytes
    check: Callable[[Exchange], str]   # "" when it passes, else what was wrong
    head_requests: int = 0


def get(target: str = "/", extra: str = "", version: str = "HTTP/1.1") -> bytes:
    return f"GET {target} {version}\r\nHost: localhost\r\n{extra}\r\n".encode()


def finals(x: Exchange) -> list[Response]:
    return [r for r in x.responses if r.status >= 200]


def status_and_close(*wanted: int) -> Callable[[Exchange], str]:
    def check(x: Exchange) -> str:
        f = finals(x)
        if not f:
            return "no response"
        if f[0].status not in wanted:
            return f"status {f[0].status}, wanted {' or '.join(map(str, wanted))}"
        if len(f) > 1:
            return f"{len(f)} responses: the rest of the bytes were read as another request"
        if not x.closed:
            return "the connection stayed open"
        return ""
    return check


def status_in(*wanted: int) -> Callable[[Exchange], str]:
    def check(x: Exchange) -> str:
        f = finals(x)
        if not f:
            return "no response"
        return "" if f[0].status in wanted else f"status {f[0].status}"
    return check


def rejected(x: Exchange) -> str:
    """A 4xx (the message refused), and nothing read as a second request."""
    f = finals(x)
    if not f:
        return "no response"
    if not 400 <= f[0].status < 500:
        return f"status {f[0].status}, wanted a 4xx"
    if len(f) > 1:
        return f"{len(f)} responses"
    return ""


def two_answers(first_ok: Callable[[Response], bool] = lambda r: r.status < 500,
                second: int = 200) -> Callable[[Exchange], str]:
    """The first message's framing was understood: the pipelined GET / after it is answered
    as a second request."""
    def check(x: Exchange) -> str:
        f = finals(x)
        if x.garbage:
            return "unparsable bytes in the answer"
        if len(f) != 2:
            return f"{len(f)} responses, wanted 2"
        if not first_ok(f[0]):
            return f"first status {f[0].status}"
        if f[1].status != second:
            return f"second status {f[1].status}"
        return ""
    return check


def open_after(x: Exchange) -> str:
    f = finals(x)
    if not f or f[0].status != 200:
        return f"status {f[0].status if f else 'none'}"
    return "the connection was closed" if x.closed else ""


def closed_after(x: Exchange) -> str:
    f = finals(x)
    if not f:
        return "no response"
    return "" if x.closed else "the connection stayed open"


def has_date(x: Exchange) -> str:
    f = finals(x)
    if not f:
        return "no response"
    return "" if f[0].header("date") else "no Date field"


def ordered(x: Exchange) -> str:
    """GET /, GET of a path that does not exist, GET /: the middle answer is the only one that
    is not a 200, whatever the server's status for a missing path is."""
    got = [r.status for r in finals(x)]
    if len(got) != 3 or got[0] != 200 or got[2] != 200 or got[1] == 200:
        return f"statuses {got}, wanted 200, the missing path's, 200"
    return ""


def head_then_get(x: Exchange) -> str:
    """HEAD / then GET /: the GET's answer starts right after the HEAD's header block (what
    status the HEAD gets is the application's)."""
    f = finals(x)
    if x.garbage or len(f) != 2:
        return "the HEAD response carried a body (the GET after it did not parse)"
    if f[1].status != 200 or not f[1].body:
        return f"the GET after the HEAD: status {f[1].status}, {len(f[1].body)} body bytes"
    return ""


def answered_without_body(x: Exchange) -> str:
    return "" if x.responses else "no 100 Continue and no final answer before the body was sent"


def http11_version(x: Exchange) -> str:
    f = finals(x)
    if not f:
        return "no response"
    return "" if f[0].version == "HTTP/1.1" else f"answered as {f[0].version}"


SMUGGLED = "GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n"

CASES = [
    # RFC 9112 2.2: message parsing
    Case("RFC 9112 §2.2 message parsing", "an empty line before the request-line is ignored",
         "SHOULD", b"\r\n" + get(), status_in(200)),
    Case("RFC 9112 §2.2 message parsing",
         "whitespace between the start-line and the first field is refused", "MUST",
         b"GET / HTTP/1.1\r\n Host: localhost\r\n\r\n", rejected),
    # RFC 9112 3: request line
    Case("RFC 9112 §3 request line", "a request-line with two spaces between parts is refused",
         "SHOULD", b"GET  / HTTP/1.1\r\nHost: localhost\r\n\r\n", rejected),
    Case("RFC 9112 §3 request line", "the absolute form of the target is accepted", "MUST",
         get("http://localhost/"), status_in(200)),
    Case("RFC 9112 §3 request line", "a request-line without a version is refused", "MUST",
         b"GET /\r\nHost: localhost\r\n\r\n", lambda x: rejected(x) if x.responses else ""
         if x.closed else "no answer and no close"),
    Case("RFC 9112 §3 request line", "a malformed version (HTTP/1.1x) is refused", "MUST",
         b"GET / HTTP/1.1x\r\nHost: localhost\r\n\r\n", rejected),
    Case("RFC 9110 §6.2 / §15.6.6", "a major version it does not serve (HTTP/3.0) gets 505",
         "SHOULD", b"GET / HTTP/3.0\r\nHost: localhost\r\n\r\n", status_in(505)),
    Case("RFC 9112 §3 request line", "a target over 16 KiB gets 414 (RFC 9110 §15.5.15)",
         "SHOULD", get("/" + "a" * 16384), status_in(414)),
    # RFC 9112 3.2: Host
    Case("RFC 9112 §3.2 Host", "an HTTP/1.1 request without Host gets 400", "MUST",
         b"GET / HTTP/1.1\r\n\r\n", status_in(400)),
    Case("RFC 9112 §3.2 Host", "two Host fields get 400", "MUST",
         b"GET / HTTP/1.1\r\nHost: localhost\r\nHost: example.com\r\n\r\n", status_in(400)),
    Case("RFC 9112 §3.2 Host", "an invalid Host value gets 400", "MUST",
         b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", status_in(400)),
    # RFC 9112 5: fields
    Case("RFC 9112 §5 field syntax", "whitespace between a field name and the colon gets 400",
         "MUST", b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Test : 1\r\n\r\n", status_in(400)),
    Case("RFC 9112 §5 field syntax", "a field line without a colon is refused", "MUST",
         b"GET / HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n", rejected),
    Case("RFC 9110 §5.1 field names", "a field name with a space or a delimiter is refused",
         "MUST", b"GET / HTTP/1.1\r\nHost: localhost\r\nX(y): 1\r\n\r\n", rejected),
    # RFC 9112 6: message body length
    Case("RFC 9112 §6 body framing",
         "Transfer-Encoding and Content-Length together: refused, or chunked wins and the "
         "connection closes after the answer", "MUST",
         ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n"
          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + SMUGGLED).encode(),
         lambda x: status_and_close(*range(200, 600))(x)),
    Case("RFC 9112 §6 body framing",
         "a Transfer-Encoding whose last coding is not chunked gets 400 and a close", "MUST",
         b"POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n"
         + SMUGGLED.encode(), status_and_close(400)),
    Case("RFC 9112 §6 body framing", "an unknown transfer coding gets 501", "SHOULD",
         b"POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: frob, chunked\r\n\r\n"
         b"0\r\n\r\n", status_in(501)),
    Case("RFC 9112 §6 body framing", "two different Content-Length values get 400 and a close",
         "MUST", ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n"
                  "Content-Length: 2\r\n\r\nab" + SMUGGLED).encode(), status_and_close(400)),
    Case("RFC 9112 §6 body framing", "a list Content-Length (\"1, 2\") gets 400 and a close",
         "MUST", ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1, 2\r\n\r\nab"
                  + SMUGGLED).encode(), status_and_close(400)),
    Case("RFC 9112 §6 body framing", "a negative Content-Length gets 400 and a close", "MUST",
         ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n"
          + SMUGGLED).encode(), status_and_close(400)),
    Case("RFC 9112 §6 body framing", "a Content-Length with a letter gets 400 and a close",
         "MUST", ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1x\r\n\r\n"
                  + SMUGGLED).encode(), status_and_close(400)),
    Case("RFC 9112 §6 body framing",
         "a request with neither Content-Length nor Transfer-Encoding has no body", "MUST",
         b"POST / HTTP/1.1\r\nHost: localhost\r\n\r\n" + get(), two_answers()),
    # RFC 9112 7: chunked
    Case("RFC 9112 §7 chunked coding", "a chunked body with an extension is read", "MUST",
         b"POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"4;name=value\r\nabcd\r\n0\r\n\r\n" + get(), two_answers()),
    Case("RFC 9112 §7 chunked coding", "a chunked body with trailer fields is read", "MUST",
         b"POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"4\r\nabcd\r\n0\r\nX-Trailer: 1\r\n\r\n" + get(), two_answers()),
    Case("RFC 9112 §7 chunked coding", "a chunk size that is not hexadecimal is refused", "MUST",
         b"POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"zz\r\nabcd\r\n0\r\n\r\n" + SMUGGLED.encode(), lambda x: rejected(x) or
         ("" if x.closed else "the connection stayed open")),
    # RFC 9112 9: connections
    Case("RFC 9112 §9 connections", "an HTTP/1.1 connection persists after a response", "MUST",
         get(), open_after),
    Case("RFC 9112 §9 connections", "Connection: close closes after the response", "MUST",
         get(extra="Connection: close\r\n"), closed_after),
    Case("RFC 9112 §9 connections", "HTTP/1.0 without keep-alive closes after the response",
         "MUST", b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n", closed_after),
    Case("RFC 9112 §9 connections", "pipelined requests are answered in order", "MUST",
         get() + get("/no-such-path-here") + get(), ordered),
    Case("RFC 9112 §2.3 version", "an HTTP/1.0 request is answered as HTTP/1.1", "SHOULD",
         b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n", http11_version),
    # RFC 9110 semantics
    Case("RFC 9110 semantics", "a HEAD response has no body (§9.3.2)", "MUST",
         b"HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n" + get(), head_then_get, head_requests=1),
    Case("RFC 9110 semantics", "a 2xx carries a Date field (§6.6.1)", "MUST", get(), has_date),
    Case("RFC 9110 semantics",
         "Expect: 100-continue gets 100 Continue or a final answer before the body (§10.1.1)",
         "SHOULD",
         b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n"
         b"Expect: 100-continue\r\n\r\n", answered_without_body),
    Case("RFC 9110 semantics", "a method name is case-sensitive: \"get\" is not GET (§9.1)",
         "MUST", b"get / HTTP/1.1\r\nHost: localhost\r\n\r\n",
         lambda x: "" if finals(x) and finals(x)[0].status >= 400 else
         (f"status {finals(x)[0].status}" if finals(x) else "no response")),
]


def run(port: int, host: str) -> list[dict]:
    results = []
    for case in CASES:
        try:
            x = exchange(port, host, case.payload, case.head_requests)
            why = case.check(x)
            first = finals(x)[0].status if finals(x) else None
        except OSError as e:
            why, first = f"socket error: {e}", None
        results.append({"section": case.section, "name": case.name,
                        "requirement": case.requirement, "passed": not why, "why": why,
                        "status": first})
    return results


if __name__ == "__main__":
    sys.exit(suite.main(__doc__, lambda port, host, _: run(port, host)))

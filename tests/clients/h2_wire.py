#!/usr/bin/python3
"""HTTP/2 over real sockets, frame by frame, with Python's h2, hpack and hyperframe (Debian
python3-h2): the mapping (pseudo-fields, Host, cookies, HEAD, bodies, trailers, 100-continue,
deferred, blocking, coroutine, streamed and SSE answers), the limits (fields, sizes, bodies,
concurrent streams, HPACK table), the floods (rapid reset, CONTINUATION, PING, SETTINGS,
PRIORITY, empty DATA), malformed frames, the deadlines (header, body, keep-alive, a zero
window) and the graceful stop. After every abuse a fresh connection must be served.

    h2_wire.py PATH/TO/tern_h2_app

Prints a line per check and ends with "N passed, M failed"; exits 1 when any failed.
"""
import os
import signal
import socket
import ssl
import sys
import tempfile
import time
from pathlib import Path

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame,
                              PingFrame, PriorityFrame, RstStreamFrame, SettingsFrame)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

APP = sys.argv[1]
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
ENHANCE_YOUR_CALM = 0xB


def start(*args):
    srv = procs.start([APP, "{port}", *args], name="h2_wire's app", timeout=10)
    return srv.proc, srv.port


# ---- trailers both ways (RFC 9113 8.1) -------------------------------------------------------

def trailer_checks(port):
    c = client(port)
    sid = c.request("/trailers", method="POST", body=b"abc", end=False)
    c.conn.send_headers(sid, [("x-checksum", "42"), ("x-other", "b")], end_stream=True)
    c.flush()
    r = c.wait(sid)
    check("request trailers reach the handler, in order",
          r["status"] == 200 and r["body"] == b"abc|x-checksum=42;x-other=b;", r)
    check("response trailers follow the body in a HEADERS frame that ends the stream",
          r["ended"] and r["trailers"] == [("x-count", "2")], r)
    sid = c.request("/trailers?stream=1", method="POST", body=b"s")
    r = c.wait(sid)
    check("a streamed body ends with the context's and the stream's trailers",
          r["body"] == b"s|;more" and r["ended"] and
          r["trailers"] == [("x-count", "0"), ("x-last", "stream")], r)
    sid = c.request("/trailers?empty=1", method="POST", body=b"")
    r = c.wait(sid)
    check("an answer without a body sends its head, then its trailers",
          r["status"] == 200 and r["body"] == b"" and r["ended"] and
          r["trailers"] == [("x-count", "0")], r)
    c.close()

    # A second header block without END_STREAM, or with a pseudo-field, is malformed: a
    # stream error, and the connection goes on.
    for name, fields, end in (("trailers without END_STREAM", [("x-t", "1")], False),
                              ("trailers with a pseudo-field", [(":path", "/x")], True)):
        c = raw(port)
        c.send(c.headers(1, request_fields("/echo", "POST"), end_stream=False),
               DataFrame(1, data=b"x"), c.headers(1, fields, end_stream=end))
        got = c.frames(2)
        codes = [f.error_code for f in got if isinstance(f, RstStreamFrame)]
        check(f"{name}: RST_STREAM PROTOCOL_ERROR, no GOAWAY",
              codes == [0x1] and goaway_of(got) is None, got)
        c.send(c.headers(3, request_fields("/")))
        got = c.frames(2)
        check(f"after {name} the connection serves another stream",
              any(isinstance(f, HeadersFrame) and f.stream_id == 3 for f in got), got)
        c.close()
    r = get(port, "/")
    check("after malformed trailers a fresh connection is served", r["status"] == 200, r)

    # Trailers over the head limits (2,048 bytes, 20 fields): the stream's 431, as a head's.
    c = client(port)
    sid = c.request("/trailers", method="POST", body=b"abc", end=False)
    c.conn.send_headers(sid, [("x-big", "b" * 2100)], end_stream=True)
    c.flush()
    r = c.wait(sid)
    check("request trailers over max_header_size get 431 on their stream",
          r["status"] == 431 and c.goaway is None, r)
    sid = c.request("/trailers", method="POST", body=b"abc", end=False)
    c.conn.send_headers(sid, [(f"x-t{i}", "v") for i in range(25)], end_stream=True)
    c.flush()
    r = c.wait(sid)
    check("request trailers over max_header_count get 431 on their stream",
          r["status"] == 431 and c.goaway is None, r)
    sid = c.request("/", method="GET")
    r = c.wait(sid)
    check("the connection goes on after a 431 for trailers", r["status"] == 200, r)
    c.close()
    r = get(port, "/")
    check("another client is served after trailers over the limits", r["status"] == 200, r)


# ---- a client on Python's h2 -------------------------------------------------------------

class client:
    def __init__(self, port, tls_context=None, settings=None):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if tls_context is not None:
            s = tls_context.wrap_socket(s, server_hostname="localhost")
        self.sock = s
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8", validate_outbound_headers=False,
            normalize_outbound_headers=False))
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.flush()
        self.responses = {}
        self.goaway = None
        self.closed = False
        self.ack = True

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, path, method="GET", headers=(), body=None, end=True):
        sid = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":scheme", "http"), (":authority", "localhost"),
                  (":path", path), *headers]
        self.conn.send_headers(sid, fields, end_stream=body is None and end)
        # Before the body: an answer may come while it is sent.
        self.responses[sid] = {"status": None, "headers": [], "body": b"", "ended": False,
                               "reset": None, "interim": [], "trailers": None}
        if body is not None:
            self.send_body(sid, body, end)
        self.flush()
        return sid

    def send_body(self, sid, body, end=True):
        """Sends `body` as the flow-control windows allow, and stops once the server has reset
        the stream: a server may answer before the body is complete and then reset the stream
        (RFC 9113 section 8.1, e.g. tern's 503 for an upload the spool cannot take), and a
        client stops sending then. Waiting for a window (a pump) is when that reset arrives."""
        at = 0
        while at < len(body):
            if self.responses[sid]["reset"] is not None:
                return
            n = min(16384, len(body) - at, self.conn.local_flow_control_window(sid))
            if n <= 0:
                self.pump(0.2)
                continue
            self.conn.send_data(sid, body[at:at + n])
            at += n
            self.flush()
        if end and self.responses[sid]["reset"] is None:
            self.conn.end_stream(sid)
        self.flush()

    def pump(self, timeout=5.0):
        """Reads what arrives within `timeout`; False once the server closed."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, ssl.SSLWantReadError):
            return True
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return False
        for ev in self.conn.receive_data(data):
            r = self.responses.get(getattr(ev, "stream_id", None))
            if isinstance(ev, h2.events.ResponseReceived):
                r["status"] = int(dict(ev.headers)[":status"])
                r["headers"] = ev.headers
            elif isinstance(ev, h2.events.InformationalResponseReceived):
                r["interim"].append(int(dict(ev.headers)[":status"]))
            elif isinstance(ev, h2.events.DataReceived):
                r["body"] += ev.data
                if self.ack:
                    self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.TrailersReceived):
                r["trailers"] = ev.headers
            elif isinstance(ev, h2.events.StreamEnded):
                r["ended"] = True
            elif isinstance(ev, h2.events.StreamReset) and r is not None:
                r["reset"] = ev.error_code
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = ev.error_code
        self.flush()
        return True

    def wait(self, sid, timeout=5.0):
        r = self.responses[sid]
        deadline = time.time() + timeout
        while not r["ended"] and r["reset"] is None and not self.closed and time.time() < deadline:
            self.pump(max(0.01, deadline - time.time()))
        return r

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def get(port, path, **kw):
    c = client(port, kw.pop("tls_context", None))
    r = c.wait(c.request(path, **kw))
    c.close()
    return r


def serving(port):
    r = get(port, "/")
    return r["status"] == 200 and r["body"] == b"hello h2"


# ---- a raw client: frames as they are, for what h2 refuses to send -----------------------

class raw:
    def __init__(self, port, preface=PREFACE):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.enc = hpack.Encoder()
        self.buf = b""
        self.sock.sendall(preface + SettingsFrame(0).serialize())

    def send(self, *frames):
        try:
            self.sock.sendall(b"".join(f.serialize() if isinstance(f, Frame) else f
                                       for f in frames))
            return True
        except OSError:
            return False

    def headers(self, sid, fields, end_stream=True, end_headers=True):
        f = HeadersFrame(sid)
        f.data = self.enc.encode(fields)
        f.flags = set()
        if end_stream:
            f.flags.add("END_STREAM")
        if end_headers:
            f.flags.add("END_HEADERS")
        return f

    def frames(self, timeout=5.0):
        """Frames until the server closes (None ends the list) or `timeout` passes without
        a frame. A GOAWAY is followed by the rest of its streams' frames and the close."""
        out = []
        self.sock.settimeout(timeout)
        while True:
            while len(self.buf) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(self.buf[:9]))
                if len(self.buf) < 9 + length:
                    break
                frame.parse_body(memoryview(self.buf[9:9 + length]))
                self.buf = self.buf[9 + length:]
                out.append(frame)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return out
            except OSError:
                return out + [None]
            if not data:
                return out + [None]  # closed
            self.buf += data

    def close(self):
        self.sock.close()


def goaway_of(frames):
    for f in frames:
        if isinstance(f, GoAwayFrame):
            return f.error_code
    return None


def request_fields(path="/", method="GET", extra=()):
    return [(":method", method), (":scheme", "http"), (":authority", "localhost"),
            (":path", path), *extra]


# ---- the checks ------------------------------------------------------------------------

def mapping(port):
    r = get(port, "/")
    names = [n for n, _ in r["headers"]]
    check("GET / answers 200 with its body, a date and a content-length",
          r["status"] == 200 and r["body"] == b"hello h2" and "date" in names and
          ("content-length", "8") in r["headers"], r)
    check("no connection-specific field in a response",
          not any(n in ("connection", "keep-alive", "transfer-encoding") for n in names), names)
    check("the handler sees HTTP/2 and http", get(port, "/proto")["body"] == b"HTTP/2 http")
    r = get(port, "/fields?x=1", headers=[("cookie", "a=1"), ("x-one", "1"), ("cookie", "b=2")])
    text = r["body"].decode()
    check("a request's fields reach the handler: :authority as Host, cookies joined",
          text.startswith("GET /fields?x=1\n") and "Host: localhost\n" in text and
          "cookie: a=1; b=2\n" in text and "x-one: 1\n" in text, text)
    r = get(port, "/", method="HEAD")
    check("HEAD: the head with its content-length, no body",
          r["status"] == 200 and r["body"] == b"" and ("content-length", "8") in r["headers"], r)
    r = get(port, "/nowhere")
    check("app.error(404) shapes a 404 over h2",
          r["status"] == 404 and r["body"] == b"no such page: /nowhere", r)
    body = os.urandom(30000)
    r = get(port, "/echo", method="POST", body=body)
    check("a 30 KB body in several DATA frames is read whole", r["body"] == body,
          len(r["body"]))
    r = get(port, "/size", method="POST", body=b"y" * 40000)
    check("a body over spool_body_above goes to a temporary file",
          r["body"] == b"40000 spooled", r["body"])
    c = client(port)
    sid = c.request("/echo", method="POST", headers=[("expect", "100-continue")], body=None,
                    end=False)
    deadline = time.time() + 3
    while not c.responses[sid]["interim"] and time.time() < deadline:
        c.pump(0.2)
    interim = list(c.responses[sid]["interim"])
    c.send_body(sid, b"after continue")
    r = c.wait(sid)
    check("Expect: 100-continue gets a 100 before the body, then the answer",
          interim == [100] and r["body"] == b"after continue", (interim, r))
    c.close()
    c = client(port)
    sid = c.request("/echo", method="POST", body=b"with trailers", end=False)
    c.conn.send_headers(sid, [("x-checksum", "abc")], end_stream=True)
    c.flush()
    r = c.wait(sid)
    check("trailers end a request", r["status"] == 200 and r["body"] == b"with trailers", r)
    c.close()
    trailer_checks(port)
    for path, want in (("/blocking?ms=30", b"blocking done"), ("/later?ms=30", b"later 30"),
                       ("/sleep?ms=30", b"slept")):
        r = get(port, path)
        check(f"{path.split('?')[0]} answers over h2", r["status"] == 200 and r["body"] == want, r)
    # Several answered later at once, on one connection, in any order.
    c = client(port)
    sids = [c.request(f"/later?ms={300 - 30 * i}") for i in range(8)]
    bodies = [c.wait(s, 10)["body"] for s in sids]
    check("8 deferred answers on one connection all arrive",
          bodies == [f"later {300 - 30 * i}".encode() for i in range(8)], bodies)
    c.close()
    r = get(port, "/stream?n=200&size=5000")
    check("a streamed body of 1 MB arrives whole through flow control",
          r["status"] == 200 and len(r["body"]) == 1_000_000 and r["ended"], len(r["body"]))
    r = get(port, "/big?n=300000")
    check("a 300 KB body from memory arrives whole", len(r["body"]) == 300000, len(r["body"]))
    c = client(port)
    sid = c.request("/events")
    deadline = time.time() + 3
    while time.time() < deadline and b":" not in c.responses[sid]["body"].split(b"\n\n", 3)[-1]:
        c.pump(0.5)
    body = c.responses[sid]["body"]
    check("SSE over h2: the events, then a keep-alive comment",
          c.responses[sid]["status"] == 200 and b"data: event 3\n" in body and
          body.rstrip(b"\n").endswith(b":"), body)
    c.conn.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
    c.flush()
    sid2 = c.request("/")
    r = c.wait(sid2)
    check("a client that resets its SSE stream goes on using the connection",
          r["body"] == b"hello h2", r)
    c.close()


def limits(port):
    r = get(port, "/", headers=[(f"x-f{i}", "v") for i in range(25)])
    check("more than max_header_count fields: 431", r["status"] == 431, r)
    r = get(port, "/", headers=[("x-big", "v" * 3000)])
    check("fields over max_header_size: 431", r["status"] == 431, r)
    r = get(port, "/" + "p" * 1100)
    check(":path over max_line_size: 414", r["status"] == 414, r)
    r = get(port, "/echo", method="POST", body=b"z" * 70000)
    check("a body over max_body_size: 413", r["status"] == 413, r)
    r = get(port, "/echo", method="POST", headers=[("content-length", "100000")], body=b"z" * 10,
            end=False)
    check("a declared content-length over max_body_size: 413 before the body",
          r["status"] == 413, r)
    check("the server serves after the limits", serving(port))

    # Concurrent streams: the app allows 10; an 11th is refused, the 10 are answered.
    c = raw(port)
    frames = [c.headers(1 + 2 * i, request_fields("/later?ms=400")) for i in range(11)]
    c.send(*frames)
    got = c.frames(3)
    resets = [f for f in got if isinstance(f, RstStreamFrame)]
    answered = {f.stream_id for f in got if isinstance(f, HeadersFrame)}
    check("an 11th concurrent stream is refused, the first 10 are answered",
          len(resets) == 1 and resets[0].stream_id == 21 and
          resets[0].error_code in (0x7, 0x1) and answered == {1 + 2 * i for i in range(10)},
          (resets and (resets[0].stream_id, resets[0].error_code), sorted(answered)))
    c.close()

    # HPACK: a table size update above the 4096 the server allows is a compression error.
    c = raw(port)
    c.enc.header_table_size = 65536
    c.send(c.headers(1, request_fields()))
    got = c.frames(3)
    check("an HPACK table larger than SETTINGS_HEADER_TABLE_SIZE: GOAWAY COMPRESSION_ERROR",
          goaway_of(got) == 0x9, got)
    c.close()
    check("the server serves after them", serving(port))


def floods(port):
    def flood(name, frames_fn, want=ENHANCE_YOUR_CALM):
        c = raw(port)
        c.send(*frames_fn(c))
        got = c.frames(5)
        code = goaway_of(got)
        check(f"{name}: GOAWAY {want:#x} and the close", code == want and got[-1] is None,
              (code, got[-5:]))
        c.close()
        check(f"the server serves after {name}", serving(port))

    def rapid_reset(c):
        out = []
        for i in range(500):
            out += [c.headers(1 + 2 * i, request_fields("/later?ms=1000")),
                    RstStreamFrame(1 + 2 * i, error_code=0x8)]
        return out
    flood("rapid reset (500 streams opened and reset)", rapid_reset)

    def continuation(c):
        # nghttp2 takes 8 CONTINUATION frames in one header block (its fix of
        # CVE-2024-28182); this block never ends.
        block = c.enc.encode(request_fields())
        return [HeadersFrame(1, data=block, flags={"END_STREAM"})] + \
            [ContinuationFrame(1, data=c.enc.encode([("x-c", "v")])) for _ in range(200)]
    flood("CONTINUATION flood", continuation)

    def long_block(c):
        # 8 CONTINUATION frames, then the end of the block: a header block split finely is
        # still served.
        block = c.enc.encode(request_fields())
        return [HeadersFrame(1, data=block, flags={"END_STREAM"})] + \
            [ContinuationFrame(1, data=c.enc.encode([("x-c", "v")])) for _ in range(7)] + \
            [ContinuationFrame(1, data=b"", flags={"END_HEADERS"})]
    c = raw(port)
    c.send(*long_block(c))
    got = c.frames(2)
    check("a header block in 8 CONTINUATION frames is served",
          any(isinstance(f, DataFrame) and f.data == b"hello h2" for f in got), got)
    c.close()
    flood("PING flood", lambda c: [PingFrame(0, opaque_data=i.to_bytes(8, "big"))
                                   for i in range(300)])
    flood("SETTINGS flood", lambda c: [SettingsFrame(0) for _ in range(300)])
    flood("PRIORITY flood", lambda c: [PriorityFrame(1 + 2 * (i % 50), depends_on=0,
                                                     stream_weight=i % 256)
                                       for i in range(2000)])
    flood("empty DATA flood", lambda c: [c.headers(1, request_fields("/echo", "POST"),
                                                   end_stream=False)] +
          [DataFrame(1, data=b"") for _ in range(300)])


def malformed(port):
    def refused(name, fields, want_reset=0x1):
        c = raw(port)
        c.send(c.headers(1, fields))
        got = c.frames(2)
        codes = [f.error_code for f in got if isinstance(f, RstStreamFrame)]
        check(f"{name}: RST_STREAM PROTOCOL_ERROR", codes == [want_reset], got)
        c.close()

    refused("an upper-case field name", request_fields(extra=[("X-Upper", "1")]))
    refused("a connection-specific field", request_fields(extra=[("connection", "close")]))
    refused("no :path", [(":method", "GET"), (":scheme", "http"), (":authority", "localhost")])
    refused("a pseudo-field after a regular one",
            [(":method", "GET"), ("x-a", "1"), (":scheme", "http"), (":path", "/")])
    c = raw(port)
    c.send(c.headers(1, request_fields("/echo", "POST", [("content-length", "10")]),
                     end_stream=False), DataFrame(1, data=b"12345", flags={"END_STREAM"}))
    got = c.frames(2)
    check("a body shorter than its content-length: RST_STREAM PROTOCOL_ERROR",
          any(isinstance(f, RstStreamFrame) and f.error_code == 0x1 for f in got), got)
    c.close()
    c = raw(port)
    c.send(b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x")  # DATA on stream 0: hyperframe refuses it
    got = c.frames(2)
    check("DATA on stream 0: GOAWAY PROTOCOL_ERROR", goaway_of(got) == 0x1, got)
    c.close()
    c = raw(port)
    c.send(b"\x00\x50\x00\x00\x00\x00\x00\x00\x01" + b"\x00" * 0x5000)  # 20 KB DATA frame
    got = c.frames(2)
    check("a frame over SETTINGS_MAX_FRAME_SIZE: GOAWAY FRAME_SIZE_ERROR",
          goaway_of(got) == 0x6, got)
    c.close()
    c = raw(port, preface=b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n")
    got = c.frames(2)
    check("a broken preface: the connection closes", got and got[-1] is None, got)
    c.close()
    check("the server serves after malformed input", serving(port))


def deadlines(port):
    c = raw(port)
    start_t = time.time()
    c.send(c.headers(1, request_fields(), end_headers=False))
    got = c.frames(5)
    check("a header block left unfinished: GOAWAY and the close within header_timeout",
          goaway_of(got) is not None and got[-1] is None and time.time() - start_t < 4.5,
          (got, time.time() - start_t))
    c.close()
    c = client(port)
    sid = c.request("/echo", method="POST", body=b"part", end=False)
    r = c.wait(sid, 5)
    check("a request body that stalls: 408 after body_idle_timeout", r["status"] == 408, r)
    c.close()
    c = raw(port)
    got = c.frames(6)
    check("a connection with no stream: GOAWAY NO_ERROR and the close after keep_alive_timeout",
          goaway_of(got) == 0 and got[-1] is None, got)
    c.close()
    # A client that never opens its window: the stream is reset (CANCEL) after write_timeout.
    c = client(port)
    c.ack = False
    sid = c.request("/big?n=200000")
    r = c.wait(sid, 6)
    check("a response the client's flow-control window shuts out: RST_STREAM CANCEL",
          r["reset"] == 0x8 and len(r["body"]) == 65535, (r["reset"], len(r["body"])))
    c.close()
    check("the server serves after the deadlines", serving(port))


def tls(port, cert_dir):
    ctx = ssl.create_default_context(cafile=os.path.join(cert_dir, "cert.pem"))
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    raw_sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                               server_hostname="localhost")
    check("ALPN over TLS chooses h2", raw_sock.selected_alpn_protocol() == "h2",
          raw_sock.selected_alpn_protocol())
    raw_sock.close()
    r = get(port, "/proto", tls_context=ctx)
    check("h2 over TLS: the handler sees HTTP/2 and https", r["body"] == b"HTTP/2 https", r)
    ctx1 = ssl.create_default_context(cafile=os.path.join(cert_dir, "cert.pem"))
    ctx1.set_alpn_protocols(["http/1.1"])
    s = ctx1.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
    s.sendall(b"GET /proto HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    check("a client offering only http/1.1 gets HTTP/1.1", data.endswith(b"HTTP/1.1 https"), data)
    s.close()


def counters_and_log():
    log = tempfile.NamedTemporaryFile(prefix="h2-access-", delete=False)
    log.close()
    proc, port = start("--access-log", log.name)
    try:
        get(port, "/")
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            while s.recv(4096):
                pass
        c = client(port)
        r = c.wait(c.request("/stats"))
        c.close()
        conns, h2_requests, requests = map(int, r["body"].split())
        check("stats: h2_connections and h2_requests count HTTP/2 only",
              conns == 2 and h2_requests == 2 and requests == 3, r["body"])
    finally:
        proc.terminate()
        proc.wait(10)
    lines = open(log.name).read().splitlines()
    os.unlink(log.name)
    check("the access log names the protocol of each request",
          any('"GET / HTTP/2"' in l for l in lines) and any('"GET / HTTP/1.1"' in l for l in lines),
          lines)


def graceful_stop():
    proc, port = start()
    # A raw client: Python's h2 takes any GOAWAY as the end, but HTTP/2 lets the streams
    # up to its last_stream_id finish.
    c = raw(port)
    c.send(c.headers(1, request_fields("/later?ms=800")))
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    got = c.frames(6)
    goaway = [f for f in got if isinstance(f, GoAwayFrame)]
    data = b"".join(f.data for f in got if isinstance(f, DataFrame) and f.stream_id == 1)
    ended = any(isinstance(f, DataFrame) and f.stream_id == 1 and "END_STREAM" in f.flags
                for f in got)
    # RFC 9113 6.8: the shutdown notice (no last stream) first, then, this client leaving its
    # PING unacknowledged, the final GOAWAY a second later (h2_hostile.py acknowledges it).
    check("at stop: GOAWAY NO_ERROR naming no stream, then one naming the stream in flight, "
          "which is still answered",
          [(g.error_code, g.last_stream_id) for g in goaway] == [(0, 0x7FFFFFFF), (0, 1)] and
          data == b"later 800" and ended and got[-1] is None, got)
    c.close()
    check("the server exits 0 after the drain", proc.wait(10) == 0)


def http2_off():
    proc, port = start("--no-http2")
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(PREFACE)
    data = s.recv(4096)
    check("with http2(false) the preface is answered 505", data.startswith(b"HTTP/1.1 505"), data)
    s.close()
    proc.terminate()
    proc.wait(10)


def main():
    proc, port = start()
    try:
        mapping(port)
        limits(port)
        floods(port)
        malformed(port)
        deadlines(port)
    finally:
        proc.terminate()
        proc.wait(10)
    with tempfile.TemporaryDirectory() as d:
        self_signed(d)
        proc, port = start("--cert", f"{d}/cert.pem", "--key", f"{d}/key.pem")
        try:
            tls(port, d)
        finally:
            proc.terminate()
            proc.wait(10)
    counters_and_log()
    graceful_stop()
    http2_off()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

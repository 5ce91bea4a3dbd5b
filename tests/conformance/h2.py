#!/usr/bin/env python3
"""HTTP/2 conformance cases written from RFC 9113 and RFC 7541 (HPACK), in the spirit of
h2spec's sections: raw frames over a cleartext connection with prior knowledge (h2c).

    h2.py PORT [--host 127.0.0.1] [--json] [--verbose]
    h2.py --server BINARY [--cwd DIR] [--json] [--verbose]   (starts `BINARY PORT` first)

The server must answer `GET /` with 200 over h2c. A connection error passes when the server
sends GOAWAY with the error code the RFC names, or closes the connection; a stream error
passes with RST_STREAM or GOAWAY of that code (a connection error is allowed for a stream
error, RFC 9113 §5.4.1), or, for a malformed request, a 4xx answer (§8.1.1 lets a server
answer before it resets). The last line is `conformance: N of M cases passed`; the exit
status is non-zero when a case fails. bench/conformance.py runs the same cases against the
peers.
"""
import socket
import struct
import sys
import time
from dataclasses import dataclass
from typing import Callable

import suite  # tests/conformance/suite.py, beside this file

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, STREAM_CLOSED, \
    FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR = range(10)
ERROR_NAMES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR",
               3: "FLOW_CONTROL_ERROR", 5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR",
               7: "REFUSED_STREAM", 8: "CANCEL", 9: "COMPRESSION_ERROR",
               11: "ENHANCE_YOUR_CALM"}


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", stream) + payload


def settings(*pairs: tuple[int, int]) -> bytes:
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


REQUEST = [(":method", "GET"), (":scheme", "http"), (":path", "/"),
           (":authority", "localhost")]


def block(fields=None, huffman: bool = True) -> bytes:
    """A header block encoded by a fresh HPACK encoder (no dynamic-table references)."""
    return hpack.Encoder().encode(fields if fields is not None else REQUEST, huffman=huffman)


def headers(stream: int, fields=None, end_stream: bool = True) -> bytes:
    return frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream,
                 block(fields))


@dataclass
class Seen:
    frames: list[tuple[int, int, int, bytes]]   # (type, flags, stream, payload)
    closed: bool

    def goaway_code(self) -> int | None:
        for kind, _, _, payload in self.frames:
            if kind == GOAWAY and len(payload) >= 8:
                return struct.unpack(">I", payload[4:8])[0]
        return None

    def resets(self, stream: int | None = None) -> list[int]:
        return [struct.unpack(">I", p[:4])[0] for k, _, s, p in self.frames
                if k == RST_STREAM and len(p) >= 4 and (stream is None or s == stream)]

    def status(self, stream: int) -> int | None:
        """The :status of the first HEADERS the server sent on the stream."""
        decoder = hpack.Decoder()
        for kind, flags, s, payload in self.frames:
            if kind != HEADERS:
                continue
            if flags & PADDED:
                payload = payload[1:len(payload) - payload[0]]
            if flags & PRIORITY_FLAG:
                payload = payload[5:]
            try:
                fields = dict(decoder.decode(payload))
            except Exception:  # noqa: BLE001  (a block this decoder cannot read)
                return None
            if s == stream:
                value = fields.get(b":status") or fields.get(":status")
                return int(value) if value else None
        return None

    def has(self, kind: int, flags: int | None = None) -> bool:
        return any(k == kind and (flags is None or f & flags) for k, f, _, _ in self.frames)


def talk(port: int, host: str, payload: bytes, raw: bool = False, quiet: float = 0.5,
         limit: float = 3.0) -> Seen:
    """Sends the preface, an empty SETTINGS, its ACK of the server's, then payload (`raw`:
    payload alone, as the connection's very first bytes); reads frames until the server
    closes, sends GOAWAY, or is quiet for `quiet` seconds."""
    frames = []
    closed = False
    buf = b""
    with socket.create_connection((host, port), timeout=limit) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not raw:
            s.sendall(PREFACE + settings() + frame(SETTINGS, ACK, 0))
        try:
            s.sendall(payload)
        except OSError:
            closed = True
        s.settimeout(quiet)
        deadline = time.monotonic() + limit
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
            buf += chunk
            while len(buf) >= 9:
                length = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + length:
                    break
                kind, flags = buf[3], buf[4]
                stream = struct.unpack(">I", buf[5:9])[0] & 0x7FFFFFFF
                frames.append((kind, flags, stream, buf[9:9 + length]))
                buf = buf[9 + length:]
            if any(k == GOAWAY for k, _, _, _ in frames):
                break
    return Seen(frames, closed)


# --- verdicts -------------------------------------------------------------------------------

def connection_error(code: int) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        got = x.goaway_code()
        if got == code:
            return ""
        if got is not None:
            return f"GOAWAY {ERROR_NAMES.get(got, got)}, wanted {ERROR_NAMES[code]}"
        return "" if x.closed else f"no GOAWAY {ERROR_NAMES[code]} and no close"
    return check


def stream_error(code: int, stream: int, malformed: bool = False) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        if code in x.resets(stream) or x.goaway_code() == code:
            return ""
        status = x.status(stream)
        if malformed and status is not None and 400 <= status < 500:
            return ""
        if x.closed and x.goaway_code() is None:
            return ""
        got = [ERROR_NAMES.get(c, c) for c in x.resets(stream)]
        return (f"RST_STREAM {got}" if got else
                f"status {status}" if status else
                f"GOAWAY {ERROR_NAMES.get(x.goaway_code(), x.goaway_code())}"
                if x.goaway_code() is not None else "nothing") + \
            f", wanted {ERROR_NAMES[code]}"
    return check


def answered(stream: int, status: int = 200) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        got = x.status(stream)
        if got == status:
            return ""
        return f"status {got}" if got else (
            f"GOAWAY {ERROR_NAMES.get(x.goaway_code(), x.goaway_code())}"
            if x.goaway_code() is not None else "no answer")
    return check


def ping_ack(payload: bytes) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        for kind, flags, _, p in x.frames:
            if kind == PING and flags & ACK:
                return "" if p == payload else "PING ACK with another payload"
        return "no PING ACK"
    return check


def settings_ack(x: Seen) -> str:
    return "" if x.has(SETTINGS, ACK) else "no SETTINGS ACK"


# --- the cases ------------------------------------------------------------------------------

@dataclass
class Case:
    section: str
    name: str
    payload: bytes
    check: Callable[[Seen], str]
    raw: bool = False     # payload replaces the preface too


PING_DATA = b"h2-check"
LONG_VALUE = "x" * 100
CASES = [
    Case("§3.4 preface", "an invalid connection preface ends the connection",
         b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + settings(),
         connection_error(PROTOCOL_ERROR), raw=True),
    Case("§3.4 preface", "the server sends SETTINGS first and ACKs the client's", b"",
         lambda x: "" if x.frames and x.frames[0][0] == SETTINGS and settings_ack(x) == ""
         else "no SETTINGS first or no ACK"),
    Case("§4.1 frame format", "a frame of an unknown type is ignored",
         frame(0xEE, 0, 0, b"abc") + frame(PING, 0, 0, PING_DATA), ping_ack(PING_DATA)),
    Case("§4.1 frame format", "unknown flags are ignored",
         frame(PING, 0xF0, 0, PING_DATA), ping_ack(PING_DATA)),
    Case("§4.2 frame size", "a DATA frame over SETTINGS_MAX_FRAME_SIZE is a FRAME_SIZE_ERROR",
         headers(1, end_stream=False) + frame(DATA, 0, 1, b"x" * 16385),
         stream_error(FRAME_SIZE_ERROR, 1)),
    Case("§4.2 frame size", "a HEADERS frame over SETTINGS_MAX_FRAME_SIZE is a connection error",
         frame(HEADERS, END_HEADERS | END_STREAM, 1,
               block(REQUEST + [("x-long", "y" * 17000)], huffman=False)),
         connection_error(FRAME_SIZE_ERROR)),
    Case("§5.1 stream states", "DATA on an idle stream is a PROTOCOL_ERROR",
         frame(DATA, END_STREAM, 1, b"x"), connection_error(PROTOCOL_ERROR)),
    Case("§5.1 stream states", "WINDOW_UPDATE on an idle stream is a PROTOCOL_ERROR",
         frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 1)), connection_error(PROTOCOL_ERROR)),
    Case("§5.1 stream states", "RST_STREAM on an idle stream is a PROTOCOL_ERROR",
         frame(RST_STREAM, 0, 1, struct.pack(">I", CANCEL)), connection_error(PROTOCOL_ERROR)),
    Case("§5.1 stream states", "DATA after END_STREAM is STREAM_CLOSED",
         headers(1, end_stream=False) + frame(DATA, END_STREAM, 1, b"") +
         frame(DATA, 0, 1, b"late"), stream_error(STREAM_CLOSED, 1)),
    Case("§5.1.1 stream identifiers", "a client stream with an even id is a PROTOCOL_ERROR",
         headers(2), connection_error(PROTOCOL_ERROR)),
    Case("§5.1.1 stream identifiers",
         "a new stream with an id below one already opened is a PROTOCOL_ERROR",
         headers(5) + headers(3), connection_error(PROTOCOL_ERROR)),
    Case("§6.1 DATA", "DATA on stream 0 is a PROTOCOL_ERROR",
         frame(DATA, 0, 0, b"x"), connection_error(PROTOCOL_ERROR)),
    Case("§6.1 DATA", "padding longer than the frame is a PROTOCOL_ERROR",
         headers(1, end_stream=False) + frame(DATA, PADDED | END_STREAM, 1, bytes([10]) + b"ab"),
         connection_error(PROTOCOL_ERROR)),
    Case("§6.2 HEADERS", "HEADERS on stream 0 is a PROTOCOL_ERROR",
         headers(0), connection_error(PROTOCOL_ERROR)),
    Case("§6.2 HEADERS", "a stream depending on itself is a PROTOCOL_ERROR",
         frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1,
               struct.pack(">IB", 1, 16) + block()), stream_error(PROTOCOL_ERROR, 1)),
    Case("§6.3 PRIORITY", "PRIORITY on stream 0 is a PROTOCOL_ERROR",
         frame(PRIORITY, 0, 0, struct.pack(">IB", 3, 16)), connection_error(PROTOCOL_ERROR)),
    Case("§6.3 PRIORITY", "a PRIORITY frame of 4 bytes is a FRAME_SIZE_ERROR",
         frame(PRIORITY, 0, 1, struct.pack(">I", 3)), stream_error(FRAME_SIZE_ERROR, 1)),
    Case("§6.4 RST_STREAM", "RST_STREAM on stream 0 is a PROTOCOL_ERROR",
         frame(RST_STREAM, 0, 0, struct.pack(">I", CANCEL)), connection_error(PROTOCOL_ERROR)),
    Case("§6.4 RST_STREAM", "an RST_STREAM of 3 bytes is a FRAME_SIZE_ERROR",
         headers(1, end_stream=False) + frame(RST_STREAM, 0, 1, b"\0\0\0"),
         connection_error(FRAME_SIZE_ERROR)),
    Case("§6.5 SETTINGS", "a SETTINGS ACK with a payload is a FRAME_SIZE_ERROR",
         frame(SETTINGS, ACK, 0, struct.pack(">HI", 4, 100)), connection_error(FRAME_SIZE_ERROR)),
    Case("§6.5 SETTINGS", "SETTINGS on a stream is a PROTOCOL_ERROR",
         frame(SETTINGS, 0, 1, b""), connection_error(PROTOCOL_ERROR)),
    Case("§6.5 SETTINGS", "a SETTINGS of 5 bytes is a FRAME_SIZE_ERROR",
         frame(SETTINGS, 0, 0, b"\0\x03\0\0\0"), connection_error(FRAME_SIZE_ERROR)),
    Case("§6.5.2 SETTINGS values", "SETTINGS_ENABLE_PUSH 2 is a PROTOCOL_ERROR",
         settings((2, 2)), connection_error(PROTOCOL_ERROR)),
    Case("§6.5.2 SETTINGS values",
         "SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1 is a FLOW_CONTROL_ERROR",
         settings((4, 2**31)), connection_error(FLOW_CONTROL_ERROR)),
    Case("§6.5.2 SETTINGS values", "SETTINGS_MAX_FRAME_SIZE under 16,384 is a PROTOCOL_ERROR",
         settings((5, 16383)), connection_error(PROTOCOL_ERROR)),
    Case("§6.5.2 SETTINGS values", "an unknown setting is ignored and ACKed",
         settings((0xFF, 1)), settings_ack),
    Case("§6.7 PING", "a PING is answered with the same payload", frame(PING, 0, 0, PING_DATA),
         ping_ack(PING_DATA)),
    Case("§6.7 PING", "a PING on a stream is a PROTOCOL_ERROR", frame(PING, 0, 1, PING_DATA),
         connection_error(PROTOCOL_ERROR)),
    Case("§6.7 PING", "a PING of 6 bytes is a FRAME_SIZE_ERROR", frame(PING, 0, 0, b"abcdef"),
         connection_error(FRAME_SIZE_ERROR)),
    Case("§6.8 GOAWAY", "GOAWAY on a stream is a PROTOCOL_ERROR",
         frame(GOAWAY, 0, 1, struct.pack(">II", 0, 0)), connection_error(PROTOCOL_ERROR)),
    Case("§6.9 WINDOW_UPDATE", "an increment of 0 for the connection is a PROTOCOL_ERROR",
         frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0)), connection_error(PROTOCOL_ERROR)),
    Case("§6.9 WINDOW_UPDATE", "a WINDOW_UPDATE of 3 bytes is a FRAME_SIZE_ERROR",
         frame(WINDOW_UPDATE, 0, 0, b"\0\0\1"), connection_error(FRAME_SIZE_ERROR)),
    Case("§6.9.1 flow control", "a connection window over 2^31-1 is a FLOW_CONTROL_ERROR",
         frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 2**31 - 1)),
         connection_error(FLOW_CONTROL_ERROR)),
    Case("§6.10 CONTINUATION", "CONTINUATION without HEADERS before it is a PROTOCOL_ERROR",
         frame(CONTINUATION, END_HEADERS, 1, block()), connection_error(PROTOCOL_ERROR)),
    Case("§6.10 CONTINUATION", "another frame between HEADERS and CONTINUATION is a "
         "PROTOCOL_ERROR",
         frame(HEADERS, END_STREAM, 1, block()[:2]) + frame(PING, 0, 0, PING_DATA),
         connection_error(PROTOCOL_ERROR)),
    Case("§6.10 CONTINUATION", "a header block split over CONTINUATION frames is read",
         frame(HEADERS, END_STREAM, 1, block()[:3]) +
         frame(CONTINUATION, END_HEADERS, 1, block()[3:]), answered(1)),
    Case("§8.1 HTTP message framing", "a GET over h2c is answered 200", headers(1), answered(1)),
    Case("§8.1.1 malformed messages", "a content-length that DATA contradicts is malformed",
         headers(1, REQUEST[:1] + [(":method", "POST")] + REQUEST[1:] +
                 [("content-length", "10")], end_stream=False) +
         frame(DATA, END_STREAM, 1, b"abc"), stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.2.1 field validity", "an uppercase field name is malformed",
         headers(1, REQUEST + [("X-Upper", "1")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.2.2 connection-specific fields", "a Connection field is malformed",
         headers(1, REQUEST + [("connection", "keep-alive")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.2.2 connection-specific fields", "TE other than \"trailers\" is malformed",
         headers(1, REQUEST + [("te", "gzip")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.3 pseudo-header fields", "a request without :method is malformed",
         headers(1, REQUEST[1:]), stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.3 pseudo-header fields", "an unknown pseudo-header field is malformed",
         headers(1, REQUEST + [(":foo", "bar")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.3 pseudo-header fields", "a pseudo-header field after a regular one is malformed",
         headers(1, REQUEST[:3] + [("x-a", "1"), (":authority", "localhost")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.3 pseudo-header fields", "a repeated :path is malformed",
         headers(1, REQUEST + [(":path", "/")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("§8.3 pseudo-header fields", "an empty :path is malformed",
         headers(1, [(":method", "GET"), (":scheme", "http"), (":path", ""),
                     (":authority", "localhost")]),
         stream_error(PROTOCOL_ERROR, 1, malformed=True)),
    Case("RFC 7541 HPACK", "an index of 0 is a COMPRESSION_ERROR",
         frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\x80"),
         connection_error(COMPRESSION_ERROR)),
    Case("RFC 7541 HPACK", "an index past both tables is a COMPRESSION_ERROR",
         frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\xff\x80\x01"),
         connection_error(COMPRESSION_ERROR)),
    Case("RFC 7541 HPACK", "a table size update over SETTINGS_HEADER_TABLE_SIZE is a "
         "COMPRESSION_ERROR",
         frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\x3f\xe1\xff\x03" + block()),
         connection_error(COMPRESSION_ERROR)),
]


def run(port: int, host: str) -> list[dict]:
    results = []
    for case in CASES:
        try:
            # A case that replaces the preface waits longer: the server may take a second
            # to give up on bytes that are not one.
            x = talk(port, host, case.payload, raw=case.raw, quiet=1.0 if case.raw else 0.5)
            why = case.check(x)
        except OSError as e:
            why = f"socket error: {e}"
        results.append({"section": case.section, "name": case.name, "requirement": "MUST",
                        "passed": not why, "why": why})
    return results


if __name__ == "__main__":
    sys.exit(suite.main(__doc__, lambda port, host, _: run(port, host)))

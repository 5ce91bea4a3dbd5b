#!/usr/bin/env python3
"""WebSocket conformance cases written from RFC 6455, grouped by the Autobahn test suite's
categories (framing, pings and pongs, reserved bits, opcodes, fragmentation, UTF-8, close
handling, masking) plus the opening handshake.

    ws.py PORT [--path /ws/echo] [--host 127.0.0.1] [--json] [--verbose]
    ws.py --server BINARY [--server-args ...] [--path /ws/echo] [--json] [--verbose]

The server must echo every text and binary message on PATH (tern's bench_live_app, bench's
Node `ws` and Python `websockets` peers do). "Fails the connection" (RFC 6455 §7.1.7) passes
when the server sends a Close with an error code (1002 protocol error, 1007 invalid data,
1009 too big) or closes TCP, and echoes nothing of the bad message; the code it chose is
shown. permessage-deflate (RFC 7692) is not covered: bench's peers run without it. The last
line is `conformance: N of M cases passed`; the exit status is non-zero when a case fails.
"""
import base64
import hashlib
import os
import socket
import struct
import sys
import time
from dataclasses import dataclass
from typing import Callable

import suite  # tests/conformance/suite.py, beside this file

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes = b"", fin: bool = True, rsv: int = 0,
          masked: bool = True) -> bytes:
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    n = len(payload)
    mask_bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack(">Q", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def close_frame(code: int | None, reason: bytes = b"") -> bytes:
    return frame(CLOSE, b"" if code is None else struct.pack(">H", code) + reason)


@dataclass
class Seen:
    handshake: int            # the status of the opening handshake's answer
    head: str                 # its header block
    frames: list[tuple[int, bytes]]   # (opcode, payload), messages reassembled
    closed: bool              # TCP closed by the server

    def close_code(self) -> int | None:
        for op, p in self.frames:
            if op == CLOSE:
                return struct.unpack(">H", p[:2])[0] if len(p) >= 2 else 1005
        return None

    def data(self) -> list[tuple[int, bytes]]:
        return [(op, p) for op, p in self.frames if op in (TEXT, BINARY)]


def handshake_request(path: str, host: str, key: str | None = None, version: str = "13",
                      method: str = "GET", extra: str = "") -> bytes:
    key = key if key is not None else base64.b64encode(os.urandom(16)).decode()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Version: {version}"]
    if key:
        lines.append(f"Sec-WebSocket-Key: {key}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def talk(port: int, host: str, path: str, payload: bytes, request: bytes | None = None,
         quiet: float = 0.6, limit: float = 4.0) -> Seen:
    with socket.create_connection((host, port), timeout=limit) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(request or handshake_request(path, f"{host}:{port}"))
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        status_line = head.split(b"\r\n", 1)[0].split()
        status = int(status_line[1]) if len(status_line) > 1 else 0
        if status != 101:
            return Seen(status, head.decode("latin-1"), [], True)
        try:
            s.sendall(payload)
        except OSError:
            pass
        frames, closed, message, message_op = [], False, b"", None
        s.settimeout(quiet)
        deadline = time.monotonic() + limit
        data = rest
        while True:
            # Parse what is there (the server's frames are unmasked).
            while len(data) >= 2:
                b0, b1 = data[0], data[1]
                n, pos = b1 & 0x7F, 2
                if n == 126:
                    if len(data) < 4:
                        break
                    n, pos = struct.unpack(">H", data[2:4])[0], 4
                elif n == 127:
                    if len(data) < 10:
                        break
                    n, pos = struct.unpack(">Q", data[2:10])[0], 10
                if len(data) < pos + n:
                    break
                op, payload_in, fin = b0 & 0x0F, data[pos:pos + n], b0 & 0x80
                data = data[pos + n:]
                if op >= 0x8:
                    frames.append((op, payload_in))
                else:
                    if op != CONT:
                        message_op, message = op, b""
                    message += payload_in
                    if fin:
                        frames.append((message_op, message))
            if closed or time.monotonic() > deadline or any(op == CLOSE for op, _ in frames):
                break
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                closed = True
                continue
            if not chunk:
                closed = True
            data += chunk
        if any(op == CLOSE for op, _ in frames) and not closed:
            # Finish the closing handshake and see the server close TCP.
            try:
                s.sendall(close_frame(1000))
                s.settimeout(1.0)
                closed = s.recv(65536) == b""
            except OSError:
                closed = True
        return Seen(101, head.decode("latin-1"), frames, closed)


# --- verdicts -------------------------------------------------------------------------------

def echoes(*expected: tuple[int, bytes]) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        got = x.data()
        if got == list(expected):
            return ""
        if len(got) != len(expected):
            return f"{len(got)} messages back, wanted {len(expected)}" + (
                f" (closed with {x.close_code()})" if x.close_code() else "")
        return "a message came back changed"
    return check


def fails(*codes: int) -> Callable[[Seen], str]:
    """The connection is failed: a Close with an error code, or TCP closed, and nothing of
    the bad message echoed."""
    def check(x: Seen) -> str:
        if x.data():
            return f"echoed {len(x.data())} message(s) of a bad input"
        code = x.close_code()
        if code is not None:
            return "" if code in codes else f"Close {code}, wanted {codes}"
        return "" if x.closed else "the connection stayed open"
    return check


def pong_with(payload: bytes) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        pongs = [p for op, p in x.frames if op == PONG]
        if not pongs:
            return "no Pong"
        return "" if pongs[0] == payload else "a Pong with another payload"
    return check


def closes_with(code: int) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        got = x.close_code()
        return "" if got == code else f"Close {got}, wanted {code}"
    return check


def both(*checks: Callable[[Seen], str]) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        for c in checks:
            why = c(x)
            if why:
                return why
        return ""
    return check


def handshake_status(*wanted: int, header: str | None = None) -> Callable[[Seen], str]:
    def check(x: Seen) -> str:
        if x.handshake not in wanted:
            return f"status {x.handshake}, wanted {wanted}"
        if header and header.lower() not in x.head.lower():
            return f"no {header}"
        return ""
    return check


def accept_ok(key: str) -> Callable[[Seen], str]:
    want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()

    def check(x: Seen) -> str:
        if x.handshake != 101:
            return f"status {x.handshake}"
        for line in x.head.split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "sec-websocket-accept":
                return "" if value.strip() == want else "a wrong Sec-WebSocket-Accept"
        return "no Sec-WebSocket-Accept"
    return check


# --- the cases ------------------------------------------------------------------------------

@dataclass
class Case:
    section: str
    name: str
    payload: bytes
    check: Callable[[Seen], str]
    request: Callable[[str, str], bytes] | None = None   # (path, host) -> handshake bytes


KEY = "dGhlIHNhbXBsZSBub25jZQ=="
P, E = 1002, 1007   # protocol error, invalid frame payload data
CASES = [
    Case("§4 opening handshake", "Sec-WebSocket-Accept is the SHA-1 of the key and the GUID",
         b"", accept_ok(KEY), lambda path, host: handshake_request(path, host, key=KEY)),
    Case("§4 opening handshake", "a request without Sec-WebSocket-Key is refused (400)", b"",
         handshake_status(400), lambda path, host: handshake_request(path, host, key="")),
    Case("§4 opening handshake",
         "an unsupported version gets 426 with Sec-WebSocket-Version: 13", b"",
         handshake_status(400, 426, header="Sec-WebSocket-Version"),
         lambda path, host: handshake_request(path, host, version="12")),
    Case("§4 opening handshake", "a POST upgrade is refused", b"",
         lambda x: "" if x.handshake != 101 else "upgraded a POST",
         lambda path, host: handshake_request(path, host, method="POST",
                                              extra="Content-Length: 0\r\n")),
    Case("1 framing", "an empty text message is echoed", frame(TEXT, b""),
         echoes((TEXT, b""))),
    Case("1 framing", "a 125-byte text message is echoed", frame(TEXT, b"*" * 125),
         echoes((TEXT, b"*" * 125))),
    Case("1 framing", "a 126-byte text message (16-bit length) is echoed",
         frame(TEXT, b"*" * 126), echoes((TEXT, b"*" * 126))),
    Case("1 framing", "a 65,535-byte binary message is echoed", frame(BINARY, b"\xfe" * 65535),
         echoes((BINARY, b"\xfe" * 65535))),
    Case("1 framing", "a 65,536-byte binary message (64-bit length) is echoed",
         frame(BINARY, b"\x00" * 65536), echoes((BINARY, b"\x00" * 65536))),
    Case("2 pings and pongs", "a Ping is answered with a Pong of the same payload",
         frame(PING, b"hello"), pong_with(b"hello")),
    Case("2 pings and pongs", "a Ping of 125 bytes is answered", frame(PING, b"\xfe" * 125),
         pong_with(b"\xfe" * 125)),
    Case("2 pings and pongs", "a Ping of 126 bytes fails the connection",
         frame(PING, b"x" * 126), fails(P)),
    Case("2 pings and pongs", "an unsolicited Pong is ignored",
         frame(PONG, b"unasked") + frame(TEXT, b"after"), echoes((TEXT, b"after"))),
    Case("2 pings and pongs", "a fragmented Ping fails the connection",
         frame(PING, b"ab", fin=False) + frame(CONT, b"cd"), fails(P)),
    Case("3 reserved bits", "RSV1 without an extension fails the connection",
         frame(TEXT, b"x", rsv=4), fails(P)),
    Case("3 reserved bits", "RSV2 fails the connection", frame(TEXT, b"x", rsv=2), fails(P)),
    Case("3 reserved bits", "RSV3 on a Ping fails the connection",
         frame(PING, b"x", rsv=1), fails(P)),
    Case("4 opcodes", "a reserved data opcode (3) fails the connection", frame(3, b"x"),
         fails(P)),
    Case("4 opcodes", "a reserved data opcode (7) fails the connection", frame(7, b"x"),
         fails(P)),
    Case("4 opcodes", "a reserved control opcode (0xB) fails the connection",
         frame(0xB, b"x"), fails(P)),
    Case("4 opcodes", "a reserved control opcode (0xF) fails the connection",
         frame(0xF, b"x"), fails(P)),
    Case("5 fragmentation", "a text message in two fragments is echoed whole",
         frame(TEXT, b"frag", fin=False) + frame(CONT, b"ment"), echoes((TEXT, b"fragment"))),
    Case("5 fragmentation", "a Ping between fragments is answered and the message echoed",
         frame(TEXT, b"frag", fin=False) + frame(PING, b"p") + frame(CONT, b"ment"),
         both(pong_with(b"p"), echoes((TEXT, b"fragment")))),
    Case("5 fragmentation", "a continuation with nothing to continue fails the connection",
         frame(CONT, b"x"), fails(P)),
    Case("5 fragmentation", "a new text frame inside a fragmented message fails the connection",
         frame(TEXT, b"a", fin=False) + frame(TEXT, b"b"), fails(P)),
    Case("6 UTF-8", "valid multi-byte UTF-8 is echoed", frame(TEXT, "κόσμε €𝄞".encode()),
         echoes((TEXT, "κόσμε €𝄞".encode()))),
    Case("6 UTF-8", "invalid UTF-8 in a text message fails the connection (1007)",
         frame(TEXT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80"), fails(E)),
    Case("6 UTF-8", "an overlong encoding fails the connection (1007)",
         frame(TEXT, b"\xc0\xaf"), fails(E)),
    Case("6 UTF-8", "a code point split over two fragments is echoed",
         frame(TEXT, b"\xe2\x82", fin=False) + frame(CONT, b"\xac"),
         echoes((TEXT, "€".encode()))),
    Case("6 UTF-8", "invalid UTF-8 across fragments fails the connection (1007)",
         frame(TEXT, b"ok\xf4", fin=False) + frame(CONT, b"\x90\x80\x80"), fails(E)),
    Case("7 close handling", "a Close 1000 is answered with a Close 1000",
         close_frame(1000), closes_with(1000)),
    Case("7 close handling", "an empty Close is answered with a Close",
         close_frame(None), lambda x: "" if x.close_code() in (1000, 1005) else
         f"Close {x.close_code()}"),
    Case("7 close handling", "a Close with a 1-byte payload fails the connection",
         frame(CLOSE, b"\x03"), fails(P)),
    Case("7 close handling", "a Close code 999 fails the connection", close_frame(999),
         fails(P)),
    Case("7 close handling", "a Close code 1005 (never sent) fails the connection",
         close_frame(1005), fails(P)),
    Case("7 close handling", "a Close code 1016 (unassigned) fails the connection",
         close_frame(1016), fails(P)),
    Case("7 close handling", "a Close code 3000 (registered) is answered in kind",
         close_frame(3000), closes_with(3000)),
    Case("7 close handling", "a Close with an invalid UTF-8 reason fails the connection",
         close_frame(1000, b"\xff\xfe"), fails(P, E)),
    Case("7 close handling", "a text message after the Close is not echoed",
         close_frame(1000) + frame(TEXT, b"late"),
         lambda x: "echoed a message sent after the Close" if x.data() else
         closes_with(1000)(x)),
    Case("§5.1 masking", "an unmasked client frame fails the connection",
         frame(TEXT, b"plain", masked=False), fails(P)),
]


def run(port: int, host: str, path: str) -> list[dict]:
    results = []
    for case in CASES:
        try:
            request = case.request(path, f"{host}:{port}") if case.request else None
            x = talk(port, host, path, case.payload, request)
            why = case.check(x)
        except OSError as e:
            why = f"socket error: {e}"
        results.append({"section": case.section, "name": case.name, "requirement": "MUST",
                        "passed": not why, "why": why})
    return results


if __name__ == "__main__":
    sys.exit(suite.main(__doc__, lambda port, host, a: run(port, host, a.path),
                        lambda p: p.add_argument("--path", default="/ws/echo")))

#!/usr/bin/python3
"""Writes the seeds of fuzz_h2 (fuzz/corpus/h2/): client frame streams after the preface, in
the harness's input format (byte 0: read size - 1, then the frames). Uses Debian's
python3-h2 (hpack, hyperframe). Run from anywhere; it rewrites the seed files it owns."""

import pathlib

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, HeadersFrame, PingFrame,
                              PriorityFrame, RstStreamFrame, SettingsFrame, WindowUpdateFrame)

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "h2"


def request(enc, sid, path, method="GET", extra=(), end=True):
    fields = [(":method", method), (":scheme", "http"), (":authority", "localhost"),
              (":path", path), *extra]
    flags = {"END_HEADERS"} | ({"END_STREAM"} if end else set())
    return HeadersFrame(sid, data=enc.encode(fields), flags=flags)


def seed(name, frames, piece=255):
    data = bytes([piece]) + b"".join(f.serialize() for f in frames)
    (OUT / name).write_bytes(data)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    e = hpack.Encoder
    enc = e()
    seed("get", [SettingsFrame(0), request(enc, 1, "/"), request(enc, 3, "/big")])
    enc = e()
    seed("post-body-trailers", [
        SettingsFrame(0, settings={4: 1 << 20}),
        request(enc, 1, "/echo", "POST", [("content-length", "10")], end=False),
        DataFrame(1, data=b"0123456789"),
        HeadersFrame(1, data=enc.encode([("x-sum", "1")]), flags={"END_HEADERS", "END_STREAM"}),
    ], piece=7)
    enc = e()
    seed("hold-defer-reset", [SettingsFrame(0), request(enc, 1, "/hold"),
                              request(enc, 3, "/defer"), RstStreamFrame(1, error_code=8),
                              request(enc, 5, "/hold")])
    enc = e()
    seed("continuation", [HeadersFrame(1, data=enc.encode([(":method", "GET"), (":path", "/")]),
                                       flags={"END_STREAM"}),
                          ContinuationFrame(1, data=enc.encode([(":scheme", "http")])),
                          ContinuationFrame(1, data=enc.encode([(":authority", "x")]),
                                            flags={"END_HEADERS"})], piece=3)
    enc = e()
    seed("limits", [request(enc, 1, "/" + "a" * 600), request(enc, 3, "/", extra=[
        (f"x-{i}", "v" * 60) for i in range(30)]),
        request(enc, 5, "/echo", "POST", [("content-length", "99999")], end=False),
        request(enc, 7, "/echo", "POST", [("expect", "100-continue")], end=False),
        DataFrame(7, data=b"x" * 5000, flags={"END_STREAM"})])
    seed("control", [PingFrame(0, opaque_data=b"12345678"), PriorityFrame(3, depends_on=1),
                     WindowUpdateFrame(0, window_increment=1000),
                     SettingsFrame(0, settings={1: 0, 3: 1}), SettingsFrame(0, flags={"ACK"})])
    enc = e()
    seed("cookies-head", [request(enc, 1, "/", "HEAD", [("cookie", "a=1"), ("cookie", "b=2")]),
                          request(enc, 3, "/", extra=[("host", "other")])])


if __name__ == "__main__":
    main()

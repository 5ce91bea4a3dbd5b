#!/usr/bin/env python3
"""Writes fuzz/corpus/h2_frames/: seeds for fuzz_h2_frames (fuzz/fuzz_h2_frames.cpp).

An input is a list of records: kind (frame type 0-9, 10-14 an extension, 15 the server
answers the stream), flags, stream (an index into 1, 3, 5, 0, 7, 2, 9, 2^31-1), length
(0-63) and that many bytes. The raw part of the harness reads the same bytes as frames.
"""
import os

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "h2_frames")
S1, S3, S0 = 0, 1, 3
ES, EH = 0x1, 0x4


def rec(kind, flags, stream, body=b""):
    return bytes([kind, flags, stream, len(body)]) + body


seeds = {
    # h2spec http2/5.1/5: DATA on a half-closed (remote) stream.
    "half-closed-data": rec(1, EH | ES, S1) + rec(0, ES, S1, b"test"),
    # 5.1/8: DATA after the client's RST_STREAM.
    "data-after-rst": rec(1, EH, S1) + rec(3, 0, S1, b"\0\0\0\x08") + rec(0, ES, S1, b"test"),
    # 5.1/11: DATA on a stream both sides ended.
    "data-after-answer": rec(1, EH | ES, S1) + rec(15, 0, S1) + rec(0, ES, S1, b"test"),
    # 6.10: a block in HEADERS and CONTINUATION, then trailers.
    "continuation": rec(1, 0, S1) + rec(9, 0, S1) + rec(9, EH, S1) + rec(0, 0, S1, b"body")
    + rec(1, EH | ES, S1),
    "control": rec(4, 0, S0, b"\0\x04\0\0\xff\xff\0\x05\0\0\x40\0") + rec(6, 0, S0, b"pingping")
    + rec(8, 0, S0, b"\0\0\x01\0") + rec(4, 1, S0),
    "priority": rec(2, 0, S3, b"\0\0\0\x01\x10") + rec(1, EH | 0x20, S3, b"\0\0\0\0\0\0\x05")
    + rec(2, 0, S1, b"\0\0\0\x01\x10"),
    "padded": rec(1, EH | 0x8, S1, b"\x03") + rec(0, 0x8, S1, b"\x02dat\0\0")
    + rec(0, 0x8 | ES, S1, b"\x09x"),
    "lower-id": rec(1, EH | ES, 2) + rec(1, EH | ES, S1),
    "window-zero": rec(1, EH, S1) + rec(8, 0, S1, b"\0\0\0\0") + rec(0, 0, S1, b"late"),
    "goaway-unknown": rec(11, 0xff, S0, b"12345678") + rec(7, 0, S0, b"\0\0\0\0\0\0\0\0why"),
}
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

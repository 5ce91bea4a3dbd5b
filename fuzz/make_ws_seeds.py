#!/usr/bin/env python3
"""Writes the seeds of fuzz_ws (fuzz/corpus/ws/): real client frame streams in the harness's
input format (byte 0: read size and flags, byte 1: offer length, the offer, the frames).
Run from anywhere; it rewrites the seed files it owns and leaves others alone."""

import pathlib
import zlib

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "ws"
MASK = bytes([0x37, 0xFA, 0x21, 0x3D])


def frame(b0, payload, mask=MASK):
    n = len(payload)
    if n < 126:
        head = bytes([b0, 0x80 | n])
    elif n <= 0xFFFF:
        head = bytes([b0, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([b0, 0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def deflated(messages):
    z = zlib.compressobj(6, zlib.DEFLATED, -15)
    out = []
    for m in messages:
        data = z.compress(m) + z.flush(zlib.Z_SYNC_FLUSH)
        assert data.endswith(b"\x00\x00\xff\xff")
        out.append(data[:-4])
    return out


def seed(name, mode, offer, stream):
    OUT.mkdir(parents=True, exist_ok=True)
    offer = offer.encode()
    (OUT / name).write_bytes(bytes([mode, len(offer)]) + offer + stream)


def main():
    hello = "κόσμε Hello".encode()
    seed("text-whole", 0x3F, "", frame(0x81, hello))
    seed("text-bytewise", 0x00, "", frame(0x81, hello))
    seed("fragments-with-ping", 0x05, "",
         frame(0x01, b"Hel") + frame(0x89, b"ping") + frame(0x00, b"lo, ") +
         frame(0x80, "wörld".encode()))
    seed("binary-16bit-length", 0x10, "", frame(0x82, bytes(range(256)) * 2))
    # A 64-bit length, cut after 100 payload bytes (a whole one would make every input long).
    seed("binary-64bit-length-cut", 0x3F, "", frame(0x82, b"x" * 65536)[:114])
    seed("close-normal", 0x03, "", frame(0x88, b"\x03\xe8bye"))
    seed("close-empty-then-pong", 0x3F, "", frame(0x8A, b"") + frame(0x88, b""))
    seed("close-bad-utf8", 0x3F, "", frame(0x88, b"\x03\xe8\xed\xa0\x80"))
    seed("text-surrogate", 0x02, "", frame(0x81, b"ab\xed\xa0\x80cd"))
    # Found by the first run: a message whose last fragment ends inside a character.
    seed("text-ends-inside-a-character", 0x05, "", frame(0x01, b"ab") + frame(0x80, b"c\xc3"))
    seed("unmasked", 0x3F, "", bytes([0x81, 0x02]) + b"hi")
    msgs = deflated([b"Hello Hello Hello", b"Hello Hello Hello", b""])
    seed("deflate-context-takeover", 0x47, "permessage-deflate; client_max_window_bits",
         b"".join(frame(0xC1, m) for m in msgs))
    part = deflated([b"fragmented and compressed " * 4])[0]
    seed("deflate-fragmented", 0x41,
         "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
         frame(0x42, part[:5]) + frame(0x00, part[5:9]) + frame(0x80, part[9:]))
    bomb = deflated([bytes(1 << 20)])[0]
    seed("deflate-bomb", 0x7F, 'permessage-deflate; server_max_window_bits="10"',
         frame(0xC2, bomb))
    seed("offers", 0x7F,
         "x-webkit-deflate-frame, permessage-deflate; server_max_window_bits=8, "
         "permessage-deflate; client_max_window_bits=9; server_max_window_bits=12",
         frame(0xC1, deflated([b"abc"])[0]))


if __name__ == "__main__":
    main()

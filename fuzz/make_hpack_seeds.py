#!/usr/bin/env python3
"""Writes the seeds of fuzz_hpack (fuzz/corpus/hpack/): the header blocks of RFC 7541
Appendix C in the harness's differential format (byte 0: mode 0 and the limits; per block a
3-byte record, table size choice and big-endian length, then the block), a bomb, malformed
blocks, and a round-trip input. Run from anywhere; it rewrites the seed files it owns and
leaves others alone."""

import pathlib

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "hpack"

# Byte 0 of a differential input: bit 0 clear; bits 1-4: field count limit (x2 + 1); bits
# 5-7: list size limit (x64 + 40).
LIMITS = (7 << 1) | (5 << 5)


def record(block, table_size_choice=None):
    """A block; with a choice, one of the harness's 8 table sizes is advertised first. A
    record of 0xC0 | choice, with no block, only advertises."""
    first = 0 if table_size_choice is None else 0x80 | table_size_choice
    return bytes([first]) + len(block).to_bytes(2, "big") + block


def differential(*records):
    return bytes([LIMITS]) + b"".join(records)


def h(text):
    return bytes.fromhex(text)


def integer(value, prefix_bits, first=0):
    """RFC 7541 5.1."""
    mask = (1 << prefix_bits) - 1
    if value < mask:
        return bytes([first | value])
    out = [first | mask]
    value -= mask
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out + [value])


C3 = [h("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
      h("8286 84be 5808 6e6f 2d63 6163 6865"),
      h("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65")]
C4 = [h("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
      h("8286 84be 5886 a8eb 1064 9cbf"),
      h("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")]
C6 = [h("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b "
        "ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3"),
      h("4883 640e ffc1 c0bf"),
      h("88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad "
        "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 "
        "65c0 03ed 4ee5 b106 3d50 07")]

SEEDS = {
    "rfc-c2-representations": differential(
        record(h("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")),
        record(h("040c 2f73 616d 706c 652f 7061 7468")),
        record(h("1008 7061 7373 776f 7264 0673 6563 7265 74")),
        record(h("82"))),
    "rfc-c3-requests": differential(*(record(b) for b in C3)),
    "rfc-c4-requests-huffman": differential(*(record(b) for b in C4)),
    # C.6 with a 256-byte table: tern advertises 256, so the first block must start with an
    # update (3f e1 01 is 256).
    "rfc-c6-responses-huffman-256": differential(
        record(h("3fe101") + C6[0], 3), *(record(b) for b in C6[1:])),
    "table-size-required-missing": differential(record(C4[0], 2), record(C4[1])),
    # 64 then 8,192 advertised between two blocks: the first update may not pass 64.
    "table-size-shrink-then-grow": differential(
        record(C4[0]), bytes([0xC2, 0, 0]), record(h("3f e1 3f") + C4[1], 6)),
    "bomb": differential(
        record(h("4006") + b"x-bomb" + integer(4000, 7) + b"a" * 4000 + b"\xbe" * 400),
        record(h("be 82"))),
    "bad-huffman-eos": differential(record(h("04 84 ffffffff"))),
    "bad-integer": differential(record(h("ff 80 80 80 80 80 00"))),
    "late-size-update": differential(record(h("82 20"))),
    "round-trip": bytes([1]) + bytes(range(256)) * 2,
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (OUT / name).write_bytes(data)


if __name__ == "__main__":
    main()

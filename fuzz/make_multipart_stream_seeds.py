#!/usr/bin/env python3
"""Writes the seeds of fuzz_multipart_stream (fuzz/corpus/multipart_stream/): bodies of the
whole-body parser's tests (tests/unit/web/test_multipart.cpp), each behind the harness's
header (boundary "XyZ", three cuts, the default-ish limits of the tests).

    fuzz/make_multipart_stream_seeds.py
"""
import pathlib
import struct


def lines(*ls):
    return b"".join(l + b"\r\n" for l in ls)


def one_part(data, disposition=b'name="f"'):
    return b"--XyZ\r\nContent-Disposition: form-data; " + disposition + b"\r\n\r\n" + data + \
        b"\r\n--XyZ--\r\n"


def with_headers(headers):
    return b"--XyZ\r\n" + headers + b"\r\nv\r\n--XyZ--\r\n"


head = b'--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n'
binary = bytes(range(256)) + b"\0\r\n\0" + b"\r\n--Xy" + b"\r\n-" + b"x--XyZ" + b"\n--XyZ" + \
    b"\r--XyZ" + b"\r\n--xyz" + b"\r\r\n\r\n--X" + b"\r\n"
bodies = {
    "fields-and-files": lines(
        b"--XyZ", b'Content-Disposition: form-data; name="title"', b"", b"Hello, world",
        b"--XyZ", b'Content-Disposition: form-data; name="avatar"; filename="me.png"',
        b"Content-Type: image/png", b"", b"PNGDATA",
        b"--XyZ", b'Content-Disposition: form-data; name="notes"; filename="notes.txt"', b"",
        b"line one", b"line two",
        b"--XyZ", b'Content-Disposition: form-data; name="title"', b"", b"", b"--XyZ--"),
    "binary": one_part(binary, b'name="bin"; filename="b.bin"'),
    "data-ends-in-cr": one_part(b"abc\r"),
    "boundary-in-a-line": one_part(b"before\r\n--XyZabc\r\nafter"),
    "preamble-epilogue": b"This is the preamble.\r\nIt has --XyZ in it too.\r\n" +
    one_part(b"value") + b"This is the epilogue.\r\n--XyZ\r\n",
    "padding": lines(b"--XyZ \t ", b'Content-Disposition: form-data; name="a"', b"", b"1",
                     b"--XyZ\t", b'Content-Disposition: form-data; name="b"', b"", b"2",
                     b"--XyZ--"),
    "only-close": b"--XyZ--\r\n",
    "no-data": b'--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n--XyZ\r\n'
    b'Content-Disposition: form-data; name="b"\r\n\r\nB\r\n--XyZ--',
    "no-close": head + b"value\r\n--XyZ\r\n",
    "case": with_headers(lines(
        b'content-disposition: Form-Data; NAME="a"; FileName="f.txt"',
        b"CONTENT-TYPE: application/octet-stream")),
    "quoted-name": one_part(b"v", b'name="a\\"b\\\\c;d=e"'),
    "two-dispositions": with_headers(lines(b'Content-Disposition: form-data; name="a"',
                                           b'Content-Disposition: form-data; name="b"')),
    "folded": with_headers(lines(b"Content-Disposition: form-data;", b' name="a"')),
    "lf-only": b'--XyZ\nContent-Disposition: form-data; name="a"\n\nvalue\n--XyZ--\n',
    "filename-star": one_part(b"v", b'name="f"; filename="plain.txt"; filename*=UTF-8\'\'fancy.txt'),
    "windows-path": one_part(b"v", b'name="f"; filename="C:\\Users\\me\\report.pdf"'),
    "empty-file": lines(b"--XyZ", b'Content-Disposition: form-data; name="upload"; filename=""',
                        b"Content-Type: application/octet-stream", b"", b"", b"--XyZ--"),
    "near-delimiters": one_part(b"\r\n--Xy" * 200),
    "many-parts": b"".join(b'--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n'
                           for _ in range(20)) + b"--XyZ--",
    "long-header": lines(b"--XyZ", b'Content-Disposition: form-data; name="a"', b"", b"1",
                         b"--XyZ", b'Content-Disposition: form-data; name="b"',
                         b"X-Padding: " + b"x" * 200, b"", b"2", b"--XyZ--"),
}

out = pathlib.Path(__file__).resolve().parent / "corpus" / "multipart_stream"
out.mkdir(parents=True, exist_ok=True)
for name, body in bodies.items():
    # byte 0: boundary 0 ("XyZ"), 3 cuts; the cuts; max_file_size 4096, max_parts 64,
    # max_part_header_size 512; then the body.
    n = len(body) + 1
    cuts = [n // 4, n // 2, 3 * n // 4]
    header = bytes([0x03]) + b"".join(struct.pack(">H", c) for c in cuts) + \
        struct.pack(">HBH", 4096, 64, 512)
    (out / name).write_bytes(header + body)
print(f"wrote {len(bodies)} seeds to {out}")

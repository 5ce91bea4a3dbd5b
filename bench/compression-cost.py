#!/usr/bin/env python3
"""CPU per MiB of ordinary text for gzip 6 and zstd 3, the codings' own libraries doing the
work (docs/compression.md, "Large bodies"): the figure behind compression_config::max_size.

    bench/compression-cost.py [MIB=1]

The text is the licence texts of the Debian system (/usr/share/doc/*/copyright and
/usr/share/common-licenses), concatenated to MIB MiB: prose, not a repeated line that
coders shrink to nothing. gzip 6 runs through Python's zlib (the system zlib tern links),
best CPU time of 5 runs; zstd 3 through `zstd -b3` (libzstd's own benchmark, the library
tern links). brotli has no command-line tool in Debian 12's packages here: not measured.
"""
import glob
import re
import subprocess
import sys
import time
import zlib


def ordinary_text(size: int) -> bytes:
    parts, total = [], 0
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")) + \
            sorted(glob.glob("/usr/share/common-licenses/*")):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        parts.append(data)
        total += len(data)
        if total >= size:
            break
    text = b"".join(parts)
    while len(text) < size:  # a small system: repeat what there is
        text += text
    return text[:size]


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    text = ordinary_text(mib << 20)
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        coder = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip wrapper
        out = coder.compress(text) + coder.flush()
        best = min(best, time.process_time() - t0)
    print(f"gzip 6: {best * 1000 / mib:.1f} ms of CPU per MiB, {len(out) / len(text):.1%} "
          "of the size")
    path = "/tmp/compression-cost.txt"
    with open(path, "wb") as f:
        f.write(text)
    run = subprocess.run(["zstd", "-b3", "-i3", path], capture_output=True, text=True)
    speeds = re.findall(r"\(x([\d.]+)\),\s+([\d.]+) MB/s", run.stdout + run.stderr)
    if speeds:
        ratio, mb_s = speeds[-1]
        print(f"zstd 3: {1000 / (float(mb_s) / 1.048576):.1f} ms of CPU per MiB "
              f"({mb_s} MB/s), {1 / float(ratio):.1%} of the size")
    else:
        print("zstd 3: `zstd -b3` printed no speed (is the zstd tool installed?)")


if __name__ == "__main__":
    main()

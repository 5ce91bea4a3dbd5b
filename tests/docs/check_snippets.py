#!/usr/bin/env python3
"""Checks that every C++ snippet in README.md and docs/*.md is compiled code.

A ```cpp block passes when its lines (runs of whitespace collapsed, blank lines ignored) appear as a contiguous
run in a .cpp or .hpp file under examples/ or tests/, which CI builds. Ellipsis lines
("// ...") split a block into pieces that are checked one by one. A block right after the
line "<!-- snippet: not compiled -->" is exempt (say in the prose why).

    check_snippets.py <repository root>
"""
import pathlib
import re
import sys


def normalise(lines):
    return [" ".join(l.split()) for l in lines if l.strip()]


def pieces(block):
    current = []
    for line in block:
        if line.strip() in ("// ...", "..."):
            if current:
                yield current
            current = []
        else:
            current.append(line)
    if current:
        yield current


def contains(haystack, needle):
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def main(root):
    root = pathlib.Path(root)
    sources = []
    for folder in ("examples", "tests"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".cpp", ".hpp") and path.is_file():
                sources.append((path, normalise(path.read_text(errors="replace").splitlines())))
    docs = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    failures = 0
    checked = 0
    for doc in docs:
        lines = doc.read_text().splitlines()
        i = 0
        exempt = False
        while i < len(lines):
            line = lines[i]
            if line.strip() == "<!-- snippet: not compiled -->":
                exempt = True
            elif re.match(r"^```(cpp|c\+\+)\s*$", line.strip()):
                start = i + 1
                j = start
                while j < len(lines) and lines[j].strip() != "```":
                    j += 1
                block = lines[start:j]
                if not exempt:
                    checked += 1
                    for piece in pieces(block):
                        needle = normalise(piece)
                        if needle and not any(contains(src, needle) for _, src in sources):
                            failures += 1
                            print(f"{doc.relative_to(root)}:{start}: snippet not found in "
                                  f"examples/ or tests/:\n  " + "\n  ".join(needle[:6]))
                            break
                exempt = False
                i = j
            elif line.strip():
                exempt = False
            i += 1
    print(f"check_snippets: {checked} C++ snippets checked, {failures} not found in compiled code")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

#!/usr/bin/env python3
"""Checks that every #include in src/ and include/tern/ follows the layer table in
docs/architecture.md (the section "Which folder may include which").

Each table row names a folder and what its files may include: other folders of src/
(`routing`, `http`, ...) or one file of one (`platform/socket_api.hpp`), and public headers (`tern/config.hpp`, `tern/*` for all of them).
A folder may always include its own files, the standard library and the system and
third-party headers the build gives it (their own rules, such as "asio only in src/net",
are listed in the same table under `third-party`). And that `thread_local` appears only in
the files the paragraph "`thread_local` remains in ..." of the same page names. And that
no two files of different names define a class of the same name in the same namespace
(outside anonymous namespaces): two `tern::detail::response_head`s once broke the
one-definition rule and crashed an -O0 build. Exits 1 and names each include the table does
not allow, each such file and each such class; exits 2 when the table itself cannot be read.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
# Headers of the libraries tern builds on, by the first component of their path (or their
# whole name when they have no folder).
THIRD_PARTY = {"asio": "asio", "asio.hpp": "asio", "llhttp.h": "llhttp", "fmt": "fmt",
               "nlohmann": "nlohmann_json", "zlib.h": "zlib", "openssl": "OpenSSL",
               "nghttp2": "nghttp2", "ngtcp2": "ngtcp2", "nghttp3": "nghttp3",
               "gnutls": "GnuTLS", "brotli": "brotli", "zstd.h": "zstd"}


def read_table():
    text = DOC.read_text()
    start = text.find("## Which folder may include which")
    if start < 0:
        sys.exit("check_layers: docs/architecture.md has no 'Which folder may include which'")
    rules = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`")
        allowed = set(re.findall(r"`([^`]+)`", cells[1]))
        third = set(re.findall(r"`([^`]+)`", cells[2]))
        rules[folder] = (allowed, third)
    if not rules:
        sys.exit("check_layers: the layer table in docs/architecture.md is empty")
    return rules


def thread_local_files():
    """The src/ files docs/architecture.md allows a `thread_local` in."""
    text = DOC.read_text()
    start = text.find("`thread_local` remains in")
    if start < 0:
        sys.exit("check_layers: docs/architecture.md names no thread_local uses")
    paragraph = text[start:text.find("\n\n", start)]
    return set(re.findall(r"`(src/[^`]+)`", paragraph))


def folder_of(path):
    rel = path.relative_to(ROOT)
    if rel.parts[0] == "include":
        return "include/tern"
    return "/".join(rel.parts[:2]) if len(rel.parts) > 2 else "src"


def allowed(include, folder, rules, own_dir):
    allowed_here, third_here = rules[folder]
    head = include.split("/")[0]
    if include.startswith("tern/"):
        return include in allowed_here or "tern/*" in allowed_here
    if head in THIRD_PARTY or include in THIRD_PARTY:
        return (THIRD_PARTY.get(head) or THIRD_PARTY[include]) in third_here
    if "/" in include and (ROOT / "src" / head).is_dir():
        # A folder (`platform`) or one file of it (`platform/socket_api.hpp`).
        return head == own_dir or head in allowed_here or include in allowed_here
    return True  # the standard library or a system header (<sys/stat.h>, <unistd.h>)


TYPE_DEFINITION = re.compile(
    r"^(?:struct|class)\s+(?:TERN_API\s+)?(\w+)(?!::)\b(?:\s+final)?\s*(?::[^;]*)?\{?\s*$")


def same_named_classes(files):
    """Classes defined at namespace level (not in an anonymous namespace) under one name in
    one namespace by files of different names (a .hpp and its .cpp may share a class)."""
    seen = {}
    for path in files:
        stack = []
        for n, line in enumerate(path.read_text().splitlines(), 1):
            named = re.match(r"^namespace\s+([\w:]+)\s*\{", line)
            if named:
                stack.append(named.group(1))
            elif re.match(r"^namespace\s*\{", line):
                stack.append(None)
            elif re.match(r"^\}\s*//\s*namespace", line) and stack:
                stack.pop()
            elif stack and None not in stack:
                m = TYPE_DEFINITION.match(line)
                if m:
                    seen.setdefault((stack[-1], m.group(1)), []).append(
                        (path.with_suffix(""), f"{path.relative_to(ROOT)}:{n}"))
    return [f"{ns}::{name} is defined in {', '.join(w for _, w in where)}"
            for (ns, name), where in sorted(seen.items())
            if len({stem for stem, _ in where}) > 1]


def main():
    rules = read_table()
    faults = []
    files = sorted(p for d in ("src", "include/tern") for p in (ROOT / d).rglob("*")
                   if p.suffix in (".hpp", ".cpp", ".h"))
    for path in files:
        folder = folder_of(path)
        if folder not in rules:
            faults.append(f"{path.relative_to(ROOT)}: its folder {folder} is not in the table")
            continue
        own_dir = folder.split("/")[-1] if folder.startswith("src/") else None
        for include in INCLUDE.findall(path.read_text()):
            if not allowed(include, folder, rules, own_dir):
                faults.append(f"{path.relative_to(ROOT)}: {folder} may not include <{include}>")
    kept = thread_local_files()
    for path in files:
        rel = str(path.relative_to(ROOT))
        if re.search(r"\bthread_local\b", path.read_text()) and rel not in kept:
            faults.append(f"{rel}: a thread_local docs/architecture.md does not name")
    faults += same_named_classes(files)
    for f in faults:
        print(f)
    if faults:
        print(f"check_layers: {len(faults)} fault(s) against docs/architecture.md")
        return 1
    print(f"check_layers: {len(files)} files follow the layer table; thread_local only in "
          f"{', '.join(sorted(kept))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

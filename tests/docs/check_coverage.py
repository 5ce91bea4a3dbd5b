#!/usr/bin/env python3
"""Checks that every public member function of tern::app, tern::context and tern::client is
named in at least one page of the docs (README.md or docs/*.md).

check_names.py checks the other direction (every name the docs use exists). This one fails
when a public function was added, or always there, without a page that says it exists
(issue 55: app.put, app.patch and app.del were in no page). A function counts as named when
a page has `NAME(` or `NAME<` (as `app.NAME(`, `ctx.NAME<int>(`, `.NAME(` or bare), `::NAME` or `NAME` in
backticks.

    check_coverage.py <repository root> [--list]     --list: print each function and a page
"""
import pathlib
import re
import sys

CLASSES = {"app": "app.hpp", "context": "context.hpp", "client": "client.hpp"}


def class_body(text, name):
    m = re.search(r"\bclass\s+(?:TERN_API\s+)?" + name + r"\s*(?:final\s*)?(?::[^{;]*)?\{", text)
    if not m:
        raise SystemExit(f"check_coverage: no class {name}")
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def public_functions(body):
    """Names of the member functions declared in the public sections of a class body, at its
    own nesting level (not those of nested types), without constructors and operators."""
    names = set()
    public = False
    depth = 0
    statement = ""
    i = 0
    body = re.sub(r"//[^\n]*", "", body)  # comments name things too; only code counts
    body = re.sub(r"\[\[.*?\]\]", "", body)  # attributes ([[deprecated("...")]], [[nodiscard]])
    while i < len(body):
        c = body[i]
        if depth == 0:
            for label, value in (("public:", True), ("private:", False), ("protected:", False)):
                if body.startswith(label, i):
                    public, statement = value, ""
                    i += len(label)
                    break
            else:
                if c in ";{":
                    if public:
                        m = re.search(r"(?<![\w~:])([a-z_][a-z0-9_]*)\s*\(", statement)
                        decl = statement.strip()
                        if (m and not decl.startswith(("using", "friend", "struct", "class", "enum"))
                                and "operator" not in decl and not re.search(r"=\s*delete", decl)):
                            names.add(m.group(1))
                    statement = ""
                    if c == "{":
                        depth += 1
                else:
                    statement += c
                i += 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                statement = ""
        i += 1
    return names


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else ".")
    listing = "--list" in argv
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    texts = {p.relative_to(root).as_posix(): p.read_text() for p in pages}
    failures = []
    total = 0
    for cls, header in CLASSES.items():
        text = (root / "include" / "tern" / header).read_text()
        for name in sorted(public_functions(class_body(text, cls))):
            if name == cls:
                continue
            total += 1
            named = re.compile(r"(?<![\w])" + re.escape(name) + r"\s*[(<]|::" + re.escape(name) +
                               r"\b|`" + re.escape(name) + r"`")
            where = next((page for page, t in texts.items() if named.search(t)), None)
            if where is None:
                failures.append(f"{cls}::{name} (include/tern/{header}) is named in no page of "
                                f"README.md or docs/")
            elif listing:
                print(f"{cls}::{name}: {where}")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"check_coverage: {total} public functions of app, context and client, "
          f"{len(failures)} named in no page")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

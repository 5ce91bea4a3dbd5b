#!/usr/bin/env python3
"""Checks that every setting, setter and context method the docs name exists in the headers.

Reads README.md and docs/*.md for

    config::NAME, X_config::NAME     a member of struct config / X_config
    cfg.NAME                          a member of struct config (code blocks use `cfg`)
    cfg.GROUP.NAME                    a member of the struct of config's member GROUP
    app.NAME(                         a member function of class app
    ctx.NAME(                         a member function of class context

and fails, naming the page and line, when the struct or class in include/tern/ has no
member of that name. So a page cannot keep naming a field or setter that was renamed or
never existed (issue 36: uploads.md named setters that did not exist).

    check_names.py <repository root>
"""
import pathlib
import re
import sys


def class_bodies(headers):
    """{name: body text} for every struct/class defined in the public headers."""
    bodies = {}
    for text in headers:
        for m in re.finditer(r"\b(?:struct|class)\s+(?:TERN_API\s+)?(\w+)\s*(?:final\s*)?(?::[^{;]*)?\{",
                             text):
            depth, i = 1, m.end()
            while i < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            bodies.setdefault(m.group(1), "")
            bodies[m.group(1)] += text[m.end():i]
    return bodies


def has_member(body, name):
    return re.search(r"\b" + re.escape(name) + r"\b\s*(=|;|\{|\(|\[)", body) is not None


def member_type(body, name):
    """The declared type of member `name` in a struct body ("limits_config"), or None."""
    m = re.search(r"([\w:<>]+)\s+" + re.escape(name) + r"\s*(=|;|\{)", body)
    return m.group(1).split("::")[-1] if m else None


def main(root):
    root = pathlib.Path(root)
    headers = [p.read_text() for p in sorted((root / "include" / "tern").glob("**/*.hpp"))]
    bodies = class_bodies(headers)
    checks = [
        (re.compile(r"\b(config|[a-z_]+_config)::([a-z_][a-z0-9_]*)\b"), lambda m: (m.group(1), m.group(2))),
        (re.compile(r"\bcfg\.([a-z_][a-z0-9_]*)\b(?!\.)"), lambda m: ("config", m.group(1))),
        (re.compile(r"\bcfg\.([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\b"),
         lambda m: (member_type(bodies.get("config", ""), m.group(1)) or f"config::{m.group(1)}",
                    m.group(2))),
        (re.compile(r"\bapp\.([a-z_][a-z0-9_]*)\("), lambda m: ("app", m.group(1))),
        (re.compile(r"\bctx\.([a-z_][a-z0-9_]*)\("), lambda m: ("context", m.group(1))),
    ]
    failures = []
    seen = 0
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    for page in pages:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for pattern, parts in checks:
                for m in pattern.finditer(line):
                    owner, name = parts(m)
                    seen += 1
                    if owner not in bodies:
                        failures.append(f"{page.relative_to(root)}:{number}: no struct or class "
                                        f"'{owner}' in include/tern (for {m.group(0)})")
                    elif not has_member(bodies[owner], name):
                        failures.append(f"{page.relative_to(root)}:{number}: {owner} has no "
                                        f"member '{name}' ({m.group(0)})")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"check_names: {seen} names in {len(pages)} pages, {len(failures)} not in the headers")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

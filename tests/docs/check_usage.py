#!/usr/bin/env python3
"""Checks that every example's usage line matches the flags its main() parses.

For each program under examples/ that prints a usage line ("usage: NAME ..."), the flags in
that line must be exactly the flags its source compares arguments with (`arg == "--x"`).
Then every line in README.md, docs/*.md, examples/**/README.md, the example sources'
comments and scripts that shows the program's usage (`NAME [port] ...`, `NAME PORT ...`)
may name only flags the program parses. So a documented command cannot name a flag that
was renamed or dropped, and a new flag cannot be left out of the usage line (issue 36).

    check_usage.py <repository root>
"""
import pathlib
import re
import sys

FLAG = re.compile(r"--[a-z0-9][a-z0-9-]*")


def main(root):
    root = pathlib.Path(root)
    programs = {}  # name -> (source files, parsed flags, usage flags)
    for folder in sorted(p for p in (root / "examples").iterdir() if p.is_dir()):
        for source in sorted(folder.glob("*.cpp")):
            text = source.read_text()
            usage = re.search(r"usage: ([A-Za-z_]+)([^\"\\]*)", text)
            if not usage:
                continue
            parsed = set(re.findall(r'arg\s*==\s*"(--[a-z0-9-]+)"', text))
            programs[usage.group(1)] = (source, parsed, set(FLAG.findall(usage.group(2))))
    failures = []
    for name, (source, parsed, shown) in programs.items():
        if parsed != shown:
            failures.append(f"{source.relative_to(root)}: the usage line shows {sorted(shown)} "
                            f"but main() parses {sorted(parsed)}")
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md")) + sorted(
        (root / "examples").glob("**/README.md")) + sorted((root / "examples").glob("**/*.cpp")) + sorted(
            (root / "examples").glob("**/*.sh")) + sorted((root / "scripts").glob("*.sh"))
    lines_checked = 0
    for page in pages:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for name, (_, parsed, _) in programs.items():
                # The program's name followed by its port argument: a usage or a command.
                if not re.search(r"(^|[\s`/])" + re.escape(name) + r" (\[port\]|PORT|\d{2,5}\b)", line):
                    continue
                lines_checked += 1
                for flag in FLAG.findall(line):
                    if flag not in parsed:
                        failures.append(f"{page.relative_to(root)}:{number}: {name} does not parse "
                                        f"{flag}: {line.strip()}")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"check_usage: {len(programs)} programs, {lines_checked} usage lines, "
          f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

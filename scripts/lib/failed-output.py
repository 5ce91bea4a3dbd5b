#!/usr/bin/python3
"""Prints again, at the end of a ctest run that failed, what each failed test printed (the
last 80 lines of each), read from ctest's own logs in BUILD/Testing/Temporary. ctest's
--output-on-failure prints it where the test ended, among a thousand other lines; a CI log
that keeps only its tail keeps this.

    scripts/lib/failed-output.py BUILD
"""
import sys
from pathlib import Path

TAIL = 80


def main():
    temporary = Path(sys.argv[1]) / "Testing" / "Temporary"
    failed_log = temporary / "LastTestsFailed.log"
    if not failed_log.exists():
        return
    names = [line.split(":", 1)[1] for line in failed_log.read_text().splitlines() if ":" in line]
    log = (temporary / "LastTest.log").read_text(errors="replace").splitlines()
    for name in names:
        print(f"== what the failed test printed: {name}")
        start = next((i for i, line in enumerate(log)
                      if line.endswith(f"Testing: {name}")), None)
        if start is None:
            print("   (not in LastTest.log)")
            continue
        try:
            begin = log.index("Output:", start) + 2  # past the dashes under it
            end = log.index("<end of output>", begin)
        except ValueError:
            print("   (its output is not in LastTest.log)")
            continue
        lines = log[begin:end]
        if len(lines) > TAIL:
            print(f"   ({len(lines) - TAIL} earlier lines left out)")
        print("\n".join(lines[-TAIL:]))


if __name__ == "__main__":
    main()

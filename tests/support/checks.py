"""The checks of a standalone test script (tests/examples, tests/clients): a line per check,
"ok   NAME" or "FAIL NAME  (DETAIL)", and from them the closing line and the exit status.

    from checks import check, finish
    check("the server answers 200", status == 200, status)
    sys.exit(finish())          # prints "N passed, M failed"; 0 when all passed, else 1
"""

results: list[bool] = []


def check(name: str, ok, detail="") -> bool:
    """Records one check and prints its line (the detail only when it failed)."""
    results.append(bool(ok))
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f"  ({detail})"), flush=True)
    return bool(ok)


def finish(passed_status: int = 0) -> int:
    """Prints how many checks passed and failed; `passed_status` (0, or 77 for a script that
    skips its rest) when all passed, 1 when one failed."""
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed", flush=True)
    return passed_status if passed == len(results) else 1

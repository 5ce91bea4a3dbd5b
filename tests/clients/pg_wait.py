#!/usr/bin/python3
"""libpq's non-blocking API on tern's event loop, against a real PostgreSQL this test starts
(initdb + pg_ctl in a temporary directory, as tests/examples/todo_smoke.py does):
tests/support/pg_wait_app.cpp connects, queries and waits with tern::wait_readable /
wait_writable on one loop thread with no blocking pool. Checks the answer, that 20 requests
whose queries sleep run in the database at once (pg_stat_activity sees them together: no
request holds the loop while it waits), that the app's own 2 s wait times out as a 504, and
that the app serves after all of it. Prints "skip: <why>" and passes when PostgreSQL cannot
be started.

    pg_wait.py path/to/tern_pg_wait_app
"""
import http.client
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from todo_smoke import postgres  # noqa: E402  (the same PostgreSQL harness)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)


def get(port, path, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def main():
    app = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tern-pg-wait-") as work:
        import os
        os.chmod(work, 0o755)  # the postgres user reaches its directory inside
        try:
            pg = postgres(work)
            pg.start()
        except Exception as e:  # noqa: BLE001  (any reason PostgreSQL cannot run here)
            print(f"skip: PostgreSQL could not start: {e}")
            return 0
        srv = procs.start([app, "{port}", pg.conninfo()], name="pg_wait's app", timeout=10,
                          ready=procs.answers("/sum?a=0&b=0"))
        port = srv.port
        try:
            status, body = get(port, "/sum?a=2&b=3")
            check("a query through libpq's non-blocking API answers", (status, body) == (200, "5"),
                  (status, body))

            answers = {}

            def ask(i):
                answers[i] = get(port, f"/sum?a={i}&b=100&sleep=1")

            threads = [threading.Thread(target=ask, args=(i,)) for i in range(20)]
            for t in threads:
                t.start()
            most = 0
            deadline = time.time() + 5
            while time.time() < deadline and any(t.is_alive() for t in threads):
                out = pg.psql("SELECT count(*) FROM pg_stat_activity "
                              "WHERE query LIKE 'SELECT $1::int + $2::int%' AND state = 'active'")
                most = max(most, int(out or 0))
                if most >= 2:
                    break
                time.sleep(0.02)
            for t in threads:
                t.join(30)
            check("20 sleeping queries from one loop thread run in the database at once "
                  f"(pg_stat_activity saw {most} together)", most >= 2, most)
            check("each of the 20 gets its own answer",
                  all(answers.get(i) == (200, str(i + 100)) for i in range(20)),
                  {i: answers.get(i) for i in range(20) if answers.get(i) != (200, str(i + 100))})

            status, body = get(port, "/sum?a=1&b=1&sleep=4")
            check("a query past the app's 2 s wait is answered 504",
                  (status, body) == (504, "the database did not answer"), (status, body))
            check("the app serves after it", get(port, "/sum?a=40&b=2") == (200, "42"))
        finally:
            srv.stop(timeout=10, expect=None)
            pg.stop()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

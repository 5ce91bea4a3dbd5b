#!/usr/bin/python3
"""examples/todo over real sockets against real databases, with the standard library only.

SQLite: a fresh file in a temporary directory. The whole API (create, list with paging and
newest first, get, replace, delete, 404s), a 400 naming the field for every bad input
(query, path and body), invalid JSON, titles of 200 and 201 code points, a body over
max_body_size (413), 40 concurrent writes, SQL-looking and Unicode titles stored and read
back verbatim (also read from the file itself with Python's sqlite3), /health (503 once
another process drops the table), another process holding the write lock (a write waits
for it, up to the 5 s busy timeout, then 503, while reads on other connections are
answered at once: the waits block no event loop), the data surviving a restart on the
same file, the server still serving after all the bad input, and SIGTERM exiting 0.

PostgreSQL: the test starts a real server of its own (initdb + pg_ctl, as the postgres
user when run as root) in a temporary directory on a free port on 127.0.0.1, runs the same
API checks with --pg, compares the table read by psql, counts the example's sessions (1 to
8, none after its stop), stops the server under the running example (503, then 200 again
once it is back), and stops it at the end even on failure. When PostgreSQL cannot be found
or started, it prints "skip postgresql: <why>" and the SQLite part alone decides.

    todo_smoke.py path/to/todo
"""
import glob
import http.client
import json
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

SQL_TITLES = [
    "'); DROP TABLE todos;--",
    "Robert'); DROP TABLE students; --",
    "1 OR 1=1",
    "\"; DELETE FROM todos; --",
    "x' UNION SELECT id, title, done FROM todos --",
    "$1 ?1 %s %d :name @p \\",
    "'; SELECT pg_sleep(10); --",
]
UNICODE_TITLES = [
    "ünïcödé ✓ 日本語 🎉",
    "\U0001F600" * 3 + " emoji",
    "tab\tnew line\nquote\" backslash\\ end",
    "עברית العربية",
]


def ok(what):
    print("ok  ", what, flush=True)


def fail(what):
    raise SystemExit(f"FAIL {what}")


class server:
    def __init__(self, binary, args, cwd):
        self.args = args
        self.srv = procs.start([binary, "{port}"] + args, name=f"todo {args}", timeout=30,
                               cwd=cwd)
        self.proc, self.port = self.srv.proc, self.srv.port

    def request(self, method, path, body=None, headers=None):
        """(status, headers as a dict with lower-case names, body bytes), one connection each."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            if isinstance(body, (dict, list)) or body is None and method in ("POST", "PUT"):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode()
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def stop(self):
        self.srv.stop()
        ok("SIGTERM stops it with status 0")

    def kill(self):
        self.srv.kill()


def expect(got, want, what):
    status, headers, body = got
    if status != want:
        fail(f"{what}: want {want}, got {status} {body[:300]!r}")
    ok(f"{what}: {want}")
    if body and headers.get("content-type", "").startswith("application/json"):
        return json.loads(body)
    return body


def expect_field(got, field, what):
    status, _, body = got
    if status != 400:
        fail(f"{what}: want 400 naming '{field}', got {status} {body[:300]!r}")
    expect_json(got, what)
    answer = json.loads(body)
    if answer.get("field") != field or \
            field != "body" and f"'{field}'" not in answer.get("error", ""):
        fail(f"{what}: want 400 naming '{field}', got {answer}")
    ok(f"{what}: 400 {answer['error']!r}")


def expect_json(got, what):
    if not got[1].get("content-type", "").startswith("application/json"):
        fail(f"{what}: content type {got[1].get('content-type')}")


def expect_todo(got, want, title, done, what):
    expect_json(got, what)
    t = expect(got, want, what)
    if not isinstance(t, dict) or set(t) != {"id", "title", "done"}:
        fail(f"{what}: not a to-do object: {t!r}")
    if t["title"] != title or t["done"] is not done or not isinstance(t["id"], int):
        fail(f"{what}: stored {t!r}, sent title {title!r} done {done}")
    return t


def health(srv, db, want=200):
    got = srv.request("GET", "/health")
    answer = expect(got, want, f"GET /health ({db})")
    if want == 200 and got[2] != f'{{"status":"ok","db":"{db}"}}'.encode():
        fail(f"GET /health: the body is {got[2]!r}")
    expected = {"status": "ok" if want == 200 else "unavailable", "db": db}
    if answer != expected:
        fail(f"GET /health: {answer}, want {expected}")


def listing(srv, query=""):
    got = srv.request("GET", "/todos" + query)
    expect_json(got, f"GET /todos{query}")
    page = expect(got, 200, f"GET /todos{query}")
    if not isinstance(page, list):
        fail(f"GET /todos{query}: not an array: {page!r}")
    return page


def api_checks(srv, db):
    """The whole API on an empty table. Returns the to-dos left, by id."""
    health(srv, db)
    if listing(srv) != []:
        fail("a new table is not empty")

    # Create 25, alternating done.
    created = []
    for i in range(25):
        status, headers, body = got = srv.request("POST", "/todos",
                                                  {"title": f"item {i}", "done": i % 2 == 1})
        t = expect_todo(got, 201, f"item {i}", i % 2 == 1, f"POST /todos item {i}")
        if headers.get("location") != f"/todos/{t['id']}":
            fail(f"POST /todos: Location {headers.get('location')}")
        if created and t["id"] <= created[-1]["id"]:
            fail(f"ids do not grow: {created[-1]['id']} then {t['id']}")
        created.append(t)
    newest_first = list(reversed(created))

    # Paging, newest first.
    if listing(srv) != newest_first[:20]:
        fail("GET /todos: not the 20 newest, newest first")
    ok("GET /todos: the default limit 20, newest first")
    if listing(srv, "?limit=5&offset=3") != newest_first[3:8]:
        fail("GET /todos?limit=5&offset=3: the wrong page")
    if listing(srv, "?limit=100") != newest_first:
        fail("GET /todos?limit=100: not all 25 in order")
    if listing(srv, "?offset=20") != newest_first[20:]:
        fail("GET /todos?offset=20: not the last 5")
    if listing(srv, "?offset=25") != [] or listing(srv, "?offset=9223372036854775807") != []:
        fail("GET /todos past the end: not empty")
    if listing(srv, "?limit=1") != newest_first[:1]:
        fail("GET /todos?limit=1")
    ok("paging: limit, offset, past the end")
    for query, field in (("limit=0", "limit"), ("limit=101", "limit"), ("limit=abc", "limit"),
                         ("limit=-1", "limit"), ("limit=", "limit"), ("limit=1.5", "limit"),
                         ("limit=99999999999999999999", "limit"), ("limit=%2010", "limit"),
                         ("offset=-1", "offset"), ("offset=x", "offset"),
                         ("offset=1e3", "offset"), ("limit=5&offset=", "offset")):
        expect_field(srv.request("GET", "/todos?" + query), field, f"GET /todos?{query}")

    # One to-do.
    first = created[0]
    got = srv.request("GET", f"/todos/{first['id']}")
    if expect(got, 200, "GET /todos/{id}") != first:
        fail(f"GET /todos/{first['id']}: {got}")
    missing = created[-1]["id"] + 1000
    got = srv.request("GET", f"/todos/{missing}")
    expect_json(got, "GET /todos/{unknown id}")
    if expect(got, 404, "GET /todos/{unknown id}") != {"error": f"no to-do with id {missing}"}:
        fail(f"GET /todos/{missing}: {got[2]!r}")
    expect(srv.request("GET", "/todos/0"), 404, "GET /todos/0")
    expect(srv.request("GET", "/todos/-3"), 404, "GET /todos/-3")
    for bad in ("abc", "1.5", "1e3", "0x10", "99999999999999999999", "%201", "1%20"):
        expect_field(srv.request("GET", f"/todos/{bad}"), "id", f"GET /todos/{bad}")

    # Replace.
    t = expect_todo(srv.request("PUT", f"/todos/{first['id']}",
                                {"title": "item 0, renamed", "done": True}),
                    200, "item 0, renamed", True, "PUT /todos/{id}")
    if t["id"] != first["id"]:
        fail(f"PUT changed the id: {t}")
    if expect(srv.request("GET", f"/todos/{first['id']}"), 200, "GET after PUT") != t:
        fail("GET after PUT: not the stored object")
    expect_todo(srv.request("PUT", f"/todos/{first['id']}", {"title": "item 0 again"}), 200,
                "item 0 again", False, "PUT without done (false)")
    expect(srv.request("PUT", f"/todos/{missing}", {"title": "x", "done": False}), 404,
           "PUT /todos/{unknown id}")
    expect_field(srv.request("PUT", "/todos/abc", {"title": "x", "done": False}), "id",
                 "PUT /todos/abc")
    expect_field(srv.request("PUT", f"/todos/{first['id']}", {"title": "", "done": False}),
                 "title", "PUT with an empty title")
    expect_field(srv.request("PUT", f"/todos/{first['id']}", {"title": "x", "done": "no"}),
                 "done", "PUT with done a string")
    if json.loads(srv.request("GET", f"/todos/{first['id']}")[2])["title"] != "item 0 again":
        fail("a refused PUT changed the to-do")
    ok("a refused PUT leaves the to-do as it was")

    # Delete.
    victim = created[1]
    expect(srv.request("DELETE", f"/todos/{victim['id']}"), 204, "DELETE /todos/{id}")
    expect(srv.request("GET", f"/todos/{victim['id']}"), 404, "GET after DELETE")
    expect(srv.request("DELETE", f"/todos/{victim['id']}"), 404, "DELETE it again")
    expect(srv.request("PUT", f"/todos/{victim['id']}", {"title": "back", "done": False}), 404,
           "PUT a deleted id")
    expect_field(srv.request("DELETE", "/todos/x"), "id", "DELETE /todos/x")
    if victim in listing(srv, "?limit=100"):
        fail("a deleted to-do is still listed")

    # Validation of the body, each naming its field.
    for body, field, what in (
            ({"done": False}, "title", "no title"),
            ({"title": 5, "done": False}, "title", "title a number"),
            ({"title": None, "done": False}, "title", "title null"),
            ({"title": ["x"], "done": False}, "title", "title an array"),
            ({"title": "", "done": False}, "title", "title empty"),
            ({"title": "x" * 201, "done": False}, "title", "title of 201 ASCII characters"),
            ({"title": "é" * 201, "done": False}, "title", "title of 201 two-byte characters"),
            ({"title": "\U0001F600" * 201, "done": False}, "title", "title of 201 emoji"),
            ({"title": "a\u0000b", "done": False}, "title", "title with U+0000"),
            ({"title": "x", "done": "yes"}, "done", "done a string"),
            ({"title": "x", "done": 1}, "done", "done a number"),
            ({"title": "x", "done": None}, "done", "done null"),
            (["x", False], "body", "an array"),
            ("\"x\"", "body", "a JSON string"),
            ("42", "body", "a JSON number")):
        expect_field(srv.request("POST", "/todos", body), field, f"POST /todos, {what}")
    for body, what in (('{"title": ', "JSON cut short"), ("", "an empty body"),
                       (b'{"title": "\xff\xfe", "done": false}', "a title that is not UTF-8"),
                       ("{'title': 'x'}", "single quotes"), ('{"title": "x",}', "a trailing comma")):
        expect_field(srv.request("POST", "/todos", body), "body", f"POST /todos, {what}")
    expect(srv.request("POST", "/todos", {"title": "x" * 20000, "done": False}), 413,
           "POST /todos, a body over max_body_size (16 KiB)")
    expect(srv.request("PUT", f"/todos/{first['id']}", "[" * 17000), 413,
           "PUT /todos/{id}, a body over max_body_size (16 KiB)")

    # Lengths are counted in code points: 200 of them pass however many bytes they take.
    kept = {t["id"]: t for t in listing(srv, "?limit=100")}
    for title, what in (("x" * 200, "200 ASCII characters"), ("é" * 200, "200 two-byte characters"),
                        ("\U0001F600" * 200, "200 emoji (800 bytes)"), ("a", "one character")):
        t = expect_todo(srv.request("POST", "/todos", {"title": title}), 201, title, False,
                        f"POST /todos, a title of {what}")
        kept[t["id"]] = t

    # SQL-looking and Unicode titles are data, stored and read back verbatim.
    for title in SQL_TITLES + UNICODE_TITLES:
        t = expect_todo(srv.request("POST", "/todos", {"title": title, "done": True}), 201, title,
                        True, f"POST /todos {title[:40]!r}")
        again = expect(srv.request("GET", f"/todos/{t['id']}"), 200, "  read back")
        if again != t:
            fail(f"read back {again!r}, stored {t!r}")
        kept[t["id"]] = t
    # Writes from many clients at once: the pool's connections take turns (SQLite's busy
    # timeout, PostgreSQL's own locking); every one is stored, each with its own id.
    batch = []
    lock = threading.Lock()

    def writer(n):
        for j in range(5):
            title = f"concurrent {n}.{j}"
            got = srv.request("POST", "/todos", {"title": title, "done": j % 2 == 0})
            with lock:
                batch.append((title, j % 2 == 0, got))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ids = set()
    for title, done, got in batch:
        if got[0] != 201:
            fail(f"concurrent POST {title}: {got[0]} {got[2]!r}")
        t = json.loads(got[2])
        if t["title"] != title or t["done"] is not done:
            fail(f"concurrent POST {title}: stored {t}")
        ids.add(t["id"])
        kept[t["id"]] = t
    if len(ids) != 40:
        fail(f"40 concurrent POSTs got {len(ids)} distinct ids")
    ok("40 POSTs from 8 clients at once: all 201, 40 distinct ids")

    # Non-ASCII sent as raw UTF-8 (not \\u escapes) is read the same way.
    raw = '{"title": "raw UTF-8: ñ 中 🦀", "done": false}'.encode()
    t = expect_todo(srv.request("POST", "/todos", raw), 201, "raw UTF-8: ñ 中 🦀", False,
                    "POST /todos with raw UTF-8 bytes")
    kept[t["id"]] = t
    everything = listing(srv, "?limit=100")
    if everything != sorted(kept.values(), key=lambda x: x["id"], reverse=True):
        fail("GET /todos?limit=100 is not every to-do kept, newest first")
    ok(f"all {len(everything)} to-dos listed verbatim, newest first: the table survived the "
       "SQL-looking titles")

    # Still serving after all of it; unknown routes and methods are tern's.
    expect(srv.request("GET", "/nope"), 404, "GET /nope")
    expect(srv.request("PATCH", "/todos/1", {"done": True}), 405, "PATCH /todos/1")
    health(srv, db)
    return kept


def sqlite_part(binary, workdir):
    print("---- sqlite", flush=True)
    db_file = os.path.join(workdir, "todos.sqlite")
    srv = server(binary, ["--db", db_file], workdir)
    try:
        kept = api_checks(srv, "sqlite")

        # The file itself, read by another SQLite client.
        with sqlite3.connect(db_file) as conn:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            rows = {r[0]: {"id": r[0], "title": r[1], "done": bool(r[2])}
                    for r in conn.execute("SELECT id, title, done FROM todos")}
        conn.close()
        if mode != "wal":
            fail(f"journal_mode is {mode}, not wal")
        ok("the file is in WAL mode")
        if rows != kept:
            fail("the rows in the file are not what the API stored")
        ok("the rows in the file are exactly what the API stored (SQL-looking titles too)")

        # Another process takes the write lock. A write waits for it (the busy timeout, 5 s)
        # instead of failing at once; past the timeout it is a 503. Reads go on meanwhile (WAL).
        locker = sqlite3.connect(db_file, isolation_level=None, timeout=1,
                                 check_same_thread=False)
        locker.execute("BEGIN IMMEDIATE")
        locker.execute("UPDATE todos SET done = done")
        release = threading.Timer(1.0, lambda: locker.execute("ROLLBACK"))
        started = time.monotonic()
        release.start()
        got = srv.request("POST", "/todos", {"title": "waited for the lock"})
        waited = time.monotonic() - started
        release.join()
        t = expect_todo(got, 201, "waited for the lock", False,
                        "POST while another process holds the write lock for 1 s")
        if waited < 0.8:
            fail(f"the POST did not wait for the lock ({waited:.2f} s)")
        ok(f"  it waited {waited:.1f} s for the lock (busy timeout)")
        kept[t["id"]] = t
        # Four writes wait on pool threads for a lock that is never released. Meanwhile the
        # event loops and the other pool threads go on answering reads at once: the waits
        # block neither (and WAL lets readers past the writer).
        locker.execute("BEGIN IMMEDIATE")
        locker.execute("UPDATE todos SET done = done")
        results = []

        def blocked_post():
            begin = time.monotonic()
            got = srv.request("POST", "/todos", {"title": "while locked"})
            results.append((got, time.monotonic() - begin))

        writers = [threading.Thread(target=blocked_post) for _ in range(4)]
        for w in writers:
            w.start()
        time.sleep(0.5)
        for i in range(12):
            begin = time.monotonic()
            got = srv.request("GET", "/todos?limit=100")
            took = time.monotonic() - begin
            if got[0] != 200 or {t["id"]: t for t in json.loads(got[2])} != kept:
                fail(f"GET /todos while writes wait for the lock: {got[0]} {got[2][:200]!r}")
            if took > 1.0:
                fail(f"GET /todos took {took:.1f} s while writes waited for the lock")
        health(srv, "sqlite")
        ok("while four writes wait for the lock, 12 reads on new connections answer at once "
           "(event loops and the rest of the pool are free; WAL readers pass the writer)")
        for w in writers:
            w.join()
        locker.execute("ROLLBACK")
        locker.close()
        for got, waited in results:
            if got[0] != 503 or json.loads(got[2]).get("error") != "the database did not answer":
                fail(f"POST while the write lock is held: {got[0]} {got[2]!r}")
            if not 4 <= waited < 30:
                fail(f"the 503 came after {waited:.1f} s, not the 5 s busy timeout")
        ok("POSTs while another process keeps the write lock: 503 after "
           + ", ".join(f"{w:.1f}" for _, w in results) + " s (the busy timeout)")
        health(srv, "sqlite")
        srv.stop()
        # The last connection to close checkpoints the WAL into the file and removes it:
        # every pool thread's connection was closed at the stop.
        if os.path.exists(db_file + "-wal"):
            fail("the -wal file is still there after the stop: a connection was left open")
        ok("after the stop the WAL is checkpointed and removed: every connection was closed")

        # A restart on the same file finds everything.
        srv = server(binary, ["--db", db_file], workdir)
        if {t["id"]: t for t in listing(srv, "?limit=100")} != kept:
            fail("after a restart the to-dos differ")
        ok(f"after a restart on the same file: the same {len(kept)} to-dos")
        t = expect_todo(srv.request("POST", "/todos", {"title": "after restart"}), 201,
                        "after restart", False, "POST after the restart")
        if t["id"] <= max(kept):
            fail(f"an id was reused after the restart: {t['id']}")
        srv.stop()
    finally:
        srv.kill()

    # A database that fails under the running server: the table removed by another process.
    broken_file = os.path.join(workdir, "broken.sqlite")
    srv = server(binary, ["--db", broken_file], workdir)
    try:
        expect(srv.request("POST", "/todos", {"title": "soon gone"}), 201, "POST to broken.sqlite")
        health(srv, "sqlite")
        with sqlite3.connect(broken_file) as conn:
            conn.execute("DROP TABLE todos")
        conn.close()
        health(srv, "sqlite", 503)
        got = srv.request("GET", "/todos")
        if got[0] != 503 or got[1].get("retry-after") != "1" or \
                json.loads(got[2]) != {"error": "the database did not answer"}:
            fail(f"GET /todos without its table: {got[0]} {got[1]} {got[2]!r}")
        ok("GET /todos without its table: 503, Retry-After: 1, the database's message kept "
           "from the client")
        srv.stop()
    finally:
        srv.kill()

    # The default file is todo.db in the working directory.
    srv = server(binary, [], workdir)
    try:
        expect(srv.request("POST", "/todos", {"title": "default file"}), 201,
               "POST with no --db")
        srv.stop()
    finally:
        srv.kill()
    if not os.path.exists(os.path.join(workdir, "todo.db")):
        fail("no todo.db in the working directory")
    ok("with no --db the data is in ./todo.db")


def postgres_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


class postgres:
    """A PostgreSQL server of the test's own, in a temporary directory."""

    def __init__(self, workdir):
        self.bindir = postgres_bin()
        if self.bindir is None:
            raise RuntimeError("initdb not found (scripts/install-deps.sh installs postgresql)")
        self.as_user = []
        if os.geteuid() == 0:  # postgres refuses to run as root
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no postgres user") from None
            runuser = shutil.which("runuser")
            if runuser is None:
                raise RuntimeError("running as root and there is no runuser")
            self.as_user = [runuser, "-u", "postgres", "--"]
        self.dir = os.path.join(workdir, "pg")
        os.mkdir(self.dir, 0o700)
        if self.as_user:
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "log")
        self.port = procs.free_port()
        self.running = False
        self.run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                 "--no-locale")

    def run(self, tool, *args):
        r = subprocess.run(self.as_user + [os.path.join(self.bindir, tool), *args],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=90)
        if r.returncode != 0:
            raise RuntimeError(f"{tool} exited {r.returncode}: {r.stdout.strip()[-500:]}")
        return r.stdout

    def start(self):
        self.run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o",
                 f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir}", "start")
        self.running = True

    def stop(self):
        if self.running:
            self.run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
            self.running = False

    def conninfo(self):
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def psql(self, sql):
        """psql's unaligned output for `sql`, or None without psql."""
        psql = os.path.join(self.bindir, "psql")
        if not os.path.exists(psql):
            return None
        r = subprocess.run([psql, self.conninfo(), "-X", "-A", "-t", "-c", sql],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        if r.returncode != 0:
            fail(f"psql: {r.stderr}")
        return r.stdout.strip()

    def example_connections(self):
        """How many sessions the example has open (its application_name), or None."""
        out = self.psql("SELECT count(*) FROM pg_stat_activity "
                        "WHERE application_name = 'tern-todo'")
        return None if out is None else int(out)

    def titles(self):
        """Every to-do in the table by id, read with psql, or None without psql."""
        out = self.psql("SELECT json_agg(json_build_object('id', id, 'title', title, "
                        "'done', done)) FROM todos")
        return None if out is None else {t["id"]: t for t in json.loads(out)}


def postgres_part(binary, workdir):
    print("---- postgresql", flush=True)
    try:
        pg = postgres(workdir)
        pg.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"skip postgresql: {e}", flush=True)
        return
    ok(f"PostgreSQL from {pg.bindir} on 127.0.0.1:{pg.port}")
    srv = None
    try:
        srv = server(binary, ["--pg", pg.conninfo()], workdir)
        kept = api_checks(srv, "postgresql")
        rows = pg.titles()
        if rows is not None:
            if rows != kept:
                fail("the rows psql reads are not what the API stored")
            ok("the rows psql reads are exactly what the API stored (SQL-looking titles too)")
        n = pg.example_connections()
        if n is not None:
            if not 1 <= n <= 8:
                fail(f"the example has {n} sessions open, not 1 to 8 (at most 4 per event loop)")
            ok(f"the example has {n} sessions open (at most 4 per event loop, 2 loops)")

        # The database goes away under the running example, then comes back.
        pg.stop()
        health(srv, "postgresql", 503)
        expect(srv.request("GET", "/todos"), 503, "GET /todos with PostgreSQL stopped")
        pg.start()
        health(srv, "postgresql")
        if {t["id"]: t for t in listing(srv, "?limit=100")} != kept:
            fail("after PostgreSQL came back the to-dos differ")
        ok("PostgreSQL stopped: 503; started again: each loop opens its connections again, same data")
        srv.stop()

        srv = server(binary, ["--pg", pg.conninfo()], workdir)
        if {t["id"]: t for t in listing(srv, "?limit=100")} != kept:
            fail("after a restart of the example the to-dos differ")
        ok("after a restart of the example: the same to-dos")
        srv.stop()
        deadline = time.monotonic() + 10
        while pg.example_connections() not in (0, None) and time.monotonic() < deadline:
            time.sleep(0.1)
        if pg.example_connections() not in (0, None):
            fail(f"{pg.example_connections()} sessions of the example left after its stop")
        ok("after the example's stop none of its sessions is left")
    finally:
        if srv is not None:
            srv.kill()
        pg.stop()
    ok("PostgreSQL stopped")

    # A database that cannot be reached at start is a clear exit 1.
    r = subprocess.run([binary, str(procs.free_port()), "--pg", pg.conninfo()], cwd=workdir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=30)
    if r.returncode != 1 or "cannot connect" not in r.stderr:
        fail(f"start with PostgreSQL down: exit {r.returncode}, {r.stderr!r}")
    ok(f"start with PostgreSQL down: exit 1, {r.stderr.strip()[:80]!r}")


def usage_checks(binary, workdir):
    for args in (["--db"], ["--pg"], ["--db", "a.db", "--pg", "host=x"], ["--bogus"], ["x80"],
                 ["--db", ""]):
        r = subprocess.run([binary] + args, cwd=workdir, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        if r.returncode != 2 or "usage: todo" not in r.stderr:
            fail(f"todo {args}: exit {r.returncode}, {r.stderr!r}")
    ok("bad flags: exit 2 with the usage line")


def main(binary):
    binary = os.path.abspath(binary)
    workdir = tempfile.mkdtemp(prefix="todo-smoke-")
    os.chmod(workdir, 0o755)
    try:
        usage_checks(binary, workdir)
        sqlite_part(binary, workdir)
        postgres_part(binary, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: todo_smoke.py path/to/todo")
    main(sys.argv[1])

#!/usr/bin/python3
"""Rate limiting under load (docs/rate-limits.md; issue 53): wrk sends GET /limited as 1,020
client addresses (X-Forwarded-For through a trusted proxy; half the requests from 20 busy
ones, half from 1,000 rare ones) to rate_limit_app, whose limit is 10 requests a minute per
address in a table of 64 keys per loop, while a plain client uses /free beside it. The rare
addresses churn the table; the busy ones stay in it and are held to their limit.

    rate_limit_load.py RATE_LIMIT_APP [SECONDS]

Checks: wrk sees no socket error and no status but 200 and 429, and both; /free answers 200
every time during the load, without the limit's fields; an address seen for the first time
is let through; one over its limit gets 429 (after at most 20 let through, 10 a loop) with
Retry-After, RateLimit and RateLimit-Policy; the server answers afterwards. Its resident memory before and after is printed, not checked
(the table's fixed size is tests/unit/web/test_rate_table.cpp's). Bounded: about SECONDS
(default 5).
"""
import http.client
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py)
from checks import check, finish  # noqa: E402  (tests/support/checks.py)

# wrk's script: each request names one of 1,000 addresses; statuses are counted per thread
# and summed in done().
WRK_SCRIPT = r"""
counts = {}  -- a global: done() reads each thread's with thread:get
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) math.randomseed(os.time() + math.floor(os.clock() * 1000000)) end
function request()
  if math.random() < 0.5 then
    -- 20 busy clients: seen often enough to stay in the table, and over their limit
    wrk.headers["X-Forwarded-For"] = "10.1.0." .. math.random(1, 20)
  else
    -- 1,000 others, each seen too rarely to stay among a loop's 64 keys
    wrk.headers["X-Forwarded-For"] = "10.0." .. math.random(0, 3) .. "." .. math.random(1, 250)
  end
  return wrk.format("GET", "/limited")
end
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    local c = t:get("counts")
    for k, v in pairs(c) do total[k] = (total[k] or 0) + v end
  end
  for k, v in pairs(total) do io.write(string.format("status %d %d\n", k, v)) end
end
"""


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def get(port, path, forwarded=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}


def main():
    app = os.path.abspath(sys.argv[1])
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    srv = procs.start([app, "{port}"], timeout=10)
    try:
        port = srv.port
        before = resident_kib(srv.proc.pid)
        free_statuses = []
        limit_fields_on_free = []
        stop = threading.Event()

        def plain_client():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            while not stop.is_set():
                conn.request("GET", "/free")
                r = conn.getresponse()
                r.read()
                free_statuses.append(r.status)
                if r.getheader("RateLimit") is not None:
                    limit_fields_on_free.append(r.getheader("RateLimit"))
            conn.close()

        plain = threading.Thread(target=plain_client)
        plain.start()
        with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
            script.write(WRK_SCRIPT)
            script.flush()
            wrk = subprocess.run(["wrk", "-t1", "-c50", f"-d{seconds}s", "-s", script.name,
                                  f"http://127.0.0.1:{port}/limited"],
                                 capture_output=True, text=True, timeout=seconds + 60)
        stop.set()
        plain.join(10)
        print(wrk.stdout)
        statuses = {int(code): int(n) for code, n in
                    re.findall(r"^status (\d+) (\d+)$", wrk.stdout, re.M)}
        check("wrk saw no socket error", "Socket errors" not in wrk.stdout, wrk.stdout[-300:])
        check("wrk saw only 200 and 429", set(statuses) <= {200, 429}, statuses)
        check("wrk saw both 200 and 429", statuses.get(200, 0) > 0 and statuses.get(429, 0) > 0,
              statuses)
        check("the route without a limit answered 200 every time during the load",
              free_statuses and all(s == 200 for s in free_statuses),
              f"{len(free_statuses)} requests, statuses {sorted(set(free_statuses))}")
        check("and without the limit's fields", not limit_fields_on_free,
              limit_fields_on_free[:3])

        status, fields = get(port, "/limited", "192.0.2.77")
        check("an address seen for the first time is let through", status == 200, status)
        check("with the limit's fields", "ratelimit" in fields and "ratelimit-policy" in fields,
              sorted(fields))
        # Each of the two loops counts on its own (docs/rate-limits.md), and the kernel spreads
        # the connections over them as it likes: up to 20 may pass, and a request that is not
        # the first 429 may still pass on the other loop. So: ask until the first 429.
        let_through = 0
        for _ in range(40):
            status, fields = get(port, "/limited", "192.0.2.78")
            if status != 200:
                break
            let_through += 1
        check("an address over its limit gets 429", status == 429, status)
        check("after at most 20 let through (10 a loop)", let_through <= 20, let_through)
        check("with Retry-After in whole seconds", fields.get("retry-after", "").isdigit(),
              fields)
        check("and RateLimit and RateLimit-Policy",
              "ratelimit" in fields and "ratelimit-policy" in fields
              and '"load"' in fields.get("ratelimit-policy", ""), fields)
        status, _ = get(port, "/free")
        check("the server answers afterwards", status == 200, status)
        after = resident_kib(srv.proc.pid)
        print(f"resident memory: {before} KiB before, {after} KiB after "
              f"{sum(statuses.values())} requests to the limited route from 1,020 addresses")
    finally:
        srv.stop()
    sys.exit(finish())


if __name__ == "__main__":
    main()

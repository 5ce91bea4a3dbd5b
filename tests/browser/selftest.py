#!/usr/bin/env python3
"""Self-test of tests/browser/cdp.py, independent of tern (Python stdlib only).

Serves, from 127.0.0.1 on an ephemeral port:
  /        an HTML page whose script opens new EventSource('/events') and writes each
           event's data into <div id="sse">
  /events  text/event-stream sending "id: N\\ndata: tick N\\n\\n" every 100 ms
then checks that
  1. the module API sees at least 3 distinct, increasing "tick N" values in #sse, and the
     page's console.log arrived through Runtime.consoleAPICalled;
  2. the module API gives up cleanly (WaitTimeout carrying the last text) when the text
     never matches, within its timeout;
  3. the command line (cdp.py --changes 3) prints 3 distinct ticks and exits 0.

Exit status: 0 pass, 1 fail, 77 chromium not installed.
"""

import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cdp  # noqa: E402

PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>cdp selftest</title>
<link rel="icon" href="data:,"></head>
<body>
<div id="sse">waiting</div>
<script>
  const el = document.getElementById('sse');
  const source = new EventSource('/events');
  source.onmessage = (e) => { el.textContent = e.data; };
  source.onerror = () => console.error('EventSource error, readyState=' + source.readyState);
  console.log('selftest page loaded');
</script>
</body></html>
"""

TICK = re.compile(r"^tick \d+$")
STREAM_LIMIT = 600  # events per connection (60 s): the server never streams forever


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the stream ends when the connection closes
    stop = threading.Event()

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(PAGE)
        elif self.path == "/events":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            try:
                for n in range(1, STREAM_LIMIT + 1):
                    if self.stop.is_set():
                        break
                    self.wfile.write(f"id: {n}\ndata: tick {n}\n\n".encode())
                    self.wfile.flush()
                    self.stop.wait(0.1)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the browser went away
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


def run_cli(url, *extra, timeout=60):
    return subprocess.run([sys.executable, os.path.join(HERE, "cdp.py"), "--url", url,
                           "--element-id", "sse", *extra],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def main():
    if cdp.find_chromium() is None:
        print(cdp.SKIP_MESSAGE, flush=True)
        return cdp.EXIT_SKIP
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    failures = []
    started = time.monotonic()
    try:
        # 1. module API
        t0 = time.monotonic()
        with cdp.Browser() as browser:
            page = browser.new_page()
            page.navigate(url)
            ticks = page.wait_for_changes("sse", TICK, count=3, timeout=10)
            numbers = [int(t.split()[1]) for t in ticks]
            if len(set(ticks)) < 3 or numbers != sorted(numbers):
                failures.append(f"module: expected 3 distinct increasing ticks, got {ticks}")
            browser.pump(0.2)
            if not any(m["text"] == "selftest page loaded" for m in page.console_messages):
                failures.append(f"module: console.log not collected: {page.console_messages}")
            if page.errors():
                failures.append(f"module: page errors: {page.errors()}")
            product = browser.version.get("product")
            print(f"module API: {ticks} ({product}) in {time.monotonic() - t0:.2f} s",
                  flush=True)

            # 2. module API, timeout
            t0 = time.monotonic()
            try:
                text = page.wait_for_text("sse", r"^never$", timeout=1)
                failures.append(f"module timeout: matched {text!r}")
            except cdp.WaitTimeout as e:
                took = time.monotonic() - t0
                if not (e.last_text or "").startswith("tick ") or not 0.9 < took < 3:
                    failures.append(f"module timeout: took {took:.2f} s, {e}")
                print(f"module timeout: {took:.2f} s, last text {e.last_text!r}", flush=True)

        # 3. command line
        t0 = time.monotonic()
        r = run_cli(url, "--expect", TICK.pattern, "--changes", "3", "--timeout", "10")
        lines = r.stdout.splitlines()
        if r.returncode != 0 or len(set(lines)) != 3 or not all(TICK.match(x) for x in lines):
            failures.append(f"cli --changes 3: exit {r.returncode}, stdout {r.stdout!r}, "
                            f"stderr {r.stderr!r}")
        print(f"cli --changes 3: exit {r.returncode}, {lines} in "
              f"{time.monotonic() - t0:.2f} s", flush=True)

    except cdp.ChromiumNotFound as e:
        print(e, flush=True)
        return cdp.EXIT_SKIP
    except (cdp.CDPError, subprocess.SubprocessError, OSError) as e:
        failures.append(f"{type(e).__name__}: {e}")
    finally:
        Handler.stop.set()
        server.shutdown()
        server.server_close()

    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr, flush=True)
    verdict = "FAIL" if failures else "PASS"
    print(f"selftest {verdict} in {time.monotonic() - started:.2f} s", flush=True)
    return cdp.EXIT_FAIL if failures else cdp.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

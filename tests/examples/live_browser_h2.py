#!/usr/bin/python3
"""Headless Chromium loads examples/live over HTTPS, which it gets over HTTP/2 (ALPN h2):
the page's SSE element updates, and 60 requests fired at once from the page (deferred
answers of different delays) all come back over h2 (PerformanceResourceTiming's
nextHopProtocol), as does the page. (An open EventSource has no timing entry to read its
protocol from; Chromium sends it over the origin's one h2 connection.)

With --h3, live runs with --http3 and Chromium is forced onto QUIC for its origin
(--origin-to-force-quic-on): the same page, SSE and 60 fetches, over h3 (docs/http3.md).

    live_browser_h2.py PATH/TO/live [--h3]

Exit 77 (ctest: skipped) when Chromium is not installed.
"""
import base64
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "browser"))
import cdp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)
from certs import self_signed  # noqa: E402  (tests/support/certs.py)

FIRE = """
window.__h2 = null;
Promise.all(Array.from({length: 60}, (_, i) =>
    fetch(`/later?ms=${(i % 10) * 30}&n=${i}`).then(r => r.text())))
  .then(texts => {
    const later = performance.getEntriesByType('resource').filter(e => e.name.includes('/later'));
    window.__h2 = JSON.stringify({
      answered: texts.filter(t => t.startsWith('later ')).length,
      protocols: [...new Set(later.map(e => e.nextHopProtocol))],
      page: performance.getEntriesByType('navigation')[0].nextHopProtocol,
    });
  }, err => { window.__h2 = JSON.stringify({error: String(err)}); });
true
"""


def main():
    app = sys.argv[1]
    h3 = "--h3" in sys.argv[2:]
    protocol = "h3" if h3 else "h2"
    if cdp.find_chromium() is None:
        print("skip: chromium is not installed")
        return 77
    with tempfile.TemporaryDirectory() as work:
        self_signed(work, "127.0.0.1")
        der = subprocess.run(f"openssl x509 -in {work}/cert.pem -pubkey -noout | "
                             "openssl pkey -pubin -outform der", shell=True, check=True,
                             capture_output=True).stdout
        spki = base64.b64encode(hashlib.sha256(der).digest()).decode()
        srv = procs.start([app, "{port}", "--cert", f"{work}/cert.pem", "--key",
                           f"{work}/key.pem"] + (["--http3"] if h3 else []), name="live",
                          timeout=10)
        port = srv.port
        args = [f"--ignore-certificate-errors-spki-list={spki}"]
        if h3:
            args += ["--enable-quic", f"--origin-to-force-quic-on=127.0.0.1:{port}"]
        try:
            with cdp.Browser(extra_args=args) as b:
                page = b.new_page()
                page.navigate(f"https://127.0.0.1:{port}/", wait_for_load=True, timeout=20)
                ticks = page.wait_for_changes("sse", r"^tick \d+$", count=3, timeout=20)
                print(f"ok   the SSE element ticks over https: {ticks}")
                page.evaluate(FIRE)
                deadline = time.monotonic() + 20
                result = None
                while result is None and time.monotonic() < deadline:
                    result = page.evaluate("window.__h2")
                    time.sleep(0.1)
                print(f"page said: {result}")
                got = json.loads(result or "{}")
                ok = (got.get("answered") == 60 and got.get("protocols") == [protocol] and
                      got.get("page") == protocol)
                print(("ok   " if ok else "FAIL ") +
                      f"the page and 60 parallel fetches over {protocol}")
                return 0 if ok else 1
        finally:
            srv.stop(timeout=10, expect=None)


if __name__ == "__main__":
    sys.exit(main())

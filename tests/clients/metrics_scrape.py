#!/usr/bin/env python3
"""app.metrics read by the Prometheus client library's own parser.

Starts tests/support/metrics_app, sends a known set of requests over HTTP/1.1 (and one
over h2c with curl), scrapes /metrics, and parses it with
prometheus_client.parser.text_string_to_metric_families (Debian python3-prometheus-client):
every family has the type it should, the request counts are exact, the histogram is
cumulative and agrees with them. Also checks request ids and X-Forwarded-For over h2c.

    metrics_scrape.py path/to/metrics_app
"""
import http.client
import shutil
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

APP = sys.argv[1]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data


def scrape(port):
    status, headers, body = request(port, "GET", "/metrics")
    assert status == 200, status
    return headers, {f.name: f for f in text_string_to_metric_families(body.decode())}


def sample(families, family, name, labels=None):
    for s in families[family].samples:
        if s.name == name and (labels is None or s.labels == labels):
            return s.value
    return None


def main():
    srv = procs.start([APP, "{port}"], name="the metrics app")
    port = srv.port
    try:
        for _ in range(4):
            check(request(port, "GET", "/ok")[0] == 200, "GET /ok answers 200")
        for _ in range(2):
            check(request(port, "POST", "/made", body=b"x")[0] == 201, "POST /made answers 201")
        check(request(port, "GET", "/boom")[0] == 500, "GET /boom answers 500")
        check(request(port, "DELETE", "/nowhere")[0] == 404, "DELETE /nowhere answers 404")
        check(request(port, "PROPFIND", "/nowhere")[0] == 404, "PROPFIND /nowhere answers 404")

        headers, fams = scrape(port)
        check(headers.get("content-type") == "text/plain; version=0.0.4; charset=utf-8",
              "the exposition's Content-Type is text format 0.0.4")
        types = {name: f.type for name, f in fams.items()}
        for name, kind in [("tern_requests", "counter"),
                           ("tern_request_duration_seconds", "histogram"),
                           ("tern_requests_in_flight", "gauge"),
                           ("tern_connections_open", "gauge"),
                           ("tern_connections_accepted", "counter"),
                           ("tern_connections_refused", "counter"),
                           ("tern_bytes_received", "counter"),
                           ("tern_bytes_sent", "counter"),
                           ("tern_blocking_queue_length", "gauge"),
                           ("tern_build_info", "gauge")]:
            check(types.get(name) == kind, f"{name} parses as a {kind} (got {types.get(name)})")
            check(bool(fams.get(name) and fams[name].documentation), f"{name} has HELP text")
        expected = {("GET", "2xx"): 4, ("POST", "2xx"): 2, ("GET", "5xx"): 1,
                    ("DELETE", "4xx"): 1, ("other", "4xx"): 1}
        got = {(s.labels["method"], s.labels["status"]): s.value
               for s in fams["tern_requests"].samples if s.name == "tern_requests_total"}
        check(got == expected, f"tern_requests_total counts each method and class: {got}")
        count = sample(fams, "tern_request_duration_seconds", "tern_request_duration_seconds_count")
        check(count == sum(expected.values()), f"the histogram's _count is the request total ({count})")
        buckets = [(s.labels["le"], s.value) for s in fams["tern_request_duration_seconds"].samples
                   if s.name == "tern_request_duration_seconds_bucket"]
        check(len(buckets) == 14 and buckets[-1] == ("+Inf", count),
              "14 buckets, the last +Inf holding every request")
        check(all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), "the buckets are cumulative")
        check(sample(fams, "tern_requests_in_flight", "tern_requests_in_flight") == 1,
              "in flight: the scrape alone")
        check(sample(fams, "tern_bytes_sent", "tern_bytes_sent_total") > 0, "bytes sent counted")
        # One per request and the scrape's, plus the probes that waited for the port.
        accepted = sample(fams, "tern_connections_accepted", "tern_connections_accepted_total")
        check(accepted >= 10, f"connections accepted: one per request at least ({accepted})")
        build = fams["tern_build_info"].samples[0]
        check(build.value == 1 and build.labels.get("version", "").count(".") == 2,
              f"tern_build_info carries the version ({build.labels})")

        # Request ids and the client behind a proxy, over HTTP/1.1 and over h2c.
        status, headers, body = request(port, "GET", "/id", headers={"X-Request-Id": "py-1"})
        check(body == b"py-1" and headers.get("x-request-id") == "py-1", "a sent request id is kept")
        status, headers, body = request(port, "GET", "/boom")
        check(status == 500 and len(headers.get("x-request-id", "")) >= 18,
              "a 500 carries a made request id")
        status, headers, body = request(port, "GET", "/ip",
                                        headers={"X-Forwarded-For": "1.1.1.1, 198.51.100.4"})
        check(body == b"198.51.100.4", f"the client behind the trusted proxy ({body!r})")
        if shutil.which("curl"):
            out = subprocess.run(["curl", "-s", "-i", "--http2-prior-knowledge",
                                  "-H", "X-Request-Id: h2-id", "-H", "X-Forwarded-For: 198.51.100.5",
                                  f"http://127.0.0.1:{port}/ip"],
                                 capture_output=True, text=True, timeout=10).stdout
            check(out.startswith("HTTP/2 200"), "h2c answers")
            check("x-request-id: h2-id" in out.lower(), "the request id comes back over HTTP/2")
            check(out.rstrip().endswith("198.51.100.5"), "the forwarded client over HTTP/2")
            _, fams = scrape(port)
            got = {(s.labels["method"], s.labels["status"]): s.value
                   for s in fams["tern_requests"].samples if s.name == "tern_requests_total"}
            # GET 2xx: the four /ok, the first scrape, /id, /ip, and /ip over h2c.
            check(got.get(("GET", "2xx")) == 4 + 1 + 1 + 1 + 1,
                  f"HTTP/2 requests are counted as others are: {got}")
    finally:
        srv.stop(expect=None)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

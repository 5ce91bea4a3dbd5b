#!/usr/bin/env python3
"""testssl.sh (Debian package testssl.sh) against examples/hello --cert --key: no finding at
severity MEDIUM or above about what tern decides (protocols, ciphers, key exchange,
renegotiation, compression, known TLS vulnerabilities). docs/tls.md summarises a run.

The checks run are the ones about what tern decides: protocols (-p), standard cipher
categories (-s), the server's preferences (-P), forward secrecy (-f), server defaults
(-S: session resumption, tickets, OCSP stapling, the certificate chain served), GREASE and
hello size tolerance (-g) and every vulnerability check (-U). Left out of the run: client
simulation (-c, about a hundred handshakes of browser profiles, each a combination the
checks above already cover) and HTTP headers (-h, an application's choice); together they
were most of the test's 221 s. Left out of the result, each for a reason printed with it: findings about the throwaway test
certificate itself (no CRL or OCSP URI in it, no CAA record for 127.0.0.1) and about HTTP
headers an application chooses (HSTS, security headers), not tern.

    testssl_check.py <path to hello>        exits 77 (skipped) when testssl is missing
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tls_clients import issue, make_ca, run  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

NOT_TERNS = {
    "cert_revocation": "the test certificate carries no CRL or OCSP URI",
    "DNS_CAArecord": "127.0.0.1 has no DNS CAA record",
    "security_headers": "an application's choice of HTTP headers",
    "HSTS": "an application's choice of HTTP headers",
}
SERIOUS = {"MEDIUM", "HIGH", "CRITICAL"}


def main(hello):
    testssl = shutil.which("testssl") or shutil.which("testssl.sh")
    if not testssl:
        print("skip: testssl is not installed (Debian package testssl.sh)")
        return 77
    work = pathlib.Path(tempfile.mkdtemp(prefix="tern-testssl-"))
    (work / "public").mkdir()
    make_ca(work, days=365)
    issue(work, "server", days=90)
    srv = procs.start([hello, "{port}", "--cert", str(work / "server.pem"), "--key",
                       str(work / "server.key")], name="hello --cert", cwd=work,
                      stderr=subprocess.DEVNULL,
                      ready=lambda p: bool(run("curl", "-sk", f"https://127.0.0.1:{p}/").stdout))
    port = srv.port
    try:
        report = work / "testssl.json"
        r = subprocess.run([testssl, "--quiet", "--color", "0", "--warnings", "off",
                            "-p", "-s", "-P", "-f", "-S", "-g", "-U",
                            "--add-ca", str(work / "ca.pem"), "--jsonfile", str(report),
                            f"https://127.0.0.1:{port}/"], capture_output=True, text=True, timeout=600)
        if not report.exists():
            print(r.stdout[-2000:], r.stderr[-2000:])
            print("FAIL: testssl wrote no report")
            return 1
        findings = json.loads(report.read_text())
        serious = []
        for f in findings:
            if f["severity"] not in SERIOUS:
                continue
            why = NOT_TERNS.get(f["id"])
            if why:
                print(f"left out {f['severity']} {f['id']}: {f['finding']} ({why})")
            else:
                serious.append(f)
        for f in findings:
            if f["id"] in ("SSLv2", "SSLv3", "TLS1", "TLS1_1", "TLS1_2", "TLS1_3", "ALPN",
                           "cipher_order", "FS", "overall_grade"):
                print(f"info {f['id']}: {f['finding']}")
        for f in serious:
            print(f"FAIL {f['severity']} {f['id']}: {f['finding']}")
        print(f"testssl: {len(findings)} findings, {len(serious)} at MEDIUM or above about tern")
        return 1 if serious else 0
    finally:
        srv.stop(timeout=15, expect=None)
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1])))

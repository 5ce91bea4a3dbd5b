#!/usr/bin/env python3
"""Real TLS clients against examples/hello --cert --key (docs/tls.md).

A throwaway CA and a certificate for localhost/127.0.0.1 are made with the openssl command;
hello serves HTTPS with them. Then:
  - curl: GET/POST/PUT verified against the CA, over TLS 1.3 and capped at TLS 1.2;
  - openssl s_client: -tls1 and -tls1_1 refused (-ssl3 too where this OpenSSL still has it),
    ALPN http/1.1 or h2 chosen, a client offering only spdy/3 refused, SNI with verification;
  - Python's ssl: TLS 1.3 and 1.2 with the default (verifying) context; a keep-alive
    connection opened before a SIGHUP reload goes on, while a new one sees the new
    certificate;
  - hello still serves after every refusal and stops cleanly on SIGTERM.

    tls_clients.py <path to hello>
"""
import http.client
import os
import pathlib
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

failures = 0


def check(what, ok, detail=""):
    global failures
    if ok:
        print(f"ok   {what}")
    else:
        failures += 1
        print(f"FAIL {what}" + (f": {detail}" if detail else ""))


def run(*args, stdin=None, timeout=15):
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout)


def make_ca(d, days=2):
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", str(days), "-subj", "/CN=tern test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")


def issue(d, name, days=2):
    """A certificate for localhost and 127.0.0.1 signed by the CA: d/name.pem, d/name.key."""
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", "/CN=localhost")
    ext = pathlib.Path(d, f"{name}.ext")
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.pem", "-CAkey",
        f"{d}/ca.key", "-CAcreateserial", "-out", f"{d}/{name}.pem", "-days", str(days), "-extfile",
        str(ext))
    return run("openssl", "x509", "-in", f"{d}/{name}.pem", "-noout", "-serial").stdout.strip()


def der_serial(der):
    pem = ssl.DER_cert_to_PEM_cert(der)
    return run("openssl", "x509", "-noout", "-serial", stdin=pem).stdout.strip()


def main(hello):
    work = pathlib.Path(tempfile.mkdtemp(prefix="tern-tls-"))
    (work / "public").mkdir()
    make_ca(work)
    first_serial = issue(work, "first")
    # hello reads these two paths; the reload below replaces their contents.
    (work / "cert.pem").write_bytes((work / "first.pem").read_bytes())
    (work / "key.pem").write_bytes((work / "first.key").read_bytes())
    log = open(work / "hello.log", "w")
    ca = str(work / "ca.pem")
    srv = procs.start([hello, "{port}", "--cert", str(work / "cert.pem"), "--key",
                       str(work / "key.pem")], name="hello --cert", cwd=work, stdout=log,
                      stderr=subprocess.STDOUT,
                      ready=lambda p: bool(run("curl", "-s", "--cacert", ca,
                                               f"https://localhost:{p}/").stdout))
    proc, port = srv.proc, srv.port
    url = f"https://localhost:{port}/"
    try:

        # curl, verifying the chain and the name.
        check("curl GET", run("curl", "-s", "--cacert", ca, url).stdout == "An incoming GET request!")
        check("curl POST is 201",
              run("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--cacert", ca,
                  url).stdout == "201")
        check("curl PUT echoes",
              run("curl", "-s", "-X", "PUT", "--data-binary", "echo me", "--cacert", ca, url).stdout
              == "echo me")
        check("curl --tlsv1.3", run("curl", "-s", "--tlsv1.3", "--cacert", ca, url).returncode == 0)
        check("curl --tls-max 1.2", run("curl", "-s", "--tls-max", "1.2", "--cacert", ca, url).stdout
              == "An incoming GET request!")
        plain = run("curl", "-s", "-w", " %{http_code}", f"http://127.0.0.1:{port}/")
        check("plain HTTP on the HTTPS port gets 400", plain.stdout.endswith(" 400"), plain.stdout)

        # openssl s_client: refusals, ALPN, SNI.
        def s_client(*flags):
            return run("openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-CAfile", ca,
                       "-verify_return_error", *flags, stdin="Q\n")
        for flag in ("-tls1", "-tls1_1"):
            # Security level 0 so that this OpenSSL sends the old hello at all: the refusal
            # (the protocol_version alert) must be the server's.
            r = s_client(flag, "-cipher", "DEFAULT@SECLEVEL=0")
            out = r.stdout + r.stderr
            check(f"s_client {flag} refused by the server",
                  r.returncode != 0 and "alert protocol version" in out, out[-300:])
        help_text = run("openssl", "s_client", "-help").stderr
        if " -ssl3 " in help_text:
            r = s_client("-ssl3")
            check("s_client -ssl3 refused", r.returncode != 0)
        else:
            print("skip s_client -ssl3: this OpenSSL has no SSLv3 at all")
        r = s_client("-alpn", "http/1.1", "-servername", "localhost")
        check("s_client ALPN http/1.1 with SNI and verification",
              "ALPN protocol: http/1.1" in r.stdout and "Verify return code: 0 (ok)" in r.stdout,
              r.stdout[-400:])
        r = s_client("-alpn", "h2,http/1.1")
        check("s_client offering h2 and http/1.1 gets h2 (HTTP/2 is on)",
              "ALPN protocol: h2" in r.stdout, r.stdout[-400:])
        r = s_client("-alpn", "spdy/3")
        check("s_client offering only a protocol tern does not speak is refused",
              "no application protocol" in r.stdout + r.stderr, (r.stdout + r.stderr)[-300:])

        # Python's ssl with its default, verifying context.
        context = ssl.create_default_context(cafile=ca)
        with socket.create_connection(("127.0.0.1", port)) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            check("python ssl negotiates TLS 1.3", tls.version() == "TLSv1.3", tls.version())
        capped = ssl.create_default_context(cafile=ca)
        capped.maximum_version = ssl.TLSVersion.TLSv1_2
        with socket.create_connection(("127.0.0.1", port)) as raw, \
                capped.wrap_socket(raw, server_hostname="localhost") as tls:
            check("python ssl capped at TLS 1.2", tls.version() == "TLSv1.2", tls.version())

        # Resumption by session ticket, TLS 1.3 and 1.2: the second connection resumes.
        def get(ctx, session=None):
            """GET / on a new connection offering `session`: (its session after the answer,
            whether it resumed)."""
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                    ctx.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
                tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                while tls.recv(4096):  # TLS 1.3 tickets come after the handshake
                    pass
                return tls.session, tls.session_reused

        for label, ctx in (("1.3", context), ("1.2", capped)):
            session, _ = get(ctx)
            with socket.create_connection(("127.0.0.1", port)) as raw, \
                    ctx.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
                check(f"python ssl resumes a TLS {label} session by ticket", tls.session_reused)
        # TLS 1.3 clients use a ticket once (RFC 8446 C.4; browsers do): a resumed connection
        # must be given a new ticket, or such a client's next connection is a full handshake.
        first, _ = get(context)
        second, reused = get(context, first)
        check("a resumed TLS 1.3 connection receives a new ticket",
              reused and second.id != first.id and second.has_ticket)
        third, reused = get(context, second)
        check("the new ticket resumes the next connection", reused)

        # No OCSP response given: none is stapled, even when asked for.
        r = s_client("-status")
        check("no OCSP response stapled without --ocsp", "OCSP response: no response sent" in r.stdout,
              r.stdout[-300:])

        # SIGHUP: new files, a new connection sees them; an open one goes on.
        kept = http.client.HTTPSConnection("localhost", port, context=context, timeout=5)
        kept.request("GET", "/")
        check("keep-alive connection before the reload",
              kept.getresponse().read() == b"An incoming GET request!")
        check("it has the first certificate", der_serial(kept.sock.getpeercert(True)) == first_serial)
        second_serial = issue(work, "second")
        (work / "cert.pem").write_bytes((work / "second.pem").read_bytes())
        (work / "key.pem").write_bytes((work / "second.key").read_bytes())
        proc.send_signal(signal.SIGHUP)
        seen = ""
        for _ in range(100):
            with socket.create_connection(("127.0.0.1", port)) as raw, \
                    context.wrap_socket(raw, server_hostname="localhost") as tls:
                seen = der_serial(tls.getpeercert(True))
            if seen == second_serial:
                break
            time.sleep(0.05)
        check("a new connection sees the reloaded certificate", seen == second_serial,
              f"{seen} (want {second_serial})")
        kept.request("GET", "/")
        check("the connection opened before the reload goes on",
              kept.getresponse().read() == b"An incoming GET request!")
        kept.close()
        log.flush()
        check("hello says it reloaded", "TLS certificates reloaded" in (work / "hello.log").read_text())

        proc.send_signal(signal.SIGTERM)
        check("hello stops on SIGTERM", proc.wait(timeout=15) == 0)

        # OCSP stapling: a response made by the CA (openssl ocsp as the responder) for the
        # second certificate, stapled by hello --ocsp to a client that asks for it.
        serial = second_serial.split("=", 1)[1]
        expiry = time.strftime("%y%m%d%H%M%SZ", time.gmtime(time.time() + 2 * 86400))
        (work / "index.txt").write_text(f"V\t{expiry}\t\t{serial}\tunknown\t/CN=localhost\n")
        run("openssl", "ocsp", "-issuer", ca, "-cert", f"{work}/second.pem", "-no_nonce",
            "-reqout", f"{work}/req.der")
        run("openssl", "ocsp", "-index", f"{work}/index.txt", "-rsigner", ca, "-rkey",
            f"{work}/ca.key", "-CA", ca, "-reqin", f"{work}/req.der", "-respout",
            f"{work}/resp.der", "-ndays", "1")
        stapler = procs.start([hello, "{port}", "--cert", str(work / "cert.pem"), "--key",
                               str(work / "key.pem"), "--ocsp", str(work / "resp.der")],
                              name="hello --ocsp", cwd=work, stdout=log, stderr=subprocess.STDOUT,
                              ready=lambda p: bool(run("curl", "-s", "--cacert", ca,
                                                       f"https://localhost:{p}/").stdout))
        ocsp_port = stapler.port
        try:
            r = run("openssl", "s_client", "-connect", f"127.0.0.1:{ocsp_port}", "-CAfile", ca,
                    "-status", stdin="Q\n")
            check("hello --ocsp staples the response (status good)",
                  "OCSP Response Status: successful" in r.stdout and "Cert Status: good" in r.stdout,
                  r.stdout[-600:])
        finally:
            stapler.stop(timeout=15, expect=None)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
        if failures:
            print((work / "hello.log").read_text())
        subprocess.run(["rm", "-rf", str(work)])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1])))

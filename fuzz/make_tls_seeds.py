#!/usr/bin/env python3
"""Writes fuzz/corpus/tls/: ClientHellos as Python's ssl sends them (TLS 1.3 and 1.2,
with and without SNI and ALPN), the seeds of fuzz_tls. Run from the repository root;
the output is committed, so the fuzzer needs no network or Python at run time."""
import pathlib
import ssl

out = pathlib.Path("fuzz/corpus/tls")
out.mkdir(parents=True, exist_ok=True)


def hello(name, server_name, alpn, max_version=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if alpn:
        context.set_alpn_protocols(alpn)
    if max_version:
        context.maximum_version = max_version
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = context.wrap_bio(incoming, outgoing, server_hostname=server_name)
    try:
        client.do_handshake()
    except ssl.SSLWantReadError:
        pass
    (out / name).write_bytes(outgoing.read())


hello("tls13-sni-alpn", "localhost", ["h2", "http/1.1"])
hello("tls13-wildcard-name", "x.wild.test", ["http/1.1"])
hello("tls13-no-sni", None, None)
hello("tls12-sni", "b.test", ["http/1.1"], ssl.TLSVersion.TLSv1_2)
hello("tls13-h2-only", "localhost", ["h2"])

#!/usr/bin/python3
"""examples/jwt_login over real sockets, with the standard library only: logins for both demo
users (a token whose HS256 signature this test verifies with the same secret), the refusals
of POST /login (401 for wrong credentials, 400 naming the field, 413 past max_body_size),
GET /me with a good token and with every kind of bad one (missing, garbage, tampered, "alg"
none or HS512, expired, signed with another secret), odd user names, then a clean stop.
Runs the binary twice: with the default PBKDF2 cost, and with --pbkdf2-iterations 0 and
--ttl 60. Last, a start without JWT_SECRET must exit 2 and say why.

    jwt_login_smoke.py path/to/jwt_login
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

SECRET = "smoke-test-secret-that-is-32-bytes-or-more"


def ok(what):
    print("ok  ", what, flush=True)


def fail(what):
    raise SystemExit(f"FAIL {what}")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def forge(header, claims, secret=SECRET, digest=hashlib.sha256):
    """A compact JWS of `header` and `claims` signed with HMAC under `secret`."""
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    mac = hmac.new(secret.encode(), signing_input.encode(), digest).digest()
    return signing_input + "." + b64url(mac)


HS256 = {"alg": "HS256", "typ": "JWT"}


class server:
    def __init__(self, binary, args):
        env = dict(os.environ, JWT_SECRET=SECRET)
        # The hashes of the demo users are made before it listens: allow for a slow machine.
        self.srv = procs.start([binary, "{port}"] + args, name=f"jwt_login {args}", timeout=60,
                               env=env)
        self.proc, self.port = self.srv.proc, self.srv.port

    def request(self, method, path, body=None, headers=None):
        """(status, headers as a dict with lower-case names, body bytes), one connection each."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode()
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def login(self, body):
        return self.request("POST", "/login", body, {"Content-Type": "application/json"})

    def me(self, authorization=None):
        headers = {} if authorization is None else {"Authorization": authorization}
        return self.request("GET", "/me", headers=headers)


def expect_status(got, want, what):
    status, _, body = got
    if status != want:
        fail(f"{what}: want {want}, got {status} {body[:200]!r}")
    ok(f"{what}: {want}")


def good_login(srv, user, password, ttl):
    status, headers, body = srv.login({"username": user, "password": password})
    if status != 200:
        fail(f"login {user}: {status} {body!r}")
    if not headers.get("content-type", "").startswith("application/json"):
        fail(f"login {user}: content type {headers.get('content-type')}")
    if headers.get("cache-control") != "no-store":
        fail(f"login {user}: the token response may be cached ({headers.get('cache-control')})")
    token = json.loads(body)["token"]
    parts = token.split(".")
    if len(parts) != 3:
        fail(f"login {user}: {len(parts)} parts in {token!r}")
    header = json.loads(b64url_decode(parts[0]))
    claims = json.loads(b64url_decode(parts[1]))
    if header.get("alg") != "HS256" or header.get("typ") != "JWT":
        fail(f"login {user}: header {header}")
    if claims.get("sub") != user:
        fail(f"login {user}: sub {claims.get('sub')!r}")
    iat, exp = claims.get("iat"), claims.get("exp")
    if not (isinstance(iat, int) and isinstance(exp, int) and exp > iat):
        fail(f"login {user}: iat {iat!r}, exp {exp!r}")
    if exp - iat != ttl:
        fail(f"login {user}: a lifetime of {exp - iat} s, not --ttl {ttl}")
    if abs(iat - time.time()) > 60:
        fail(f"login {user}: iat {iat} is not now")
    mac = hmac.new(SECRET.encode(), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(b64url_decode(parts[2]), mac) or parts[2] != b64url(mac):
        fail(f"login {user}: the signature is not HMAC-SHA256 under JWT_SECRET")
    ok(f"login {user}: 200, an HS256 token signed with JWT_SECRET, sub, iat, exp = iat + {ttl}")
    return token, claims


def expect_refused(srv, authorization, what):
    status, headers, body = srv.me(authorization)
    if status != 401:
        fail(f"GET /me with {what}: want 401, got {status} {body!r}")
    if not headers.get("www-authenticate", "").startswith("Bearer"):
        fail(f"GET /me with {what}: no Bearer challenge ({headers.get('www-authenticate')})")
    ok(f"GET /me with {what}: 401 ({body.decode().strip()})")


def checks(srv, ttl):
    alice, alice_claims = good_login(srv, "alice", "wonderland", ttl)
    bob, _ = good_login(srv, "bob", "builder", ttl)

    # POST /login refusals.
    expect_status(srv.login({"username": "alice", "password": "builder"}), 401, "wrong password")
    expect_status(srv.login({"username": "carol", "password": "wonderland"}), 401,
                  "unknown user")
    expect_status(srv.login({"username": "alice", "password": ""}), 401, "empty password")
    expect_status(srv.login('{"username": "alice", "password": '), 400, "invalid JSON")
    expect_status(srv.login(b'{"username": "\xff", "password": "x"}'), 400,
                  "a body that is not UTF-8")
    expect_status(srv.login(["alice", "wonderland"]), 400, "a JSON array instead of an object")
    expect_status(srv.login(""), 400, "an empty body")
    for body, field in (({"username": "alice"}, "password"),
                        ({"password": "wonderland"}, "username"),
                        ({"username": "alice", "password": 5}, "password"),
                        ({"username": ["alice"], "password": "wonderland"}, "username"),
                        ({"username": None, "password": "wonderland"}, "username")):
        status, _, text = srv.login(body)
        if status != 400 or f"'{field}'" not in text.decode():
            fail(f"login {body}: want 400 naming '{field}', got {status} {text!r}")
        ok(f"login {json.dumps(body)}: 400 {text.decode()!r}")
    expect_status(srv.login({"username": "alice", "password": "x" * 5000}), 413,
                  "a body over max_body_size (4 KiB)")
    for user in ("' OR '1'='1", "alice'--", "alice\"; DROP TABLE users; --", "%", "*",
                 "ålice", "アリス", "alice\u0000", "\U0001F600", "ALICE", " alice", "a" * 3000):
        expect_status(srv.login({"username": user, "password": "wonderland"}), 401,
                      f"login as {user[:40]!r}")
    expect_status(srv.login({"username": "alice", "password": "' OR '1'='1"}), 401,
                  "a password that looks like SQL")

    # GET /me with good tokens.
    status, _, body = srv.me("Bearer " + alice)
    if status != 200 or json.loads(body) != alice_claims:
        fail(f"GET /me with alice's token: {status} {body!r}")
    ok("GET /me with alice's token: 200 and her claims")
    status, _, body = srv.me("bearer  " + bob)
    if status != 200 or json.loads(body).get("sub") != "bob":
        fail(f"GET /me with bob's token (scheme in lower case): {status} {body!r}")
    ok("GET /me with bob's token, 'bearer' in lower case: 200 and sub bob")
    now = int(time.time())
    forged_good = forge(HS256, {"sub": "アリス", "iat": now, "exp": now + 600})
    status, _, body = srv.me("Bearer " + forged_good)
    if status != 200 or json.loads(body).get("sub") != "アリス":
        fail(f"GET /me with a test-made token under JWT_SECRET: {status} {body!r}")
    ok("GET /me with a token this test signed under JWT_SECRET (a Unicode sub): 200, so the "
       "refusals below are for what they change")

    # GET /me refusals.
    header_part, claims_part, signature = alice.split(".")
    expect_refused(srv, None, "no Authorization header")
    expect_refused(srv, "Bearer", "'Bearer' and no token")
    expect_refused(srv, "Basic YWxpY2U6d29uZGVybGFuZA==", "Basic credentials")
    expect_refused(srv, alice, "the token without 'Bearer '")
    expect_refused(srv, "Bearer garbage", "Bearer garbage")
    expect_refused(srv, "Bearer a.b", "two parts")
    expect_refused(srv, "Bearer " + alice + ".x", "four parts")
    expect_refused(srv, "Bearer ..", "three empty parts")
    expect_refused(srv, "Bearer " + alice + "=", "a padded signature")
    expect_refused(srv, f"Bearer {header_part}.{claims_part}.{signature[:-1]}",
                   "a signature one character short")
    tampered = dict(alice_claims, sub="bob")
    expect_refused(srv, f"Bearer {header_part}.{b64url(json.dumps(tampered).encode())}.{signature}",
                   "the payload changed to sub bob, signature kept")
    longer = dict(alice_claims, exp=alice_claims["exp"] + 86400)
    expect_refused(srv, f"Bearer {header_part}.{b64url(json.dumps(longer).encode())}.{signature}",
                   "the payload's exp pushed back a day, signature kept")
    none_header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    expect_refused(srv, f"Bearer {none_header}.{claims_part}.", "alg none and no signature")
    expect_refused(srv, f"Bearer {none_header}.{claims_part}.{signature}",
                   "alg none with the original signature")
    expect_refused(srv, "Bearer " + forge({"alg": "HS512", "typ": "JWT"}, alice_claims,
                                          digest=hashlib.sha512), "alg HS512 under JWT_SECRET")
    expect_refused(srv, "Bearer " + forge({"typ": "JWT"}, alice_claims), "no alg")
    expect_refused(srv, "Bearer " + forge({"alg": "HS256", "crit": ["exp"]}, alice_claims),
                   "a crit header")
    expect_refused(srv, "Bearer " + forge(HS256, {"sub": "alice", "iat": now - 7200,
                                                  "exp": now - 3600}), "an expired token")
    expect_refused(srv, "Bearer " + forge(HS256, {"sub": "alice", "iat": now, "exp": now}),
                   "a token whose exp is now")
    expect_refused(srv, "Bearer " + forge(HS256, {"sub": "alice", "iat": now}), "no exp")
    expect_refused(srv, "Bearer " + forge(HS256, {"sub": "alice", "iat": now,
                                                  "exp": str(now + 600)}), "a string exp")
    expect_refused(srv, "Bearer " + forge(HS256, {"iat": now, "exp": now + 600}), "no sub")
    expect_refused(srv, "Bearer " + forge(HS256, [1, 2, 3]), "claims that are an array")
    expect_refused(srv, "Bearer " + forge(HS256, {"sub": "alice", "iat": now, "exp": now + 600},
                                          secret="another secret of the same kind"),
                   "a token signed with another secret")
    expect_refused(srv, "Bearer " + forge(HS256, alice_claims, secret=SECRET[:-1]),
                   "a token signed with JWT_SECRET less one byte")

    # Still serving, on the same process.
    if srv.proc.poll() is not None:
        fail(f"jwt_login exited with {srv.proc.returncode}")
    token, _ = good_login(srv, "alice", "wonderland", ttl)
    expect_status(srv.me("Bearer " + token), 200, "GET /me after all of that")


def stop(srv):
    srv.srv.stop()
    ok("SIGTERM stops it with status 0")


def main(binary):
    for args, ttl in (([], 3600), (["--pbkdf2-iterations", "0", "--ttl", "60"], 60)):
        print(f"---- jwt_login {' '.join(args)}", flush=True)
        srv = server(binary, args)
        try:
            checks(srv, ttl)
            stop(srv)
        finally:
            srv.srv.kill()

    print("---- without JWT_SECRET", flush=True)
    for env in ({k: v for k, v in os.environ.items() if k != "JWT_SECRET"},
                dict(os.environ, JWT_SECRET="")):
        r = subprocess.run([binary, "0"], env=env, capture_output=True, text=True, timeout=30)
        if r.returncode != 2 or "jwt_login: set JWT_SECRET" not in r.stderr:
            fail(f"JWT_SECRET={env.get('JWT_SECRET')!r}: exit {r.returncode}, {r.stderr!r}")
        ok(f"JWT_SECRET {'empty' if 'JWT_SECRET' in env else 'unset'}: exit 2, "
           f"{r.stderr.strip()!r}")


if __name__ == "__main__":
    main(sys.argv[1])

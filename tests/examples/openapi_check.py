#!/usr/bin/env python3
"""examples/todo and examples/rest_api serve their OpenAPI 3.1 document at /openapi.json and
Swagger UI at /docs (issue 36, docs/openapi.md).

    openapi_check.py validate TODO REST_API   each document passes a real validator
                                              (@seriousme/openapi-schema-validator's
                                              validate-api, installed by
                                              scripts/install-deps.sh) and the checks a
                                              schema cannot make; /docs serves Swagger UI
    openapi_check.py browser REST_API         headless Chromium renders rest_api's /docs:
                                              one operation block per documented operation
                                              (exit 77 when Chromium is missing)
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def fail(message):
    print(f"FAIL {message}", flush=True)
    raise SystemExit(1)


def start(argv, name):
    """Starts argv + [port] on a free port of 127.0.0.1; returns (process, base URL) once
    /openapi.json answers."""
    srv = procs.start([argv[0], "{port}"] + argv[1:], name=name, timeout=10,
                      ready=procs.answers("/openapi.json"))
    return srv.proc, srv.base


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()


def resolve(doc, ref):
    """The object a local $ref ("#/components/schemas/X") names, or None."""
    if not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def semantic_checks(name, doc):
    """What a JSON Schema of OpenAPI cannot check: every template variable is a declared,
    required path parameter and nothing else is; operation ids are unique; $refs resolve."""
    ids = set()
    operations = 0
    for path, item in doc["paths"].items():
        variables = re.findall(r"\{([^}]+)\}", path)
        for method, op in item.items():
            if method not in METHODS:
                continue
            operations += 1
            declared = [p["name"] for p in op.get("parameters", []) if p.get("in") == "path"]
            if sorted(declared) != sorted(variables):
                fail(f"{name}: {method.upper()} {path} declares path parameters {declared}, "
                     f"its template has {variables}")
            for p in op.get("parameters", []):
                if p.get("in") == "path" and p.get("required") is not True:
                    fail(f"{name}: {method.upper()} {path}: path parameter {p['name']} not required")
            if "operationId" in op:
                if op["operationId"] in ids:
                    fail(f"{name}: operationId {op['operationId']} twice")
                ids.add(op["operationId"])
    for ref in refs(doc):
        if resolve(doc, ref) is None:
            fail(f"{name}: $ref {ref} names nothing in the document")
    return operations


def validate(todo, rest_api):
    validator = shutil.which("validate-api")
    if validator is None:
        fail("validate-api is not installed (scripts/install-deps.sh installs "
             "@seriousme/openapi-schema-validator from npm)")
    with tempfile.TemporaryDirectory() as tmp:
        # The validator must be able to fail: a document without info.version is refused.
        canary = Path(tmp) / "canary.json"
        canary.write_text(json.dumps({"openapi": "3.1.0", "info": {"title": "t"}, "paths": {}}))
        out = subprocess.run([validator, str(canary)], capture_output=True, text=True, timeout=60)
        if '"valid": true' in out.stdout or '"valid": false' not in out.stdout:
            fail(f"validate-api accepted a document without info.version: {out.stdout!r}")
        print("ok   validate-api refuses a document without info.version", flush=True)
        apps = [("todo", [todo, "--db", str(Path(tmp) / "todo.db")]), ("rest_api", [rest_api])]
        for name, argv in apps:
            proc, base = start(argv, name)
            try:
                status, ctype, body = get(base + "/openapi.json")
                if status != 200 or not ctype.startswith("application/json"):
                    fail(f"{name}: /openapi.json answered {status} {ctype}")
                doc = json.loads(body)
                path = Path(tmp) / f"{name}.json"
                path.write_bytes(body)
                out = subprocess.run([validator, str(path)], capture_output=True, text=True,
                                     timeout=60)
                try:
                    verdict = json.loads(out.stdout)
                except ValueError:
                    fail(f"{name}: validate-api printed no verdict: {out.stdout!r} {out.stderr!r}")
                if verdict.get("valid") is not True:
                    fail(f"{name}: validate-api refuses /openapi.json: "
                         f"{json.dumps(verdict.get('errors'), indent=1)[:3000]}")
                operations = semantic_checks(name, doc)
                print(f"ok   {name}: /openapi.json is valid OpenAPI {doc['openapi']} "
                      f"({len(doc['paths'])} paths, {operations} operations)", flush=True)
                status, ctype, page = get(base + "/docs")
                if status != 200 or not ctype.startswith("text/html") \
                        or b"/docs/swagger-ui-bundle.js" not in page:
                    fail(f"{name}: /docs is not the Swagger UI page: {status} {ctype}")
                status, ctype, bundle = get(base + "/docs/swagger-ui-bundle.js")
                if status != 200 or b"SwaggerUIBundle" not in bundle:
                    fail(f"{name}: /docs/swagger-ui-bundle.js is not Swagger UI's bundle")
                _, _, init = get(base + "/docs/swagger-initializer.js")
                if b'url: "/openapi.json"' not in init:
                    fail(f"{name}: Swagger UI is not pointed at /openapi.json: {init!r}")
                print(f"ok   {name}: /docs serves Swagger UI ({len(bundle)} bytes of bundle)",
                      flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=10)


def browser(rest_api):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "browser"))
    import cdp  # noqa: E402

    proc, base = start([rest_api], "rest_api")
    try:
        doc = json.loads(get(base + "/openapi.json")[2])
        wanted = sum(1 for item in doc["paths"].values() for m in item if m in METHODS)
        with cdp.Browser() as b:
            page = b.new_page()
            page.navigate(base + "/docs")
            deadline = time.monotonic() + 30
            seen = None
            while time.monotonic() < deadline:
                seen = page.evaluate(
                    "JSON.stringify({blocks: document.querySelectorAll('.opblock').length,"
                    " title: (document.querySelector('.info .title') || {}).textContent || '',"
                    " error: (document.querySelector('.errors-wrapper') || {}).textContent || ''})")
                seen = json.loads(seen)
                if seen["blocks"] == wanted:
                    break
                time.sleep(0.2)
            if seen is None or seen["blocks"] != wanted:
                fail(f"Swagger UI shows {seen} operation blocks, the document has {wanted}")
            if seen["error"]:
                fail(f"Swagger UI reports errors: {seen['error']}")
            if not seen["title"].startswith(doc["info"]["title"]):
                fail(f"Swagger UI's title is {seen['title']!r}, wanted {doc['info']['title']!r}")
            print(f"ok   Chromium renders rest_api's /docs: {seen['blocks']} operations, "
                  f"title {seen['title']!r}", flush=True)
    except cdp.ChromiumNotFound as e:
        print(e)
        return 77
    except cdp.CDPError as e:
        fail(str(e))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "validate":
        validate(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "browser":
        return browser(sys.argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

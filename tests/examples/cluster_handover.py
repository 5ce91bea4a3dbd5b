#!/usr/bin/env python3
"""Socket handover under load: two processes of examples/cluster/app serve one listening
socket passed as systemd does (LISTEN_FDS=1, LISTEN_PID, fd 3). wrk loads it; the second
process starts, the first gets SIGTERM (readiness 503, grace, drain) and exits. Every
request must succeed: no connection refused, none lost from the accept queue.

    cluster_handover.py APP
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def start(app, sock, name, log):
    # LISTEN_PID must be the server's own pid: sh sets it to $$ and exec keeps that pid.
    def put_socket_at_fd3():
        os.dup2(sock.fileno(), 3)
        os.set_inheritable(3, True)

    return subprocess.Popen(
        ["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --grace-ms 1000 --name "$1"', app, name],
        stdout=log, stderr=subprocess.STDOUT, preexec_fn=put_socket_at_fd3, pass_fds=(3,),
        close_fds=True)


def wait_for_line(path, text, limit=10):
    deadline = time.time() + limit
    while time.time() < deadline:
        with open(path) as f:
            if text in f.read():
                return
        time.sleep(0.05)
    sys.exit(f"FAIL: '{text}' never appeared in {path}")


def main():
    app = sys.argv[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    work = tempfile.mkdtemp()
    log_a = os.path.join(work, "a.log")
    log_b = os.path.join(work, "b.log")
    a = start(app, sock, "A", open(log_a, "w"))
    wait_for_line(log_a, "serving the socket")
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
    if not body.startswith("A pid"):
        sys.exit(f"FAIL: expected A to answer, got {body!r}")
    b = None
    wrk = subprocess.Popen(["wrk", "-t1", "-c50", "-d6s", f"http://127.0.0.1:{port}/"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.5)
        b = start(app, sock, "B", open(log_b, "w"))
        wait_for_line(log_b, "serving the socket")
        time.sleep(0.3)
        a.send_signal(signal.SIGTERM)
        if a.wait(timeout=30) != 0:
            sys.exit(f"FAIL: A exited with {a.returncode}:\n" + open(log_a).read())
        out, _ = wrk.communicate(timeout=60)
    finally:
        if wrk.poll() is None:
            wrk.kill()
        if a.poll() is None:
            a.kill()
    print(out)
    # With A gone, B answers alone on the same socket.
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
    b.send_signal(signal.SIGTERM)
    b.wait(timeout=30)
    if not body.startswith("B pid"):
        sys.exit(f"FAIL: after the handover B should answer, got {body!r}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    failed = errors + (int(non_2xx.group(1)) if non_2xx else 0)
    print(f"socket handover: {requests} requests, {failed} failed")
    if requests == 0 or failed != 0:
        sys.exit("FAIL: requests were lost in the handover")
    print("ok: the socket changed process under load without a failed request")


if __name__ == "__main__":
    main()

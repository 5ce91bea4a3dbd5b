"""Starts examples/chat for its tests (chat_smoke.py, chat_browser.py): on a free port of
127.0.0.1, waiting until it answers GET /rooms."""
import socket
import subprocess
import time
import urllib.request


def start_chat(binary):
    """Returns (process, "http://127.0.0.1:PORT") once chat answers; raises SystemExit with
    a FAIL line when it does not within 5 s (the process is killed then)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, str(port)], stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/rooms", timeout=1).read()
            return proc, base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise SystemExit("FAIL chat did not start")

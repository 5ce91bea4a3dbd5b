"""Starts examples/chat for its tests (chat_smoke.py, chat_browser.py): on a free port of
127.0.0.1, waiting until it answers GET /rooms."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import procs  # noqa: E402  (tests/support/procs.py: start, wait for the port, stop)


def start_chat(binary):
    """Returns (process, "http://127.0.0.1:PORT") once chat answers; raises SystemExit with
    a FAIL line when it does not within 5 s (the process is killed then)."""
    srv = procs.start([binary, "{port}"], name="chat", timeout=5, ready=procs.answers("/rooms"))
    return srv.proc, srv.base

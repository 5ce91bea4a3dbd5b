#!/usr/bin/env python3
"""Two headless Chromium tabs chat through examples/chat's page: ann and ben join the lobby
(the page's ?room=&name= address joins at once), ben sends with the page's own form, and
ann's page shows ben's message; then ann answers and ben's page shows it.
tests/browser/cdp.py drives the browser over the DevTools protocol.

    chat_browser.py path/to/chat        exit 77 (ctest: skipped) when Chromium is missing
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "browser"))
import cdp  # noqa: E402
from chat_server import start_chat  # noqa: E402  (beside this script)


def say(page, text):
    """Types `text` into the page's message box and submits its form, as a user would."""
    page.evaluate(f"document.getElementById('text').value = {json.dumps(text)}; "
                  "document.getElementById('say').requestSubmit(); true")


def main():
    proc, base = start_chat(sys.argv[1])
    try:
        with cdp.Browser() as browser:
            ann = browser.new_page()
            ann.navigate(f"{base}/?room=lobby&name=ann")
            ann.wait_for_text("state", r"^in lobby as ann$", timeout=20)
            ben = browser.new_page()
            ben.navigate(f"{base}/?room=lobby&name=ben")
            ben.wait_for_text("state", r"^in lobby as ben$", timeout=20)
            ann.wait_for_text("log", r"ben joined \(2 here\)", timeout=20)
            print("ok   two tabs joined the lobby", flush=True)
            say(ben, "hello from ben ✓")
            ann.wait_for_text("last", r"^ben: hello from ben ✓$", timeout=20)
            print("ok   ann's page shows ben's message", flush=True)
            say(ann, "hi ben")
            ben.wait_for_text("last", r"^ann: hi ben$", timeout=20)
            print("ok   ben's page shows ann's answer", flush=True)
    except cdp.ChromiumNotFound as e:
        print(e)
        return 77
    except cdp.CDPError as e:
        print(f"FAIL {e}")
        return 1
    finally:
        proc.kill()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

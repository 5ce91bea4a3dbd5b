#!/usr/bin/env python3
"""A small headless-Chromium driver over the Chrome DevTools protocol (Python stdlib only).

It launches Debian's chromium headless with --remote-debugging-pipe, opens one page target,
navigates it, and polls an element's text with Runtime.evaluate until it matches a regular
expression. That is what tern's browser tests need to prove that a real page updates (for
instance from an EventSource stream), which `chromium --dump-dom --virtual-time-budget`
cannot do: it never returns while the page holds an EventSource open.

Module use:

    import cdp
    with cdp.Browser() as browser:          # raises cdp.ChromiumNotFound when not installed
        page = browser.new_page()
        page.navigate("http://127.0.0.1:8080/")
        text = page.wait_for_text("sse", r"^tick \\d+$", timeout=10)
        texts = page.wait_for_changes("sse", r"^tick \\d+$", count=3, timeout=10)
        print(page.console_messages, page.exceptions, page.log_entries)

Command line:

    cdp.py --url URL --element-id ID --expect REGEX [--timeout SECONDS] [--changes N]

exits 0 printing the matched text(s), 1 on timeout or browser failure (with the last text
seen, console errors and page exceptions), 77 when chromium is not installed.

Transport: with --remote-debugging-pipe the browser reads NUL-terminated JSON messages on
its fd 3 and writes its own on fd 4. Every read and write here is bounded by a deadline, the
browser runs in its own process group, and that group is killed on close, on interpreter
exit, on exceptions and (when the driver owns the main thread's SIGTERM/SIGHUP) on those
signals. If this process is killed outright, the browser sees its pipe close and exits too.
"""

import argparse
import atexit
import fcntl
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

__all__ = [
    "EXIT_OK", "EXIT_FAIL", "EXIT_SKIP", "SKIP_MESSAGE",
    "CDPError", "ChromiumNotFound", "BrowserError", "ProtocolError", "CDPTimeout",
    "NavigationError", "JavaScriptError", "WaitTimeout",
    "find_chromium", "chromium_version", "Browser", "Page", "wait_for_element_text", "main",
]

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_SKIP = 77
SKIP_MESSAGE = "skipped: chromium not installed (install with: apt-get install chromium)"

# Where Debian (and most distributions) put the browser. /usr/bin/chromium is Debian's
# launcher script; the real binary beside it is started directly (see _real_binary).
_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser")
_DEBIAN_REAL_BINARY = "/usr/lib/chromium/chromium"

_MAX_RECORDS = 1000  # cap on console/exception/log records kept per page
_TRACE = os.environ.get("CDP_TRACE") == "1"  # log protocol traffic to stderr
_T0 = time.monotonic()


def _trace(direction, msg):
    if _TRACE:
        text = json.dumps(msg)
        print(f"[cdp {time.monotonic() - _T0:8.3f}] {direction} "
              f"{text[:200] + ('...' if len(text) > 200 else '')}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# Errors


class CDPError(Exception):
    """Base of every error this module raises."""


class ChromiumNotFound(CDPError):
    """No chromium binary: callers should skip (exit 77), not fail."""

    def __init__(self, message=SKIP_MESSAGE):
        super().__init__(message)


class BrowserError(CDPError):
    """The browser could not be started, died, crashed a page, or closed its pipe."""


class ProtocolError(CDPError):
    """The browser answered a command with an error."""

    def __init__(self, method, error):
        self.method = method
        self.code = error.get("code")
        self.error_message = error.get("message", "")
        data = error.get("data")
        detail = f" ({data})" if data else ""
        super().__init__(f"{method}: {self.error_message}{detail} [code {self.code}]")


class CDPTimeout(CDPError):
    """A command or read did not complete before its deadline."""


class NavigationError(CDPError):
    """Page.navigate reported an error (for instance net::ERR_CONNECTION_REFUSED)."""


class JavaScriptError(CDPError):
    """Runtime.evaluate threw in the page."""


class WaitTimeout(CDPTimeout):
    """wait_for_text / wait_for_changes ran out of time.

    Attributes: element_id, pattern, wanted (distinct values), seen (matching values in
    order), last_text (the element's text at the last poll; None if absent), console
    (console messages), exceptions (uncaught page exceptions), log (browser log entries).
    """

    def __init__(self, *, element_id, pattern, timeout, wanted, seen, last_text,
                 console, exceptions, log):
        self.element_id = element_id
        self.pattern = pattern
        self.timeout = timeout
        self.wanted = wanted
        self.seen = list(seen)
        self.last_text = last_text
        self.console = list(console)
        self.exceptions = list(exceptions)
        self.log = list(log)
        super().__init__(self._describe())

    def _describe(self):
        lines = [f"timed out after {self.timeout:g} s waiting for #{self.element_id} "
                 f"to match /{self.pattern}/"]
        if self.wanted > 1:
            lines[0] += f" with {self.wanted} distinct values ({len(self.seen)} seen)"
        if self.last_text is None:
            lines.append(f"  last text: none (no element with id '{self.element_id}')")
        else:
            lines.append(f"  last text: {self.last_text!r}")
        if self.seen:
            lines.append("  matching values seen: " + ", ".join(repr(s) for s in self.seen))
        errors = [m for m in self.console if m["type"] in ("error", "assert", "warning")]
        lines.append("  console errors: " + ("none" if not errors else ""))
        lines += [f"    console.{m['type']}: {m['text']}" for m in errors[-10:]]
        lines.append("  page exceptions: " + ("none" if not self.exceptions else ""))
        lines += [f"    {e}" for e in self.exceptions[-10:]]
        log = [e for e in self.log if e["level"] in ("error", "warning")]
        if log:
            lines.append("  browser log:")
            lines += [f"    [{e['source']}/{e['level']}] {e['text']}"
                      + (f" ({e['url']})" if e.get("url") else "") for e in log[-10:]]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Finding and launching the browser


def find_chromium(binary=None):
    """Path of the chromium to run, or None.

    Order: the `binary` argument, $CHROMIUM, /usr/bin/chromium, then `chromium` and
    `chromium-browser` on PATH.
    """
    for cand in ([binary] if binary else []) + [os.environ.get("CHROMIUM")] + list(_CANDIDATES):
        if not cand:
            continue
        path = cand if os.sep in cand else shutil.which(cand)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        if cand is binary:
            return None  # an explicit choice that does not exist: do not silently substitute
    return None


def _real_binary(path):
    """Debian's /usr/bin/chromium is a shell launcher that adds flags from /etc/chromium.d
    (extensions, GPU rasterization) and runs a /dev/shm check that misparses on some
    machines. Start the real binary next to it instead: same browser, fewer surprises."""
    try:
        with open(path, "rb") as f:
            script = f.read(2) == b"#!"
    except OSError:
        return path
    if script and os.path.realpath(path) == "/usr/bin/chromium" and \
            os.access(_DEBIAN_REAL_BINARY, os.X_OK):
        return _DEBIAN_REAL_BINARY
    return path


def chromium_version(binary=None, timeout=20.0):
    """(major, minor, build, patch) of chromium's --version, or None if it can't be told."""
    path = find_chromium(binary)
    if path is None:
        return None
    try:
        out = subprocess.run([_real_binary(path), "--version"], capture_output=True,
                             text=True, timeout=timeout, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"(\d+)\.(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else None


def _inheritable_fds():
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    out = []
    for fd in fds:
        try:
            if os.get_inheritable(fd):
                out.append(fd)
        except OSError:
            pass  # the listing's own fd, already closed
    return out


def _shm_is_small():
    try:
        st = os.statvfs("/dev/shm")
        return st.f_bavail * st.f_frsize < (1 << 30)
    except OSError:
        return True


_TMP_PREFIX = "tern-cdp-"


def _sweep_stale_dirs():
    """Remove temporary profiles left by drivers that were killed outright (SIGKILL):
    those whose owner.pid names a process that no longer exists."""
    root = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(_TMP_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(root, name)
        try:
            with open(os.path.join(path, "owner.pid")) as f:
                owner = int(f.read().strip())
            if time.time() - os.stat(path).st_mtime < 10:
                continue  # just created; leave it alone
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (OSError, ValueError):
            continue  # not ours to judge (alive, unreadable, or another user's)


_live_browsers = weakref.WeakSet()
_signals_installed = False


def _close_all_browsers():
    for b in list(_live_browsers):
        try:
            b.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


atexit.register(_close_all_browsers)


def _exit_on_signal(signum, _frame):
    # Turn SIGTERM/SIGHUP into SystemExit so that `with`/finally/atexit close the browser.
    raise SystemExit(128 + signum)


def _install_signal_handlers():
    global _signals_installed
    if _signals_installed or threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _exit_on_signal)
    _signals_installed = True


# --------------------------------------------------------------------------------------
# The browser


class Browser:
    """One headless chromium process driven over --remote-debugging-pipe.

    Browser(binary=None, *, launch_timeout=30.0, command_timeout=10.0, extra_args=(),
            window_size=(1280, 800), handle_signals=True)

    start() launches it (the constructor does not; `with Browser() as b:` does both);
    new_page() opens a tab; send() issues a browser-level command; close() ends it all.
    """

    def __init__(self, binary=None, *, launch_timeout=30.0, command_timeout=10.0,
                 extra_args=(), window_size=(1280, 800), handle_signals=True):
        self.binary = binary
        self.launch_timeout = launch_timeout
        self.command_timeout = command_timeout
        self.extra_args = list(extra_args)
        self.window_size = window_size
        self.handle_signals = handle_signals
        self.version = None        # Browser.getVersion result once started
        self.args = None           # the command line used
        self._pid = None
        self._returncode = None
        self._tmpdir = None
        self._stderr = None
        self._to_browser = None    # we write here; the browser reads it as fd 3
        self._from_browser = None  # we read here; the browser writes it as fd 4
        self._buf = bytearray()
        self._next_id = 0
        self._sessions = {}        # sessionId -> Page
        self._closed = False
        self._dead = None          # reason string once the browser is gone

    # -- lifecycle -------------------------------------------------------------------

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def pid(self):
        return self._pid

    @property
    def alive(self):
        return self._pid is not None and self.poll() is None and not self._dead

    def poll(self):
        """The browser's exit status (as subprocess reports it) once it has exited, else None."""
        if self._pid is None or self._returncode is not None:
            return self._returncode
        try:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
        except ChildProcessError:
            self._returncode = -1  # reaped elsewhere
            return self._returncode
        if pid:
            self._returncode = os.waitstatus_to_exitcode(status)
        return self._returncode

    def _wait(self, timeout):
        deadline = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return self._returncode

    def command_line(self, binary, profile_dir):
        version = chromium_version(binary)
        # --headless=new exists since Chromium 109 (and is the only headless mode since 132).
        headless = "--headless" if version is not None and version[0] < 109 else "--headless=new"
        w, h = self.window_size
        args = [
            binary, headless,
            "--remote-debugging-pipe",
            f"--user-data-dir={profile_dir}",
            "--no-first-run", "--no-default-browser-check", "--no-service-autorun",
            "--disable-gpu", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-default-apps", "--disable-sync",
            "--disable-breakpad", "--disable-crash-reporter",
            "--disable-client-side-phishing-detection", "--disable-domain-reliability",
            "--disable-hang-monitor", "--disable-popup-blocking", "--disable-prompt-on-repost",
            # A headless tab must run its timers and network callbacks at full speed.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            "--disable-features=Translate,MediaRouter,OptimizationHints,"
            "AutofillServerCommunication,CertificateTransparencyComponentUpdater,"
            "DialMediaRouteProvider,InterestFeedContentSuggestions",
            "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
            "--mute-audio", "--hide-scrollbars", "--noerrdialogs",
            # Tests talk to loopback servers: never let an environment proxy get involved.
            "--no-proxy-server",
            f"--window-size={w},{h}",
        ]
        if os.geteuid() == 0 or os.environ.get("CDP_NO_SANDBOX") == "1":
            args.append("--no-sandbox")  # chromium refuses to start its sandbox as root
        if _shm_is_small():
            args.append("--disable-dev-shm-usage")
        args += self.extra_args
        args.append("about:blank")
        return args

    def start(self):
        if self._pid is not None:
            return self
        path = find_chromium(self.binary)
        if path is None:
            raise ChromiumNotFound()
        if self.handle_signals:
            _install_signal_handlers()
        _sweep_stale_dirs()
        self._tmpdir = tempfile.mkdtemp(prefix=_TMP_PREFIX)
        with open(os.path.join(self._tmpdir, "owner.pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
        profile = os.path.join(self._tmpdir, "profile")
        os.mkdir(profile)
        self.args = self.command_line(_real_binary(path), profile)
        self._stderr = open(os.path.join(self._tmpdir, "chromium.log"), "w+b")

        # fd 3 = what the browser reads, fd 4 = what it writes. posix_spawn's file actions
        # put the pipe ends there in the child (no preexec_fn: callers may run threads,
        # e.g. a test HTTP server). Sources are first copied to fds >= 10 so that no dup2
        # into 2, 3 or 4 can clobber another source.
        b_read, we_write = os.pipe()
        we_read, b_write = os.pipe()
        src = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
               for fd in (b_read, b_write, self._stderr.fileno())]
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, src[2], 2),
            (os.POSIX_SPAWN_DUP2, src[0], 3),
            (os.POSIX_SPAWN_DUP2, src[1], 4),
        ]
        # Like subprocess's close_fds: fds this process inherited as inheritable (a test
        # harness's output pipe, say) must not leak into a browser that could outlive us.
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_fds() if fd > 4]
        try:
            # setsid: the browser leads a new session and process group, killed as a whole.
            self._pid = os.posix_spawn(self.args[0], self.args, os.environ,
                                       file_actions=actions, setsid=True)
        except OSError as e:
            os.close(we_write)
            os.close(we_read)
            self._cleanup_files()
            raise BrowserError(f"could not start {self.args[0]}: {e}") from e
        finally:
            for fd in src + [b_read, b_write]:
                os.close(fd)
        self._to_browser, self._from_browser = we_write, we_read
        os.set_blocking(we_write, False)
        os.set_blocking(we_read, False)
        _live_browsers.add(self)
        try:
            self.version = self.send("Browser.getVersion", timeout=self.launch_timeout)
        except BaseException:
            self.close()
            raise
        return self

    def close(self):
        """Close the browser: ask it politely, then kill its process group; remove the
        temporary profile. Safe to call more than once and from atexit."""
        if self._closed:
            return
        self._closed = True
        _live_browsers.discard(self)
        if self._pid is not None:
            if self.alive:
                try:
                    self.send("Browser.close", timeout=2.0)
                except CDPError:
                    pass
                self._wait(3.0)
            # The browser leads its own group (start_new_session); renderers and zygotes
            # are in it. Kill whatever is left of it, even after the leader has exited.
            try:
                os.killpg(self._pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._wait(5.0)
        for fd in (self._to_browser, self._from_browser):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._to_browser = self._from_browser = None
        self._cleanup_files()

    def _cleanup_files(self):
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._tmpdir is not None:
            # Children killed a moment ago may still be flushing: retry briefly.
            for _ in range(10):
                shutil.rmtree(self._tmpdir, ignore_errors=True)
                if not os.path.exists(self._tmpdir):
                    break
                time.sleep(0.05)
            self._tmpdir = None

    def stderr_tail(self, lines=15):
        """Last lines of chromium's stderr, without its harmless D-Bus complaints."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()[-65536:].decode("utf-8", "replace")
            self._stderr.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return ""
        keep = [ln for ln in text.splitlines()
                if ln.strip() and "dbus" not in ln and "D-Bus" not in ln]
        return "\n".join(keep[-lines:])

    # -- transport -------------------------------------------------------------------

    def _fail(self, reason):
        if not self._dead:
            code = self.poll()
            if code is not None:
                reason += f" (exit status {code})"
            tail = self.stderr_tail()
            if tail:
                reason += "\n  chromium stderr:\n    " + tail.replace("\n", "\n    ")
            self._dead = reason
        raise BrowserError(self._dead)

    def _write(self, data, deadline):
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPTimeout("timed out writing to the browser's DevTools pipe")
            _, writable, _ = select.select([], [self._to_browser], [], left)
            if not writable:
                continue
            try:
                n = os.write(self._to_browser, view)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError) as e:
                self._fail(f"browser closed its DevTools pipe ({e})")
            view = view[n:]

    def _read_message(self, deadline):
        """Next message from the browser as a dict, or None when the deadline passes."""
        while True:
            nul = self._buf.find(b"\0")
            if nul >= 0:
                raw = bytes(self._buf[:nul])
                del self._buf[:nul + 1]
                try:
                    msg = json.loads(raw)
                    _trace("<-", msg)
                    return msg
                except ValueError:
                    continue  # not expected from chromium; skip rather than die
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self._from_browser], [], [], min(left, 0.5))
            if not readable:
                if self.poll() is not None:
                    self._fail("browser exited")
                continue
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except BlockingIOError:
                continue
            except OSError as e:
                self._fail(f"reading the DevTools pipe failed ({e})")
            if not chunk:
                self._fail("browser closed its DevTools pipe")
            self._buf += chunk

    def _dispatch(self, msg):
        session = self._sessions.get(msg.get("sessionId"))
        method = msg.get("method")
        if session is not None:
            session._on_event(method, msg.get("params", {}))
        elif method == "Target.detachedFromTarget":
            page = self._sessions.get(msg.get("params", {}).get("sessionId"))
            if page is not None:
                page._on_event(method, msg["params"])

    def pump(self, seconds):
        """Process incoming events (console messages, exceptions...) for `seconds`."""
        self._pump_until(time.monotonic() + max(0.0, seconds))

    def _pump_until(self, deadline):
        if self._dead:
            raise BrowserError(self._dead)
        while True:
            msg = self._read_message(deadline)
            if msg is None:
                return
            if "method" in msg:
                self._dispatch(msg)
            # A reply to a command that timed out earlier: nobody waits for it any more.

    def send(self, method, params=None, *, session_id=None, timeout=None):
        """Send one command and return its result (a dict); events arriving meanwhile are
        dispatched. Raises ProtocolError, CDPTimeout or BrowserError."""
        if self._pid is None or self._closed and method != "Browser.close":
            raise BrowserError("browser is not running")
        if self._dead:
            raise BrowserError(self._dead)
        timeout = self.command_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        self._next_id += 1
        msg_id = self._next_id
        msg = {"id": msg_id, "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        _trace("->", msg)
        self._write(json.dumps(msg).encode() + b"\0", deadline)
        while True:
            reply = self._read_message(deadline)
            if reply is None:
                raise CDPTimeout(f"{method}: no reply within {timeout:g} s")
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise ProtocolError(method, reply["error"])
                return reply.get("result", {})
            if "method" in reply:
                self._dispatch(reply)

    # -- pages -----------------------------------------------------------------------

    def new_page(self, url="about:blank"):
        """Open a tab, attach to it (flattened session) and enable Runtime, Log and Page
        events on it. Returns a Page."""
        target = self.send("Target.createTarget", {"url": url})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        self._sessions[session] = page
        for domain in ("Runtime.enable", "Log.enable", "Page.enable", "Inspector.enable"):
            page.send(domain)
        return page


class Page:
    """One tab, attached through a flattened DevTools session.

    console_messages: list of {"type", "text"} from Runtime.consoleAPICalled
    exceptions:       list of str from Runtime.exceptionThrown
    log_entries:      list of {"source", "level", "text", "url"} from Log.entryAdded
                      (network failures and the like land here)
    """

    def __init__(self, browser, target_id, session_id):
        self.browser = browser
        self.target_id = target_id
        self.session_id = session_id
        self.console_messages = []
        self.exceptions = []
        self.log_entries = []
        self.crashed = None
        self._loaded = False

    def send(self, method, params=None, timeout=None):
        if self.crashed:
            raise BrowserError(self.crashed)
        return self.browser.send(method, params, session_id=self.session_id, timeout=timeout)

    def _on_event(self, method, params):
        if method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_object_text(a) for a in params.get("args", []))
            _append(self.console_messages, {"type": params.get("type", "log"), "text": text})
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            text = (d.get("exception") or {}).get("description") or d.get("text", "exception")
            where = d.get("url") or ""
            if where:
                where = f" at {where}:{d.get('lineNumber', 0) + 1}:{d.get('columnNumber', 0) + 1}"
            _append(self.exceptions, text.splitlines()[0] + where if text else where)
        elif method == "Log.entryAdded":
            e = params.get("entry", {})
            _append(self.log_entries, {"source": e.get("source", ""), "level": e.get("level", ""),
                                       "text": e.get("text", ""), "url": e.get("url", "")})
        elif method == "Page.loadEventFired":
            self._loaded = True
        elif method == "Inspector.targetCrashed":
            self.crashed = "the page crashed (Inspector.targetCrashed)"
        elif method == "Target.detachedFromTarget":
            self.crashed = "the page was detached from the driver (Target.detachedFromTarget)"

    def errors(self):
        """Console errors, page exceptions and browser log errors, as readable lines."""
        out = [f"console.{m['type']}: {m['text']}" for m in self.console_messages
               if m["type"] in ("error", "assert")]
        out += [f"exception: {e}" for e in self.exceptions]
        out += [f"log [{e['source']}]: {e['text']}" for e in self.log_entries
                if e["level"] == "error"]
        return out

    def navigate(self, url, timeout=None, wait_for_load=False):
        """Page.navigate to url. Returns once the navigation commits (or, with
        wait_for_load, once the load event fires). Raises NavigationError on failure."""
        timeout = self.browser.command_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        self._loaded = False
        result = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if result.get("errorText"):
            raise NavigationError(f"navigating to {url} failed: {result['errorText']}")
        if wait_for_load:
            while not self._loaded:
                if time.monotonic() >= deadline:
                    raise CDPTimeout(f"{url}: no load event within {timeout:g} s")
                self.browser._pump_until(min(deadline, time.monotonic() + 0.1))
        return result.get("frameId")

    def evaluate(self, expression, timeout=None):
        """Evaluate a JavaScript expression in the page; return its value (JSON-able
        values come back as Python values, undefined as None). Raises JavaScriptError."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                      timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            text = (d.get("exception") or {}).get("description") or d.get("text", "exception")
            raise JavaScriptError(text)
        return r.get("result", {}).get("value")

    def element_text(self, element_id, timeout=None):
        """textContent of the element with this id, or None when there is none."""
        ident = json.dumps(element_id)
        return self.evaluate(f"document.getElementById({ident}) && "
                             f"document.getElementById({ident}).textContent", timeout=timeout)

    def wait_for_text(self, element_id, regex, timeout=10.0, interval=0.1):
        """Poll the element's text every `interval` s until re.search(regex) matches it;
        return the text. Raises WaitTimeout (with the last text, console errors and page
        exceptions) after `timeout` s."""
        return self.wait_for_changes(element_id, regex, 1, timeout, interval)[0]

    def wait_for_changes(self, element_id, regex, count, timeout=10.0, interval=0.1,
                         on_change=None):
        """Poll until the element's text has taken `count` distinct values that each match
        regex (re.search); return them in the order seen. on_change(text) is called for
        each new one. Values that don't match (e.g. "connecting...") are ignored."""
        pattern = re.compile(regex) if isinstance(regex, str) else regex
        deadline = time.monotonic() + timeout
        seen, last = [], None
        per_call = self.browser.command_timeout
        while True:
            poll_start = time.monotonic()
            if poll_start >= deadline:
                break
            try:
                text = self.element_text(element_id, timeout=min(per_call, deadline - poll_start))
                last = None if text is None else str(text)
            except (ProtocolError, JavaScriptError, CDPTimeout):
                pass  # e.g. no execution context mid-navigation: try again next poll
            if last is not None and last not in seen and pattern.search(last):
                seen.append(last)
                if on_change is not None:
                    on_change(last)
                if len(seen) >= count:
                    return seen
            self.browser._pump_until(min(deadline, poll_start + interval))
        raise WaitTimeout(element_id=element_id, pattern=pattern.pattern, timeout=timeout,
                          wanted=count, seen=seen, last_text=last,
                          console=self.console_messages, exceptions=self.exceptions,
                          log=self.log_entries)

    def close(self, timeout=5.0):
        self.browser._sessions.pop(self.session_id, None)
        try:
            self.browser.send("Target.closeTarget", {"targetId": self.target_id},
                              timeout=timeout)
        except CDPError:
            pass


def _append(records, item):
    records.append(item)
    if len(records) > _MAX_RECORDS:
        del records[: len(records) - _MAX_RECORDS]


def _remote_object_text(obj):
    if "value" in obj:
        v = obj["value"]
        return v if isinstance(v, str) else json.dumps(v)
    if "unserializableValue" in obj:
        return obj["unserializableValue"]
    return obj.get("description") or obj.get("type", "?")


def wait_for_element_text(url, element_id, regex, *, timeout=10.0, changes=1,
                          binary=None, on_change=None, launch_timeout=30.0, extra_args=()):
    """One-shot helper: start a browser, open url, wait for `changes` distinct matching
    texts of the element, close. Returns the list of texts. Raises ChromiumNotFound,
    WaitTimeout, NavigationError, BrowserError."""
    with Browser(binary, launch_timeout=launch_timeout, extra_args=extra_args) as browser:
        page = browser.new_page()
        page.navigate(url, timeout=max(timeout, 5.0))
        return page.wait_for_changes(element_id, regex, changes, timeout, on_change=on_change)


# --------------------------------------------------------------------------------------
# Command line


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="cdp.py",
        description="Open a URL in headless chromium and wait until an element's text "
                    "matches a regular expression (polled over the DevTools protocol).",
        epilog="Exit status: 0 matched (text printed), 1 timeout or browser failure, "
               "77 chromium not installed, 2 usage error.")
    parser.add_argument("--url", required=True)
    parser.add_argument("--element-id", required=True, help="id of the element to watch")
    parser.add_argument("--expect", required=True, metavar="REGEX",
                        help="Python regular expression searched for in the element's text")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="how long to wait for the text after navigating (default 10)")
    parser.add_argument("--changes", type=int, default=1, metavar="N",
                        help="wait for N distinct matching values, printing each (default 1)")
    parser.add_argument("--launch-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="how long chromium may take to start (default 30)")
    parser.add_argument("--chromium", metavar="PATH",
                        help="browser binary (default: $CHROMIUM, else /usr/bin/chromium)")
    parser.add_argument("--browser-arg", action="append", default=[], metavar="FLAG",
                        help="one more chromium flag (repeatable), e.g. "
                             "--browser-arg=--ignore-certificate-errors-spki-list=HASH")
    args = parser.parse_args(argv)
    try:
        pattern = re.compile(args.expect)
    except re.error as e:
        parser.error(f"--expect: bad regular expression: {e}")
    if args.changes < 1:
        parser.error("--changes must be at least 1")
    if args.timeout <= 0 or args.launch_timeout <= 0:
        parser.error("timeouts must be positive")

    def show(text):
        print(text, flush=True)

    try:
        wait_for_element_text(args.url, args.element_id, pattern, timeout=args.timeout,
                              changes=args.changes, binary=args.chromium, on_change=show,
                              launch_timeout=args.launch_timeout, extra_args=args.browser_arg)
    except ChromiumNotFound as e:
        print(e, flush=True)
        return EXIT_SKIP
    except CDPError as e:
        print(f"cdp.py: {args.url}: {e}", file=sys.stderr, flush=True)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("cdp.py: interrupted", file=sys.stderr, flush=True)
        return 130
    return EXIT_OK


if __name__ == "__main__":
    _install_signal_handlers()
    sys.exit(main())

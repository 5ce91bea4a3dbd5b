#!/usr/bin/python3
"""Hostile HTTP/2 clients over real sockets, frame by frame (Debian python3-h2's hpack and
hyperframe), against tests/support/h2_app.cpp: streams the server resets as malformed count
against the rapid-reset budget; a HEADERS frame on a stream id below one the client already
opened ends the connection (while trailers for a stream the server has reset are still
taken); an HPACK bomb is cut short and its repetition ends the connection (the CPU it costs
is bench/h2_hpack_bomb.py's to measure: tests do not assert on timings). And a stop's grace
period begins with HTTP/2's two-step GOAWAY (RFC 9113 6.8), and a body that cannot be
spooled is answered 500 "request body could not be stored", and uploads that hold the spool
get 503s past max_spooled_bytes and h2_max_spooled_bytes, in a tmpfs that never fills. After
each abuse a fresh client must be served.

    h2_hostile.py PATH/TO/tern_h2_app

The client helpers are h2_wire.py's. Prints a line per check and ends with "N passed, M
failed"; exits 1 when any failed.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, GoAwayFrame, HeadersFrame,
                              PingFrame, RstStreamFrame)

from h2_wire import (ENHANCE_YOUR_CALM, client, goaway_of, raw, request_fields, serving,
                     start)
from checks import check, finish  # tests/support/checks.py (h2_wire put it on the path)

PROTOCOL_ERROR = 0x1


def until(c, done, timeout=3.0):
    """Frames until `done(the frames read here)` holds, the server closes, or `timeout`
    passes."""
    got = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        more = c.frames(min(0.05, max(0.01, deadline - time.time())))
        got += more
        if (more and more[-1] is None) or done(got):
            break
    return got


def resets_of(frames):
    return [f for f in frames if isinstance(f, RstStreamFrame)]


# ---- 1. every reset the server sends counts against the rapid-reset budget ----------------

def malformed_resets(port):
    # A body longer than its content-length: nghttp2 resets the stream (PROTOCOL_ERROR).
    # Five streams at a time, under the app's 10 concurrent streams, so that no stream is
    # refused for concurrency: only the malformed bodies make the resets.
    c = raw(port)
    sid, got, start_t = 1, [], time.time()
    while time.time() - start_t < 5 and goaway_of(got) is None and (not got or got[-1]):
        batch = []
        for _ in range(5):
            batch += [c.headers(sid, request_fields("/echo", "POST", [("content-length", "1")]),
                                end_stream=False),
                      DataFrame(sid, data=b"longer than one", flags={"END_STREAM"})]
            sid += 2
        if not c.send(*batch):
            break
        got += until(c, lambda fs: len(resets_of(fs)) >= 5 or goaway_of(fs) is not None)
    streams = (sid - 1) // 2
    check("streams reset as malformed (a body longer than its content-length) count as "
          "resets: GOAWAY ENHANCE_YOUR_CALM",
          goaway_of(got) == ENHANCE_YOUR_CALM, (streams, goaway_of(got), got[-3:]))
    c.close()
    check("the server serves after the malformed resets", serving(port))

    # tern's own RST_STREAM NO_ERROR after an early answer (RFC 9113 8.1) is not the
    # client's doing: 60 streams answered 413 before their bodies end no connection.
    c = raw(port)
    sid, got = 1, []
    for _ in range(12):
        c.send(*[c.headers(sid + 2 * i, request_fields("/echo", "POST",
                                                       [("content-length", "100000")]),
                           end_stream=False) for i in range(5)])
        got += until(c, lambda fs: len(resets_of(fs)) >= 5 or goaway_of(fs) is not None)
        sid += 10
    c.send(c.headers(sid, request_fields("/")))
    got += until(c, lambda fs: any(isinstance(f, DataFrame) and f.stream_id == sid for f in fs))
    answered = [f for f in got if isinstance(f, DataFrame) and f.stream_id == sid]
    check("60 early answers' RST_STREAM NO_ERROR do not count as resets",
          goaway_of(got) is None and {f.error_code for f in resets_of(got)} == {0} and
          len(resets_of(got)) == 60 and answered and answered[0].data == b"hello h2",
          (goaway_of(got), len(resets_of(got)), got[-3:]))
    c.close()


# ---- 2. a new stream's id must exceed every id the client opened (RFC 9113 5.1.1) --------

def stream_order(port):
    c = raw(port)
    c.send(c.headers(5, request_fields("/")))
    got = until(c, lambda fs: any(isinstance(f, DataFrame) and f.stream_id == 5 for f in fs))
    c.send(c.headers(3, request_fields("/")))
    got = until(c, lambda fs: goaway_of(fs) is not None)
    goaway = [f for f in got if isinstance(f, GoAwayFrame)]
    check("HEADERS opening stream 3 after stream 5: GOAWAY PROTOCOL_ERROR naming stream 5",
          goaway and goaway[0].error_code == PROTOCOL_ERROR and goaway[0].last_stream_id == 5 and
          not any(isinstance(f, HeadersFrame) and f.stream_id == 3 for f in got), got)
    c.close()
    check("the server serves after a stream id out of order", serving(port))

    def trailers_after_reset(name, opening):
        # The client may have sent its trailers before it saw the server's reset (RFC 9113
        # 5.1, "closed"): they are ignored, and the connection goes on.
        c = raw(port)
        c.send(*opening(c))
        got = until(c, lambda fs: resets_of(fs))
        c.send(c.headers(1, [("x-trailer", "t")], end_stream=True))
        c.send(c.headers(3, request_fields("/")))
        got += until(c, lambda fs: any(isinstance(f, DataFrame) and f.stream_id == 3
                                       for f in fs) or goaway_of(fs) is not None)
        answered = [f for f in got if isinstance(f, DataFrame) and f.stream_id == 3]
        check(f"trailers for a stream {name}: ignored, the connection goes on",
              resets_of(got) and goaway_of(got) is None and answered and
              answered[0].data == b"hello h2", got)
        c.close()

    trailers_after_reset(
        "answered 413 early and reset NO_ERROR",
        lambda c: [c.headers(1, request_fields("/echo", "POST", [("content-length", "100000")]),
                             end_stream=False)])
    trailers_after_reset(
        "reset as malformed",
        lambda c: [c.headers(1, request_fields("/echo", "POST", [("content-length", "1")]),
                             end_stream=False), DataFrame(1, data=b"longer than one")])
    check("the server serves after trailers for reset streams", serving(port))


# ---- 3. an HPACK bomb ---------------------------------------------------------------------

def bomb_frames(c, sid):
    """One header block of 128 KiB (HEADERS + 7 CONTINUATION, nghttp2's limit is 8): a 4,000
    byte field entered into the HPACK table once, then referenced by its one-byte index
    (62, the newest entry) about 131,000 times: half a gigabyte of decoded fields."""
    size, frame = 128 * 1024, 16384
    head = c.enc.encode(request_fields() + [("x-bomb", "b" * 4000)], huffman=False)
    block = head + b"\xbe" * (size - len(head))
    frames = [HeadersFrame(sid, data=block[:frame], flags={"END_STREAM"})]
    for at in range(frame, size, frame):
        last = at + frame >= size
        frames.append(ContinuationFrame(sid, data=block[at:at + frame],
                                        flags={"END_HEADERS"} if last else set()))
    return frames


def hpack_bomb(port):
    c = raw(port)
    dec = hpack.Decoder()  # the server's responses, decoded in order (its table changes)
    answers = []
    for i in range(3):
        sid = 1 + 2 * i
        c.send(*bomb_frames(c, sid))
        got = until(c, lambda fs: any(f is None or (f.stream_id == sid and isinstance(
            f, (RstStreamFrame, HeadersFrame))) or isinstance(f, GoAwayFrame) for f in fs))
        answers.append(got)

    def refused(got, sid):
        statuses = [dict(dec.decode(f.data)).get(":status") for f in got
                    if isinstance(f, HeadersFrame) and f.stream_id == sid]
        return any(isinstance(f, RstStreamFrame) and f.stream_id == sid for f in got) or \
            statuses == ["431"]
    check("an HPACK bomb block (4,000-byte field referenced 131,000 times) is refused",
          refused(answers[0], 1) and goaway_of(answers[0]) is None, answers[0])
    check("a second one too, on the same connection",
          refused(answers[1], 3) and goaway_of(answers[1]) is None, answers[1])
    rest = answers[2] + c.frames(2)
    check("the third one ends the connection: GOAWAY ENHANCE_YOUR_CALM and the close",
          goaway_of(rest) == ENHANCE_YOUR_CALM and rest[-1] is None, rest[-3:])
    c.close()
    check("the server serves after HPACK bombs", serving(port))


# ---- 4. the stop's grace period begins with GOAWAY (RFC 9113 6.8) -------------------------

def grace_period():
    proc, port = start("--grace", "1500")
    c = raw(port)
    c.send(c.headers(1, request_fields("/later?ms=1200")))
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    t0 = time.time()
    # The shutdown notice: GOAWAY naming no last stream (2^31-1), and a PING.
    got = until(c, lambda fs: any(isinstance(f, PingFrame) for f in fs))
    notice = [f for f in got if isinstance(f, GoAwayFrame)]
    pings = [f for f in got if isinstance(f, PingFrame) and "ACK" not in f.flags]
    check("the grace period begins with GOAWAY NO_ERROR naming stream 2^31-1, and a PING",
          len(notice) == 1 and notice[0].last_stream_id == 0x7FFFFFFF and
          notice[0].error_code == 0 and pings and time.time() - t0 < 1.0, got)
    # A stream opened before the client saw the notice is still taken.
    c.send(c.headers(3, request_fields("/")))
    if pings:
        c.send(PingFrame(0, opaque_data=pings[0].opaque_data, flags={"ACK"}))
    got = until(c, lambda fs: any(isinstance(f, GoAwayFrame) for f in fs))
    final = [f for f in got if isinstance(f, GoAwayFrame)]
    check("the PING's acknowledgement brings the final GOAWAY NO_ERROR, naming stream 3, "
          "well within the grace period",
          len(final) == 1 and final[0].last_stream_id == 3 and final[0].error_code == 0 and
          time.time() - t0 < 1.0, got)
    # After it, a new stream is refused (ignored: the client retries it elsewhere), and the
    # streams up to the last one finish.
    c.send(c.headers(5, request_fields("/")))
    got += c.frames(3)
    body = {sid: b"".join(f.data for f in got if isinstance(f, DataFrame) and f.stream_id == sid)
            for sid in (1, 3, 5)}
    check("the open slow stream and the one taken after the notice are answered, stream 5 "
          "is not, and the connection closes",
          body[1] == b"later 1200" and body[3] == b"hello h2" and
          not any(f is not None and f.stream_id == 5 for f in got) and got[-1] is None,
          (body, got[-3:]))
    c.close()
    # The listener is still open during the grace period: a fresh client is served, on a
    # connection that is warned at once.
    try:
        f = raw(port)
    except OSError as e:
        check("a fresh client during the grace period is served", False, e)
    else:
        f.send(f.headers(1, request_fields("/")))
        got = until(f, lambda fs: any(isinstance(x, PingFrame) for x in fs))
        ping = [x for x in got if isinstance(x, PingFrame)]
        if ping:
            f.send(PingFrame(0, opaque_data=ping[0].opaque_data, flags={"ACK"}))
        got += f.frames(2)
        check("a fresh client during the grace period is served",
              any(isinstance(x, DataFrame) and x.stream_id == 1 and x.data == b"hello h2"
                  for x in got) and time.time() - t0 < 1.5, got)
        f.close()
    check("the server exits 0 after the grace period and the drain", proc.wait(10) == 0)


def spool_failure():
    # A body that cannot be spooled (the directory does not exist) is answered 500 with what
    # docs/uploads.md says, not a bare "Internal Server Error", and others are served.
    proc, port = start("--spool-dir", "/nonexistent/tern-spool")
    try:
        c = raw(port)
        c.send(c.headers(1, request_fields("/size", "POST"), end_stream=False),
               DataFrame(1, b"x" * 16000), DataFrame(1, b"y" * 4000, flags={"END_STREAM"}))
        got = until(c, lambda fs: any(isinstance(f, DataFrame) and "END_STREAM" in f.flags
                                      for f in fs if f is not None))
        dec = hpack.Decoder()
        status = [dict(dec.decode(f.data)).get(":status") for f in got
                  if isinstance(f, HeadersFrame)]
        body = b"".join(f.data for f in got if isinstance(f, DataFrame))
        check("a body that cannot be spooled is answered 500 'request body could not be "
              "stored' over HTTP/2", status == ["500"] and
              body == b"request body could not be stored", (status, body))
        c.close()
        check("the server goes on serving after a spool failure", serving(port))
    finally:
        proc.terminate()
        proc.wait(10)


def spool_quota():
    # Uploads that declare 1 MiB each and hold after 20 KB, against a spool of 3 MiB for the
    # server and 2 MiB per connection beyond its first body, in a 4 MiB tmpfs (as root; a
    # plain directory otherwise): the holders get what fits and 503s for the rest, others
    # get 503 + Retry-After (never the 500 of a full file system) while a small request is
    # served, and once the holders leave a 1 MiB upload is stored whole.
    mib = 1 << 20
    spool = tempfile.mkdtemp(prefix="tern-spool-")
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", spool]).returncode == 0
    if not mounted:
        print("note: the spool quota checks run on a plain directory (mounting a tmpfs "
              "needs root)")
    proc, port = start("--spool-dir", spool, "--spool-quota", str(3 * mib),
                       "--h2-spool", str(2 * mib))

    def hold(c, n, answered):
        # n uploads; returns once `answered` of them have their answer (or after 10 s)
        sids = [c.request("/upload", "POST", headers=[("content-length", str(mib))],
                          body=b"x" * 20000, end=False) for _ in range(n)]
        deadline = time.time() + 10
        while time.time() < deadline and sum(c.responses[s]["status"] is not None
                                              for s in sids) < answered:
            c.pump(0.1)
        return [c.responses[s] for s in sids]

    try:
        first = client(port)
        held = hold(first, 10, 8)
        check("one connection's uploads hold the spool up to h2_max_spooled_bytes: 2 run, 8 "
              "are answered 503 + Retry-After", [r["status"] for r in held] ==
              [None, None] + [503] * 8 and all(
                  ("retry-after", "5") in r["headers"] for r in held[2:]),
              [r["status"] for r in held])
        second = client(port)
        held2 = hold(second, 3, 2)
        refused = held2[1:]
        check("a second connection's upload takes the server's last 1 MiB; past "
              "max_spooled_bytes the next is answered 503 'the spool is full'",
              [r["status"] for r in held2] == [None, 503, 503] and
              refused[0]["body"] == b"request body could not be stored now: the spool is full",
              [(r["status"], r["body"][:60]) for r in held2])
        fresh = client(port)
        sid = fresh.request("/upload", "POST", headers=[("content-length", str(mib))],
                            body=b"y" * 20000, end=False)
        small = fresh.request("/size", "POST", body=b"small")
        fresh.wait(sid)
        fresh.wait(small)
        check("meanwhile another client's upload is answered 503 (not 500) and a small "
              "request is served", fresh.responses[sid]["status"] == 503 and
              fresh.responses[small]["body"] == b"5",
              (fresh.responses[sid]["status"], fresh.responses[small]["body"]))
        if mounted:
            free = os.statvfs(spool).f_bavail * os.statvfs(spool).f_frsize
            check("the spool's file system is not full", free >= mib, free)
        first.close()
        second.close()
        stored = None
        for _ in range(20):  # the holders' space comes back once the server sees them go
            later = client(port)
            sid = later.request("/upload", "POST", headers=[("content-length", str(mib))],
                                body=b"z" * mib)
            stored = later.wait(sid)
            later.close()
            if stored["status"] == 200:
                break
            time.sleep(0.1)
        check("once the holders leave, a 1 MiB upload is stored whole",
              stored["status"] == 200 and stored["body"] == b"1048576 spooled",
              (stored["status"], stored["body"][:60]))
        fresh.close()
    finally:
        proc.terminate()
        proc.wait(10)
        if mounted:
            subprocess.run(["umount", spool])
        os.rmdir(spool)


def main():
    spool_failure()
    spool_quota()
    proc, port = start()
    try:
        malformed_resets(port)
        stream_order(port)
        hpack_bomb(port)
    finally:
        proc.terminate()
        proc.wait(10)
    grace_period()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

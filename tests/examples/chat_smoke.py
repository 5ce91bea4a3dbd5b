#!/usr/bin/python3
"""examples/chat as its users would meet it, with Python's websockets (Debian
python3-websockets): rooms, broadcast to members only, history for a newcomer, presence
events, the upgrade guard (400 for a bad room or name, 403 for a foreign Origin), the size
limit (1009) and text-only (1003) without hurting the others, /rooms, and close 1001 when
the server stops.

    chat_smoke.py path/to/chat
"""
import asyncio
import json
import signal
import sys
import urllib.request

import websockets

from chat_server import start_chat


def ok(what):
    print("ok  ", what, flush=True)


def fail(what):
    raise SystemExit(f"FAIL {what}")


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=5) as r:
        return json.loads(r.read())


async def expect_close(ws, code, what):
    """The next thing `ws` gets must be the server's close frame with `code`."""
    try:
        await asyncio.wait_for(ws.recv(), 5)
        fail(f"{what}: a message instead of close {code}")
    except websockets.exceptions.ConnectionClosed as e:
        if e.rcvd is None or e.rcvd.code != code:
            fail(f"{what}: close {e.rcvd}, not {code}")


async def recv_json(ws, timeout=5):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def expect(ws, want, what):
    got = await recv_json(ws)
    if got != want:
        fail(f"{what}: want {want}, got {got}")


async def nothing_more(ws, what):
    try:
        got = await asyncio.wait_for(ws.recv(), 0.3)
    except asyncio.TimeoutError:
        return
    fail(f"{what}: unexpected {got!r}")


async def refused(url, status, what, **kw):
    try:
        async with websockets.connect(url, **kw):
            pass
    except websockets.exceptions.InvalidStatusCode as e:
        if e.status_code != status:
            fail(f"{what}: want {status}, got {e.status_code}")
        ok(f"{what}: {status}")
        return
    fail(f"{what}: the upgrade was accepted")


async def main(base, ws_base, proc):
    if get_json(base, "/rooms") != {"rooms": []}:
        fail("no rooms at first")
    alice = await websockets.connect(f"{ws_base}/ws/lobby?name=alice")
    await expect(alice, {"type": "join", "room": "lobby", "name": "alice", "members": 1},
                 "alice sees herself join")
    bob = await websockets.connect(f"{ws_base}/ws/lobby?name=bob")
    join_bob = {"type": "join", "room": "lobby", "name": "bob", "members": 2}
    await expect(alice, join_bob, "alice sees bob join")
    await expect(bob, join_bob, "bob sees himself join")
    carol = await websockets.connect(f"{ws_base}/ws/garden?name=carol")
    await expect(carol, {"type": "join", "room": "garden", "name": "carol", "members": 1},
                 "carol joins another room")
    ok("join events to the room's members")

    await alice.send("hi bob, ça va? 😀")
    said = {"type": "message", "room": "lobby", "from": "alice", "text": "hi bob, ça va? 😀"}
    await expect(alice, said, "alice gets her own message")
    await expect(bob, said, "bob gets alice's message")
    await nothing_more(carol, "carol, in another room")
    ok("a message goes to its room only, UTF-8 intact")

    rooms = get_json(base, "/rooms")
    if rooms != {"rooms": [{"name": "garden", "members": 1}, {"name": "lobby", "members": 2}]}:
        fail(f"/rooms: {rooms}")
    ok("/rooms counts members")

    dave = await websockets.connect(f"{ws_base}/ws/lobby?name=dave")
    await expect(dave, said, "dave gets the room's history first")
    join_dave = {"type": "join", "room": "lobby", "name": "dave", "members": 3}
    await expect(dave, join_dave, "then his own join")
    await expect(alice, join_dave, "alice sees dave join")
    await expect(bob, join_dave, "bob sees dave join")
    ok("a newcomer gets the history")

    await refused(f"{ws_base}/ws/bad!room?name=x", 400, "a bad room name")
    await refused(f"{ws_base}/ws/lobby?name=" + "x" * 40, 400, "a name too long")
    await refused(f"{ws_base}/ws/lobby?name=eve", 403, "a page of another origin",
                  origin="http://evil.example")
    host = ws_base.removeprefix("ws://")
    own = await websockets.connect(f"{ws_base}/ws/garden?name=own", origin=f"http://{host}")
    await recv_json(own)
    await recv_json(carol)
    await own.close()
    await recv_json(carol)  # own left
    ok("a page of this server's own origin is let in")

    await dave.send("x" * 3000)
    await expect_close(dave, 1009, "a long message")
    ok("a message over 2,000 bytes closes that member with 1009")
    left = {"type": "leave", "room": "lobby", "name": "dave", "members": 2}
    await expect(alice, left, "alice sees dave leave")
    await expect(bob, left, "bob sees dave leave")

    await bob.send(b"\x00binary")
    await expect_close(bob, 1003, "a binary message")
    await expect(alice, {"type": "leave", "room": "lobby", "name": "bob", "members": 1},
                 "alice sees bob leave")
    ok("a binary message closes that member with 1003; the others keep chatting")

    await alice.send("still here")
    await expect(alice, {"type": "message", "room": "lobby", "from": "alice",
                         "text": "still here"}, "alice still chats")

    proc.send_signal(signal.SIGTERM)
    for who in (alice, carol):
        await expect_close(who, 1001, "at stop")
    ok("SIGTERM closes every member with 1001")


if __name__ == "__main__":
    proc, base = start_chat(sys.argv[1])
    try:
        asyncio.run(main(base, base.replace("http://", "ws://"), proc))
        if proc.wait(timeout=10) != 0:
            fail(f"chat exited with {proc.returncode}")
        ok("chat exited 0")
    finally:
        if proc.poll() is None:
            proc.kill()

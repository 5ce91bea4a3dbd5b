#!/usr/bin/python3
# Python's websockets library (Debian python3-websockets) against a tern WebSocket echo
# endpoint: text and binary echo, a fragmented message, permessage-deflate when the server
# offers it, ping/pong, and the closing handshake. Usage: ws_python.py URL [--compression]
import asyncio
import sys

import websockets


async def main(url, compression):
    ext = "deflate" if compression else None
    async with websockets.connect(url, compression=ext, max_size=4 * 1024 * 1024) as ws:
        negotiated = ws.response_headers.get("Sec-WebSocket-Extensions", "")
        if compression and "permessage-deflate" not in negotiated:
            raise SystemExit(f"FAIL compression not negotiated: {negotiated!r}")
        if not compression and negotiated:
            raise SystemExit(f"FAIL unexpected extensions: {negotiated!r}")
        await ws.send("hello from python")
        assert await ws.recv() == "hello from python", "text echo"
        await ws.send(b"\x00\x01binary\xff")
        assert await ws.recv() == b"\x00\x01binary\xff", "binary echo"
        big = "x" * 200_000 + "é€😀"
        await ws.send(big)
        assert await ws.recv() == big, "large text echo"
        # A message in fragments (websockets sends an iterable as fragments).
        await ws.send(["frag", "men", "ted ü"])
        assert await ws.recv() == "fragmented ü", "fragmented echo"
        for i in range(100):
            await ws.send(f"m{i}")
        for i in range(100):
            assert await ws.recv() == f"m{i}", "ordered echoes"
        pong = await ws.ping(b"py")
        await asyncio.wait_for(pong, 5)
        await ws.close(code=1000, reason="done")
        if ws.close_code != 1000:
            raise SystemExit(f"FAIL close code {ws.close_code}")
    print("ok   python websockets:", "compressed" if compression else "plain",
          "echo, fragments, ping and close")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], "--compression" in sys.argv[2:]))

#!/usr/bin/python3
"""Python WebSocket peer for bench/ws.py: Debian's python3-websockets on asyncio, one event
loop, no permessage-deflate (tern's default).

  GET  /            -> 200 text/plain "Hello, World!"
  GET  /ws/echo     -> WebSocket: every message echoed back
  GET  /ws/feed     -> WebSocket: the connection joins the broadcast set
  GET  /ws/control  -> WebSocket: "broadcast B" sends one text message of B bytes ('x') to
                       every /ws/feed connection (websockets.broadcast: framed once, and a
                       connection whose buffer is full is skipped, not waited for)

  /usr/bin/python3 ws_server.py PORT     (listens on 127.0.0.1:PORT)
"""
import asyncio
import http
import logging
import re
import sys

import websockets

feed = set()


async def handler(ws, path):
    path = path.split("?")[0]
    if path == "/ws/echo":
        async for message in ws:
            await ws.send(message)
    elif path == "/ws/feed":
        feed.add(ws)
        try:
            await ws.wait_closed()
        finally:
            feed.discard(ws)
    elif path == "/ws/control":
        async for message in ws:
            m = re.fullmatch(r"broadcast (\d+)", message) if isinstance(message, str) else None
            if m and int(m.group(1)) <= 1 << 20:
                websockets.broadcast(feed, "x" * int(m.group(1)))


async def process_request(path, headers):
    if path == "/":
        return http.HTTPStatus.OK, [("Content-Type", "text/plain")], b"Hello, World!"
    return None


async def main(port):
    async with websockets.serve(handler, "127.0.0.1", port, compression=None,
                                process_request=process_request, max_size=1 << 20,
                                ping_interval=None, backlog=4096):
        await asyncio.Future()


if __name__ == "__main__":
    # A load generator that exits without a closing handshake is not worth a traceback.
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    asyncio.run(main(int(sys.argv[1])))

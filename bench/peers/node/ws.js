// Node.js WebSocket peer for bench/ws.py: Debian's node-ws (the `ws` package) on the
// built-in http server, one event loop, no permessage-deflate (tern's default).
//   GET  /            -> 200 text/plain "Hello, World!"
//   GET  /ws/echo     -> WebSocket: every message echoed back
//   GET  /ws/feed     -> WebSocket: the connection joins the broadcast set
//   GET  /ws/control  -> WebSocket: "broadcast B" sends one text message of B bytes ('x')
//                        to every /ws/feed connection
//
//   NODE_PATH=/usr/share/nodejs node ws.js PORT   (listens on 127.0.0.1:PORT)
//
// The broadcast is the loop over clients that ws's README shows (send() writes a small header
// and the shared Buffer per connection, without copying it); a connection with more than
// 1 MiB waiting is cut off, as tern's max_stream_buffer does.
'use strict';
const http = require('http');
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node ws.js PORT');
  process.exit(2);
}
const MAX_PENDING = 1 << 20;
const hello = Buffer.from('Hello, World!');
const feed = new Set();

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': hello.length });
  res.end(hello);
});
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false,
                                  maxPayload: 1 << 20 });

function broadcast(size) {
  const data = Buffer.alloc(size, 'x');
  for (const ws of feed) {
    if (ws.readyState !== 1) continue;
    if (ws.bufferedAmount > MAX_PENDING) {
      ws.terminate();
      continue;
    }
    ws.send(data, { binary: false });
  }
}

server.on('upgrade', (req, socket, head) => {
  const path = req.url.split('?')[0];
  if (path !== '/ws/echo' && path !== '/ws/feed' && path !== '/ws/control') {
    socket.destroy();
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    if (path === '/ws/echo') {
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    } else if (path === '/ws/feed') {
      feed.add(ws);
      ws.on('close', () => feed.delete(ws));
    } else {
      ws.on('message', (data) => {
        const m = /^broadcast (\d+)$/.exec(data.toString());
        if (m && Number(m[1]) <= 1 << 20) broadcast(Number(m[1]));
      });
    }
    ws.on('error', () => {});
  });
});

server.listen(port, '127.0.0.1');

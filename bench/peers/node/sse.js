// Node.js SSE peer for bench/live.py: the built-in http module, one event loop.
//   GET  /                      -> 200 text/plain "Hello, World!"
//   GET  /feed                  -> text/event-stream; the client joins the broadcast set
//   POST /broadcast?n=K&size=B  -> K events of B bytes ('x') to every client; one line per
//                                  event: how many clients it was written to
//
//   node sse.js PORT   (listens on 127.0.0.1:PORT)
//
// The event is formatted once and written to each response; a client whose response has
// more than 1 MiB waiting in Node's buffers is cut off, as tern's max_stream_buffer does.
// Several events for one client are corked into one write.
'use strict';
const http = require('http');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node sse.js PORT');
  process.exit(2);
}
const MAX_PENDING = 1 << 20;
const hello = Buffer.from('Hello, World!');
const clients = new Set();

function feed(req, res) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
  res.flushHeaders();
  clients.add(res);
  res.on('close', () => clients.delete(res));
}

function broadcast(req, res, query) {
  const n = Number(query.get('n'));
  const size = Number(query.get('size'));
  if (!Number.isInteger(n) || !Number.isInteger(size) || n < 0 || size < 0 || size > 1 << 20) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end('n and size must be numbers');
    return;
  }
  const event = Buffer.from('data: ' + 'x'.repeat(size) + '\n\n');
  const reached = new Array(n).fill(0);
  for (const c of clients) {
    if (c.writableLength + n * event.length > MAX_PENDING) {
      clients.delete(c);
      c.destroy();
      continue;
    }
    if (n > 1) c.cork();
    for (let i = 0; i < n; i++) {
      c.write(event);
      reached[i]++;
    }
    if (n > 1) c.uncork();
  }
  const body = reached.map((k) => k + '\n').join('');
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (req.method === 'GET' && url.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': hello.length });
    res.end(hello);
  } else if (req.method === 'GET' && url.pathname === '/feed') {
    feed(req, res);
  } else if (req.method === 'POST' && url.pathname === '/broadcast') {
    req.resume();
    req.on('end', () => broadcast(req, res, url.searchParams));
  } else {
    res.writeHead(404, { 'Content-Type': 'text/plain', 'Content-Length': 9 });
    res.end('Not Found');
  }
});
server.keepAliveTimeout = 65000;
server.listen(port, '127.0.0.1');

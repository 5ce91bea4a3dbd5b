// Node.js peer: the built-in http module, one event loop.
//   GET /        -> 200 text/plain "Hello, World!"
//   POST /login  -> 200 application/json, the request body echoed
//
//   node node.js PORT   (listens on 127.0.0.1:PORT)
'use strict';
const http = require('http');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node node.js PORT');
  process.exit(2);
}
const hello = Buffer.from('Hello, World!');

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/') {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': hello.length });
    res.end(hello);
  } else if (req.method === 'POST' && req.url === '/login') {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
    });
  } else {
    res.writeHead(404, { 'Content-Type': 'text/plain', 'Content-Length': 9 });
    res.end('Not Found');
  }
});
server.keepAliveTimeout = 65000;
server.listen(port, '127.0.0.1');

// Node.js peer for bench/'s real-app workloads (bench/lib/apps.py): the same routes as tern's
// examples/jwt_login and examples/todo, on the built-in http module (one event loop) with
// crypto for the HS256 token, and the `pg` package (npm, bench/peers/node/package.json,
// installed by bench/run.sh into the build folder) for PostgreSQL.
//
//   POST /login        {"username","password"} -> 200 {"token": HS256 JWT}, 401, 400
//   GET  /me           Authorization: Bearer <token> -> 200 the claims, 401
//   GET  /health       -> 200 {"status":"ok"}
//   GET  /todos/{id}   -> 200 {"id","title","done"}, 404, 400   (with --pg only)
//   POST /todos        {"title","done"} -> 201 the stored to-do, 400 (with --pg only)
//
//   JWT_SECRET=... node app.js PORT [--pg CONNINFO]   (listens on 127.0.0.1:PORT)
//
// Passwords are compared plainly (constant time), as the Go-vs-Java page's apps did. The pg
// pool holds at most 8 connections, like examples/todo's 8 blocking-pool threads.
'use strict';
const http = require('http');
const crypto = require('crypto');

const port = Number(process.argv[2]);
const conninfo = process.argv[3] === '--pg' ? process.argv[4] : null;
if (!port || (process.argv.length > 3 && !conninfo)) {
  console.error('usage: node app.js PORT [--pg CONNINFO]');
  process.exit(2);
}
const secret = process.env.JWT_SECRET;
if (!secret) {
  console.error('app.js: set JWT_SECRET');
  process.exit(2);
}
const users = new Map([['alice', Buffer.from('wonderland')], ['bob', Buffer.from('builder')]]);
const healthBody = Buffer.from('{"status":"ok"}'); // constant bytes, as tern's bench_app and nginx send
const jwtHeader = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');

function send(res, status, body, headers = {}) {
  const data = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  res.writeHead(status, {
    'Content-Type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'Content-Length': data.length, ...headers,
  });
  res.end(data);
}

function mac(text) {
  return crypto.createHmac('sha256', secret).update(text).digest();
}

function sign(claims) {
  const unsigned = jwtHeader + '.' + Buffer.from(JSON.stringify(claims)).toString('base64url');
  return unsigned + '.' + mac(unsigned).toString('base64url');
}

function verify(token) {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== jwtHeader) throw new Error('not an HS256 token');
  const sig = Buffer.from(parts[2], 'base64url');
  const want = mac(parts[0] + '.' + parts[1]);
  if (sig.length !== want.length || !crypto.timingSafeEqual(sig, want)) {
    throw new Error("the token's signature does not match");
  }
  const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString());
  if (!(claims.exp > Date.now() / 1000)) throw new Error('the token has expired');
  return claims;
}

function readBody(req, limit, done) {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= limit) chunks.push(c);
  });
  req.on('end', () => done(size <= limit ? Buffer.concat(chunks) : null));
}

function login(req, res) {
  readBody(req, 4096, (raw) => {
    let body;
    try {
      body = JSON.parse(raw);
    } catch (e) {
      body = null;
    }
    if (!body || typeof body.username !== 'string' || typeof body.password !== 'string') {
      return send(res, 400, "the body must be a JSON object with the fields 'username' and 'password'");
    }
    const want = users.get(body.username);
    const got = Buffer.from(body.password);
    if (!want || want.length !== got.length || !crypto.timingSafeEqual(want, got)) {
      return send(res, 401, 'wrong username or password');
    }
    const now = Math.floor(Date.now() / 1000);
    send(res, 200, { token: sign({ exp: now + 3600, iat: now, sub: body.username }) },
      { 'Cache-Control': 'no-store' });
  });
}

function me(req, res) {
  const auth = req.headers.authorization || '';
  if (!auth.startsWith('Bearer ')) {
    return send(res, 401, 'no bearer token', { 'WWW-Authenticate': 'Bearer realm="jwt_login"' });
  }
  try {
    send(res, 200, verify(auth.slice(7)));
  } catch (e) {
    send(res, 401, e.message, { 'WWW-Authenticate': 'Bearer realm="jwt_login", error="invalid_token"' });
  }
}

let pool = null;
function dbError(res, err) {
  console.error('database:', err.message);
  send(res, 503, { error: 'the database did not answer' }, { 'Retry-After': '1' });
}

function createTodo(req, res) {
  readBody(req, 16384, (raw) => {
    let body;
    try {
      body = JSON.parse(raw);
    } catch (e) {
      body = null;
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      return send(res, 400, { error: 'the body must be a JSON object', field: 'body' });
    }
    const { title, done = false } = body;
    if (typeof title !== 'string') {
      return send(res, 400, { error: "field 'title' must be a string", field: 'title' });
    }
    const n = [...title].length;
    if (n === 0 || n > 200 || title.includes('\0')) {
      return send(res, 400, { error: "field 'title' must be 1 to 200 characters", field: 'title' });
    }
    if (typeof done !== 'boolean') {
      return send(res, 400, { error: "field 'done' must be true or false", field: 'done' });
    }
    pool.query({ name: 'todo_add', text: 'INSERT INTO todos (title, done) VALUES ($1, $2) RETURNING id',
      values: [title, done] })
      .then((r) => {
        const id = Number(r.rows[0].id);
        send(res, 201, { id, title, done }, { Location: '/todos/' + id });
      }, (err) => dbError(res, err));
  });
}

function getTodo(req, res, idText) {
  if (!/^-?[0-9]{1,18}$/.test(idText)) {
    return send(res, 400, { error: "path parameter 'id' must be an integer", field: 'id' });
  }
  pool.query({ name: 'todo_get', text: 'SELECT id, title, done FROM todos WHERE id = $1', values: [idText] })
    .then((r) => {
      if (r.rows.length === 0) return send(res, 404, { error: 'no to-do with id ' + idText });
      const t = r.rows[0];
      send(res, 200, { id: Number(t.id), title: t.title, done: t.done });
    }, (err) => dbError(res, err));
}

const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/login') return login(req, res);
  if (req.method === 'GET' && req.url === '/me') return me(req, res);
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': healthBody.length });
    return res.end(healthBody);
  }
  if (pool && req.method === 'POST' && req.url === '/todos') return createTodo(req, res);
  if (pool && req.method === 'GET' && req.url.startsWith('/todos/')) {
    return getTodo(req, res, req.url.slice(7));
  }
  send(res, 404, 'Not Found');
});
server.keepAliveTimeout = 65000;

if (conninfo) {
  const { Pool } = require('pg');
  pool = new Pool({ connectionString: conninfo, max: 8 });
  pool.query('CREATE TABLE IF NOT EXISTS todos (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,'
    + ' title TEXT NOT NULL, done BOOLEAN NOT NULL)')
    .then(() => server.listen(port, '127.0.0.1'), (err) => {
      console.error('app.js:', err.message);
      process.exit(1);
    });
} else {
  server.listen(port, '127.0.0.1');
}

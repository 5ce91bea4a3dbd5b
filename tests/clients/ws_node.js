// Node's ws library (Debian node-ws) against a tern WebSocket echo endpoint: text and
// binary echo, a fragmented message, permessage-deflate when asked, ping/pong and close.
// Usage: NODE_PATH=/usr/share/nodejs node ws_node.js URL [--compression]
'use strict';
const WebSocket = require('ws');

const url = process.argv[2];
const compression = process.argv.includes('--compression');
const ws = new WebSocket(url, { perMessageDeflate: compression });
const fail = (why) => { console.error('FAIL node ws: ' + why); process.exit(1); };
setTimeout(() => fail('timed out'), 15000).unref();

const expected = [];
ws.on('open', () => {
  const ext = ws.extensions || '';
  if (compression !== ext.includes('permessage-deflate')) fail('extensions: ' + ext);
  expected.push('hello from node');
  ws.send('hello from node');
  const bin = Buffer.from([0, 1, 2, 255, 254]);
  expected.push(bin);
  ws.send(bin);
  const big = 'y'.repeat(300000);
  expected.push(big);
  ws.send(big);
  // A fragmented message: fin false, then the last fragment.
  expected.push('fragmented');
  ws.send('frag', { fin: false });
  ws.send('mented', { fin: true });
  ws.ping('nodeping');
});
let ponged = false;
ws.on('pong', (data) => { if (data.toString() === 'nodeping') ponged = true; });
ws.on('message', (data, isBinary) => {
  const want = expected.shift();
  const got = isBinary ? data : data.toString();
  const same = Buffer.isBuffer(want) ? Buffer.compare(want, got) === 0 : want === got;
  if (!same) fail('echo mismatch, wanted ' + String(want).slice(0, 40));
  if (expected.length === 0) ws.close(1000, 'bye');
});
ws.on('close', (code) => {
  if (code !== 1000) fail('close code ' + code);
  if (!ponged) fail('no pong');
  console.log('ok   node ws: ' + (compression ? 'compressed' : 'plain') +
              ' echo, fragments, ping and close');
  process.exit(0);
});
ws.on('error', (e) => fail(e.message));

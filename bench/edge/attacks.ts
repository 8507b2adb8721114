#!/usr/bin/env node
// Hostile clients against an `--embedded` executable, black-box, with the server's RSS sampled from
// /proc and a bystander reading its own order every 100 ms from another loopback address. The figures
// the tests may not assert (RSS in MiB, latencies) are printed here. Loopback only; every loop is
// bounded in count and time. Usage:
//   npm run attacks -- [--only slots,zero-window,pipeline,hpack,connections] [--hold-seconds 40]
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { connect as tcpConnect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { encodeRequest } from '../../conformance/drivers/grpc.ts';
import { grpcFrame } from '../../test/grpc/raw-grpc.ts';
import { GET_ROOT, headersFrame, literalHeader, newestEntryReferences, rawH2 } from '../../test/support/h2-frames.ts';
import { sampleRss, startBystander, startTarget, type EdgeTarget, type Executable } from './target.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'slots,zero-window,pipeline,hpack,connections' },
    'hold-seconds': { type: 'string', default: '40' },
    connections: { type: 'string' },
  },
});
const only = new Set(values.only.split(','));
const holdMs = Number(values['hold-seconds']) * 1000;

async function withTarget(executable: Executable, name: string, attack: (t: EdgeTarget) => Promise<string>): Promise<void> {
  const target = await startTarget(executable);
  await sleep(500);
  const before = target.rssMiB();
  const rss = sampleRss(target);
  const bystander = startBystander(target);
  let outcome: string;
  try {
    outcome = await attack(target);
  } catch (error) {
    outcome = `attack failed: ${String(error)}`;
  }
  const b = bystander.stop();
  const peak = rss.stop();
  console.log(`${name} vs orders-${executable}: ${outcome}`);
  console.log(
    `  RSS ${before.toFixed(0)} MiB -> peak ${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)}); bystander ${b.answered}/${b.asked} answered, ${b.failed} failed, ` +
      `p50 ${b.p50.toFixed(1)} ms, p99 ${b.p99.toFixed(1)} ms, max ${b.max.toFixed(1)} ms`,
  );
  await target.stop();
}

function h2session(origin: string, settings: Record<string, number> = {}): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = h2connect(origin, { settings });
    session.on('error', () => undefined);
    session.once('remoteSettings', () => resolve(session));
    session.once('close', () => reject(new Error('closed before SETTINGS')));
  });
}

/** Oversized Login messages (no token) on one h2c connection, then REST GETs on the same connection. */
async function slots(t: EdgeTarget): Promise<string> {
  const session = await h2session(t.origin);
  const oversized = Buffer.alloc(64 * 1024, 0x61);
  oversized[0] = 0;
  oversized.writeUInt32BE(5 * 1024 * 1024, 1);
  const statuses = new Map<string, number>();
  for (let i = 0; i < 132; i++) {
    const stream = session.request({ ':method': 'POST', ':path': '/ordersv1.Orders/Login', 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => undefined);
    stream.once('response', (h) => statuses.set(String(h['grpc-status']), (statuses.get(String(h['grpc-status'])) ?? 0) + 1));
    stream.resume();
    stream.write(oversized);
    await new Promise((resolve) => stream.once('close', resolve));
  }
  const gets: string[] = [];
  for (let i = 0; i < 3; i++) {
    const stream = session.request({ ':method': 'GET', ':path': `/orders/${t.orderId}`, authorization: t.auth });
    stream.on('error', () => undefined);
    gets.push(await new Promise<string>((resolve) => {
      stream.once('response', (h) => resolve(String(h[':status'])));
      stream.once('close', () => resolve(`reset ${stream.rstCode}`));
      stream.resume();
    }));
  }
  session.destroy();
  return `132 oversized Logins: grpc-status ${[...statuses].map(([k, v]) => `${k} x${v}`).join(', ')}; then 3 GETs on the same connection: ${gets.join(', ')}`;
}

/** Connections with a zero flow-control window, 128 ListOrders (~25 KB answers) each, held open. */
async function zeroWindow(t: EdgeTarget): Promise<string> {
  const count = Number(values.connections ?? 150);
  const message = grpcFrame(encodeRequest('ListOrders', { limit: 100 }));
  const sessions: ClientHttp2Session[] = [];
  let goaways = 0;
  let resets = 0;
  let refused = 0;
  for (let c = 0; c < count; c++) {
    const session = await h2session(t.origin, { initialWindowSize: 0 }).catch(() => undefined);
    if (session === undefined) {
      refused += 1;
      continue;
    }
    session.once('goaway', () => (goaways += 1));
    sessions.push(session);
    for (let s = 0; s < 128; s++) {
      const stream = session.request({ ':method': 'POST', ':path': '/ordersv1.Orders/ListOrders', 'content-type': 'application/grpc', te: 'trailers', authorization: t.auth });
      stream.on('error', () => undefined);
      stream.once('close', () => (stream.rstCode !== 0 ? (resets += 1) : undefined));
      stream.end(message);
    }
    if (c % 10 === 9) await sleep(10);
  }
  await sleep(holdMs);
  for (const session of sessions) session.destroy();
  return `${count} zero-window connections x 128 ListOrders held ${holdMs / 1000} s: ${refused} connections refused, ${goaways} got GOAWAY, ${resets} streams reset`;
}

/** HTTP/1.1 connections each pipelining 10,000 list requests without reading a byte. */
async function pipeline(t: EdgeTarget): Promise<string> {
  const count = Number(values.connections ?? 30);
  const one = `GET /orders?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.auth}\r\n\r\n`;
  const burst = Buffer.from(one.repeat(10_000));
  let closed = 0;
  const sockets: Socket[] = [];
  for (let c = 0; c < count; c++) {
    const socket = tcpConnect({ host: '127.0.0.1', port: t.port });
    socket.on('error', () => undefined);
    socket.once('close', () => (closed += 1));
    socket.write(burst);
    sockets.push(socket);
  }
  await sleep(holdMs);
  for (const socket of sockets) socket.destroy();
  return `${count} connections x 10,000 pipelined GET /orders?limit=100, never read, held ${holdMs / 1000} s: ${closed} closed by the server`;
}

/** HPACK: one ~4 KB header inserted in the dynamic table, then referenced 10,000 times per header block. */
const VALUE_BYTES = 4000;
const INSERT = literalHeader('x-bomb', Buffer.alloc(VALUE_BYTES, 0x62), true);
const REFERENCES = newestEntryReferences(10_000);

async function hpack(t: EdgeTarget): Promise<string> {
  const seconds = Math.min(holdMs, 10_000) / 1000;
  const until = Date.now() + seconds * 1000;
  let blocks = 0;
  let connections = 0;
  let calmed = 0;
  const attacker = async (): Promise<void> => {
    while (Date.now() < until) {
      connections += 1;
      const h2 = await rawH2('127.0.0.1', t.port).catch(() => undefined);
      if (h2 === undefined) continue;
      let stream = 1;
      let open = true;
      void h2.closed.then(() => (open = false));
      // Blocks as fast as the socket takes them, until the server closes the connection or time is up.
      while (open && Date.now() < until) {
        const ok = h2.write(headersFrame(stream, Buffer.concat([GET_ROOT, stream === 1 ? INSERT : Buffer.alloc(0), REFERENCES])));
        stream += 2;
        blocks += 1;
        if (!ok) await Promise.race([new Promise((resolve) => h2.socket.once('drain', resolve)), h2.closed]);
      }
      if (h2.goaway() === 11) calmed += 1;
      h2.socket.destroy();
    }
  };
  await Promise.all([attacker(), attacker(), attacker(), attacker()]);
  return `4 connections x ${seconds} s: ${blocks} header blocks of ${REFERENCES.length} references to a ${VALUE_BYTES}-byte entry written over ${connections} connections, ${calmed} closed with GOAWAY ENHANCE_YOUR_CALM`;
}

/** Idle TCP connections opened as fast as the client can; how many does the server keep? */
async function manyConnections(t: EdgeTarget): Promise<string> {
  const count = Number(values.connections ?? 5000);
  const sockets: Socket[] = [];
  let closedByServer = 0;
  for (let c = 0; c < count; c++) {
    const socket = tcpConnect({ host: '127.0.0.1', port: t.port });
    socket.on('error', () => undefined);
    socket.once('end', () => (closedByServer += 1));
    socket.once('close', () => undefined);
    sockets.push(socket);
    if (c % 200 === 199) await sleep(20);
  }
  await sleep(2_000);
  const open = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
  for (const socket of sockets) socket.destroy();
  return `${count} idle connections opened: ${open} still open after 2 s, ${closedByServer} closed by the server`;
}

if (only.has('slots')) await withTarget('grpc', 'slots', slots);
if (only.has('zero-window')) await withTarget('grpc', 'zero-window', zeroWindow);
if (only.has('pipeline')) await withTarget('stdlib', 'pipeline', pipeline);
if (only.has('hpack')) await withTarget('grpc', 'hpack', hpack);
if (only.has('connections')) await withTarget('grpc', 'connections', manyConnections);

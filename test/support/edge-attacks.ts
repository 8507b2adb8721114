import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { connect as tcpConnect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeRequest } from '../../conformance/drivers/grpc.ts';
import { grpcFrame } from '../grpc/raw-grpc.ts';
import type { EdgeTarget } from './edge-target.ts';
import { GET_ROOT, headersFrame, literalHeader, newestEntryReferences, rawH2 } from './h2-frames.ts';

/**
 * Hostile clients against an EdgeTarget, each bounded in count and time, each returning a line that
 * says what the server did. `npm run attacks` prints them with the server's RSS and a bystander's
 * latencies; test/edge asserts on smaller runs.
 */

/** An h2c session to `origin` once the server's SETTINGS arrived (`settings`: the client's own). */
export function h2session(origin: string, settings: Record<string, number> = {}): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = h2connect(origin, { settings });
    session.on('error', () => undefined);
    session.once('remoteSettings', () => resolve(session));
    session.once('close', () => reject(new Error('closed before SETTINGS')));
  });
}

/** Oversized Login messages (no token) on one h2c connection, then REST GETs on the same connection. */
export async function slots(t: EdgeTarget): Promise<string> {
  const session = await h2session(t.origin);
  const oversized = Buffer.alloc(64 * 1024, 0x61);
  oversized[0] = 0;
  oversized.writeUInt32BE(5 * 1024 * 1024, 1);
  const statuses = new Map<string, number>();
  for (let i = 0; i < 132; i++) {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/ordersv1.Orders/Login',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
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
    gets.push(
      await new Promise<string>((resolve) => {
        stream.once('response', (h) => resolve(String(h[':status'])));
        stream.once('close', () => resolve(`reset ${stream.rstCode}`));
        stream.resume();
      }),
    );
  }
  session.destroy();
  return `132 oversized Logins: grpc-status ${[...statuses].map(([k, v]) => `${k} x${v}`).join(', ')}; then 3 GETs on the same connection: ${gets.join(', ')}`;
}

/** Connections with a zero flow-control window, 128 ListOrders (~25 KB answers) each, held open. */
/**
 * The same requests as zeroWindow from clients that read their answers, and return when all are
 * answered: run before an attack, it makes the process as warm as the attack will (compiled code,
 * heap sized for the work), so RSS growth afterwards is what the attack itself makes it hold.
 */
export async function readingClients(t: EdgeTarget, count: number): Promise<void> {
  const message = grpcFrame(encodeRequest('ListOrders', { limit: 100 }));
  await Promise.all(
    Array.from({ length: count }, async () => {
      const session = await h2session(t.origin);
      await Promise.all(
        Array.from({ length: 128 }, () => {
          const stream = session.request({
            ':method': 'POST',
            ':path': '/ordersv1.Orders/ListOrders',
            'content-type': 'application/grpc',
            te: 'trailers',
            authorization: t.auth,
          });
          stream.on('error', () => undefined);
          stream.resume();
          stream.end(message);
          return new Promise((resolve) => stream.once('close', resolve));
        }),
      );
      session.destroy();
    }),
  );
}

export async function zeroWindow(t: EdgeTarget, count = 150, holdMs = 40_000): Promise<string> {
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
      const stream = session.request({
        ':method': 'POST',
        ':path': '/ordersv1.Orders/ListOrders',
        'content-type': 'application/grpc',
        te: 'trailers',
        authorization: t.auth,
      });
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
export async function pipeline(t: EdgeTarget, count = 30, holdMs = 40_000): Promise<string> {
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

export async function hpack(t: EdgeTarget, seconds = 10): Promise<string> {
  const until = Date.now() + seconds * 1000;
  let blocks = 0;
  let connections = 0;
  let calmed = 0;
  let closedByServer = 0;
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
      if (!open) closedByServer += 1;
      h2.socket.destroy();
    }
  };
  await Promise.all([attacker(), attacker(), attacker(), attacker()]);
  return `4 connections x ${seconds} s: ${blocks} header blocks of ${REFERENCES.length} references to a ${VALUE_BYTES}-byte entry written over ${connections} connections, ${closedByServer} closed by the server (${calmed} with a GOAWAY ENHANCE_YOUR_CALM read before the close)`;
}

/** Idle TCP connections opened as fast as the client can; how many does the server keep? */
export async function manyConnections(t: EdgeTarget, count = 5000): Promise<string> {
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

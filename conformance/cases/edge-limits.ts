import { constants as h2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { connect as tcpConnect, type Socket } from 'node:net';
import { flow, type Case, type FlowContext } from '../case-model.ts';
import { encodeRequest } from '../drivers/grpc.ts';
import { grpcFrame } from '../../test/grpc/raw-grpc.ts';
import { h2session } from '../../test/support/edge-attacks.ts';
import { GET_ROOT, headersFrame, literalHeader, newestEntryReferences, rawH2 } from '../../test/support/h2-frames.ts';
import { createOnePortServer, HTTP2_GUARD_TICK_MS, type Http2Limits, type OnePortServer } from '../../packages/one-port-grpc/index.ts';
import { listenLocal } from '../../test/support/ports.ts';
import { HANG_GUARD_MS, settled, until } from '../../test/support/eventually.ts';

/**
 * What one client can make the edge hold: stream slots, answers nobody reads, header blocks the server
 * refuses, pipelined requests, connections. Each case drives the hostile client and then checks what
 * is enforced (a slot free again, a stream reset, a connection closed, answers still right). The
 * large-scale figures (RSS under 150 such connections, another client's latency) are measured by
 * `npm run attacks` (bench/edge/attacks.ts).
 */

const GRPC_ONLY = ['grpc'];

interface StreamEnd {
  readonly status: string | undefined;
  readonly grpcStatus: string | undefined;
  readonly rstCode: number | undefined;
}

/**
 * Sends a request on `s` and reads whatever comes back. The body goes in 16 KiB pieces with
 * backpressure and stops when the server resets the stream, as a well-behaved client does (Node's own
 * client keeps a stream with unsent data open after a RST_STREAM(NO_ERROR), so this settles once the
 * answer is read and the stream is reset, or when it closes).
 */
function exchange(s: ClientHttp2Session, headers: Record<string, string>, body?: Buffer): Promise<StreamEnd> {
  const stream: ClientHttp2Stream = s.request(headers);
  let response: IncomingHttpHeaders = {};
  let trailers: IncomingHttpHeaders = {};
  let ended = false;
  stream.on('error', () => undefined);
  stream.once('response', (h) => (response = h));
  stream.once('trailers', (h) => (trailers = h));
  stream.resume();
  let offset = 0;
  const pump = (): void => {
    while (body !== undefined && offset < body.length && !stream.closed && !stream.destroyed) {
      const piece = body.subarray(offset, offset + 16_384);
      offset += piece.length;
      if (!stream.write(piece)) return void stream.once('drain', pump);
    }
    if (!stream.closed && !stream.destroyed) stream.end();
  };
  pump();
  return new Promise((resolve) => {
    const settle = (): void => {
      clearInterval(poll);
      resolve({
        status: response[':status']?.toString(),
        grpcStatus: (trailers['grpc-status'] ?? response['grpc-status']) as string | undefined,
        rstCode: stream.rstCode,
      });
      if (!stream.destroyed) stream.destroy();
    };
    stream.once('end', () => (ended = true));
    const poll = setInterval(() => ended && stream.closed && settle(), 5);
    stream.once('close', settle);
  });
}

/** Whether a new stream of `s` is answered (its response headers come) or refused with REFUSED_STREAM. */
function answeredOrRefused(s: ClientHttp2Session, headers: Record<string, string>): Promise<'answered' | 'refused' | 'other'> {
  const stream = s.request(headers);
  stream.on('error', () => undefined);
  return new Promise((resolve) => {
    stream.once('response', () => resolve('answered'));
    stream.once('close', () => resolve(stream.rstCode === h2.NGHTTP2_REFUSED_STREAM ? 'refused' : 'other'));
  });
}

function tally(ends: readonly StreamEnd[], pick: (e: StreamEnd) => unknown): string {
  const counts = new Map<string, number>();
  for (const e of ends) counts.set(String(pick(e)), (counts.get(String(pick(e))) ?? 0) + 1);
  return [...counts].map(([k, v]) => `${k} x${v}`).join(', ');
}

/** The first HTTP/1.1 responses read off `socket`, by Content-Length, until `count` or the close. */
function readResponses(socket: Socket, count: number): Promise<{ statuses: number[]; bodies: string[]; closed: boolean }> {
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    const statuses: number[] = [];
    const bodies: string[] = [];
    const finish = (closed: boolean): void => {
      socket.off('data', onData);
      resolve({ statuses, bodies, closed });
    };
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const headEnd = buffer.indexOf('\r\n\r\n');
        if (headEnd < 0) break;
        const head = buffer.subarray(0, headEnd).toString('latin1');
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < headEnd + 4 + length) break;
        statuses.push(Number(head.split(' ')[1]));
        bodies.push(buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'));
        buffer = buffer.subarray(headEnd + 4 + length);
        if (statuses.length === count) return finish(false);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => finish(true));
  });
}

function tcp(baseUrl: string): Promise<Socket> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: url.hostname, port: Number(url.port) });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** An h2c request no REST client would send: prior knowledge, raw frames, to the target's port. */
function targetPort(t: FlowContext): { host: string; port: number } {
  const url = new URL(t.target.baseUrl);
  return { host: url.hostname, port: Number(url.port) };
}

export const EDGE_LIMIT_CASES: Case[] = [
  flow(
    'refused-requests-free-their-stream-slots',
    ['H2-stream-slot', 'GRPC-message-size', 'GRPC-auth-before-body', 'GRPC-malformed', 'LIMIT-body-size'],
    { transports: GRPC_ONLY, api: 'grpc' },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const s = await h2session(t.target.baseUrl);
      try {
        // Each refused before its request was read, while its DATA kept arriving (64 KB written, more than
        // one DATA frame): 132 oversized Logins alone, no token needed, used to pin all of a connection's slots.
        const oversized = Buffer.alloc(64 * 1024, 0x61);
        oversized[0] = 0;
        oversized.writeUInt32BE(5 * 1024 * 1024, 1);
        const malformed = Buffer.alloc(64 * 1024, 0x61);
        malformed[0] = 7; // no such compressed flag
        const grpc = (path: string, auth?: string): Record<string, string> => ({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          te: 'trailers',
          ...(auth === undefined ? {} : { authorization: auth }),
        });
        const logins: StreamEnd[] = [];
        for (let i = 0; i < 132; i++) logins.push(await exchange(s, grpc('/ordersv1.Orders/Login'), oversized));
        t.assert(
          logins.every((e) => e.grpcStatus === '8'),
          `oversized Logins answered ${tally(logins, (e) => e.grpcStatus)}, expected RESOURCE_EXHAUSTED (8)`,
        );
        const others: StreamEnd[] = [];
        for (let i = 0; i < 20; i++) {
          others.push(await exchange(s, grpc('/ordersv1.Orders/CreateOrder'), oversized)); // no token: UNAUTHENTICATED before a byte is read
          others.push(await exchange(s, grpc('/ordersv1.Orders/CreateOrder', me.auth), malformed));
          others.push(
            await exchange(
              s,
              { ':method': 'POST', ':path': '/orders', 'content-type': 'application/json', authorization: me.auth },
              Buffer.alloc(2 * 1024 * 1024, 0x20),
            ),
          );
        }
        t.assert(
          others.filter((_, i) => i % 3 === 0).every((e) => e.grpcStatus === '16') &&
            others.filter((_, i) => i % 3 === 1).every((e) => e.grpcStatus === '3') &&
            others.filter((_, i) => i % 3 === 2).every((e) => e.status === '413'),
          `refused requests answered ${tally(others, (e) => `${e.status}/${e.grpcStatus}`)}`,
        );
        // 192 streams refused on this connection, more than its slots (32): all free again.
        const gets: StreamEnd[] = [];
        for (let i = 0; i < 3; i++) gets.push(await exchange(s, { ':method': 'GET', ':path': `/orders/${id}`, authorization: me.auth }));
        t.assert(
          gets.every((e) => e.status === '200'),
          `REST GETs on the same connection afterwards: ${tally(gets, (e) => e.status ?? `reset ${e.rstCode}`)}`,
        );
        const rpc = await exchange(s, grpc('/ordersv1.Orders/GetOrder', me.auth), grpcFrame(encodeRequest('GetOrder', { id })));
        t.assert(rpc.grpcStatus === '0', `GetOrder on the same connection afterwards: grpc-status ${rpc.grpcStatus}, reset ${rpc.rstCode}`);
      } finally {
        s.destroy();
      }
      // A real client (grpc-js, one channel): one refused 5 MiB message, then 100 calls on the same
      // channel, three times its slots, every one answered OK (a leaked slot made some fail with RESOURCE_EXHAUSTED).
      const refused = await t.driver.login({ username: 'x'.repeat(5 * 1024 * 1024), password: 'p' });
      t.check(refused, { grpc: { code: 'RESOURCE_EXHAUSTED' } }, 'a 5 MiB Login through grpc-js');
      const after = await Promise.all(Array.from({ length: 100 }, () => t.driver.getOrder(me.auth, id)));
      const failed = after.filter((r) => r.codeName !== 'OK');
      t.assert(
        failed.length === 0,
        `${failed.length} of 100 calls on the same channel failed: ${[...new Set(failed.map((r) => r.codeName))].join(', ')}`,
      );
    },
  ),

  flow(
    'refused-header-blocks-cost-the-connection',
    ['H2-header-refusals', 'H2-limits'],
    { transports: GRPC_ONLY, api: 'grpc' },
    async (t) => {
      const { host, port } = targetPort(t);
      // Oversized literal header blocks (20 KB > the 16 KiB list limit), then an HPACK bomb: each
      // connection is closed with GOAWAY ENHANCE_YOUR_CALM after a few refused blocks.
      const oversizedBlock = (): Buffer => Buffer.concat([GET_ROOT, literalHeader('x-big', Buffer.alloc(20_000, 0x62), false)]);
      const bombBlock = (first: boolean): Buffer =>
        Buffer.concat([
          GET_ROOT,
          first ? literalHeader('x-bomb', Buffer.alloc(4000, 0x62), true) : Buffer.alloc(0),
          newestEntryReferences(2_000),
        ]);
      for (const [kind, block] of [
        ['oversized', () => oversizedBlock()],
        ['bomb', (i: number) => bombBlock(i === 0)],
      ] as const) {
        const conn = await rawH2(host, port);
        let sent = 0;
        let closed = false;
        void conn.closed.then(() => (closed = true));
        // At most 200 blocks, 5 ms apart: the server looks at refusals every 10 ms.
        while (!closed && sent < 200) {
          conn.write(headersFrame(1 + 2 * sent, block(sent)));
          sent += 1;
          await t.sleep(5);
        }
        // However long the server takes to look (a connection never closed is what the case refutes: the hang guard ends that wait).
        await settled(conn.closed, `the connection sent ${kind} header blocks to be closed`);
        conn.socket.destroy();
        t.assert(
          conn.goaway() === h2.NGHTTP2_ENHANCE_YOUR_CALM,
          `${kind} header blocks: GOAWAY ${String(conn.goaway())}, expected ENHANCE_YOUR_CALM (11)`,
        );
      }
      // Another connection is served as usual.
      const { me, id } = await t.userWithOrder();
      t.check(await t.via('rest-h2c').getOrder(me.auth, id), { http: { status: 200 } }, 'REST GET on a new connection');
    },
  ),

  // Servers of its own in the test process, with bounds shorter than the service's: the target plays no
  // part, so it runs once, on the fake column.
  flow('answers-nobody-takes-are-bounded', ['H2-write-budget'], { transports: GRPC_ONLY, api: 'grpc', backends: ['fake'] }, async (t) => {
    // The one-port server with the real guard, REST answers of 64 KB, clients with a zero flow-control
    // window: nothing they asked for can be sent. Each bound on a server of its own, whose other bounds
    // cannot come while the case waits (NEVER), so what ends each wait is the bound under test.
    const answer = Buffer.alloc(64 * 1024, 0x61);
    const rest = (_req: unknown, res: { end(body: Buffer): void }): void => res.end(answer);
    const fronts: OnePortServer[] = [];
    const serve = async (guard: Http2Limits): Promise<string> => {
      const front = createOnePortServer({ grpc: () => undefined, rest: rest as never, http2Limits: guard });
      fronts.push(front);
      return `http://127.0.0.1:${await listenLocal(front.server)}`;
    };
    const NEVER = { ms: 10 * HANG_GUARD_MS, bytes: 1024 ** 3 } as const;
    const get = { ':method': 'GET', ':path': '/big' };
    const goawayOf = (s: ClientHttp2Session): Promise<number | undefined> =>
      new Promise((resolve) => {
        let code: number | undefined;
        s.once('goaway', (c: number) => (code = c));
        s.once('close', () => resolve(code));
      });
    try {
      // Under the bounds: the answers wait; past the write deadline the session is closed.
      const deadline = await serve({ streamWriteMs: 300, queuedSoftBytes: NEVER.bytes, queuedHardBytes: NEVER.bytes });
      const idle = await h2session(deadline, { initialWindowSize: 0 });
      const idleClosed = goawayOf(idle);
      const waited = await Promise.all([exchange(idle, get), exchange(idle, get)]);
      t.assert(
        (await idleClosed) === h2.NGHTTP2_ENHANCE_YOUR_CALM,
        `answers untaken past the deadline: GOAWAY ${String(await idleClosed)}, expected ENHANCE_YOUR_CALM (11); streams ${tally(waited, (e) => e.rstCode)}`,
      );
      // Over the soft bound (4 x 64 KB queued): once the guard has looked, a new stream is refused,
      // unprocessed (REFUSED_STREAM). Streams are opened one by one, a guard's tick apart, until one is.
      const soft = await serve({ streamWriteMs: NEVER.ms, queuedSoftBytes: 200 * 1024, queuedHardBytes: NEVER.bytes });
      const slow = await h2session(soft, { initialWindowSize: 0 });
      const queued = [exchange(slow, get), exchange(slow, get), exchange(slow, get), exchange(slow, get)];
      let outcome: 'answered' | 'refused' | 'other' = 'answered';
      for (let opened = 0; opened < 50 && outcome === 'answered'; opened++) {
        await t.sleep(HTTP2_GUARD_TICK_MS);
        outcome = await answeredOrRefused(slow, get);
      }
      t.assert(outcome === 'refused', `a stream opened over the soft bound ended ${outcome}, expected REFUSED_STREAM (7)`);
      slow.destroy();
      await Promise.all(queued);
      // Over the hard bound at once (8 running x 64 KB): GOAWAY ENHANCE_YOUR_CALM, the connection closed.
      const hard = await serve({ streamWriteMs: NEVER.ms, queuedSoftBytes: NEVER.bytes, queuedHardBytes: 400 * 1024 });
      const greedy = await h2session(hard, { initialWindowSize: 0 });
      const greedyClosed = goawayOf(greedy);
      const burst = await Promise.all(Array.from({ length: 12 }, () => exchange(greedy, get)));
      t.assert(
        (await greedyClosed) === h2.NGHTTP2_ENHANCE_YOUR_CALM,
        `12 untaken answers: GOAWAY ${String(await greedyClosed)}, expected ENHANCE_YOUR_CALM (11); streams ${tally(burst, (e) => e.rstCode)}`,
      );
      // A client that reads is served in full.
      const reader = await h2session(hard);
      const read = await exchange(reader, get);
      reader.destroy();
      t.assert(read.status === '200' && read.rstCode === h2.NGHTTP2_NO_ERROR, `a reading client got ${read.status}, reset ${read.rstCode}`);
    } finally {
      await Promise.all(fronts.map((front) => front.shutdown()));
    }
  }),

  // Its own instance without a rate limit: 30 + 100 requests at once would meet another target's limit first.
  flow(
    'pipelined-requests-are-answered-in-order-one-at-a-time',
    ['HTTP1-pipeline-bound'],
    { api: 'rest', connection: true, target: { env: { RATE_LIMIT_RPS: '1000000' } } },
    async (t) => {
      const { me } = await t.userWithOrder();
      const ids = [await t.order(me, 'first'), await t.order(me, 'second'), await t.order(me, 'third')];
      // 30 pipelined requests in one write, answered in order, each with its own order.
      const socket = await tcp(t.target.baseUrl);
      const host = new URL(t.target.baseUrl).host;
      const requests = Array.from(
        { length: 30 },
        (_, i) => `GET /orders/${ids[i % 3]} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${me.auth}\r\n\r\n`,
      );
      const answers = readResponses(socket, 30);
      socket.write(requests.join(''));
      const { statuses, bodies } = await answers;
      socket.destroy();
      t.assert(
        statuses.length === 30 && statuses.every((s) => s === 200),
        `30 pipelined GETs answered ${statuses.length}: ${[...new Set(statuses)].join(',')}`,
      );
      const items = bodies.map((b) => (JSON.parse(b) as { item: string }).item);
      t.assert(
        items.every((item, i) => item === ['first', 'second', 'third'][i % 3]),
        `answers out of order: ${items.slice(0, 6).join(',')}...`,
      );
      // Deeper than 32 behind one running request: the connection is closed, not buffered.
      const deep = await tcp(t.target.baseUrl);
      const deepAnswers = readResponses(deep, 100);
      deep.write(Array.from({ length: 100 }, () => requests[0]).join(''));
      const outcome = await deepAnswers;
      deep.destroy();
      t.assert(
        outcome.closed && outcome.statuses.length < 100,
        `100 pipelined requests: ${outcome.statuses.length} answered, connection ${outcome.closed ? 'closed' : 'open'}`,
      );
    },
  ),

  flow(
    'connections-past-the-cap-are-closed',
    ['LIMIT-connections'],
    { api: 'rest', connection: true, target: { env: { HTTP_MAX_CONNECTIONS: '8' } } },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const host = new URL(t.target.baseUrl).host;
      const get = `GET /orders/${id} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${me.auth}\r\n\r\n`;
      const held: Socket[] = [];
      const ended = new Set<Socket>();
      try {
        for (let i = 0; i < 12; i++) {
          const socket = await tcp(t.target.baseUrl);
          socket.resume();
          socket.once('end', () => ended.add(socket));
          held.push(socket);
        }
        // Node closes what it accepts past the cap at once (the driver's own connection counts too).
        await t.waitFor(() => ended.size >= 4, 'connections past the cap closed');
        await t.sleep(200);
        t.assert(held.length - ended.size <= 8, `${held.length - ended.size} of 12 connections still open, cap 8`);
        // A connection that was kept is served.
        const kept = held.find((s) => !ended.has(s))!;
        const served = readResponses(kept, 1);
        kept.write(get);
        t.assert((await served).statuses[0] === 200, 'a request on a kept connection was not answered 200');
        // Closing them frees places: a new connection is served again, once the server has seen them close
        // (tried until one is; a place never freed is what the case refutes, and the hang guard ends that).
        for (const s of held) s.destroy();
        await until(async () => {
          const socket = await tcp(t.target.baseUrl);
          const answer = readResponses(socket, 1);
          socket.write(get);
          const status = (await answer).statuses[0];
          socket.destroy();
          return status === 200;
        }, 'a new connection served after the others closed');
      } finally {
        for (const s of held) s.destroy();
      }
    },
  ),
];

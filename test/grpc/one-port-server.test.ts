import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { connect as h2connect, constants as h2, type ClientHttp2Session } from 'node:http2';
import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GetOrderRequestSchema as Empty, OrderSchema } from '../../src/gen/ordersv1/orders_pb.js';
import { h2session } from '../../conformance/cases/one-port-attacks.ts';
import { encodeRequest } from '../../conformance/drivers/grpc.ts';
import type { HealthReport } from '../../src/lifecycle/checker.ts';
import type { Principal } from '../../src/service/authenticate.ts';
import { createHealthMethods } from '../../src/transports/grpc/health-service.ts';
import { restHttp1Side } from '../../src/transports/grpc/grpc-transport.ts';
import {
  createOnePortServer,
  createUnaryServer,
  HTTP2_ACTIVE_STREAMS,
  HTTP2_MAX_HEADER_LIST_BYTES,
  HTTP2_RESET_ALLOWANCE,
  HTTP2_STREAM_WRITE_TIMEOUT_MS,
  STOP_GRACE_MS,
  STOP_QUIET_MS,
  type AnyRequestHandler,
  type OnePortServer,
  type ServerStreamMethod,
  type UnaryMethod,
} from '../../packages/one-port-grpc/index.ts';
import { grpcFrame, rawGrpc } from './raw-grpc.ts';
import { settled, settlesBefore, until } from '../support/eventually.ts';
import { listenLocal } from '../support/ports.ts';
import { selfSignedCert } from '../support/self-signed-cert.ts';

/** What every prior-knowledge HTTP/2 connection starts with (RFC 9113 section 3.4). */
const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

const HEALTH_PROTO = join(import.meta.dirname, '..', '..', 'proto', 'grpc', 'health', 'v1', 'health.proto');
type Reply = { status: string };
type HealthClient = grpc.Client & {
  Check(req: { service: string }, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r?: Reply) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<Reply>;
};

function healthClient(address: string): HealthClient {
  const definition = protoLoader.loadSync(HEALTH_PROTO, { enums: String, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } };
  };
  return new loaded.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
}

/**
 * Records the calls node:net makes to set TCP_NODELAY (Nagle's algorithm off) on a connection's handle,
 * the libuv TCP handle every TCP socket shares: `noDelayOn(handle)` says whether it was turned on for that
 * one. Nagle only delays small writes behind an unacknowledged one, so the option itself is what a test
 * can see without timing the wire.
 */
function recordNoDelay() {
  type TcpHandle = { setNoDelay(enable: boolean): number };
  // A client socket gets its handle as it starts connecting; this one is dropped at once.
  const probe = netConnect(9, '127.0.0.1');
  probe.on('error', () => undefined);
  const handles = Object.getPrototypeOf((probe as unknown as { _handle: TcpHandle })._handle) as TcpHandle;
  probe.destroy();
  const spy = vi.spyOn(handles, 'setNoDelay');
  return {
    noDelayOn: (handle: unknown): boolean => spy.mock.contexts.some((context, i) => context === handle && spy.mock.calls[i]![0] === true),
    restore: () => spy.mockRestore(),
  };
}
/** The libuv handle of a socket, for recordNoDelay (null once destroyed). */
const handleOf = (socket: Socket): unknown => (socket as unknown as { _handle: unknown })._handle;

/**
 * One one-port server (no app around it) whose gRPC side serves grpc.health.v1 over a switchable
 * readiness report, and two test methods: /t.T/Park parks until its done signal aborts, /t.T/Echo
 * answers at once. Every started Park and every abort is counted, so the HTTP/2 tests see work start
 * and stop instead of timing it.
 */
let front: OnePortServer;
let grpcHandler: ReturnType<typeof createUnaryServer<Principal>>;
let origin: string;
let client: HealthClient;
let clean = false;
let started = 0;
let aborted = 0;
let restRequests = 0;
const waiters: Array<() => void> = [];
let lateSend = Promise.withResolvers<string>();
let holdAborted = Promise.withResolvers<void>();
const untilStarted = async (n: number): Promise<void> => {
  while (started < n) await new Promise<void>((resolve) => waiters.push(resolve));
};

beforeAll(async () => {
  const readiness = async (): Promise<HealthReport> => ({ clean, nodes: [{ name: 'api', status: clean ? 'ok' : 'unavailable' }] });
  const park: UnaryMethod<Principal> = {
    input: Empty,
    output: OrderSchema,
    handle: (_req, call) =>
      new Promise((_resolve, reject) => {
        started += 1;
        for (const wake of waiters.splice(0)) wake();
        call.signal.addEventListener('abort', () => {
          aborted += 1;
          reject(new Error('aborted'));
        });
      }),
  };
  const echo: UnaryMethod<Principal> = { input: Empty, output: OrderSchema, handle: async () => create(OrderSchema, { id: 'ok' }) };
  // The caller's peer address, as the handler sees it, in the reply's id.
  const peer: UnaryMethod<Principal> = {
    input: Empty,
    output: OrderSchema,
    handle: async (_req, call) => create(OrderSchema, { id: call.peer }),
  };
  const stream = (handle: ServerStreamMethod<Principal>['handle']): ServerStreamMethod<Principal> => ({
    kind: 'server-stream',
    input: Empty,
    output: OrderSchema,
    handle,
  });
  const order = (id: string) => create(OrderSchema, { id });
  const streams: Array<[string, ServerStreamMethod<Principal>]> = [
    // Two messages, then the end of the handler: OK in the trailers.
    [
      '/t.T/Count',
      stream(async (_req, _call, send) => {
        send(order('1'));
        send(order('2'));
      }),
    ],
    // Throws before its first message: a trailers-only answer with toStatus's status.
    [
      '/t.T/Fail',
      stream(async () => {
        throw new Error('boom');
      }),
    ],
    // One message, then throws: the status in the trailers.
    [
      '/t.T/SendThenFail',
      stream(async (_req, _call, send) => {
        send(order('1'));
        throw new Error('boom');
      }),
    ],
    // One message, then another once its call has ended (its deadline passed): what that `send` did is
    // kept in `lateSend`.
    [
      '/t.T/Late',
      stream(async (_req, call, send) => {
        send(order('1'));
        await new Promise((resolve) => call.signal.addEventListener('abort', resolve));
        try {
          send(order('late'));
          lateSend.resolve('ignored');
        } catch (error) {
          lateSend.resolve(`threw ${String(error)}`);
        }
      }),
    ],
    // One message, then waits for its done signal, which `holdAborted` reports.
    [
      '/t.T/Hold',
      stream(async (_req, call, send) => {
        send(order('held'));
        await new Promise((resolve) => call.signal.addEventListener('abort', resolve));
        holdAborted.resolve();
      }),
    ],
  ];
  grpcHandler = createUnaryServer<Principal>({
    methods: new Map([...createHealthMethods(readiness, 20), ['/t.T/Park', park], ['/t.T/Echo', echo], ['/t.T/Peer', peer], ...streams]),
    authenticate: () => undefined,
    toStatus: () => ({ code: 13, message: 'internal server error' }),
  });
  front = createOnePortServer({
    grpc: grpcHandler,
    rest: (_req, res) => {
      restRequests += 1;
      res.end('rest');
    },
  });
  origin = `http://127.0.0.1:${await listenLocal(front.server)}`;
  client = healthClient(new URL(origin).host);
});
afterAll(async () => {
  client?.close();
  await front?.shutdown();
});

/**
 * grpc.health.v1 through @grpc/grpc-js with the .proto loaded at run time (rule GRPC-health): Watch, and
 * Check following a switchable report. Check on the real public port, its NOT_FOUND for another name and
 * its agreement with /readyz are conformance/cases/one-port-attacks.ts (grpc-health-check-…).
 */
describe('health follows the readiness report (a switchable report behind the same server)', () => {
  it('Check is NOT_SERVING while the report is not clean, SERVING once it is; Watch sends each change', async () => {
    const check = (): Promise<string> =>
      new Promise((resolve) =>
        client.Check({ service: '' }, new grpc.Metadata(), (e, r) => resolve(e === null ? r!.status : String(e.code))),
      );
    expect(await check()).toBe('NOT_SERVING');
    const call = client.Watch({ service: 'ordersv1.Orders' });
    call.on('error', () => undefined);
    const seen: string[] = [];
    const twoSeen = new Promise<void>((resolve) =>
      call.on('data', (reply: Reply) => {
        seen.push(reply.status);
        if (seen.length === 1) clean = true;
        if (seen.length === 2) resolve();
      }),
    );
    await twoSeen;
    call.cancel();
    expect(seen).toEqual(['NOT_SERVING', 'SERVING']);
    expect(await check()).toBe('SERVING');
  });

  it('Watch sends the current status at once, and SERVICE_UNKNOWN for an unknown name; cancelling ends it', async () => {
    for (const [service, expected] of [
      ['', 'SERVING'],
      ['nope.Nope', 'SERVICE_UNKNOWN'],
    ] as const) {
      const call = client.Watch({ service });
      const first = await new Promise<string>((resolve, reject) => {
        call.once('data', (reply: Reply) => resolve(reply.status));
        call.once('error', reject);
      });
      expect(first, service).toBe(expected);
      const ended = new Promise<string>((resolve) => call.once('error', (e: grpc.ServiceError) => resolve(grpc.status[e.code])));
      call.cancel();
      expect(await ended).toBe('CANCELLED');
    }
  });

  it('a server stream past its grpc-timeout: Watch with 200m sends its first message, then ends DEADLINE_EXCEEDED in the trailers', async () => {
    clean = true;
    const reply = await rawGrpc(origin, '/grpc.health.v1.Health/Watch', grpcFrame(new Uint8Array()), { 'grpc-timeout': '200m' });
    expect([reply.grpcStatus, reply.grpcMessage]).toEqual(['4', 'deadline exceeded']);
    expect([...reply.body]).toEqual([0, 0, 0, 0, 2, 0x08, 0x01]); // one message: SERVING
  });
});

/**
 * The one-port server's HTTP/2 limits and cancellation. SETTINGS_MAX_CONCURRENT_STREAMS
 * and trickling streams reset at the deadline are conformance/cases/one-port-attacks.ts
 * (finite-concurrent-streams-…, http2-stream-and-idle-…).
 */
describe('HTTP/2 limits and cancellation on the one-port server', () => {
  const session = (): Promise<ClientHttp2Session> => h2session(origin);
  const message = grpcFrame(encodeRequest('GetOrder', { id: 'x' }));
  const open = (s: ClientHttp2Session, path: string) => {
    const stream = s.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => undefined);
    return stream;
  };

  it('a header list above the limit is refused, and the server still answers', async () => {
    const s = await session();
    try {
      const stream = s.request({ ':method': 'GET', ':path': '/', 'x-big': 'a'.repeat(HTTP2_MAX_HEADER_LIST_BYTES + 1) });
      const outcome = await new Promise<string>((resolve) => {
        stream.once('response', (h) => resolve(String(h[':status'])));
        stream.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
        stream.once('close', () => resolve(`closed ${stream.rstCode}`));
      });
      expect(outcome).not.toBe('200');
    } finally {
      s.destroy();
    }
    expect((await rawGrpc(origin, '/t.T/Echo', message)).grpcStatus).toBe('0');
  });

  it('work for a call stops when the client resets its stream, and a client’s backlog does not outlive its connection', async () => {
    const s = await session();
    const before = { started, aborted };
    const reset = open(s, '/t.T/Park');
    reset.end(message);
    await untilStarted(before.started + 1);
    reset.close(h2.NGHTTP2_CANCEL);
    await new Promise((resolve) => reset.once('close', resolve));
    while (aborted < before.aborted + 1) await new Promise((resolve) => setImmediate(resolve));
    expect(aborted - before.aborted).toBe(1);
    // Closing the connection aborts every call it had in flight. A session runs HTTP2_ACTIVE_STREAMS at
    // once (rule H2-write-budget), the other parked calls wait; whichever of them start while the
    // connection's streams close are aborted with it too.
    for (let i = 0; i < 20; i++) open(s, '/t.T/Park').end(message);
    await untilStarted(before.started + 1 + HTTP2_ACTIVE_STREAMS);
    s.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 10_000 && aborted - before.aborted < started - before.started; i++)
      await new Promise((resolve) => setImmediate(resolve));
    expect(started - before.started).toBeGreaterThanOrEqual(1 + HTTP2_ACTIVE_STREAMS);
    expect(aborted - before.aborted).toBe(started - before.started);
  });

  it('rapid reset: HEADERS then RST_STREAM, over and over, gets GOAWAY ENHANCE_YOUR_CALM; the reset streams mostly never reach a handler', async () => {
    const s = await session();
    const before = { started, rest: restRequests };
    const goaway = new Promise<number>((resolve) => s.once('goaway', (code: number) => resolve(code)));
    const closed = new Promise((resolve) => s.once('close', resolve));
    let sent = 0;
    // Bounded: the allowance is 64; a few hundred is plenty, and the loop stops at the GOAWAY.
    let stop = false;
    void goaway.then(() => (stop = true));
    for (let i = 0; i < 600 && !stop && !s.destroyed && !s.closed; i++) {
      const stream = i % 2 === 0 ? open(s, '/t.T/Park') : s.request({ ':method': 'GET', ':path': '/orders' });
      stream.on('error', () => undefined);
      stream.close(h2.NGHTTP2_CANCEL);
      sent += 1;
      if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
    await closed;
    expect(sent).toBeGreaterThan(HTTP2_RESET_ALLOWANCE);
    // Started work is a small fraction of the resets (deferred dispatch sees most streams already gone).
    expect(started - before.started + restRequests - before.rest).toBeLessThan(sent / 2);
    // And the server is there for the next client.
    expect((await rawGrpc(origin, '/t.T/Echo', message)).grpcStatus).toBe('0');
  });

  it('a client that completes its calls is never cut for occasional resets', async () => {
    const s = await session();
    try {
      for (let i = 0; i < 3 * HTTP2_RESET_ALLOWANCE; i++) {
        const stream = open(s, i % 3 === 0 ? '/t.T/Park' : '/t.T/Echo');
        stream.on('data', () => undefined);
        stream.end(message);
        if (i % 3 === 0) stream.close(h2.NGHTTP2_CANCEL);
        await new Promise((resolve) => stream.once('close', resolve));
      }
      expect(s.destroyed || s.closed).toBe(false);
    } finally {
      s.destroy();
    }
  });
});

/**
 * The unary server's own answers, on raw HTTP/2: its refusal of a path it does not serve, the headers,
 * messages and trailers of server streams (grpc.health.v1 Watch is the product's only one), and what
 * the handler is told of its caller and of its call's end (rules GRPC-service, GRPC-cancel).
 */
describe('the unary server: unknown paths, server streams, peer and done signal', () => {
  it('a path it does not serve is UNIMPLEMENTED `unknown service or method` (GRPC-no-reflection)', async () => {
    const reply = await rawGrpc(origin, '/t.T/NoSuchMethod', grpcFrame(new Uint8Array()));
    expect([reply.httpStatus, reply.grpcStatus, reply.grpcMessage]).toEqual([200, '12', 'unknown service or method']);
  });

  it('a server stream that ends: protobuf headers with its first message, its messages, then grpc-status 0 and no grpc-message', async () => {
    // The deadline only bounds a stream whose end is never written (it would be DEADLINE_EXCEEDED).
    const reply = await rawGrpc(origin, '/t.T/Count', grpcFrame(new Uint8Array()), { 'grpc-timeout': '1S' });
    expect([reply.httpStatus, reply.headers['content-type'], reply.headers['grpc-accept-encoding']]).toEqual([
      200,
      'application/grpc+proto',
      'gzip',
    ]);
    expect([reply.grpcStatus, reply.grpcMessage]).toEqual(['0', undefined]);
    expect([...reply.body]).toEqual([0, 0, 0, 0, 3, 0x0a, 0x01, 0x31, 0, 0, 0, 0, 3, 0x0a, 0x01, 0x32]);
  });

  it('a server stream whose handler throws is answered with its status: trailers-only before any message, in the trailers after one', async () => {
    // The deadlines only bound a stream whose end is never written (it would be DEADLINE_EXCEEDED).
    const before = await rawGrpc(origin, '/t.T/Fail', grpcFrame(new Uint8Array()), { 'grpc-timeout': '1S' });
    expect([before.grpcStatus, before.grpcMessage, before.body.length]).toEqual(['13', 'internal server error', 0]);
    const after = await rawGrpc(origin, '/t.T/SendThenFail', grpcFrame(new Uint8Array()), { 'grpc-timeout': '1S' });
    expect([after.headers['content-type'], after.grpcStatus, after.grpcMessage]).toEqual([
      'application/grpc+proto',
      '13',
      'internal server error',
    ]);
    expect([...after.body]).toEqual([0, 0, 0, 0, 3, 0x0a, 0x01, 0x31]);
  });

  it('a message a server stream sends after its call ended (past its deadline) is dropped, not written to the ended stream', async () => {
    lateSend = Promise.withResolvers<string>();
    const reply = await rawGrpc(origin, '/t.T/Late', grpcFrame(new Uint8Array()), { 'grpc-timeout': '50m' });
    // The first message, then the deadline's status in the trailers: the late message neither reaches the
    // client nor breaks the stream its trailers are still being written on.
    expect([reply.grpcStatus, reply.grpcMessage]).toEqual(['4', 'deadline exceeded']);
    expect([...reply.body]).toEqual([0, 0, 0, 0, 3, 0x0a, 0x01, 0x31]);
    expect(await lateSend.promise).toBe('ignored');
  });

  it('the deadline aborts the call’s work at once, even when its answer cannot reach a client that reads nothing (GRPC-cancel)', async () => {
    holdAborted = Promise.withResolvers<void>();
    // A flow-control window of 0: the stream's message, and so its trailers, stay queued on the server.
    const s = h2connect(origin, { settings: { initialWindowSize: 0 } });
    s.on('error', () => undefined);
    try {
      const stream = s.request({
        ':method': 'POST',
        ':path': '/t.T/Hold',
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': '50m',
      });
      stream.on('error', () => undefined);
      stream.end(grpcFrame(new Uint8Array()));
      // The 50 ms deadline, before the session's own guard on the queued answer (H2-write-budget) would end it.
      expect(await settlesBefore(holdAborted.promise, HTTP2_STREAM_WRITE_TIMEOUT_MS)).toBe(true);
    } finally {
      s.destroy();
    }
  });

  it('the handler is told its caller’s address, `unknown` when the connection has none (a Unix socket)', async () => {
    expect((await rawGrpc(origin, '/t.T/Peer', grpcFrame(new Uint8Array()))).body.subarray(7).toString()).toBe('127.0.0.1');
    const dir = mkdtempSync(join(tmpdir(), 'orders-peer-'));
    const socketPath = join(dir, 'grpc.sock');
    const local = createOnePortServer({ grpc: grpcHandler, rest: (_req, res) => res.end('rest') });
    try {
      await new Promise<void>((resolve) => local.server.listen(socketPath, resolve));
      const s = h2connect('http://localhost', { createConnection: () => netConnect(socketPath) });
      s.on('error', () => undefined);
      try {
        const body = await new Promise<Buffer>((resolve, reject) => {
          const stream = s.request({ ':method': 'POST', ':path': '/t.T/Peer', 'content-type': 'application/grpc', te: 'trailers' });
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.once('error', reject);
          stream.once('close', () => resolve(Buffer.concat(chunks)));
          stream.end(grpcFrame(new Uint8Array()));
        });
        expect(body.subarray(7).toString()).toBe('unknown');
      } finally {
        s.destroy();
      }
    } finally {
      await local.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The one-port server's stop (rule LIFE-4-shutdown: no reset of work in flight), each on a server of its
 * own started in the test: a raw handler on each side that answers `/hold` only when the test says, so a
 * call can be held in flight across the stop. Orders, not durations: a bound the stop enforces with its
 * own timer is seen before the longer one that would end the same work if it were lost (settlesBefore).
 */
describe('the one-port server’s stop (rule LIFE-4-shutdown)', () => {
  async function stoppable(graceMs: number) {
    const held: Array<() => void> = [];
    const hold = (path: string | undefined, res: { end: (body: string) => unknown }): void => {
      if (path === '/hold') held.push(() => res.end('done'));
      else res.end('answered');
    };
    const rest: AnyRequestHandler = (req, res) => hold(req.url, res);
    // orders-grpc's HTTP/1.1 side, drained as the executable drains it.
    const port = createOnePortServer({ grpc: (req, res) => hold(req.url, res), rest, http1: restHttp1Side(rest), graceMs });
    const accepted: Socket[] = [];
    port.server.on('connection', (socket: Socket) => accepted.push(socket));
    const origin = `http://127.0.0.1:${await listenLocal(port.server)}`;
    return { port, origin, held, accepted };
  }
  const holdOver = (s: ClientHttp2Session) => {
    const stream = s.request({ ':method': 'POST', ':path': '/hold', 'content-type': 'application/grpc' });
    stream.on('error', () => undefined);
    stream.end();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    return new Promise<string>((resolve) => stream.once('close', () => resolve(`${stream.rstCode} ${Buffer.concat(chunks).toString()}`)));
  };
  /** A raw HTTP/1.1 connection that sent `request`; resolves with what it received once it closed. */
  const http1 = (origin: string, request: string) => {
    const socket = netConnect(Number(new URL(origin).port), '127.0.0.1');
    socket.on('error', () => undefined);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(request);
    return { socket, closed: new Promise<string>((resolve) => socket.once('close', () => resolve(Buffer.concat(chunks).toString()))) };
  };

  it('an open HTTP/2 session gets GOAWAY at once; its call in flight still completes, and only then does the stop resolve', async () => {
    const graceMs = 10_000;
    const { port, origin, held } = await stoppable(graceMs);
    const s = await h2session(origin);
    try {
      const call = holdOver(s);
      await until(() => held.length === 1, 'the held call');
      // An HTTP/1.1 keep-alive connection that carries no request is closed once quiet (restHttp1Side's drain).
      const idle = http1(origin, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => idle.socket.bytesRead > 0, 'the HTTP/1.1 answer');
      let stopped = false;
      const stop = port.shutdown().then(() => (stopped = true));
      const goaway = new Promise((resolve) => s.once('goaway', resolve));
      // At once: before the grace's end, which would close the session too.
      expect(await settlesBefore(goaway, graceMs)).toBe(true);
      expect(stopped).toBe(false);
      held[0]!();
      expect(await call).toBe('0 done');
      // Once nothing is left (the idle HTTP/1.1 connection quiet, the call done), not at the grace's end.
      expect(await settlesBefore(stop, graceMs)).toBe(true);
      expect(await idle.closed).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      s.destroy();
      await port.shutdown();
    }
  });

  it('whatever is still open when the grace ends is cut: a held HTTP/2 call, a held HTTP/1.1 request, a connection still trickling the preface', async () => {
    const { port, origin, held, accepted } = await stoppable(100);
    const s = await h2session(origin);
    const trickle = netConnect(Number(new URL(origin).port), '127.0.0.1');
    trickle.on('error', () => undefined);
    let sent = 0;
    // One byte of the preface every 100 ms: never silent long enough to be dropped as idle, and well
    // short of the whole preface when the 100 ms grace ends.
    const pace = setInterval(() => trickle.write(HTTP2_PREFACE.subarray(sent, ++sent)), 100);
    try {
      const call = holdOver(s);
      const request = http1(origin, 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => held.length === 2 && accepted.length === 3, 'the held calls and the trickling connection');
      const trickled = new Promise((resolve) => trickle.once('close', resolve));
      // The 100 ms grace, before the default one (STOP_GRACE_MS) would end the same stop.
      expect(await settlesBefore(port.shutdown(), STOP_GRACE_MS)).toBe(true);
      await settled(Promise.all([trickled, call, request.closed]), 'every cut connection closed on the client');
      expect(sent).toBeLessThan(HTTP2_PREFACE.length);
      expect(await call).not.toMatch(/done$/);
      expect(await request.closed).toBe('');
    } finally {
      clearInterval(pace);
      trickle.destroy();
      s.destroy();
    }
  });

  it('a connection accepted before the stop whose HTTP/2 session starts during it is sent GOAWAY at once', async () => {
    const graceMs = 10_000;
    const { port, origin, accepted } = await stoppable(graceMs);
    const socket = netConnect(Number(new URL(origin).port), '127.0.0.1');
    await until(() => accepted.length === 1, 'the accepted connection');
    const stop = port.shutdown();
    const s = h2connect(origin, { createConnection: () => socket });
    s.on('error', () => undefined);
    try {
      const goaway = new Promise((resolve) => s.once('goaway', resolve));
      // At once, and the stop with it: before the grace's end, which would close the session too.
      expect(await settlesBefore(goaway, graceMs)).toBe(true);
      expect(await settlesBefore(stop, graceMs)).toBe(true);
    } finally {
      s.destroy();
      await stop;
    }
  });
});

/**
 * The stop's sweep of connections still being sniffed, on a fake clock (Date and the stop's timers; I/O
 * and setImmediate stay real): one that never sent a byte is dropped once it has been silent as long as
 * an idle keep-alive connection may be (STOP_QUIET_MS), not before; the stop leaves no timer.
 */
describe('the one-port stop drops a silent sniffed connection (rules LIFE-4-shutdown, ONEPORT-h1-h2c)', () => {
  afterEach(() => vi.useRealTimers());

  it('silent for the quiet time exactly: dropped; a sweep before: left; the stop then resolves with no timer left', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const port = createOnePortServer({ grpc: (_req, res) => res.end(), rest: (_req, res) => res.end(), graceMs: 10_000 });
    const accepted: Socket[] = [];
    port.server.on('connection', (socket: Socket) => accepted.push(socket));
    const silent = netConnect(await listenLocal(port.server), '127.0.0.1');
    silent.on('error', () => undefined);
    try {
      while (accepted.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const stop = port.shutdown();
      /** Moves the clock by `ms`, then lets the sweeps due run (each waits for the poll phase first). */
      const step = async (ms: number): Promise<void> => {
        await vi.advanceTimersByTimeAsync(ms);
        await new Promise((resolve) => setImmediate(resolve));
      };
      await step(STOP_QUIET_MS - 50);
      expect(accepted[0]!.destroyed).toBe(false);
      await step(50);
      expect(accepted[0]!.destroyed).toBe(true);
      await stop;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      silent.destroy();
    }
  });
});

/**
 * Behind TLS (rule ONEPORT-tls): ALPN picks the protocol per connection, h2 to the HTTP/2 server (gRPC and
 * REST by request), http/1.1 to the HTTP/1.1 one; the stop cuts the TLS connections after the grace too.
 * A self-signed certificate made with the openssl CLI, as conformance's tls-alpn case does.
 */
describe('the one-port server behind TLS (rule ONEPORT-tls)', () => {
  it('ALPN h2 carries gRPC and REST, ALPN http/1.1 reaches REST; the stop cuts what is left after the grace', async () => {
    const { dir, certFile, keyFile } = selfSignedCert();
    const ca = readFileSync(certFile);
    let held = 0;
    const local = createOnePortServer({
      grpc: (req, res) => (req.url === '/hold' ? (held += 1) : grpcHandler(req, res)),
      rest: (_req, res) => res.end('rest'),
      tls: { cert: ca, key: readFileSync(keyFile) },
      graceMs: 100,
    });
    // Every TCP connection the TLS front accepts, by its handle: Nagle is off on each (recordNoDelay).
    const tcp: unknown[] = [];
    local.server.on('connection', (socket: Socket) => tcp.push(handleOf(socket)));
    const nagle = recordNoDelay();
    const port = await listenLocal(local.server);
    const s = h2connect(`https://127.0.0.1:${port}`, { ca });
    s.on('error', () => undefined);
    const silent = netConnect(port, '127.0.0.1');
    silent.on('error', () => undefined);
    try {
      const h2Request = (headers: Record<string, string>) =>
        new Promise<{ status: unknown; grpcStatus: unknown; body: string }>((resolve) => {
          const stream = s.request(headers);
          stream.on('error', () => undefined);
          const chunks: Buffer[] = [];
          let head: Record<string, unknown> = {};
          stream.once('response', (h) => (head = h));
          stream.once('trailers', (t) => (head = { ...head, ...t }));
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.once('close', () =>
            resolve({ status: head[':status'], grpcStatus: head['grpc-status'], body: Buffer.concat(chunks).toString() }),
          );
          stream.end(headers['content-type'] === undefined ? undefined : grpcFrame(new Uint8Array()));
        });
      const grpcCall = { ':method': 'POST', ':path': '/t.T/Echo', 'content-type': 'application/grpc', te: 'trailers' };
      const echo = h2Request(grpcCall);
      await settled(echo, 'the gRPC echo over h2 and TLS');
      expect((await echo).grpcStatus).toBe('0');
      expect(s.alpnProtocol).toBe('h2');
      expect(await h2Request({ ':method': 'GET', ':path': '/' })).toEqual({ status: 200, grpcStatus: undefined, body: 'rest' });
      const http1 = new Promise<{ body: string; alpn: unknown }>((resolve, reject) => {
        // ALPN is a TLS connection option, which https passes through to tls.connect.
        const options: RequestOptions & Pick<ConnectionOptions, 'ALPNProtocols'> = {
          host: '127.0.0.1',
          port,
          path: '/',
          ca,
          ALPNProtocols: ['http/1.1'],
          agent: false,
        };
        const req = httpsRequest(options, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += String(chunk)));
          res.once('end', () => resolve({ body, alpn: (res.socket as TLSSocket).alpnProtocol }));
        });
        req.on('error', reject).end();
      });
      await settled(http1, 'the REST answer over https with ALPN http/1.1');
      expect(await http1).toEqual({ body: 'rest', alpn: 'http/1.1' });
      // The h2 one, the https one (whose http server would not set it), the one that never starts its handshake.
      await until(() => tcp.length === 3, 'the three connections accepted');
      expect(tcp.map((handle) => nagle.noDelayOn(handle))).toEqual([true, true, true]);
      // Left open at the stop: a call held over h2, and a TCP connection that never starts its handshake.
      const call = h2Request({ ':method': 'POST', ':path': '/hold', 'content-type': 'application/grpc' });
      await until(() => held === 1, 'the held call');
      const dropped = new Promise((resolve) => silent.once('close', resolve));
      // The 100 ms grace, before the default one (STOP_GRACE_MS; the handshake timeout, the sniff time, is longer).
      expect(await settlesBefore(local.shutdown(), STOP_GRACE_MS)).toBe(true);
      await settled(Promise.all([call, dropped]), 'the held call and the silent connection cut');
      expect((await call).status).toBeUndefined();
    } finally {
      nagle.restore();
      s.destroy();
      silent.destroy();
      await local.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The front's sniffing of a cleartext connection (rule ONEPORT-h1-h2c), on a server of its own: bytes
 * sent a read at a time (each write waits until the server has read it), so the sniffer sees them split.
 */
describe('the front reads a cleartext connection’s first bytes until they decide (rule ONEPORT-h1-h2c)', () => {
  async function sniffed() {
    const port = createOnePortServer({ grpc: (_req, res) => res.end(), rest: (_req, res) => res.end('rest') });
    const accepted: Socket[] = [];
    port.server.on('connection', (socket: Socket) => accepted.push(socket));
    const address = await listenLocal(port.server);
    const connect = async () => {
      const client = netConnect(address, '127.0.0.1');
      client.on('error', () => undefined);
      const chunks: Buffer[] = [];
      client.on('data', (chunk: Buffer) => chunks.push(chunk));
      const closed = new Promise((resolve) => client.once('close', resolve));
      const count = accepted.length;
      await until(() => accepted.length === count + 1, 'the accepted connection');
      const server = accepted[count]!;
      /** Sends `bytes` and waits until the server has read them. */
      const send = async (bytes: string | Buffer): Promise<void> => {
        const total = server.bytesRead + Buffer.byteLength(bytes);
        client.write(bytes);
        await until(() => server.bytesRead >= total, 'the bytes read by the server');
      };
      return { client, server, send, closed, received: () => Buffer.concat(chunks) };
    };
    return { port, connect };
  }

  it('the preface split across reads is HTTP/2 (the server answers with its SETTINGS); a first byte like the preface’s, then HTTP/1.1, reaches REST', async () => {
    const { port, connect } = await sniffed();
    const h2c = await connect();
    const h1 = await connect();
    try {
      await h2c.send(HTTP2_PREFACE.subarray(0, 10));
      // The rest of the preface, then the client's (empty) SETTINGS frame.
      await h2c.send(Buffer.concat([HTTP2_PREFACE.subarray(10), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
      await until(() => h2c.received().length >= 9, 'the server’s first frame');
      // A frame header: type SETTINGS (4), no ACK flag; not an HTTP/1.1 status line.
      expect([h2c.received()[3], h2c.received()[4]]).toEqual([4, 0]);
      await h1.send('P');
      await h1.send('OST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      await h1.closed;
      expect(h1.received().toString()).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\nrest$/);
    } finally {
      h2c.client.destroy();
      h1.client.destroy();
      await port.shutdown();
    }
  });

  it('every connection it accepts has Nagle off (TCP_NODELAY), as node:http sets on its own: here an HTTP/1.1 one, which nothing else sets it on', async () => {
    const { port, connect } = await sniffed();
    const nagle = recordNoDelay();
    try {
      const h1 = await connect();
      const handle = handleOf(h1.server);
      await h1.send('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await h1.closed;
      expect(h1.received().toString()).toMatch(/rest$/);
      expect(nagle.noDelayOn(handle)).toBe(true);
    } finally {
      nagle.restore();
      await port.shutdown();
    }
  });

  it('a connection handed over keeps none of the sniffer’s listeners: from then on its errors and its end are its protocol server’s', async () => {
    const { port, connect } = await sniffed();
    const h1 = await connect();
    const h2c = await connect();
    try {
      // Attached while the first bytes are read: the sniffer's, and the front's own tracking of the socket.
      const whileSniffed = (socket: Socket) => ({
        data: socket.listeners('data'),
        error: socket.listeners('error'),
        close: socket.listeners('close'),
      });
      const before = [whileSniffed(h1.server), whileSniffed(h2c.server)];
      await h1.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => /rest$/.test(h1.received().toString()), 'the HTTP/1.1 answer');
      await h2c.send(HTTP2_PREFACE);
      await until(() => h2c.received().length >= 9, 'the server’s first frame');
      const left = [h1.server, h2c.server].map((socket, i) => {
        const sniffed = before[i]!;
        return (['data', 'error', 'close'] as const).map(
          (event) => socket.listeners(event).filter((l) => sniffed[event].includes(l)).length,
        );
      });
      // Per socket, of the 'data', 'error' and 'close' listeners it had while sniffed, those still attached:
      // only the front's tracking, which goes with the socket's close.
      expect(left).toEqual([
        [0, 0, 1],
        [0, 0, 1],
      ]);
    } finally {
      h1.client.destroy();
      h2c.client.destroy();
      await port.shutdown();
    }
  });

  it('a connection reset by its client while its first bytes are read is dropped with no uncaught error, and the port answers the next', async () => {
    const { port, connect } = await sniffed();
    const uncaught: unknown[] = [];
    const record = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const reset = await connect();
      await reset.send(HTTP2_PREFACE.subarray(0, 3));
      const gone = new Promise((resolve) => reset.server.once('close', resolve));
      reset.client.resetAndDestroy();
      await gone;
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
      const next = await connect();
      await next.send('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await next.closed;
      expect(next.received().toString()).toMatch(/rest$/);
    } finally {
      process.off('uncaughtException', record);
      await port.shutdown();
    }
  });
});

/**
 * The sniff timeout and the stop's sweep, on a fake clock (Date and the one-port timers; I/O and
 * setImmediate stay real): what they drop is a connection still sniffed and silent, never one that sent
 * bytes since or was handed over to its protocol's server.
 */
describe('the sniff timeout and the stop’s sweep spare what spoke or was handed over (rules ONEPORT-h1-h2c, LIFE-4-shutdown)', () => {
  afterEach(() => vi.useRealTimers());
  /** Moves the clock by `ms`, then lets the sweeps due run (each waits for the poll phase first). */
  const step = async (ms: number): Promise<void> => {
    await vi.advanceTimersByTimeAsync(ms);
    await new Promise((resolve) => setImmediate(resolve));
  };
  async function onFakeClock(options: { sniffTimeoutMs?: number; graceMs?: number }) {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const held: Array<() => void> = [];
    const rest: AnyRequestHandler = (req, res) => (req.url === '/hold' ? held.push(() => res.end('done')) : res.end('rest'));
    // orders-grpc's HTTP/1.1 side: a request in flight at the stop is answered with `Connection: close`.
    const port = createOnePortServer({ grpc: (_req, res) => res.end(), rest, http1: restHttp1Side(rest), ...options });
    const accepted: Socket[] = [];
    port.server.on('connection', (socket: Socket) => accepted.push(socket));
    const address = await listenLocal(port.server);
    const clients: Socket[] = [];
    const connect = async () => {
      const client = netConnect(address, '127.0.0.1');
      client.on('error', () => undefined);
      clients.push(client);
      const chunks: Buffer[] = [];
      client.on('data', (chunk: Buffer) => chunks.push(chunk));
      const count = accepted.length;
      while (accepted.length === count) await new Promise((resolve) => setImmediate(resolve));
      const server = accepted[count]!;
      const send = async (bytes: string): Promise<void> => {
        const total = server.bytesRead + bytes.length;
        client.write(bytes);
        while (server.bytesRead < total) await new Promise((resolve) => setImmediate(resolve));
      };
      const answered = async (pattern: RegExp): Promise<void> => {
        while (!pattern.test(Buffer.concat(chunks).toString())) await new Promise((resolve) => setImmediate(resolve));
      };
      return { client, server, send, answered, received: () => Buffer.concat(chunks).toString() };
    };
    const close = async (): Promise<void> => {
      for (const client of clients) client.destroy();
      while (accepted.some((socket) => !socket.closed)) await new Promise((resolve) => setImmediate(resolve));
    };
    return { port, held, connect, close };
  }

  it('silent for the sniff time: dropped; handed over before it: not cut by that timer, and carries its next request', async () => {
    const { port, connect, close } = await onFakeClock({ sniffTimeoutMs: 1_000 });
    try {
      const silent = await connect();
      const served = await connect();
      await served.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await served.answered(/rest$/);
      await step(1_000);
      expect([silent.server.destroyed, served.server.destroyed]).toEqual([true, false]);
      await served.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await served.answered(/rest[^]*rest$/);
    } finally {
      await close();
      await port.shutdown();
    }
  });

  it('during a stop: one still sending its first bytes is silent from its last byte; one handed over with a request in flight is not swept', async () => {
    const { port, held, connect, close } = await onFakeClock({ graceMs: 10_000 });
    try {
      const trickle = await connect();
      await trickle.send('P');
      const busy = await connect();
      await busy.send('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
      while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
      let stopped = false;
      const stop = port.shutdown().then(() => (stopped = true));
      await step(STOP_QUIET_MS - 50);
      await trickle.send('R');
      // The quiet time since both were accepted: the trickling one spoke 50 ms ago, the busy one was handed over.
      await step(50);
      expect([trickle.server.destroyed, busy.server.destroyed]).toEqual([false, false]);
      await step(STOP_QUIET_MS - 50);
      expect([trickle.server.destroyed, busy.server.destroyed]).toEqual([true, false]);
      held[0]!();
      await busy.answered(/done$/);
      expect(busy.received()).toMatch(/^HTTP\/1\.1 200 [^]*Connection: close/i);
      for (let i = 0; i < 100 && !stopped; i++) await step(50);
      await stop;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      await close();
    }
  });
});

/**
 * What the one-port server keeps of a connection for its stop (every socket to cut, every session to send
 * GOAWAY to) is let go once that connection closes: a long-running port does not grow with each client.
 * Seen with V8's own collector, made callable for this test.
 */
describe('the one-port server lets go of a connection once it closed (rule LIFE-4-shutdown)', () => {
  it('a closed HTTP/1.1 connection, and an HTTP/2 one with its session, are collected by the next GCs', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const kept: Array<WeakRef<object>> = [];
    const port = createOnePortServer({
      grpc: (req, res) => {
        kept.push(new WeakRef(req.stream.session!));
        res.end();
      },
      rest: (_req, res) => res.end('rest'),
    });
    let closed = 0;
    port.server.on('connection', (socket: Socket) => {
      kept.push(new WeakRef(socket));
      socket.once('close', () => (closed += 1));
    });
    const address = await listenLocal(port.server);
    try {
      expect((await rawGrpc(`http://127.0.0.1:${address}`, '/t.T/Echo', grpcFrame(new Uint8Array()))).httpStatus).toBe(200);
      const http1 = netConnect(address, '127.0.0.1');
      http1.on('error', () => undefined);
      let answer = '';
      http1.on('data', (chunk: Buffer) => (answer += String(chunk)));
      http1.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await until(() => closed === 2 && http1.closed, 'both connections closed');
      expect(answer).toMatch(/rest$/);
      expect(kept).toHaveLength(3);
      const alive = (): number => kept.filter((ref) => ref.deref() !== undefined).length;
      // A few rounds: each lets the loop run the callbacks still holding a closed socket, then collects.
      for (let round = 0; round < 10 && alive() > 0; round++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      expect(alive()).toBe(0);
    } finally {
      await port.shutdown();
    }
  });
});

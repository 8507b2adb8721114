import { connect, constants as h2 } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { createClient } from '@connectrpc/connect';
import { compressionGzip, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScrape } from '../../conformance/cases/observability.ts';
import { encodeRequest, grpcDriver } from '../../conformance/drivers/grpc.ts';
import { Orders } from '../../src/gen/ordersv1/orders_pb.js';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { MAX_MESSAGE_BYTES, SNIFF_TIMEOUT_MS } from '../../packages/one-port-grpc/index.ts';
import { HANG_GUARD_MS, settlesBefore, until } from '../support/eventually.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { grpcFrame, rawGrpc } from './raw-grpc.ts';

// orders-grpc in process: one app (one user, alice) that every describe below calls, each about a
// different side of the one-port gRPC server (its pure wire helpers: packages/one-port-grpc/private/*.test.ts).

let app: InProcessApp;
let token: string;
let orderId: string;
const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  app = await startInProcess({ transport: grpcTransport });
  token = await app.login('alice');
  const client = grpcDriver({ baseUrl: app.baseUrl, adminUrl: undefined, hooks: undefined });
  orderId = ((await client.createOrder(`Bearer ${token}`, { item: 'probe', quantity: 1 })).body as { id: string }).id;
  await client.close();
});
afterAll(async () => {
  await app?.stop();
});

/**
 * The second independent client of the unary server: @connectrpc/connect-node's
 * gRPC transport, with and without gzip, with deadlines. The first is @grpc/grpc-js (conformance's gRPC driver,
 * which also sends every case of spec 7's error mapping).
 */
describe('ordersv1.Orders through @connectrpc/connect-node’s gRPC client', () => {
  it('Login, CreateOrder, GetOrder, ListOrders and Recent, plain and gzip-compressed', async () => {
    const plain = createClient(Orders, createGrpcTransport({ baseUrl: app.baseUrl }));
    const gzip = createClient(
      Orders,
      createGrpcTransport({
        baseUrl: app.baseUrl,
        sendCompression: compressionGzip,
        acceptCompression: [compressionGzip],
        compressMinBytes: 0,
      }),
    );
    for (const client of [plain, gzip]) {
      expect((await client.login({ username: 'alice', password: 'alice-password' })).token).toMatch(/^ey/);
      const created = await client.createOrder({ item: 'pen', quantity: 2 }, { headers: auth() });
      expect(created).toMatchObject({ item: 'pen', quantity: 2, status: 'pending' });
      const fetched = await client.getOrder({ id: created.id }, { headers: auth(), timeoutMs: HANG_GUARD_MS });
      expect(fetched.id).toBe(created.id);
      expect(fetched.createdAt?.seconds).toBe(created.createdAt?.seconds);
      expect((await client.listOrders({ limit: 100 }, { headers: auth() })).orders.map((o) => o.id)).toContain(created.id);
      expect((await client.recent({}, { headers: auth() })).recent[0]).toBe(created.id);
    }
  });
});

/**
 * The unary server's answers to input the conformance cases (conformance/cases/one-port-attacks.ts: gzip
 * bombs, 50 MB messages with and without a token, malformed messages, application/grpc+json, huge
 * grpc-timeouts) do not send. A gzip message within the limit being served is the connect-node gzip client above.
 */
describe('the unary gRPC server against malformed, oversized and unauthenticated input', () => {
  const call = (path: string, body: Buffer, headers: Record<string, string> = {}): ReturnType<typeof rawGrpc> =>
    rawGrpc(app.baseUrl, path, body, headers);
  const getOrder = (): Buffer => Buffer.from(encodeRequest('GetOrder', { id: orderId }));

  it('a well-formed GetOrder by hand (application/grpc+proto) answers OK with one message and grpc-status 0 in the trailers', async () => {
    const reply = await call('/ordersv1.Orders/GetOrder', grpcFrame(getOrder()), { ...auth(), 'content-type': 'application/grpc+proto' });
    expect({ status: reply.grpcStatus, http: reply.httpStatus, type: reply.headers['content-type'] }).toEqual({
      status: '0',
      http: 200,
      type: 'application/grpc+proto',
    });
    expect(reply.body.readUInt32BE(1)).toBe(reply.body.length - 5);
  });

  it('exactly 1 MiB is read (and is then not a valid GetOrderRequest: INVALID_ARGUMENT, not RESOURCE_EXHAUSTED)', async () => {
    const reply = await call('/ordersv1.Orders/GetOrder', grpcFrame(Buffer.alloc(MAX_MESSAGE_BYTES, 0xff)), auth());
    expect(reply.grpcStatus).toBe('3');
  });

  // No answer carries parser internals.
  const message = Buffer.from(encodeRequest('GetOrder', { id: crypto.randomUUID() }));
  it.each([
    ['a prefix cut short', Buffer.from([0, 0, 0]), {}, '3', 'malformed request message'],
    ['no message at all', Buffer.alloc(0), {}, '3', 'malformed request message'],
    ['a compressed flag of 2', Buffer.from([2, 0, 0, 0, 0]), {}, '3', 'malformed request message'],
    [
      'gzip flag with bytes that are not gzip',
      grpcFrame(Buffer.from('not gzip'), true),
      { 'grpc-encoding': 'gzip' },
      '3',
      'malformed request message',
    ],
    // The gRPC protocol rule: a compressed flag needs a grpc-encoding.
    [
      'a compressed message without grpc-encoding',
      grpcFrame(gzipSync(message), true),
      {},
      '13',
      'compressed message without grpc-encoding',
    ],
    // The client learns it without sending grpc-accept-encoding.
    ['an unsupported grpc-encoding', grpcFrame(message), { 'grpc-encoding': 'br' }, '12', 'unsupported grpc-encoding br'],
    ['a malformed grpc-timeout', grpcFrame(message), { 'grpc-timeout': '1.5S' }, '3', 'malformed grpc-timeout'],
  ])('%s → grpc-status %s, %s', async (_name, body, headers: Record<string, string>, status, grpcMessage) => {
    const reply = await call('/ordersv1.Orders/GetOrder', body, { ...auth(), ...headers });
    expect([reply.grpcStatus, reply.grpcMessage]).toEqual([status, grpcMessage]);
  });
});

/**
 * The shorter platform timeouts a test harness passes in composition (http/server/timeouts.ts)
 * reach orders-grpc's one-port listener and are enforced there. Production's are 10 s, 60 s and 30 s:
 * the three deadlines below end before the shortest of those (settlesBefore) only if the short values got through.
 */
describe('orders-grpc takes a harness’s shorter one-port deadlines (rules ONEPORT-h1-h2c, H2-idle, H2-stream-deadline)', () => {
  it('a connection silent past the sniff time is dropped, an idle HTTP/2 session gets GOAWAY, a request never ended is reset CANCEL', async () => {
    const short = await startInProcess({
      transport: grpcTransport,
      platformTimeouts: { sniffMs: 100, http2IdleMs: 150, http2StreamRequestMs: 150 },
    });
    const silent = netConnect(short.port, '127.0.0.1');
    silent.on('error', () => undefined);
    const idle = connect(short.baseUrl);
    idle.on('error', () => undefined);
    const busy = connect(short.baseUrl);
    busy.on('error', () => undefined);
    try {
      const dropped = new Promise((resolve) => silent.once('close', resolve));
      const goaway = new Promise((resolve) => idle.once('goaway', resolve));
      const stream = busy.request({
        ':method': 'POST',
        ':path': '/ordersv1.Orders/Login',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      stream.on('error', () => undefined);
      const reset = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? -1)));
      expect(await settlesBefore(Promise.all([dropped, goaway, reset]), SNIFF_TIMEOUT_MS)).toBe(true);
      expect(await reset).toBe(h2.NGHTTP2_CANCEL);
    } finally {
      silent.destroy();
      idle.destroy();
      busy.destroy();
      await short.stop();
    }
  });
});

/**
 * What the gRPC side logs of a failed call (rules ERR-internal, ERR-500-panic; spec 4.3 rule 1): its
 * errors go through the one table, so a panic is logged as one with its method, an outage as an outage,
 * and a caller's mistake not at all. The same table's HTTP lines are conformance's errors cases.
 */
describe('the gRPC side logs a failed call by the one error table', () => {
  const getOrder = (id: string): ReturnType<typeof rawGrpc> =>
    rawGrpc(app.baseUrl, '/ordersv1.Orders/GetOrder', grpcFrame(encodeRequest('GetOrder', { id })), auth());
  /** The error-level lines logged while `work` ran. */
  const errorLinesOf = async (work: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> => {
    const before = app.logs.lines.length;
    await work();
    return app.logs.lines.slice(before).filter((line) => line.level === 'error');
  };

  it('an unexpected error in a handler is INTERNAL, logged once at error level as a recovered panic with its message and method', async () => {
    const repository = app.backends.repository as unknown as Record<string, unknown>;
    const findById = repository['findById'];
    repository['findById'] = () => {
      throw new TypeError('injected bug');
    };
    try {
      const lines = await errorLinesOf(async () => {
        const reply = await getOrder(crypto.randomUUID());
        expect([reply.grpcStatus, reply.grpcMessage]).toEqual(['13', 'internal server error']);
      });
      expect(lines).toEqual([
        expect.objectContaining({ msg: 'api: panic recovered', panic: 'injected bug', path: '/ordersv1.Orders/GetOrder' }),
      ]);
    } finally {
      repository['findById'] = findById;
    }
  });

  it('a caller’s mistake (NOT_FOUND) logs no error line; a backend outage logs only `api: backend unavailable`, no panic', async () => {
    expect(
      await errorLinesOf(async () => {
        expect((await getOrder(crypto.randomUUID())).grpcStatus).toBe('5');
      }),
    ).toEqual([]);
    app.fakes!.store.trouble.failNext(1);
    const lines = await errorLinesOf(async () => {
      const list = await rawGrpc(app.baseUrl, '/ordersv1.Orders/ListOrders', grpcFrame(encodeRequest('ListOrders', {})), auth());
      expect(list.grpcStatus).toBe('13');
    });
    expect(lines).toEqual([expect.objectContaining({ msg: 'api: backend unavailable', path: '/ordersv1.Orders/ListOrders' })]);
  });
});

// Edge cases of the one-port sniffing that the conformance one-port cases do not send (spec 4.4 rules 1-3); a REST
// path with application/grpc over HTTP/2 going to gRPC, unseen by REST, is http2-with-grpc-content-type-goes-to-grpc
// and grpc-not-observed-by-http-middleware.
describe('one port: edge cases of spec 4.4 rule 1', () => {
  const restLines = (): number => app.logs.find('request').length;

  it('HTTP/2 with Application/gRPC (other case) is not gRPC by the literal rule: REST answers', async () => {
    const res = await rawGrpc(
      app.baseUrl,
      '/ordersv1.Orders/Login',
      grpcFrame(encodeRequest('Login', { username: 'alice', password: 'alice-password' })),
      { 'content-type': 'Application/gRPC', te: undefined },
    );
    expect(res.httpStatus).toBe(404);
    expect(JSON.parse(res.body.toString())).toEqual({ error: 'not found' });
  });

  it('HTTP/2 + application/grpc-web goes to the gRPC side, which serves gRPC only: 415, REST never sees it', async () => {
    const before = restLines();
    for (const contentType of ['application/grpc-web+proto', 'application/grpc-web-text', 'application/grpcfoo']) {
      const res = await rawGrpc(
        app.baseUrl,
        '/ordersv1.Orders/Login',
        grpcFrame(encodeRequest('Login', { username: 'alice', password: 'alice-password' })),
        { 'content-type': contentType, te: undefined },
      );
      expect(res.httpStatus, contentType).toBe(415);
      expect(res.headers['x-ratelimit-limit'], contentType).toBeUndefined();
      expect(res.headers['ratelimit-limit'], contentType).toBeUndefined();
    }
    expect(restLines()).toBe(before);
  });

  it('HTTP/1.1 sent one byte at a time, starting like the HTTP/2 preface (P…), still reaches REST', async () => {
    const body = JSON.stringify({ username: 'alice', password: 'wrong' });
    const request = `POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const socket = netConnect(app.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    for (let i = 0; i < 8; i++) {
      socket.write(request[i]!);
      await sleep(5);
    }
    socket.write(request.slice(8));
    await closed;
    const response = Buffer.concat(chunks).toString();
    expect(response).toMatch(/^HTTP\/1\.1 401 /);
    expect(response).toContain('{"error":"invalid credentials"}');
  });
});

/**
 * Rules TRACE-grpc and METRICS-grpc at the edges the conformance case does not reach: paths the server
 * does not serve (bounded labels), a call its client resets, a call past its deadline. A served call's span and
 * counters are conformance's grpc-layer-spans-and-metrics.
 */
describe('the gRPC layer observes every call, however it ends', () => {
  const handled = async (labels: Record<string, string>): Promise<number> =>
    parseScrape(await (await fetch(`${app.adminUrl}/metrics`)).text())
      .filter((s) => s.name === 'grpc_server_handled_total' && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  const spansOf = (name: string) => app.spans.getFinishedSpans().filter((s) => s.name === name);

  /** A GetOrder whose message never finishes arriving: the prefix promises 100 bytes, 10 come. */
  function unfinishedGetOrder(headers: Record<string, string>): { close: () => void; closed: Promise<void> } {
    const session = connect(app.baseUrl);
    const stream = session.request({
      ':method': 'POST',
      ':path': '/ordersv1.Orders/GetOrder',
      'content-type': 'application/grpc',
      authorization: `Bearer ${token}`,
      ...headers,
    });
    stream.on('error', () => undefined);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(100, 1);
    stream.write(Buffer.concat([prefix, Buffer.alloc(10)]));
    const closed = new Promise<void>((resolve) => stream.once('close', () => (session.destroy(), resolve())));
    // Dropping the connection: Node's client would end the request (END_STREAM) before an RST_STREAM.
    return { close: () => session.destroy(), closed };
  }

  it('paths the server does not serve are counted and traced as unknown: no raw path becomes a label', async () => {
    const before = await handled({ grpc_service: 'unknown', grpc_method: 'unknown', grpc_code: 'Unimplemented' });
    const probe = `/probe.${crypto.randomUUID().slice(0, 8)}/Scan`;
    for (const path of [probe, '/ordersv1.Orders/NoSuchMethod'])
      expect((await rawGrpc(app.baseUrl, path, grpcFrame(new Uint8Array()))).grpcStatus).toBe('12');
    expect(await handled({ grpc_service: 'unknown', grpc_method: 'unknown', grpc_code: 'Unimplemented' })).toBe(before + 2);
    const scrape = await (await fetch(`${app.adminUrl}/metrics`)).text();
    expect(scrape).not.toContain('NoSuchMethod');
    expect(scrape).not.toContain(probe.split('/')[1]);
    const spans = spansOf('grpc.unknown').slice(-2);
    expect(spans.map((s) => [s.attributes['rpc.system'], s.attributes['rpc.method'], s.attributes['rpc.grpc.status_code']])).toStrictEqual([
      ['grpc', undefined, 12],
      ['grpc', undefined, 12],
    ]);
  });

  it('a call whose client goes away before the answer ends CANCELLED in the metrics and its span', async () => {
    const labels = { grpc_method: 'GetOrder', grpc_code: 'Canceled' };
    const before = await handled(labels);
    const spansBefore = spansOf('ordersv1.Orders/GetOrder').length;
    const call = unfinishedGetOrder({});
    // Reset only once the server has started the call.
    await until(
      async () =>
        (await fetch(`${app.adminUrl}/metrics`).then((r) => r.text())).includes(
          'grpc_server_started_total{grpc_type="unary",grpc_service="ordersv1.Orders",grpc_method="GetOrder"}',
        ),
      'the call to start',
    );
    call.close();
    await call.closed;
    await until(async () => (await handled(labels)) === before + 1, 'grpc_server_handled_total{grpc_code="Canceled"} + 1');
    const span = spansOf('ordersv1.Orders/GetOrder').slice(spansBefore).at(-1);
    expect(span?.attributes['rpc.grpc.status_code']).toBe(1);
  });

  it('a call past its deadline ends DEADLINE_EXCEEDED, an error status on its span', async () => {
    const labels = { grpc_method: 'GetOrder', grpc_code: 'DeadlineExceeded' };
    const before = await handled(labels);
    const call = unfinishedGetOrder({ 'grpc-timeout': '200m' });
    await call.closed;
    expect(await handled(labels)).toBe(before + 1);
    const span = spansOf('ordersv1.Orders/GetOrder').at(-1);
    expect([span?.attributes['rpc.grpc.status_code'], span?.status.code]).toStrictEqual([4, 2 /* SpanStatusCode.ERROR */]);
  });
});

import { connect as netConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { isGrpcRequest } from '../../src/transports/grpc/one-port-server.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { OrdersTestClient, type WireOrder } from './grpc-test-client.ts';
import { h2cRequest } from './h2c-request.ts';

/** A gRPC length-prefixed message frame (uncompressed) around raw protobuf bytes. */
function grpcFrame(message: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}
/** LoginRequest{username:"alice", password:"alice-password"} encoded by hand (fields 1 and 2, wire type 2). */
const LOGIN_ALICE = Buffer.concat([Buffer.from([0x0a, 5]), Buffer.from('alice'), Buffer.from([0x12, 14]), Buffer.from('alice-password')]);

describe('isGrpcRequest: spec 4.4 rule 1 taken literally', () => {
  it.each([
    [2, 'application/grpc', true],
    [2, 'application/grpc+proto', true],
    [2, 'application/grpc; charset=utf-8', true],
    [2, 'application/grpc-web', true],
    [2, 'application/grpc-web-text', true],
    [2, 'application/grpcfoo', true],
    [1, 'application/grpc', false],
    [1, 'application/grpc+proto', false],
    [2, 'application/json', false],
    [2, undefined, false],
    [2, '', false],
    [2, 'Application/grpc', false],
    [2, ' application/grpc', false],
  ] as const)('HTTP/%i with %o → gRPC: %s', (major, contentType, expected) => {
    expect(isGrpcRequest(major, contentType)).toBe(expected);
  });
});

describe('one port: gRPC, HTTP/1.1 REST and h2c REST together (spec 4.4 rules 1-3)', () => {
  let app: InProcessApp;
  let grpc: OrdersTestClient;
  let token: string;

  beforeAll(async () => {
    app = await startInProcess({ transport: grpcTransport, serviceName: 'orders-grpc' });
    await app.addUser('alice');
    grpc = new OrdersTestClient(`127.0.0.1:${app.port}`);
    token = await grpc.login('alice', 'alice-password');
  });

  afterAll(async () => {
    grpc?.close();
    await app?.stop();
  });

  const restLines = (): number => app.logs.find('request').length;

  it('an HTTP/1.1 REST walk-through works on the gRPC port', async () => {
    const login = await fetch(`${app.baseUrl}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: 'alice-password' }) });
    expect(login.status).toBe(200);
    const auth = { authorization: `Bearer ${((await login.json()) as { token: string }).token}` };
    const created = await fetch(`${app.baseUrl}/orders`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ item: 'book', quantity: 2 }) });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);
    const order = (await created.json()) as { id: string };
    expect(order).toMatchObject({ item: 'book', quantity: 2, status: 'pending' });
    const got = await fetch(`${app.baseUrl}/orders/${order.id}`, { headers: auth });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(order);
    const list = (await (await fetch(`${app.baseUrl}/orders?limit=1`, { headers: auth })).json()) as { orders: unknown[] };
    expect(list.orders).toEqual([order]);
    expect(await (await fetch(`${app.baseUrl}/me/recent`, { headers: auth })).json()).toEqual({ recent: [order.id] });
    expect((await fetch(`${app.baseUrl}/openapi.yaml`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/swagger/`)).status).toBe(200);
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${app.baseUrl}${path}`)).status, path).toBe(404);
  });

  it('HTTP/1.1 with content-type application/grpc reaches REST (the content type alone is spoofable)', async () => {
    const before = restLines();
    const rpcPath = await fetch(`${app.baseUrl}/ordersv1.Orders/Login`, { method: 'POST', headers: { 'content-type': 'application/grpc' }, body: grpcFrame(LOGIN_ALICE) });
    expect(rpcPath.status).toBe(404);
    expect(await rpcPath.json()).toEqual({ error: 'not found' });
    const protectedPath = await fetch(`${app.baseUrl}/orders`, { headers: { 'content-type': 'application/grpc+proto' } });
    expect(protectedPath.status).toBe(401);
    expect(await protectedPath.json()).toEqual({ error: 'missing or malformed Authorization header' });
    expect(restLines()).toBe(before + 2);
  });

  it('HTTP/2 (h2c prior knowledge) without a gRPC content type reaches REST (the version alone would capture browsers)', async () => {
    const yaml = await h2cRequest(app.baseUrl, { ':method': 'GET', ':path': '/openapi.yaml' });
    expect(yaml.status).toBe(200);
    expect(yaml.body.toString()).toMatch(/^openapi: /m);
    const unauthenticated = await h2cRequest(app.baseUrl, { ':method': 'GET', ':path': '/orders' });
    expect(unauthenticated.status).toBe(401);
    expect(JSON.parse(unauthenticated.body.toString())).toEqual({ error: 'missing or malformed Authorization header' });
    const login = await h2cRequest(app.baseUrl, { ':method': 'POST', ':path': '/auth/login', 'content-type': 'application/json' }, JSON.stringify({ username: 'alice', password: 'alice-password' }));
    expect(login.status).toBe(200);
    const h2Token = (JSON.parse(login.body.toString()) as { token: string }).token;
    const list = await h2cRequest(app.baseUrl, { ':method': 'GET', ':path': '/orders', authorization: `Bearer ${h2Token}` });
    expect(list.status).toBe(200);
    expect((await h2cRequest(app.baseUrl, { ':method': 'GET', ':path': '/healthz' })).status).toBe(404);
  });

  it('HTTP/2 with Application/gRPC (other case) is not gRPC by the literal rule: REST answers', async () => {
    const res = await h2cRequest(app.baseUrl, { ':method': 'POST', ':path': '/ordersv1.Orders/Login', 'content-type': 'Application/gRPC' }, grpcFrame(LOGIN_ALICE));
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString())).toEqual({ error: 'not found' });
  });

  it('a raw gRPC call over h2c works without any gRPC library on the client side', async () => {
    const res = await h2cRequest(app.baseUrl, { ':method': 'POST', ':path': '/ordersv1.Orders/Login', 'content-type': 'application/grpc', te: 'trailers' }, grpcFrame(LOGIN_ALICE));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/grpc+proto');
    expect(res.trailers['grpc-status']).toBe('0');
    expect(res.body.length).toBeGreaterThan(5);
  });

  it('HTTP/2 + application/grpc goes to gRPC whatever the path: /openapi.yaml → UNIMPLEMENTED, not the document', async () => {
    const before = restLines();
    const res = await h2cRequest(app.baseUrl, { ':method': 'POST', ':path': '/openapi.yaml', 'content-type': 'application/grpc' }, grpcFrame(Buffer.alloc(0)));
    expect(res.status).toBe(200);
    expect(res.trailers['grpc-status']).toBe('12');
    expect(res.body.toString()).not.toContain('openapi');
    expect(restLines()).toBe(before);
  });

  it('HTTP/2 + application/grpc-web goes to the gRPC side, which serves gRPC only: 415, REST never sees it', async () => {
    const before = restLines();
    for (const contentType of ['application/grpc-web+proto', 'application/grpc-web-text', 'application/grpcfoo']) {
      const res = await h2cRequest(app.baseUrl, { ':method': 'POST', ':path': '/ordersv1.Orders/Login', 'content-type': contentType }, grpcFrame(LOGIN_ALICE));
      expect(res.status, contentType).toBe(415);
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

  it('gRPC calls are not counted, traced or logged by the REST middleware; REST requests are (spec 4.3 rule 3)', async () => {
    const scrape = async (): Promise<number> => {
      const text = await (await fetch(`${app.adminUrl}/metrics`)).text();
      return text
        .split('\n')
        .filter((line) => line.startsWith('orders_http_requests_total{'))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    };
    const countBefore = await scrape();
    const spansBefore = app.spans.getFinishedSpans().length;
    const logsBefore = restLines();
    const order = await grpc.ok<WireOrder>('CreateOrder', { item: 'quiet', quantity: 1 }, { token });
    await grpc.ok('GetOrder', { id: order.id }, { token });
    await grpc.ok('ListOrders', {}, { token });
    await grpc.ok('Recent', {}, { token });
    await grpc.call('GetOrder', { id: 'bad' }, { token });
    await grpc.call('Recent', {});
    expect(await scrape()).toBe(countBefore);
    expect(app.spans.getFinishedSpans()).toHaveLength(spansBefore);
    expect(restLines()).toBe(logsBefore);

    await fetch(`${app.baseUrl}/orders/${order.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(await scrape()).toBe(countBefore + 1);
    const metricsText = await (await fetch(`${app.adminUrl}/metrics`)).text();
    expect(metricsText).toMatch(/orders_http_requests_total\{[^}]*route="GET \/orders\/\{id\}"[^}]*\} \d+/);
    expect(metricsText).not.toContain('ordersv1');
    expect(app.spans.getFinishedSpans()).toHaveLength(spansBefore + 1);
  });

  it('views are shared across transports: REST GET shows in gRPC Recent and gRPC GetOrder in REST /me/recent', async () => {
    await app.addUser('frank');
    const frank = await grpc.login('frank', 'frank-password');
    const auth = { authorization: `Bearer ${frank}` };
    const a = await grpc.ok<WireOrder>('CreateOrder', { item: 'a', quantity: 1 }, { token: frank });
    const b = await grpc.ok<WireOrder>('CreateOrder', { item: 'b', quantity: 1 }, { token: frank });
    expect((await fetch(`${app.baseUrl}/orders/${a.id}`, { headers: auth })).status).toBe(200);
    expect(await grpc.ok('Recent', {}, { token: frank })).toEqual({ recent: [a.id] });
    await grpc.ok('GetOrder', { id: b.id }, { token: frank });
    expect(await (await fetch(`${app.baseUrl}/me/recent`, { headers: auth })).json()).toEqual({ recent: [b.id, a.id] });
    const h2 = await h2cRequest(app.baseUrl, { ':method': 'GET', ':path': '/me/recent', ...auth });
    expect(JSON.parse(h2.body.toString())).toEqual({ recent: [b.id, a.id] });
  });
});

describe('rate limiting applies to REST only (spec 4.3 rule 3, 8)', () => {
  it('with RATE_LIMIT_RPS=2, REST gets 429s while gRPC calls all pass', async () => {
    const app = await startInProcess({ transport: grpcTransport, env: { RATE_LIMIT_RPS: '2' } });
    const client = new OrdersTestClient(`127.0.0.1:${app.port}`);
    try {
      await app.addUser('alice');
      const token = await client.login('alice', 'alice-password');
      const grpcCodes = await Promise.all(Array.from({ length: 30 }, () => client.call('ListOrders', {}, { token })));
      expect(grpcCodes.filter((r) => !r.ok)).toEqual([]);
      const restStatuses = await Promise.all(Array.from({ length: 10 }, async () => (await fetch(`${app.baseUrl}/orders`, { headers: { authorization: `Bearer ${token}` } })).status));
      expect(restStatuses).toContain(429);
    } finally {
      client.close();
      await app.stop();
    }
  });
});

import { gzipSync } from 'node:zlib';
import { createClient } from '@connectrpc/connect';
import { compressionGzip, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Orders } from '../../src/gen/ordersv1/orders_pb.js';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { encodeGrpcMessage, MAX_MESSAGE_BYTES, parseGrpcTimeout } from '../../src/transports/grpc/unary-server/wire.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { encodeRequest, grpcDriver } from '../../conformance/drivers/grpc.ts';
import { grpcFrame, rawGrpc } from './raw-grpc.ts';

describe('grpc-timeout (rule GRPC-timeout-clamp)', () => {
  it.each([
    ['1S', 1_000],
    ['250m', 250],
    ['2M', 120_000],
    ['1H', 3_600_000],
    ['1500u', 2],
    ['1n', 1],
    ['0m', 0],
    ['99999999H', 2 ** 31 - 1],
    ['99999999S', 2 ** 31 - 1],
  ])('%s → %i ms', (value, ms) => expect(parseGrpcTimeout(value)).toBe(ms));
  it.each(['', '1', 'S', '123456789S', '1s', '-1S', '1.5S', ' 1S'])('%o is malformed', (value) => expect(parseGrpcTimeout(value)).toBeNaN());
  it('absent: no deadline', () => expect(parseGrpcTimeout(undefined)).toBeUndefined());
});

describe('grpc-message encoding', () => {
  it('printable ASCII without % goes as is; anything else is percent-encoded UTF-8 that decodes back', () => {
    expect(encodeGrpcMessage('invalid order id')).toBe('invalid order id');
    for (const text of ['100% sure', 'café', 'line\nbreak']) {
      expect(encodeGrpcMessage(text)).toMatch(/^[\x20-\x7e]*$/);
      expect(decodeURIComponent(encodeGrpcMessage(text))).toBe(text);
    }
  });
});

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
 * The second independent client of the unary server (issue 18 item 1): @connectrpc/connect-node's
 * gRPC transport, with and without gzip, with deadlines. The first is @grpc/grpc-js (conformance's gRPC driver,
 * which also sends every case of spec 7's error mapping).
 */
describe('ordersv1.Orders through @connectrpc/connect-node’s gRPC client', () => {
  it('Login, CreateOrder, GetOrder, ListOrders and Recent, plain and gzip-compressed', async () => {
    const plain = createClient(Orders, createGrpcTransport({ baseUrl: app.baseUrl }));
    const gzip = createClient(Orders, createGrpcTransport({ baseUrl: app.baseUrl, sendCompression: compressionGzip, acceptCompression: [compressionGzip], compressMinBytes: 0 }));
    for (const client of [plain, gzip]) {
      expect((await client.login({ username: 'alice', password: 'alice-password' })).token).toMatch(/^ey/);
      const created = await client.createOrder({ item: 'pen', quantity: 2 }, { headers: auth() });
      expect(created).toMatchObject({ item: 'pen', quantity: 2, status: 'pending' });
      const fetched = await client.getOrder({ id: created.id }, { headers: auth(), timeoutMs: 5_000 });
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
describe('the unary gRPC server against malformed, oversized and unauthenticated input (issue 18)', () => {
  const call = (path: string, body: Buffer, headers: Record<string, string> = {}): ReturnType<typeof rawGrpc> => rawGrpc(app.baseUrl, path, body, headers);
  const getOrder = (): Buffer => Buffer.from(encodeRequest('GetOrder', { id: orderId }));

  it('a well-formed GetOrder by hand (application/grpc+proto) answers OK with one message and grpc-status 0 in the trailers', async () => {
    const reply = await call('/ordersv1.Orders/GetOrder', grpcFrame(getOrder()), { ...auth(), 'content-type': 'application/grpc+proto' });
    expect({ status: reply.grpcStatus, http: reply.httpStatus, type: reply.headers['content-type'] }).toEqual({ status: '0', http: 200, type: 'application/grpc+proto' });
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
    ['gzip flag with bytes that are not gzip', grpcFrame(Buffer.from('not gzip'), true), { 'grpc-encoding': 'gzip' }, '3', 'malformed request message'],
    // The gRPC protocol rule: a compressed flag needs a grpc-encoding.
    ['a compressed message without grpc-encoding', grpcFrame(gzipSync(message), true), {}, '13', 'compressed message without grpc-encoding'],
    // The client learns it without sending grpc-accept-encoding.
    ['an unsupported grpc-encoding', grpcFrame(message), { 'grpc-encoding': 'br' }, '12', 'unsupported grpc-encoding br'],
    ['a malformed grpc-timeout', grpcFrame(message), { 'grpc-timeout': '1.5S' }, '3', 'malformed grpc-timeout'],
  ])('%s → grpc-status %s, %s', async (_name, body, headers: Record<string, string>, status, grpcMessage) => {
    const reply = await call('/ordersv1.Orders/GetOrder', body, { ...auth(), ...headers });
    expect([reply.grpcStatus, reply.grpcMessage]).toEqual([status, grpcMessage]);
  });
});

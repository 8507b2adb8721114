import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { compressionGzip, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Orders } from '../../src/gen/ordersv1/orders_pb.js';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';

/**
 * The second independent client of the unary server (issue 18 item 1): @connectrpc/connect-node's
 * gRPC transport, with and without gzip, with deadlines. The first is @grpc/grpc-js (orders-grpc.test.ts).
 */
describe('ordersv1.Orders through @connectrpc/connect-node’s gRPC client', () => {
  let app: InProcessApp;
  let plain: Client<typeof Orders>;
  let gzip: Client<typeof Orders>;
  let token: string;
  const auth = (t = token): { headers: Record<string, string> } => ({ headers: { authorization: `Bearer ${t}` } });
  const codeOf = async (p: Promise<unknown>): Promise<[string, string]> => {
    try {
      await p;
      return ['OK', ''];
    } catch (error) {
      const e = ConnectError.from(error);
      return [Code[e.code], e.rawMessage];
    }
  };

  beforeAll(async () => {
    app = await startInProcess({ transport: grpcTransport });
    await app.addUser('alice');
    await app.addUser('bob');
    plain = createClient(Orders, createGrpcTransport({ baseUrl: app.baseUrl }));
    gzip = createClient(Orders, createGrpcTransport({ baseUrl: app.baseUrl, sendCompression: compressionGzip, acceptCompression: [compressionGzip], compressMinBytes: 0 }));
    token = (await plain.login({ username: 'alice', password: 'alice-password' })).token;
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('Login, CreateOrder, GetOrder, ListOrders and Recent, plain and gzip-compressed', async () => {
    for (const client of [plain, gzip]) {
      const created = await client.createOrder({ item: 'pen', quantity: 2 }, auth());
      expect(created).toMatchObject({ item: 'pen', quantity: 2, status: 'pending' });
      const fetched = await client.getOrder({ id: created.id }, { ...auth(), timeoutMs: 5_000 });
      expect(fetched.id).toBe(created.id);
      expect(fetched.createdAt?.seconds).toBe(created.createdAt?.seconds);
      expect((await client.listOrders({ limit: 100 }, auth())).orders.map((o) => o.id)).toContain(created.id);
      expect((await client.recent({}, auth())).recent[0]).toBe(created.id);
    }
  });

  it('the error mapping of spec 7 as a second client sees it', async () => {
    const bob = (await plain.login({ username: 'bob', password: 'bob-password' })).token;
    const order = await plain.createOrder({ item: 'mine', quantity: 1 }, auth());
    expect(await codeOf(plain.login({ username: 'alice', password: 'wrong' }))).toEqual(['Unauthenticated', 'invalid credentials']);
    expect(await codeOf(plain.getOrder({ id: order.id }))).toEqual(['Unauthenticated', 'missing or malformed Authorization header']);
    expect(await codeOf(plain.getOrder({ id: order.id }, auth('not.a.token')))).toEqual(['Unauthenticated', 'invalid or expired token']);
    expect(await codeOf(plain.getOrder({ id: order.id }, auth(bob)))).toEqual(['PermissionDenied', 'forbidden']);
    expect(await codeOf(gzip.getOrder({ id: crypto.randomUUID() }, auth()))).toEqual(['NotFound', 'not found']);
    expect(await codeOf(gzip.getOrder({ id: 'nope' }, auth()))).toEqual(['InvalidArgument', 'invalid order id']);
    expect(await codeOf(plain.createOrder({ item: 'x', quantity: 0 }, auth()))).toEqual(['InvalidArgument', 'quantity must be a positive integer']);
  });
});

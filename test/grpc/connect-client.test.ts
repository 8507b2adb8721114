import { createClient, type Client } from '@connectrpc/connect';
import { compressionGzip, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Orders } from '../../src/gen/ordersv1/orders_pb.js';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';

/**
 * The second independent client of the unary server (issue 18 item 1): @connectrpc/connect-node's
 * gRPC transport, with and without gzip, with deadlines. The first is @grpc/grpc-js (conformance's gRPC driver,
 * which also sends every case of spec 7's error mapping).
 */
describe('ordersv1.Orders through @connectrpc/connect-node’s gRPC client', () => {
  let app: InProcessApp;
  let plain: Client<typeof Orders>;
  let gzip: Client<typeof Orders>;
  let token: string;
  const auth = (): { headers: Record<string, string> } => ({ headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    app = await startInProcess({ transport: grpcTransport });
    await app.addUser('alice');
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
});

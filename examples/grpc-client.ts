#!/usr/bin/env node
/**
 * A minimal ordersv1.Orders client with @grpc/grpc-js, loading proto/ordersv1/orders.proto at run time:
 * log in as the demo user alice, create an order, fetch it, list, and read the recently viewed list.
 *
 *   node bin/orders-grpc.ts --embedded          # terminal 1: gRPC + REST on :8080, admin on :8081
 *   node examples/grpc-client.ts                # terminal 2 (GRPC_ADDR defaults to 127.0.0.1:8080)
 */
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const address = process.env['GRPC_ADDR'] ?? '127.0.0.1:8080';
const protoPath = join(import.meta.dirname, '..', 'proto', 'ordersv1', 'orders.proto');

// longs: String keeps Timestamp.seconds (int64) exact; defaults: true fills proto3 zero values.
const definition = protoLoader.loadSync(protoPath, { keepCase: true, longs: String, defaults: true });
const { ordersv1 } = grpc.loadPackageDefinition(definition) as unknown as {
  ordersv1: { Orders: new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client };
};
const client = new ordersv1.Orders(address, grpc.credentials.createInsecure());

interface Timestamp {
  seconds: string;
  nanos: number;
}
interface Order {
  id: string;
  item: string;
  quantity: number;
  status: string;
  created_at: Timestamp;
}

type Unary = (request: object, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, response: unknown) => void) => void;

/** One unary call; the token, when given, travels as `authorization: Bearer <token>` metadata. */
function call<T>(method: string, request: object, token?: string): Promise<T> {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  const fn = (client as unknown as Record<string, Unary>)[method]!.bind(client);
  return new Promise((resolve, reject) => {
    fn(request, metadata, (error, response) => (error ? reject(error) : resolve(response as T)));
  });
}

function createdAt(order: Order): string {
  return new Date(Number(order.created_at.seconds) * 1000 + order.created_at.nanos / 1e6).toISOString();
}

try {
  const { token } = await call<{ token: string }>('Login', { username: 'alice', password: 'alice-password' });
  console.log('Login: got a token');

  const created = await call<Order>('CreateOrder', { item: 'coffee beans', quantity: 2 }, token);
  console.log(`CreateOrder: ${created.id} ${created.item} x${created.quantity} ${created.status} ${createdAt(created)}`);

  const fetched = await call<Order>('GetOrder', { id: created.id }, token);
  console.log(`GetOrder: ${fetched.id} ${fetched.item} x${fetched.quantity} ${fetched.status} ${createdAt(fetched)}`);

  const { orders } = await call<{ orders: Order[] }>('ListOrders', { limit: 5, offset: 0 }, token);
  console.log(`ListOrders: ${orders.length} order(s), newest first: ${orders.map((o) => o.id).join(', ')}`);

  const { recent } = await call<{ recent: string[] }>('Recent', {}, token);
  console.log(`Recent: ${recent.join(', ')}`);

  // What an error looks like: a status code and the message (spec 7).
  await call('GetOrder', { id: 'not-a-uuid' }, token).catch((error: grpc.ServiceError) => {
    console.log(`GetOrder("not-a-uuid"): ${grpc.status[error.code]} ${error.details}`);
  });
} catch (error) {
  const e = error as grpc.ServiceError;
  console.error(`call failed: ${e.code === undefined ? String(error) : `${grpc.status[e.code]} ${e.details}`}`);
  process.exitCode = 1;
} finally {
  client.close();
}

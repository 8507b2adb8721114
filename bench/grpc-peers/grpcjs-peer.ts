import * as grpc from '@grpc/grpc-js';
import { ORDERS_PROTO } from '../../conformance/drivers/grpc.ts';
import type { Core } from '../../src/transports/transport.ts';
import { authenticate } from '../../src/service/authenticate.ts';
import { GRPC_STATUS, mapError } from '../../src/transports/errors/table.ts';

/** A gRPC server that serves GetOrder next to the service's own, in the same child, for comparison. */
export interface GrpcPeer {
  readonly name: string;
  readonly port: number;
  readonly stop: () => Promise<void>;
}

/**
 * The gRPC yardstick: a plain @grpc/grpc-js server doing GetOrder's work on the same core
 * (token check, session, cache get, owner check), on its own port in the service child. Only GetOrder.
 */
export async function startGrpcJsPeer(core: Pick<Core, 'orders' | 'tokens'>): Promise<GrpcPeer> {
  const loaded = grpc.loadPackageDefinition(ORDERS_PROTO) as unknown as { ordersv1: { Orders: { service: grpc.ServiceDefinition } } };
  const server = new grpc.Server();
  server.addService(loaded.ordersv1.Orders.service, {
    GetOrder: (call: grpc.ServerUnaryCall<{ id: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const done = new AbortController();
      call.once('cancelled', () => done.abort());
      void (async () => {
        try {
          const principal = await authenticate(call.metadata.get('authorization')[0] as string | undefined, core.tokens);
          const order = await core.orders.get({ principal, signal: done.signal }, call.request.id.toLowerCase());
          const ms = order.createdAt.getTime();
          callback(null, {
            id: order.id,
            item: order.item,
            quantity: order.quantity,
            status: order.status,
            created_at: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 },
          });
        } catch (error) {
          const mapped = mapError(error);
          callback({ code: GRPC_STATUS[mapped.grpcCode] as number as grpc.status, details: mapped.message });
        } finally {
          done.abort();
        }
      })();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { name: 'grpc-js', port, stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}

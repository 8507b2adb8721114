import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Code, ConnectError, createContextKey, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { Core } from '../../src/transports/transport.ts';
import { authenticate, type Principal } from '../../src/service/authenticate.ts';
import { GRPC_STATUS, mapError } from '../../src/transports/errors/table.ts';
import { toOrderMessage } from '../../src/transports/grpc/orders-service.ts';
import { Orders } from '../../src/gen/ordersv1/orders_pb.js';
import type { GrpcPeer } from './grpcjs-peer.ts';

const principalKey = createContextKey<Principal | undefined>(undefined);

/**
 * Connect as the service once used it (connectNodeAdapter, an error interceptor and an
 * auth interceptor around the handler), GetOrder only, on a cleartext HTTP/2 server of its own.
 * `tuned`: what configuration can take off (one interceptor doing both, no compression, a 1 MiB
 * read limit); the pipeline itself stays.
 */
export async function startConnectPeer(core: Pick<Core, 'orders' | 'tokens'>, tuned: boolean): Promise<GrpcPeer> {
  const errors: Interceptor = (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      const mapped = mapError(error);
      throw new ConnectError(mapped.message, GRPC_STATUS[mapped.grpcCode] as number as Code);
    }
  };
  const auth: Interceptor = (next) => async (req) => {
    req.contextValues.set(principalKey, await authenticate(req.header.get('authorization') ?? undefined, core.tokens));
    return next(req);
  };
  const both: Interceptor = (next) => async (req) => {
    try {
      req.contextValues.set(principalKey, await authenticate(req.header.get('authorization') ?? undefined, core.tokens));
      return await next(req);
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      const mapped = mapError(error);
      throw new ConnectError(mapped.message, GRPC_STATUS[mapped.grpcCode] as number as Code);
    }
  };
  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: false,
    connect: false,
    ...(tuned ? { acceptCompression: [], readMaxBytes: 1024 * 1024 } : {}),
    interceptors: tuned ? [both] : [errors, auth],
    routes: (router) =>
      router.rpc(Orders.method.getOrder, async (req, ctx) => {
        const principal = ctx.values.get(principalKey);
        if (principal === undefined) throw new ConnectError('missing principal', Code.Unauthenticated);
        return toOrderMessage(await core.orders.get({ principal, signal: ctx.signal }, req.id.toLowerCase()));
      }),
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    name: tuned ? 'connect-tuned' : 'connect',
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { Core } from '../../composition/create-app.ts';
import { Orders } from '../../gen/ordersv1/orders_pb.js';
import { authInterceptor } from './auth-interceptor.ts';
import { errorInterceptor } from './error-interceptor.ts';
import type { AnyRequestHandler } from './one-port-server.ts';
import { createOrdersService } from './orders-service.ts';

/** gRPC status 12: what a gRPC server answers for a method it does not have. */
const GRPC_UNIMPLEMENTED = '12';

/**
 * The gRPC side of the port: ordersv1.Orders only. Reflection is deliberately not registered (spec
 * 4.4 rule 6); only the gRPC protocol is served (not gRPC-web or Connect), because the service offers
 * gRPC. No HTTP middleware here (spec 4.3 rule 3).
 */
export function createGrpcHandler(core: Pick<Core, 'auth' | 'orders' | 'tokens' | 'logger'>): AnyRequestHandler {
  return connectNodeAdapter({
    grpc: true,
    grpcWeb: false,
    connect: false,
    // Outermost first: errors maps whatever authentication or a handler throws.
    interceptors: [errorInterceptor(core.logger), authInterceptor(core.tokens)],
    routes: (router) => router.service(Orders, createOrdersService(core)),
    // Unknown service or method (a reflection client, say): a gRPC status, not a bare HTTP 404.
    fallback: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/grpc' });
      res.addTrailers({ 'grpc-status': GRPC_UNIMPLEMENTED, 'grpc-message': 'unknown service or method' });
      res.end();
    },
  });
}

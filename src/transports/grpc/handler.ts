/**
 * The gRPC side of orders-grpc's port: ordersv1.Orders and grpc.health.v1.Health (rule GRPC-health) on the
 * unary server, with the authentication step, the call observer and the one error table. Reflection is not
 * registered (spec 4.4 rule 6); unknown methods answer UNIMPLEMENTED; no HTTP middleware (spec 4.3 rule 3).
 */
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Core } from '../transport.ts';
import { authInterceptor } from './auth-interceptor.ts';
import { GRPC_STATUS, logMappedFailure, logPanic, mapError } from '../errors/table.ts';
import { createHealthMethods } from './health-service.ts';
import { createOrdersMethods } from './orders-service.ts';
import { createUnaryServer } from '../../../packages/one-port-grpc/index.ts';
import { grpcCallObserver } from './call-observer.ts';
import { GrpcServerMetrics } from '../../observability/grpc-metrics.ts';

export function createGrpcHandler(
  core: Pick<Core, 'auth' | 'orders' | 'tokens' | 'logger' | 'readiness' | 'tracer' | 'metrics'>,
): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  return createUnaryServer({
    methods: new Map([...createOrdersMethods(core), ...createHealthMethods(core.readiness)]),
    authenticate: authInterceptor(core.tokens),
    observe: grpcCallObserver(core.tracer, new GrpcServerMetrics(core.metrics.registry)),
    // As on HTTP: a panic logged and masked as INTERNAL, an outage logged as such, a caller's mistake not logged.
    toStatus: (error, method) => {
      const mapped = mapError(error);
      if (!mapped.expected) logPanic(core.logger, error, method);
      else if (mapped.log !== undefined) logMappedFailure(core.logger, mapped.log, error, method);
      return { code: GRPC_STATUS[mapped.grpcCode], message: mapped.message };
    },
  });
}

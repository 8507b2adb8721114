/**
 * The gRPC side of orders-grpc's port: its services (ordersv1.Orders, grpc.health.v1.Health) on the unary
 * server, with the authentication step, the call observer and the one error table's status for every
 * error. What grpc-transport.ts mounts beside the REST side.
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

/**
 * ordersv1.Orders (unary, protobuf) and grpc.health.v1.Health (rule GRPC-health). Reflection is
 * deliberately not registered (spec 4.4 rule 6); unknown services and methods answer UNIMPLEMENTED. No
 * HTTP middleware here (spec 4.3 rule 3).
 */
export function createGrpcHandler(
  core: Pick<Core, 'auth' | 'orders' | 'tokens' | 'logger' | 'readiness' | 'tracer' | 'metrics'>,
): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  return createUnaryServer({
    methods: new Map([...createOrdersMethods(core), ...createHealthMethods(core.readiness)]),
    authenticate: authInterceptor(core.tokens),
    // The gRPC layer's own spans and metrics (rules TRACE-grpc, METRICS-grpc), in the service's registry.
    observe: grpcCallObserver(core.tracer, new GrpcServerMetrics(core.metrics.registry)),
    // Every error of the authentication step or a handler goes through the one table (as on HTTP):
    // unexpected ones are logged as a recovered panic and masked as INTERNAL, backend outages are
    // logged as such, a caller's mistakes are not logged; the cause is never sent.
    toStatus: (error, method) => {
      const mapped = mapError(error);
      if (!mapped.expected) logPanic(core.logger, error, method);
      else if (mapped.log !== undefined) logMappedFailure(core.logger, mapped.log, error, method);
      return { code: GRPC_STATUS[mapped.grpcCode], message: mapped.message };
    },
  });
}

/**
 * The gRPC server's CallObserver (rules TRACE-grpc, METRICS-grpc): the layer observes its own calls, as
 * spec 4.3 rule 3 keeps the HTTP middleware off this path. A SERVER span per call (OpenTelemetry RPC
 * conventions, child of `traceparent`), the go-grpc-prometheus counters and histogram, and a request scope
 * per call, so its span's ids reach every line it logs (rule TRACE-log-ids).
 */
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { CallObserver } from '../../../packages/one-port-grpc/index.ts';
import type { GrpcCallLabels, GrpcServerMetrics } from '../../observability/grpc-metrics.ts';
import { runInRequestScope, startServerSpan } from '../../observability/request-trace.ts';

/** The server's fault (OpenTelemetry RPC conventions): the span's status is ERROR. */
const SERVER_ERROR_CODES: ReadonlySet<number> = new Set([2, 4, 12, 13, 14, 15]);
const UNKNOWN = 'unknown';

/** A path the server does not serve is labelled `unknown`. */
export function grpcCallObserver(tracer: Tracer, metrics: GrpcServerMetrics): CallObserver {
  return {
    scope: runInRequestScope,
    start: (path, kind, headers) => {
      const slash = path.lastIndexOf('/');
      const known = kind !== undefined && slash > 0;
      const service = known ? path.slice(1, slash) : UNKNOWN;
      const method = known ? path.slice(slash + 1) : UNKNOWN;
      const labels: GrpcCallLabels = { grpc_type: kind ?? 'unary', grpc_service: service, grpc_method: method };
      const attributes = known ? { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method } : { 'rpc.system': 'grpc' };
      const span = startServerSpan(tracer, known ? `${service}/${method}` : 'grpc.unknown', attributes, headers);
      const startedAt = performance.now();
      metrics.started(labels);
      return {
        end(code) {
          metrics.handled(labels, code, (performance.now() - startedAt) / 1000);
          span.setAttribute('rpc.grpc.status_code', code);
          if (SERVER_ERROR_CODES.has(code)) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
  };
}

/**
 * Rule METRICS-grpc: the go-grpc-prometheus server families, by name and labels, in the service's own
 * registry, fed by the gRPC layer itself (spec 4.3 rule 3: no HTTP middleware on that path).
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { HTTP_DURATION_BUCKETS } from './metrics.ts';

/** The grpc_code label: gRPC status names as go-grpc-prometheus writes them (Go's codes.Code.String()). */
const CODE_NAMES = (
  'OK Canceled Unknown InvalidArgument DeadlineExceeded NotFound AlreadyExists PermissionDenied ResourceExhausted ' +
  'FailedPrecondition Aborted OutOfRange Unimplemented Internal Unavailable DataLoss Unauthenticated'
).split(' ');

export function grpcCodeName(code: number): string {
  return CODE_NAMES[code] ?? 'Unknown';
}

/** Labels of a call: the method as the server knows it, or `unknown` (bounded: raw paths never become labels). */
export interface GrpcCallLabels {
  readonly grpc_type: 'unary' | 'server_stream';
  readonly grpc_service: string;
  readonly grpc_method: string;
}

export class GrpcServerMetrics {
  readonly #started: Counter<keyof GrpcCallLabels>;
  readonly #handled: Counter<keyof GrpcCallLabels | 'grpc_code'>;
  readonly #seconds: Histogram<keyof GrpcCallLabels>;

  constructor(registry: Registry) {
    const labelNames = ['grpc_type', 'grpc_service', 'grpc_method'] as const;
    const registers = [registry];
    const started = 'Total number of RPCs started on the server.';
    this.#started = new Counter({ name: 'grpc_server_started_total', help: started, labelNames, registers });
    const handled = 'Total number of RPCs completed on the server, regardless of success or failure.';
    this.#handled = new Counter({ name: 'grpc_server_handled_total', help: handled, labelNames: [...labelNames, 'grpc_code'], registers });
    const seconds = 'Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.';
    this.#seconds = new Histogram({
      name: 'grpc_server_handling_seconds',
      help: seconds,
      labelNames,
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    });
  }

  started(labels: GrpcCallLabels): void {
    this.#started.inc(labels);
  }

  handled(labels: GrpcCallLabels, code: number, seconds: number): void {
    this.#handled.inc({ ...labels, grpc_code: grpcCodeName(code) });
    this.#seconds.observe(labels, seconds);
  }
}

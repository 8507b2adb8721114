import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { GrpcServerMetrics } from './grpc-metrics.ts';

const LABELS = { grpc_type: 'unary', grpc_service: 'ordersv1.Orders', grpc_method: 'GetOrder' } as const;

describe('GrpcServerMetrics (rule METRICS-grpc)', () => {
  it('[METRICS-grpc] grpc_code is the Go status name; a code outside the 17 known ones is counted as Unknown, never as a new label value', async () => {
    const registry = new Registry();
    const metrics = new GrpcServerMetrics(registry);
    for (const code of [0, 5, 16, 17, -1, 99]) metrics.handled(LABELS, code, 0.001);
    const handled = (await registry.getSingleMetric('grpc_server_handled_total')!.get()).values.map((v) => [
      v.labels['grpc_code'],
      v.value,
    ]);
    expect(handled).toEqual([
      ['OK', 1],
      ['NotFound', 1],
      ['Unauthenticated', 1],
      ['Unknown', 3],
    ]);
  });
});

import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../../test/support/log-capture.ts';
import { GrpcServerMetrics } from '../../observability/grpc-metrics.ts';
import { createLogger } from '../../observability/logger.ts';
import { grpcCallObserver } from './call-observer.ts';

/**
 * The observer on its own, with an in-memory span exporter and a registry of its own: the span and
 * counters of one call, for paths and codes the service's own methods never produce (a served path
 * without a service part) or that the wire tests do not all reach (every status code).
 */
function observer(): { observe: ReturnType<typeof grpcCallObserver>; spans: InMemorySpanExporter; registry: Registry } {
  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('test');
  const registry = new Registry();
  return { observe: grpcCallObserver(tracer, new GrpcServerMetrics(registry)), spans, registry };
}

async function startedLabels(registry: Registry): Promise<Array<Record<string, unknown>>> {
  const started = await registry.getSingleMetric('grpc_server_started_total')!.get();
  return started.values.map((v) => ({ ...v.labels }));
}

describe('grpcCallObserver', () => {
  // UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS.
  const serverErrors = new Set([2, 4, 12, 13, 14, 15]);

  it('TRACE-grpc: a span’s status is ERROR for the server’s codes only, UNSET for OK and the client’s', () => {
    const { observe, spans } = observer();
    for (let code = 0; code <= 16; code++) observe.start('/t.T/M', 'unary', {}).end(code);
    expect(spans.getFinishedSpans().map((s) => [s.attributes['rpc.grpc.status_code'], s.status.code])).toEqual(
      Array.from({ length: 17 }, (_, code) => [code, serverErrors.has(code) ? SpanStatusCode.ERROR : SpanStatusCode.UNSET]),
    );
  });

  it.each(['/Check', 'Check'])(
    'METRICS-grpc, TRACE-grpc: a served path without a service part (%s) is counted and traced as unknown',
    async (path) => {
      const { observe, spans, registry } = observer();
      observe.start(path, 'unary', {}).end(0);
      expect(await startedLabels(registry)).toEqual([{ grpc_type: 'unary', grpc_service: 'unknown', grpc_method: 'unknown' }]);
      expect(spans.getFinishedSpans().map((s) => [s.name, s.attributes['rpc.service'], s.attributes['rpc.method']])).toEqual([
        ['grpc.unknown', undefined, undefined],
      ]);
    },
  );

  it('METRICS-grpc, TRACE-grpc: a served path is labelled and named by its service and method', async () => {
    const { observe, spans, registry } = observer();
    observe.start('/ordersv1.Orders/GetOrder', 'server_stream', {}).end(0);
    expect(await startedLabels(registry)).toEqual([
      { grpc_type: 'server_stream', grpc_service: 'ordersv1.Orders', grpc_method: 'GetOrder' },
    ]);
    expect(spans.getFinishedSpans().map((s) => [s.name, s.attributes['rpc.service'], s.attributes['rpc.method']])).toEqual([
      ['ordersv1.Orders/GetOrder', 'ordersv1.Orders', 'GetOrder'],
    ]);
  });

  it('TRACE-log-ids: a call runs in a request scope of its own: its lines carry its span’s ids, none once the server closed it', async () => {
    const { observe } = observer();
    const capture = new LogCapture();
    const logger = createLogger('info', capture);
    observe.scope!((close) => {
      const observation = observe.start('/t.T/M', 'unary', {});
      logger.info('during the call');
      observation.end(0);
      close();
      logger.info('after its end');
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(capture.lines.map((line) => [line.msg, /^[0-9a-f]{32}$/.test(String(line['trace_id']))])).toEqual([
      ['during the call', true],
      ['after its end', false],
    ]);
  });
});
